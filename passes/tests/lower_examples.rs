use tilec_passes::layout_assignment::assign_layouts;
use tilec_passes::lower::lower_tile_to_nvgpu;

fn load(name: &str) -> tilec_ir::Module {
    let text = std::fs::read_to_string(format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    tilec_ir::parse_module(&text).unwrap()
}

#[test]
fn examples_assign_and_lower_and_verify() {
    let variants = ["gemm_bf16.tir", "gemm_f16_out.tir", "gemm_bf16_out.tir", "gemm_s8_128.tir", "gemm_s8_b_col.tir", "gemm_a_col.tir", "gemm_b_col.tir", "gemm_ab_col.tir"];
    for name in ["mma.tir", "copy_s2r.tir", "gemm.tir", "gemm_epilogue.tir"].into_iter().chain(variants) {
        let mut m = load(name);
        assign_layouts(&mut m).unwrap();
        let printed = tilec_ir::print_module(&m);
        tilec_ir::verify::verify_module(&m).unwrap_or_else(|d| panic!("{name} assigned: {d}\n{printed}"));
        let reparsed = tilec_ir::parse_module(&printed).unwrap_or_else(|d| panic!("{name} reparse: {d:?}"));
        drop(reparsed);
        lower_tile_to_nvgpu(&mut m).unwrap_or_else(|d| panic!("{name} lower: {d}"));
        let printed = tilec_ir::print_module(&m);
        if std::env::var("SHOW").is_ok() { println!("==== {name}\n{printed}"); }
        tilec_ir::verify::verify_module(&m).unwrap_or_else(|d| panic!("{name} lowered: {d}\n{printed}"));
    }
}
