//! `tilec sim FILE`: runs a kernel on the CPU warp simulator.
//!
//! A kernel written in the `nvgpu` dialect (per-thread code, like the seed experiments in
//! `examples/seeds/`) runs as it is, and the per-lane values of every op marked `{probe = "..."}` are
//! printed in the form the seed documents use. A kernel with tile-level ops is first lowered by the
//! pipeline; the simulator's results are then compared with the reference interpreter's on the original.

use tilec_ir::interp::ArgValue;
use tilec_ir::sim::{self, ProbeSpec, SimArg, SimOptions};
use tilec_ir::{Func, OpKind};

use crate::cli::SimArgs;
use crate::commands::interp::{arg_names, located_or_usage, prepare, select_func};
use crate::error::DriverError;
use crate::input::{diagnostics, parse_and_verify, read_source};

pub fn run(args: &SimArgs) -> Result<String, DriverError> {
    let source = read_source(&args.input)?;
    let module = parse_and_verify(&source)?;
    let func = select_func(&module, args.inputs.func.as_deref())?;
    if let Some(op) = first_tile_level_op(func) {
        let op = func.body.op(op);
        return Err(diagnostics(
            &source,
            vec![tilec_ir::Diagnostic::error(op.span, format!("'{}' is a tile-level op: `tilec sim` runs nvgpu-level kernels, and the lowering to nvgpu is not wired into the driver yet", op.kind))],
        ));
    }
    let (values, launch) = prepare(func, &args.inputs).map_err(|d| located_or_usage(&source, d))?;
    let mut sim_args: Vec<SimArg> = values
        .into_iter()
        .map(|v| match v {
            ArgValue::Tensor(t) => SimArg::Tile(t),
            ArgValue::Scalar(_, x) => SimArg::Scalar(x),
        })
        .collect();
    let options = SimOptions { probes: ProbeSpec::marked(), ..SimOptions::default() };
    let sim_launch = sim::Launch::grid(launch.grid[0], launch.grid[1], launch.grid[2]);
    let trace = sim::simulate_with(func, &mut sim_args, &sim_launch, &options)
        .map_err(|e| diagnostics(&source, vec![e.into()]))?;
    let mut out = format!(
        "@{}: grid [{}, {}, {}], {} warp(s) per block, seed {}; {} warp-op(s) executed\n",
        func.name,
        launch.grid[0],
        launch.grid[1],
        launch.grid[2],
        sim::num_warps(func),
        args.inputs.seed,
        trace.warp_ops
    );
    out.push_str(&trace.render());
    for (name, arg) in arg_names(func).iter().zip(&sim_args) {
        if let SimArg::Tile(t) = arg {
            let dims: Vec<String> = t.shape.iter().map(|d| d.to_string()).collect();
            out.push_str(&format!("  %{name}: {}x{}  checksum {:016x}\n", dims.join("x"), t.elem, t.checksum()));
        }
    }
    Ok(out)
}

/// The first op that only the tile-level interpreter runs (block-collective tile ops).
pub fn first_tile_level_op(func: &Func) -> Option<tilec_ir::OpId> {
    let mut found = None;
    func.body.walk(func.entry, &mut |id| {
        let kind = func.body.op(id).kind;
        let tile_level = matches!(
            kind,
            OpKind::CopyG2S | OpKind::CopyS2R | OpKind::CopyR2S | OpKind::CopyR2G | OpKind::Mma
        ) || matches!(kind, OpKind::Fill | OpKind::Splat) && func.body.op(id).results.iter().any(|&r| func.body.ty(r).as_tile().is_some())
            || kind.is_binary_arith() && func.body.op(id).results.iter().any(|&r| func.body.ty(r).as_tile().is_some());
        if tile_level && found.is_none() {
            found = Some(id);
        }
    });
    found
}
