//! layout-assignment: instruction shapes, warp grids, layouts in the types, located diagnostics.

use tilec_ir::layout::Layout;
use tilec_ir::{Attribute, OpKind, SourceFile, Type};
use tilec_passes::layout_assignment::{assign_layouts, assign_mma};

fn example(name: &str) -> String {
    std::fs::read_to_string(format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

#[test]
fn gemm_gets_m16n8k16_on_a_2x2_warp_grid() {
    let mut m = tilec_ir::parse_module(&example("gemm.tir")).unwrap();
    assign_layouts(&mut m).unwrap();
    tilec_ir::verify::verify_module(&m).unwrap();
    let f = &m.funcs[0];
    let mut mma = None;
    f.body.walk(f.entry, &mut |op| {
        if f.body.op(op).kind == OpKind::Mma {
            mma = Some(op);
        }
    });
    let op = f.body.op(mma.unwrap());
    assert_eq!(op.attr("mmaShape").and_then(Attribute::as_int_array), Some(vec![16, 8, 16]));
    assert_eq!(op.attr("warpGrid").and_then(Attribute::as_int_array), Some(vec![2, 2]));
    let asg = assign_mma(128, 128, 32, tilec_ir::ScalarType::F16, tilec_ir::ScalarType::F32, 4).unwrap();
    let layout_of = |v| match f.body.ty(v) {
        Type::Tile(t) => t.layout.clone(),
        _ => None,
    };
    assert_eq!(layout_of(op.group("a")[0]), Some(Layout::Linear(asg.a.clone())));
    assert_eq!(layout_of(op.group("b")[0]), Some(Layout::Linear(asg.b.clone())));
    assert_eq!(layout_of(op.group("c")[0]), Some(Layout::Linear(asg.c.clone())));
    assert_eq!(layout_of(op.results[0]), Some(Layout::Linear(asg.c.clone())));
    // The loop result and the fill that starts the loop carry the accumulator's layout too.
    let printed = tilec_ir::print_module(&m);
    let c_text = format!("tile<128x128xf32, reg, #linear<{}>>", asg.c);
    assert_eq!(printed.matches(&c_text).count(), 3, "fill, loop type, mma result:\n{printed}");
    // And the printed module parses back to the same layouts.
    let again = tilec_ir::parse_module(&printed).unwrap();
    assert_eq!(tilec_ir::print_module(&again), printed);
}

#[test]
fn eight_warps_are_a_4x2_grid() {
    let text = example("gemm.tir").replace("num_warps = 4", "num_warps = 8");
    let mut m = tilec_ir::parse_module(&text).unwrap();
    assign_layouts(&mut m).unwrap();
    assert!(tilec_ir::print_module(&m).contains("warpGrid = [4, 2]"));
}

#[test]
fn impossible_tiling_is_a_located_error() {
    // A 16x8 accumulator holds one m16n8 instruction tile: it cannot be spread over 4 warps.
    let text = "\
tile.func @small(%A: tile<16x16xf16, global>) attributes {num_warps = 4} {
  %a = tile.fill 1.0 : tile<16x16xf16, reg>
  %b = tile.fill 1.0 : tile<16x8xf16, reg>
  %c = tile.fill 0.0 : tile<16x8xf32, reg>
  %d = tile.mma %a, %b, %c : tile<16x8xf32, reg>
  tile.return
}
";
    let mut m = tilec_ir::parse_module(text).unwrap();
    let d = assign_layouts(&mut m).unwrap_err();
    assert!(
        d.message.contains("16x8 tile cannot be split over 2x2 warps into m16n8 instructions (nor over 4x1, 1x4)"),
        "{}",
        d.message
    );
    let rendered = SourceFile::new("small.tir", text).render(&[d], false);
    assert!(rendered.starts_with("small.tir:5:3: error: no layout assignment for this 'tile.mma'"), "{rendered}");
}

#[test]
fn unsupported_element_type_is_a_located_error() {
    let text = "\
tile.func @f64(%A: tile<16x16xf64, global>) attributes {num_warps = 1} {
  %a = tile.fill 1.0 : tile<16x16xf64, reg>
  %b = tile.fill 1.0 : tile<16x8xf64, reg>
  %c = tile.fill 0.0 : tile<16x8xf64, reg>
  %d = tile.mma %a, %b, %c : tile<16x8xf64, reg>
  tile.return
}
";
    let mut m = tilec_ir::parse_module(text).unwrap();
    let d = assign_layouts(&mut m).unwrap_err();
    assert!(d.message.contains("'f64' inputs with a 'f64' accumulator are not supported"), "{}", d.message);
    let rendered = SourceFile::new("f64.tir", text).render(&[d], false);
    assert!(rendered.starts_with("f64.tir:5:"), "{rendered}");
}
