//! Options of one pass in a pipeline: the `key=value` pairs of `name{key=value other=value}`.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use tilec_ir::{Diagnostic, Span};

/// The options given to one pass, in key order. Values are kept as text; a pass parses what it accepts.
#[derive(Clone, Debug, Default)]
pub struct PassOptions {
    values: BTreeMap<String, String>,
    /// Where the options were written (the `{...}` of the pipeline text), for diagnostics.
    pub span: Span,
}

impl PassOptions {
    /// No options.
    pub fn new() -> PassOptions {
        PassOptions { values: BTreeMap::new(), span: Span::UNKNOWN }
    }

    /// Sets an option; returns the previous value.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<String>) -> Option<String> {
        self.values.insert(key.into(), value.into())
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// The options as `(key, value)` pairs, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// An option parsed as `T`, or `default` when absent; a diagnostic when it does not parse.
    pub fn parse_or<T: FromStr>(&self, pass: &str, key: &str, default: T) -> Result<T, Diagnostic> {
        match self.get(key) {
            None => Ok(default),
            Some(text) => text.parse().map_err(|_| {
                Diagnostic::error(self.span, format!("option '{key}' of pass '{pass}' has an invalid value '{text}'"))
            }),
        }
    }

    /// Fails on any option not in `accepted`, naming the options the pass does accept.
    pub fn expect_only(&self, pass: &str, accepted: &[&str]) -> Result<(), Diagnostic> {
        match self.values.keys().find(|k| !accepted.contains(&k.as_str())) {
            None => Ok(()),
            Some(key) => {
                let d = Diagnostic::error(self.span, format!("pass '{pass}' has no option '{key}'"));
                Err(if accepted.is_empty() {
                    d.with_note(format!("'{pass}' takes no options"))
                } else {
                    d.with_note(format!("'{pass}' accepts: {}", accepted.join(", ")))
                })
            }
        }
    }
}

/// Options are equal when their key/value pairs are; where they were written does not matter.
impl PartialEq for PassOptions {
    fn eq(&self, other: &PassOptions) -> bool {
        self.values == other.values
    }
}

impl Eq for PassOptions {}

/// Writes `{key=value other=value}`, or nothing when there are no options.
impl fmt::Display for PassOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.values.is_empty() {
            return Ok(());
        }
        f.write_str("{")?;
        for (i, (k, v)) in self.values.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{k}={v}")?;
        }
        f.write_str("}")
    }
}
