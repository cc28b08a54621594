//! SPIR-V debug operations as text, in spirv-dis spelling: `Constu 0 Swap
//! Xderef`, `PlusUconst 1, StackValue, Fragment 32 32` (commas and
//! brackets optional). An operation's name starts it and the numbers after
//! it are its literal operands; `#N` names an operation by its raw code N,
//! for codes the seed does not define (`#34`).

use dwarfcheck_core::encoding::spirv::{code_of, DebugOperation, OPERATIONS};

/// Why a text is not a list of operations.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TextError {
    /// A number before any operation name.
    #[error("`{0}` is an operand, but no operation comes before it")]
    OperandFirst(String),
    /// A word that is neither an operation name, `#code`, nor a number.
    #[error("`{word}` is not a debug operation; expected one of {expected}, or #CODE")]
    Unknown {
        /// The word.
        word: String,
        /// The names there are.
        expected: String,
    },
    /// A number that does not fit one 32-bit word.
    #[error("`{0}` does not fit a 32-bit literal word")]
    TooWide(String),
}

/// The operations `text` spells, operands unchecked (a wrong operand count
/// is the evaluators' `spirv.op.operand-count`).
///
/// # Errors
/// [`TextError`] for a word that is not an operation, `#code` or a 32-bit
/// number, or an operand before the first operation.
pub fn parse(text: &str) -> Result<Vec<DebugOperation>, TextError> {
    let mut ops: Vec<DebugOperation> = Vec::new();
    for word in text.split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == ']').filter(|w| !w.is_empty()) {
        if let Some(n) = number(word)? {
            match ops.last_mut() {
                Some(op) => op.operands.push(n),
                None => return Err(TextError::OperandFirst(word.to_string())),
            }
        } else if let Some(raw) = word.strip_prefix('#') {
            let code = number(raw)?.ok_or_else(|| unknown(word))?;
            ops.push(DebugOperation { code, operands: Vec::new() });
        } else {
            let code = code_of(word).ok_or_else(|| unknown(word))?;
            ops.push(DebugOperation { code, operands: Vec::new() });
        }
    }
    Ok(ops)
}

fn unknown(word: &str) -> TextError {
    let names: Vec<_> = OPERATIONS.iter().map(|(n, _, _)| *n).collect();
    TextError::Unknown { word: word.to_string(), expected: names.join(", ") }
}

/// A decimal or `0x` hexadecimal word, `None` for a word that is not a number.
fn number(word: &str) -> Result<Option<u32>, TextError> {
    let (digits, radix) = match word.strip_prefix("0x").or_else(|| word.strip_prefix("0X")) {
        Some(h) => (h, 16),
        None => (word, 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Ok(None);
    }
    u32::from_str_radix(digits, radix).map(Some).map_err(|_| TextError::TooWide(word.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use dwarfcheck_core::encoding::spirv::code;

    fn op(code: u32, operands: &[u32]) -> DebugOperation {
        DebugOperation { code, operands: operands.to_vec() }
    }

    #[test]
    fn spirv_dis_spelling() {
        assert_eq!(
            parse("Constu 0 Swap Xderef").unwrap(),
            [op(code::CONSTU, &[0]), op(code::SWAP, &[]), op(code::XDEREF, &[])]
        );
        assert_eq!(
            parse("[PlusUconst 1, StackValue, Fragment 32 0x20]").unwrap(),
            [op(code::PLUS_UCONST, &[1]), op(code::STACK_VALUE, &[]), op(code::FRAGMENT, &[32, 32])]
        );
        assert_eq!(parse("").unwrap(), []);
    }

    #[test]
    fn raw_codes_and_extra_operands_are_kept() {
        assert_eq!(parse("#34 Deref 7").unwrap(), [op(34, &[]), op(code::DEREF, &[7])]);
    }

    #[test]
    fn errors() {
        assert_eq!(parse("0 Deref"), Err(TextError::OperandFirst("0".into())));
        assert!(matches!(parse("Deref deref"), Err(TextError::Unknown { word, .. }) if word == "deref"));
        assert_eq!(parse("Constu 4294967296"), Err(TextError::TooWide("4294967296".into())));
    }
}
