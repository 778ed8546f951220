//! The on-disk cache of the compile command (`driver/src/cache.rs`), through the real `tilec` binary with
//! `TILEC_CACHE_DIR` pointing at a fresh directory: a hit gives the same bytes as a compile, a different
//! option misses, a damaged entry is a miss, `--no-cache` and `TILEC_CACHE=0` neither read nor write it, and
//! runs that print more than their output (`--timing`) bypass it. No timings: `scripts/bench-compile.sh`
//! measures speed.

use std::path::{Path, PathBuf};

use tilec_tests::cli::{assert_ok, run_with_env, stderr};

const GEMM: &str = "examples/gemm.tir";

fn temp_dir(name: &str) -> PathBuf {
    tilec_tests::cli::temp_dir("cache", name)
}

/// `tilec ARGS` with the cache in `cache` (plus `extra` variables).
fn tilec(cache: &Path, args: &[&str], extra: &[(&str, &str)]) -> std::process::Output {
    let dir = cache.to_string_lossy().into_owned();
    let mut env = vec![("TILEC_CACHE_DIR", dir.as_str())];
    env.extend_from_slice(extra);
    run_with_env(args, None, &env)
}

/// The cache's entry files.
fn entries(cache: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for sub in std::fs::read_dir(cache).into_iter().flatten().flatten() {
        for file in std::fs::read_dir(sub.path()).into_iter().flatten().flatten() {
            if file.path().extension().is_some_and(|e| e == "bin") {
                files.push(file.path());
            }
        }
    }
    files.sort();
    files
}

fn stdout(o: &std::process::Output) -> Vec<u8> {
    o.stdout.clone()
}

#[test]
fn a_hit_gives_the_bytes_of_a_compile_and_other_options_miss() {
    let cache = temp_dir("hit");
    let uncached = tilec(&cache, &[GEMM, "--emit", "ptx", "--no-cache"], &[]);
    assert_ok(&uncached);
    assert!(entries(&cache).is_empty(), "--no-cache wrote {:?}", entries(&cache));

    let first = tilec(&cache, &[GEMM, "--emit", "ptx"], &[]);
    assert_ok(&first);
    assert_eq!(entries(&cache).len(), 1, "the first compile stores one entry");
    let hit = tilec(&cache, &[GEMM, "--emit", "ptx"], &[]);
    assert_ok(&hit);
    assert!(stdout(&hit) == stdout(&uncached), "a cache hit differs from a compile");
    assert!(stdout(&first) == stdout(&uncached), "the first compile differs from an uncached one");
    assert_eq!(entries(&cache).len(), 1, "a hit stores nothing new");

    // A different target, emit kind, level or backend is a different entry with that option's output.
    for (args, n) in [
        (vec![GEMM, "--emit", "ptx", "--target", "sm_90"], 2),
        (vec![GEMM, "--emit", "ptx", "--target", "sm90"], 2),
        (vec![GEMM, "--emit", "nvgpu"], 3),
        (vec![GEMM, "--emit", "ptx", "-O0"], 4),
        (vec![GEMM, "--emit", "ptx", "--backend", "mlir"], 5),
    ] {
        let cached = tilec(&cache, &args, &[]);
        assert_ok(&cached);
        let mut fresh_args = args.clone();
        fresh_args.push("--no-cache");
        let fresh = tilec(&cache, &fresh_args, &[]);
        assert_ok(&fresh);
        assert!(stdout(&cached) == stdout(&fresh), "{args:?}: output differs from an uncached compile");
        assert!(stdout(&cached) != stdout(&uncached), "{args:?} served the sm_80 -O3 PTX");
        assert_eq!(entries(&cache).len(), n, "{args:?}: entries");
    }
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn a_damaged_entry_is_a_miss_and_is_replaced() {
    let cache = temp_dir("damaged");
    let fresh = tilec(&cache, &[GEMM, "--emit", "nvgpu"], &[]);
    assert_ok(&fresh);
    let [entry] = entries(&cache).try_into().unwrap_or_else(|e| panic!("entries: {e:?}"));
    for damage in [b"garbage".to_vec(), Vec::new(), {
        let mut bytes = std::fs::read(&entry).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x20;
        bytes
    }] {
        std::fs::write(&entry, &damage).unwrap();
        let o = tilec(&cache, &[GEMM, "--emit", "nvgpu"], &[]);
        assert_ok(&o);
        assert!(stderr(&o).is_empty(), "a damaged entry printed: {}", stderr(&o));
        assert!(stdout(&o) == stdout(&fresh), "a damaged entry was served");
        assert_ne!(std::fs::read(&entry).unwrap(), damage, "the damaged entry was not replaced");
    }
    // An unreadable entry (a directory in its place) is a miss too, and the compile still succeeds.
    std::fs::remove_file(&entry).unwrap();
    std::fs::create_dir(&entry).unwrap();
    let o = tilec(&cache, &[GEMM, "--emit", "nvgpu"], &[]);
    assert_ok(&o);
    assert!(stdout(&o) == stdout(&fresh), "an unreadable entry was served");
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn disabled_and_bypassing_runs_leave_the_cache_alone() {
    let cache = temp_dir("disabled");
    for (args, env) in [
        (vec![GEMM, "--emit", "nvgpu", "--no-cache"], vec![]),
        (vec![GEMM, "--emit", "nvgpu"], vec![("TILEC_CACHE", "0")]),
        (vec![GEMM, "--emit", "nvgpu", "--timing"], vec![]),
        (vec![GEMM, "--emit", "nvgpu", "--remarks"], vec![]),
        (vec![GEMM, "--emit", "nvgpu", "--print-ir-after", "cse"], vec![]),
    ] {
        let o = tilec(&cache, &args, &env);
        assert_ok(&o);
        assert!(entries(&cache).is_empty(), "{args:?} {env:?} wrote to the cache");
    }
    // A run with --timing after a cached compile still prints its table (it compiles).
    assert_ok(&tilec(&cache, &[GEMM, "--emit", "nvgpu"], &[]));
    let timed = tilec(&cache, &[GEMM, "--emit", "nvgpu", "--timing"], &[]);
    assert_ok(&timed);
    assert!(stderr(&timed).contains("Total"), "no timing table: {}", stderr(&timed));
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn errors_are_not_cached() {
    let cache = temp_dir("errors");
    let input = "tests/diagnostics/parser/undefined_value.tir";
    for _ in 0..2 {
        let o = tilec(&cache, &[input, "--emit", "ptx"], &[]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("error"), "{}", stderr(&o));
    }
    assert!(entries(&cache).is_empty(), "an error was cached: {:?}", entries(&cache));
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn the_manifest_is_cached_beside_the_output() {
    let cache = temp_dir("manifest");
    let out = cache.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let (ptx, json) = (out.join("gemm.ptx"), out.join("gemm.json"));
    let args = [GEMM, "--emit", "ptx", "-o", ptx.to_str().unwrap(), "--manifest", json.to_str().unwrap()];
    assert_ok(&tilec(&cache, &args, &[]));
    let (ptx1, json1) = (std::fs::read(&ptx).unwrap(), std::fs::read(&json).unwrap());
    std::fs::remove_file(&ptx).unwrap();
    std::fs::remove_file(&json).unwrap();
    assert_ok(&tilec(&cache, &args, &[]));
    assert!(std::fs::read(&ptx).unwrap() == ptx1, "the cached PTX differs");
    assert!(std::fs::read(&json).unwrap() == json1, "the cached manifest differs");
    let _ = std::fs::remove_dir_all(&cache);
}
