use tilec_passes::layout_assignment::assign_layouts;
use tilec_passes::lower::lower_tile_to_nvgpu;

fn load(name: &str) -> tilec_ir::Module {
    let text = std::fs::read_to_string(format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    tilec_ir::parse_module(&text).unwrap()
}

#[test]
fn examples_assign_and_lower_and_verify() {
    for name in ["mma.tir", "copy_s2r.tir", "gemm.tir", "gemm_epilogue.tir"] {
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
