#!/usr/bin/env bash
# Builds every fuzz target into $OUT the way OSS-Fuzz and ClusterFuzzLite
# expect (docs/fuzzing.md, "OSS-Fuzz and ClusterFuzzLite"). For each target
# T of fuzz/fuzz_targets/:
#   $OUT/T                  the libFuzzer binary
#   $OUT/T_seed_corpus.zip  its seeds, from `dwarfcheck export-corpus`
#   $OUT/T.dict             its dictionary (fuzz/dict/)
#   $OUT/T.options          [libfuzzer] dict, max_len, timeout, rss_limit_mb
#
# Environment, with OSS-Fuzz's names:
#   OUT                     where everything goes (required)
#   SRC                     the folder holding the checkout as SRC/dwarfcheck,
#                           used when this script runs from outside it (as
#                           OSS-Fuzz's $SRC/build.sh); else the checkout is
#                           the one this script is in
#   SANITIZER               address (default), memory, thread; none or
#                           undefined build without a sanitizer (Rust has no
#                           UBSan); coverage is OSS-Fuzz's coverage build,
#                           which its cargo wrapper turns into a plain build
#   FUZZING_ENGINE          libfuzzer (the only engine cargo-fuzz drives)
#   CARGO_BUILD_TARGET_DIR  cargo's build folder (default: fuzz/target;
#                           CARGO_TARGET_DIR is not used, so that the two
#                           builds below keep apart)
#   CFLAGS, CXXFLAGS        passed on to what build scripts compile with cc
#                           (libFuzzer's own C++ sources)
#   DWARFCHECK_SEED_ELF     ELF files whose expressions and frame sections
#                           become seeds too (space-separated, optional)
#   DWARFCHECK_CLI          a dwarfcheck binary to export the seeds with
#                           (default: built here, without fuzzing flags)
# The toolchain is nightly with cargo-fuzz, as in OSS-Fuzz's
# base-builder-rust image.
set -euo pipefail
fuzz="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ ! -d "$fuzz/fuzz_targets" ]; then
  fuzz="${SRC:?set SRC to the folder holding the dwarfcheck checkout}/dwarfcheck/fuzz"
fi
: "${OUT:?set OUT to the folder the fuzzers go to}"
root="$(dirname "$fuzz")"
mkdir -p "$OUT"
engine="${FUZZING_ENGINE:-libfuzzer}"
if [ "$engine" != libfuzzer ]; then
  echo "fuzz/build.sh: cargo-fuzz drives libFuzzer only (FUZZING_ENGINE=$engine)" >&2
  exit 1
fi
sanitizer="${SANITIZER:-address}"
case "$sanitizer" in
  address | memory | thread) san="$sanitizer" ;;
  none | undefined | coverage) san=none ;;
  *)
    echo "fuzz/build.sh: no Rust build for SANITIZER=$sanitizer" >&2
    exit 1
    ;;
esac
target_dir="${CARGO_BUILD_TARGET_DIR:-$fuzz/target}"
unset CARGO_TARGET_DIR
triple="${CARGO_BUILD_TARGET:-x86_64-unknown-linux-gnu}"
export CFLAGS="${CFLAGS:-}" CXXFLAGS="${CXXFLAGS:-}"
targets=()
for f in "$fuzz"/fuzz_targets/*.rs; do
  targets+=("$(basename "${f%.rs}")")
done

# The expression and CFI targets are built without comparison tracing:
# their dictionaries name the opcodes and operand shapes, and measured over
# 60 s from an empty corpus the traced builds ran at half the speed and
# reached no more edges (docs/fuzzing.md, "Speed"). case_yaml, whose input
# is text the loader compares with keywords, keeps it, in a build folder of
# its own. OSS-Fuzz's coverage build is one plain build.
cd "$fuzz"
traced=(case_yaml)
untraced=()
for t in "${targets[@]}"; do
  [ "$t" = case_yaml ] || untraced+=("$t")
done
traced_dir="$target_dir"
if [ "$sanitizer" = coverage ]; then
  CARGO_BUILD_TARGET_DIR="$target_dir" cargo fuzz build -O --debug-assertions -s "$san"
else
  traced_dir="$target_dir/traced"
  for t in "${untraced[@]}"; do
    CARGO_BUILD_TARGET_DIR="$target_dir" cargo fuzz build -O --debug-assertions -s "$san" --no-trace-compares "$t"
  done
  for t in "${traced[@]}"; do
    CARGO_BUILD_TARGET_DIR="$traced_dir" cargo fuzz build -O --debug-assertions -s "$san" "$t"
  done
fi
for t in "${targets[@]}"; do
  case "$t" in
    case_yaml) cp "$traced_dir/$triple/release/$t" "$OUT/" ;;
    *) cp "$target_dir/$triple/release/$t" "$OUT/" ;;
  esac
done

# Seeds: the harness itself, built plainly (no fuzzing flags), exports them.
cli="${DWARFCHECK_CLI:-}"
if [ -z "$cli" ]; then
  cli_dir="$target_dir/cli"
  (cd "$root" && env -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS -u CARGO_BUILD_RUSTFLAGS \
    CARGO_BUILD_TARGET_DIR="$cli_dir" cargo build --release --bin dwarfcheck)
  cli="$cli_dir/release/dwarfcheck"
  [ -x "$cli" ] || cli="$cli_dir/$triple/release/dwarfcheck"
fi
seeds="$(mktemp -d)"
trap 'rm -rf "$seeds"' EXIT
# shellcheck disable=SC2086 # DWARFCHECK_SEED_ELF is a list of paths
"$cli" export-corpus --out "$seeds" --per-file 500 ${DWARFCHECK_SEED_ELF:-}

for t in "${targets[@]}"; do
  case "$t" in
    expr_bytes) dict=expr.dict max_len=1024 ;;
    expr_ops) dict=expr.dict max_len=2048 ;;
    cfi_bytes) dict=cfi.dict max_len=8192 ;;
    cfi_ops) dict=cfi.dict max_len=2048 ;;
    case_yaml) dict=case_yaml.dict max_len=65536 ;;
    spirv_expr) dict=expr.dict max_len=2048 ;;
    visa_bytes) dict=visa.dict max_len=65536 ;;
    tru64_bytes) dict=tru64.dict max_len=16384 ;;
    *)
      echo "fuzz/build.sh: no dictionary and length limit for target $t" >&2
      exit 1
      ;;
  esac
  rm -f "$OUT/${t}_seed_corpus.zip"
  (cd "$seeds/$t" && zip -q -r "$OUT/${t}_seed_corpus.zip" .)
  cp "$fuzz/dict/$dict" "$OUT/$t.dict"
  # use_counters = 0: an edge is one feature, however often it runs;
  # reduce_inputs = 0: no search for a smaller input with the same
  # features. Both halve libFuzzer's own work after each run, which is
  # most of the time of these fast targets, with no fewer edges reached
  # in the measurements of docs/fuzzing.md.
  printf '[libfuzzer]\ndict = %s.dict\nmax_len = %s\ntimeout = 10\nrss_limit_mb = 2560\nuse_counters = 0\nreduce_inputs = 0\n' \
    "$t" "$max_len" > "$OUT/$t.options"
done
echo "fuzz/build.sh: ${targets[*]} in $OUT"
