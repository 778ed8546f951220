//! `cse`: common-subexpression elimination of pure ops over structured regions.
//!
//! Two ops are the same expression when they have the same kind, operands, attributes and result types,
//! and the kind is pure (see [`crate::analysis::effects`]): constants, arithmetic, comparisons, selects,
//! casts, splats, fills, block/thread/lane/warp ids, `tile.dim`, `nvgpu.extract`/`insert`. A later copy is
//! replaced by the earlier one when the earlier one dominates it: it comes before it in the same block, or
//! in an enclosing block (a value defined before a `tile.for` is visible in its body). Ops in a loop body are
//! not visible after the loop. Allocations, copies, loads, stores, barriers, async copies, `ldmatrix` and
//! the MMAs are never merged.
//!
//! ```text
//! %a = tile.mul %bm, %c128 : index          %a = tile.mul %bm, %c128 : index
//! %b = tile.mul %bm, %c128 : index   ==>    %s = tile.add %a, %a : index
//! %s = tile.add %a, %b : index
//! ```

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use tilec_ir::{BlockId, Diagnostic, Func, Module, OpId, OpKind, Type, Value};

use crate::analysis::effects::is_pure;
use crate::context::PassContext;
use crate::pass::Pass;

/// The `cse` pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cse;

impl Pass for Cse {
    fn name(&self) -> &'static str {
        "cse"
    }

    fn description(&self) -> &'static str {
        "Merge identical pure ops (within a block and from enclosing blocks into loop bodies)"
    }

    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<(), Diagnostic> {
        for func in &mut module.funcs {
            cse_func(func);
        }
        Ok(())
    }
}

/// What makes two pure ops compute the same value. Attributes are compared by their `Debug` text, which
/// distinguishes every value (`0.0` from `-0.0`, `1` from `true`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Expr {
    kind: OpKind,
    operands: Vec<Value>,
    segments: Vec<u32>,
    attrs: String,
    types: Vec<Type>,
}

struct Cse_<'a> {
    func: &'a mut Func,
    available: HashMap<Expr, Value>,
    /// Results of merged ops and the value that replaces them. Uses are rewritten as the walk reaches them
    /// (every use comes after its definition in program order), instead of a scan of the whole function per
    /// merged op, which made `cse` quadratic (69 ms of the 0.1 s front end on `gemm.tir`).
    replaced: HashMap<Value, Value>,
    removed: usize,
}

/// Eliminates common subexpressions in one function; returns how many ops were removed.
pub fn cse_func(func: &mut Func) -> usize {
    let entry = func.entry;
    let mut cse = Cse_ { func, available: HashMap::default(), replaced: HashMap::default(), removed: 0 };
    cse.block(entry);
    cse.removed
}

impl Cse_<'_> {
    fn block(&mut self, block: BlockId) {
        // Expressions first seen in this block; forgotten when the block (scope) ends.
        let mut scope: Vec<Expr> = Vec::new();
        let ops: Vec<OpId> = self.func.body.block(block).ops.clone();
        let mut erased: HashSet<OpId> = HashSet::default();
        for id in ops {
            if !self.replaced.is_empty() {
                let replaced = &self.replaced;
                for operand in &mut self.func.body.ops[id.index()].operands {
                    if let Some(&to) = replaced.get(operand) {
                        *operand = to;
                    }
                }
            }
            let op = self.func.body.op(id);
            if !op.regions.is_empty() {
                for region in op.regions.clone() {
                    self.block(region);
                }
                continue;
            }
            if !is_pure(op.kind) || op.results.len() != 1 {
                continue;
            }
            let body = &self.func.body;
            let expr = Expr {
                kind: op.kind,
                operands: op.operands.clone(),
                segments: op.segments.clone(),
                // Most pure ops (arithmetic, comparisons) have no attributes: no text to format.
                attrs: if op.attrs.is_empty() { String::new() } else { format!("{:?}", op.attrs) },
                types: op.results.iter().map(|&r| body.ty(r).clone()).collect(),
            };
            let result = op.results[0];
            match self.available.get(&expr) {
                Some(&earlier) => {
                    let body = &mut self.func.body;
                    if body.value(earlier).name.is_none() {
                        body.values[earlier.index()].name = body.value(result).name.clone();
                    }
                    self.replaced.insert(result, earlier);
                    body.ops[id.index()].parent = None;
                    erased.insert(id);
                    self.removed += 1;
                }
                None => {
                    self.available.insert(expr.clone(), result);
                    scope.push(expr);
                }
            }
        }
        if !erased.is_empty() {
            self.func.body.blocks[block.index()].ops.retain(|o| !erased.contains(o));
        }
        for expr in scope {
            self.available.remove(&expr);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::check_pass;

    use super::Cse;

    #[test]
    fn merges_within_a_block() {
        check_pass(
            Cse,
            "
tile.func @f() {
  %bm = tile.block_id x : index
  %bm2 = tile.block_id x : index
  %by = tile.block_id y : index
  %c = tile.constant 128 : index
  %d = tile.constant 128 : index
  %e = tile.constant 128 : i32
  %a = tile.mul %bm, %c : index
  %b = tile.mul %bm2, %d : index
  %s = tile.add %a, %b : index
  %t = tile.add %b, %a : index
  %u = tile.mul %by, %c : index
  tile.return
}",
            "
tile.func @f() {
  %bm = tile.block_id x : index
  %by = tile.block_id y : index
  %c = tile.constant 128 : index
  %e = tile.constant 128 : i32
  %a = tile.mul %bm, %c : index
  %s = tile.add %a, %a : index
  %u = tile.mul %by, %c : index
  tile.return
}",
        );
    }

    #[test]
    fn merges_into_loop_bodies_but_not_out_of_them() {
        check_pass(
            Cse,
            "
tile.func @f() {
  %c0 = tile.constant 0 : index
  %c4 = tile.constant 4 : index
  %c1 = tile.constant 1 : index
  %r = tile.for %i = %c0 to %c4 step %c1 iter_args(%x = %c0) -> (index) {
    %k = tile.constant 4 : index
    %y = tile.mul %i, %k : index
    %z = tile.mul %i, %c4 : index
    %w = tile.add %y, %z : index
    tile.yield %w
  }
  %y2 = tile.add %r, %c1 : index
  %k2 = tile.constant 5 : index
  tile.return
}",
            "
tile.func @f() {
  %c0 = tile.constant 0 : index
  %c4 = tile.constant 4 : index
  %c1 = tile.constant 1 : index
  %r = tile.for %i = %c0 to %c4 step %c1 iter_args(%x = %c0) -> (index) {
    %y = tile.mul %i, %c4 : index
    %w = tile.add %y, %y : index
    tile.yield %w
  }
  %y2 = tile.add %r, %c1 : index
  %k2 = tile.constant 5 : index
  tile.return
}",
        );
    }

    #[test]
    fn keeps_allocations_copies_and_mmas() {
        let text = "
tile.func @f(%in: tile<16x16xf16, global>) {
  %c0 = tile.constant 0 : index
  %s = tile.alloc_shared : tile<16x16xf16, shared>
  %t = tile.alloc_shared : tile<16x16xf16, shared>
  tile.copy_g2s %in[%c0, %c0], %s
  tile.copy_g2s %in[%c0, %c0], %s
  %a = tile.copy_s2r %s : tile<16x16xf16, reg>
  %b = tile.copy_s2r %s : tile<16x16xf16, reg>
  %z = tile.fill 0.0 : tile<16x16xf32, reg>
  %d = tile.mma %a, %b, %z : tile<16x16xf32, reg>
  %e = tile.mma %a, %b, %z : tile<16x16xf32, reg>
  tile.return
}";
        check_pass(Cse, text, text);
    }
}
