//! Per-thread `tile` ops → `arith` (and `gpu` ids, `vector.broadcast`), with the interpreter's semantics as
//! the LLVM backend implements them: integer arithmetic wraps, division truncates (`divsi`/`remsi`;
//! `divui`/`remui` for `u8` and `i1`), float `min`/`max` ignore a NaN (`minnumf`/`maxnumf`), tf32 results
//! are rounded to nearest even at mantissa bit 13.

use tilec_ir::body::{Operation, Value};
use tilec_ir::ops::{typed, CmpPredicate, Literal, OpKind, UnaryMath};
use tilec_ir::types::{ScalarType, Type};

use super::func::FuncEmitter;
use super::{types, Result};
use crate::spine::{literal_float, literal_int, round_tf32, EmitScalar, Extent};

/// A scalar constant of type `ty` (MLIR type `mlir`): integers as decimal literals, floats from the exact
/// bits of the f64 value (`arith.truncf` folds the rounding to narrower types at compile time).
pub(super) fn scalar_constant(t: &mut FuncEmitter<'_>, op: &Operation, ty: ScalarType, value: Literal) -> Result<String> {
    let mlir = types::scalar_type(ty).ok_or_else(|| t.kernel.unsupported(op, format!("no constants of '{ty}'")))?;
    if ty.is_float() {
        let x = literal_float(value).ok_or_else(|| t.kernel.unsupported(op, format!("'{value}' is not a valid '{ty}'")))?;
        if ty == ScalarType::F64 {
            return Ok(t.emit(&format!("arith.constant 0x{:016X} : f64", x.to_bits())));
        }
        if ty == ScalarType::TF32 {
            return Ok(t.emit(&format!("arith.constant 0x{:08X} : f32", round_tf32(x as f32).to_bits())));
        }
        let wide = t.emit(&format!("arith.constant 0x{:016X} : f64", x.to_bits()));
        return Ok(t.emit(&format!("arith.truncf {wide} : f64 to {mlir}")));
    }
    let n = literal_int(value).ok_or_else(|| t.kernel.unsupported(op, format!("'{value}' is not a valid '{ty}'")))?;
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

impl EmitScalar for FuncEmitter<'_> {
    /// `tile.constant v : T`.
    fn constant(&mut self, op: &Operation, v: &typed::Constant) -> Result<()> {
        let (ty, _) = self.result_type(op)?;
        let Type::Scalar(s) = ty else {
            return Err(self.kernel.unsupported(op, "it produces a scalar"));
        };
        let x = scalar_constant(self, op, s, v.value)?;
        self.set_result(op, x)
    }

    /// `tile.fill v : vector<…>` → a scalar constant broadcast (folded to a dense constant).
    fn fill(&mut self, op: &Operation, v: &typed::Fill) -> Result<()> {
        let (ty, mlir) = self.result_type(op)?;
        if !matches!(ty, Type::Vector(_)) {
            return Err(self.kernel.unsupported(op, format!("only vector results are translated, not '{ty}'")));
        }
        let elem = ty.element_type();
        let x = scalar_constant(self, op, elem, v.value)?;
        let filled = self.emit(&format!("vector.broadcast {x} : {} to {mlir}", types::scalar_type(elem).unwrap_or("f32")));
        self.set_result(op, filled)
    }

    /// `tile.splat %x : vector<…>` → `vector.broadcast`.
    fn splat(&mut self, op: &Operation, v: &typed::Splat) -> Result<()> {
        let (ty, mlir) = self.result_type(op)?;
        if !matches!(ty, Type::Vector(_)) {
            return Err(self.kernel.unsupported(op, format!("only vector results are translated, not '{ty}'")));
        }
        let (x, xty) = self.value(op, v.value)?;
        let splat = self.emit(&format!("vector.broadcast {x} : {xty} to {mlir}"));
        self.set_result(op, splat)
    }

    /// `tile.block_id` → `gpu.block_id`.
    fn block_id(&mut self, op: &Operation, v: &typed::BlockId) -> Result<()> {
        let x = self.emit(&format!("gpu.block_id {}", v.dim));
        self.set_result(op, x)
    }

    /// `tile.grid_dim` → `gpu.grid_dim`.
    fn grid_dim(&mut self, op: &Operation, v: &typed::GridDim) -> Result<()> {
        let x = self.emit(&format!("gpu.grid_dim {}", v.dim));
        self.set_result(op, x)
    }

    /// `tile.dim %g, axis` → the static extent, or the kernel's extent parameter.
    fn dim(&mut self, op: &Operation, v: &typed::Dim) -> Result<()> {
        let extent = self.memref(op, v.source)?.extent(self.func, op, v.axis)?.clone();
        let x = match extent {
            Extent::Static(n) => self.index_constant(n as i64),
            Extent::Dynamic(x) => x,
        };
        self.set_result(op, x)
    }

    /// `tile.add/sub/mul/div/rem/min/max` on scalars or vectors.
    fn binary(&mut self, op: &Operation, lhs: Value, rhs: Value) -> Result<()> {
        let (ty, mlir) = self.result_type(op)?;
        let elem = ty.element_type();
        let (x, y) = (self.name(op, lhs)?, self.name(op, rhs)?);
        let name = if elem.is_float() {
            match op.kind {
                OpKind::Add => "arith.addf",
                OpKind::Sub => "arith.subf",
                OpKind::Mul => "arith.mulf",
                OpKind::Div => "arith.divf",
                OpKind::Min => "arith.minnumf",
                OpKind::Max => "arith.maxnumf",
                _ => return Err(self.kernel.unsupported(op, format!("'{}' is not defined on '{elem}'", op.kind))),
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
                _ => return Err(self.kernel.unsupported(op, format!("'{}' is not an arithmetic op", op.kind))),
            }
        };
        let mut v = if matches!(name, "arith.minnumf" | "arith.maxnumf") {
            // The upstream pipeline turns `arith.minnumf`/`maxnumf` into libdevice calls (`__nv_fmaxf`) that
            // nothing links; `llvm.intr.minnum`/`maxnum` on each element give `min.f32`/`max.f32`, as the
            // LLVM backend's `llvm.minnum`/`maxnum` do.
            let intr = if op.kind == OpKind::Min { "llvm.intr.minnum" } else { "llvm.intr.maxnum" };
            let e = types::scalar_type(elem).unwrap_or("f32");
            self.per_element(&ty, &[&x, &y], &mlir, |t, xs| t.emit(&format!("{intr}({}, {}) : ({e}, {e}) -> {e}", xs[0], xs[1])))
        } else {
            self.emit(&format!("{name} {x}, {y} : {mlir}"))
        };
        if elem == ScalarType::TF32 {
            v = round_to_tf32(self, &v, &mlir);
        }
        self.set_result(op, v)
    }

    /// `tile.neg` → `arith.negf` (`neg.f32`) or `0 - x`; `tile.abs` → `llvm.fabs` or `llvm.abs` (not poison at
    /// the minimum: it wraps) through `llvm.call_intrinsic` on each element (the NVVM conversion marks
    /// `llvm.intr.fabs` illegal and would make it a libdevice call); the float math functions → the NVVM intrinsics the LLVM backend
    /// calls, through `llvm.call_intrinsic` on each f32 element (f16/bf16 extended to f32 and rounded back):
    /// `ex2.approx.f32` (of x·log2(e) for `exp`), `lg2.approx.f32` times ln 2 for `log`, `sqrt.rn.f32`,
    /// `rsqrt.approx.f32`, `llvm.tanh` with `afn` (`tanh.approx.f32`; of x·0.5, then `fma` by 0.5 plus
    /// 0.5, for `sigmoid`). (`math.exp2`, `math.absf` and friends become libdevice calls upstream.)
    fn unary(&mut self, op: &Operation, f: UnaryMath, source: Value) -> Result<()> {
        let (ty, mlir) = self.result_type(op)?;
        let elem = ty.element_type();
        let (x, _) = self.value(op, source)?;
        if f == UnaryMath::Abs {
            // The LLVM dialect's intrinsics take scalars and 1-D vectors: one call per element.
            let e = types::scalar_type(elem).unwrap_or("f32");
            let v = if elem.is_float() {
                self.per_element(&ty, &[&x], &mlir, |t, xs| t.emit(&format!("llvm.call_intrinsic \"llvm.fabs.{e}\"({}) : ({e}) -> {e}", xs[0])))
            } else if elem == ScalarType::Index {
                // `index` is not an LLVM type: max(x, 0 - x), which wraps at the minimum like `llvm.abs`.
                let z = self.emit("arith.constant 0 : index");
                let z = if mlir == "index" { z } else { self.emit(&format!("vector.broadcast {z} : index to {mlir}")) };
                let neg = self.emit(&format!("arith.subi {z}, {x} : {mlir}"));
                self.emit(&format!("arith.maxsi {x}, {neg} : {mlir}"))
            } else {
                let no_poison = self.emit("llvm.mlir.constant(false) : i1");
                self.per_element(&ty, &[&x], &mlir, |t, xs| {
                    t.emit(&format!("llvm.call_intrinsic \"llvm.abs.{e}\"({}, {no_poison}) : ({e}, i1) -> {e}", xs[0]))
                })
            };
            return self.set_result(op, v);
        }
        if f == UnaryMath::Neg {
            let v = if elem.is_float() {
                self.emit(&format!("arith.negf {x} : {mlir}"))
            } else {
                let e = types::scalar_type(elem).unwrap_or("i32");
                let z = self.emit(&format!("arith.constant 0 : {e}"));
                let z = if mlir == e { z } else { self.emit(&format!("vector.broadcast {z} : {e} to {mlir}")) };
                self.emit(&format!("arith.subi {z}, {x} : {mlir}"))
            };
            return self.set_result(op, v);
        }
        if !matches!(elem, ScalarType::F32 | ScalarType::F16 | ScalarType::BF16) {
            return Err(self.kernel.unsupported(op, format!("'{}' is not defined on '{elem}'", op.kind)));
        }
        let wide_ty = types::with_element(&mlir, "f32");
        let wide = if elem == ScalarType::F32 { x } else { self.emit(&format!("arith.extf {x} : {mlir} to {wide_ty}")) };
        let call = |t: &mut FuncEmitter<'_>, name: &str, x: &str| t.emit(&format!("llvm.call_intrinsic \"{name}\"({x}) : (f32) -> f32"));
        let scale = |t: &mut FuncEmitter<'_>, x: &str, c: f32| {
            let c = t.emit(&format!("arith.constant 0x{:08X} : f32", c.to_bits()));
            t.emit(&format!("arith.mulf {x}, {c} : f32"))
        };
        let tanh = |t: &mut FuncEmitter<'_>, x: &str| {
            t.emit(&format!("llvm.call_intrinsic \"llvm.tanh.f32\"({x}) {{fastmathFlags = #llvm.fastmath<afn>}} : (f32) -> f32"))
        };
        let v = self.per_element(&ty, &[&wide], &wide_ty, |t, xs| match f {
            UnaryMath::Exp2 { ftz: true } => call(t, "llvm.nvvm.ex2.approx.ftz.f32", &xs[0]),
            UnaryMath::Exp2 { ftz: false } => call(t, "llvm.nvvm.ex2.approx.f32", &xs[0]),
            UnaryMath::Exp => {
                let y = scale(t, &xs[0], std::f32::consts::LOG2_E);
                call(t, "llvm.nvvm.ex2.approx.f32", &y)
            }
            UnaryMath::Log => {
                let y = call(t, "llvm.nvvm.lg2.approx.f", &xs[0]);
                scale(t, &y, std::f32::consts::LN_2)
            }
            UnaryMath::Sqrt => call(t, "llvm.nvvm.sqrt.rn.f", &xs[0]),
            UnaryMath::Tanh => tanh(t, &xs[0]),
            UnaryMath::Sigmoid => {
                let half_x = scale(t, &xs[0], 0.5);
                let y = tanh(t, &half_x);
                let half = t.emit(&format!("arith.constant 0x{:08X} : f32", 0.5f32.to_bits()));
                t.emit(&format!("llvm.intr.fma({y}, {half}, {half}) : (f32, f32, f32) -> f32"))
            }
            _ => call(t, "llvm.nvvm.rsqrt.approx.f", &xs[0]),
        });
        let v = if elem == ScalarType::F32 { v } else { self.emit(&format!("arith.truncf {v} : {wide_ty} to {mlir}")) };
        self.set_result(op, v)
    }

    /// `tile.cmp pred %a, %b` → `arith.cmpi` (signed; unsigned for `u8`/`i1`) or ordered `arith.cmpf` (`ne` is
    /// unordered, so NaN ≠ NaN as in the interpreter).
    fn cmp(&mut self, op: &Operation, v: &typed::Cmp) -> Result<()> {
        use CmpPredicate::*;
        let elem = self.func.body.ty(v.lhs).element_type();
        let (x, xty) = self.value(op, v.lhs)?;
        let y = self.name(op, v.rhs)?;
        let result = if elem.is_float() {
            let p = match v.predicate {
                Eq => "oeq",
                Ne => "une",
                Lt => "olt",
                Le => "ole",
                Gt => "ogt",
                Ge => "oge",
            };
            self.emit(&format!("arith.cmpf {p}, {x}, {y} : {xty}"))
        } else {
            let unsigned = elem.is_unsigned() || elem == ScalarType::I1;
            let p = match (v.predicate, unsigned) {
                (Eq, _) => "eq",
                (Ne, _) => "ne",
                (Lt, false) => "slt",
                (Le, false) => "sle",
                (Gt, false) => "sgt",
                (Ge, false) => "sge",
                (Lt, true) => "ult",
                (Le, true) => "ule",
                (Gt, true) => "ugt",
                (Ge, true) => "uge",
            };
            self.emit(&format!("arith.cmpi {p}, {x}, {y} : {xty}"))
        };
        self.set_result(op, result)
    }

    /// `tile.fma %a, %b, %c` → `llvm.intr.fma` on each f32 element (`fma.rn.f32`; `math.fma` would be
    /// left to the upstream conversions).
    fn fma(&mut self, op: &Operation, v: &typed::Fma) -> Result<()> {
        let (ty, mlir) = self.result_type(op)?;
        let (a, b, c) = (self.name(op, v.lhs)?, self.name(op, v.rhs)?, self.name(op, v.addend)?);
        let r = self.per_element(&ty, &[&a, &b, &c], &mlir, |t, xs| t.emit(&format!("llvm.intr.fma({}, {}, {}) : (f32, f32, f32) -> f32", xs[0], xs[1], xs[2])));
        self.set_result(op, r)
    }

    /// `tile.select %c, %a, %b` → `arith.select`.
    fn select(&mut self, op: &Operation, v: &typed::Select) -> Result<()> {
        let (c, cty) = self.value(op, v.cond)?;
        let (a, aty) = self.value(op, v.true_value)?;
        let b = self.name(op, v.false_value)?;
        let chosen = if cty == "i1" {
            self.emit(&format!("arith.select {c}, {a}, {b} : {aty}"))
        } else {
            self.emit(&format!("arith.select {c}, {a}, {b} : {cty}, {aty}"))
        };
        self.set_result(op, chosen)
    }

    /// `tile.cast %x : T` with the interpreter's semantics: floats round to nearest even (`extf`/`truncf`, through
    /// f32 between f16 and bf16), integers wrap (`trunci`/`extsi`/`extui`, `index_cast`), floats to integers
    /// truncate toward zero and saturate to the integer type's range, NaN giving 0 (`llvm.fptosi.sat` /
    /// `llvm.fptoui.sat` through `llvm.call_intrinsic`, as the LLVM backend: `cvt.rzi` clamps the same way;
    /// `arith.fptosi` would be poison there), anything to `i1` is `x != 0`.
    fn cast(&mut self, op: &Operation, v: &typed::Cast) -> Result<()> {
        let from = self.func.body.ty(v.source).element_type();
        let (ty, to_ty) = self.result_type(op)?;
        let to = ty.element_type();
        let (x, from_ty) = self.value(op, v.source)?;
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
                    let z = self.emit(&format!("arith.constant 0.0 : {}", types::scalar_type(from).unwrap_or("f32")));
                    let z = if is_vector { self.emit(&format!("vector.broadcast {z} : {} to {from_ty}", types::scalar_type(from).unwrap_or("f32"))) } else { z };
                    self.emit(&format!("arith.cmpf une, {x}, {z} : {from_ty}"))
                } else {
                    let e = types::scalar_type(from).unwrap_or("i32");
                    let z = self.emit(&format!("arith.constant 0 : {e}"));
                    let z = if is_vector { self.emit(&format!("vector.broadcast {z} : {e} to {from_ty}")) } else { z };
                    self.emit(&format!("arith.cmpi ne, {x}, {z} : {from_ty}"))
                }
            }
            (true, true) => {
                let (fb, tb) = (from.bit_width(), to.bit_width());
                let v = if from == to || (fb == 32 && tb == 32) {
                    x.clone()
                } else if fb == 16 && tb == 16 {
                    let wide = self.emit(&format!("arith.extf {x} : {from_ty} to {f32_shape}"));
                    self.emit(&format!("arith.truncf {wide} : {f32_shape} to {to_ty}"))
                } else if fb < tb {
                    self.emit(&format!("arith.extf {x} : {from_ty} to {to_ty}"))
                } else {
                    self.emit(&format!("arith.truncf {x} : {from_ty} to {to_ty}"))
                };
                if to == ScalarType::TF32 && from != ScalarType::TF32 { round_to_tf32(self, &v, &to_ty) } else { v }
            }
            (false, true) => {
                let x = as_i64(self, &x);
                let src = if from == ScalarType::Index { types::with_element(&from_ty, "i64") } else { from_ty.clone() };
                let name = if from_unsigned { "arith.uitofp" } else { "arith.sitofp" };
                let v = self.emit(&format!("{name} {x} : {src} to {to_ty}"));
                if to == ScalarType::TF32 { round_to_tf32(self, &v, &to_ty) } else { v }
            }
            (true, false) => {
                // `arith.fptosi` is poison out of range and for NaN: the saturating LLVM intrinsic instead (as the
                // LLVM backend), element by element, straight to the integer type (`index` through i64).
                let from_e = types::scalar_type(from).unwrap_or("f32");
                let (int_e, int_shape) = if to == ScalarType::Index { ("i64", i64_shape.clone()) } else { (types::scalar_type(to).unwrap_or("i32"), to_ty.clone()) };
                let name = if to.is_unsigned() { "llvm.fptoui.sat" } else { "llvm.fptosi.sat" };
                let call = |t: &mut FuncEmitter<'_>, x: &str| t.emit(&format!("llvm.call_intrinsic \"{name}.{int_e}.{from_e}\"({x}) : ({from_e}) -> {int_e}"));
                let sat = match ty.clone() {
                    Type::Vector(vt) => {
                        let mut out = self.emit(&format!("arith.constant dense<0> : {int_shape}"));
                        for pos in vector_positions(&vt.shape) {
                            let e = self.emit(&format!("vector.extract {x}[{pos}] : {from_e} from {from_ty}"));
                            let r = call(self, &e);
                            out = self.emit(&format!("vector.insert {r}, {out} [{pos}] : {int_e} into {int_shape}"));
                        }
                        out
                    }
                    _ => call(self, &x),
                };
                match to {
                    ScalarType::Index => self.emit(&format!("arith.index_cast {sat} : {i64_shape} to {to_ty}")),
                    _ => sat,
                }
            }
            (false, false) => {
                let (fb, tb) = (from.bit_width(), to.bit_width());
                if from == ScalarType::Index || to == ScalarType::Index {
                    if from == to {
                        x.clone()
                    } else if from == ScalarType::Index {
                        self.emit(&format!("arith.index_cast {x} : {from_ty} to {to_ty}"))
                    } else if from_unsigned {
                        self.emit(&format!("arith.index_castui {x} : {from_ty} to {to_ty}"))
                    } else {
                        self.emit(&format!("arith.index_cast {x} : {from_ty} to {to_ty}"))
                    }
                } else if fb == tb {
                    x.clone()
                } else if fb > tb {
                    self.emit(&format!("arith.trunci {x} : {from_ty} to {to_ty}"))
                } else if from_unsigned {
                    self.emit(&format!("arith.extui {x} : {from_ty} to {to_ty}"))
                } else {
                    self.emit(&format!("arith.extsi {x} : {from_ty} to {to_ty}"))
                }
            }
        };
        self.set_result(op, v)
    }
}

impl FuncEmitter<'_> {
    /// `f` on each element of the operands `xs` (all of type `mlir`, of the shape of `ty`): once on scalars,
    /// element by element (`vector.extract`, `vector.insert` into the first operand) on vectors. `f` gets the
    /// scalar names and returns the scalar result's.
    fn per_element(&mut self, ty: &Type, xs: &[&str], mlir: &str, mut f: impl FnMut(&mut Self, &[String]) -> String) -> String {
        let Type::Vector(vt) = ty else {
            let names: Vec<String> = xs.iter().map(|x| x.to_string()).collect();
            return f(self, &names);
        };
        let elem = mlir.rsplit('x').next().unwrap_or("f32").trim_end_matches('>').to_string();
        let mut out = xs[0].to_string();
        for pos in vector_positions(&vt.shape) {
            let names: Vec<String> =
                xs.iter().map(|x| self.emit(&format!("vector.extract {x}[{pos}] : {elem} from {mlir}"))).collect();
            let r = f(self, &names);
            out = self.emit(&format!("vector.insert {r}, {out} [{pos}] : {elem} into {mlir}"));
        }
        out
    }
}

/// The positions of a vector of `shape`, row-major, as `vector.extract`/`vector.insert` write them (`"1, 0"`).
fn vector_positions(shape: &[u64]) -> impl Iterator<Item = String> + '_ {
    let n: u64 = shape.iter().product();
    (0..n).map(move |flat| {
        let mut position = Vec::with_capacity(shape.len());
        let mut rest = flat;
        for &extent in shape.iter().rev() {
            position.push(rest % extent);
            rest /= extent;
        }
        position.reverse();
        position.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
    })
}
