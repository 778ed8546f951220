//! `tile.fill`, `tile.splat`, the binary ops, `tile.select` and `tile.cast` on register tiles: the same op
//! on each fragment vector (operands share the layout, so fragment `f` of each holds the same elements).

use tilec_ir::typed::{self, AnyOp};
use tilec_ir::{Diagnostic, OpId, Type, TypedOp, Value};

use super::Lowering;
use crate::arith::BinaryArith;

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
                let from = self.fragments_of(cast.source)?.vector_type();
                if from.shape != vty.shape {
                    return Err(Diagnostic::error(op.span, format!("'tile.cast' from fragments '{from}' to '{vty}' changes the fragment shape; not supported yet")));
                }
                for source in src {
                    frags.push(self.emit_value(typed::Cast { source }.into_spec().result(vty.clone())));
                }
            }
            Some(AnyOp::Select(select)) => {
                let (t, f) = (self.frags(select.true_value)?, self.frags(select.false_value)?);
                for (t, f) in t.into_iter().zip(f) {
                    frags.push(self.select(select.cond, t, f));
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
