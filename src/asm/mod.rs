//! Text assembler and disassembler for DWARF expressions and CFI
//! instructions, in llvm-dwarfdump spelling.

pub mod cfi;
pub mod decode;
pub mod expr;
mod parse;
pub mod section;
