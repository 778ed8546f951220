//! `tilec bundle FILE -o DIR`: everything a GPU run needs, made on this machine — the PTX, the launch
//! description, seeded input buffers — together with the results the oracles expect (the reference
//! interpreter for tile-level kernels, the warp simulator for nvgpu-level ones). `tilec-gpu-runner DIR` runs
//! it on the GPU machine, and `tilec compare DIR` checks the buffers it wrote against the expectations.

use std::path::Path;

use serde::{Deserialize, Serialize};
use tilec_gpu_runner::tensor_map::TensorMapParam;
use tilec_gpu_runner::{Buffer, Bundle, Param, RandomFill, TensorDesc};
use tilec_ir::data::TensorData;
use tilec_ir::interp::{self, ArgValue};
use tilec_ir::sim::{self, SimArg};
use tilec_compiler::Options;
use tilec_ir::ScalarType;
use tilec_lower_ptx::{AbiRole, KernelInfo};

use crate::cli::BundleArgs;
use crate::commands::interp::{arg_names, located_or_usage, prepare_args, select_func};
use crate::error::DriverError;
use crate::input::{compile_error, diagnostics, parse_and_verify, read_source_with};

/// What `tilec compare` needs besides the buffers: written as `meta.json` beside `bundle.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BundleMeta {
    pub source: String,
    pub kernel: String,
    /// `interp` or `sim`.
    pub oracle: String,
    pub grid: [u32; 3],
    pub tensors: Vec<TensorMeta>,
}

/// One global tile argument.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TensorMeta {
    pub name: String,
    pub elem: String,
    pub shape: Vec<usize>,
    /// The GPU's result (written by the runner).
    pub output: String,
    /// The oracle's result.
    pub expected: String,
    /// How the buffers hold the tensor: `row_major`, or `col_major` for a `#col_major` global tile (its
    /// files hold the `cols x rows` transpose, column after column, as the kernel reads it). Bundles
    /// written before this field existed are row-major.
    #[serde(default = "row_major_name")]
    pub layout: String,
}

fn row_major_name() -> String {
    "row_major".into()
}

/// Whether argument `index` of `func` is a rank-2 `#col_major` global tile.
fn is_col_major_arg(func: &tilec_ir::Func, index: usize) -> bool {
    let ty = func.args().get(index).map(|&a| func.body.ty(a));
    matches!(ty, Some(tilec_ir::Type::Tile(t)) if t.rank() == 2 && t.layout == Some(tilec_ir::layout::Layout::ColMajor))
}

/// The transpose of a rank-2 tensor (any other is returned as it is).
fn transposed(t: &TensorData) -> TensorData {
    let &[rows, cols] = t.shape.as_slice() else { return t.clone() };
    let mut out = TensorData::zeros(&[cols, rows], t.elem);
    for r in 0..rows {
        for c in 0..cols {
            out.values[c * rows + r] = t.values[r * cols + c];
        }
    }
    out
}

/// A tensor's bytes in the order its global tile stores them (the logical values are row-major).
fn storage_bytes(t: &TensorData, layout: &str) -> Vec<u8> {
    if layout == "col_major" {
        transposed(t).to_le_bytes()
    } else {
        t.to_le_bytes()
    }
}

pub fn run(args: &BundleArgs) -> Result<String, DriverError> {
    let source = read_source_with(&args.input, &args.inputs.params)?;
    let module = parse_and_verify(&source)?;
    let func = select_func(&module, args.inputs.func.as_deref())?;
    // Without the oracle nothing is computed here: the tensors keep their shapes only, and the runner makes
    // their contents from the seed (a timing bundle carries no data at any size).
    let (values, launch) = prepare_args(func, &args.inputs, !args.no_oracle).map_err(|d| located_or_usage(&source, d))?;
    let tile_level = crate::commands::sim::first_tile_level_op(func).is_some();

    // The oracle's answer on the original program.
    let mut expected = values.clone();
    let oracle = if args.no_oracle {
        "none"
    } else if tile_level {
        interp::run(func, &mut expected, &launch).map_err(|e| diagnostics(&source, vec![e.to_diagnostic()]))?;
        "interp"
    } else {
        let mut sim_args = to_sim_args(&expected);
        let sim_launch = sim::Launch::grid(launch.grid[0], launch.grid[1], launch.grid[2]);
        sim::simulate(func, &mut sim_args, &sim_launch).map_err(|e| diagnostics(&source, vec![e.into()]))?;
        for (slot, arg) in expected.iter_mut().zip(sim_args) {
            if let (ArgValue::Tensor(t), SimArg::Tile(s)) = (slot, arg) {
                *t = s;
            }
        }
        "sim"
    };

    // Compile the kernel alone.
    let target = crate::target::parse_target(&args.target)?;
    let extents = tensor_extents(&values);
    let options = Options { target, backend: args.backend.into(), ..Options::default() };
    let (compiled, note) = tilec_compiler::compile_for_extents(func, &options, &extents).map_err(|e| compile_error(&source, e))?;
    crate::input::print_warnings(&source, &compiled.log.pass_warnings);
    let ptx = compiled.output;
    let kernel = compiled.kernels.into_iter().next().ok_or_else(|| DriverError::Usage("no kernel compiled".into()))?;

    let dir = Path::new(&args.output);
    std::fs::create_dir_all(dir).map_err(|e| DriverError::io(&args.output, &e))?;
    let write = |name: &str, bytes: &[u8]| std::fs::write(dir.join(name), bytes).map_err(|e| DriverError::io(name, &e));
    write("kernel.ptx", ptx.as_bytes())?;
    let names = arg_names(func);
    let mut tensors = Vec::new();
    for (index, ((name, value), want)) in names.iter().zip(&values).zip(&expected).enumerate() {
        if let (ArgValue::Tensor(t), ArgValue::Tensor(e)) = (value, want) {
            if args.no_oracle {
                continue;
            }
            let layout = if is_col_major_arg(func, index) { "col_major".to_string() } else { row_major_name() };
            write(&format!("{name}.bin"), &storage_bytes(t, &layout))?;
            if !args.no_oracle {
                write(&format!("{name}.expected.bin"), &storage_bytes(e, &layout))?;
            }
            tensors.push(TensorMeta {
                name: name.clone(),
                elem: t.elem.to_string(),
                shape: t.shape.clone(),
                output: format!("{name}.out.bin"),
                expected: if args.no_oracle { String::new() } else { format!("{name}.expected.bin") },
                layout,
            });
        }
    }
    let bundle = Bundle {
        ptx: "kernel.ptx".into(),
        kernel: kernel.name.clone(),
        grid: launch.grid,
        block: kernel.block,
        shared_bytes: kernel.dynamic_shared_bytes as u32,
        repeat: args.repeat,
        warmup: args.warmup,
        flops: args.flops,
        label: format!("{} ({}, {target})", source.name, crate::cli::backend_name(args.backend)),
        params: abi_params(func, &kernel, &values, &names, args.no_oracle.then_some(args.inputs.seed), launch.grid)?,
        persistent: kernel.persistent,
    };
    write("bundle.json", to_json(&bundle).as_bytes())?;
    let meta = BundleMeta { source: source.name.clone(), kernel: kernel.name.clone(), oracle: oracle.into(), grid: launch.grid, tensors };
    write("meta.json", to_json(&meta).as_bytes())?;
    let note = note.map(|v| v.note + "\n").unwrap_or_default();
    Ok(format!(
        "{note}{}: @{} for {}, grid [{}, {}, {}], block {}, {} B shared; {}\n",
        args.output,
        kernel.name,
        target,
        launch.grid[0],
        launch.grid[1],
        launch.grid[2],
        kernel.block[0],
        kernel.shared_bytes,
        if args.no_oracle { "no expected results (--no-oracle)".to_string() } else { format!("expected results from the {oracle}") }
    ))
}

fn to_json<T: Serialize>(value: &T) -> String {
    // Plain structs of strings and numbers: serialisation cannot fail.
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}

/// The logical shape of each argument that is a tensor.
pub fn tensor_extents(values: &[ArgValue]) -> Vec<Option<Vec<u64>>> {
    values.iter().map(|v| v.as_tensor().map(|t| t.shape.iter().map(|&d| d as u64).collect())).collect()
}

pub fn to_sim_args(values: &[ArgValue]) -> Vec<SimArg> {
    values.iter().map(SimArg::from).collect()
}

/// The PTX entry's parameters in order, from the kernel's ABI and the argument values. With `generated` (the
/// run's seed), buffers are filled with pseudo-random data by the runner (one stream of the seed per argument)
/// and nothing is copied back. Every buffer names the argument it holds ([`TensorDesc`]).
///
/// A persistent kernel's hidden arguments (its last three) take the logical grid `grid`.
pub(crate) fn abi_params(
    func: &tilec_ir::Func,
    kernel: &KernelInfo,
    values: &[ArgValue],
    names: &[String],
    generated: Option<u64>,
    grid: [u32; 3],
) -> Result<Vec<Param>, DriverError> {
    let mut params = Vec::new();
    for abi in &kernel.abi {
        if let Some(axis) = kernel.logical_grid_axis(abi.arg) {
            params.push(Param::I64(i64::from(grid[axis.min(2)])));
            continue;
        }
        let value = values.get(abi.arg).ok_or_else(|| DriverError::Usage(format!("ABI names argument #{}", abi.arg)))?;
        let name = names.get(abi.arg).cloned().unwrap_or_default();
        // The layout as the compiled kernel reads the argument (its signature, any rank).
        let layout = match kernel.params.get(abi.arg).map(|p| &p.kind) {
            Some(tilec_lower_ptx::ParamKind::Tile { layout, .. }) => layout.clone(),
            _ if is_col_major_arg(func, abi.arg) => "col_major".into(),
            _ => row_major_name(),
        };
        let describe = |t: &TensorData| TensorDesc {
            name: name.clone(),
            elem: t.elem.to_string(),
            shape: t.shape.iter().map(|&d| d as u64).collect(),
            layout: layout.clone(),
        };
        params.push(match (&abi.role, value) {
            (AbiRole::Pointer, ArgValue::Tensor(t)) => match generated {
                Some(seed) => Param::Buffer(Buffer {
                    input: None,
                    zeros: None,
                    random: Some(RandomFill {
                        elem: t.elem.to_string(),
                        count: t.shape.iter().product(),
                        seed: Some(seed),
                        stream: abi.arg as u64,
                    }),
                    output: None,
                    tensor: Some(Box::new(describe(t))),
                }),
                None => Param::Buffer(Buffer {
                    input: Some(format!("{name}.bin")),
                    zeros: None,
                    random: None,
                    output: Some(format!("{name}.out.bin")),
                    tensor: Some(Box::new(describe(t))),
                }),
            },
            (AbiRole::Extent(axis), ArgValue::Tensor(t)) => Param::I64(t.shape.get(*axis).copied().unwrap_or(0) as i64),
            // A TMA tensor map over the argument's buffer (the pointer parameter before it), built at launch.
            (AbiRole::TensorMap(k), ArgValue::Tensor(t)) => {
                let map = kernel.tensor_maps.get(*k).ok_or_else(|| DriverError::Usage(format!("ABI names tensor map #{k}")))?;
                let buffer = kernel
                    .abi
                    .iter()
                    .position(|p| p.arg == abi.arg && p.role == AbiRole::Pointer)
                    .ok_or_else(|| DriverError::Usage(format!("tensor map #{k}: argument '{name}' has no pointer parameter")))?;
                Param::TensorMap(TensorMapParam {
                    buffer,
                    data_type: map.data_type,
                    elem_bytes: t.elem.bit_width() / 8,
                    // The map's axis order: a transposed map's tensor is its memory's row-major view.
                    shape: if map.transposed { t.shape.iter().rev().map(|&n| n as u64).collect() } else { t.shape.iter().map(|&n| n as u64).collect() },
                    box_shape: map.box_shape.clone(),
                    swizzle: map.swizzle.clone(),
                })
            }
            (AbiRole::Value, ArgValue::Scalar(ty, x)) => match (ty, abi.ty.as_str()) {
                (ScalarType::F32 | ScalarType::TF32, _) | (_, "f32") => Param::F32(*x as f32),
                (_, "i32") => Param::I32(*x as i32),
                (_, "i64") => Param::I64(*x as i64),
                (_, other) => return Err(DriverError::Usage(format!("argument '{name}': the runner cannot pass a '{other}' scalar yet"))),
            },
            _ => return Err(DriverError::Usage(format!("argument '{name}' does not match the kernel's ABI"))),
        });
    }
    Ok(params)
}

/// Used by `tilec compare`: the tensors of a bundle's oracle and GPU results.
pub fn read_tensor(dir: &Path, file: &str, meta: &TensorMeta) -> Result<TensorData, DriverError> {
    let path = dir.join(file);
    let bytes = std::fs::read(&path).map_err(|e| DriverError::io(&path.display().to_string(), &e))?;
    let elem = ScalarType::from_name(&meta.elem).ok_or_else(|| DriverError::Usage(format!("unknown element type {}", meta.elem)))?;
    let col_major = match (meta.layout.as_str(), meta.shape.as_slice()) {
        ("row_major", _) => false,
        ("col_major", [_, _]) => true,
        (other, _) => return Err(DriverError::Usage(format!("{}: tensor '{}' has layout '{other}' (expected row_major, or col_major for rank 2)", dir.join("meta.json").display(), meta.name))),
    };
    // A column-major tensor's file holds its transpose; the comparison is on the logical (row-major) values.
    let stored: Vec<usize> = if col_major { meta.shape.iter().rev().copied().collect() } else { meta.shape.clone() };
    let t = TensorData::from_le_bytes(&stored, elem, &bytes)
        .ok_or_else(|| DriverError::Usage(format!("{}: {} bytes do not hold a {:?} {} tensor", path.display(), bytes.len(), meta.shape, meta.elem)))?;
    Ok(if col_major { transposed(&t) } else { t })
}
