//! `tile.fill`, `tile.splat`, the binary and unary ops, `tile.fma`, `tile.cmp`, `tile.select` and `tile.cast` on register tiles: the same op
//! on each fragment vector (operands share the layout, so fragment `f` of each holds the same elements).

use tilec_ir::typed::{self, AnyOp};
use tilec_ir::{Diagnostic, OpId, Type, TypedOp, Value};

use super::Lowering;
use tilec_ir::ops::{BinaryArith, UnaryMath};

impl<'f> Lowering<'f> {
    /// Lowers an op whose result is a register tile elementwise; returns whether it was replaced. Ops
    /// without register tiles are left alone (scalar `tile.*` ops are per-thread after lowering).
    pub(super) fn lower_elementwise(&mut self, id: OpId) -> Result<bool, Diagnostic> {
        let op = self.func.body.op(id).clone();
        let Some(result) = op.result().filter(|&r| self.is_reg_tile(r)) else {
            if op.operands.iter().any(|&v| self.is_reg_tile(v)) {
                return Err(Diagnostic::error(op.span, format!("lowering '{}' of a register tile to nvgpu is not supported", op.kind)));
            }
            return Ok(false);
        };
        let out = self.fragments_of(result)?;
        let vty = out.vector_type();
        let count = out.count() as usize;
        let tile_operands: Vec<Value> = op.operands.iter().copied().filter(|&v| self.is_reg_tile(v)).collect();
        for &v in &tile_operands {
            let f = self.fragments_of(v)?;
            if f.layout != out.layout || f.values != out.values {
                return Err(Diagnostic::error(op.span, format!("'{}' mixes register tiles of different layouts; layout conversion is not supported yet", op.kind)));
            }
        }
        let mut frags = Vec::with_capacity(count);
        match AnyOp::from_op(&op) {
            Some(AnyOp::Fill(fill)) => {
                // One fill per fragment (each is its own value, as the loop-carried accumulators need).
                for _ in 0..count {
                    frags.push(self.emit_value(fill.clone().into_spec().result(vty.clone())));
                }
            }
            Some(AnyOp::Splat(splat)) => {
                for _ in 0..count {
                    frags.push(self.emit_value(splat.clone().into_spec().result(vty.clone())));
                }
            }
            Some(AnyOp::Cast(cast)) => {
                let src = self.frags(cast.source)?;
                let from_frags = self.fragments_of(cast.source)?;
                let from = from_frags.vector_type();
                if from.num_elements() != vty.num_elements() {
                    return Err(Diagnostic::error(op.span, format!("'tile.cast' from fragments '{from}' to '{vty}' changes the fragment size; not supported yet")));
                }
                for source in src {
                    if from.shape == vty.shape {
                        frags.push(self.emit_value(typed::Cast { source }.into_spec().result(vty.clone())));
                        continue;
                    }
                    // 8-bit fragments are vectors of 4 values per row, wider ones of 2 (one 32-bit register
                    // each): the same values in the same order, so cast in the source's shape and regroup.
                    let cast_ty = tilec_ir::VectorType::new(&from.shape, vty.elem);
                    let wide = self.emit_value(typed::Cast { source }.into_spec().result(Type::Vector(cast_ty)));
                    let mut v = self.zero_vector(vty.clone());
                    for j in 0..out.values {
                        let x = self.extract(wide, from_frags.position(j));
                        v = self.insert(x, v, out.position(j));
                    }
                    frags.push(v);
                }
            }
            Some(AnyOp::Select(select)) => {
                let (t, f) = (self.frags(select.true_value)?, self.frags(select.false_value)?);
                // A register tile of i1 chooses fragment by fragment; a scalar i1 chooses whole fragments.
                let conds = if self.is_reg_tile(select.cond) { self.frags(select.cond)? } else { vec![select.cond; t.len()] };
                for ((c, t), f) in conds.into_iter().zip(t).zip(f) {
                    frags.push(self.select(c, t, f));
                }
            }
            Some(AnyOp::Fma(fma)) => {
                let (a, b, c) = (self.frags(fma.lhs)?, self.frags(fma.rhs)?, self.frags(fma.addend)?);
                for ((lhs, rhs), addend) in a.into_iter().zip(b).zip(c) {
                    frags.push(self.emit_value(typed::Fma { lhs, rhs, addend }.into_spec().result(Type::Vector(vty.clone()))));
                }
            }
            Some(AnyOp::Cmp(cmp)) => {
                let (a, b) = (self.frags(cmp.lhs)?, self.frags(cmp.rhs)?);
                for (lhs, rhs) in a.into_iter().zip(b) {
                    let spec = typed::Cmp { lhs, rhs, predicate: cmp.predicate }.into_spec();
                    frags.push(self.emit_value(spec.result(Type::Vector(vty.clone()))));
                }
            }
            Some(
                view @ (tilec_ir::unary_math_view!()),
            ) => {
                let Some((f, source)) = UnaryMath::of_view(&view) else { return Ok(false) };
                for x in self.frags(source)? {
                    // The op (with its attributes: tile.exp2's ftz) on each fragment.
                    frags.push(self.emit_value(f.spec(x).result(Type::Vector(vty.clone()))));
                }
            }
            _ => {
                let Some((arith, lhs, rhs)) = BinaryArith::of_op(&op) else {
                    return Err(Diagnostic::error(op.span, format!("lowering '{}' producing a register tile is not supported", op.kind)));
                };
                let (a, b) = (self.frags(lhs)?, self.frags(rhs)?);
                for (a, b) in a.into_iter().zip(b) {
                    frags.push(self.emit_value(arith.spec(a, b).result(Type::Vector(vty.clone()))));
                }
            }
        }
        self.frags.insert(result, frags);
        Ok(true)
    }
}

