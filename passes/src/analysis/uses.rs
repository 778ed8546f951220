//! [`UseCounts`]: how many operands of placed ops (reachable from the function's entry) refer to each value.

use rustc_hash::FxHashMap as HashMap;

use tilec_ir::{Func, OpId, Value};

/// Use counts of a function's values. Recompute after changing the IR.
#[derive(Clone, Debug, Default)]
pub struct UseCounts {
    counts: HashMap<Value, usize>,
}

impl UseCounts {
    pub fn compute(func: &Func) -> UseCounts {
        let mut counts = HashMap::default();
        func.body.walk(func.entry, &mut |op| {
            for &v in &func.body.op(op).operands {
                *counts.entry(v).or_insert(0) += 1;
            }
        });
        UseCounts { counts }
    }

    /// How many operands use `v`.
    pub fn get(&self, v: Value) -> usize {
        self.counts.get(&v).copied().unwrap_or(0)
    }

    /// No result of `op` is used.
    pub fn results_unused(&self, func: &Func, op: OpId) -> bool {
        func.body.op(op).results.iter().all(|&r| self.get(r) == 0)
    }

    /// Forgets the uses by `op`'s operands (after deleting it), so counts stay exact without recomputing.
    pub fn remove_uses_of(&mut self, func: &Func, op: OpId) {
        let mut dec = |v: Value| {
            if let Some(n) = self.counts.get_mut(&v) {
                *n = n.saturating_sub(1);
            }
        };
        for &v in &func.body.op(op).operands {
            dec(v);
        }
        for &region in &func.body.op(op).regions {
            func.body.walk(region, &mut |inner| {
                for &v in &func.body.op(inner).operands {
                    dec(v);
                }
            });
        }
    }
}
