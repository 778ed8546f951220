//! Golden test: seed 002 (mma.sync experiments on a real GPU) against the
//! `mma.*` fragment layouts and the row/column-major memory layouts.
//!
//! The seed runs five experiments and prints, for each, the inputs in memory
//! order ("physical order"), as matrices ("logical shape") and the result C:
//!
//! 1. m8n8k4 `.row.col`, A row-major, B column-major;
//! 2. m8n8k4 `.row.col`, A column-major, B row-major (packed by hand);
//! 3. m8n8k4 `.col.row`, A column-major, B row-major;
//! 4. m16n8k8 `.row.col` f16 -> f32;
//! 5. m16n8k16 `.row.col` f16 -> f32.
//!
//! It also draws, as markdown tables, which lane holds which row/column of A
//! and B in experiments 1 and 3.
//!
//! Checked here, for every experiment:
//! - the logical matrices are the physical ones through our `row_major` /
//!   `col_major` layouts;
//! - the printed C equals A x B;
//! - every (lane, value) the seed's kernel loads is the element our fragment
//!   layout assigns to it, and every (lane, value) of D the kernel stores goes
//!   where our accumulator layout says. The kernels' index arithmetic is
//!   transcribed below as small functions (code, not tables); the data the
//!   comparison runs on is parsed from the seed;
//! - the four lane-assignment tables, cell by cell.
//!
//! What the seed does that the PTX ISA would not predict, and why:
//! - Experiment 2 packs `a[0] = pack(A[row + 8], A[row])`, so value 0 (low
//!   half) is k = 1 and value 1 is k = 0: the kernel feeds k in the order
//!   1, 0, 3, 2. It does the same to B, so the sum over k, and the printed C,
//!   are unchanged. The test checks the kernel's coordinates equal our layout's
//!   at value `v ^ 1`, for both operands.
//! - The m8n8k4 store uses `if (tid > 16) row += 4` (not `>= 16`): lane 16
//!   writes its rows 4..7 results into rows 0..3, racing with lanes 0, 4, 8, 12
//!   (the other quad-pairs compute the same MMA, since every lane loads with
//!   `tid % 4`). The printed C is correct, so lane 16 lost that race. The test
//!   checks that lane 16 is the only lane whose store disagrees with our layout.
//! - Only quad-pair 0 (lanes 0-3, 16-19) is discussed, but lanes of the other
//!   quad-pairs load the same data; our m8n8k4 layouts map quad-pair bits to
//!   zero, so all 32 lanes agree with them.

mod common;

use common::{decimal_block, flatten, read_seed};
use tilec_layout::{col_major, hardware_layout, row_major, HardwareLayout, LinearLayout};

struct Printed {
    phys_a: Vec<i64>,
    phys_b: Vec<i64>,
    a: Vec<Vec<i64>>,
    b: Vec<Vec<i64>>,
    c: Vec<Vec<i64>>,
}

fn experiments(text: &str) -> Vec<Printed> {
    let lines: Vec<&str> = text.lines().collect();
    let last_before = |i: usize, label: &str| -> usize {
        (0..i).rev().find(|&j| lines[j].trim() == label).unwrap_or_else(|| panic!("no `{label}` before line {i}"))
    };
    (0..lines.len())
        .filter(|&i| lines[i].trim() == "The result of C:")
        .map(|i| Printed {
            phys_a: decimal_block(&lines, last_before(i, "The physical order of A:")).concat(),
            phys_b: decimal_block(&lines, last_before(i, "The physical order of B:")).concat(),
            a: decimal_block(&lines, last_before(i, "The logical shape of A:")),
            b: decimal_block(&lines, last_before(i, "The logical shape of B:")),
            c: decimal_block(&lines, i),
        })
        .collect()
}

#[derive(Clone, Copy)]
enum Major {
    Row,
    Col,
}

/// One experiment: layouts, memory layouts, and the kernel's index arithmetic.
struct Kernel {
    name: &'static str,
    a: &'static str,
    b: &'static str,
    c: &'static str,
    a_mem: Major,
    b_mem: Major,
    /// Element offset lane `t` loads into value `v` of A / B.
    load_a: fn(u32, u32) -> u32,
    load_b: fn(u32, u32) -> u32,
    /// The value `v` of our layout that the kernel's value `v` is.
    value_perm: fn(u32) -> u32,
    /// (row, col) of C where lane `t` stores value `i` of D.
    store_c: fn(u32, u32) -> (u32, u32),
    /// Lanes whose store is expected to disagree with the accumulator layout.
    bad_store_lanes: &'static [u32],
}

fn high(t: u32) -> u32 {
    if t >= 16 {
        4
    } else {
        0
    }
}

fn store_m8n8k4(t: u32, i: u32) -> (u32, u32) {
    // for (i..8) { row = (tid & 1) + (i & 2); if (tid > 16) row += 4; col = (i & 4) + (tid & 2) + (i & 1); }
    let row = (t & 1) + (i & 2) + if t > 16 { 4 } else { 0 };
    (row, (i & 4) + (t & 2) + (i & 1))
}

fn store_m16n8(t: u32, i: u32) -> (u32, u32) {
    // C[row_a*8 + col_a + {0,1}] = d[0], d[1]; C[(row_a+8)*8 + col_a + {0,1}] = d[2], d[3]
    ((t >> 2) + 8 * (i / 2), (t % 4) * 2 + i % 2)
}

fn kernels() -> Vec<Kernel> {
    vec![
        Kernel {
            name: "m8n8k4 .row.col, A row-major, B col-major",
            a: "mma.m8n8k4.f16.a.row",
            b: "mma.m8n8k4.f16.b.col",
            c: "mma.m8n8k4.f32.c",
            a_mem: Major::Row,
            b_mem: Major::Col,
            load_a: |t, v| (t % 4 + high(t)) * 4 + v, // *(u32*)(A + row_a*4 + {0,2})
            load_b: |t, v| (t % 4 + high(t)) * 4 + v, // *(u32*)(B + col_b*4 + {0,2})
            value_perm: |v| v,
            store_c: store_m8n8k4,
            bad_store_lanes: &[16],
        },
        Kernel {
            name: "m8n8k4 .row.col, A col-major, B row-major",
            a: "mma.m8n8k4.f16.a.row",
            b: "mma.m8n8k4.f16.b.col",
            c: "mma.m8n8k4.f32.c",
            a_mem: Major::Col,
            b_mem: Major::Row,
            // a[0] = pack(A[row_a + 1*8], A[row_a + 0*8]); a[1] = pack(A[row_a + 3*8], A[row_a + 2*8])
            load_a: |t, v| (t % 4 + high(t)) + 8 * (v ^ 1),
            load_b: |t, v| (t % 4 + high(t)) + 8 * (v ^ 1),
            value_perm: |v| v ^ 1,
            store_c: store_m8n8k4,
            bad_store_lanes: &[16],
        },
        Kernel {
            name: "m8n8k4 .col.row, A col-major, B row-major",
            a: "mma.m8n8k4.f16.a.col",
            b: "mma.m8n8k4.f16.b.row",
            c: "mma.m8n8k4.f32.c",
            a_mem: Major::Col,
            b_mem: Major::Row,
            load_a: |t, v| (t % 4) * 8 + high(t) + v, // *(u32*)(A + col_a*8 + {0,2} (+4))
            load_b: |t, v| (t % 4) * 8 + high(t) + v, // *(u32*)(B + row_b*8 + {0,2} (+4))
            value_perm: |v| v,
            store_c: store_m8n8k4,
            bad_store_lanes: &[16],
        },
        Kernel {
            name: "m16n8k8 .row.col",
            a: "mma.m16n8k8.f16.a",
            b: "mma.m16n8k8.f16.b",
            c: "mma.m16n8k8.f32.c",
            a_mem: Major::Row,
            b_mem: Major::Col,
            // a[r] = *(u32*)(A + (row_a + 8r)*8 + col_a)
            load_a: |t, v| ((t >> 2) + 8 * (v / 2)) * 8 + (t % 4) * 2 + v % 2,
            // b[0] = *(u32*)(B + col_b*8 + row_b)
            load_b: |t, v| (t >> 2) * 8 + (t % 4) * 2 + v,
            value_perm: |v| v,
            store_c: store_m16n8,
            bad_store_lanes: &[],
        },
        Kernel {
            name: "m16n8k16 .row.col",
            a: "mma.m16n8k16.f16.a",
            b: "mma.m16n8k16.f16.b",
            c: "mma.m16n8k16.f32.c",
            a_mem: Major::Row,
            b_mem: Major::Col,
            // a[0..4] at (row_a, col_a), (row_a+8, col_a), (row_a, col_a+8), (row_a+8, col_a+8)
            load_a: |t, v| {
                let reg = v / 2;
                ((t >> 2) + 8 * (reg & 1)) * 16 + (t % 4) * 2 + 8 * (reg >> 1) + v % 2
            },
            // b[r] = *(u32*)(B + col_b*16 + row_b + 8r)
            load_b: |t, v| (t >> 2) * 16 + (t % 4) * 2 + 8 * (v / 2) + v % 2,
            value_perm: |v| v,
            store_c: store_m16n8,
            bad_store_lanes: &[],
        },
    ]
}

fn memory(major: Major, rows: usize, cols: usize) -> LinearLayout {
    match major {
        Major::Row => row_major(rows as u32, cols as u32),
        Major::Col => col_major(rows as u32, cols as u32),
    }
    .unwrap()
}

fn layout(name: &str) -> &'static HardwareLayout {
    hardware_layout(name).unwrap_or_else(|| panic!("{name} is not catalogued"))
}

/// Checks the kernel's loads of one operand against the fragment layout.
fn check_operand(what: &str, kernel: &Kernel, h: &HardwareLayout, mem: &LinearLayout, phys: &[i64], logical: &[Vec<i64>], load: fn(u32, u32) -> u32) {
    for lane in 0..32 {
        for v in 0..h.values_per_lane() {
            let offset = load(lane, v);
            let kernel_coord = mem.apply(&[offset]).unwrap();
            let (r, c) = h.coord((kernel.value_perm)(v), lane).unwrap();
            assert_eq!(kernel_coord, vec![r, c], "{}: {what} lane {lane} value {v}", kernel.name);
            assert_eq!(phys[offset as usize], logical[r as usize][c as usize], "{}: {what} lane {lane} value {v}", kernel.name);
        }
    }
}

#[test]
fn seed_002_mma_experiments() {
    let printed = experiments(&read_seed("002_"));
    let kernels = kernels();
    assert_eq!(printed.len(), kernels.len(), "experiments with a printed C");
    let mut tables = 0;
    for (p, k) in printed.iter().zip(&kernels) {
        let (ha, hb, hc) = (layout(k.a), layout(k.b), layout(k.c));
        let (m, kk, a) = flatten(&p.a);
        let (kb, n, b) = flatten(&p.b);
        let (cm, cn, c) = flatten(&p.c);
        assert_eq!([m as u32, kk as u32], ha.shape(), "{}: A", k.name);
        assert_eq!([kb as u32, n as u32], hb.shape(), "{}: B", k.name);
        assert_eq!([cm as u32, cn as u32], hc.shape(), "{}: C", k.name);

        // Logical = physical through the memory layout.
        for (what, major, rows, cols, phys, logical) in [("A", k.a_mem, m, kk, &p.phys_a, &a), ("B", k.b_mem, kb, n, &p.phys_b, &b)] {
            let mem = memory(major, rows, cols);
            assert_eq!(phys.len(), rows * cols, "{}: physical {what}", k.name);
            for (offset, &x) in phys.iter().enumerate() {
                let rc = mem.apply(&[offset as u32]).unwrap();
                assert_eq!(logical[rc[0] as usize * cols + rc[1] as usize], x, "{}: {what} offset {offset}", k.name);
            }
            tables += 1;
        }

        // C = A x B.
        for i in 0..m {
            for j in 0..n {
                let dot: i64 = (0..kk).map(|l| a[i * kk + l] * b[l * n + j]).sum();
                assert_eq!(c[i * n + j], dot, "{}: C[{i}][{j}]", k.name);
            }
        }
        tables += 1;

        // Fragment loads.
        check_operand("A", k, ha, &memory(k.a_mem, m, kk), &p.phys_a, &p.a, k.load_a);
        check_operand("B", k, hb, &memory(k.b_mem, kb, n), &p.phys_b, &p.b, k.load_b);

        // Accumulator stores.
        let mut bad = Vec::new();
        for lane in 0..32 {
            for i in 0..hc.values_per_lane() {
                let (r, col) = hc.coord(i, lane).unwrap();
                if (k.store_c)(lane, i) != (r, col) {
                    bad.push(lane);
                    break;
                }
            }
        }
        assert_eq!(bad, k.bad_store_lanes, "{}: lanes whose store disagrees with {}", k.name, k.c);
    }

    // The lane-assignment tables of experiments 1 and 3.
    let tables_md = lane_tables(&read_seed("002_"));
    let expected = [
        ("mma.m8n8k4.f16.a.row", &printed[0].a),
        ("mma.m8n8k4.f16.b.col", &printed[0].b),
        ("mma.m8n8k4.f16.a.col", &printed[2].a),
        ("mma.m8n8k4.f16.b.row", &printed[2].b),
    ];
    assert_eq!(tables_md.len(), expected.len(), "markdown tables with lane labels");
    for (facts, (name, matrix)) in tables_md.iter().zip(expected) {
        let h = layout(name);
        assert_eq!(facts.len() as u32, h.rows * h.cols, "{name}: one fact per element");
        for &(r, c, lane, value) in facts {
            assert!(
                h.owners(r, c).iter().any(|&(l, _)| l == lane),
                "{name}: the seed puts ({r}, {c}) in lane {lane}, the layout in {:?}",
                h.owners(r, c)
            );
            assert_eq!(matrix[r as usize][c as usize], value, "{name}: value at ({r}, {c})");
        }
        tables += 1;
    }

    println!("seed 002: {tables} tables checked (A/B memory order and C per experiment, 4 lane tables) and every kernel load/store of 5 experiments");
    assert_eq!(tables, 5 * 3 + 4);
}

/// Parses the markdown tables that label rows/columns with `(T<lane>)` into
/// `(row, col, lane, value)` facts, one per value cell.
fn lane_tables(text: &str) -> Vec<Vec<(u32, u32, u32, i64)>> {
    let mut groups: Vec<Vec<&str>> = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with('|') {
            current.push(line);
        } else if !current.is_empty() {
            groups.push(std::mem::take(&mut current));
        }
    }
    groups.push(current);
    groups.into_iter().filter(|g| g.iter().any(|l| l.contains("(T"))).map(|g| parse_lane_table(&g)).collect()
}

fn cells(line: &str) -> Vec<String> {
    line.trim().trim_matches('|').split('|').map(|c| c.trim().to_string()).collect()
}

fn tag(cell: &str) -> Option<u32> {
    let rest = &cell[cell.find("(T")? + 2..];
    rest[..rest.find(')')?].parse().ok()
}

fn leading_number(cell: &str) -> Option<i64> {
    cell.split(|c: char| !c.is_ascii_digit()).next().filter(|s| !s.is_empty())?.parse().ok()
}

fn parse_lane_table(lines: &[&str]) -> Vec<(u32, u32, u32, i64)> {
    let header = cells(lines[0]);
    let col_index: Vec<Option<i64>> = header.iter().map(|c| leading_number(c)).collect();
    let header_lane: Vec<Option<u32>> = header.iter().map(|c| tag(c)).collect();
    let mut column_lanes: Vec<Option<u32>> = vec![None; header.len()];
    let mut facts = Vec::new();
    for line in &lines[1..] {
        let row = cells(line);
        if row.iter().all(|c| c.chars().all(|ch| ch == '-' || ch == ':')) {
            continue; // separator
        }
        if row[0].is_empty() {
            // a row of lane labels for the columns below it
            column_lanes = row.iter().map(|c| tag(c)).collect();
            continue;
        }
        let r = leading_number(&row[0]).expect("row index") as u32;
        let row_lane = tag(&row[0]);
        let mut in_row_lane = None;
        for (j, cell) in row.iter().enumerate().skip(1) {
            if cell.is_empty() {
                continue;
            }
            if cell.starts_with("(T") {
                in_row_lane = tag(cell);
                continue;
            }
            let value = leading_number(cell).expect("value");
            let c = col_index.get(j).copied().flatten().expect("column index") as u32;
            let lane = in_row_lane
                .or(column_lanes.get(j).copied().flatten())
                .or(row_lane)
                .or(header_lane.get(j).copied().flatten())
                .expect("a lane label for every cell");
            facts.push((r, c, lane, value));
        }
    }
    facts
}
