//! Types of variables and how their bytes read as values: base types
//! (`DW_TAG_base_type` with `DW_AT_encoding`, DWARF 5 §5.1 and §7.8),
//! seen through typedefs and const/volatile/restrict/atomic qualifiers
//! (§5.3, §5.4), pointers as addresses, enumerations as integers,
//! structures and unions by member (`DW_AT_data_member_location` constants,
//! §5.7.6), and arrays of one dimension (§5.5). A value is laid out with an
//! explicit work stack, bounded in depth and in leaves: no recursion driven
//! by the input.

use crate::die::{at, tag, Info, Value};

/// `DW_ATE_*` encodings read here (DWARF 5 §7.8).
#[allow(missing_docs)]
pub mod ate {
    pub const ADDRESS: u8 = 0x01;
    pub const BOOLEAN: u8 = 0x02;
    pub const FLOAT: u8 = 0x04;
    pub const SIGNED: u8 = 0x05;
    pub const SIGNED_CHAR: u8 = 0x06;
    pub const UNSIGNED: u8 = 0x07;
    pub const UNSIGNED_CHAR: u8 = 0x08;
    pub const UTF: u8 = 0x10;
}

/// Most qualifier or typedef DIEs followed to reach a type.
const MAX_HOPS: usize = 16;
/// Deepest nesting of structures and arrays laid out.
const MAX_NESTING: usize = 8;
/// Most leaves (scalars) laid out for one variable.
const MAX_LEAVES: usize = 256;
/// Largest object read, in **bytes**.
pub const MAX_OBJECT_BYTES: u64 = 4096;

/// What a type is, after typedefs and qualifiers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// A base type: `DW_ATE_*` encoding and size in **bytes**.
    Base {
        /// `DW_AT_encoding`.
        encoding: u8,
        /// `DW_AT_byte_size`.
        size: u64,
    },
    /// A pointer or reference: an address of `size` **bytes**.
    Pointer {
        /// `DW_AT_byte_size` (the address size when absent).
        size: u64,
    },
    /// An enumeration, read as an integer of `size` **bytes**.
    Enum {
        /// `DW_AT_byte_size`.
        size: u64,
        /// Whether its underlying type is signed.
        signed: bool,
    },
    /// A structure, union or class: `size` **bytes**, its members (name,
    /// byte offset, type DIE).
    Struct {
        /// `DW_AT_byte_size`.
        size: u64,
        /// The members with constant offsets.
        members: Vec<(String, u64, usize)>,
    },
    /// A one-dimensional array: element type DIE, element count, element
    /// size in **bytes**.
    Array {
        /// Element type DIE.
        element: usize,
        /// Number of elements.
        count: u64,
        /// Size of one element in **bytes**.
        stride: u64,
    },
    /// Anything else (size in **bytes** if known).
    Other {
        /// `DW_AT_byte_size`, if any.
        size: Option<u64>,
    },
}

/// The DIE under typedefs and qualifiers of type DIE `ty`.
pub fn strip(info: &Info, mut ty: usize) -> usize {
    for _ in 0..MAX_HOPS {
        match info.dies[ty].tag {
            tag::TYPEDEF | tag::CONST_TYPE | tag::VOLATILE_TYPE | tag::RESTRICT_TYPE | tag::ATOMIC_TYPE => {
                match info.type_of(ty) {
                    Some(t) => ty = t,
                    None => return ty,
                }
            }
            _ => return ty,
        }
    }
    ty
}

/// The shape of type DIE `ty` (`address_size` in **bytes** for pointers
/// without a size).
pub fn shape(info: &Info, ty: usize, address_size: u8) -> Shape {
    let ty = strip(info, ty);
    let size = info.udata(ty, at::BYTE_SIZE);
    match info.dies[ty].tag {
        tag::BASE_TYPE => match (info.udata(ty, at::ENCODING), size) {
            (Some(e), Some(size)) => Shape::Base { encoding: e as u8, size },
            _ => Shape::Other { size },
        },
        tag::POINTER_TYPE | tag::REFERENCE_TYPE | tag::RVALUE_REFERENCE_TYPE => {
            Shape::Pointer { size: size.unwrap_or(u64::from(address_size)) }
        }
        tag::ENUMERATION_TYPE => {
            let under = info.type_of(ty).map(|t| strip(info, t));
            let signed = under.and_then(|u| info.udata(u, at::ENCODING)).is_some_and(|e| {
                let e = e as u8;
                e == ate::SIGNED || e == ate::SIGNED_CHAR
            });
            match size {
                Some(size) => Shape::Enum { size, signed },
                None => Shape::Other { size },
            }
        }
        tag::STRUCTURE_TYPE | tag::UNION_TYPE | tag::CLASS_TYPE => {
            let Some(size) = size else { return Shape::Other { size } };
            let d = &info.dies[ty];
            let mut members = Vec::new();
            let mut i = ty + 1;
            while i < d.end {
                let m = &info.dies[i];
                if m.tag == tag::MEMBER && m.parent == Some(ty) {
                    let offset = match m.attr(at::DATA_MEMBER_LOCATION) {
                        Some(Value::Udata(o)) => Some(*o),
                        Some(Value::Sdata(o)) => u64::try_from(*o).ok(),
                        None if info.dies[ty].tag == tag::UNION_TYPE => Some(0),
                        _ => None,
                    };
                    if let (Some(o), Some(t)) = (offset, info.type_of(i)) {
                        members.push((info.name(i).unwrap_or_default(), o, t));
                    }
                }
                i = m.end.max(i + 1);
            }
            Shape::Struct { size, members }
        }
        tag::ARRAY_TYPE => {
            let element = info.type_of(ty);
            let count = array_count(info, ty);
            let stride = element.and_then(|e| size_of(info, e, address_size));
            match (element, count, stride) {
                (Some(element), Some(count), Some(stride)) => Shape::Array { element, count, stride },
                _ => Shape::Other { size },
            }
        }
        _ => Shape::Other { size },
    }
}

/// The size in **bytes** of type DIE `ty`, if known: its
/// `DW_AT_byte_size`, or for arrays without one the product of the element
/// counts and the innermost element's size (walked in a bounded loop).
pub fn size_of(info: &Info, ty: usize, address_size: u8) -> Option<u64> {
    let mut factor = 1u64;
    let mut t = strip(info, ty);
    for _ in 0..MAX_HOPS {
        if let Some(s) = info.udata(t, at::BYTE_SIZE) {
            return factor.checked_mul(s);
        }
        match info.dies[t].tag {
            tag::POINTER_TYPE | tag::REFERENCE_TYPE | tag::RVALUE_REFERENCE_TYPE => {
                return factor.checked_mul(u64::from(address_size));
            }
            tag::ARRAY_TYPE => {
                factor = factor.checked_mul(array_count(info, t)?)?;
                t = strip(info, info.type_of(t)?);
            }
            _ => return None,
        }
    }
    None
}

/// The element count of array type DIE `ty` (its first subrange's
/// `DW_AT_count`, or upper bound - lower bound + 1).
fn array_count(info: &Info, ty: usize) -> Option<u64> {
    let d = &info.dies[ty];
    let s = (ty + 1..d.end).find(|&i| info.dies[i].tag == tag::SUBRANGE_TYPE && info.dies[i].parent == Some(ty))?;
    info.udata(s, at::COUNT).or_else(|| {
        let lower = info.udata(s, at::LOWER_BOUND).unwrap_or(0);
        info.udata(s, at::UPPER_BOUND).and_then(|u| u.checked_sub(lower)?.checked_add(1))
    })
}

/// A readable name of type DIE `ty` (`int`, `const int *`, `struct point`,
/// `int [4]`), bounded in length.
pub fn name(info: &Info, ty: Option<usize>) -> String {
    let (mut prefix, mut suffix) = (String::new(), String::new());
    let mut cur = ty;
    for _ in 0..MAX_HOPS {
        let Some(t) = cur else {
            return format!("{prefix}void{suffix}");
        };
        let d = &info.dies[t];
        let own = info.name(t);
        match d.tag {
            tag::BASE_TYPE | tag::TYPEDEF => return format!("{prefix}{}{suffix}", own.unwrap_or_default()),
            tag::STRUCTURE_TYPE => return format!("{prefix}struct {}{suffix}", own.unwrap_or_default()),
            tag::UNION_TYPE => return format!("{prefix}union {}{suffix}", own.unwrap_or_default()),
            tag::CLASS_TYPE => return format!("{prefix}class {}{suffix}", own.unwrap_or_default()),
            tag::ENUMERATION_TYPE => return format!("{prefix}enum {}{suffix}", own.unwrap_or_default()),
            tag::CONST_TYPE => prefix.push_str("const "),
            tag::VOLATILE_TYPE => prefix.push_str("volatile "),
            tag::RESTRICT_TYPE | tag::ATOMIC_TYPE => {}
            tag::POINTER_TYPE => suffix.insert_str(0, " *"),
            tag::REFERENCE_TYPE => suffix.insert_str(0, " &"),
            tag::ARRAY_TYPE => match shape(info, t, 8) {
                Shape::Array { count, .. } => suffix.push_str(&format!(" [{count}]")),
                _ => suffix.push_str(" []"),
            },
            _ => return format!("{prefix}?{suffix}"),
        }
        cur = info.type_of(t);
    }
    format!("{prefix}...{suffix}")
}

/// Why some bytes of an object have no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// Undefined location storage, or no location at this pc: the value is
    /// optimized out.
    OptimizedOut,
    /// Memory at this byte address cannot be read from the core or a file.
    Unreadable(u64),
    /// A register of the frame whose value is not known.
    Register(u64),
    /// An implicit pointer (`DW_OP_implicit_pointer`): no address to show.
    ImplicitPointer,
    /// The evaluation failed or is unsupported: why, with its rule ID.
    Failed(String),
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Missing::OptimizedOut => write!(f, "<optimized out>"),
            Missing::Unreadable(a) => write!(f, "<cannot read memory at {a:#x}>"),
            Missing::Register(r) => write!(f, "<register {r} not saved>"),
            Missing::ImplicitPointer => write!(f, "<implicit pointer>"),
            Missing::Failed(why) => write!(f, "<not available: {why}>"),
        }
    }
}

/// One scalar of a value.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// A signed integer (or signed character).
    Int(i128),
    /// An unsigned integer (or unsigned character, address-class integer).
    Uint(u128),
    /// A boolean's stored integer.
    Bool(u128),
    /// A character type's value (signed or not) and whether it is signed.
    Char(i128),
    /// A binary32 or binary64 floating-point value and its bits.
    Float {
        /// The value.
        value: f64,
        /// Its bit pattern (of the type's size).
        bits: u64,
    },
    /// A pointer's address.
    Pointer(u64),
    /// Bytes of an encoding shown raw (least significant first).
    Raw(Vec<u8>),
    /// No value: why.
    Missing(Missing),
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scalar::Int(v) => write!(f, "{v}"),
            Scalar::Uint(v) => write!(f, "{v}"),
            Scalar::Bool(0) => write!(f, "false"),
            Scalar::Bool(1) => write!(f, "true"),
            Scalar::Bool(v) => write!(f, "{v}"),
            Scalar::Char(v) => match u8::try_from(*v).ok().filter(|c| c.is_ascii_graphic() || *c == b' ') {
                Some(c) => write!(f, "{v} '{}'", c as char),
                None => write!(f, "{v}"),
            },
            Scalar::Float { value, .. } => write!(f, "{value:?}"),
            Scalar::Pointer(p) => write!(f, "{p:#x}"),
            Scalar::Raw(b) => write!(f, "0x{}", b.iter().rev().map(|x| format!("{x:02x}")).collect::<String>()),
            Scalar::Missing(m) => write!(f, "{m}"),
        }
    }
}

/// One token of a laid-out value.
#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    /// A structure (`'{'`) or array (`'['`) begins; the member name, if in
    /// a structure.
    Open(Option<String>, char),
    /// A scalar, with its member name if in a structure.
    Leaf(Option<String>, Scalar),
    /// The innermost open structure or array ends.
    Close(char),
}

/// The bytes of an object: each byte known, or why not.
pub type ObjectBytes = [Result<u8, Missing>];

/// Lays out an object of type DIE `ty` from its `bytes` (target order,
/// little-endian), as tokens in member order. Bounded in nesting
/// ([`MAX_NESTING`]) and leaves ([`MAX_LEAVES`]); what is past the bounds
/// is shown as a [`Missing::Failed`] leaf.
pub fn lay_out(info: &Info, ty: usize, bytes: &ObjectBytes, address_size: u8) -> Vec<Token> {
    enum Work {
        Node { label: Option<String>, ty: usize, offset: u64, depth: usize },
        Close(char),
    }
    let mut out = Vec::new();
    let mut stack = vec![Work::Node { label: None, ty, offset: 0, depth: 0 }];
    let mut leaves = 0usize;
    while let Some(w) = stack.pop() {
        let (label, ty, offset, depth) = match w {
            Work::Close(c) => {
                out.push(Token::Close(c));
                continue;
            }
            Work::Node { label, ty, offset, depth } => (label, ty, offset, depth),
        };
        if leaves >= MAX_LEAVES || depth > MAX_NESTING {
            out.push(Token::Leaf(label, Scalar::Missing(Missing::Failed("too large to show".into()))));
            leaves += 1;
            continue;
        }
        match shape(info, ty, address_size) {
            Shape::Struct { members, .. } => {
                out.push(Token::Open(label, '{'));
                stack.push(Work::Close('}'));
                for (name, o, t) in members.into_iter().rev() {
                    stack.push(Work::Node {
                        label: Some(name),
                        ty: t,
                        offset: offset.saturating_add(o),
                        depth: depth + 1,
                    });
                }
            }
            Shape::Array { element, count, stride } => {
                out.push(Token::Open(label, '['));
                stack.push(Work::Close(']'));
                let shown = count.min(MAX_LEAVES as u64);
                for k in (0..shown).rev() {
                    let at = offset.saturating_add(k.saturating_mul(stride));
                    stack.push(Work::Node { label: None, ty: element, offset: at, depth: depth + 1 });
                }
            }
            s => {
                leaves += 1;
                out.push(Token::Leaf(label, scalar(&s, slice(bytes, offset, &s))));
            }
        }
    }
    out
}

/// The bytes of a scalar of shape `s` at byte `offset` of the object.
fn slice<'b>(bytes: &'b ObjectBytes, offset: u64, s: &Shape) -> Option<&'b ObjectBytes> {
    let size = match s {
        Shape::Base { size, .. } | Shape::Pointer { size } | Shape::Enum { size, .. } => *size,
        _ => return None,
    };
    let start = usize::try_from(offset).ok()?;
    bytes.get(start..start.checked_add(usize::try_from(size).ok()?)?)
}

/// Reads a scalar of shape `s` from its bytes.
fn scalar(s: &Shape, bytes: Option<&ObjectBytes>) -> Scalar {
    let Some(bytes) = bytes else {
        return Scalar::Missing(Missing::Failed("type not shown".into()));
    };
    let mut raw = Vec::with_capacity(bytes.len());
    for b in bytes {
        match b {
            Ok(v) => raw.push(*v),
            Err(m) => return Scalar::Missing(m.clone()),
        }
    }
    if raw.len() > 16 {
        return Scalar::Raw(raw);
    }
    let mut le = [0u8; 16];
    le[..raw.len()].copy_from_slice(&raw);
    let unsigned = u128::from_le_bytes(le);
    let bits = 8 * raw.len() as u32;
    let signed =
        if bits == 0 || bits >= 128 { unsigned as i128 } else { ((unsigned << (128 - bits)) as i128) >> (128 - bits) };
    match *s {
        Shape::Pointer { .. } => Scalar::Pointer(unsigned as u64),
        Shape::Enum { signed: true, .. } => Scalar::Int(signed),
        Shape::Enum { .. } => Scalar::Uint(unsigned),
        Shape::Base { encoding, size } => match encoding {
            ate::SIGNED => Scalar::Int(signed),
            ate::UNSIGNED | ate::ADDRESS | ate::UTF => Scalar::Uint(unsigned),
            ate::SIGNED_CHAR => Scalar::Char(signed),
            ate::UNSIGNED_CHAR => Scalar::Char(unsigned as i128),
            ate::BOOLEAN => Scalar::Bool(unsigned),
            ate::FLOAT if size == 4 => {
                Scalar::Float { value: f64::from(f32::from_bits(unsigned as u32)), bits: unsigned as u64 }
            }
            ate::FLOAT if size == 8 => Scalar::Float { value: f64::from_bits(unsigned as u64), bits: unsigned as u64 },
            _ => Scalar::Raw(raw),
        },
        _ => Scalar::Raw(raw),
    }
}

/// Tokens as text: `{x = -10, y = 300}`, `[1, 2]`, a scalar alone.
pub fn render(tokens: &[Token]) -> String {
    render_with(tokens, |s| s.to_string(), " = ", ", ")
}

/// Tokens as text with `leaf` showing scalars, `eq` between a member's
/// name and value and `sep` between members or elements.
pub fn render_with(tokens: &[Token], leaf: impl Fn(&Scalar) -> String, eq: &str, sep: &str) -> String {
    let mut out = String::new();
    let mut first = true;
    for t in tokens {
        let (label, body) = match t {
            Token::Close(c) => {
                out.push(*c);
                first = false;
                continue;
            }
            Token::Open(l, c) => (l, c.to_string()),
            Token::Leaf(l, s) => (l, leaf(s)),
        };
        if !first {
            out.push_str(sep);
        }
        if let Some(l) = label {
            out.push_str(l);
            out.push_str(eq);
        }
        out.push_str(&body);
        first = matches!(t, Token::Open(..));
    }
    out
}
