//! Shared helpers for the integration tests: where the repository, the examples and the diagnostics corpus
//! are, and a structural comparison of modules (same ops, attributes, types and operand wiring, whatever
//! the value names and arena order).

pub mod cli;
pub mod seeds;

use std::collections::HashMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use tilec_ir::attr::Attribute;
use tilec_ir::body::{BlockId, Func, Module, Value};

/// The repository root (the workspace directory).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// `examples/` at the repository root.
pub fn examples_dir() -> PathBuf {
    repo_root().join("examples")
}

/// `tests/diagnostics/`: the malformed and ill-typed inputs with their expected diagnostics.
pub fn diagnostics_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("diagnostics")
}

/// Every file under `dir` (recursively) whose name ends in `.{ext}`, sorted by path.
pub fn files_with_extension(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == ext) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// A path relative to the repository root, with `/` separators, for messages and snapshot names.
pub fn display_path(path: &Path) -> String {
    let root = repo_root();
    let rel = path.strip_prefix(&root).unwrap_or(path);
    rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/")
}

/// Attribute equality where floats compare by bits (so `nan` equals itself and `-0.0` differs from `0.0`).
pub fn same_attribute(a: &Attribute, b: &Attribute) -> bool {
    match (a, b) {
        (Attribute::Float(x), Attribute::Float(y)) => x.to_bits() == y.to_bits(),
        (Attribute::Array(x), Attribute::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_attribute(a, b))
        }
        _ => a == b,
    }
}

fn same_attrs(a: &tilec_ir::AttrMap, b: &tilec_ir::AttrMap) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|((ka, va), (kb, vb))| ka == kb && same_attribute(va, vb))
}

/// Compares two modules structurally: the same functions in order, with the same names and attributes,
/// argument types, and bodies with the same ops (kind, attributes, operand segments, result types,
/// regions) in the same order, wired to corresponding values. Value names and arena indices may differ.
/// Returns a description of the first difference.
pub fn structurally_equal(a: &Module, b: &Module) -> Result<(), String> {
    if a.funcs.len() != b.funcs.len() {
        return Err(format!("{} functions vs {}", a.funcs.len(), b.funcs.len()));
    }
    for (fa, fb) in a.funcs.iter().zip(&b.funcs) {
        same_func(fa, fb).map_err(|e| format!("in @{}: {e}", fa.name))?;
    }
    Ok(())
}

struct Matcher<'a> {
    a: &'a Func,
    b: &'a Func,
    /// Values of `a` to the values of `b` they correspond to.
    map: HashMap<Value, Value>,
}

fn same_func(a: &Func, b: &Func) -> Result<(), String> {
    if a.name != b.name {
        return Err(format!("function named @{} vs @{}", a.name, b.name));
    }
    if !same_attrs(&a.attrs, &b.attrs) {
        return Err(format!("function attributes {:?} vs {:?}", a.attrs, b.attrs));
    }
    let mut m = Matcher { a, b, map: HashMap::new() };
    m.block(a.entry, b.entry, "entry")
}

impl Matcher<'_> {
    fn block(&mut self, ba: BlockId, bb: BlockId, path: &str) -> Result<(), String> {
        let (body_a, body_b) = (&self.a.body, &self.b.body);
        let (block_a, block_b) = (body_a.block(ba), body_b.block(bb));
        if block_a.args.len() != block_b.args.len() {
            return Err(format!("{path}: {} block arguments vs {}", block_a.args.len(), block_b.args.len()));
        }
        for (i, (&va, &vb)) in block_a.args.iter().zip(&block_b.args).enumerate() {
            if body_a.ty(va) != body_b.ty(vb) {
                return Err(format!("{path}: argument #{i} has type {} vs {}", body_a.ty(va), body_b.ty(vb)));
            }
            self.map.insert(va, vb);
        }
        if block_a.ops.len() != block_b.ops.len() {
            return Err(format!("{path}: {} ops vs {}", block_a.ops.len(), block_b.ops.len()));
        }
        for (i, (&oa, &ob)) in block_a.ops.iter().zip(&block_b.ops).enumerate() {
            let (op_a, op_b) = (body_a.op(oa), body_b.op(ob));
            let here = format!("{path}/op #{i} ({})", op_a.kind);
            if op_a.kind != op_b.kind {
                return Err(format!("{here}: kind {} vs {}", op_a.kind, op_b.kind));
            }
            if !same_attrs(&op_a.attrs, &op_b.attrs) {
                return Err(format!("{here}: attributes {:?} vs {:?}", op_a.attrs, op_b.attrs));
            }
            if op_a.segments != op_b.segments || op_a.operands.len() != op_b.operands.len() {
                return Err(format!("{here}: operand segments {:?} vs {:?}", op_a.segments, op_b.segments));
            }
            for (j, (&va, &vb)) in op_a.operands.iter().zip(&op_b.operands).enumerate() {
                match self.map.get(&va) {
                    Some(&mapped) if mapped == vb => {}
                    Some(_) => return Err(format!("{here}: operand #{j} is wired to a different value")),
                    None => return Err(format!("{here}: operand #{j} uses a value not defined before it")),
                }
            }
            if op_a.regions.len() != op_b.regions.len() {
                return Err(format!("{here}: {} regions vs {}", op_a.regions.len(), op_b.regions.len()));
            }
            for (r, (&ra, &rb)) in op_a.regions.iter().zip(&op_b.regions).enumerate() {
                self.block(ra, rb, &format!("{here}/region #{r}"))?;
            }
            if op_a.results.len() != op_b.results.len() {
                return Err(format!("{here}: {} results vs {}", op_a.results.len(), op_b.results.len()));
            }
            for (j, (&va, &vb)) in op_a.results.iter().zip(&op_b.results).enumerate() {
                if body_a.ty(va) != body_b.ty(vb) {
                    return Err(format!("{here}: result #{j} has type {} vs {}", body_a.ty(va), body_b.ty(vb)));
                }
                self.map.insert(va, vb);
            }
        }
        Ok(())
    }
}

/// The diagnostics of a text rendered without color, as `tilec check` prints them.
pub fn render_diagnostics(name: &str, text: &str) -> String {
    let source = tilec_ir::SourceFile::new(name, text);
    source.render(&tilec_ir::expect::diagnose(text), false)
}

/// A short, line-numbered listing of a text, for failure messages.
pub fn numbered(text: &str) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        let _ = writeln!(out, "{:4} | {line}", i + 1);
    }
    out
}
