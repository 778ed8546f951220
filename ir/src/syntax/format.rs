//! Custom assembly formats: the small declarative language of [`crate::ops::OpDef::format`], read once into
//! [`FormatElement`]s that the parser and the printer both walk, so an op's syntax is written in one place.

use std::sync::OnceLock;

use crate::ops::{OpKind, OP_DEFS};

/// One element of an op's format.
#[derive(Clone, Debug, PartialEq)]
pub enum FormatElement {
    /// An operand group, by index into the op's definition.
    Operands(usize),
    /// A memory operand and the group of its indices: `%mem[%i, %j]` (the brackets are left out when empty).
    Indexed { mem: usize, indices: usize },
    /// An attribute written inline.
    Attr(&'static str),
    /// The attributes not written inline: `{name = value, ...}`.
    AttrDict,
    /// The result types, comma-separated.
    ResultTypes,
    /// A fixed token: punctuation or a keyword.
    Literal(&'static str),
    /// A section present when its first token (a literal) is.
    Optional(Vec<FormatElement>),
}

/// The format of an op kind, or `None` for ops with hand-written syntax.
pub fn format_of(kind: OpKind) -> Option<&'static [FormatElement]> {
    static FORMATS: OnceLock<Vec<Option<Vec<FormatElement>>>> = OnceLock::new();
    let formats = FORMATS.get_or_init(|| OP_DEFS.iter().map(|def| def.format.map(|f| compile(def.kind, f))).collect());
    formats[kind as usize].as_deref()
}

/// Names of the attributes that an op's format writes inline.
pub fn inline_attrs(elements: &[FormatElement]) -> Vec<&'static str> {
    let mut names = Vec::new();
    for element in elements {
        match element {
            FormatElement::Attr(name) => names.push(*name),
            FormatElement::Optional(inner) => names.extend(inline_attrs(inner)),
            _ => {}
        }
    }
    names
}

fn compile(kind: OpKind, format: &'static str) -> Vec<FormatElement> {
    let def = kind.def();
    let mut stack: Vec<Vec<FormatElement>> = vec![Vec::new()];
    for word in format.split_whitespace() {
        let element = match word {
            "attr-dict" => FormatElement::AttrDict,
            "type(results)" => FormatElement::ResultTypes,
            "{" => {
                stack.push(Vec::new());
                continue;
            }
            "}?" => {
                let inner = stack.pop().unwrap_or_default();
                FormatElement::Optional(inner)
            }
            _ => match word.strip_prefix('$') {
                Some(rest) => match rest.split_once('[') {
                    Some((mem, indices)) => {
                        let indices = indices.trim_start_matches('$').trim_end_matches(']');
                        // Invariant: the catalogue's formats name existing groups (the test below checks
                        // every format); a typo would print and parse as a literal, not abort a compile.
                        match (def.group_index(mem), def.group_index(indices)) {
                            (Some(mem), Some(indices)) => FormatElement::Indexed { mem, indices },
                            _ => FormatElement::Literal(word),
                        }
                    }
                    None => match def.group_index(rest) {
                        Some(g) => FormatElement::Operands(g),
                        None => FormatElement::Attr(rest),
                    },
                },
                None => FormatElement::Literal(word),
            },
        };
        if let Some(top) = stack.last_mut() {
            top.push(element);
        }
    }
    stack.into_iter().next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_compiles_and_mentions_every_operand_group() {
        for def in OP_DEFS {
            let Some(elements) = format_of(def.kind) else { continue };
            let mut seen = vec![false; def.operands.len()];
            fn mark(elements: &[FormatElement], seen: &mut [bool]) {
                for e in elements {
                    match e {
                        FormatElement::Operands(g) => seen[*g] = true,
                        FormatElement::Indexed { mem, indices } => {
                            seen[*mem] = true;
                            seen[*indices] = true;
                        }
                        FormatElement::Optional(inner) => mark(inner, seen),
                        _ => {}
                    }
                }
            }
            mark(elements, &mut seen);
            assert!(seen.iter().all(|&s| s), "{}: format leaves out an operand group", def.name);
            let has_types = elements.contains(&FormatElement::ResultTypes);
            assert_eq!(has_types, def.results.is_some(), "{}: result types vs results", def.name);
        }
    }
}
