//! Per-thread `tile` ops: constants, ids, extents, arithmetic, comparisons, selects and casts, on scalars
//! and flat vectors. Semantics follow the reference interpreter (`tilec_ir::data::round_to`): integer
//! arithmetic wraps, division truncates (`sdiv`/`srem`; `udiv`/`urem` for `u8`), `min`/`max` of floats
//! ignore a NaN operand (`llvm.minnum`/`maxnum`), and every result is rounded to its type once (round to
//! nearest even; tf32 results are rounded from f32 by clearing the low 13 mantissa bits, ties to even).

use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValue, BasicValueEnum, FastMathFlags};
use inkwell::{FloatPredicate, IntPredicate};
use inkwell::values::InstructionOpcode as Opcode;

use tilec_ir::body::{Operation, Value};
use tilec_ir::ops::{typed, CmpPredicate, Literal, OpKind, UnaryMath};
use tilec_ir::types::{ScalarType, Type};

use super::func::FuncTranslator;
use super::{types, Result};
use crate::llvm::SpecialRegister;
use crate::spine::{literal_float, literal_int, round_tf32, EmitScalar, Extent};

/// The constant of scalar type `ty` a literal denotes.
fn constant_value<'ctx>(
    t: &FuncTranslator<'_, 'ctx>,
    op: &Operation,
    ty: ScalarType,
    llvm_ty: BasicTypeEnum<'ctx>,
    value: Literal,
) -> Result<BasicValueEnum<'ctx>> {
    Ok(match llvm_ty {
        BasicTypeEnum::IntType(i) => {
            let n = literal_int(value).ok_or_else(|| t.kernel.unsupported(op, format!("'{value}' is not a valid '{ty}'")))?;
            i.const_int(n as u64, true).into()
        }
        BasicTypeEnum::FloatType(f) => {
            let x = literal_float(value).ok_or_else(|| t.kernel.unsupported(op, format!("'{value}' is not a valid '{ty}'")))?;
            let x = if ty == ScalarType::TF32 { f64::from(round_tf32(x as f32)) } else { x };
            f.const_float(x).into()
        }
        _ => return Err(t.kernel.unsupported(op, format!("no constants of '{ty}'"))),
    })
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


/// Storage bits of a float type as LLVM holds it (tf32 is a 32-bit float).
fn float_bits(s: ScalarType) -> u32 {
    s.bit_width()
}

impl EmitScalar for FuncTranslator<'_, '_> {
    /// `tile.constant v : T`.
    fn constant(&mut self, op: &Operation, v: &typed::Constant) -> Result<()> {
        let (ty, llvm_ty) = self.result_type(op)?;
        let Type::Scalar(s) = ty else {
            return Err(self.kernel.unsupported(op, "it produces a scalar"));
        };
        let x = constant_value(self, op, s, llvm_ty, v.value)?;
        self.set_result(op, x)
    }

    /// `tile.fill v : vector<…>` → a constant vector.
    fn fill(&mut self, op: &Operation, v: &typed::Fill) -> Result<()> {
        let (ty, llvm_ty) = self.result_type(op)?;
        let BasicTypeEnum::VectorType(vty) = llvm_ty else {
            return Err(self.kernel.unsupported(op, format!("only vector results are translated, not '{ty}'")));
        };
        let x = constant_value(self, op, ty.element_type(), vty.get_element_type(), v.value)?;
        let elements = vec![x; vty.get_size() as usize];
        let filled = inkwell::types::VectorType::const_vector(&elements);
        self.set_result(op, filled.into())
    }

    /// `tile.splat %x : vector<…>` → `insertelement` + `shufflevector` (zero mask).
    fn splat(&mut self, op: &Operation, v: &typed::Splat) -> Result<()> {
        let (ty, llvm_ty) = self.result_type(op)?;
        let BasicTypeEnum::VectorType(vty) = llvm_ty else {
            return Err(self.kernel.unsupported(op, format!("only vector results are translated, not '{ty}'")));
        };
        let x = self.value(op, v.value)?;
        let i32_ty = self.cx.i32_type();
        let one = self.builder.build_insert_element(vty.get_poison(), x, i32_ty.const_zero(), "")?;
        let mask = i32_ty.vec_type(vty.get_size()).const_zero();
        let splat = self.builder.build_shuffle_vector(one, vty.get_poison(), mask, "")?;
        self.set_result(op, splat.into())
    }

    /// `tile.block_id` → `%ctaid.{x,y,z}`, zero-extended to i64.
    fn block_id(&mut self, op: &Operation, v: &typed::BlockId) -> Result<()> {
        use SpecialRegister::*;
        self.grid_register(op, [CtaidX, CtaidY, CtaidZ][v.dim.index()])
    }

    /// `tile.grid_dim` → `%nctaid.{x,y,z}`, zero-extended to i64.
    fn grid_dim(&mut self, op: &Operation, v: &typed::GridDim) -> Result<()> {
        use SpecialRegister::*;
        self.grid_register(op, [NctaidX, NctaidY, NctaidZ][v.dim.index()])
    }

    /// `tile.dim %g, axis` → the static extent, or the kernel's extent parameter.
    fn dim(&mut self, op: &Operation, v: &typed::Dim) -> Result<()> {
        let extent = *self.memref(op, v.source)?.extent(self.func, op, v.axis)?;
        let x = match extent {
            Extent::Static(n) => self.cx.i64_type().const_int(n, false),
            Extent::Dynamic(x) => x,
        };
        self.set_result(op, x.into())
    }

    /// `tile.add/sub/mul/div/rem/min/max` on scalars or vectors.
    fn binary(&mut self, op: &Operation, lhs: Value, rhs: Value) -> Result<()> {
        let (ty, _) = self.result_type(op)?;
        let elem = ty.element_type();
        let (x, y) = (self.value(op, lhs)?, self.value(op, rhs)?);
        let b = &self.builder;
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
                    self.nvvm.call(b, name, &[x.get_type()], &[x, y])?.ok_or_else(|| super::internal("minnum returns a value"))?
                }
                _ => return Err(self.kernel.unsupported(op, format!("'{}' is not defined on '{elem}'", op.kind))),
            };
            if elem == ScalarType::TF32 {
                round_to_tf32(self, v)?
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
                    let pick = int_compare(self, predicate, x, y)?;
                    select(self, pick, x, y)?
                }
                _ => return Err(self.kernel.unsupported(op, format!("'{}' is not an arithmetic op", op.kind))),
            }
        };
        self.set_result(op, v)
    }

    /// `tile.neg` → `fneg` (`neg.f32`) or `sub 0, x`; `tile.abs` → `llvm.fabs` (`abs.f32`) or `llvm.abs`
    /// (`abs.s32`, wrapping at the minimum); the float math functions → NVVM intrinsics on each f32 element
    /// (f16/bf16 extended to f32 and rounded back): `exp2` → `llvm.nvvm.ex2.approx.f32`, `exp` → the same of
    /// x·log2(e), `log` → `llvm.nvvm.lg2.approx.f` times ln 2, `sqrt` → `llvm.nvvm.sqrt.rn.f`, `rsqrt` →
    /// `llvm.nvvm.rsqrt.approx.f`, `tanh` → `llvm.tanh` with `afn` (LLVM has no NVVM tanh intrinsic; NVPTX
    /// selects `tanh.approx.f32` for it), `sigmoid` → `fma(tanh(x·0.5), 0.5, 0.5)`. The intrinsics, not
    /// `llvm.exp2`/`llvm.sqrt`, so the instructions do not depend on fast-math flags, and are the ones the
    /// MLIR backend emits.
    fn unary(&mut self, op: &Operation, f: UnaryMath, source: Value) -> Result<()> {
        let (ty, llvm_ty) = self.result_type(op)?;
        let elem = ty.element_type();
        let x = self.value(op, source)?;
        let b = &self.builder;
        if f == UnaryMath::Abs {
            let v = if elem.is_float() {
                self.nvvm.call(b, "llvm.fabs", &[x.get_type()], &[x])?
            } else {
                let no_poison = self.cx.bool_type().const_zero().into();
                self.nvvm.call(b, "llvm.abs", &[x.get_type()], &[x, no_poison])?
            };
            return self.set_result(op, v.ok_or_else(|| super::internal("llvm.abs returns a value"))?);
        }
        if f == UnaryMath::Neg {
            let v: BasicValueEnum<'_> = match x {
                BasicValueEnum::FloatValue(f) => b.build_float_neg(f, "")?.into(),
                BasicValueEnum::IntValue(i) => b.build_int_neg(i, "")?.into(),
                BasicValueEnum::VectorValue(v) if elem.is_float() => b.build_float_neg(v, "")?.into(),
                BasicValueEnum::VectorValue(v) => b.build_int_neg(v, "")?.into(),
                _ => return Err(self.kernel.unsupported(op, format!("'tile.neg' of '{ty}'"))),
            };
            return self.set_result(op, v);
        }
        if !matches!(elem, ScalarType::F32 | ScalarType::F16 | ScalarType::BF16) {
            return Err(self.kernel.unsupported(op, format!("'{}' is not defined on '{elem}'", op.kind)));
        }
        let wide_ty = types::with_element(self.cx, llvm_ty, self.cx.f32_type().into());
        let wide = if elem == ScalarType::F32 { x } else { b.build_cast(Opcode::FPExt, x, wide_ty, "")? };
        let v = match wide {
            BasicValueEnum::VectorValue(vector) => {
                // The intrinsics are scalar: one call per element.
                let i32_ty = self.cx.i32_type();
                let mut out = vector.get_type().get_poison();
                for i in 0..vector.get_type().get_size() {
                    let index = i32_ty.const_int(u64::from(i), false);
                    let e = self.builder.build_extract_element(vector, index, "")?;
                    let r = self.math_f32(f, e)?;
                    out = self.builder.build_insert_element(out, r, index, "")?;
                }
                out.into()
            }
            scalar => self.math_f32(f, scalar)?,
        };
        let v = if elem == ScalarType::F32 { v } else { self.builder.build_cast(Opcode::FPTrunc, v, llvm_ty, "")? };
        self.set_result(op, v)
    }

    /// `tile.cmp pred %a, %b` → `icmp` (signed, unsigned for `u8`/`i1`) or ordered `fcmp` (`ne` is unordered, so
    /// NaN ≠ NaN as in the interpreter).
    fn cmp(&mut self, op: &Operation, v: &typed::Cmp) -> Result<()> {
        use CmpPredicate::*;
        let elem = self.func.body.ty(v.lhs).element_type();
        let (x, y) = (self.value(op, v.lhs)?, self.value(op, v.rhs)?);
        let result = if elem.is_float() {
            let p = match v.predicate {
                Eq => FloatPredicate::OEQ,
                Ne => FloatPredicate::UNE,
                Lt => FloatPredicate::OLT,
                Le => FloatPredicate::OLE,
                Gt => FloatPredicate::OGT,
                Ge => FloatPredicate::OGE,
            };
            float_compare(self, p, x, y)?
        } else {
            let unsigned = elem.is_unsigned() || elem == ScalarType::I1;
            let p = match (v.predicate, unsigned) {
                (Eq, _) => IntPredicate::EQ,
                (Ne, _) => IntPredicate::NE,
                (Lt, false) => IntPredicate::SLT,
                (Le, false) => IntPredicate::SLE,
                (Gt, false) => IntPredicate::SGT,
                (Ge, false) => IntPredicate::SGE,
                (Lt, true) => IntPredicate::ULT,
                (Le, true) => IntPredicate::ULE,
                (Gt, true) => IntPredicate::UGT,
                (Ge, true) => IntPredicate::UGE,
            };
            int_compare(self, p, x, y)?
        };
        self.set_result(op, result)
    }

    /// `tile.fma %a, %b, %c` → `llvm.fma` (`fma.rn.f32` per element).
    fn fma(&mut self, op: &Operation, v: &typed::Fma) -> Result<()> {
        let (a, b, c) = (self.value(op, v.lhs)?, self.value(op, v.rhs)?, self.value(op, v.addend)?);
        let r = self.nvvm.call(&self.builder, "llvm.fma", &[a.get_type()], &[a, b, c])?.ok_or_else(|| super::internal("fma returns a value"))?;
        self.set_result(op, r)
    }

    /// `tile.select %c, %a, %b` → `select`.
    fn select(&mut self, op: &Operation, v: &typed::Select) -> Result<()> {
        let (c, a, b) = (self.value(op, v.cond)?, self.value(op, v.true_value)?, self.value(op, v.false_value)?);
        let chosen = select(self, c, a, b)?;
        self.set_result(op, chosen)
    }

    /// `tile.cast %x : T` between element types (same shape), with the interpreter's semantics: floats round to
    /// nearest even (`fptrunc`/`fpext`, through f32 between f16 and bf16), integers wrap (`trunc`/`sext`/`zext`),
    /// floats to integers truncate toward zero and saturate to the integer type's range, NaN giving 0
    /// (`llvm.fptosi.sat`/`llvm.fptoui.sat`, as `cvt.rzi` does), anything to `i1` is `x != 0`.
    fn cast(&mut self, op: &Operation, v: &typed::Cast) -> Result<()> {
        let from = self.func.body.ty(v.source).element_type();
        let (ty, to_ty) = self.result_type(op)?;
        let to = ty.element_type();
        let x = self.value(op, v.source)?;
        let b = &self.builder;
        let from_ty = x.get_type();
        let f32_shape = types::with_element(self.cx, to_ty, self.cx.f32_type().into());
        let i64_shape = types::with_element(self.cx, to_ty, self.cx.i64_type().into());
        let v = match (from.is_float(), to.is_float()) {
            _ if to == ScalarType::I1 => {
                if from.is_float() {
                    float_compare(self, FloatPredicate::UNE, x, from_ty.const_zero())?
                } else {
                    int_compare(self, IntPredicate::NE, x, from_ty.const_zero())?
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
                    round_to_tf32(self, v)?
                } else {
                    v
                }
            }
            (false, true) => {
                let signed = !(from.is_unsigned() || from == ScalarType::I1);
                let opcode = if signed { Opcode::SIToFP } else { Opcode::UIToFP };
                let v = b.build_cast(opcode, x, to_ty, "")?;
                if to == ScalarType::TF32 {
                    round_to_tf32(self, v)?
                } else {
                    v
                }
            }
            (true, false) => {
                // Saturating, straight to the integer type (`cvt.rzi.s32.f32` clamps the same way; NaN gives 0);
                // `index` through i64.
                let (name, ty) = match to {
                    ScalarType::Index => ("llvm.fptosi.sat", i64_shape),
                    t if t.is_unsigned() => ("llvm.fptoui.sat", to_ty),
                    _ => ("llvm.fptosi.sat", to_ty),
                };
                self.nvvm.call(b, name, &[ty, from_ty], &[x])?.ok_or_else(|| super::internal("fpto[su]i.sat returns a value"))?
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
        self.set_result(op, v)
    }
}

impl<'ctx> FuncTranslator<'_, 'ctx> {
    /// One f32 element of a float math function ([`EmitScalar::unary`]).
    fn math_f32(&self, f: UnaryMath, x: BasicValueEnum<'ctx>) -> Result<BasicValueEnum<'ctx>> {
        let f32_ty = self.cx.f32_type();
        let call = |name: &str, overloaded: bool, x: BasicValueEnum<'ctx>| -> Result<BasicValueEnum<'ctx>> {
            let overload: &[BasicTypeEnum<'ctx>] = if overloaded { &[f32_ty.into()] } else { &[] };
            self.nvvm.call(&self.builder, name, overload, &[x])?.ok_or_else(|| super::internal("a math intrinsic returns a value"))
        };
        let scale = |x: BasicValueEnum<'ctx>, c: f32| -> Result<BasicValueEnum<'ctx>> {
            Ok(self.builder.build_binop(Opcode::FMul, x, BasicValueEnum::from(f32_ty.const_float(f64::from(c))), "")?)
        };
        // `tanh.approx.f32`: `llvm.tanh` allowed to approximate (`afn`).
        let tanh = |x: BasicValueEnum<'ctx>| -> Result<BasicValueEnum<'ctx>> {
            let t = call("llvm.tanh", true, x)?;
            let call_inst = t.as_instruction_value().ok_or_else(|| super::internal("llvm.tanh is a call"))?;
            call_inst.set_fast_math_flags(FastMathFlags::ApproxFunc).map_err(|_| super::internal("llvm.tanh takes fast-math flags"))?;
            Ok(t)
        };
        match f {
            UnaryMath::Exp2 { ftz: true } => call(EX2_APPROX_FTZ, true, x),
            UnaryMath::Exp2 { ftz: false } => call(EX2_APPROX, true, x),
            UnaryMath::Exp => call(EX2_APPROX, true, scale(x, std::f32::consts::LOG2_E)?),
            UnaryMath::Log => scale(call("llvm.nvvm.lg2.approx.f", false, x)?, std::f32::consts::LN_2),
            UnaryMath::Sqrt => call("llvm.nvvm.sqrt.rn.f", false, x),
            UnaryMath::Rsqrt => call("llvm.nvvm.rsqrt.approx.f", false, x),
            UnaryMath::Tanh => tanh(x),
            UnaryMath::Sigmoid => {
                let half = BasicValueEnum::from(f32_ty.const_float(0.5));
                let t = tanh(scale(x, 0.5)?)?;
                self.nvvm.call(&self.builder, "llvm.fma", &[f32_ty.into()], &[t, half, half])?.ok_or_else(|| super::internal("llvm.fma returns a value"))
            }
            UnaryMath::Neg | UnaryMath::Abs => Err(super::internal("not a float math function")),
        }
    }
}

/// `ex2.approx.f32` (LLVM 22 overloads the intrinsic on its type; `llvm.nvvm.ex2.approx.f` is upgraded to it).
const EX2_APPROX: &str = "llvm.nvvm.ex2.approx";
/// `ex2.approx.ftz.f32` (`tile.exp2 {ftz = true}`).
const EX2_APPROX_FTZ: &str = "llvm.nvvm.ex2.approx.ftz";

impl FuncTranslator<'_, '_> {
    /// A grid special register, zero-extended to `index` (`i64`), as the op's result.
    fn grid_register(&mut self, op: &Operation, register: SpecialRegister) -> Result<()> {
        let x = self.nvvm.special_register(&self.builder, register)?;
        let x = self.builder.build_int_z_extend(x, self.cx.i64_type(), "")?;
        self.set_result(op, x.into())
    }
}
