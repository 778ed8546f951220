//! Property tests of the text format. Each property runs 256 cases by default; set `PROPTEST_CASES` to run
//! more (proptest reads it), e.g. `PROPTEST_CASES=10000 cargo test -p tilec-tests --test props --release`.

use proptest::prelude::*;
use tilec_ir::syntax::lexer::{lex, TokenKind};
use tilec_ir::{expect, parse_module, print_module, verify::verify_module, Diagnostic};
use tilec_tests::{examples_dir, files_with_extension, structurally_equal};

// ---- random well-formed programs ------------------------------------------------------------------------

/// One statement of a generated program: a kind and two operand picks (taken modulo the values in scope).
type Step = (u8, u16, u16);

const TILE: &str = "tile<16x16xf32, reg>";

/// Values in scope by type class.
#[derive(Clone, Default)]
struct Scope {
    index: Vec<String>,
    scalar: Vec<String>,
    tile: Vec<String>,
}

fn pick(values: &[String], k: u16) -> &str {
    &values[k as usize % values.len()]
}

/// A straight-line program of index, f32 and register-tile arithmetic with loops (carrying a tile and a
/// scalar) where the steps say so; every value is used only where it is in scope.
fn program(steps: &[Step], loops: &[Vec<Step>]) -> String {
    let mut out = String::from("tile.func @gen(%x: f32, %g: tile<?x?xf32, global>) attributes {num_warps = 4} {\n");
    let mut n = 0usize;
    let mut fresh = |n: &mut usize| {
        *n += 1;
        format!("%v{n}")
    };
    out.push_str("  %c0 = tile.constant 0 : index\n  %c1 = tile.constant 1 : index\n  %c4 = tile.constant 4 : index\n");
    out.push_str(&format!("  %t0 = tile.fill 1.5 : {TILE}\n"));
    let mut scope = Scope {
        index: vec!["%c0".into(), "%c1".into(), "%c4".into()],
        scalar: vec!["%x".into()],
        tile: vec!["%t0".into()],
    };
    let emit = |out: &mut String, indent: &str, scope: &mut Scope, n: &mut usize, (kind, a, b): Step, fresh: &mut dyn FnMut(&mut usize) -> String| {
        let ops = ["tile.add", "tile.sub", "tile.mul", "tile.min", "tile.max"];
        let op = ops[(a as usize + b as usize) % ops.len()];
        let v = fresh(n);
        match kind % 6 {
            0 => {
                out.push_str(&format!("{indent}{v} = tile.constant {} : index\n", a % 1000));
                scope.index.push(v);
            }
            1 => {
                out.push_str(&format!("{indent}{v} = {op} {}, {} : index\n", pick(&scope.index, a), pick(&scope.index, b)));
                scope.index.push(v);
            }
            2 => {
                out.push_str(&format!("{indent}{v} = {op} {}, {} : f32\n", pick(&scope.scalar, a), pick(&scope.scalar, b)));
                scope.scalar.push(v);
            }
            3 => {
                out.push_str(&format!("{indent}{v} = {op} {}, {} : {TILE}\n", pick(&scope.tile, a), pick(&scope.tile, b)));
                scope.tile.push(v);
            }
            4 => {
                out.push_str(&format!("{indent}{v} = tile.splat {} : {TILE}\n", pick(&scope.scalar, a)));
                scope.tile.push(v);
            }
            _ => {
                let p = fresh(n);
                out.push_str(&format!("{indent}{p} = tile.cmp lt {}, {} : i1\n", pick(&scope.scalar, a), pick(&scope.scalar, b)));
                out.push_str(&format!(
                    "{indent}{v} = tile.select {p}, {}, {} : f32\n",
                    pick(&scope.scalar, b),
                    pick(&scope.scalar, a)
                ));
                scope.scalar.push(v);
            }
        }
    };
    let per_loop = steps.len() / (loops.len() + 1) + 1;
    let mut chunks = steps.chunks(per_loop);
    for body in loops {
        for &step in chunks.next().unwrap_or(&[]) {
            emit(&mut out, "  ", &mut scope, &mut n, step, &mut fresh);
        }
        // A loop carrying a tile and a scalar; its body sees the outer values, its own are dropped after it.
        let (iv, ct, cs, rt, rs) = (fresh(&mut n), fresh(&mut n), fresh(&mut n), fresh(&mut n), fresh(&mut n));
        out.push_str(&format!(
            "  {rt}, {rs} = tile.for {iv} = {} to {} step %c1 iter_args({ct} = {}, {cs} = {}) -> ({TILE}, f32) {{\n",
            pick(&scope.index, 0),
            pick(&scope.index, 2),
            pick(&scope.tile, n as u16),
            pick(&scope.scalar, n as u16)
        ));
        let mut inner = scope.clone();
        inner.index.push(iv);
        inner.tile.push(ct);
        inner.scalar.push(cs);
        for &step in body {
            emit(&mut out, "    ", &mut inner, &mut n, step, &mut fresh);
        }
        out.push_str(&format!(
            "    tile.yield {}, {}\n  }}\n",
            inner.tile.last().map_or("", String::as_str),
            inner.scalar.last().map_or("", String::as_str)
        ));
        scope.tile.push(rt);
        scope.scalar.push(rs);
    }
    for chunk in chunks {
        for &step in chunk {
            emit(&mut out, "  ", &mut scope, &mut n, step, &mut fresh);
        }
    }
    out.push_str(&format!("  tile.copy_r2g {}, %g[%c0, %c0]\n  tile.return\n}}\n", pick(&scope.tile, n as u16)));
    out
}

fn step() -> impl Strategy<Value = Step> {
    (any::<u8>(), any::<u16>(), any::<u16>())
}

proptest! {
    #[test]
    fn generated_programs_verify_and_round_trip(
        steps in prop::collection::vec(step(), 0..40),
        loops in prop::collection::vec(prop::collection::vec(step(), 0..8), 0..3),
    ) {
        let text = program(&steps, &loops);
        let module = parse_module(&text).map_err(|d| TestCaseError::fail(format!("{d}\n{text}")))?;
        verify_module(&module).map_err(|d| TestCaseError::fail(format!("{d}\n{text}")))?;
        let printed = print_module(&module);
        let reparsed = parse_module(&printed).map_err(|d| TestCaseError::fail(format!("{d}\n{printed}")))?;
        structurally_equal(&module, &reparsed).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(print_module(&reparsed), printed);
    }
}

// ---- hostile input ---------------------------------------------------------------------------------------

/// Diagnostics of arbitrary text: never a panic, spans inside the text and on character boundaries.
fn diagnostics_are_sane(text: &str) -> Result<Vec<Diagnostic>, TestCaseError> {
    let diags = expect::diagnose(text);
    for d in &diags {
        let spans = std::iter::once(d.span).chain(d.notes.iter().filter_map(|n| n.span));
        for span in spans {
            prop_assert!(!span.is_unknown(), "diagnostic without a location: {d:?}");
            let (s, e) = (span.start as usize, span.end as usize);
            prop_assert!(s <= e && e <= text.len(), "span {s}..{e} outside {} bytes: {d:?}", text.len());
            prop_assert!(text.is_char_boundary(s) && text.is_char_boundary(e), "span {s}..{e} splits a char: {d:?}");
        }
    }
    // Rendering must not panic either.
    let _ = tilec_ir::SourceFile::new("fuzz.tir", text).render(&diags, false);
    Ok(diags)
}

/// The lexer's vocabulary, and fragments that often break parsers.
const VOCABULARY: &[&str] = &[
    "tile.func", "@f", "@g", "(", ")", "{", "}", "[", "]", "<", ">", ",", ":", "=", "->", "?", "%a", "%b", "%c0",
    "%i", "tile", "vector", "16x16xf16", "?x?xf32", "4x2xf16", "0x4xf16", "f16", "f32", "i8", "index", "i1",
    "global", "shared", "reg", "#row_major", "#hw<\"mma.m16n8k16.f16.a\">", "#swizzle<3, 3, 3, #row_major>",
    "#linear<{register = [[0, 1]]} -> {row = 8, col = 8}>", "#linear<", "#", "\"str\"", "\"", "1", "-7", "300",
    "1.5", "-2.0e-3", "inf", "nan", "99999999999999999999", "tile.constant", "tile.add", "tile.mma", "tile.for",
    "to", "step", "iter_args", "tile.yield", "tile.return", "tile.copy_g2s", "tile.copy_s2r", "tile.fill",
    "tile.alloc_shared", "tile.block_id", "x", "nvgpu.ldmatrix", "nvgpu.mma.sync", "numTiles", "mmaShape",
    "attributes", "true", "\n", "\n", "\n", "//", "$", "\u{1}", "é", "%", "@",
];

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        diagnostics_are_sane(&text)?;
    }

    #[test]
    fn token_soup_never_panics(words in prop::collection::vec(prop::sample::select(VOCABULARY), 0..120)) {
        let text = words.join(" ");
        diagnostics_are_sane(&text)?;
    }

    /// A function wrapper around a soup gets further into the parser and verifier.
    #[test]
    fn token_soup_in_a_function_never_panics(words in prop::collection::vec(prop::sample::select(VOCABULARY), 0..80)) {
        let text = format!("tile.func @f(%a: f32, %g: tile<?x?xf16, global>) {{\n  {}\n  tile.return\n}}\n", words.join(" "));
        diagnostics_are_sane(&text)?;
    }
}

// ---- mutated examples -------------------------------------------------------------------------------------

fn example_texts() -> Vec<String> {
    files_with_extension(&examples_dir(), "tir").iter().filter_map(|p| std::fs::read_to_string(p).ok()).collect()
}

#[derive(Clone, Debug)]
enum Mutation {
    DeleteToken(usize),
    DuplicateToken(usize),
    SwapTokens(usize, usize),
    ReplaceToken(usize, usize),
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteToken),
        any::<usize>().prop_map(Mutation::DuplicateToken),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapTokens(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::ReplaceToken(a, b)),
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn mutate(text: &str, m: &Mutation) -> String {
    let (tokens, _) = lex(text);
    let spans: Vec<(usize, usize)> = tokens
        .iter()
        .filter(|t| t.kind != TokenKind::Eof)
        .map(|t| (t.span.start as usize, t.span.end as usize))
        .collect();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    if spans.is_empty() || lines.is_empty() {
        return text.to_string();
    }
    let tok = |i: usize| spans[i % spans.len()];
    let line = |i: usize| i % lines.len();
    match *m {
        Mutation::DeleteToken(i) => {
            let (s, e) = tok(i);
            format!("{}{}", &text[..s], &text[e..])
        }
        Mutation::DuplicateToken(i) => {
            let (s, e) = tok(i);
            format!("{}{} {}", &text[..e], " ", &text[s..])
        }
        Mutation::SwapTokens(a, b) | Mutation::ReplaceToken(a, b) => {
            let (mut x, mut y) = (tok(a), tok(b));
            if x.0 > y.0 {
                std::mem::swap(&mut x, &mut y);
            }
            if x == y || x.1 > y.0 {
                return text.to_string();
            }
            let replace_only = matches!(m, Mutation::ReplaceToken(..));
            let first = if replace_only { &text[x.0..x.1] } else { &text[y.0..y.1] };
            format!("{}{}{}{}{}", &text[..x.0], first, &text[x.1..y.0], &text[x.0..x.1], &text[y.1..])
        }
        Mutation::DeleteLine(i) => {
            let mut l = lines.clone();
            l.remove(line(i));
            l.concat()
        }
        Mutation::DuplicateLine(i) => {
            let mut l = lines.clone();
            let at = line(i);
            l.insert(at, lines[at]);
            l.concat()
        }
        Mutation::SwapLines(a, b) => {
            let mut l = lines.clone();
            l.swap(line(a), line(b));
            l.concat()
        }
        Mutation::Truncate(i) => {
            let mut cut = i % (text.len() + 1);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text[..cut].to_string()
        }
    }
}

proptest! {
    #[test]
    fn mutated_examples_never_panic(which in any::<usize>(), mutations in prop::collection::vec(mutation(), 1..4)) {
        let examples = example_texts();
        prop_assume!(!examples.is_empty());
        let mut text = examples[which % examples.len()].clone();
        for m in &mutations {
            text = mutate(&text, m);
        }
        let diags = diagnostics_are_sane(&text)?;
        // A mutated example either still reads (and then prints and reads back) or says why not.
        if diags.is_empty() {
            let module = parse_module(&text).map_err(|d| TestCaseError::fail(format!("{d}")))?;
            let printed = print_module(&module);
            let reparsed = parse_module(&printed).map_err(|d| TestCaseError::fail(format!("{d}\n{printed}")))?;
            structurally_equal(&module, &reparsed).map_err(TestCaseError::fail)?;
        }
    }
}
