//! SPIR-V tools as consumers of OpenCL.DebugInfo.100 expressions (issue 16
//! item 6; docs/consumers.md "SPIR-V tools as consumers"): each `spirv:`
//! case's expression is built into a minimal module
//! (`spirv::module::build`), handed to the tool, and what the tool made of
//! it is judged against the reference's direct evaluation:
//!
//! - `spirv-as`: assembles the module spelled with operation names
//!   ([`Spelling::Names`]); dwarfcheck's reader decodes the words it wrote,
//!   and the reference evaluates that expression ([`read_back`]);
//! - `spirv-dis`: disassembles the module assembled word for word; its
//!   text is parsed back and evaluated the same way ([`read_back`]);
//! - `spirv-val`: validates the module; it is judged only on which inputs
//!   it accepts ([`val`]);
//! - `llvm-spirv`: `llvm-spirv-15 -r` translates the module to LLVM IR;
//!   the variable's `DIExpression` is turned into DWARF operations and
//!   evaluated by the reference ([`llvm_spirv`], [`diexpression`]).
//!
//! A tool that refuses the module (a non-zero exit) answers ill-formed,
//! with the rule `TOOL:<its reason>`; one that crashes or runs out of its
//! budget ([`tools`]) answers a consumer fault.
//!
//! [`chain`] goes further than `llvm-spirv`: it compiles the translated IR
//! with `llc-15` for x86_64 and amdgcn and judges the DWARF of each variable
//! (docs/consumers.md "The llvm-spirv → llc chain").

pub mod chain;
pub mod classes;
pub mod diexpression;
pub mod llvm_spirv;
pub mod read_back;
pub mod tools;
pub mod val;

use super::{Answer, Consumer, ConsumerError, FailureClass, Support};
use crate::case::{Case, CfiCase, ExprCase};
use crate::edition::Edition;
use crate::spirv::module::build::Spelling;
use dwarfcheck_core::encoding::spirv::SpirvExpression;
use dwarfcheck_core::outcome::{CfiOutcome, Failure, Outcome};
use dwarfcheck_core::rules::RuleId;

/// Which SPIR-V tool is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// spirv-tools' assembler, on operation names.
    SpirvAs,
    /// spirv-tools' disassembler.
    SpirvDis,
    /// spirv-tools' validator.
    SpirvVal,
    /// The Khronos LLVM/SPIR-V translator, reverse direction (`-r`).
    LlvmSpirv,
}

impl Tool {
    /// Every tool, in report order.
    pub const ALL: [Tool; 4] = [Tool::SpirvAs, Tool::SpirvDis, Tool::SpirvVal, Tool::LlvmSpirv];

    /// The consumer name (`--consumers`, reports).
    pub fn name(self) -> &'static str {
        match self {
            Tool::SpirvAs => "spirv-as",
            Tool::SpirvDis => "spirv-dis",
            Tool::SpirvVal => "spirv-val",
            Tool::LlvmSpirv => "llvm-spirv",
        }
    }

    /// The tool for a consumer name, if it is one of these.
    pub fn by_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The programs it needs on `PATH` (spirv-as builds every module).
    pub fn programs(self) -> &'static [&'static str] {
        match self {
            Tool::SpirvAs => &["spirv-as"],
            Tool::SpirvDis => &["spirv-as", "spirv-dis"],
            Tool::SpirvVal => &["spirv-as", "spirv-val"],
            Tool::LlvmSpirv => &["spirv-as", "llvm-spirv-15", "llvm-dis-15"],
        }
    }

    /// The Debian package(s) that have [`Tool::programs`].
    pub fn package(self) -> &'static str {
        match self {
            Tool::SpirvAs | Tool::SpirvDis | Tool::SpirvVal => "spirv-tools",
            Tool::LlvmSpirv => "spirv-tools, llvm-spirv-15 and llvm-15",
        }
    }

    /// The program whose version the reports show.
    fn judged_program(self) -> &'static str {
        match self {
            Tool::SpirvAs => "spirv-as",
            Tool::SpirvDis => "spirv-dis",
            Tool::SpirvVal => "spirv-val",
            Tool::LlvmSpirv => "llvm-spirv-15",
        }
    }
}

/// One SPIR-V tool as a [`Consumer`] of `spirv:` expression cases
/// ([`Edition::SpirvDebugInfo100`]; every other case is outside its
/// edition).
pub struct SpirvTool {
    tool: Tool,
    version: Option<String>,
}

impl SpirvTool {
    /// The consumer for `tool`.
    ///
    /// Errors: [`ConsumerError::NotInstalled`] when one of
    /// [`Tool::programs`] does not run.
    pub fn new(tool: Tool) -> Result<Self, ConsumerError> {
        if !tools::installed(tool.programs()) {
            return Err(ConsumerError::NotInstalled {
                consumer: tool.name(),
                programs: tool.programs(),
                package: tool.package(),
            });
        }
        let version = std::process::Command::new(tool.judged_program())
            .arg("--version")
            .output()
            .ok()
            .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().find(|l| !l.trim().is_empty()).map(str::to_string))
            .map(|l| l.trim().to_string());
        Ok(SpirvTool { tool, version })
    }

    /// Which tool.
    pub fn tool(&self) -> Tool {
        self.tool
    }
}

/// The outcome of a tool that refused the module: ill-formed, with the
/// rule `TOOL:<the line that says why>`.
pub(crate) fn refused(tool: Tool, text: &str) -> Outcome {
    let why = tools::reason_line(text);
    Outcome::Failed(Failure::IllFormed { rule: RuleId::new(format!("{}:{why}", tool.name())), at: None })
}

/// The outcome of a tool that did not finish (a crash, a budget).
pub(crate) fn fault(tool: Tool, what: impl std::fmt::Display) -> Outcome {
    Outcome::Failed(Failure::ConsumerFault { what: format!("{}: {what}", tool.name()) })
}

/// [`refused`] or [`fault`], from a tool failure.
pub(crate) fn failed(tool: Tool, f: tools::Failure) -> Outcome {
    match f {
        tools::Failure::Refused(_, text) => refused(tool, &text),
        tools::Failure::Fault(f) => fault(tool, f),
    }
}

/// The reference's outcome for `case` with its expression replaced by
/// `e` (what a tool read).
pub(crate) fn reference_on(case: &ExprCase, e: SpirvExpression) -> Outcome {
    let mut c = case.clone();
    c.spirv = Some(std::sync::Arc::new(e));
    super::builtin::reference_outcome(&c).0
}

impl Consumer for SpirvTool {
    fn name(&self) -> &str {
        self.tool.name()
    }

    fn supports(&self) -> Support {
        Support { editions: vec![Edition::SpirvDebugInfo100], expr: true, cfi: false }
    }

    fn evaluate(&self, case: &ExprCase) -> Outcome {
        let Some(e) = case.spirv.as_deref() else {
            return Outcome::Failed(Failure::Unsupported { what: "not a SPIR-V expression".into() });
        };
        match self.tool {
            Tool::SpirvAs => read_back::answer(Tool::SpirvAs, case, e, Spelling::Names),
            Tool::SpirvDis => read_back::answer(Tool::SpirvDis, case, e, Spelling::Words),
            Tool::SpirvVal => val::answer(e),
            Tool::LlvmSpirv => llvm_spirv::answer(case, e),
        }
    }

    fn frame_table(&self, _case: &CfiCase) -> CfiOutcome {
        CfiOutcome::Failed(Failure::Unsupported { what: "a SPIR-V tool reads no CFI".into() })
    }

    /// spirv-val shows only whether it accepts a module: [`val::view`].
    fn expr_view(&self, _case: &ExprCase, outcome: &Outcome) -> Option<Outcome> {
        (self.tool == Tool::SpirvVal).then(|| val::view(outcome))
    }

    fn failure_class(&self, case: &Case, reference: Answer<'_>, answer: Answer<'_>) -> Option<FailureClass> {
        match (case, reference, answer) {
            (Case::Expr(c), Answer::Expr(r), Answer::Expr(a)) => classes::class(self.tool, c, r, a),
            _ => None,
        }
    }

    fn version(&self) -> Option<String> {
        self.version.clone()
    }
}
