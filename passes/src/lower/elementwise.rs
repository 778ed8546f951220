//! `tile.fill`, `tile.splat`, the binary ops, `tile.select` and `tile.cast` on register tiles: the same op
//! on each fragment vector (operands share the layout, so fragment `f` of each holds the same elements).

use tilec_ir::{Diagnostic, OpId, OpKind, OpSpec, Type, Value};

use super::Lowering;

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
        match op.kind {
            OpKind::Fill => {
                let value = op.attr("value").cloned().unwrap_or(tilec_ir::Attribute::Int(0));
                // One fill per fragment (each is its own value, as the loop-carried accumulators need).
                for _ in 0..count {
                    frags.push(self.emit_value(OpSpec::new(OpKind::Fill).attr("value", value.clone()).result(vty.clone())));
                }
            }
            OpKind::Splat => {
                let scalar = op.operand("value").ok_or_else(|| Diagnostic::error(op.span, "malformed 'tile.splat'"))?;
                for _ in 0..count {
                    frags.push(self.emit_value(OpSpec::new(OpKind::Splat).group("value", &[scalar]).result(vty.clone())));
                }
            }
            OpKind::Cast => {
                let src = self.frags(op.operands[0])?;
                let from = self.fragments_of(op.operands[0])?.vector_type();
                if from.shape != vty.shape {
                    return Err(Diagnostic::error(op.span, format!("'tile.cast' from fragments '{from}' to '{vty}' changes the fragment shape; not supported yet")));
                }
                for s in src {
                    frags.push(self.emit_value(OpSpec::new(OpKind::Cast).group("source", &[s]).result(vty.clone())));
                }
            }
            OpKind::Select => {
                let cond = op.operands[0];
                let (t, f) = (self.frags(op.operands[1])?, self.frags(op.operands[2])?);
                for (t, f) in t.into_iter().zip(f) {
                    frags.push(self.select(cond, t, f));
                }
            }
            k if k.is_binary_arith() => {
                let (a, b) = (self.frags(op.operands[0])?, self.frags(op.operands[1])?);
                for (a, b) in a.into_iter().zip(b) {
                    frags.push(self.emit_value(OpSpec::new(k).group("lhs", &[a]).group("rhs", &[b]).result(Type::Vector(vty.clone()))));
                }
            }
            other => {
                return Err(Diagnostic::error(op.span, format!("lowering '{other}' producing a register tile is not supported")));
            }
        }
        self.frags.insert(result, frags);
        Ok(true)
    }
}
