//! `tile.for` and `tile.yield`: loop-carried register tiles expand to one carried vector per fragment.

use tilec_ir::{typed, Diagnostic, OpId, Span, Type, TypedOp, Value};

use super::Lowering;

impl<'f> Lowering<'f> {
    /// The values an operand list becomes: a register tile's fragments, anything else itself.
    fn expand(&mut self, values: &[Value]) -> Result<Vec<Value>, Diagnostic> {
        let mut out = Vec::new();
        for &v in values {
            if self.is_reg_tile(v) {
                out.extend(self.frags(v)?);
            } else {
                out.push(v);
            }
        }
        Ok(out)
    }

    /// `tile.for` → a `tile.for` whose iter_args are the fragments of the register tiles it carried; the
    /// body is moved into the new loop and lowered in place.
    pub(super) fn lower_for(&mut self, id: OpId) -> Result<(), Diagnostic> {
        let op = self.func.body.op(id).clone();
        let Some(header) = op.view::<typed::For>() else { return Err(Diagnostic::error(op.span, "malformed 'tile.for'")) };
        let inits = self.expand(&header.inits)?;
        // What the body leaves pending at its end meets the next iteration's first ops (computed before the
        // body moves into the new loop).
        let carried = crate::analysis::barriers::carried_into_next_iteration(&self.func.body, id);
        let old_block = op.regions[0];
        let old_args = self.func.body.block(old_block).args.clone();
        let body = &mut self.func.body;
        let block = body.new_block();
        let iv_name = body.value(old_args[0]).name.clone();
        let iv = body.add_block_arg(block, Type::INDEX, iv_name, Span::UNKNOWN);
        body.replace_all_uses(old_args[0], iv);
        let mut result_types = Vec::new();
        let mut arg_map: Vec<(Value, Vec<Value>)> = Vec::new();
        for (i, &old) in old_args[1..].iter().enumerate() {
            if self.is_reg_tile(old) {
                let init = header.inits[i];
                let n = self.frags(init)?.len();
                let frag_tys: Vec<Type> = self.frags(init)?.iter().map(|&f| self.ty(f).clone()).collect();
                let mut news = Vec::new();
                for ty in frag_tys.into_iter().take(n) {
                    news.push(self.func.body.add_block_arg(block, ty.clone(), None, Span::UNKNOWN));
                    result_types.push(ty);
                }
                arg_map.push((old, news));
            } else {
                let ty = self.ty(old).clone();
                let name = self.func.body.value(old).name.clone();
                let new = self.func.body.add_block_arg(block, ty.clone(), name, Span::UNKNOWN);
                self.func.body.replace_all_uses(old, new);
                result_types.push(ty);
                arg_map.push((old, vec![new]));
            }
        }
        for (old, news) in &arg_map {
            if self.is_reg_tile(*old) {
                self.frags.insert(*old, news.clone());
            }
        }
        // Move the body's ops into the new block.
        let moved = std::mem::take(&mut self.func.body.block_mut(old_block).ops);
        for &m in &moved {
            self.func.body.op_mut(m).parent = Some(block);
        }
        self.func.body.block_mut(block).ops = moved;
        let mut spec = typed::For { inits, ..header.clone() }.into_spec().region(block).span(op.span);
        spec.result_types = result_types;
        spec.attrs = op.attrs.clone();
        let new_for = self.emit(spec);
        let new_results = self.func.body.op(new_for).results.clone();
        // Lower the body; ops inside are placed before their own positions, so the insertion point moves.
        let saved = (self.at, self.span);
        let (outer_carried, before) = (self.carried.clone(), self.written_global.clone());
        self.carried.merge(&carried);
        self.written_global.extend(carried.written_global.iter().copied());
        // The previous iteration's shared accesses are pending at the top of the body, and after the loop.
        let (reads, writes) = self.shared_accesses_in(block);
        self.pending_shared_reads.extend(reads.iter().copied());
        self.pending_shared_writes.extend(writes.iter().copied());
        self.lower_block(block)?;
        self.pending_shared_reads.extend(reads);
        self.pending_shared_writes.extend(writes);
        (self.at, self.span) = saved;
        self.carried = outer_carried;
        // After the loop: what its body left pending, and what was pending before it (it may run no iteration).
        self.written_global.extend(before);
        let mut next = new_results.into_iter();
        for &old in &op.results {
            if self.is_reg_tile(old) {
                let n = self.frags(header.inits[op.results.iter().position(|&r| r == old).unwrap_or(0)])?.len();
                let news: Vec<Value> = next.by_ref().take(n).collect();
                self.frags.insert(old, news);
            } else if let Some(new) = next.next() {
                if let Some(name) = self.func.body.value(old).name.clone() {
                    self.func.body.values[new.index()].name = Some(name);
                }
                self.func.body.replace_all_uses(old, new);
            }
        }
        Ok(())
    }

    /// `tile.yield` of register tiles → `tile.yield` of their fragments. Returns whether it was replaced.
    pub(super) fn lower_yield(&mut self, id: OpId) -> Result<bool, Diagnostic> {
        let values = self.func.body.op(id).operands.clone();
        if !values.iter().any(|&v| self.is_reg_tile(v)) {
            return Ok(false);
        }
        let expanded = self.expand(&values)?;
        self.emit(typed::Yield { values: expanded }.into_spec());
        Ok(true)
    }
}
