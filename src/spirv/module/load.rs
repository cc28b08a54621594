//! The instructions of a SPIR-V binary, in module order with their
//! positions, as rspirv's parser decodes them (no decoding of our own).

use rspirv::binary::{Assemble, Consumer, ParseAction};
use rspirv::dr;

/// Where an instruction is in its module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Position {
    /// Index of the instruction in the module, 0 for the first one after
    /// the header.
    pub index: usize,
    /// Offset of the instruction's first word from the start of the module,
    /// in 32-bit **words** (the header is words 0-4).
    pub word: usize,
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{} (word {})", self.index, self.word)
    }
}

/// Largest module read, in bytes (a module's instructions are held in
/// memory decoded, a few times its size).
pub const MAX_MODULE_BYTES: usize = 256 << 20;

/// Why a binary gives no instructions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// Larger than [`MAX_MODULE_BYTES`].
    #[error("module of {bytes} bytes is larger than the {max} bytes read")]
    TooLarge {
        /// Its size in bytes.
        bytes: usize,
        /// [`MAX_MODULE_BYTES`].
        max: usize,
    },
    /// rspirv refuses the binary (bad header, unknown opcode, operands that
    /// do not fit the word count, a truncated instruction).
    #[error("not a readable SPIR-V module: {0}")]
    Parse(String),
    /// rspirv panicked on the binary (contained; the binary is refused).
    #[error("rspirv panicked on the module")]
    Panicked,
}

/// Collects every instruction with its position.
#[derive(Default)]
struct Collect {
    out: Vec<(Position, dr::Instruction)>,
    next_word: usize,
}

impl Consumer for Collect {
    fn initialize(&mut self) -> ParseAction {
        ParseAction::Continue
    }
    fn finalize(&mut self) -> ParseAction {
        ParseAction::Continue
    }
    fn consume_header(&mut self, _: dr::ModuleHeader) -> ParseAction {
        self.next_word = 5;
        ParseAction::Continue
    }
    fn consume_instruction(&mut self, inst: dr::Instruction) -> ParseAction {
        // The parser consumed exactly the instruction's word count, so its
        // re-encoding has that many words.
        let words = inst.assemble().len();
        self.out.push((Position { index: self.out.len(), word: self.next_word }, inst));
        self.next_word += words;
        ParseAction::Continue
    }
}

/// Every instruction of the module in `bytes` (little-endian words, as
/// rspirv reads them), in order.
///
/// # Errors
/// [`LoadError`]; never panics (a panic inside rspirv is caught).
pub fn instructions(bytes: &[u8]) -> Result<Vec<(Position, dr::Instruction)>, LoadError> {
    if bytes.len() > MAX_MODULE_BYTES {
        return Err(LoadError::TooLarge { bytes: bytes.len(), max: MAX_MODULE_BYTES });
    }
    let run = std::panic::catch_unwind(|| {
        let mut c = Collect::default();
        rspirv::binary::parse_bytes(bytes, &mut c).map(|()| c.out).map_err(|e| LoadError::Parse(e.to_string()))
    });
    run.unwrap_or(Err(LoadError::Panicked))
}
