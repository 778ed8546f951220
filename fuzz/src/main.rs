//! `tilec-fuzz [--iterations N] [--seconds S] [--seed N] [--root DIR] [--crash-dir DIR] [--in-process]`
//! `tilec-fuzz --exec FILE`       run the target once on a file (exit 0 ok, 1 finding)
//! `tilec-fuzz --minimize FILE`   minimise a failing file, print the result
//!
//! Exit codes: 0 no finding, 1 findings (saved under the crash directory), 2 bad usage.

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use tilec_fuzz::run::{fuzz, load_corpus, save_finding, Corpus, RunConfig, Stats};
use tilec_fuzz::{check, Finding, FindingKind, TargetConfig};

const USAGE: &str = "\
usage: tilec-fuzz [--iterations N] [--seconds S] [--seed N] [--root DIR] [--crash-dir DIR] [--in-process]
       tilec-fuzz --exec FILE
       tilec-fuzz --minimize FILE

Mutates every .tir under DIR/examples, DIR/tests/diagnostics and DIR/tests/fuzz-regressions (DIR defaults
to the repository tilec-fuzz was built in) and runs each input through lexer, parser, verifier, printer
round trip, interpreter, the pass pipelines and the simulator, catching panics; a supervisor process
catches aborts (stack overflows) too. Stops after N iterations or S seconds, whichever comes first
(default: 1000 iterations). Deterministic given --seed (default 0).

Findings are saved as CRASH_DIR/<hash>.tir, <hash>.min.tir (minimised) and <hash>.txt; CRASH_DIR defaults
to DIR/fuzz/crashes.

Exit codes: 0 no finding, 1 findings, 2 bad usage.";

struct Options {
    iterations: Option<u64>,
    seconds: Option<f64>,
    seed: u64,
    root: PathBuf,
    crash_dir: Option<PathBuf>,
    in_process: bool,
    worker: Option<(u64, PathBuf, PathBuf)>,
    exec: Option<PathBuf>,
    minimize: Option<PathBuf>,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        iterations: None,
        seconds: None,
        seed: 0,
        root: tilec_fuzz::default_root(),
        crash_dir: None,
        in_process: false,
        worker: None,
        exec: None,
        minimize: None,
    };
    let mut it = args.iter();
    let mut worker_start = None;
    let mut worker_state = None;
    let mut worker_stats = None;
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().cloned().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--iterations" => o.iterations = Some(value(a)?.parse().map_err(|_| "--iterations: not a number")?),
            "--seconds" => {
                let s: f64 = value(a)?.parse().map_err(|_| "--seconds: not a number")?;
                if !(s >= 0.0 && s.is_finite()) {
                    return Err("--seconds: not a non-negative number".into());
                }
                o.seconds = Some(s);
            }
            "--seed" => o.seed = value(a)?.parse().map_err(|_| "--seed: not a number")?,
            "--root" => o.root = PathBuf::from(value(a)?),
            "--crash-dir" => o.crash_dir = Some(PathBuf::from(value(a)?)),
            "--in-process" => o.in_process = true,
            "--exec" => o.exec = Some(PathBuf::from(value(a)?)),
            "--minimize" => o.minimize = Some(PathBuf::from(value(a)?)),
            // Internal: the supervisor's worker process.
            "--worker-start" => worker_start = Some(value(a)?.parse::<u64>().map_err(|_| "--worker-start: not a number")?),
            "--worker-state" => worker_state = Some(PathBuf::from(value(a)?)),
            "--worker-stats" => worker_stats = Some(PathBuf::from(value(a)?)),
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    if let (Some(start), Some(state), Some(stats)) = (worker_start, worker_state, worker_stats) {
        o.worker = Some((start, state, stats));
    }
    if o.iterations.is_none() && o.seconds.is_none() {
        o.iterations = Some(1000);
    }
    Ok(o)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match parse_args(&args) {
        Ok(o) => o,
        Err(message) if message.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("tilec-fuzz: error: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let crash_dir = options.crash_dir.clone().unwrap_or_else(|| options.root.join("fuzz").join("crashes"));
    let target = TargetConfig::default();

    if let Some(path) = &options.exec {
        let Ok(text) = std::fs::read_to_string(path) else {
            eprintln!("tilec-fuzz: error: cannot read {}", path.display());
            return ExitCode::from(2);
        };
        return match check(&text, &target) {
            Ok(reached) => {
                println!("ok: reached {reached:?}");
                ExitCode::SUCCESS
            }
            Err(finding) => {
                println!("finding: {finding}");
                ExitCode::from(1)
            }
        };
    }
    if let Some(path) = &options.minimize {
        let Ok(text) = std::fs::read_to_string(path) else {
            eprintln!("tilec-fuzz: error: cannot read {}", path.display());
            return ExitCode::from(2);
        };
        let Err(finding) = check(&text, &target) else {
            eprintln!("tilec-fuzz: {} does not fail (in-process); nothing to minimise", path.display());
            return ExitCode::from(1);
        };
        let out = tilec_fuzz::minimize::minimize(&text, 5000, &mut |t| {
            check(t, &target).err().is_some_and(|g| g.kind == finding.kind && g.signature == finding.signature)
        });
        eprintln!("tilec-fuzz: {finding}");
        print!("{out}");
        return ExitCode::SUCCESS;
    }

    let corpus = Corpus::new(load_corpus(&options.root).into_iter().map(|(_, t)| t).collect());
    if corpus.texts.is_empty() {
        eprintln!("tilec-fuzz: error: no .tir files under {}/examples or tests/diagnostics", options.root.display());
        return ExitCode::from(2);
    }
    let mut config = RunConfig::new(options.seed, crash_dir.clone());
    config.iterations = options.iterations;
    config.duration = options.seconds.map(Duration::from_secs_f64);
    config.progress_every = Some(Duration::from_secs(30));

    if let Some((start, state, stats_file)) = &options.worker {
        config.start = *start;
        config.state_file = Some(state.clone());
        let stats = fuzz(&config, &corpus);
        let _ = std::fs::write(stats_file, format!("{} {} {} {} {} {} {}\n", stats.iterations, stats.reached[0], stats.reached[1], stats.reached[2], stats.reached[3], stats.failing_inputs, stats.findings.len()));
        return if stats.findings.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) };
    }

    eprintln!("tilec-fuzz: seed {}, {} corpus files ({} valid) from {}, budget {}", options.seed, corpus.texts.len(), corpus.valid.len(), options.root.display(), budget_text(&options));
    if options.in_process {
        let stats = fuzz(&config, &corpus);
        eprintln!("tilec-fuzz: {}", stats.summary());
        return if stats.findings.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) };
    }
    supervise(&options, &config, &crash_dir)
}

fn budget_text(o: &Options) -> String {
    match (o.iterations, o.seconds) {
        (Some(n), Some(s)) => format!("{n} iterations or {s} s, whichever comes first"),
        (Some(n), None) => format!("{n} iterations"),
        (None, Some(s)) => format!("{s} s"),
        (None, None) => "unbounded".into(),
    }
}

/// Runs the loop in a worker process; when the worker dies (an abort: stack overflow, out of memory),
/// saves and minimises the input it was running and starts a new worker at the next iteration.
fn supervise(options: &Options, config: &RunConfig, crash_dir: &std::path::Path) -> ExitCode {
    let started = Instant::now();
    let Ok(exe) = std::env::current_exe() else {
        eprintln!("tilec-fuzz: error: cannot find my own executable; use --in-process");
        return ExitCode::from(2);
    };
    let _ = std::fs::create_dir_all(crash_dir);
    let state = crash_dir.join(format!(".state-{}", std::process::id()));
    let stats_file = crash_dir.join(format!(".stats-{}", std::process::id()));
    let mut total = Stats::default();
    let mut aborts = 0u64;
    let mut worker_findings = 0u64;
    let mut start = 0u64;
    loop {
        let remaining_iterations = options.iterations.map(|n| n.saturating_sub(start));
        let remaining_seconds = options.seconds.map(|s| (s - started.elapsed().as_secs_f64()).max(0.0));
        if remaining_iterations == Some(0) || remaining_seconds == Some(0.0) {
            break;
        }
        let _ = std::fs::remove_file(&stats_file);
        let mut cmd = Command::new(&exe);
        cmd.arg("--seed").arg(config.seed.to_string()).arg("--root").arg(&options.root).arg("--crash-dir").arg(crash_dir);
        cmd.arg("--worker-start").arg(start.to_string()).arg("--worker-state").arg(&state).arg("--worker-stats").arg(&stats_file);
        if let Some(n) = remaining_iterations {
            cmd.arg("--iterations").arg(n.to_string());
        }
        if let Some(s) = remaining_seconds {
            cmd.arg("--seconds").arg(format!("{s:.3}"));
        }
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                eprintln!("tilec-fuzz: error: cannot start a worker: {e}");
                return ExitCode::from(2);
            }
        };
        let status = match watch(&mut child, &state, HANG_SECONDS) {
            Watch::Exited(status) => status.to_string(),
            Watch::Hung => format!("no progress for {HANG_SECONDS} s: killed"),
        };
        if let Ok(text) = std::fs::read_to_string(&stats_file) {
            let n: Vec<u64> = text.split_whitespace().filter_map(|w| w.parse().ok()).collect();
            if let [it, p, v, s, e, failing, distinct] = n[..] {
                total.iterations += it;
                total.reached[0] += p;
                total.reached[1] += v;
                total.reached[2] += s;
                total.reached[3] += e;
                total.failing_inputs += failing;
                worker_findings += distinct;
            }
            break;
        }
        // No statistics: the worker died. Recover the input it was running.
        let Some((iteration, input)) = std::fs::read_to_string(&state).ok().and_then(|t| {
            let (first, rest) = t.split_once('\n')?;
            Some((first.parse::<u64>().ok()?, rest.to_string()))
        }) else {
            eprintln!("tilec-fuzz: error: the worker died ({status}) before running any input");
            return ExitCode::from(2);
        };
        aborts += 1;
        eprintln!("tilec-fuzz: iteration {iteration}: the worker died ({status})");
        let hung = status.starts_with("no progress");
        let kind = if hung { FindingKind::Hang } else { FindingKind::Abort };
        let finding = Finding { kind, message: format!("the process died: {status}"), signature: "process".into() };
        // Minimising a hang costs up to a few seconds per candidate: fewer candidates.
        let (budget, limit) = if hung { (40, 3.0) } else { (200, 30.0) };
        let saved = save_finding(crash_dir, &input, finding, iteration, budget, &mut |_, text| fails_in_child(&exe, crash_dir, text, limit, hung));
        eprintln!("tilec-fuzz:   saved {} and {}", saved.path.display(), saved.minimized_path.display());
        total.iterations += iteration + 1 - start;
        total.failing_inputs += 1;
        total.findings.push(saved);
        start = iteration + 1;
    }
    let _ = std::fs::remove_file(&state);
    let _ = std::fs::remove_file(&stats_file);
    total.elapsed = started.elapsed();
    eprintln!(
        "tilec-fuzz: {} iterations in {:.1} s ({:.0}/s); stopped at: parse {}, verify {}, passes {}, executed {}; {} failing input(s); {} distinct finding(s) ({aborts} abort(s) or hang(s), {worker_findings} in-process)",
        total.iterations,
        total.elapsed.as_secs_f64(),
        total.iterations as f64 / total.elapsed.as_secs_f64().max(1e-9),
        total.reached[0],
        total.reached[1],
        total.reached[2],
        total.reached[3],
        total.failing_inputs,
        aborts + worker_findings
    );
    if total.findings.is_empty() && worker_findings == 0 {
        ExitCode::SUCCESS
    } else {
        eprintln!("tilec-fuzz: findings are in {}", crash_dir.display());
        ExitCode::from(1)
    }
}

/// A worker makes no progress for this long: it is killed and its input saved as a hang.
const HANG_SECONDS: f64 = 20.0;

enum Watch {
    Exited(std::process::ExitStatus),
    Hung,
}

/// Waits for a worker, killing it when the iteration in its state file stays the same for `limit` seconds.
fn watch(child: &mut std::process::Child, state: &std::path::Path, limit: f64) -> Watch {
    let mut last = String::new();
    let mut since = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Watch::Exited(status),
            Ok(None) => {}
            Err(_) => {
                if let Ok(status) = child.wait() {
                    return Watch::Exited(status);
                }
            }
        }
        let now = std::fs::read_to_string(state).ok().and_then(|t| t.lines().next().map(str::to_string)).unwrap_or_default();
        if now != last {
            last = now;
            since = Instant::now();
        } else if since.elapsed().as_secs_f64() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Watch::Hung;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Whether `--exec` on `text` in a fresh process dies (for an abort) or runs past `limit` seconds (for a
/// hang): the oracle for minimising what kills the worker.
fn fails_in_child(exe: &std::path::Path, dir: &std::path::Path, text: &str, limit: f64, hang: bool) -> bool {
    let file = dir.join(format!(".candidate-{}.tir", std::process::id()));
    if std::fs::write(&file, text).is_err() {
        return false;
    }
    let child = Command::new(exe).arg("--exec").arg(&file).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn();
    let Ok(mut child) = child else { return false };
    let started = Instant::now();
    let result = loop {
        match child.try_wait() {
            Ok(Some(status)) => break !hang && status.code().is_none_or(|c| c != 0 && c != 1),
            Ok(None) if started.elapsed().as_secs_f64() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                break hang;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break false,
        }
    };
    let _ = std::fs::remove_file(&file);
    result
}
