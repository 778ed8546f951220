//! `tile.for` → `scf.for` with `iter_args` (steps are positive, as the interpreter requires; `scf.for` runs
//! while `iv < ub`, the same test as the LLVM backend's loop).

use tilec_ir::body::OpId;

use super::func::FuncEmitter;
use super::{types, Result};

/// Lowers the `tile.for` op `id` and its body.
pub(super) fn lower_for(t: &mut FuncEmitter<'_>, id: OpId) -> Result<()> {
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
    let (lb, ub, st) = (t.name(op, lower)?, t.name(op, upper)?, t.name(op, step)?);
    let init_values = inits.iter().map(|&v| t.value(op, v)).collect::<Result<Vec<_>>>()?;
    let mut carried_types = Vec::with_capacity(inits.len());
    for &arg in &args[1..] {
        let ty = types::value_type(func.body.ty(arg))
            .ok_or_else(|| t.unsupported(op, format!("it cannot carry '{}'", func.body.ty(arg))))?;
        carried_types.push(ty);
    }
    let result = t.fresh();
    let iv = t.fresh();
    let carried: Vec<String> = args[1..].iter().map(|_| t.fresh()).collect();
    let head = if inits.is_empty() {
        format!("scf.for {iv} = {lb} to {ub} step {st} {{")
    } else {
        let binds: Vec<String> = carried.iter().zip(&init_values).map(|(c, (v, _))| format!("{c} = {v}")).collect();
        let arity = if inits.len() > 1 { format!(":{}", inits.len()) } else { String::new() };
        format!(
            "{result}{arity} = scf.for {iv} = {lb} to {ub} step {st} iter_args({}) -> ({}) {{",
            binds.join(", "),
            carried_types.join(", ")
        )
    };
    t.line(&head);
    t.push_indent();
    t.set(args[0], iv, "index".to_string());
    for ((&arg, c), ty) in args[1..].iter().zip(&carried).zip(&carried_types) {
        t.set(arg, c.clone(), ty.clone());
    }
    // Async-copy tokens made in the body stay in the body.
    let (pending, group) = (std::mem::take(&mut t.pending_copies), t.group_token.clone());
    let yielded = t.translate_block(region)?.unwrap_or_default();
    if yielded.len() != carried.len() {
        return Err(t.unsupported(op, format!("its body yields {} values for {} loop-carried ones", yielded.len(), carried.len())));
    }
    let yielded = yielded.iter().map(|&v| t.value(op, v)).collect::<Result<Vec<_>>>()?;
    if yielded.is_empty() {
        t.line("scf.yield");
    } else {
        let names: Vec<&str> = yielded.iter().map(|(n, _)| n.as_str()).collect();
        let tys: Vec<&str> = yielded.iter().map(|(_, ty)| ty.as_str()).collect();
        t.line(&format!("scf.yield {} : {}", names.join(", "), tys.join(", ")));
    }
    t.pop_indent();
    t.line("}");
    t.pending_copies = pending;
    t.group_token = group;
    for (i, (&r, ty)) in op.results.iter().zip(&carried_types).enumerate() {
        let name = if inits.len() > 1 { format!("{result}#{i}") } else { result.clone() };
        t.set(r, name, ty.clone());
    }
    Ok(())
}
