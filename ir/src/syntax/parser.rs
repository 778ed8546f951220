//! The parser: tokens to a [`Module`]. Reports as many errors as it can (it resynchronises at the next
//! statement) and never panics, whatever the input.

use std::collections::{BTreeMap, HashMap, HashSet};

use tilec_layout::Layout;

use crate::attr::{AttrMap, Attribute};
use crate::body::{BlockId, Body, Func, Module, OpSpec, Value};
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::ops::{typed, Arity, OpKind, TypedOp};
use crate::syntax::format::{format_of, FormatElement};
use crate::syntax::lexer::{lex, Token, TokenKind};
use crate::types::{Dim, MemorySpace, ScalarType, TileType, Type, VectorType};

/// How deep regions and attribute arrays may nest before the parser gives up (guards the stack).
pub const MAX_NESTING: usize = 200;

/// Parses a module. On failure, returns every diagnostic found.
pub fn parse_module(text: &str) -> Result<Module, Diagnostics> {
    let (tokens, lex_diags) = lex(text);
    let mut parser = Parser::new(text, tokens);
    parser.lex_errors = lex_diags.iter().map(|d| d.span.start).collect();
    parser.diags = lex_diags;
    let module = parser.module();
    if parser.diags.is_empty() {
        Ok(module)
    } else {
        Err(Diagnostics(parser.diags))
    }
}

/// Parses a type written on its own, e.g. `tile<16x16xf16, shared>`.
pub fn parse_type(text: &str) -> Result<Type, Diagnostics> {
    let (tokens, lex_diags) = lex(text);
    if !lex_diags.is_empty() {
        return Err(Diagnostics(lex_diags));
    }
    let mut parser = Parser::new(text, tokens);
    let ty = parser.ty();
    if let Ok(ty) = ty {
        if parser.peek() != &TokenKind::Eof {
            let _ = parser.error_expected("end of input");
        } else if parser.diags.is_empty() {
            return Ok(ty);
        }
    }
    Err(Diagnostics(parser.diags))
}

/// The key of [`crate::body::Operation::attr_spans`] under which a parsed `tile.for` records where its step
/// operand was written (`step %c4`): the verifier points there at a step that is not positive.
pub const FOR_STEP_SPAN: &str = "step";

/// Marks a failure whose diagnostic has already been recorded.
struct Reported;

type PResult<T> = Result<T, Reported>;

struct Parser<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    pos: usize,
    diags: Vec<Diagnostic>,
    /// Visible value names, innermost region last.
    scopes: Vec<HashMap<String, (Value, Span)>>,
    /// Names of values whose definition failed to parse: their uses report nothing more.
    poisoned: HashSet<String>,
    depth: usize,
    /// Where the lexer reported errors: a token missing there is not reported a second time.
    lex_errors: Vec<u32>,
    /// The kernel parameters of the function being parsed ([`kernel_params`]).
    params: HashMap<String, i64>,
    /// Where the attributes of the op being parsed were written, for [`crate::body::Operation::attr_spans`].
    attr_spans: BTreeMap<String, Span>,
    /// The op whose operands, attributes and type are being parsed in its declared form: a syntax error there
    /// ([`Parser::error_expected`]) notes how the op is written.
    in_op_form: Option<OpKind>,
}

/// The kernel parameters of a function: its integer attributes whose names are upper case (`BM = 256`).
/// Inside the function's body a parameter stands for its value wherever an extent of a shape
/// (`tile<BMxBKxf16, shared>`) or an attribute value (`tile.constant BK : index`) is expected: the
/// parser specializes the kernel, as Triton does with `tl.constexpr` arguments, so everything after parsing
/// sees plain numbers. The function's argument types and its other attributes may use them as well
/// (`%Q: tile<?x?xDxf16, global>`, `warp_tile = [WM, BN]`). `tilec tune` searches over them, and
/// `--param D=128` sets one. (Upper case only: element types and keywords are
/// lower case, and a shape's dims are separated by a lower-case 'x'.)
pub fn kernel_params(attrs: &AttrMap) -> HashMap<String, i64> {
    attrs.iter().filter(|(k, _)| is_param_name(k)).filter_map(|(k, v)| Some((k.clone(), v.as_int()?))).collect()
}

/// `value` with every bare word that names a kernel parameter (`Keyword("BN")`) replaced by its value, in
/// arrays too.
fn substitute_params(value: &mut Attribute, params: &HashMap<String, i64>) {
    match value {
        Attribute::Keyword(word) => {
            if let Some(&n) = params.get(word.as_str()) {
                *value = Attribute::Int(n);
            }
        }
        Attribute::Array(items) => items.iter_mut().for_each(|item| substitute_params(item, params)),
        _ => {}
    }
}

/// `BM`, `BLOCK_K`, `W2`: an upper-case letter, then upper-case letters, digits and underscores.
pub fn is_param_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_uppercase()) && bytes.all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

impl<'a> Parser<'a> {
    fn new(text: &'a str, tokens: Vec<Token>) -> Parser<'a> {
        Parser { text, tokens, pos: 0, diags: Vec::new(), scopes: Vec::new(), poisoned: HashSet::new(), depth: 0, lex_errors: Vec::new(), params: HashMap::new(), attr_spans: BTreeMap::new(), in_op_form: None }
    }

    // ---- token plumbing -----------------------------------------------------------------------------------

    fn token(&self) -> &Token {
        let last = self.tokens.len() - 1;
        &self.tokens[self.pos.min(last)]
    }

    fn peek(&self) -> &TokenKind {
        &self.token().kind
    }

    fn peek_at(&self, ahead: usize) -> &TokenKind {
        let last = self.tokens.len() - 1;
        &self.tokens[(self.pos + ahead).min(last)].kind
    }

    fn span(&self) -> Span {
        self.token().span
    }

    fn prev_span(&self) -> Span {
        if self.pos == 0 {
            self.span()
        } else {
            self.tokens[(self.pos - 1).min(self.tokens.len() - 1)].span
        }
    }

    fn bump(&mut self) -> Token {
        let token = self.token().clone();
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        token
    }

    fn error(&mut self, span: Span, message: impl Into<String>) -> Reported {
        self.report(Diagnostic::error(span, message))
    }

    /// Records a diagnostic; past a hundred, more only hide the first ones.
    fn report(&mut self, d: Diagnostic) -> Reported {
        if self.diags.len() < 100 {
            self.diags.push(d);
        }
        Reported
    }

    fn error_expected(&mut self, what: &str) -> Reported {
        // The lexer already reported what stands between the previous token and this one (a malformed
        // literal, a stray '%'): the missing token is that, and a second error would point past it.
        let gap_start = if self.pos == 0 { 0 } else { self.tokens[(self.pos - 1).min(self.tokens.len() - 1)].span.end };
        let gap_end = self.span().start;
        if self.lex_errors.iter().any(|&at| at >= gap_start && at <= gap_end) {
            return Reported;
        }
        let found = self.peek().describe();
        // What is missing at the end of a line is reported there, not at the first token of the next line when
        // that begins a new statement (an op, or a value it defines); a stray token is reported where it is.
        let begins_statement = match self.peek() {
            TokenKind::ValueRef(_) => true,
            TokenKind::Ident(name) => name.contains('.'),
            _ => false,
        };
        let mut d = if self.pos > 0 && self.at_line_start() && begins_statement {
            let end = self.prev_span().end as usize;
            Diagnostic::error(Span::new(end, end), format!("expected {what} here, found {found} on the next line"))
        } else {
            Diagnostic::error(self.span(), format!("expected {what}, found {found}"))
        };
        // What the op looks like (`tile.mma %a, %b :` said only "expected ','").
        if let Some(kind) = self.in_op_form {
            d = d.with_note(format!("'{}' is written `{}`", kind.def().name, crate::ops::reference::syntax(kind.def())));
        }
        self.report(d)
    }

    fn eat(&mut self, kind: &TokenKind) -> bool {
        if self.peek() == kind {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, kind: TokenKind) -> PResult<Span> {
        if self.peek() == &kind {
            Ok(self.bump().span)
        } else {
            Err(self.error_expected(&format!("'{}'", kind.punct())))
        }
    }

    fn eat_keyword(&mut self, word: &str) -> bool {
        if matches!(self.peek(), TokenKind::Ident(w) if w == word) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect_keyword(&mut self, word: &str) -> PResult<Span> {
        if self.eat_keyword(word) {
            Ok(self.prev_span())
        } else {
            Err(self.error_expected(&format!("'{word}'")))
        }
    }

    /// Does the current token begin a new line of the source?
    fn at_line_start(&self) -> bool {
        if self.pos == 0 {
            return true;
        }
        let prev_end = self.tokens[self.pos - 1].span.end as usize;
        let start = self.span().start as usize;
        self.text.get(prev_end..start).is_some_and(|gap| gap.contains('\n'))
    }

    /// Skips to the next token that starts a line at this nesting level, or to a closing `}`. When the
    /// failed statement already ended at its line's end (`statement_start` is before the current token and
    /// the current token starts a line), nothing is skipped: that token begins the next statement.
    fn recover_to_next_statement(&mut self, statement_start: usize) {
        if self.pos > statement_start && self.at_line_start() {
            return;
        }
        let mut depth = 0i64;
        loop {
            match self.peek() {
                TokenKind::Eof => return,
                TokenKind::RBrace if depth == 0 => return,
                _ => {}
            }
            let kind = self.bump().kind;
            match kind {
                TokenKind::LBrace => depth += 1,
                TokenKind::RBrace => depth -= 1,
                _ => {}
            }
            if depth <= 0 && self.at_line_start() {
                return;
            }
        }
    }

    fn enter(&mut self, span: Span) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            self.depth -= 1;
            return Err(self.error(span, format!("nesting is deeper than {MAX_NESTING} levels")));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    // ---- module and functions -----------------------------------------------------------------------------

    fn module(&mut self) -> Module {
        let mut module = Module::default();
        let mut names: HashMap<String, Span> = HashMap::new();
        while self.peek() != &TokenKind::Eof {
            if !matches!(self.peek(), TokenKind::Ident(w) if w == "tile.func") {
                let _ = self.error_expected("'tile.func'");
                // Skip to the next function.
                while !matches!(self.peek(), TokenKind::Eof)
                    && !matches!(self.peek(), TokenKind::Ident(w) if w == "tile.func")
                {
                    self.bump();
                }
                continue;
            }
            if let Ok(func) = self.func() {
                if let Some(&previous) = names.get(&func.name) {
                    let d = Diagnostic::error(func.span, format!("redefinition of function '@{}'", func.name))
                        .with_note_at(previous, "previous definition is here");
                    self.report(d);
                } else {
                    names.insert(func.name.clone(), func.span);
                }
                module.funcs.push(func);
            }
        }
        module
    }

    fn func(&mut self) -> PResult<Func> {
        let start = self.expect_keyword("tile.func")?;
        let name = match self.peek().clone() {
            TokenKind::Symbol(name) => {
                self.bump();
                name
            }
            _ => {
                let r = self.error_expected("a function name like '@gemm'");
                self.skip_func_body();
                return Err(r);
            }
        };
        let mut body = Body::default();
        let entry = body.new_block();
        self.scopes = vec![HashMap::new()];
        self.poisoned.clear();
        let header = self.func_header(&mut body, entry);
        let (attrs, attr_spans) = match header {
            Ok(attrs) => attrs,
            Err(r) => {
                self.params.clear();
                self.skip_func_body();
                return Err(r);
            }
        };
        let span = start.to(self.prev_span());
        let region = self.region(&mut body, entry);
        self.params.clear();
        region?;
        Ok(Func { name, attrs, attr_spans, body, entry, span })
    }

    /// `(%a: T, ...) [attributes {...}]`. The attributes are read first, so that the argument types may use
    /// the kernel parameters (`tile<?x?xDxf16, global>` with `D = 64`) like the body does; the parameters
    /// stay set for the body.
    fn func_header(&mut self, body: &mut Body, entry: BlockId) -> PResult<(AttrMap, BTreeMap<String, Span>)> {
        self.params.clear();
        let open = self.pos;
        self.expect(TokenKind::LParen)?;
        // Past the argument list: the attributes, if any.
        let mut depth = 1usize;
        while depth > 0 && self.peek() != &TokenKind::Eof {
            match self.bump().kind {
                TokenKind::LParen => depth += 1,
                TokenKind::RParen => depth -= 1,
                TokenKind::LBrace => break,
                _ => {}
            }
        }
        let mut attrs = if depth == 0 && self.eat_keyword("attributes") { self.attr_dict()? } else { (AttrMap::new(), BTreeMap::new()) };
        let end = self.pos;
        self.params = kernel_params(&attrs.0);
        // A parameter in another kernel attribute's value (`warp_tile = [WM, BN]`) stands for its value too.
        for (name, value) in attrs.0.iter_mut() {
            if !is_param_name(name) {
                substitute_params(value, &self.params);
            }
        }
        self.pos = open + 1;
        let args = self.func_args(body, entry);
        if args.is_ok() || depth == 0 {
            // Past the header (the attributes were read already); a broken argument list is skipped.
            self.pos = end;
        }
        args.map(|()| attrs)
    }

    /// The argument list after its `(`, through its `)`.
    fn func_args(&mut self, body: &mut Body, entry: BlockId) -> PResult<()> {
        if !self.eat(&TokenKind::RParen) {
            loop {
                let (name, span) = self.value_name()?;
                self.expect(TokenKind::Colon)?;
                let ty = self.ty()?;
                let v = body.add_block_arg(entry, ty, Some(name.clone()), span);
                self.define(name, v, span)?;
                if self.eat(&TokenKind::Comma) {
                    continue;
                }
                self.expect(TokenKind::RParen)?;
                break;
            }
        }
        Ok(())
    }

    /// After a broken function header: skip its `{ ... }` body, if one follows.
    fn skip_func_body(&mut self) {
        while !matches!(self.peek(), TokenKind::LBrace | TokenKind::Eof)
            && !matches!(self.peek(), TokenKind::Ident(w) if w == "tile.func")
        {
            self.bump();
        }
        if self.peek() != &TokenKind::LBrace {
            return;
        }
        let mut depth = 0usize;
        loop {
            match self.bump().kind {
                TokenKind::LBrace => depth += 1,
                TokenKind::RBrace => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return;
                    }
                }
                TokenKind::Eof => return,
                _ => {}
            }
        }
    }

    /// `{ op* }` into `block`, in a new value scope.
    fn region(&mut self, body: &mut Body, block: BlockId) -> PResult<()> {
        let open = self.expect(TokenKind::LBrace)?;
        self.enter(open)?;
        self.scopes.push(HashMap::new());
        let result = self.region_ops(body, block, open);
        self.scopes.pop();
        self.leave();
        result
    }

    fn region_ops(&mut self, body: &mut Body, block: BlockId, open: Span) -> PResult<()> {
        loop {
            match self.peek() {
                TokenKind::RBrace => {
                    self.bump();
                    return Ok(());
                }
                TokenKind::Eof => {
                    let d = Diagnostic::error(self.span(), "unexpected end of file: missing '}'")
                        .with_note_at(open, "to close the region opened here");
                    self.report(d);
                    return Err(Reported);
                }
                _ => {
                    let before = self.pos;
                    if self.statement(body, block).is_err() {
                        self.recover_to_next_statement(before);
                        if self.pos == before {
                            self.bump();
                        }
                    }
                }
            }
        }
    }

    // ---- statements ---------------------------------------------------------------------------------------

    fn value_name(&mut self) -> PResult<(String, Span)> {
        match self.peek().clone() {
            TokenKind::ValueRef(name) => {
                let span = self.bump().span;
                Ok((name, span))
            }
            _ => Err(self.error_expected("a value name like '%x'")),
        }
    }

    fn define(&mut self, name: String, value: Value, span: Span) -> PResult<()> {
        let previous = self.scopes.iter().rev().find_map(|s| s.get(&name)).map(|&(_, span)| span);
        if let Some(previous) = previous {
            let d = Diagnostic::error(span, format!("redefinition of value '%{name}'"))
                .with_note_at(previous, "previous definition is here");
            self.report(d);
            return Err(Reported);
        }
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name, (value, span));
        }
        Ok(())
    }

    fn use_value(&mut self) -> PResult<Value> {
        let (name, span) = self.value_name()?;
        match self.scopes.iter().rev().find_map(|s| s.get(&name)) {
            Some(&(v, _)) => Ok(v),
            None if self.poisoned.contains(&name) => Err(Reported),
            None => Err(self.error(span, format!("use of undefined value '%{name}'"))),
        }
    }

    fn statement(&mut self, body: &mut Body, block: BlockId) -> PResult<()> {
        let start = self.span();
        let mut results: Vec<(String, Span)> = Vec::new();
        if matches!(self.peek(), TokenKind::ValueRef(_)) {
            loop {
                results.push(self.value_name()?);
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
            if let Err(r) = self.expect(TokenKind::Equal) {
                self.poison(&results);
                return Err(r);
            }
        }
        let outcome = self.operation(body, block, &results, start);
        if outcome.is_err() {
            self.poison(&results);
        }
        outcome
    }

    fn poison(&mut self, results: &[(String, Span)]) {
        for (name, _) in results {
            self.poisoned.insert(name.clone());
        }
    }

    fn operation(&mut self, body: &mut Body, block: BlockId, results: &[(String, Span)], start: Span) -> PResult<()> {
        let (name, name_span) = match self.peek().clone() {
            TokenKind::Ident(name) => (name, self.bump().span),
            _ => return Err(self.error_expected("an operation name")),
        };
        let Some(kind) = OpKind::from_name(&name) else {
            let d = Diagnostic::error(name_span, format!("unknown operation '{name}'")).with_note(op_name_hint(&name));
            self.report(d);
            return Err(Reported);
        };
        let spec = match kind {
            OpKind::For => self.for_op(body, results)?,
            OpKind::Func => return Err(self.error(name_span, "'tile.func' may only appear at the top level")),
            _ => match format_of(kind) {
                Some(format) => {
                    let outer = self.in_op_form.replace(kind);
                    let spec = self.formatted_op(kind, format);
                    self.in_op_form = outer;
                    spec?
                }
                None => return Err(self.error(name_span, format!("'{name}' has no textual form"))),
            },
        };
        let spec = spec.span(start.to(self.prev_span()));
        let def = kind.def();
        let n_results = spec.result_types.len();
        let arity_ok = match def.results {
            None => n_results == 0,
            Some(Arity::One) => n_results == 1,
            Some(_) => true,
        };
        if !arity_ok {
            return Err(self.error(name_span, format!("'{name}' must have {} result type(s), found {n_results}", usize::from(def.results.is_some()))));
        }
        if !results.is_empty() && results.len() != n_results {
            let what = if n_results == 0 { "no results".to_string() } else { format!("{n_results} result(s)") };
            return Err(self.error(
                results[0].1.to(name_span),
                format!("'{name}' produces {what}, but {} name(s) are bound", results.len()),
            ));
        }
        let op = body.create_op(spec);
        body.op_mut(op).attr_spans = std::mem::take(&mut self.attr_spans);
        body.append(block, op);
        let values = body.op(op).results.clone();
        for ((name, span), v) in results.iter().zip(values) {
            body.values[v.index()].name = Some(name.clone());
            body.values[v.index()].span = *span;
            self.define(name.clone(), v, *span)?;
        }
        Ok(())
    }

    /// An op with a custom assembly format.
    fn formatted_op(&mut self, kind: OpKind, format: &[FormatElement]) -> PResult<OpSpec> {
        let mut spec = OpSpec::new(kind);
        self.format_elements(&mut spec, format)?;
        Ok(spec)
    }

    fn format_elements(&mut self, spec: &mut OpSpec, format: &[FormatElement]) -> PResult<()> {
        let def = spec.kind.def();
        for element in format {
            match element {
                FormatElement::Operands(g) => {
                    let group = def.operands[*g];
                    let values = match group.arity {
                        Arity::One => vec![self.use_value()?],
                        Arity::Optional | Arity::Variadic if !matches!(self.peek(), TokenKind::ValueRef(_)) => vec![],
                        Arity::Optional => vec![self.use_value()?],
                        Arity::Variadic => self.value_list()?,
                    };
                    *spec = std::mem::replace(spec, OpSpec::new(spec.kind)).group(group.name, &values);
                }
                FormatElement::Indexed { mem, indices } => {
                    let memory = self.use_value()?;
                    let index_values = if self.eat(&TokenKind::LBracket) {
                        let list = if self.peek() == &TokenKind::RBracket { vec![] } else { self.value_list()? };
                        self.expect(TokenKind::RBracket)?;
                        list
                    } else {
                        vec![]
                    };
                    let taken = std::mem::replace(spec, OpSpec::new(spec.kind));
                    *spec = taken.group(def.operands[*mem].name, &[memory]).group(def.operands[*indices].name, &index_values);
                }
                FormatElement::Attr(name) => {
                    let span = self.span();
                    let value = self.attribute()?;
                    self.attr_spans.insert(name.to_string(), span.to(self.prev_span()));
                    spec.attrs.insert(name.to_string(), value);
                }
                FormatElement::AttrDict => {
                    if self.peek() == &TokenKind::LBrace {
                        let (attrs, spans) = self.attr_dict()?;
                        for (name, value) in attrs {
                            spec.attrs.insert(name, value);
                        }
                        self.attr_spans.extend(spans);
                    }
                }
                FormatElement::ResultTypes => loop {
                    let ty = self.ty()?;
                    spec.result_types.push(ty);
                    if !self.eat(&TokenKind::Comma) {
                        break;
                    }
                },
                FormatElement::Literal(word) => self.literal(word)?,
                FormatElement::Optional(inner) => {
                    let present = match inner.first() {
                        Some(FormatElement::Literal(word)) => self.at_literal(word),
                        _ => false,
                    };
                    if present {
                        self.format_elements(spec, inner)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn at_literal(&self, word: &str) -> bool {
        match self.peek() {
            TokenKind::Ident(w) => w == word,
            other => other.punct() == word && !word.is_empty(),
        }
    }

    fn literal(&mut self, word: &str) -> PResult<()> {
        if self.at_literal(word) {
            self.bump();
            Ok(())
        } else {
            Err(self.error_expected(&format!("'{word}'")))
        }
    }

    fn value_list(&mut self) -> PResult<Vec<Value>> {
        let mut values = vec![self.use_value()?];
        while self.peek() == &TokenKind::Comma && matches!(self.peek_at(1), TokenKind::ValueRef(_)) {
            self.bump();
            values.push(self.use_value()?);
        }
        Ok(values)
    }

    /// `tile.for %iv = %lb to %ub step %s [iter_args(%x = %init, ...) -> (T, ...)] [attributes {...}] { ... }`
    fn for_op(&mut self, body: &mut Body, results: &[(String, Span)]) -> PResult<OpSpec> {
        let (iv_name, iv_span) = self.value_name()?;
        self.expect(TokenKind::Equal)?;
        let lower = self.use_value()?;
        self.expect_keyword("to")?;
        let upper = self.use_value()?;
        self.expect_keyword("step")?;
        let step_span = self.span();
        let step = self.use_value()?;
        let mut carried: Vec<(String, Span)> = Vec::new();
        let mut inits = Vec::new();
        let mut types = Vec::new();
        if self.eat_keyword("iter_args") {
            self.expect(TokenKind::LParen)?;
            if self.peek() != &TokenKind::RParen {
                loop {
                    carried.push(self.value_name()?);
                    self.expect(TokenKind::Equal)?;
                    inits.push(self.use_value()?);
                    if !self.eat(&TokenKind::Comma) {
                        break;
                    }
                }
            }
            self.expect(TokenKind::RParen)?;
            let arrow = self.expect(TokenKind::Arrow)?;
            self.expect(TokenKind::LParen)?;
            if self.peek() != &TokenKind::RParen {
                loop {
                    types.push(self.ty()?);
                    if !self.eat(&TokenKind::Comma) {
                        break;
                    }
                }
            }
            self.expect(TokenKind::RParen)?;
            if types.len() != inits.len() {
                return Err(self.error(
                    arrow.to(self.prev_span()),
                    format!("'tile.for' has {} iter_args but {} result type(s)", inits.len(), types.len()),
                ));
            }
        }
        let (attrs, attr_spans) = if self.eat_keyword("attributes") { self.attr_dict()? } else { (AttrMap::new(), BTreeMap::new()) };
        let _ = results;
        let block = body.new_block();
        let iv_span_copy = iv_span;
        let iv = body.add_block_arg(block, Type::INDEX, Some(iv_name.clone()), iv_span);
        // The body's scope holds the induction variable and the loop-carried values.
        let open = self.span();
        self.expect(TokenKind::LBrace)?;
        self.enter(open)?;
        self.scopes.push(HashMap::new());
        let mut outcome = self.define(iv_name, iv, iv_span_copy);
        for ((name, span), ty) in carried.iter().zip(&types) {
            let v = body.add_block_arg(block, ty.clone(), Some(name.clone()), *span);
            if self.define(name.clone(), v, *span).is_err() {
                outcome = Err(Reported);
            }
        }
        let region = self.region_ops(body, block, open);
        self.scopes.pop();
        self.leave();
        outcome?;
        region?;
        let mut spec = typed::For { lower, upper, step, inits, pipeline_stages: None, hoist: None }.into_spec().region(block);
        spec.result_types = types;
        spec.attrs = attrs;
        // The body's ops took their own spans; these are the loop's, and where its step was written.
        self.attr_spans = attr_spans;
        self.attr_spans.insert(FOR_STEP_SPAN.to_string(), step_span);
        Ok(spec)
    }

    // ---- attributes ---------------------------------------------------------------------------------------

    /// `{name = value, ...}`, with where each attribute was written (the verifier checks them against the
    /// declarations and points at them).
    fn attr_dict(&mut self) -> PResult<(AttrMap, BTreeMap<String, Span>)> {
        let open = self.expect(TokenKind::LBrace)?;
        let mut attrs = AttrMap::new();
        let mut spans = BTreeMap::new();
        if self.eat(&TokenKind::RBrace) {
            return Ok((attrs, spans));
        }
        loop {
            let (name, span) = match self.peek().clone() {
                TokenKind::Ident(name) => (name, self.bump().span),
                TokenKind::Str(name) => (name, self.bump().span),
                _ => return Err(self.error_expected("an attribute name")),
            };
            let value = if self.eat(&TokenKind::Equal) { self.attribute()? } else { Attribute::Bool(true) };
            spans.insert(name.clone(), span.to(self.prev_span()));
            if attrs.insert(name.clone(), value).is_some() {
                return Err(self.error(span, format!("attribute '{name}' is given twice")));
            }
            if self.eat(&TokenKind::Comma) {
                continue;
            }
            if self.eat(&TokenKind::RBrace) {
                return Ok((attrs, spans));
            }
            let r = self.error_expected("',' or '}'");
            if let Some(d) = self.diags.last_mut() {
                d.notes.push(crate::diag::Note { span: Some(open), message: "in the attribute list opened here".into() });
            }
            return Err(r);
        }
    }

    fn attribute(&mut self) -> PResult<Attribute> {
        let saved = self.pos;
        let token = self.bump();
        Ok(match token.kind {
            TokenKind::Int(n) => Attribute::Int(n),
            TokenKind::Float(x) => Attribute::Float(x),
            TokenKind::Str(s) => Attribute::Str(s),
            TokenKind::Ident(word) => match word.as_str() {
                "true" => Attribute::Bool(true),
                "false" => Attribute::Bool(false),
                _ => match self.params.get(&word) {
                    // A kernel parameter where a value is expected, e.g. `tile.constant BK : index`.
                    Some(&n) => Attribute::Int(n),
                    None => Attribute::Keyword(word),
                },
            },
            TokenKind::LBracket => {
                self.enter(token.span)?;
                let items = self.attribute_items();
                self.leave();
                Attribute::Array(items?)
            }
            _ => {
                self.pos = saved;
                return Err(self.error_expected("an attribute value"));
            }
        })
    }

    fn attribute_items(&mut self) -> PResult<Vec<Attribute>> {
        let mut items = Vec::new();
        if self.eat(&TokenKind::RBracket) {
            return Ok(items);
        }
        loop {
            items.push(self.attribute()?);
            if self.eat(&TokenKind::Comma) {
                continue;
            }
            self.expect(TokenKind::RBracket)?;
            return Ok(items);
        }
    }

    // ---- types --------------------------------------------------------------------------------------------

    fn ty(&mut self) -> PResult<Type> {
        let saved = self.pos;
        let token = self.bump();
        match &token.kind {
            TokenKind::Ident(word) if word == "tile" => self.tile_type(),
            TokenKind::Ident(word) if word == "vector" => self.vector_type(),
            TokenKind::Ident(word) => match ScalarType::from_name(word) {
                Some(s) => Ok(Type::Scalar(s)),
                // An op name where a type should be: the type is missing (`: ` at the end of a line).
                None if OpKind::from_name(word).is_some() => {
                    self.pos = saved;
                    Err(self.error_expected("a type"))
                }
                None => Err(self.error(token.span, format!("unknown type '{word}'"))),
            },
            _ => {
                self.pos = saved;
                Err(self.error_expected("a type"))
            }
        }
    }

    /// `128x32xf16` (the shape token) into extents and element type.
    fn shape(&mut self, allow_dynamic: bool) -> PResult<(Vec<Dim>, ScalarType)> {
        let saved = self.pos;
        let token = self.bump();
        // A shape that starts with a kernel parameter (`BMxBKxf16`) lexes as an identifier.
        let starts_with_param = |t: &str| t.split_once('x').is_some_and(|(first, _)| is_param_name(first));
        let text = match &token.kind {
            TokenKind::Shape(text) => text,
            TokenKind::Ident(text) if starts_with_param(text) => text,
            _ => {
                self.pos = saved;
                return Err(self.error_expected("a shape like '16x16xf16'"));
            }
        };
        let mut dims = Vec::new();
        let mut rest = text.as_str();
        let mut offset = token.span.start as usize;
        while let Some((dim, tail)) = rest.split_once('x') {
            let dim_span = Span::new(offset, offset + dim.len());
            if dim == "?" {
                if !allow_dynamic {
                    return Err(self.error(dim_span, "dynamic extent '?' is only allowed in tile types"));
                }
                dims.push(Dim::Dynamic);
            } else if !dim.is_empty() && dim.bytes().all(|b| b.is_ascii_digit()) {
                match dim.parse::<u64>() {
                    Ok(n) if n > 0 && n <= 1 << 31 => dims.push(Dim::Static(n)),
                    Ok(0) => return Err(self.error(dim_span, "extent must be positive")),
                    _ => return Err(self.error(dim_span, format!("extent '{dim}' is too large"))),
                }
            } else if is_param_name(dim) {
                match self.params.get(dim) {
                    Some(&n) if n > 0 && n <= 1 << 31 => dims.push(Dim::Static(n as u64)),
                    Some(&n) => return Err(self.error(dim_span, format!("kernel parameter {dim} = {n} is not a valid extent (1 to 2^31)"))),
                    None => {
                        let d = self.error(dim_span, format!("unknown kernel parameter '{dim}'"));
                        if let Some(last) = self.diags.last_mut() {
                            last.notes.push(crate::diag::Note {
                                span: None,
                                message: format!("declare it as an integer attribute of the function, e.g. 'attributes {{{dim} = 128}}'"),
                            });
                        }
                        return Err(d);
                    }
                }
            } else {
                // What is left is the element type, e.g. `index` holds an 'x'.
                break;
            }
            offset += dim.len() + 1;
            rest = tail;
        }
        let elem_span = Span::new(offset, token.span.end as usize);
        match ScalarType::from_name(rest) {
            Some(elem) => Ok((dims, elem)),
            None => Err(self.error(elem_span, format!("unknown element type '{rest}'"))),
        }
    }

    /// After `tile`: `<SHAPExELEM, space[, #layout]>`
    fn tile_type(&mut self) -> PResult<Type> {
        self.expect(TokenKind::Less)?;
        let (shape, elem) = self.shape(true)?;
        self.expect(TokenKind::Comma)?;
        let saved = self.pos;
        let space_token = self.bump();
        let space = match &space_token.kind {
            TokenKind::Ident(word) => MemorySpace::from_name(word),
            _ => None,
        };
        let Some(space) = space else {
            self.pos = saved;
            return Err(self.error_expected("a memory space ('global', 'shared' or 'reg')"));
        };
        let mut layout = None;
        if self.eat(&TokenKind::Comma) {
            layout = Some(self.layout()?);
        }
        self.expect(TokenKind::Greater)?;
        Ok(Type::Tile(TileType { shape, elem, space, layout }))
    }

    fn layout(&mut self) -> PResult<Layout> {
        let saved = self.pos;
        let token = self.bump();
        let TokenKind::Layout(text) = &token.kind else {
            self.pos = saved;
            return Err(self.error_expected("a layout attribute like '#row_major'"));
        };
        match Layout::parse(text) {
            Ok(layout) => Ok(layout),
            Err(e) => {
                let at = token.span.start as usize + e.offset.min(text.len());
                Err(self.error(Span::new(at, (at + 1).min(token.span.end as usize)), e.message))
            }
        }
    }

    /// After `vector`: `<SHAPExELEM>`
    fn vector_type(&mut self) -> PResult<Type> {
        self.expect(TokenKind::Less)?;
        let (shape, elem) = self.shape(false)?;
        self.expect(TokenKind::Greater)?;
        let shape = shape.into_iter().filter_map(Dim::as_static).collect();
        Ok(Type::Vector(VectorType { shape, elem }))
    }
}

/// "did you mean" for an unknown op name, or the ops of its dialect (of all dialects when the prefix names none).
fn op_name_hint(name: &str) -> String {
    let dialect = |n: &str| n.split('.').next().map(str::to_string);
    let same_dialect: Vec<&'static str> =
        crate::ops::OP_DEFS.iter().map(|d| d.name).filter(|n| dialect(n) == dialect(name)).collect();
    if same_dialect.is_empty() {
        crate::diag::NameHint::new(name, crate::ops::OP_DEFS.iter().map(|d| d.name)).note("operations")
    } else {
        // The shared prefix makes names look closer than they are: `tile.abs` is two edits from `tile.add`,
        // close for 8 characters but a guess for `abs` against `add`. A suggestion must also be close
        // without the prefix (a third of the short name's length: `retrun` still gets `return`).
        let short = |n: &str| n.split_once('.').map_or(n.len(), |(_, rest)| rest.chars().count());
        match crate::diag::NameHint::new(name, same_dialect.clone()) {
            crate::diag::NameHint::DidYouMean(close)
                if crate::diag::edit_distance(name, close) > (short(name) / 3).max(1) =>
            {
                crate::diag::NameHint::OneOf(same_dialect).note("operations")
            }
            hint => hint.note("operations"),
        }
    }
}
