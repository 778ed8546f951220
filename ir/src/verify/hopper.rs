//! Rules of the Hopper ops of the `nvgpu` dialect (issue 18): `nvgpu.mbarrier.*`, shaped like MLIR's, and
//! the wgmma synchronization (`nvgpu.wgmma.fence/commit_group/wait_group`, NVVM's `wgmma.*`), which needs
//! whole warpgroups (num_warps a multiple of 4), as does `nvgpu.setmaxnreg.inc/dec`.
//!
//! An mbarrier group is the result of `nvgpu.mbarrier.create`: a rank-1 shared tile of `index` (one 64-bit
//! word per barrier). Every mbarrier op names its group and one barrier of it (`%bars[%id]`), and only a
//! group made by `nvgpu.mbarrier.create` is one (a plain shared tile of `index` is data, not barriers). Counts
//! and ids are `index`, the phase parity and the predicate `i1`, as in MLIR. Which target lowers them is the
//! catalogue's (`OpKind::min_target`: sm_90), checked where the target is known (`tilec check --target`).
//!
//! TMA (`nvgpu.tma.async.load/store`): the tensor map follows from the global tile argument and the shared
//! tile (`crate::tma`, whose limits the verifier reports at the op); a load completes on a barrier of a group.

use crate::body::{Operation, Value};
use crate::ops::typed::{self, AnyOp};
use crate::ops::OpKind;
use crate::types::{MemorySpace, ScalarType, Type};
use crate::verify::Verifier;

/// The rules of one Hopper op; `false` when `typed` is not one (the caller goes on with its own rules).
pub(super) fn verify(v: &mut Verifier<'_>, op: &Operation, typed: &AnyOp) -> bool {
    match typed {
        AnyOp::MBarrierCreate(_) => create(v, op),
        AnyOp::MBarrierInit(init) => {
            group(v, op, init.barriers, init.mbar_id);
            scalar(v, op, init.count, ScalarType::Index, "the arrival count");
            predicate(v, op, init.predicate);
        }
        AnyOp::MBarrierArrive(arrive) => group(v, op, arrive.barriers, arrive.mbar_id),
        AnyOp::MBarrierArriveExpectTx(arrive) => {
            group(v, op, arrive.barriers, arrive.mbar_id);
            scalar(v, op, arrive.txcount, ScalarType::Index, "the transaction count");
            predicate(v, op, arrive.predicate);
        }
        AnyOp::MBarrierTryWaitParity(wait) => {
            group(v, op, wait.barriers, wait.mbar_id);
            scalar(v, op, wait.phase_parity, ScalarType::I1, "the phase parity");
            scalar(v, op, wait.ticks, ScalarType::Index, "the suspend-time hint");
        }
        AnyOp::WgmmaFence(_) | AnyOp::WgmmaCommitGroup(_) => whole_warpgroups(v, op),
        AnyOp::WgmmaWaitGroup(wait) => {
            whole_warpgroups(v, op);
            if wait.num_groups > 7 {
                v.error(op.span, format!("'nvgpu.wgmma.wait_group' numGroups must be an integer in 0..=7, found {}", wait.num_groups));
            }
        }
        AnyOp::SetMaxNRegInc(typed::SetMaxNRegInc { count }) | AnyOp::SetMaxNRegDec(typed::SetMaxNRegDec { count }) => {
            whole_warpgroups(v, op);
            if !(24..=256).contains(count) || !count.is_multiple_of(8) {
                v.error(op.span, format!("'{}' count must be a multiple of 8 in 24..=256, found {count}", op.kind));
            }
        }
        AnyOp::TmaAsyncLoad(load) => {
            tensor_map(v, op, load.tensor, load.dst, &load.coords);
            group(v, op, load.barriers, load.mbar_id);
            predicate(v, op, load.predicate);
        }
        AnyOp::TmaAsyncStore(store) => {
            tensor_map(v, op, store.tensor, store.src, &store.coords);
            predicate(v, op, store.predicate);
        }
        AnyOp::TmaWaitGroup(wait) if wait.num_groups > 7 => {
            v.error(op.span, format!("'nvgpu.tma.wait_group' numGroups must be an integer in 0..=7, found {}", wait.num_groups));
        }
        AnyOp::TmaCommitGroup(_) | AnyOp::TmaWaitGroup(_) | AnyOp::FenceProxyAsync(_) => {}
        _ => return false,
    }
    true
}

/// A TMA op's tensor map ([`crate::tma::tensor_map_of`]: a global tile argument, a shared tile whose shape
/// is the box and whose layout names the swizzle mode) and one `index` coordinate per axis.
fn tensor_map(v: &mut Verifier<'_>, op: &Operation, tensor: Value, shared: Value, coords: &[Value]) {
    match crate::tma::tensor_map_of(v.func, tensor, shared) {
        Ok(map) => {
            if coords.len() != map.rank {
                v.error(op.span, format!("'{}' needs {} coordinates (one per axis of the tensor), found {}", op.kind, map.rank, coords.len()));
            }
        }
        Err(message) => v.error(op.span, format!("'{}': {message}", op.kind)),
    }
    for &c in coords {
        scalar(v, op, c, ScalarType::Index, "a coordinate");
    }
}

/// The `wgmma` instructions are warpgroup-wide (`.sync.aligned` over 4 warps): the kernel's warps must
/// form whole warpgroups.
fn whole_warpgroups(v: &mut Verifier<'_>, op: &Operation) {
    let warps = crate::KernelAttrs::of(v.func).map_or(crate::ops::kernel::DEFAULT_NUM_WARPS, |a| a.num_warps);
    if !warps.is_multiple_of(4) {
        v.error(op.span, format!("'{}' is warpgroup-wide: the kernel's num_warps must be a multiple of 4, found {warps}", op.kind));
    }
}

/// `nvgpu.mbarrier.create : tile<N x index, shared>` with 1 <= N.
fn create(v: &mut Verifier<'_>, op: &Operation) {
    let Some(ty) = v.result_type(op) else { return };
    let ok = matches!(ty, Type::Tile(t) if t.space == MemorySpace::Shared && t.elem == ScalarType::Index
        && t.rank() == 1 && t.layout.is_none() && t.num_elements().is_some_and(|n| n >= 1));
    if !ok {
        v.error(op.span, format!("'nvgpu.mbarrier.create' makes a group of N barriers, 'tile<Nxindex, shared>' (one 64-bit word each), not '{ty}'"));
    }
}

/// `barriers` is a group made by `nvgpu.mbarrier.create`, and `id` an `index`.
fn group(v: &mut Verifier<'_>, op: &Operation, barriers: Value, id: Value) {
    let body = &v.func.body;
    let made_by_create = body.defining_op(barriers).is_some_and(|d| body.op(d).kind == OpKind::MBarrierCreate);
    if !made_by_create {
        let ty = v.ty(barriers);
        v.error(op.span, format!("'{}' needs a barrier group made by 'nvgpu.mbarrier.create', found '{ty}'", op.kind));
    }
    scalar(v, op, id, ScalarType::Index, "the barrier's index in its group");
}

fn scalar(v: &mut Verifier<'_>, op: &Operation, x: Value, want: ScalarType, what: &str) {
    let ty = v.ty(x);
    if ty != &Type::Scalar(want) {
        v.error(op.span, format!("'{}': {what} must be '{want}', found '{ty}'", op.kind));
    }
}

fn predicate(v: &mut Verifier<'_>, op: &Operation, p: Option<Value>) {
    if let Some(p) = p {
        scalar(v, op, p, ScalarType::I1, "the predicate");
    }
}
