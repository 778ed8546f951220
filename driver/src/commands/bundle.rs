//! `tilec bundle FILE -o DIR`: everything a GPU run needs, made on this machine — the PTX, the launch
//! description, seeded input buffers — together with the results the oracles expect (the reference
//! interpreter for tile-level kernels, the warp simulator for nvgpu-level ones). `tilec-gpu-runner DIR` runs
//! it on the GPU machine, and `tilec compare DIR` checks the buffers it wrote against the expectations.

use std::path::Path;

use serde::{Deserialize, Serialize};
use tilec_gpu_runner::{Buffer, Bundle, Param, RandomFill};
use tilec_ir::data::TensorData;
use tilec_ir::interp::{self, ArgValue};
use tilec_ir::sim::{self, SimArg};
use tilec_ir::{Module, ScalarType};
use tilec_lower_ptx::{AbiRole, KernelInfo};
use tilec_passes::{PassContext, PassManager, PassRegistry};

use crate::cli::BundleArgs;
use crate::commands::interp::{arg_names, located_or_usage, prepare, select_func};
use crate::error::DriverError;
use crate::input::{diagnostics, parse_and_verify, read_source};

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
    let source = read_source(&args.input)?;
    let module = parse_and_verify(&source)?;
    let func = select_func(&module, args.inputs.func.as_deref())?;
    let (values, launch) = prepare(func, &args.inputs).map_err(|d| located_or_usage(&source, d))?;
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
    let (single, note) = lower_for_extents(func, target, &source, &extents)?;
    let (ptx, kernels) = tilec_lower_ptx::compile(&single, target, args.backend.into(), tilec_lower_ptx::OptLevel::O3)
        .map(|c| (c.ptx, c.kernels))
        .map_err(|e| diagnostics(&source, vec![e.to_diagnostic()]))?;
    let kernel = kernels.into_iter().next().ok_or_else(|| DriverError::Usage("no kernel compiled".into()))?;

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
        params: abi_params(&kernel, &values, &names, args.no_oracle)?,
    };
    write("bundle.json", to_json(&bundle).as_bytes())?;
    let meta = BundleMeta { source: source.name.clone(), kernel: kernel.name.clone(), oracle: oracle.into(), grid: launch.grid, tensors };
    write("meta.json", to_json(&meta).as_bytes())?;
    let note = note.map(|v| v.note + "\n").unwrap_or_default();
    Ok(format!(
        "{note}{}: @{} for {}, grid [{}, {}, {}], block {}, {} B shared; expected results from the {oracle}\n",
        args.output, kernel.name, target, launch.grid[0], launch.grid[1], launch.grid[2], kernel.block[0], kernel.shared_bytes
    ))
}

/// Refuses a launch whose tensor extents break the lowered kernel's alignment requirements (the
/// `async_copy_alignment` attribute: argument, axis, multiple), which would fault on the GPU with a misaligned
/// address. `extents[i]`: the logical shape of argument `i` when it is a tensor. [`lower_for_extents`] picks a
/// variant that does not break them and checks it here, so this error would mean a lowering that does not
/// keep to the `global_alignment` it was given.
fn check_alignment(lowered: &tilec_ir::Func, extents: &[Option<Vec<u64>>]) -> Result<(), DriverError> {
    let names = arg_names(lowered);
    for (arg, axis, multiple) in alignment_requirements(lowered) {
        let Some(Some(shape)) = extents.get(arg) else { continue };
        let Some(&extent) = shape.get(axis) else { continue };
        if multiple > 1 && extent % multiple != 0 {
            let name = names.get(arg).map_or("?", String::as_str);
            return Err(DriverError::Usage(format!(
                "%{name} is {}: its extent {axis} ({extent}) must be a multiple of {multiple}, or its copies from global memory would be misaligned (the kernel's async_copy_requirements)",
                shape.iter().map(u64::to_string).collect::<Vec<_>>().join("x")
            )));
        }
    }
    Ok(())
}

/// The kernel lowered for a launch with these tensor extents (`extents[i]`: the logical shape of argument `i`
/// when it is a tensor). When the extents break the alignment its copies assume (rows of a global tile whose
/// length in bytes is not a multiple of 16, say), the kernel is lowered again with `global_alignment` set per
/// argument to what the extents allow: narrower cp.async, or synchronous copies below 4 bytes. A kernel
/// variant picked at launch, like CUTLASS's alignment parameter or Triton's divisibility specialization;
/// the note returned says which.
pub fn lower_for_extents(
    func: &tilec_ir::Func,
    target: tilec_ir::Target,
    source: &tilec_ir::SourceFile,
    extents: &[Option<Vec<u64>>],
) -> Result<(Module, Option<AlignmentVariant>), DriverError> {
    let single = lower_kernel(func, target, source)?;
    let Some(variant) = single.funcs.first().and_then(|lowered| alignment_variant(func, lowered, extents)) else { return Ok((single, None)) };
    let single = lower_variant(func, target, source, &variant, extents)?;
    Ok((single, Some(variant)))
}

/// The variant a launch with these extents needs, given `lowered`, the kernel as written and lowered; `None`
/// when that one copies them correctly. (For callers that lower the kernel once for many launches.)
pub fn alignment_variant(func: &tilec_ir::Func, lowered: &tilec_ir::Func, extents: &[Option<Vec<u64>>]) -> Option<AlignmentVariant> {
    let alignment = alignment_for_extents(func, lowered, extents)?;
    let attr = tilec_ir::Attribute::Array(alignment.iter().map(|&a| tilec_ir::Attribute::Int(a as i64)).collect());
    let names = arg_names(func);
    let narrowed: Vec<String> = alignment
        .iter()
        .enumerate()
        .filter(|&(_, &a)| a < 16)
        .map(|(i, &a)| {
            let how = if a < 4 { "synchronous loads".to_string() } else { format!("cp.async of {a} bytes") };
            format!("%{} with {how}", names.get(i).map_or("?", String::as_str))
        })
        .collect();
    let note = format!(
        "note: @{}: not every row (column, if column-major) of the launch's tensors is 16-byte aligned; compiled with {} = {attr}: {}",
        func.name,
        tilec_passes::lower::GLOBAL_ALIGNMENT_ATTR,
        narrowed.join(", ")
    );
    Some(AlignmentVariant { attr, note })
}

/// The kernel lowered with the variant's `global_alignment`; checked against the extents it was picked for.
pub fn lower_variant(
    func: &tilec_ir::Func,
    target: tilec_ir::Target,
    source: &tilec_ir::SourceFile,
    variant: &AlignmentVariant,
    extents: &[Option<Vec<u64>>],
) -> Result<Module, DriverError> {
    let mut narrowed = func.clone();
    narrowed.attrs.insert(tilec_passes::lower::GLOBAL_ALIGNMENT_ATTR.into(), variant.attr.clone());
    let single = lower_kernel(&narrowed, target, source)?;
    if let Some(lowered) = single.funcs.first() {
        check_alignment(lowered, extents)?;
    }
    Ok(single)
}

/// The variant [`lower_for_extents`] picked for a launch whose rows are not all 16-byte aligned.
#[derive(Clone, Debug)]
pub struct AlignmentVariant {
    /// The `global_alignment` it was compiled with.
    pub attr: tilec_ir::Attribute,
    /// A `note: ...` line for the user.
    pub note: String,
}

/// What a launch needs of `global_alignment` (bytes, one per argument) when `lowered` (the kernel as
/// written, lowered) cannot copy its tensors: each broken row-length requirement narrows its argument to the
/// largest power of two (at most 16) dividing the row length in bytes, within what the kernel's own
/// attribute already says. `None` when every requirement holds.
fn alignment_for_extents(func: &tilec_ir::Func, lowered: &tilec_ir::Func, extents: &[Option<Vec<u64>>]) -> Option<Vec<u64>> {
    use tilec_ir::Attribute;
    let args = func.args();
    let mut alignment: Vec<u64> = match func.attrs.get(tilec_passes::lower::GLOBAL_ALIGNMENT_ATTR) {
        Some(Attribute::Int(n)) => vec![*n as u64; args.len()],
        Some(Attribute::Array(items)) if items.len() == args.len() => items.iter().map(|a| a.as_int().unwrap_or(16) as u64).collect(),
        _ => vec![16; args.len()],
    };
    let mut broken = false;
    for (arg, axis, multiple) in alignment_requirements(lowered) {
        let Some(Some(shape)) = extents.get(arg) else { continue };
        let Some(&extent) = shape.get(axis) else { continue };
        if multiple <= 1 || extent % multiple == 0 {
            continue;
        }
        broken = true;
        let elem_bytes = u64::from(func.body.ty(args[arg]).element_type().bit_width()).div_ceil(8).max(1);
        let row_bytes = extent * elem_bytes;
        let allowed = 1u64 << row_bytes.trailing_zeros().min(4);
        alignment[arg] = alignment[arg].min(allowed);
    }
    broken.then_some(alignment)
}

/// The lowered kernel's `async_copy_alignment` entries: (argument, axis, multiple).
fn alignment_requirements(lowered: &tilec_ir::Func) -> Vec<(usize, usize, u64)> {
    let Some(tilec_ir::Attribute::Array(items)) = lowered.attrs.get(tilec_passes::lower::ASYNC_COPY_ALIGNMENT_ATTR) else { return Vec::new() };
    items
        .iter()
        .filter_map(|item| {
            let tilec_ir::Attribute::Array(t) = item else { return None };
            let [Some(arg), Some(axis), Some(multiple)] = [0, 1, 2].map(|i| t.get(i).and_then(tilec_ir::Attribute::as_int)) else { return None };
            Some((usize::try_from(arg).ok()?, usize::try_from(axis).ok()?, u64::try_from(multiple).ok()?))
        })
        .collect()
}

/// One kernel alone, through the default pipeline down to nvgpu-level IR (what `bundle` compiles and `sim`
/// simulates).
pub fn lower_kernel(func: &tilec_ir::Func, target: tilec_ir::Target, source: &tilec_ir::SourceFile) -> Result<Module, DriverError> {
    let mut single = Module { funcs: vec![func.clone()] };
    let pipeline = tilec_passes::full_pipeline(target);
    let registry = PassRegistry::with_builtin();
    let pm = PassManager::from_pipeline(&registry, &pipeline).map_err(|d| DriverError::Usage(d.message))?;
    pm.run(&mut single, &mut PassContext::new(target)).map_err(|e| diagnostics(source, e.diagnostics.0))?;
    Ok(single)
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

/// The PTX entry's parameters in order, from the kernel's ABI and the argument values.
/// With `generated`, buffers are filled with pseudo-random data by the runner and nothing is copied back.
fn abi_params(kernel: &KernelInfo, values: &[ArgValue], names: &[String], generated: bool) -> Result<Vec<Param>, DriverError> {
    let mut params = Vec::new();
    for abi in &kernel.abi {
        let value = values.get(abi.arg).ok_or_else(|| DriverError::Usage(format!("ABI names argument #{}", abi.arg)))?;
        let name = names.get(abi.arg).cloned().unwrap_or_default();
        params.push(match (&abi.role, value) {
            (AbiRole::Pointer, ArgValue::Tensor(t)) if generated => Param::Buffer(Buffer {
                input: None,
                zeros: None,
                random: Some(RandomFill { elem: t.elem.to_string(), count: t.len() }),
                output: None,
            }),
            (AbiRole::Pointer, ArgValue::Tensor(_)) => Param::Buffer(Buffer {
                input: Some(format!("{name}.bin")),
                zeros: None,
                random: None,
                output: Some(format!("{name}.out.bin")),
            }),
            (AbiRole::Extent(axis), ArgValue::Tensor(t)) => Param::I64(t.shape.get(*axis).copied().unwrap_or(0) as i64),
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
