//! The op reference (`docs/ops.md`), generated from the catalogue: every op with its syntax, operands,
//! attributes (type, default or required), the targets that lower it, and an example. Kernel attributes too.
//! A test (`ir/tests/ops_reference.rs`) keeps the checked-in file equal to what this writes.

use std::fmt::Write;

use crate::ops::kernel::KERNEL_ATTRS;
use crate::ops::{AttrDef, Arity, OpDef, OpKind, COMMON_ATTRS, OP_DEFS};
use crate::syntax::format::{format_of, FormatElement};
use crate::target::Target;

impl OpKind {
    /// The oldest target whose instructions the op needs once lowered (`nvgpu.stmatrix` is sm_90's);
    /// every other op lowers on every target.
    pub fn min_target(self) -> Target {
        match self {
            OpKind::StMatrix | OpKind::ElectSync => Target::Sm90,
            // Hopper (issue 18): mbarrier's expect_tx and try_wait need sm_90; the group goes with them.
            OpKind::MBarrierCreate
            | OpKind::MBarrierInit
            | OpKind::MBarrierArrive
            | OpKind::MBarrierArriveExpectTx
            | OpKind::MBarrierTryWaitParity => Target::Sm90,
            // TMA (`cp.async.bulk.tensor`) and the async proxy fence are sm_90.
            OpKind::TmaAsyncLoad | OpKind::TmaAsyncStore | OpKind::TmaCommitGroup | OpKind::TmaWaitGroup | OpKind::FenceProxyAsync => {
                Target::Sm90
            }
            // wgmma is one of sm_90a's architecture-specific features.
            OpKind::WgmmaFence
            | OpKind::WgmmaCommitGroup
            | OpKind::WgmmaWaitGroup
            | OpKind::WarpgroupGenerateDescriptor
            | OpKind::WarpgroupMma => Target::Sm90a,
            OpKind::SetMaxNRegInc | OpKind::SetMaxNRegDec => Target::Sm90a,
            _ => Target::Sm80,
        }
    }
}

/// The reference as Markdown; `example(kind)` gives a line of real code using the op, if one is at hand.
pub fn markdown(example: &dyn Fn(OpKind) -> Option<String>) -> String {
    let mut out = String::new();
    out.push_str("# tilec op reference\n\n");
    out.push_str("Generated from the op catalogue (`ir/src/ops/mod.rs`, `ir/src/ops/kernel.rs`); do not edit by hand.\n");
    out.push_str("Regenerate with `UPDATE_OPS_DOC=1 cargo test --release -p tilec-ir --test ops_reference`; `make test` fails while it\n");
    out.push_str("is stale.\n\n");
    out.push_str("Every attribute an op or a kernel carries must be declared here: anything else is an error at the attribute\n");
    out.push_str("(with a \"did you mean\" note), except dotted names (`host.tag`), which belong to a host compiler and are\n");
    out.push_str("carried unchecked. Targets: an op \"lowers on\" a target when `tilec --target T` compiles it to PTX.\n\n");
    out.push_str("- [Kernel attributes](#kernel-attributes)\n");
    for dialect in ["tile", "nvgpu"] {
        let _ = writeln!(out, "- [`{dialect}` dialect](#{dialect}-dialect)");
        for def in OP_DEFS.iter().filter(|d| d.dialect() == dialect) {
            let _ = writeln!(out, "  - [`{}`](#{})", def.name, anchor(def.name));
        }
    }
    out.push_str("\n## Kernel attributes\n\n");
    out.push_str("`tile.func @k(...) attributes {num_warps = 4, BM = 128}`. Upper-case integer attributes are kernel\n");
    out.push_str("parameters: their values stand for their names in the argument types, the other kernel attributes and the\n");
    out.push_str("body's shapes and attribute values (`%Q: tile<?x?xDxf16, global>`, `warp_tile = [WM, BN]`), and in the shapes\n");
    out.push_str("of `sample_args` (`\"Q=2x100xD\"`); `--param NAME=V` sets one.\n\n");
    attribute_table(&mut out, KERNEL_ATTRS.iter());
    out.push_str("\nEvery op may also carry:\n\n");
    attribute_table(&mut out, COMMON_ATTRS.iter());
    for (dialect, blurb) in [
        ("tile", "What a kernel author writes: tiles in global, shared or register memory, whole-block semantics."),
        ("nvgpu", "Warp-level, one op per hardware instruction family, named and shaped like MLIR's `nvgpu` dialect."),
    ] {
        let _ = write!(out, "\n## `{dialect}` dialect\n\n{blurb}\n");
        for def in OP_DEFS.iter().filter(|d| d.dialect() == dialect) {
            op_section(&mut out, def, example(def.kind));
        }
    }
    out
}

fn anchor(name: &str) -> String {
    name.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_').collect()
}

fn op_section(out: &mut String, def: &OpDef, example: Option<String>) {
    let _ = write!(out, "\n### `{}`\n\n{}\n\n", def.name, def.summary);
    let _ = writeln!(out, "Syntax: `{}`\n", syntax(def));
    let lowers = match def.kind.min_target() {
        Target::Sm80 => "every target (sm_80, sm_86, sm_89, sm_90, sm_90a)".to_string(),
        t if t.is_arch_specific() => format!("{} only (architecture-specific instructions)", t.chip()),
        t => format!("{} and newer", t.chip()),
    };
    let _ = writeln!(out, "Lowers on: {lowers}.\n");
    if !def.operands.is_empty() {
        out.push_str("| operand | how many |\n|---|---|\n");
        for g in def.operands {
            let how_many = match g.arity {
                Arity::One => "one",
                Arity::Optional => "zero or one",
                Arity::Variadic => "any number",
            };
            let _ = writeln!(out, "| `{}` | {how_many} |", g.name);
        }
        out.push('\n');
    }
    if !def.attributes.is_empty() {
        attribute_table(out, def.attributes.iter());
        out.push('\n');
    }
    if let Some(example) = example {
        let _ = writeln!(out, "```\n{example}\n```");
    }
}

fn attribute_table<'a>(out: &mut String, attrs: impl Iterator<Item = &'a AttrDef>) {
    out.push_str("| attribute | value | default | meaning |\n|---|---|---|---|\n");
    for a in attrs {
        let default = match (a.required, a.default_text()) {
            (true, _) => "required".to_string(),
            (false, Some(text)) => format!("`{text}`"),
            (false, None) => "not set".to_string(),
        };
        let _ = writeln!(out, "| `{}` | {} | {default} | {} |", a.name, a.expected, a.doc.replace('|', "\\|"));
    }
}

/// The op's syntax with placeholders: `%result = tile.copy_s2r %src[%src_indices] {attrs} : type` (the
/// reference's "Syntax:" line; the parser's note when an op's operands do not parse).
pub fn syntax(def: &OpDef) -> String {
    let mut text = String::new();
    match def.results {
        Some(Arity::One) => text.push_str("%result = "),
        Some(_) => text.push_str("%results... = "),
        None => {}
    }
    text.push_str(def.name);
    match format_of(def.kind) {
        Some(format) => write_elements(&mut text, def, format),
        None if def.kind == OpKind::For => text.push_str(
            " %iv = %lower to %upper step %step iter_args(%x = %init, ...) -> (types) [attributes {...}] { ... tile.yield ... }",
        ),
        None => text.push_str(" @name(%arg: type, ...) [attributes {...}] { ... tile.return }"),
    }
    text.replace("( ", "(")
}

fn write_elements(text: &mut String, def: &OpDef, elements: &[FormatElement]) {
    for element in elements {
        match element {
            FormatElement::Operands(g) => {
                let group = def.operands[*g];
                let _ = match group.arity {
                    Arity::Variadic => write!(text, " %{}...", group.name),
                    _ => write!(text, " %{}", group.name),
                };
            }
            FormatElement::Indexed { mem, indices } => {
                let _ = write!(text, " %{}[%{}...]", def.operands[*mem].name, def.operands[*indices].name);
            }
            FormatElement::Attr(name) => {
                let _ = write!(text, " <{name}>");
            }
            FormatElement::AttrDict => text.push_str(" {attributes}"),
            FormatElement::ResultTypes => text.push_str(" type"),
            FormatElement::Literal(word) => match *word {
                "," | ")" => text.push_str(word),
                _ => {
                    let _ = write!(text, " {word}");
                }
            },
            FormatElement::Optional(inner) => {
                text.push_str(" [");
                let mut inside = String::new();
                write_elements(&mut inside, def, inner);
                text.push_str(inside.trim_start());
                text.push(']');
            }
        }
    }
}
