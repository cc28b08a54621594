#!/bin/bash -eu
# ClusterFuzzLite's build step: every fuzzer, seed corpus, dictionary and
# options file into $OUT (fuzz/build.sh says how).
exec "$SRC/dwarfcheck/fuzz/build.sh"
