//! Masked stores with fallbacks, translated as `if … else`.
//!
//! `copy_r2g` stores two elements that are consecutive in memory as one vector store, masked on
//! `vec_ok`, and after it each element alone, masked on `in_bounds_k && !vec_ok` (`tile.min %in, %not`
//! with `%not = tile.select %vec_ok, false, true`). One `if` per store made the epilogue of a GEMM one
//! chain of blocks, each dominating the next (384 for `gemm.tir`'s 192 masked stores), in which LLVM's
//! straight-line strength reduction spent most of the compile time: its poison checks
//! (`ScalarEvolution::canReuseInstruction`) grow with that chain.
//!
//! So the block of a masked store (the *guard*) jumps over the stores that follow it as its fallbacks:
//! on the path where it stored, each fallback's mask is false, so skipping them — and the pure ops between
//! that compute their masks, when nothing else uses their results — changes nothing. The other path is as
//! before. One branch per pair on the common path, and a chain a third as deep.
//!
//! [`FallbackGuard::skips_to`] proves both conditions on the tile IR before the translator redirects the
//! guard's block: every op between the guard and the store is a masked store whose mask implies `!mask`
//! of the guard or a pure scalar op whose results are used only there.

use std::collections::HashMap;

use inkwell::basic_block::BasicBlock;

use tilec_ir::body::{BlockId, Body, Operation, Value};
use tilec_ir::ops::{typed, Literal, OpKind};
use tilec_ir::types::{ScalarType, Type};

/// A masked store that later stores may fall back from: its mask, where it sits in the tile IR, and the
/// LLVM block that stores (to be redirected past the fallbacks).
#[derive(Clone, Copy)]
pub(super) struct FallbackGuard<'ctx> {
    mask: Value,
    block: BlockId,
    index: usize,
    pub(super) then: BasicBlock<'ctx>,
}

/// How often each value is used in a function (operands of every op, nested blocks included).
pub(super) fn use_counts(body: &Body, entry: BlockId) -> HashMap<Value, u32> {
    let mut counts = HashMap::new();
    body.walk(entry, &mut |id| {
        for &v in &body.op(id).operands {
            *counts.entry(v).or_insert(0) += 1;
        }
    });
    counts
}

/// Where `op` sits: its block and its position there.
pub(super) fn position(body: &Body, op: &Operation) -> Option<(BlockId, usize)> {
    let block = op.parent?;
    let index = body.block(block).ops.iter().rposition(|&id| std::ptr::eq(body.op(id), op))?;
    Some((block, index))
}

impl<'ctx> FallbackGuard<'ctx> {
    /// The guard of a masked store at `(block, index)` whose storing block is `then`.
    pub(super) fn new(mask: Value, (block, index): (BlockId, usize), then: BasicBlock<'ctx>) -> Self {
        FallbackGuard { mask, block, index, then }
    }

    /// Whether a store masked on `mask` at `(block, _)` is a fallback of this guard: in the same block, and
    /// `mask` is `tile.min %x, %not` (either order; `i1`, so `and`) with `%not = tile.select %guard, false, true`.
    pub(super) fn is_fallback(&self, body: &Body, mask: Value, block: BlockId) -> bool {
        block == self.block && implies_not(body, mask, self.mask)
    }

    /// Whether the guard's block may jump past the store at `index` (a fallback): every op after the
    /// guard up to it is a fallback store, or a pure scalar op whose results are used only in that range.
    pub(super) fn skips_to(&self, body: &Body, uses: &HashMap<Value, u32>, index: usize) -> bool {
        let ops = &body.block(self.block).ops;
        let Some(range) = ops.get(self.index + 1..=index) else { return false };
        let mut inside: HashMap<Value, u32> = HashMap::new();
        for &id in range {
            for &v in &body.op(id).operands {
                *inside.entry(v).or_insert(0) += 1;
            }
        }
        range.iter().all(|&id| {
            let op = body.op(id);
            match op.kind {
                OpKind::Store => op.view::<typed::Store>().and_then(|s| s.mask).is_some_and(|m| implies_not(body, m, self.mask)),
                OpKind::Constant
                | OpKind::Add
                | OpKind::Sub
                | OpKind::Mul
                | OpKind::Min
                | OpKind::Max
                | OpKind::Cmp
                | OpKind::Select
                | OpKind::Extract
                | OpKind::Insert => op.results.iter().all(|r| uses.get(r).copied().unwrap_or(0) == inside.get(r).copied().unwrap_or(0)),
                _ => false,
            }
        })
    }
}

/// `mask` is `tile.min %x, %not` on `i1` (a logical and) with `%not = tile.select %guard, false, true`:
/// true only where `guard` is false.
fn implies_not(body: &Body, mask: Value, guard: Value) -> bool {
    let Some(def) = body.defining_op(mask) else { return false };
    let op = body.op(def);
    op.kind == OpKind::Min
        && matches!(body.ty(mask), Type::Scalar(ScalarType::I1))
        && op.operands.iter().any(|&n| is_not_of(body, n, guard))
}

/// `v = tile.select %guard, false, true`.
fn is_not_of(body: &Body, v: Value, guard: Value) -> bool {
    let Some(select) = body.defining_op(v).and_then(|id| body.op(id).view::<typed::Select>()) else { return false };
    select.cond == guard && bool_constant(body, select.true_value) == Some(false) && bool_constant(body, select.false_value) == Some(true)
}

/// The `i1` constant a value is defined as.
fn bool_constant(body: &Body, v: Value) -> Option<bool> {
    let constant = body.op(body.defining_op(v)?).view::<typed::Constant>()?;
    match constant.value {
        Literal::Bool(b) => Some(b),
        Literal::Int(n) => Some(n != 0),
        Literal::Float(_) => None,
    }
}
