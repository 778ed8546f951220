//! Pipelines as text: `canonicalize,cse,dce` or, with options, `swizzle{max-phase=8 mode=xor},dce`.
//!
//! Grammar (whitespace is allowed around every token):
//! ```text
//! pipeline := ε | entry (',' entry)*
//! entry    := name options?
//! options  := '{' (option ((',' | ' ') option)*)? '}'
//! option   := key '=' value
//! name, key := [A-Za-z0-9_.-]+        value := any characters but whitespace, ',', '{', '}'
//! ```
//! [`Pipeline::parse`] checks the syntax only; [`crate::PassRegistry::parse_pipeline`] also checks that
//! every name is a registered pass (with a did-you-mean) and builds the passes.
//!
//! Spans in the diagnostics are byte offsets into the pipeline text, so the driver can render them with
//! a [`tilec_ir::SourceFile`] named after the flag (`--pipeline`).
//!
//! # The default pipeline
//!
//! [`default_pipeline`] is the one place that says which passes run, in which order, when the user gives
//! no `--pipeline`. Adding a pass to the compiler is: register it in
//! [`crate::PassRegistry::with_builtin`] (one line) and put its name in the list below (one line).

use std::fmt;

use tilec_ir::{Diagnostic, Span};

use crate::options::PassOptions;
use tilec_ir::Target;

/// The tile-level passes run by default for a target, as a pipeline string: what `tilec --emit tir` runs.
pub fn default_pipeline(target: Target) -> &'static str {
    match target {
        Target::Sm80 | Target::Sm86 | Target::Sm89 | Target::Sm90 | Target::Sm90a => concat!(
            "canonicalize,", // fold constants, simplify identities, drop zero-trip loops
            "cse,",          // merge identical pure ops
            "canonicalize,", // fold what merging exposed (`select %c, %x, %x`, `%x - %x`)
            "dce",           // remove what is now unused
        ),
    }
}

/// The passes that take tile-level IR down to nvgpu-level IR, run after [`default_pipeline`] when the
/// driver emits `nvgpu`, `llvm` or `ptx`.
pub fn lowering_pipeline(target: Target) -> &'static str {
    match target {
        Target::Sm80 | Target::Sm86 | Target::Sm89 | Target::Sm90 | Target::Sm90a => concat!(
            "rasterize,",           // grouped block order (the raster_group attribute; else nothing)
            "layout-assignment,",   // mma instruction shapes, warp grid, distributed register layouts
            "swizzle,",             // XOR-swizzle shared tiles: conflict-free cp.async and ldmatrix
            "lower-tile-to-nvgpu,", // copy plans: cp.async, ldmatrix, mma.sync, predicated stores
            "persistent-grid,",     // persistent = true: a loop over the logical grid's tiles (else nothing)
            "software-pipeline,",   // k-loops: multi-stage cp.async ring, one barrier per step
            "canonicalize,",        // the lowering's address arithmetic: fold,
            "cse,",                 // merge,
            "canonicalize,",
            "dce,",                 // and drop what is unused;
            "check-resources",      // then: does it fit one thread block of the target?
        ),
    }
}

/// The whole default pipeline from tile IR to nvgpu-level IR: [`default_pipeline`] then [`lowering_pipeline`].
pub fn full_pipeline(target: Target) -> String {
    format!("{},{}", default_pipeline(target), lowering_pipeline(target))
}

/// One pass of a pipeline: its name, its options, and where it was written.
#[derive(Clone, Debug, Eq)]
pub struct PipelineEntry {
    pub name: String,
    pub options: PassOptions,
    pub span: Span,
}

impl PipelineEntry {
    /// An entry without options.
    pub fn new(name: impl Into<String>) -> PipelineEntry {
        PipelineEntry { name: name.into(), options: PassOptions::new(), span: Span::UNKNOWN }
    }
}

/// Entries are equal when their names and options are; where they were written does not matter.
impl PartialEq for PipelineEntry {
    fn eq(&self, other: &PipelineEntry) -> bool {
        self.name == other.name && self.options == other.options
    }
}

/// A parsed pipeline: the passes to run, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pipeline {
    pub entries: Vec<PipelineEntry>,
}

impl Pipeline {
    /// Parses the text of a pipeline (syntax only; names are not checked).
    pub fn parse(text: &str) -> Result<Pipeline, Diagnostic> {
        Parser { text, pos: 0 }.pipeline()
    }

    /// The pass names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.name.as_str()).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

/// Writes the canonical text, which [`Pipeline::parse`] reads back to an equal pipeline.
impl fmt::Display for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.entries.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{}{}", e.name, e.options)?;
        }
        Ok(())
    }
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

fn is_value_char(c: char) -> bool {
    !c.is_whitespace() && !matches!(c, ',' | '{' | '}')
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.peek().filter(|c| c.is_whitespace()) {
            self.pos += c.len_utf8();
        }
    }

    fn take_while(&mut self, ok: fn(char) -> bool) -> (String, Span) {
        let start = self.pos;
        while let Some(c) = self.peek().filter(|&c| ok(c)) {
            self.pos += c.len_utf8();
        }
        (self.text[start..self.pos].to_string(), Span::new(start, self.pos))
    }

    /// A span covering the character at the cursor (or the end of the text).
    fn here(&self) -> Span {
        Span::new(self.pos, self.pos + self.peek().map_or(0, char::len_utf8))
    }

    fn unexpected(&self, expected: &str) -> Diagnostic {
        match self.peek() {
            Some(c) => Diagnostic::error(self.here(), format!("expected {expected}, found '{c}'")),
            None => Diagnostic::error(self.here(), format!("expected {expected}, found the end of the pipeline")),
        }
    }

    fn pipeline(mut self) -> Result<Pipeline, Diagnostic> {
        let mut entries = Vec::new();
        self.skip_ws();
        if self.peek().is_none() {
            return Ok(Pipeline { entries });
        }
        loop {
            entries.push(self.entry()?);
            self.skip_ws();
            match self.peek() {
                None => return Ok(Pipeline { entries }),
                Some(',') => {
                    let comma = self.here();
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek().is_none() {
                        return Err(Diagnostic::error(comma, "trailing ',' in pipeline")
                            .with_note("remove the comma, or name a pass after it"));
                    }
                }
                Some(_) => return Err(self.unexpected("',' between passes")),
            }
        }
    }

    fn entry(&mut self) -> Result<PipelineEntry, Diagnostic> {
        self.skip_ws();
        let (name, span) = self.take_while(is_name_char);
        if name.is_empty() {
            return Err(match self.peek() {
                Some(',') => Diagnostic::error(self.here(), "empty pass name in pipeline")
                    .with_note("passes are separated by single commas: 'canonicalize,cse,dce'"),
                _ => self.unexpected("a pass name"),
            });
        }
        self.skip_ws();
        let mut options = PassOptions::new();
        if self.peek() == Some('{') {
            options = self.options(&name)?;
        }
        let span = if options.span.is_unknown() { span } else { span.to(options.span) };
        Ok(PipelineEntry { name, options, span })
    }

    fn options(&mut self, pass: &str) -> Result<PassOptions, Diagnostic> {
        let open = self.here();
        self.pos += 1; // '{'
        let mut options = PassOptions::new();
        loop {
            self.skip_ws();
            match self.peek() {
                Some('}') => {
                    self.pos += 1;
                    options.span = open.to(Span::new(self.pos - 1, self.pos));
                    return Ok(options);
                }
                None => {
                    return Err(Diagnostic::error(open, format!("unclosed '{{' in the options of pass '{pass}'"))
                        .with_note("options are written 'name{key=value other=value}'"))
                }
                Some(',') if !options.is_empty() => {
                    self.pos += 1;
                    continue;
                }
                _ => {}
            }
            let (key, key_span) = self.take_while(is_name_char);
            if key.is_empty() {
                return Err(self.unexpected("an option name"));
            }
            self.skip_ws();
            if self.peek() != Some('=') {
                return Err(self.unexpected(&format!("'=' after option '{key}'")));
            }
            self.pos += 1;
            self.skip_ws();
            let (value, _) = self.take_while(is_value_char);
            if value.is_empty() {
                return Err(self.unexpected(&format!("a value for option '{key}'")));
            }
            if options.insert(key.clone(), value).is_some() {
                return Err(Diagnostic::error(key_span, format!("option '{key}' of pass '{pass}' is given twice")));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_pipeline_parses() {
        for t in Target::ALL {
            let p = Pipeline::parse(default_pipeline(t)).unwrap();
            assert_eq!(p.names(), ["canonicalize", "cse", "canonicalize", "dce"]);
        }
    }

    #[test]
    fn options_and_whitespace() {
        let p = Pipeline::parse(" a { k=1, j = x } , b{} ,c{z=-3 y=on}").unwrap();
        assert_eq!(p.names(), ["a", "b", "c"]);
        assert_eq!(p.entries[0].options.get("k"), Some("1"));
        assert_eq!(p.entries[0].options.get("j"), Some("x"));
        assert!(p.entries[1].options.is_empty());
        assert_eq!(p.to_string(), "a{j=x k=1},b,c{y=on z=-3}");
        assert_eq!(Pipeline::parse(&p.to_string()).unwrap(), p);
    }

    #[test]
    fn empty_text_is_an_empty_pipeline() {
        assert!(Pipeline::parse("").unwrap().is_empty());
        assert!(Pipeline::parse("   ").unwrap().is_empty());
    }
}
