//! A toy DWARF expression evaluator: how a Rust consumer checks itself
//! against dwarfcheck's bundled suite from its own `cargo test`
//! (`tests/conformance.rs`, `dwarfcheck::conformance`).
//!
//! It knows the literal and constant operations, `DW_OP_dup`, `drop`,
//! `swap`, `plus`, `plus_uconst`, `minus`, `mul`, `and`, `or`, `xor`,
//! `neg`, `not`, `DW_OP_reg0`-`reg31` as a whole expression,
//! `DW_OP_breg0`-`breg31`, and `DW_OP_stack_value`, on a little-endian
//! target with 8-byte addresses, for an expression evaluated as given (no
//! attribute, initial stack or object). Anything else is "unsupported".

use dwarfcheck::conformance::core::context::{MachineState, ResultKind};
use dwarfcheck::conformance::core::outcome::{Failure, Outcome, RawLocation, Source, Value};
use dwarfcheck::conformance::core::rules::RuleId;
use dwarfcheck::conformance::{Edition, ExprCase, ExprConsumer};

/// The toy evaluator.
#[derive(Debug, Clone, Copy, Default)]
pub struct Toy {
    /// A deliberate bug for the tests: `DW_OP_minus` with its operands
    /// swapped (top minus second instead of second minus top).
    pub swapped_minus: bool,
}

/// Why the toy gives no value: it does not know something, or the
/// expression breaks a rule (the toy's own rule IDs, prefixed `toy.`).
enum Stop {
    Unsupported(String),
    IllFormed(&'static str, usize),
    EvalError(&'static str, usize),
}

impl From<Stop> for Outcome {
    fn from(s: Stop) -> Outcome {
        Outcome::Failed(match s {
            Stop::Unsupported(what) => Failure::Unsupported { what },
            Stop::IllFormed(rule, at) => Failure::IllFormed { rule: RuleId::new(rule), at: Some(at as u64) },
            Stop::EvalError(rule, at) => Failure::EvalError { rule: RuleId::new(rule), at: Some(at as u64) },
        })
    }
}

/// What an expression left: a value on the stack (implicit or memory
/// location, or a value), or a register.
enum Result {
    Stack { top: u64, stack_value: bool },
    Register(u64),
}

/// Reads a fixed-size or LEB128 operand.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn fixed(&mut self, n: usize, at: usize) -> std::result::Result<u64, Stop> {
        let b = self.bytes.get(self.pos..self.pos + n).ok_or(Stop::IllFormed("toy.truncated-operand", at))?;
        self.pos += n;
        Ok(b.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x)))
    }

    fn signed(&mut self, n: usize, at: usize) -> std::result::Result<u64, Stop> {
        let v = self.fixed(n, at)?;
        let shift = 64 - 8 * n as u32;
        Ok((((v << shift) as i64) >> shift) as u64)
    }

    fn leb(&mut self, signed: bool, at: usize) -> std::result::Result<u64, Stop> {
        let (mut v, mut shift) = (0u64, 0u32);
        loop {
            let b = *self.bytes.get(self.pos).ok_or(Stop::IllFormed("toy.truncated-operand", at))?;
            self.pos += 1;
            if shift >= 64 {
                return Err(Stop::Unsupported("LEB128 operand longer than 64 bits".into()));
            }
            v |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                if signed && shift < 64 && b & 0x40 != 0 {
                    v |= u64::MAX << shift;
                }
                return Ok(v);
            }
        }
    }
}

impl Toy {
    fn run(&self, case: &ExprCase) -> std::result::Result<Result, Stop> {
        let ctx: &dyn MachineState = &*case.ctx;
        let plain = case.attribute.is_none() && case.form.is_none() && case.spirv.is_none();
        if !plain || !ctx.initial_stack().is_empty() || ctx.object().is_some() {
            return Err(Stop::Unsupported("attributes, initial stacks and objects".into()));
        }
        if ctx.address_bytes() != 8 || ctx.target().endian != dwarfcheck::conformance::core::target::Endian::Little {
            return Err(Stop::Unsupported("targets other than little-endian 64-bit".into()));
        }
        let bytes = &case.expr[..];
        let mut r = Reader { bytes, pos: 0 };
        let mut stack: Vec<u64> = Vec::new();
        let mut stack_value = false;
        while r.pos < bytes.len() {
            let at = r.pos;
            let op = bytes[at];
            r.pos += 1;
            if stack_value {
                return Err(Stop::Unsupported("operations after DW_OP_stack_value".into()));
            }
            let pop = |s: &mut Vec<u64>| s.pop().ok_or(Stop::IllFormed("toy.stack-underflow", at));
            match op {
                0x30..=0x4f => stack.push(u64::from(op - 0x30)),
                0x08 => stack.push(r.fixed(1, at)?),
                0x09 => stack.push(r.signed(1, at)?),
                0x0a => stack.push(r.fixed(2, at)?),
                0x0b => stack.push(r.signed(2, at)?),
                0x0c => stack.push(r.fixed(4, at)?),
                0x0d => stack.push(r.signed(4, at)?),
                0x0e | 0x0f => stack.push(r.fixed(8, at)?),
                0x10 => stack.push(r.leb(false, at)?),
                0x11 => stack.push(r.leb(true, at)?),
                0x12 => {
                    let v = *stack.last().ok_or(Stop::IllFormed("toy.stack-underflow", at))?;
                    stack.push(v);
                }
                0x13 => {
                    pop(&mut stack)?;
                }
                0x16 => {
                    let (a, b) = (pop(&mut stack)?, pop(&mut stack)?);
                    stack.push(a);
                    stack.push(b);
                }
                0x1f | 0x20 => {
                    let a = pop(&mut stack)?;
                    stack.push(if op == 0x1f { a.wrapping_neg() } else { !a });
                }
                0x23 => {
                    let n = r.leb(false, at)?;
                    let a = pop(&mut stack)?;
                    stack.push(a.wrapping_add(n));
                }
                0x1a | 0x1c | 0x1e | 0x21 | 0x22 | 0x27 => {
                    let (top, second) = (pop(&mut stack)?, pop(&mut stack)?);
                    stack.push(match op {
                        0x1a => second & top,
                        0x1c if self.swapped_minus => top.wrapping_sub(second),
                        0x1c => second.wrapping_sub(top),
                        0x1e => second.wrapping_mul(top),
                        0x21 => second | top,
                        0x22 => second.wrapping_add(top),
                        _ => second ^ top,
                    });
                }
                0x50..=0x6f if bytes.len() == 1 => return Ok(Result::Register(u64::from(op - 0x50))),
                0x70..=0x8f => {
                    let offset = r.leb(true, at)?;
                    let mut b = [0u8; 8];
                    ctx.read_register(u64::from(op - 0x70), 0, &mut b)
                        .map_err(|_| Stop::EvalError("toy.register-unreadable", at))?;
                    stack.push(u64::from_le_bytes(b).wrapping_add(offset));
                }
                0x9f => stack_value = true,
                _ => return Err(Stop::Unsupported(format!("operation {op:#04x}"))),
            }
        }
        let top = *stack.last().ok_or(Stop::Unsupported("expressions that leave no value".into()))?;
        Ok(Result::Stack { top, stack_value })
    }
}

impl ExprConsumer for Toy {
    fn name(&self) -> &str {
        if self.swapped_minus {
            "toy-swapped-minus"
        } else {
            "toy"
        }
    }

    /// Every DWARF edition: the toy reads the required result kind
    /// (hetero-2020) and says "unsupported" to the operations it does
    /// not know, GNU and hetero-2020 ones included.
    fn editions(&self) -> Vec<Edition> {
        vec![Edition::Dwarf5, Edition::Dwarf5Gnu, Edition::Hetero2020]
    }

    fn evaluate(&self, case: &ExprCase) -> Outcome {
        let ctx: &dyn MachineState = &*case.ctx;
        match self.run(case) {
            Err(stop) => stop.into(),
            Ok(Result::Register(regno)) => {
                Outcome::Location(RawLocation::simple(Source::Register { regno, bit_offset: 0 }).normalize())
            }
            Ok(Result::Stack { top, stack_value }) => {
                if ctx.result_kind() == Some(ResultKind::Value) {
                    return Outcome::Value(Value::from_u128(ctx.generic_type(), u128::from(top)));
                }
                // The value itself (implicit storage), or the memory at it.
                let storage = if stack_value {
                    Source::Implicit { bytes: top.to_le_bytes().to_vec(), bit_offset: 0 }
                } else {
                    Source::memory(0, u128::from(top) * 8)
                };
                Outcome::Location(RawLocation::simple(storage).normalize())
            }
        }
    }
}
