//! Property tests over the fuzz generators of `src/fuzzing/gen/` (the
//! same ones the `expr_ops` and `cfi_ops` targets use): on generated
//! contexts and programs the reference and the fast evaluator agree
//! exactly, gimli differs only in a known class, and the row tables and
//! unwinding of generated CFI agree, and generated SPIR-V expressions
//! agree with each other and with their lowering. proptest shrinks a failure to the
//! fewest generator bytes.

use arbitrary::Unstructured;
use dwarfcheck::fuzzing::{check_cfi, check_expr_case, check_gimli, check_spirv_oracles, gen};
use proptest::prelude::*;
use std::sync::Arc;

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    /// Generated contexts and expressions: reference == fast, gimli in a
    /// known class.
    #[test]
    fn generated_programs_agree(data in prop::collection::vec(any::<u8>(), 32..600)) {
        if let Ok((_, case)) = gen::fuzz_case(&mut Unstructured::new(&data)) {
            prop_assert_eq!(check_expr_case(&case), Ok(()));
            prop_assert_eq!(check_gimli(&case), Ok(()));
        }
    }

    /// Generated SPIR-V expressions (issue 16): reference == fast, and the
    /// direct interpretation == the reference's evaluation of the lowering
    /// to DWARF operations.
    #[test]
    fn generated_spirv_expressions_agree(data in prop::collection::vec(any::<u8>(), 16..300)) {
        if let Ok(case) = gen::spirv_case(&mut Unstructured::new(&data)) {
            prop_assert_eq!(check_spirv_oracles(&case), Ok(()));
        }
    }

    /// Generated frame sections: every FDE's row table and unwinding agree.
    #[test]
    fn generated_cfi_tables_agree(data in prop::collection::vec(any::<u8>(), 16..400)) {
        let target = Arc::new(dwarfcheck_core::target::presets::x86_64());
        if let Ok(Some(sec)) = gen::cfi_section(&mut Unstructured::new(&data), &target) {
            prop_assert_eq!(check_cfi(sec.kind, &sec.bytes, target), Ok(()));
        }
    }
}
