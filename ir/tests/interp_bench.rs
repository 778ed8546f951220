//! Interpreter speed on a large GEMM, ignored by default (run it in release):
//! `cargo test --release -p tilec-ir --test interp_bench -- --ignored --nocapture`.

use std::time::Instant;

use tilec_ir::interp::{self, ArgShapes, Limits};

#[test]
#[ignore = "a benchmark: run in release with --ignored"]
fn gemm_1024_cubed() {
    let path = format!("{}/../examples/gemm.tir", env!("CARGO_MANIFEST_DIR"));
    let module = tilec_ir::parse_module(&std::fs::read_to_string(path).unwrap()).unwrap();
    let func = &module.funcs[0];
    let mut args = interp::default_args(func, &ArgShapes::gemm(1024, 1024, 1024), 1).unwrap();
    let launch = interp::default_launch(func, &args).unwrap();
    assert_eq!(launch.grid, [8, 8, 1]);
    let start = Instant::now();
    interp::run_with_limits(func, &mut args, &launch, &Limits::default()).unwrap();
    let secs = start.elapsed().as_secs_f64();
    let c = args[2].as_tensor().unwrap();
    assert!(c.values.iter().any(|&x| x != 0.0));
    eprintln!("gemm 1024^3: {secs:.3} s, {:.2} GMAC/s, checksum {:016x}", 1024f64.powi(3) / secs / 1e9, c.checksum());
}
