//! Side effects of ops: what CSE may merge and DCE may delete.
//!
//! An op is *pure* when its results depend only on its operands and attributes and running it changes
//! nothing else: scalar arithmetic, comparisons, casts, block/thread ids, `tile.dim`, `tile.splat`,
//! `tile.fill`, `nvgpu.extract`/`insert`, `tile.transpose`, `tile.convert_layout` (a value's redistribution: layout
//! assignment expands the ones that go through shared memory into copies, which are not pure). Everything that touches memory (copies, loads, stores,
//! `ldmatrix`, async copies), synchronizes (barriers, async groups), or allocates (`tile.alloc_shared`:
//! two allocations are two buffers) is not. `tile.mma` and `nvgpu.mma.sync` compute a value only, but are
//! kept out of the pure set on purpose: they are warp-collective, and merging or dropping them is the
//! business of the lowering, not of a cleanup pass.
//!
//! `tile.div` and `tile.rem` are pure but *may trap*: a division by zero is a run-time error, so DCE
//! deletes them only when the divisor is a known non-zero constant.

use tilec_ir::ops::Literal;
use tilec_ir::typed::AnyOp;
use tilec_ir::{Body, OpId, OpKind};

/// How freely an op may be merged, moved or deleted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purity {
    /// No effects, never fails.
    Pure,
    /// No effects, but may raise a run-time error (`div`/`rem` by zero).
    PureMayTrap,
    /// Reads or writes memory, synchronizes, allocates, or has regions or is a terminator.
    Effectful,
}

/// The purity of an op kind.
pub fn purity(kind: OpKind) -> Purity {
    use OpKind::*;
    match kind {
        Constant | BlockId | GridDim | Dim | Add | Sub | Mul | Min | Max | Fma | Cmp | Select | Cast | Splat | Fill | ThreadId
        | LaneId | WarpId | Extract | Insert | Neg | Abs | Exp | Exp2 | Log | Sqrt | Rsqrt | Tanh | Sigmoid | ConvertLayout | Transpose => Purity::Pure,
        Div | Rem => Purity::PureMayTrap,
        _ => Purity::Effectful,
    }
}

/// Pure or pure-may-trap: identical instances compute identical values (CSE may merge them).
pub fn is_pure(kind: OpKind) -> bool {
    purity(kind) != Purity::Effectful
}

/// Whether this op may raise a run-time error: a `div`/`rem` whose divisor is not a known non-zero
/// constant (scalar `tile.constant` or `tile.fill`).
pub fn may_trap(body: &Body, op: OpId) -> bool {
    let op = body.op(op);
    if purity(op.kind) != Purity::PureMayTrap {
        return false;
    }
    let divisor = match AnyOp::from_op(op) {
        Some(AnyOp::Div(div)) => div.rhs,
        Some(AnyOp::Rem(rem)) => rem.rhs,
        _ => return true,
    };
    let Some(def) = body.defining_op(divisor).map(|d| body.op(d)) else { return true };
    let value = match AnyOp::from_op(def) {
        Some(AnyOp::Constant(constant)) => constant.value,
        Some(AnyOp::Fill(fill)) => fill.value,
        _ => return true,
    };
    let nonzero = match value {
        Literal::Int(n) => n != 0,
        Literal::Float(x) => x != 0.0 && !x.is_nan(),
        Literal::Bool(_) => false,
    };
    !nonzero
}

/// Whether deleting this op changes nothing when its results are unused.
pub fn is_trivially_dead_if_unused(body: &Body, op: OpId) -> bool {
    let kind = body.op(op).kind;
    is_pure(kind) && !may_trap(body, op)
}
