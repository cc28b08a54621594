//! The native evaluation API allocates nothing once warm (issue 14): a
//! counting global allocator in this test binary counts the allocations
//! of 3 × 10,000 evaluations of the expression shapes compilers emit most,
//! each run in a state with what it asks for, after one warm-up round.

use dwarfcheck_core::context::{CallerFrame, Context, MemorySegment, ResultKind};
use dwarfcheck_core::outcome::cfi::RegisterRule;
use dwarfcheck_core::target::presets;
use dwarfcheck_fast::expr::{Facts, Program, Scratch};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The system allocator, counting the allocations of the thread that
/// asks (tests of other threads do not disturb the count).
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// A function's state on x86-64: rsp, rbp and rdi known, memory at
/// 0x1000, the CFA, a frame base of `DW_OP_call_frame_cfa`, and a caller
/// whose rdi is the same value and whose rbx was saved at CFA-16.
fn state() -> Context {
    let mut c = Context::new(Arc::new(presets::x86_64()));
    c.registers.insert(7, 0x2000u64.to_le_bytes().to_vec()); // rsp
    c.registers.insert(6, 0x2100u64.to_le_bytes().to_vec()); // rbp
    c.registers.insert(5, 42u64.to_le_bytes().to_vec()); // rdi
    c.memory.push(MemorySegment::shared(0, 0x1000, (0u8..64).collect()));
    c.memory.push(MemorySegment::shared(0, 0x1ff0, (0u8..64).collect()));
    c.cfa = Some(0x2010);
    c.frame_base = Some(vec![0x9c]);
    c.result_kind = Some(ResultKind::Location);
    let mut rules = BTreeMap::new();
    rules.insert(5, RegisterRule::SameValue);
    rules.insert(3, RegisterRule::Offset { offset: -16 });
    c.caller = Some(Arc::new(CallerFrame { pc: Some(0x40_0100), cfa: Some(0x2010), rules, ..Default::default() }));
    c
}

/// The shapes: what each is, its bytes.
const SHAPES: &[(&str, &[u8])] = &[
    ("DW_OP_reg5", &[0x55]),
    ("DW_OP_breg7 8", &[0x77, 0x08]),
    ("DW_OP_fbreg -16", &[0x91, 0x70]),
    ("DW_OP_addr 0x1000", &[0x03, 0x00, 0x10, 0, 0, 0, 0, 0, 0]),
    ("DW_OP_call_frame_cfa", &[0x9c]),
    ("DW_OP_lit3 DW_OP_stack_value", &[0x33, 0x9f]),
    ("DW_OP_fbreg -16 DW_OP_stack_value", &[0x91, 0x70, 0x9f]),
    ("DW_OP_entry_value(DW_OP_reg5) DW_OP_stack_value", &[0xa3, 0x01, 0x55, 0x9f]),
    ("DW_OP_entry_value(DW_OP_reg3) DW_OP_stack_value", &[0xa3, 0x01, 0x53, 0x9f]),
    ("DW_OP_breg7 8 DW_OP_deref DW_OP_lit1 DW_OP_plus DW_OP_stack_value", &[0x77, 0x08, 0x06, 0x31, 0x22, 0x9f]),
    ("DW_OP_reg0 DW_OP_piece 8 DW_OP_reg1 DW_OP_piece 8", &[0x50, 0x93, 0x08, 0x51, 0x93, 0x08]),
];

#[test]
fn evaluations_of_common_shapes_allocate_nothing_once_warm() {
    let st = state();
    let facts = Facts::of(&st);
    let (mut program, mut scratch) = (Program::new(), Scratch::new());
    let mut compiled: Vec<Program> = SHAPES.iter().map(|(_, b)| Program::compile(b, &st)).collect();
    // Every shape evaluates without failure here (else the count would
    // measure a failure path).
    for ((name, bytes), p) in SHAPES.iter().zip(&compiled) {
        assert!(p.run_with(&facts, &st, &mut scratch).is_ok(), "{name} fails");
        program.recompile_with(bytes, &facts.encoding);
        assert!(program.run_with(&facts, &st, &mut scratch).is_ok(), "{name} fails recompiled");
    }
    // Warm-up round: buffers grow to their size.
    for ((_, bytes), p) in SHAPES.iter().zip(&mut compiled) {
        p.recompile_with(bytes, &facts.encoding);
        program.recompile_with(bytes, &facts.encoding);
        let _ = program.run_with(&facts, &st, &mut scratch);
    }
    let before = allocations();
    let mut ok = 0;
    for i in 0..10_000 {
        let (_, bytes) = SHAPES[i % SHAPES.len()];
        // A program compiled once and run, and one recompiled each time.
        ok += usize::from(compiled[i % SHAPES.len()].run_with(&facts, &st, &mut scratch).is_ok());
        program.recompile_with(std::hint::black_box(bytes), &facts.encoding);
        ok += usize::from(program.run_with(&facts, &st, &mut scratch).is_ok());
        // The state gives no initial stack and a location result kind:
        // the caller may say so instead.
        ok += usize::from(program.run_location(&facts, &st, &mut scratch).is_ok());
    }
    let n = allocations() - before;
    assert_eq!(ok, 30_000);
    assert_eq!(n, 0, "{n} allocations in 30,000 evaluations");
}
