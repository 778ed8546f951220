//! The printer: a [`Module`] back to text that [`crate::parse_module`] reads back to the same IR.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use crate::attr::AttrMap;
use crate::body::{BlockId, Func, Module, OpId, Value};
use crate::ops::{typed, OpKind};
use crate::syntax::format::{format_of, inline_attrs, FormatElement};

/// Prints a whole module.
pub fn print_module(module: &Module) -> String {
    let mut out = String::new();
    for (i, func) in module.funcs.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&print_func(func));
    }
    out
}

/// Prints one function.
pub fn print_func(func: &Func) -> String {
    let mut printer = Printer { func, names: name_values(func), out: String::new() };
    printer.func();
    printer.out
}

struct Printer<'a> {
    func: &'a Func,
    names: HashMap<Value, String>,
    out: String,
}

/// Gives every value a function-unique name: its source name where it has one, else a number.
fn name_values(func: &Func) -> HashMap<Value, String> {
    let body = &func.body;
    let mut order: Vec<Value> = func.args().to_vec();
    body.walk(func.entry, &mut |op| {
        let op = body.op(op);
        for &region in &op.regions {
            order.extend(body.block(region).args.iter().copied());
        }
        order.extend(op.results.iter().copied());
    });
    let mut taken: HashSet<String> = HashSet::new();
    let mut names = HashMap::new();
    // Source names first, so that a generated number never steals one.
    for &v in &order {
        if let Some(name) = body.value(v).name.as_deref().map(sanitize) {
            if !name.is_empty() && taken.insert(name.clone()) {
                names.insert(v, name);
            }
        }
    }
    let mut counter = 0usize;
    let is_arg: HashSet<Value> = func.args().iter().copied().collect();
    for &v in &order {
        if names.contains_key(&v) {
            continue;
        }
        let base = body.value(v).name.as_deref().map(sanitize).filter(|n| !n.is_empty());
        let name = loop {
            let candidate = match &base {
                Some(base) => format!("{base}_{counter}"),
                None if is_arg.contains(&v) => format!("arg{counter}"),
                None => format!("{counter}"),
            };
            counter += 1;
            if taken.insert(candidate.clone()) {
                break candidate;
            }
        };
        names.insert(v, name);
    }
    names
}

fn sanitize(name: &str) -> String {
    name.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '-')).collect()
}

fn write_attr_dict(out: &mut String, attrs: &AttrMap, skip: &[&str]) {
    let shown: Vec<_> = attrs.iter().filter(|(k, _)| !skip.contains(&k.as_str())).collect();
    if shown.is_empty() {
        return;
    }
    out.push_str(" {");
    for (i, (name, value)) in shown.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let plain = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$'));
        if plain {
            let _ = write!(out, "{name} = {value}");
        } else {
            let _ = write!(out, "{name:?} = {value}");
        }
    }
    out.push('}');
}

impl Printer<'_> {
    fn name(&self, v: Value) -> String {
        match self.names.get(&v) {
            Some(name) => format!("%{name}"),
            None => format!("%<unknown {}>", v.0),
        }
    }

    fn names(&self, values: &[Value]) -> String {
        values.iter().map(|&v| self.name(v)).collect::<Vec<_>>().join(", ")
    }

    fn func(&mut self) {
        let func = self.func;
        let args: Vec<String> = func
            .args()
            .iter()
            .map(|&v| format!("{}: {}", self.name(v), func.body.ty(v)))
            .collect();
        let _ = write!(self.out, "tile.func @{}({})", func.name, args.join(", "));
        if !func.attrs.is_empty() {
            self.out.push_str(" attributes");
            write_attr_dict(&mut self.out, &func.attrs, &[]);
        }
        self.out.push_str(" {\n");
        self.block(func.entry, 1);
        self.out.push_str("}\n");
    }

    fn block(&mut self, block: BlockId, depth: usize) {
        for &op in &self.func.body.block(block).ops {
            self.op(op, depth);
        }
    }

    fn op(&mut self, id: OpId, depth: usize) {
        let op = self.func.body.op(id);
        let indent = "  ".repeat(depth);
        self.out.push_str(&indent);
        if !op.results.is_empty() {
            let _ = write!(self.out, "{} = ", self.names(&op.results));
        }
        self.out.push_str(op.kind.name());
        match (op.kind, format_of(op.kind)) {
            (OpKind::For, _) => self.for_op(id, depth),
            (_, Some(format)) => {
                let mut text = String::new();
                self.format_elements(id, format, &mut text);
                self.out.push_str(&text);
            }
            (_, None) => {}
        }
        self.out.push('\n');
    }

    fn format_elements(&self, id: OpId, format: &[FormatElement], out: &mut String) {
        let op = self.func.body.op(id);
        let def = op.kind.def();
        let inline = inline_attrs(format_of(op.kind).unwrap_or(&[]));
        for element in format {
            match element {
                FormatElement::Operands(g) => {
                    let values = op.group(def.operands[*g].name);
                    if !values.is_empty() {
                        let _ = write!(out, " {}", self.names(values));
                    }
                }
                FormatElement::Indexed { mem, indices } => {
                    let _ = write!(out, " {}", self.names(op.group(def.operands[*mem].name)));
                    let indices = op.group(def.operands[*indices].name);
                    if !indices.is_empty() {
                        let _ = write!(out, "[{}]", self.names(indices));
                    }
                }
                FormatElement::Attr(name) => match op.attr(name) {
                    Some(value) => {
                        let _ = write!(out, " {value}");
                    }
                    None => {
                        let _ = write!(out, " <missing {name}>");
                    }
                },
                FormatElement::AttrDict => write_attr_dict(out, &op.attrs, &inline),
                FormatElement::ResultTypes => {
                    let types: Vec<String> = op.results.iter().map(|&v| self.func.body.ty(v).to_string()).collect();
                    let _ = write!(out, " {}", types.join(", "));
                }
                FormatElement::Literal(word) => {
                    if *word == "," {
                        out.push(',');
                    } else {
                        let _ = write!(out, " {word}");
                    }
                }
                FormatElement::Optional(inner) => {
                    // Present when any operand group or attribute inside is.
                    let present = inner.iter().any(|e| match e {
                        FormatElement::Operands(g) => !op.group(def.operands[*g].name).is_empty(),
                        FormatElement::Attr(name) => op.attr(name).is_some(),
                        _ => false,
                    });
                    if present {
                        self.format_elements(id, inner, out);
                    }
                }
            }
        }
    }

    fn for_op(&mut self, id: OpId, depth: usize) {
        let body = &self.func.body;
        let op = body.op(id);
        let Some(&region) = op.regions.first() else { return };
        let args = &body.block(region).args;
        let iv = args.first().map(|&v| self.name(v)).unwrap_or_default();
        // A loop built without the verifier may be malformed; it still prints, with its operands in order.
        let (lower, upper, step, inits) = match op.view::<typed::For>() {
            Some(f) => (self.name(f.lower), self.name(f.upper), self.name(f.step), f.inits),
            None => (String::new(), String::new(), String::new(), op.operands.get(3..).unwrap_or(&[]).to_vec()),
        };
        let _ = write!(self.out, " {iv} = {lower} to {upper} step {step}");
        let inits = &inits;
        if !inits.is_empty() || !op.results.is_empty() {
            let pairs: Vec<String> = args
                .iter()
                .skip(1)
                .zip(inits)
                .map(|(&a, &i)| format!("{} = {}", self.name(a), self.name(i)))
                .collect();
            let types: Vec<String> = op.results.iter().map(|&v| body.ty(v).to_string()).collect();
            let _ = write!(self.out, " iter_args({}) -> ({})", pairs.join(", "), types.join(", "));
        }
        if !op.attrs.is_empty() {
            self.out.push_str(" attributes");
            write_attr_dict(&mut self.out, &op.attrs, &[]);
        }
        self.out.push_str(" {\n");
        self.block(region, depth + 1);
        self.out.push_str(&"  ".repeat(depth));
        self.out.push('}');
    }
}
