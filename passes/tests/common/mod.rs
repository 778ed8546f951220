//! Inputs shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

fn tir_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            tir_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "tir") {
            out.push(path);
        }
    }
}

/// Every `.tir` file under `examples/`, recursively, sorted, with its text.
pub fn examples() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut files = Vec::new();
    tir_files(&root, &mut files);
    files.sort();
    files.into_iter().map(|p| (p.clone(), std::fs::read_to_string(&p).unwrap())).collect()
}

/// The target to run an example's passes for: `default`, unless the example's `// targets:` line leaves it out
/// (`examples/gemm_hopper.tir`: sm_90a only); then the first target that line names.
pub fn example_target(text: &str, default: tilec_ir::Target) -> tilec_ir::Target {
    let targets: Vec<tilec_ir::Target> = text
        .lines()
        .find_map(|l| l.strip_prefix("// targets:"))
        .map(|t| t.split_whitespace().filter_map(|w| w.parse().ok()).collect())
        .unwrap_or_default();
    match targets.first() {
        Some(&first) if !targets.contains(&default) => first,
        _ => default,
    }
}

/// A function with something for every cleanup pass to do: foldable constants, identities, duplicates,
/// static and dynamic dims, a zero-trip loop, a loop with a loop-invariant duplicate, unused values.
pub const DIRTY: &str = "tile.func @dirty(%A: tile<64x?xf16, global>, %out: tile<16x8xi32, global>, %n: index) {
  %c0 = tile.constant 0 : index
  %c1 = tile.constant 1 : index
  %c8 = tile.constant 8 : index
  %c0b = tile.constant 0 : index
  %m = tile.dim %A, 0 : index
  %k = tile.dim %A, 1 : index
  %k2 = tile.dim %A, 1 : index
  %a = tile.add %n, %c0b : index
  %b = tile.mul %a, %c1 : index
  %p = tile.mul %m, %c8 : index
  %q = tile.div %p, %c0 : index
  %two = tile.constant 2 : i32
  %s = tile.splat %two : tile<16x8xi32, reg>
  %none = tile.for %i = %c8 to %c0 step %c1 iter_args(%x = %s) -> (tile<16x8xi32, reg>) {
    %y = tile.add %x, %x : tile<16x8xi32, reg>
    tile.yield %y
  }
  %acc = tile.for %i = %c0 to %k step %c8 iter_args(%x = %none) -> (tile<16x8xi32, reg>) {
    %kk = tile.dim %A, 1 : index
    %t = tile.mul %i, %kk : index
    %u = tile.mul %i, %k2 : index
    %y = tile.add %x, %s : tile<16x8xi32, reg>
    tile.yield %y
  }
  %dead = tile.for %i = %c0 to %b step %c1 iter_args(%x = %c0) -> (index) {
    %y = tile.add %x, %i : index
    tile.yield %y
  }
  tile.copy_r2g %acc, %out[%c0, %c0]
  tile.return
}
";

/// Replaces the values of a float tensor by small integers (-3..=3) from `seed`, so that every f32 sum of
/// their products is exact and a lowered kernel must match the interpreter bit for bit.
pub fn small_integers(t: &mut tilec_ir::data::TensorData, seed: u64) {
    if t.elem.is_float() {
        for (i, v) in t.values.iter_mut().enumerate() {
            let mut x = (i as u64) ^ (seed << 40);
            x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            x ^= x >> 29;
            x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
            x ^= x >> 32;
            *v = (x % 7) as f64 - 3.0;
        }
    }
}
