//! `seed-inputs [--seeds DIR] [--programs DIR] OUT_DIR`: the files the GPU suite needs to run every seed
//! experiment on the seed's own inputs and compare the GPU's output with the seed's printed hardware output.
//!
//! For each program `examples/seeds/X.tir` it writes `OUT_DIR/seed_X/`:
//! - `NAME.txt` for every tensor argument, in the kernel's argument order and row-major: the seed's input
//!   matrices (`S`, or `A` and `B`), zeros for the result buffers (`regs`, `D`, `C`), as the seed kernels
//!   received them; for `tilec bundle X.tir --input NAME=OUT_DIR/seed_X/NAME.txt ...`;
//! - `NAME.golden.txt` for every output the seed prints (per-lane registers lane-major, one lane a line; result
//!   matrices one row a line), for `tilec compare BUNDLE --golden NAME=...`;
//! - `golden-tables`: which seed table each of those files is, and how many values it holds.
//!
//! The tables come from `tilec_tests::seeds`, the same code the simulator's golden tests
//! (`ir/tests/sim_seeds.rs`) use. Each program is parsed and its arguments checked against the table.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tilec_ir::interp::{default_args, ArgShapes, ArgValue};
use tilec_ir::{parse_module, verify::verify_module};
use tilec_tests::seeds::{default_programs_dir, default_seeds_dir, seed_programs, SeedProgram};

const USAGE: &str = "usage: seed-inputs [--seeds DIR] [--programs DIR] OUT_DIR";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("seed-inputs: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let mut seeds = default_seeds_dir();
    let mut programs_dir = default_programs_dir();
    let mut out = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seeds" => seeds = PathBuf::from(args.next().ok_or(USAGE)?),
            "--programs" => programs_dir = PathBuf::from(args.next().ok_or(USAGE)?),
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            _ if a.starts_with('-') || out.is_some() => return Err(format!("unexpected '{a}'\n{USAGE}")),
            _ => out = Some(PathBuf::from(a)),
        }
    }
    let out = out.ok_or(USAGE)?;
    let programs = seed_programs(&seeds)?;

    // Every program in the directory must have its tables (so that none is run on random inputs unnoticed).
    let mut files: Vec<String> = std::fs::read_dir(&programs_dir)
        .map_err(|e| format!("{}: {e}", programs_dir.display()))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".tir"))
        .collect();
    files.sort();
    for f in &files {
        if !programs.iter().any(|p| p.file == f) {
            return Err(format!("{}/{f} has no seed tables in tilec_tests::seeds::seed_programs", programs_dir.display()));
        }
    }

    let (mut tables, mut values) = (0, 0);
    for p in &programs {
        check_signature(&programs_dir.join(p.file), p)?;
        let dir = out.join(format!("seed_{}", p.stem()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut list = format!("# {}: seed {} tables compared bit for bit with the GPU's output\n", p.file, p.seed);
        let mut summary = Vec::new();
        for a in &p.args {
            let cols = *a.shape.last().unwrap_or(&1);
            write_numbers(&dir.join(format!("{}.txt", a.name)), &a.init, cols)?;
            if let Some(g) = &a.golden {
                write_numbers(&dir.join(format!("{}.golden.txt", a.name)), &g.values, cols)?;
                let _ = writeln!(list, "{}.golden.txt: {} values: {}", a.name, g.values.len(), g.table);
                summary.push(format!("%{} ({} values)", a.name, g.values.len()));
                tables += 1;
                values += g.values.len();
            }
        }
        std::fs::write(dir.join("golden-tables"), list).map_err(|e| format!("{}: {e}", dir.display()))?;
        println!("{}: inputs {}; golden {}", dir.display(), inputs(p), summary.join(", "));
    }
    println!("{} programs, {tables} golden tables, {values} values", programs.len());
    Ok(())
}

fn inputs(p: &SeedProgram) -> String {
    p.args.iter().filter(|a| a.input_table.is_some()).map(|a| format!("%{}", a.name)).collect::<Vec<_>>().join(" ")
}

/// The program's arguments are the table's: same names, element types and shapes, in order.
fn check_signature(path: &Path, p: &SeedProgram) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let module = parse_module(&text).map_err(|e| format!("{} does not parse:\n{e}", path.display()))?;
    verify_module(&module).map_err(|e| format!("{} does not verify:\n{e}", path.display()))?;
    let [func] = module.funcs.as_slice() else { return Err(format!("{}: expected one kernel", path.display())) };
    let values = default_args(func, &ArgShapes::new(), 1).map_err(|e| format!("{}: {e}", path.display()))?;
    let names: Vec<String> = func.args().iter().map(|&v| func.body.value(v).name.clone().unwrap_or_default()).collect();
    let got: Vec<String> = names
        .iter()
        .zip(&values)
        .map(|(n, v)| match v {
            ArgValue::Tensor(t) => format!("%{n}: {:?}x{}", t.shape, t.elem),
            ArgValue::Scalar(ty, _) => format!("%{n}: {ty}"),
        })
        .collect();
    let want: Vec<String> = p.args.iter().map(|a| format!("%{}: {:?}x{}", a.name, a.shape, a.elem)).collect();
    if got != want {
        return Err(format!("{}: the kernel's arguments are {got:?}, the seed tables expect {want:?}", path.display()));
    }
    Ok(())
}

/// Whitespace-separated numbers, `cols` a line; Rust's shortest round-trip formatting, so reading them back
/// gives the same bits.
fn write_numbers(path: &Path, values: &[f64], cols: usize) -> Result<(), String> {
    let mut text = String::new();
    for row in values.chunks(cols.max(1)) {
        let line: Vec<String> = row.iter().map(|v| v.to_string()).collect();
        text.push_str(&line.join(" "));
        text.push('\n');
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}
