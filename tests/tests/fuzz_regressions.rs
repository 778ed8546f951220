//! Inputs the fuzzer (`fuzz/`, `scripts/fuzz.sh`) found bugs with, kept under `tests/fuzz-regressions/`:
//! each must now go through the whole fuzz target (parser, verifier, round trip, every pipeline, the
//! interpreter and the simulator) without a finding, and in bounded time. Plus a short deterministic fuzz
//! run, so the harness itself stays working under `cargo test`.

use std::time::{Duration, Instant};

use tilec_fuzz::run::{fuzz, input_for, load_corpus, Corpus, RunConfig};
use tilec_fuzz::{check, TargetConfig};
use tilec_tests::{display_path, files_with_extension, repo_root};

#[test]
fn every_fuzz_regression_passes_the_target() {
    let open = repo_root().join("tests/fuzz-regressions/open");
    let files: Vec<_> =
        files_with_extension(&repo_root().join("tests/fuzz-regressions"), "tir").into_iter().filter(|f| !f.starts_with(&open)).collect();
    assert!(!files.is_empty(), "no inputs under tests/fuzz-regressions");
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let started = Instant::now();
        let outcome = check(&text, &TargetConfig::default());
        let elapsed = started.elapsed();
        match outcome {
            Err(finding) => failures.push(format!("{}: {finding}", display_path(file))),
            // Generous for a debug build on a busy machine; the bugs these catch took minutes or forever.
            Ok(_) if elapsed > Duration::from_secs(20) => failures.push(format!("{}: took {elapsed:?}", display_path(file))),
            Ok(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Bugs the fuzzer found that are not fixed yet (owned by other parts of the compiler): run with
/// `cargo test -p tilec-tests --test fuzz_regressions -- --ignored` to see whether they still fail.
#[test]
#[ignore = "runs the open findings in tests/fuzz-regressions/open/ (none at present: the misaligned copy_g2s is now refused by the lowering)"]
fn open_fuzz_findings_are_fixed() {
    let files = files_with_extension(&repo_root().join("tests/fuzz-regressions/open"), "tir");
    let failing: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(f).ok()?;
            check(&text, &TargetConfig::default()).err().map(|finding| format!("{}: {finding}", display_path(f)))
        })
        .collect();
    assert!(failing.is_empty(), "{}", failing.join("\n"));
}

#[test]
fn a_short_fuzz_run_finds_nothing_and_is_deterministic() {
    let corpus = Corpus::new(load_corpus(&repo_root()).into_iter().map(|(_, t)| t).collect());
    assert!(corpus.texts.len() > 100 && !corpus.valid.is_empty());
    // The same seed and iteration give the same input; another seed another.
    assert_eq!(input_for(5, 17, &corpus), input_for(5, 17, &corpus));
    assert!((0..8).any(|i| input_for(5, i, &corpus) != input_for(6, i, &corpus)));
    let dir = std::env::temp_dir().join(format!("tilec-fuzz-test-{}", std::process::id()));
    let mut config = RunConfig::new(11, dir.clone());
    config.iterations = Some(150);
    config.duration = Some(Duration::from_secs(60));
    let stats = fuzz(&config, &corpus);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(stats.findings.is_empty(), "{:#?}", stats.findings);
    assert!(stats.iterations > 0);
    eprintln!("{}", stats.summary());
}
