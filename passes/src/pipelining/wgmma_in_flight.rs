//! The wgmma accumulators of a pipelined k-loop, carried in the instruction's own register layout so that one
//! wgmma group can stay in flight across iterations (CUTLASS's `warpgroup_wait<1>` mainloop).
//!
//! `lower-tile-to-nvgpu` lowers each wgmma `tile.mma` self-contained: the carried accumulator fragments are
//! flattened into wgmma's `vector<N/2 x acc>` (`nvgpu.extract`/`nvgpu.insert` from a `tile.fill`), the
//! `nvgpu.warpgroup.mma` chain runs between `nvgpu.wgmma.fence` and `commit_group`, `wait_group 0` retires it,
//! and the D vectors are regrouped into fragments for the yield. Reading D (the regrouping) needs the group
//! retired, so nothing can stay in flight while the body has that shape. [`plan`] recognises it: the
//! regrouping after the wait is the exact inverse of the flattening before the fence (checked element by
//! element), so the pipelined loop can carry the D vectors themselves: the flattening runs once on the loop's
//! initial values, the body chains the carried (possibly still pending) D into the next iteration's first
//! wgmma (the ISA orders same-accumulator wgmmas of one warpgroup), its wait becomes `wait_group 1`, and
//! `wait_group 0` plus the regrouping run once after the loop. Anything else in the body that would read a
//! pending D, a wgmma with A in registers (the RS form), or a body of another shape, leaves the loop on the
//! ordinary ring (wait_group 0 each iteration).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use tilec_ir::typed::{self, AnyOp};
use tilec_ir::{Func, OpId, OpKind, Type, TypedOp, Value};

use super::{Emitter, LoopPlan};

/// How a loop body's wgmma accumulators are carried in the wgmma layout.
pub(super) struct WgmmaCarry {
    /// The body's `nvgpu.wgmma.wait_group {numGroups = 0}`: `wait_group 1` in the pipelined body.
    pub wait: OpId,
    /// One per accumulator the loop carries.
    pub accs: Vec<CarriedAcc>,
    /// The flattening and regrouping ops, which the pipelined body drops.
    pub dropped: HashSet<OpId>,
}

/// One accumulator carried in the wgmma layout.
pub(super) struct CarriedAcc {
    /// Its position among the loop's carried values.
    pub index: usize,
    /// The flattening of the carried fragments (`tile.fill` and the extract/insert pairs), in body order.
    pub flatten: Vec<OpId>,
    /// The flattened vector (the first wgmma's C).
    pub flat: Value,
    /// The last wgmma's D, which the body yields regrouped.
    pub d: Value,
    /// The regrouping of `d` into the carried fragments, in body order.
    pub regroup: Vec<OpId>,
}

impl WgmmaCarry {
    /// After the pipelined loop(s): `wait_group 0` retires the last wgmma group, then each carried accumulator
    /// (`results[acc.index]`, wgmma's flat vector) is regrouped into the loop's fragments, as the body yielded them.
    pub fn retire_after_loop(&self, func: &mut Func, at: &Emitter, plan: &LoopPlan, results: &mut [Value]) {
        at.emit(func, typed::WgmmaWaitGroup { num_groups: 0 }.into_spec());
        for acc in &self.accs {
            let y = plan.yielded[acc.index];
            let mut map = HashMap::from_iter([(acc.d, results[acc.index])]);
            for &o in &acc.regroup {
                at.clone_op(func, o, &mut map);
            }
            results[acc.index] = *map.get(&y).unwrap_or(&results[acc.index]);
        }
    }

    /// The type the pipelined loop carries for accumulator `acc` (wgmma's flat vector).
    pub fn flat_type(func: &Func, acc: &CarriedAcc) -> Type {
        func.body.ty(acc.flat).clone()
    }
}

/// An insert chain `insert(extract(src, p_j), ... insert(extract(src, p_0), fill))`: the source of its
/// extracts, `(extract position, insert position)` per element, and its ops.
struct Chain {
    src: Value,
    moves: Vec<(Vec<u32>, Vec<u32>)>,
    ops: Vec<OpId>,
}

/// The insert chain ending in `v`, whose ops lie in `allowed`.
fn chain(func: &Func, v: Value, allowed: &HashSet<OpId>) -> Option<Chain> {
    let body = &func.body;
    let mut cur = v;
    let mut src: Option<Value> = None;
    let mut moves = Vec::new();
    let mut ops = Vec::new();
    loop {
        let d = body.defining_op(cur).filter(|d| allowed.contains(d))?;
        match AnyOp::from_op(body.op(d)) {
            Some(AnyOp::Insert(ins)) => {
                let e = body.defining_op(ins.value).filter(|e| allowed.contains(e))?;
                let ext = body.op(e).view::<typed::Extract>()?;
                if *src.get_or_insert(ext.vector) != ext.vector {
                    return None;
                }
                moves.push((ext.position, ins.position));
                ops.extend([d, e]);
                cur = ins.vector;
            }
            Some(AnyOp::Fill(_)) => {
                ops.push(d);
                break;
            }
            _ => return None,
        }
    }
    Some(Chain { src: src?, moves, ops })
}

/// The number of elements of a vector type.
fn elements(ty: &Type) -> Option<u64> {
    match ty {
        Type::Vector(v) => Some(v.shape.iter().product()),
        _ => None,
    }
}

/// How the body of `plan` carries its wgmma accumulators in the wgmma layout, when it has the lowering's shape
/// (module docs); `None` leaves the loop on the ordinary ring.
pub(super) fn plan(func: &Func, plan: &LoopPlan) -> Option<WgmmaCarry> {
    let body = &func.body;
    let post = &plan.post;
    let kind = |o: OpId| body.op(o).kind;
    let waits: Vec<usize> = (0..post.len()).filter(|&i| kind(post[i]) == OpKind::WgmmaWaitGroup).collect();
    let commits: Vec<usize> = (0..post.len()).filter(|&i| kind(post[i]) == OpKind::WgmmaCommitGroup).collect();
    let ([w], [c]) = (&waits[..], &commits[..]) else { return None };
    let (w, c) = (*w, *c);
    if body.op(post[w]).view::<typed::WgmmaWaitGroup>()?.num_groups != 0 || c > w {
        return None;
    }
    let mmas: Vec<OpId> = post.iter().copied().filter(|&o| kind(o) == OpKind::WarpgroupMma).collect();
    if mmas.is_empty() || post[c..].iter().any(|&o| kind(o) == OpKind::WarpgroupMma) {
        return None;
    }
    // Only A from shared memory (a descriptor): with A in registers (the RS form) a group in flight would also
    // read registers the next k-step rewrites; that form keeps wait_group 0.
    let a_from_shared = |o: OpId| {
        body.op(o)
            .view::<typed::WarpgroupMma>()
            .and_then(|m| body.defining_op(m.descriptor_a))
            .is_some_and(|d| kind(d) == OpKind::WarpgroupGenerateDescriptor)
    };
    if !mmas.iter().all(|&o| a_from_shared(o)) {
        return None;
    }
    // Every use of every value, in the whole function.
    let mut users: HashMap<Value, Vec<OpId>> = HashMap::default();
    body.walk(func.entry, &mut |o| {
        for &v in &body.op(o).operands {
            users.entry(v).or_default().push(o);
        }
    });
    let uses = |v: Value| users.get(&v).map_or(&[][..], |u| &u[..]);
    let used_only_by = |v: Value, allowed: &HashSet<OpId>| uses(v).iter().all(|u| allowed.contains(u));
    let before_fence: HashSet<OpId> = post.iter().take_while(|&&o| kind(o) != OpKind::WgmmaFence).copied().collect();
    let after_wait: HashSet<OpId> = post[w + 1..].iter().copied().collect();
    let args = body.block(plan.body).args.clone();
    let mut accs = Vec::new();
    let mut regrouped: HashSet<OpId> = HashSet::default();
    for (index, &y) in plan.yielded.iter().enumerate() {
        let Some(out) = body.defining_op(y).filter(|d| after_wait.contains(d)).and_then(|_| chain(func, y, &after_wait)) else {
            // A yielded wgmma D would be read (copied) by the loop while pending: only through this shape.
            if body.defining_op(y).is_some_and(|d| kind(d) == OpKind::WarpgroupMma) {
                return None;
            }
            continue;
        };
        let d = out.src;
        // The wgmma chain ending in `d`, back to its first C.
        let mut first_c = d;
        let mut chain_mmas: HashSet<OpId> = HashSet::default();
        while let Some(m) = body.defining_op(first_c).filter(|m| mmas.contains(m)) {
            chain_mmas.insert(m);
            first_c = body.op(m).view::<typed::WarpgroupMma>()?.matrix_c;
        }
        let flat = first_c;
        let inp = chain(func, flat, &before_fence)?;
        let arg = *args.get(index + 1)?;
        if inp.src != arg {
            return None;
        }
        // The two chains are inverse permutations covering every element once.
        let n_flat = elements(body.ty(flat))?;
        let n_frag = elements(body.ty(arg))?;
        let n = inp.moves.len() as u64;
        if n != n_flat || n != n_frag || out.moves.len() as u64 != n {
            return None;
        }
        let mut flat_from: HashMap<Vec<u32>, Vec<u32>> = HashMap::default();
        for (frag_pos, flat_pos) in &inp.moves {
            if flat_from.insert(flat_pos.clone(), frag_pos.clone()).is_some() {
                return None;
            }
        }
        let mut seen: HashSet<Vec<u32>> = HashSet::default();
        for (flat_pos, frag_pos) in &out.moves {
            if !seen.insert(frag_pos.clone()) || flat_from.get(flat_pos) != Some(frag_pos) {
                return None;
            }
        }
        // Nothing else reads the carried fragments, the flattening, the chain's D's or the regrouping.
        let inp_ops: HashSet<OpId> = inp.ops.iter().copied().collect();
        let out_ops: HashSet<OpId> = out.ops.iter().copied().collect();
        let mut chain_users = chain_mmas.clone();
        chain_users.extend(inp_ops.iter().copied());
        if !used_only_by(arg, &inp_ops) || !inp.ops.iter().all(|&o| body.op(o).results.iter().all(|&r| used_only_by(r, &chain_users))) {
            return None;
        }
        for &m in &chain_mmas {
            let r = body.op(m).results[0];
            let ok = if r == d { used_only_by(r, &out_ops) } else { used_only_by(r, &chain_mmas) };
            if !ok {
                return None;
            }
        }
        let yield_op = *body.block(plan.body).ops.last()?;
        let mut out_users = out_ops.clone();
        out_users.insert(yield_op);
        if !out.ops.iter().all(|&o| body.op(o).results.iter().all(|&r| used_only_by(r, &out_users))) || uses(y) != [yield_op] {
            return None;
        }
        regrouped.extend(out.ops.iter().copied());
        let order = |ops: Vec<OpId>| {
            let set: HashSet<OpId> = ops.into_iter().collect();
            post.iter().copied().filter(|o| set.contains(o)).collect::<Vec<_>>()
        };
        accs.push(CarriedAcc { index, flatten: order(inp.ops), flat, d, regroup: order(out.ops) });
    }
    // After the wait, only the regrouping (what else would read a D still pending).
    if accs.is_empty() || !after_wait.iter().all(|o| regrouped.contains(o)) {
        return None;
    }
    let dropped = accs.iter().flat_map(|a| a.flatten.iter().chain(&a.regroup).copied()).collect();
    Some(WgmmaCarry { wait: post[w], accs, dropped })
}
