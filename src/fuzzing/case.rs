//! A fuzz input as an expression case made of removable context entries,
//! written as case-file YAML (docs/case-format.md): what the `expr_*`
//! targets evaluate, what `dwarfcheck minimize` shrinks, and what lands in
//! `corpus/regressions/`.

use super::LoadError;
use crate::case::{yaml::load_str, Case, ExprCase};
use dwarfcheck_core::encoding::hex::to_hex as hex;
use std::fmt::Write;

/// Where a context entry goes in the case's `context:` mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Section {
    /// A key of `context:` itself, e.g. `pc: 0x401010`.
    Key,
    /// A `registers:` entry, e.g. `rax: 0x10`.
    Register,
    /// A `memory:` segment, a flow mapping.
    Memory,
    /// A key of `cu:`, e.g. `addr_base: 8`.
    Unit,
    /// A `cu.base_types:` entry, e.g. `0x10: { encoding: DW_ATE_unsigned, bits: 32 }`.
    BaseType,
    /// A `cu.dies:` entry, e.g. `0x40: { location: "DW_OP_reg0" }`.
    Die,
}

/// An expression case whose context is a list of entries, each of which
/// can be left out (delta debugging removes them one by one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FuzzCase {
    /// Target preset name (`x86_64`, `amdgpu-wave64`, ...).
    pub target: String,
    /// Vendor profile name (`hetero-2020`, `llvm-user`, ...).
    pub vendor: String,
    /// The context entries, each one YAML line in its section.
    pub entries: Vec<(Section, String)>,
    /// The expression bytes (DWARF expression encoding).
    pub expr: Vec<u8>,
    /// The rule IDs the case lists (a case names at least one):
    /// `expr.eval.runs-to-end` unless a minimiser knows better.
    pub rules: Vec<String>,
}

impl FuzzCase {
    /// The fixed rich context of `expr_bytes` (x86-64, hetero-2020)
    /// around `expr`: registers and memory, a unit with four base types and
    /// four DIEs for `DW_OP_call*` and implicit pointers, a calling frame,
    /// an object, thread and lane, and small budgets so that loops and huge
    /// pieces end fast.
    pub fn rich(expr: Vec<u8>) -> FuzzCase {
        use Section::*;
        let keys = [
            "pc: 0x401010",
            "cfa: 0x7ffc1000",
            "tls_base: 0x7f0000000000",
            "thread: 0",
            "lane: 0",
            "synthetic: 0x5eed",
            "budgets: { steps: 5000, size_bytes: 8192 }",
            "frame_base: \"DW_OP_call_frame_cfa\"",
            "object: { memory: 0x601000 }",
            "caller: { pc: 0x401200, cfa: 0x7ffc1100, default_rule: same, \
             rules: { rbx: \"[CFA-16]\", rbp: \"same\", rip: \"[CFA-8]\", rsp: \"CFA+0\" } }",
        ];
        let regs = [
            "rax: 0x10",
            "rbx: 0x7ffc0ff0",
            "rcx: 0xffffffffffffffff",
            "rdx: 3",
            "rsi: 0x601000",
            "rdi: 0x601008",
            "rbp: 0x7ffc0fe0",
            "rsp: 0x7ffc0f00",
            "rip: 0x401010",
        ];
        // rsp+8 holds 0x1001; rsp+16 points at rbp's frame; 0x601000 holds
        // a pointer back to the stack and the float64 1.0 at 0x601018.
        let memory = [
            "{ at: 0x7ffc0f00, bytes: \"0000000000000000 0110000000000000 f00ffc7f00000000 0810600000000000 \
             0000000000000000 0102030405060708 1122334455667788 99aabbccddeeff00 0000000000000000 \
             0a00000000000000 0b00000000000000 0c00000000000000\" }",
            "{ at: 0x601000, bytes: \"f00ffc7f00000000 0810600000000000 000000000000f03f 0100000002000000\" }",
            "{ at: 0x7ffc0fe0, bytes: \"000ffc7f00000000 2010400000000000 0810600000000000 0000000000000000\" }",
        ];
        let mut entries: Vec<(Section, String)> = Vec::new();
        entries.extend(keys.iter().map(|k| (Key, k.to_string())));
        entries.extend(regs.iter().map(|k| (Register, k.to_string())));
        entries.extend(memory.iter().map(|k| (Memory, k.to_string())));
        entries.extend(standard_unit());
        FuzzCase { target: "x86_64".into(), vendor: "hetero-2020".into(), entries, expr, rules: default_rules() }
    }

    /// The case as a case file of one case named `name`, with `comment`
    /// lines on top. Without `expect` it is purely differential: reference
    /// and fast must agree (docs/case-format.md).
    pub fn to_yaml(&self, name: &str, comment: &str) -> String {
        let mut s = String::new();
        for line in comment.lines() {
            let _ = writeln!(s, "# {line}");
        }
        let _ = writeln!(s, "target: {}\nvendor: {}\ncases:\n  - name: {name}", self.target, self.vendor);
        let _ = writeln!(s, "    rules: [{}]\n    context:", self.rules.join(", "));
        let of = |sec: Section| self.entries.iter().filter(move |e| e.0 == sec).map(|e| e.1.as_str());
        for k in of(Section::Key) {
            let _ = writeln!(s, "      {k}");
        }
        let list = |s: &mut String, head: &str, indent: &str, items: Vec<&str>, dash: bool| {
            if !items.is_empty() {
                let _ = writeln!(s, "{indent}{head}:");
                for i in items {
                    let _ = writeln!(s, "{indent}  {}{i}", if dash { "- " } else { "" });
                }
            }
        };
        list(&mut s, "registers", "      ", of(Section::Register).collect(), false);
        list(&mut s, "memory", "      ", of(Section::Memory).collect(), true);
        let _ = writeln!(s, "      cu:\n        version: 5\n        address_size: {}", self.address_bytes());
        for k in of(Section::Unit) {
            let _ = writeln!(s, "        {k}");
        }
        list(&mut s, "base_types", "        ", of(Section::BaseType).collect(), false);
        list(&mut s, "dies", "        ", of(Section::Die).collect(), false);
        let _ = writeln!(s, "    expr_bytes: \"{}\"", hex(&self.expr));
        s
    }

    /// Loads the case through the case-file loader (the one place that
    /// turns YAML into a context).
    ///
    /// Errors: [`LoadError::CaseFile`] with the loader's
    /// `file:line:column` diagnostics, or [`LoadError::NotOneExpression`].
    pub fn load(&self) -> Result<ExprCase, LoadError> {
        let text = self.to_yaml("fuzz", "");
        match load_str("fuzz-case.yaml", &text) {
            Ok(mut cases) if cases.len() == 1 => match cases.remove(0) {
                Case::Expr(c) => Ok(c),
                Case::Cfi(_) => Err(LoadError::NotOneExpression("a CFI case")),
            },
            Ok(_) => Err(LoadError::NotOneExpression("several cases")),
            Err(errors) => Err(LoadError::CaseFile { errors, text }),
        }
    }

    /// Address size in bytes of the case's target (8 unless the preset is
    /// unknown, which `load` reports).
    fn address_bytes(&self) -> u8 {
        dwarfcheck_core::target::presets::by_name(&self.target).map(|t| t.address_bytes()).unwrap_or(8)
    }
}

/// The rule list of a fuzz case: evaluation runs the operations in order.
pub fn default_rules() -> Vec<String> {
    vec!["expr.eval.runs-to-end".into()]
}

/// The unit every fuzz context carries: a `.debug_addr` with 0x601000 and
/// 0x7ffc0f00 at indices 0 and 1 (`DW_OP_addrx`, `DW_OP_constx`), four
/// base types (unsigned 32, signed 64, float 64, unsigned 8 at 0x10,
/// 0x18, 0x20, 0x28) and four
/// DIEs (0x40 the object's address + 8, 0x50 a constant, 0x60 the value 3,
/// 0x70 nothing).
pub fn standard_unit() -> Vec<(Section, String)> {
    let types = [
        "0x10: { encoding: DW_ATE_unsigned, bits: 32 }",
        "0x18: { encoding: DW_ATE_signed, bits: 64 }",
        "0x20: { encoding: DW_ATE_float, bits: 64 }",
        "0x28: { encoding: DW_ATE_unsigned, bits: 8 }",
    ];
    let dies = [
        "0x40: { location: \"DW_OP_push_object_address DW_OP_plus_uconst 8\" }",
        "0x50: { const_value: \"2a000000\", byte_size: 4 }",
        "0x60: { location: \"DW_OP_lit1 DW_OP_lit2 DW_OP_plus\" }",
        "0x70: {}",
    ];
    let mut v = vec![
        (Section::Unit, "addr_base: 8".to_string()),
        (Section::Unit, "debug_addr: \"0000000000000000 0010600000000000 000ffc7f00000000\"".to_string()),
    ];
    v.extend(types.iter().map(|t| (Section::BaseType, t.to_string())));
    v.extend(dies.iter().map(|d| (Section::Die, d.to_string())));
    v
}
