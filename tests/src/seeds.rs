//! The seed documents `shared/seeds/000_*.txt` (ldmatrix/stmatrix) and `002_*.txt` (mma.sync): their printed
//! tables parsed (never retyped), and which of them each program of `examples/seeds/` takes as inputs and
//! must reproduce as outputs.
//!
//! This is the one copy of that knowledge. `tilec-tests` exports it as `tilec_tests::seeds` (the
//! `seed-inputs` binary writes the files of the GPU suite from it), and `ir/tests/sim_seeds.rs` includes this
//! file with `#[path]` (the simulator's golden tests): so the GPU is compared with exactly the tables the
//! simulator is. It uses only `std`, so that it compiles in both crates.
//!
//! Malformed seed documents are reported by panics that name the table (these are test data).

use std::path::{Path, PathBuf};

// ---- reading the documents ----------------------------------------------------------------------------------

/// `shared/seeds/` beside the repository (`/work/shared/seeds` for `/work/main`). Both crates that compile this
/// file sit one directory below the repository root.
pub fn default_seeds_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/seeds"))
}

/// `examples/seeds/` of the repository.
pub fn default_programs_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/seeds"))
}

/// The text of the first `{prefix}_*.txt` in `dir`.
pub fn read_seed(dir: &Path, prefix: &str) -> Result<String, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        format!("the seed documents are missing: cannot read {} ({e}); shared/seeds/ must be beside the repository", dir.display())
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&format!("{prefix}_")) && n.ends_with(".txt")))
        .collect();
    paths.sort();
    let path = paths.first().ok_or_else(|| format!("no seed file {prefix}_*.txt in {}", dir.display()))?;
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// The numbers of a line made only of numbers, or `None`.
pub fn numbers(line: &str) -> Option<Vec<f64>> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    if tokens.is_empty() {
        return None;
    }
    tokens.iter().map(|t| t.parse::<f64>().ok()).collect()
}

/// The consecutive number lines right after the line at byte `pos` (a header).
pub fn matrix_after(text: &str, pos: usize) -> Vec<Vec<f64>> {
    let rest = &text[pos..];
    let mut rows = Vec::new();
    for line in rest.lines().skip(1) {
        match numbers(line) {
            Some(row) => rows.push(row),
            None if rows.is_empty() && line.trim().is_empty() => continue,
            None => break,
        }
    }
    rows
}

/// Byte offsets of every occurrence of `needle`.
pub fn positions(text: &str, needle: &str) -> Vec<usize> {
    text.match_indices(needle).map(|(i, _)| i).collect()
}

/// `thread=T, val=a b ...` lines, in order: (lane, values).
pub fn thread_lines(text: &str) -> LanePrints {
    text.lines()
        .filter_map(|l| {
            let l = l.trim().strip_prefix("thread=")?;
            let (t, v) = l.split_once(", val=")?;
            Some((t.trim().parse().ok()?, numbers(v)?))
        })
        .collect()
}

/// A matrix's rows one after the other.
pub fn flat(m: &[Vec<f64>]) -> Vec<f64> {
    m.iter().flatten().copied().collect()
}

/// Per-lane prints `thread=T, val=...`: (lane, values), in document order.
pub type LanePrints = Vec<(usize, Vec<f64>)>;

/// Per-lane prints as a lane-major `32 x width` table (lanes in order 0..31).
pub fn lanes_flat(lanes: &[(usize, Vec<f64>)]) -> Vec<f64> {
    let mut sorted: Vec<&(usize, Vec<f64>)> = lanes.iter().collect();
    sorted.sort_by_key(|(lane, _)| *lane);
    let order: Vec<usize> = sorted.iter().map(|(lane, _)| *lane).collect();
    assert_eq!(order, (0..32).collect::<Vec<_>>(), "per-lane prints: lanes 0..31 once each");
    sorted.iter().flat_map(|(_, v)| v.iter().copied()).collect()
}

// ---- seed 000: ldmatrix / stmatrix --------------------------------------------------------------------------

/// One printed experiment of seed 000.
#[derive(Clone, Debug)]
pub struct Experiment {
    pub m: usize,
    pub n: usize,
    /// "The logical shape of A:" (the input, m x n).
    pub a: Vec<Vec<f64>>,
    /// "The copy result of B:" (the output, m x n).
    pub b: Vec<Vec<f64>>,
}

#[derive(Clone, Debug)]
pub struct LdmatrixSeed {
    /// In document order: x1, x2, x4, x4.trans, stmatrix.
    pub experiments: Vec<Experiment>,
    /// The per-lane prints `thread=T, val=...` of x1 (2 values a lane) ...
    pub x1_lanes: LanePrints,
    /// ... and of x4 (8 values a lane).
    pub x4_lanes: LanePrints,
}

/// Parses seed 000's tables.
pub fn ldmatrix_seed(text: &str) -> LdmatrixSeed {
    let mut experiments = Vec::new();
    for pos in positions(text, "\nm = ") {
        let line = text[pos + 1..].lines().next().unwrap_or("");
        let Some((m, n)) = line.strip_prefix("m = ").and_then(|r| r.split_once(", n = ")) else { continue };
        let (m, n): (usize, usize) = (m.trim().parse().expect("m"), n.trim().parse().expect("n"));
        let a_at = pos + text[pos..].find("The logical shape of A:").expect("logical A after m, n");
        let b_at = pos + text[pos..].find("The copy result of B:").expect("copy result after m, n");
        let (a, b) = (matrix_after(text, a_at), matrix_after(text, b_at));
        assert_eq!((a.len(), a[0].len(), b.len(), b[0].len()), (m, n, m, n), "seed 000 table m = {m}, n = {n}");
        experiments.push(Experiment { m, n, a, b });
    }
    let shapes: Vec<(usize, usize)> = experiments.iter().map(|e| (e.m, e.n)).collect();
    assert_eq!(shapes, [(8, 8), (16, 8), (16, 16), (16, 16), (16, 16)], "seed 000 holds x1, x2, x4, x4.trans, stmatrix");
    let threads = thread_lines(text);
    assert_eq!(threads.len(), 64, "seed 000 prints 32 lanes for x1 and 32 for x4");
    let (x1, x4) = threads.split_at(32);
    assert!(x1.iter().all(|(_, v)| v.len() == 2) && x4.iter().all(|(_, v)| v.len() == 8));
    LdmatrixSeed { experiments, x1_lanes: x1.to_vec(), x4_lanes: x4.to_vec() }
}

// ---- seed 002: mma.sync -------------------------------------------------------------------------------------

/// One printed result of seed 002 with the nearest inputs printed before it.
#[derive(Clone, Debug)]
pub struct MmaSeed {
    pub a_phys: Vec<f64>,
    pub b_phys: Vec<f64>,
    pub a_logical: Vec<Vec<f64>>,
    pub b_logical: Vec<Vec<f64>>,
    pub c: Vec<Vec<f64>>,
}

/// The five printed results, in document order: m8n8k4 .row.col (A row-major), .row.col (A col-major,
/// B row-major), .col.row, m16n8k8, m16n8k16; each with the nearest preceding inputs.
pub fn mma_seed(text: &str) -> Vec<MmaSeed> {
    let last_before = |needle: &str, pos: usize| -> usize {
        text[..pos].rfind(needle).unwrap_or_else(|| panic!("no '{needle}' before the result at byte {pos}"))
    };
    positions(text, "The result of C:")
        .into_iter()
        .map(|pos| {
            let one = |needle: &str| flat(&matrix_after(text, last_before(needle, pos)));
            MmaSeed {
                a_phys: one("The physical order of A:"),
                b_phys: one("The physical order of B:"),
                a_logical: matrix_after(text, last_before("The logical shape of A:", pos)),
                b_logical: matrix_after(text, last_before("The logical shape of B:", pos)),
                c: matrix_after(text, pos),
            }
        })
        .collect()
}

/// The programs of seed 002, in the document's order: (file, m, k, n).
pub const MMA_PROGRAMS: [(&str, usize, usize, usize); 5] = [
    ("mma_m8n8k4_row_col.tir", 8, 4, 8),
    ("mma_m8n8k4_row_col_acol_brow.tir", 8, 4, 8),
    ("mma_m8n8k4_col_row.tir", 8, 4, 8),
    ("mma_m16n8k8.tir", 16, 8, 8),
    ("mma_m16n8k16.tir", 16, 16, 8),
];

// ---- the programs: their arguments, inputs and golden outputs -----------------------------------------------

/// Printed values an output argument must reproduce bit for bit, in its row-major order.
#[derive(Clone, Debug)]
pub struct Golden {
    /// Which table of which seed, in words.
    pub table: String,
    pub values: Vec<f64>,
}

/// One tensor argument of a seed program.
#[derive(Clone, Debug)]
pub struct SeedArg {
    /// The argument's name in the `.tir` (without `%`).
    pub name: &'static str,
    /// Element type name as the IR spells it (`f16`, `f32`).
    pub elem: &'static str,
    pub shape: Vec<usize>,
    /// Its contents before the kernel runs: the seed's input matrix, or zeros for a result buffer.
    pub init: Vec<f64>,
    /// The seed table `init` comes from; `None` for zeros.
    pub input_table: Option<String>,
    /// The printed values it must hold afterwards; `None` where the seed prints nothing for it.
    pub golden: Option<Golden>,
}

/// A program of `examples/seeds/` with its arguments in the kernel's order.
#[derive(Clone, Debug)]
pub struct SeedProgram {
    /// File name in `examples/seeds/`.
    pub file: &'static str,
    /// `000` or `002`.
    pub seed: &'static str,
    pub args: Vec<SeedArg>,
}

impl SeedProgram {
    /// `ldmatrix_x1` for `ldmatrix_x1.tir`.
    pub fn stem(&self) -> &'static str {
        self.file.strip_suffix(".tir").unwrap_or(self.file)
    }
}

fn input(name: &'static str, elem: &'static str, shape: &[usize], values: Vec<f64>, table: String) -> SeedArg {
    assert_eq!(values.len(), shape.iter().product::<usize>(), "{table}: {} values for %{name} of shape {shape:?}", values.len());
    SeedArg { name, elem, shape: shape.to_vec(), init: values, input_table: Some(table), golden: None }
}

fn output(name: &'static str, elem: &'static str, shape: &[usize], golden: Option<(String, Vec<f64>)>) -> SeedArg {
    let n: usize = shape.iter().product();
    if let Some((table, values)) = &golden {
        assert_eq!(values.len(), n, "{table}: the seed prints {} values, %{name} of shape {shape:?} holds {n}", values.len());
    }
    SeedArg {
        name,
        elem,
        shape: shape.to_vec(),
        init: vec![0.0; n],
        input_table: None,
        golden: golden.map(|(table, values)| Golden { table, values }),
    }
}

/// Every program of `examples/seeds/`, with the seed's inputs and golden outputs, from the seed documents in
/// `dir`. The seed kernels' result buffers are passed in zeroed.
pub fn seed_programs(dir: &Path) -> Result<Vec<SeedProgram>, String> {
    let mut programs = Vec::new();

    let seed = ldmatrix_seed(&read_seed(dir, "000")?);
    let e = &seed.experiments;
    let a_table = |i: usize, what: &str| format!("seed 000 {what}: \"The logical shape of A\" (m = {}, n = {})", e[i].m, e[i].n);
    let b_table = |i: usize, what: &str| format!("seed 000 {what}: \"The copy result of B\" (m = {}, n = {})", e[i].m, e[i].n);
    let ld = |file: &'static str, i: usize, what: &str, width: usize, lanes: Option<(&str, &LanePrints)>, d_shape: &[usize]| {
        let n = e[i].m * e[i].n;
        SeedProgram {
            file,
            seed: "000",
            args: vec![
                input("S", "f16", &[n], flat(&e[i].a), a_table(i, what)),
                output("regs", "f16", &[32, width], lanes.map(|(t, l)| (t.to_string(), lanes_flat(l)))),
                output("D", "f16", d_shape, Some((b_table(i, what), flat(&e[i].b)))),
            ],
        }
    };
    programs.push(ld(
        "ldmatrix_x1.tir",
        0,
        "ldmatrix .x1",
        2,
        Some(("seed 000 ldmatrix .x1: per-lane \"thread=T, val=...\" (32 lanes x 2)", &seed.x1_lanes)),
        &[8, 8],
    ));
    programs.push(ld("ldmatrix_x2.tir", 1, "ldmatrix .x2", 4, None, &[16, 8]));
    programs.push(ld(
        "ldmatrix_x4.tir",
        2,
        "ldmatrix .x4",
        8,
        Some(("seed 000 ldmatrix .x4: per-lane \"thread=T, val=...\" (32 lanes x 8)", &seed.x4_lanes)),
        &[16, 16],
    ));
    programs.push(ld("ldmatrix_x4_trans.tir", 3, "ldmatrix .x4.trans", 8, None, &[16, 16]));
    programs.push(ld("stmatrix_x4.tir", 4, "stmatrix .x4", 8, None, &[256]));

    let results = mma_seed(&read_seed(dir, "002")?);
    if results.len() != MMA_PROGRAMS.len() {
        return Err(format!("seed 002 prints {} results of C, expected {}", results.len(), MMA_PROGRAMS.len()));
    }
    for (i, (r, (file, m, k, n))) in results.iter().zip(MMA_PROGRAMS).enumerate() {
        let what = format!("{} (result #{} of the document)", file.trim_end_matches(".tir"), i + 1);
        let width = if m == 8 { 8 } else { 4 };
        programs.push(SeedProgram {
            file,
            seed: "002",
            args: vec![
                input("A", "f16", &[m * k], r.a_phys.clone(), format!("seed 002 {what}: \"The physical order of A\"")),
                input("B", "f16", &[k * n], r.b_phys.clone(), format!("seed 002 {what}: \"The physical order of B\"")),
                output("regs", "f32", &[32, width], None),
                output("C", "f32", &[m, n], Some((format!("seed 002 {what}: \"The result of C\" ({m}x{n})"), flat(&r.c)))),
            ],
        });
    }
    Ok(programs)
}
