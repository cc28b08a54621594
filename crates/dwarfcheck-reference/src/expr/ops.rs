//! The meaning of each operation: one `match` arm per operation, in the
//! order of the hetero-2020 sections (Literal, Memory, Register, Special
//! Value, Stack, Arithmetic, Control Flow, Type Conversion, General,
//! Implicit and Composite Location Description Operations).

use super::decode::Insn;
use super::entry::{Entry, Loc, Single, Storage};
use super::loclist::first_fbreg;
use super::machine::{debug_addr_stop, need, not_incomplete, Final, Flow, Machine, Stack};
use super::stop::Stop;
use super::{arith, unspecified};
use dwarfcheck_core::context::{self, ResultKind};
use dwarfcheck_core::encoding::Op;
use dwarfcheck_core::outcome::value::mask_top;
use dwarfcheck_core::outcome::{BaseType, BudgetKind, Value};
use dwarfcheck_core::rules::id;
use std::sync::Arc;

impl Machine<'_> {
    /// Executes one operation.
    pub(super) fn step(
        &mut self,
        insn: &Insn,
        insns: &[Insn],
        len: usize,
        stack: &mut Stack,
        depth: u32,
    ) -> Result<Flow, Stop> {
        let ctx = self.ctx;
        let g = self.generic();
        match insn.op {
            // ---- Literal Operations ------------------------------------
            // Push the literal with the generic type; a literal wider than the
            // generic type keeps its low-order bits (op.lit.pushes-generic,
            // op.const.pushes-generic, op.const.truncated-to-generic).
            Op::Lit(n) => stack.push(Entry::Value(self.generic_value(u128::from(n)))),
            Op::Const1u | Op::Const2u | Op::Const4u | Op::Const8u | Op::Constu => {
                stack.push(Entry::Value(self.generic_value(u128::from(insn.u(0)))))
            }
            Op::Const1s | Op::Const2s | Op::Const4s | Op::Const8s | Op::Consts => {
                stack.push(Entry::Value(self.generic_value(insn.s(0) as i128 as u128)))
            }
            // The generic-sized entry I of .debug_addr (from DW_AT_addr_base),
            // pushed as a value (op.constx.pushes-generic).
            Op::Constx | Op::GnuConstIndex => {
                let v = ctx.debug_addr(insn.u(0)).map_err(debug_addr_stop)?;
                stack.push(Entry::Value(self.generic_value(u128::from(v))));
            }
            // DR names base type T; S must be TS/8 rounded up; the low TS bits
            // of block B are a value of T (op.typed.base-type, op.const-type.*).
            Op::ConstType | Op::GnuConstType => {
                let t = self.base_type_of_typed_op(insn.u(0))?;
                let block = insn.block(1);
                if t.bytes() != block.len() {
                    return Err(Stop::Ill(id::OP_CONST_TYPE_SIZE_MISMATCH));
                }
                self.type_budget(&t)?;
                let mut bytes = block.to_vec();
                if t.big_endian {
                    bytes.reverse();
                }
                mask_top(&mut bytes, t.bits);
                stack.push(Entry::Value(Value { ty: t, bytes }));
            }

            // ---- Memory Location Description Operations ----------------
            // One memory location description in the default address space,
            // bit offset A*8 (op.addr.pushes-memory).
            Op::Addr => {
                stack.push(Entry::Location(self.memory_loc(0, (u128::from(insn.u(0)) & self.address_mask()) as u64)?))
            }
            // op.addrx.pushes-memory
            Op::Addrx | Op::GnuAddrIndex => {
                let a = ctx.debug_addr(insn.u(0)).map_err(debug_addr_stop)?;
                stack.push(Entry::Location(self.memory_loc(0, (u128::from(a) & self.address_mask()) as u64)?));
            }
            // Pops an integral TA; pushes the memory location of thread-local
            // address TA, here TLS base + TA (op.form-tls-address.*).
            Op::FormTlsAddress | Op::GnuPushTlsAddress => {
                need(stack, 1)?;
                let ta = self.pop_integral(stack, id::OP_FORM_TLS_ADDRESS_REQUIRES_INTEGRAL)?;
                let base = ctx.tls_base().ok_or(Stop::Eval(id::CTX_TLS_BASE_MISSING))?;
                let a = u128::from(base).wrapping_add(ta.to_u128()) & self.address_mask();
                stack.push(Entry::Location(self.memory_loc(0, a as u64)?));
            }
            // The memory location description of the current frame's CFA
            // (op.call-frame-cfa.memory).
            Op::CallFrameCfa => {
                // In the CFA's address space. Not known: ctx.cfa-missing, or
                // the fault of the virtual unwinding that was to find it
                // (unwind.context-from-cfi), or unwind.cyclic while the
                // unwinder computes this very CFA.
                let cfa = ctx.cfa().map_err(|e| self.cfa_stop(e, self.frames.len()))?;
                stack.push(Entry::Location(self.memory_loc(cfa.aspace, cfa.address)?));
            }
            // The frame base is the result of the DW_AT_frame_base attribute
            // (hetero-2020 "DW_OP_fbreg" refers to "DW_AT_frame_base"): its
            // expression, evaluated nested with result kind location and an
            // empty initial stack, is ill-formed when it contains
            // DW_OP_fbreg (attr.frame-base.fbreg, checked statically, before
            // it runs) or gives more than one single location description
            // (attr.frame-base.not-single); a register location for R is
            // replaced by DW_OP_bregx R 0 (attr.frame-base.register-as-bregx,
            // op.fbreg.register-frame-base); anything else but memory is
            // ill-formed (attr.frame-base.not-memory). Then L is displaced B
            // bytes (op.fbreg.offset).
            Op::Fbreg => {
                let fb = ctx.frame_base().ok_or(Stop::Eval(id::CTX_FRAME_BASE_MISSING))?;
                if depth + 1 > ctx.budgets().clamped().depth {
                    return Err(Stop::Budget(BudgetKind::Depth));
                }
                if first_fbreg(fb, ctx).is_some() {
                    return Err(Stop::Ill(id::ATTR_FRAME_BASE_FBREG));
                }
                let mut l = match self.run(fb, Some(ResultKind::Location), Vec::new(), depth + 1, None) {
                    Ok(Final::Location(l)) => l,
                    Ok(Final::Value(_)) => unreachable!("result kind location gives a location"),
                    Err((stop, _)) => return Err(stop),
                };
                let b = insn.s(0);
                // In a calling frame a register's location is already the
                // one its CFI rule gives, so a register frame base is known
                // by the frame base's last operation (frame.registers-through-cfi).
                let reg_base = match l.singles[..] {
                    _ if !self.frames.is_empty() && self.last_reg.is_some() => self.last_reg,
                    [Single { storage: Storage::Register { regno }, .. }] => Some(regno),
                    _ => None,
                };
                if reg_base.is_none() {
                    if l.singles.len() != 1 {
                        return Err(Stop::Ill(id::ATTR_FRAME_BASE_NOT_SINGLE));
                    }
                    if !matches!(l.singles[0].storage, Storage::Memory { .. }) {
                        return Err(Stop::Ill(id::ATTR_FRAME_BASE_NOT_MEMORY));
                    }
                }
                // A byte address in memory, or a register holding one, gives
                // an address; B is added modulo the address size as for
                // DW_OP_breg* (op.fbreg.memory-frame-base). Memory at a bit
                // offset inside a byte is moved B bytes as by DW_OP_LLVM_offset.
                let base = match (reg_base, &l.singles[..]) {
                    (Some(regno), _) => Some((0, self.register_address(regno)?, true)),
                    (None, [Single { storage: Storage::Memory { aspace, .. }, bit_offset }]) if bit_offset % 8 == 0 => {
                        Some((*aspace, bit_offset / 8, false))
                    }
                    _ => None,
                };
                match base {
                    Some((aspace, a, from_register)) => {
                        let abits = ctx.target().address_space(aspace).map(|s| s.address_bits).unwrap_or(64);
                        let amask = if abits >= 64 { u128::from(u64::MAX) } else { (1u128 << abits) - 1 };
                        let sum = a.wrapping_add(b as i128 as u128) & amask;
                        // Only a sum that wraps shows the choice.
                        if i128::try_from(a).is_ok_and(|a| a + i128::from(b) != sum as i128) {
                            self.rely_on(Some(id::OP_FBREG_MEMORY_FRAME_BASE));
                        }
                        if from_register {
                            l = self.memory_loc(0, sum as u64)?;
                        } else {
                            // Same memory storage (and thread/lane binding).
                            l.singles[0].bit_offset = sum * 8;
                        }
                    }
                    None => self.offset(&mut l, i128::from(b) * 8, id::OP_FBREG_OFFSET_OUT_OF_STORAGE)?,
                }
                stack.push(Entry::Location(l));
            }
            // Read R as DW_OP_regval_type would with an unsigned type of the
            // generic size, add B, keep the low S bits as address A, push the
            // memory location at A*8 (op.breg.register-plus-offset).
            Op::Breg(_) | Op::Bregx => {
                let (regno, b) = match insn.op {
                    Op::Breg(n) => (u64::from(n), insn.s(0)),
                    _ => (insn.u(0), insn.s(1)),
                };
                let r = self.register_address(regno)?;
                let a = r.wrapping_add(b as i128 as u128) & self.address_mask();
                stack.push(Entry::Location(self.memory_loc(0, a as u64)?));
            }

            // ---- Register Location Description Operations --------------
            // A register location description for R, bit offset 0, in the top
            // call frame; nothing is read (op.reg.same-as-regx, op.regx.*).
            // In a calling frame the register's location comes from the CFI
            // rules (frame.registers-through-cfi).
            Op::Reg(n) => stack.push(Entry::Location(self.register_loc(u64::from(n))?)),
            Op::Regx => stack.push(Entry::Location(self.register_loc(insn.u(0))?)),
            // Same as DW_OP_regx R; DW_OP_deref_type DR, without an S check
            // (op.regval-type.reads-register).
            Op::RegvalType | Op::GnuRegvalType => {
                let t = self.base_type_of_typed_op(insn.u(1))?;
                self.type_budget(&t)?;
                let r = self.register_loc(insn.u(0))?;
                let v = self.deref(&r, u64::from(t.bits), t)?;
                stack.push(v);
            }

            // ---- Special Value Operations (dereferencing) --------------
            // DW_OP_deref_type with the generic type: pop a location description
            // (a generic value converts to memory), read generic-size bits
            // (op.deref.generic).
            Op::Deref => {
                need(stack, 1)?;
                let l = self.pop_location(stack)?;
                let v = self.deref(&l, u64::from(g.bits), g)?;
                stack.push(v);
            }
            // Read min(S*8, generic size) bits, zero-extend to the generic type
            // (op.deref-size.zero-extends, op.deref-size.zero).
            Op::DerefSize => {
                need(stack, 1)?;
                let l = self.pop_location(stack)?;
                if insn.u(0) == 0 {
                    self.rely_on(Some(id::OP_DEREF_SIZE_ZERO));
                }
                let v = self.deref_size(&l, insn.u(0))?;
                stack.push(v);
            }
            // Pop a location description L, read TS bits from its storage at
            // its bit offset, push them with type T; S must be TS/8 rounded up
            // (op.deref-type.*).
            Op::DerefType | Op::GnuDerefType => {
                let t = self.base_type_of_typed_op(insn.u(1))?;
                if t.bytes() as u64 != insn.u(0) {
                    return Err(Stop::Ill(id::OP_DEREF_TYPE_SIZE_MISMATCH));
                }
                self.type_budget(&t)?;
                need(stack, 1)?;
                let l = self.pop_location(stack)?;
                let v = self.deref(&l, u64::from(t.bits), t)?;
                stack.push(v);
            }
            // Pop address A (top) and address space AS (both integral), form
            // the memory location of A in AS and read as deref, deref_size or
            // deref_type (op.xderef.*).
            Op::Xderef | Op::XderefSize | Op::XderefType => {
                let t = if insn.op == Op::XderefType {
                    let t = self.base_type_of_typed_op(insn.u(1))?;
                    if t.bytes() as u64 != insn.u(0) {
                        return Err(Stop::Ill(id::OP_DEREF_TYPE_SIZE_MISMATCH));
                    }
                    self.type_budget(&t)?;
                    t
                } else {
                    g
                };
                need(stack, 2)?;
                let a = self.pop_integral(stack, id::OP_XDEREF_REQUIRES_INTEGRAL)?;
                let asp = self.pop_integral(stack, id::OP_XDEREF_REQUIRES_INTEGRAL)?;
                let space = super::extension::as_u64(&asp)
                    .and_then(|n| ctx.target().address_space(n))
                    .ok_or(Stop::Ill(id::OP_XDEREF_UNKNOWN_ADDRESS_SPACE))?;
                let amask = if space.address_bits >= 64 { u64::MAX } else { (1u64 << space.address_bits) - 1 };
                // As DW_OP_LLVM_form_aspace_address: bound to the current
                // thread/lane in a per-thread/per-lane space
                // (op.xderef.as-form-aspace-address).
                let l = self.memory_loc(space.number, (a.to_u128() as u64) & amask)?;
                let v = match insn.op {
                    Op::Xderef => self.deref(&l, u64::from(g.bits), g)?,
                    Op::XderefSize => {
                        if insn.u(0) == 0 {
                            self.rely_on(Some(id::OP_DEREF_SIZE_ZERO));
                        }
                        self.deref_size(&l, insn.u(0))?
                    }
                    _ => self.deref(&l, u64::from(t.bits), t)?,
                };
                stack.push(v);
            }

            // ---- Stack Operations --------------------------------------
            // op.dup.copies-top
            Op::Dup => {
                need(stack, 1)?;
                not_incomplete(stack, 0)?;
                let e = stack[stack.len() - 1].clone();
                stack.push(e);
            }
            // op.drop.pops-top
            Op::Drop => {
                need(stack, 1)?;
                not_incomplete(stack, 0)?;
                stack.pop();
            }
            // op.pick.copies-index
            Op::Pick => {
                let i = insn.u(0) as usize;
                if stack.len() <= i {
                    return Err(Stop::Ill(id::OP_PICK_INDEX_OUT_OF_RANGE));
                }
                not_incomplete(stack, i)?;
                let e = stack[stack.len() - 1 - i].clone();
                stack.push(e);
            }
            // op.over.copies-second
            Op::Over => {
                need(stack, 2)?;
                not_incomplete(stack, 1)?;
                let e = stack[stack.len() - 2].clone();
                stack.push(e);
            }
            // op.swap.exchanges
            Op::Swap => {
                need(stack, 2)?;
                not_incomplete(stack, 0)?;
                not_incomplete(stack, 1)?;
                let n = stack.len();
                stack.swap(n - 1, n - 2);
            }
            // op.rot.rotates: [.., third, second, top] -> [.., top, third, second]
            Op::Rot => {
                need(stack, 3)?;
                for k in 0..3 {
                    not_incomplete(stack, k)?;
                }
                let top = stack.pop().expect("checked");
                let n = stack.len();
                stack.insert(n - 2, top);
            }

            // ---- Arithmetic and Logical Operations ---------------------
            Op::Abs | Op::Neg | Op::Not => {
                need(stack, 1)?;
                let v = self.pop_value(stack)?;
                let r = arith::unary(insn.op, &v)?;
                self.rely_on(unspecified::unary(insn.op, &v));
                stack.push(Entry::Value(r));
            }
            Op::And
            | Op::Div
            | Op::Minus
            | Op::Mod
            | Op::Mul
            | Op::Or
            | Op::Plus
            | Op::Shl
            | Op::Shr
            | Op::Shra
            | Op::Xor => {
                need(stack, 2)?;
                let top = self.pop_value(stack)?;
                let second = self.pop_value(stack)?;
                let r = arith::binary(insn.op, &second, &top)?;
                self.rely_on(unspecified::binary(insn.op, &second, &top, &r));
                stack.push(Entry::Value(r));
            }
            // op.plus-uconst.adds
            Op::PlusUconst => {
                need(stack, 1)?;
                let v = self.pop_value(stack)?;
                stack.push(Entry::Value(arith::plus_uconst(&v, insn.u(0))?));
            }

            // ---- Control Flow Operations -------------------------------
            // op.nop.no-effect, op.gnu-uninit.no-effect
            Op::Nop | Op::GnuUninit => {}
            // op.relational.compares
            Op::Eq | Op::Ge | Op::Gt | Op::Le | Op::Lt | Op::Ne => {
                need(stack, 2)?;
                let top = self.pop_value(stack)?;
                let second = self.pop_value(stack)?;
                let r = arith::compare(insn.op, &second, &top, g)?;
                self.rely_on(unspecified::compare(&second, &top));
                stack.push(Entry::Value(r));
            }
            // op.skip.branches
            Op::Skip => return self.branch(insn, insns, len, insn.s(0), true),
            // op.bra.pops-condition, op.bra.condition-nonzero
            Op::Bra => {
                need(stack, 1)?;
                let v = self.pop_value(stack)?;
                if !v.ty.is_integral() {
                    // A non-integral condition is tested by its bits
                    // (op.bra.condition-nonzero, an unspecified decision).
                    self.rely_on(Some(id::OP_BRA_CONDITION_NONZERO));
                }
                if v.bytes.iter().any(|b| *b != 0) {
                    return self.branch(insn, insns, len, insn.s(0), false);
                }
            }

            // ---- Type Conversion Operations ----------------------------
            // op.convert.converts
            Op::Convert | Op::GnuConvert => {
                let t = self.base_type(insn.u(0))?;
                self.type_budget(&t)?;
                need(stack, 1)?;
                let v = self.pop_value(stack)?;
                let r = arith::convert(&v, t)?;
                self.rely_on(unspecified::convert(&v, t, &r));
                stack.push(Entry::Value(r));
            }
            // op.reinterpret.same-bits
            Op::Reinterpret | Op::GnuReinterpret => {
                let t = self.base_type(insn.u(0))?;
                self.type_budget(&t)?;
                need(stack, 1)?;
                let v = self.pop_value(stack)?;
                if v.ty.bits != t.bits {
                    return Err(Stop::Ill(id::OP_REINTERPRET_SIZE_MISMATCH));
                }
                stack.push(Entry::Value(Value { ty: t, bytes: v.bytes }));
            }

            // ---- General Location Description Operations ---------------
            // op.push-object-address.pushes
            Op::PushObjectAddress => {
                let o = ctx.object().ok_or(Stop::Eval(id::CTX_OBJECT_MISSING))?;
                stack.push(match o {
                    context::Entry::Value(v) => Entry::Value(v.clone()),
                    context::Entry::Location(l) => Entry::Location(Loc::from_normal(l)),
                });
            }

            // ---- Implicit Location Description Operations --------------
            // op.implicit-value.creates-storage
            Op::ImplicitValue => {
                let b = insn.block(0);
                if b.len() as u64 > ctx.budgets().clamped().size_bytes {
                    return Err(Stop::Budget(BudgetKind::Size));
                }
                self.charge_memory(b.len() as u128)?;
                stack.push(Entry::Location(Loc::one(Storage::Implicit { bytes: Arc::new(b.to_vec()) }, 0)));
            }
            // op.stack-value.creates-storage, op.implicit-pointer.stack-value
            Op::StackValue => {
                need(stack, 1)?;
                if let Some(Entry::ImplicitPointerValue(l)) = stack.last() {
                    let l = l.clone();
                    stack.pop();
                    stack.push(Entry::Location(l));
                } else {
                    let v = self.pop_value(stack)?;
                    let mut bytes = v.bytes;
                    if v.ty.big_endian {
                        bytes.reverse();
                    }
                    stack.push(Entry::Location(Loc::one(Storage::Implicit { bytes: Arc::new(bytes) }, 0)));
                }
            }
            // op.implicit-pointer.creates
            Op::ImplicitPointer | Op::GnuImplicitPointer => stack.push(Entry::Location(Loc::one(
                Storage::ImplicitPointer { die: insn.u(0), disp: insn.s(1), aspace: 0 },
                0,
            ))),
            // op.aspace-implicit-pointer.creates
            Op::LlvmAspaceImplicitPointer => self.aspace_implicit_pointer(insn, stack)?,

            // ---- DIE-backed and calling-frame operations ---------------
            // op.call.*
            Op::Call2 | Op::Call4 | Op::CallRef => self.call(insn, stack, depth)?,
            // op.entry-value.*
            Op::EntryValue | Op::GnuEntryValue => {
                let v = self.entry_value(insn.block(0), depth)?;
                stack.push(v);
            }
            // op.call-frame-entry-reg.pushes
            Op::LlvmCallFrameEntryReg => {
                let l = self.call_frame_entry_reg(insn.u(0))?;
                stack.push(Entry::Location(l));
            }
            // The context has no call site parameters or variable types.
            Op::GnuParameterRef | Op::GnuVariableValue => {
                return Err(Stop::Unsupported(format!(
                    "{} needs call sites / variable types the context does not model",
                    insn.name
                )))
            }

            // ---- Composite Location Description Operations -------------
            Op::Piece => self.piece(stack, u128::from(insn.u(0)) * 8, None)?,
            Op::BitPiece => self.piece(stack, u128::from(insn.u(0)), Some(insn.u(1)))?,

            // ---- hetero-2020 extension operations (extension.rs) -------
            Op::LlvmFormAspaceAddress
            | Op::LlvmPushLane
            | Op::LlvmOffset
            | Op::LlvmOffsetUconst
            | Op::LlvmBitOffset
            | Op::LlvmUndefined
            | Op::LlvmAspaceBregx
            | Op::LlvmPieceEnd
            | Op::LlvmExtend
            | Op::LlvmSelectBitPiece => self.extension(insn, stack)?,

            // ---- IGC vendor operations (the intel profile) -------------
            // Decoded, never evaluated: no text defines them.
            Op::IntelRegs
            | Op::IntelPushBitPieceStack
            | Op::IntelPushSimdLane
            | Op::IntelPieceStack
            | Op::IntelBitPieceStack => return Err(intel_undefined(insn.op, insn.name)),
        }
        Ok(Flow::Next)
    }

    /// `DW_OP_deref_size S` on an already popped location.
    pub(super) fn deref_size(&mut self, l: &Loc, s: u64) -> Result<Entry, Stop> {
        let g = self.generic();
        if s == 0 {
            return Ok(Entry::Value(self.generic_value(0)));
        }
        let ts = u128::from(s) * 8;
        if ts >= u128::from(g.bits) {
            return self.deref(l, u64::from(g.bits), g);
        }
        let t = BaseType::ate(dwarfcheck_core::encoding::ate::UNSIGNED, ts as u32, g.big_endian);
        match self.deref(l, ts as u64, t)? {
            Entry::Value(v) => Ok(Entry::Value(self.generic_value(v.to_u128()))),
            other => Ok(other),
        }
    }
}

/// The `Unsupported` stop for an IGC vendor operation, naming the catalogue
/// rule (`op.intel.*.undefined`, kind unspecified) that records why it is
/// not evaluated.
fn intel_undefined(op: Op, name: &str) -> Stop {
    use dwarfcheck_core::rules::id;
    let rule = match op {
        Op::IntelRegs => id::OP_INTEL_REGS_UNDEFINED,
        Op::IntelPushBitPieceStack => id::OP_INTEL_PUSH_BIT_PIECE_STACK_UNDEFINED,
        Op::IntelPushSimdLane => id::OP_INTEL_PUSH_SIMD_LANE_UNDEFINED,
        Op::IntelPieceStack => id::OP_INTEL_PIECE_STACK_UNDEFINED,
        _ => id::OP_INTEL_BIT_PIECE_STACK_UNDEFINED,
    };
    Stop::Unsupported(format!("{name}: no text defines its semantics (rule {rule})"))
}
