//! The options of `dwarfcheck eval`, and their limits.

use clap::Args;
use std::path::PathBuf;

/// Most expression bytes taken from the command line (`--hex` or the text).
pub const MAX_EXPR_BYTES: usize = 64 * 1024;
/// Most bytes of memory all `--mem` options give together.
pub const MAX_MEM_BYTES: usize = 256 * 1024;
/// Largest `--context` file, in bytes.
pub const MAX_CONTEXT_FILE: u64 = 16 * 1024 * 1024;

/// `dwarfcheck eval`'s options.
#[derive(Args)]
#[command(after_long_help = HELP)]
pub struct EvalArgs {
    /// The expression: operations in llvm-dwarfdump's spelling
    /// ('DW_OP_breg7 RSP+8, DW_OP_deref, DW_OP_stack_value',
    /// 'DW_OP_entry_value(DW_OP_reg5 RDI)', 'DW_OP_implicit_value 0x2 0x01
    /// 0x02'), or, when every word is a pair of hex digits, its bytes
    /// ('77 08 06'). Optional with --hex.
    pub expr: Option<String>,
    /// The expression's bytes in hex ('a3 01 50 9f'). Given with a text
    /// expression, the text must assemble to exactly these bytes (a check
    /// that a listing's text and bytes agree).
    #[arg(long, value_name = "HEX")]
    pub hex: Option<String>,
    /// Target preset.
    #[arg(long, default_value = "x86_64")]
    pub target: String,
    /// Vendor profile (default: the target's): dwarf5, gnu, hetero-2020,
    /// hetero-2020-uleb, llvm-user, intel.
    #[arg(long)]
    pub vendor: Option<String>,
    /// A case file's `context:` mapping (docs/case-format.md): registers,
    /// memory, `cu:` with base types, DIEs and location lists, a calling
    /// frame, CFI. The options below are applied on top of it.
    #[arg(long, value_name = "FILE.yaml")]
    pub context: Option<PathBuf>,
    /// Required result kind: location or value (default: unspecified).
    #[arg(long)]
    pub result: Option<String>,
    /// Register value, NAME=VALUE: a name or DWARF number, and an integer
    /// (decimal, 0x hex, negative) or "hex bytes in memory order". Repeatable.
    #[arg(long = "reg", value_name = "NAME=VALUE")]
    pub regs: Vec<String>,
    /// Memory contents, ADDR=HEX: the bytes in memory order from byte
    /// address ADDR of address space --aspace. Repeatable.
    #[arg(long = "mem", value_name = "ADDR=HEX")]
    pub mem: Vec<String>,
    /// Address space of the --mem segments and of --cfa (default 0).
    #[arg(long, value_name = "N")]
    pub aspace: Option<u64>,
    /// The program counter (for location lists and DW_OP_entry_value's caller).
    #[arg(long, value_name = "ADDR")]
    pub pc: Option<String>,
    /// The frame base (DW_AT_frame_base of the function, for DW_OP_fbreg):
    /// an expression, as text or hex bytes like the expression itself.
    #[arg(long, value_name = "EXPR")]
    pub frame_base: Option<String>,
    /// The canonical frame address (DW_OP_call_frame_cfa).
    #[arg(long, value_name = "ADDR")]
    pub cfa: Option<String>,
    /// The object (DW_OP_push_object_address): a byte address in memory,
    /// or an entry as in a case file ('{ value: 5 }', '{ register: rdi }').
    #[arg(long, value_name = "ENTRY")]
    pub object: Option<String>,
    /// The thread-local storage base (DW_OP_form_tls_address).
    #[arg(long, value_name = "ADDR")]
    pub tls: Option<String>,
    /// The current thread.
    #[arg(long, value_name = "N")]
    pub thread: Option<u64>,
    /// The current lane (DW_OP_LLVM_push_lane).
    #[arg(long, value_name = "N")]
    pub lane: Option<u32>,
    /// Seed for synthetic registers and memory not given explicitly.
    #[arg(long)]
    pub synthetic: Option<u64>,
    /// Third-party consumers to judge against the reference, comma-separated
    /// (the names `dwarfcheck run --consumers` takes); `none` for the two
    /// built-in evaluators only.
    #[arg(long, value_delimiter = ',', default_value = "gimli")]
    pub consumers: Vec<String>,
    /// Print the reference's stack after each operation, and the operation
    /// it fails at.
    #[arg(long)]
    pub trace: bool,
    /// Print the evaluation as a case file (docs/case-format.md) whose
    /// `expect:` is the reference's outcome, ready to add to the suite.
    #[arg(long)]
    pub emit_case: bool,
}

const HELP: &str = "\
The default context: with no options, nothing is available. Every register \
is unavailable (reading one is the evaluation error ctx.register-unavailable), \
there is no memory, pc, frame base, CFA, object, TLS base, thread, lane or \
compilation unit (no base types, DIEs or location lists), and the result kind \
is unspecified. Give registers with --reg rsp=0x7ffc0000, memory with \
--mem 0x7ffc0000=\"2a 00 00 00\", the rest with the options above or a whole \
`context:` mapping with --context FILE.yaml; --synthetic SEED makes every \
register and memory byte not given readable, with deterministic contents.

Limits: at most 65,536 expression bytes, 256 KiB of --mem bytes in all, a \
--context file of at most 16 MiB (and the case loader's own limits).

Output: the bytes and the text of the expression, the reference's outcome, \
then one line per consumer: its verdict against the reference (agree, \
DISAGREE, ill-formed:diagnosed, ill-formed:accepted, unspecified, \
unsupported, outside-edition, fault; docs/architecture.md section 8; a \
known gimli disagreement names its class, docs/consumers.md) and its \
outcome. With --emit-case this report becomes the case file's comments. \
Exit status 1 when the fast evaluator or a third party \
disagrees or faults, 2 on bad input.";
