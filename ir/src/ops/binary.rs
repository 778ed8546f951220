//! The elementwise binary ops (`tile.add` .. `tile.max`, [`OpKind::is_binary_arith`]) as one type, for code
//! that reads or builds arithmetic by kind (the builder, the lowering, the pipeliner, the rasterizer): each
//! builds through its op's typed view.

use crate::body::{OpSpec, Operation, Value};
use crate::ops::typed::{self, AnyOp};
use crate::ops::{OpKind, TypedOp};

/// One of the elementwise binary ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryArith {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Min,
    Max,
}

impl BinaryArith {
    /// Which binary op `op` is, with its operands `(lhs, rhs)`; `None` for any other op.
    pub fn of_op(op: &Operation) -> Option<(BinaryArith, Value, Value)> {
        Some(match AnyOp::from_op(op)? {
            AnyOp::Add(typed::Add { lhs, rhs }) => (BinaryArith::Add, lhs, rhs),
            AnyOp::Sub(typed::Sub { lhs, rhs }) => (BinaryArith::Sub, lhs, rhs),
            AnyOp::Mul(typed::Mul { lhs, rhs }) => (BinaryArith::Mul, lhs, rhs),
            AnyOp::Div(typed::Div { lhs, rhs }) => (BinaryArith::Div, lhs, rhs),
            AnyOp::Rem(typed::Rem { lhs, rhs }) => (BinaryArith::Rem, lhs, rhs),
            AnyOp::Min(typed::Min { lhs, rhs }) => (BinaryArith::Min, lhs, rhs),
            AnyOp::Max(typed::Max { lhs, rhs }) => (BinaryArith::Max, lhs, rhs),
            _ => return None,
        })
    }

    /// The binary op of this kind, if it is one.
    pub fn from_kind(kind: OpKind) -> Option<BinaryArith> {
        Some(match kind {
            OpKind::Add => BinaryArith::Add,
            OpKind::Sub => BinaryArith::Sub,
            OpKind::Mul => BinaryArith::Mul,
            OpKind::Div => BinaryArith::Div,
            OpKind::Rem => BinaryArith::Rem,
            OpKind::Min => BinaryArith::Min,
            OpKind::Max => BinaryArith::Max,
            _ => return None,
        })
    }

    /// `lhs <op> rhs`, ready for a result type.
    pub fn spec(self, lhs: Value, rhs: Value) -> OpSpec {
        match self {
            BinaryArith::Add => typed::Add { lhs, rhs }.into_spec(),
            BinaryArith::Sub => typed::Sub { lhs, rhs }.into_spec(),
            BinaryArith::Mul => typed::Mul { lhs, rhs }.into_spec(),
            BinaryArith::Div => typed::Div { lhs, rhs }.into_spec(),
            BinaryArith::Rem => typed::Rem { lhs, rhs }.into_spec(),
            BinaryArith::Min => typed::Min { lhs, rhs }.into_spec(),
            BinaryArith::Max => typed::Max { lhs, rhs }.into_spec(),
        }
    }
}
