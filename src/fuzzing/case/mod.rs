//! A fuzz input as an expression case made of removable context entries:
//! what the `expr_*` targets evaluate (its context built directly from the
//! entries), what `dwarfcheck minimize` shrinks, and what lands in
//! `corpus/regressions/` as case-file YAML (docs/case-format.md).

mod entry;
pub(crate) mod rich;
mod spirv;

pub use entry::{Caller, DieShape, Entry, Expr, RegValue, Rule, Section};
pub use rich::{rich_entries, standard_unit};
pub use spirv::SpirvPart;

use super::LoadError;
use crate::case::ExprCase;
use dwarfcheck_core::context::{CompUnit, Context};
use dwarfcheck_core::encoding::hex::to_hex as hex;
use dwarfcheck_core::encoding::VendorProfile;
use dwarfcheck_core::target::{presets, Target};
use std::fmt::Write;
use std::sync::{Arc, OnceLock};

/// An expression case whose context is a list of entries, each of which
/// can be left out (delta debugging removes them one by one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FuzzCase {
    /// Target preset name (`x86_64`, `amdgpu-wave64`, ...).
    pub target: String,
    /// Vendor profile name (`hetero-2020`, `llvm-user`, ...).
    pub vendor: String,
    /// The context entries, in the order they are written (and applied).
    pub entries: Vec<Entry>,
    /// The expression bytes (DWARF expression encoding).
    pub expr: Vec<u8>,
    /// The rule IDs the case lists (a case names at least one):
    /// `expr.eval.runs-to-end` unless a minimiser knows better.
    pub rules: Vec<String>,
    /// A SPIR-V expression and its initial entry: the case is then a
    /// `spirv:` case, whose `expr` is ignored (it is the lowering, made
    /// again by [`FuzzCase::load`]).
    pub spirv: Option<SpirvPart>,
}

/// The target preset called `name`, built once per process.
pub fn preset(name: &str) -> Option<Arc<Target>> {
    static ALL: OnceLock<Vec<Arc<Target>>> = OnceLock::new();
    ALL.get_or_init(|| presets::NAMES.iter().filter_map(|n| presets::by_name(n)).map(Arc::new).collect())
        .iter()
        .find(|t| t.name == name)
        .cloned()
}

impl FuzzCase {
    /// The fixed rich context of `expr_bytes` (x86-64, hetero-2020)
    /// around `expr` ([`rich_entries`]): registers and memory, a unit with
    /// four base types and four DIEs for `DW_OP_call*` and implicit
    /// pointers, a calling frame, an object, thread and lane, and small
    /// budgets so that loops and huge pieces end fast.
    pub fn rich(expr: Vec<u8>) -> FuzzCase {
        FuzzCase {
            target: "x86_64".into(),
            vendor: "hetero-2020".into(),
            entries: rich_entries(),
            expr,
            rules: default_rules(),
            spirv: None,
        }
    }

    /// The case's target preset.
    ///
    /// Errors: [`LoadError::UnknownTarget`].
    pub fn machine(&self) -> Result<Arc<Target>, LoadError> {
        preset(&self.target).ok_or_else(|| LoadError::UnknownTarget(self.target.clone()))
    }

    /// The case as a case file of one case named `name`, with `comment`
    /// lines on top. Without `expect` it is purely differential: reference
    /// and fast must agree (docs/case-format.md). The case loader reads it
    /// into the context [`FuzzCase::context`] builds.
    pub fn to_yaml(&self, name: &str, comment: &str) -> String {
        let target = self.machine().unwrap_or_else(|_| Arc::new(presets::x86_64()));
        let mut s = String::new();
        for line in comment.lines() {
            let _ = writeln!(s, "# {line}");
        }
        let _ = writeln!(s, "target: {}\nvendor: {}\ncases:\n  - name: {name}", self.target, self.vendor);
        let _ = writeln!(s, "    rules: [{}]\n    context:", self.rules.join(", "));
        let of = |sec: Section| -> Vec<String> {
            self.entries.iter().filter(|e| e.section() == sec).map(|e| e.yaml(&target)).collect()
        };
        for k in of(Section::Key) {
            let _ = writeln!(s, "      {k}");
        }
        let list = |s: &mut String, head: &str, indent: &str, items: Vec<String>, dash: bool| {
            if !items.is_empty() {
                let _ = writeln!(s, "{indent}{head}:");
                for i in items {
                    let _ = writeln!(s, "{indent}  {}{i}", if dash { "- " } else { "" });
                }
            }
        };
        list(&mut s, "registers", "      ", of(Section::Register), false);
        list(&mut s, "memory", "      ", of(Section::Memory), true);
        let _ = writeln!(s, "      cu:\n        version: 5\n        address_size: {}", target.address_bytes());
        for k in of(Section::Unit) {
            let _ = writeln!(s, "        {k}");
        }
        list(&mut s, "base_types", "        ", of(Section::BaseType), false);
        list(&mut s, "dies", "        ", of(Section::Die), false);
        match &self.spirv {
            Some(p) => s.push_str(&p.yaml("    ")),
            None => {
                let _ = writeln!(s, "    expr_bytes: \"{}\"", hex(&self.expr));
            }
        }
        s
    }

    /// The case's evaluation context, built from its entries in order
    /// (with a version 5 unit of the target's address size, as
    /// [`FuzzCase::to_yaml`] writes).
    ///
    /// Errors: [`LoadError`] for an unknown target or vendor profile, or
    /// a register entry the target cannot take.
    pub fn context(&self) -> Result<Context, LoadError> {
        let target = self.machine()?;
        let mut ctx = Context::new(target.clone());
        ctx.vendor =
            VendorProfile::by_name(&self.vendor).ok_or_else(|| LoadError::UnknownVendor(self.vendor.clone()))?;
        ctx.cu = Some(CompUnit { version: 5, address_size: target.address_bytes(), ..CompUnit::default() });
        for e in &self.entries {
            e.apply(&mut ctx)?;
        }
        Ok(ctx)
    }

    /// The case as an expression case named `fuzz`, in
    /// [`FuzzCase::context`]; with a SPIR-V part, the SPIR-V case the
    /// case loader makes of [`FuzzCase::to_yaml`]'s `spirv:` (its initial
    /// entry in the context, `expr` its lowering).
    ///
    /// Errors: as [`FuzzCase::context`].
    pub fn load(&self) -> Result<ExprCase, LoadError> {
        let mut ctx = self.context()?;
        let (expr, spirv) = match &self.spirv {
            Some(p) => p.apply(&mut ctx),
            None => (self.expr.as_slice().into(), None),
        };
        Ok(ExprCase {
            name: "fuzz".into(),
            origin: "fuzz".into(),
            expr,
            attribute: None,
            form: None,
            spirv,
            ctx: Arc::new(ctx),
            rules: self.rules.clone(),
            expect: None,
        })
    }
}

/// The rule list of a fuzz case: evaluation runs the operations in order.
pub fn default_rules() -> Vec<String> {
    vec!["expr.eval.runs-to-end".into()]
}
