//! LLVM's `!DIExpression(...)` (as `llvm-dis` prints it) read into DWARF
//! operations the reference evaluates, for judging `llvm-spirv-15 -r`
//! (docs/consumers.md "SPIR-V tools as consumers").
//!
//! The elements are a comma-separated list: an operation's name then its
//! arguments. Standard `DW_OP_*` operations take the operands of the core
//! operation table (`encoding::op`) and are assembled by `asm::expr`. Two
//! LLVM-internal operations have no DWARF opcode of their own and are
//! written as LLVM's DWARF writer writes them:
//! - `DW_OP_LLVM_convert S E` (a conversion to a base type of S **bits**
//!   and encoding E) becomes `DW_OP_convert` of a base type DIE added to
//!   the case's unit;
//! - `DW_OP_LLVM_fragment O S` (last; the location is bits `[O, O + S)`
//!   of the variable) becomes the composite `spirv::lower` writes for a
//!   SPIR-V `Fragment`, so both mean the same part of a variable of the
//!   same size.
//!
//! An expression LLVM itself finds invalid is printed as raw numbers
//! (`!DIExpression(6, 7)`); it is not read.

use crate::asm::expr::assemble;
use dwarfcheck_core::context::Context;
use dwarfcheck_core::encoding::op::op_by_name;
use dwarfcheck_core::outcome::BaseType;

/// One operation of a `DIExpression`: its name and its arguments, as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiOp {
    /// `DW_OP_...` (or `DW_OP_LLVM_...`).
    pub name: String,
    /// The arguments that follow it (numbers, or `DW_ATE_*` names).
    pub args: Vec<String>,
}

/// Why a `DIExpression` is not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiError {
    /// Not `!DIExpression(...)`.
    #[error("not a DIExpression: {0}")]
    Syntax(String),
    /// An element where an operation name was expected (LLVM prints an
    /// expression it finds invalid as raw numbers).
    #[error("`{0}` is not an operation (LLVM prints an invalid expression as raw numbers)")]
    NotAnOperation(String),
    /// An operation this reader does not know the arguments of.
    #[error("unknown operation {0}")]
    Unknown(String),
    /// Fewer arguments than the operation takes.
    #[error("{0} lacks arguments")]
    Truncated(String),
    /// `DW_OP_LLVM_fragment` not last, or outside the variable.
    #[error("DW_OP_LLVM_fragment {0}")]
    Fragment(String),
    /// The operations do not assemble (an argument out of range, ...).
    #[error("does not assemble: {0}")]
    Assemble(String),
}

/// The arguments of the LLVM-internal operations (LLVM's
/// `DIExpression::ExprOperand::getSize`).
fn llvm_internal_args(name: &str) -> Option<usize> {
    Some(match name {
        "DW_OP_LLVM_fragment" | "DW_OP_LLVM_convert" => 2,
        "DW_OP_LLVM_tag_offset" | "DW_OP_LLVM_entry_value" | "DW_OP_LLVM_arg" => 1,
        "DW_OP_LLVM_implicit_pointer" => 0,
        _ => return None,
    })
}

/// The operations of `text` (`!DIExpression(...)`).
///
/// Errors: [`DiError`] for text that is not a `DIExpression` of known
/// operations with their arguments.
pub fn parse(text: &str) -> Result<Vec<DiOp>, DiError> {
    let inner = text
        .trim()
        .strip_prefix("!DIExpression(")
        .and_then(|t| t.strip_suffix(')'))
        .ok_or_else(|| DiError::Syntax(text.to_string()))?;
    let mut elements = inner.split(',').map(str::trim).filter(|e| !e.is_empty());
    let mut ops = Vec::new();
    while let Some(name) = elements.next() {
        if !name.starts_with("DW_OP_") {
            return Err(DiError::NotAnOperation(name.to_string()));
        }
        let n = match llvm_internal_args(name) {
            Some(n) => n,
            None => op_by_name(name)
                .and_then(|op| {
                    dwarfcheck_core::encoding::op::encoding_of(
                        &dwarfcheck_core::encoding::VendorProfile::hetero_2020(),
                        op,
                    )
                })
                .map(|(_, _, spec)| spec.operands.len())
                .ok_or_else(|| DiError::Unknown(name.to_string()))?,
        };
        let args: Vec<String> = elements.by_ref().take(n).map(str::to_string).collect();
        if args.len() != n {
            return Err(DiError::Truncated(name.to_string()));
        }
        ops.push(DiOp { name: name.to_string(), args });
    }
    Ok(ops)
}

/// `DW_ATE_*` by name (DWARF 5 §7.8), or a number.
fn ate(s: &str) -> Option<u8> {
    use dwarfcheck_core::encoding::ate;
    Some(match s {
        "DW_ATE_address" => ate::ADDRESS,
        "DW_ATE_boolean" => ate::BOOLEAN,
        "DW_ATE_float" => ate::FLOAT,
        "DW_ATE_signed" => ate::SIGNED,
        "DW_ATE_signed_char" => ate::SIGNED_CHAR,
        "DW_ATE_unsigned" => ate::UNSIGNED,
        "DW_ATE_unsigned_char" => ate::UNSIGNED_CHAR,
        other => return other.parse().ok(),
    })
}

/// The DWARF expression bytes of `ops` for `ctx`, and `ctx` with the
/// base types they need (`DW_OP_LLVM_convert`) added to its unit and the
/// hetero-2020 vendor profile (the one `spirv::lower` writes for).
/// `variable_bits` is the variable's size in **bits**, which a
/// `DW_OP_LLVM_fragment` needs.
///
/// Errors: [`DiError`] for an operation that cannot be written.
pub fn to_dwarf(ops: &[DiOp], ctx: &Context, variable_bits: Option<u64>) -> Result<(Vec<u8>, Context), DiError> {
    let mut ctx = ctx.clone();
    // The fragment composite is written with hetero-2020's operations.
    ctx.vendor = dwarfcheck_core::encoding::VendorProfile::hetero_2020();
    let address_bytes = ctx.target.address_bytes();
    let big_endian = ctx.target.endian == dwarfcheck_core::target::Endian::Big;
    let mut text = Vec::new();
    let mut tail = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let num = |k: usize| op.args[k].parse::<u64>().map_err(|_| DiError::Assemble(format!("{op:?}")));
        match op.name.as_str() {
            "DW_OP_LLVM_convert" => {
                let bits = u32::try_from(num(0)?).map_err(|_| DiError::Assemble(format!("{op:?}")))?;
                let encoding = ate(&op.args[1]).ok_or_else(|| DiError::Assemble(format!("{op:?}")))?;
                let cu = ctx.cu.get_or_insert_with(|| dwarfcheck_core::context::CompUnit {
                    version: 5,
                    address_size: address_bytes,
                    ..Default::default()
                });
                let die = cu.base_types.keys().next_back().map_or(0x1000, |k| k + 0x10);
                cu.base_types.insert(die, BaseType::ate(encoding, bits, big_endian));
                text.push(format!("DW_OP_convert {die}"));
            }
            "DW_OP_LLVM_fragment" => {
                if i + 1 != ops.len() {
                    return Err(DiError::Fragment("is not last".into()));
                }
                let (o, s) = (num(0)?, num(1)?);
                let v = variable_bits.ok_or_else(|| DiError::Fragment("of a variable of no known size".into()))?;
                let after = o.checked_add(s).and_then(|end| v.checked_sub(end));
                let after = after.ok_or_else(|| DiError::Fragment(format!("{o} {s} outside {v} bits")))?;
                crate::spirv::lower::fragment(&mut tail, o, s, after);
            }
            name if name.starts_with("DW_OP_LLVM_") => return Err(DiError::Unknown(name.to_string())),
            name => text.push(format!("{name} {}", op.args.join(" "))),
        }
    }
    let mut bytes =
        assemble(&text.join(", "), &ctx.target, &ctx.vendor, dwarfcheck_core::encoding::Format::Dwarf32, address_bytes)
            .map_err(|e| DiError::Assemble(e.to_string()))?;
    bytes.extend(tail);
    Ok((bytes, ctx))
}

/// `DW_OP_stack_value` as `ctx`'s vendor profile encodes it.
pub fn stack_value(ctx: &Context) -> Vec<u8> {
    assemble("DW_OP_stack_value", &ctx.target, &ctx.vendor, dwarfcheck_core::encoding::Format::Dwarf32, 8)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_llvm_spirv_writes_for_the_o2_shape() {
        let ops = parse("!DIExpression(DW_OP_plus_uconst, 1, DW_OP_constu, 0, DW_OP_swap, DW_OP_xderef, DW_OP_stack_value, DW_OP_LLVM_fragment, 32, 32)").unwrap();
        let names: Vec<&str> = ops.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "DW_OP_plus_uconst",
                "DW_OP_constu",
                "DW_OP_swap",
                "DW_OP_xderef",
                "DW_OP_stack_value",
                "DW_OP_LLVM_fragment"
            ]
        );
        assert_eq!(ops[0].args, ["1"]);
        assert_eq!(ops[5].args, ["32", "32"]);
        assert_eq!(parse("!DIExpression()").unwrap(), []);
    }

    #[test]
    fn raw_numbers_and_truncation_are_not_read() {
        assert_eq!(parse("!DIExpression(6, 7)"), Err(DiError::NotAnOperation("6".into())));
        assert_eq!(parse("!DIExpression(DW_OP_constu)"), Err(DiError::Truncated("DW_OP_constu".into())));
        assert!(matches!(parse("DIExpression(DW_OP_deref)"), Err(DiError::Syntax(_))));
    }

    /// Bytes derived by hand: `DW_OP_constu 0` is 10 00, `DW_OP_swap` 16,
    /// `DW_OP_xderef` 18; a fragment of bits [0, 32) of a 64-bit variable
    /// is `DW_OP_bit_piece 32 0` (9d 20 00), an undefined part
    /// (`DW_OP_LLVM_undefined` e7 under hetero-2020, `DW_OP_bit_piece 32 0`)
    /// and `DW_OP_LLVM_piece_end` (e9 ... see `spirv::lower`).
    #[test]
    fn writes_dwarf_bytes() {
        let ctx = Context::new(std::sync::Arc::new(dwarfcheck_core::target::presets::x86_64()));
        let ops = parse("!DIExpression(DW_OP_constu, 0, DW_OP_swap, DW_OP_xderef)").unwrap();
        assert_eq!(to_dwarf(&ops, &ctx, None).unwrap().0, [0x10, 0x00, 0x16, 0x18]);
        let ops = parse("!DIExpression(DW_OP_LLVM_fragment, 0, 32)").unwrap();
        let (bytes, _) = to_dwarf(&ops, &ctx, Some(64)).unwrap();
        let mut want = Vec::new();
        crate::spirv::lower::fragment(&mut want, 0, 32, 32);
        assert_eq!(bytes, want);
        assert_eq!(&bytes[..3], [0x9d, 0x20, 0x00]);
        assert!(matches!(to_dwarf(&ops, &ctx, Some(16)), Err(DiError::Fragment(_))));
        let ops = parse("!DIExpression(DW_OP_LLVM_convert, 32, DW_ATE_signed, DW_OP_stack_value)").unwrap();
        let (bytes, c) = to_dwarf(&ops, &ctx, None).unwrap();
        let cu = c.cu.unwrap();
        let (&die, ty) = cu.base_types.iter().next().unwrap();
        assert_eq!((ty.bits, ty.encoding), (32, dwarfcheck_core::outcome::TypeEncoding::Ate(0x05)));
        // DW_OP_convert (a8) ULEB128 die, DW_OP_stack_value (9f).
        let mut want = vec![0xa8];
        dwarfcheck_core::encoding::leb128::write_uleb(&mut want, die);
        want.push(0x9f);
        assert_eq!(bytes, want);
    }
}
