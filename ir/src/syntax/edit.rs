//! Source-preserving edits of a `.tir` text: setting a function's attributes in place, so that a tool
//! (`tilec tune`) can change a kernel's configuration without re-printing the file. Comments, layout and
//! the names of kernel parameters in the body (`tile<BMxBKxf16, shared>`) stay as the author wrote them;
//! re-printing would replace parameters with their values.

use crate::syntax::lexer::{lex, Token, TokenKind};

/// `text` with the attributes `attrs` (name, value as written, e.g. `("BM", "256")`) set on the function
/// `@func`: an attribute present gets its new value, one absent is added at the front of the
/// `attributes {...}` list (created if the function has none). `None` when `@func` is not found or its
/// header is malformed (parse the text first for a diagnostic).
pub fn set_func_attributes(text: &str, func: &str, attrs: &[(String, String)]) -> Option<String> {
    let (tokens, _) = lex(text);
    let at = |i: usize| tokens.get(i).map(|t: &Token| &t.kind);
    // `tile.func @func (`
    let start = (0..tokens.len()).find(|&i| {
        matches!(at(i), Some(TokenKind::Ident(w)) if w == "tile.func") && matches!(at(i + 1), Some(TokenKind::Symbol(s)) if s == func)
    })?;
    // The closing `)` of the argument list.
    let mut i = start + 2;
    let mut depth = 0usize;
    loop {
        match at(i)? {
            TokenKind::LParen => depth += 1,
            TokenKind::RParen => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    break;
                }
            }
            TokenKind::Eof => return None,
            _ => {}
        }
        i += 1;
    }
    let after_args = tokens[i].span.end as usize;
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    if matches!(at(i + 1), Some(TokenKind::Ident(w)) if w == "attributes") && at(i + 2) == Some(&TokenKind::LBrace) {
        let open = i + 2;
        let mut missing: Vec<&(String, String)> = attrs.iter().collect();
        // `name = value` entries at depth 1 of the braces; a value is one token or a bracketed list.
        let mut j = open + 1;
        while !matches!(at(j)?, TokenKind::RBrace | TokenKind::Eof) {
            let name = match at(j)? {
                TokenKind::Ident(n) | TokenKind::Str(n) => n.clone(),
                _ => return None,
            };
            j += 1;
            if at(j) == Some(&TokenKind::Equal) {
                let value_start = j + 1;
                let mut k = value_start;
                let mut nest = 0usize;
                loop {
                    match at(k)? {
                        TokenKind::LBracket => nest += 1,
                        TokenKind::RBracket => nest = nest.checked_sub(1)?,
                        TokenKind::Eof => return None,
                        _ => {}
                    }
                    if nest == 0 {
                        break;
                    }
                    k += 1;
                }
                if let Some(pos) = missing.iter().position(|(n, _)| *n == name) {
                    let (_, value) = missing.remove(pos);
                    edits.push((tokens[value_start].span.start as usize, tokens[k].span.end as usize, value.clone()));
                }
                j = k + 1;
            }
            if at(j) == Some(&TokenKind::Comma) {
                j += 1;
            }
        }
        if !missing.is_empty() {
            let entries: Vec<String> = missing.iter().map(|(n, v)| format!("{n} = {v}")).collect();
            let sep = if at(open + 1) == Some(&TokenKind::RBrace) { "" } else { ", " };
            let pos = tokens[open].span.end as usize;
            edits.push((pos, pos, format!("{}{sep}", entries.join(", "))));
        }
    } else if !attrs.is_empty() {
        let entries: Vec<String> = attrs.iter().map(|(n, v)| format!("{n} = {v}")).collect();
        edits.push((after_args, after_args, format!(" attributes {{{}}}", entries.join(", "))));
    }
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut out = text.to_string();
    for (from, to, with) in edits {
        out.replace_range(from..to, &with);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::set_func_attributes;

    fn set(text: &str, attrs: &[(&str, &str)]) -> Option<String> {
        let attrs: Vec<(String, String)> = attrs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        set_func_attributes(text, "k", &attrs)
    }

    #[test]
    fn replaces_values_keeps_comments_and_adds_what_is_missing() {
        let text = "// a comment\ntile.func @k(%a: tile<4xf32, global>) attributes {BM = 128, num_warps = 4, x = [1, 2]} {\n  tile.return // end\n}\n";
        let got = set(text, &[("BM", "256"), ("pipeline_stages", "5"), ("x", "[3]")]).unwrap();
        assert_eq!(
            got,
            "// a comment\ntile.func @k(%a: tile<4xf32, global>) attributes {pipeline_stages = 5, BM = 256, num_warps = 4, x = [3]} {\n  tile.return // end\n}\n"
        );
    }

    #[test]
    fn creates_the_attribute_list_and_leaves_other_functions_alone() {
        let text = "tile.func @j() {\n  tile.return\n}\ntile.func @k() {\n  tile.return\n}\n";
        let got = set(text, &[("num_warps", "8")]).unwrap();
        assert_eq!(got, "tile.func @j() {\n  tile.return\n}\ntile.func @k() attributes {num_warps = 8} {\n  tile.return\n}\n");
        let text = "tile.func @k() attributes {} {\n  tile.return\n}\n";
        assert_eq!(set(text, &[("A", "1")]).unwrap(), "tile.func @k() attributes {A = 1} {\n  tile.return\n}\n");
    }

    #[test]
    fn a_missing_function_or_a_broken_header_is_none() {
        assert_eq!(set("tile.func @other() {\n}\n", &[("A", "1")]), None);
        assert_eq!(set("tile.func @k(%a: tile<4xf32, global> {\n}\n", &[("A", "1")]), None);
    }
}
