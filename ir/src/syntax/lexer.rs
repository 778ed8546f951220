//! The lexer: source text to tokens. Never fails outright: bad characters become diagnostics and are skipped.

use crate::diag::{Diagnostic, Span};

/// What kind of token.
#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// `%name`: an SSA value (the text after `%`).
    ValueRef(String),
    /// `@name`: a symbol (the text after `@`).
    Symbol(String),
    /// A bare identifier or keyword, dots allowed: `tile.mma`, `f16`, `iter_args`.
    Ident(String),
    /// A layout attribute, `#name` or `#name<...>` with balanced angle brackets (the whole text).
    Layout(String),
    /// A shape prefix with its element type, e.g. `128x32xf16`, `?x?xbf16`, `4xf32`.
    Shape(String),
    Int(i64),
    Float(f64),
    Str(String),
    LParen,
    RParen,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Less,
    Greater,
    Comma,
    Colon,
    Equal,
    Arrow,
    Question,
    Eof,
}

impl TokenKind {
    /// How the token is described in "expected X, found Y" messages.
    pub fn describe(&self) -> String {
        match self {
            TokenKind::ValueRef(n) => format!("'%{n}'"),
            TokenKind::Symbol(n) => format!("'@{n}'"),
            TokenKind::Ident(n) => format!("'{n}'"),
            TokenKind::Layout(t) => format!("layout '{t}'"),
            TokenKind::Shape(t) => format!("'{t}'"),
            TokenKind::Int(n) => format!("integer {n}"),
            TokenKind::Float(x) => format!("float {x}"),
            TokenKind::Str(_) => "string".to_string(),
            TokenKind::Eof => "end of file".to_string(),
            other => format!("'{}'", other.punct()),
        }
    }

    /// The text of a punctuation token.
    pub fn punct(&self) -> &'static str {
        match self {
            TokenKind::LParen => "(",
            TokenKind::RParen => ")",
            TokenKind::LBrace => "{",
            TokenKind::RBrace => "}",
            TokenKind::LBracket => "[",
            TokenKind::RBracket => "]",
            TokenKind::Less => "<",
            TokenKind::Greater => ">",
            TokenKind::Comma => ",",
            TokenKind::Colon => ":",
            TokenKind::Equal => "=",
            TokenKind::Arrow => "->",
            TokenKind::Question => "?",
            _ => "",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

/// Longest accepted token, in bytes: a guard against pathological input.
const MAX_TOKEN_LEN: usize = 1 << 16;

/// Splits `text` into tokens (ending with [`TokenKind::Eof`]) and the diagnostics for what could not be lexed.
pub fn lex(text: &str) -> (Vec<Token>, Vec<Diagnostic>) {
    let mut lexer = Lexer { text, bytes: text.as_bytes(), pos: 0, tokens: Vec::new(), diags: Vec::new() };
    lexer.run();
    (lexer.tokens, lexer.diags)
}

struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    tokens: Vec<Token>,
    diags: Vec<Diagnostic>,
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'$'
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> u8 {
        self.bytes.get(self.pos + ahead).copied().unwrap_or(0)
    }

    fn push(&mut self, kind: TokenKind, start: usize) {
        self.tokens.push(Token { kind, span: Span::new(start, self.pos) });
    }

    fn error(&mut self, start: usize, end: usize, message: impl Into<String>) {
        // Past a hundred errors, more only hide the first ones.
        if self.diags.len() < 100 {
            self.diags.push(Diagnostic::error(Span::new(start, end), message));
        }
    }

    fn run(&mut self) {
        while self.pos < self.bytes.len() {
            let start = self.pos;
            let c = self.bytes[self.pos];
            match c {
                b' ' | b'\t' | b'\n' | b'\r' => self.pos += 1,
                b'/' if self.peek(1) == b'/' => {
                    while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                b'%' | b'@' => {
                    self.pos += 1;
                    let name_start = self.pos;
                    while is_ident_char(self.peek(0)) || self.peek(0) == b'-' {
                        self.pos += 1;
                    }
                    let name = self.text[name_start..self.pos].to_string();
                    if name.is_empty() {
                        let what = if c == b'%' { "value name" } else { "symbol name" };
                        self.error(start, start + 1, format!("expected a {what} after '{}'", c as char));
                        continue;
                    }
                    let kind = if c == b'%' { TokenKind::ValueRef(name) } else { TokenKind::Symbol(name) };
                    self.push(kind, start);
                }
                b'#' => self.lex_layout(start),
                b'"' => self.lex_string(start),
                b'0'..=b'9' | b'?' if self.looks_like_shape() => self.lex_shape(start),
                b'0'..=b'9' => self.lex_number(start),
                b'-' if self.peek(1).is_ascii_digit() => self.lex_number(start),
                b'-' if self.peek(1) == b'>' => {
                    self.pos += 2;
                    self.push(TokenKind::Arrow, start);
                }
                _ if is_ident_start(c) => {
                    while is_ident_char(self.peek(0)) {
                        self.pos += 1;
                    }
                    let word = &self.text[start..self.pos];
                    let kind = match word {
                        "inf" => TokenKind::Float(f64::INFINITY),
                        "nan" => TokenKind::Float(f64::NAN),
                        _ => TokenKind::Ident(word.to_string()),
                    };
                    self.push(kind, start);
                }
                _ => {
                    let kind = match c {
                        b'(' => Some(TokenKind::LParen),
                        b')' => Some(TokenKind::RParen),
                        b'{' => Some(TokenKind::LBrace),
                        b'}' => Some(TokenKind::RBrace),
                        b'[' => Some(TokenKind::LBracket),
                        b']' => Some(TokenKind::RBracket),
                        b'<' => Some(TokenKind::Less),
                        b'>' => Some(TokenKind::Greater),
                        b',' => Some(TokenKind::Comma),
                        b':' => Some(TokenKind::Colon),
                        b'=' => Some(TokenKind::Equal),
                        b'?' => Some(TokenKind::Question),
                        _ => None,
                    };
                    match kind {
                        Some(kind) => {
                            self.pos += 1;
                            self.push(kind, start);
                        }
                        None => {
                            let ch = self.text[start..].chars().next().unwrap_or('\u{fffd}');
                            self.pos += ch.len_utf8().max(1);
                            let shown = if ch.is_control() || ch == '\u{fffd}' {
                                format!("{:?}", ch)
                            } else {
                                format!("'{ch}'")
                            };
                            self.error(start, self.pos, format!("unexpected character {shown}"));
                        }
                    }
                }
            }
        }
        let end = self.bytes.len();
        self.tokens.push(Token { kind: TokenKind::Eof, span: Span::new(end, end) });
    }

    /// `128x`, `?x`: a dimension followed by `x` starts a shape.
    fn looks_like_shape(&self) -> bool {
        let mut i = self.pos;
        if self.bytes[i] == b'?' {
            i += 1;
        } else {
            while i < self.bytes.len() && self.bytes[i].is_ascii_digit() {
                i += 1;
            }
        }
        self.bytes.get(i) == Some(&b'x')
    }

    fn lex_shape(&mut self, start: usize) {
        while is_ident_char(self.peek(0)) || self.peek(0) == b'?' {
            self.pos += 1;
        }
        let text = self.text[start..self.pos].to_string();
        self.push(TokenKind::Shape(text), start);
    }

    fn lex_number(&mut self, start: usize) {
        if self.peek(0) == b'-' {
            self.pos += 1;
        }
        while self.peek(0).is_ascii_digit() {
            self.pos += 1;
        }
        let mut is_float = false;
        if self.peek(0) == b'.' && self.peek(1).is_ascii_digit() || self.peek(0) == b'.' && !is_ident_start(self.peek(1)) {
            is_float = true;
            self.pos += 1;
            while self.peek(0).is_ascii_digit() {
                self.pos += 1;
            }
        }
        if matches!(self.peek(0), b'e' | b'E')
            && (self.peek(1).is_ascii_digit() || matches!(self.peek(1), b'+' | b'-') && self.peek(2).is_ascii_digit())
        {
            is_float = true;
            self.pos += 2;
            while self.peek(0).is_ascii_digit() {
                self.pos += 1;
            }
        }
        let text = &self.text[start..self.pos];
        if is_float {
            match text.parse::<f64>() {
                Ok(x) => self.push(TokenKind::Float(x), start),
                Err(_) => self.error(start, self.pos, format!("invalid float literal '{text}'")),
            }
        } else {
            match text.parse::<i64>() {
                Ok(n) => self.push(TokenKind::Int(n), start),
                Err(_) => self.error(start, self.pos, format!("integer literal '{text}' does not fit in 64 bits")),
            }
        }
    }

    fn lex_string(&mut self, start: usize) {
        self.pos += 1;
        let mut value = String::new();
        loop {
            let Some(ch) = self.text[self.pos..].chars().next() else {
                self.error(start, self.pos, "unterminated string literal");
                self.push(TokenKind::Str(value), start);
                return;
            };
            self.pos += ch.len_utf8();
            match ch {
                '"' => break,
                '\n' => {
                    // Keep the string so that the parser does not report the missing token on the next line.
                    self.pos -= 1;
                    self.error(start, self.pos, "unterminated string literal");
                    self.push(TokenKind::Str(value), start);
                    return;
                }
                '\\' => {
                    // Where the escape starts (the backslash), for diagnostics that must not split a character.
                    let esc_start = self.pos - 1;
                    let esc = self.text[self.pos..].chars().next();
                    self.pos += esc.map_or(0, char::len_utf8);
                    match esc {
                        Some('n') => value.push('\n'),
                        Some('t') => value.push('\t'),
                        Some('r') => value.push('\r'),
                        Some('0') => value.push('\0'),
                        Some('\\') => value.push('\\'),
                        Some('"') => value.push('"'),
                        Some('\'') => value.push('\''),
                        Some('u') if self.peek(0) == b'{' => {
                            let close = self.text[self.pos..].find('}').map(|i| self.pos + i);
                            let code = close
                                .and_then(|c| u32::from_str_radix(&self.text[self.pos + 1..c], 16).ok())
                                .and_then(char::from_u32);
                            match (close, code) {
                                (Some(c), Some(ch)) => {
                                    value.push(ch);
                                    self.pos = c + 1;
                                }
                                _ => self.error(esc_start, self.pos, "invalid unicode escape"),
                            }
                        }
                        _ => self.error(esc_start, self.pos, "invalid escape in string literal"),
                    }
                }
                _ => value.push(ch),
            }
            if self.pos - start > MAX_TOKEN_LEN {
                self.error(start, start + 1, "string literal is too long");
                return;
            }
        }
        self.push(TokenKind::Str(value), start);
    }

    /// `#name` or `#name<...>`: the layout crate knows where its attribute ends (a `->` inside does not close it).
    fn lex_layout(&mut self, start: usize) {
        match tilec_layout::attribute_len(&self.text[start..]) {
            Ok(len) => {
                self.pos = start + len;
                let text = self.text[start..self.pos].to_string();
                self.push(TokenKind::Layout(text), start);
            }
            Err(e) => {
                // Skip the name so lexing goes on after it.
                self.pos = start + 1;
                while is_ident_char(self.peek(0)) {
                    self.pos += 1;
                }
                let at = start + e.offset.min(self.text.len() - start);
                let message = if e.message.contains("unterminated") || e.message.contains("unclosed") || at >= self.text.len() {
                    format!("unterminated layout attribute: {}", e.message)
                } else {
                    format!("malformed layout attribute: {}", e.message)
                };
                self.error(start, at.max(start + 1), message);
                // An unterminated `#x<...` swallows the rest: skip to the end of the line.
                while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                    self.pos += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        let (tokens, diags) = lex(text);
        assert!(diags.is_empty(), "{diags:?}");
        tokens.into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn lexes_an_op_line() {
        use TokenKind::*;
        assert_eq!(
            kinds("%r = tile.copy_s2r %sa[%i, %j] : tile<128x32xf16, reg> // comment"),
            vec![
                ValueRef("r".into()),
                Equal,
                Ident("tile.copy_s2r".into()),
                ValueRef("sa".into()),
                LBracket,
                ValueRef("i".into()),
                Comma,
                ValueRef("j".into()),
                RBracket,
                Colon,
                Ident("tile".into()),
                Less,
                Shape("128x32xf16".into()),
                Comma,
                Ident("reg".into()),
                Greater,
                Eof
            ]
        );
    }

    #[test]
    fn numbers_shapes_layouts_arrows() {
        use TokenKind::*;
        assert_eq!(
            kinds("-3 1.5 -2.0e-3 ?x?xf16 #hw<\"a>b\"> -> 7"),
            vec![
                Int(-3),
                Float(1.5),
                Float(-2.0e-3),
                Shape("?x?xf16".into()),
                Layout("#hw<\"a>b\">".into()),
                Arrow,
                Int(7),
                Eof
            ]
        );
    }

    #[test]
    fn bad_characters_are_reported_and_skipped() {
        let (tokens, diags) = lex("%a ` %b \u{1}");
        assert_eq!(diags.len(), 2);
        assert_eq!(tokens.len(), 3);
    }
}
