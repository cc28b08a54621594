//! The fixed contents of fuzz contexts: the rich x86-64 context of
//! `expr_bytes` (and of most `expr_ops` inputs), and the unit every fuzz
//! context carries.

use super::entry::{Caller, DieShape, Entry, Expr, RegValue, Rule};
use dwarfcheck_core::context::MemorySegment;
use dwarfcheck_core::encoding::ate;

/// Bytes in memory order from hex digits, spaces allowed (evaluated at
/// compile time: a malformed constant does not build).
const fn unhex<const N: usize>(s: &str) -> [u8; N] {
    let s = s.as_bytes();
    let mut out = [0u8; N];
    let (mut i, mut n) = (0, 0);
    while i < s.len() {
        if s[i] == b' ' {
            i += 1;
            continue;
        }
        out[n] = digit(s[i]) * 16 + digit(s[i + 1]);
        n += 1;
        i += 2;
    }
    assert!(n == N, "hex constant of the wrong length");
    out
}

const fn digit(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => panic!("not a lowercase hex digit"),
    }
}

/// rsp+8 holds 0x1001; rsp+16 points at rbp's frame; then recognisable
/// patterns and small integers.
static STACK: [u8; 96] = unhex(
    "0000000000000000 0110000000000000 f00ffc7f00000000 0810600000000000 0000000000000000 0102030405060708 \
     1122334455667788 99aabbccddeeff00 0000000000000000 0a00000000000000 0b00000000000000 0c00000000000000",
);
/// 0x601000 holds a pointer back to the stack and the float64 1.0 at
/// 0x601010.
static DATA: [u8; 32] = unhex("f00ffc7f00000000 0810600000000000 000000000000f03f 0100000002000000");
/// rbp's frame: a saved rbp, a return address, a pointer into the data.
static FRAME: [u8; 32] = unhex("000ffc7f00000000 2010400000000000 0810600000000000 0000000000000000");
/// `.debug_addr`: 0x601000 and 0x7ffc0f00 at indices 0 and 1 of the
/// unit's entries, which start at byte 8.
static DEBUG_ADDR: [u8; 24] = unhex("0000000000000000 0010600000000000 000ffc7f00000000");

/// `DW_OP_call_frame_cfa`.
pub(crate) const CFA_FRAME_BASE: Expr = Expr { text: "DW_OP_call_frame_cfa", bytes: &[0x9c] };
/// The location of DIE 0x40.
const OBJECT_PLUS_8: Expr = Expr { text: "DW_OP_push_object_address DW_OP_plus_uconst 8", bytes: &[0x97, 0x23, 0x08] };
/// The location of DIE 0x60.
const ONE_PLUS_TWO: Expr = Expr { text: "DW_OP_lit1 DW_OP_lit2 DW_OP_plus", bytes: &[0x31, 0x32, 0x22] };

/// Every expression text the fuzz contexts hold, for the test that
/// assembles them.
#[cfg(test)]
pub(crate) const EXPRESSIONS: [Expr; 3] = [CFA_FRAME_BASE, OBJECT_PLUS_8, ONE_PLUS_TWO];

/// The rich x86-64 context's entries (x86-64 DWARF numbers: rax 0, rdx 1,
/// rcx 2, rbx 3, rsi 4, rdi 5, rbp 6, rsp 7, rip 16): pc, CFA, TLS base,
/// thread 0, lane 0, a synthetic seed, 5,000 steps and 8 KiB per value,
/// the CFA as frame base, an object at 0x601000, a calling frame; nine
/// registers; the stack at 0x7ffc0f00, data at 0x601000, rbp's frame at
/// 0x7ffc0fe0; then [`standard_unit`].
pub fn rich_entries() -> Vec<Entry> {
    const CALLER_RULES: &[(u64, Rule)] =
        &[(3, Rule::AtCfa(-16)), (6, Rule::Same), (16, Rule::AtCfa(-8)), (7, Rule::CfaPlus(0))];
    let mut v = vec![
        Entry::Pc(0x401010),
        Entry::Cfa(0x7ffc1000),
        Entry::TlsBase(0x7f0000000000),
        Entry::Thread(0),
        Entry::Lane(0),
        Entry::Synthetic(0x5eed),
        Entry::Budgets { steps: 5000, size_bytes: 8192 },
        Entry::FrameBase(CFA_FRAME_BASE),
        Entry::Object(0x601000),
        Entry::Caller(Caller { pc: 0x401200, cfa: 0x7ffc1100, cfa_aspace: 0, rules: CALLER_RULES }),
    ];
    let regs: [(u64, u64); 9] = [
        (0, 0x10),
        (3, 0x7ffc0ff0),
        (2, u64::MAX),
        (1, 3),
        (4, 0x601000),
        (5, 0x601008),
        (6, 0x7ffc0fe0),
        (7, 0x7ffc0f00),
        (16, 0x401010),
    ];
    v.extend(regs.iter().map(|&(r, x)| Entry::Register(r, RegValue::Int(x))));
    for (at, bytes) in [(0x7ffc0f00, &STACK[..]), (0x601000, &DATA[..]), (0x7ffc0fe0, &FRAME[..])] {
        v.push(Entry::Memory(MemorySegment::shared(0, at, bytes.to_vec())));
    }
    v.extend(standard_unit());
    v
}

/// The unit every fuzz context carries: a `.debug_addr` with 0x601000 and
/// 0x7ffc0f00 at indices 0 and 1 (`DW_OP_addrx`, `DW_OP_constx`), four
/// base types (unsigned 32, signed 64, float 64, unsigned 8 at 0x10,
/// 0x18, 0x20, 0x28) and four DIEs (0x40 the object's address + 8, 0x50 a
/// constant, 0x60 the value 3, 0x70 nothing).
pub fn standard_unit() -> Vec<Entry> {
    vec![
        Entry::AddrBase(8),
        Entry::DebugAddr(&DEBUG_ADDR),
        Entry::BaseType { die: 0x10, encoding: ate::UNSIGNED, bits: 32 },
        Entry::BaseType { die: 0x18, encoding: ate::SIGNED, bits: 64 },
        Entry::BaseType { die: 0x20, encoding: ate::FLOAT, bits: 64 },
        Entry::BaseType { die: 0x28, encoding: ate::UNSIGNED, bits: 8 },
        Entry::Die(0x40, DieShape::Location(OBJECT_PLUS_8)),
        Entry::Die(0x50, DieShape::Const { bytes: &[0x2a, 0, 0, 0], byte_size: 4 }),
        Entry::Die(0x60, DieShape::Location(ONE_PLUS_TWO)),
        Entry::Die(0x70, DieShape::Empty),
    ]
}
