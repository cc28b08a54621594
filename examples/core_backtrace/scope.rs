//! What the DWARF says about one program location: the subprogram that
//! holds it (DWARF 5 §3.3, with its ranges §2.17), the variables and formal
//! parameters in scope there (§4.1; lexical blocks §3.5 that do not hold
//! the location are left out), their locations (a single location
//! description as an exprloc, §2.6.1, or a location list, §2.6.2, which
//! the fast evaluator reads itself) or constant values, and the call sites of a subprogram with their
//! parameters (`DW_TAG_call_site`, `DW_AT_call_return_pc`,
//! `DW_TAG_call_site_parameter`, `DW_AT_call_value`, §3.4; and the GNU
//! forms of DWARF 4).

use crate::die::{at, tag, Info, Value};
use crate::ranges;

/// A program's DWARF: every DIE, and each concrete subprogram with its
/// address ranges.
#[derive(Debug, Default)]
pub struct Program {
    /// The DIEs.
    pub info: Info,
    /// Subprograms with code: DIE index and ranges.
    subprograms: Vec<(usize, Vec<ranges::Range>)>,
}

/// Where a variable's value is, as its DIE says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Where<'a> {
    /// `DW_AT_location` as an exprloc: one DWARF expression.
    Expr(&'a [u8]),
    /// `DW_AT_location` as a location list: byte offset in
    /// `.debug_loclists` (DWARF 5) or `.debug_loc` (DWARF 2-4).
    List(u64),
    /// `DW_AT_location` as `DW_FORM_loclistx`: index into the unit's
    /// location list offsets.
    ListX(u64),
    /// `DW_AT_const_value`: the value's bytes, least significant first.
    Const(Vec<u8>),
    /// Neither: the variable was optimized away.
    Nowhere,
}

/// A variable or formal parameter in scope.
#[derive(Debug, Clone)]
pub struct Variable<'a> {
    /// Its name (`?` when it has none).
    pub name: String,
    /// Whether it is a formal parameter.
    pub parameter: bool,
    /// Its type DIE.
    pub ty: Option<usize>,
    /// Where its value is.
    pub location: Where<'a>,
}

impl Program {
    /// Indexes the subprograms of `info` that have code.
    pub fn new(info: Info) -> Program {
        let subprograms = (0..info.dies.len())
            .filter(|&i| info.dies[i].tag == tag::SUBPROGRAM)
            .filter_map(|i| {
                let r = ranges::of(&info, i);
                (!r.is_empty()).then_some((i, r))
            })
            .collect();
        Program { info, subprograms }
    }

    /// The innermost subprogram whose ranges hold `pc`.
    pub fn function_at(&self, pc: u64) -> Option<usize> {
        self.subprograms.iter().filter(|(_, r)| ranges::contains(r, pc)).map(|(i, _)| *i).max()
    }

    /// The `DW_AT_frame_base` expression of subprogram `sub`.
    pub fn frame_base(&self, sub: usize) -> Option<&[u8]> {
        self.info.block(sub, at::FRAME_BASE)
    }

    /// The variables and formal parameters of subprogram `sub` in scope at
    /// `pc`, in DIE order (nested blocks that hold `pc` included; inlined
    /// subroutines and declarations left out).
    pub fn variables(&self, sub: usize, pc: u64) -> Vec<Variable<'_>> {
        let info = &self.info;
        let mut out = Vec::new();
        let end = info.dies[sub].end;
        let mut i = sub + 1;
        while i < end {
            let d = &info.dies[i];
            let next = d.end.max(i + 1);
            match d.tag {
                tag::LEXICAL_BLOCK => {
                    let r = ranges::of(info, i);
                    i = if r.is_empty() || ranges::contains(&r, pc) { i + 1 } else { next };
                    continue;
                }
                // Their variables belong to the inlined frame, not shown.
                tag::INLINED_SUBROUTINE | tag::SUBPROGRAM => {}
                tag::VARIABLE | tag::FORMAL_PARAMETER if d.attr(at::DECLARATION).is_none() => {
                    out.push(Variable {
                        name: info.name(i).unwrap_or_else(|| "?".into()),
                        parameter: d.tag == tag::FORMAL_PARAMETER,
                        ty: info.type_of(i),
                        location: self.location(i),
                    });
                }
                _ => {}
            }
            i = next;
        }
        out
    }

    /// Where DIE `die`'s value is (`DW_AT_location`, else
    /// `DW_AT_const_value`).
    pub fn location(&self, die: usize) -> Where<'_> {
        let info = &self.info;
        match info.dies[die].attr(at::LOCATION) {
            Some(Value::Block { .. }) => return info.block(die, at::LOCATION).map_or(Where::Nowhere, Where::Expr),
            Some(Value::SecOffset(o)) => return Where::List(*o),
            Some(Value::LocListX(i)) => return Where::ListX(*i),
            _ => {}
        }
        match info.dies[die].attr(at::CONST_VALUE) {
            Some(Value::Udata(v)) => Where::Const(v.to_le_bytes().to_vec()),
            Some(Value::Sdata(v)) => Where::Const(v.to_le_bytes().to_vec()),
            Some(Value::Block { .. }) => {
                info.block(die, at::CONST_VALUE).map_or(Where::Nowhere, |b| Where::Const(b.to_vec()))
            }
            Some(Value::Str(s)) => Where::Const(s.as_bytes().to_vec()),
            _ => Where::Nowhere,
        }
    }

    /// The call site in subprogram `sub` whose return address is
    /// `return_pc` (`DW_AT_call_return_pc`, or `DW_AT_low_pc` of a
    /// `DW_TAG_GNU_call_site`).
    pub fn call_site(&self, sub: usize, return_pc: u64) -> Option<usize> {
        let info = &self.info;
        (sub + 1..info.dies[sub].end).find(|&i| match info.dies[i].tag {
            tag::CALL_SITE => info.address(i, at::CALL_RETURN_PC) == Some(return_pc),
            tag::GNU_CALL_SITE => info.address(i, at::LOW_PC) == Some(return_pc),
            _ => false,
        })
    }

    /// The parameters of call site `site` that say which register holds
    /// them (`DW_OP_reg0`-`reg31` or `DW_OP_regx`): DWARF register number
    /// and the `DW_AT_call_value` expression, evaluated in the caller.
    pub fn call_site_parameters(&self, site: usize) -> Vec<(u64, &[u8])> {
        let info = &self.info;
        let d = &info.dies[site];
        (site + 1..d.end)
            .filter(|&i| info.dies[i].parent == Some(site))
            .filter(|&i| matches!(info.dies[i].tag, tag::CALL_SITE_PARAMETER | tag::GNU_CALL_SITE_PARAMETER))
            .filter_map(|i| {
                let reg = register_of(info.block(i, at::LOCATION)?)?;
                let value = info.block(i, at::CALL_VALUE).or_else(|| info.block(i, at::GNU_CALL_SITE_VALUE))?;
                Some((reg, value))
            })
            .collect()
    }
}

/// The register a location expression that is exactly `DW_OP_regN` (0x50
/// + N) or `DW_OP_regx N` (0x90) names.
fn register_of(expr: &[u8]) -> Option<u64> {
    match expr {
        [op @ 0x50..=0x6f] => Some(u64::from(op - 0x50)),
        [0x90, rest @ ..] => {
            let mut r = crate::reader::Reader::at(rest, 0);
            let n = r.uleb().ok()?;
            r.is_empty().then_some(n)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::register_of;

    #[test]
    fn call_site_registers() {
        assert_eq!(register_of(&[0x55]), Some(5));
        assert_eq!(register_of(&[0x90, 0x11]), Some(17));
        assert_eq!(register_of(&[0x91, 0x10]), None);
        assert_eq!(register_of(&[0x55, 0x9f]), None);
    }
}
