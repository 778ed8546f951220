//! Warp specialization of a wgmma k-loop (kernel attribute `warp_specialize = true`; CUTLASS's
//! `KernelTmaWarpSpecializedCooperative`, FlashAttention-3): one more warpgroup, the *producer*, loads the
//! stages; the kernel's own warps, the *consumers*, only wait, multiply and release. No CTA-wide barrier is left
//! in the k-loop: two rings of `S` mbarriers order everything.
//!
//! # The schedule (S stages, N consumer threads = the kernel's `num_warps` * 32, a multiple of 128)
//! The kernel grows to `N + 128` threads (`num_warps` + 4); threads `N ..` are the producer warpgroup. After
//! the prologue (barrier inits, the one `bar.sync` that publishes them) each thread takes one branch (a loop of
//! one trip or none):
//! ```text
//! producer (tid >= N): setmaxnreg.dec 40
//!   for k-step j (stage s = j % S, round r = j / S):
//!     [cp.async B: wait_group L-1; fence.proxy.async; arrive full[(j-L) % S]    (j >= L; L = S-1 in flight)]
//!     try_wait empty[s] at parity (r+1) % 2       (round 0 passes at once: the "phase before" of a fresh barrier)
//!     thread N: arrive.expect_tx full[s] + the TMA loads of j; every producer thread: its cp.async copies of j
//!     (the copy code written for N threads, run N/128 times with thread id tid - N + 128 i); commit
//!   [cp.async: wait_group 0; fence.proxy.async; arrive full[] of the last L k-steps]
//! consumers (tid < N): setmaxnreg.inc 232
//!   for k-step j: try_wait full[s] at parity r % 2; wgmma.fence; wgmmas (the accumulators carried in the wgmma
//!     layout, [`super::wgmma_in_flight`]); commit; wait_group 1 (group j-1 retires); arrive empty[(j-1) % S]
//!   wait_group 0; the regrouping and everything after the loop (the epilogue)
//! ```
//! full[s] expects one `arrive.expect_tx` (the TMA bytes) plus, with cp.async copies, one arrival of each
//! producer thread after its own `wait_group` and proxy fence (release; the consumer's wait acquires). empty[s]
//! expects the N consumer threads, each after the `wait_group 1` that retired the group reading stage s.
//! Deadlock-free: consumer k-step j needs the producer past k-step j + L, which needs the consumers done with
//! k-step j + L - S < j. Both loops are unrolled `S` times (static stages) with remainder loops, as the ring.
//!
//! Legal only where the ring's wgmma form is: TMA loads on the loop's mbarrier (sm_90a), a wgmma compute part
//! carried in the wgmma layout, copies that are TMA or cp.async (no synchronous copies), the loop in the kernel's
//! top-level block, no `bar.sync` after it (the producer does not reach it), `num_warps` a multiple of 4 and at
//! most 28. Otherwise the pass fails at the loop with the reason.

use rustc_hash::FxHashMap as HashMap;

use tilec_ir::ops::{BinaryArith, CmpPredicate};
use tilec_ir::typed;
use tilec_ir::{Attribute, BlockId, Func, OpId, OpKind, OpSpec, Span, Type, TypedOp, Value};

use super::wgmma_in_flight::{self, WgmmaCarry};
use super::{mbarrier_group, replace_loop_results, stage_allocs, Emitter, LoopPlan, MbarrierUse, Ring};
use crate::analysis::effects::is_pure;

/// Registers per thread the producer warpgroup keeps (`setmaxnreg.dec`).
pub const PRODUCER_REGISTERS: u32 = 40;
/// Registers per thread the consumer warpgroups grow to (`setmaxnreg.inc`).
pub const CONSUMER_REGISTERS: u32 = 232;

/// Why the loop `l` cannot be warp-specialized, if it cannot.
pub(super) fn legality(func: &Func, l: OpId, plan: &LoopPlan, num_warps: u32) -> Result<WgmmaCarry, String> {
    let body = &func.body;
    if plan.mbarrier.is_none() {
        return Err("its copies are not TMA loads on an mbarrier (TMA needs --target sm_90a and copy_g2s = \"tma\" or the default)".into());
    }
    if plan.pre.iter().any(|&o| matches!(body.op(o).kind, OpKind::Load | OpKind::Store)) {
        return Err("it has synchronous copies (global_alignment below 4 bytes)".into());
    }
    let Some(carry) = wgmma_in_flight::plan(func, plan) else {
        return Err("its compute part is not a wgmma chain (tile.mma must become wgmma: --target sm_90a, mma = \"wgmma\")".into());
    };
    if !num_warps.is_multiple_of(4) || num_warps > 28 {
        return Err(format!("num_warps = {num_warps}: the consumers must be whole warpgroups (a multiple of 4, at most 28)"));
    }
    if body.op(l).parent != Some(func.entry) {
        return Err("the loop is not in the kernel's top-level block".into());
    }
    let ops = &body.block(func.entry).ops;
    let at = ops.iter().position(|&o| o == l).unwrap_or(ops.len());
    let mut barrier = false;
    for &o in &ops[at + 1..] {
        barrier |= body.op(o).kind == OpKind::Barrier;
        for &r in &body.op(o).regions {
            body.walk(r, &mut |x| barrier |= body.op(x).kind == OpKind::Barrier);
        }
    }
    if barrier {
        return Err("after the loop, shared memory is used again (a copy through shared memory, such as an epilogue's bias load), and the lowering puts a block-wide barrier ('nvgpu.barrier') before it that the producer warpgroup would never reach; move that copy before the loop (its registers stay live through it)".into());
    }
    Ok(carry)
}

/// A loop of one trip where `cond`, none otherwise, whose body `build` emits.
fn when(func: &mut Func, at: &Emitter, cond: Value, build: impl FnOnce(&mut Func, &Emitter)) {
    let spec = when_spec(func, at, cond, build);
    at.emit(func, spec);
}

/// [`when`]'s loop, not yet placed (its trip count is, at `at`).
fn when_spec(func: &mut Func, at: &Emitter, cond: Value, build: impl FnOnce(&mut Func, &Emitter)) -> OpSpec {
    let (zero, one) = (at.constant(func, 0), at.constant(func, 1));
    let trips = at.select(func, cond, one, zero);
    let block = func.body.new_block();
    func.body.add_block_arg(block, Type::INDEX, None, Span::UNKNOWN);
    let e = Emitter::at_end(block, at.span);
    build(func, &e);
    e.emit(func, typed::Yield { values: Vec::new() }.into_spec());
    typed::For { lower: zero, upper: trips, step: one, inits: Vec::new(), pipeline_stages: None, hoist: None }.into_spec().region(block).span(at.span)
}

/// `(k - lb) / step`, the k-step number of `k`, and its ring round's parity bit `(j / S) % 2` as an `index`.
fn round_parity(func: &mut Func, at: &Emitter, ring: &Ring<'_>, k: Value) -> Value {
    let from = at.binary(func, BinaryArith::Sub, k, ring.lb);
    let j = at.binary(func, BinaryArith::Div, from, ring.step);
    let s = at.constant(func, ring.stages);
    let round = at.binary(func, BinaryArith::Div, j, s);
    let two = at.constant(func, 2);
    at.binary(func, BinaryArith::Rem, round, two)
}

/// The values the producer's copies need with the thread id renumbered: `v` itself where it does not depend on
/// `nvgpu.thread_id`, else a clone of its (pure) definition over the renumbered operands.
fn renumbered(func: &mut Func, at: &Emitter, v: Value, tid: Value, body: BlockId, map: &mut HashMap<Value, Value>) -> Value {
    if let Some(&m) = map.get(&v) {
        return m;
    }
    let Some(d) = func.body.defining_op(v) else { return v };
    match func.body.op(d).kind {
        OpKind::ThreadId => {
            map.insert(v, tid);
            return tid;
        }
        // Warps of 32: the renumbered thread's warp (its lane is the thread's own: N is a multiple of 128).
        OpKind::WarpId => {
            let c32 = at.constant(func, 32);
            let w = at.binary(func, BinaryArith::Div, tid, c32);
            map.insert(v, w);
            return w;
        }
        _ => {}
    }
    // Ops of the loop body are cloned by the copies themselves, over this map.
    if super::is_inside(func, d, body) || !is_pure(func.body.op(d).kind) || !func.body.op(d).regions.is_empty() {
        return v;
    }
    let operands = func.body.op(d).operands.clone();
    let mapped: Vec<Value> = operands.iter().map(|&o| renumbered(func, at, o, tid, body, map)).collect();
    if mapped == operands {
        return v;
    }
    at.clone_op(func, d, map);
    *map.get(&v).unwrap_or(&v)
}

/// Warp-specializes the loop `l` (module docs); `carry` from [`legality`].
// Invariant: `plan` is the analysis of `l`, whose mbarrier it checked (legality).
#[allow(clippy::expect_used)]
pub(super) fn transform(func: &mut Func, l: OpId, plan: &LoopPlan, carry: WgmmaCarry, stages: u32, num_warps: u32) {
    let s = i64::from(stages);
    let n_consumers = i64::from(num_warps) * 32;
    let lop = func.body.op(l).clone();
    let span = lop.span;
    let typed::For { lower: lb, upper: ub, step, .. } = plan.header;
    let iv = func.body.block(plan.body).args[0];
    let pro = Emitter::before(l, span);
    let m = plan.mbarrier.as_ref().expect("legality checked the mbarrier");
    let cp_async = plan.has_async_wait;
    // L: cp.async groups a producer thread keeps in flight before it arrives on their stage's full barrier.
    let lag = s - 1;

    // Barriers: full[s] expects the TMA thread's arrive.expect_tx and, with cp.async, every producer thread;
    // empty[s] every consumer thread. Both initialised with the loop's mbarrier, before its bar.sync.
    let init_at = Emitter::before(m.init, func.body.op(m.init).span);
    let full_count = init_at.constant(func, 1 + if cp_async { 128 } else { 0 });
    if let Some(init) = func.body.op(m.init).view::<typed::MBarrierInit>() {
        func.body.op_mut(m.init).set_from(typed::MBarrierInit { count: full_count, ..init });
    }
    let full_use = MbarrierUse { barriers: m.barriers, init: m.init, count: full_count, predicate: m.predicate };
    let full = mbarrier_group(func, &full_use, s);
    // The empty ring: a group of the same type (S barriers), created and initialised before the full ring's inits.
    let empty_ty = func.body.ty(m.barriers).clone();
    let empty = init_at.value(func, OpSpec::new(OpKind::MBarrierCreate).result(empty_ty));
    let empty_count = init_at.constant(func, n_consumers);
    let empty_ids: Vec<Value> = (0..s).map(|st| init_at.constant(func, st)).collect();
    for &id in &empty_ids {
        init_at.emit(func, typed::MBarrierInit { barriers: empty, mbar_id: id, count: empty_count, predicate: m.predicate }.into_spec());
    }

    let allocs = stage_allocs(func, plan, s);
    let zero = pro.constant(func, 0);
    let one = pro.constant(func, 1);
    let ring = Ring { plan, stages: s, iv, ub, step, zero, allocs, frag: None, lb, mbarriers: Some(full.clone()), carry: None, phase_bits: None };

    // Trip counts, as the ring: T k-steps, the unrolled loops run T - T % S of them.
    let span_v = pro.binary(func, BinaryArith::Sub, ub, lb);
    let span_v = pro.binary(func, BinaryArith::Max, span_v, zero);
    let step_m1 = pro.binary(func, BinaryArith::Sub, step, one);
    let span_r = pro.binary(func, BinaryArith::Add, span_v, step_m1);
    let trips = pro.binary(func, BinaryArith::Div, span_r, step);
    let s_v = pro.constant(func, s);
    let groups = pro.binary(func, BinaryArith::Div, trips, s_v);
    let main_trips = pro.binary(func, BinaryArith::Mul, groups, s_v);
    let main_len = pro.binary(func, BinaryArith::Mul, main_trips, step);
    let main_end = pro.binary(func, BinaryArith::Add, lb, main_len);
    let big_step = pro.binary(func, BinaryArith::Mul, step, s_v);

    let tid = pro.value(func, typed::ThreadId { dim: tilec_ir::ops::GridAxis::X }.into_spec().result(Type::INDEX));
    let n_c = pro.constant(func, n_consumers);
    let is_producer = pro.cmp(func, CmpPredicate::Ge, tid, n_c);
    let is_consumer = pro.cmp(func, CmpPredicate::Lt, tid, n_c);

    // The consumers' accumulators, flattened once (every thread computes them; only consumers use them).
    let args = func.body.block(plan.body).args.clone();
    let mut inits: Vec<Value> = plan.header.inits.clone();
    let mut carried_tys: Vec<Type> = lop.results.iter().map(|&r| func.body.ty(r).clone()).collect();
    for acc in &carry.accs {
        let mut map = HashMap::from_iter([(args[acc.index + 1], inits[acc.index])]);
        for &o in &acc.flatten {
            pro.clone_op(func, o, &mut map);
        }
        inits[acc.index] = *map.get(&acc.flat).unwrap_or(&inits[acc.index]);
        carried_tys[acc.index] = WgmmaCarry::flat_type(func, acc);
    }

    // ---- producer ---- (placed after the consumers' branch: ptxas then sees the consumers' region entered
    // from the kernel's entry only, with the entry's register count)
    let producer = when_spec(func, &pro, is_producer, |func, at| {
        at.emit(func, typed::SetMaxNRegDec { count: PRODUCER_REGISTERS }.into_spec());
        let base = at.binary(func, BinaryArith::Sub, tid, n_c);
        let replicas = (n_consumers / 128).max(1);
        let producer_step = |func: &mut Func, at: &Emitter, k: Value, stage: usize| {
            if cp_async {
                at.wait(func, lag - 1);
                at.emit(func, OpSpec::new(OpKind::FenceProxyAsync));
                let back = at.constant(func, lag);
                let back = at.binary(func, BinaryArith::Mul, back, step);
                let earlier = at.binary(func, BinaryArith::Sub, k, back);
                let live = at.cmp(func, CmpPredicate::Ge, earlier, lb);
                let st = (stage as i64 - lag).rem_euclid(s) as usize;
                let id = full.1[st];
                when(func, at, live, |func, e| {
                    e.emit(func, typed::MBarrierArrive { barriers: full.0, mbar_id: id }.into_spec());
                });
            }
            let r = round_parity(func, at, &ring, k);
            let zero = at.constant(func, 0);
            let parity = at.cmp(func, CmpPredicate::Eq, r, zero);
            let ticks = at.constant(func, super::WAIT_TICKS);
            at.emit(func, typed::MBarrierTryWaitParity { barriers: empty, mbar_id: empty_ids[stage], phase_parity: parity, ticks }.into_spec());
            for i in 0..replicas {
                let c128 = at.constant(func, 128);
                let t = at.add_steps(func, base, i, c128);
                let mut map = HashMap::default();
                for &o in &plan.pre {
                    let op = func.body.op(o);
                    if matches!(op.kind, OpKind::ThreadId | OpKind::WarpId) {
                        if let Some(r) = op.result() {
                            renumbered_inside(func, at, op.kind, r, t, &mut map);
                        }
                    }
                    for v in func.body.op(o).operands.clone() {
                        renumbered(func, at, v, t, plan.body, &mut map);
                    }
                }
                ring.copies_part(func, at, k, stage, &mut map, i == 0, i == replicas - 1);
            }
        };
        // The unrolled loop and the remainder, k-steps of one stage each.
        let block = func.body.new_block();
        let k0 = func.body.add_block_arg(block, Type::INDEX, None, Span::UNKNOWN);
        let inner = Emitter::at_end(block, span);
        for j in 0..s {
            let k = inner.add_steps(func, k0, j, step);
            producer_step(func, &inner, k, j as usize);
        }
        inner.emit(func, typed::Yield { values: Vec::new() }.into_spec());
        at.emit(func, typed::For { lower: lb, upper: main_end, step: big_step, inits: Vec::new(), pipeline_stages: None, hoist: None }.into_spec().region(block).span(span));
        for j in 0..s - 1 {
            let k = at.add_steps(func, main_end, j, step);
            let live = at.cmp(func, CmpPredicate::Lt, k, ub);
            when(func, at, live, |func, e| producer_step(func, e, k, j as usize));
        }
        if cp_async {
            // The last L k-steps' copies: landed, fenced, announced on their stages' full barriers.
            at.wait(func, 0);
            at.emit(func, OpSpec::new(OpKind::FenceProxyAsync));
            for back in 1..=lag {
                let b = at.constant(func, back);
                let j = at.binary(func, BinaryArith::Sub, trips, b);
                let live = at.cmp(func, CmpPredicate::Ge, j, zero);
                let st = at.binary(func, BinaryArith::Rem, j, s_v);
                when(func, at, live, |func, e| {
                    e.emit(func, typed::MBarrierArrive { barriers: full.0, mbar_id: st }.into_spec());
                });
            }
        }
    });

    // ---- consumers ----
    let consumer_block = func.body.new_block();
    func.body.add_block_arg(consumer_block, Type::INDEX, None, Span::UNKNOWN);
    let cons = Emitter::at_end(consumer_block, span);
    cons.emit(func, typed::SetMaxNRegInc { count: CONSUMER_REGISTERS }.into_spec());
    let consumer_step = |func: &mut Func, at: &Emitter, k: Value, stage: usize, carried: &[Value]| -> Vec<Value> {
        let mut map: HashMap<Value, Value> = HashMap::default();
        for (&a, &c) in args[1..].iter().zip(carried) {
            map.insert(a, c);
        }
        for acc in &carry.accs {
            map.insert(acc.flat, carried[acc.index]);
        }
        let r = round_parity(func, at, &ring, k);
        let zero = at.constant(func, 0);
        let parity = at.cmp(func, CmpPredicate::Ne, r, zero);
        let ticks = at.constant(func, super::WAIT_TICKS);
        let (bars, ids) = &full;
        at.emit(func, typed::MBarrierTryWaitParity { barriers: *bars, mbar_id: ids[stage], phase_parity: parity, ticks }.into_spec());
        map.insert(iv, k);
        for &o in &plan.address {
            at.clone_op(func, o, &mut map);
        }
        for (&tile, allocs) in &ring.allocs {
            map.insert(tile, allocs[stage]);
        }
        for &o in &plan.post {
            if carry.dropped.contains(&o) {
                continue;
            }
            if o == carry.wait {
                at.emit(func, typed::WgmmaWaitGroup { num_groups: 1 }.into_spec());
                continue;
            }
            at.clone_op(func, o, &mut map);
        }
        // The group of the k-step before has retired: its stage is free for the producer.
        let live = at.cmp(func, CmpPredicate::Gt, k, lb);
        let prev = empty_ids[(stage + ring.stages as usize - 1) % ring.stages as usize];
        when(func, at, live, |func, e| {
            e.emit(func, typed::MBarrierArrive { barriers: empty, mbar_id: prev }.into_spec());
        });
        let mut out: Vec<Value> = plan.yielded.iter().map(|v| *map.get(v).unwrap_or(v)).collect();
        for acc in &carry.accs {
            out[acc.index] = *map.get(&acc.d).unwrap_or(&acc.d);
        }
        out
    };
    let main_block = func.body.new_block();
    let k0 = func.body.add_block_arg(main_block, Type::INDEX, None, Span::UNKNOWN);
    let block_args: Vec<Value> = carried_tys.iter().map(|t| func.body.add_block_arg(main_block, t.clone(), None, Span::UNKNOWN)).collect();
    let inner = Emitter::at_end(main_block, span);
    let mut carried = block_args;
    for j in 0..s {
        let k = inner.add_steps(func, k0, j, step);
        carried = consumer_step(func, &inner, k, j as usize, &carried);
    }
    inner.emit(func, typed::Yield { values: carried }.into_spec());
    let mut spec = typed::For { lower: lb, upper: main_end, step: big_step, inits, pipeline_stages: None, hoist: None }.into_spec().region(main_block).span(span);
    spec.result_types = carried_tys.clone();
    let main_loop = cons.emit(func, spec);
    let mut results = func.body.op(main_loop).results.clone();
    for j in 0..s - 1 {
        let k = cons.add_steps(func, main_end, j, step);
        let live = cons.cmp(func, CmpPredicate::Lt, k, ub);
        let trips = cons.select(func, live, one, zero);
        let block = func.body.new_block();
        func.body.add_block_arg(block, Type::INDEX, None, Span::UNKNOWN);
        let bargs: Vec<Value> = carried_tys.iter().map(|t| func.body.add_block_arg(block, t.clone(), None, Span::UNKNOWN)).collect();
        let e = Emitter::at_end(block, span);
        let next = consumer_step(func, &e, k, j as usize, &bargs);
        e.emit(func, typed::Yield { values: next }.into_spec());
        let mut spec = typed::For { lower: zero, upper: trips, step: one, inits: results, pipeline_stages: None, hoist: None }.into_spec().region(block).span(span);
        spec.result_types = carried_tys.clone();
        let id = cons.emit(func, spec);
        results = func.body.op(id).results.clone();
    }
    carry.retire_after_loop(func, &cons, plan, &mut results);
    replace_loop_results(func, &lop.results, &results);
    // The epilogue (everything after the loop but the return) runs in the consumers' branch.
    let entry = func.entry;
    let ops = func.body.block(entry).ops.clone();
    let at = ops.iter().position(|&o| o == l).unwrap_or(ops.len());
    let tail: Vec<OpId> = ops[at + 1..ops.len().saturating_sub(1)].to_vec();
    func.body.block_mut(entry).ops.retain(|o| !tail.contains(o));
    for &o in &tail {
        func.body.append(consumer_block, o);
    }
    cons.emit(func, typed::Yield { values: Vec::new() }.into_spec());
    let ctrips = pro.select(func, is_consumer, one, zero);
    let spec = typed::For { lower: zero, upper: ctrips, step: one, inits: Vec::new(), pipeline_stages: None, hoist: None }.into_spec().region(consumer_block).span(span);
    pro.emit(func, spec);
    pro.emit(func, producer);

    // The old loop goes; the kernel has one more warpgroup.
    let old_ops = std::mem::take(&mut func.body.block_mut(plan.body).ops);
    for o in old_ops {
        func.body.op_mut(o).parent = None;
    }
    func.body.erase(l);
    func.attrs.insert(crate::layout_assignment::NUM_WARPS_ATTR.into(), Attribute::Int(i64::from(num_warps) + 4));
}

/// A `nvgpu.thread_id` / `nvgpu.warp_id` of the loop body itself, renumbered like [`renumbered`]'s.
fn renumbered_inside(func: &mut Func, at: &Emitter, kind: OpKind, r: Value, tid: Value, map: &mut HashMap<Value, Value>) {
    let v = if kind == OpKind::WarpId {
        let c32 = at.constant(func, 32);
        at.binary(func, BinaryArith::Div, tid, c32)
    } else {
        tid
    };
    map.insert(r, v);
}
