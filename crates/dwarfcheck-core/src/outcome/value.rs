//! Typed values on the DWARF stack (hetero-2020 "DWARF Expression Value").

use crate::encoding::ate;

/// How a base type encodes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum TypeEncoding {
    /// The distinguished generic type: integral, address-sized, signedness
    /// unspecified.
    Generic,
    /// A `DW_ATE_*` encoding from a `DW_TAG_base_type` DIE.
    Ate(u8),
}

/// A base type as the comparison sees it: encoding, size and endianity.
/// Two base type DIEs with the same triple are the same type here; the DIE
/// offset is not part of the outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BaseType {
    /// Encoding.
    pub encoding: TypeEncoding,
    /// Size in **bits** (`DW_AT_byte_size` × 8, or `DW_AT_bit_size`).
    pub bits: u32,
    /// `true` if the type's endianity is big (`DW_END_big`, or default on a
    /// big-endian target).
    pub big_endian: bool,
    /// `DW_AT_LLVM_vector_size`: number of elements, 1 for scalars.
    pub vector_size: u32,
}

impl BaseType {
    /// The generic type of a target whose default address space has
    /// `bits`-bit addresses.
    pub fn generic(bits: u32, big_endian: bool) -> Self {
        BaseType { encoding: TypeEncoding::Generic, bits, big_endian, vector_size: 1 }
    }

    /// A scalar base type with a `DW_ATE_*` encoding.
    pub fn ate(encoding: u8, bits: u32, big_endian: bool) -> Self {
        BaseType { encoding: TypeEncoding::Ate(encoding), bits, big_endian, vector_size: 1 }
    }

    /// Whether this is an integral type (generic, or an integral `DW_ATE_*`).
    pub fn is_integral(&self) -> bool {
        match self.encoding {
            TypeEncoding::Generic => true,
            TypeEncoding::Ate(e) => ate::is_integral(e),
        }
    }

    /// Size in **bytes**, rounded up.
    pub fn bytes(&self) -> usize {
        self.bits.div_ceil(8) as usize
    }
}

impl std::fmt::Display for BaseType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.encoding {
            TypeEncoding::Generic => write!(f, "generic")?,
            TypeEncoding::Ate(e) => match ate::name(e) {
                Some(n) => write!(f, "{}", n.trim_start_matches("DW_ATE_"))?,
                None => write!(f, "ate{e:#x}")?,
            },
        }
        write!(f, "{}", self.bits)?;
        if self.vector_size > 1 {
            write!(f, "x{}", self.vector_size)?;
        }
        if self.big_endian {
            write!(f, "be")?;
        }
        Ok(())
    }
}

/// A value: a base type and its bit pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Value {
    /// The base type.
    pub ty: BaseType,
    /// The bit pattern, **least significant byte first** regardless of the
    /// type's endianity, exactly `ty.bytes()` long; bits above `ty.bits`
    /// are zero.
    #[cfg_attr(feature = "serde", serde(with = "hex_bytes"))]
    pub bytes: Vec<u8>,
}

impl Value {
    /// A value of `ty` holding the low bits of `v`.
    pub fn from_u128(ty: BaseType, v: u128) -> Self {
        let n = ty.bytes();
        let mut bytes: Vec<u8> = v.to_le_bytes().iter().copied().chain(std::iter::repeat(0)).take(n).collect();
        mask_top(&mut bytes, ty.bits);
        Value { ty, bytes }
    }

    /// The low 128 bits of the value, zero-extended.
    pub fn to_u128(&self) -> u128 {
        let mut b = [0u8; 16];
        for (d, s) in b.iter_mut().zip(&self.bytes) {
            *d = *s;
        }
        u128::from_le_bytes(b)
    }
}

/// Clears the bits at and above `bits` in a little-endian byte string.
pub fn mask_top(bytes: &mut [u8], bits: u32) {
    let full = (bits / 8) as usize;
    let rem = bits % 8;
    for (i, b) in bytes.iter_mut().enumerate() {
        if i > full || (i == full && rem == 0) {
            *b = 0;
        } else if i == full {
            *b &= (1u8 << rem) - 1;
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:0x", self.ty)?;
        if self.bytes.is_empty() {
            write!(f, "0")?;
        }
        for b in self.bytes.iter().rev() {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// Serde helper: bytes as a lowercase hex string, last byte first (so a
/// little-endian `0x1234` reads naturally; `encoding::hex`).
#[cfg(feature = "serde")]
pub mod hex_bytes {
    use crate::encoding::hex;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes bytes as hex, last byte first.
    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::to_hex_last_first(bytes))
    }

    /// Reads hex written by [`serialize`].
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        hex::parse_hex_last_first(&String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_u128_masks_and_sizes() {
        let v = Value::from_u128(BaseType::ate(ate::UNSIGNED, 12, false), 0xffff);
        assert_eq!(v.bytes, vec![0xff, 0x0f]);
        let g = Value::from_u128(BaseType::generic(64, false), 0x1122);
        assert_eq!(g.bytes.len(), 8);
        assert_eq!(g.to_u128(), 0x1122);
        assert_eq!(g.to_string(), "generic64:0x0000000000001122");
    }
}
