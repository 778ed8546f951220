//! Running the real `tilec` binary from integration tests (`cli.rs`, `bench.rs`, `tune.rs`).
//!
//! The binary is `$TILEC` when set (the Makefile sets it), else `tilec` beside the running test's target
//! directory (`target/<profile>/tilec`), else one built into `target/<profile>/cli-tests/` on first use.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use crate::repo_root;

/// The `tilec` binary to test.
pub fn tilec() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("TILEC").map(PathBuf::from).filter(|p| p.is_file()) {
            return p;
        }
        // A test runs from target/<profile>/deps/<name>-<hash>.
        let exe = std::env::current_exe().unwrap_or_else(|e| panic!("current_exe: {e}"));
        let profile_dir = exe.parent().and_then(Path::parent).map(Path::to_path_buf).unwrap_or_default();
        let sibling = profile_dir.join("tilec");
        if sibling.is_file() {
            return sibling;
        }
        // Not built by this `cargo test`: build it in a separate target directory (the outer cargo holds
        // the lock of this one).
        let release = profile_dir.file_name().is_some_and(|n| n == "release");
        let dir = profile_dir.join("cli-tests");
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["build", "-q", "-p", "tilec", "--bin", "tilec", "--manifest-path"]).arg(repo_root().join("Cargo.toml"));
        cmd.env("CARGO_TARGET_DIR", &dir);
        if release {
            cmd.arg("--release");
        }
        let status = cmd.status().unwrap_or_else(|e| panic!("cargo build -p tilec: {e}"));
        assert!(status.success(), "cargo build -p tilec failed; build it or set TILEC");
        dir.join(if release { "release" } else { "debug" }).join("tilec")
    })
}

/// `tilec ARGS` from the repository root, no standard input, without colour or backtraces, and without
/// the on-disk cache (`TILEC_CACHE=0`: every run compiles, and tests write nothing under `$HOME`).
pub fn run(args: &[&str]) -> Output {
    run_with_stdin(args, None)
}

/// [`run`] with `stdin` piped in.
pub fn run_with_stdin(args: &[&str], stdin: Option<&[u8]>) -> Output {
    run_with_env(args, stdin, &[("TILEC_CACHE", "0")])
}

/// [`run_with_stdin`] with the environment variables `env` set (and no others changed: the cache is on
/// unless `env` turns it off).
pub fn run_with_env(args: &[&str], stdin: Option<&[u8]>, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(tilec());
    cmd.args(args).current_dir(repo_root()).env("NO_COLOR", "1").env_remove("RUST_BACKTRACE");
    cmd.env_remove("TILEC_CACHE").env_remove("TILEC_CACHE_DIR").envs(env.iter().copied());
    cmd.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() }).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("spawn {}: {e}", tilec().display()));
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let _ = pipe.write_all(bytes);
    }
    child.wait_with_output().unwrap_or_else(|e| panic!("wait: {e}"))
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Success (exit 0); the stderr is shown otherwise.
#[track_caller]
pub fn assert_ok(o: &Output) {
    assert_eq!(o.status.code(), Some(0), "exit status {:?}, stderr:\n{}", o.status, stderr(o));
}

/// A failure as the design asks: the exit code, a message on stderr containing `needle`, no panic.
#[track_caller]
pub fn assert_fails(o: &Output, code: i32, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "exit status {:?}, stderr:\n{err}", o.status);
    assert!(!err.trim().is_empty(), "no message on stderr");
    assert!(err.contains(needle), "stderr lacks {needle:?}:\n{err}");
    assert_no_panic(o);
}

/// Neither a panic (exit 101, a panic message) nor death by a signal.
#[track_caller]
pub fn assert_no_panic(o: &Output) {
    let err = stderr(o);
    assert_ne!(o.status.code(), Some(101), "exit code 101 (a panic):\n{err}");
    assert!(o.status.code().is_some(), "killed by a signal: {:?}\n{err}", o.status);
    for bad in ["panicked", "RUST_BACKTRACE", "stack backtrace"] {
        assert!(!err.contains(bad), "stderr contains {bad:?}:\n{err}");
    }
}

/// A fresh, empty `tilec-{suite}-{name}-{pid}` directory under the system's temporary directory.
pub fn temp_dir(suite: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tilec-{suite}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("mkdir {}: {e}", dir.display()));
    dir
}
