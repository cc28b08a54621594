//! IGC's own DWARF judged (issue 17 item 6): read from the ELFs a compile
//! leaves ([`read`]), its location expressions read structurally
//! ([`place`]), compared with the lowering of the vISA blob of the same
//! compile ([`compare`] for variables, [`frame`] for `.debug_frame` rows;
//! classes in [`classes`]), and third-party tools run
//! over the same ELFs ([`tools`]). [`fixture`] finds the pieces of one
//! compile in `target/fixtures/intel/NAME-DEVICE-OPT-FORMAT/`.

pub mod classes;
pub mod compare;
pub mod fixture;
pub mod frame;
pub mod place;
pub mod read;
pub mod tools;
