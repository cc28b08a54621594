//! `dwarfcheck bench`: fast against gimli (and the reference), each through
//! its own API, on real input, in interleaved rounds; prints the same
//! table as `benches/vs_gimli.rs` measures (`dwarfcheck::bench`).

use dwarfcheck::bench::{debug_files, frame_files, run, Config};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `dwarfcheck bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// ELF files whose location expressions are timed (default: every
    /// libc6-dbg file under /usr/lib/debug/.build-id).
    #[arg(long = "debug-file", value_name = "FILE")]
    debug_files: Vec<PathBuf>,
    /// ELF files whose frame sections are timed (default: libLLVM.so.19.1
    /// when installed, and libc.so.6).
    #[arg(long = "frame-file", value_name = "FILE")]
    frame_files: Vec<PathBuf>,
    /// Rounds per family.
    #[arg(long, default_value_t = 7)]
    rounds: usize,
    /// One unwinding sample every this many FDEs.
    #[arg(long, default_value_t = 16)]
    unwind_stride: usize,
    /// Also time the reference on the expressions.
    #[arg(long)]
    reference: bool,
    /// Run only the contenders of this name (`fast`, `gimli`,
    /// `fast-outcome`, `reference`), e.g. under a profiler.
    #[arg(long, value_name = "NAME")]
    only: Option<String>,
    /// A quick look: 3 rounds, the largest debug file only, libc's frames only.
    #[arg(long)]
    quick: bool,
}

pub fn bench(args: &BenchArgs) -> ExitCode {
    let mut debug = if args.debug_files.is_empty() { debug_files() } else { args.debug_files.clone() };
    let mut frames = if args.frame_files.is_empty() { frame_files() } else { args.frame_files.clone() };
    let mut rounds = args.rounds;
    if args.quick && args.debug_files.is_empty() {
        debug = dwarfcheck::elf::largest_debug_file().into_iter().collect();
    }
    if args.quick {
        if args.frame_files.is_empty() {
            frames.retain(|f| f.ends_with("libc.so.6"));
        }
        rounds = rounds.min(3);
    }
    if debug.is_empty() && frames.is_empty() {
        return super::input_error("nothing to time: no debug file (libc6-dbg) and no frame file found");
    }
    let cfg = Config {
        rounds,
        debug_files: debug,
        frame_files: frames,
        unwind_stride: args.unwind_stride,
        reference: args.reference,
        only: args.only.clone(),
    };
    print!("{}", run(&cfg));
    ExitCode::SUCCESS
}
