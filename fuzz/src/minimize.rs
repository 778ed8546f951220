//! Delta debugging of a crashing input: remove chunks of lines, then chunks of tokens, as long as the
//! input still fails the same way (same [`crate::FindingKind`] and signature).

use tilec_ir::syntax::lexer::{lex, TokenKind};

/// Shrinks `input` while `still_fails` holds, trying at most `budget` candidates. `still_fails(input)`
/// must hold at the start. Lines first (chunks halving from half the file to one line), then tokens.
pub fn minimize(input: &str, budget: usize, still_fails: &mut dyn FnMut(&str) -> bool) -> String {
    let mut tries = 0usize;
    let mut current = input.to_string();
    // Lines.
    let mut units: Vec<String> = current.lines().map(|l| format!("{l}\n")).collect();
    units = ddmin(units, &mut tries, budget, still_fails);
    current = units.concat();
    // Tokens, keeping what lies between them with the token that follows.
    let units = token_units(&current);
    let units = ddmin(units, &mut tries, budget, still_fails);
    current = units.concat();
    // Trailing whitespace of lines does not matter to the lexer; tidy it when the failure allows.
    let tidy: String = current.lines().map(|l| format!("{}\n", l.trim_end())).collect();
    if tidy != current && tries < budget && still_fails(&tidy) {
        current = tidy;
    }
    current
}

/// Splits text into units that concatenate back to it: each token with the text before it.
fn token_units(text: &str) -> Vec<String> {
    let (tokens, _) = lex(text);
    let mut units = Vec::new();
    let mut last = 0usize;
    for t in tokens.iter().filter(|t| t.kind != TokenKind::Eof) {
        let end = (t.span.end as usize).min(text.len());
        if end <= last || !text.is_char_boundary(end) {
            continue;
        }
        units.push(text[last..end].to_string());
        last = end;
    }
    if last < text.len() {
        units.push(text[last..].to_string());
    }
    units
}

/// Removes chunks of `units` (sizes n/2, n/4, ..., 1) while the concatenation still fails.
fn ddmin(mut units: Vec<String>, tries: &mut usize, budget: usize, still_fails: &mut dyn FnMut(&str) -> bool) -> Vec<String> {
    let mut chunk = (units.len() / 2).max(1);
    loop {
        let mut start = 0usize;
        let mut removed_any = false;
        while start < units.len() {
            if *tries >= budget {
                return units;
            }
            let end = (start + chunk).min(units.len());
            let candidate: String = units[..start].iter().chain(&units[end..]).map(String::as_str).collect();
            *tries += 1;
            if still_fails(&candidate) {
                units.drain(start..end);
                removed_any = true;
            } else {
                start = end;
            }
        }
        if chunk == 1 && !removed_any {
            return units;
        }
        if !removed_any || chunk > 1 {
            chunk = (chunk / 2).max(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_one_line_that_matters() {
        let input = "a 1\nb 2\nBUG here\nc 3\nd 4\n";
        let out = minimize(input, 1000, &mut |s| s.contains("BUG"));
        assert_eq!(out, "BUG\n");
    }

    #[test]
    fn keeps_two_tokens_that_matter_together() {
        let input = "x y\n%a = tile.add %b, %c : index\nz\n";
        let out = minimize(input, 1000, &mut |s| s.contains("tile.add") && s.contains("index"));
        assert!(out.len() < 25, "{out:?}");
        assert!(out.contains("tile.add") && out.contains("index"));
    }
}
