//! nvgpu ops → upstream MLIR ops, one method of the spine's `EmitNvgpu` per op kind.
//!
//! | tilec op | MLIR |
//! |---|---|
//! | `nvgpu.thread_id x/y/z` | `gpu.thread_id x/y/z` |
//! | `nvgpu.lane_id` | `gpu.lane_id` |
//! | `nvgpu.warp_id` | `gpu.thread_id x` / 32 |
//! | `nvgpu.ldmatrix` | `nvgpu.ldmatrix` on the flat shared memref |
//! | `nvgpu.stmatrix` | `nvvm.stmatrix` (sm_90) on the element's `!llvm.ptr<3>` |
//! | `nvgpu.mma.sync` | `nvgpu.mma.sync`; m8n8k4 (which `nvgpu` does not model), wrapping/u8 m16n8k32 (nvgpu always saturates) and bf16 (nvgpu cannot type it) `nvvm.mma.sync` |
//! | `nvgpu.device_async_copy` | `nvgpu.device_async_copy` (`bypassL1` for 16 bytes, like `.cg`) |
//! | `nvgpu.device_async_create_group` | `nvgpu.device_async_create_group` of the copies' tokens; none: `nvvm.cp.async.commit.group` |
//! | `nvgpu.device_async_wait` | `nvgpu.device_async_wait` on the newest visible group, else `nvvm.cp.async.wait.group` |
//! | `nvgpu.barrier` | `gpu.barrier` |
//! | `nvgpu.load`/`store` | `memref.load`/`store` or `vector.load`/`store`; masked ones in `scf.if` (a load's `else` yields zero) |
//! | `nvgpu.extract`/`insert` | `vector.extract`/`vector.insert` |
//! | `nvgpu.shuffle xor` | `gpu.shuffle xor` (width 32) |

use tilec_ir::body::{Operation, Value};
use tilec_ir::ops::{typed, Literal, MatrixOrder};
use tilec_ir::types::{ScalarType, Type};

use super::func::FuncEmitter;
use super::scalar::scalar_constant;
use super::{types, Result};
use crate::spine::{access_alignment, access_count, bytes_of, ldmatrix_row_elements, EmitNvgpu};



// ---- ldmatrix / stmatrix -----------------------------------------------------------------------------------



/// The `!llvm.ptr<3>` of an element of a shared tile.
fn shared_pointer(t: &mut FuncEmitter<'_>, op: &Operation, mem: Value, indices: &[Value]) -> Result<String> {
    let elem_bytes = u64::from(t.memref(op, mem)?.elem.bit_width() / 8);
    let (m, mty, offset) = t.element_offset(op, mem, indices, 8)?;
    let base = t.emit(&format!("memref.extract_aligned_pointer_as_index {m} : {mty} -> index"));
    let size = t.index_constant(elem_bytes as i64);
    let bytes = t.emit(&format!("arith.muli {offset}, {size} : index"));
    let address = t.emit(&format!("arith.addi {base}, {bytes} : index"));
    let address = t.emit(&format!("arith.index_cast {address} : index to i32"));
    Ok(t.emit(&format!("llvm.inttoptr {address} : i32 to !llvm.ptr<3>")))
}

// ---- mma.sync ----------------------------------------------------------------------------------------------


/// The registers of a fragment: rows of a `vector<Nx2xf16>` (`vector<2xf16>` each), or the elements of an f32
/// fragment.
fn registers(t: &mut FuncEmitter<'_>, v: &str, ty: &str, elem: ScalarType) -> (Vec<String>, String) {
    let inner = ty.trim_start_matches("vector<").trim_end_matches('>');
    let dims: Vec<&str> = inner.split('x').collect();
    let num: usize = dims[..dims.len() - 1].iter().map(|d| d.parse::<usize>().unwrap_or(1)).product();
    if elem == ScalarType::F16 {
        let flat = format!("vector<{num}xf16>");
        let f = if dims.len() > 2 { t.emit(&format!("vector.shape_cast {v} : {ty} to {flat}")) } else { v.to_string() };
        let regs = (0..num / 2)
            .map(|i| {
                let lo = 2 * i;
                t.emit(&format!("vector.extract_strided_slice {f} {{offsets = [{lo}], sizes = [2], strides = [1]}} : {flat} to vector<2xf16>"))
            })
            .collect();
        (regs, "vector<2xf16>".to_string())
    } else {
        let flat = format!("vector<{num}xf32>");
        let f = if dims.len() > 2 { t.emit(&format!("vector.shape_cast {v} : {ty} to {flat}")) } else { v.to_string() };
        let regs = (0..num).map(|i| t.emit(&format!("vector.extract {f}[{i}] : f32 from {flat}"))).collect();
        (regs, "f32".to_string())
    }
}

#[allow(clippy::too_many_arguments)]
fn lower_mma_m8n8k4(
    t: &mut FuncEmitter<'_>,
    op: &Operation,
    layouts: [MatrixOrder; 2],
    operands: [(&String, &String); 3],
    ea: ScalarType,
    ec: ScalarType,
    rty: &str,
) -> Result<()> {
    if ea != ScalarType::F16 || !matches!(ec, ScalarType::F16 | ScalarType::F32) {
        return Err(t.kernel.unsupported(op, format!("no mma.sync m8n8k4 with '{ea}' inputs and a '{ec}' accumulator")));
    }
    let (a, a_reg) = registers(t, operands[0].0, operands[0].1, ea);
    let (b, b_reg) = registers(t, operands[1].0, operands[1].1, ea);
    let (c, c_reg) = registers(t, operands[2].0, operands[2].1, ec);
    let fields = vec![c_reg.as_str(); c.len()].join(", ");
    let st = format!("!llvm.struct<({fields})>");
    let d = t.emit(&format!(
        "nvvm.mma.sync A[{}] B[{}] C[{}] {{layoutA = #nvvm.mma_layout<{}>, layoutB = #nvvm.mma_layout<{}>, shape = #nvvm.shape<m = 8, n = 8, k = 4>}} : ({a_reg}, {b_reg}, {c_reg}) -> {st}",
        a.join(", "),
        b.join(", "),
        c.join(", "),
        layouts[0],
        layouts[1]
    ));
    // Back into the result's (flat) vector.
    let n: usize = if ec == ScalarType::F16 { c.len() * 2 } else { c.len() };
    let e = if ec == ScalarType::F16 { "f16" } else { "f32" };
    let flat = format!("vector<{n}x{e}>");
    let zero = if ec == ScalarType::F16 { "0.0 : f16" } else { "0.0 : f32" };
    let z = t.emit(&format!("arith.constant {zero}"));
    let mut acc = t.emit(&format!("vector.broadcast {z} : {e} to {flat}"));
    for i in 0..c.len() {
        let x = t.emit(&format!("llvm.extractvalue {d}[{i}] : {st}"));
        acc = if ec == ScalarType::F16 {
            t.emit(&format!("vector.insert_strided_slice {x}, {acc} {{offsets = [{}], strides = [1]}} : vector<2xf16> into {flat}", 2 * i))
        } else {
            t.emit(&format!("vector.insert {x}, {acc} [{i}] : f32 into {flat}"))
        };
    }
    let v = if rty == flat { acc } else { t.emit(&format!("vector.shape_cast {acc} : {flat} to {rty}")) };
    t.set_result(op, v)
}

/// The fragment `v` of type `ty` as `i32` registers (`vector.bitcast` of its flat form).
fn i32_registers(t: &mut FuncEmitter<'_>, v: &str, ty: &str) -> Vec<String> {
    let inner = ty.trim_start_matches("vector<").trim_end_matches('>');
    let dims: Vec<&str> = inner.split('x').collect();
    let elem = dims[dims.len() - 1];
    let num: usize = dims[..dims.len() - 1].iter().map(|d| d.parse::<usize>().unwrap_or(1)).product();
    let bits: usize = elem.trim_start_matches(|c: char| c.is_ascii_alphabetic()).parse().unwrap_or(32);
    let flat = format!("vector<{num}x{elem}>");
    let f = if dims.len() > 2 { t.emit(&format!("vector.shape_cast {v} : {ty} to {flat}")) } else { v.to_string() };
    let words = num * bits / 32;
    let w = if elem == "i32" { f } else { t.emit(&format!("vector.bitcast {f} : {flat} to vector<{words}xi32>")) };
    (0..words).map(|i| t.emit(&format!("vector.extract {w}[{i}] : i32 from vector<{words}xi32>"))).collect()
}

/// An MMA whose A/B fragments are packed `i32` registers, lowered straight to `nvvm.mma.sync`: m16n8k32 on
/// `i8`/`u8` (wrapping unless `satfinite`; nvgpu always saturates and has no u8), and bf16 (which nvgpu's
/// lowering cannot type). C and D are `f32` or `i32` scalars.
#[allow(clippy::too_many_arguments)]
fn lower_mma_packed(
    t: &mut FuncEmitter<'_>,
    op: &Operation,
    shape: [i64; 3],
    ptx: &str,
    overflow: Option<&str>,
    operands: [(&String, &String); 3],
    c_elem: &str,
    rty: &str,
) -> Result<()> {
    let a = i32_registers(t, operands[0].0, operands[0].1);
    let b = i32_registers(t, operands[1].0, operands[1].1);
    let (cv, cty) = operands[2];
    let inner = cty.trim_start_matches("vector<").trim_end_matches('>');
    let dims: Vec<&str> = inner.split('x').collect();
    let n: usize = dims[..dims.len() - 1].iter().map(|d| d.parse::<usize>().unwrap_or(1)).product();
    let flat = format!("vector<{n}x{c_elem}>");
    let cf = if dims.len() > 2 { t.emit(&format!("vector.shape_cast {cv} : {cty} to {flat}")) } else { cv.clone() };
    let c: Vec<String> = (0..n).map(|i| t.emit(&format!("vector.extract {cf}[{i}] : {c_elem} from {flat}"))).collect();
    let overflow = overflow.map(|o| format!(", intOverflowBehavior = #nvvm.mma_int_overflow<{o}>")).unwrap_or_default();
    let st = format!("!llvm.struct<({})>", vec![c_elem; n].join(", "));
    let d = t.emit(&format!(
        "nvvm.mma.sync A[{}] B[{}] C[{}] {{layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<{ptx}>, multiplicandBPtxType = #nvvm.mma_type<{ptx}>, shape = #nvvm.shape<m = {}, n = {}, k = {}>{overflow}}} : (i32, i32, {c_elem}) -> {st}",
        a.join(", "),
        b.join(", "),
        c.join(", "),
        shape[0],
        shape[1],
        shape[2]
    ));
    let zero = if c_elem == "f32" { "0.0 : f32" } else { "0 : i32" };
    let z = t.emit(&format!("arith.constant {zero}"));
    let mut acc = t.emit(&format!("vector.broadcast {z} : {c_elem} to {flat}"));
    for i in 0..n {
        let x = t.emit(&format!("llvm.extractvalue {d}[{i}] : {st}"));
        acc = t.emit(&format!("vector.insert {x}, {acc} [{i}] : {c_elem} into {flat}"));
    }
    let v = if rty == flat { acc } else { t.emit(&format!("vector.shape_cast {acc} : {flat} to {rty}")) };
    t.set_result(op, v)
}




/// `position` as MLIR writes it (`1, 0`), and the vector's type (the spine checks that it is inside).
fn position(t: &FuncEmitter<'_>, op: &Operation, vector: Value, position: &[u32]) -> Result<(String, String)> {
    let Type::Vector(vt) = t.func.body.ty(vector) else {
        return Err(t.kernel.unsupported(op, "its operand must be a vector"));
    };
    let text: Vec<String> = position.iter().map(|p| p.to_string()).collect();
    Ok((text.join(", "), types::vector_type(vt).ok_or_else(|| t.kernel.unsupported(op, "unsupported element type"))?))
}

impl EmitNvgpu for FuncEmitter<'_> {
    /// `nvgpu.thread_id x|y|z` → `gpu.thread_id`.
    fn thread_id(&mut self, op: &Operation, v: &typed::ThreadId) -> Result<()> {
        let x = self.emit(&format!("gpu.thread_id {}", v.dim));
        self.set_result(op, x)
    }

    /// `nvgpu.lane_id` → `gpu.lane_id`.
    fn lane_id(&mut self, op: &Operation, _v: &typed::LaneId) -> Result<()> {
        let x = self.emit("gpu.lane_id");
        self.set_result(op, x)
    }

    /// `nvgpu.warp_id` → `gpu.thread_id x` / 32 (blocks are one-dimensional).
    fn warp_id(&mut self, op: &Operation, _v: &typed::WarpId) -> Result<()> {
        let tid = self.emit("gpu.thread_id x");
        let c32 = self.index_constant(32);
        let x = self.emit(&format!("arith.divui {tid}, {c32} : index"));
        self.set_result(op, x)
    }

    /// `nvgpu.ldmatrix %s[%r, %c] {numTiles = n, transpose = t}` → `nvgpu.ldmatrix` at this lane's row offset
    /// (16-byte rows, 8-bit ones not transposed: MLIR's form too).
    fn ldmatrix(&mut self, op: &Operation, v: &typed::LdMatrix) -> Result<()> {
        let (_, ty) = self.result_type(op)?;
        let (m, mty, offset) = self.element_offset(op, v.src, &v.indices, ldmatrix_row_elements(self.func, v.src))?;
        let x = self.emit(&format!(
            "nvgpu.ldmatrix {m}[{offset}] {{numTiles = {} : i32, transpose = {}}} : {mty} -> {ty}",
            v.num_tiles, v.transpose
        ));
        self.set_result(op, x)
    }

    /// `nvgpu.stmatrix %v, %s[..] {numTiles = n}` → `nvvm.stmatrix` (sm_90+) of the fragment's `i32` registers.
    fn stmatrix(&mut self, op: &Operation, v: &typed::StMatrix) -> Result<()> {
        let count = v.num_tiles;
        let (x, xty) = self.value(op, v.value)?;
        let Type::Vector(vector) = self.func.body.ty(v.value).clone() else {
            return Err(self.kernel.unsupported(op, "its value must be a vector"));
        };
        if bytes_of(vector.elem, vector.num_elements()) != 4 * u64::from(count) {
            return Err(self.kernel.unsupported(op, format!("a fragment of type {xty} does not fill {count} registers")));
        }
        let elem = types::scalar_type(vector.elem).unwrap_or("f16");
        let flat_ty = format!("vector<{}x{elem}>", vector.num_elements());
        let flat = self.emit(&format!("vector.shape_cast {x} : {xty} to {flat_ty}"));
        let words = self.emit(&format!("vector.bitcast {flat} : {flat_ty} to vector<{count}xi32>"));
        let mut registers = Vec::new();
        for i in 0..count {
            registers.push(self.emit(&format!("vector.extract {words}[{i}] : i32 from vector<{count}xi32>")));
        }
        let ptr = shared_pointer(self, op, v.dst, &v.indices)?;
        let layout = if v.transpose { "col" } else { "row" };
        let register_types: Vec<&str> = registers.iter().map(|_| "i32").collect();
        self.line(&format!(
            "nvvm.stmatrix {ptr}, {} {{layout = #nvvm.mma_layout<{layout}>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>, eltType = #nvvm.ld_st_matrix_elt_type<b16>}} : !llvm.ptr<3>, {}",
            registers.join(", "),
            register_types.join(", ")
        ));
        Ok(())
    }

    /// `nvgpu.mma.sync(%a, %b, %c) {mmaShape = [m, n, k]}` → `nvgpu.mma.sync` (tf32 inputs set `tf32Enabled`);
    /// m8n8k4, wrapping and u8 m16n8k32, and bf16 → `nvvm.mma.sync` on the fragments' registers. Which variants
    /// translate is this backend's own limit.
    fn mma_sync(&mut self, op: &Operation, v: &typed::MmaSync) -> Result<()> {
        let shape = v.mma_shape.dims().map(i64::from);
        let body = &self.func.body;
        let (ea, ec) = (body.ty(v.a).element_type(), body.ty(v.c).element_type());
        let (av, aty) = self.value(op, v.a)?;
        let (bv, bty) = self.value(op, v.b)?;
        let (cv, cty) = self.value(op, v.c)?;
        let (_, rty) = self.result_type(op)?;
        let operands = [(&av, &aty), (&bv, &bty), (&cv, &cty)];
        if shape == [8, 8, 4] {
            return lower_mma_m8n8k4(self, op, [v.layout_a, v.layout_b], operands, ea, ec, &rty);
        }
        let satfinite = v.satfinite;
        if shape == [16, 8, 32] && matches!(ea, ScalarType::I8 | ScalarType::U8) && ec == ScalarType::I32 && !(ea == ScalarType::I8 && satfinite) {
            // nvgpu's lowering always saturates integer MMAs, and has no u8: wrapping (and u8) MMAs go to NVVM directly.
            let ptx = if ea == ScalarType::U8 { "u8" } else { "s8" };
            let overflow = if satfinite { "satfinite" } else { "wrapped" };
            return lower_mma_packed(self, op, shape, ptx, Some(overflow), operands, "i32", &rty);
        }
        if matches!(shape, [16, 8, 16] | [16, 8, 8]) && ea == ScalarType::BF16 && ec == ScalarType::F32 {
            return lower_mma_packed(self, op, shape, "bf16", None, operands, "f32", &rty);
        }
        let supported = matches!(
            (shape, ea, ec),
            ([16, 8, 16 | 8], ScalarType::F16, ScalarType::F32 | ScalarType::F16)
                | ([16, 8, 8 | 4], ScalarType::TF32, ScalarType::F32)
                | ([16, 8, 32], ScalarType::I8, ScalarType::I32)
        );
        if !supported {
            return Err(self.kernel.unsupported(
                op,
                format!("no nvgpu.mma.sync {} with '{ea}' inputs and a '{ec}' accumulator in the MLIR backend", v.mma_shape),
            ));
        }
        let tf32 = if ea == ScalarType::TF32 { ", tf32Enabled" } else { "" };
        let x = self.emit(&format!(
            "nvgpu.mma.sync({av}, {bv}, {cv}) {{mmaShape = [{}, {}, {}]{tf32}}} : ({aty}, {bty}, {cty}) -> {rty}",
            shape[0], shape[1], shape[2]
        ));
        self.set_result(op, x)
    }

    /// `nvgpu.device_async_copy %g[..], %s[..], n {, %src_elements}` → `nvgpu.device_async_copy` on the flat
    /// views (16-byte copies bypass L1, as the LLVM backend's `.cg`).
    fn device_async_copy(&mut self, op: &Operation, v: &typed::DeviceAsyncCopy) -> Result<()> {
        let elem = self.func.body.ty(v.dst).element_type();
        let n = u64::from(v.dst_elements);
        let bytes = bytes_of(elem, n);
        let src_elements = match v.src_elements {
            Some(s) => Some(self.name(op, s)?),
            None => None,
        };
        let (d, dty, doff) = self.element_offset(op, v.dst, &v.dst_indices, n)?;
        let (s, sty, soff) = self.element_offset(op, v.src, &v.src_indices, n)?;
        let extra = src_elements.map(|e| format!(", {e}")).unwrap_or_default();
        let bypass = if bytes == 16 { " {bypassL1}" } else { "" };
        let token = self.emit(&format!("nvgpu.device_async_copy {s}[{soff}], {d}[{doff}], {n}{extra}{bypass} : {sty} to {dty}"));
        self.pending_copies.push(token);
        Ok(())
    }

    /// `nvgpu.device_async_create_group` → `nvgpu.device_async_create_group` of the copies issued since the last
    /// group in this region (the tokens only order the IR; the op is `cp.async.commit_group`); with none (the
    /// copies were synchronous), `nvvm.cp.async.commit.group` of an empty group, which keeps the group count.
    fn device_async_create_group(&mut self, _op: &Operation, _v: &typed::DeviceAsyncCreateGroup) -> Result<()> {
        let tokens = std::mem::take(&mut self.pending_copies).join(", ");
        if tokens.is_empty() {
            self.line("nvvm.cp.async.commit.group");
            self.group_token = None;
        } else {
            let g = self.emit(&format!("nvgpu.device_async_create_group {tokens}"));
            self.group_token = Some(g);
        }
        Ok(())
    }

    /// `nvgpu.device_async_wait {numGroups = n}` → `nvgpu.device_async_wait` on the newest group token visible
    /// here; when none is (the group was made in an earlier loop iteration), `nvvm.cp.async.wait.group n`.
    fn device_async_wait(&mut self, _op: &Operation, v: &typed::DeviceAsyncWait) -> Result<()> {
        let n = v.num_groups;
        match self.group_token.clone() {
            Some(g) => self.line(&format!("nvgpu.device_async_wait {g} {{numGroups = {n} : i32}}")),
            None => self.line(&format!("nvvm.cp.async.wait.group {n}")),
        }
        Ok(())
    }

    /// `nvgpu.barrier` → `gpu.barrier`.
    /// `nvgpu.shuffle xor %x, offset` → `gpu.shuffle xor %x, %offset, %c32 : T` (the full warp; the validity
    /// result is unused: every lane is in range).
    fn shuffle(&mut self, op: &Operation, v: &typed::Shuffle) -> Result<()> {
        let (_, ty) = self.result_type(op)?;
        let x = self.name(op, v.value)?;
        let offset = self.emit(&format!("arith.constant {} : i32", v.offset));
        let width = self.emit("arith.constant 32 : i32");
        let (r, valid) = (self.fresh(), self.fresh());
        self.line(&format!("{r}, {valid} = gpu.shuffle xor {x}, {offset}, {width} : {ty}"));
        self.set_result(op, r)
    }

    fn barrier(&mut self, _op: &Operation, _v: &typed::Barrier) -> Result<()> {
        self.line("gpu.barrier");
        Ok(())
    }

    /// `nvgpu.load %m[..] {if %mask} : T` → `memref.load`, or an aligned `vector.load` (+ `vector.shape_cast`);
    /// with a mask, inside an `scf.if` that yields zero where the mask is false.
    fn load(&mut self, op: &Operation, v: &typed::Load) -> Result<()> {
        let (ty, mlir_ty) = self.result_type(op)?;
        let count = access_count(&ty);
        let elem = types::scalar_type(ty.element_type()).unwrap_or("f32");
        // Address arithmetic and the zero before the branch, the load inside it.
        let (m, mty, off) = self.element_offset(op, v.src, &v.indices, count)?;
        let mask = match v.mask {
            Some(mask) => {
                let mask = self.name(op, mask)?;
                let zero = scalar_constant(self, op, ty.element_type(), Literal::Int(0))?;
                let zero = if matches!(ty, Type::Vector(_)) { self.emit(&format!("vector.broadcast {zero} : {elem} to {mlir_ty}")) } else { zero };
                let result = self.fresh();
                self.line(&format!("{result} = scf.if {mask} -> ({mlir_ty}) {{"));
                self.push_indent();
                Some((result, zero))
            }
            None => None,
        };
        let x = match &ty {
            Type::Vector(vt) => {
                let flat = format!("vector<{count}x{elem}>");
                let align = access_alignment(vt.elem, count);
                let x = self.emit(&format!("vector.load {m}[{off}] {{alignment = {align} : i64}} : {mty}, {flat}"));
                if flat == mlir_ty { x } else { self.emit(&format!("vector.shape_cast {x} : {flat} to {mlir_ty}")) }
            }
            _ => self.emit(&format!("memref.load {m}[{off}] : {mty}")),
        };
        let x = match mask {
            Some((result, zero)) => {
                self.line(&format!("scf.yield {x} : {mlir_ty}"));
                self.pop_indent();
                self.line("} else {");
                self.push_indent();
                self.line(&format!("scf.yield {zero} : {mlir_ty}"));
                self.pop_indent();
                self.line("}");
                result
            }
            None => x,
        };
        self.set_result(op, x)
    }

    /// `nvgpu.store %v, %m[..] {if %mask}` → `memref.store`/`vector.store`; with a mask, inside `scf.if`.
    fn store(&mut self, op: &Operation, v: &typed::Store) -> Result<()> {
        let ty = self.func.body.ty(v.value).clone();
        let (x, xty) = self.value(op, v.value)?;
        let mask = v.mask.map(|m| self.name(op, m)).transpose()?;
        let count = access_count(&ty);
        // Address arithmetic before the branch (it is speculatable), the store inside it.
        let (m, mty, off) = self.element_offset(op, v.dst, &v.indices, count)?;
        let flat = match &ty {
            Type::Vector(vt) => {
                let elem = types::scalar_type(vt.elem).unwrap_or("f32");
                let flat = format!("vector<{count}x{elem}>");
                Some(if flat == xty { (x.clone(), flat) } else { (self.emit(&format!("vector.shape_cast {x} : {xty} to {flat}")), flat) })
            }
            _ => None,
        };
        if let Some(mask) = &mask {
            self.line(&format!("scf.if {mask} {{"));
            self.push_indent();
        }
        match flat {
            Some((flat_value, flat)) => {
                let align = access_alignment(ty.element_type(), count);
                self.line(&format!("vector.store {flat_value}, {m}[{off}] {{alignment = {align} : i64}} : {mty}, {flat}"));
            }
            None => self.line(&format!("memref.store {x}, {m}[{off}] : {mty}")),
        }
        if mask.is_some() {
            self.pop_indent();
            self.line("}");
        }
        Ok(())
    }

    /// `nvgpu.extract %v [i, j]` → `vector.extract`.
    fn extract(&mut self, op: &Operation, v: &typed::Extract) -> Result<()> {
        let (pos, vty) = position(self, op, v.vector, &v.position)?;
        let vector = self.name(op, v.vector)?;
        let (_, ety) = self.result_type(op)?;
        let x = self.emit(&format!("vector.extract {vector}[{pos}] : {ety} from {vty}"));
        self.set_result(op, x)
    }

    /// `nvgpu.insert %x, %v [i, j]` → `vector.insert`.
    fn insert(&mut self, op: &Operation, v: &typed::Insert) -> Result<()> {
        let (pos, vty) = position(self, op, v.vector, &v.position)?;
        let vector = self.name(op, v.vector)?;
        let (x, xty) = self.value(op, v.value)?;
        let r = self.emit(&format!("vector.insert {x}, {vector} [{pos}] : {xty} into {vty}"));
        self.set_result(op, r)
    }
}
