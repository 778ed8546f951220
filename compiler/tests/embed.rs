//! Runs `examples/embed.rs` (an embedder calling the front door), so the example keeps working.

#[path = "../examples/embed.rs"]
mod embed;

#[test]
fn embedding_example_compiles_tags_and_specializes() {
    let text = embed::run().unwrap_or_else(|e| panic!("{e}"));
    assert!(text.contains("@gemm: "), "{text}");
    assert!(text.contains("block [128, 1, 1]"), "{text}");
    assert!(text.contains("remark [host-tag]: tagged @gemm"), "{text}");
    assert!(text.contains("@gemm lowered for sm_90 and tagged by the host"), "{text}");
    assert!(text.contains("compiled with global_alignment = [4, 16, 16]: %A with cp.async of 4 bytes"), "{text}");
    assert!(text.contains("specialized: "), "{text}");
}
