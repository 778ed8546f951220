//! The diagnostics corpus: every `tests/diagnostics/**/*.tir` states its expected diagnostics inline
//! (`// expected-error {{...}}`, see `tilec_ir::expect`); reading it must produce exactly those.

use tilec_ir::expect::{self, ExpectedLine};
use tilec_ir::diag::Severity;
use tilec_ir::{Diagnostic, SourceFile, Span};
use tilec_tests::{diagnostics_dir, display_path, files_with_extension};

/// Issue 10 asks for at least 60 malformed or ill-typed inputs.
const MIN_CORPUS_FILES: usize = 60;

fn corpus() -> Vec<(String, String)> {
    files_with_extension(&diagnostics_dir(), "tir")
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap_or_default();
            (display_path(&path), String::from_utf8_lossy(&bytes).into_owned())
        })
        .collect()
}

#[test]
fn every_corpus_file_produces_exactly_its_expected_diagnostics() {
    let files = corpus();
    let mut failures = Vec::new();
    let mut matched = 0;
    for (name, text) in &files {
        let source = SourceFile::new(name.clone(), text.clone());
        // Files with a `// pipeline:` header also run the passes (tests/diagnostics/passes/).
        let produced = tilec_passes::expect::diagnose(text);
        match expect::check(&source, &produced) {
            Ok(n) => matched += n,
            Err(errors) => failures.push(format!("{name}:\n  {}", errors.join("\n  "))),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} corpus files do not produce their expected diagnostics:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    eprintln!("diagnostics corpus: {} files, {matched} expected diagnostics matched", files.len());
}

#[test]
fn corpus_is_large_enough() {
    let n = corpus().len();
    assert!(n >= MIN_CORPUS_FILES, "the diagnostics corpus has {n} files, fewer than {MIN_CORPUS_FILES}");
}

#[test]
fn no_corpus_file_is_expected_clean() {
    let mut clean = Vec::new();
    for (name, text) in corpus() {
        let (expectations, _) = expect::parse_expectations(&SourceFile::new(name.clone(), text));
        if !expectations.iter().any(|e| e.severity == Severity::Error) {
            clean.push(name);
        }
    }
    assert!(clean.is_empty(), "corpus files that expect no error: {clean:?}");
}

/// Spans of every diagnostic lie inside the text and on char boundaries, and render without panicking.
#[test]
fn corpus_diagnostics_point_inside_their_files() {
    for (name, text) in corpus() {
        for d in expect::diagnose(&text) {
            assert_span_inside(&name, &text, d.span);
            for note in &d.notes {
                if let Some(span) = note.span {
                    assert_span_inside(&name, &text, span);
                }
            }
        }
        let _ = tilec_tests::render_diagnostics(&name, &text);
    }
}

fn assert_span_inside(name: &str, text: &str, span: Span) {
    assert!(!span.is_unknown(), "{name}: a diagnostic from text has no location");
    let (start, end) = (span.start as usize, span.end as usize);
    assert!(start <= end && end <= text.len(), "{name}: span {start}..{end} outside a text of {} bytes", text.len());
    assert!(text.is_char_boundary(start) && text.is_char_boundary(end), "{name}: span {start}..{end} splits a character");
}

// ---- inputs that are better generated than stored -----------------------------------------------------

fn check_generated(name: &str, text: &str) -> Vec<Diagnostic> {
    let produced = expect::diagnose(text);
    let source = SourceFile::new(name, text);
    if let Err(errors) = expect::check(&source, &produced) {
        panic!("{name}:\n  {}", errors.join("\n  "));
    }
    produced
}

/// Bytes that are not UTF-8 reach the parser as replacement characters (as `tilec check` reads them).
#[test]
fn binary_garbage_is_reported_not_panicked_on() {
    let mut bytes = b"tile.func @f() {\n  %c = tile.constant 1 : index\n  ".to_vec();
    bytes.extend_from_slice(&[0x00, 0xff, 0xfe, 0x80, 0x7f]);
    // Invalid UTF-8 is replaced by U+FFFD when the file is read; each replacement is one error.
    let garbage = "expected-error {{unexpected character '\u{fffd}'}} ".repeat(3);
    let directives = format!(
        " // expected-error {{{{unexpected character '\\0'}}}} {garbage}expected-error {{{{unexpected character '\\u{{7f}}'}}}}\n  tile.return\n}}\n"
    );
    bytes.extend_from_slice(directives.as_bytes());
    let text = String::from_utf8_lossy(&bytes).into_owned();
    check_generated("binary_garbage.tir", &text);
}

/// A file of nothing but random-looking bytes: many errors, capped, and no panic.
#[test]
fn pure_binary_file_gives_bounded_diagnostics() {
    let bytes: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let diags = expect::diagnose(&text);
    assert!(!diags.is_empty());
    assert!(diags.len() <= 250, "{} diagnostics for 4 KiB of garbage", diags.len());
}

#[test]
fn very_long_line_is_reported_at_the_right_column() {
    let filler = "%a0 = tile.constant 0 : index ".len();
    let mut line = String::from("  ");
    let n = 5000;
    for i in 0..n {
        line.push_str(&format!("%v{i} = tile.constant {i} : index "));
    }
    let _ = filler;
    // The statements run together on one line; the stray character at its end is found at its column.
    line.push_str("$ // expected-error {{unexpected character '$'}}");
    let text = format!("tile.func @f() {{\n{line}\n  tile.return\n}}\n");
    let produced = check_generated("long_line.tir", &text);
    let source = SourceFile::new("long_line.tir", text.as_str());
    let (l, col) = source.line_col(produced[0].span.start as usize);
    assert_eq!(l, 2);
    assert_eq!(col, line.find('$').unwrap_or(0) + 1);
}

fn nested_loops(depth: usize) -> String {
    let mut text = String::from("tile.func @deep() {\n  %c0 = tile.constant 0 : index\n  %c1 = tile.constant 1 : index\n");
    for i in 0..depth {
        text.push_str(&format!("tile.for %i{i} = %c0 to %c1 step %c1 {{\n"));
    }
    for _ in 0..depth {
        text.push_str("tile.yield\n}\n");
    }
    text.push_str("  tile.return\n}\n");
    text
}

/// 200 nested regions (the function body and 199 loops) are accepted; one more is the nesting diagnostic.
#[test]
fn nesting_limit() {
    let limit = tilec_ir::syntax::parser::MAX_NESTING;
    assert!(expect::diagnose(&nested_loops(limit - 1)).is_empty());
    let diags = expect::diagnose(&nested_loops(limit + 1));
    assert!(!diags.is_empty());
    assert!(diags[0].message.contains(&format!("nesting is deeper than {limit} levels")), "{diags:?}");
    // The diagnostic points at the '{' of the loop one level too deep (line 3 + limit).
    let text = nested_loops(limit + 1);
    let source = SourceFile::new("deep.tir", text.as_str());
    assert_eq!(source.line_col(diags[0].span.start as usize).0, 3 + limit);
}

/// `@unknown` matches diagnostics of IR built without text (here: a builder-made function).
#[test]
fn builder_diagnostics_are_at_unknown_locations() {
    use tilec_ir::builder::FuncBuilder;
    let mut b = FuncBuilder::new("f");
    b.constant(300i64, tilec_ir::ScalarType::I8);
    b.ret();
    let produced = tilec_ir::verify::verify_func(&b.finish());
    let source = SourceFile::new("built", "// expected-error @unknown {{does not fit in 'i8'}}\n");
    assert_eq!(expect::check(&source, &produced), Ok(1));
    let wrong = SourceFile::new("built", "x // expected-error {{does not fit in 'i8'}}\n");
    let errors = expect::check(&wrong, &produced).unwrap_err();
    assert!(errors[0].starts_with("built:<unknown location>: unexpected error"), "{errors:?}");
    let _ = ExpectedLine::Unknown;
}

/// Inputs the property tests found, whose diagnostics pointed past the end of the text or into the middle
/// of a character (fixed in the lexer): `%` or `@` at the end of input or before a multi-byte character,
/// and an invalid escape of a multi-byte character.
#[test]
fn regression_spans_stay_inside_the_text() {
    for text in ["%", "@", "%\u{fffd}", "tile.func @f() {\n  %", "\"\\\u{fffd}", "\"\\u{zz}\u{e9}\""] {
        let diags = expect::diagnose(text);
        assert!(!diags.is_empty(), "{text:?}");
        for d in &diags {
            assert_span_inside(&format!("{text:?}"), text, d.span);
        }
    }
}

/// Every parse error counts towards the cap of 100 (unknown ops used to bypass it).
#[test]
fn regression_parse_errors_are_capped() {
    let body: String = (0..500).map(|i| format!("  %v{i} = tile.bogus{i}\n")).collect();
    let text = format!("tile.func @f() {{\n{body}  tile.return\n}}\n");
    assert_eq!(expect::diagnose(&text).len(), 100);
}
