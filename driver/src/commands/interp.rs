//! `tilec interp FILE`: runs the reference interpreter on seeded random inputs and prints a checksum per
//! argument, so two machines (or two versions of tilec) can compare results without shipping data.

use tilec_ir::interp::{self, ArgShapes, ArgValue, Launch};
use tilec_ir::{Func, Module};

use crate::cli::{InterpArgs, RunInputs};
use crate::error::DriverError;
use crate::input::{diagnostics, parse_and_verify, read_source_with};

pub fn run(args: &InterpArgs) -> Result<String, DriverError> {
    let source = read_source_with(&args.input, &args.inputs.params)?;
    let module = parse_and_verify(&source)?;
    let func = select_func(&module, args.inputs.func.as_deref())?;
    let (mut values, launch) = prepare(func, &args.inputs).map_err(|d| located_or_usage(&source, d))?;
    interp::run(func, &mut values, &launch).map_err(|e| diagnostics(&source, vec![e.to_diagnostic()]))?;
    let tensors: Vec<Option<&tilec_ir::data::TensorData>> = values.iter().map(ArgValue::as_tensor).collect();
    write_outputs(&args.outputs, &arg_names(func), &tensors)?;
    let mut out = format!("@{}: grid [{}, {}, {}], seed {}\n", func.name, launch.grid[0], launch.grid[1], launch.grid[2], args.inputs.seed);
    for (name, value) in arg_names(func).iter().zip(&values) {
        match value {
            ArgValue::Tensor(t) => {
                let dims: Vec<String> = t.shape.iter().map(|d| d.to_string()).collect();
                let sum: f64 = t.values.iter().sum();
                out.push_str(&format!("  %{name}: {}x{}  checksum {:016x}  sum {sum:.6e}\n", dims.join("x"), t.elem, t.checksum()));
            }
            ArgValue::Scalar(ty, v) => out.push_str(&format!("  %{name}: {ty} = {v}\n")),
        }
    }
    Ok(out)
}

/// A diagnostic with a location in the source, or a plain usage error (a bad option value has no location).
pub fn located_or_usage(source: &tilec_ir::SourceFile, d: tilec_ir::Diagnostic) -> DriverError {
    if d.span.is_unknown() {
        DriverError::Usage(d.message)
    } else {
        diagnostics(source, vec![d])
    }
}

/// The kernel to run: the one named, or the only one.
pub fn select_func<'m>(module: &'m Module, name: Option<&str>) -> Result<&'m Func, DriverError> {
    match name {
        Some(name) => {
            let name = name.trim_start_matches('@');
            module.func(name).ok_or_else(|| DriverError::Usage(format!("no kernel '@{name}' in the input")))
        }
        None => match module.funcs.as_slice() {
            [f] => Ok(f),
            [] => Err(DriverError::Usage("the input has no kernel".into())),
            _ => Err(DriverError::Usage("the input has several kernels: choose one with --func NAME".into())),
        },
    }
}

/// Argument names as `ArgShapes` knows them.
pub fn arg_names(func: &Func) -> Vec<String> {
    func.args()
        .iter()
        .enumerate()
        .map(|(i, &v)| func.body.value(v).name.clone().unwrap_or_else(|| format!("#{i}")))
        .collect()
}

/// Seeded inputs and the launch grid from the command-line options, on top of the kernel's declared
/// `sample_args` (which the options override by name).
pub fn prepare(func: &Func, inputs: &RunInputs) -> Result<(Vec<ArgValue>, Launch), tilec_ir::Diagnostic> {
    prepare_args(func, inputs, true)
}

/// [`prepare`]; without `fill`, the tensors get their shapes but no values (`tilec_ir::interp::shape_args`):
/// for launches whose inputs are made on the GPU machine, at sizes too large to fill here.
pub fn prepare_args(func: &Func, inputs: &RunInputs, fill: bool) -> Result<(Vec<ArgValue>, Launch), tilec_ir::Diagnostic> {
    let mut shapes = interp::sample_shapes(func).map_err(|m| tilec_ir::Diagnostic::error(func.attr_span("sample_args"), format!("'sample_args' {m}")))?;
    if let Some([m, n, k]) = inputs.gemm_shape()? {
        let gemm = ArgShapes::gemm(m, n, k);
        shapes.by_name.extend(gemm.by_name);
    }
    for (name, shape) in inputs.arg_shapes()? {
        shapes = shapes.with(&name, &shape);
    }
    let names = arg_names(func);
    for (name, value) in inputs.scalar_values()? {
        // `--arg bias=136` of a 1-D tensor is its length, as in `sample_args`.
        let vector = names.iter().position(|n| *n == name).is_some_and(|i| matches!(func.body.ty(func.args()[i]), tilec_ir::Type::Tile(t) if t.rank() == 1));
        if vector && value.fract() == 0.0 && value >= 1.0 {
            shapes = shapes.with(&name, &[value as usize]);
        } else {
            shapes = shapes.with_scalar(&name, value);
        }
    }
    if !fill && !inputs.files.is_empty() {
        return Err(usage("--input gives values, but these inputs are made on the GPU machine (drop --no-oracle)".into()));
    }
    let make = if fill { interp::default_args } else { interp::shape_args };
    let mut values = make(func, &shapes, inputs.seed).map_err(|e| e.to_diagnostic())?;
    for setting in &inputs.files {
        let (name, path) = setting
            .split_once('=')
            .ok_or_else(|| usage(format!("--input '{setting}': expected NAME=FILE")))?;
        let name = name.trim_start_matches('%');
        let index = names.iter().position(|n| n == name).ok_or_else(|| usage(format!("--input: no argument named '{name}'")))?;
        let text = std::fs::read_to_string(path).map_err(|e| usage(format!("--input {path}: {e}")))?;
        let numbers: Result<Vec<f64>, _> = text.split_whitespace().map(str::parse::<f64>).collect();
        let numbers = numbers.map_err(|_| usage(format!("--input {path}: not a list of numbers")))?;
        match &mut values[index] {
            ArgValue::Tensor(t) if t.values.len() == numbers.len() => {
                let elem = t.elem;
                t.values = numbers.into_iter().map(|x| tilec_ir::data::round_to(elem, x)).collect();
            }
            ArgValue::Tensor(t) => {
                return Err(usage(format!("--input {path}: {} numbers for '{name}', which has {} elements", numbers.len(), t.values.len())))
            }
            ArgValue::Scalar(..) => return Err(usage(format!("--input: '{name}' is a scalar; use --arg {name}=VALUE"))),
        }
    }
    let launch = match inputs.grid {
        Some(ref g) => Launch::new(parse_grid(g)?),
        None => interp::default_launch(func, &values).map_err(|e| e.to_diagnostic())?,
    };
    Ok((values, launch))
}

fn usage(message: String) -> tilec_ir::Diagnostic {
    tilec_ir::Diagnostic::error(tilec_ir::Span::UNKNOWN, message)
}

fn parse_grid(text: &str) -> Result<[u32; 3], tilec_ir::Diagnostic> {
    let parts: Vec<Option<u32>> = text.split(',').map(|p| p.trim().parse().ok().filter(|&n| n > 0)).collect();
    match parts.as_slice() {
        [Some(x)] => Ok([*x, 1, 1]),
        [Some(x), Some(y)] => Ok([*x, *y, 1]),
        [Some(x), Some(y), Some(z)] => Ok([*x, *y, *z]),
        _ => Err(usage(format!("--grid '{text}': expected 1 to 3 positive integers like 4,4"))),
    }
}

impl RunInputs {
    /// `--shape M,N,K`.
    pub fn gemm_shape(&self) -> Result<Option<[usize; 3]>, tilec_ir::Diagnostic> {
        let Some(text) = &self.shape else { return Ok(None) };
        let dims: Vec<Option<usize>> = text.split(',').map(|p| p.trim().parse().ok().filter(|&n| n > 0)).collect();
        match dims.as_slice() {
            [Some(m), Some(n), Some(k)] => Ok(Some([*m, *n, *k])),
            _ => Err(usage(format!("--shape '{text}': expected three positive integers M,N,K"))),
        }
    }

    /// `--arg NAME=RxC` for tensors.
    pub fn arg_shapes(&self) -> Result<Vec<(String, Vec<usize>)>, tilec_ir::Diagnostic> {
        self.args
            .iter()
            .filter(|a| !is_scalar_setting(a))
            .map(|a| {
                let (name, shape) = a.split_once('=').ok_or_else(|| usage(format!("--arg '{a}': expected NAME=RxC or NAME=value")))?;
                let dims: Option<Vec<usize>> = shape.split('x').map(|d| d.trim().parse().ok().filter(|&n| n > 0)).collect();
                let dims = dims.ok_or_else(|| usage(format!("--arg '{a}': '{shape}' is not a shape like 256x128")))?;
                Ok((name.trim_start_matches('%').to_string(), dims))
            })
            .collect()
    }

    /// `--arg NAME=VALUE` for scalars (a single number).
    pub fn scalar_values(&self) -> Result<Vec<(String, f64)>, tilec_ir::Diagnostic> {
        self.args
            .iter()
            .filter(|a| is_scalar_setting(a))
            .map(|a| {
                let (name, value) = a.split_once('=').unwrap_or((a, ""));
                let v: f64 = value.parse().map_err(|_| usage(format!("--arg '{a}': '{value}' is not a number")))?;
                Ok((name.trim_start_matches('%').to_string(), v))
            })
            .collect()
    }
}

fn is_scalar_setting(arg: &str) -> bool {
    arg.split_once('=').is_some_and(|(_, v)| !v.contains('x') && v.parse::<f64>().is_ok())
}

/// `--output NAME=FILE`: each named tensor's values, row-major and whitespace-separated, one row (the last
/// axis) per line, each number written so that reading it back gives the same value (the `--input` format).
/// Checks every setting before writing any file; each file is written atomically.
pub fn write_outputs(settings: &[String], names: &[String], tensors: &[Option<&tilec_ir::data::TensorData>]) -> Result<(), DriverError> {
    let usage = |m: String| DriverError::Usage(m);
    let mut files = Vec::new();
    for setting in settings {
        let (name, path) = setting.split_once('=').ok_or_else(|| usage(format!("--output '{setting}': expected NAME=FILE")))?;
        let name = name.trim_start_matches('%');
        let index = names.iter().position(|n| n == name).ok_or_else(|| usage(format!("--output: no argument named '{name}'")))?;
        let tensor = tensors
            .get(index)
            .copied()
            .flatten()
            .ok_or_else(|| usage(format!("--output: '{name}' is a scalar, not a tensor")))?;
        files.push((path, tensor_text(tensor)));
    }
    for (path, text) in files {
        crate::input::write_output(path, text.as_bytes())?;
    }
    Ok(())
}

/// A tensor as text: one line per row of the last axis.
fn tensor_text(t: &tilec_ir::data::TensorData) -> String {
    let row = t.shape.last().copied().unwrap_or(1).max(1);
    let mut out = String::new();
    for line in t.values.chunks(row) {
        let numbers: Vec<String> = line.iter().map(|x| x.to_string()).collect();
        out.push_str(&numbers.join(" "));
        out.push('\n');
    }
    out
}