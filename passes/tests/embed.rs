//! Runs the logic of `examples/embed.rs`: a host compiler's pass registered beside the built-in ones.

#[path = "../examples/embed.rs"]
mod embed;

#[test]
fn embedding_example_counts_tags_and_cleans() {
    let (text, counts) = embed::run().unwrap();
    // Before the cleanup: 3 constants, mul, add, alloc, 3 copies, fill, mul, return.
    assert_eq!(counts.per_func, [("scale".to_string(), 12), ("scale".to_string(), 8)]);
    assert!(text.contains("// -----// IR Dump After count-ops //----- //"));
    assert!(text.contains("tile.func @scale(%arg0: tile<16x16xf32, global>) attributes {embed.op_count = 8}"));
    assert!(text.contains("remark [count-ops]: @scale has 12 ops"));
    assert!(text.contains("remark [count-ops]: @scale has 8 ops"));
    assert!(text.contains("... Execution time report ..."));
}
