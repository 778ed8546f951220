//! Launch-time specialization: a kernel lowered for the tensor extents of one launch.
//!
//! The lowering assumes rows of global tiles are 16-byte aligned (it copies them with 16-byte `cp.async`)
//! and records what a launch must keep to in the kernel's `async_copy_alignment` attribute (argument, axis,
//! multiple). When a launch's extents break it (rows of `K = 4097` halves, say), the kernel is lowered
//! again with `global_alignment` set per argument to what the extents allow: narrower `cp.async`, or
//! synchronous copies below 4 bytes. A kernel variant picked at launch, like CUTLASS's alignment parameter
//! or Triton's divisibility specialization.
//!
//! `extents[i]` is the logical shape of argument `i` when it is a tensor (`None` for a scalar).

use std::fmt;

use tilec_ir::{Attribute, Func, Module};
use tilec_passes::lower::{ASYNC_COPY_ALIGNMENT_ATTR, GLOBAL_ALIGNMENT_ATTR};

use crate::compiler::{Compiled, Compiler};
use crate::error::CompileError;
use crate::options::Options;

/// The variant a launch needs when the kernel as written would copy its tensors misaligned.
#[derive(Clone, Debug, PartialEq)]
pub struct AlignmentVariant {
    /// The `global_alignment` it is compiled with (bytes per argument).
    pub attr: Attribute,
    /// A `note: ...` line for the user: which arguments get narrower copies.
    pub note: String,
}

impl fmt::Display for AlignmentVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.note)
    }
}

/// A kernel lowered for one launch: the module (the kernel alone), and the variant when the kernel as
/// written would not do.
#[derive(Clone, Debug)]
pub struct Specialized {
    /// The kernel alone, through the pipeline.
    pub module: Module,
    /// `None` when the kernel as written copies the launch's tensors correctly.
    pub variant: Option<AlignmentVariant>,
    /// The passes' located warnings on the lowering used ([`crate::Log::pass_warnings`]).
    pub warnings: Vec<tilec_ir::Diagnostic>,
}

impl Compiler {
    /// The kernel `func` alone, lowered with `options`'s pipeline (the whole one by default).
    pub fn lower_kernel(&self, func: &Func, options: &Options) -> Result<Module, CompileError> {
        Ok(self.lower(Module { funcs: vec![func.clone()] }, options)?.module)
    }

    /// The kernel lowered for a launch with these extents: as written, or, when that breaks the alignment
    /// its copies assume, the [`AlignmentVariant`] the extents allow (checked against them).
    pub fn specialize(&self, func: &Func, options: &Options, extents: &[Option<Vec<u64>>]) -> Result<Specialized, CompileError> {
        let lowered = self.lower(Module { funcs: vec![func.clone()] }, options)?;
        let Some(variant) = lowered.module.funcs.first().and_then(|f| alignment_variant(func, f, extents)) else {
            return Ok(Specialized { module: lowered.module, variant: None, warnings: lowered.log.pass_warnings });
        };
        let mut narrowed = func.clone();
        narrowed.attrs.insert(GLOBAL_ALIGNMENT_ATTR.into(), variant.attr.clone());
        let lowered = self.lower(Module { funcs: vec![narrowed] }, options)?;
        if let Some(f) = lowered.module.funcs.first() {
            check_alignment(f, extents)?;
        }
        Ok(Specialized { module: lowered.module, variant: Some(variant), warnings: lowered.log.pass_warnings })
    }

    /// The kernel lowered with the variant's `global_alignment`, checked against the extents it was picked
    /// for. (For callers that lower the kernel once and pick variants per launch with [`alignment_variant`].)
    pub fn lower_variant(&self, func: &Func, options: &Options, variant: &AlignmentVariant, extents: &[Option<Vec<u64>>]) -> Result<Module, CompileError> {
        let mut narrowed = func.clone();
        narrowed.attrs.insert(GLOBAL_ALIGNMENT_ATTR.into(), variant.attr.clone());
        let module = self.lower_kernel(&narrowed, options)?;
        if let Some(lowered) = module.funcs.first() {
            check_alignment(lowered, extents)?;
        }
        Ok(module)
    }

    /// [`Compiler::specialize`], then [`crate::emit`]: the kernel compiled for one launch.
    pub fn compile_for_extents(&self, func: &Func, options: &Options, extents: &[Option<Vec<u64>>]) -> Result<(Compiled, Option<AlignmentVariant>), CompileError> {
        let Specialized { module, variant, warnings } = self.specialize(func, options, extents)?;
        let emitted = crate::emit(&module, options)?;
        let log = crate::Log { pass_warnings: warnings, ..Default::default() };
        let compiled = Compiled { output: emitted.output, kernels: emitted.kernels, lowered: module, log, timing: None };
        Ok((compiled, variant))
    }
}

/// The variant a launch with these extents needs, given `lowered`, the kernel as written and lowered; `None`
/// when that one copies them correctly. (For callers that lower the kernel once for many launches.)
pub fn alignment_variant(func: &Func, lowered: &Func, extents: &[Option<Vec<u64>>]) -> Option<AlignmentVariant> {
    let alignment = alignment_for_extents(func, lowered, extents)?;
    let attr = Attribute::Array(alignment.iter().map(|&a| Attribute::Int(a as i64)).collect());
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
        GLOBAL_ALIGNMENT_ATTR,
        narrowed.join(", ")
    );
    Some(AlignmentVariant { attr, note })
}

/// Refuses a launch whose tensor extents break the lowered kernel's alignment requirements, which would
/// fault on the GPU with a misaligned address. [`Compiler::specialize`] picks a variant that does not break
/// them and checks it here, so this error would mean a lowering that does not keep to the
/// `global_alignment` it was given.
pub fn check_alignment(lowered: &Func, extents: &[Option<Vec<u64>>]) -> Result<(), CompileError> {
    let names = arg_names(lowered);
    for (arg, axis, multiple) in alignment_requirements(lowered) {
        let Some(Some(shape)) = extents.get(arg) else { continue };
        let Some(&extent) = shape.get(axis) else { continue };
        if multiple > 1 && extent % multiple != 0 {
            let name = names.get(arg).map_or("?", String::as_str);
            return Err(CompileError::Misaligned(format!(
                "%{name} is {}: its extent {axis} ({extent}) must be a multiple of {multiple}, or its copies from global memory would be misaligned (the kernel's async_copy_requirements)",
                shape.iter().map(u64::to_string).collect::<Vec<_>>().join("x")
            )));
        }
    }
    Ok(())
}

/// What a launch needs of `global_alignment` (bytes, one per argument) when `lowered` (the kernel as
/// written, lowered) cannot copy its tensors: each broken row-length requirement narrows its argument to the
/// largest power of two (at most 16) dividing the row length in bytes, within what the kernel's own
/// attribute already says. `None` when every requirement holds.
fn alignment_for_extents(func: &Func, lowered: &Func, extents: &[Option<Vec<u64>>]) -> Option<Vec<u64>> {
    let args = func.args();
    let mut alignment: Vec<u64> = match func.attrs.get(GLOBAL_ALIGNMENT_ATTR) {
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
        let Some(&value) = args.get(arg) else { continue };
        broken = true;
        let elem_bytes = u64::from(func.body.ty(value).element_type().bit_width()).div_ceil(8).max(1);
        let row_bytes = extent * elem_bytes;
        let allowed = 1u64 << row_bytes.trailing_zeros().min(4);
        if let Some(slot) = alignment.get_mut(arg) {
            *slot = (*slot).min(allowed);
        }
    }
    broken.then_some(alignment)
}

/// The lowered kernel's `async_copy_alignment` entries: (argument, axis, multiple).
pub fn alignment_requirements(lowered: &Func) -> Vec<(usize, usize, u64)> {
    let Some(Attribute::Array(items)) = lowered.attrs.get(ASYNC_COPY_ALIGNMENT_ATTR) else { return Vec::new() };
    items
        .iter()
        .filter_map(|item| {
            let Attribute::Array(t) = item else { return None };
            let [Some(arg), Some(axis), Some(multiple)] = [0, 1, 2].map(|i| t.get(i).and_then(Attribute::as_int)) else { return None };
            Some((usize::try_from(arg).ok()?, usize::try_from(axis).ok()?, u64::try_from(multiple).ok()?))
        })
        .collect()
}

/// The arguments' names as written (`#i` for an unnamed one).
fn arg_names(func: &Func) -> Vec<String> {
    func.args().iter().enumerate().map(|(i, &v)| func.body.value(v).name.clone().unwrap_or_else(|| format!("#{i}"))).collect()
}
