//! `tilec tune` / `tilec-gpu-runner tune`: timing the candidate attribute sets of one kernel.
//!
//! Two kinds of candidate, one ranking: a GEMM's (a bench bundle, `bench.json`: checked against cuBLAS and
//! timed beside it, below), and any other kernel's ([`TuneWork::Kernel`]: a timing bundle, `bundle.json` with
//! inputs made from its seed, timed by [`crate::run_bundle`]; its numerics are not checked here — `tilec
//! bundle` with the oracle, or a harness with its own reference such as `scripts/bench_attention.py`, does
//! that — so its records say `not checked`). A kernel's records carry its arguments' shapes instead of M, N, K.
//!
//! `tilec tune FILE --shape M,N,K --bundle DIR` compiles the kernel once per candidate (a set of function
//! attributes: `pipeline_stages`, `num_warps`, `fragments_ahead`) and writes each as a bench bundle
//! (`bench.json` and the PTX, see [`crate::bench::spec`]) with a [`TUNE_JSON`] beside it naming the candidate
//! ([`Candidate`]). `tilec-gpu-runner tune DIR...` runs them here with a progress bar; `tilec tune` without
//! `--bundle` runs the same [`run_jobs`] in its own process on a machine that has both a GPU and the compiler.
//!
//! Every candidate is benchmarked exactly as `tilec bench` does ([`crate::bench::run`]): its result is checked
//! against cuBLAS's on the same inputs and cuBLAS is timed beside it. Checking every candidate rather than
//! only the winner costs about a second of host work per candidate at 4096^3, and it means a candidate whose
//! code is wrong is ranked out instead of winning. The records ([`TuneRecord`], one JSON line per candidate)
//! carry the candidate's attributes and median time; `tilec tune FILE --results RECORDS` writes the fastest
//! candidate that checked as attributes on the kernel.
//!
//! The progress bar is indicatif's, chosen over a hand-written `\r` line because it draws only when stderr is a
//! terminal (hidden in logs and pipes, so captured output holds just the per-candidate lines), redraws at a
//! bounded rate with an ETA, and lets lines be printed above the bar without tearing it (`suspend`). With
//! default features off it brings only `console`, `portable-atomic` and `unit-prefix`, nothing that needs a
//! compiler or a library on the GPU machine; the runner grew from 1.12 MB to 1.41 MB with it and this module.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaStream};
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};

use crate::bench::{self, BenchBundle, BenchOutcome, Cublas};
use crate::{Buffer, Bundle, Param, RunError, RunRecord};

/// The file beside `bench.json` that makes a bench bundle a tune candidate.
pub const TUNE_JSON: &str = "tune.json";

/// A function attribute's value as a candidate sets it: an integer, a bool, a list of integers (such as
/// `warp_tile`) or a string (`mma = "wgmma"`, `copy_g2s = "cp_async"`); plain JSON numbers, bools, arrays and
/// strings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AttrValue {
    Bool(bool),
    Int(i64),
    List(Vec<i64>),
    Str(String),
}

impl fmt::Display for AttrValue {
    /// As the IR writes it: `true`, `4`, `[16, 32]`, `"wgmma"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttrValue::Bool(b) => write!(f, "{b}"),
            AttrValue::Int(n) => write!(f, "{n}"),
            AttrValue::List(items) => write!(f, "[{}]", items.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")),
            AttrValue::Str(text) => write!(f, "{text:?}"),
        }
    }
}

/// One candidate configuration of a kernel: what [`TUNE_JSON`] holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// A short name, e.g. `s4_w8_fon` (unique within one tune run).
    pub name: String,
    /// The kernel function in the source (`@gemm`, without the `@`).
    pub func: String,
    /// The source file the kernel came from, and the backend and target, for the report.
    pub source: String,
    /// The function attributes set for this candidate, by name.
    pub attrs: BTreeMap<String, AttrValue>,
    /// Registers per thread, when ptxas assembled the PTX where it was compiled.
    #[serde(default)]
    pub registers: Option<u32>,
    /// Bytes of register spills (stores + loads) per thread, when ptxas assembled it.
    #[serde(default)]
    pub spill_bytes: Option<u32>,
}

impl Candidate {
    /// `fragments_ahead=true num_warps=8 pipeline_stages=4`.
    pub fn attrs_text(&self) -> String {
        attrs_text(&self.attrs)
    }
}

/// The attributes as `name=value` words, sorted by name.
pub fn attrs_text(attrs: &BTreeMap<String, AttrValue>) -> String {
    attrs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
}

/// One candidate to run: what to run and its attributes.
#[derive(Clone, Debug)]
pub struct TuneJob {
    pub candidate: Candidate,
    pub work: TuneWork,
    /// Where it came from (a bundle directory, or the candidate's name when compiled in this process).
    pub origin: String,
}

/// What a candidate runs.
#[derive(Clone, Debug)]
pub enum TuneWork {
    /// A GEMM: a bench bundle and its PTX (checked against cuBLAS, timed beside it).
    Gemm { bundle: BenchBundle, ptx: String },
    /// Any kernel: a timing bundle directory (`bundle.json`, its PTX; inputs made from the seed).
    Kernel { dir: PathBuf, bundle: Bundle },
}

impl TuneJob {
    /// The PTX entry's name.
    pub fn kernel(&self) -> &str {
        match &self.work {
            TuneWork::Gemm { bundle, .. } => &bundle.kernel,
            TuneWork::Kernel { bundle, .. } => &bundle.kernel,
        }
    }
}

/// `Q=128x4096x64`: the arguments of a timing bundle with their shapes, from its buffers' descriptions.
pub fn argument_shapes(bundle: &Bundle) -> Vec<String> {
    bundle
        .params
        .iter()
        .filter_map(|p| match p {
            Param::Buffer(Buffer { tensor: Some(t), .. }) => {
                Some(format!("{}={}", t.name, t.shape.iter().map(u64::to_string).collect::<Vec<_>>().join("x")))
            }
            _ => None,
        })
        .collect()
}

/// What happened to one candidate: a JSON line of `--json` and of `tilec tune --results`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuneRecord {
    pub candidate: String,
    pub func: String,
    /// The PTX entry's name.
    pub kernel: String,
    pub source: String,
    pub attrs: BTreeMap<String, AttrValue>,
    /// The GEMM's shape (0 for other kernels).
    pub m: u64,
    pub n: u64,
    pub k: u64,
    /// Other kernels: the arguments' shapes (`Q=128x4096x64`, ...); empty for GEMMs.
    #[serde(default)]
    pub shapes: Vec<String>,
    /// Median of the timed launches; `None` when the candidate did not run.
    pub median_ms: Option<f64>,
    pub min_ms: Option<f64>,
    /// Throughput at the median, in `unit`.
    pub rate: Option<f64>,
    /// `TF/s`, or `TOP/s` for integer GEMMs.
    pub unit: String,
    pub cublas_ms: Option<f64>,
    /// tilec's throughput over cuBLAS's.
    pub ratio: Option<f64>,
    /// `ok`, `failed` (differs from cuBLAS), `not checked` (cuBLAS could not run it), `error` (did not run:
    /// load or launch failed) or `not run` (the GPU context was unusable after an earlier candidate's fault).
    pub check: String,
    /// The check's summary, or the error.
    pub detail: String,
    #[serde(default)]
    pub registers: Option<u32>,
    #[serde(default)]
    pub spill_bytes: Option<u32>,
    #[serde(default)]
    pub gpu: String,
}

impl TuneRecord {
    /// Whether the candidate ran and may win: timed, and its result not found wrong.
    pub fn usable(&self) -> bool {
        self.median_ms.is_some_and(f64::is_finite) && (self.check == "ok" || self.check == "not checked")
    }

    /// The shape the record is for: `MxNxK`, or the arguments' shapes.
    pub fn shape_text(&self) -> String {
        if self.shapes.is_empty() {
            format!("{}x{}x{}", self.m, self.n, self.k)
        } else {
            self.shapes.join(" ")
        }
    }

    fn new(job: &TuneJob, check: &str, detail: String) -> TuneRecord {
        let c = &job.candidate;
        let (m, n, k, shapes, integer) = match &job.work {
            TuneWork::Gemm { bundle, .. } => (bundle.gemm.m, bundle.gemm.n, bundle.gemm.k, Vec::new(), bundle.gemm.integer()),
            TuneWork::Kernel { bundle, .. } => (0, 0, 0, argument_shapes(bundle), false),
        };
        TuneRecord {
            candidate: c.name.clone(),
            func: c.func.clone(),
            kernel: job.kernel().to_string(),
            source: c.source.clone(),
            attrs: c.attrs.clone(),
            m,
            n,
            k,
            shapes,
            median_ms: None,
            min_ms: None,
            rate: None,
            unit: if integer { "TOP/s" } else { "TF/s" }.into(),
            cublas_ms: None,
            ratio: None,
            check: check.into(),
            detail,
            registers: c.registers,
            spill_bytes: c.spill_bytes,
            gpu: String::new(),
        }
    }

    fn from_outcome(job: &TuneJob, outcome: &BenchOutcome) -> TuneRecord {
        let r = &outcome.record;
        TuneRecord {
            median_ms: Some(r.tilec_ms),
            min_ms: Some(r.tilec_ms_min),
            rate: Some(r.tilec_tflops),
            unit: r.unit.clone(),
            cublas_ms: r.cublas_ms,
            ratio: r.ratio,
            gpu: r.gpu.clone(),
            ..TuneRecord::new(job, &r.check, r.check_detail.clone())
        }
    }

    fn from_run(job: &TuneJob, run: &RunRecord) -> TuneRecord {
        TuneRecord {
            median_ms: run.median_ms,
            min_ms: run.min_ms,
            rate: run.tflops,
            gpu: run.gpu.clone(),
            ..TuneRecord::new(job, "not checked", "timed only (no reference here)".into())
        }
    }

    /// The one-line report of a candidate, e.g. `s4_w8_fon: 0.318 ms 432.1 TF/s, 0.62x cuBLAS, check ok (...)`.
    pub fn line(&self) -> String {
        match (self.median_ms, self.rate) {
            (Some(ms), Some(rate)) => {
                let ratio = self.ratio.map(|r| format!(", {r:.2}x cuBLAS")).unwrap_or_default();
                format!("{}: {ms:.4} ms {rate:.1} {}{ratio}, check {} [{}]", self.candidate, self.unit, self.detail, attrs_text(&self.attrs))
            }
            _ => format!("{}: {}: {} [{}]", self.candidate, self.check, self.detail, attrs_text(&self.attrs)),
        }
    }
}

/// Reads one candidate bundle: `bench.json` and its PTX, or `bundle.json`; and [`TUNE_JSON`].
pub fn read_job(dir: &Path) -> Result<TuneJob, RunError> {
    let work = if dir.join(bench::BENCH_JSON).is_file() {
        let (bundle, ptx) = bench::read_bundle(dir)?;
        TuneWork::Gemm { bundle, ptx }
    } else {
        TuneWork::Kernel { dir: dir.to_path_buf(), bundle: crate::read_bundle_json(dir)? }
    };
    let path = dir.join(TUNE_JSON);
    let text = std::fs::read(&path).map_err(|e| RunError::Bundle(format!("{}: {e} (not a `tilec tune --bundle` candidate)", path.display())))?;
    let candidate: Candidate = serde_json::from_slice(&text).map_err(|e| RunError::Bundle(format!("{}: {e}", path.display())))?;
    Ok(TuneJob { candidate, work, origin: dir.display().to_string() })
}

/// The candidate directories named on the command line: a directory holding `bench.json` is one candidate; any
/// other (the `--bundle DIR` of `tilec tune`) stands for its subdirectories that hold a [`TUNE_JSON`], in name order.
pub fn expand_dirs(dirs: &[PathBuf]) -> Result<Vec<PathBuf>, RunError> {
    let mut out = Vec::new();
    for dir in dirs {
        if dir.join(bench::BENCH_JSON).is_file() || (dir.join(crate::BUNDLE_JSON).is_file() && dir.join(TUNE_JSON).is_file()) {
            out.push(dir.clone());
            continue;
        }
        let entries = std::fs::read_dir(dir).map_err(|e| RunError::Bundle(format!("{}: {e}", dir.display())))?;
        let mut found: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.join(TUNE_JSON).is_file()).collect();
        if found.is_empty() {
            return Err(RunError::Bundle(format!("{}: neither a candidate bundle nor a directory of them (no {} or */{TUNE_JSON})", dir.display(), bench::BENCH_JSON)));
        }
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

/// A progress bar on stderr over `len` candidates (drawn only when stderr is a terminal).
pub fn progress_bar(len: usize) -> ProgressBar {
    let bar = ProgressBar::new(len as u64);
    if let Ok(style) = ProgressStyle::with_template("tune [{bar:30}] {pos}/{len} {elapsed_precise} (eta {eta}) {msg}") {
        bar.set_style(style.progress_chars("=> "));
    }
    // A candidate takes seconds (PTX load, inputs, check, timing): keep the elapsed time moving meanwhile.
    bar.enable_steady_tick(std::time::Duration::from_millis(250));
    bar
}

/// Runs every job in order on one context (each as `tilec bench` runs a bundle), with a progress bar and a line
/// per candidate on stderr; returns one record per job, in order. A candidate that fails is recorded as such and
/// the others still run, except after a sticky kernel fault, which leaves the context unusable: the later
/// candidates are recorded as `not run` (run them again in a new process).
/// GEMM candidates need `cublas` (the others do not: `None` is fine when there are none).
pub fn run_jobs(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>, cublas: Option<&Cublas>, jobs: &[TuneJob]) -> Vec<TuneRecord> {
    let bar = progress_bar(jobs.len());
    let mut records = Vec::new();
    let mut poisoned: Option<&str> = None;
    for (i, job) in jobs.iter().enumerate() {
        bar.set_message(job.candidate.name.clone());
        let record = match poisoned {
            Some(culprit) => TuneRecord::new(job, "not run", format!("the GPU context is unusable after the fault in {culprit}")),
            None => match run_job(ctx, stream, cublas, job) {
                Ok(record) => record,
                Err(e) => {
                    if stream.synchronize().is_err() {
                        poisoned = Some(&job.candidate.name);
                    }
                    TuneRecord::new(job, "error", e.to_string())
                }
            },
        };
        bar.suspend(|| eprintln!("[{}/{}] {}", i + 1, jobs.len(), record.line()));
        bar.inc(1);
        records.push(record);
    }
    bar.finish_and_clear();
    records
}

/// Runs one candidate.
fn run_job(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>, cublas: Option<&Cublas>, job: &TuneJob) -> Result<TuneRecord, RunError> {
    match &job.work {
        TuneWork::Gemm { bundle, ptx } => {
            let cublas = cublas.ok_or_else(|| RunError::NoCublas("a GEMM candidate needs cuBLAS".into()))?;
            bench::run(ctx, stream, cublas, bundle, ptx.clone()).map(|outcome| TuneRecord::from_outcome(job, &outcome))
        }
        TuneWork::Kernel { dir, bundle } => {
            if bundle.repeat == 0 {
                return Err(RunError::Bundle(format!("{}: `repeat` is 0: nothing would be timed", dir.display())));
            }
            crate::run_bundle(ctx, stream, dir).map(|run| TuneRecord::from_run(job, &run))
        }
    }
}

/// The order of the ranking: usable records by median time (fastest first), then the others as they came.
pub fn ranking(records: &[TuneRecord]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..records.len()).collect();
    let key = |r: &TuneRecord| if r.usable() { r.median_ms.unwrap_or(f64::INFINITY) } else { f64::INFINITY };
    order.sort_by(|&a, &b| key(&records[a]).total_cmp(&key(&records[b])).then(a.cmp(&b)));
    order
}

/// The ranked table: one block per kernel and shape, fastest first; candidates that did not run or checked
/// wrong at the bottom, unranked.
pub fn table(records: &[TuneRecord]) -> String {
    // (kernel, shape) and the records of it, in ranking order.
    type Group = ((String, String), Vec<usize>);
    let mut groups: Vec<Group> = Vec::new();
    for i in ranking(records) {
        let r = &records[i];
        let key = (r.func.clone(), r.shape_text());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(i),
            None => groups.push((key, vec![i])),
        }
    }
    let mut out = String::new();
    for ((func, shape), members) in groups {
        let first = &records[members[0]];
        let gpu = if first.gpu.is_empty() { String::new() } else { format!(" on {}", first.gpu) };
        out.push_str(&format!("@{func} {shape}{gpu}: {} candidate(s)\n", members.len()));
        out.push_str(&format!(
            "{:>4}  {:<12} {:>10} {:>8} {:>9} {:>5}  {:<11} attributes\n",
            "rank",
            "candidate",
            "median ms",
            first.unit,
            // Only a GEMM's candidates run beside a reference library.
            if first.shapes.is_empty() { "vs cuBLAS" } else { "" },
            "regs",
            "check"
        ));
        let mut rank = 0;
        for i in members {
            let r = &records[i];
            let shown_rank = if r.usable() {
                rank += 1;
                rank.to_string()
            } else {
                "-".into()
            };
            let opt = |x: Option<f64>, digits: usize| x.map(|v| format!("{v:.digits$}")).unwrap_or_else(|| "-".into());
            let regs = match (r.registers, r.spill_bytes) {
                (Some(n), Some(s)) if s > 0 => format!("{n}+s"),
                (Some(n), _) => n.to_string(),
                _ => "-".into(),
            };
            out.push_str(&format!(
                "{shown_rank:>4}  {:<12} {:>10} {:>8} {:>9} {regs:>5}  {:<11} {}\n",
                r.candidate,
                opt(r.median_ms, 4),
                opt(r.rate, 1),
                opt(r.ratio, 2),
                r.check,
                attrs_text(&r.attrs)
            ));
        }
    }
    out
}

/// Appends the records as JSON lines to `path`.
pub fn append_records(path: &Path, records: &[TuneRecord]) -> Result<(), RunError> {
    let fail = |e: std::io::Error| RunError::Bundle(format!("{}: {e}", path.display()));
    let mut text = String::new();
    for r in records {
        text.push_str(&serde_json::to_string(r).map_err(|e| RunError::Bundle(format!("JSON: {e}")))?);
        text.push('\n');
    }
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(fail)?;
    file.write_all(text.as_bytes()).map_err(fail)
}

/// `tilec-gpu-runner tune DIR... [--json FILE]`: runs every candidate ([`expand_dirs`]) on GPU 0, prints the
/// ranked table on stdout and appends the records to `json`. An error when a candidate could not be read,
/// failed to run, or computed a wrong result (after the table and the records are written).
pub fn run_dirs(dirs: &[PathBuf], json: Option<&Path>) -> Result<(), RunError> {
    let dirs = expand_dirs(dirs)?;
    let mut jobs = Vec::new();
    let mut failed = 0;
    for dir in &dirs {
        match read_job(dir) {
            Ok(job) => jobs.push(job),
            Err(e) => {
                failed += 1;
                eprintln!("{}: error: {e}", dir.display());
            }
        }
    }
    let ctx = bench::open_bench_gpu()?;
    let stream = ctx.default_stream();
    // cuBLAS only when a GEMM candidate needs it (a machine without it still tunes other kernels).
    let cublas = if jobs.iter().any(|j| matches!(j.work, TuneWork::Gemm { .. })) { Some(Cublas::new(&stream)?) } else { None };
    let records = run_jobs(&ctx, &stream, cublas.as_ref(), &jobs);
    print!("{}", table(&records));
    if let Some(path) = json {
        append_records(path, &records)?;
    }
    failed += records.iter().filter(|r| !r.usable()).count();
    if failed > 0 {
        return Err(RunError::Bundle(format!("{failed} of {} candidate(s) failed to run or to check; the ranking holds the others", dirs.len())));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(name: &str, ms: Option<f64>, check: &str, warps: i64) -> TuneRecord {
        TuneRecord {
            candidate: name.into(),
            func: "gemm".into(),
            kernel: "gemm".into(),
            source: "gemm.tir".into(),
            attrs: [("num_warps".to_string(), AttrValue::Int(warps)), ("fragments_ahead".to_string(), AttrValue::Bool(true))].into(),
            m: 64,
            n: 64,
            k: 64,
            shapes: Vec::new(),
            median_ms: ms,
            min_ms: ms,
            rate: ms.map(|t| 1.0 / t),
            unit: "TF/s".into(),
            cublas_ms: None,
            ratio: None,
            check: check.into(),
            detail: String::new(),
            registers: Some(128),
            spill_bytes: Some(0),
            gpu: "GPU".into(),
        }
    }

    #[test]
    fn the_fastest_usable_record_ranks_first_and_wrong_ones_are_unranked() {
        let records = vec![
            record("a", Some(2.0), "ok", 4),
            record("b", Some(0.5), "failed", 4),
            record("c", Some(1.0), "ok", 8),
            record("d", None, "error", 8),
            record("e", Some(1.5), "not checked", 4),
        ];
        assert_eq!(ranking(&records), vec![2, 4, 0, 1, 3]);
        let t = table(&records);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("@gemm 64x64x64 on GPU: 5 candidate(s)"), "{t}");
        assert!(lines[2].trim_start().starts_with("1  c "), "{t}");
        assert!(lines[2].ends_with("fragments_ahead=true num_warps=8"), "{t}");
        assert!(lines[5].trim_start().starts_with("-  b "), "{t}");
    }

    #[test]
    fn records_and_candidates_round_trip_through_json() {
        let r = record("a", Some(2.0), "ok", 4);
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains(r#""attrs":{"fragments_ahead":true,"num_warps":4}"#), "{text}");
        assert_eq!(serde_json::from_str::<TuneRecord>(&text).unwrap(), r);
        // Attribute values are ints, bools, lists of ints or strings (written as the IR writes them).
        assert_eq!(serde_json::from_str::<AttrValue>("\"wgmma\"").unwrap(), AttrValue::Str("wgmma".into()));
        assert_eq!(AttrValue::Str("wgmma".into()).to_string(), "\"wgmma\"");
        assert!(serde_json::from_str::<AttrValue>("1.5").is_err());
        assert_eq!(serde_json::from_str::<AttrValue>("5").unwrap(), AttrValue::Int(5));
        assert_eq!(serde_json::from_str::<AttrValue>("[16, 32]").unwrap(), AttrValue::List(vec![16, 32]));
        assert_eq!(AttrValue::List(vec![16, 32]).to_string(), "[16, 32]");
        // Records written before `shapes` existed still read.
        let old = text.replace(r#""shapes":[],"#, "");
        assert_ne!(old, text);
        assert_eq!(serde_json::from_str::<TuneRecord>(&old).unwrap(), r);
    }

    #[test]
    fn kernel_records_group_by_their_argument_shapes() {
        let mut a = record("w4", Some(2.0), "not checked", 4);
        let mut b = record("w8", Some(1.0), "not checked", 8);
        let mut c = record("w8", Some(3.0), "not checked", 8);
        for r in [&mut a, &mut b, &mut c] {
            (r.m, r.n, r.k, r.func) = (0, 0, 0, "attention_fwd".into());
            r.shapes = vec!["Q=128x4096x64".into(), "K=64x524288".into()];
        }
        c.shapes = vec!["Q=16x16384x64".into(), "K=64x262144".into()];
        let records = vec![a, b, c];
        assert!(records.iter().all(TuneRecord::usable), "timed kernels may win though nothing checked them");
        let t = table(&records);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("@attention_fwd Q=128x4096x64 K=64x524288 on GPU: 2 candidate(s)"), "{t}");
        assert!(lines[2].trim_start().starts_with("1  w8 "), "{t}");
        assert!(lines[4].starts_with("@attention_fwd Q=16x16384x64 K=64x262144 on GPU: 1 candidate(s)"), "{t}");
    }

    #[test]
    fn a_directory_of_candidates_expands_to_its_candidates_in_order() {
        let root = std::env::temp_dir().join(format!("tilec-tune-expand-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for name in ["b_s3", "a_s2", "not_a_candidate"] {
            std::fs::create_dir_all(root.join(name)).unwrap();
        }
        std::fs::write(root.join("b_s3").join(TUNE_JSON), "{}").unwrap();
        std::fs::write(root.join("a_s2").join(TUNE_JSON), "{}").unwrap();
        assert_eq!(expand_dirs(&[root.clone()]).unwrap(), vec![root.join("a_s2"), root.join("b_s3")]);
        // A timing bundle with a tune.json is a candidate itself.
        std::fs::write(root.join("a_s2").join(crate::BUNDLE_JSON), "{}").unwrap();
        assert_eq!(expand_dirs(&[root.join("a_s2")]).unwrap(), vec![root.join("a_s2")]);
        assert!(expand_dirs(&[root.join("not_a_candidate")]).is_err());
        let _ = std::fs::remove_dir_all(&root);
    }
}
