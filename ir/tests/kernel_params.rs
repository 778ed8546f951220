//! Kernel parameters (upper-case integer attributes of a function) stand for their values in the body's
//! shapes and attribute values: a kernel written with them parses to the same IR as the kernel written
//! with the numbers, and changing an attribute's value in the text changes the kernel accordingly.

const WITH_PARAMS: &str = "tile.func @k(%A: tile<?x?xf16, global>) attributes {BM = 64, BK = 32, num_warps = 4} {
  %c0 = tile.constant 0 : index
  %ck = tile.constant BK : index
  %s = tile.alloc_shared : tile<BMxBKxf16, shared>
  tile.copy_g2s %A[%c0, %ck], %s
  %r = tile.copy_s2r %s : tile<BMxBKxf16, reg>
  %v = tile.fill 0.0 : tile<16xBKxf32, reg>
  tile.return
}
";

const WITH_NUMBERS: &str = "tile.func @k(%A: tile<?x?xf16, global>) attributes {BM = 64, BK = 32, num_warps = 4} {
  %c0 = tile.constant 0 : index
  %ck = tile.constant 32 : index
  %s = tile.alloc_shared : tile<64x32xf16, shared>
  tile.copy_g2s %A[%c0, %ck], %s
  %r = tile.copy_s2r %s : tile<64x32xf16, reg>
  %v = tile.fill 0.0 : tile<16x32xf32, reg>
  tile.return
}
";

fn printed(text: &str) -> String {
    let m = tilec_ir::parse_module(text).unwrap_or_else(|d| panic!("{d:?}"));
    tilec_ir::verify::verify_module(&m).unwrap_or_else(|d| panic!("{d:?}"));
    tilec_ir::print_module(&m)
}

#[test]
fn parameters_specialize_the_kernel() {
    assert_eq!(printed(WITH_PARAMS), printed(WITH_NUMBERS));
}

#[test]
fn new_attribute_values_give_a_new_kernel() {
    let attrs = [("BM".to_string(), "128".to_string()), ("BK".to_string(), "64".to_string())];
    let text = tilec_ir::set_func_attributes(WITH_PARAMS, "k", &attrs).unwrap();
    let expected = WITH_NUMBERS.replace("64x32", "128x64").replace("16x32", "16x64").replace("constant 32", "constant 64").replace("BM = 64, BK = 32", "BM = 128, BK = 64");
    assert_eq!(printed(&text), printed(&expected));
    // The body still names the parameters: only the attribute values changed.
    assert!(text.contains("tile<BMxBKxf16, shared>") && text.contains("tile.constant BK"));
}

#[test]
fn lower_case_attributes_and_other_functions_are_not_parameters() {
    // `num_warps` is an attribute, not a parameter; a parameter of one function means nothing in another.
    assert!(tilec_ir::parse_module("tile.func @k() attributes {num_warps = 4} {\n  %s = tile.alloc_shared : tile<num_warpsx4xf16, shared>\n  tile.return\n}\n").is_err());
    let two = "tile.func @a() attributes {BM = 4} {\n  tile.return\n}\ntile.func @b() {\n  %s = tile.alloc_shared : tile<BMx4xf16, shared>\n  tile.return\n}\n";
    assert!(tilec_ir::parse_module(two).is_err());
}
