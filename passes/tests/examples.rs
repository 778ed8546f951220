//! Every `.tir` under `examples/` (recursively) survives the default pipeline of every target, still
//! verifies, and a second run changes nothing (the cleanup passes reach a fixed point).

mod common;

use std::path::Path;

use common::examples;

use tilec_ir::Target;
use tilec_passes::{default_pipeline, PassContext, PassManager, PassRegistry};

#[test]
fn examples_survive_the_default_pipeline() {
    let registry = PassRegistry::with_builtin();
    let mut tested = 0;
    for (path, text) in examples() {
        // Inputs that do not parse or verify are the front end's business (its own tests catch them).
        let Ok(module) = tilec_ir::parse_module(&text) else {
            eprintln!("skipped (does not parse): {}", path.display());
            continue;
        };
        if tilec_ir::verify::verify_module(&module).is_err() {
            eprintln!("skipped (does not verify): {}", path.display());
            continue;
        }
        for target in Target::ALL {
            let pm = PassManager::from_pipeline(&registry, default_pipeline(target)).unwrap();
            let mut m = module.clone();
            pm.run(&mut m, &mut PassContext::new(target))
                .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.diagnostics));
            tilec_ir::verify::verify_module(&m).unwrap();
            let once = tilec_ir::print_module(&m);
            // The printed result parses back and verifies.
            let reparsed = tilec_ir::parse_module(&once).unwrap_or_else(|d| panic!("{}: {d}\n{once}", path.display()));
            tilec_ir::verify::verify_module(&reparsed).unwrap();
            pm.run(&mut m, &mut PassContext::new(target)).unwrap();
            assert_eq!(tilec_ir::print_module(&m), once, "{}: a second run changed the IR", path.display());
        }
        tested += 1;
    }
    assert!(tested >= 5, "only {tested} examples were tested");
}

/// What the default pipeline does to the GEMM: `tile.dim` stays (K is dynamic), nothing else changes
/// because the example is already clean.
#[test]
fn gemm_is_already_clean() {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/gemm.tir")).unwrap();
    let mut m = tilec_ir::parse_module(&text).unwrap();
    let before = tilec_ir::print_module(&m);
    let pm = PassManager::from_pipeline(&PassRegistry::with_builtin(), default_pipeline(Target::Sm80)).unwrap();
    pm.run(&mut m, &mut PassContext::new(Target::Sm80)).unwrap();
    assert_eq!(tilec_ir::print_module(&m), before);
}
