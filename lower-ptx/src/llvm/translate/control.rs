//! `tile.for` → a loop with phi nodes.
//!
//! ```text
//!   pre:    br header
//!   header: %iv = phi [lb, pre], [%next, latch]; %x = phi [init, pre], [yielded, latch]; …
//!           br (icmp slt %iv, ub), body, exit
//!   body:   … (nested loops add blocks; the block where `tile.yield` lands is the latch)
//!   latch:  %next = add nsw %iv, step; br header
//!   exit:   the loop's results are the header's phis
//! ```
//! Steps are positive (the interpreter and simulator reject others), so `iv < ub` is the whole test.

use inkwell::values::{BasicValue, PhiValue};
use inkwell::IntPredicate;

use tilec_ir::body::OpId;

use super::func::FuncTranslator;
use super::{types, Result};

/// Lowers the `tile.for` op `id` and its body.
pub(super) fn lower_for(t: &mut FuncTranslator<'_, '_>, id: OpId) -> Result<()> {
    let func = t.func;
    let op = func.body.op(id);
    let (Some(lower), Some(upper), Some(step), Some(&region)) =
        (op.operand("lower"), op.operand("upper"), op.operand("step"), op.regions.first())
    else {
        return Err(t.unsupported(op, "it needs bounds, a step and a body"));
    };
    let args = func.body.block(region).args.clone();
    let inits = op.group("inits").to_vec();
    if args.len() != inits.len() + 1 || op.results.len() != inits.len() {
        return Err(t.unsupported(op, "it needs one body argument per iter_arg plus the induction variable"));
    }
    let (lb, ub, st) = (t.int(op, lower)?, t.int(op, upper)?, t.int(op, step)?);
    let init_values = inits.iter().map(|&v| t.value(op, v)).collect::<Result<Vec<_>>>()?;

    let function = t.function.ok_or_else(|| super::internal("inside a function"))?;
    let pre = t.builder.get_insert_block().ok_or_else(|| super::internal("positioned"))?;
    let header = t.cx.append_basic_block(function, "loop");
    let body_block = t.cx.append_basic_block(function, "body");
    let exit = t.cx.append_basic_block(function, "done");
    t.builder.build_unconditional_branch(header)?;

    t.builder.position_at_end(header);
    let iv = t.builder.build_phi(t.cx.i64_type(), "iv")?;
    iv.add_incoming(&[(&lb, pre)]);
    let mut phis: Vec<PhiValue> = Vec::with_capacity(inits.len());
    for (&arg, init) in args[1..].iter().zip(&init_values) {
        let ty = types::value_type(t.cx, func.body.ty(arg))
            .ok_or_else(|| t.unsupported(op, format!("it cannot carry '{}'", func.body.ty(arg))))?;
        let phi = t.builder.build_phi(ty, "")?;
        phi.add_incoming(&[(init as &dyn BasicValue, pre)]);
        phis.push(phi);
    }
    let iv_value = iv.as_basic_value().into_int_value();
    let go_on = t.builder.build_int_compare(IntPredicate::SLT, iv_value, ub, "")?;
    t.builder.build_conditional_branch(go_on, body_block, exit)?;

    t.builder.position_at_end(body_block);
    t.set(args[0], iv_value.into());
    for (&arg, phi) in args[1..].iter().zip(&phis) {
        t.set(arg, phi.as_basic_value());
    }
    let yielded = t.translate_block(region)?.unwrap_or_default();
    if yielded.len() != phis.len() {
        return Err(t.unsupported(op, format!("its body yields {} values for {} loop-carried ones", yielded.len(), phis.len())));
    }
    let latch = t.builder.get_insert_block().ok_or_else(|| super::internal("positioned"))?;
    let next = t.builder.build_int_nsw_add(iv_value, st, "iv.next")?;
    let yielded = yielded.iter().map(|&v| t.value(op, v)).collect::<Result<Vec<_>>>()?;
    iv.add_incoming(&[(&next, latch)]);
    for (phi, v) in phis.iter().zip(&yielded) {
        phi.add_incoming(&[(v as &dyn BasicValue, latch)]);
    }
    t.builder.build_unconditional_branch(header)?;

    t.builder.position_at_end(exit);
    for (&result, phi) in op.results.iter().zip(&phis) {
        t.set(result, phi.as_basic_value());
    }
    Ok(())
}
