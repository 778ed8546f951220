//! nvgpu ops → NVVM intrinsics, one method of the spine's `EmitNvgpu` per op kind (as MLIR's `NVGPUToNVVM` has one pattern per op).
//!
//! | op | LLVM |
//! |---|---|
//! | `nvgpu.thread_id x/y/z` | `llvm.nvvm.read.ptx.sreg.tid.{x,y,z}`, zero-extended to `i64` |
//! | `nvgpu.lane_id` | `llvm.nvvm.read.ptx.sreg.laneid` |
//! | `nvgpu.warp_id` | `tid.x >> 5` (not `%warpid`, which is a hardware slot) |
//! | `nvgpu.ldmatrix` | `llvm.nvvm.ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].b16.p3` |
//! | `nvgpu.stmatrix` | `llvm.nvvm.stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].b16.p3` (sm_90) |
//! | `nvgpu.mma.sync` | `llvm.nvvm.mma.<shape>.row.col.<types>` (see [`mma_instr`]) |
//! | `nvgpu.device_async_copy` | `llvm.nvvm.cp.async.{cg,ca}.shared.global.{16,8,4}[.s]` (`.cg` for 16 bytes) |
//! | `nvgpu.device_async_create_group` | `llvm.nvvm.cp.async.commit.group` |
//! | `nvgpu.device_async_wait` | `llvm.nvvm.cp.async.wait.group(numGroups)` |
//! | `nvgpu.barrier` | `llvm.nvvm.barrier.cta.sync.aligned.all(0)` (`bar.sync 0`; LLVM 22's name for `barrier0`) |
//! | `nvgpu.load`/`store` | `load`/`store` in address space 1 or 3, aligned to the access size; masked ones branch (a load: a `phi` with zero) |
//! | `nvgpu.extract`/`insert` | nothing: the lane is taken or replaced in the vector's lanes ([`super::lanes`]) |
//! | `nvgpu.shuffle xor` | `llvm.nvvm.shfl.sync.bfly.{f32,i32}(0xffffffff, x, offset, 31)` (`shfl.sync.bfly.b32`) |

use inkwell::basic_block::BasicBlock;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValue, BasicValueEnum, IntValue};
use inkwell::IntPredicate;

use tilec_ir::body::{Operation, Value};
use tilec_ir::ops::{typed, GridAxis, MatrixOrder};
use tilec_ir::types::{ScalarType, Type};

use super::func::FuncTranslator;
use super::lanes::{self, Lane, Lanes, Lowered};
use super::Result;
use crate::llvm::{
    CpAsync, CpAsyncCache, FragmentRegister, LdMatrix, MatrixCount, MmaInstr, MmaOperand, SpecialRegister, StMatrix,
};
use crate::spine::{access_alignment, access_count, bytes_of, ldmatrix_row_elements, EmitNvgpu};

impl<'ctx> EmitNvgpu for FuncTranslator<'_, 'ctx> {
    /// `nvgpu.thread_id x|y|z` → `%tid.*`.
    fn thread_id(&mut self, op: &Operation, v: &typed::ThreadId) -> Result<()> {
        let register = match v.dim {
            GridAxis::X => SpecialRegister::TidX,
            GridAxis::Y => SpecialRegister::TidY,
            GridAxis::Z => SpecialRegister::TidZ,
        };
        let x = self.sreg_index(register)?;
        self.set_result(op, x.into())
    }

    /// `nvgpu.lane_id` → `%laneid`.
    fn lane_id(&mut self, op: &Operation, _v: &typed::LaneId) -> Result<()> {
        let x = self.sreg_index(SpecialRegister::LaneId)?;
        self.set_result(op, x.into())
    }

    /// `nvgpu.warp_id` → `%tid.x / 32` (blocks are one-dimensional).
    fn warp_id(&mut self, op: &Operation, _v: &typed::WarpId) -> Result<()> {
        let tid = self.nvvm.special_register(&self.builder, SpecialRegister::TidX)?;
        let warp = self.builder.build_right_shift(tid, self.cx.i32_type().const_int(5, false), false, "")?;
        let x = self.builder.build_int_z_extend(warp, self.cx.i64_type(), "")?;
        self.set_result(op, x.into())
    }

    /// `nvgpu.ldmatrix %s[%r, %c] {numTiles = n, transpose = t}` → `ldmatrix.sync.aligned.m8n8.xn[.trans].shared.b16`
    /// from this lane's row address (16 bytes: 8 16-bit elements, or 16 8-bit ones); the `n` `i32` registers
    /// become the `vector<nx2xT>` (`vector<nx4xT>`) result.
    fn ldmatrix(&mut self, op: &Operation, v: &typed::LdMatrix) -> Result<()> {
        let count = matrix_count(v.num_tiles)?;
        let row = self.element_pointer(op, v.src, &v.indices, ldmatrix_row_elements(self.func, v.src))?;
        let registers = self.nvvm.ldmatrix(&self.builder, LdMatrix { count, transpose: v.transpose }, row)?;
        let registers: Vec<BasicValueEnum> = registers.into_iter().map(|r| r.as_basic_value_enum()).collect();
        let x = self.result_registers(op, &registers)?;
        self.bind_result(op, x)
    }

    /// `nvgpu.stmatrix %v, %s[%r, %c] {numTiles = n}` → `stmatrix.sync.aligned.m8n8.xn[.trans].shared.b16` (sm_90+).
    fn stmatrix(&mut self, op: &Operation, v: &typed::StMatrix) -> Result<()> {
        let count = matrix_count(v.num_tiles)?;
        let value = self.lanes(op, v.value)?;
        let registers = self.fragment_registers(op, &value, FragmentRegister::I32, count.count())?;
        let registers: Vec<IntValue> = registers.into_iter().map(|r| r.into_int_value()).collect();
        let row = self.element_pointer(op, v.dst, &v.indices, 8)?;
        self.nvvm.stmatrix(&self.builder, StMatrix { count, transpose: v.transpose }, row, &registers)?;
        Ok(())
    }

    /// `nvgpu.mma.sync(%a, %b, %c) {mmaShape = [m, n, k]}` → `llvm.nvvm.mma.mMnNkK.row.col.*` on the fragments'
    /// registers; D's registers become the result (C's type). The variants are [`mma_instr`]'s (this backend's).
    fn mma_sync(&mut self, op: &Operation, v: &typed::MmaSync) -> Result<()> {
        let shape = v.mma_shape;
        let body = &self.func.body;
        let (ea, ec) = (body.ty(v.a).element_type(), body.ty(v.c).element_type());
        let instr = mma_instr(shape.dims(), ea, ec, v.satfinite).ok_or_else(|| {
            self.kernel.unsupported(op, format!("no mma.sync {shape} with '{ea}' inputs and a '{ec}' accumulator in the LLVM backend"))
        })?;
        let mut operands = Vec::with_capacity(3);
        for (role, x) in [(MmaOperand::A, v.a), (MmaOperand::B, v.b), (MmaOperand::C, v.c)] {
            let (register, count) = instr.fragment(role);
            let lanes = self.lanes(op, x)?;
            operands.push(self.fragment_registers(op, &lanes, register, count)?);
        }
        let d = if (v.layout_a, v.layout_b) == (MatrixOrder::Row, MatrixOrder::Col) {
            self.nvvm.mma(&self.builder, instr, &operands[0], &operands[1], &operands[2])?
        } else {
            // m8n8k4 with other layouts: same fragments, the layouts in the name (`llvm.nvvm.mma.m8n8k4.col.row.f32.f32`).
            let name = instr.intrinsic_name().replace(".row.col.", &format!(".{}.{}.", v.layout_a, v.layout_b));
            let args: Vec<BasicValueEnum> = operands.concat();
            let result = self.nvvm.call(&self.builder, &name, &[], &args)?.ok_or_else(|| super::internal("mma returns D"))?;
            let s = result.into_struct_value();
            (0..s.get_type().count_fields())
                .map(|i| Ok(self.builder.build_extract_value(s, i, "")?))
                .collect::<Result<Vec<_>>>()?
        };
        let x = self.result_registers(op, &d)?;
        self.bind_result(op, x)
    }

    /// `nvgpu.device_async_copy %g[..], %s[..], n {, %src_elements}` → `cp.async.{cg,ca}.shared.global` of
    /// `n` elements (16 bytes use `.cg`, bypassing L1; 4 and 8 bytes `.ca`); with `src_elements`, the `.s`
    /// variant reads only that many elements and zero-fills the rest.
    fn device_async_copy(&mut self, op: &Operation, v: &typed::DeviceAsyncCopy) -> Result<()> {
        let elem = self.func.body.ty(v.dst).element_type();
        let n = u64::from(v.dst_elements);
        let bytes = bytes_of(elem, n);
        let cache = if bytes == 16 { CpAsyncCache::Cg } else { CpAsyncCache::Ca };
        let src_size = match v.src_elements {
            Some(s) => {
                let s = self.int(op, s)?;
                let s = self.builder.build_int_truncate_or_bit_cast(s, self.cx.i32_type(), "")?;
                let elem_bytes = self.cx.i32_type().const_int(u64::from(elem.bit_width() / 8), false);
                Some(self.builder.build_int_nuw_mul(s, elem_bytes, "")?)
            }
            None => None,
        };
        let dst_ptr = self.element_pointer(op, v.dst, &v.dst_indices, n)?;
        let src_ptr = self.element_pointer(op, v.src, &v.src_indices, n)?;
        let copy = CpAsync { cache, bytes: bytes as u32, zero_fill: src_size.is_some() };
        self.nvvm.cp_async(&self.builder, copy, dst_ptr, src_ptr, src_size)?;
        Ok(())
    }

    /// `nvgpu.device_async_create_group` → `cp.async.commit_group`.
    fn device_async_create_group(&mut self, _op: &Operation, _v: &typed::DeviceAsyncCreateGroup) -> Result<()> {
        self.nvvm.cp_async_commit_group(&self.builder)?;
        Ok(())
    }

    /// `nvgpu.device_async_wait {numGroups = n}` → `cp.async.wait_group n`.
    fn device_async_wait(&mut self, _op: &Operation, v: &typed::DeviceAsyncWait) -> Result<()> {
        self.nvvm.cp_async_wait_group(&self.builder, v.num_groups)?;
        Ok(())
    }

    /// `nvgpu.barrier` → `bar.sync 0`.
    /// `nvgpu.shuffle xor %x, offset` → `llvm.nvvm.shfl.sync.bfly.{f32,i32}` over the full warp (clamp 31: the
    /// whole warp is one segment).
    fn shuffle(&mut self, op: &Operation, v: &typed::Shuffle) -> Result<()> {
        let x = self.value(op, v.value)?;
        let i32t = self.cx.i32_type();
        let name = if x.is_float_value() { "llvm.nvvm.shfl.sync.bfly.f32" } else { "llvm.nvvm.shfl.sync.bfly.i32" };
        let args = [
            i32t.const_int(0xffff_ffff, false).into(),
            x,
            i32t.const_int(u64::from(v.offset), false).into(),
            i32t.const_int(31, false).into(),
        ];
        let r = self.nvvm.call(&self.builder, name, &[], &args)?.ok_or_else(|| super::internal("shfl.sync returns a value"))?;
        self.set_result(op, r)
    }

    fn barrier(&mut self, _op: &Operation, _v: &typed::Barrier) -> Result<()> {
        self.nvvm.barrier_sync(&self.builder, 0)?;
        Ok(())
    }

    /// `nvgpu.load %m[..] {if %mask} : T` → an aligned `load` from address space 1 or 3; with a mask, in a block
    /// entered when it is true, and a `phi` of the loaded value and zero after it (LLVM turns it into a
    /// predicated `ld` after a `mov 0`).
    fn load(&mut self, op: &Operation, v: &typed::Load) -> Result<()> {
        let (ty, llvm_ty) = self.result_type(op)?;
        let count = access_count(&ty);
        let mask = v.mask.map(|m| self.int(op, m)).transpose()?;
        let branch = match mask {
            Some(mask) => Some(self.enter_if(mask, "load", "loaded")?),
            None => None,
        };
        let ptr = self.element_pointer(op, v.src, &v.indices, count)?;
        let x = self.builder.build_load(llvm_ty, ptr, "")?;
        if let Some(i) = x.as_instruction_value() {
            let _ = i.set_alignment(access_alignment(ty.element_type(), count) as u32);
        }
        let x = match branch {
            Some((before, after)) => {
                let loaded = self.builder.get_insert_block().ok_or_else(|| super::internal("an insertion block"))?;
                self.builder.build_unconditional_branch(after)?;
                self.builder.position_at_end(after);
                let phi = self.builder.build_phi(llvm_ty, "")?;
                phi.add_incoming(&[(&x, loaded), (&llvm_ty.const_zero(), before)]);
                phi.as_basic_value()
            }
            None => x,
        };
        self.set_result(op, x)
    }

    /// `nvgpu.store %v, %m[..] {if %mask}` → an aligned `store`; with a mask, in a block entered when it is true
    /// (LLVM turns it into a predicated `st`).
    fn store(&mut self, op: &Operation, v: &typed::Store) -> Result<()> {
        let ty = self.func.body.ty(v.value).clone();
        let count = access_count(&ty);
        let x = self.value(op, v.value)?;
        let mask = v.mask.map(|m| self.int(op, m)).transpose()?;
        let after = match mask {
            Some(mask) => Some(self.enter_if(mask, "store", "stored")?.1),
            None => None,
        };
        let ptr = self.element_pointer(op, v.dst, &v.indices, count)?;
        let store = self.builder.build_store(ptr, x)?;
        let _ = store.set_alignment(access_alignment(ty.element_type(), count) as u32);
        if let Some(after) = after {
            self.builder.build_unconditional_branch(after)?;
            self.builder.position_at_end(after);
        }
        Ok(())
    }

    /// `nvgpu.extract %v [i, j]`: the lane (taken out of its register where an instruction reads it).
    fn extract(&mut self, op: &Operation, v: &typed::Extract) -> Result<()> {
        let flat = self.flat_position(v.vector, &v.position);
        let lanes = self.lanes(op, v.vector)?;
        let lane = *lanes.lanes.get(flat).ok_or_else(|| super::internal("the spine checks positions"))?;
        self.bind_result(op, Lowered::Scalar(lane))
    }

    /// `nvgpu.insert %x, %v [i, j]`: the lanes with lane `[i, j]` replaced.
    fn insert(&mut self, op: &Operation, v: &typed::Insert) -> Result<()> {
        let flat = self.flat_position(v.vector, &v.position);
        let lane = match self.lowered(op, v.value)? {
            Lowered::Scalar(lane) => lane,
            Lowered::Vector(_) => return Err(self.kernel.unsupported(op, "the inserted value must be a scalar")),
        };
        if matches!(lane, Lane::Scalar(_)) || self.read_whole(self.kernel.result(op)?) {
            // A value of its own, or into a vector some op reads whole: an `insertelement` here (its vector is
            // built anyway).
            let (vector, x) = (self.value(op, v.vector)?.into_vector_value(), self.value(op, v.value)?);
            let r = self.builder.build_insert_element(vector, x, self.cx.i32_type().const_int(flat as u64, false), "")?;
            return self.set_result(op, r.into());
        }
        let mut lanes = self.lanes(op, v.vector)?;
        *lanes.lanes.get_mut(flat).ok_or_else(|| super::internal("the spine checks positions"))? = lane;
        self.bind_result(op, Lowered::Vector(lanes))
    }
}

impl<'ctx> FuncTranslator<'_, 'ctx> {
    /// A special register, zero-extended to `index` (`i64`).
    fn sreg_index(&self, register: SpecialRegister) -> Result<IntValue<'ctx>> {
        let x = self.nvvm.special_register(&self.builder, register)?;
        Ok(self.builder.build_int_z_extend(x, self.cx.i64_type(), "")?)
    }

    /// The flat element position of `position = [i, j, …]` in the vector `vector` (inside its shape: the spine checks).
    fn flat_position(&self, vector: Value, position: &[u32]) -> usize {
        let shape = match self.func.body.ty(vector) {
            Type::Vector(vt) => vt.shape.as_slice(),
            _ => &[],
        };
        position.iter().zip(shape).fold(0u64, |flat, (&i, &n)| flat * n + u64::from(i)) as usize
    }

    /// The op's vector result held by `registers` (an intrinsic's, in order).
    pub(super) fn result_registers(&self, op: &Operation, registers: &[BasicValueEnum<'ctx>]) -> Result<Lowered<'ctx>> {
        let (_, ty) = self.result_type(op)?;
        let BasicTypeEnum::VectorType(ty) = ty else {
            return Err(self.kernel.unsupported(op, "its result must be a vector"));
        };
        let held: u32 = registers.iter().map(|r| lanes::bits(r.get_type())).sum();
        if held != lanes::bits(ty.into()) {
            return Err(self.kernel.unsupported(op, format!("{} registers do not fill {}", registers.len(), ty.print_to_string())));
        }
        Ok(Lowered::Vector(Lanes::of_registers(ty, registers)))
    }

    /// Branches on `mask` (true when non-zero) into a new block `then` and leaves the builder there; returns
    /// the block branched from and the (empty) block `after`, for the caller to branch to and go on in.
    fn enter_if(&mut self, mask: IntValue<'ctx>, then: &str, after: &str) -> Result<(BasicBlock<'ctx>, BasicBlock<'ctx>)> {
        let function = self.function.ok_or_else(|| super::internal("inside a function"))?;
        let before = self.builder.get_insert_block().ok_or_else(|| super::internal("an insertion block"))?;
        let then = self.cx.append_basic_block(function, then);
        let after = self.cx.append_basic_block(function, after);
        let mask = self.builder.build_int_compare(IntPredicate::NE, mask, mask.get_type().const_zero(), "")?;
        self.builder.build_conditional_branch(mask, then, after)?;
        self.builder.position_at_end(then);
        Ok((before, after))
    }
}


/// `x1`, `x2` or `x4` (the verifier checks `numTiles`).
fn matrix_count(num_tiles: u32) -> Result<MatrixCount> {
    match num_tiles {
        1 => Ok(MatrixCount::X1),
        2 => Ok(MatrixCount::X2),
        4 => Ok(MatrixCount::X4),
        n => Err(super::internal(&format!("numTiles = {n} passed the verifier"))),
    }
}

/// The `mma.sync` variant for a shape and the A/C element types (all `.row.col`).
pub fn mma_instr(shape: [u32; 3], a: ScalarType, c: ScalarType, satfinite: bool) -> Option<MmaInstr> {
    use ScalarType::*;
    Some(match (shape, a, c) {
        ([16, 8, 16], F16, F32) => MmaInstr::M16N8K16F16F32,
        ([16, 8, 16], F16, F16) => MmaInstr::M16N8K16F16F16,
        ([16, 8, 8], F16, F32) => MmaInstr::M16N8K8F16F32,
        ([16, 8, 8], F16, F16) => MmaInstr::M16N8K8F16F16,
        ([16, 8, 16], BF16, F32) => MmaInstr::M16N8K16Bf16F32,
        ([16, 8, 8], BF16, F32) => MmaInstr::M16N8K8Bf16F32,
        ([16, 8, 8], TF32, F32) => MmaInstr::M16N8K8Tf32F32,
        ([16, 8, 32], I8, I32) if satfinite => MmaInstr::M16N8K32S8S32Satfinite,
        ([16, 8, 32], I8, I32) => MmaInstr::M16N8K32S8S32,
        ([16, 8, 32], U8, I32) if !satfinite => MmaInstr::M16N8K32U8S32,
        ([8, 8, 4], F16, F32) => MmaInstr::M8N8K4F16F32,
        ([8, 8, 4], F16, F16) => MmaInstr::M8N8K4F16F16,
        _ => return None,
    })
}

