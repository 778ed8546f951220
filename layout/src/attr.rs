//! `Layout`: the layout attribute the IR stores in a tile type, and its text
//! syntax.
//!
//! ```text
//! layout  ::= '#row_major'
//!           | '#col_major'
//!           | '#hw<' STRING '>'                               hardware layout by catalogue name
//!           | '#swizzle<' INT ',' INT ',' INT ',' layout '>'  Swizzle<bits, base, shift> of a memory layout
//!           | '#linear<' linear '>'
//! linear  ::= '{' (NAME '=' '[' (basis (',' basis)*)? ']') % ',' '}' '->' '{' (NAME '=' INT) % ',' '}'
//! basis   ::= '[' (INT (',' INT)*)? ']'                      one component per output dimension
//! ```
//!
//! Examples: `#row_major`, `#hw<"mma.m16n8k16.f16.a">`, `#swizzle<3, 3, 3, #row_major>`,
//! `#linear<{register = [[0, 1]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]} -> {row = 8, col = 8}>`.
//!
//! The text is always `#` + identifier + at most one `<...>` group. Inside
//! `#linear` the arrow `->` contains a `>` that does not close the group (as in
//! MLIR's `affine_map<(d0) -> (d0)>`); [`attribute_len`] finds the end of an
//! attribute with that rule, so a lexer can cut the attribute out without
//! knowing the grammar. Whitespace is allowed between tokens. Parsing never
//! panics; errors carry the byte offset of the offending character.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use crate::error::LayoutError;
use crate::hardware::hardware_layout;
use crate::linear::LinearLayout;
use crate::memory::{col_major, row_major};
use crate::swizzle::Swizzle;

/// Deepest nesting of `#swizzle<..., #swizzle<...>>` accepted by the parser.
const MAX_NESTING: usize = 16;

/// A tile layout as written in the IR.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Row-major memory layout of the tile's shape.
    RowMajor,
    /// Column-major memory layout of the tile's shape.
    ColMajor,
    /// A catalogued hardware fragment layout (see [`crate::hardware_layout`]).
    Hardware(String),
    /// A memory layout whose offsets are XOR-swizzled.
    Swizzled {
        /// The swizzle applied to the offsets of `base`.
        swizzle: Swizzle,
        /// The unswizzled memory layout.
        base: Box<Layout>,
    },
    /// Any linear layout, written out.
    Linear(LinearLayout),
}

/// A syntax (or meaning) error in layout text.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("at byte {offset}: {message}")]
pub struct LayoutSyntaxError {
    /// Byte offset into the text given to [`Layout::parse`].
    pub offset: usize,
    /// What is wrong there.
    pub message: String,
}

impl Layout {
    /// Parses the text form (see the [module documentation](self)).
    pub fn parse(text: &str) -> Result<Layout, LayoutSyntaxError> {
        let mut p = Parser { text: text.as_bytes(), pos: 0 };
        let layout = p.layout(0)?;
        p.skip_ws();
        if p.pos != p.text.len() {
            return Err(p.error("unexpected text after the layout"));
        }
        Ok(layout)
    }

    /// The element offset in memory of coordinate `index` of a tile of `shape` stored with this layout:
    /// [`Layout::offset_with`] (the one definition of a memory layout's address map, which the backends
    /// emit as IR) evaluated on numbers. `#row_major` (also for `None`, see [`Layout::element_offset_of`]),
    /// `#col_major` (rank 2; other ranks are row-major), and `#swizzle<...>` of those, applied to the base's
    /// offset. `None` for an index of the wrong rank, a negative coordinate, an offset past `u64` (past `u32`
    /// under a swizzle), or a layout that is not a memory layout (`#linear`, `#hw`: they need a lookup table).
    pub fn element_offset(&self, shape: &[u64], index: &[i64]) -> Option<u64> {
        crate::offset::element_offset(self, shape, index)
    }

    /// [`Layout::element_offset`] for an optional layout: a tile without one is row-major.
    pub fn element_offset_of(layout: Option<&Layout>, shape: &[u64], index: &[i64]) -> Option<u64> {
        layout.unwrap_or(&Layout::RowMajor).element_offset(shape, index)
    }

    /// The layout as a [`LinearLayout`] for a `rows x cols` tile: memory layouts
    /// map `offset -> (row, col)` in element offsets, hardware layouts
    /// `(register, lane) -> (row, col)`.
    pub fn to_linear(&self, rows: u32, cols: u32) -> Result<LinearLayout, LayoutError> {
        match self {
            Layout::RowMajor => row_major(rows, cols),
            Layout::ColMajor => col_major(rows, cols),
            Layout::Hardware(name) => {
                let h = hardware_layout(name).ok_or_else(|| LayoutError::UnknownHardwareLayout(name.clone()))?;
                if h.shape() != [rows, cols] {
                    return Err(LayoutError::Incompatible(format!(
                        "{name} is {}x{}, the tile is {rows}x{cols}",
                        h.rows, h.cols
                    )));
                }
                Ok(h.layout.clone())
            }
            Layout::Swizzled { swizzle, base } => swizzle.apply_to(&base.to_linear(rows, cols)?),
            Layout::Linear(l) => {
                for (dim, want) in [("row", rows), ("col", cols)] {
                    if let Some(size) = l.out_dim_size(dim) {
                        if size != want {
                            return Err(LayoutError::Incompatible(format!("layout has {dim} = {size}, the tile {want}")));
                        }
                    }
                }
                Ok(l.clone())
            }
        }
    }
}

impl FromStr for Layout {
    type Err = LayoutSyntaxError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Layout::parse(s)
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Layout::RowMajor => write!(f, "#row_major"),
            Layout::ColMajor => write!(f, "#col_major"),
            Layout::Hardware(name) => write!(f, "#hw<\"{name}\">"),
            Layout::Swizzled { swizzle, base } => {
                write!(f, "#swizzle<{}, {}, {}, {base}>", swizzle.bits, swizzle.base, swizzle.shift)
            }
            Layout::Linear(l) => write!(f, "#linear<{l}>"),
        }
    }
}

/// Length in bytes of the layout attribute at the start of `text`: `#`, an
/// identifier, and, if a `<` follows directly, everything up to its matching
/// `>` (counting nested `<`/`>`, skipping `->` and string literals). Only the
/// extent is checked, not the grammar.
pub fn attribute_len(text: &str) -> Result<usize, LayoutSyntaxError> {
    let b = text.as_bytes();
    let err = |offset, message: &str| LayoutSyntaxError { offset, message: message.to_string() };
    if b.first() != Some(&b'#') {
        return Err(err(0, "a layout starts with `#`"));
    }
    let mut i = 1;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
        i += 1;
    }
    if i == 1 {
        return Err(err(1, "expected a layout name after `#`"));
    }
    if b.get(i) != Some(&b'<') {
        return Ok(i);
    }
    let open = i;
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            b'<' => depth += 1,
            b'-' if b.get(i + 1) == Some(&b'>') => i += 1,
            b'>' => {
                depth -= 1;
                if depth == 0 {
                    return Ok(i + 1);
                }
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += 1;
                }
                if i == b.len() {
                    return Err(err(i, "unterminated string"));
                }
            }
            _ => {}
        }
        i += 1;
    }
    Err(err(open, "unclosed `<`"))
}

struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>) -> LayoutSyntaxError {
        LayoutSyntaxError { offset: self.pos, message: message.into() }
    }

    fn error_at(&self, offset: usize, message: impl Into<String>) -> LayoutSyntaxError {
        LayoutSyntaxError { offset, message: message.into() }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn describe_here(&self) -> String {
        match self.peek() {
            None => "end of input".to_string(),
            Some(c) if c.is_ascii_graphic() => format!("`{}`", c as char),
            Some(c) if c.is_ascii() => format!("byte 0x{c:02x}"),
            Some(_) => "a non-ASCII character".to_string(),
        }
    }

    fn expect(&mut self, token: &str) -> Result<(), LayoutSyntaxError> {
        self.skip_ws();
        if self.text[self.pos..].starts_with(token.as_bytes()) {
            self.pos += token.len();
            Ok(())
        } else {
            Err(self.error(format!("expected `{token}`, found {}", self.describe_here())))
        }
    }

    /// Consumes `token` if it comes next (after whitespace).
    fn eat(&mut self, token: &str) -> bool {
        self.skip_ws();
        if self.text[self.pos..].starts_with(token.as_bytes()) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn ident(&mut self, what: &str) -> Result<String, LayoutSyntaxError> {
        self.skip_ws();
        let start = self.pos;
        if !self.peek().is_some_and(|c| c.is_ascii_alphabetic() || c == b'_') {
            return Err(self.error(format!("expected {what}, found {}", self.describe_here())));
        }
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_') {
            self.pos += 1;
        }
        // ASCII only, so this cannot fail.
        Ok(String::from_utf8_lossy(&self.text[start..self.pos]).into_owned())
    }

    fn int(&mut self) -> Result<(u32, usize), LayoutSyntaxError> {
        self.skip_ws();
        let start = self.pos;
        let mut value: u32 = 0;
        while let Some(c) = self.peek().filter(u8::is_ascii_digit) {
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u32::from(c - b'0')))
                .ok_or_else(|| self.error_at(start, "integer too large"))?;
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.error(format!("expected an integer, found {}", self.describe_here())));
        }
        Ok((value, start))
    }

    fn layout(&mut self, depth: usize) -> Result<Layout, LayoutSyntaxError> {
        self.skip_ws();
        let start = self.pos;
        if depth > MAX_NESTING {
            return Err(self.error("layouts nested too deeply"));
        }
        if self.peek() != Some(b'#') {
            return Err(self.error(format!("expected a layout starting with `#`, found {}", self.describe_here())));
        }
        self.pos += 1;
        if !self.peek().is_some_and(|c| c.is_ascii_alphabetic() || c == b'_') {
            return Err(self.error("expected a layout name after `#`"));
        }
        let name = self.ident("a layout name")?;
        match name.as_str() {
            "row_major" => Ok(Layout::RowMajor),
            "col_major" => Ok(Layout::ColMajor),
            "hw" => {
                self.expect("<")?;
                self.skip_ws();
                let at = self.pos;
                let name = self.string()?;
                if hardware_layout(&name).is_none() {
                    return Err(self.error_at(at, format!("unknown hardware layout \"{name}\"")));
                }
                self.expect(">")?;
                Ok(Layout::Hardware(name))
            }
            "swizzle" => {
                self.expect("<")?;
                let (bits, at) = self.int()?;
                self.expect(",")?;
                let (base, _) = self.int()?;
                self.expect(",")?;
                let (shift, _) = self.int()?;
                self.expect(",")?;
                let swizzle = Swizzle::new(bits, base, shift).map_err(|e| self.error_at(at, e.to_string()))?;
                let inner = self.layout(depth + 1)?;
                self.expect(">")?;
                Ok(Layout::Swizzled { swizzle, base: Box::new(inner) })
            }
            "linear" => {
                self.expect("<")?;
                let l = self.linear()?;
                self.expect(">")?;
                Ok(Layout::Linear(l))
            }
            other => Err(self.error_at(
                start,
                format!("unknown layout `#{other}` (expected #row_major, #col_major, #hw, #swizzle or #linear)"),
            )),
        }
    }

    fn string(&mut self) -> Result<String, LayoutSyntaxError> {
        self.expect("\"")?;
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c == b'"' {
                let s = String::from_utf8_lossy(&self.text[start..self.pos]).into_owned();
                self.pos += 1;
                return Ok(s);
            }
            self.pos += 1;
        }
        Err(self.error_at(start - 1, "unterminated string"))
    }

    /// `{in = [[..], ..], ..} -> {out = N, ..}`
    fn linear(&mut self) -> Result<LinearLayout, LayoutSyntaxError> {
        self.skip_ws();
        let start = self.pos;
        let mut ins: Vec<(String, Vec<Vec<u32>>)> = Vec::new();
        self.expect("{")?;
        if !self.eat("}") {
            loop {
                let name = self.ident("an input dimension name")?;
                self.expect("=")?;
                self.expect("[")?;
                let mut bases = Vec::new();
                if !self.eat("]") {
                    loop {
                        bases.push(self.basis()?);
                        if self.eat("]") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                ins.push((name, bases));
                if self.eat("}") {
                    break;
                }
                self.expect(",")?;
            }
        }
        self.expect("->")?;
        let mut outs: Vec<(String, u32)> = Vec::new();
        self.expect("{")?;
        if !self.eat("}") {
            loop {
                let name = self.ident("an output dimension name")?;
                self.expect("=")?;
                let (size, _) = self.int()?;
                outs.push((name, size));
                if self.eat("}") {
                    break;
                }
                self.expect(",")?;
            }
        }
        LinearLayout::new(ins, outs).map_err(|e| self.error_at(start, e.to_string()))
    }

    fn basis(&mut self) -> Result<Vec<u32>, LayoutSyntaxError> {
        self.expect("[")?;
        let mut v = Vec::new();
        if self.eat("]") {
            return Ok(v);
        }
        loop {
            v.push(self.int()?.0);
            if self.eat("]") {
                return Ok(v);
            }
            self.expect(",")?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for text in [
            "#row_major",
            "#col_major",
            "#hw<\"mma.m16n8k16.f16.a\">",
            "#swizzle<3, 3, 3, #row_major>",
            "#swizzle<2, 4, 3, #swizzle<1, 0, 1, #col_major>>",
            "#linear<{register = [[0, 1]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []} -> {row = 8, col = 8}>",
            "#linear<{} -> {}>",
        ] {
            let l = Layout::parse(text).unwrap();
            assert_eq!(l.to_string(), text);
            assert_eq!(attribute_len(&format!("{text} rest")), Ok(text.len()));
        }
    }

    #[test]
    fn errors_point_at_the_problem() {
        let e = Layout::parse("#hw<\"nope\">").unwrap_err();
        assert_eq!(e.offset, 4);
        let e = Layout::parse("#linear<{lane = [[0, 9]]} -> {row = 8, col = 8}>").unwrap_err();
        assert!(e.message.contains("outside"), "{e}");
        let e = Layout::parse("#swizzle<3, 3 3, #row_major>").unwrap_err();
        assert_eq!(e.offset, 14);
        let e = Layout::parse("#row_major junk").unwrap_err();
        assert_eq!(e.offset, 11);
        let e = Layout::parse("#linear<{a = [[99999999999]]} -> {b = 2}>").unwrap_err();
        assert!(e.message.contains("too large"));
        let deep = "#swizzle<1, 0, 1, ".repeat(40) + "#row_major" + &">".repeat(40);
        assert!(Layout::parse(&deep).is_err());
    }

    #[test]
    fn to_linear() {
        let l = Layout::parse("#swizzle<3, 3, 3, #row_major>").unwrap().to_linear(8, 64).unwrap();
        assert_eq!(l.find_input(&[1, 0]), Some(vec![72]));
        assert!(Layout::Hardware("ldmatrix.x4".into()).to_linear(8, 8).is_err());
    }
}
