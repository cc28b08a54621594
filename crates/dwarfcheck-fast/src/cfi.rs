//! Fast one-pass construction of CFI row tables.
//!
//! Written apart from `reference::cfi`: instructions are decoded and
//! executed in a single pass over the bytes, the state is a flat vector of
//! `(register, rule)` pairs with rules stored inline (expressions as
//! section ranges, never copied), the remember-state stack lives in reused
//! arenas, and rows are handed to a [`RowSink`] borrowed, so the common
//! path allocates nothing per instruction or per row. [`Builder`] walks a
//! whole section reusing one CIE's initial state across its FDEs.
//!
//! Same outcomes as the reference, rule IDs and offsets included: decoding
//! errors win over execution errors (`cfi.insn.static-decoding`), so after
//! an execution error the pass goes on decoding (without executing) to
//! the end of the FDE. Budgets as documented in `dwarfcheck_core::cfi`.
//!
//! The frame sections themselves ([`CfiSection`]: finding CIEs and FDEs,
//! decoding their headers) are `dwarfcheck_core::cfi`'s, re-exported here
//! so that an embedder needs this crate alone.

pub use dwarfcheck_core::cfi::*;

use dwarfcheck_core::encoding::leb128::{read_sleb, read_uleb, LebError};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BudgetKind, CfaRule, CfiOutcome, RegisterRule, Row, RowTable};
use dwarfcheck_core::rules::{id, RuleId};
use dwarfcheck_core::target::{Arch, Endian, Target};
use std::collections::BTreeMap;

/// A register rule, inline. Expressions are section byte ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// `undefined`.
    Undefined,
    /// `same value`.
    Same,
    /// `offset(N)`, N in bytes.
    Offset(i64),
    /// `val_offset(N)`, N in bytes.
    ValOffset(i64),
    /// `register(R)`.
    Register(u64),
    /// `expression(E)`: E at section offset `.0`, `.1` bytes long.
    Expr(u64, u64),
    /// `val_expression(E)`: as `Expr`.
    ValExpr(u64, u64),
    /// AArch64 RA_SIGN_STATE.
    RaSigned(bool),
}

/// The CFA rule, inline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cfa {
    /// No CFA rule yet.
    None,
    /// register + offset (bytes) in address space `aspace`.
    Reg {
        /// DWARF register.
        reg: u64,
        /// Byte offset.
        off: i64,
        /// Address space.
        aspace: u64,
    },
    /// Expression at section offset `.0`, `.1` bytes long.
    Expr(u64, u64),
}

/// Receives each row, borrowed, as it is closed.
pub trait RowSink {
    /// A row `[start, end)` with the given rules (`regs` unordered, one
    /// entry per register). `section` is the frame section's bytes (to
    /// resolve expression ranges).
    fn row(&mut self, start: u64, end: u64, cfa: &Cfa, regs: &[(u64, Rule)], section: &[u8]);
}

/// Counts rows (the benchmark's sink).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CountingSink {
    /// Rows seen.
    pub rows: u64,
    /// Sum of register-rule counts over rows (keeps the work observable).
    pub cells: u64,
}

impl RowSink for CountingSink {
    #[inline]
    fn row(&mut self, _start: u64, _end: u64, _cfa: &Cfa, regs: &[(u64, Rule)], _section: &[u8]) {
        self.rows += 1;
        self.cells += regs.len() as u64;
    }
}

/// Collects rows into the outcome form.
struct TableSink {
    rows: Vec<Row>,
}

/// The outcome form of an inline rule (expression ranges resolved in `bytes`).
pub(crate) fn to_rule(r: &Rule, bytes: &[u8]) -> RegisterRule {
    let slice = |s: u64, l: u64| bytes[s as usize..(s + l) as usize].to_vec();
    match *r {
        Rule::Undefined => RegisterRule::Undefined,
        Rule::Same => RegisterRule::SameValue,
        Rule::Offset(offset) => RegisterRule::Offset { offset },
        Rule::ValOffset(offset) => RegisterRule::ValOffset { offset },
        Rule::Register(register) => RegisterRule::Register { register },
        Rule::Expr(s, l) => RegisterRule::Expression { expr: slice(s, l) },
        Rule::ValExpr(s, l) => RegisterRule::ValExpression { expr: slice(s, l) },
        Rule::RaSigned(signed) => RegisterRule::RaSigned { signed },
    }
}

impl RowSink for TableSink {
    fn row(&mut self, start: u64, end: u64, cfa: &Cfa, regs: &[(u64, Rule)], section: &[u8]) {
        let cfa = match *cfa {
            Cfa::Reg { reg, off, aspace } => CfaRule::RegOffset { register: reg, offset: off, aspace },
            Cfa::Expr(s, l) => CfaRule::Expression { expr: section[s as usize..(s + l) as usize].to_vec() },
            Cfa::None => unreachable!("rows are only emitted with a CFA rule"),
        };
        let registers: BTreeMap<u64, RegisterRule> = regs.iter().map(|(r, x)| (*r, to_rule(x, section))).collect();
        self.rows.push(Row { start, end, cfa, registers });
    }
}

/// What building an FDE's rows needs of its header: its address range and
/// where its instructions are (a compact copy of [`Fde`]'s fields, for
/// callers that keep many).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FdeSpan {
    /// First address covered (byte address, `Fde::pc_begin`).
    pub pc_begin: u64,
    /// Number of bytes covered (`Fde::pc_range`).
    pub pc_range: u64,
    /// Section offsets `[start, end)` of its instructions (`Fde::instructions`).
    pub instructions: (u64, u64),
}

impl FdeSpan {
    /// The span of `fde`.
    pub fn of(fde: &Fde) -> Self {
        FdeSpan {
            pc_begin: fde.pc_begin,
            pc_range: fde.pc_range,
            instructions: (fde.instructions.start, fde.instructions.end),
        }
    }
}

/// Totals of [`Builder::run_section`].
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SectionStats {
    /// FDEs found.
    pub fdes: u64,
    /// FDEs whose table was built without error.
    pub ok: u64,
    /// Rows emitted (rows of failed FDEs emitted before the error included).
    pub rows: u64,
    /// Register cells over all rows.
    pub cells: u64,
    /// Whether walking the entries stopped on an error.
    pub walk_error: bool,
}

/// Execution state plus reusable buffers.
#[derive(Debug, Default)]
pub struct Builder {
    regs: Vec<(u64, Rule)>,
    cfa: Option<Cfa>,
    /// The initial rules (`DW_CFA_restore`) when they are not the cached
    /// CIE's `cie_regs` (`initial_is_cie`).
    initial: Vec<(u64, Rule)>,
    initial_is_cie: bool,
    stack: Vec<(Cfa, usize)>,
    stack_regs: Vec<(u64, Rule)>,
    executed: u64,
    cells: u64,
    /// The last CIE's initial state, when clean (its rules in `cie_regs`).
    cie_state: Option<(u64, Cfa, u64)>, // (cie offset, cfa, executed)
    cie_regs: Vec<(u64, Rule)>,
    /// The pass stops once the location passes this address (the row
    /// holding it has been handed over): `u64::MAX` for a whole table.
    until: u64,
}

/// Why a pass stopped.
enum Stop {
    /// A decoding error: final.
    Decode(CfiOutcome),
}

#[inline]
fn ill(rule: RuleId, at: u64) -> CfiOutcome {
    CfiOutcome::Failed(Failure::IllFormed { rule, at: Some(at) })
}

/// Per-stream constants.
struct Ctx<'a> {
    bytes: &'a [u8],
    sec: &'a CfiSection,
    cie: &'a Cie,
    target: &'a Target,
    big: bool,
    aarch64: bool,
    pc_begin: u64,
    end: u64,
}

#[inline(always)]
fn uleb(b: &[u8], p: &mut usize, lim: usize) -> Result<u64, RuleId> {
    if *p < lim {
        let x = b[*p];
        if x < 0x80 {
            *p += 1;
            return Ok(u64::from(x));
        }
    }
    match read_uleb(&b[(*p).min(lim)..lim]) {
        Ok((v, n)) => {
            *p += n;
            Ok(v)
        }
        Err(LebError::Truncated) => Err(id::CFI_INSN_TRUNCATED),
        Err(LebError::Overflow) => Err(id::CFI_INSN_LEB128_OVERFLOW),
    }
}

#[inline(always)]
fn sleb(b: &[u8], p: &mut usize, lim: usize) -> Result<i64, RuleId> {
    if *p < lim {
        let x = b[*p];
        if x < 0x80 {
            *p += 1;
            return Ok(((x << 1) as i8 >> 1) as i64);
        }
    }
    match read_sleb(&b[(*p).min(lim)..lim]) {
        Ok((v, n)) => {
            *p += n;
            Ok(v)
        }
        Err(LebError::Truncated) => Err(id::CFI_INSN_TRUNCATED),
        Err(LebError::Overflow) => Err(id::CFI_INSN_LEB128_OVERFLOW),
    }
}

#[inline(always)]
fn fixed(b: &[u8], p: &mut usize, lim: usize, n: usize, big: bool) -> Result<u64, RuleId> {
    if lim - *p < n {
        return Err(id::CFI_INSN_TRUNCATED);
    }
    let s = &b[*p..*p + n];
    *p += n;
    let mut v = 0u64;
    if big {
        for &x in s {
            v = (v << 8) | u64::from(x);
        }
    } else {
        for &x in s.iter().rev() {
            v = (v << 8) | u64::from(x);
        }
    }
    Ok(v)
}

impl Builder {
    /// A builder with empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    fn set(&mut self, reg: u64, rule: Rule, at: u64) -> Result<(), CfiOutcome> {
        for e in self.regs.iter_mut() {
            if e.0 == reg {
                e.1 = rule;
                return Ok(());
            }
        }
        if self.regs.len() >= MAX_REGISTER_RULES {
            return Err(CfiOutcome::Failed(Failure::Budget { budget: BudgetKind::Size, at: Some(at) }));
        }
        self.regs.push((reg, rule));
        Ok(())
    }

    #[inline]
    fn get(&self, reg: u64) -> Option<Rule> {
        self.regs.iter().find(|e| e.0 == reg).map(|e| e.1)
    }

    #[inline]
    fn factored(cie: &Cie, v: i128, at: u64) -> Result<i64, CfiOutcome> {
        // cfi.cie.data-alignment-zero: checked where the factor is applied.
        if cie.data_align == 0 {
            return Err(ill(id::CFI_CIE_DATA_ALIGNMENT_ZERO, at));
        }
        let p = v * i128::from(cie.data_align);
        i64::try_from(p).map_err(|_| ill(id::CFI_INSN_OFFSET_OVERFLOW, at))
    }

    /// Runs the instructions in `[start, lim)`. Execution errors go to
    /// `pending` (and switch to decode-only); decoding errors stop.
    #[allow(clippy::too_many_arguments)]
    fn stream<S: RowSink>(
        &mut self,
        c: &Ctx<'_>,
        start: usize,
        lim: usize,
        in_cie: bool,
        loc: &mut u64,
        pending: &mut Option<CfiOutcome>,
        sink: &mut S,
    ) -> Result<(), Stop> {
        let b = c.bytes;
        let mut p = start;
        let cie = c.cie;
        while p < lim && *loc <= self.until {
            let at = p as u64;
            let op = b[p];
            p += 1;
            let dec = |r: RuleId| Stop::Decode(ill(r, at));
            // Execute in place (one dispatch per instruction); after an
            // execution error only decode (cfi.insn.static-decoding).
            macro_rules! run {
                ($a:expr) => {{
                    let a = $a;
                    if pending.is_none() {
                        if let Err(e) = self.exec(c, a, at, in_cie, loc, sink) {
                            *pending = Some(e);
                        }
                    }
                }};
            }
            match op >> 6 {
                1 => run!(Act::Advance(u64::from(op & 0x3f))),
                2 => run!(Act::Set(u64::from(op & 0x3f), Val::OffU(uleb(b, &mut p, lim).map_err(dec)?))),
                3 => run!(Act::Restore(u64::from(op & 0x3f))),
                _ => match op {
                    0x00 => run!(Act::Nop),
                    0x01 => match c.sec.read_set_loc(cie, c.pc_begin, p as u64, lim as u64) {
                        Ok((a, next)) => {
                            p = next as usize;
                            run!(Act::SetLoc(a))
                        }
                        Err(e) => {
                            let o = match e.kind {
                                dwarfcheck_core::cfi::ErrorKind::IllFormed => {
                                    CfiOutcome::Failed(Failure::IllFormed { rule: e.rule, at: Some(at) })
                                }
                                dwarfcheck_core::cfi::ErrorKind::EvalError => {
                                    CfiOutcome::Failed(Failure::EvalError { rule: e.rule, at: Some(at) })
                                }
                            };
                            return Err(Stop::Decode(o));
                        }
                    },
                    0x02 => run!(Act::Advance(fixed(b, &mut p, lim, 1, c.big).map_err(dec)?)),
                    0x03 => run!(Act::Advance(fixed(b, &mut p, lim, 2, c.big).map_err(dec)?)),
                    0x04 => run!(Act::Advance(fixed(b, &mut p, lim, 4, c.big).map_err(dec)?)),
                    0x05 => {
                        let r = uleb(b, &mut p, lim).map_err(dec)?;
                        run!(Act::Set(r, Val::OffU(uleb(b, &mut p, lim).map_err(dec)?)))
                    }
                    0x06 => run!(Act::Restore(uleb(b, &mut p, lim).map_err(dec)?)),
                    0x07 => run!(Act::Set(uleb(b, &mut p, lim).map_err(dec)?, Val::Plain(Rule::Undefined))),
                    0x08 => run!(Act::Set(uleb(b, &mut p, lim).map_err(dec)?, Val::Plain(Rule::Same))),
                    0x09 => {
                        let r = uleb(b, &mut p, lim).map_err(dec)?;
                        run!(Act::Set(r, Val::Plain(Rule::Register(uleb(b, &mut p, lim).map_err(dec)?))))
                    }
                    0x0a => run!(Act::Remember),
                    0x0b => run!(Act::RestoreState),
                    0x0c => {
                        let r = uleb(b, &mut p, lim).map_err(dec)?;
                        run!(Act::DefCfa(r, Val::OffRaw(uleb(b, &mut p, lim).map_err(dec)?), 0, false))
                    }
                    0x0d => run!(Act::DefCfaReg(uleb(b, &mut p, lim).map_err(dec)?)),
                    0x0e => run!(Act::DefCfaOff(Val::OffRaw(uleb(b, &mut p, lim).map_err(dec)?))),
                    0x0f => {
                        let len = uleb(b, &mut p, lim).map_err(dec)?;
                        if len > (lim - p) as u64 {
                            return Err(dec(id::CFI_INSN_TRUNCATED));
                        }
                        let s = p as u64;
                        p += len as usize;
                        run!(Act::CfaExpr(s, len))
                    }
                    0x10 | 0x16 => {
                        let r = uleb(b, &mut p, lim).map_err(dec)?;
                        let len = uleb(b, &mut p, lim).map_err(dec)?;
                        if len > (lim - p) as u64 {
                            return Err(dec(id::CFI_INSN_TRUNCATED));
                        }
                        let s = p as u64;
                        p += len as usize;
                        run!(Act::Set(
                            r,
                            Val::Plain(if op == 0x10 { Rule::Expr(s, len) } else { Rule::ValExpr(s, len) })
                        ))
                    }
                    0x11 => {
                        let r = uleb(b, &mut p, lim).map_err(dec)?;
                        run!(Act::Set(r, Val::OffS(sleb(b, &mut p, lim).map_err(dec)?)))
                    }
                    0x12 => {
                        let r = uleb(b, &mut p, lim).map_err(dec)?;
                        run!(Act::DefCfa(r, Val::OffS(sleb(b, &mut p, lim).map_err(dec)?), 0, false))
                    }
                    0x13 => run!(Act::DefCfaOff(Val::OffS(sleb(b, &mut p, lim).map_err(dec)?))),
                    0x14 => {
                        let r = uleb(b, &mut p, lim).map_err(dec)?;
                        run!(Act::Set(r, Val::ValU(uleb(b, &mut p, lim).map_err(dec)?)))
                    }
                    0x15 => {
                        let r = uleb(b, &mut p, lim).map_err(dec)?;
                        run!(Act::Set(r, Val::ValS(sleb(b, &mut p, lim).map_err(dec)?)))
                    }
                    0x2d => run!(Act::Op2d),
                    0x2e => {
                        uleb(b, &mut p, lim).map_err(dec)?;
                        run!(Act::Nop)
                    }
                    0x2f => {
                        let r = uleb(b, &mut p, lim).map_err(dec)?;
                        run!(Act::Set(r, Val::OffNeg(uleb(b, &mut p, lim).map_err(dec)?)))
                    }
                    0x30 => {
                        let r = uleb(b, &mut p, lim).map_err(dec)?;
                        let o = uleb(b, &mut p, lim).map_err(dec)?;
                        run!(Act::DefCfa(r, Val::OffRaw(o), uleb(b, &mut p, lim).map_err(dec)?, true))
                    }
                    0x31 => {
                        let r = uleb(b, &mut p, lim).map_err(dec)?;
                        let o = sleb(b, &mut p, lim).map_err(dec)?;
                        run!(Act::DefCfa(r, Val::OffS(o), uleb(b, &mut p, lim).map_err(dec)?, true))
                    }
                    _ => return Err(dec(id::CFI_INSN_UNKNOWN_OPCODE)),
                },
            }
        }
        Ok(())
    }

    #[inline]
    fn offset_of(cie: &Cie, v: Val, at: u64) -> Result<(i64, bool), CfiOutcome> {
        // Returns (byte offset, is_val_offset).
        Ok(match v {
            Val::OffU(n) => (Self::factored(cie, i128::from(n), at)?, false),
            Val::OffS(n) => (Self::factored(cie, i128::from(n), at)?, false),
            Val::OffNeg(n) => (Self::factored(cie, -i128::from(n), at)?, false),
            Val::ValU(n) => (Self::factored(cie, i128::from(n), at)?, true),
            Val::ValS(n) => (Self::factored(cie, i128::from(n), at)?, true),
            Val::OffRaw(n) => (i64::try_from(n).map_err(|_| ill(id::CFI_INSN_OFFSET_OVERFLOW, at))?, false),
            Val::Plain(_) => (0, false),
        })
    }

    #[inline(always)]
    fn exec<S: RowSink>(
        &mut self,
        c: &Ctx<'_>,
        act: Act,
        at: u64,
        in_cie: bool,
        loc: &mut u64,
        sink: &mut S,
    ) -> Result<(), CfiOutcome> {
        self.executed += 1;
        if self.executed > MAX_INSTRUCTIONS {
            return Err(CfiOutcome::Failed(Failure::Budget { budget: BudgetKind::Steps, at: Some(at) }));
        }
        match act {
            Act::Nop => {}
            Act::Advance(d) | Act::SetLoc(d) => {
                if in_cie {
                    return Err(ill(id::CFI_CIE_ROW_CREATION_IN_INITIAL_INSTRUCTIONS, at));
                }
                let new = if let Act::SetLoc(a) = act {
                    if a <= *loc {
                        return Err(ill(id::CFI_SET_LOC_NOT_INCREASING, at));
                    }
                    a
                } else {
                    if c.cie.code_align == 0 {
                        return Err(ill(id::CFI_CIE_CODE_ALIGNMENT_ZERO, at));
                    }
                    let n = u128::from(d) * u128::from(c.cie.code_align) + u128::from(*loc);
                    if n > u128::from(c.end) {
                        return Err(ill(id::CFI_ADVANCE_PAST_RANGE, at));
                    }
                    n as u64
                };
                if new > c.end {
                    return Err(ill(id::CFI_ADVANCE_PAST_RANGE, at));
                }
                self.emit(c, loc, new, at, sink)?;
            }
            Act::Set(reg, v) => {
                let rule = match v {
                    Val::Plain(r @ (Rule::Expr(s, l) | Rule::ValExpr(s, l))) => {
                        scan_expr(c, s, l, at)?;
                        r
                    }
                    Val::Plain(r) => r,
                    _ => {
                        let (o, val) = Self::offset_of(c.cie, v, at)?;
                        if val {
                            Rule::ValOffset(o)
                        } else {
                            Rule::Offset(o)
                        }
                    }
                };
                self.set(reg, rule, at)?;
            }
            Act::Restore(reg) => {
                if in_cie {
                    return Err(ill(id::CFI_CIE_RESTORE_IN_INITIAL_INSTRUCTIONS, at));
                }
                let initial = if self.initial_is_cie { &self.cie_regs } else { &self.initial };
                match initial.iter().find(|e| e.0 == reg) {
                    Some(&(_, r)) => self.set(reg, r, at)?,
                    None => {
                        if let Some(i) = self.regs.iter().position(|e| e.0 == reg) {
                            self.regs.swap_remove(i);
                        }
                    }
                }
            }
            Act::Remember => {
                if self.stack.len() >= MAX_REMEMBER_DEPTH {
                    return Err(CfiOutcome::Failed(Failure::Budget { budget: BudgetKind::Stack, at: Some(at) }));
                }
                let start = self.stack_regs.len();
                self.stack_regs.extend_from_slice(&self.regs);
                self.stack.push((self.cfa.unwrap_or(Cfa::None), start));
            }
            Act::RestoreState => {
                let Some((cfa, start)) = self.stack.pop() else {
                    return Err(ill(id::CFI_RESTORE_STATE_EMPTY_STACK, at));
                };
                self.regs.clear();
                self.regs.extend_from_slice(&self.stack_regs[start..]);
                self.stack_regs.truncate(start);
                self.cfa = if cfa == Cfa::None { None } else { Some(cfa) };
            }
            Act::DefCfa(reg, v, aspace, with_aspace) => {
                if with_aspace && c.target.address_space(aspace).is_none() {
                    return Err(ill(id::CFI_LLVM_DEF_ASPACE_CFA_UNKNOWN_ASPACE, at));
                }
                let (off, _) = Self::offset_of(c.cie, v, at)?;
                self.cfa = Some(Cfa::Reg { reg, off, aspace });
            }
            Act::DefCfaReg(reg) => match self.cfa {
                Some(Cfa::Reg { off, aspace, .. }) => self.cfa = Some(Cfa::Reg { reg, off, aspace }),
                _ => return Err(ill(id::CFI_DEF_CFA_REGISTER_REQUIRES_REG_OFFSET, at)),
            },
            Act::DefCfaOff(v) => match self.cfa {
                Some(Cfa::Reg { reg, aspace, .. }) => {
                    let (off, _) = Self::offset_of(c.cie, v, at)?;
                    self.cfa = Some(Cfa::Reg { reg, off, aspace });
                }
                _ => return Err(ill(id::CFI_DEF_CFA_OFFSET_REQUIRES_REG_OFFSET, at)),
            },
            Act::CfaExpr(s, l) => {
                scan_expr(c, s, l, at)?;
                self.cfa = Some(Cfa::Expr(s, l));
            }
            Act::Op2d => {
                if c.aarch64 {
                    let now = match self.get(AARCH64_RA_SIGN_STATE) {
                        None | Some(Rule::Undefined) | Some(Rule::Same) => false,
                        Some(Rule::RaSigned(s)) => s,
                        Some(_) => return Err(ill(id::CFI_AARCH64_NEGATE_RA_STATE_OTHER_RULE, at)),
                    };
                    self.set(AARCH64_RA_SIGN_STATE, Rule::RaSigned(!now), at)?;
                } else {
                    let asz = i64::from(c.cie.address_size);
                    for r in 8u64..16 {
                        self.set(r, Rule::Register(r + 16), at)?;
                    }
                    for r in 16u64..32 {
                        self.set(r, Rule::Offset((r as i64 - 16) * asz), at)?;
                    }
                }
            }
        }
        Ok(())
    }

    #[inline]
    fn emit<S: RowSink>(
        &mut self,
        c: &Ctx<'_>,
        loc: &mut u64,
        new: u64,
        at: u64,
        sink: &mut S,
    ) -> Result<(), CfiOutcome> {
        if new > *loc {
            match self.cfa {
                Some(cfa) => {
                    self.cells += 1 + self.regs.len() as u64;
                    if self.cells > MAX_TABLE_CELLS {
                        return Err(CfiOutcome::Failed(Failure::Budget { budget: BudgetKind::Size, at: Some(at) }));
                    }
                    sink.row(*loc, new, &cfa, &self.regs, c.bytes)
                }
                None => return Err(ill(id::CFI_TABLE_CFA_UNDEFINED, at)),
            }
        }
        *loc = new;
        Ok(())
    }

    /// Forgets the cached CIE state (call it before reusing a builder on
    /// another section: the cache is keyed by CIE offset).
    pub fn reset(&mut self) {
        self.cie_state = None;
    }

    /// Builds one FDE's rows into `sink`, rows in address order, each
    /// handed over borrowed as it is closed. `cie` must be the FDE's CIE
    /// (both from `CfiSection::parse_fde`). The initial rules of the last
    /// CIE are cached by its offset: use one builder per section, or call
    /// [`Builder::reset`] in between.
    ///
    /// Errors: the same `CfiOutcome` the reference reports (rules in
    /// `specs/rules/cfi-instructions.yaml`, budgets in `dwarfcheck_core::cfi`). Rows
    /// handed to `sink` before an error are not retracted.
    pub fn build_fde<S: RowSink>(
        &mut self,
        sec: &CfiSection,
        fde: &Fde,
        cie: &Cie,
        sink: &mut S,
    ) -> Result<(), CfiOutcome> {
        self.until = u64::MAX;
        self.build(sec, FdeSpan::of(fde), cie, sink).map(|_stopped| ())
    }

    /// [`Builder::build_fde`] that stops once the row holding `address` has
    /// been handed to `sink` (the rows after it are neither executed nor
    /// decoded): `Ok(true)` when it stopped there, `Ok(false)` when it ran
    /// to the end of the FDE (`address` outside its range, or in its last
    /// row). The faults it reports are those of the instructions before the
    /// stop only: an FDE whose later instructions are ill-formed may give a
    /// row here and a fault in [`Builder::build_fde`]; a caller that must
    /// report the whole table's fault builds the whole table once
    /// (`crate::unwind::Unwinder` does, per FDE).
    pub fn build_fde_until<S: RowSink>(
        &mut self,
        sec: &CfiSection,
        fde: &Fde,
        cie: &Cie,
        address: u64,
        sink: &mut S,
    ) -> Result<bool, CfiOutcome> {
        self.build_span_until(sec, FdeSpan::of(fde), cie, address, sink)
    }

    /// [`Builder::build_fde_until`] of the FDE whose span is `fde`.
    pub fn build_span_until<S: RowSink>(
        &mut self,
        sec: &CfiSection,
        fde: FdeSpan,
        cie: &Cie,
        address: u64,
        sink: &mut S,
    ) -> Result<bool, CfiOutcome> {
        self.until = if address < fde.pc_begin { u64::MAX } else { address };
        let r = self.build(sec, fde, cie, sink);
        self.until = u64::MAX;
        r
    }

    /// The pass of [`Builder::build_fde`] up to `self.until`: whether it
    /// stopped there.
    fn build<S: RowSink>(
        &mut self,
        sec: &CfiSection,
        fde: FdeSpan,
        cie: &Cie,
        sink: &mut S,
    ) -> Result<bool, CfiOutcome> {
        let c = Ctx {
            bytes: &sec.bytes,
            sec,
            cie,
            target: &sec.target,
            big: sec.target.endian == Endian::Big,
            aarch64: sec.target.arch == Arch::Aarch64,
            pc_begin: fde.pc_begin,
            end: fde.pc_begin + fde.pc_range,
        };
        let mut loc = fde.pc_begin;
        let mut pending = None;
        self.cells = 0;
        let cached = matches!(self.cie_state, Some((o, _, _)) if o == cie.offset);
        self.stack.clear();
        self.stack_regs.clear();
        if cached {
            let (_, cfa, ex) = self.cie_state.expect("checked");
            self.regs.clear();
            self.regs.extend_from_slice(&self.cie_regs);
            self.cfa = if cfa == Cfa::None { None } else { Some(cfa) };
            self.executed = ex;
        } else {
            self.regs.clear();
            self.cfa = None;
            self.executed = 0;
            let (s, e) = (cie.instructions.start as usize, cie.instructions.end as usize);
            match self.stream(&c, s, e, true, &mut loc, &mut pending, sink) {
                Ok(()) => {}
                Err(Stop::Decode(o)) => return Err(o),
            }
            if pending.is_none() && self.stack.is_empty() {
                self.cie_state = Some((cie.offset, self.cfa.unwrap_or(Cfa::None), self.executed));
                self.cie_regs.clear();
                self.cie_regs.extend_from_slice(&self.regs);
            }
        }
        // (When the CIE's state is cached, the initial rules are its rules.)
        self.initial_is_cie = matches!(self.cie_state, Some((o, _, _)) if o == cie.offset);
        if !self.initial_is_cie {
            self.initial.clear();
            self.initial.extend_from_slice(&self.regs);
        }
        let (s, e) = (fde.instructions.0 as usize, fde.instructions.1 as usize);
        match self.stream(&c, s, e, false, &mut loc, &mut pending, sink) {
            Ok(()) => {}
            Err(Stop::Decode(o)) => return Err(o),
        }
        if let Some(p) = pending {
            return Err(p);
        }
        if loc > self.until {
            // (Only a row-creating instruction moves `loc`, after handing
            // over the row it closes; nothing is pending then.)
            return Ok(true);
        }
        self.emit(&c, &mut loc, c.end, fde.instructions.1, sink).map(|()| false)
    }

    /// Builds every FDE of `sec` into `sink`, reusing decoded CIEs.
    /// Returns totals; errors of single FDEs are counted, not returned.
    pub fn run_section<S: RowSink>(&mut self, sec: &CfiSection, sink: &mut S) -> SectionStats {
        let mut st = SectionStats::default();
        self.reset();
        // The last CIE decoded, kept apart from `self` while building.
        let mut cache: Option<Cie> = None;
        for entry in sec.entries() {
            let Ok(entry) = entry else {
                st.walk_error = true;
                break;
            };
            if !matches!(entry.kind, dwarfcheck_core::cfi::EntryKind::Fde { .. }) {
                continue;
            }
            st.fdes += 1;
            let fde = sec.parse_fde_entry(&entry, &mut cache);
            if cache.as_ref().map(|c| c.offset) != self.cie_state.map(|s| s.0) {
                self.cie_state = None;
            }
            let (Ok(fde), Some(cie)) = (fde, cache.as_ref()) else { continue };
            if self.build_fde(sec, &fde, cie, sink).is_ok() {
                st.ok += 1;
            }
        }
        st
    }
}

/// A value operand before factoring.
#[derive(Clone, Copy)]
enum Val {
    /// A complete rule.
    Plain(Rule),
    /// Unsigned factored offset → offset(N).
    OffU(u64),
    /// Signed factored offset → offset(N) (or CFA offset).
    OffS(i64),
    /// Negated unsigned factored offset.
    OffNeg(u64),
    /// Unsigned factored → val_offset(N).
    ValU(u64),
    /// Signed factored → val_offset(N).
    ValS(i64),
    /// Non-factored unsigned byte offset (CFA).
    OffRaw(u64),
}

/// A decoded instruction's action.
#[derive(Clone, Copy)]
enum Act {
    Nop,
    Advance(u64),
    SetLoc(u64),
    Set(u64, Val),
    Restore(u64),
    Remember,
    RestoreState,
    DefCfa(u64, Val, u64, bool),
    DefCfaReg(u64),
    DefCfaOff(Val),
    CfaExpr(u64, u64),
    Op2d,
}

/// Rejects operations CFI expressions must not use
/// (`cfi.expression.forbidden-op`); operations are skipped by operand
/// shape until the end or the first byte that does not decode.
#[cold]
fn scan_expr(c: &Ctx<'_>, start: u64, len: u64, at: u64) -> Result<(), CfiOutcome> {
    use dwarfcheck_core::encoding::op::{lookup, lookup_llvm_user, Decoded, Op, Operand as O};
    let e = &c.bytes[start as usize..(start + len) as usize];
    let mut i = 0usize;
    while i < e.len() {
        let spec = match lookup(&c.target.vendor, e[i]) {
            Decoded::Op(s) => s,
            Decoded::LlvmUser => match read_uleb(&e[i + 1..]) {
                Ok((sub, n)) => {
                    i += n;
                    match lookup_llvm_user(sub) {
                        Some(s) => s,
                        None => return Ok(()),
                    }
                }
                Err(_) => return Ok(()),
            },
            Decoded::Unknown => return Ok(()),
        };
        i += 1;
        use Op::*;
        if let Addrx
        | Call2
        | Call4
        | CallRef
        | ConstType
        | Constx
        | Convert
        | DerefType
        | RegvalType
        | Reinterpret
        | Fbreg
        | ImplicitPointer
        | XderefType
        | PushObjectAddress
        | LlvmPushLane
        | CallFrameCfa
        | EntryValue
        | GnuEntryValue
        | GnuConstType
        | GnuRegvalType
        | GnuDerefType
        | GnuConvert
        | GnuReinterpret
        | GnuAddrIndex
        | GnuConstIndex
        | GnuImplicitPointer
        | GnuParameterRef
        | GnuVariableValue
        | LlvmAspaceImplicitPointer = spec.op
        {
            return Err(ill(id::CFI_EXPRESSION_FORBIDDEN_OP, at));
        }
        for o in spec.operands {
            let r = &e[i..];
            let n = match o {
                O::U8 | O::I8 => 1,
                O::U16 | O::I16 | O::Branch => 2,
                O::U32 | O::I32 => 4,
                O::U64 | O::I64 => 8,
                O::Addr => c.cie.address_size as usize,
                O::DieOffset => c.cie.format.offset_bytes(),
                O::Uleb => match read_uleb(r) {
                    Ok((_, n)) => n,
                    Err(_) => return Ok(()),
                },
                O::Sleb => match read_sleb(r) {
                    Ok((_, n)) => n,
                    Err(_) => return Ok(()),
                },
                O::Block => match read_uleb(r) {
                    Ok((l, n)) if l <= (r.len() - n) as u64 => n + l as usize,
                    _ => return Ok(()),
                },
                O::Block1 => match r.first() {
                    Some(&l) => 1 + l as usize,
                    None => return Ok(()),
                },
            };
            if n > r.len() {
                return Ok(());
            }
            i += n;
        }
    }
    Ok(())
}

/// Builds the row table of the FDE at section offset `fde_offset` of
/// `sec` in one pass: the normalised table, or the rule of the first
/// ill-formed or failing instruction or header (`cfi.*`), or a budget
/// (see `dwarfcheck_core::cfi`).
pub fn frame_table(sec: &CfiSection, fde_offset: u64) -> CfiOutcome {
    let (fde, cie) = match sec.parse_fde(fde_offset) {
        Ok(x) => x,
        Err(e) => return e.to_outcome(),
    };
    let mut b = Builder::new();
    let mut sink = TableSink { rows: Vec::new() };
    match b.build_fde(sec, &fde, &cie, &mut sink) {
        Ok(()) => CfiOutcome::Table(RowTable { fde_offset, rows: sink.rows }.normalize()),
        Err(o) => o,
    }
}

/// Builds the rows of every FDE of a section (the benchmark entry point).
pub fn build_all(sec: &CfiSection) -> (SectionStats, CountingSink) {
    let mut b = Builder::new();
    let mut sink = CountingSink::default();
    let st = b.run_section(sec, &mut sink);
    (st, sink)
}
