//! Expected diagnostics written in the input itself, as MLIR's `-verify-diagnostics` does.
//!
//! A `.tir` file states, in comments, which diagnostics reading it must produce:
//!
//! ```text
//! %x = tile.add %a, %b : f32   // expected-error {{operands and result must have one type}}
//! // expected-error @+1 {{use of undefined value '%nope'}}
//! tile.copy_r2g %nope, %out[%c0, %c0]
//! %y = tile.frob %x : f32
//! // expected-error @above {{unknown operation 'tile.frob'}}
//! // expected-note @-2 {{did you mean}}
//! ```
//!
//! A directive is `expected-error`, `expected-warning` or `expected-note`, an optional location, and the
//! expected text between `{{` and `}}`, which must be a substring of the produced message. Locations:
//! - none: the line of the comment itself;
//! - `@+N` / `@-N`: N lines below / above the comment;
//! - `@N`: line N of the file;
//! - `@above` / `@below`: the nearest line above / below that is not blank and not only a comment;
//! - `@unknown`: a diagnostic without a location (IR built without source text).
//!
//! Notes attached to a diagnostic count as diagnostics of their own: a note with a location is expected on
//! its own line; a note without one on the line of the diagnostic it belongs to.
//!
//! [`check`] matches each produced diagnostic to one expectation (same severity, same line, substring of the
//! message). Every expectation must be matched and every produced diagnostic expected; otherwise the error
//! lists each mismatch as `path:line: ...`. [`diagnose`] is what `tilec check` reports for a text: the parse
//! errors, or when parsing succeeded, the verifier's.

use crate::diag::{Diagnostic, Severity, SourceFile, Span};

/// Where an expected diagnostic is, after resolving its `@` designator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpectedLine {
    /// A 1-based line of the file.
    Line(usize),
    /// A diagnostic without a location (`@unknown`).
    Unknown,
}

/// One `expected-*` directive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expectation {
    pub severity: Severity,
    /// Where the diagnostic must be.
    pub line: ExpectedLine,
    /// Text that must occur in the diagnostic's message.
    pub text: String,
    /// The line holding the directive (for reporting).
    pub directive_line: usize,
}

/// The parse and (when parsing succeeded) verifier diagnostics of a module's text.
pub fn diagnose(text: &str) -> Vec<Diagnostic> {
    match crate::parse_module(text) {
        Err(diags) => diags.0,
        Ok(module) => match crate::verify::verify_module(&module) {
            Ok(()) => Vec::new(),
            Err(diags) => diags.0,
        },
    }
}

/// [`diagnose`] the source and [`check`] the result against its directives.
pub fn verify_diagnostics(source: &SourceFile) -> Result<usize, Vec<String>> {
    let produced = diagnose(&source.text);
    check(source, &produced)
}

/// A produced diagnostic or note, flattened, with the line it is on.
struct Produced<'a> {
    severity: Severity,
    line: ExpectedLine,
    message: &'a str,
}

/// Checks produced diagnostics against the `expected-*` directives of `source`. Returns the number of
/// directives matched, or one `path:line: ...` line per mismatch (and per malformed directive).
pub fn check(source: &SourceFile, produced: &[Diagnostic]) -> Result<usize, Vec<String>> {
    let (expectations, mut errors) = parse_expectations(source);
    let line_of = |span: Span| {
        if span.is_unknown() {
            ExpectedLine::Unknown
        } else {
            ExpectedLine::Line(source.line_col(span.start as usize).0)
        }
    };
    let mut flat = Vec::new();
    for d in produced {
        let line = line_of(d.span);
        flat.push(Produced { severity: d.severity, line, message: &d.message });
        for note in &d.notes {
            let note_line = match note.span {
                Some(span) if !span.is_unknown() => line_of(span),
                _ => line,
            };
            flat.push(Produced { severity: Severity::Note, line: note_line, message: &note.message });
        }
    }
    let mut matched = vec![false; expectations.len()];
    let mut unexpected = Vec::new();
    for p in &flat {
        let found = expectations.iter().enumerate().position(|(i, e)| {
            !matched[i] && e.severity == p.severity && e.line == p.line && p.message.contains(e.text.as_str())
        });
        match found {
            Some(i) => matched[i] = true,
            None => unexpected.push(p),
        }
    }
    let show_line = |line: ExpectedLine| match line {
        ExpectedLine::Line(n) => format!("{}:{n}", source.name),
        ExpectedLine::Unknown => format!("{}:<unknown location>", source.name),
    };
    for p in unexpected {
        let mut message = format!("{}: unexpected {}: {}", show_line(p.line), p.severity.name(), p.message);
        // Point at the expectation this diagnostic probably was meant to satisfy.
        let near = expectations.iter().enumerate().find(|(i, e)| {
            !matched[*i] && e.severity == p.severity && (e.line == p.line || p.message.contains(e.text.as_str()))
        });
        if let Some((_, e)) = near {
            let place = match e.line {
                ExpectedLine::Line(n) => format!("line {n}"),
                ExpectedLine::Unknown => "an unknown location".to_string(),
            };
            message.push_str(&format!(
                " (line {} expects {} {{{{{}}}}} at {place})",
                e.directive_line,
                e.severity.name(),
                e.text
            ));
        }
        errors.push(message);
    }
    for (e, ok) in expectations.iter().zip(&matched) {
        if !ok {
            let at = match e.line {
                ExpectedLine::Line(n) => format!("line {n}"),
                ExpectedLine::Unknown => "an unknown location".to_string(),
            };
            errors.push(format!(
                "{}:{}: expected {} {{{{{}}}}} at {at} was not produced",
                source.name,
                e.directive_line,
                e.severity.name(),
                e.text
            ));
        }
    }
    if errors.is_empty() {
        Ok(expectations.len())
    } else {
        Err(errors)
    }
}

/// Reads every `expected-*` directive of a source text. Malformed directives are returned as error lines.
pub fn parse_expectations(source: &SourceFile) -> (Vec<Expectation>, Vec<String>) {
    let lines: Vec<&str> = source.text.split('\n').collect();
    let mut expectations = Vec::new();
    let mut errors = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let line_no = index + 1;
        let Some(comment) = line.find("//").map(|i| &line[i + 2..]) else { continue };
        let mut rest = comment;
        while let Some(at) = rest.find("expected-") {
            rest = &rest[at + "expected-".len()..];
            let (severity, tail) = if let Some(t) = rest.strip_prefix("error") {
                (Severity::Error, t)
            } else if let Some(t) = rest.strip_prefix("warning") {
                (Severity::Warning, t)
            } else if let Some(t) = rest.strip_prefix("note") {
                (Severity::Note, t)
            } else {
                continue;
            };
            // `expected-errors` or `expected-notebook` are words, not directives.
            if tail.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                continue;
            }
            match parse_directive(tail, line_no, &lines) {
                Ok((target, text, after)) => {
                    expectations.push(Expectation { severity, line: target, text, directive_line: line_no });
                    rest = after;
                }
                Err(message) => {
                    errors.push(format!("{}:{line_no}: malformed expected-{}: {message}", source.name, severity.name()));
                    break;
                }
            }
        }
    }
    (expectations, errors)
}

/// After `expected-error`: `[@designator] {{text}}`; returns the target line, the text and what follows.
fn parse_directive<'t>(tail: &'t str, line_no: usize, lines: &[&str]) -> Result<(ExpectedLine, String, &'t str), String> {
    let mut rest = tail.trim_start();
    let mut target = ExpectedLine::Line(line_no);
    if let Some(designator) = rest.strip_prefix('@') {
        let end = designator.find(|c: char| c.is_whitespace() || c == '{').unwrap_or(designator.len());
        let word = &designator[..end];
        rest = designator[end..].trim_start();
        target = match word {
            "above" => ExpectedLine::Line(
                nearest_code_line(lines, line_no, false).ok_or("no line of code above '@above'")?,
            ),
            "below" => ExpectedLine::Line(
                nearest_code_line(lines, line_no, true).ok_or("no line of code below '@below'")?,
            ),
            "unknown" => ExpectedLine::Unknown,
            _ => {
                let relative = |digits: &str| digits.parse::<usize>().map_err(|_| format!("bad line offset '@{word}'"));
                let line = if let Some(n) = word.strip_prefix('+') {
                    line_no.checked_add(relative(n)?)
                } else if let Some(n) = word.strip_prefix('-') {
                    line_no.checked_sub(relative(n)?)
                } else {
                    Some(relative(word)?)
                };
                match line {
                    Some(n) if n >= 1 && n <= lines.len() => ExpectedLine::Line(n),
                    _ => return Err(format!("'@{word}' points outside the file")),
                }
            }
        };
    }
    let Some(body) = rest.strip_prefix("{{") else {
        return Err("expected '{{' and the message text".to_string());
    };
    let Some(close) = body.find("}}") else {
        return Err("missing '}}' after the message text".to_string());
    };
    let text = &body[..close];
    if text.trim().is_empty() {
        return Err("the expected message text is empty".to_string());
    }
    Ok((target, text.to_string(), &body[close + 2..]))
}

/// The nearest line above (or below) `line_no` that holds code: not blank and not only a comment.
fn nearest_code_line(lines: &[&str], line_no: usize, below: bool) -> Option<usize> {
    let is_code = |l: &str| {
        let t = l.trim();
        !t.is_empty() && !t.starts_with("//")
    };
    if below {
        (line_no + 1..=lines.len()).find(|&n| is_code(lines[n - 1]))
    } else {
        (1..line_no).rev().find(|&n| is_code(lines[n - 1]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(text: &str) -> SourceFile {
        SourceFile::new("t.tir", text)
    }

    /// A diagnostic at the start of a 1-based line.
    fn at_line(text: &str, line: usize, message: &str) -> Diagnostic {
        let offset: usize = text.split('\n').take(line - 1).map(|l| l.len() + 1).sum();
        Diagnostic::error(Span::new(offset, offset + 1), message)
    }

    const TEXT: &str = "a\nb // expected-error {{bad b}}\n// expected-error @+1 {{bad d}}\nd\n";

    #[test]
    fn all_expected_and_produced() {
        let produced = [at_line(TEXT, 2, "very bad b here"), at_line(TEXT, 4, "bad d")];
        assert_eq!(check(&src(TEXT), &produced), Ok(2));
    }

    #[test]
    fn missing_diagnostic() {
        let produced = [at_line(TEXT, 2, "bad b")];
        let errors = check(&src(TEXT), &produced).unwrap_err();
        assert_eq!(errors, vec!["t.tir:3: expected error {{bad d}} at line 4 was not produced".to_string()]);
    }

    #[test]
    fn unexpected_diagnostic() {
        let produced = [at_line(TEXT, 2, "bad b"), at_line(TEXT, 4, "bad d"), at_line(TEXT, 1, "surprise")];
        let errors = check(&src(TEXT), &produced).unwrap_err();
        assert_eq!(errors, vec!["t.tir:1: unexpected error: surprise".to_string()]);
    }

    #[test]
    fn wrong_line_is_reported_both_ways() {
        let produced = [at_line(TEXT, 2, "bad b"), at_line(TEXT, 3, "bad d")];
        let errors = check(&src(TEXT), &produced).unwrap_err();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].starts_with("t.tir:3: unexpected error: bad d (line 3 expects error {{bad d}} at line 4)"), "{errors:?}");
        assert!(errors[1].contains("was not produced"), "{errors:?}");
    }

    #[test]
    fn wrong_text() {
        let produced = [at_line(TEXT, 2, "good b"), at_line(TEXT, 4, "bad d")];
        let errors = check(&src(TEXT), &produced).unwrap_err();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].starts_with("t.tir:2: unexpected error: good b"), "{errors:?}");
        assert!(errors[1].starts_with("t.tir:2: expected error {{bad b}}"), "{errors:?}");
    }

    #[test]
    fn wrong_severity() {
        let text = "x // expected-warning {{w}}\n";
        let errors = check(&src(text), &[at_line(text, 1, "w")]).unwrap_err();
        assert_eq!(errors.len(), 2, "{errors:?}");
    }

    #[test]
    fn one_expectation_matches_one_diagnostic() {
        let text = "x // expected-error {{dup}}\n";
        let produced = [at_line(text, 1, "dup"), at_line(text, 1, "dup")];
        assert_eq!(check(&src(text), &produced).unwrap_err().len(), 1);
        let text2 = "x // expected-error {{dup}} expected-error {{dup}}\n";
        assert_eq!(check(&src(text2), &produced), Ok(2));
    }

    #[test]
    fn designators() {
        let text = "code1\n// expected-error @above {{one}}\n\n// expected-error @below {{two}}\n// a comment\ncode2\n// expected-error @1 {{three}}\n// expected-error @-2 {{four}}\n// expected-error @unknown {{five}}\n";
        let (exp, errors) = parse_expectations(&src(text));
        assert!(errors.is_empty(), "{errors:?}");
        let lines: Vec<_> = exp.iter().map(|e| e.line).collect();
        use ExpectedLine::*;
        assert_eq!(lines, vec![Line(1), Line(6), Line(1), Line(6), Unknown]);
        let produced = [
            at_line(text, 1, "one"),
            at_line(text, 6, "two"),
            at_line(text, 1, "three"),
            at_line(text, 6, "four"),
            Diagnostic::error(Span::UNKNOWN, "five"),
        ];
        assert_eq!(check(&src(text), &produced), Ok(5));
    }

    #[test]
    fn notes_are_checked_on_their_own_lines() {
        let text = "first\nsecond // expected-error {{redefined}}\n// expected-note @-2 {{previous}}\n// expected-note @-2 {{hint}}\n";
        let d = at_line(text, 2, "redefined")
            .with_note_at(at_line(text, 1, "").span, "previous definition")
            .with_note("hint: rename it");
        assert_eq!(check(&src(text), &[d.clone()]), Ok(3));
        let without_note_expectations = "first\nsecond // expected-error {{redefined}}\n";
        let errors = check(&src(without_note_expectations), &[d]).unwrap_err();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors.iter().all(|e| e.contains("unexpected note")), "{errors:?}");
    }

    #[test]
    fn malformed_directives_are_errors() {
        for text in [
            "x // expected-error no braces\n",
            "x // expected-error {{unclosed\n",
            "x // expected-error @+9 {{outside}}\n",
            "x // expected-error @up {{what}}\n",
            "x // expected-error {{}}\n",
            "// expected-error @above {{nothing above}}\n",
        ] {
            let errors = check(&src(text), &[]).unwrap_err();
            assert!(errors[0].contains("malformed expected-error"), "{text}: {errors:?}");
        }
    }

    #[test]
    fn no_directives_and_no_diagnostics_is_ok() {
        assert_eq!(check(&src("tile.func @f() {\n  tile.return\n}\n"), &[]), Ok(0));
        // Words that merely start like a directive are not directives.
        assert_eq!(check(&src("// expected-errors are listed below; expected-notebook\n"), &[]), Ok(0));
    }

    #[test]
    fn diagnose_parses_then_verifies() {
        assert!(diagnose("tile.func @f() {\n  tile.return\n}\n").is_empty());
        let parse = diagnose("tile.func @f() {\n  tile.bogus\n}\n");
        assert!(parse[0].message.contains("unknown operation"), "{parse:?}");
        let verify = diagnose("tile.func @f() {\n  %c = tile.constant 300 : i8\n  tile.return\n}\n");
        assert!(verify[0].message.contains("does not fit in 'i8'"), "{verify:?}");
    }

    #[test]
    fn verify_diagnostics_end_to_end() {
        let text = "tile.func @f() {\n  %c = tile.constant 300 : i8 // expected-error {{does not fit}}\n  tile.return\n}\n";
        assert_eq!(verify_diagnostics(&src(text)), Ok(1));
    }
}
