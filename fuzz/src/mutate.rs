//! Structure-aware mutations of `.tir` text. Each mutation works on the text, on its tokens (from
//! `tilec_ir::syntax::lexer::lex`), or on its lines; the catalogues of op names and scalar types come from
//! the IR crate itself (`OP_DEFS`, `ScalarType::ALL`), so new ops and types get fuzzed as they land.

use tilec_ir::ops::OP_DEFS;
use tilec_ir::syntax::lexer::{lex, Token, TokenKind};
use tilec_ir::ScalarType;

use crate::rng::Rng;

/// The largest input the mutator produces (larger results are cut back): keeps iterations fast.
pub const MAX_INPUT_BYTES: usize = 64 * 1024;

/// Numbers at the edges of every integer and float type the IR uses.
const EXTREME_NUMBERS: &[&str] = &[
    "0", "-1", "1", "2", "-2", "3", "7", "255", "256", "65535", "65536", "2147483647", "2147483648", "-2147483648",
    "-2147483649", "4294967295", "4294967296", "9007199254740993", "9223372036854775807", "-9223372036854775808",
    "9223372036854775808", "18446744073709551616", "340282366920938463463374607431768211456", "0.0", "-0.0", "0.5",
    "1e308", "-1e308", "1e-320", "3.4028235e38", "65504.0", "65520.0", "448.0", "1e400", "nan", "inf", "-inf",
    "0x7fffffff", "00000000000000000000001",
];

/// Extents that shapes get: small ones the interpreter runs fast on, and edge cases.
const EXTENTS: &[&str] = &["1", "2", "4", "8", "16", "32", "64", "3", "0", "?", "1024", "65536", "4294967296", "99999999999999999999"];

/// Tokens worth inserting: the grammar's keywords and punctuation.
pub const KEYWORD_SOUP: &[&str] = &[
    "tile.func", "iter_args", "attributes", "to", "step", "->", "{", "}", "(", ")", "[", "]", "<", ">", ",", ":", "=",
    "%c0", "%x", "@f", "index", "reg", "shared", "global", "tile<16x16xf16, reg>", "tile<?x?xf32, global>",
    "vector<4x2xf16>", "#swizzle<3, 4, 3>", "#mma.m16n8k16.f16.a", "{num_warps = 4}", "{grid = [2, 2, 1]}",
    "{global_alignment = 2}", "{global_alignment = [1, 16, 4]}", "{pipeline_stages = 3}", "#col_major", "if",
    "\"str\"", "true", "false", "x", "y", "z", "lt", "eq", "// expected-error {{x}}", "// expected-error @+1 {{",
    "\n", "?", "#", "%", "@", "\"",
];

/// One mutation, named for reports and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    ByteFlip,
    DeleteToken,
    DuplicateToken,
    SwapTokens,
    SpliceLines,
    ExtremeNumber,
    ReplaceType,
    ReplaceShape,
    ReplaceOpName,
    InsertKeyword,
    DeepNesting,
    DeleteLines,
    DuplicateLine,
}

impl Mutation {
    pub const ALL: [Mutation; 13] = [
        Mutation::ByteFlip,
        Mutation::DeleteToken,
        Mutation::DuplicateToken,
        Mutation::SwapTokens,
        Mutation::SpliceLines,
        Mutation::ExtremeNumber,
        Mutation::ReplaceType,
        Mutation::ReplaceShape,
        Mutation::ReplaceOpName,
        Mutation::InsertKeyword,
        Mutation::DeepNesting,
        Mutation::DeleteLines,
        Mutation::DuplicateLine,
    ];

    /// Mutations that usually keep the text parseable, so that the verifier, the passes and the
    /// interpreter see most of the inputs.
    pub const SEMANTIC: [Mutation; 5] =
        [Mutation::ExtremeNumber, Mutation::ReplaceType, Mutation::ReplaceShape, Mutation::ReplaceOpName, Mutation::SwapTokens];
}

/// Applies 1 to 4 random mutations (1 or 2 semantic ones) to `input`; `corpus` provides lines to splice in. Two times in three only
/// [`Mutation::SEMANTIC`] ones are used.
pub fn mutate(rng: &mut Rng, input: &str, corpus: &[String]) -> String {
    let mut text = input.to_string();
    let semantic = rng.below(3) != 0;
    let count = 1 + rng.below(if semantic { 2 } else { 4 });
    for _ in 0..count {
        let m = if semantic {
            Mutation::SEMANTIC[rng.below(Mutation::SEMANTIC.len())]
        } else {
            Mutation::ALL[rng.below(Mutation::ALL.len())]
        };
        text = apply(rng, m, &text, corpus);
    }
    truncate(text)
}

fn truncate(mut text: String) -> String {
    if text.len() > MAX_INPUT_BYTES {
        let mut cut = MAX_INPUT_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    text
}

/// Applies one mutation (an unchanged text when it has nothing to work on, e.g. no number to replace).
pub fn apply(rng: &mut Rng, m: Mutation, text: &str, corpus: &[String]) -> String {
    match m {
        Mutation::ByteFlip => byte_flip(rng, text),
        Mutation::DeleteToken => with_token(rng, text, |_, _| Some(String::new())),
        Mutation::DuplicateToken => with_token(rng, text, |_, t| Some(format!("{t} {t}"))),
        Mutation::SwapTokens => swap_tokens(rng, text),
        Mutation::SpliceLines => splice_lines(rng, text, corpus),
        Mutation::ExtremeNumber => replace_matching(rng, text, |k| matches!(k, TokenKind::Int(_) | TokenKind::Float(_)), |rng, _| {
            pick_str(rng, EXTREME_NUMBERS)
        }),
        Mutation::ReplaceType => replace_matching(rng, text, |k| matches!(k, TokenKind::Ident(n) if ScalarType::from_name(n).is_some()), |rng, _| {
            random_type(rng).to_string()
        }),
        Mutation::ReplaceShape => replace_matching(rng, text, |k| matches!(k, TokenKind::Shape(_)), random_shape),
        Mutation::ReplaceOpName => replace_matching(rng, text, |k| matches!(k, TokenKind::Ident(n) if n.starts_with("tile.") || n.starts_with("nvgpu.")), |rng, old| {
            // Mostly an op written the same way (`tile.add` -> `tile.max`), which still parses.
            let same_format: Vec<&str> = match OP_DEFS.iter().find(|d| d.name == old) {
                Some(def) if def.format.is_some() => OP_DEFS.iter().filter(|d| d.format == def.format).map(|d| d.name).collect(),
                _ => Vec::new(),
            };
            if !same_format.is_empty() && !rng.one_in(4) {
                return pick_str(rng, &same_format);
            }
            OP_DEFS.get(rng.below(OP_DEFS.len())).map_or("tile.add", |d| d.name).to_string()
        }),
        Mutation::InsertKeyword => {
            let at = random_boundary(rng, text);
            let kw = pick_str(rng, KEYWORD_SOUP);
            format!("{} {kw} {}", &text[..at], &text[at..])
        }
        Mutation::DeepNesting => deep_nesting(rng, text),
        Mutation::DeleteLines => {
            let mut lines: Vec<&str> = text.lines().collect();
            if !lines.is_empty() {
                let start = rng.below(lines.len());
                let len = 1 + rng.below(3.min(lines.len() - start));
                lines.drain(start..start + len);
            }
            join_lines(&lines)
        }
        Mutation::DuplicateLine => {
            let mut lines: Vec<&str> = text.lines().collect();
            if let Some(&line) = rng.pick(&lines) {
                let at = rng.below(lines.len() + 1);
                lines.insert(at, line);
            }
            join_lines(&lines)
        }
    }
}

fn pick_str(rng: &mut Rng, items: &[&str]) -> String {
    rng.pick(items).copied().unwrap_or("0").to_string()
}

fn random_type(rng: &mut Rng) -> &'static str {
    ScalarType::ALL.get(rng.below(ScalarType::ALL.len())).map_or("f32", |t| t.name())
}

/// A shape token `AxBx...xT` with small or extreme extents and a random element type.
fn random_shape(rng: &mut Rng, old: &str) -> String {
    // Mostly the same rank (and element type) as before, which the verifier is likelier to accept.
    let old_rank = old.matches('x').count().max(1);
    let keep = !rng.one_in(4);
    let max_rank = if rng.one_in(8) { 4 } else { 2 };
    let rank = if keep { old_rank } else { 1 + rng.below(max_rank) };
    let mut out = String::new();
    for _ in 0..rank {
        // Mostly the small powers of two the hardware shapes use.
        let e = if rng.one_in(4) { pick_str(rng, EXTENTS) } else { pick_str(rng, &EXTENTS[..7]) };
        out.push_str(&e);
        out.push('x');
    }
    match old.rsplit('x').next() {
        Some(elem) if keep && !rng.one_in(3) => out.push_str(elem),
        _ => out.push_str(random_type(rng)),
    }
    out
}

fn join_lines(lines: &[&str]) -> String {
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// A random char boundary in `text`.
fn random_boundary(rng: &mut Rng, text: &str) -> usize {
    let mut at = rng.below(text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn byte_flip(rng: &mut Rng, text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    if bytes.is_empty() {
        return text.to_string();
    }
    for _ in 0..1 + rng.below(4) {
        let i = rng.below(bytes.len());
        if let Some(b) = bytes.get_mut(i) {
            *b = match rng.below(3) {
                0 => *b ^ (1 << rng.below(8)),
                1 => rng.next_u64() as u8,
                // An interesting ASCII byte.
                _ => *b"{}()<>[]%@#\"\\?x:,=\n\t0-".get(rng.below(22)).unwrap_or(&b' '),
            };
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The tokens of `text` other than the end-of-file marker.
fn tokens(text: &str) -> Vec<Token> {
    let (mut toks, _) = lex(text);
    toks.retain(|t| t.kind != TokenKind::Eof && t.span.end as usize <= text.len() && t.span.start <= t.span.end);
    toks
}

fn token_text<'a>(text: &'a str, t: &Token) -> &'a str {
    text.get(t.span.range()).unwrap_or("")
}

/// Replaces one random token by what `f` makes of its text.
fn with_token(rng: &mut Rng, text: &str, f: impl FnOnce(&mut Rng, &str) -> Option<String>) -> String {
    let toks = tokens(text);
    let Some(t) = rng.pick(&toks) else { return text.to_string() };
    let r = t.span.range();
    match f(rng, token_text(text, t)) {
        Some(new) => format!("{}{new}{}", &text[..r.start], &text[r.end..]),
        None => text.to_string(),
    }
}

/// Replaces one random token among those whose kind matches.
fn replace_matching(
    rng: &mut Rng,
    text: &str,
    matches: impl Fn(&TokenKind) -> bool,
    new: impl FnOnce(&mut Rng, &str) -> String,
) -> String {
    let toks: Vec<Token> = tokens(text).into_iter().filter(|t| matches(&t.kind)).collect();
    let Some(t) = rng.pick(&toks) else { return text.to_string() };
    let r = t.span.range();
    let replacement = new(rng, token_text(text, t));
    format!("{}{replacement}{}", &text[..r.start], &text[r.end..])
}

fn swap_tokens(rng: &mut Rng, text: &str) -> String {
    let toks = tokens(text);
    if toks.len() < 2 {
        return text.to_string();
    }
    let i = rng.below(toks.len());
    // Mostly neighbours (an operand order, `%a, %b`), sometimes anywhere.
    let j = if rng.one_in(3) { rng.below(toks.len()) } else { (i + 1 + rng.below(3)).min(toks.len() - 1) };
    let (a, b) = if i <= j { (&toks[i], &toks[j]) } else { (&toks[j], &toks[i]) };
    let (ra, rb) = (a.span.range(), b.span.range());
    if ra.end > rb.start {
        return text.to_string();
    }
    format!("{}{}{}{}{}", &text[..ra.start], &text[rb.clone()], &text[ra.end..rb.start], &text[ra.clone()], &text[rb.end..])
}

/// Replaces a few lines of `text` by a few lines of another corpus input, or inserts them.
fn splice_lines(rng: &mut Rng, text: &str, corpus: &[String]) -> String {
    let Some(other) = rng.pick(corpus) else { return text.to_string() };
    let mut lines: Vec<&str> = text.lines().collect();
    let donor: Vec<&str> = other.lines().collect();
    if donor.is_empty() {
        return text.to_string();
    }
    let from = rng.below(donor.len());
    let n = 1 + rng.below(4.min(donor.len() - from));
    let at = rng.below(lines.len() + 1);
    let remove = if rng.one_in(2) { 0 } else { rng.below(3).min(lines.len() - at) };
    lines.splice(at..at + remove, donor[from..from + n].iter().copied());
    join_lines(&lines)
}

/// Wraps a random range of lines in up to a few hundred nested loops (the parser allows 200), or inserts
/// deeply nested brackets into an attribute position.
fn deep_nesting(rng: &mut Rng, text: &str) -> String {
    let depth = match rng.below(4) {
        0 => 1 + rng.below(8),
        1 => 190 + rng.below(20),
        2 => 1 + rng.below(64),
        _ => 500 + rng.below(2000),
    };
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if rng.one_in(3) {
        // Nested arrays, layouts or parentheses at a random place.
        let (open, close) = *rng.pick(&[("[", "]"), ("#swizzle<", ">"), ("(", ")"), ("{a = ", "}"), ("tile<", ">")]).unwrap_or(&("[", "]"));
        let at = random_boundary(rng, text);
        return format!("{}{}1{}{}", &text[..at], open.repeat(depth), close.repeat(depth), &text[at..]);
    }
    // Loops around lines of the first function body: `%c0`/`%c1` are defined by most inputs, and when they
    // are not the verifier says so.
    let body_start = lines.iter().position(|l| l.contains("tile.func")).map_or(0, |i| i + 1);
    let at = (body_start + rng.below(lines.len().saturating_sub(body_start).max(1))).min(lines.len());
    let mut end = (at + rng.below(4)).min(lines.len());
    if lines.get(end.saturating_sub(1)).is_some_and(|l| l.contains("tile.return")) {
        end = end.saturating_sub(1).max(at);
    }
    let mut out: Vec<String> = lines.drain(..at).collect();
    out.push("  %nest_lo = tile.constant 0 : index".into());
    out.push("  %nest_hi = tile.constant 1 : index".into());
    for i in 0..depth {
        out.push(format!("tile.for %nest{i} = %nest_lo to %nest_hi step %nest_hi {{"));
    }
    out.extend(lines.drain(..end - at));
    for _ in 0..depth {
        out.push("tile.yield".into());
        out.push("}".into());
    }
    out.extend(lines);
    let mut s = out.join("\n");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const GEMM: &str = include_str!("../../examples/gemm.tir");

    #[test]
    fn every_mutation_is_deterministic_and_valid_utf8() {
        for m in Mutation::ALL {
            for seed in 0..50 {
                let a = apply(&mut Rng::new(seed), m, GEMM, &[GEMM.to_string()]);
                let b = apply(&mut Rng::new(seed), m, GEMM, &[GEMM.to_string()]);
                assert_eq!(a, b, "{m:?}");
            }
        }
    }

    #[test]
    fn semantic_mutations_change_the_text() {
        for m in [Mutation::ExtremeNumber, Mutation::ReplaceShape, Mutation::ReplaceOpName, Mutation::ReplaceType] {
            let changed = (0..20).filter(|&s| apply(&mut Rng::new(s), m, GEMM, &[]) != GEMM).count();
            assert!(changed > 5, "{m:?} changed only {changed} of 20");
        }
    }

    #[test]
    fn inputs_stay_bounded() {
        let mut rng = Rng::new(3);
        let mut text = GEMM.to_string();
        for _ in 0..200 {
            text = mutate(&mut rng, &text, &[GEMM.to_string()]);
            assert!(text.len() <= MAX_INPUT_BYTES);
        }
    }
}
