//! Element-level semantics of the scalar and elementwise ops: binary arithmetic, comparison and casts.

use crate::data::round_to;
use crate::ops::{CmpPredicate, OpKind, UnaryMath};
use crate::types::ScalarType;

/// The largest magnitude an `index` may have: every integer up to it is exact in the `f64` the
/// interpreter holds values in.
pub(super) const INDEX_LIMIT: i128 = 1 << 53;

/// Why an element operation has no result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ArithError {
    DivisionByZero,
    /// An `index` result beyond ±2^53.
    IndexOverflow(i128),
}

/// A binary elementwise op (`add`, `sub`, `mul`, `div`, `rem`, `min`, `max`) on two elements of `elem`.
pub(super) fn binary(kind: OpKind, elem: ScalarType, a: f64, b: f64) -> Result<f64, ArithError> {
    if elem.is_float() {
        let r = match kind {
            OpKind::Add => a + b,
            OpKind::Sub => a - b,
            OpKind::Mul => a * b,
            OpKind::Div => a / b,
            // The verifier rejects float `rem`; give C's fmod rather than failing.
            OpKind::Rem => a % b,
            // `f64::min`/`max` return the non-NaN operand, as PTX `min`/`max` do.
            OpKind::Min => a.min(b),
            OpKind::Max => a.max(b),
            _ => f64::NAN,
        };
        return Ok(round_to(elem, r));
    }
    // Integers: exact in i128 (values are at most 2^53 in magnitude), then wrapped to the type.
    let (x, y) = (a as i128, b as i128);
    let r = match kind {
        OpKind::Add => x.wrapping_add(y),
        OpKind::Sub => x.wrapping_sub(y),
        OpKind::Mul => x.wrapping_mul(y),
        OpKind::Div | OpKind::Rem if y == 0 => return Err(ArithError::DivisionByZero),
        // Truncation toward zero, and the remainder takes the dividend's sign: Rust's `/` and `%`.
        OpKind::Div => x.wrapping_div(y),
        OpKind::Rem => x.wrapping_rem(y),
        OpKind::Min => x.min(y),
        OpKind::Max => x.max(y),
        _ => 0,
    };
    wrap_int(elem, r)
}

/// `tile.fma` on f32 elements: `a·b + c` rounded to f32 once (`fma.rn.f32`), not the product rounded first.
pub(crate) fn fma(a: f64, b: f64, c: f64) -> f64 {
    f64::from((a as f32).mul_add(b as f32, c as f32))
}

/// A unary elementwise op (`tile.neg` and the float math functions, [`OpKind::is_unary_math`]) on one
/// element of `elem`: computed in `f64`, then rounded to `elem` once. So the interpreter gives the correctly
/// rounded result (bar double rounding through f64, far below f32's ulp); the GPU's `.approx` instructions
/// are within the tolerances `docs/math.md` states (2 ulp for `tile.exp2`/`tile.exp`, ...). `tile.neg` and
/// `tile.sqrt` (`neg`, `sqrt.rn`) are exact on both. Integers (only `tile.neg` takes them) wrap.
pub(crate) fn unary(f: UnaryMath, elem: ScalarType, x: f64) -> f64 {
    round_to(elem, f.eval(x))
}

/// Wraps an exact integer to an integer type (two's complement); `index` must stay within ±2^53.
pub(super) fn wrap_int(elem: ScalarType, r: i128) -> Result<f64, ArithError> {
    Ok(match elem {
        ScalarType::I1 => f64::from(u8::from(r != 0)),
        ScalarType::I4 => (((r & 0xf) ^ 0x8) - 0x8) as f64,
        ScalarType::U4 => (r & 0xf) as f64,
        ScalarType::I8 => f64::from(r as i8),
        ScalarType::U8 => f64::from(r as u8),
        ScalarType::I32 => f64::from(r as i32),
        _ => {
            if r.abs() > INDEX_LIMIT {
                return Err(ArithError::IndexOverflow(r));
            }
            r as f64
        }
    })
}

/// `tile.cmp`: 1 when the predicate holds, else 0. Every predicate but `ne` is false on NaN.
pub(crate) fn compare(predicate: CmpPredicate, a: f64, b: f64) -> f64 {
    f64::from(u8::from(predicate.holds_f64(a, b)))
}

/// `tile.cast` of one element from `from`: round to nearest even into floats; from a float into an integer
/// type, truncate toward zero and saturate to its range (NaN gives 0: PTX's `cvt.rzi`); between integers, wrap;
/// `x != 0` into `i1` ([`crate::data::convert`]).
pub(super) fn cast(from: ScalarType, to: ScalarType, x: f64) -> Result<f64, ArithError> {
    if to == ScalarType::Index {
        let t = if x.is_finite() { x.trunc() } else { 0.0 };
        if t.abs() > INDEX_LIMIT as f64 {
            return Err(ArithError::IndexOverflow(t as i128));
        }
        return Ok(t);
    }
    Ok(crate::data::convert(from, to, x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_division_truncates_and_wraps() {
        assert_eq!(binary(OpKind::Div, ScalarType::I32, -7.0, 2.0), Ok(-3.0));
        assert_eq!(binary(OpKind::Rem, ScalarType::I32, -7.0, 2.0), Ok(-1.0));
        assert_eq!(binary(OpKind::Div, ScalarType::I32, -2147483648.0, -1.0), Ok(-2147483648.0));
        assert_eq!(binary(OpKind::Mul, ScalarType::I32, 65536.0, 65537.0), Ok(65536.0));
        assert_eq!(binary(OpKind::Sub, ScalarType::U8, 3.0, 5.0), Ok(254.0));
        assert_eq!(binary(OpKind::Add, ScalarType::I4, 7.0, 1.0), Ok(-8.0));
        assert_eq!(binary(OpKind::Rem, ScalarType::I8, 1.0, 0.0), Err(ArithError::DivisionByZero));
        assert!(matches!(binary(OpKind::Mul, ScalarType::Index, 1e15, 1e15), Err(ArithError::IndexOverflow(_))));
    }

    #[test]
    fn math_functions_round_once_to_the_element_type() {
        assert_eq!(unary(UnaryMath::Exp2 { ftz: false }, ScalarType::F32, 3.0), 8.0);
        assert_eq!(unary(UnaryMath::Sqrt, ScalarType::F32, 2.0), f64::from(2f32.sqrt()));
        assert_eq!(unary(UnaryMath::Rsqrt, ScalarType::F32, 4.0), 0.5);
        assert_eq!(unary(UnaryMath::Log, ScalarType::F32, 0.0), f64::NEG_INFINITY);
        assert!(unary(UnaryMath::Log, ScalarType::F32, -1.0).is_nan());
        assert_eq!(unary(UnaryMath::Exp, ScalarType::F16, 1.0), 2.71875); // e rounded to f16
        assert_eq!(unary(UnaryMath::Exp, ScalarType::BF16, 1.0), 2.71875);
        assert_eq!(unary(UnaryMath::Neg, ScalarType::I8, -128.0), -128.0);
        assert_eq!(unary(UnaryMath::Neg, ScalarType::F32, 0.0).to_bits(), (-0.0f64).to_bits());
        // |x| wraps at the integer minimum, as abs.s32 (and llvm.abs with int_min_poison = false) does.
        assert_eq!(unary(UnaryMath::Abs, ScalarType::I8, -128.0), -128.0);
        assert_eq!(unary(UnaryMath::Abs, ScalarType::I32, -7.0), 7.0);
        assert_eq!(unary(UnaryMath::Abs, ScalarType::F32, -0.0).to_bits(), 0.0f64.to_bits());
        // tanh(0.5) = 0.46211715726000974 and sigmoid(2) = 0.8807970779778823 (the closed forms, by hand).
        assert_eq!(unary(UnaryMath::Tanh, ScalarType::F32, 0.5), f64::from(0.462_117_157_260_009_74_f32));
        assert_eq!(unary(UnaryMath::Sigmoid, ScalarType::F32, 2.0), f64::from(0.880_797_077_977_882_3_f32));
        assert_eq!(unary(UnaryMath::Sigmoid, ScalarType::F32, -1000.0), 0.0);
        assert_eq!(unary(UnaryMath::Tanh, ScalarType::F32, f64::INFINITY), 1.0);
    }

    /// Float to integer saturates (PTX ISA, cvt: "for float-to-integer conversions, the result is clamped to
    /// the destination range by default"), NaN gives 0; integer to integer wraps.
    #[test]
    fn float_to_integer_casts_saturate() {
        use ScalarType::*;
        assert_eq!(cast(F32, I8, 300.7), Ok(127.0));
        assert_eq!(cast(F32, I8, -300.7), Ok(-128.0));
        assert_eq!(cast(F32, U8, -3.5), Ok(0.0));
        assert_eq!(cast(F32, U8, 255.9), Ok(255.0));
        assert_eq!(cast(F32, I32, -2.9), Ok(-2.0));
        assert_eq!(cast(F32, I32, 3.0e9), Ok(2147483647.0));
        assert_eq!(cast(F32, I32, -3.0e9), Ok(-2147483648.0));
        assert_eq!(cast(F32, I32, f64::INFINITY), Ok(2147483647.0));
        assert_eq!(cast(F32, I32, f64::NEG_INFINITY), Ok(-2147483648.0));
        assert_eq!(cast(F32, I32, f64::NAN), Ok(0.0));
        assert_eq!(cast(F16, I8, -1000.0), Ok(-128.0));
        assert_eq!(cast(I32, I8, 300.0), Ok(44.0));
        assert_eq!(cast(F32, I1, 0.5), Ok(1.0));
    }
}
