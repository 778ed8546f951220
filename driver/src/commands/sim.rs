//! `tilec sim FILE`: runs a kernel on the CPU warp simulator.
//!
//! A kernel written in the `nvgpu` dialect (per-thread code, like the seed experiments in
//! `examples/seeds/`) runs as it is, and the per-lane values of every op marked `{probe = "..."}` are
//! printed in the form the seed documents use. A kernel with tile-level ops is first lowered by the
//! default pipeline (`tilec_passes::full_pipeline`); the simulator's results are then compared with the
//! reference interpreter's on the original (bit-exact, or within the tolerance of `tilec compare`).

use tilec_ir::interp::ArgValue;
use tilec_ir::sim::{self, ProbeSpec, SimArg, SimOptions};
use tilec_ir::{Func, OpKind};
use crate::commands::bundle::{tensor_extents, to_sim_args};

use crate::cli::SimArgs;
use crate::commands::interp::{arg_names, located_or_usage, prepare, select_func};
use crate::error::DriverError;
use crate::input::{compile_error, diagnostics, parse_and_verify, read_source_with};

/// `--tolerance ATOL,RTOL`.
fn parse_tolerance(text: &str) -> Result<(f64, f64), DriverError> {
    let bad = || DriverError::Usage(format!("--tolerance takes ATOL,RTOL (two non-negative numbers, e.g. 1e-2,1e-2), not '{text}'"));
    let (a, r) = text.split_once(',').ok_or_else(bad)?;
    let (a, r): (f64, f64) = (a.trim().parse().map_err(|_| bad())?, r.trim().parse().map_err(|_| bad())?);
    if !(a >= 0.0 && r >= 0.0 && a.is_finite() && r.is_finite()) {
        return Err(bad());
    }
    Ok((a, r))
}

pub fn run(args: &SimArgs) -> Result<String, DriverError> {
    let source = read_source_with(&args.input, &args.inputs.params)?;
    let module = parse_and_verify(&source)?;
    let func = select_func(&module, args.inputs.func.as_deref())?;
    let (values, launch) = prepare(func, &args.inputs).map_err(|d| located_or_usage(&source, d))?;
    if first_tile_level_op(func).is_some() {
        return lower_and_compare(args, &source, func, values, &launch);
    }
    // The simulator runs every op whatever the target; what the target cannot lower is refused as
    // `tilec check` and compilation refuse it.
    let target = crate::target::parse_target(&args.target)?;
    let illegal = tilec_ir::verify::target_legality(func, target);
    if !illegal.is_empty() {
        return Err(diagnostics(&source, illegal));
    }
    let mut sim_args = to_sim_args(&values);
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
    write_sim_outputs(&args.outputs, func, &sim_args)?;
    for (name, arg) in arg_names(func).iter().zip(&sim_args) {
        if let SimArg::Tile(t) = arg {
            let dims: Vec<String> = t.shape.iter().map(|d| d.to_string()).collect();
            out.push_str(&format!("  %{name}: {}x{}  checksum {:016x}\n", dims.join("x"), t.elem, t.checksum()));
        }
    }
    Ok(out)
}

/// A tile-level kernel: lower it with the default pipeline, run the result on the simulator, and compare
/// every global tile with what the reference interpreter computes on the original.
fn lower_and_compare(
    args: &SimArgs,
    source: &tilec_ir::SourceFile,
    func: &Func,
    values: Vec<ArgValue>,
    launch: &tilec_ir::interp::Launch,
) -> Result<String, DriverError> {
    let target = crate::target::parse_target(&args.target)?;
    let tolerance = args.tolerance.as_deref().map(parse_tolerance).transpose()?;
    let mut expected = values.clone();
    tilec_ir::interp::run(func, &mut expected, launch).map_err(|e| diagnostics(source, vec![e.to_diagnostic()]))?;
    let options = tilec_compiler::Options::for_target(target);
    let specialized = tilec_compiler::specialize(func, &options, &tensor_extents(&values)).map_err(|e| compile_error(source, e))?;
    crate::input::print_warnings(source, &specialized.warnings);
    let (lowered, note) = (specialized.module, specialized.variant);
    let lowered_func = lowered.funcs.first().ok_or_else(|| DriverError::Usage("the pipeline left no kernel".into()))?;
    let mut sim_args = to_sim_args(&values);
    let mut sim_launch = sim::Launch::grid(launch.grid[0], launch.grid[1], launch.grid[2]);
    let mut persistent_note = String::new();
    if tilec_ir::ops::kernel::has_persistent_grid_args(lowered_func) {
        // The hidden logical grid, and fewer blocks than tiles, not dividing them (blocks run unequal counts).
        sim_args.extend(launch.grid.iter().map(|&g| SimArg::Scalar(f64::from(g))));
        let tiles: u64 = launch.grid.iter().map(|&g| u64::from(g)).product();
        let blocks = persistent_sim_blocks(tiles);
        sim_launch = sim::Launch::grid(blocks, 1, 1);
        persistent_note = format!("persistent: {blocks} block(s) loop over the {tiles} tile(s) of the logical grid\n");
    }
    let trace = sim::simulate(lowered_func, &mut sim_args, &sim_launch).map_err(|e| diagnostics(source, vec![e.into()]))?;
    write_sim_outputs(&args.outputs, func, &sim_args)?;
    let mut out = note.map(|v| v.note + "\n").unwrap_or_default();
    out += &persistent_note;
    out += &format!(
        "@{}: lowered with the default pipeline for {target}; simulated {} block(s), {} warp(s) each, {} warp-op(s); compared with the interpreter\n",
        func.name,
        trace.blocks,
        sim::num_warps(lowered_func),
        trace.warp_ops
    );
    let mut failed = 0;
    for ((name, want), got) in arg_names(func).iter().zip(&expected).zip(&sim_args) {
        let (ArgValue::Tensor(want), SimArg::Tile(got)) = (want, got) else { continue };
        let declared = tilec_ir::KernelAttrs::of(func).ok().and_then(|k| k.sim_tolerance).map(|t| (t.atol, t.rtol));
        let (atol, rtol) = match tolerance.or(declared) {
            Some(t) if want.elem.is_float() => t,
            _ => crate::commands::compare::tolerance(want.elem),
        };
        let mut exact = 0;
        let mut bad = 0;
        let mut max_abs = 0.0f64;
        for (&g, &w) in got.values.iter().zip(&want.values) {
            // Two NaNs agree (as in `tilec compare`).
            if g == w || g.is_nan() && w.is_nan() {
                exact += 1;
                continue;
            }
            let err = (g - w).abs();
            max_abs = max_abs.max(err);
            if crate::commands::compare::exceeds(err, atol + rtol * w.abs()) {
                bad += 1;
            }
        }
        let dims: Vec<String> = want.shape.iter().map(|d| d.to_string()).collect();
        let verdict = if bad > 0 {
            failed += 1;
            "MISMATCH"
        } else if exact == want.len() {
            "bit-exact"
        } else {
            "within tolerance"
        };
        out.push_str(&format!(
            "  %{name}: {}x{}: {verdict}; {exact}/{} bit-identical, max abs err {max_abs:.3e}{}\n",
            dims.join("x"),
            want.elem,
            want.len(),
            if bad > 0 { format!(", {bad} outside atol {atol:e} + rtol {rtol:e}") } else { String::new() }
        ));
    }
    if failed > 0 {
        return Err(DriverError::Usage(format!("{out}{failed} tensor(s) differ between the simulator and the interpreter")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn persistent_sim_blocks_do_not_divide_the_tiles() {
        for (tiles, blocks) in [(1, 1), (2, 1), (3, 2), (4, 3), (6, 4), (12, 7)] {
            assert_eq!(super::persistent_sim_blocks(tiles), blocks, "{tiles} tiles");
        }
    }
}

/// How many blocks `tilec sim` launches for a persistent kernel of `tiles` tiles: fewer than the tiles and, where
/// one exists, a number that does not divide them, so that blocks run unequal numbers of tiles (the first from
/// `tiles / 2` rounded up, then upwards, then downwards): 3 tiles → 2 blocks, 4 → 3, 6 → 4, 12 → 7.
pub fn persistent_sim_blocks(tiles: u64) -> u32 {
    let start = tiles.div_ceil(2).max(1);
    let found = (start..tiles).find(|p| !tiles.is_multiple_of(*p)).or_else(|| (2..start).rev().find(|p| !tiles.is_multiple_of(*p)));
    u32::try_from(found.unwrap_or(start)).unwrap_or(u32::MAX)
}

/// The first op that only the tile-level interpreter runs (block-collective tile ops).
pub fn first_tile_level_op(func: &Func) -> Option<tilec_ir::OpId> {
    let mut found = None;
    func.body.walk(func.entry, &mut |id| {
        let kind = func.body.op(id).kind;
        let tile_level = matches!(
            kind,
            OpKind::CopyG2S | OpKind::CopyS2R | OpKind::CopyR2S | OpKind::CopyR2G | OpKind::Mma | OpKind::Reduce | OpKind::Broadcast | OpKind::Iota | OpKind::Transpose | OpKind::TileBarrier
        ) || matches!(kind, OpKind::Fill | OpKind::Splat) && func.body.op(id).results.iter().any(|&r| func.body.ty(r).as_tile().is_some())
            || (kind.is_binary_arith() || kind == OpKind::Fma) && func.body.op(id).results.iter().any(|&r| func.body.ty(r).as_tile().is_some());
        if tile_level && found.is_none() {
            found = Some(id);
        }
    });
    found
}

/// `--output NAME=FILE` with the simulator's results.
fn write_sim_outputs(settings: &[String], func: &Func, sim_args: &[SimArg]) -> Result<(), DriverError> {
    let tensors: Vec<_> = sim_args.iter().map(|a| if let SimArg::Tile(t) = a { Some(t) } else { None }).collect();
    crate::commands::interp::write_outputs(settings, &arg_names(func), &tensors)
}
