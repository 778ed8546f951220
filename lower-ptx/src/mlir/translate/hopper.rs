//! Hopper nvgpu ops → upstream MLIR `nvgpu` ops, lowered by the upstream `convert-nvgpu-to-nvvm` (issue 18):
//! the spine's [`EmitHopper`], one method per op kind.
//!
//! | tilec op | MLIR |
//! |---|---|
//! | `nvgpu.mbarrier.create` | a shared `memref<N x index>` (as every shared tile), cast to `!nvgpu.mbarrier.group` at each use |
//! | `nvgpu.mbarrier.init` | `nvgpu.mbarrier.init` (with `predicate = %p`) |
//! | `nvgpu.mbarrier.arrive` | `nvgpu.mbarrier.arrive` (its token unused) |
//! | `nvgpu.mbarrier.arrive.expect_tx` | `nvgpu.mbarrier.arrive.expect_tx` (with `predicate = %p`) |
//! | `nvgpu.mbarrier.try_wait.parity` | `nvgpu.mbarrier.try_wait.parity` (upstream: a `try_wait` loop) |
//! | `nvgpu.wgmma.fence` | `nvvm.wgmma.fence.aligned` (upstream's nvgpu has no such op: its `warpgroup.mma` emits these) |
//! | `nvgpu.wgmma.commit_group` | `nvvm.wgmma.commit.group.sync.aligned` |
//! | `nvgpu.wgmma.wait_group` | `nvvm.wgmma.wait.group.sync.aligned N` |
//! | `nvgpu.setmaxnreg.inc/dec` | `nvvm.setmaxregister increase/decrease N` |
//!
//! The group is a `builtin.unrealized_conversion_cast` of the shared memref to the group type; the upstream
//! lowering turns the group back into the same `memref<N x i64, 3>` descriptor, so
//! `reconcile-unrealized-casts` removes the casts.

use tilec_ir::body::{Operation, Value};
use tilec_ir::ops::typed;

use super::func::{FuncEmitter, WORKGROUP};
use super::Result;
use crate::spine::EmitHopper;

/// The group `bars` as an `!nvgpu.mbarrier.group` value, and that type.
fn group(t: &mut FuncEmitter<'_>, op: &Operation, bars: Value) -> Result<(String, String)> {
    let memref = t.memref(op, bars)?;
    let (name, ty) = (memref.base.name.clone(), memref.base.ty.clone());
    let n = memref.extents.iter().map(|e| match e {
        crate::spine::Extent::Static(n) => *n,
        crate::spine::Extent::Dynamic(_) => 0,
    });
    let n: u64 = n.product();
    let group_ty = format!("!nvgpu.mbarrier.group<memorySpace = {WORKGROUP}, num_barriers = {n}>");
    let g = t.emit(&format!("builtin.unrealized_conversion_cast {name} : {ty} to {group_ty}"));
    Ok((g, group_ty))
}

/// `, predicate = %p`, or nothing.
fn predicate(t: &FuncEmitter<'_>, op: &Operation, p: Option<Value>) -> Result<String> {
    Ok(match p {
        Some(p) => format!(", predicate = {}", t.name(op, p)?),
        None => String::new(),
    })
}

impl EmitHopper for FuncEmitter<'_> {
    fn mbarrier_init(&mut self, op: &Operation, v: &typed::MBarrierInit) -> Result<()> {
        let (g, gty) = group(self, op, v.barriers)?;
        let (id, count) = (self.name(op, v.mbar_id)?, self.name(op, v.count)?);
        let p = predicate(self, op, v.predicate)?;
        self.line(&format!("nvgpu.mbarrier.init {g}[{id}], {count}{p} : {gty}"));
        Ok(())
    }

    fn mbarrier_arrive(&mut self, op: &Operation, v: &typed::MBarrierArrive) -> Result<()> {
        let (g, gty) = group(self, op, v.barriers)?;
        let id = self.name(op, v.mbar_id)?;
        self.emit(&format!("nvgpu.mbarrier.arrive {g}[{id}] : {gty} -> !nvgpu.mbarrier.token"));
        Ok(())
    }

    fn mbarrier_arrive_expect_tx(&mut self, op: &Operation, v: &typed::MBarrierArriveExpectTx) -> Result<()> {
        let (g, gty) = group(self, op, v.barriers)?;
        let (id, tx) = (self.name(op, v.mbar_id)?, self.name(op, v.txcount)?);
        let p = predicate(self, op, v.predicate)?;
        self.line(&format!("nvgpu.mbarrier.arrive.expect_tx {g}[{id}], {tx}{p} : {gty}"));
        Ok(())
    }

    fn mbarrier_try_wait_parity(&mut self, op: &Operation, v: &typed::MBarrierTryWaitParity) -> Result<()> {
        let (g, gty) = group(self, op, v.barriers)?;
        let (id, parity, ticks) = (self.name(op, v.mbar_id)?, self.name(op, v.phase_parity)?, self.name(op, v.ticks)?);
        self.line(&format!("nvgpu.mbarrier.try_wait.parity {g}[{id}], {parity}, {ticks} : {gty}"));
        Ok(())
    }

    fn wgmma_fence(&mut self, _op: &Operation, _v: &typed::WgmmaFence) -> Result<()> {
        self.line("nvvm.wgmma.fence.aligned");
        Ok(())
    }

    fn wgmma_commit_group(&mut self, _op: &Operation, _v: &typed::WgmmaCommitGroup) -> Result<()> {
        self.line("nvvm.wgmma.commit.group.sync.aligned");
        Ok(())
    }

    fn wgmma_wait_group(&mut self, _op: &Operation, v: &typed::WgmmaWaitGroup) -> Result<()> {
        self.line(&format!("nvvm.wgmma.wait.group.sync.aligned {}", v.num_groups));
        Ok(())
    }

    fn setmaxnreg(&mut self, _op: &Operation, increase: bool, count: u32) -> Result<()> {
        let action = if increase { "increase" } else { "decrease" };
        self.line(&format!("nvvm.setmaxregister {action} {count}"));
        Ok(())
    }
}
