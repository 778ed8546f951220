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
//! | `nvgpu.extract`/`insert` | `extractelement`/`insertelement` |
//! | `nvgpu.shuffle xor` | `llvm.nvvm.shfl.sync.bfly.{f32,i32}(0xffffffff, x, offset, 31)` (`shfl.sync.bfly.b32`) |

use inkwell::basic_block::BasicBlock;
use inkwell::types::{BasicTypeEnum, VectorType};
use inkwell::values::{BasicValue, BasicValueEnum, IntValue, VectorValue};
use inkwell::IntPredicate;

use tilec_ir::body::{Operation, Value};
use tilec_ir::ops::{typed, GridAxis, MatrixOrder};
use tilec_ir::types::{ScalarType, Type};

use super::func::FuncTranslator;
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
        let (_, ty) = self.result_type(op)?;
        let x = pack_registers(self, op, &registers, ty)?;
        self.set_result(op, x)
    }

    /// `nvgpu.stmatrix %v, %s[%r, %c] {numTiles = n}` → `stmatrix.sync.aligned.m8n8.xn[.trans].shared.b16` (sm_90+).
    fn stmatrix(&mut self, op: &Operation, v: &typed::StMatrix) -> Result<()> {
        let count = matrix_count(v.num_tiles)?;
        let value = self.vector(op, v.value)?;
        let registers = fragment_registers(self, op, value, FragmentRegister::I32, count.count())?;
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
            let vector = self.vector(op, x)?;
            operands.push(fragment_registers(self, op, vector, register, count)?);
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
        let (_, ty) = self.result_type(op)?;
        let x = pack_registers(self, op, &d, ty)?;
        self.set_result(op, x)
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

    /// `nvgpu.extract %v [i, j]` → `extractelement`.
    fn extract(&mut self, op: &Operation, v: &typed::Extract) -> Result<()> {
        let flat = self.flat_position(v.vector, &v.position);
        let vector = self.vector(op, v.vector)?;
        let x = self.builder.build_extract_element(vector, self.cx.i32_type().const_int(flat, false), "")?;
        self.set_result(op, x)
    }

    /// `nvgpu.insert %x, %v [i, j]` → `insertelement`.
    fn insert(&mut self, op: &Operation, v: &typed::Insert) -> Result<()> {
        let flat = self.flat_position(v.vector, &v.position);
        let vector = self.vector(op, v.vector)?;
        let x = self.value(op, v.value)?;
        let r = self.builder.build_insert_element(vector, x, self.cx.i32_type().const_int(flat, false), "")?;
        self.set_result(op, r.into())
    }
}

impl<'ctx> FuncTranslator<'_, 'ctx> {
    /// A special register, zero-extended to `index` (`i64`).
    fn sreg_index(&self, register: SpecialRegister) -> Result<IntValue<'ctx>> {
        let x = self.nvvm.special_register(&self.builder, register)?;
        Ok(self.builder.build_int_z_extend(x, self.cx.i64_type(), "")?)
    }

    /// The flat element position of `position = [i, j, …]` in the vector `vector` (inside its shape: the spine checks).
    fn flat_position(&self, vector: Value, position: &[u32]) -> u64 {
        let shape = match self.func.body.ty(vector) {
            Type::Vector(vt) => vt.shape.as_slice(),
            _ => &[],
        };
        position.iter().zip(shape).fold(0u64, |flat, (&i, &n)| flat * n + u64::from(i))
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


// ---- register views of fragments ---------------------------------------------------------------------------

/// The per-thread fragment `v` (a flat vector) as `count` registers of kind `register`.
///
/// A vector that [`pack_registers`] made from an intrinsic's registers gives those registers back (as
/// `<2 x half>` views of `i32` words where `register` asks for them): the chain of `mma.sync`s through one
/// accumulator, and the `mma.sync`s that read an `ldmatrix` result, then pass registers along instead of
/// packing and unpacking vectors that LLVM would have to fold away again (half the instructions of a GEMM's
/// module as translated). Only other vectors (loop-carried ones, `nvgpu.insert` results) are unpacked.
fn fragment_registers<'ctx>(
    t: &mut FuncTranslator<'_, 'ctx>,
    op: &Operation,
    v: VectorValue<'ctx>,
    register: FragmentRegister,
    count: u32,
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    let ty = v.get_type();
    let bits = ty.get_size() * element_bits(ty.get_element_type());
    let f16 = ty.get_element_type() == t.cx.f16_type().into();
    let f32 = ty.get_element_type() == t.cx.f32_type().into();
    let fits = match register {
        FragmentRegister::F16x2 => f16 && ty.get_size() == 2 * count,
        FragmentRegister::F32 => f32 && ty.get_size() == count,
        FragmentRegister::I32 => bits == 32 * count,
    };
    if !fits {
        return Err(t.kernel.unsupported(op, format!("a fragment of type {} does not fill {count} {register:?} registers", ty.print_to_string())));
    }
    if let Some(packed) = t.packed.get(&v).filter(|r| r.len() == count as usize).cloned() {
        let words = packed.iter().all(|r| r.is_int_value());
        match register {
            FragmentRegister::F32 if !words => return Ok(packed),
            FragmentRegister::I32 if words => return Ok(packed),
            FragmentRegister::F16x2 if words => {
                return packed.into_iter().map(|w| register_view(t, w, FragmentRegister::F16x2)).collect();
            }
            _ => {}
        }
    }
    let b = &t.builder;
    match register {
        FragmentRegister::F16x2 => (0..count)
            .map(|i| {
                let mask = VectorType::const_vector(&[
                    t.cx.i32_type().const_int(u64::from(2 * i), false),
                    t.cx.i32_type().const_int(u64::from(2 * i + 1), false),
                ]);
                Ok(b.build_shuffle_vector(v, ty.get_poison(), mask, "")?.into())
            })
            .collect(),
        FragmentRegister::F32 => (0..count)
            .map(|i| Ok(b.build_extract_element(v, t.cx.i32_type().const_int(u64::from(i), false), "")?))
            .collect(),
        FragmentRegister::I32 => {
            let words = b.build_bit_cast(v, t.cx.i32_type().vec_type(count), "")?.into_vector_value();
            (0..count)
                .map(|i| Ok(b.build_extract_element(words, t.cx.i32_type().const_int(u64::from(i), false), "")?))
                .collect()
        }
    }
}

/// The `i32` register `word` as a `register` (a bit cast), made once per block.
fn register_view<'ctx>(t: &mut FuncTranslator<'_, 'ctx>, word: BasicValueEnum<'ctx>, register: FragmentRegister) -> Result<BasicValueEnum<'ctx>> {
    let block = t.builder.get_insert_block().ok_or_else(|| super::internal("an insertion block"))?;
    if let Some(view) = t.register_views.get(&(word, register, block)) {
        return Ok(*view);
    }
    let view = t.builder.build_bit_cast(word, register.llvm_type(t.cx), "")?;
    t.register_views.insert((word, register, block), view);
    Ok(view)
}

/// Registers (as the intrinsic returns them) packed back into the flat vector type `ty`; the vector remembers
/// them (`f32` registers as they are, others as `i32` words) for [`fragment_registers`].
fn pack_registers<'ctx>(
    t: &mut FuncTranslator<'_, 'ctx>,
    op: &Operation,
    registers: &[BasicValueEnum<'ctx>],
    ty: BasicTypeEnum<'ctx>,
) -> Result<BasicValueEnum<'ctx>> {
    let b = &t.builder;
    let BasicTypeEnum::VectorType(vty) = ty else {
        return Err(t.kernel.unsupported(op, "its result must be a vector"));
    };
    let n = registers.len() as u32;
    if registers.iter().all(|r| r.get_type() == t.cx.f32_type().into()) && vty.get_element_type() == t.cx.f32_type().into() {
        let mut v = vty.get_poison();
        for (i, r) in registers.iter().enumerate() {
            v = b.build_insert_element(v, *r, t.cx.i32_type().const_int(i as u64, false), "")?;
        }
        t.packed.insert(v, registers.to_vec());
        return Ok(v.into());
    }
    // Everything else goes through <n x i32>: <2 x half> registers are bit-cast to i32 first.
    let words_ty = t.cx.i32_type().vec_type(n);
    if vty.get_size() * element_bits(vty.get_element_type()) != 32 * n {
        return Err(t.kernel.unsupported(op, format!("{n} registers do not fill {}", vty.print_to_string())));
    }
    let mut words = words_ty.get_poison();
    let mut word_values = Vec::with_capacity(registers.len());
    for (i, r) in registers.iter().enumerate() {
        let word = match r {
            BasicValueEnum::IntValue(w) => *w,
            other => b.build_bit_cast(*other, t.cx.i32_type(), "")?.into_int_value(),
        };
        word_values.push(word.into());
        words = b.build_insert_element(words, word, t.cx.i32_type().const_int(i as u64, false), "")?;
    }
    let v = b.build_bit_cast(words, vty, "")?;
    t.packed.insert(v.into_vector_value(), word_values);
    Ok(v)
}

fn element_bits(ty: BasicTypeEnum<'_>) -> u32 {
    match ty {
        BasicTypeEnum::IntType(i) => i.get_bit_width(),
        BasicTypeEnum::FloatType(f) => {
            let cx = f.get_context();
            if f == cx.f64_type() {
                64
            } else if f == cx.f32_type() {
                32
            } else {
                16
            }
        }
        _ => 0,
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

