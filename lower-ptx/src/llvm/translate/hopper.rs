//! Hopper nvgpu ops → NVVM intrinsics (issue 18): the spine's [`EmitHopper`], one method per op kind.
//!
//! | op | LLVM (PTX) |
//! |---|---|
//! | `nvgpu.mbarrier.create` | a shared array of `i64` (as every shared tile) |
//! | `nvgpu.mbarrier.init` | `llvm.nvvm.mbarrier.init.shared` (`mbarrier.init.shared.b64`), under a branch with `predicate` |
//! | `nvgpu.mbarrier.arrive` | `llvm.nvvm.mbarrier.arrive.shared` (`mbarrier.arrive.shared.b64`) |
//! | `nvgpu.mbarrier.arrive.expect_tx` | `llvm.nvvm.mbarrier.arrive.expect.tx.scope.cta.space.cta` (`mbarrier.arrive.expect_tx.shared.b64`) |
//! | `nvgpu.mbarrier.try_wait.parity` | a loop on `llvm.nvvm.mbarrier.try.wait.parity.tl.scope.cta.space.cta` (`mbarrier.try_wait.parity.shared.b64` with the time limit) until it returns true |
//!
//! | `nvgpu.wgmma.fence` | `llvm.nvvm.wgmma.fence.sync.aligned` |
//! | `nvgpu.wgmma.commit_group` | `llvm.nvvm.wgmma.commit_group.sync.aligned` |
//! | `nvgpu.wgmma.wait_group` | `llvm.nvvm.wgmma.wait_group.sync.aligned(i64 numGroups)` |
//! | `nvgpu.elect_sync` | `llvm.nvvm.elect.sync(i32 -1)`, its `i1` |
//! | `nvgpu.setmaxnreg.inc/dec` | `llvm.nvvm.setmaxnreg.{inc,dec}.sync.aligned.u32(i32 count)` |
//! | `nvgpu.warpgroup.generate.descriptor` | `ptrtoint` of the element's shared address, `(a & 0x3ffff) >> 4`, or'ed with the constant fields |
//! | `nvgpu.warpgroup.mma` | inline PTX `wgmma.mma_async.sync.aligned.m64nNkK.{f32,s32}.A.B` (LLVM has no intrinsic for it; `spine::wgmma_asm`), C tied to D, A a descriptor or four `.b32` registers |
//!
//! | `nvgpu.tma.async.load` | `llvm.nvvm.cp.async.bulk.tensor.g2s.tile.<N>d(ptr addrspace(7) dst, ptr addrspace(3) mbar, ptr tmap, i32 x.., i16 0, i64 0, i1 false, i1 false, i32 0)` (no multicast, no cache hint, no cta_group; `dst` the tile, `panel` boxes on), under a branch with `predicate` |
//! | `nvgpu.tma.async.store` | `llvm.nvvm.cp.async.bulk.tensor.s2g.tile.<N>d(ptr addrspace(3) src, ptr tmap, i32 x.., i64 0, i1 false)` |
//! | `nvgpu.tma.commit_group` | `llvm.nvvm.cp.async.bulk.commit.group` |
//! | `nvgpu.tma.wait_group` | `llvm.nvvm.cp.async.bulk.wait.group[.read](i32 N)` |
//! | `nvgpu.fence.proxy.async` | `llvm.nvvm.fence.proxy.async.shared_cta` |
//!
//! The intrinsics' signatures are LLVM 22's `IntrinsicsNVVM.td`; a tensor map is the generic address of the
//! kernel's `byval` `nvvm.grid_constant` parameter. Coordinates go innermost first (the tile's last axis is
//! the map's dimension 0).
//!
//! Counts, ids and ticks are `index` (`i64`) in the IR and `i32` in the instructions (the verifier and the
//! simulator keep counts below 2^20).

use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, IntValue, PointerValue};

use tilec_ir::body::{Operation, Value};
use tilec_ir::ops::typed;

use super::func::FuncTranslator;
use super::Result;
use crate::llvm::FragmentRegister;
use crate::spine::{wgmma_asm, wgmma_descriptor_bits, wgmma_register_a, wgmma_types, EmitHopper};

impl<'ctx> FuncTranslator<'_, 'ctx> {
    /// The `ptr addrspace(3)` of barrier `%bars[%id]`.
    fn mbarrier_pointer(&mut self, op: &Operation, bars: Value, id: Value) -> Result<PointerValue<'ctx>> {
        self.element_pointer(op, bars, &[id], 1)
    }

    /// An `index` operand as the `i32` the instructions take.
    fn operand_i32(&self, op: &Operation, x: Value) -> Result<IntValue<'ctx>> {
        let x = self.int(op, x)?;
        Ok(self.builder.build_int_truncate_or_bit_cast(x, self.cx.i32_type(), "")?)
    }

    /// The generic pointer to tensor map `map`.
    fn tensor_map_pointer(&self, map: usize) -> Result<PointerValue<'ctx>> {
        self.tensor_maps.get(&map).copied().ok_or_else(|| super::internal("every tensor map is bound to its parameter"))
    }

    /// TMA coordinates as `i32`, innermost axis first.
    fn tma_coords(&self, op: &Operation, coords: &[Value]) -> Result<Vec<IntValue<'ctx>>> {
        coords.iter().rev().map(|&c| self.operand_i32(op, c)).collect()
    }

    /// Runs `emit` only where the optional `predicate` (an `i1`) is true.
    fn predicated(&mut self, op: &Operation, predicate: Option<Value>, emit: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        let Some(p) = predicate else { return emit(self) };
        let p = self.int(op, p)?;
        let function = self.function.ok_or_else(|| super::internal("inside a function"))?;
        let then = self.cx.append_basic_block(function, "mbarrier.pred");
        let after = self.cx.append_basic_block(function, "mbarrier.after");
        self.builder.build_conditional_branch(p, then, after)?;
        self.builder.position_at_end(then);
        emit(self)?;
        self.builder.build_unconditional_branch(after)?;
        self.builder.position_at_end(after);
        Ok(())
    }
}

impl<'ctx> EmitHopper for FuncTranslator<'_, 'ctx> {
    fn mbarrier_init(&mut self, op: &Operation, v: &typed::MBarrierInit) -> Result<()> {
        let bar = self.mbarrier_pointer(op, v.barriers, v.mbar_id)?;
        let count = self.operand_i32(op, v.count)?;
        self.predicated(op, v.predicate, |t| {
            t.nvvm.call(&t.builder, "llvm.nvvm.mbarrier.init.shared", &[], &[bar.into(), count.into()])?;
            Ok(())
        })
    }

    fn mbarrier_arrive(&mut self, op: &Operation, v: &typed::MBarrierArrive) -> Result<()> {
        let bar = self.mbarrier_pointer(op, v.barriers, v.mbar_id)?;
        self.nvvm.call(&self.builder, "llvm.nvvm.mbarrier.arrive.shared", &[], &[bar.into()])?;
        Ok(())
    }

    fn mbarrier_arrive_expect_tx(&mut self, op: &Operation, v: &typed::MBarrierArriveExpectTx) -> Result<()> {
        let bar = self.mbarrier_pointer(op, v.barriers, v.mbar_id)?;
        let tx = self.operand_i32(op, v.txcount)?;
        self.predicated(op, v.predicate, |t| {
            let args: [BasicValueEnum; 2] = [bar.into(), tx.into()];
            t.nvvm.call(&t.builder, "llvm.nvvm.mbarrier.arrive.expect.tx.scope.cta.space.cta", &[], &args)?;
            Ok(())
        })
    }

    fn mbarrier_try_wait_parity(&mut self, op: &Operation, v: &typed::MBarrierTryWaitParity) -> Result<()> {
        let bar = self.mbarrier_pointer(op, v.barriers, v.mbar_id)?;
        let parity = self.int(op, v.phase_parity)?;
        let parity = self.builder.build_int_z_extend(parity, self.cx.i32_type(), "")?;
        let ticks = self.operand_i32(op, v.ticks)?;
        let function = self.function.ok_or_else(|| super::internal("inside a function"))?;
        let wait = self.cx.append_basic_block(function, "mbarrier.wait");
        let done = self.cx.append_basic_block(function, "mbarrier.done");
        self.builder.build_unconditional_branch(wait)?;
        self.builder.position_at_end(wait);
        let args: [BasicValueEnum; 3] = [bar.into(), parity.into(), ticks.into()];
        let complete = self
            .nvvm
            .call(&self.builder, "llvm.nvvm.mbarrier.try.wait.parity.tl.scope.cta.space.cta", &[], &args)?
            .ok_or_else(|| super::internal("try_wait returns i1"))?
            .into_int_value();
        self.builder.build_conditional_branch(complete, done, wait)?;
        self.builder.position_at_end(done);
        Ok(())
    }

    fn wgmma_fence(&mut self, _op: &Operation, _v: &typed::WgmmaFence) -> Result<()> {
        self.nvvm.call(&self.builder, "llvm.nvvm.wgmma.fence.sync.aligned", &[], &[])?;
        Ok(())
    }

    fn wgmma_commit_group(&mut self, _op: &Operation, _v: &typed::WgmmaCommitGroup) -> Result<()> {
        self.nvvm.call(&self.builder, "llvm.nvvm.wgmma.commit_group.sync.aligned", &[], &[])?;
        Ok(())
    }

    fn wgmma_wait_group(&mut self, _op: &Operation, v: &typed::WgmmaWaitGroup) -> Result<()> {
        let n = self.cx.i64_type().const_int(u64::from(v.num_groups), false);
        self.nvvm.call(&self.builder, "llvm.nvvm.wgmma.wait_group.sync.aligned", &[], &[n.into()])?;
        Ok(())
    }

    fn tma_async_load(&mut self, op: &Operation, v: &typed::TmaAsyncLoad, map: usize) -> Result<()> {
        let tmap = self.tensor_map_pointer(map)?;
        let bar = self.mbarrier_pointer(op, v.barriers, v.mbar_id)?;
        let mut dst = self.memref(op, v.dst)?.base;
        if v.panel > 0 {
            // Panel p's box starts p boxes after the tile.
            let Some(m) = self.kernel.tensor_maps.get(map) else { return Err(super::internal("a kernel tensor map")) };
            let offset = self.cx.i32_type().const_int(u64::from(v.panel) * m.box_bytes(), false);
            dst = unsafe { self.builder.build_in_bounds_gep(self.cx.i8_type(), dst, &[offset], "")? };
        }
        let cluster = self.cx.ptr_type(inkwell::AddressSpace::from(7u16));
        let dst = self.builder.build_address_space_cast(dst, cluster, "")?;
        let coords = self.tma_coords(op, &v.coords)?;
        let name = format!("llvm.nvvm.cp.async.bulk.tensor.g2s.tile.{}d", coords.len());
        let (i16t, i64t, i1t, i32t) = (self.cx.i16_type(), self.cx.i64_type(), self.cx.bool_type(), self.cx.i32_type());
        let mut args: Vec<BasicValueEnum> = vec![dst.into(), bar.into(), tmap.into()];
        args.extend(coords.iter().map(|&c| BasicValueEnum::from(c)));
        args.extend::<[BasicValueEnum; 5]>([i16t.const_zero().into(), i64t.const_zero().into(), i1t.const_zero().into(), i1t.const_zero().into(), i32t.const_zero().into()]);
        self.predicated(op, v.predicate, |t| {
            t.nvvm.call(&t.builder, &name, &[], &args)?;
            Ok(())
        })
    }

    fn tma_async_store(&mut self, op: &Operation, v: &typed::TmaAsyncStore, map: usize) -> Result<()> {
        let tmap = self.tensor_map_pointer(map)?;
        let src = self.memref(op, v.src)?.base;
        let coords = self.tma_coords(op, &v.coords)?;
        let name = format!("llvm.nvvm.cp.async.bulk.tensor.s2g.tile.{}d", coords.len());
        let mut args: Vec<BasicValueEnum> = vec![src.into(), tmap.into()];
        args.extend(coords.iter().map(|&c| BasicValueEnum::from(c)));
        args.extend::<[BasicValueEnum; 2]>([self.cx.i64_type().const_zero().into(), self.cx.bool_type().const_zero().into()]);
        self.predicated(op, v.predicate, |t| {
            t.nvvm.call(&t.builder, &name, &[], &args)?;
            Ok(())
        })
    }

    fn tma_commit_group(&mut self, _op: &Operation) -> Result<()> {
        self.nvvm.call(&self.builder, "llvm.nvvm.cp.async.bulk.commit.group", &[], &[])?;
        Ok(())
    }

    fn tma_wait_group(&mut self, _op: &Operation, v: &typed::TmaWaitGroup) -> Result<()> {
        let name = if v.read { "llvm.nvvm.cp.async.bulk.wait.group.read" } else { "llvm.nvvm.cp.async.bulk.wait.group" };
        let n = self.cx.i32_type().const_int(u64::from(v.num_groups), false);
        self.nvvm.call(&self.builder, name, &[], &[n.into()])?;
        Ok(())
    }

    fn fence_proxy_async(&mut self, _op: &Operation) -> Result<()> {
        self.nvvm.call(&self.builder, "llvm.nvvm.fence.proxy.async.shared_cta", &[], &[])?;
        Ok(())
    }

    fn elect_sync(&mut self, op: &Operation, _v: &typed::ElectSync) -> Result<()> {
        let all = self.cx.i32_type().const_all_ones();
        let pair = self
            .nvvm
            .call(&self.builder, "llvm.nvvm.elect.sync", &[], &[all.into()])?
            .ok_or_else(|| super::internal("elect.sync returns {i32, i1}"))?
            .into_struct_value();
        let elected = self.builder.build_extract_value(pair, 1, "")?;
        self.set_result(op, elected)
    }

    fn setmaxnreg(&mut self, _op: &Operation, increase: bool, count: u32) -> Result<()> {
        let name = if increase { "llvm.nvvm.setmaxnreg.inc.sync.aligned.u32" } else { "llvm.nvvm.setmaxnreg.dec.sync.aligned.u32" };
        let n = self.cx.i32_type().const_int(u64::from(count), false);
        self.nvvm.call(&self.builder, name, &[], &[n.into()])?;
        Ok(())
    }

    fn warpgroup_generate_descriptor(&mut self, op: &Operation, v: &typed::WarpgroupGenerateDescriptor) -> Result<()> {
        let pointer = self.element_pointer(op, v.tensor, &v.indices, 1)?;
        let i64_ty = self.cx.i64_type();
        let address = self.builder.build_ptr_to_int(pointer, i64_ty, "")?;
        let start = self.builder.build_and(address, i64_ty.const_int(tilec_ir::ops::wgmma::START_ADDRESS_MASK, false), "")?;
        let start = self.builder.build_right_shift(start, i64_ty.const_int(4, false), false, "")?;
        let desc = self.builder.build_or(start, i64_ty.const_int(wgmma_descriptor_bits(v), false), "")?;
        self.set_result(op, desc.into())
    }

    fn warpgroup_mma(&mut self, op: &Operation, v: &typed::WarpgroupMma) -> Result<()> {
        let (ta, tb, td) = wgmma_types(self.func, v).ok_or_else(|| {
            self.kernel.unsupported(op, "its descriptors must come from 'nvgpu.warpgroup.generate.descriptor' of f16, bf16, s8 or u8 tiles (A may be a register fragment)")
        })?;
        let register_a = wgmma_register_a(self.func, v);
        let (n, k) = (v.mma_shape.n, v.mma_shape.k);
        let count = n / 2;
        let c = self.lanes(op, v.matrix_c)?;
        let elem: BasicTypeEnum = if td == "f32" { self.cx.f32_type().into() } else { self.cx.i32_type().into() };
        if c.lanes.len() != count as usize || c.elem() != elem {
            return Err(self.kernel.unsupported(op, format!("its accumulator must be {count} '{td}' values")));
        }
        let mut args: Vec<BasicMetadataValueEnum> = Vec::with_capacity(count as usize + 6);
        for &lane in &c.lanes {
            args.push(self.lane_value(elem, lane)?.into());
        }
        let i32_ty = self.cx.i32_type();
        if register_a {
            // The fragment's four 32-bit registers (two f16/bf16 or four 8-bit values each).
            let a = self.lanes(op, v.descriptor_a)?;
            for word in self.fragment_registers(op, &a, FragmentRegister::I32, 4)? {
                args.push(word.into());
            }
        } else {
            args.push(self.int(op, v.descriptor_a)?.into());
        }
        args.push(self.int(op, v.descriptor_b)?.into());
        args.push(i32_ty.const_int(1, false).into());
        let asm = wgmma_asm(n, k, (ta, tb, td), register_a, (v.transpose_a, v.transpose_b));
        let reg = if td == "f32" { "f" } else { "r" };
        let mut constraints: Vec<String> = (0..count).map(|_| format!("={reg}")).collect();
        constraints.extend((0..count).map(|i| i.to_string()));
        let a_constraints: &[&str] = if register_a { &["r", "r", "r", "r"] } else { &["l"] };
        constraints.extend(a_constraints.iter().map(|s| s.to_string()));
        constraints.extend(["l".to_string(), "r".to_string(), "~{memory}".to_string()]);
        let fields = vec![elem; count as usize];
        let result_ty = self.cx.struct_type(&fields, false);
        let mut params: Vec<inkwell::types::BasicMetadataTypeEnum> = vec![elem.into(); count as usize];
        let i64_ty: inkwell::types::BasicMetadataTypeEnum = self.cx.i64_type().into();
        let i32_meta: inkwell::types::BasicMetadataTypeEnum = i32_ty.into();
        if register_a {
            params.extend([i32_meta; 4]);
        } else {
            params.push(i64_ty);
        }
        params.extend([i64_ty, i32_meta]);
        let fn_ty = result_ty.fn_type(&params, false);
        let inline = self.cx.create_inline_asm(fn_ty, asm, constraints.join(","), true, false, None, false);
        let call = self.builder.build_indirect_call(fn_ty, inline, &args, "")?;
        let s = call.try_as_basic_value().basic().ok_or_else(|| super::internal("wgmma returns D"))?.into_struct_value();
        let d = (0..count).map(|i| Ok(self.builder.build_extract_value(s, i, "")?)).collect::<Result<Vec<_>>>()?;
        let x = self.result_registers(op, &d)?;
        self.bind_result(op, x)
    }

}
