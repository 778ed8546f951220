//! `tilec compare DIR`: checks the buffers a GPU run wrote into a bundle against the oracle's results.
//!
//! Integers and data movement must be bit-exact. Floating-point results are compared with a tolerance
//! (`|gpu - oracle| <= atol + rtol * |oracle|`) because the tensor cores add products in an order and with an
//! internal precision the PTX ISA does not specify; the report gives the largest errors either way.
//!
//! `--golden NAME=FILE` also compares the GPU's `NAME` with numbers from a file exactly (same bits as f64 after
//! decoding): the seed bundles of `scripts/gpu-suite.sh` check each lane's output against the values the seed
//! documents printed on real hardware.

use std::path::Path;

use tilec_ir::ScalarType;

use crate::cli::CompareArgs;
use crate::commands::bundle::{read_tensor, BundleMeta};
use crate::error::DriverError;

/// Absolute and relative tolerance for results of an element type.
pub fn tolerance(elem: ScalarType) -> (f64, f64) {
    match elem {
        ScalarType::F32 | ScalarType::TF32 | ScalarType::F64 => (1e-3, 1e-3),
        ScalarType::F16 | ScalarType::BF16 => (1e-2, 1e-2),
        ScalarType::F8E4M3 | ScalarType::F8E5M2 => (1e-1, 1e-1),
        _ => (0.0, 0.0),
    }
}

/// An error outside its bound; a NaN error (one side NaN, the other not) always is.
pub fn exceeds(err: f64, bound: f64) -> bool {
    err.is_nan() || err > bound
}

pub fn run(args: &CompareArgs) -> Result<String, DriverError> {
    let dir = Path::new(&args.bundle);
    let meta_path = dir.join("meta.json");
    let text = std::fs::read(&meta_path).map_err(|e| DriverError::io(&meta_path.display().to_string(), &e))?;
    let meta: BundleMeta = serde_json::from_slice(&text).map_err(|e| DriverError::Usage(format!("{}: {e}", meta_path.display())))?;
    // A bundle not run yet: say how to run it, rather than name the first missing file.
    if let Some(t) = meta.tensors.iter().find(|t| !dir.join(&t.output).exists()) {
        return Err(DriverError::Usage(format!(
            "{}: no GPU results yet ({} is missing): run it on the GPU first (`tilec-gpu-runner {}`), then compare",
            args.bundle, t.output, args.bundle
        )));
    }
    let mut out = format!("{}: @{} (oracle: {}, grid {:?})\n", args.bundle, meta.kernel, meta.oracle, meta.grid);
    let mut failed = 0;
    for t in &meta.tensors {
        if t.expected.is_empty() {
            out.push_str(&format!("  %{}: not checked (bundled with --no-oracle)\n", t.name));
            continue;
        }
        let got = read_tensor(dir, &t.output, t)?;
        let want = read_tensor(dir, &t.expected, t)?;
        let (atol, rtol) = tolerance(got.elem);
        let mut exact = 0usize;
        let mut mismatches = 0usize;
        let mut first: Option<(usize, f64, f64)> = None;
        let (mut max_abs, mut max_rel) = (0.0f64, 0.0f64);
        for (i, (&g, &w)) in got.values.iter().zip(&want.values).enumerate() {
            let same = g == w || g.is_nan() && w.is_nan();
            if same {
                exact += 1;
                continue;
            }
            let err = (g - w).abs();
            max_abs = max_abs.max(err);
            if w != 0.0 {
                max_rel = max_rel.max(err / w.abs());
            }
            if exceeds(err, atol + rtol * w.abs()) {
                mismatches += 1;
                first.get_or_insert((i, g, w));
            }
        }
        let n = got.values.len();
        let dims: Vec<String> = t.shape.iter().map(|d| d.to_string()).collect();
        let verdict = if mismatches > 0 {
            failed += 1;
            "MISMATCH"
        } else if exact == n {
            "bit-exact"
        } else {
            "within tolerance"
        };
        out.push_str(&format!(
            "  %{}: {}x{}: {verdict}; {exact}/{n} bit-identical, max abs err {max_abs:.3e}, max rel err {max_rel:.3e}",
            t.name,
            dims.join("x"),
            t.elem
        ));
        if let Some((i, g, w)) = first {
            let coords = coords(&t.shape, i);
            out.push_str(&format!("; {mismatches} outside atol {atol:e} + rtol {rtol:e}, first at {coords:?}: gpu {g} vs {w}"));
        }
        out.push('\n');
    }
    for setting in &args.golden {
        let (name, path) = setting.split_once('=').ok_or_else(|| DriverError::Usage(format!("--golden '{setting}': expected NAME=FILE")))?;
        let name = name.trim_start_matches('%');
        let t = meta
            .tensors
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| DriverError::Usage(format!("--golden: the bundle has no tensor argument '{name}'")))?;
        let got = read_tensor(dir, &t.output, t)?;
        let text = std::fs::read_to_string(path).map_err(|e| DriverError::io(path, &e))?;
        let want: Vec<f64> = text
            .split_whitespace()
            .map(str::parse::<f64>)
            .collect::<Result<_, _>>()
            .map_err(|_| DriverError::Usage(format!("--golden {path}: not a list of numbers")))?;
        let n = got.values.len();
        if want.len() != n {
            failed += 1;
            out.push_str(&format!("  %{name} vs golden {path}: MISMATCH; the file holds {} numbers, the tensor {n}\n", want.len()));
            continue;
        }
        let differ: Vec<usize> = (0..n).filter(|&i| got.values[i].to_bits() != want[i].to_bits()).collect();
        match differ.first() {
            None => out.push_str(&format!("  %{name} vs golden {path}: bit-exact, {n}/{n} values\n")),
            Some(&i) => {
                failed += 1;
                out.push_str(&format!(
                    "  %{name} vs golden {path}: MISMATCH; {} of {n} values differ, first at {:?}: gpu {} vs golden {}\n",
                    differ.len(),
                    coords(&t.shape, i),
                    got.values[i],
                    want[i]
                ));
            }
        }
    }
    if failed > 0 {
        return Err(DriverError::Usage(format!("{out}{failed} tensor(s) differ from the oracle or the golden values")));
    }
    Ok(out)
}

/// Row-major coordinates of flat index `i`.
fn coords(shape: &[usize], i: usize) -> Vec<usize> {
    let mut coords = Vec::new();
    let mut rest = i;
    for &d in shape.iter().rev() {
        coords.push(rest % d.max(1));
        rest /= d.max(1);
    }
    coords.reverse();
    coords
}
