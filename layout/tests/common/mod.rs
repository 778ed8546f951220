//! Reading the seed documents in `shared/seeds/` (beside the repository).
#![allow(dead_code)]

use std::path::PathBuf;

/// `shared/seeds/`, next to the repository checkout.
pub fn seed_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/seeds"))
}

/// The text of the seed whose file name starts with `prefix` (e.g. `"000_"`).
/// Panics with a clear message when the seeds are not there: these golden tests
/// must fail, not pass vacuously, when their data is missing.
pub fn read_seed(prefix: &str) -> String {
    let dir = seed_dir();
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| {
        panic!(
            "seed directory {} is missing ({e}); the golden tests need the `shared/` checkout beside the repository",
            dir.display()
        )
    });
    let mut matches: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(prefix) && n.ends_with(".txt"))
        })
        .collect();
    matches.sort();
    let path = matches
        .first()
        .unwrap_or_else(|| panic!("no seed file {prefix}*.txt in {}", dir.display()));
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Parses a line of whitespace-separated decimal numbers (`1`, `3.00`) into
/// integers; `None` if any word is not a number or the line is empty.
pub fn decimal_row(line: &str) -> Option<Vec<i64>> {
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.is_empty() {
        return None;
    }
    words
        .iter()
        .map(|w| {
            let f: f64 = w.parse().ok()?;
            (f.fract() == 0.0).then_some(f as i64)
        })
        .collect()
}

/// The consecutive lines of numbers right after the line at `index`.
pub fn decimal_block(lines: &[&str], index: usize) -> Vec<Vec<i64>> {
    lines[index + 1..].iter().map_while(|l| decimal_row(l)).collect()
}

/// Row-major flattening with a rectangularity check.
pub fn flatten(rows: &[Vec<i64>]) -> (usize, usize, Vec<i64>) {
    let cols = rows.first().map_or(0, Vec::len);
    assert!(rows.iter().all(|r| r.len() == cols), "ragged matrix in seed: {rows:?}");
    (rows.len(), cols, rows.concat())
}
