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
use dwarfcheck_core::encoding::leb128::{write_sleb, write_uleb};
use dwarfcheck_core::encoding::op::{lookup, lookup_llvm_user, Decoded, LLVM_USER};
use dwarfcheck_core::encoding::Format;
use dwarfcheck_core::encoding::{OpSpec, Operand, VendorProfile};
use dwarfcheck_core::target::{presets, Endian, Target};
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
                write_sleb(out, if self.src.next().is_multiple_of(2) { v } else { v.wrapping_neg() })
            }
            Operand::Addr => write_fixed(out, self.src.next(), usize::from(self.addr), e),
            Operand::DieOffset => write_fixed(out, self.src.next(), self.format.offset_bytes(), e),
            Operand::Block | Operand::Block1 => {
                let mut body = Vec::new();
                if entry && depth < 3 && !self.src.next().is_multiple_of(4) {
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
    fn assembler_never_panics(text in "(DW_OP_[a-z_0-9]{0,12}|[ -~]|\\PC){0,40}") {
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

/// Builds an x86-64 ELF object with one DWARF 5 unit: a `double` base type
/// DIE at unit offset 0x0e, then one variable per expression with the
/// expression as its `DW_AT_location` exprloc.
fn dwarf_asm(exprs: &[Vec<u8>]) -> String {
    let mut s = String::new();
    s.push_str(".section .debug_abbrev,\"\",@progbits\n");
    s.push_str(".byte 1,0x11,1,0x13,0x0b,0,0\n.byte 2,0x24,0,0x03,0x08,0x3e,0x0b,0x0b,0x0b,0,0\n");
    s.push_str(".byte 3,0x34,0,0x02,0x18,0,0\n.byte 0\n");
    s.push_str(".section .debug_info,\"\",@progbits\n.long .Lend-.Lstart\n.Lstart:\n.short 5\n.byte 1,8\n.long 0\n");
    s.push_str(".byte 1,0x0c\n.byte 2\n.asciz \"double\"\n.byte 4,8\n");
    for e in exprs {
        let mut b = vec![3u8];
        write_uleb(&mut b, e.len() as u64);
        b.extend_from_slice(e);
        let list: Vec<String> = b.iter().map(|x| x.to_string()).collect();
        s.push_str(&format!(".byte {}\n", list.join(",")));
    }
    s.push_str(".byte 0\n.Lend:\n");
    s
}

/// Operations llvm-dwarfdump 19 decodes (checked by hand on a test
/// object): everything in DWARF 5 Table 7.9 except `DW_OP_const_type`,
/// `DW_OP_deref_type`, `DW_OP_xderef_type`, `DW_OP_implicit_pointer` and
/// `DW_OP_reinterpret`, plus GNU 0xe0, 0xf3, 0xfb, 0xfc.
fn llvm19_knows(code: u8) -> bool {
    !matches!(code, 0xa0 | 0xa4 | 0xa6 | 0xa7 | 0xa9) && (code < 0xe0 || matches!(code, 0xe0 | 0xf3 | 0xfb | 0xfc))
}

/// Third-party oracle: llvm-dwarfdump-19 must print exactly our text for
/// random expressions made of the operations it knows. Skipped (with a
/// message; a failure in CI) when llvm-mc-19 or llvm-dwarfdump-19 is not installed.
#[test]
fn disassembly_matches_llvm_dwarfdump_19() {
    use std::process::Command;
    let tools = dwarfcheck::testing::have_tool("llvm-mc-19") && dwarfcheck::testing::have_tool("llvm-dwarfdump-19");
    if dwarfcheck::testing::needed("llvm-19 (llvm-mc-19, llvm-dwarfdump-19)", tools.then_some(())).is_none() {
        return;
    }
    let v = VendorProfile::gnu();
    let t = presets::x86_64();
    let table: Vec<_> = table(&v).into_iter().filter(|(c, _, _)| llvm19_knows(*c)).collect();
    let words: Vec<u64> = (0..4096u64).map(|i| i.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ (i << 17)).collect();
    let mut g =
        Gen { table, endian: Endian::Little, format: Format::Dwarf32, addr: 8, src: Src { words: &words, i: 0 } };
    let mut exprs = Vec::new();
    for i in 0..400 {
        let mut e = Vec::new();
        g.expr(&mut e, i % 7, 2);
        // Base type operands must name the base type DIE (0x0e) or be 0
        // for DW_OP_convert; registers 62–66 and 146–154 have no LLVM name.
        // Such expressions are rebuilt with fixed operands below.
        exprs.push(e);
    }
    let fixed = [
        vec![0xa5, 0x11, 0x0e, 0x9f],
        vec![0xa8, 0x0e],
        vec![0xa8, 0x00],
        vec![0xa3, 0x03, 0x92, 0x07, 0x08, 0x9f],
        vec![0x90, 0x3a, 0x90, 0x31, 0x92, 0x3b, 0x7f],
    ];
    // Drop generated expressions llvm would print differently for reasons
    // documented in asm::expr (base type names, unnamed registers, nested
    // entry values, undecodable entry-value blocks).
    let keep = |e: &Vec<u8>| {
        let ops = disassemble_ops(e, &t, &v, Format::Dwarf32, 8);
        fn ok(o: &dwarfcheck::asm::expr::DisOp) -> bool {
            use dwarfcheck::asm::decode::OperandValue::Unsigned;
            use dwarfcheck_core::encoding::Op;
            match o.op {
                Some(Op::RegvalType) | Some(Op::Convert) => false,
                Some(Op::Regx) | Some(Op::Bregx) => {
                    !matches!(o.operands.first(), Some(Unsigned(62..=66)) | Some(Unsigned(146..=154)))
                }
                Some(Op::EntryValue) | Some(Op::GnuEntryValue) => {
                    // llvm-dwarfdump 19 closes the parenthesis only after a
                    // one-operation nested expression.
                    o.nested.len() == 1
                        && o.nested
                            .iter()
                            .all(|n| !matches!(n.op, Some(Op::EntryValue) | Some(Op::GnuEntryValue)) && ok(n))
                }
                _ => true,
            }
        }
        ops.iter().all(ok)
    };
    let exprs: Vec<Vec<u8>> = exprs.into_iter().filter(keep).chain(fixed).collect();
    assert!(exprs.len() > 200, "too few expressions kept: {}", exprs.len());
    let dir = std::env::temp_dir().join(format!("dwarfcheck-asm-llvm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, obj) = (dir.join("t.s"), dir.join("t.o"));
    std::fs::write(&src, dwarf_asm(&exprs)).unwrap();
    let mc = Command::new("llvm-mc-19")
        .args(["-filetype=obj", "-triple", "x86_64-linux"])
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .output()
        .unwrap();
    assert!(mc.status.success(), "{}", String::from_utf8_lossy(&mc.stderr));
    let dump = Command::new("llvm-dwarfdump-19").arg("--debug-info").arg(&obj).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&dump.stdout);
    let got: Vec<String> = text
        .lines()
        .filter_map(|l| l.split_once("DW_AT_location\t("))
        .map(|(_, r)| r.strip_suffix(')').unwrap_or(r).replace(" \"double\"", ""))
        .collect();
    assert_eq!(got.len(), exprs.len());
    for (e, llvm) in exprs.iter().zip(&got) {
        let ours = disassemble(e, &t, &v, Format::Dwarf32, 8);
        assert_eq!(&ours, llvm, "bytes {e:02x?}");
    }
}

/// Re-assembles expression texts printed by llvm-dwarfdump-19 (one per line
/// in the file named by `DWARFCHECK_DUMP_TEXT`) and checks that
/// disassembling the bytes prints the same text, base type names aside.
/// Ignored by default: it needs a dump of real binaries, e.g. from
/// `llvm-dwarfdump-19 --debug-info --debug-loclists` on libc6-dbg files.
#[test]
#[ignore]
fn real_dump_text_round_trips() {
    let Ok(path) = std::env::var("DWARFCHECK_DUMP_TEXT") else {
        eprintln!("set DWARFCHECK_DUMP_TEXT to a file of expression texts");
        return;
    };
    let text = std::fs::read_to_string(path).unwrap();
    let (t, v) = (presets::x86_64(), VendorProfile::gnu());
    let strip_names = |s: &str| {
        let mut out = String::new();
        let mut in_quote = false;
        for c in s.chars() {
            match c {
                '"' => in_quote = !in_quote,
                _ if in_quote => {}
                _ => out.push(c),
            }
        }
        out.replace(")  ", ") ").replace(") ,", "),").trim_end().to_string()
    };
    // Without a unit (loclists), llvm-dwarfdump 19 prints base type
    // references as `DW_OP_convert 0x2e` and `<base_type ref: 0x0>`; we
    // always print `(0x0000002e)`.
    let normalise_refs = |s: &str| {
        let s = s.replace("<base_type ref: ", "<ref ");
        let mut out: Vec<String> = Vec::new();
        let mut words = s.split(' ').peekable();
        while let Some(w) = words.next() {
            out.push(w.to_string());
            let typed = matches!(w, "DW_OP_convert" | "DW_OP_reinterpret");
            if typed && words.peek().is_some_and(|n| n.starts_with("0x") && n.trim_end_matches([',', ')']) != "0x0") {
                let n = words.next().unwrap();
                let digits = n.trim_end_matches([',', ')']);
                let tail = &n[digits.len()..];
                out.push(format!("(0x{:08x}){tail}", u64::from_str_radix(&digits[2..], 16).unwrap()));
            } else if w == "<ref" {
                out.pop();
                let n = words.next().unwrap_or_default();
                let digits = n.trim_end_matches(['>', ',', ')']);
                let tail = &n[digits.len() + 1..];
                out.push(format!("(0x{:08x}){tail}", u64::from_str_radix(&digits[2..], 16).unwrap_or(0)));
            }
        }
        out.join(" ")
    };
    let mut failures = 0;
    let mut count = 0;
    for line in text.lines().filter(|l| l.starts_with("DW_OP_") && !l.contains("<decoding error>")) {
        count += 1;
        match assemble(line, &t, &v, Format::Dwarf32, 8) {
            Ok(bytes) => {
                let back = disassemble(&bytes, &t, &v, Format::Dwarf32, 8);
                if back != normalise_refs(&strip_names(line)) {
                    failures += 1;
                    eprintln!("differs:\n  llvm: {line}\n  ours: {back}");
                }
            }
            Err(e) => {
                failures += 1;
                eprintln!("does not assemble: {line}\n  {e}");
            }
        }
    }
    eprintln!("{count} texts, {failures} failures");
    assert_eq!(failures, 0);
}

/// Classifies the expressions of `DWARFCHECK_DUMP_TEXT` (see
/// [`real_dump_text_round_trips`]) and prints how many fall in each edition
/// and why, for reviewing the classifier's rules against real producers.
#[test]
#[ignore]
fn real_dump_editions() {
    use dwarfcheck::asm::decode::Params;
    use dwarfcheck::edition::{explain_expr, Usage};
    let Ok(path) = std::env::var("DWARFCHECK_DUMP_TEXT") else {
        return;
    };
    let text = std::fs::read_to_string(path).unwrap();
    let (t, v) = (presets::x86_64(), VendorProfile::gnu());
    let p = Params { vendor: &v, endian: Endian::Little, format: Format::Dwarf32, address_size: 8 };
    let mut counts = std::collections::BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("DW_OP_") && !l.contains("<decoding error>")) {
        let bytes = assemble(line, &t, &v, Format::Dwarf32, 8).unwrap();
        let c = explain_expr(&bytes, &p, Usage::Location);
        let key = format!("{:?} {:?}", c.edition, c.reason);
        if c.edition == dwarfcheck::edition::Edition::Hetero2020 {
            eprintln!("{key}: {line}");
        }
        *counts.entry(key).or_insert(0) += 1;
    }
    eprintln!("{counts:#?}");
}
