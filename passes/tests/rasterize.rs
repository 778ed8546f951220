//! `rasterize` permutes which output tile each block computes and nothing else: a kernel whose blocks each
//! copy their own 16x16 tile (at `block_id x * 16`, `block_id y * 16`) from In to Out gives, lowered with
//! grouped ordering and run on the warp simulator, exactly what the interpreter gives on the kernel as
//! written. A remapping that was not a permutation of the grid would leave some tile of Out at zero or
//! write another twice, and the comparison would fail.

use tilec_ir::interp::{self, ArgShapes};
use tilec_ir::sim::{self, SimArg};
use tilec_ir::Target;
use tilec_passes::{full_pipeline, PassContext, PassManager, PassRegistry};

fn kernel(attrs: &str) -> String {
    format!(
        "tile.func @tiles(%In: tile<?x?xf32, global>, %Out: tile<?x?xf32, global>) attributes {{num_warps = 1{attrs}}} {{\n\
         \x20 %bx = tile.block_id x : index\n\
         \x20 %by = tile.block_id y : index\n\
         \x20 %c16 = tile.constant 16 : index\n\
         \x20 %r = tile.mul %bx, %c16 : index\n\
         \x20 %c = tile.mul %by, %c16 : index\n\
         \x20 %s = tile.alloc_shared : tile<16x16xf32, shared>\n\
         \x20 tile.copy_g2s %In[%r, %c], %s\n\
         \x20 %t = tile.copy_s2r %s : tile<16x16xf32, reg>\n\
         \x20 tile.copy_r2g %t, %Out[%r, %c]\n\
         \x20 tile.return\n}}\n"
    )
}

fn lower(text: &str) -> tilec_ir::Module {
    let mut m = tilec_ir::parse_module(text).unwrap();
    let registry = PassRegistry::with_builtin();
    let pm = PassManager::from_pipeline(&registry, &full_pipeline(Target::Sm90)).unwrap();
    pm.run(&mut m, &mut PassContext::new(Target::Sm90)).unwrap();
    m
}

/// (interpreter on the kernel as written, simulator on the lowered kernel) for an `rows x cols` In.
fn run_both(text: &str, rows: usize, cols: usize) -> (Vec<f64>, Vec<f64>, [u32; 3]) {
    let original = tilec_ir::parse_module(text).unwrap();
    let func = &original.funcs[0];
    let shapes = ArgShapes::new().with("In", &[rows, cols]).with("Out", &[rows, cols]);
    let mut args = interp::default_args(func, &shapes, 7).unwrap();
    let launch = interp::default_launch(func, &args).unwrap();
    let mut sim_args: Vec<SimArg> = args.iter().map(SimArg::from).collect();
    interp::run(func, &mut args, &launch).unwrap();
    let low = lower(text);
    sim::simulate(&low.funcs[0], &mut sim_args, &sim::Launch { grid: launch.grid }).unwrap();
    let want = args[1].as_tensor().unwrap().values.clone();
    let got = sim_args.into_iter().nth(1).and_then(SimArg::into_tile).unwrap().values;
    (want, got, launch.grid)
}

fn uses_grid_dim(m: &tilec_ir::Module) -> bool {
    let f = &m.funcs[0];
    let mut found = false;
    f.body.walk(f.entry, &mut |id| found |= f.body.op(id).kind == tilec_ir::OpKind::GridDim);
    found
}

#[test]
fn grouped_order_is_a_permutation_of_the_grid() {
    // 9 x 5 blocks in groups of 2 rows (the last group has one), and in groups larger than the grid.
    for group in [2, 4, 16] {
        let text = kernel(&format!(", raster_group = {group}"));
        assert!(uses_grid_dim(&lower(&text)), "raster_group = {group}: the pass did nothing");
        let (want, got, grid) = run_both(&text, 9 * 16, 5 * 16);
        assert_eq!(grid, [9, 5, 1]);
        assert!(want.iter().filter(|v| **v == 0.0).count() < want.len() / 100, "the copied input must be (almost) free of zeros");
        assert_eq!(want, got, "raster_group = {group}: the simulator's Out differs from the interpreter's");
    }
}

#[test]
fn without_the_attribute_nothing_changes() {
    assert!(!uses_grid_dim(&lower(&kernel(""))));
    assert!(!uses_grid_dim(&lower(&kernel(", raster_group = 1"))));
}

#[test]
fn a_bad_group_is_a_diagnostic() {
    // The attribute out of range: the verifier refuses it at the attribute, before any pass runs.
    let mut m = tilec_ir::parse_module(&kernel(", raster_group = 0")).unwrap();
    let registry = PassRegistry::with_builtin();
    let pm = PassManager::from_pipeline(&registry, "rasterize").unwrap();
    let err = pm.run(&mut m, &mut PassContext::new(Target::Sm90)).unwrap_err();
    assert!(format!("{:?}", err.diagnostics).contains("'raster_group' must be in 1..=65535"), "{:?}", err.diagnostics);
    // The pass option out of range: the pass's own diagnostic.
    let err = PassManager::from_pipeline(&registry, "rasterize{group=0}").map(|_| ()).unwrap_err();
    assert!(format!("{err:?}").contains("group must be 1..=65535"), "{err:?}");
}
