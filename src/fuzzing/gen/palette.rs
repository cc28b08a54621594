//! What a generated context offers the expression generator: registers
//! with values, registers wide enough for addresses, address spaces, the
//! standard unit's base types, and the encoder of the context's profile.

use super::encode::Encoder;
use super::rare;
use arbitrary::{Result, Unstructured};
use dwarfcheck_core::context::{Context, MachineState};

/// The registers the context gives values for (and the target's first
/// 17), its address spaces, and how its expressions are encoded.
pub(super) struct Palette {
    regs: Vec<u64>,
    /// Registers at least an address wide, for register-based addresses.
    addr_regs: Vec<u64>,
    aspaces: Vec<u64>,
    /// The CFA is in an address space other than 0, so it (and the frame
    /// base) is a location that does not convert to a generic value.
    pub(super) cfa_is_loc: bool,
    /// The context's encoder.
    pub(super) enc: Encoder,
}

impl Palette {
    pub(super) fn of(ctx: &Context) -> Palette {
        let mut regs: Vec<u64> = ctx.registers.keys().copied().collect();
        regs.extend(ctx.target.registers.iter().take(17).map(|r| r.number));
        regs.sort_unstable();
        regs.dedup();
        if regs.is_empty() {
            regs.push(0);
        }
        let wide = |r: &u64| ctx.target.register(*r).is_some_and(|x| x.bits >= 8 * u32::from(ctx.address_bytes()));
        let mut addr_regs: Vec<u64> = regs.iter().copied().filter(wide).collect();
        if addr_regs.is_empty() {
            addr_regs.push(regs[0]);
        }
        let aspaces = ctx.target.address_spaces.iter().map(|a| a.number).collect();
        Palette { regs, addr_regs, aspaces, cfa_is_loc: ctx.cfa_aspace != 0, enc: Encoder::of(ctx) }
    }

    /// A register of the palette, now and then one the target may not have.
    pub(super) fn reg(&self, u: &mut Unstructured) -> Result<u64> {
        Ok(if rare(u, 64)? { u.int_in_range(17u64..=80)? } else { *u.choose(&self.regs)? })
    }

    /// A register that holds an address (for `DW_OP_breg*`), now and then
    /// any register.
    pub(super) fn addr_reg(&self, u: &mut Unstructured) -> Result<u64> {
        if rare(u, 64)? {
            self.reg(u)
        } else {
            Ok(*u.choose(&self.addr_regs)?)
        }
    }

    /// An address space of the target, now and then an undefined one.
    pub(super) fn aspace(&self, u: &mut Unstructured) -> Result<u64> {
        Ok(if rare(u, 64)? || self.aspaces.is_empty() { u.int_in_range(0u64..=9)? } else { *u.choose(&self.aspaces)? })
    }
}

/// A base type DIE of the standard unit (`fuzzing::case::standard_unit`)
/// and its size in **bytes**.
pub(super) fn base_type(u: &mut Unstructured) -> Result<(u64, u8)> {
    Ok(*u.choose(&[(0x10u64, 4u8), (0x18, 8), (0x20, 8), (0x28, 1)])?)
}
