//! Golden test: seed 003 (WMMA fragment layouts measured on hardware) against
//! the `wmma.*` entries of the hardware layout catalogue.
//!
//! Each block of the seed's "Gory Details" is
//!
//! ```text
//! matrix_a [bits=8,m=16,n=16,k=16,layout=row_major]:
//!   Amat:         the matrix, each element printed as the byte stored in it
//!   fragmentA:    32 lines, lane 0..31: the bytes the lane holds, in register order
//! ```
//!
//! We check, for every lane and every value, that the element our layout
//! assigns to `(value, lane)` is printed in `Amat` with exactly the byte the
//! lane printed. Things the seed does that the test has to know:
//!
//! - The bytes are offsets mod 256, so for 512-element matrices (m32n8k16 A,
//!   m8n32k16 B) each byte appears twice and the check cannot tell row `r` from
//!   row `r + 16` (A) or `k` from `k + 8` (B); for the 256-element ones it is exact.
//! - 4-bit matrices (m8n8k32) print one entry per 32-bit register (8 elements
//!   along K): Amat is 8x4 and Bmat 4x8. We check all 8 elements of each
//!   register land in the printed cell. Bmat numbers its cells `0x20*n + g`
//!   where the element index would be `0x20*n + 8g` (Amat uses the element
//!   index); comparing positions makes that inconsistency harmless. The order
//!   of the 8 nibbles inside a register is not observable here (PTX ISA: a_i at
//!   bits 4i).
//! - Row- and column-major tables of one operand give the same fragment layout
//!   (the memory layout only changes which bytes are where in Amat): both are
//!   checked against one catalogue layout, under the `.row` and `.col` names.
//! - The prose claims "thread t holds value i + 2*t in its register r" for the
//!   accumulators. The measured tables (and the PTX ISA) say `i + 2*(t % 4) +
//!   n*(t / 4)`: the claim only holds when n = 8. Checked below.

mod common;

use common::read_seed;
use tilec_layout::{hardware_layout, HardwareLayout};

#[derive(Debug)]
struct Block {
    header: String,
    which: char, // 'a', 'b' or 'c'
    bits: u32,
    m: u32,
    n: u32,
    k: u32,
    major: Option<String>,
    mat: Vec<Vec<u32>>,
    fragment: Vec<Vec<u32>>,
}

fn hex_row(line: &str) -> Option<Vec<u32>> {
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.is_empty() {
        return None;
    }
    words.iter().map(|w| u32::from_str_radix(w, 16).ok()).collect()
}

fn blocks(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        let which = if t.starts_with("matrix_a [") {
            'a'
        } else if t.starts_with("matrix_b [") {
            'b'
        } else if t.starts_with("accumulator [") {
            'c'
        } else {
            continue;
        };
        let params = t.split_once('[').and_then(|(_, r)| r.split_once(']')).map(|(p, _)| p).unwrap_or("");
        let get = |key: &str| {
            params.split(',').find_map(|kv| kv.split_once('=').filter(|(k, _)| k.trim() == key).map(|(_, v)| v.trim().to_string()))
        };
        let num = |key: &str| get(key).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{t}: no {key}"));
        let mut j = i + 1;
        let mut section = |label: &str| -> Vec<Vec<u32>> {
            if lines.get(j).map(|l| l.trim()) != Some(label) {
                return Vec::new();
            }
            let rows: Vec<Vec<u32>> = lines[j + 1..].iter().map_while(|l| hex_row(l)).collect();
            j += 1 + rows.len();
            rows
        };
        let upper = which.to_ascii_uppercase();
        let mat = section(&format!("{upper}mat:"));
        let fragment = section(&format!("fragment{upper}:"));
        out.push(Block {
            header: t.to_string(),
            which,
            bits: if which == 'c' { 32 } else { num("bits") },
            m: num("m"),
            n: num("n"),
            k: num("k"),
            major: get("layout").map(|l| l.trim_end_matches("_major").to_string()),
            mat,
            fragment,
        });
    }
    out
}

fn catalogue_name(b: &Block) -> String {
    let shape = format!("m{}n{}k{}", b.m, b.n, b.k);
    match (b.which, b.bits) {
        ('c', _) => format!("wmma.{shape}.s32.c"),
        ('a', 4) => format!("wmma.{shape}.s4.a.row"),
        ('b', 4) => format!("wmma.{shape}.s4.b.col"),
        (w, 8) => format!("wmma.{shape}.s8.{w}.{}", b.major.as_deref().unwrap_or("?")),
        _ => panic!("unexpected block {}", b.header),
    }
}

/// Checks one block; returns the number of (lane, value) slots compared.
fn check(b: &Block, h: &HardwareLayout) -> usize {
    let (rows, cols) = match b.which {
        'a' => (b.m, b.k),
        'b' => (b.k, b.n),
        _ => (b.m, b.n),
    };
    assert_eq!(h.shape(), [rows, cols], "{}", b.header);
    // Sub-byte matrices print one cell per 32-bit register, along K.
    let per_cell = if b.bits < 8 { 32 / b.bits } else { 1 };
    let (cell_rows, cell_cols) = match (b.which, per_cell) {
        ('a', p) => (rows, cols / p),
        ('b', p) => (rows / p, cols),
        _ => (rows, cols),
    };
    assert_eq!(b.mat.len() as u32, cell_rows, "{}: printed rows", b.header);
    assert!(b.mat.iter().all(|r| r.len() as u32 == cell_cols), "{}: printed cols", b.header);
    assert_eq!(b.fragment.len(), 32, "{}: lanes", b.header);
    let mut slots = 0;
    for (lane, printed) in b.fragment.iter().enumerate() {
        assert_eq!(printed.len() as u32 * per_cell, h.values_per_lane(), "{} lane {lane}", b.header);
        for (entry, &byte) in printed.iter().enumerate() {
            for e in 0..per_cell {
                let value = entry as u32 * per_cell + e;
                let (r, c) = h.coord(value, lane as u32).expect("in range");
                let (cr, cc) = match b.which {
                    'a' => (r, c / per_cell),
                    'b' => (r / per_cell, c),
                    _ => (r, c),
                };
                assert_eq!(
                    b.mat[cr as usize][cc as usize], byte,
                    "{}: lane {lane} value {value} is ({r}, {c}) by {}, which holds {:02x}, but the lane printed {byte:02x}",
                    b.header, h.name, b.mat[cr as usize][cc as usize]
                );
                slots += 1;
            }
        }
    }
    slots
}

#[test]
fn seed_003_wmma_fragments() {
    let text = read_seed("003_");
    let blocks = blocks(&text);
    assert_eq!(blocks.len(), 18, "blocks in seed 003");
    let mut tables = 0;
    let mut slots = 0;
    for b in &blocks {
        assert!(!b.mat.is_empty() && !b.fragment.is_empty(), "{}: matrix or fragment table missing", b.header);
        let name = catalogue_name(b);
        let h = hardware_layout(&name).unwrap_or_else(|| panic!("{name} is not catalogued"));
        slots += check(b, h);
        tables += 1;
    }
    println!("seed 003: {tables} fragment tables checked ({slots} lane/value slots)");
    assert_eq!(tables, 18);
}

/// The accumulator summary table in the prose: elements on thread 0, and the
/// "thread t holds i + 2*t" rule.
#[test]
fn seed_003_accumulator_prose() {
    let text = read_seed("003_");
    let mut rows = 0;
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | m | n | k | #R | elements on thread 0 | offset |
        if cells.len() != 8 {
            continue;
        }
        let Some(nums) = cells[1..5].iter().map(|c| c.parse::<u32>().ok()).collect::<Option<Vec<u32>>>() else {
            continue;
        };
        let (m, n, k, regs) = (nums[0], nums[1], nums[2], nums[3]);
        let elements = hex_row(cells[5]).expect("thread 0 elements");
        let h = hardware_layout(&format!("wmma.m{m}n{n}k{k}.s32.c")).expect("catalogued");
        assert_eq!(regs, h.values_per_lane());
        let offset = |v: u32, lane: u32| {
            let (r, c) = h.coord(v, lane).unwrap();
            r * n + c
        };
        let lane0: Vec<u32> = (0..regs).map(|v| offset(v, 0)).collect();
        assert_eq!(lane0, elements, "m{m}n{n}k{k}: elements on thread 0");
        // The prose's rule, i + 2t, holds for every lane only when n == 8.
        let rule_holds = (0..32).all(|t| (0..regs).all(|v| offset(v, t) == offset(v, 0) + 2 * t));
        assert_eq!(rule_holds, n == 8, "m{m}n{n}k{k}: 'thread t holds i + 2t'");
        // What does hold: i + 2*(t % 4) + n*(t / 4).
        assert!((0..32).all(|t| (0..regs).all(|v| offset(v, t) == offset(v, 0) + 2 * (t % 4) + n * (t / 4))));
        rows += 1;
    }
    assert_eq!(rows, 4, "accumulator prose rows");
}
