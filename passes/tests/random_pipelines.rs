//! Property tests: random pipelines over the registered passes never panic and keep every example
//! verifying; random pipeline text never panics the parser, and printed pipelines parse back.

use proptest::prelude::*;
use tilec_ir::Target;
use tilec_passes::{PassContext, PassManager, PassRegistry, Pipeline};

mod common;

/// The examples that parse and verify, and [`common::DIRTY`], for sm_90.
/// Examples whose `// targets:` line leaves sm_90 out (`examples/gemm_hopper.tir`: sm_90a, `mma = "wgmma"`)
/// are left out: `lower-tile-to-nvgpu` run without a `layout-assignment` before it assigns layouts itself for
/// the default target (passes/src/lower/mod.rs calls `assign_layouts_in`, not `assign_layouts_for(func,
/// target)`), so such a pipeline refuses their stated wgmma even on sm_90a. Known; to fix in the lowering.
fn verified_examples() -> Vec<tilec_ir::Module> {
    common::examples()
        .into_iter()
        .map(|(_, text)| text)
        .chain([common::DIRTY.to_string()])
        .filter(|text| common::example_target(text, Target::Sm90) == Target::Sm90)
        .filter_map(|text| tilec_ir::parse_module(&text).ok())
        .filter(|m| tilec_ir::verify::verify_module(m).is_ok())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_pipelines_keep_examples_valid(picks in proptest::collection::vec(0usize..64, 0..8)) {
        let registry = PassRegistry::with_builtin();
        let names = registry.names();
        let pipeline: Vec<&str> = picks.iter().map(|&i| names[i % names.len()]).collect();
        let text = pipeline.join(",");
        let pm = PassManager::from_pipeline(&registry, &text).unwrap().timing(true);
        for module in verified_examples() {
            let mut m = module.clone();
            let report = pm.run(&mut m, &mut PassContext::new(Target::Sm90));
            prop_assert!(report.is_ok(), "{text}: {}", report.unwrap_err());
            prop_assert!(tilec_ir::verify::verify_module(&m).is_ok());
            prop_assert_eq!(report.unwrap().timing.unwrap().rows.len(), pipeline.len() + 1);
        }
    }

    #[test]
    fn pipeline_text_never_panics(text in "[a-z{}=, \\-]{0,24}") {
        let registry = PassRegistry::with_builtin();
        let _ = registry.parse_pipeline(&text);
        if let Ok(p) = Pipeline::parse(&text) {
            prop_assert_eq!(Pipeline::parse(&p.to_string()).unwrap(), p);
        }
    }

    #[test]
    fn any_text_never_panics(text in "\\PC{0,32}") {
        let _ = Pipeline::parse(&text);
    }
}
