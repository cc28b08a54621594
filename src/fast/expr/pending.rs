//! Temporary rule IDs until the catalogue lands (replaced by crate::rules::id).
#![allow(missing_docs, dead_code)]
use crate::rules::RuleId;
macro_rules! r { ($($n:ident = $s:literal;)*) => { $(pub const $n: RuleId = RuleId::from_static($s);)* } }
r! {
    STACK_UNDERFLOW = "stack.underflow";
    STACK_INCOMPLETE = "stack.incomplete-composite";
    PICK_RANGE = "op.pick.index-out-of-range";
    NEED_VALUE = "entry.not-a-value";
    NEED_LOC = "entry.not-a-location";
    NEED_INTEGRAL = "value.not-integral";
    TYPE_MISMATCH = "op.binary.type-mismatch";
    DIV_ZERO = "op.div.by-zero";
    MOD_ZERO = "op.mod.by-zero";
    SHIFT_WIDE = "op.shift.count-too-large";
    BRANCH_TARGET = "op.bra.target-not-op-start";
    SKIP_TARGET = "op.skip.target-not-op-start";
    NO_CU = "context.cu-missing";
    NO_DEBUG_ADDR = "op.addrx.index-out-of-range";
    NO_BASE_TYPE = "op.base-type.not-a-base-type";
    TYPE_SIZE = "op.const-type.size-mismatch";
    DEREF_TYPE_SIZE = "op.deref-type.size-mismatch";
    REINTERPRET_SIZE = "op.reinterpret.size-mismatch";
    CONVERT_UNSUPPORTED = "op.convert.unsupported";
    FLOAT_UNSUPPORTED = "value.float-unsupported";
    DEREF_UNDEFINED = "op.deref.undefined-storage";
    DEREF_RANGE = "op.deref.beyond-storage";
    DEREF_MEMORY = "op.deref.memory-unreadable";
    NO_REGISTER = "op.reg.no-such-register";
    REGISTER_UNAVAILABLE = "op.reg.unavailable";
    IMPLICIT_POINTER_ACCESS = "op.implicit-pointer.access";
    NO_FRAME_BASE = "context.frame-base-missing";
    FRAME_BASE_KIND = "op.fbreg.frame-base-kind";
    NO_CFA = "context.cfa-missing";
    NO_OBJECT = "context.object-missing";
    NO_TLS = "context.tls-missing";
    BAD_ASPACE = "op.xderef.bad-address-space";
    PIECE_NOT_LOC = "op.piece.not-a-location";
    RESULT_NOT_LOC = "result.not-a-location";
    RESULT_NOT_VALUE = "result.not-a-value";
    REG_TOO_SMALL = "op.breg.register-too-small";
}
