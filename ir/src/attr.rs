//! Attributes: compile-time constant data attached to operations and functions.

use std::collections::BTreeMap;
use std::fmt;


/// An attribute value.
///
/// Text forms: `42`, `-1.5`, `true`, `"text"`, a bare keyword such as `x` or `lt`, and `[1, 2, 3]`.
#[derive(Clone, Debug, PartialEq)]
pub enum Attribute {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    /// A bare identifier, used for enumerations (`tile.block_id x`, `tile.cmp lt`).
    Keyword(String),
    Array(Vec<Attribute>),
}

impl Attribute {
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Attribute::Int(n) => Some(*n),
            _ => None,
        }
    }

    /// A number as f64 (integers convert).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Attribute::Int(n) => Some(*n as f64),
            Attribute::Float(x) => Some(*x),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Attribute::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Attribute::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_keyword(&self) -> Option<&str> {
        match self {
            Attribute::Keyword(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Attribute]> {
        match self {
            Attribute::Array(items) => Some(items),
            _ => None,
        }
    }

    /// An array of integers, e.g. `mmaShape = [16, 8, 16]`.
    pub fn as_int_array(&self) -> Option<Vec<i64>> {
        self.as_array()?.iter().map(Attribute::as_int).collect()
    }

    /// A short name of the attribute's kind, for diagnostics.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Attribute::Int(_) => "integer",
            Attribute::Float(_) => "float",
            Attribute::Bool(_) => "bool",
            Attribute::Str(_) => "string",
            Attribute::Keyword(_) => "keyword",
            Attribute::Array(_) => "array",
        }
    }
}

/// Writes a float so that reading it back gives the same bits, always with a `.` or an exponent.
pub(crate) fn write_float(f: &mut fmt::Formatter<'_>, x: f64) -> fmt::Result {
    if x.is_nan() {
        f.write_str("nan")
    } else if x.is_infinite() {
        f.write_str(if x > 0.0 { "inf" } else { "-inf" })
    } else {
        let text = format!("{x:?}");
        if text.contains(['.', 'e', 'E']) {
            f.write_str(&text)
        } else {
            write!(f, "{text}.0")
        }
    }
}

impl fmt::Display for Attribute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Attribute::Int(n) => write!(f, "{n}"),
            Attribute::Float(x) => write_float(f, *x),
            Attribute::Bool(b) => write!(f, "{b}"),
            Attribute::Str(s) => write!(f, "{s:?}"),
            Attribute::Keyword(k) => f.write_str(k),
            Attribute::Array(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
        }
    }
}

impl From<i64> for Attribute {
    fn from(n: i64) -> Attribute {
        Attribute::Int(n)
    }
}

impl From<f64> for Attribute {
    fn from(x: f64) -> Attribute {
        Attribute::Float(x)
    }
}

impl From<bool> for Attribute {
    fn from(b: bool) -> Attribute {
        Attribute::Bool(b)
    }
}

impl From<Vec<i64>> for Attribute {
    fn from(items: Vec<i64>) -> Attribute {
        Attribute::Array(items.into_iter().map(Attribute::Int).collect())
    }
}

/// Named attributes, kept sorted by name so printing is deterministic.
pub type AttrMap = BTreeMap<String, Attribute>;
