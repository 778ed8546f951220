//! `--param NAME=V`: setting a kernel parameter or a kernel attribute from the command line, the one parsing
//! path behind compiling, `check`, `interp`, `sim`, `bundle`, `bench` and `tune` (which takes lists,
//! `--param NAME=V,...`, each value read the same way).
//!
//! A name is either a kernel parameter (upper case, `BM`: an integer, and some kernel must declare it) or a
//! declared kernel attribute (`num_warps`, `pipeline_stages`, `mma`, `copy_g2s`, `raster_group`, `warp_tile`,
//! ...: `tilec_ir::ops::kernel::KERNEL_ATTRS`, the list the verifier checks). Anything else is an error with a
//! "did you mean" when one name is close. A value is written as on the command line (`8`, `true`, `wgmma` or
//! `"wgmma"`, `16x32` or `[16, 32]` for a list) and must decode as the attribute's declared type; it is then
//! written into the source text in the IR's own syntax (`mma = "wgmma"`), so that only the attribute's
//! value changes and diagnostics keep pointing into the file.

use tilec_ir::ops::kernel::KERNEL_ATTRS;
use tilec_ir::{Attribute, Module, OpKind, SourceFile};

use crate::error::DriverError;

/// One setting: a name the kernel knows, and its value, checked against the attribute's declared type.
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    pub name: String,
    pub value: Attribute,
}

impl Setting {
    /// The value as the IR writes it (`8`, `"wgmma"`, `[16, 32]`).
    pub fn value_text(&self) -> String {
        self.value.to_string()
    }
}

/// `NAME=V` split at the first `=`, both sides trimmed.
pub fn split(text: &str) -> Result<(&str, &str), String> {
    let (name, value) = text.split_once('=').ok_or_else(|| "expected NAME=V, like BM=128 or num_warps=8".to_string())?;
    Ok((name.trim(), value.trim()))
}

/// Whether `name` may be set in `module`: a kernel parameter some kernel declares, or a declared kernel
/// attribute. Otherwise says why, with a "did you mean" when one name is close.
pub fn check_name(name: &str, module: &Module, file: &str) -> Result<(), String> {
    let declared: std::collections::BTreeSet<String> = module.funcs.iter().flat_map(|f| tilec_ir::kernel_params(&f.attrs).into_keys()).collect();
    if declared.contains(name) || KERNEL_ATTRS.iter().any(|a| a.name == name) {
        return Ok(());
    }
    let mut names: Vec<&str> = KERNEL_ATTRS.iter().map(|a| a.name).collect();
    names.extend(declared.iter().map(String::as_str));
    let hint = match tilec_ir::diag::did_you_mean(name, names.iter().copied()) {
        Some(close) => format!("; did you mean '{close}'?"),
        None => format!(
            " (parameters declared in {file}: {}; kernel attributes: {})",
            if declared.is_empty() { "none".to_string() } else { declared.iter().cloned().collect::<Vec<_>>().join(", ") },
            KERNEL_ATTRS.iter().map(|a| a.name).collect::<Vec<_>>().join(", ")
        ),
    };
    if tilec_ir::is_param_name(name) {
        Err(format!("no kernel in {file} declares the parameter '{name}'{hint}"))
    } else {
        Err(format!("'{name}' is neither a kernel parameter of {file} nor a kernel attribute{hint}"))
    }
}

/// A value as the command line writes it: an integer, a number, `true`/`false`, a list (`16x32` of two
/// positive integers, or `[a, b, ...]`), a quoted string, or else a bare word taken as a string (`wgmma`).
pub fn parse_value(text: &str) -> Result<Attribute, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("an empty value".into());
    }
    if let Ok(n) = t.parse::<i64>() {
        return Ok(Attribute::Int(n));
    }
    if t.bytes().next().is_some_and(|b| b.is_ascii_digit() || b == b'-' || b == b'.') {
        if let Ok(x) = t.parse::<f64>() {
            return Ok(Attribute::Float(x));
        }
        // `16x32`: a list of two extents, as `--param warp_tile=16x32` (commas separate tune's values).
        let parts: Vec<Option<i64>> = t.split('x').map(|p| p.trim().parse::<i64>().ok().filter(|&n| n > 0)).collect();
        return match parts.as_slice() {
            [Some(a), Some(b)] => Ok(Attribute::Array(vec![Attribute::Int(*a), Attribute::Int(*b)])),
            _ => Err(format!("'{t}' is neither a number nor ROWSxCOLS of two positive integers (16x32)")),
        };
    }
    match t {
        "true" => return Ok(Attribute::Bool(true)),
        "false" => return Ok(Attribute::Bool(false)),
        _ => {}
    }
    if let Some(inner) = t.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
        if inner.trim().is_empty() {
            return Ok(Attribute::Array(Vec::new()));
        }
        return inner.split(',').map(parse_value).collect::<Result<Vec<_>, _>>().map(Attribute::Array);
    }
    if let Some(inner) = t.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        return Ok(Attribute::Str(inner.to_string()));
    }
    if t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.') {
        return Ok(Attribute::Str(t.to_string()));
    }
    Err(format!("'{t}' is not a value (a number, true/false, 16x32, [a, b], or a word such as wgmma)"))
}

/// The value `text` of the setting `name` (already [`check_name`]d), checked against its type: an integer
/// for a kernel parameter, the declared type for a kernel attribute.
pub fn typed_value(name: &str, text: &str) -> Result<Attribute, String> {
    if tilec_ir::is_param_name(name) {
        return text.trim().parse::<i64>().map(Attribute::Int).map_err(|_| format!("'{}' is not an integer", text.trim()));
    }
    let value = parse_value(text)?;
    match KERNEL_ATTRS.iter().find(|a| a.name == name) {
        Some(def) if (def.accepts)(&value) => Ok(value),
        Some(def) => Err(format!("'{name}' must be {}, found {}", def.expected, text.trim())),
        None => Err(format!("'{name}' is not a kernel attribute")),
    }
}

/// One `--param NAME=V`, checked against `module` (the input as parsed; see [`check_name`]).
pub fn parse_setting(text: &str, module: &Module, file: &str) -> Result<Setting, DriverError> {
    let usage = |m: String| DriverError::Usage(format!("--param '{text}': {m}"));
    let (name, value) = split(text).map_err(usage)?;
    check_name(name, module, file).map_err(usage)?;
    Ok(Setting { name: name.to_string(), value: typed_value(name, value).map_err(usage)? })
}

/// Sets kernel attributes in a source's text before it is parsed (`--param D=128`, `--param mma=wgmma`): a
/// kernel parameter is set on every function that declares it; a kernel attribute on every function, where
/// the verifier judges it further (`num_warps` in 1..=32). Only the attribute's value changes in the text,
/// so lines and columns of diagnostics stay those of the file.
pub fn apply_params(source: SourceFile, params: &[String]) -> Result<SourceFile, DriverError> {
    apply_params_with(source, params).map(|(source, _)| source)
}

/// [`apply_params`], also giving the settings as checked (for labels).
pub fn apply_params_with(source: SourceFile, params: &[String]) -> Result<(SourceFile, Vec<Setting>), DriverError> {
    if params.is_empty() {
        return Ok((source, Vec::new()));
    }
    // Functions and their attributes; a file that does not parse is left alone (its parse reports why).
    let Ok(module) = tilec_ir::parse_module(&source.text) else { return Ok((source, Vec::new())) };
    let settings = params.iter().map(|p| parse_setting(p, &module, &source.name)).collect::<Result<Vec<_>, _>>()?;
    for s in &settings {
        let value = s.value_text();
        for warning in without_effect(&s.name, &format!("{}={}", s.name, value.trim_matches('"')), &module) {
            eprintln!("tilec: warning: {warning}");
        }
    }
    let source = apply_settings_to(source, &module, &settings)?;
    Ok((source, settings))
}

/// The kernel attributes that steer one kind of op, and that op: set on a kernel without one, they change nothing.
const ATTRIBUTES_OF_OPS: &[(&[&str], OpKind)] = &[
    (&["mma", "warp_tile"], OpKind::Mma),
    (&["copy_g2s", "global_alignment"], OpKind::CopyG2S),
    (&["pipeline_stages", "fragments_ahead", "pipeline_tail", "warp_specialize"], OpKind::For),
];

/// Warnings for `--param {shown}` (`mma=wgmma`, or tune's list `mma=wgmma,mma_sync`) when it changes nothing: an
/// attribute `name` of an op kind (`mma` of `tile.mma`, the pipeline's attributes of `tile.for`) on a kernel that
/// has no such op (`--param mma=wgmma` on a copy kernel).
pub fn without_effect(name: &str, shown: &str, module: &Module) -> Vec<String> {
    let Some((_, kind)) = ATTRIBUTES_OF_OPS.iter().find(|(names, _)| names.contains(&name)) else {
        return Vec::new();
    };
    module
        .funcs
        .iter()
        .filter(|f| !f.body.any_op(f.entry, &mut |op| op.kind == *kind))
        .map(|f| format!("--param {shown} changes nothing in @{}: it has no '{}'", f.name, kind.name()))
        .collect()
}

/// `text` (which parsed as `module`) with `settings` set on the kernels that take them.
pub fn apply_settings(text: &str, module: &Module, settings: &[Setting]) -> Result<String, DriverError> {
    apply_settings_to(SourceFile::new("", text), module, settings).map(|source| source.text)
}

/// [`apply_settings`] on a source file, which remembers where each setting wrote (a diagnostic there notes
/// the `--param` that put the value on the line it shows).
fn apply_settings_to(mut source: SourceFile, module: &Module, settings: &[Setting]) -> Result<SourceFile, DriverError> {
    for s in settings {
        let is_param = tilec_ir::is_param_name(&s.name);
        let origin = format!("`--param {}={}`", s.name, s.value_text());
        for f in module.funcs.iter().filter(|f| !is_param || f.attrs.contains_key(&s.name)) {
            let text = tilec_ir::set_func_attributes(&source.text, &f.name, &[(s.name.clone(), s.value_text())])
                .ok_or_else(|| DriverError::Usage(format!("--param {}={}: could not set it on '@{}'", s.name, s.value_text(), f.name)))?;
            source = source.edited(text, &origin);
        }
    }
    Ok(source)
}

/// `--param NAME=V` as it labels a variant in bundle names: `BK64`, `num_warps8`, `mma_wgmma`.
pub fn label(settings: &[Setting]) -> String {
    settings
        .iter()
        .map(|s| {
            let v: String = s.value_text().chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if tilec_ir::is_param_name(&s.name) {
                format!("{}{v}", s.name)
            } else {
                format!("{}_{v}", s.name)
            }
        })
        .collect::<Vec<_>>()
        .join("_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_as_the_command_line_writes_them() {
        assert_eq!(parse_value("8"), Ok(Attribute::Int(8)));
        assert_eq!(parse_value("wgmma"), Ok(Attribute::Str("wgmma".into())));
        assert_eq!(parse_value("\"cp_async\""), Ok(Attribute::Str("cp_async".into())));
        assert_eq!(parse_value("16x32"), Ok(Attribute::Array(vec![Attribute::Int(16), Attribute::Int(32)])));
        assert_eq!(parse_value("[16, 32]"), Ok(Attribute::Array(vec![Attribute::Int(16), Attribute::Int(32)])));
        assert_eq!(parse_value("false"), Ok(Attribute::Bool(false)));
        assert!(parse_value("16x32x8").is_err() && parse_value("0x32").is_err() && parse_value("a b").is_err());
    }

    #[test]
    fn values_are_checked_against_the_declared_type() {
        assert_eq!(typed_value("mma", "wgmma").map(|v| v.to_string()), Ok("\"wgmma\"".to_string()));
        assert_eq!(typed_value("copy_g2s", "cp_async").map(|v| v.to_string()), Ok("\"cp_async\"".to_string()));
        assert_eq!(typed_value("mma", "wgmm"), Err("'mma' must be \"wgmma\" or \"mma_sync\", found wgmm".to_string()));
        assert_eq!(typed_value("num_warps", "8"), Ok(Attribute::Int(8)));
        assert!(typed_value("num_warps", "-1").is_err(), "a non-negative integer");
        assert!(typed_value("BM", "16x32").is_err(), "a parameter is an integer");
        assert!(typed_value("fragments_ahead", "3").is_err());
    }
}
