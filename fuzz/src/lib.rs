//! `tilec-fuzz`: a fuzz harness for tilec that runs on stable Rust.
//!
//! Coverage-less but structure-aware: the seeds are the repository's `.tir` files (examples, the
//! diagnostics corpus, past fuzz regressions); each input is a seed mutated by byte flips, token
//! deletions/duplications/swaps, spliced lines from other seeds, extreme numbers, other scalar types,
//! shapes and op names from the IR's own catalogues, and deep nesting ([`mutate`]). The target
//! ([`target::check`]) runs an input through the lexer, `tilec check`'s diagnostics and rendering, the
//! parser, the verifier, a print/parse round trip, the interpreter, the default pass pipelines and every
//! registered pass alone, the interpreter again (results must not change), and the simulator on
//! nvgpu-level code, with small fuel, on a thread with a 2 MiB stack, catching panics.
//!
//! A run ([`run::fuzz`]) is deterministic given its seed: iteration `i`'s input depends only on
//! `(seed, i)`. The `tilec-fuzz` binary supervises a worker process so that an abort (a stack overflow)
//! is caught too: the worker writes each input to a state file before running it, and the supervisor
//! saves and minimises the input that killed it, then resumes at the next iteration.
//!
//! Findings go to `fuzz/crashes/<hash>.tir`, with `<hash>.min.tir` (delta-debugged by lines then tokens,
//! keeping the same kind and signature, see [`minimize`]) and `<hash>.txt` (what went wrong).

pub mod minimize;
pub mod mutate;
pub mod rng;
pub mod run;
pub mod target;

pub use target::{check, Finding, FindingKind, Reached, TargetConfig};

/// The repository this crate was built in (the default root of the corpus).
pub fn default_root() -> std::path::PathBuf {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(std::path::Path::to_path_buf).unwrap_or_else(|| manifest.to_path_buf())
}
