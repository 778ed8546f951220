//! nvgpu ops → NVVM intrinsics, one function per op kind (as MLIR's `NVGPUToNVVM` has one pattern per op).
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

use inkwell::basic_block::BasicBlock;
use inkwell::types::{BasicTypeEnum, VectorType};
use inkwell::values::{BasicValue, BasicValueEnum, IntValue, VectorValue};
use inkwell::IntPredicate;

use tilec_ir::attr::Attribute;
use tilec_ir::body::Operation;
use tilec_ir::types::{ScalarType, Type};

use super::func::FuncTranslator;
use super::memory::access_alignment;
use super::{types, Result};
use crate::llvm::{
    CpAsync, CpAsyncCache, FragmentRegister, LdMatrix, MatrixCount, MmaInstr, MmaOperand, SpecialRegister, StMatrix,
};

// ---- ids ---------------------------------------------------------------------------------------------------

fn sreg_index<'ctx>(t: &FuncTranslator<'_, 'ctx>, register: SpecialRegister) -> Result<IntValue<'ctx>> {
    let v = t.nvvm.special_register(&t.builder, register)?;
    Ok(t.builder.build_int_z_extend(v, t.cx.i64_type(), "")?)
}

/// `nvgpu.thread_id x|y|z` → `%tid.*`.
pub(super) fn lower_thread_id(t: &mut FuncTranslator<'_, '_>, op: &Operation) -> Result<()> {
    let register = match op.attr("dim").and_then(Attribute::as_keyword) {
        Some("y") => SpecialRegister::TidY,
        Some("z") => SpecialRegister::TidZ,
        _ => SpecialRegister::TidX,
    };
    let v = sreg_index(t, register)?;
    t.set_result(op, v.into())
}

/// `nvgpu.lane_id` → `%laneid`.
pub(super) fn lower_lane_id(t: &mut FuncTranslator<'_, '_>, op: &Operation) -> Result<()> {
    let v = sreg_index(t, SpecialRegister::LaneId)?;
    t.set_result(op, v.into())
}

/// `nvgpu.warp_id` → `%tid.x / 32` (blocks are one-dimensional).
pub(super) fn lower_warp_id(t: &mut FuncTranslator<'_, '_>, op: &Operation) -> Result<()> {
    let tid = t.nvvm.special_register(&t.builder, SpecialRegister::TidX)?;
    let warp = t.builder.build_right_shift(tid, t.cx.i32_type().const_int(5, false), false, "")?;
    let v = t.builder.build_int_z_extend(warp, t.cx.i64_type(), "")?;
    t.set_result(op, v.into())
}

// ---- register views of fragments ---------------------------------------------------------------------------

/// The per-thread fragment `v` (a flat vector) as `count` registers of kind `register`.
fn fragment_registers<'ctx>(
    t: &FuncTranslator<'_, 'ctx>,
    op: &Operation,
    v: VectorValue<'ctx>,
    register: FragmentRegister,
    count: u32,
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    let b = &t.builder;
    let ty = v.get_type();
    let bits = ty.get_size() * element_bits(ty.get_element_type());
    match register {
        FragmentRegister::F16x2 if ty.get_element_type() == t.cx.f16_type().into() && ty.get_size() == 2 * count => (0..count)
            .map(|i| {
                let mask = VectorType::const_vector(&[
                    t.cx.i32_type().const_int(u64::from(2 * i), false),
                    t.cx.i32_type().const_int(u64::from(2 * i + 1), false),
                ]);
                Ok(b.build_shuffle_vector(v, ty.get_poison(), mask, "")?.into())
            })
            .collect(),
        FragmentRegister::F32 if ty.get_element_type() == t.cx.f32_type().into() && ty.get_size() == count => (0..count)
            .map(|i| Ok(b.build_extract_element(v, t.cx.i32_type().const_int(u64::from(i), false), "")?))
            .collect(),
        FragmentRegister::I32 if bits == 32 * count => {
            let words = b.build_bit_cast(v, t.cx.i32_type().vec_type(count), "")?.into_vector_value();
            (0..count)
                .map(|i| Ok(b.build_extract_element(words, t.cx.i32_type().const_int(u64::from(i), false), "")?))
                .collect()
        }
        _ => Err(t.unsupported(op, format!("a fragment of type {} does not fill {count} {register:?} registers", ty.print_to_string()))),
    }
}

/// Registers (as the intrinsic returns them) packed back into the flat vector type `ty`.
fn pack_registers<'ctx>(
    t: &FuncTranslator<'_, 'ctx>,
    op: &Operation,
    registers: &[BasicValueEnum<'ctx>],
    ty: BasicTypeEnum<'ctx>,
) -> Result<BasicValueEnum<'ctx>> {
    let b = &t.builder;
    let BasicTypeEnum::VectorType(vty) = ty else {
        return Err(t.unsupported(op, "its result must be a vector"));
    };
    let n = registers.len() as u32;
    if registers.iter().all(|r| r.get_type() == t.cx.f32_type().into()) && vty.get_element_type() == t.cx.f32_type().into() {
        let mut v = vty.get_poison();
        for (i, r) in registers.iter().enumerate() {
            v = b.build_insert_element(v, *r, t.cx.i32_type().const_int(i as u64, false), "")?;
        }
        return Ok(v.into());
    }
    // Everything else goes through <n x i32>: <2 x half> registers are bit-cast to i32 first.
    let words_ty = t.cx.i32_type().vec_type(n);
    if vty.get_size() * element_bits(vty.get_element_type()) != 32 * n {
        return Err(t.unsupported(op, format!("{n} registers do not fill {}", vty.print_to_string())));
    }
    let mut words = words_ty.get_poison();
    for (i, r) in registers.iter().enumerate() {
        let word = match r {
            BasicValueEnum::IntValue(w) => *w,
            other => b.build_bit_cast(*other, t.cx.i32_type(), "")?.into_int_value(),
        };
        words = b.build_insert_element(words, word, t.cx.i32_type().const_int(i as u64, false), "")?;
    }
    Ok(b.build_bit_cast(words, vty, "")?)
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

// ---- ldmatrix / stmatrix -----------------------------------------------------------------------------------

fn matrix_count(t: &FuncTranslator<'_, '_>, op: &Operation) -> Result<(MatrixCount, bool)> {
    let count = match op.attr("numTiles").and_then(Attribute::as_int) {
        Some(1) => MatrixCount::X1,
        Some(2) => MatrixCount::X2,
        Some(4) => MatrixCount::X4,
        other => return Err(t.unsupported(op, format!("numTiles must be 1, 2 or 4, found {other:?}"))),
    };
    let transpose = op.attr("transpose").and_then(Attribute::as_bool).unwrap_or(false);
    Ok((count, transpose))
}

/// `nvgpu.ldmatrix %s[%r, %c] {numTiles = n, transpose = t}` → `ldmatrix.sync.aligned.m8n8.xn[.trans].shared.b16`
/// from this lane's row address (16 bytes: 8 16-bit elements, or 16 8-bit ones); the `n` `i32` registers
/// become the `vector<nx2xT>` (`vector<nx4xT>`) result.
pub(super) fn lower_ldmatrix(t: &mut FuncTranslator<'_, '_>, op: &Operation) -> Result<()> {
    let (count, transpose) = matrix_count(t, op)?;
    let src = op.operand("src").ok_or_else(|| t.unsupported(op, "it needs a source"))?;
    let row_elements = 128 / u64::from(t.func.body.ty(src).element_type().bit_width().max(1));
    let row = t.element_pointer(op, src, op.group("indices"), row_elements)?;
    let registers = t.nvvm.ldmatrix(&t.builder, LdMatrix { count, transpose }, row)?;
    let registers: Vec<BasicValueEnum> = registers.into_iter().map(|r| r.as_basic_value_enum()).collect();
    let (_, ty) = t.result_type(op)?;
    let v = pack_registers(t, op, &registers, ty)?;
    t.set_result(op, v)
}

/// `nvgpu.stmatrix %v, %s[%r, %c] {numTiles = n}` → `stmatrix.sync.aligned.m8n8.xn[.trans].shared.b16` (sm_90+).
pub(super) fn lower_stmatrix(t: &mut FuncTranslator<'_, '_>, op: &Operation) -> Result<()> {
    if !t.target.has_stmatrix() {
        return Err(t.unsupported(op, format!("stmatrix needs sm_90 or newer; the target is {}", t.target)));
    }
    let (count, transpose) = matrix_count(t, op)?;
    let (Some(value), Some(dst)) = (op.operand("value"), op.operand("dst")) else {
        return Err(t.unsupported(op, "it needs a value and a destination"));
    };
    let v = t.vector(op, value)?;
    let registers = fragment_registers(t, op, v, FragmentRegister::I32, count.count())?;
    let registers: Vec<IntValue> = registers.into_iter().map(|r| r.into_int_value()).collect();
    let row = t.element_pointer(op, dst, op.group("indices"), 8)?;
    t.nvvm.stmatrix(&t.builder, StMatrix { count, transpose }, row, &registers)?;
    Ok(())
}

// ---- mma.sync ----------------------------------------------------------------------------------------------

/// The `mma.sync` variant for a shape and the A/C element types (all `.row.col`).
pub fn mma_instr(shape: [i64; 3], a: ScalarType, c: ScalarType, satfinite: bool) -> Option<MmaInstr> {
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

/// `nvgpu.mma.sync(%a, %b, %c) {mmaShape = [m, n, k]}` → `llvm.nvvm.mma.mMnNkK.row.col.*` on the fragments'
/// registers; D's registers become the result (C's type).
pub(super) fn lower_mma_sync(t: &mut FuncTranslator<'_, '_>, op: &Operation) -> Result<()> {
    let shape = op.attr("mmaShape").and_then(Attribute::as_int_array);
    let Some(shape) = shape.and_then(|s| <[i64; 3]>::try_from(s).ok()) else {
        return Err(t.unsupported(op, "it needs 'mmaShape = [m, n, k]'"));
    };
    let layout = |name: &str, default: &'static str| -> Result<String> {
        match op.attr(name) {
            None => Ok(default.to_string()),
            Some(a) => match a.as_keyword().or(a.as_str()) {
                Some(l @ ("row" | "col")) => Ok(l.to_string()),
                _ => Err(t.unsupported(op, format!("{name} must be row or col, found {a}"))),
            },
        }
    };
    let (layout_a, layout_b) = (layout("layoutA", "row")?, layout("layoutB", "col")?);
    let row_col = layout_a == "row" && layout_b == "col";
    if !row_col && shape != [8, 8, 4] {
        return Err(t.unsupported(op, format!("only m8n8k4 has layouts other than .row.col, found {layout_a}.{layout_b}")));
    }
    let (Some(a), Some(b), Some(c)) = (op.operand("a"), op.operand("b"), op.operand("c")) else {
        return Err(t.unsupported(op, "it needs A, B and C"));
    };
    let body = &t.func.body;
    let (ea, eb, ec) = (body.ty(a).element_type(), body.ty(b).element_type(), body.ty(c).element_type());
    let satfinite = op.attr("satfinite").is_some_and(|s| s.as_bool() != Some(false));
    let instr = mma_instr(shape, ea, ec, satfinite).filter(|_| ea == eb).ok_or_else(|| {
        t.unsupported(
            op,
            format!("no mma.sync m{}n{}k{} with '{ea}' x '{eb}' inputs and a '{ec}' accumulator in the LLVM backend", shape[0], shape[1], shape[2]),
        )
    })?;
    let mut operands = Vec::with_capacity(3);
    for (role, v) in [(MmaOperand::A, a), (MmaOperand::B, b), (MmaOperand::C, c)] {
        let (register, count) = instr.fragment(role);
        let vector = t.vector(op, v)?;
        operands.push(fragment_registers(t, op, vector, register, count)?);
    }
    let d = if row_col {
        t.nvvm.mma(&t.builder, instr, &operands[0], &operands[1], &operands[2])?
    } else {
        // m8n8k4 with other layouts: same fragments, the layouts in the name (`llvm.nvvm.mma.m8n8k4.col.row.f32.f32`).
        let name = instr.intrinsic_name().replace(".row.col.", &format!(".{layout_a}.{layout_b}."));
        let args: Vec<BasicValueEnum> = operands.concat();
        let result = t.nvvm.call(&t.builder, &name, &[], &args)?.ok_or_else(|| super::internal("mma returns D"))?;
        let s = result.into_struct_value();
        (0..s.get_type().count_fields())
            .map(|i| Ok(t.builder.build_extract_value(s, i, "")?))
            .collect::<Result<Vec<_>>>()?
    };
    let (_, ty) = t.result_type(op)?;
    let v = pack_registers(t, op, &d, ty)?;
    t.set_result(op, v)
}

// ---- cp.async ----------------------------------------------------------------------------------------------

/// `nvgpu.device_async_copy %g[..], %s[..], n {, %src_elements}` → `cp.async.{cg,ca}.shared.global` of
/// `n` elements (16 bytes use `.cg`, bypassing L1; 4 and 8 bytes `.ca`); with `src_elements`, the `.s`
/// variant reads only that many elements and zero-fills the rest.
pub(super) fn lower_device_async_copy(t: &mut FuncTranslator<'_, '_>, op: &Operation) -> Result<()> {
    let (Some(src), Some(dst)) = (op.operand("src"), op.operand("dst")) else {
        return Err(t.unsupported(op, "it needs a source and a destination"));
    };
    let elem = t.func.body.ty(dst).element_type();
    let n = op.attr("dstElements").and_then(Attribute::as_int).unwrap_or(0).max(0) as u64;
    let bytes = types::bytes_of(elem, n);
    if ![4, 8, 16].contains(&bytes) || elem.bit_width() < 8 {
        return Err(t.unsupported(op, format!("it copies 4, 8 or 16 bytes, not {n} x '{elem}'")));
    }
    let cache = if bytes == 16 { CpAsyncCache::Cg } else { CpAsyncCache::Ca };
    let src_size = match op.operand("src_elements") {
        Some(s) => {
            let s = t.int(op, s)?;
            let s = t.builder.build_int_truncate_or_bit_cast(s, t.cx.i32_type(), "")?;
            let elem_bytes = t.cx.i32_type().const_int(u64::from(elem.bit_width() / 8), false);
            Some(t.builder.build_int_nuw_mul(s, elem_bytes, "")?)
        }
        None => None,
    };
    let dst_ptr = t.element_pointer(op, dst, op.group("dst_indices"), n)?;
    let src_ptr = t.element_pointer(op, src, op.group("src_indices"), n)?;
    let copy = CpAsync { cache, bytes: bytes as u32, zero_fill: src_size.is_some() };
    t.nvvm.cp_async(&t.builder, copy, dst_ptr, src_ptr, src_size)?;
    Ok(())
}

/// `nvgpu.device_async_create_group` → `cp.async.commit_group`.
pub(super) fn lower_device_async_create_group(t: &mut FuncTranslator<'_, '_>, _op: &Operation) -> Result<()> {
    t.nvvm.cp_async_commit_group(&t.builder)?;
    Ok(())
}

/// `nvgpu.device_async_wait {numGroups = n}` → `cp.async.wait_group n` (default 0).
pub(super) fn lower_device_async_wait(t: &mut FuncTranslator<'_, '_>, op: &Operation) -> Result<()> {
    let n = op.attr("numGroups").and_then(Attribute::as_int).unwrap_or(0);
    let n = u32::try_from(n).map_err(|_| t.unsupported(op, format!("numGroups must be 0..=7, found {n}")))?;
    t.nvvm.cp_async_wait_group(&t.builder, n)?;
    Ok(())
}

/// `nvgpu.barrier` → `bar.sync 0`.
pub(super) fn lower_barrier(t: &mut FuncTranslator<'_, '_>, _op: &Operation) -> Result<()> {
    t.nvvm.barrier_sync(&t.builder, 0)?;
    Ok(())
}

// ---- loads and stores --------------------------------------------------------------------------------------

fn access_count(ty: &Type) -> u64 {
    match ty {
        Type::Vector(v) => v.num_elements(),
        _ => 1,
    }
}

/// `nvgpu.load %m[..] {if %mask} : T` → an aligned `load` from address space 1 or 3; with a mask, in a block
/// entered when it is true, and a `phi` of the loaded value and zero after it (LLVM turns it into a
/// predicated `ld` after a `mov 0`).
pub(super) fn lower_load(t: &mut FuncTranslator<'_, '_>, op: &Operation) -> Result<()> {
    let src = op.operand("src").ok_or_else(|| t.unsupported(op, "it needs a source"))?;
    let (ty, llvm_ty) = t.result_type(op)?;
    let count = access_count(&ty);
    let mask = op.operand("mask").map(|m| t.int(op, m)).transpose()?;
    let branch = match mask {
        Some(mask) => Some(t.enter_if(mask, "load", "loaded")?),
        None => None,
    };
    let ptr = t.element_pointer(op, src, op.group("indices"), count)?;
    let v = t.builder.build_load(llvm_ty, ptr, "")?;
    if let Some(i) = v.as_instruction_value() {
        let _ = i.set_alignment(access_alignment(ty.element_type(), count));
    }
    let v = match branch {
        Some((before, after)) => {
            let loaded = t.builder.get_insert_block().ok_or_else(|| super::internal("an insertion block"))?;
            t.builder.build_unconditional_branch(after)?;
            t.builder.position_at_end(after);
            let phi = t.builder.build_phi(llvm_ty, "")?;
            phi.add_incoming(&[(&v, loaded), (&llvm_ty.const_zero(), before)]);
            phi.as_basic_value()
        }
        None => v,
    };
    t.set_result(op, v)
}

/// `nvgpu.store %v, %m[..] {if %mask}` → an aligned `store`; with a mask, in a block entered when it is true
/// (LLVM turns it into a predicated `st`).
pub(super) fn lower_store(t: &mut FuncTranslator<'_, '_>, op: &Operation) -> Result<()> {
    let (Some(value), Some(dst)) = (op.operand("value"), op.operand("dst")) else {
        return Err(t.unsupported(op, "it needs a value and a destination"));
    };
    let ty = t.func.body.ty(value).clone();
    let count = access_count(&ty);
    let v = t.value(op, value)?;
    let mask = op.operand("mask").map(|m| t.int(op, m)).transpose()?;
    let after = match mask {
        Some(mask) => Some(t.enter_if(mask, "store", "stored")?.1),
        None => None,
    };
    let ptr = t.element_pointer(op, dst, op.group("indices"), count)?;
    let store = t.builder.build_store(ptr, v)?;
    let _ = store.set_alignment(access_alignment(ty.element_type(), count));
    if let Some(after) = after {
        t.builder.build_unconditional_branch(after)?;
        t.builder.position_at_end(after);
    }
    Ok(())
}

impl<'ctx> FuncTranslator<'_, 'ctx> {
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

// ---- vectors -----------------------------------------------------------------------------------------------

/// The flat element position of `position = [i, j, …]` in a vector of `shape`.
fn flat_position(t: &FuncTranslator<'_, '_>, op: &Operation, shape: &[u64]) -> Result<u64> {
    let pos = op.attr("position").and_then(Attribute::as_int_array).unwrap_or_default();
    if pos.len() != shape.len() || pos.iter().zip(shape).any(|(&i, &n)| i < 0 || i as u64 >= n) {
        return Err(t.unsupported(op, format!("position {pos:?} is outside the vector's shape {shape:?}")));
    }
    Ok(pos.iter().zip(shape).fold(0u64, |flat, (&i, &n)| flat * n + i as u64))
}

fn vector_shape(t: &FuncTranslator<'_, '_>, op: &Operation) -> Result<Vec<u64>> {
    let vector = op.operand("vector").ok_or_else(|| t.unsupported(op, "it needs a vector"))?;
    match t.func.body.ty(vector) {
        Type::Vector(v) => Ok(v.shape.clone()),
        other => Err(t.unsupported(op, format!("its operand must be a vector, not '{other}'"))),
    }
}

/// `nvgpu.extract %v [i, j]` → `extractelement`.
pub(super) fn lower_extract(t: &mut FuncTranslator<'_, '_>, op: &Operation) -> Result<()> {
    let shape = vector_shape(t, op)?;
    let flat = flat_position(t, op, &shape)?;
    let v = t.vector(op, op.operand("vector").ok_or_else(|| super::internal("checked"))?)?;
    let x = t.builder.build_extract_element(v, t.cx.i32_type().const_int(flat, false), "")?;
    t.set_result(op, x)
}

/// `nvgpu.insert %x, %v [i, j]` → `insertelement`.
pub(super) fn lower_insert(t: &mut FuncTranslator<'_, '_>, op: &Operation) -> Result<()> {
    let shape = vector_shape(t, op)?;
    let flat = flat_position(t, op, &shape)?;
    let v = t.vector(op, op.operand("vector").ok_or_else(|| super::internal("checked"))?)?;
    let x = t.value(op, op.operand("value").ok_or_else(|| t.unsupported(op, "it needs a value"))?)?;
    let r = t.builder.build_insert_element(v, x, t.cx.i32_type().const_int(flat, false), "")?;
    t.set_result(op, r.into())
}

