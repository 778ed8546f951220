//! Compiles a `.tir` file to PTX plus a JSON manifest of its kernels, until the driver's `--emit ptx` does:
//! `cargo run -p tilec-lower-ptx --example compile_ptx -- input.tir out.ptx [sm_80]`.
//! Tile-level input is first run through layout assignment and the tile → nvgpu lowering.

use tilec_lower_ptx::llvm::translate::compile;
use tilec_ir::Target;
use tilec_lower_ptx::OptLevel;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: compile_ptx input.tir out.ptx [sm_80|sm_86|sm_89|sm_90|sm_90a]");
        std::process::exit(1);
    }
    let target: Target = args.get(3).map_or(Ok(Target::Sm80), |t| t.parse()).unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(&args[1]).expect("read input");
    let mut module = tilec_ir::parse_module(&text).unwrap_or_else(|d| panic!("{d:?}"));
    tilec_ir::verify::verify_module(&module).unwrap_or_else(|d| panic!("{d}"));
    let tile_level = text.contains("tile.copy_") || text.contains("tile.mma");
    if tile_level {
        tilec_passes::layout_assignment::assign_layouts(&mut module).unwrap_or_else(|d| panic!("{d}"));
        tilec_passes::lower::lower_tile_to_nvgpu(&mut module).unwrap_or_else(|d| panic!("{d}"));
    }
    let start = std::time::Instant::now();
    let compiled = compile(&module, target, OptLevel::O3).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("LLVM translation + O3 + PTX: {:.1} ms", start.elapsed().as_secs_f64() * 1e3);
    std::fs::write(&args[2], &compiled.ptx).expect("write PTX");
    let manifest = serde_json::to_string_pretty(&compiled.kernels).expect("json");
    std::fs::write(format!("{}.json", args[2]), manifest).expect("write manifest");
}
