//! Inputs and launch configurations for running a kernel without hand-written data: what `tilec interp`
//! uses. Seeded random tensors for every argument, and a grid derived from the kernel itself.

use std::collections::HashMap;

use crate::body::{Body, Func, Value, ValueDef};
use crate::data::TensorData;
use crate::ops::kernel::KernelAttrs;
use crate::ops::typed;
use crate::types::{Dim, MemorySpace, ScalarType, Type};

use super::error::InterpError;
use super::{ArgValue, Launch};

/// The extent a `?` gets when no shape is given for its argument.
pub const DEFAULT_EXTENT: usize = 256;

/// The most elements [`default_args`] will allocate for one tensor (2 GiB of `f64`).
const MAX_DEFAULT_ELEMENTS: usize = 1 << 28;

/// Sizes and values for the arguments of a kernel, by argument name: the source name without `%`
/// (`%A` is `A`), or `#i` for the `i`-th argument when it has no name.
#[derive(Clone, Debug, PartialEq)]
pub struct ArgShapes {
    /// Shapes of tensor arguments. A shape must agree with the static extents of the argument's type.
    pub by_name: HashMap<String, Vec<usize>>,
    /// Values of scalar arguments.
    pub scalars: HashMap<String, f64>,
    /// The extent of every `?` of a tensor argument not named in `by_name`.
    pub default_extent: usize,
}

impl Default for ArgShapes {
    fn default() -> ArgShapes {
        ArgShapes { by_name: HashMap::new(), scalars: HashMap::new(), default_extent: DEFAULT_EXTENT }
    }
}

impl ArgShapes {
    /// No shapes given: every `?` is [`DEFAULT_EXTENT`].
    pub fn new() -> ArgShapes {
        ArgShapes::default()
    }

    /// Gives the tensor argument `name` this shape.
    pub fn with(mut self, name: &str, shape: &[usize]) -> ArgShapes {
        self.by_name.insert(name.to_string(), shape.to_vec());
        self
    }

    /// Gives the scalar argument `name` this value.
    pub fn with_scalar(mut self, name: &str, value: f64) -> ArgShapes {
        self.scalars.insert(name.to_string(), value);
        self
    }

    /// The GEMM convention of the examples: `A` is MxK, `B` is KxN and `C` is MxN.
    pub fn gemm(m: usize, n: usize, k: usize) -> ArgShapes {
        ArgShapes::new().with("A", &[m, k]).with("B", &[k, n]).with("C", &[m, n])
    }
}

/// One `NAME=SHAPE` or `NAME=VALUE` setting: the `--arg` syntax, and an entry of the kernel attribute
/// `sample_args`. A value with an `x` is a shape (`64x32`); a plain number is a scalar's value, or the shape
/// of a rank-1 tensor when the argument is one.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgSetting {
    Shape(String, Vec<usize>),
    Scalar(String, f64),
}

impl ArgSetting {
    /// Parses `text` (a leading `%` on the name is dropped).
    pub fn parse(text: &str) -> Result<ArgSetting, String> {
        let (name, value) = text.split_once('=').ok_or_else(|| format!("'{text}': expected NAME=SHAPE (like A=64x32) or NAME=VALUE"))?;
        let name = name.trim().trim_start_matches('%').to_string();
        if name.is_empty() {
            return Err(format!("'{text}': the argument name is missing"));
        }
        let value = value.trim();
        if !value.contains('x') {
            if let Ok(v) = value.parse::<f64>() {
                return Ok(ArgSetting::Scalar(name, v));
            }
        }
        let dims: Option<Vec<usize>> = value.split('x').map(|d| d.trim().parse().ok().filter(|&n| n > 0)).collect();
        dims.map(|dims| ArgSetting::Shape(name, dims)).ok_or_else(|| format!("'{text}': '{value}' is neither a shape like 64x32 nor a number"))
    }
}

/// The shapes and values the kernel attribute `sample_args` declares for `func` (empty when it has none),
/// checked against the arguments: every name is an argument, a tensor gets a shape of its rank that agrees
/// with its static extents, a scalar a number. What `tilec interp`/`sim FILE` run on with no flags.
pub fn sample_shapes(func: &Func) -> Result<ArgShapes, String> {
    let mut shapes = ArgShapes::new();
    let Some(settings) = KernelAttrs::of(func).ok().and_then(|a| a.sample_args) else { return Ok(shapes) };
    let body = &func.body;
    let params = crate::kernel_params(&func.attrs);
    for text in &settings {
        let setting = ArgSetting::parse(&with_params(text, &params))?;
        let name = match &setting {
            ArgSetting::Shape(n, _) | ArgSetting::Scalar(n, _) => n.clone(),
        };
        let Some(index) = func.args().iter().enumerate().position(|(i, &v)| arg_name(body, i, v) == name) else {
            let names: Vec<String> = func.args().iter().enumerate().map(|(i, &v)| arg_name(body, i, v)).collect();
            return Err(format!("'{text}': '@{}' has no argument named '{name}' (it has: {})", func.name, names.join(", ")));
        };
        match (body.ty(func.args()[index]), setting) {
            (Type::Tile(t), ArgSetting::Scalar(_, v)) if t.rank() == 1 && v.fract() == 0.0 && v >= 1.0 => {
                shapes = shapes.with(&name, &[v as usize]);
            }
            (Type::Tile(t), ArgSetting::Shape(_, dims)) => {
                let agrees = dims.len() == t.rank() && t.shape.iter().zip(&dims).all(|(d, &n)| d.as_static().is_none_or(|s| s == n as u64));
                if !agrees {
                    return Err(format!("'{text}': the shape does not fit '%{name}' of type '{t}'"));
                }
                shapes = shapes.with(&name, &dims);
            }
            (Type::Scalar(_), ArgSetting::Scalar(_, v)) => shapes = shapes.with_scalar(&name, v),
            (ty, _) => return Err(format!("'{text}': '%{name}' is of type '{ty}'; give {}", if matches!(ty, Type::Tile(_)) { "a shape like 64x32" } else { "a number" })),
        }
    }
    Ok(shapes)
}

/// `text` (`NAME=SHAPE`) with every extent that names a kernel parameter replaced by its value: `"Q=2x100xD"`
/// with `D = 64` is `"Q=2x100x64"`, so that `sample_args` follow a parameter that the argument types use.
fn with_params(text: &str, params: &std::collections::HashMap<String, i64>) -> String {
    let Some((name, value)) = text.split_once('=') else { return text.to_string() };
    let dims: Vec<String> = value
        .split('x')
        .map(|d| match params.get(d.trim()) {
            Some(n) => n.to_string(),
            None => d.to_string(),
        })
        .collect();
    format!("{name}={}", dims.join("x"))
}

/// The name an argument is known by in [`ArgShapes`].
fn arg_name(body: &Body, index: usize, v: Value) -> String {
    body.value(v).name.clone().unwrap_or_else(|| format!("#{index}"))
}

/// The seed of the `index`-th argument's data: distinct per argument, reproducible per `seed`.
fn arg_seed(seed: u64, index: usize) -> u64 {
    seed ^ (index as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Seeded random arguments for `func` ([`TensorData::random`]: floats uniform in [-1, 1), small integers).
///
/// Tensor shapes come from the static extents of each argument's type, with every `?` taken from
/// `shapes.by_name` or, for arguments not named there, [`ArgShapes::default_extent`]. Scalars come from
/// `shapes.scalars`, else are random (floats, integers) or `default_extent` (`index`, usually a size).
/// Names in `shapes` that match no argument are an error (a typo would otherwise pass unnoticed).
pub fn default_args(func: &Func, shapes: &ArgShapes, seed: u64) -> Result<Vec<ArgValue>, InterpError> {
    resolve_args(func, shapes, seed, true)
}

/// The arguments [`default_args`] makes, with every tensor's shape but no values (`values` empty, and no size
/// limit): for what needs only the shapes at sizes too large to fill here, such as a launch description whose
/// inputs are made on the GPU machine ([`default_launch`] reads shapes only). Scalars as in [`default_args`].
pub fn shape_args(func: &Func, shapes: &ArgShapes, seed: u64) -> Result<Vec<ArgValue>, InterpError> {
    resolve_args(func, shapes, seed, false)
}

/// A scalar argument's value: given by name, else `default_extent` for `index`, else random from `seed`.
fn scalar_value(shapes: &ArgShapes, name: &str, s: ScalarType, seed: u64) -> f64 {
    match shapes.scalars.get(name) {
        Some(&v) => v,
        None if s == ScalarType::Index => shapes.default_extent as f64,
        None => TensorData::random(&[1], s, seed).values[0],
    }
}

/// [`default_args`]; without `fill`, tensors get their shapes and no values ([`shape_args`]).
fn resolve_args(func: &Func, shapes: &ArgShapes, seed: u64, fill: bool) -> Result<Vec<ArgValue>, InterpError> {
    let body = &func.body;
    let names: Vec<String> = func.args().iter().enumerate().map(|(i, &v)| arg_name(body, i, v)).collect();
    for name in shapes.by_name.keys().chain(shapes.scalars.keys()) {
        if !names.contains(name) {
            return Err(InterpError::Defaults {
                span: func.span,
                message: format!("'@{}' has no argument named '{name}' (it has: {})", func.name, names.join(", ")),
            });
        }
    }
    let mut args = Vec::new();
    for (index, (&param, name)) in func.args().iter().zip(&names).enumerate() {
        let span = body.value(param).span;
        let error = |message: String| InterpError::Defaults { span, message };
        let seed = arg_seed(seed, index);
        match body.ty(param) {
            Type::Tile(t) if t.space == MemorySpace::Global => {
                let shape: Vec<usize> = match shapes.by_name.get(name) {
                    Some(shape) => {
                        let agrees = shape.len() == t.rank()
                            && t.shape.iter().zip(shape).all(|(d, &n)| d.as_static().is_none_or(|s| s == n as u64));
                        if !agrees {
                            return Err(error(format!("the shape {shape:?} given for '{name}' does not fit its type '{t}'")));
                        }
                        shape.clone()
                    }
                    None => t
                        .shape
                        .iter()
                        .map(|d| match d {
                            Dim::Static(n) => usize::try_from(*n).unwrap_or(usize::MAX),
                            Dim::Dynamic => shapes.default_extent,
                        })
                        .collect(),
                };
                let elements = shape.iter().try_fold(1usize, |acc, &n| acc.checked_mul(n));
                if !fill {
                    if elements.is_none() {
                        return Err(error(format!("'{name}' of shape {shape:?} has more elements than this machine can count")));
                    }
                    args.push(ArgValue::Tensor(TensorData { shape, elem: t.elem, values: Vec::new() }));
                    continue;
                }
                if elements.is_none_or(|n| n > MAX_DEFAULT_ELEMENTS) {
                    return Err(error(format!(
                        "'{name}' of shape {shape:?} is too large for the interpreter (at most {MAX_DEFAULT_ELEMENTS} elements)"
                    )));
                }
                args.push(ArgValue::Tensor(TensorData::random(&shape, t.elem, seed)));
            }
            Type::Scalar(s) => args.push(ArgValue::Scalar(*s, scalar_value(shapes, name, *s, seed))),
            other => return Err(error(format!("cannot make an input for '{name}' of type '{other}'"))),
        }
    }
    Ok(args)
}

/// The grid to launch `func` with on `args`:
///
/// 1. the function attribute `grid = [x, y, z]` (one to three positive integers; missing ones are 1);
/// 2. otherwise, from the stores of the output: for every `tile.copy_r2g %v, %C[..., o_d, ...]` whose
///    offset `o_d` is `tile.block_id a` times a positive `tile.constant` `s` (in either order, or
///    `block_id` alone, `s = 1`), the grid along `a` is `ceil(extent_d(C) / s)` (the largest over all
///    such stores), so that the blocks cover the whole output (this makes `examples/gemm.tir` run at any
///    shape);
/// 3. a kernel that does not use `tile.block_id` runs as one block, `[1, 1, 1]`.
///
/// A kernel that uses `tile.block_id` along an axis that step 2 cannot size is an error: give it a
/// `grid` attribute.
pub fn default_launch(func: &Func, args: &[ArgValue]) -> Result<Launch, InterpError> {
    let error = |message: String| InterpError::Defaults { span: func.span, message };
    let declared = KernelAttrs::of(func).map_err(|(name, value)| error(format!("the '{name}' attribute is malformed: {value}")))?;
    if let Some(dims) = declared.grid {
        if !(1..=3).contains(&dims.len()) || dims.contains(&0) {
            return Err(error(format!("the 'grid' attribute must be one to three positive integers, found {dims:?}")));
        }
        let mut grid = [1u32; 3];
        grid[..dims.len()].copy_from_slice(&dims);
        return Ok(Launch { grid });
    }
    let body = &func.body;
    let mut ops = Vec::new();
    body.walk(func.entry, &mut |id| ops.push(id));
    let mut used = [false; 3];
    let mut grid: [Option<u64>; 3] = [None; 3];
    for &id in &ops {
        let op = body.op(id);
        if let Some(block_id) = op.view::<typed::BlockId>() {
            used[block_id.dim.index()] = true;
        }
        let Some(store) = op.view::<typed::CopyR2G>() else { continue };
        let Some(arg) = func.args().iter().position(|&a| a == store.dst) else { continue };
        let Some(ArgValue::Tensor(tensor)) = args.get(arg) else {
            return Err(error(format!("argument #{arg} is stored to but is not a tensor")));
        };
        for (d, &index) in store.dst_indices.iter().enumerate() {
            let (Some((axis, stride)), Some(&extent)) = (block_stride(body, index), tensor.shape.get(d)) else { continue };
            let blocks = (extent as u64).div_ceil(stride).max(1);
            grid[axis] = Some(grid[axis].map_or(blocks, |g| g.max(blocks)));
        }
    }
    let mut launch = [1u32; 3];
    for axis in 0..3 {
        match grid[axis] {
            Some(n) => {
                launch[axis] = u32::try_from(n).map_err(|_| error(format!("the derived grid needs {n} blocks along one axis")))?
            }
            None if used[axis] => {
                return Err(error(format!(
                    "cannot derive the grid along '{}' from the kernel's stores; give it as an attribute, e.g. 'attributes {{grid = [4, 4, 1]}}', or on the command line (`--grid 4,4,1`)",
                    ["x", "y", "z"][axis]
                )))
            }
            None => {}
        }
    }
    Ok(Launch { grid: launch })
}

/// `(axis, s)` when `v` is `block_id axis * s` for a positive constant `s` (or `block_id axis`, `s = 1`).
fn block_stride(body: &Body, v: Value) -> Option<(usize, u64)> {
    let as_block_id = |v: Value| -> Option<usize> {
        body.op(body.defining_op(v)?).view::<typed::BlockId>().map(|b| b.dim.index())
    };
    if let Some(axis) = as_block_id(v) {
        return Some((axis, 1));
    }
    let ValueDef::OpResult { op, .. } = body.value(v).def else { return None };
    let typed::Mul { lhs, rhs } = body.op(op).view()?;
    let (axis, constant) = match (as_block_id(lhs), as_block_id(rhs)) {
        (Some(axis), None) => (axis, rhs),
        (None, Some(axis)) => (axis, lhs),
        _ => return None,
    };
    let stride = u64::try_from(body.constant_int(constant)?).ok().filter(|&s| s > 0)?;
    Some((axis, stride))
}
