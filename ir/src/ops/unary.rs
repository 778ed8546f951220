//! The elementwise unary ops (`tile.neg` and the float math functions, [`OpKind::is_unary_math`]) as one
//! type, for code that treats them alike (verifier, interpreter, simulator, lowering, both backends): each
//! reads and builds through its op's typed view, so a new math function is one catalogue entry, one variant
//! here, its element function and its instruction.

use crate::body::{OpSpec, Operation, Value};
use crate::ops::typed::{self, AnyOp};
use crate::ops::{OpKind, TypedOp};

/// The pattern matching the typed view (`AnyOp`) of every unary op: `view @ unary_math_view!() => ..` then
/// [`UnaryMath::of_view`], so the list of unary ops is written here alone and matches stay exhaustive.
#[macro_export]
macro_rules! unary_math_view {
    () => {
        $crate::ops::typed::AnyOp::Neg(_)
            | $crate::ops::typed::AnyOp::Abs(_)
            | $crate::ops::typed::AnyOp::Exp(_)
            | $crate::ops::typed::AnyOp::Exp2(_)
            | $crate::ops::typed::AnyOp::Log(_)
            | $crate::ops::typed::AnyOp::Sqrt(_)
            | $crate::ops::typed::AnyOp::Rsqrt(_)
            | $crate::ops::typed::AnyOp::Tanh(_)
            | $crate::ops::typed::AnyOp::Sigmoid(_)
    };
}

/// One of the elementwise unary ops, with its attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryMath {
    Neg,
    Abs,
    Exp,
    /// `ftz`: flush subnormal inputs and results (`ex2.approx.ftz.f32`).
    Exp2 { ftz: bool },
    Log,
    Sqrt,
    Rsqrt,
    Tanh,
    Sigmoid,
}

impl UnaryMath {
    /// Which unary op `op` is, with its operand; `None` for any other op.
    pub fn of_op(op: &Operation) -> Option<(UnaryMath, Value)> {
        UnaryMath::of_view(&AnyOp::from_op(op)?)
    }

    /// The same of an op's typed view.
    pub fn of_view(view: &AnyOp) -> Option<(UnaryMath, Value)> {
        Some(match *view {
            AnyOp::Neg(typed::Neg { source }) => (UnaryMath::Neg, source),
            AnyOp::Abs(typed::Abs { source }) => (UnaryMath::Abs, source),
            AnyOp::Exp(typed::Exp { source }) => (UnaryMath::Exp, source),
            AnyOp::Exp2(typed::Exp2 { source, ftz }) => (UnaryMath::Exp2 { ftz }, source),
            AnyOp::Log(typed::Log { source }) => (UnaryMath::Log, source),
            AnyOp::Sqrt(typed::Sqrt { source }) => (UnaryMath::Sqrt, source),
            AnyOp::Rsqrt(typed::Rsqrt { source }) => (UnaryMath::Rsqrt, source),
            AnyOp::Tanh(typed::Tanh { source }) => (UnaryMath::Tanh, source),
            AnyOp::Sigmoid(typed::Sigmoid { source }) => (UnaryMath::Sigmoid, source),
            _ => return None,
        })
    }

    /// The op's kind.
    pub fn kind(self) -> OpKind {
        match self {
            UnaryMath::Neg => OpKind::Neg,
            UnaryMath::Abs => OpKind::Abs,
            UnaryMath::Exp => OpKind::Exp,
            UnaryMath::Exp2 { .. } => OpKind::Exp2,
            UnaryMath::Log => OpKind::Log,
            UnaryMath::Sqrt => OpKind::Sqrt,
            UnaryMath::Rsqrt => OpKind::Rsqrt,
            UnaryMath::Tanh => OpKind::Tanh,
            UnaryMath::Sigmoid => OpKind::Sigmoid,
        }
    }

    /// Whether the op also takes signed integers (`tile.neg`, `tile.abs`: wrapping); the others take floats.
    pub fn takes_signed_integers(self) -> bool {
        matches!(self, UnaryMath::Neg | UnaryMath::Abs)
    }

    /// The op of `source`, ready for a result type.
    pub fn spec(self, source: Value) -> OpSpec {
        match self {
            UnaryMath::Neg => typed::Neg { source }.into_spec(),
            UnaryMath::Abs => typed::Abs { source }.into_spec(),
            UnaryMath::Exp => typed::Exp { source }.into_spec(),
            UnaryMath::Exp2 { ftz } => typed::Exp2 { source, ftz }.into_spec(),
            UnaryMath::Log => typed::Log { source }.into_spec(),
            UnaryMath::Sqrt => typed::Sqrt { source }.into_spec(),
            UnaryMath::Rsqrt => typed::Rsqrt { source }.into_spec(),
            UnaryMath::Tanh => typed::Tanh { source }.into_spec(),
            UnaryMath::Sigmoid => typed::Sigmoid { source }.into_spec(),
        }
    }

    /// The exact function on one element (computed in f64; the caller rounds to the element type). Integers
    /// (`tile.neg`, `tile.abs`) are exact in f64 and wrap when rounded to their type.
    pub fn eval(self, x: f64) -> f64 {
        match self {
            UnaryMath::Neg => -x,
            UnaryMath::Abs => x.abs(),
            UnaryMath::Exp => x.exp(),
            UnaryMath::Exp2 { .. } => x.exp2(),
            UnaryMath::Log => x.ln(),
            UnaryMath::Sqrt => x.sqrt(),
            UnaryMath::Rsqrt => 1.0 / x.sqrt(),
            UnaryMath::Tanh => x.tanh(),
            UnaryMath::Sigmoid => 1.0 / (1.0 + (-x).exp()),
        }
    }
}
