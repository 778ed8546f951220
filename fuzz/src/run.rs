//! The fuzz loop: inputs made deterministically from `(seed, iteration)`, run through [`crate::check`],
//! findings saved (raw and minimised) under the crash directory, statistics counted.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::minimize::minimize;
use crate::mutate::{mutate, KEYWORD_SOUP, MAX_INPUT_BYTES};
use crate::rng::{fnv1a, Rng};
use crate::target::{check, Finding, FindingKind, Reached, TargetConfig};

/// The seed inputs: every `.tir` under `examples/`, `tests/diagnostics/` and `tests/fuzz-regressions/`
/// of the repository at `root`, sorted by path (so a run is reproducible from its seed). Inputs of bugs
/// still open (`tests/fuzz-regressions/open/`) are left out, so a bounded run stays about new bugs.
pub fn load_corpus(root: &Path) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    for dir in ["examples", "tests/diagnostics", "tests/fuzz-regressions"] {
        collect(&root.join(dir), &mut files);
    }
    files.sort();
    files.into_iter().filter_map(|p| std::fs::read_to_string(&p).ok().map(|t| (p, t))).collect()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "open") {
                continue;
            }
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "tir") {
            out.push(path);
        }
    }
}

/// The seed texts, and which of them parse and verify (most mutants of a valid program still reach the
/// passes and the interpreter; most mutants of the diagnostics corpus stop in the parser).
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    pub texts: Vec<String>,
    pub valid: Vec<usize>,
}

impl Corpus {
    pub fn new(texts: Vec<String>) -> Corpus {
        let valid = texts
            .iter()
            .enumerate()
            .filter(|(_, t)| tilec_ir::parse_module(t).is_ok_and(|m| tilec_ir::verify::verify_module(&m).is_ok()))
            .map(|(i, _)| i)
            .collect();
        Corpus { texts, valid }
    }

    fn pick(&self, rng: &mut Rng) -> &str {
        let index = if !self.valid.is_empty() && rng.below(4) != 0 {
            self.valid.get(rng.below(self.valid.len())).copied().unwrap_or(0)
        } else {
            rng.below(self.texts.len())
        };
        self.texts.get(index).map_or("", String::as_str)
    }
}

/// The input of one iteration: a corpus file (three times in four a valid program) mutated, sometimes
/// twice over, or now and then a soup of random tokens or bytes. Depends only on `seed`, `iteration` and
/// the corpus.
pub fn input_for(seed: u64, iteration: u64, corpus: &Corpus) -> String {
    let mut rng = Rng::for_iteration(seed, iteration);
    match rng.below(32) {
        0 => {
            let n = rng.below(64);
            let mut s = String::new();
            for _ in 0..n {
                if rng.one_in(3) {
                    s.push_str(tilec_ir::ops::OP_DEFS.get(rng.below(tilec_ir::ops::OP_DEFS.len())).map_or("tile.add", |d| d.name));
                } else {
                    s.push_str(KEYWORD_SOUP.get(rng.below(KEYWORD_SOUP.len())).copied().unwrap_or(" "));
                }
                s.push(if rng.one_in(4) { '\n' } else { ' ' });
            }
            s
        }
        1 => {
            let n = rng.below(256);
            let bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
            String::from_utf8_lossy(&bytes).into_owned()
        }
        _ => {
            let base = corpus.pick(&mut rng);
            let mut text = mutate(&mut rng, base, &corpus.texts);
            if rng.one_in(8) {
                text = mutate(&mut rng, &text, &corpus.texts);
            }
            text
        }
    }
}

/// Settings of a run.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub seed: u64,
    /// The first iteration (a resumed run starts past the input that aborted).
    pub start: u64,
    /// Stop after this many iterations...
    pub iterations: Option<u64>,
    /// ...or after this long, whichever comes first.
    pub duration: Option<Duration>,
    /// Where findings are written.
    pub crash_dir: PathBuf,
    /// Before each input runs, its iteration number and text are written here, so that a supervisor can
    /// recover the input that killed the process.
    pub state_file: Option<PathBuf>,
    pub target: TargetConfig,
    /// Candidates the minimiser may try per finding.
    pub minimize_budget: usize,
    /// Print a progress line this often.
    pub progress_every: Option<Duration>,
}

impl RunConfig {
    pub fn new(seed: u64, crash_dir: PathBuf) -> RunConfig {
        RunConfig {
            seed,
            start: 0,
            iterations: None,
            duration: None,
            crash_dir,
            state_file: None,
            target: TargetConfig::default(),
            minimize_budget: 400,
            progress_every: None,
        }
    }
}

/// A finding written to disk.
#[derive(Clone, Debug)]
pub struct SavedFinding {
    pub finding: Finding,
    pub iteration: u64,
    /// `<crash_dir>/<hash>.tir` (the input) and `<hash>.min.tir` (minimised).
    pub path: PathBuf,
    pub minimized_path: PathBuf,
    pub minimized: String,
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub iterations: u64,
    /// Inputs per stage reached: parse, verify, passes, executed.
    pub reached: [u64; 4],
    /// Inputs that found a bug (including repeats of a known one).
    pub failing_inputs: u64,
    /// One per distinct bug (kind and signature).
    pub findings: Vec<SavedFinding>,
    pub elapsed: Duration,
}

impl Stats {
    pub fn summary(&self) -> String {
        let secs = self.elapsed.as_secs_f64();
        let [p, v, s, e] = self.reached;
        format!(
            "{} iterations in {:.1} s ({:.0}/s); stopped at: parse {p}, verify {v}, passes {s}, executed {e}; {} failing input(s), {} distinct finding(s)",
            self.iterations,
            secs,
            self.iterations as f64 / secs.max(1e-9),
            self.failing_inputs,
            self.findings.len()
        )
    }
}

/// Runs the loop in this process.
pub fn fuzz(config: &RunConfig, corpus: &Corpus) -> Stats {
    let started = Instant::now();
    let mut stats = Stats::default();
    let mut seen: HashSet<(FindingKind, String)> = HashSet::new();
    let mut last_progress = Instant::now();
    let mut iteration = config.start;
    loop {
        let done = iteration - config.start;
        if config.iterations.is_some_and(|n| done >= n) || config.duration.is_some_and(|d| started.elapsed() >= d) {
            break;
        }
        let input = input_for(config.seed, iteration, corpus);
        if let Some(state) = &config.state_file {
            let _ = std::fs::write(state, format!("{iteration}\n{input}"));
        }
        match check(&input, &config.target) {
            Ok(reached) => {
                let slot = match reached {
                    Reached::Parse => 0,
                    Reached::Verify => 1,
                    Reached::Passes => 2,
                    Reached::Executed => 3,
                };
                stats.reached[slot] += 1;
            }
            Err(finding) => {
                stats.failing_inputs += 1;
                if seen.insert((finding.kind, finding.signature.clone())) {
                    eprintln!("tilec-fuzz: iteration {iteration}: {finding}");
                    let target = config.target;
                    let saved = save_finding(&config.crash_dir, &input, finding, iteration, config.minimize_budget, &mut |f, text| {
                        check(text, &target).err().is_some_and(|g| g.kind == f.kind && g.signature == f.signature)
                    });
                    eprintln!("tilec-fuzz:   saved {} and {}", saved.path.display(), saved.minimized_path.display());
                    stats.findings.push(saved);
                }
            }
        }
        stats.iterations += 1;
        iteration += 1;
        if let Some(every) = config.progress_every {
            if last_progress.elapsed() >= every {
                last_progress = Instant::now();
                stats.elapsed = started.elapsed();
                eprintln!("tilec-fuzz: at iteration {iteration}: {}", stats.summary());
            }
        }
    }
    stats.elapsed = started.elapsed();
    stats
}

/// Minimises an input that fails (per `still_fails`) and writes both versions plus a note to `dir`.
pub fn save_finding(
    dir: &Path,
    input: &str,
    finding: Finding,
    iteration: u64,
    budget: usize,
    still_fails: &mut dyn FnMut(&Finding, &str) -> bool,
) -> SavedFinding {
    let minimized = minimize(input, budget, &mut |text| text.len() <= MAX_INPUT_BYTES && still_fails(&finding, text));
    let hash = format!("{:016x}", fnv1a(input.as_bytes()));
    let path = dir.join(format!("{hash}.tir"));
    let minimized_path = dir.join(format!("{hash}.min.tir"));
    let note = dir.join(format!("{hash}.txt"));
    let _ = std::fs::create_dir_all(dir);
    let _ = std::fs::write(&path, input);
    let _ = std::fs::write(&minimized_path, &minimized);
    let _ = std::fs::write(&note, format!("iteration {iteration}\n{finding}\n"));
    SavedFinding { finding, iteration, path, minimized_path, minimized }
}
