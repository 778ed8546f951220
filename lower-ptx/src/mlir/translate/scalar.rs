//! Per-thread `tile` ops → `arith` (and `gpu` ids, `vector.broadcast`), with the interpreter's semantics as
//! the LLVM backend implements them: integer arithmetic wraps, division truncates (`divsi`/`remsi`;
//! `divui`/`remui` for `u8` and `i1`), float `min`/`max` ignore a NaN (`minnumf`/`maxnumf`), tf32 results
//! are rounded to nearest even at mantissa bit 13.

use tilec_ir::attr::Attribute;
use tilec_ir::body::Operation;
use tilec_ir::ops::OpKind;
use tilec_ir::types::{ScalarType, Type};

use super::func::FuncEmitter;
use super::memory::Extent;
use super::{types, Result};

/// A scalar constant of type `ty` (MLIR type `mlir`): integers as decimal literals, floats from the exact
/// bits of the f64 value (`arith.truncf` folds the rounding to narrower types at compile time).
pub(super) fn scalar_constant(t: &mut FuncEmitter<'_>, op: &Operation, ty: ScalarType, value: Option<&Attribute>) -> Result<String> {
    let value = value.ok_or_else(|| t.unsupported(op, "it needs a value"))?;
    let mlir = types::scalar_type(ty).ok_or_else(|| t.unsupported(op, format!("no constants of '{ty}'")))?;
    if ty.is_float() {
        let x = value.as_f64().ok_or_else(|| t.unsupported(op, format!("'{value}' is not a valid '{ty}'")))?;
        if ty == ScalarType::F64 {
            return Ok(t.emit(&format!("arith.constant 0x{:016X} : f64", x.to_bits())));
        }
        if ty == ScalarType::TF32 {
            return Ok(t.emit(&format!("arith.constant 0x{:08X} : f32", round_tf32(x as f32).to_bits())));
        }
        let wide = t.emit(&format!("arith.constant 0x{:016X} : f64", x.to_bits()));
        return Ok(t.emit(&format!("arith.truncf {wide} : f64 to {mlir}")));
    }
    let n = match value {
        Attribute::Int(n) => *n,
        Attribute::Bool(b) => i64::from(*b),
        _ => return Err(t.unsupported(op, format!("'{value}' is not a valid '{ty}'"))),
    };
    let n = match ty {
        ScalarType::I1 => n & 1,
        ScalarType::I8 | ScalarType::U8 => i64::from(n as i8),
        ScalarType::I32 => i64::from(n as i32),
        _ => n,
    };
    if ty == ScalarType::I1 {
        return Ok(t.emit(&format!("arith.constant {}", n != 0)));
    }
    Ok(t.emit(&format!("arith.constant {n} : {mlir}")))
}

fn round_tf32(x: f32) -> f32 {
    if !x.is_finite() {
        return x;
    }
    let bits = x.to_bits();
    let lsb = (bits >> 13) & 1;
    f32::from_bits(bits.wrapping_add(0x0fff + lsb) & !0x1fff)
}

/// `tile.constant v : T`.
pub(super) fn lower_constant(t: &mut FuncEmitter<'_>, op: &Operation) -> Result<()> {
    let (ty, _) = t.result_type(op)?;
    let Type::Scalar(s) = ty else {
        return Err(t.unsupported(op, "it produces a scalar"));
    };
    let v = scalar_constant(t, op, s, op.attr("value"))?;
    t.set_result(op, v)
}

/// `tile.fill v : vector<…>` → a scalar constant broadcast (folded to a dense constant).
pub(super) fn lower_fill(t: &mut FuncEmitter<'_>, op: &Operation) -> Result<()> {
    let (ty, mlir) = t.result_type(op)?;
    if !matches!(ty, Type::Vector(_)) {
        return Err(t.unsupported(op, format!("only vector results are translated, not '{ty}'")));
    }
    let elem = ty.element_type();
    let x = scalar_constant(t, op, elem, op.attr("value"))?;
    let v = t.emit(&format!("vector.broadcast {x} : {} to {mlir}", types::scalar_type(elem).unwrap_or("f32")));
    t.set_result(op, v)
}

/// `tile.splat %x : vector<…>` → `vector.broadcast`.
pub(super) fn lower_splat(t: &mut FuncEmitter<'_>, op: &Operation) -> Result<()> {
    let (ty, mlir) = t.result_type(op)?;
    if !matches!(ty, Type::Vector(_)) {
        return Err(t.unsupported(op, format!("only vector results are translated, not '{ty}'")));
    }
    let (x, xty) = t.value(op, op.operand("value").ok_or_else(|| t.unsupported(op, "it needs a value"))?)?;
    let v = t.emit(&format!("vector.broadcast {x} : {xty} to {mlir}"));
    t.set_result(op, v)
}

/// `tile.block_id` → `gpu.block_id`, `tile.grid_dim` → `gpu.grid_dim`.
pub(super) fn lower_block_id(t: &mut FuncEmitter<'_>, op: &Operation) -> Result<()> {
    let d = match op.attr("dim").and_then(Attribute::as_keyword) {
        Some("y") => "y",
        Some("z") => "z",
        _ => "x",
    };
    let name = if op.kind == OpKind::GridDim { "gpu.grid_dim" } else { "gpu.block_id" };
    let v = t.emit(&format!("{name} {d}"));
    t.set_result(op, v)
}

/// `tile.dim %g, axis` → the static extent, or the kernel's extent parameter.
pub(super) fn lower_dim(t: &mut FuncEmitter<'_>, op: &Operation) -> Result<()> {
    let source = op.operand("source").ok_or_else(|| t.unsupported(op, "it needs a source"))?;
    let axis = op.attr("axis").and_then(Attribute::as_int).unwrap_or(-1);
    let memref = t.memref(op, source)?;
    let extent = usize::try_from(axis)
        .ok()
        .and_then(|a| memref.extents.get(a).cloned())
        .ok_or_else(|| t.unsupported(op, format!("axis {axis} is out of range")))?;
    let v = match extent {
        Extent::Static(n) => t.index_constant(n as i64),
        Extent::Dynamic(v) => v,
    };
    t.set_result(op, v)
}

/// `tile.add/sub/mul/div/rem/min/max` on scalars or vectors.
pub(super) fn lower_binary(t: &mut FuncEmitter<'_>, op: &Operation) -> Result<()> {
    let (Some(lhs), Some(rhs)) = (op.operand("lhs"), op.operand("rhs")) else {
        return Err(t.unsupported(op, "it needs two operands"));
    };
    let (ty, mlir) = t.result_type(op)?;
    let elem = ty.element_type();
    let (x, y) = (t.name(op, lhs)?, t.name(op, rhs)?);
    let name = if elem.is_float() {
        match op.kind {
            OpKind::Add => "arith.addf",
            OpKind::Sub => "arith.subf",
            OpKind::Mul => "arith.mulf",
            OpKind::Div => "arith.divf",
            OpKind::Min => "arith.minnumf",
            OpKind::Max => "arith.maxnumf",
            _ => return Err(t.unsupported(op, format!("'{}' is not defined on '{elem}'", op.kind))),
        }
    } else {
        let unsigned = elem.is_unsigned() || elem == ScalarType::I1;
        match (op.kind, unsigned) {
            (OpKind::Add, _) => "arith.addi",
            (OpKind::Sub, _) => "arith.subi",
            (OpKind::Mul, _) => "arith.muli",
            (OpKind::Div, false) => "arith.divsi",
            (OpKind::Div, true) => "arith.divui",
            (OpKind::Rem, false) => "arith.remsi",
            (OpKind::Rem, true) => "arith.remui",
            (OpKind::Min, false) => "arith.minsi",
            (OpKind::Min, true) => "arith.minui",
            (OpKind::Max, false) => "arith.maxsi",
            (OpKind::Max, true) => "arith.maxui",
            _ => return Err(t.unsupported(op, format!("'{}' is not an arithmetic op", op.kind))),
        }
    };
    let mut v = t.emit(&format!("{name} {x}, {y} : {mlir}"));
    if elem == ScalarType::TF32 {
        v = round_to_tf32(t, &v, &mlir);
    }
    t.set_result(op, v)
}

/// `tile.cmp pred %a, %b` → `arith.cmpi` (signed; unsigned for `u8`/`i1`) or ordered `arith.cmpf` (`ne` is
/// unordered, so NaN ≠ NaN as in the interpreter).
pub(super) fn lower_cmp(t: &mut FuncEmitter<'_>, op: &Operation) -> Result<()> {
    let (Some(lhs), Some(rhs)) = (op.operand("lhs"), op.operand("rhs")) else {
        return Err(t.unsupported(op, "it needs two operands"));
    };
    let elem = t.func.body.ty(lhs).element_type();
    let (x, xty) = t.value(op, lhs)?;
    let y = t.name(op, rhs)?;
    let predicate = op.attr("predicate").and_then(Attribute::as_keyword).unwrap_or("eq");
    let v = if elem.is_float() {
        let p = match predicate {
            "eq" => "oeq",
            "ne" => "une",
            "lt" => "olt",
            "le" => "ole",
            "gt" => "ogt",
            _ => "oge",
        };
        t.emit(&format!("arith.cmpf {p}, {x}, {y} : {xty}"))
    } else {
        let unsigned = elem.is_unsigned() || elem == ScalarType::I1;
        let p = match (predicate, unsigned) {
            ("eq", _) => "eq",
            ("ne", _) => "ne",
            ("lt", false) => "slt",
            ("le", false) => "sle",
            ("gt", false) => "sgt",
            (_, false) => "sge",
            ("lt", true) => "ult",
            ("le", true) => "ule",
            ("gt", true) => "ugt",
            (_, true) => "uge",
        };
        t.emit(&format!("arith.cmpi {p}, {x}, {y} : {xty}"))
    };
    t.set_result(op, v)
}

/// `tile.select %c, %a, %b` → `arith.select`.
pub(super) fn lower_select(t: &mut FuncEmitter<'_>, op: &Operation) -> Result<()> {
    let (Some(c), Some(a), Some(b)) = (op.operand("cond"), op.operand("true_value"), op.operand("false_value")) else {
        return Err(t.unsupported(op, "it needs a condition and two values"));
    };
    let (c, cty) = t.value(op, c)?;
    let (a, aty) = t.value(op, a)?;
    let b = t.name(op, b)?;
    let v = if cty == "i1" {
        t.emit(&format!("arith.select {c}, {a}, {b} : {aty}"))
    } else {
        t.emit(&format!("arith.select {c}, {a}, {b} : {cty}, {aty}"))
    };
    t.set_result(op, v)
}

/// tf32 rounding of f32 values: round to nearest even at mantissa bit 13 (`bits + 0xfff + lsb`, low 13 bits
/// cleared), keeping infinities and NaNs (`|bits| >= 0x7f800000`).
fn round_to_tf32(t: &mut FuncEmitter<'_>, v: &str, ty: &str) -> String {
    let ity = types::with_element(ty, "i32");
    let c = |t: &mut FuncEmitter<'_>, n: u32| -> String {
        let s = t.emit(&format!("arith.constant {} : i32", n as i32));
        if ity == "i32" { s } else { t.emit(&format!("vector.broadcast {s} : i32 to {ity}")) }
    };
    let bits = t.emit(&format!("arith.bitcast {v} : {ty} to {ity}"));
    let c13 = c(t, 13);
    let c1 = c(t, 1);
    let cfff = c(t, 0x0fff);
    let cmask = c(t, !0x1fffu32);
    let cabs = c(t, 0x7fff_ffff);
    let cinf = c(t, 0x7f80_0000);
    let lsb = t.emit(&format!("arith.shrui {bits}, {c13} : {ity}"));
    let lsb = t.emit(&format!("arith.andi {lsb}, {c1} : {ity}"));
    let bias = t.emit(&format!("arith.addi {lsb}, {cfff} : {ity}"));
    let rounded = t.emit(&format!("arith.addi {bits}, {bias} : {ity}"));
    let rounded = t.emit(&format!("arith.andi {rounded}, {cmask} : {ity}"));
    let abs = t.emit(&format!("arith.andi {bits}, {cabs} : {ity}"));
    let finite = t.emit(&format!("arith.cmpi ult, {abs}, {cinf} : {ity}"));
    let chosen = t.emit(&format!("arith.select {finite}, {rounded}, {bits} : {}, {ity}", types::with_element(ty, "i1")));
    t.emit(&format!("arith.bitcast {chosen} : {ity} to {ty}"))
}

/// `tile.cast %x : T` with the interpreter's semantics: floats round to nearest even (`extf`/`truncf`, through
/// f32 between f16 and bf16), integers wrap (`trunci`/`extsi`/`extui`, `index_cast`), floats to integers
/// truncate toward zero (`arith.fptosi` to i64, then wrap; unlike the LLVM backend's `llvm.fptosi.sat`, which
/// the LLVM dialect lacks, NaN and values outside i64 are undefined), anything to `i1` is `x != 0`.
pub(super) fn lower_cast(t: &mut FuncEmitter<'_>, op: &Operation) -> Result<()> {
    let source = op.operand("source").ok_or_else(|| t.unsupported(op, "it needs a source"))?;
    let from = t.func.body.ty(source).element_type();
    let (ty, to_ty) = t.result_type(op)?;
    let to = ty.element_type();
    for s in [from, to] {
        if matches!(s, ScalarType::F8E4M3 | ScalarType::F8E5M2 | ScalarType::I4 | ScalarType::U4) {
            return Err(t.unsupported(op, format!("casts of '{s}' are not supported")));
        }
    }
    let (x, from_ty) = t.value(op, source)?;
    let is_vector = from_ty.starts_with("vector");
    let f32_shape = types::with_element(&to_ty, "f32");
    let i64_shape = types::with_element(&to_ty, "i64");
    let from_unsigned = from.is_unsigned() || from == ScalarType::I1;
    // Index values go through i64 for the conversions arith does not define on `index`.
    let as_i64 = |t: &mut FuncEmitter<'_>, x: &str| -> String {
        if from == ScalarType::Index {
            t.emit(&format!("arith.index_cast {x} : {from_ty} to {}", types::with_element(&from_ty, "i64")))
        } else {
            x.to_string()
        }
    };
    let v = match (from.is_float(), to.is_float()) {
        _ if to == ScalarType::I1 => {
            if from.is_float() {
                let z = t.emit(&format!("arith.constant 0.0 : {}", types::scalar_type(from).unwrap_or("f32")));
                let z = if is_vector { t.emit(&format!("vector.broadcast {z} : {} to {from_ty}", types::scalar_type(from).unwrap_or("f32"))) } else { z };
                t.emit(&format!("arith.cmpf une, {x}, {z} : {from_ty}"))
            } else {
                let e = types::scalar_type(from).unwrap_or("i32");
                let z = t.emit(&format!("arith.constant 0 : {e}"));
                let z = if is_vector { t.emit(&format!("vector.broadcast {z} : {e} to {from_ty}")) } else { z };
                t.emit(&format!("arith.cmpi ne, {x}, {z} : {from_ty}"))
            }
        }
        (true, true) => {
            let (fb, tb) = (from.bit_width(), to.bit_width());
            let v = if from == to || (fb == 32 && tb == 32) {
                x.clone()
            } else if fb == 16 && tb == 16 {
                let wide = t.emit(&format!("arith.extf {x} : {from_ty} to {f32_shape}"));
                t.emit(&format!("arith.truncf {wide} : {f32_shape} to {to_ty}"))
            } else if fb < tb {
                t.emit(&format!("arith.extf {x} : {from_ty} to {to_ty}"))
            } else {
                t.emit(&format!("arith.truncf {x} : {from_ty} to {to_ty}"))
            };
            if to == ScalarType::TF32 && from != ScalarType::TF32 { round_to_tf32(t, &v, &to_ty) } else { v }
        }
        (false, true) => {
            let x = as_i64(t, &x);
            let src = if from == ScalarType::Index { types::with_element(&from_ty, "i64") } else { from_ty.clone() };
            let name = if from_unsigned { "arith.uitofp" } else { "arith.sitofp" };
            let v = t.emit(&format!("{name} {x} : {src} to {to_ty}"));
            if to == ScalarType::TF32 { round_to_tf32(t, &v, &to_ty) } else { v }
        }
        (true, false) => {
            let wide = t.emit(&format!("arith.fptosi {x} : {from_ty} to {i64_shape}"));
            match to {
                ScalarType::Index => t.emit(&format!("arith.index_cast {wide} : {i64_shape} to {to_ty}")),
                _ => t.emit(&format!("arith.trunci {wide} : {i64_shape} to {to_ty}")),
            }
        }
        (false, false) => {
            let (fb, tb) = (from.bit_width(), to.bit_width());
            if from == ScalarType::Index || to == ScalarType::Index {
                if from == to {
                    x.clone()
                } else if from == ScalarType::Index {
                    t.emit(&format!("arith.index_cast {x} : {from_ty} to {to_ty}"))
                } else if from_unsigned {
                    t.emit(&format!("arith.index_castui {x} : {from_ty} to {to_ty}"))
                } else {
                    t.emit(&format!("arith.index_cast {x} : {from_ty} to {to_ty}"))
                }
            } else if fb == tb {
                x.clone()
            } else if fb > tb {
                t.emit(&format!("arith.trunci {x} : {from_ty} to {to_ty}"))
            } else if from_unsigned {
                t.emit(&format!("arith.extui {x} : {from_ty} to {to_ty}"))
            } else {
                t.emit(&format!("arith.extsi {x} : {from_ty} to {to_ty}"))
            }
        }
    };
    t.set_result(op, v)
}
