//! Property tests: random pipelines over the registered passes never panic and keep every example
//! verifying; random pipeline text never panics the parser, and printed pipelines parse back.

use proptest::prelude::*;
use tilec_ir::Target;
use tilec_passes::{PassContext, PassManager, PassRegistry, Pipeline};

mod common;

/// The examples that parse and verify, each with the target it is compiled for (sm_90 unless its
/// `// targets:` line leaves sm_90 out, as `examples/gemm_hopper.tir` does: sm_90a, `mma = "wgmma"`), and
/// [`common::DIRTY`] for sm_90.
fn verified_examples() -> Vec<(tilec_ir::Module, Target)> {
    common::examples()
        .into_iter()
        .map(|(_, text)| text)
        .chain([common::DIRTY.to_string()])
        .filter_map(|text| Some((tilec_ir::parse_module(&text).ok()?, common::example_target(&text, Target::Sm90))))
        .filter(|(m, _)| tilec_ir::verify::verify_module(m).is_ok())
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
        for (module, target) in verified_examples() {
            let mut m = module.clone();
            let report = pm.run(&mut m, &mut PassContext::new(target));
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
