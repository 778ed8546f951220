//! The Rust types of attribute values: what an op's or a kernel's declared attribute decodes to.
//!
//! Each type implements [`AttrValue`]: it reads itself from an [`Attribute`] (or says the attribute is not one
//! of it), writes itself back, and names itself for diagnostics and the op reference. The catalogue
//! ([`crate::ops`]) declares every attribute with one of these types, so the verifier checks attributes from
//! the declarations and code reads them through typed views, never by string.

use std::cmp::Ordering;
use std::fmt;

use crate::attr::Attribute;

/// A Rust type that an attribute can hold.
pub trait AttrValue: Sized {
    /// What the attribute must be, as the verifier says it and the op reference prints it.
    const EXPECTED: &'static str;

    /// The value, or `None` when the attribute is of another kind or out of range.
    fn decode(attr: &Attribute) -> Option<Self>;

    /// The attribute, or `None` for an optional attribute that is absent.
    fn encode(&self) -> Option<Attribute>;
}

impl AttrValue for i64 {
    const EXPECTED: &'static str = "an integer";

    fn decode(attr: &Attribute) -> Option<i64> {
        attr.as_int()
    }

    fn encode(&self) -> Option<Attribute> {
        Some(Attribute::Int(*self))
    }
}

impl AttrValue for u32 {
    const EXPECTED: &'static str = "a non-negative integer";

    fn decode(attr: &Attribute) -> Option<u32> {
        u32::try_from(attr.as_int()?).ok()
    }

    fn encode(&self) -> Option<Attribute> {
        Some(Attribute::Int(i64::from(*self)))
    }
}

impl AttrValue for bool {
    const EXPECTED: &'static str = "true or false";

    fn decode(attr: &Attribute) -> Option<bool> {
        attr.as_bool()
    }

    fn encode(&self) -> Option<Attribute> {
        Some(Attribute::Bool(*self))
    }
}

impl AttrValue for String {
    const EXPECTED: &'static str = "a string";

    fn decode(attr: &Attribute) -> Option<String> {
        attr.as_str().map(str::to_string)
    }

    fn encode(&self) -> Option<Attribute> {
        Some(Attribute::Str(self.clone()))
    }
}

/// An attribute that may be left out: absent decodes to `None`, `None` encodes to nothing.
impl<T: AttrValue> AttrValue for Option<T> {
    const EXPECTED: &'static str = T::EXPECTED;

    fn decode(attr: &Attribute) -> Option<Option<T>> {
        T::decode(attr).map(Some)
    }

    fn encode(&self) -> Option<Attribute> {
        self.as_ref().and_then(T::encode)
    }
}

/// A list of non-negative integers: `[2, 4]`.
impl AttrValue for Vec<u32> {
    const EXPECTED: &'static str = "a list of non-negative integers";

    fn decode(attr: &Attribute) -> Option<Vec<u32>> {
        attr.as_array()?.iter().map(u32::decode).collect()
    }

    fn encode(&self) -> Option<Attribute> {
        Some(Attribute::Array(self.iter().map(|&n| Attribute::Int(i64::from(n))).collect()))
    }
}

/// An absolute and a relative tolerance, `[ATOL, RTOL]` (two non-negative numbers): an element `got` matches
/// `want` when `|got - want| <= ATOL + RTOL * |want|`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    pub atol: f64,
    pub rtol: f64,
}

impl AttrValue for Tolerance {
    const EXPECTED: &'static str = "[ATOL, RTOL], two non-negative numbers";

    fn decode(attr: &Attribute) -> Option<Tolerance> {
        let number = |a: &Attribute| match a {
            Attribute::Int(n) => Some(*n as f64),
            Attribute::Float(x) => Some(*x),
            _ => None,
        };
        match attr.as_array()? {
            [a, r] => {
                let (atol, rtol) = (number(a)?, number(r)?);
                (atol >= 0.0 && rtol >= 0.0 && atol.is_finite() && rtol.is_finite()).then_some(Tolerance { atol, rtol })
            }
            _ => None,
        }
    }

    fn encode(&self) -> Option<Attribute> {
        Some(Attribute::Array(vec![Attribute::Float(self.atol), Attribute::Float(self.rtol)]))
    }
}

/// A list of strings: `["A=64x32", "alpha=2"]`.
impl AttrValue for Vec<String> {
    const EXPECTED: &'static str = "a list of strings";

    fn decode(attr: &Attribute) -> Option<Vec<String>> {
        attr.as_array()?.iter().map(String::decode).collect()
    }

    fn encode(&self) -> Option<Attribute> {
        Some(Attribute::Array(self.iter().map(|s| Attribute::Str(s.clone())).collect()))
    }
}

/// A scalar literal: the value of `tile.constant` and `tile.fill`. Which literals suit which element type is
/// the op's rule (an integer for `f32` is fine, a float for `i32` is not).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Literal {
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Literal {
    /// The literal as a number (`true` is 1).
    pub fn as_f64(self) -> f64 {
        match self {
            Literal::Int(n) => n as f64,
            Literal::Float(x) => x,
            Literal::Bool(b) => f64::from(u8::from(b)),
        }
    }

    /// The literal as an integer, if it is one.
    pub fn as_int(self) -> Option<i64> {
        match self {
            Literal::Int(n) => Some(n),
            _ => None,
        }
    }

    pub fn to_attribute(self) -> Attribute {
        match self {
            Literal::Int(n) => Attribute::Int(n),
            Literal::Float(x) => Attribute::Float(x),
            Literal::Bool(b) => Attribute::Bool(b),
        }
    }
}

impl AttrValue for Literal {
    const EXPECTED: &'static str = "a number or true/false";

    fn decode(attr: &Attribute) -> Option<Literal> {
        match attr {
            Attribute::Int(n) => Some(Literal::Int(*n)),
            Attribute::Float(x) => Some(Literal::Float(*x)),
            Attribute::Bool(b) => Some(Literal::Bool(*b)),
            _ => None,
        }
    }

    fn encode(&self) -> Option<Attribute> {
        Some(self.to_attribute())
    }
}

impl From<i64> for Literal {
    fn from(n: i64) -> Literal {
        Literal::Int(n)
    }
}

impl From<bool> for Literal {
    fn from(b: bool) -> Literal {
        Literal::Bool(b)
    }
}

impl From<f64> for Literal {
    fn from(x: f64) -> Literal {
        Literal::Float(x)
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.to_attribute())
    }
}

/// `"x", "y", "z"` → `"x, y, z"`.
macro_rules! join_keywords {
    ($only:literal) => { $only };
    ($first:literal, $($rest:literal),+) => { concat!($first, ", ", join_keywords!($($rest),+)) };
}

/// Enumerations written as bare keywords (`tile.block_id x`, `tile.cmp lt`, `layoutA = col`).
macro_rules! keyword_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)*
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The keyword.
            pub fn keyword(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }

            /// The value with this keyword.
            pub fn from_keyword(word: &str) -> Option<$name> {
                match word {
                    $($text => Some($name::$variant),)*
                    _ => None,
                }
            }
        }

        impl AttrValue for $name {
            const EXPECTED: &'static str = concat!("one of ", join_keywords!($($text),*));

            fn decode(attr: &Attribute) -> Option<$name> {
                $name::from_keyword(attr.as_keyword()?)
            }

            fn encode(&self) -> Option<Attribute> {
                Some(Attribute::Keyword(self.keyword().to_string()))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.keyword())
            }
        }
    };
}

keyword_enum! {
    /// An axis of the grid or of a thread block.
    GridAxis { X = "x", Y = "y", Z = "z" }
}

impl GridAxis {
    /// 0 for `x`, 1 for `y`, 2 for `z`.
    pub fn index(self) -> usize {
        match self {
            GridAxis::X => 0,
            GridAxis::Y => 1,
            GridAxis::Z => 2,
        }
    }
}

keyword_enum! {
    /// The comparison of `tile.cmp`.
    CmpPredicate { Eq = "eq", Ne = "ne", Lt = "lt", Le = "le", Gt = "gt", Ge = "ge" }
}

impl CmpPredicate {
    /// Whether two values ordered `ordering` satisfy the predicate.
    pub fn holds(self, ordering: Ordering) -> bool {
        match self {
            CmpPredicate::Eq => ordering == Ordering::Equal,
            CmpPredicate::Ne => ordering != Ordering::Equal,
            CmpPredicate::Lt => ordering == Ordering::Less,
            CmpPredicate::Le => ordering != Ordering::Greater,
            CmpPredicate::Gt => ordering == Ordering::Greater,
            CmpPredicate::Ge => ordering != Ordering::Less,
        }
    }

    /// Applies the predicate to two floats (every predicate but `ne` is false when either is NaN, as with
    /// ordered comparisons).
    pub fn holds_f64(self, a: f64, b: f64) -> bool {
        match a.partial_cmp(&b) {
            Some(ordering) => self.holds(ordering),
            None => self == CmpPredicate::Ne,
        }
    }
}

keyword_enum! {
    /// The combining function of `tile.reduce`.
    ReduceKind { Sum = "sum", Max = "max", Min = "min" }
}

keyword_enum! {
    /// How `nvgpu.shuffle` finds the source lane (only the butterfly, `xor`, so far).
    ShuffleMode { Xor = "xor" }
}

keyword_enum! {
    /// How an mma operand's fragment is ordered: `.row` or `.col` in the PTX mnemonic.
    MatrixOrder { Row = "row", Col = "col" }
}

/// The tensor-core instruction a kernel's `tile.mma` ops become (its attribute `mma`): `"wgmma"` or
/// `"mma_sync"` (a string or a bare keyword).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmaInstruction {
    /// sm_90a's warpgroup MMA, operands read from shared memory.
    Wgmma,
    /// `mma.sync` with `ldmatrix` fragments.
    MmaSync,
}

impl MmaInstruction {
    /// The name the attribute writes.
    pub fn name(self) -> &'static str {
        match self {
            MmaInstruction::Wgmma => "wgmma",
            MmaInstruction::MmaSync => "mma_sync",
        }
    }
}

impl AttrValue for MmaInstruction {
    const EXPECTED: &'static str = "\"wgmma\" or \"mma_sync\"";

    fn decode(attr: &Attribute) -> Option<MmaInstruction> {
        match attr {
            Attribute::Str(s) | Attribute::Keyword(s) => match s.as_str() {
                "wgmma" => Some(MmaInstruction::Wgmma),
                "mma_sync" => Some(MmaInstruction::MmaSync),
                _ => None,
            },
            _ => None,
        }
    }

    fn encode(&self) -> Option<Attribute> {
        Some(Attribute::Str(self.name().to_string()))
    }
}

/// How the software pipeline runs the `T % S` iterations that a main loop unrolled `S` times leaves over (the
/// kernel attribute `pipeline_tail`): `"peeled"` or `"guarded"` (a string or a bare keyword).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PipelineTail {
    /// After the main loop, one more copy of the body per leftover iteration (`S - 1` copies, each run 0 or 1
    /// times): the main loop's trips are straight-line code.
    Peeled,
    /// In the main loop's last trip: copies `1 .. S` of the unrolled body each run where their iteration exists.
    /// `S - 1` fewer copies of the body (less code to compile, fewer registers where the leftover copies made
    /// ptxas allocate more), a branch between the copies of every trip.
    Guarded,
}

impl PipelineTail {
    /// The name the attribute writes.
    pub fn name(self) -> &'static str {
        match self {
            PipelineTail::Peeled => "peeled",
            PipelineTail::Guarded => "guarded",
        }
    }
}

impl AttrValue for PipelineTail {
    const EXPECTED: &'static str = "\"peeled\" or \"guarded\"";

    fn decode(attr: &Attribute) -> Option<PipelineTail> {
        match attr {
            Attribute::Str(s) | Attribute::Keyword(s) => match s.as_str() {
                "peeled" => Some(PipelineTail::Peeled),
                "guarded" => Some(PipelineTail::Guarded),
                _ => None,
            },
            _ => None,
        }
    }

    fn encode(&self) -> Option<Attribute> {
        Some(Attribute::Str(self.name().to_string()))
    }
}

/// The `m × n × k` shape of a tensor-core instruction: `mmaShape = [16, 8, 16]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MmaShape {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

impl MmaShape {
    pub const fn new(m: u32, n: u32, k: u32) -> MmaShape {
        MmaShape { m, n, k }
    }

    /// `[m, n, k]`.
    pub fn dims(self) -> [u32; 3] {
        [self.m, self.n, self.k]
    }
}

impl AttrValue for MmaShape {
    const EXPECTED: &'static str = "[m, n, k]";

    fn decode(attr: &Attribute) -> Option<MmaShape> {
        match attr.as_array()? {
            [m, n, k] => Some(MmaShape { m: u32::decode(m)?, n: u32::decode(n)?, k: u32::decode(k)? }),
            _ => None,
        }
    }

    fn encode(&self) -> Option<Attribute> {
        Some(Attribute::Array(self.dims().iter().map(|&d| Attribute::Int(i64::from(d))).collect()))
    }
}

impl fmt::Display for MmaShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "m{}n{}k{}", self.m, self.n, self.k)
    }
}

/// The simulator's `probe` marker on an op with a result: `probe` (or `probe = true`) records the result under
/// the value's name, `probe = "name"` under that name, `probe = false` not at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probe {
    Marked(bool),
    Named(String),
}

impl Probe {
    pub fn is_marked(&self) -> bool {
        !matches!(self, Probe::Marked(false))
    }

    /// The name given, if any.
    pub fn name(&self) -> Option<&str> {
        match self {
            Probe::Named(name) => Some(name),
            Probe::Marked(_) => None,
        }
    }
}

impl AttrValue for Probe {
    const EXPECTED: &'static str = "true, false or a string";

    fn decode(attr: &Attribute) -> Option<Probe> {
        match attr {
            Attribute::Bool(b) => Some(Probe::Marked(*b)),
            Attribute::Str(s) => Some(Probe::Named(s.clone())),
            _ => None,
        }
    }

    fn encode(&self) -> Option<Attribute> {
        Some(match self {
            Probe::Marked(b) => Attribute::Bool(*b),
            Probe::Named(s) => Attribute::Str(s.clone()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_through_attributes() {
        let shape = MmaShape::new(16, 8, 16);
        assert_eq!(shape.encode(), Some(Attribute::Array(vec![Attribute::Int(16), Attribute::Int(8), Attribute::Int(16)])));
        assert_eq!(MmaShape::decode(&Attribute::Array(vec![Attribute::Int(16), Attribute::Int(8)])), None);
        assert_eq!(CmpPredicate::decode(&Attribute::Keyword("le".into())), Some(CmpPredicate::Le));
        assert_eq!(CmpPredicate::decode(&Attribute::Str("le".into())), None);
        assert_eq!(u32::decode(&Attribute::Int(-1)), None);
        assert_eq!(<Option<bool>>::decode(&Attribute::Bool(true)), Some(Some(true)));
        assert_eq!(<Option<bool>>::None.encode(), None);
        assert_eq!(GridAxis::EXPECTED, "one of x, y, z");
    }

    #[test]
    fn predicates_follow_ordered_comparison() {
        assert!(CmpPredicate::Le.holds(Ordering::Equal));
        assert!(!CmpPredicate::Lt.holds_f64(f64::NAN, 1.0));
        assert!(CmpPredicate::Ne.holds_f64(f64::NAN, 1.0));
    }
}
