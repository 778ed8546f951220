//! Source locations and diagnostics.
//!
//! Every operation, value and function keeps the [`Span`] of the text it came from. Library code returns
//! [`Diagnostic`]s; only the CLI decides how to print them and which exit code to use. Rendering goes through
//! `codespan-reporting`, which gives the `path:line:col: error: message` header, the source line and a caret.

use std::fmt;
use std::ops::Range;

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, Config};

/// A byte range in the source text. IR built through the builder API carries [`Span::UNKNOWN`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    /// The span of IR that did not come from text.
    pub const UNKNOWN: Span = Span { start: u32::MAX, end: u32::MAX };

    pub fn new(start: usize, end: usize) -> Span {
        let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX - 1);
        Span { start: clamp(start), end: clamp(end.max(start)) }
    }

    pub fn is_unknown(self) -> bool {
        self == Span::UNKNOWN
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        if self.is_unknown() {
            return other;
        }
        if other.is_unknown() {
            return self;
        }
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }

    pub fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Severity {
    Error,
    Warning,
    Note,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// A secondary location or remark attached to a diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub span: Option<Span>,
    pub message: String,
}

/// A problem found in user input, with where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub span: Span,
    pub message: String,
    pub notes: Vec<Note>,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic { severity: Severity::Error, span, message: message.into(), notes: Vec::new() }
    }

    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic { severity: Severity::Warning, span, message: message.into(), notes: Vec::new() }
    }

    /// Adds a note without a location.
    pub fn with_note(mut self, message: impl Into<String>) -> Diagnostic {
        self.notes.push(Note { span: None, message: message.into() });
        self
    }

    /// Adds a note pointing at another place in the source.
    pub fn with_note_at(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.notes.push(Note { span: Some(span), message: message.into() });
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.severity.name(), self.message)
    }
}

impl std::error::Error for Diagnostic {}

/// A named source text, for turning spans into `line:col` and printing source lines.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    /// Text that is not the file's own, as (the bytes of `text` it occupies, what put it there): the values
    /// `--param` writes into a kernel's attributes before parsing. A diagnostic on such text gets a note
    /// naming its origin, since the line it shows is not the line in the file.
    pub edits: Vec<(Span, String)>,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        SourceFile { name: name.into(), text: text.into(), edits: Vec::new() }
    }

    /// The file with its text replaced by `text`, where `origin` wrote the bytes that differ (one
    /// contiguous change: the common prefix and suffix stay). Earlier edits move with the text after them.
    pub fn edited(mut self, text: String, origin: &str) -> SourceFile {
        let (old, new) = (self.text.as_bytes(), text.as_bytes());
        let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
        let max_suffix = old.len().min(new.len()) - prefix;
        let suffix = old.iter().rev().zip(new.iter().rev()).take(max_suffix).take_while(|(a, b)| a == b).count();
        let (old_end, new_end) = (old.len() - suffix, new.len() - suffix);
        if old != new {
            let delta = new_end as i64 - old_end as i64;
            let shift = |n: u32| u32::try_from(i64::from(n) + delta).unwrap_or(n);
            for (span, _) in &mut self.edits {
                if span.start as usize >= old_end {
                    *span = Span { start: shift(span.start), end: shift(span.end) };
                }
            }
            self.edits.push((Span::new(prefix, new_end), origin.to_string()));
        }
        self.text = text;
        self
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = self.clamp(offset);
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = self.text[line_start..offset].chars().count() + 1;
        (line, col)
    }

    /// The largest char boundary not after `offset`, within the text.
    fn clamp(&self, offset: usize) -> usize {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }

    fn clamp_span(&self, span: Span) -> Range<usize> {
        let start = self.clamp(span.start as usize);
        let end = self.clamp(span.end as usize).max(start);
        start..end
    }

    /// Renders diagnostics as `path:line:col: error: message`, then the source line with a caret (and notes).
    pub fn render(&self, diagnostics: &[Diagnostic], color: bool) -> String {
        let mut out = Vec::new();
        for d in diagnostics {
            self.render_one(d, color, &mut out);
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    fn render_one(&self, d: &Diagnostic, color: bool, out: &mut Vec<u8>) {
        use std::io::Write;
        // Header line in the compiler-standard form that editors and `FileCheck` understand.
        let header = if d.span.is_unknown() {
            format!("{}: {}: {}", self.name, d.severity.name(), d.message)
        } else {
            let (line, col) = self.line_col(d.span.start as usize);
            format!("{}:{line}:{col}: {}: {}", self.name, d.severity.name(), d.message)
        };
        let _ = writeln!(out, "{header}");
        let file = SimpleFile::new(self.name.as_str(), self.text.as_str());
        let mut labels = Vec::new();
        if !d.span.is_unknown() {
            labels.push(Label::primary((), self.clamp_span(d.span)));
        }
        let mut plain_notes = Vec::new();
        for (edit, origin) in &self.edits {
            if !d.span.is_unknown() && d.span.start <= edit.end && edit.start <= d.span.end {
                plain_notes.push(format!("note: the value shown comes from {origin}, not from the file"));
            }
        }
        for note in &d.notes {
            match note.span {
                Some(span) if !span.is_unknown() => {
                    labels.push(Label::secondary((), self.clamp_span(span)).with_message(note.message.clone()))
                }
                _ => plain_notes.push(format!("note: {}", note.message)),
            }
        }
        if labels.is_empty() {
            for note in plain_notes {
                let _ = writeln!(out, "  = {note}");
            }
            return;
        }
        let severity = match d.severity {
            Severity::Error => codespan_reporting::diagnostic::Severity::Error,
            Severity::Warning => codespan_reporting::diagnostic::Severity::Warning,
            Severity::Note => codespan_reporting::diagnostic::Severity::Note,
        };
        let body = CsDiagnostic::new(severity).with_labels(labels).with_notes(plain_notes);
        let config = Config { before_label_lines: 0, after_label_lines: 0, ..Config::default() };
        let mut buffer = if color {
            term::termcolor::Buffer::ansi()
        } else {
            term::termcolor::Buffer::no_color()
        };
        // codespan prints its own header line; we print ours above and keep only the snippet below it.
        if term::emit(&mut buffer, &config, &file, &body).is_ok() {
            let text = String::from_utf8_lossy(buffer.as_slice()).into_owned();
            let snippet: Vec<&str> = text.lines().skip(1).collect();
            let _ = writeln!(out, "{}", snippet.join("\n"));
        }
    }
}

/// Several diagnostics, as an error value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(Diagnostic::is_error)
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in &self.0 {
            writeln!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Diagnostics {
        Diagnostics(vec![d])
    }
}

/// Help for a name that is not one of `candidates` (an op, a pass, a layout, ...): the one close candidate, or,
/// when none is close, every valid name. The one rule for every "did you mean" tilec prints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameHint<'a> {
    /// A likely typo of this name ([`did_you_mean`]).
    DidYouMean(&'a str),
    /// Nothing is close: the valid names, in the order given.
    OneOf(Vec<&'a str>),
}

impl<'a> NameHint<'a> {
    /// The hint for `name` among `candidates`.
    pub fn new(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> NameHint<'a> {
        let candidates: Vec<&'a str> = candidates.into_iter().collect();
        match did_you_mean(name, candidates.iter().copied()) {
            Some(close) => NameHint::DidYouMean(close),
            None => NameHint::OneOf(candidates),
        }
    }

    /// The hint as a note: `did you mean 'x'?` or `available <what>: a, b, c`.
    pub fn note(&self, what: &str) -> String {
        match self {
            NameHint::DidYouMean(close) => format!("did you mean '{close}'?"),
            NameHint::OneOf(names) => format!("available {what}: {}", names.join(", ")),
        }
    }
}

impl fmt::Display for NameHint<'_> {
    /// `did you mean 'x'?` or `expected one of: a, b, c`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameHint::DidYouMean(close) => write!(f, "did you mean '{close}'?"),
            NameHint::OneOf(names) => write!(f, "expected one of: {}", names.join(", ")),
        }
    }
}

/// The candidate `name` is most likely a typo of: the closest within a small edit distance (a quarter of
/// the name's length, at least 1 and at most 3 edits; case and `-`/`_` ignored) when no other is as close,
/// or the only candidate that starts with `name` (3 characters or more). `None` when nothing is that close: then a suggestion would be a
/// guess (`tile.reduce` is 3 edits from `tile.return`, a different op).
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let candidates: Vec<&'a str> = candidates.into_iter().collect();
    let len = name.chars().count();
    let limit = (len / 4).clamp(1, 3);
    let mut close: Vec<(usize, &'a str)> =
        candidates.iter().map(|&c| (edit_distance(name, c), c)).filter(|&(d, _)| d <= limit).collect();
    close.sort_unstable();
    let closest = match close.as_slice() {
        // Two candidates equally close: either would be a guess.
        [(d0, _), (d1, _), ..] if d0 == d1 => None,
        [(_, c), ..] => Some(*c),
        [] => None,
    };
    closest.or_else(|| {
        let lower = name.to_ascii_lowercase().replace('_', "-");
        let mut prefixed = candidates.iter().filter(|c| len >= 3 && c.to_ascii_lowercase().replace('_', "-").starts_with(&lower));
        match (prefixed.next(), prefixed.next()) {
            (Some(&only), None) => Some(only),
            _ => None,
        }
    })
}

/// Edit distance by characters (insertions, deletions, substitutions and swaps of two neighbours, each one edit:
/// the optimal-string-alignment distance, so `copy_sr2` is one edit from `copy_s2r`), where letters compare
/// without case and `-` equals `_`.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let same = |x: char, y: char| x.eq_ignore_ascii_case(&y) || (matches!(x, '-' | '_') && matches!(y, '-' | '_'));
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows of the table: i-2, i-1, i.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut row: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        row[0] = i;
        for j in 1..=b.len() {
            let mut d = (prev[j - 1] + usize::from(!same(a[i - 1], b[j - 1]))).min(row[j - 1] + 1).min(prev[j] + 1);
            if i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]) {
                d = d.min(before[j - 2] + 1);
            }
            row[j] = d;
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut row);
    }
    prev[b.len()]
}

#[cfg(test)]
mod name_hint_tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("CSE", "cse"), 0);
        assert_eq!(edit_distance("copy_g2s", "copy-g2s"), 0);
        // A swap of two neighbours is one edit (a plain Levenshtein distance counts two).
        assert_eq!(edit_distance("copy_sr2", "copy_s2r"), 1);
        assert_eq!(edit_distance("ab", "ba"), 1);
        assert_eq!(edit_distance("abc", "ca"), 3);
    }

    #[test]
    fn close_names_only() {
        let all_ops = crate::ops::OP_DEFS.iter().map(|d| d.name);
        assert_eq!(did_you_mean("tile.gather", all_ops), None);
        let ops = ["tile.return", "tile.reduce_sum", "tile.mma", "tile.copy_g2s"];
        assert_eq!(did_you_mean("tile.reduce", ops), Some("tile.reduce_sum"));
        assert_eq!(did_you_mean("tile.retrun", ops), Some("tile.return"));
        assert_eq!(did_you_mean("tile.copy_g2", ops), Some("tile.copy_g2s"));
        assert_eq!(did_you_mean("tile.mmma", ops), Some("tile.mma"));
        assert_eq!(did_you_mean("ldmatrix.x5", ["ldmatrix.x1", "ldmatrix.x4"]), None);
        let passes = ["canonicalize", "cse", "dce", "software-pipeline"];
        assert_eq!(did_you_mean("canonicalise", passes), Some("canonicalize"));
        assert_eq!(did_you_mean("canon", passes), Some("canonicalize"));
        assert_eq!(did_you_mean("dcd", passes), Some("dce"));
        assert_eq!(did_you_mean("software_pipelining", passes), Some("software-pipeline"));
        assert_eq!(did_you_mean("vectorize-loads", passes), None);
        assert_eq!(NameHint::new("frob", ["a", "b"]).to_string(), "expected one of: a, b");
        assert_eq!(NameHint::new("cse2", passes).to_string(), "did you mean 'cse'?");
        assert_eq!(NameHint::new("frob", ["a", "b"]).note("passes"), "available passes: a, b");
    }
}

#[cfg(test)]
mod edit_tests {
    use super::*;

    /// Each edit covers the bytes it wrote (the smallest change: `3` to `30` wrote the `0`); an edit before an
    /// earlier one moves it; a diagnostic on an edit's bytes gets the note naming its origin, one elsewhere
    /// does not.
    #[test]
    fn edits_follow_the_text_and_note_their_origin() {
        let file = SourceFile::new("k.tir", "a = 1, b = 2\nc = 3\n");
        let file = file.edited("a = 1, b = 2\nc = 30\n".into(), "`--param c=30`");
        let file = file.edited("a = 100, b = 2\nc = 30\n".into(), "`--param a=100`");
        assert_eq!(file.edits, [(Span::new(20, 21), "`--param c=30`".to_string()), (Span::new(5, 7), "`--param a=100`".to_string())]);
        assert_eq!((&file.text[20..21], &file.text[5..7]), ("0", "00"));
        let on_c = file.render(&[Diagnostic::error(Span::new(15, 21), "bad c")], false);
        assert!(on_c.contains("note: the value shown comes from `--param c=30`, not from the file"), "{on_c}");
        assert!(!on_c.contains("a=100"), "{on_c}");
        let on_b = file.render(&[Diagnostic::error(Span::new(9, 14), "bad b")], false);
        assert!(!on_b.contains("note:"), "{on_b}");
    }
}
