//! The layout variants of vISA debug info: nothing in a blob says which one
//! it is in (docs/ambiguities.md, "Intel vISA debug info").

/// A layout variant of the debug info format, all with magic 0xdeadd010.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Layout {
    /// The seed's text as written: 8-bit name lengths, a subroutine's
    /// return value in Gen intervals (32-bit bounds), the memory word's
    /// "BE_FP/absolute" flag in bit 0 (C bit-field order, first member in
    /// the low bit) and the signed offset in bits 1..31, 16-bit counts of
    /// callee- and caller-save entries.
    #[serde(rename = "seed")]
    Seed,
    /// What IGC 1.0.12504 (Debian 12) writes and reads: 16-bit name
    /// lengths, return values in vISA intervals (16-bit bounds), the
    /// absolute flag in bit 31 and the offset the sign-extended low 31 bits.
    #[serde(rename = "igc-2022")]
    Igc2022,
    /// Newer IGC (`visa/DebugInfo.cpp`, `DbgDecoder::ddDbg`): as
    /// `igc-2022`, plus two 16-bit fields after the return address (the
    /// offset from BE_FP where a register IGC calls "CE" is saved, 0xffff
    /// when it is not, and the IP from which it is) and a 32-bit count of
    /// caller-save entries.
    #[serde(rename = "igc-current")]
    IgcCurrent,
}

impl Layout {
    /// Every layout, in the order detection tries them.
    pub const ALL: [Layout; 3] = [Layout::Seed, Layout::Igc2022, Layout::IgcCurrent];

    /// The layout's name: `seed`, `igc-2022`, `igc-current`.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Seed => "seed",
            Layout::Igc2022 => "igc-2022",
            Layout::IgcCurrent => "igc-current",
        }
    }

    /// Parses a layout name (see [`Layout::name`]).
    pub fn parse(s: &str) -> Option<Layout> {
        Layout::ALL.into_iter().find(|l| l.name() == s)
    }

    /// Bytes of every name-length field (object, variable, subroutine).
    pub fn name_len_bytes(self) -> usize {
        match self {
            Layout::Seed => 1,
            _ => 2,
        }
    }

    /// Whether a subroutine's return-value intervals have vISA (16-bit)
    /// bounds; otherwise Gen (32-bit) bounds.
    pub fn retval_visa_intervals(self) -> bool {
        !matches!(self, Layout::Seed)
    }

    /// Whether the frame carries the two 16-bit "CE" fields.
    pub fn has_ce_fields(self) -> bool {
        matches!(self, Layout::IgcCurrent)
    }

    /// Bytes of the caller-save entry count (the callee-save count is
    /// always 2).
    pub fn caller_count_bytes(self) -> usize {
        match self {
            Layout::IgcCurrent => 4,
            _ => 2,
        }
    }

    /// Splits a memory location word into (absolute, signed byte offset).
    pub fn memory_word(self, word: u32) -> (bool, i32) {
        match self {
            // bit 0: 1 = absolute offset in scratch; bits 1..31: the
            // signed offset (arithmetic shift keeps its sign).
            Layout::Seed => (word & 1 == 1, (word as i32) >> 1),
            // bit 31: absolute; bits 0..30 sign-extended from bit 30.
            _ => (word & 0x8000_0000 != 0, ((word << 1) as i32) >> 1),
        }
    }

    /// The smallest number of bytes one compiled object can take.
    pub fn min_object_bytes(self) -> usize {
        // name length, reloc offset, two map counts, variable count,
        // subroutine count, frame size, three valid flags, save counts.
        self.name_len_bytes()
            + 4
            + 4
            + 4
            + 4
            + 2
            + 2
            + 3
            + if self.has_ce_fields() { 4 } else { 0 }
            + 2
            + self.caller_count_bytes()
    }
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Memory words read by hand under both bit orders.
    #[test]
    fn memory_word_bit_orders() {
        // 0x0000000c: IGC reads 12 off BE_FP; the seed's order 6 off BE_FP.
        assert_eq!(Layout::Igc2022.memory_word(0xc), (false, 12));
        assert_eq!(Layout::Seed.memory_word(0xc), (false, 6));
        // 0x80000000: IGC reads absolute 0; the seed's order BE_FP - 2^30.
        assert_eq!(Layout::IgcCurrent.memory_word(0x8000_0000), (true, 0));
        assert_eq!(Layout::Seed.memory_word(0x8000_0000), (false, -(1 << 30)));
        // 0x7ffffff4: bit 30 set, so IGC's 31-bit offset is -12, off BE_FP.
        assert_eq!(Layout::Igc2022.memory_word(0x7fff_fff4), (false, -12));
        // 0xffffffe9: the seed's flag bit 0 (absolute) and offset -12.
        assert_eq!(Layout::Seed.memory_word(0xffff_ffe9), (true, -12));
    }

    #[test]
    fn names_round_trip() {
        for l in Layout::ALL {
            assert_eq!(Layout::parse(l.name()), Some(l));
        }
        assert_eq!(Layout::parse("igc"), None);
        assert_eq!(Layout::Seed.min_object_bytes(), 28);
        assert_eq!(Layout::Igc2022.min_object_bytes(), 29);
        assert_eq!(Layout::IgcCurrent.min_object_bytes(), 35);
    }
}
