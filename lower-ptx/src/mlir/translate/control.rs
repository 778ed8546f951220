//! `tile.for` → `scf.for` with `iter_args` (steps are positive, as the interpreter requires; `scf.for` runs
//! while `iv < ub`, the same test as the LLVM backend's loop). `hoist = false` becomes the loop annotation
//! `licm<disable = true>`, as the LLVM backend's `llvm.licm.disable`.

use tilec_ir::body::{Operation, Value};
use tilec_ir::ops::typed;

use super::func::FuncEmitter;
use super::{types, Result};
use crate::spine::EmitLoop;

/// A loop being written: its results' name and types, and the async-copy state outside it.
pub(crate) struct Loop {
    result: String,
    carried_types: Vec<String>,
    pending: Vec<String>,
    group: Option<String>,
}

impl EmitLoop for FuncEmitter<'_> {
    type Loop = Loop;

    /// The `scf.for` line; the body's ops follow, indented. Async-copy tokens made in the body stay in the body.
    fn begin_for(&mut self, op: &Operation, v: &typed::For, iv: Value, carried: &[Value]) -> Result<Loop> {
        let func = self.func;
        let (lb, ub, st) = (self.name(op, v.lower)?, self.name(op, v.upper)?, self.name(op, v.step)?);
        let init_values = v.inits.iter().map(|&x| self.value(op, x)).collect::<Result<Vec<_>>>()?;
        let mut carried_types = Vec::with_capacity(carried.len());
        for &arg in carried {
            let ty = types::value_type(func.body.ty(arg))
                .ok_or_else(|| self.kernel.unsupported(op, format!("it cannot carry '{}'", func.body.ty(arg))))?;
            carried_types.push(ty);
        }
        let result = self.fresh();
        let iv_name = self.fresh();
        let carried_names: Vec<String> = carried.iter().map(|_| self.fresh()).collect();
        let head = if carried.is_empty() {
            format!("scf.for {iv_name} = {lb} to {ub} step {st} {{")
        } else {
            let binds: Vec<String> = carried_names.iter().zip(&init_values).map(|(c, (x, _))| format!("{c} = {x}")).collect();
            let arity = if carried.len() > 1 { format!(":{}", carried.len()) } else { String::new() };
            format!(
                "{result}{arity} = scf.for {iv_name} = {lb} to {ub} step {st} iter_args({}) -> ({}) {{",
                binds.join(", "),
                carried_types.join(", ")
            )
        };
        self.line(&head);
        self.push_indent();
        self.set(iv, iv_name, "index".to_string());
        for ((&arg, c), ty) in carried.iter().zip(&carried_names).zip(&carried_types) {
            self.set(arg, c.clone(), ty.clone());
        }
        let (pending, group) = (std::mem::take(&mut self.pending_copies), self.group_token.clone());
        Ok(Loop { result, carried_types, pending, group })
    }

    /// `scf.yield` of the yielded values, the closing brace, the results (`%r#i` for several).
    fn end_for(&mut self, op: &Operation, lp: Loop, yielded: &[Value]) -> Result<()> {
        let yielded = yielded.iter().map(|&x| self.value(op, x)).collect::<Result<Vec<_>>>()?;
        if yielded.is_empty() {
            self.line("scf.yield");
        } else {
            let names: Vec<&str> = yielded.iter().map(|(n, _)| n.as_str()).collect();
            let tys: Vec<&str> = yielded.iter().map(|(_, ty)| ty.as_str()).collect();
            self.line(&format!("scf.yield {} : {}", names.join(", "), tys.join(", ")));
        }
        self.pop_indent();
        // `hoist = false`: LLVM's loop metadata `llvm.licm.disable` on the back edge (scf-to-cf carries the
        // loop's discardable attributes to its back edge, where `llvm.br` takes `loop_annotation` as its own).
        if op.view::<typed::For>().and_then(|f| f.hoist) == Some(false) {
            self.line("} {loop_annotation = #llvm.loop_annotation<licm = #llvm.loop_licm<disable = true>>}");
        } else {
            self.line("}");
        }
        self.pending_copies = lp.pending;
        self.group_token = lp.group;
        let several = lp.carried_types.len() > 1;
        for (i, (&r, ty)) in op.results.iter().zip(&lp.carried_types).enumerate() {
            let name = if several { format!("{}#{i}", lp.result) } else { lp.result.clone() };
            self.set(r, name, ty.clone());
        }
        Ok(())
    }
}
