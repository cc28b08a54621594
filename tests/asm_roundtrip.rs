//! Property tests for the DWARF expression assembler/disassembler:
//! `assemble(disassemble(bytes)) == bytes` for generated valid operation
//! streams under every vendor profile, DWARF format, address size and
//! preset target (plus a big-endian one).
//!
//! Generated LEB128 operands are always in their shortest form: the
//! disassembler prints values, not encodings, so padded LEB128 does not
//! round-trip (documented in `asm::expr`).

use dwarfcheck::asm::decode::{read_fixed, write_fixed};
use dwarfcheck::asm::expr::{assemble, disassemble, disassemble_ops};
use dwarfcheck::context::Format;
use dwarfcheck::encoding::leb128::{write_sleb, write_uleb};
use dwarfcheck::encoding::op::{lookup, lookup_llvm_user, Decoded, LLVM_USER};
use dwarfcheck::encoding::{OpSpec, Operand, VendorProfile};
use dwarfcheck::target::{presets, Endian, Target};
use proptest::prelude::*;

/// Every (opcode, sub-opcode, spec) the profile decodes.
fn table(v: &VendorProfile) -> Vec<(u8, Option<u64>, OpSpec)> {
    let mut t = Vec::new();
    for c in 0u8..=0xff {
        match lookup(v, c) {
            Decoded::Op(s) => t.push((c, None, s)),
            Decoded::LlvmUser => {
                for sub in 0..64 {
                    if let Some(s) = lookup_llvm_user(sub) {
                        t.push((LLVM_USER, Some(sub), s));
                    }
                }
            }
            Decoded::Unknown => {}
        }
    }
    t
}

/// A deterministic byte source driven by proptest's random words.
struct Src<'a> {
    words: &'a [u64],
    i: usize,
}

impl Src<'_> {
    fn next(&mut self) -> u64 {
        let w = self.words.get(self.i % self.words.len().max(1)).copied().unwrap_or(0);
        self.i += 1;
        // Mix the position in so that a short word list still varies.
        w.rotate_left((self.i % 64) as u32) ^ (self.i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
    /// A value with a random bit width, so small and large values both occur.
    fn wide(&mut self) -> u64 {
        let bits = self.next() % 65;
        if bits == 64 {
            self.next()
        } else {
            self.next() & ((1u64 << bits) - 1)
        }
    }
}

struct Gen<'a> {
    table: Vec<(u8, Option<u64>, OpSpec)>,
    endian: Endian,
    format: Format,
    addr: u8,
    src: Src<'a>,
}

impl Gen<'_> {
    fn expr(&mut self, out: &mut Vec<u8>, n: usize, depth: u32) {
        for _ in 0..n {
            let k = (self.src.next() % self.table.len() as u64) as usize;
            let (code, sub, spec) = self.table[k];
            out.push(code);
            if let Some(s) = sub {
                write_uleb(out, s);
            }
            let entry = matches!(spec.name, "DW_OP_entry_value" | "DW_OP_GNU_entry_value");
            for shape in spec.operands {
                self.operand(out, *shape, entry, depth);
            }
        }
    }

    fn operand(&mut self, out: &mut Vec<u8>, shape: Operand, entry: bool, depth: u32) {
        let e = self.endian;
        match shape {
            Operand::U8 | Operand::I8 => write_fixed(out, self.src.next(), 1, e),
            Operand::U16 | Operand::I16 | Operand::Branch => write_fixed(out, self.src.next(), 2, e),
            Operand::U32 | Operand::I32 => write_fixed(out, self.src.next(), 4, e),
            Operand::U64 | Operand::I64 => write_fixed(out, self.src.wide(), 8, e),
            Operand::Uleb => write_uleb(out, self.src.wide()),
            Operand::Sleb => {
                let v = self.src.wide() as i64;
                write_sleb(out, if self.src.next() % 2 == 0 { v } else { v.wrapping_neg() })
            }
            Operand::Addr => write_fixed(out, self.src.next(), usize::from(self.addr), e),
            Operand::DieOffset => write_fixed(out, self.src.next(), self.format.offset_bytes(), e),
            Operand::Block | Operand::Block1 => {
                let mut body = Vec::new();
                if entry && depth < 3 && self.src.next() % 4 != 0 {
                    // A nested expression that decodes.
                    let n = (self.src.next() % 4) as usize;
                    self.expr(&mut body, n, depth + 1);
                } else {
                    let n = (self.src.next() % 12) as usize;
                    if entry && n > 0 {
                        // Opcode 0x01 is unknown under every profile, so the
                        // block cannot decode and is shown raw.
                        body.push(0x01);
                    }
                    while body.len() < n {
                        body.push(self.src.next() as u8);
                    }
                }
                if shape == Operand::Block1 {
                    body.truncate(255);
                    out.push(body.len() as u8);
                } else {
                    write_uleb(out, body.len() as u64);
                }
                out.extend_from_slice(&body);
            }
        }
    }
}

fn targets() -> Vec<Target> {
    let mut be = presets::x86_64();
    be.name = "x86_64-big".into();
    be.endian = Endian::Big;
    let mut bare = presets::x86_64();
    bare.name = "no-registers".into();
    bare.registers.clear();
    vec![presets::x86_64(), presets::aarch64(), presets::amdgpu_gfx90a(), be, bare]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, .. ProptestConfig::default() })]

    #[test]
    fn valid_streams_round_trip(
        words in prop::collection::vec(any::<u64>(), 1..64),
        profile in 0usize..VendorProfile::NAMES.len(),
        target in 0usize..5,
        dwarf64 in any::<bool>(),
        addr in prop::sample::select(vec![1u8, 2, 4, 8]),
        n in 0usize..12,
    ) {
        let v = VendorProfile::by_name(VendorProfile::NAMES[profile]).unwrap();
        let t = &targets()[target];
        let format = if dwarf64 { Format::Dwarf64 } else { Format::Dwarf32 };
        let mut g = Gen { table: table(&v), endian: t.endian, format, addr, src: Src { words: &words, i: 0 } };
        let mut bytes = Vec::new();
        g.expr(&mut bytes, n, 0);
        let text = disassemble(&bytes, t, &v, format, addr);
        prop_assert!(!text.contains("<bad"), "{text}");
        let back = assemble(&text, t, &v, format, addr);
        prop_assert_eq!(back.as_deref(), Ok(&bytes[..]), "text: {}", text);
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_ops_tile_the_buffer(
        bytes in prop::collection::vec(any::<u8>(), 0..48),
        profile in 0usize..VendorProfile::NAMES.len(),
    ) {
        let v = VendorProfile::by_name(VendorProfile::NAMES[profile]).unwrap();
        let t = presets::x86_64();
        let ops = disassemble_ops(&bytes, &t, &v, Format::Dwarf32, 8);
        let mut at = 0;
        for o in &ops {
            prop_assert_eq!(o.offset, at);
            at += o.length;
        }
        prop_assert_eq!(at, bytes.len());
        let text = disassemble(&bytes, &t, &v, Format::Dwarf32, 8);
        // A decodable stream always re-assembles to something that decodes
        // to the same operations (LEB128 padding may shrink).
        if !text.contains("<bad") && !bytes.is_empty() {
            let back = assemble(&text, &t, &v, Format::Dwarf32, 8).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
            prop_assert_eq!(disassemble(&back, &t, &v, Format::Dwarf32, 8), text);
        }
    }

    #[test]
    fn assembler_never_panics(text in "[ -~]{0,40}") {
        let _ = assemble(&text, &presets::x86_64(), &VendorProfile::hetero_2020(), Format::Dwarf32, 8);
    }
}

#[test]
fn fixed_helpers_agree() {
    let mut out = Vec::new();
    write_fixed(&mut out, 0x1234, 2, Endian::Big);
    assert_eq!(out, [0x12, 0x34]);
    assert_eq!(read_fixed(&out, 2, Endian::Little), Some(0x3412));
}
