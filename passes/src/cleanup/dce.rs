//! `dce`: dead-code elimination, to a fixed point.
//!
//! Removes an op when none of its results is used and removing it changes nothing observable:
//! - pure ops (see [`crate::analysis::effects`]); `div`/`rem` only when the divisor is a known non-zero
//!   constant, so a division by zero still fails at run time;
//! - a `tile.for` whose results are all unused, whose step is a positive constant (a loop with a zero or
//!   negative step is a run-time error), and whose body holds only such removable ops and its `tile.yield`.
//!
//! Ops with effects (copies, stores, barriers, async copies, allocations, MMAs) stay even when unused.
//! Loop-carried values that only feed themselves inside a live loop are not removed (that needs a
//! liveness analysis over the loop; left for later).

use tilec_ir::{typed, Body, Diagnostic, Func, Module, OpId, OpKind};

use crate::analysis::effects::is_trivially_dead_if_unused;
use crate::analysis::uses::UseCounts;
use crate::context::PassContext;
use crate::pass::Pass;

/// The `dce` pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct Dce;

impl Pass for Dce {
    fn name(&self) -> &'static str {
        "dce"
    }

    fn description(&self) -> &'static str {
        "Remove pure ops and side-effect-free loops whose results are unused"
    }

    fn run(&self, module: &mut Module, _cx: &mut PassContext) -> Result<(), Diagnostic> {
        for func in &mut module.funcs {
            dce_func(func);
        }
        Ok(())
    }
}

/// Whether a loop's step is a positive constant (a zero or negative step is a run-time error).
fn step_positive(body: &Body, id: OpId) -> bool {
    body.op(id).view::<typed::For>().and_then(|lp| body.constant_int(lp.step)).is_some_and(|s| s > 0)
}

/// Whether a loop may be deleted when its results are unused.
///
/// `walk` already visits the ops of nested loops, so a nested loop only needs its own step checked here:
/// checking it with a recursive `removable_loop` walked every level again, which took time exponential
/// in the nesting depth (found by the fuzzer: 52 nested loops never finished).
fn removable_loop(body: &Body, id: OpId) -> bool {
    if !step_positive(body, id) {
        return false;
    }
    let mut ok = true;
    for &region in &body.op(id).regions {
        body.walk(region, &mut |inner| {
            let kind = body.op(inner).kind;
            ok &= kind == OpKind::Yield || (kind == OpKind::For && step_positive(body, inner))
                || is_trivially_dead_if_unused(body, inner);
        });
    }
    ok
}

fn removable(body: &Body, id: OpId) -> bool {
    if body.op(id).kind == OpKind::For {
        removable_loop(body, id)
    } else {
        !body.op(id).results.is_empty() && is_trivially_dead_if_unused(body, id)
    }
}

/// Removes dead ops from one function; returns how many were removed (nested ops of a removed loop not
/// counted).
pub fn dce_func(func: &mut Func) -> usize {
    let mut removed = 0;
    loop {
        let mut uses = UseCounts::compute(func);
        // Reverse program order: users go before the values they use, so chains die in one sweep.
        let mut ops = Vec::new();
        func.body.walk(func.entry, &mut |op| ops.push(op));
        let mut changed = false;
        for &id in ops.iter().rev() {
            if func.body.op(id).parent.is_none() || !uses.results_unused(func, id) || !removable(&func.body, id) {
                continue;
            }
            uses.remove_uses_of(func, id);
            func.body.erase(id);
            removed += 1;
            changed = true;
        }
        if !changed {
            return removed;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::check_pass;

    use super::Dce;

    #[test]
    fn removes_unused_chains() {
        check_pass(
            Dce,
            "
tile.func @f(%out: tile<16x16xf32, global>) {
  %c0 = tile.constant 0 : index
  %c1 = tile.constant 1 : index
  %a = tile.add %c1, %c1 : index
  %b = tile.mul %a, %a : index
  %z = tile.fill 0.0 : tile<16x16xf32, reg>
  tile.copy_r2g %z, %out[%c0, %c0]
  tile.return
}",
            "
tile.func @f(%out: tile<16x16xf32, global>) {
  %c0 = tile.constant 0 : index
  %z = tile.fill 0.0 : tile<16x16xf32, reg>
  tile.copy_r2g %z, %out[%c0, %c0]
  tile.return
}",
        );
    }

    #[test]
    fn keeps_effects_and_possible_division_by_zero() {
        let text = "
tile.func @f(%in: tile<16x16xf16, global>, %n: i32) {
  %c0 = tile.constant 0 : index
  %s = tile.alloc_shared : tile<16x16xf16, shared>
  tile.copy_g2s %in[%c0, %c0], %s
  %r = tile.copy_s2r %s : tile<16x16xf16, reg>
  %q = tile.div %n, %n : i32
  tile.return
}";
        check_pass(Dce, text, text);
    }

    #[test]
    fn removes_pure_loops_and_safe_divisions() {
        check_pass(
            Dce,
            "
tile.func @f(%n: i32, %K: index) {
  %c0 = tile.constant 0 : index
  %c4 = tile.constant 4 : index
  %two = tile.constant 2 : i32
  %q = tile.div %n, %two : i32
  %r = tile.for %i = %c0 to %K step %c4 iter_args(%x = %c0) -> (index) {
    %y = tile.add %x, %i : index
    tile.yield %y
  }
  %s = tile.for %i = %c0 to %K step %K iter_args(%x = %c0) -> (index) {
    tile.yield %x
  }
  tile.return
}",
            "
tile.func @f(%n: i32, %K: index) {
  %c0 = tile.constant 0 : index
  %s = tile.for %i = %c0 to %K step %K iter_args(%x = %c0) -> (index) {
    tile.yield %x
  }
  tile.return
}",
        );
    }
}
