//! Compile-time evaluation of the scalar ops, matching the reference interpreter's semantics exactly, and
//! refusing wherever folding could differ from the run time:
//!
//! - integers wrap to their type (two's complement; `u4`/`u8` modulo 2^n); `index` results beyond ±2^53
//!   (an interpreter error) are not folded; `div`/`rem` truncate toward zero; **division or remainder by
//!   zero is never folded** — it stays for the run-time error;
//! - floats are folded only when the result is *exact* (representable in the type without rounding), finite,
//!   not `-0.0`, from operands that are themselves exact values of the type and not NaN; float division is
//!   never folded (the backend may use an approximate divide);
//! - casts fold between integer types, from integers to floats that hold the value exactly, between floats
//!   when exact, and from floats to integers only when the truncated value is in range (so wrapping and
//!   saturating conversions agree).

use tilec_ir::data::round_to;
use tilec_ir::ops::{CmpPredicate, Literal};
use tilec_ir::{OpKind, ScalarType};

/// The largest magnitude of an `index` value the interpreter accepts.
const INDEX_LIMIT: i128 = 1 << 53;

/// A known scalar value (of a `tile.constant`, or every element of a `tile.fill`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Const {
    Int(i128),
    Float(f64),
}

impl Const {
    /// Reads a constant's `value` as a value of `elem`.
    pub fn from_literal(value: Literal, elem: ScalarType) -> Option<Const> {
        match (value, elem.is_float()) {
            (Literal::Int(n), false) => Some(Const::Int(i128::from(n))),
            (Literal::Bool(b), false) => Some(Const::Int(i128::from(b))),
            (Literal::Int(n), true) => Some(Const::Float(n as f64)),
            (Literal::Float(x), true) => Some(Const::Float(x)),
            _ => None,
        }
    }

    /// The literal a folded constant of `elem` is written with (`true`/`false` for `i1`).
    pub fn to_literal(self, elem: ScalarType) -> Literal {
        match self {
            Const::Int(n) if elem == ScalarType::I1 => Literal::Bool(n != 0),
            Const::Int(n) => Literal::Int(n as i64),
            Const::Float(x) => Literal::Float(x),
        }
    }

    pub fn as_int(self) -> Option<i128> {
        match self {
            Const::Int(n) => Some(n),
            Const::Float(_) => None,
        }
    }

    /// An integer value equal to `n` (floats never count: identities are for integers only).
    pub fn is_int(self, n: i128) -> bool {
        self == Const::Int(n)
    }
}

/// The range of an integer type.
fn int_range(elem: ScalarType) -> (i128, i128) {
    match elem {
        ScalarType::I1 => (0, 1),
        ScalarType::I4 => (-8, 7),
        ScalarType::U4 => (0, 15),
        ScalarType::I8 => (-128, 127),
        ScalarType::U8 => (0, 255),
        ScalarType::I32 => (i32::MIN.into(), i32::MAX.into()),
        _ => (-INDEX_LIMIT, INDEX_LIMIT),
    }
}

/// Wraps an exact integer into an integer type; `None` for an `index` out of range.
fn wrap(elem: ScalarType, r: i128) -> Option<i128> {
    match elem {
        ScalarType::Index => (r.abs() <= INDEX_LIMIT).then_some(r),
        ScalarType::I1 => Some(i128::from(r != 0)),
        _ => {
            let bits = elem.bit_width();
            let modulus = 1i128 << bits;
            let mut v = r.rem_euclid(modulus);
            if !elem.is_unsigned() && v >= modulus / 2 {
                v -= modulus;
            }
            Some(v)
        }
    }
}

/// A float value that the type holds exactly, finite and not NaN.
fn exact_float(elem: ScalarType, x: f64) -> Option<f64> {
    (x.is_finite() && round_to(elem, x) == x).then_some(x)
}

/// A binary elementwise op on two known values of `elem`.
pub fn binary(kind: OpKind, elem: ScalarType, a: Const, b: Const) -> Option<Const> {
    match (a, b) {
        (Const::Int(x), Const::Int(y)) if !elem.is_float() => {
            let r = match kind {
                OpKind::Add => x.checked_add(y)?,
                OpKind::Sub => x.checked_sub(y)?,
                OpKind::Mul => x.checked_mul(y)?,
                OpKind::Div | OpKind::Rem if y == 0 => return None,
                OpKind::Div => x.checked_div(y)?,
                OpKind::Rem => x.checked_rem(y)?,
                OpKind::Min => x.min(y),
                OpKind::Max => x.max(y),
                _ => return None,
            };
            wrap(elem, r).map(Const::Int)
        }
        (Const::Float(x), Const::Float(y)) if elem.is_float() => {
            let (x, y) = (exact_float(elem, x)?, exact_float(elem, y)?);
            let r = match kind {
                OpKind::Add => x + y,
                OpKind::Sub => x - y,
                OpKind::Mul => x * y,
                // min/max of zeros of different signs is implementation-defined: leave it.
                OpKind::Min | OpKind::Max if x == y && x.to_bits() != y.to_bits() => return None,
                OpKind::Min => x.min(y),
                OpKind::Max => x.max(y),
                _ => return None,
            };
            if r == 0.0 && r.is_sign_negative() {
                return None;
            }
            exact_float(elem, r).map(Const::Float)
        }
        _ => None,
    }
}

/// `tile.cmp` of two known values: `Int(1)` when the predicate holds, else `Int(0)`.
pub fn compare(predicate: CmpPredicate, a: Const, b: Const) -> Option<Const> {
    let ord = match (a, b) {
        (Const::Int(x), Const::Int(y)) => x.cmp(&y),
        (Const::Float(x), Const::Float(y)) => x.partial_cmp(&y)?,
        _ => return None,
    };
    Some(Const::Int(i128::from(predicate.holds(ord))))
}

/// `tile.cast` of a known value from `from` to `to`.
pub fn cast(from: ScalarType, to: ScalarType, x: Const) -> Option<Const> {
    match (x, to.is_float()) {
        (Const::Int(n), false) => {
            let n = wrap(from, n)?;
            wrap(to, n).map(Const::Int)
        }
        (Const::Int(n), true) => {
            if n.abs() > INDEX_LIMIT {
                return None;
            }
            exact_float(to, n as f64).map(Const::Float)
        }
        (Const::Float(f), true) => {
            let f = exact_float(from, f)?;
            if f == 0.0 && f.is_sign_negative() {
                return None;
            }
            exact_float(to, f).map(Const::Float)
        }
        (Const::Float(f), false) => {
            let f = exact_float(from, f)?;
            if to == ScalarType::I1 {
                return None;
            }
            let t = f.trunc() as i128;
            let (lo, hi) = int_range(to);
            (lo <= t && t <= hi).then_some(Const::Int(t))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Const::{Float, Int};
    use ScalarType::*;

    #[test]
    fn integers_wrap_like_the_interpreter() {
        assert_eq!(binary(OpKind::Div, I32, Int(-7), Int(2)), Some(Int(-3)));
        assert_eq!(binary(OpKind::Rem, I32, Int(-7), Int(2)), Some(Int(-1)));
        assert_eq!(binary(OpKind::Div, I32, Int(i32::MIN.into()), Int(-1)), Some(Int(i32::MIN.into())));
        assert_eq!(binary(OpKind::Mul, I32, Int(65536), Int(65537)), Some(Int(65536)));
        assert_eq!(binary(OpKind::Sub, U8, Int(3), Int(5)), Some(Int(254)));
        assert_eq!(binary(OpKind::Add, I4, Int(7), Int(1)), Some(Int(-8)));
        assert_eq!(binary(OpKind::Max, Index, Int(-4), Int(9)), Some(Int(9)));
    }

    #[test]
    fn never_folds_what_fails_at_run_time() {
        assert_eq!(binary(OpKind::Div, I32, Int(1), Int(0)), None);
        assert_eq!(binary(OpKind::Rem, Index, Int(1), Int(0)), None);
        assert_eq!(binary(OpKind::Mul, Index, Int(1 << 30), Int(1 << 30)), None);
    }

    #[test]
    fn floats_only_when_exact() {
        assert_eq!(binary(OpKind::Add, F32, Float(1.5), Float(2.0)), Some(Float(3.5)));
        assert_eq!(binary(OpKind::Add, F16, Float(2048.0), Float(1.0)), None);
        assert_eq!(binary(OpKind::Add, F32, Float(0.1), Float(0.2)), None);
        assert_eq!(binary(OpKind::Div, F32, Float(1.0), Float(2.0)), None);
        assert_eq!(binary(OpKind::Mul, F32, Float(-1.0), Float(0.0)), None);
        assert_eq!(binary(OpKind::Min, F32, Float(f64::NAN), Float(0.0)), None);
    }

    #[test]
    fn casts() {
        assert_eq!(cast(I32, I8, Int(300)), Some(Int(44)));
        assert_eq!(cast(I32, F16, Int(2049)), None);
        assert_eq!(cast(I32, F16, Int(2048)), Some(Float(2048.0)));
        assert_eq!(cast(F32, I32, Float(-2.5)), Some(Int(-2)));
        assert_eq!(cast(F32, I8, Float(300.0)), None);
        assert_eq!(cast(F32, F16, Float(0.5)), Some(Float(0.5)));
        assert_eq!(cast(F32, BF16, Float(1.0 + 1.0 / 1024.0)), None);
        assert_eq!(cast(Index, I1, Int(5)), Some(Int(1)));
    }

    #[test]
    fn comparisons() {
        assert_eq!(compare(CmpPredicate::Lt, Int(1), Int(2)), Some(Int(1)));
        assert_eq!(compare(CmpPredicate::Ge, Float(1.0), Float(2.0)), Some(Int(0)));
        assert_eq!(compare(CmpPredicate::Eq, Float(f64::NAN), Float(1.0)), None);
    }
}
