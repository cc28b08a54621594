//! Drives `gimli::Evaluation` from a case's [`Context`] and maps its result
//! pieces and errors to an [`Outcome`].

use super::frames::missing;
use super::{kind_of, rule_of, unsupported_text, ErrorKind};
use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::context::{Context, ContextError, Entry, ResultKind};
use dwarfcheck_core::encoding::ate;
use dwarfcheck_core::encoding::op::{lookup, Decoded};
use dwarfcheck_core::encoding::Format;
use dwarfcheck_core::outcome::location::RawSingle;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{
    BaseType, BudgetKind, NormalLocation, Outcome, RawLocation, RawPiece, SingleLocation, Source, TypeEncoding, Value,
};
use dwarfcheck_core::target::Endian;
use gimli::{EndianSlice, EvaluationResult, Location, Piece, RunTimeEndian, UnitOffset, ValueType};

type R<'a> = EndianSlice<'a, RunTimeEndian>;

/// `DW_OP_stack_value` (DWARF 5 §7.7.1, Table 7.9).
const DW_OP_STACK_VALUE: u8 = 0x9f;

/// Evaluates `expr` with gimli under `ctx` (no `catch_unwind` here; the
/// [`super::Gimli`] consumer adds it).
///
/// The encoding is DWARF version 5, the unit's 32/64-bit format (32-bit
/// without a unit) and `ctx.address_bytes()`. `ctx.budgets.steps` becomes
/// gimli's iteration limit. Returns a `Value` when `ctx.result_kind` asks
/// for a value and gimli produced one, else a normalised `Location`;
/// `IllFormed`/`EvalError` with rule `gimli:<ErrorVariant>` (or
/// `gimli:Requires<What>` when the context cannot answer gimli's request);
/// `Budget` for gimli's iteration limit; `Unsupported` for what gimli or its
/// value types cannot express.
pub fn evaluate(expr: &[u8], ctx: &Context) -> Outcome {
    let d = Driver::new(ctx);
    match d.run(expr, 0, true, 0) {
        Ok((pieces, value)) => d.finish(&pieces, value),
        Err(o) if is_gimli_error(&o, "gimli:IntegralTypeRequired") && d.non_integral_final_value(expr) => {
            Outcome::Failed(Failure::Unsupported {
                what: "gimli takes the final stack entry as a memory address and cannot return a \
                       non-integral (floating-point) value without DW_OP_stack_value"
                    .into(),
            })
        }
        Err(o) => o,
    }
}

/// Whether `o` is the gimli error with third-party rule ID `rule`.
fn is_gimli_error(o: &Outcome, rule: &str) -> bool {
    matches!(o, Outcome::Failed(Failure::IllFormed { rule: r, .. }) | Outcome::Failed(Failure::EvalError { rule: r, .. }) if r.as_str() == rule)
}

/// Per-evaluation state: the context and gimli's encoding parameters.
struct Driver<'c> {
    ctx: &'c Context,
    endian: RunTimeEndian,
    encoding: gimli::Encoding,
    addr_mask: u64,
}

/// Early exit with a finished outcome.
type Step<T> = Result<T, Outcome>;

impl<'c> Driver<'c> {
    fn new(ctx: &'c Context) -> Self {
        let endian = if ctx.target.endian == Endian::Big { RunTimeEndian::Big } else { RunTimeEndian::Little };
        let format = match ctx.cu.as_ref().map(|c| c.format) {
            Some(Format::Dwarf64) => gimli::Format::Dwarf64,
            _ => gimli::Format::Dwarf32,
        };
        let address_size = ctx.address_bytes();
        let addr_mask = if address_size >= 8 { u64::MAX } else { (1u64 << (8 * u32::from(address_size))) - 1 };
        Driver { ctx, endian, encoding: gimli::Encoding { address_size, format, version: 5 }, addr_mask }
    }

    /// Runs one evaluation to completion. `depth` counts nested
    /// evaluations (the frame base); `top` says whether the context's
    /// initial stack and object apply.
    /// `extra_steps` raises gimli's iteration limit above `ctx.budgets.steps`
    /// (for operations the adapter appends).
    fn run<'b>(
        &self,
        bytes: &'b [u8],
        depth: u32,
        top: bool,
        extra_steps: u32,
    ) -> Step<(Vec<Piece<R<'b>>>, Option<gimli::Value>)>
    where
        'c: 'b,
    {
        let mut eval = gimli::Evaluation::new(EndianSlice::new(bytes, self.endian), self.encoding);
        let steps = u32::try_from(self.ctx.budgets.steps).unwrap_or(u32::MAX);
        eval.set_max_iterations(steps.saturating_add(extra_steps));
        if top {
            self.setup(&mut eval)?;
        }
        let mut r = eval.evaluate();
        loop {
            let req = r.map_err(|e| self.gimli_error(&e, bytes))?;
            r = match req {
                EvaluationResult::Complete => break,
                EvaluationResult::RequiresMemory { address, size, space, base_type } => {
                    let v = self.read_memory(address, size, space.unwrap_or(0), base_type)?;
                    eval.resume_with_memory(v)
                }
                EvaluationResult::RequiresRegister { register, base_type } => {
                    let v = self.read_register(u64::from(register.0), base_type)?;
                    eval.resume_with_register(v)
                }
                EvaluationResult::RequiresFrameBase => {
                    let fb = self.frame_base(depth)?;
                    eval.resume_with_frame_base(fb)
                }
                EvaluationResult::RequiresTls(offset) => {
                    let base = self.ctx.tls_base.ok_or_else(|| missing("RequiresTls"))?;
                    eval.resume_with_tls(base.wrapping_add(offset) & self.addr_mask)
                }
                EvaluationResult::RequiresCallFrameCfa => {
                    let cfa = self.ctx.cfa.ok_or_else(|| missing("RequiresCallFrameCfa"))?;
                    eval.resume_with_call_frame_cfa(cfa)
                }
                EvaluationResult::RequiresAtLocation(die) => {
                    let code: &'b [u8] = self.at_location(die)?;
                    eval.resume_with_at_location(EndianSlice::new(code, self.endian))
                }
                EvaluationResult::RequiresEntryValue(e) => {
                    let v = super::frames::entry_value(e.0.slice(), self.ctx, depth, evaluate)?;
                    eval.resume_with_entry_value(v)
                }
                // The context has no call-site parameters.
                EvaluationResult::RequiresParameterRef(_) => return Err(missing("RequiresParameterRef")),
                // Addresses in a case are already final: no relocation.
                EvaluationResult::RequiresRelocatedAddress(a) => eval.resume_with_relocated_address(a),
                EvaluationResult::RequiresIndexedAddress { index, .. } => {
                    let a = self.ctx.debug_addr(index.0 as u64).map_err(|e| ctx_error("RequiresIndexedAddress", e))?;
                    eval.resume_with_indexed_address(a)
                }
                EvaluationResult::RequiresBaseType(off) => {
                    let vt = self.value_type(off)?;
                    eval.resume_with_base_type(vt)
                }
                EvaluationResult::RequiresWasmLocal { .. }
                | EvaluationResult::RequiresWasmGlobal { .. }
                | EvaluationResult::RequiresWasmStack { .. } => {
                    return Err(Outcome::Failed(Failure::Unsupported { what: "WebAssembly operations".into() }))
                }
            };
        }
        let value = eval.value_result();
        Ok((eval.result(), value))
    }

    /// Whether gimli's `IntegralTypeRequired` for `expr` comes only from
    /// its final step, where it converts the top stack entry to an address:
    /// the same evaluation with `DW_OP_stack_value` appended then completes
    /// with one implicit floating-point value. Every operation before the end makes the
    /// same requests and gets the same answers in both runs, so an error
    /// raised earlier is raised again. Only asked when the context does not
    /// require a location (a float is never a memory location).
    fn non_integral_final_value(&self, expr: &[u8]) -> bool {
        if self.ctx.result_kind == Some(ResultKind::Location) {
            return false;
        }
        let mut probe = Vec::with_capacity(expr.len() + 1);
        probe.extend_from_slice(expr);
        probe.push(DW_OP_STACK_VALUE);
        match self.run(&probe, 0, true, 1) {
            Ok((pieces, _)) => matches!(
                pieces.as_slice(),
                [Piece { location: Location::Value { value }, .. }]
                    if matches!(value.value_type(), ValueType::F32 | ValueType::F64)
            ),
            Err(_) => false,
        }
    }

    /// Applies the context's initial stack and current object. gimli takes
    /// at most one initial entry, a generic value, and an object that is an
    /// address.
    fn setup(&self, eval: &mut gimli::Evaluation<R<'_>>) -> Step<()> {
        match self.ctx.initial_stack.as_slice() {
            [] => {}
            [e] => {
                let v = self.entry_as_address(e).ok_or_else(|| {
                    Outcome::Failed(Failure::Unsupported {
                        what: "gimli's initial value is one generic value; this initial stack entry is not".into(),
                    })
                })?;
                eval.set_initial_value(v);
            }
            _ => {
                return Err(Outcome::Failed(Failure::Unsupported {
                    what: "gimli accepts at most one initial stack entry".into(),
                }))
            }
        }
        if let Some(obj) = &self.ctx.object {
            let v = self.entry_as_address(obj).ok_or_else(|| {
                Outcome::Failed(Failure::Unsupported {
                    what: "gimli's object address is an address; this current object is not a memory location".into(),
                })
            })?;
            eval.set_object_address(v);
        }
        Ok(())
    }

    /// A generic value, or a memory location in address space 0 at a byte
    /// boundary, as gimli's u64.
    fn entry_as_address(&self, e: &Entry) -> Option<u64> {
        match e {
            Entry::Value(v) if v.ty.encoding == TypeEncoding::Generic => u64::try_from(v.to_u128()).ok(),
            Entry::Location(NormalLocation { places }) => match places.as_slice() {
                [SingleLocation::Simple(Source::Memory { aspace: 0, bit_addr, thread: None, lane: None })]
                    if bit_addr % 8 == 0 =>
                {
                    u64::try_from(bit_addr / 8).ok()
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// `DW_OP_call*`: the expression of the called DIE's `DW_AT_location`
    /// (empty for a DIE without one: no effect). A location list or a
    /// `DW_AT_const_value` cannot be handed to gimli, which takes bytes.
    fn at_location(&self, die: gimli::DieReference<usize>) -> Step<&'c [u8]> {
        let cu = self.ctx.cu.as_ref().ok_or_else(|| missing("RequiresAtLocation"))?;
        let off = match die {
            gimli::DieReference::UnitRef(u) => cu.offset.wrapping_add(u.0 as u64),
            gimli::DieReference::DebugInfoRef(d) => d.0 as u64,
        };
        let d = cu.dies.get(&off).ok_or_else(|| missing("RequiresAtLocation"))?;
        match (&d.location, &d.const_value) {
            (Some(dwarfcheck_core::context::AttrForm::Exprloc(e)), _) => Ok(e.as_slice()),
            (None, None) => Ok(&[]),
            _ => Err(Outcome::Failed(Failure::Unsupported {
                what: "gimli's DW_OP_call* takes expression bytes; the DIE has a location list or a constant".into(),
            })),
        }
    }

    /// The frame base as an address: the context's `frame_base` expression
    /// evaluated with gimli. A register location means the register's
    /// contents (hetero-2020 "DW_AT_frame_base"); a memory location means
    /// its address; anything else gimli's `u64` frame base cannot hold.
    fn frame_base(&self, depth: u32) -> Step<u64> {
        let ctx = self.ctx;
        let fb = ctx.frame_base.as_deref().ok_or_else(|| missing("RequiresFrameBase"))?;
        if depth + 1 > ctx.budgets.depth {
            return Err(Outcome::Failed(Failure::Budget { budget: BudgetKind::Depth, at: None }));
        }
        let (pieces, _) = self.run(fb, depth + 1, false, 0)?;
        match pieces.as_slice() {
            [Piece { size_in_bits: None, bit_offset: None, location: Location::Address { address } }] => Ok(*address),
            [Piece { size_in_bits: None, bit_offset: None, location: Location::Register { register } }] => {
                match self.read_register(u64::from(register.0), UnitOffset(0))? {
                    gimli::Value::Generic(v) => Ok(v),
                    _ => Err(Outcome::Failed(Failure::ConsumerFault {
                        what: "generic register read gave a typed value".into(),
                    })),
                }
            }
            _ => Err(Outcome::Failed(Failure::Unsupported {
                what: "frame base is not a memory or register location (gimli takes an address)".into(),
            })),
        }
    }

    /// The gimli value type of the base type DIE at unit offset `off`
    /// (offset 0 is the generic type). Only what gimli's
    /// `ValueType::from_encoding` knows, in the target's byte order.
    fn value_type(&self, off: UnitOffset<usize>) -> Step<ValueType> {
        if off.0 == 0 {
            return Ok(ValueType::Generic);
        }
        let bt = self.ctx.base_type(off.0 as u64).map_err(|e| ctx_error("RequiresBaseType", e))?;
        let target_big = self.ctx.target.endian == Endian::Big;
        let vt = match bt.encoding {
            TypeEncoding::Ate(e) if bt.bits % 8 == 0 && bt.vector_size == 1 && bt.big_endian == target_big => {
                ValueType::from_encoding(gimli::DwAte(e), u64::from(bt.bits / 8))
            }
            _ => None,
        };
        vt.ok_or_else(|| {
            Outcome::Failed(Failure::Unsupported { what: format!("base type {bt} has no gimli ValueType") })
        })
    }

    /// Builds a gimli value of type `vt` from `bytes` in target order.
    fn value_from_bytes(&self, vt: ValueType, bytes: &[u8]) -> gimli::Value {
        let mut le = [0u8; 8];
        let n = bytes.len().min(8);
        if self.ctx.target.endian == Endian::Big {
            for (i, b) in bytes[..n].iter().rev().enumerate() {
                le[i] = *b;
            }
        } else {
            le[..n].copy_from_slice(&bytes[..n]);
        }
        let v = u64::from_le_bytes(le);
        match vt {
            ValueType::Generic => gimli::Value::Generic(v & self.addr_mask),
            ValueType::I8 => gimli::Value::I8(v as i8),
            ValueType::U8 => gimli::Value::U8(v as u8),
            ValueType::I16 => gimli::Value::I16(v as i16),
            ValueType::U16 => gimli::Value::U16(v as u16),
            ValueType::I32 => gimli::Value::I32(v as i32),
            ValueType::U32 => gimli::Value::U32(v as u32),
            ValueType::I64 => gimli::Value::I64(v as i64),
            ValueType::U64 => gimli::Value::U64(v),
            ValueType::F32 => gimli::Value::F32(f32::from_bits(v as u32)),
            ValueType::F64 => gimli::Value::F64(f64::from_bits(v)),
        }
    }

    /// Size in **bytes** of a gimli value type (generic: the address size).
    fn type_bytes(&self, vt: ValueType) -> usize {
        (vt.bit_size(self.addr_mask) / 8) as usize
    }

    /// `DW_OP_deref*`: reads `size` bytes at `address` in `aspace`.
    /// gimli masks `address` to the generic type only; in another address
    /// space the adapter, as the memory provider, zero-extends or truncates
    /// it to that space's address size (`op.xderef.address-space`).
    fn read_memory(&self, address: u64, size: u8, aspace: u64, ty: UnitOffset<usize>) -> Step<gimli::Value> {
        let vt = self.value_type(ty)?;
        let address = match self.ctx.target.address_space(aspace) {
            Some(a) if a.address_bits < 64 => address & ((1u64 << a.address_bits) - 1),
            _ => address,
        };
        let mut buf = [0u8; 8];
        let n = usize::from(size).min(8);
        // The machine has no bytes past the top of the address space: a
        // read that runs past it fails, as the memory provider's answer
        // (the reference's op.deref.past-storage-end; fuzz finding
        // `lit0 not deref_size 8`).
        let bits = self.ctx.target.address_space(aspace).map_or(64, |a| a.address_bits.min(64));
        if u128::from(address) + n as u128 > 1u128 << bits {
            return Err(missing("RequiresMemory"));
        }
        // Per-thread and per-lane spaces: the debugger reads the current
        // thread's or lane's storage.
        let (thread, lane) = match self.ctx.target.address_space(aspace) {
            Some(a) => (
                if a.per_thread { Some(self.ctx.thread.ok_or_else(|| missing("RequiresMemory"))?) } else { None },
                if a.per_lane { Some(self.ctx.lane.ok_or_else(|| missing("RequiresMemory"))?) } else { None },
            ),
            None => (None, None),
        };
        let storage = dwarfcheck_core::context::MemoryStorage { aspace, thread, lane };
        self.ctx.read_memory(storage, address, &mut buf[..n]).map_err(|e| ctx_error("RequiresMemory", e))?;
        if vt == ValueType::Generic || n == self.type_bytes(vt) {
            Ok(self.value_from_bytes(vt, &buf[..n]))
        } else {
            // gimli asks for the type's size; a mismatch is its bug.
            Err(Outcome::Failed(Failure::ConsumerFault { what: format!("gimli asked for {n} bytes of a {vt:?}") }))
        }
    }

    /// `DW_OP_breg*`, `DW_OP_regval_type`: the low-order bytes of register
    /// `regno` as a value of the requested type.
    fn read_register(&self, regno: u64, ty: UnitOffset<usize>) -> Step<gimli::Value> {
        let vt = self.value_type(ty)?;
        let reg_bytes = match self.ctx.target.register(regno) {
            Some(r) => (r.bits / 8) as usize,
            None => return Err(ctx_error("RequiresRegister", ContextError::NoSuchRegister(regno))),
        };
        let n = self.type_bytes(vt).min(reg_bytes);
        let offset = if self.ctx.target.endian == Endian::Big { reg_bytes - n } else { 0 };
        let mut buf = [0u8; 8];
        self.ctx.read_register(regno, offset, &mut buf[..n]).map_err(|e| ctx_error("RequiresRegister", e))?;
        Ok(self.value_from_bytes(vt, &buf[..n]))
    }

    /// Maps a gimli error; an unknown opcode that the active vendor profile
    /// does define is something gimli cannot decode, not bad input.
    fn gimli_error(&self, e: &gimli::Error, bytes: &[u8]) -> Outcome {
        // A location followed by DW_OP_GNU_uninit (which GCC emits and the
        // GNU profile accepts): gimli wants only a piece there.
        if let gimli::Error::InvalidExpressionTerminator(at) = e {
            if self.ctx.vendor.gnu && usize::try_from(*at).ok().and_then(|i| bytes.get(i)) == Some(&0xf0) {
                return Outcome::Failed(Failure::Unsupported {
                    what: "gimli accepts only DW_OP_piece after a location, not DW_OP_GNU_uninit".into(),
                });
            }
        }
        if let gimli::Error::InvalidExpression(op) = e {
            if let Decoded::Op(spec) = lookup(&self.ctx.vendor, op.0) {
                return Outcome::Failed(Failure::Unsupported { what: format!("gimli does not decode {}", spec.name) });
            }
        }
        // gimli has no empty location description (DWARF 5 §2.6.1.1.1): an
        // empty expression fails when it pops the (absent) result. Where a
        // value is required, the empty stack is ill-formed and gimli's
        // error is a diagnosis.
        if let gimli::Error::NotEnoughStackItems = e {
            if bytes.is_empty() && self.ctx.result_kind != Some(ResultKind::Value) {
                return Outcome::Failed(Failure::Unsupported {
                    what: "gimli's Evaluation cannot represent an empty location description: an empty \
                           expression fails with NotEnoughStackItems"
                        .into(),
                });
            }
        }
        if let gimli::Error::TooManyIterations = e {
            return Outcome::Failed(Failure::Budget { budget: BudgetKind::Steps, at: None });
        }
        if let gimli::Error::InvalidDerefSize(n) = e {
            if *n > 8 {
                return Outcome::Failed(Failure::Unsupported {
                    what: format!("gimli cannot read {n}-byte values (at most 8)"),
                });
            }
        }
        if let gimli::Error::InvalidPushObjectAddress = e {
            return missing("InvalidPushObjectAddress");
        }
        match kind_of(e) {
            ErrorKind::IllFormed => Outcome::Failed(Failure::IllFormed { rule: rule_of(e), at: None }),
            ErrorKind::EvalError => Outcome::Failed(Failure::EvalError { rule: rule_of(e), at: None }),
            ErrorKind::Unsupported => Outcome::Failed(Failure::Unsupported { what: unsupported_text(e) }),
        }
    }

    /// Turns gimli's completed result into the outcome the context asks for.
    fn finish(&self, pieces: &[Piece<R<'_>>], value: Option<gimli::Value>) -> Outcome {
        // A value is wanted, or the result kind is unspecified and the top
        // entry is a typed value (only generic values stand for memory
        // locations, hetero-2020 "Memory Location Description Operations").
        let typed = matches!(value, Some(v) if v.value_type() != ValueType::Generic);
        let want_value = match self.ctx.result_kind {
            Some(ResultKind::Value) => true,
            None => typed,
            Some(ResultKind::Location) => false,
        };
        if want_value {
            if let Some(v) = value {
                return match self.value_outcome(v) {
                    Ok(v) => Outcome::Value(v),
                    Err(o) => o,
                };
            }
        }
        let mut singles = Vec::new();
        match pieces {
            [Piece { size_in_bits: None, bit_offset, location }] => {
                match self.source(location) {
                    Ok(s) => singles.push(RawSingle::Simple(s.advanced(bit_offset.unwrap_or(0)))),
                    Err(o) => return o,
                };
            }
            _ => {
                let mut parts = Vec::with_capacity(pieces.len());
                for p in pieces {
                    let src = match self.source(&p.location) {
                        Ok(s) => s.advanced(p.bit_offset.unwrap_or(0)),
                        Err(o) => return o,
                    };
                    let Some(bits) = p.size_in_bits else {
                        return Outcome::Failed(Failure::ConsumerFault {
                            what: "gimli gave a sizeless piece in a composite".into(),
                        });
                    };
                    parts.push(RawPiece { bits, location: RawLocation::simple(src) });
                }
                singles.push(RawSingle::Composite { pieces: parts, bit_offset: 0 });
            }
        }
        Outcome::Location(RawLocation { singles }.normalize())
    }

    /// The location storage of one gimli piece.
    fn source(&self, loc: &Location<R<'_>>) -> Step<Source> {
        Ok(match loc {
            Location::Empty => Source::Undefined,
            Location::Register { register } => Source::Register { regno: u64::from(register.0), bit_offset: 0 },
            Location::Address { address } => Source::memory(0, u128::from(*address) * 8),
            Location::Value { value } => {
                let v = self.value_outcome(*value)?;
                // Implicit storage holds the value in target memory order.
                let mut bytes = v.bytes;
                if self.ctx.target.endian == Endian::Big {
                    bytes.reverse();
                }
                Source::Implicit { bytes, bit_offset: 0 }
            }
            Location::Bytes { value } => Source::Implicit { bytes: value.slice().to_vec(), bit_offset: 0 },
            Location::ImplicitPointer { value, byte_offset } => Source::ImplicitPointer {
                die: value.0 as u64,
                aspace: None,
                byte_displacement: *byte_offset,
                bit_offset: 0,
            },
        })
    }

    /// A gimli value as an outcome value: generic type, or the base type
    /// that gimli's value type stands for.
    fn value_outcome(&self, v: gimli::Value) -> Step<Value> {
        let big = self.ctx.target.endian == Endian::Big;
        let (ty, raw) = match v {
            gimli::Value::Generic(x) => (self.ctx.generic_type(), u128::from(x & self.addr_mask)),
            gimli::Value::I8(x) => (BaseType::ate(ate::SIGNED, 8, big), u128::from(x as u8)),
            gimli::Value::U8(x) => (BaseType::ate(ate::UNSIGNED, 8, big), u128::from(x)),
            gimli::Value::I16(x) => (BaseType::ate(ate::SIGNED, 16, big), u128::from(x as u16)),
            gimli::Value::U16(x) => (BaseType::ate(ate::UNSIGNED, 16, big), u128::from(x)),
            gimli::Value::I32(x) => (BaseType::ate(ate::SIGNED, 32, big), u128::from(x as u32)),
            gimli::Value::U32(x) => (BaseType::ate(ate::UNSIGNED, 32, big), u128::from(x)),
            gimli::Value::I64(x) => (BaseType::ate(ate::SIGNED, 64, big), u128::from(x as u64)),
            gimli::Value::U64(x) => (BaseType::ate(ate::UNSIGNED, 64, big), u128::from(x)),
            gimli::Value::F32(x) => (BaseType::ate(ate::FLOAT, 32, big), u128::from(x.to_bits())),
            gimli::Value::F64(x) => (BaseType::ate(ate::FLOAT, 64, big), u128::from(x.to_bits())),
        };
        Ok(Value::from_u128(ty, raw))
    }
}

/// The outcome when a context element gimli asks for is absent.
/// The outcome when the context cannot answer gimli's request: always an
/// evaluation error, including a register the target does not define (the
/// project's choice for that silent case, `reg.unknown-register-read`).
fn ctx_error(what: &str, _e: ContextError) -> Outcome {
    missing(what)
}
