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
//! | `nvgpu.warpgroup.generate.descriptor` | the element's shared address (`memref.extract_aligned_pointer_as_index` + offset), `(a & 0x3ffff) >> 4`, or'ed with the constant fields, as `arith` on `i64` |
//! | `nvgpu.warpgroup.mma` | `nvvm.wgmma.mma_async` (C and D as `!llvm.struct`), A `row` and B `col` (both K-major); A from registers: `llvm.inline_asm` of `spine::wgmma_asm` (NVVM's op takes A only through a descriptor) |
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
//! Why not upstream's `nvgpu.warpgroup.*`: its `generate.descriptor` takes the swizzle from a TMA descriptor's
//! type (`!nvgpu.tensormap.descriptor`) and fixes the offsets (LBO = rows x swizzle bytes, SBO = 8 x swizzle
//! bytes), and its `warpgroup.mma` covers a whole tile with several instructions, stepping the descriptors by
//! its own layout assumptions and placing fence/commit/wait itself; here one op is one instruction with the
//! offsets and the synchronization explicit, so both go to NVVM directly (the same PTX upstream would emit).
//!
//! The group is a `builtin.unrealized_conversion_cast` of the shared memref to the group type; the upstream
//! lowering turns the group back into the same `memref<N x i64, 3>` descriptor, so
//! `reconcile-unrealized-casts` removes the casts.

use tilec_ir::body::{Operation, Value};
use tilec_ir::ops::typed;

use super::func::{FuncEmitter, WORKGROUP};
use super::Result;
use crate::spine::{wgmma_asm, wgmma_descriptor_bits, wgmma_register_a, wgmma_types, EmitHopper};

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

    fn warpgroup_generate_descriptor(&mut self, op: &Operation, v: &typed::WarpgroupGenerateDescriptor) -> Result<()> {
        let elem_bytes = u64::from(self.memref(op, v.tensor)?.elem.bit_width() / 8);
        let (m, mty, offset) = self.element_offset(op, v.tensor, &v.indices, 1)?;
        let base = self.emit(&format!("memref.extract_aligned_pointer_as_index {m} : {mty} -> index"));
        let size = self.index_constant(elem_bytes as i64);
        let bytes = self.emit(&format!("arith.muli {offset}, {size} : index"));
        let address = self.emit(&format!("arith.addi {base}, {bytes} : index"));
        let address = self.emit(&format!("arith.index_cast {address} : index to i64"));
        let mask = self.emit(&format!("arith.constant {} : i64", tilec_ir::ops::wgmma::START_ADDRESS_MASK));
        let four = self.emit("arith.constant 4 : i64");
        let fields = self.emit(&format!("arith.constant {} : i64", wgmma_descriptor_bits(v) as i64));
        let start = self.emit(&format!("arith.andi {address}, {mask} : i64"));
        let start = self.emit(&format!("arith.shrui {start}, {four} : i64"));
        let desc = self.emit(&format!("arith.ori {start}, {fields} : i64"));
        let desc = self.emit(&format!("arith.index_cast {desc} : i64 to index"));
        self.set_result(op, desc)
    }

    fn warpgroup_mma(&mut self, op: &Operation, v: &typed::WarpgroupMma) -> Result<()> {
        let (ta, tb, td) = wgmma_types(self.func, v)
            .ok_or_else(|| self.kernel.unsupported(op, "its descriptors must come from 'nvgpu.warpgroup.generate.descriptor' of f16, bf16, s8 or u8 tiles"))?;
        let (n, k) = (v.mma_shape.n, v.mma_shape.k);
        let count = (n / 2) as usize;
        let elem = if td == "f32" { "f32" } else { "i32" };
        let (cv, cty) = self.value(op, v.matrix_c)?;
        let st = format!("!llvm.struct<({})>", vec![elem; count].join(", "));
        let mut acc = self.emit(&format!("llvm.mlir.undef : {st}"));
        for i in 0..count {
            let x = self.emit(&format!("vector.extract {cv}[{i}] : {elem} from {cty}"));
            acc = self.emit(&format!("llvm.insertvalue {x}, {acc}[{i}] : {st}"));
        }
        if wgmma_register_a(self.func, v) {
            return self.warpgroup_mma_register_a(op, v, (ta, tb, td), acc, &st, &cty);
        }
        let mut descriptors = Vec::new();
        for d in [v.descriptor_a, v.descriptor_b] {
            let d = self.name(op, d)?;
            descriptors.push(self.emit(&format!("arith.index_cast {d} : index to i64")));
        }
        let (scale_out, overflow) = if td == "f32" { ("#nvvm.wgmma_scale_out<one>", "") } else { ("#nvvm.wgmma_scale_out<one>", ", <wrapped>") };
        // NVVM's layouts: A `row` is K-major (`col` MN-major, imm-trans-a 1); B `col` is K-major (`row` MN-major).
        let layout_a = if v.transpose_a { "col" } else { "row" };
        let layout_b = if v.transpose_b { "row" } else { "col" };
        let d = self.emit(&format!(
            "nvvm.wgmma.mma_async {}, {}, {acc}, #nvvm.shape<m = 64, n = {n}, k = {k}>, D [<{td}>, {scale_out}{overflow}], A [<{ta}>, #nvvm.wgmma_scale_in<one>, <{layout_a}>], B [<{tb}>, #nvvm.wgmma_scale_in<one>, <{layout_b}>] : {st} -> {st}",
            descriptors[0], descriptors[1]
        ));
        let zero = if elem == "f32" { "0.0 : f32" } else { "0 : i32" };
        let z = self.emit(&format!("arith.constant {zero}"));
        let mut out = self.emit(&format!("vector.broadcast {z} : {elem} to {cty}"));
        for i in 0..count {
            let x = self.emit(&format!("llvm.extractvalue {d}[{i}] : {st}"));
            out = self.emit(&format!("vector.insert {x}, {out} [{i}] : {elem} into {cty}"));
        }
        self.set_result(op, out)
    }

}

impl FuncEmitter<'_> {
    /// `nvgpu.warpgroup.mma` with A from registers: `llvm.inline_asm` of the PTX both backends emit
    /// ([`wgmma_asm`]; NVVM's `nvvm.wgmma.mma_async` takes A only through a descriptor). A's fragment
    /// (`vector<4x2xf16>`, ...) is bit-cast to four `i32` registers; `acc` is C as the struct D is.
    fn warpgroup_mma_register_a(&mut self, op: &Operation, v: &typed::WarpgroupMma, types: (&str, &str, &str), acc: String, st: &str, cty: &str) -> Result<()> {
        let (n, k) = (v.mma_shape.n, v.mma_shape.k);
        let count = (n / 2) as usize;
        let elem = if types.2 == "f32" { "f32" } else { "i32" };
        let mut operands = Vec::with_capacity(count + 6);
        let mut operand_types = Vec::with_capacity(count + 6);
        for i in 0..count {
            operands.push(self.emit(&format!("llvm.extractvalue {acc}[{i}] : {st}")));
            operand_types.push(elem.to_string());
        }
        let (a, aty) = self.value(op, v.descriptor_a)?;
        let words = self.emit(&format!("vector.bitcast {a} : {aty} to vector<4x1xi32>"));
        for i in 0..4 {
            operands.push(self.emit(&format!("vector.extract {words}[{i}, 0] : i32 from vector<4x1xi32>")));
            operand_types.push("i32".to_string());
        }
        let b = self.name(op, v.descriptor_b)?;
        operands.push(self.emit(&format!("arith.index_cast {b} : index to i64")));
        operand_types.push("i64".to_string());
        operands.push(self.emit("arith.constant 1 : i32"));
        operand_types.push("i32".to_string());
        let reg = if elem == "f32" { "f" } else { "r" };
        let mut constraints: Vec<String> = (0..count).map(|_| format!("={reg}")).collect();
        constraints.extend((0..count).map(|i| i.to_string()));
        constraints.extend(["r", "r", "r", "r", "l", "r", "~{memory}"].map(String::from));
        let asm = wgmma_asm(n, k, types, true, (false, v.transpose_b)).replace('\n', "\\n");
        let d = self.emit(&format!(
            "llvm.inline_asm has_side_effects asm_dialect = att \"{asm}\", \"{}\" {} : ({}) -> {st}",
            constraints.join(","),
            operands.join(", "),
            operand_types.join(", ")
        ));
        let zero = if elem == "f32" { "0.0 : f32" } else { "0 : i32" };
        let z = self.emit(&format!("arith.constant {zero}"));
        let mut out = self.emit(&format!("vector.broadcast {z} : {elem} to {cty}"));
        for i in 0..count {
            let x = self.emit(&format!("llvm.extractvalue {d}[{i}] : {st}"));
            out = self.emit(&format!("vector.insert {x}, {out} [{i}] : {elem} into {cty}"));
        }
        self.set_result(op, out)
    }
}
