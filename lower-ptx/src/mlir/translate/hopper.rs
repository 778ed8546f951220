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
//! | `nvgpu.tma.async.load` | `nvgpu.tma.async.load %desc[%x, ..], %group[%id] to %box` (upstream: `nvvm.cp.async.bulk.tensor.shared.cluster.global`) |
//! | `nvgpu.tma.async.store` | `nvgpu.tma.async.store %box to %desc[%x, ..]` (upstream: `nvvm.cp.async.bulk.tensor.global.shared.cta`) |
//! | `nvgpu.tma.commit_group` | `nvvm.cp.async.bulk.commit.group` |
//! | `nvgpu.tma.wait_group` | `nvvm.cp.async.bulk.wait_group N` (`{read}`) |
//! | `nvgpu.fence.proxy.async` | `nvvm.fence.proxy {kind = async.shared, space = cta}` |
//!
//! A tensor map is the kernel's `!llvm.ptr` parameter (`llvm.byval`, `nvvm.grid_constant`: the kernel is an
//! `llvm.func`, see `func.rs`) cast to `!nvgpu.tensormap.descriptor<tensor = memref<box, 3>, swizzle = ..,
//! l2promo = none, oob = zero, interleave = none>`, which upstream lowers back to that pointer; the box is the
//! shared tile's flat memref reinterpreted with the box's shape (the op checks the two agree). Coordinates go
//! innermost first.
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

/// The tensor map `map` as a descriptor value, its type, and the shared tile `shared` as a memref of the box's
/// shape (and that type).
fn tma_operands(t: &mut FuncEmitter<'_>, op: &Operation, map: usize, shared: Value) -> Result<(String, String, String, String)> {
    let Some(m) = t.kernel.tensor_maps.get(map).cloned() else { return Err(super::internal("a kernel tensor map")) };
    let elem = super::types::scalar_type(m.elem).ok_or_else(|| super::internal("TMA elements are addressable"))?;
    let dims: Vec<String> = m.box_shape.iter().map(u64::to_string).collect();
    let box_ty = format!("memref<{}x{elem}, {WORKGROUP}>", dims.join("x"));
    let mut strides = vec![1u64; m.box_shape.len()];
    for axis in (0..m.box_shape.len().saturating_sub(1)).rev() {
        strides[axis] = strides[axis + 1] * m.box_shape[axis + 1];
    }
    let strides: Vec<String> = strides.iter().map(u64::to_string).collect();
    let flat = t.memref(op, shared)?;
    let (flat_name, flat_ty) = (flat.base.name.clone(), flat.base.ty.clone());
    let boxed = t.emit(&format!(
        "memref.reinterpret_cast {flat_name} to offset: [0], sizes: [{}], strides: [{}] : {flat_ty} to {box_ty}",
        dims.join(", "),
        strides.join(", ")
    ));
    let swizzle = match m.swizzle {
        tilec_ir::layout::SwizzleMode::None => "none",
        tilec_ir::layout::SwizzleMode::B32 => "swizzle_32b",
        tilec_ir::layout::SwizzleMode::B64 => "swizzle_64b",
        tilec_ir::layout::SwizzleMode::B128 => "swizzle_128b",
    };
    let desc_ty = format!("!nvgpu.tensormap.descriptor<tensor = {box_ty}, swizzle = {swizzle}, l2promo = none, oob = zero, interleave = none>");
    let param = t.tensor_maps.get(&map).cloned().ok_or_else(|| super::internal("every tensor map is bound to its parameter"))?;
    let desc = t.emit(&format!("builtin.unrealized_conversion_cast {param} : !llvm.ptr to {desc_ty}"));
    Ok((desc, desc_ty, boxed, box_ty))
}

/// The coordinates' SSA names, innermost first.
fn tma_coords(t: &FuncEmitter<'_>, op: &Operation, coords: &[Value]) -> Result<String> {
    let names = coords.iter().rev().map(|&c| t.name(op, c)).collect::<Result<Vec<_>>>()?;
    Ok(names.join(", "))
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

    fn tma_async_load(&mut self, op: &Operation, v: &typed::TmaAsyncLoad, map: usize) -> Result<()> {
        let (desc, desc_ty, boxed, box_ty) = tma_operands(self, op, map, v.dst)?;
        let (g, gty) = group(self, op, v.barriers)?;
        let id = self.name(op, v.mbar_id)?;
        let coords = tma_coords(self, op, &v.coords)?;
        let p = predicate(self, op, v.predicate)?;
        self.line(&format!("nvgpu.tma.async.load {desc}[{coords}], {g}[{id}] to {boxed}{p} : {desc_ty}, {gty} -> {box_ty}"));
        Ok(())
    }

    fn tma_async_store(&mut self, op: &Operation, v: &typed::TmaAsyncStore, map: usize) -> Result<()> {
        let (desc, desc_ty, boxed, box_ty) = tma_operands(self, op, map, v.src)?;
        let coords = tma_coords(self, op, &v.coords)?;
        let p = predicate(self, op, v.predicate)?;
        self.line(&format!("nvgpu.tma.async.store {boxed} to {desc}[{coords}]{p} : {box_ty} -> {desc_ty}"));
        Ok(())
    }

    fn tma_commit_group(&mut self, _op: &Operation) -> Result<()> {
        self.line("nvvm.cp.async.bulk.commit.group");
        Ok(())
    }

    fn tma_wait_group(&mut self, _op: &Operation, v: &typed::TmaWaitGroup) -> Result<()> {
        let read = if v.read { " {read}" } else { "" };
        self.line(&format!("nvvm.cp.async.bulk.wait_group {}{read}", v.num_groups));
        Ok(())
    }

    fn fence_proxy_async(&mut self, _op: &Operation) -> Result<()> {
        self.line("nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}");
        Ok(())
    }

    fn setmaxnreg(&mut self, _op: &Operation, increase: bool, count: u32) -> Result<()> {
        let action = if increase { "increase" } else { "decrease" };
        self.line(&format!("nvvm.setmaxregister {action} {count}"));
        Ok(())
    }
}
