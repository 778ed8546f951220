//! nvgpu ops → upstream MLIR ops, one function per op kind.
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

use tilec_ir::attr::Attribute;
use tilec_ir::body::Operation;
use tilec_ir::types::{ScalarType, Type};

use super::func::FuncEmitter;
use super::scalar::scalar_constant;
use super::{types, Result};

fn dim(op: &Operation) -> &'static str {
    match op.attr("dim").and_then(Attribute::as_keyword) {
        Some("y") => "y",
        Some("z") => "z",
        _ => "x",
    }
}

/// `nvgpu.thread_id x|y|z` → `gpu.thread_id`.
pub(super) fn lower_thread_id(t: &mut FuncEmitter<'_>, op: &Operation) -> Result<()> {
    let v = t.emit(&format!("gpu.thread_id {}", dim(op)));
    t.set_result(op, v)
}

/// `nvgpu.lane_id` → `gpu.lane_id`.
pub(super) fn lower_lane_id(t: &mut FuncEmitter<'_>, op: &Operation) -> Result<()> {
    let v = t.emit("gpu.lane_id");
    t.set_result(op, v)
}

/// `nvgpu.warp_id` → `gpu.thread_id x` / 32 (blocks are one-dimensional).
pub(super) fn lower_warp_id(t: &mut FuncEmitter<'_>, op: &Operation) -> Result<()> {
    let tid = t.emit("gpu.thread_id x");
    let c32 = t.index_constant(32);
    let v = t.emit(&format!("arith.divui {tid}, {c32} : index"));
    t.set_result(op, v)
}

// ---- ldmatrix / stmatrix -----------------------------------------------------------------------------------

fn matrix_count(t: &FuncEmitter<'_>, op: &Operation) -> Result<(i64, bool)> {
    let count = match op.attr("numTiles").and_then(Attribute::as_int) {
        Some(n @ (1 | 2 | 4)) => n,
        other => return Err(t.unsupported(op, format!("numTiles must be 1, 2 or 4, found {other:?}"))),
    };
    Ok((count, op.attr("transpose").and_then(Attribute::as_bool).unwrap_or(false)))
}

/// `nvgpu.ldmatrix %s[%r, %c] {numTiles = n, transpose = t}` → `nvgpu.ldmatrix` at this lane's row offset.
pub(super) fn lower_ldmatrix(t: &mut FuncEmitter<'_>, op: &Operation) -> Result<()> {
    let (count, transpose) = matrix_count(t, op)?;
    let src = op.operand("src").ok_or_else(|| t.unsupported(op, "it needs a source"))?;
    let (_, ty) = t.result_type(op)?;
    // A row is 16 bytes: 8 16-bit elements, or 16 8-bit ones (not transposed; MLIR's form too).
    let row_elements = 128 / u64::from(t.func.body.ty(src).element_type().bit_width().max(1));
    let (m, mty, offset) = t.element_offset(op, src, op.group("indices"), row_elements)?;
    let v = t.emit(&format!(
        "nvgpu.ldmatrix {m}[{offset}] {{numTiles = {count} : i32, transpose = {transpose}}} : {mty} -> {ty}"
    ));
    t.set_result(op, v)
}

/// `nvgpu.stmatrix %v, %s[..] {numTiles = n}` → `nvvm.stmatrix` (sm_90+) of the fragment's `i32` registers.
pub(super) fn lower_stmatrix(t: &mut FuncEmitter<'_>, op: &Operation) -> Result<()> {
    if !t.target.has_stmatrix() {
        return Err(t.unsupported(op, format!("stmatrix needs sm_90 or newer; the target is {}", t.target)));
    }
    let (count, transpose) = matrix_count(t, op)?;
    let (Some(value), Some(dst)) = (op.operand("value"), op.operand("dst")) else {
        return Err(t.unsupported(op, "it needs a value and a destination"));
    };
    let (v, vty) = t.value(op, value)?;
    let Type::Vector(vector) = t.func.body.ty(value).clone() else {
        return Err(t.unsupported(op, "its value must be a vector"));
    };
    if types::bytes_of(vector.elem, vector.num_elements()) != 4 * count as u64 {
        return Err(t.unsupported(op, format!("a fragment of type {vty} does not fill {count} registers")));
    }
    let elem = types::scalar_type(vector.elem).unwrap_or("f16");
    let flat_ty = format!("vector<{}x{elem}>", vector.num_elements());
    let flat = t.emit(&format!("vector.shape_cast {v} : {vty} to {flat_ty}"));
    let words = t.emit(&format!("vector.bitcast {flat} : {flat_ty} to vector<{count}xi32>"));
    let mut registers = Vec::new();
    for i in 0..count {
        registers.push(t.emit(&format!("vector.extract {words}[{i}] : i32 from vector<{count}xi32>")));
    }
    let ptr = shared_pointer(t, op, dst, op.group("indices"))?;
    let layout = if transpose { "col" } else { "row" };
    let register_types: Vec<&str> = registers.iter().map(|_| "i32").collect();
    t.line(&format!(
        "nvvm.stmatrix {ptr}, {} {{layout = #nvvm.mma_layout<{layout}>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>, eltType = #nvvm.ld_st_matrix_elt_type<b16>}} : !llvm.ptr<3>, {}",
        registers.join(", "),
        register_types.join(", ")
    ));
    Ok(())
}

/// The `!llvm.ptr<3>` of an element of a shared tile.
fn shared_pointer(t: &mut FuncEmitter<'_>, op: &Operation, mem: tilec_ir::body::Value, indices: &[tilec_ir::body::Value]) -> Result<String> {
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

/// `nvgpu.mma.sync(%a, %b, %c) {mmaShape = [m, n, k]}` → `nvgpu.mma.sync` (tf32 inputs set `tf32Enabled`);
/// m8n8k4 → `nvvm.mma.sync` on the fragments' registers.
pub(super) fn lower_mma_sync(t: &mut FuncEmitter<'_>, op: &Operation) -> Result<()> {
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
    let (Some(a), Some(b), Some(c)) = (op.operand("a"), op.operand("b"), op.operand("c")) else {
        return Err(t.unsupported(op, "it needs A, B and C"));
    };
    let body = &t.func.body;
    let (ea, eb, ec) = (body.ty(a).element_type(), body.ty(b).element_type(), body.ty(c).element_type());
    if ea != eb {
        return Err(t.unsupported(op, format!("A and B must have one element type, found '{ea}' and '{eb}'")));
    }
    let (av, aty) = t.value(op, a)?;
    let (bv, bty) = t.value(op, b)?;
    let (cv, cty) = t.value(op, c)?;
    let (_, rty) = t.result_type(op)?;
    if shape == [8, 8, 4] {
        return lower_mma_m8n8k4(t, op, [&layout_a, &layout_b], [(&av, &aty), (&bv, &bty), (&cv, &cty)], ea, ec, &rty);
    }
    if layout_a != "row" || layout_b != "col" {
        return Err(t.unsupported(op, format!("only m8n8k4 has layouts other than .row.col, found {layout_a}.{layout_b}")));
    }
    let satfinite = op.attr("satfinite").is_some_and(|s| s.as_bool() != Some(false));
    if shape == [16, 8, 32] && matches!(ea, ScalarType::I8 | ScalarType::U8) && ec == ScalarType::I32 && !(ea == ScalarType::I8 && satfinite) {
        // nvgpu's lowering always saturates integer MMAs, and has no u8: wrapping (and u8) MMAs go to NVVM directly.
        let ptx = if ea == ScalarType::U8 { "u8" } else { "s8" };
        let overflow = if satfinite { "satfinite" } else { "wrapped" };
        return lower_mma_packed(t, op, shape, ptx, Some(overflow), [(&av, &aty), (&bv, &bty), (&cv, &cty)], "i32", &rty);
    }
    if matches!(shape, [16, 8, 16] | [16, 8, 8]) && ea == ScalarType::BF16 && ec == ScalarType::F32 {
        return lower_mma_packed(t, op, shape, "bf16", None, [(&av, &aty), (&bv, &bty), (&cv, &cty)], "f32", &rty);
    }
    let supported = matches!(
        (shape, ea, ec),
        ([16, 8, 16 | 8], ScalarType::F16, ScalarType::F32 | ScalarType::F16)
            | ([16, 8, 8 | 4], ScalarType::TF32, ScalarType::F32)
            | ([16, 8, 32], ScalarType::I8, ScalarType::I32)
    );
    if !supported {
        return Err(t.unsupported(
            op,
            format!(
                "no nvgpu.mma.sync m{}n{}k{} with '{ea}' inputs and a '{ec}' accumulator in the MLIR backend",
                shape[0],
                shape[1],
                shape[2]
            ),
        ));
    }
    let tf32 = if ea == ScalarType::TF32 { ", tf32Enabled" } else { "" };
    let v = t.emit(&format!(
        "nvgpu.mma.sync({av}, {bv}, {cv}) {{mmaShape = [{}, {}, {}]{tf32}}} : ({aty}, {bty}, {cty}) -> {rty}",
        shape[0], shape[1], shape[2]
    ));
    t.set_result(op, v)
}

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
    layouts: [&str; 2],
    operands: [(&String, &String); 3],
    ea: ScalarType,
    ec: ScalarType,
    rty: &str,
) -> Result<()> {
    if ea != ScalarType::F16 || !matches!(ec, ScalarType::F16 | ScalarType::F32) {
        return Err(t.unsupported(op, format!("no mma.sync m8n8k4 with '{ea}' inputs and a '{ec}' accumulator")));
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

// ---- cp.async ----------------------------------------------------------------------------------------------

/// `nvgpu.device_async_copy %g[..], %s[..], n {, %src_elements}` → `nvgpu.device_async_copy` on the flat
/// views (16-byte copies bypass L1, as the LLVM backend's `.cg`).
pub(super) fn lower_device_async_copy(t: &mut FuncEmitter<'_>, op: &Operation) -> Result<()> {
    let (Some(src), Some(dst)) = (op.operand("src"), op.operand("dst")) else {
        return Err(t.unsupported(op, "it needs a source and a destination"));
    };
    let elem = t.func.body.ty(dst).element_type();
    let n = op.attr("dstElements").and_then(Attribute::as_int).unwrap_or(0).max(0) as u64;
    let bytes = types::bytes_of(elem, n);
    if ![4, 8, 16].contains(&bytes) || elem.bit_width() < 8 {
        return Err(t.unsupported(op, format!("it copies 4, 8 or 16 bytes, not {n} x '{elem}'")));
    }
    let src_elements = match op.operand("src_elements") {
        Some(s) => Some(t.name(op, s)?),
        None => None,
    };
    let (d, dty, doff) = t.element_offset(op, dst, op.group("dst_indices"), n)?;
    let (s, sty, soff) = t.element_offset(op, src, op.group("src_indices"), n)?;
    let extra = src_elements.map(|e| format!(", {e}")).unwrap_or_default();
    let bypass = if bytes == 16 { " {bypassL1}" } else { "" };
    let token = t.emit(&format!("nvgpu.device_async_copy {s}[{soff}], {d}[{doff}], {n}{extra}{bypass} : {sty} to {dty}"));
    t.pending_copies.push(token);
    Ok(())
}

/// `nvgpu.device_async_create_group` → `nvgpu.device_async_create_group` of the copies issued since the last
/// group in this region (the tokens only order the IR; the op is `cp.async.commit_group`); with none (the
/// copies were synchronous), `nvvm.cp.async.commit.group` of an empty group, which keeps the group count.
pub(super) fn lower_device_async_create_group(t: &mut FuncEmitter<'_>, _op: &Operation) -> Result<()> {
    let tokens = std::mem::take(&mut t.pending_copies).join(", ");
    if tokens.is_empty() {
        t.line("nvvm.cp.async.commit.group");
        t.group_token = None;
    } else {
        let g = t.emit(&format!("nvgpu.device_async_create_group {tokens}"));
        t.group_token = Some(g);
    }
    Ok(())
}

/// `nvgpu.device_async_wait {numGroups = n}` → `nvgpu.device_async_wait` on the newest group token visible
/// here; when none is (the group was made in an earlier loop iteration), `nvvm.cp.async.wait.group n`.
pub(super) fn lower_device_async_wait(t: &mut FuncEmitter<'_>, op: &Operation) -> Result<()> {
    let n = op.attr("numGroups").and_then(Attribute::as_int).unwrap_or(0);
    if !(0..=7).contains(&n) {
        return Err(t.unsupported(op, format!("numGroups must be 0..=7, found {n}")));
    }
    match t.group_token.clone() {
        Some(g) => t.line(&format!("nvgpu.device_async_wait {g} {{numGroups = {n} : i32}}")),
        None => t.line(&format!("nvvm.cp.async.wait.group {n}")),
    }
    Ok(())
}

/// `nvgpu.barrier` → `gpu.barrier`.
pub(super) fn lower_barrier(t: &mut FuncEmitter<'_>, _op: &Operation) -> Result<()> {
    t.line("gpu.barrier");
    Ok(())
}

// ---- loads and stores --------------------------------------------------------------------------------------

/// Byte alignment of an access of `count` elements (its size rounded down to a power of two, at most 16).
fn access_alignment(elem: ScalarType, count: u64) -> u64 {
    let bytes = types::bytes_of(elem, count).max(1);
    (1u64 << bytes.trailing_zeros()).min(16)
}

/// `nvgpu.load %m[..] {if %mask} : T` → `memref.load`, or an aligned `vector.load` (+ `vector.shape_cast`);
/// with a mask, inside an `scf.if` that yields zero where the mask is false.
pub(super) fn lower_load(t: &mut FuncEmitter<'_>, op: &Operation) -> Result<()> {
    let src = op.operand("src").ok_or_else(|| t.unsupported(op, "it needs a source"))?;
    let (ty, mlir_ty) = t.result_type(op)?;
    let count = access_count(&ty);
    let elem = types::scalar_type(ty.element_type()).unwrap_or("f32");
    // Address arithmetic and the zero before the branch, the load inside it.
    let (m, mty, off) = t.element_offset(op, src, op.group("indices"), count)?;
    let mask = match op.operand("mask") {
        Some(mask) => {
            let mask = t.name(op, mask)?;
            let zero = scalar_constant(t, op, ty.element_type(), Some(&Attribute::Int(0)))?;
            let zero = if matches!(ty, Type::Vector(_)) { t.emit(&format!("vector.broadcast {zero} : {elem} to {mlir_ty}")) } else { zero };
            let result = t.fresh();
            t.line(&format!("{result} = scf.if {mask} -> ({mlir_ty}) {{"));
            t.push_indent();
            Some((result, zero))
        }
        None => None,
    };
    let v = match &ty {
        Type::Vector(vt) => {
            let flat = format!("vector<{count}x{elem}>");
            let align = access_alignment(vt.elem, count);
            let x = t.emit(&format!("vector.load {m}[{off}] {{alignment = {align} : i64}} : {mty}, {flat}"));
            if flat == mlir_ty { x } else { t.emit(&format!("vector.shape_cast {x} : {flat} to {mlir_ty}")) }
        }
        _ => t.emit(&format!("memref.load {m}[{off}] : {mty}")),
    };
    let v = match mask {
        Some((result, zero)) => {
            t.line(&format!("scf.yield {v} : {mlir_ty}"));
            t.pop_indent();
            t.line("} else {");
            t.push_indent();
            t.line(&format!("scf.yield {zero} : {mlir_ty}"));
            t.pop_indent();
            t.line("}");
            result
        }
        None => v,
    };
    t.set_result(op, v)
}

fn access_count(ty: &Type) -> u64 {
    match ty {
        Type::Vector(v) => v.num_elements(),
        _ => 1,
    }
}

/// `nvgpu.store %v, %m[..] {if %mask}` → `memref.store`/`vector.store`; with a mask, inside `scf.if`.
pub(super) fn lower_store(t: &mut FuncEmitter<'_>, op: &Operation) -> Result<()> {
    let (Some(value), Some(dst)) = (op.operand("value"), op.operand("dst")) else {
        return Err(t.unsupported(op, "it needs a value and a destination"));
    };
    let ty = t.func.body.ty(value).clone();
    let (v, vty) = t.value(op, value)?;
    let mask = op.operand("mask").map(|m| t.name(op, m)).transpose()?;
    let count = access_count(&ty);
    // Address arithmetic before the branch (it is speculatable), the store inside it.
    let (m, mty, off) = t.element_offset(op, dst, op.group("indices"), count)?;
    let flat = match &ty {
        Type::Vector(vt) => {
            let elem = types::scalar_type(vt.elem).unwrap_or("f32");
            let flat = format!("vector<{count}x{elem}>");
            Some(if flat == vty { (v.clone(), flat) } else { (t.emit(&format!("vector.shape_cast {v} : {vty} to {flat}")), flat) })
        }
        _ => None,
    };
    if let Some(mask) = &mask {
        t.line(&format!("scf.if {mask} {{"));
        t.push_indent();
    }
    match flat {
        Some((x, flat)) => {
            let align = access_alignment(ty.element_type(), count);
            t.line(&format!("vector.store {x}, {m}[{off}] {{alignment = {align} : i64}} : {mty}, {flat}"));
        }
        None => t.line(&format!("memref.store {v}, {m}[{off}] : {mty}")),
    }
    if mask.is_some() {
        t.pop_indent();
        t.line("}");
    }
    Ok(())
}

// ---- vectors -----------------------------------------------------------------------------------------------

fn position(t: &FuncEmitter<'_>, op: &Operation) -> Result<(String, String)> {
    let vector = op.operand("vector").ok_or_else(|| t.unsupported(op, "it needs a vector"))?;
    let Type::Vector(vt) = t.func.body.ty(vector) else {
        return Err(t.unsupported(op, "its operand must be a vector"));
    };
    let pos = op.attr("position").and_then(Attribute::as_int_array).unwrap_or_default();
    if pos.len() != vt.shape.len() || pos.iter().zip(&vt.shape).any(|(&i, &n)| i < 0 || i as u64 >= n) {
        return Err(t.unsupported(op, format!("position {pos:?} is outside the vector's shape {:?}", vt.shape)));
    }
    let text: Vec<String> = pos.iter().map(|p| p.to_string()).collect();
    Ok((text.join(", "), types::vector_type(vt).ok_or_else(|| t.unsupported(op, "unsupported element type"))?))
}

/// `nvgpu.extract %v [i, j]` → `vector.extract`.
pub(super) fn lower_extract(t: &mut FuncEmitter<'_>, op: &Operation) -> Result<()> {
    let (pos, vty) = position(t, op)?;
    let v = t.name(op, op.operand("vector").ok_or_else(|| super::internal("checked"))?)?;
    let (_, ety) = t.result_type(op)?;
    let x = t.emit(&format!("vector.extract {v}[{pos}] : {ety} from {vty}"));
    t.set_result(op, x)
}

/// `nvgpu.insert %x, %v [i, j]` → `vector.insert`.
pub(super) fn lower_insert(t: &mut FuncEmitter<'_>, op: &Operation) -> Result<()> {
    let (pos, vty) = position(t, op)?;
    let v = t.name(op, op.operand("vector").ok_or_else(|| super::internal("checked"))?)?;
    let (x, xty) = t.value(op, op.operand("value").ok_or_else(|| t.unsupported(op, "it needs a value"))?)?;
    let r = t.emit(&format!("vector.insert {x}, {v} [{pos}] : {xty} into {vty}"));
    t.set_result(op, r)
}
