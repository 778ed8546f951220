//! Per-thread `tile` ops: constants, ids, extents, arithmetic, comparisons, selects and casts, on scalars
//! and flat vectors. Semantics follow the reference interpreter (`tilec_ir::data::round_to`): integer
//! arithmetic wraps, division truncates (`sdiv`/`srem`; `udiv`/`urem` for `u8`), `min`/`max` of floats
//! ignore a NaN operand (`llvm.minnum`/`maxnum`), and every result is rounded to its type once (round to
//! nearest even; tf32 results are rounded from f32 by clearing the low 13 mantissa bits, ties to even).

use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValue, BasicValueEnum};
use inkwell::{FloatPredicate, IntPredicate};
use inkwell::values::InstructionOpcode as Opcode;

use tilec_ir::attr::Attribute;
use tilec_ir::body::Operation;
use tilec_ir::ops::OpKind;
use tilec_ir::types::{ScalarType, Type};

use super::func::FuncTranslator;
use super::memory::Extent;
use super::{types, Result};
use crate::llvm::SpecialRegister;

/// The constant of scalar type `ty` an attribute denotes.
fn constant_value<'ctx>(
    t: &FuncTranslator<'_, 'ctx>,
    op: &Operation,
    ty: ScalarType,
    llvm_ty: BasicTypeEnum<'ctx>,
    value: Option<&Attribute>,
) -> Result<BasicValueEnum<'ctx>> {
    let value = value.ok_or_else(|| t.unsupported(op, "it needs a value"))?;
    Ok(match llvm_ty {
        BasicTypeEnum::IntType(i) => {
            let n = match value {
                Attribute::Int(n) => *n,
                Attribute::Bool(b) => i64::from(*b),
                _ => return Err(t.unsupported(op, format!("'{value}' is not a valid '{ty}'"))),
            };
            i.const_int(n as u64, true).into()
        }
        BasicTypeEnum::FloatType(f) => {
            let x = value.as_f64().ok_or_else(|| t.unsupported(op, format!("'{value}' is not a valid '{ty}'")))?;
            let x = if ty == ScalarType::TF32 { f64::from(round_tf32(x as f32)) } else { x };
            f.const_float(x).into()
        }
        _ => return Err(t.unsupported(op, format!("no constants of '{ty}'"))),
    })
}

/// tf32 rounding at compile time (as the interpreter does it).
fn round_tf32(x: f32) -> f32 {
    if !x.is_finite() {
        return x;
    }
    let bits = x.to_bits();
    let lsb = (bits >> 13) & 1;
    f32::from_bits(bits.wrapping_add(0x0fff + lsb) & !0x1fff)
}

/// `tile.constant v : T`.
pub(super) fn lower_constant(t: &mut FuncTranslator<'_, '_>, op: &Operation) -> Result<()> {
    let (ty, llvm_ty) = t.result_type(op)?;
    let Type::Scalar(s) = ty else {
        return Err(t.unsupported(op, "it produces a scalar"));
    };
    let v = constant_value(t, op, s, llvm_ty, op.attr("value"))?;
    t.set_result(op, v)
}

/// `tile.fill v : vector<…>` → a constant vector.
pub(super) fn lower_fill(t: &mut FuncTranslator<'_, '_>, op: &Operation) -> Result<()> {
    let (ty, llvm_ty) = t.result_type(op)?;
    let BasicTypeEnum::VectorType(vty) = llvm_ty else {
        return Err(t.unsupported(op, format!("only vector results are translated, not '{ty}'")));
    };
    let x = constant_value(t, op, ty.element_type(), vty.get_element_type(), op.attr("value"))?;
    let elements = vec![x; vty.get_size() as usize];
    let v = inkwell::types::VectorType::const_vector(&elements);
    t.set_result(op, v.into())
}

/// `tile.splat %x : vector<…>` → `insertelement` + `shufflevector` (zero mask).
pub(super) fn lower_splat(t: &mut FuncTranslator<'_, '_>, op: &Operation) -> Result<()> {
    let (ty, llvm_ty) = t.result_type(op)?;
    let BasicTypeEnum::VectorType(vty) = llvm_ty else {
        return Err(t.unsupported(op, format!("only vector results are translated, not '{ty}'")));
    };
    let x = t.value(op, op.operand("value").ok_or_else(|| t.unsupported(op, "it needs a value"))?)?;
    let i32_ty = t.cx.i32_type();
    let one = t.builder.build_insert_element(vty.get_poison(), x, i32_ty.const_zero(), "")?;
    let mask = i32_ty.vec_type(vty.get_size()).const_zero();
    let v = t.builder.build_shuffle_vector(one, vty.get_poison(), mask, "")?;
    t.set_result(op, v.into())
}

/// `tile.block_id` → `%ctaid.{x,y,z}`, `tile.grid_dim` → `%nctaid.{x,y,z}`, zero-extended to i64.
pub(super) fn lower_block_id(t: &mut FuncTranslator<'_, '_>, op: &Operation) -> Result<()> {
    use SpecialRegister::*;
    let grid = op.kind == OpKind::GridDim;
    let register = match (op.attr("dim").and_then(Attribute::as_keyword), grid) {
        (Some("y"), false) => CtaidY,
        (Some("z"), false) => CtaidZ,
        (_, false) => CtaidX,
        (Some("y"), true) => NctaidY,
        (Some("z"), true) => NctaidZ,
        (_, true) => NctaidX,
    };
    let v = t.nvvm.special_register(&t.builder, register)?;
    let v = t.builder.build_int_z_extend(v, t.cx.i64_type(), "")?;
    t.set_result(op, v.into())
}

/// `tile.dim %g, axis` → the static extent, or the kernel's extent parameter.
pub(super) fn lower_dim(t: &mut FuncTranslator<'_, '_>, op: &Operation) -> Result<()> {
    let source = op.operand("source").ok_or_else(|| t.unsupported(op, "it needs a source"))?;
    let axis = op.attr("axis").and_then(Attribute::as_int).unwrap_or(-1);
    let memref = t.memref(op, source)?;
    let extent = usize::try_from(axis)
        .ok()
        .and_then(|a| memref.extents.get(a).copied())
        .ok_or_else(|| t.unsupported(op, format!("axis {axis} is out of range")))?;
    let v = match extent {
        Extent::Static(n) => t.cx.i64_type().const_int(n, false),
        Extent::Dynamic(v) => v,
    };
    t.set_result(op, v.into())
}

/// `tile.add/sub/mul/div/rem/min/max` on scalars or vectors.
pub(super) fn lower_binary(t: &mut FuncTranslator<'_, '_>, op: &Operation) -> Result<()> {
    let (Some(lhs), Some(rhs)) = (op.operand("lhs"), op.operand("rhs")) else {
        return Err(t.unsupported(op, "it needs two operands"));
    };
    let (ty, _) = t.result_type(op)?;
    let elem = ty.element_type();
    let (x, y) = (t.value(op, lhs)?, t.value(op, rhs)?);
    let b = &t.builder;
    let v = if elem.is_float() {
        let opcode = match op.kind {
            OpKind::Add => Some(Opcode::FAdd),
            OpKind::Sub => Some(Opcode::FSub),
            OpKind::Mul => Some(Opcode::FMul),
            OpKind::Div => Some(Opcode::FDiv),
            _ => None,
        };
        let v = match (opcode, op.kind) {
            (Some(opcode), _) => b.build_binop(opcode, x, y, "")?,
            (None, OpKind::Min | OpKind::Max) => {
                let name = if op.kind == OpKind::Min { "llvm.minnum" } else { "llvm.maxnum" };
                t.nvvm.call(b, name, &[x.get_type()], &[x, y])?.ok_or_else(|| super::internal("minnum returns a value"))?
            }
            _ => return Err(t.unsupported(op, format!("'{}' is not defined on '{elem}'", op.kind))),
        };
        if elem == ScalarType::TF32 {
            round_to_tf32(t, v)?
        } else {
            v
        }
    } else {
        let unsigned = elem.is_unsigned() || elem == ScalarType::I1;
        match op.kind {
            OpKind::Add => b.build_binop(Opcode::Add, x, y, "")?,
            OpKind::Sub => b.build_binop(Opcode::Sub, x, y, "")?,
            OpKind::Mul => b.build_binop(Opcode::Mul, x, y, "")?,
            OpKind::Div => b.build_binop(if unsigned { Opcode::UDiv } else { Opcode::SDiv }, x, y, "")?,
            OpKind::Rem => b.build_binop(if unsigned { Opcode::URem } else { Opcode::SRem }, x, y, "")?,
            OpKind::Min | OpKind::Max => {
                let predicate = match (op.kind == OpKind::Min, unsigned) {
                    (true, false) => IntPredicate::SLT,
                    (true, true) => IntPredicate::ULT,
                    (false, false) => IntPredicate::SGT,
                    (false, true) => IntPredicate::UGT,
                };
                let pick = int_compare(t, predicate, x, y)?;
                select(t, pick, x, y)?
            }
            _ => return Err(t.unsupported(op, format!("'{}' is not an arithmetic op", op.kind))),
        }
    };
    t.set_result(op, v)
}

fn int_compare<'ctx>(
    t: &FuncTranslator<'_, 'ctx>,
    predicate: IntPredicate,
    x: BasicValueEnum<'ctx>,
    y: BasicValueEnum<'ctx>,
) -> Result<BasicValueEnum<'ctx>> {
    Ok(match (x, y) {
        (BasicValueEnum::IntValue(x), BasicValueEnum::IntValue(y)) => t.builder.build_int_compare(predicate, x, y, "")?.into(),
        (BasicValueEnum::VectorValue(x), BasicValueEnum::VectorValue(y)) => {
            t.builder.build_int_compare(predicate, x, y, "")?.into()
        }
        _ => unreachable!("operands of one type"),
    })
}

fn float_compare<'ctx>(
    t: &FuncTranslator<'_, 'ctx>,
    predicate: FloatPredicate,
    x: BasicValueEnum<'ctx>,
    y: BasicValueEnum<'ctx>,
) -> Result<BasicValueEnum<'ctx>> {
    Ok(match (x, y) {
        (BasicValueEnum::FloatValue(x), BasicValueEnum::FloatValue(y)) => {
            t.builder.build_float_compare(predicate, x, y, "")?.into()
        }
        (BasicValueEnum::VectorValue(x), BasicValueEnum::VectorValue(y)) => {
            t.builder.build_float_compare(predicate, x, y, "")?.into()
        }
        _ => unreachable!("operands of one type"),
    })
}

fn select<'ctx>(
    t: &FuncTranslator<'_, 'ctx>,
    cond: BasicValueEnum<'ctx>,
    x: BasicValueEnum<'ctx>,
    y: BasicValueEnum<'ctx>,
) -> Result<BasicValueEnum<'ctx>> {
    Ok(match cond {
        BasicValueEnum::IntValue(c) => t.builder.build_select(c, x, y, "")?,
        BasicValueEnum::VectorValue(c) => t.builder.build_select(c, x, y, "")?,
        _ => unreachable!("conditions are i1 or vectors of i1"),
    })
}

/// `tile.cmp pred %a, %b` → `icmp` (signed, unsigned for `u8`/`i1`) or ordered `fcmp` (`ne` is unordered, so
/// NaN ≠ NaN as in the interpreter).
pub(super) fn lower_cmp(t: &mut FuncTranslator<'_, '_>, op: &Operation) -> Result<()> {
    let (Some(lhs), Some(rhs)) = (op.operand("lhs"), op.operand("rhs")) else {
        return Err(t.unsupported(op, "it needs two operands"));
    };
    let elem = t.func.body.ty(lhs).element_type();
    let (x, y) = (t.value(op, lhs)?, t.value(op, rhs)?);
    let predicate = op.attr("predicate").and_then(Attribute::as_keyword).unwrap_or("eq");
    let v = if elem.is_float() {
        let p = match predicate {
            "eq" => FloatPredicate::OEQ,
            "ne" => FloatPredicate::UNE,
            "lt" => FloatPredicate::OLT,
            "le" => FloatPredicate::OLE,
            "gt" => FloatPredicate::OGT,
            _ => FloatPredicate::OGE,
        };
        float_compare(t, p, x, y)?
    } else {
        let unsigned = elem.is_unsigned() || elem == ScalarType::I1;
        let p = match (predicate, unsigned) {
            ("eq", _) => IntPredicate::EQ,
            ("ne", _) => IntPredicate::NE,
            ("lt", false) => IntPredicate::SLT,
            ("le", false) => IntPredicate::SLE,
            ("gt", false) => IntPredicate::SGT,
            (_, false) => IntPredicate::SGE,
            ("lt", true) => IntPredicate::ULT,
            ("le", true) => IntPredicate::ULE,
            ("gt", true) => IntPredicate::UGT,
            (_, true) => IntPredicate::UGE,
        };
        int_compare(t, p, x, y)?
    };
    t.set_result(op, v)
}

/// `tile.select %c, %a, %b` → `select`.
pub(super) fn lower_select(t: &mut FuncTranslator<'_, '_>, op: &Operation) -> Result<()> {
    let (Some(c), Some(a), Some(b)) = (op.operand("cond"), op.operand("true_value"), op.operand("false_value")) else {
        return Err(t.unsupported(op, "it needs a condition and two values"));
    };
    let (c, a, b) = (t.value(op, c)?, t.value(op, a)?, t.value(op, b)?);
    let v = select(t, c, a, b)?;
    t.set_result(op, v)
}

/// tf32 rounding of f32 values (scalar or vector): round to nearest even at mantissa bit 13, keeping
/// infinities and NaNs (`bits + 0xfff + lsb`, then clear the low 13 bits).
fn round_to_tf32<'ctx>(t: &FuncTranslator<'_, 'ctx>, v: BasicValueEnum<'ctx>) -> Result<BasicValueEnum<'ctx>> {
    let b = &t.builder;
    let float_ty = v.get_type();
    let int_ty = types::with_element(t.cx, float_ty, t.cx.i32_type().into());
    let splat = |n: u64| -> BasicValueEnum<'ctx> {
        let c = t.cx.i32_type().const_int(n, false);
        match int_ty {
            BasicTypeEnum::VectorType(vt) => {
                inkwell::types::VectorType::const_vector(&vec![c; vt.get_size() as usize]).into()
            }
            _ => c.into(),
        }
    };
    let bits = b.build_bit_cast(v, int_ty, "")?;
    let lsb = b.build_binop(Opcode::LShr, bits, splat(13), "")?;
    let lsb = b.build_binop(Opcode::And, lsb, splat(1), "")?;
    let bias = b.build_binop(Opcode::Add, lsb, splat(0x0fff), "")?;
    let rounded = b.build_binop(Opcode::Add, bits, bias, "")?;
    let rounded = b.build_binop(Opcode::And, rounded, splat(!0x1fffu32 as u64), "")?;
    let rounded = b.build_bit_cast(rounded, float_ty, "")?;
    // Infinities and NaNs stay as they are: |x| compared with +inf is unordered for NaN and equal for inf.
    let abs = t.nvvm.call(b, "llvm.fabs", &[float_ty], &[v])?.ok_or_else(|| super::internal("fabs returns a value"))?;
    let inf = match float_ty {
        BasicTypeEnum::VectorType(vt) => inkwell::types::VectorType::const_vector(
            &vec![t.cx.f32_type().const_float(f64::INFINITY); vt.get_size() as usize],
        )
        .as_basic_value_enum(),
        _ => t.cx.f32_type().const_float(f64::INFINITY).as_basic_value_enum(),
    };
    let finite = float_compare(t, FloatPredicate::OLT, abs, inf)?;
    select(t, finite, rounded, v)
}

/// `tile.cast %x : T` between element types (same shape), with the interpreter's semantics: floats round to
/// nearest even (`fptrunc`/`fpext`, through f32 between f16 and bf16), integers wrap (`trunc`/`sext`/`zext`),
/// floats to integers truncate toward zero (`llvm.fptosi.sat` to i64, then wrap), anything to `i1` is
/// `x != 0`.
pub(super) fn lower_cast(t: &mut FuncTranslator<'_, '_>, op: &Operation) -> Result<()> {
    let source = op.operand("source").ok_or_else(|| t.unsupported(op, "it needs a source"))?;
    let from = t.func.body.ty(source).element_type();
    let (ty, to_ty) = t.result_type(op)?;
    let to = ty.element_type();
    let x = t.value(op, source)?;
    for s in [from, to] {
        if matches!(s, ScalarType::F8E4M3 | ScalarType::F8E5M2 | ScalarType::I4 | ScalarType::U4) {
            return Err(t.unsupported(op, format!("casts of '{s}' are not supported")));
        }
    }
    let b = &t.builder;
    let from_ty = x.get_type();
    let f32_shape = types::with_element(t.cx, to_ty, t.cx.f32_type().into());
    let i64_shape = types::with_element(t.cx, to_ty, t.cx.i64_type().into());
    let v = match (from.is_float(), to.is_float()) {
        _ if to == ScalarType::I1 => {
            if from.is_float() {
                float_compare(t, FloatPredicate::UNE, x, from_ty.const_zero())?
            } else {
                int_compare(t, IntPredicate::NE, x, from_ty.const_zero())?
            }
        }
        (true, true) => {
            let (fb, tb) = (float_bits(from), float_bits(to));
            let v = if from == to || (fb == 32 && tb == 32) {
                x
            } else if fb == 16 && tb == 16 {
                // f16 <-> bf16: exact to f32, then one rounding.
                let wide = b.build_cast(Opcode::FPExt, x, f32_shape, "")?;
                b.build_cast(Opcode::FPTrunc, wide, to_ty, "")?
            } else if fb < tb {
                b.build_cast(Opcode::FPExt, x, to_ty, "")?
            } else {
                b.build_cast(Opcode::FPTrunc, x, to_ty, "")?
            };
            if to == ScalarType::TF32 && from != ScalarType::TF32 {
                round_to_tf32(t, v)?
            } else {
                v
            }
        }
        (false, true) => {
            let signed = !(from.is_unsigned() || from == ScalarType::I1);
            let opcode = if signed { Opcode::SIToFP } else { Opcode::UIToFP };
            let v = b.build_cast(opcode, x, to_ty, "")?;
            if to == ScalarType::TF32 {
                round_to_tf32(t, v)?
            } else {
                v
            }
        }
        (true, false) => {
            let wide = t.nvvm.call(b, "llvm.fptosi.sat", &[i64_shape, from_ty], &[x])?.ok_or_else(|| super::internal("fptosi.sat returns a value"))?;
            if to == ScalarType::Index {
                wide
            } else {
                b.build_cast(Opcode::Trunc, wide, to_ty, "")?
            }
        }
        (false, false) => {
            let (fb, tb) = (from.bit_width(), to.bit_width());
            if fb == tb {
                x
            } else if fb > tb {
                b.build_cast(Opcode::Trunc, x, to_ty, "")?
            } else if from.is_unsigned() || from == ScalarType::I1 {
                b.build_cast(Opcode::ZExt, x, to_ty, "")?
            } else {
                b.build_cast(Opcode::SExt, x, to_ty, "")?
            }
        }
    };
    t.set_result(op, v)
}

/// Storage bits of a float type as LLVM holds it (tf32 is a 32-bit float).
fn float_bits(s: ScalarType) -> u32 {
    s.bit_width()
}

