//! External command-line tools as CFI consumers: `llvm-dwarfdump`, GNU
//! `readelf`, and pyelftools and elfutils libdw through helpers printing
//! dwarfcheck's row text (docs/architecture.md §7, §12; docs/consumers.md).
//!
//! Each frame section is written into a small ELF file ([`elf`]), the tool
//! runs once on it under a [`RunBudget`] ([`process`]), its printed rows
//! are parsed ([`llvm_dwarfdump`], [`readelf`]) and cached by section, and
//! every FDE of the section is answered from the cache. The tool's register
//! names are learnt per architecture by running it once on a CIE that
//! names every register ([`calibration_section`]).
//!
//! What a tool cannot show is removed from the reference's table before the
//! comparison ([`Consumer::cfi_view`]): readelf prints no expression bodies,
//! no address spaces, no AArch64 RA_SIGN_STATE, and the same `u` for
//! "undefined" and "no rule".

pub mod classes;
pub mod elf;
pub mod libdw_loclist;
pub mod llvm_dwarfdump;
pub mod process;
pub mod readelf;
pub mod rowtext;
pub mod table;

pub use process::RunBudget;

use crate::case::{Case, CfiCase, ExprCase};
use crate::consumer::{Answer, Consumer, ConsumerError, FailureClass, Support};
use crate::edition::Edition;
use dwarfcheck_core::cfi::CfiSection;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{CfaRule, CfiOutcome, Outcome, RegisterRule, RowTable};
use dwarfcheck_core::target::{Arch, Endian};
use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use table::{Names, ToolSection};

/// Which tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// `llvm-dwarfdump-19` (else `llvm-dwarfdump`), `--debug-frame --eh-frame`.
    LlvmDwarfdump,
    /// GNU `readelf --debug-dump=frames-interp`.
    Readelf,
    /// pyelftools (`FDE.get_decoded().table`), through the script
    /// `pyelftools_rows.py` run by `python3`, which prints row text
    /// ([`rowtext`]).
    Pyelftools,
    /// elfutils libdw (`dwarf_cfi_addrframe`, `dwarf_frame_cfa`,
    /// `dwarf_frame_register`), through the C helper `libdw_rows.c`,
    /// compiled at first use with the system's C compiler against
    /// libdw-dev; it prints row text ([`rowtext`]).
    Libdw,
}

/// Registers 0 to this - 1 (at least) are asked of libdw: every register
/// number the bundled cases and real x86-64 and AArch64 CFI use.
const LIBDW_REGISTERS: u64 = 288;

/// The libdw helper's source.
const LIBDW_SOURCE: &str = include_str!("libdw_rows.c");

/// The pyelftools helper, written next to each ELF file it reads.
const PYELFTOOLS_SCRIPT: &str = include_str!("pyelftools_rows.py");

impl Tool {
    /// The consumer name (`--consumers`, reports).
    pub fn name(self) -> &'static str {
        match self {
            Tool::LlvmDwarfdump => "llvm-dwarfdump",
            Tool::Readelf => "readelf",
            Tool::Pyelftools => "pyelftools",
            Tool::Libdw => "libdw",
        }
    }

    /// Executable names tried on `PATH`, in order.
    pub fn programs(self) -> &'static [&'static str] {
        match self {
            Tool::LlvmDwarfdump => &["llvm-dwarfdump-19", "llvm-dwarfdump"],
            Tool::Readelf => &["readelf"],
            Tool::Pyelftools => &["python3"],
            Tool::Libdw => &["cc", "gcc"],
        }
    }

    fn args(self) -> &'static [&'static str] {
        match self {
            Tool::LlvmDwarfdump => &["--debug-frame", "--eh-frame"],
            Tool::Readelf => &["--debug-dump=frames-interp"],
            Tool::Pyelftools => &["pyelftools_rows.py"],
            Tool::Libdw => &[],
        }
    }
}

/// A tool's register names for one architecture, learnt once.
type LearntNames = OnceLock<Result<Names, CfiOutcome>>;

/// libdw's ABI default rules for one architecture, learnt once (empty when
/// they cannot be learnt).
type LearntDefaults = OnceLock<BTreeMap<u64, RegisterRule>>;

/// A parsed run, or the outcome every FDE of the section gets instead.
type Parsed = Result<ToolSection, CfiOutcome>;

/// One cached section: the `Arc` is kept so that its address, the key,
/// cannot be reused by another section while the entry lives.
struct Cached {
    _section: Arc<CfiSection>,
    parsed: OnceLock<Parsed>,
}

/// An external tool judged on CFI only (`Support.expr = false`).
pub struct External {
    tool: Tool,
    program: PathBuf,
    /// Where a helper built at start-up lives (libdw), removed on drop.
    _helper: Option<process::TempDir>,
    budget: RunBudget,
    sections: Mutex<HashMap<usize, Arc<Cached>>>,
    names: Mutex<HashMap<(Arch, Endian), Arc<LearntNames>>>,
    defaults: Mutex<HashMap<(Arch, Endian), Arc<LearntDefaults>>>,
}

impl std::fmt::Debug for External {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("External").field("tool", &self.tool).field("program", &self.program).finish()
    }
}

impl External {
    /// The tool found on `PATH`, with `budget` per run.
    ///
    /// Errors: [`ConsumerError::NotInstalled`] when none of
    /// [`Tool::programs`] is on `PATH`.
    pub fn new(tool: Tool, budget: RunBudget) -> Result<Self, ConsumerError> {
        let program = process::find_program(tool.programs()).ok_or(ConsumerError::NotInstalled {
            consumer: tool.name(),
            programs: tool.programs(),
            package: match tool {
                Tool::LlvmDwarfdump => "llvm-19",
                Tool::Readelf => "binutils",
                Tool::Pyelftools => "python3 (and `pip install pyelftools`)",
                Tool::Libdw => "a C compiler (gcc) and libdw-dev",
            },
        })?;
        if tool == Tool::Libdw {
            return External::libdw(&program, budget);
        }
        let external = External::with_program(tool, program, budget);
        if tool == Tool::Pyelftools && external.pyelftools_version().is_none() {
            return Err(ConsumerError::NotInstalled {
                consumer: tool.name(),
                programs: &["python3 -c 'import elftools'"],
                package: "pyelftools (`pip install pyelftools`)",
            });
        }
        Ok(external)
    }

    /// The tool at `program` (any executable that prints what `tool`
    /// prints), with `budget` per run.
    pub fn with_program(tool: Tool, program: PathBuf, budget: RunBudget) -> Self {
        External {
            tool,
            program,
            _helper: None,
            budget,
            sections: Mutex::new(HashMap::new()),
            names: Mutex::new(HashMap::new()),
            defaults: Mutex::new(HashMap::new()),
        }
    }

    /// libdw's ABI default rules for the section's architecture: the rules
    /// it reports in an FDE whose CIE and FDE give none but the CFA's
    /// ([`defaults_section`]).
    fn abi_defaults(&self, section: &CfiSection) -> BTreeMap<u64, RegisterRule> {
        let key = (section.target.arch, section.target.endian);
        let cell = self.defaults.lock().unwrap_or_else(|e| e.into_inner()).entry(key).or_default().clone();
        cell.get_or_init(|| {
            let Some(sec) = defaults_section(section) else { return BTreeMap::new() };
            let Ok(out) = self.run(&sec) else { return BTreeMap::new() };
            let parsed = rowtext::parse(&out.text);
            parsed.fdes.values().next().and_then(|e| e.rows.first()).map(|r| r.2.clone()).unwrap_or_default()
        })
        .clone()
    }

    /// The libdw helper compiled with `compiler` into a private directory.
    ///
    /// Errors: [`ConsumerError::NotInstalled`] when it does not compile
    /// (no libdw-dev) or does not run.
    fn libdw(compiler: &std::path::Path, budget: RunBudget) -> Result<Self, ConsumerError> {
        let missing = || ConsumerError::NotInstalled {
            consumer: "libdw",
            programs: &["cc ... -ldw -lelf"],
            package: "libdw-dev (elfutils) and a C compiler",
        };
        let (dir, exe) = process::compile_c_helper(compiler, "libdw_rows", LIBDW_SOURCE, &["-ldw", "-lelf"], budget)
            .ok_or_else(missing)?;
        let mut external = External::with_program(Tool::Libdw, exe, budget);
        external._helper = Some(dir);
        Ok(external)
    }

    /// The executable used.
    pub fn program(&self) -> &std::path::Path {
        &self.program
    }

    /// pyelftools' version, if `python3` can import it.
    fn pyelftools_version(&self) -> Option<String> {
        let dir = process::TempDir::new().ok()?;
        let args = [OsStr::new("-c"), OsStr::new("import elftools; print(elftools.__version__)")];
        let out = process::run(&self.program, &args, dir.path(), self.budget).ok()?;
        let v = out.text.lines().next()?.trim();
        (out.code == 0 && !v.is_empty()).then(|| format!("pyelftools {v}"))
    }

    /// Runs the tool on an ELF file holding `section`.
    fn run(&self, section: &CfiSection) -> Result<process::RunOutput, CfiOutcome> {
        let fault =
            |what: String| CfiOutcome::Failed(Failure::ConsumerFault { what: format!("{}: {what}", self.tool.name()) });
        let bytes = elf::synthesise(section).map_err(|e| CfiOutcome::Failed(Failure::Unsupported { what: e.0 }))?;
        let dir = process::TempDir::new().map_err(|e| fault(format!("temporary directory: {e}")))?;
        let path = dir.path().join("frames.elf");
        std::fs::write(&path, bytes).map_err(|e| fault(format!("cannot write {}: {e}", path.display())))?;
        if self.tool == Tool::Pyelftools {
            let script = dir.path().join("pyelftools_rows.py");
            std::fs::write(&script, PYELFTOOLS_SCRIPT)
                .map_err(|e| fault(format!("cannot write {}: {e}", script.display())))?;
        }
        let mut args: Vec<&OsStr> = self.tool.args().iter().map(OsStr::new).collect();
        args.push(path.as_os_str());
        // libdw is asked by address: the FDEs to print, and the registers.
        let (list, nregs);
        if self.tool == Tool::Libdw {
            list = dir.path().join("fdes.txt");
            std::fs::write(&list, fde_list(section)).map_err(|e| fault(format!("cannot write the FDE list: {e}")))?;
            nregs = section
                .target
                .registers
                .iter()
                .map(|r| r.number + 1)
                .max()
                .unwrap_or(0)
                .max(LIBDW_REGISTERS)
                .to_string();
            args.push(list.as_os_str());
            args.push(OsStr::new(&nregs));
        }
        process::run(&self.program, &args, dir.path(), self.budget).map_err(|e| fault(e.to_string()))
    }

    /// The tool's register names for the section's architecture.
    fn names(&self, section: &CfiSection) -> Result<Names, CfiOutcome> {
        // Row text names registers by number.
        if matches!(self.tool, Tool::Pyelftools | Tool::Libdw) {
            return Ok(Names::default());
        }
        let key = (section.target.arch, section.target.endian);
        let cell = self.names.lock().unwrap_or_else(|e| e.into_inner()).entry(key).or_default().clone();
        let r = cell.get_or_init(|| {
            let cal = calibration_section(section);
            let out = self.run(&cal).map_err(|o| match o {
                // No ELF file for this target: the tool cannot be asked.
                CfiOutcome::Failed(Failure::Unsupported { what }) => CfiOutcome::Failed(Failure::Unsupported { what }),
                CfiOutcome::Failed(Failure::ConsumerFault { what }) => {
                    CfiOutcome::Failed(Failure::ConsumerFault { what: format!("learning register names: {what}") })
                }
                other => other,
            })?;
            Ok(match self.tool {
                Tool::LlvmDwarfdump => llvm_dwarfdump::calibration_names(&out.text),
                Tool::Readelf => readelf::calibration_names(&out.text),
                Tool::Pyelftools | Tool::Libdw => Names::default(),
            })
        });
        r.clone()
    }

    /// Runs and parses the section once; later calls wait for and share
    /// the first one's result.
    fn parsed(&self, section: &Arc<CfiSection>) -> Arc<Cached> {
        let key = Arc::as_ptr(section) as usize;
        let cached = self
            .sections
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key)
            .or_insert_with(|| Arc::new(Cached { _section: section.clone(), parsed: OnceLock::new() }))
            .clone();
        cached.parsed.get_or_init(|| {
            let names = self.names(section)?;
            let out = self.run(section)?;
            let parsed = match self.tool {
                Tool::LlvmDwarfdump => {
                    llvm_dwarfdump::parse(&out.text, llvm_dwarfdump::Ctx { names: &names, target: &section.target })
                }
                Tool::Readelf => readelf::parse(&out.text, &names),
                Tool::Pyelftools | Tool::Libdw => rowtext::parse(&out.text),
            };
            // A failing exit with nothing said about any entry: the whole
            // run is suspect.
            let said_why = !parsed.diagnostics.is_empty()
                || parsed.fdes.values().chain(parsed.cies.values()).any(|e| !e.diagnostics.is_empty());
            if out.code != 0 && !said_why {
                let tail: String = out.text.lines().last().unwrap_or("").chars().take(200).collect();
                return Err(CfiOutcome::Failed(Failure::ConsumerFault {
                    what: format!("{} exited with status {} (`{tail}`)", self.tool.name(), out.code),
                }));
            }
            Ok(parsed)
        });
        cached
    }

    /// Forgets every cached section (the learnt register names stay).
    pub fn clear_cache(&self) {
        self.sections.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

impl Consumer for External {
    fn name(&self) -> &str {
        self.tool.name()
    }

    /// llvm-dwarfdump 19 decodes the hetero-2020 CFA instructions
    /// (`DW_CFA_LLVM_def_aspace_cfa*`): all three editions. readelf knows
    /// DWARF 5 and the GNU/AArch64 vendor instructions only.
    fn supports(&self) -> Support {
        let editions = match self.tool {
            Tool::LlvmDwarfdump => vec![Edition::Dwarf5, Edition::Dwarf5Gnu, Edition::Hetero2020],
            Tool::Readelf | Tool::Pyelftools | Tool::Libdw => vec![Edition::Dwarf5, Edition::Dwarf5Gnu],
        };
        Support { editions, expr: false, cfi: true }
    }

    fn evaluate(&self, _case: &ExprCase) -> Outcome {
        Outcome::Failed(Failure::Unsupported { what: format!("{} does not evaluate expressions", self.tool.name()) })
    }

    fn frame_table(&self, case: &CfiCase) -> CfiOutcome {
        let cached = self.parsed(&case.section);
        match cached.parsed.get() {
            Some(Ok(s)) => {
                let o = s.outcome(self.tool.name(), case.fde_offset, self.tool == Tool::Readelf);
                match (self.tool, o) {
                    (Tool::Readelf, CfiOutcome::Table(t)) => CfiOutcome::Table(readelf_view(&t)),
                    (Tool::Pyelftools, CfiOutcome::Table(t)) => CfiOutcome::Table(pyelftools_view(&t)),
                    (_, o) => o,
                }
            }
            Some(Err(o)) => o.clone(),
            None => CfiOutcome::Failed(Failure::ConsumerFault { what: "internal: section not parsed".into() }),
        }
    }

    /// X1 to X6 of docs/consumers.md ([`classes::known_class`]).
    fn failure_class(&self, case: &Case, reference: Answer<'_>, answer: Answer<'_>) -> Option<FailureClass> {
        let (Case::Cfi(c), Answer::Cfi(r), Answer::Cfi(a)) = (case, reference, answer) else {
            return None;
        };
        let id = classes::known_class(self.tool, c, r, a)?;
        Some(FailureClass {
            id: id.to_string(),
            explanation: classes::explanation(id)?.to_string(),
            docs: Some("docs/consumers.md#disagreement-classes-bundled-suite".to_string()),
            report: classes::report(id).map(str::to_string),
        })
    }

    /// The program's file name and the first line it prints for
    /// `--version`.
    fn version(&self) -> Option<String> {
        if self.tool == Tool::Pyelftools {
            return self.pyelftools_version();
        }
        if self.tool == Tool::Libdw {
            return process::version_line(&self.program);
        }
        let line = process::version_line(&self.program)?;
        let program = self.program.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        Some(format!("{program}: {line}"))
    }

    fn cfi_view(&self, case: &CfiCase, reference: &RowTable) -> Option<RowTable> {
        Some(match self.tool {
            Tool::LlvmDwarfdump => llvm_view(&case.section.target, reference),
            Tool::Readelf => readelf_view(reference),
            Tool::Pyelftools => pyelftools_view(reference),
            Tool::Libdw => libdw_view(reference, &self.abi_defaults(&case.section)),
        })
    }
}

/// What llvm-dwarfdump can show of a table: everything, with expressions in
/// the canonical encoding of their text (LLVM prints them disassembled; a
/// non-minimal LEB128 operand prints as the same text).
/// Expressions that do not re-assemble stay as they are.
pub fn llvm_view(target: &dwarfcheck_core::target::Target, t: &RowTable) -> RowTable {
    let canon = |e: &mut Vec<u8>| {
        let (v, f, a) = (&target.vendor, Default::default(), target.address_bytes());
        let text = crate::asm::expr::disassemble(e, target, v, f, a);
        if let Ok(b) = crate::asm::expr::assemble(&text, target, v, f, a) {
            *e = b;
        }
    };
    let mut t = t.clone();
    for r in &mut t.rows {
        if let CfaRule::Expression { expr } = &mut r.cfa {
            canon(expr);
        }
        for rule in r.registers.values_mut() {
            if let RegisterRule::Expression { expr } | RegisterRule::ValExpression { expr } = rule {
                canon(expr);
            }
        }
    }
    t
}

/// What pyelftools can show of a table: everything but the AArch64
/// RA_SIGN_STATE (register 34 `RaSigned`): it reads
/// `DW_CFA_AARCH64_negate_ra_state` (0x2d) as SPARC's `DW_CFA_GNU_window_save`
/// and leaves no rule for it.
pub fn pyelftools_view(t: &RowTable) -> RowTable {
    let mut t = t.clone();
    for r in &mut t.rows {
        r.registers.retain(|_, rule| !matches!(rule, RegisterRule::RaSigned { .. }));
    }
    t.normalize()
}

/// What libdw shows of a table: libdw mixes its ABI's default rules into
/// every row (x86-64: rax and the callee-saved registers "same value",
/// rsp the CFA, the others "undefined"), so every register the reference
/// leaves without a rule gets the default libdw reports for it, learnt
/// from an entry that names none ([`External::abi_defaults`]); the ABI
/// defaults are not judged, only the rules the entry gives. "Undefined"
/// is not shown (the helper leaves it out: it is libdw's answer for every
/// register nothing names), nor is AArch64 RA_SIGN_STATE.
pub fn libdw_view(t: &RowTable, defaults: &BTreeMap<u64, RegisterRule>) -> RowTable {
    let mut t = pyelftools_view(t);
    for r in &mut t.rows {
        for (n, rule) in defaults {
            r.registers.entry(*n).or_insert_with(|| rule.clone());
        }
        // The helper does not print "undefined" (libdw's answer for every
        // register nothing says anything about).
        r.registers.retain(|_, rule| *rule != RegisterRule::Undefined);
    }
    t.normalize()
}

/// A `.debug_frame` section (version 4 CIE, target address size) whose
/// CIE only defines the CFA (register 0 + 0) and whose one FDE covers
/// [0x1000, 0x1010) with no instructions: the rules a reader reports there
/// are its ABI defaults. `None` when it cannot be written for the target.
fn defaults_section(like: &CfiSection) -> Option<CfiSection> {
    use crate::asm::section::{build, CieLayout, FdeLayout, SectionLayout};
    let layout = SectionLayout {
        kind: dwarfcheck_core::cfi::FrameKind::DebugFrame,
        format: dwarfcheck_core::encoding::Format::Dwarf32,
        address: 0,
        text_base: None,
        data_base: None,
        pad: false,
        cie: CieLayout {
            version: 4,
            augmentation: Vec::new(),
            address_size: None,
            segment_selector_size: 0,
            code_align: 1,
            data_align: -8,
            return_address_register: like.target.return_address_register,
            eh_ptr: 0,
            fde_encoding: None,
            lsda_encoding: None,
            personality: None,
            augmentation_data: None,
            // DW_CFA_def_cfa r0 +0
            instructions: vec![0x0c, 0x00, 0x00],
        },
        fdes: vec![FdeLayout { pc_begin: 0x1000, pc_range: 0x10, ..Default::default() }],
    };
    let (bytes, _) = build(&layout, &like.target).ok()?;
    Some(CfiSection::new(dwarfcheck_core::cfi::FrameKind::DebugFrame, bytes, 0, like.target.clone()))
}

/// The FDEs of `section` as the libdw helper reads them: one line
/// `OFFSET BEGIN END` (hexadecimal) per FDE whose header parses.
fn fde_list(section: &CfiSection) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for off in section.fde_offsets().filter_map(Result::ok) {
        if let Ok((fde, _)) = section.parse_fde(off) {
            let _ = writeln!(out, "{off:x} {:x} {:x}", fde.pc_begin, fde.pc_begin.wrapping_add(fde.pc_range));
        }
    }
    out
}

/// What readelf can show of a table (docs/architecture.md §8: compared only as far as
/// the tool shows it):
/// - expression bodies: `exp`/`vexp` only, so expressions become empty;
/// - `u` is both "undefined" and "no rule", so explicit `Undefined` rules
///   are removed;
/// - AArch64 RA_SIGN_STATE (register 34 `RaSigned`) is never shown.
///
/// Address spaces need no step here: readelf is judged only on DWARF 5 and
/// GNU input, where every CFA is in address space 0.
pub fn readelf_view(t: &RowTable) -> RowTable {
    let rows = t
        .rows
        .iter()
        .map(|r| {
            let mut r = r.clone();
            if let CfaRule::Expression { expr } = &mut r.cfa {
                expr.clear();
            }
            r.registers.retain(|_, rule| !matches!(rule, RegisterRule::Undefined | RegisterRule::RaSigned { .. }));
            for rule in r.registers.values_mut() {
                if let RegisterRule::Expression { expr } | RegisterRule::ValExpression { expr } = rule {
                    expr.clear();
                }
            }
            r
        })
        .collect();
    RowTable { fde_offset: t.fde_offset, rows }.normalize()
}

/// Size in bytes of each CIE of [`calibration_section`].
pub const CALIBRATION_ENTRY: u64 = 24;

/// A `.debug_frame` section of version 4 CIEs, one per register number
/// `k` in 0..N (N: one past the target's highest register number, at
/// least 128), each [`CALIBRATION_ENTRY`] bytes long, so CIE `k` is at
/// section offset `24 * k`. CIE `k` has the single initial instruction
/// `DW_CFA_same_value k` and return address column 0 (1 for `k = 0`).
///
/// llvm-dwarfdump prints `DW_CFA_same_value: NAME` in each CIE's listing;
/// readelf prints a column header `LOC CFA ra NAME` (the return address
/// column is always called `ra`, hence one register per CIE), and skips a
/// CIE whose registers lie beyond its name table. The name of register `k`
/// is found under the CIE at offset `24 * k`.
pub fn calibration_section(like: &CfiSection) -> CfiSection {
    let t = &like.target;
    let n = t.registers.iter().map(|r| r.number + 1).max().unwrap_or(0).max(128);
    let big = t.endian == Endian::Big;
    let mut bytes = Vec::with_capacity((n * CALIBRATION_ENTRY) as usize);
    for k in 0..n {
        let mut body = vec![0xff, 0xff, 0xff, 0xff, 4, 0, 8, 0, 1, 0x78, u8::from(k == 0), 0x08];
        dwarfcheck_core::encoding::leb128::write_uleb(&mut body, k);
        body.resize(CALIBRATION_ENTRY as usize - 4, 0);
        let len = body.len() as u32;
        bytes.extend(if big { len.to_be_bytes() } else { len.to_le_bytes() });
        bytes.extend(body);
    }
    CfiSection::new(dwarfcheck_core::cfi::FrameKind::DebugFrame, bytes, 0, like.target.clone())
}

/// The register number a calibration CIE header line stands for, from the
/// entry offset it starts with.
fn calibration_register(header: &str) -> Option<u64> {
    let off = table::hex(header.split_whitespace().next()?)?;
    (off % CALIBRATION_ENTRY == 0 && header.contains(" CIE")).then_some(off / CALIBRATION_ENTRY)
}

#[cfg(test)]
mod tests;
