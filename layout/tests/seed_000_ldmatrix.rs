//! Golden test: seed 000 (ldmatrix / stmatrix on a real GPU) against the
//! hardware layout catalogue.
//!
//! The seed runs five experiments on one 16x16 f16 matrix `S` (printed as
//! "The logical shape of A"): `ldmatrix .x1`, `.x2`, `.x4`, `.x4.trans` and
//! `ldmatrix .x4` followed by `stmatrix .x4`. Each prints the result matrix
//! ("The copy result of B"); `.x1` and `.x4` also print every lane's values
//! (`thread=T, val=...`, in register order, low half first).
//!
//! Each kernel writes register `i`, half `h` of lane `t` back to global memory
//! at `row = t/4 (+8 if i is odd), col = 2(t%4) + h (+8 if i >= 2)`: that is the
//! `ldmatrix.x4` fragment layout (`.x1`/`.x2`: its first one/two matrices), so
//! "The copy result of B" is `fragment_to_matrix(ldmatrix.xN, fragments)`.
//! The row addresses the kernels pass (`smem + tid % M * N + tid / M * 8`) are
//! [`ldmatrix_row_addresses`].

mod common;

use common::{decimal_block, decimal_row, flatten, read_seed};
use tilec_layout::{fragment_to_matrix, hardware_layout, ldmatrix_row_addresses, matrix_to_fragment, HardwareLayout};

/// One experiment's printed data.
struct Experiment {
    name: String,
    a: Vec<Vec<i64>>,
    b: Vec<Vec<i64>>,
    lanes: Vec<Vec<i64>>,
}

fn experiments(text: &str) -> Vec<Experiment> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut lanes: Vec<Vec<i64>> = Vec::new();
    let mut heading = String::new();
    let mut in_stmatrix = false;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        if t.starts_with("## stmatrix") {
            in_stmatrix = true;
        }
        if let Some(rest) = t.strip_prefix("### num=").or_else(|| t.strip_prefix("__num=")) {
            heading = rest.trim_end_matches('_').replace(' ', ".");
        }
        if let Some(vals) = t.strip_prefix("thread=").and_then(|r| r.split_once("val=")) {
            lanes.push(decimal_row(vals.1).expect("lane values"));
        }
        if t == "The logical shape of A:" {
            let a = decimal_block(&lines, i);
            let b_at = lines[i..].iter().position(|l| l.trim() == "The copy result of B:").expect("result B") + i;
            let b = decimal_block(&lines, b_at);
            let op = if in_stmatrix { "stmatrix" } else { "ldmatrix" };
            out.push(Experiment { name: format!("{op}.{heading}"), a, b, lanes: std::mem::take(&mut lanes) });
        }
    }
    out
}

fn layout(name: &str) -> &'static HardwareLayout {
    hardware_layout(name).unwrap_or_else(|| panic!("{name} is not catalogued"))
}

#[test]
fn seed_000_ldmatrix_stmatrix() {
    let exps = experiments(&read_seed("000_"));
    let names: Vec<&str> = exps.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["ldmatrix.x1", "ldmatrix.x2", "ldmatrix.x4", "ldmatrix.x4.trans", "stmatrix.x4"]);
    let mut tables = 0;

    // All experiments load the same buffer S; the smaller ones print a prefix of it.
    let s = flatten(&exps[2].a).2;
    for e in &exps {
        let (_, _, a) = flatten(&e.a);
        assert_eq!(a, s[..a.len()], "{}: input differs from S", e.name);
    }

    for e in &exps {
        let (rows, cols, a) = flatten(&e.a);
        let (_, _, b) = flatten(&e.b);
        let load = layout(if e.name == "stmatrix.x4" { "ldmatrix.x4" } else { &e.name });
        assert_eq!([rows as u32, cols as u32], load.shape(), "{}", e.name);
        let fragments = matrix_to_fragment(load, &a).unwrap();

        // Per-lane register values, where printed: every lane, every value.
        if !e.lanes.is_empty() {
            assert_eq!(e.lanes.len(), 32, "{}", e.name);
            for (lane, printed) in e.lanes.iter().enumerate() {
                assert_eq!(&fragments[lane], printed, "{} lane {lane}", e.name);
            }
            tables += 1;
        }

        // The result matrix: the kernel writes lane values back with the
        // non-transposed fragment layout (or stmatrix does).
        let store = match e.name.as_str() {
            "ldmatrix.x4.trans" => layout("ldmatrix.x4"),
            "stmatrix.x4" => layout("stmatrix.x4"),
            other => layout(other),
        };
        let result = fragment_to_matrix(store, &fragments).unwrap();
        assert_eq!(result, b, "{}: result matrix", e.name);
        tables += 1;
    }

    // .x4.trans is the per-8x8-block transpose of S, a non-trivial check of
    // the .trans layout (the other results equal S).
    let b = flatten(&exps[3].b).2;
    for r in 0..16 {
        for c in 0..16 {
            let (br, bc) = (r / 8 * 8 + c % 8, c / 8 * 8 + r % 8);
            assert_eq!(b[r * 16 + c], s[br * 16 + bc]);
        }
    }

    // The kernels' row addresses: lane t supplies row t % 16, column 8 * (t / 16).
    let addresses = ldmatrix_row_addresses(4).unwrap();
    for lane in 0..32 {
        assert_eq!(addresses.apply(&[lane]).unwrap(), vec![lane % 16, lane / 16 * 8]);
    }

    println!("seed 000: {tables} tables checked");
    assert_eq!(tables, 7, "2 per-lane tables + 5 result matrices");
}
