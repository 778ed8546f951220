//! The verifier: structural rules (terminators, scoping, region shapes) and the rules of each op, checked on
//! the whole module so that every problem is reported, each at the op it concerns.
//!
//! The per-op rules live beside their dialect: [`tile`] and [`nvgpu`] (its Hopper ops in [`hopper`]).

mod hopper;
mod nvgpu;
mod tile;

use std::collections::HashSet;

use crate::body::{BlockId, Func, Module, OpId, Operation, Value};
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::attr::Attribute;
use crate::ops::kernel::{GlobalAlignment, KernelAttrs, KERNEL_ATTRS};
use crate::ops::typed::AnyOp;
use crate::ops::{check_attribute, op_attributes, Arity, AttrDef, OpKind};
use crate::syntax::parser::is_param_name;
use crate::types::{MemorySpace, ScalarType, TileType, Type, VectorType};

/// Verifies a module; returns every error found.
pub fn verify_module(module: &Module) -> Result<(), Diagnostics> {
    let mut diags = Vec::new();
    for func in &module.funcs {
        diags.extend(verify_func(func));
    }
    if diags.is_empty() {
        Ok(())
    } else {
        Err(Diagnostics(diags))
    }
}

/// Verifies one function; returns its errors.
pub fn verify_func(func: &Func) -> Vec<Diagnostic> {
    let mut v = Verifier { func, diags: Vec::new(), visible: HashSet::new() };
    for &arg in func.args() {
        v.visible.insert(arg);
        if let Type::Vector(_) = func.body.ty(arg) {
            v.error(func.body.value(arg).span.to(func.span), "kernel arguments must be scalars or global tiles");
        }
        if let Type::Tile(t) = func.body.ty(arg) {
            if t.space != MemorySpace::Global {
                v.error(
                    func.body.value(arg).span,
                    format!("kernel argument of type '{t}' must be in global memory"),
                );
            }
        }
    }
    v.diags.extend(kernel_attributes(func));
    v.block(func.entry, None);
    if v.diags.is_empty() {
        v.diags.extend(shared_memory_fits(func));
        v.diags.extend(register_tiles_fit(func));
    }
    v.diags
}

/// The most 32-bit registers a thread may have: 255, on every target tilec compiles for.
pub const MAX_REGISTERS_PER_THREAD: u64 = 255;

/// The 32-bit registers one thread block may use on every target tilec compiles for (sm_80 … sm_90a: the
/// 64 K registers of an SM): a block of `t` threads gives each at most `65536 / t` of them, fewer than 255 from
/// 512 threads (16 warps) up.
pub const REGISTERS_PER_BLOCK: u64 = 65536;

/// Registers a kernel needs beside a register tile: addresses, loop counters, masks, the next operands of an mma.
/// A tile that leaves fewer is not held in registers: ptxas moves it to local memory (a 256x256 f32 tile over
/// 16 warps, 128 of the 128 registers a thread has there, spilled 16 KB per thread).
pub const REGISTERS_BESIDE_A_TILE: u64 = 16;

/// The registers each of `threads` threads may have.
pub fn registers_per_thread(threads: u64) -> u64 {
    MAX_REGISTERS_PER_THREAD.min(REGISTERS_PER_BLOCK / threads.max(1))
}

/// The registers per thread one register tile may take in a block of `threads` threads: what a thread has, less
/// [`REGISTERS_BESIDE_A_TILE`].
fn tile_register_budget(threads: u64) -> u64 {
    registers_per_thread(threads).saturating_sub(REGISTERS_BESIDE_A_TILE)
}

/// Every register tile fits in the registers of the kernel's threads: at most [`registers_per_thread`] each
/// (255, fewer from 16 warps up), less [`REGISTERS_BESIDE_A_TILE`]. The error names a `num_warps` that would fit
/// the tile when one exists (a power of two up to 32 warps), else says that no block can hold it.
fn register_tiles_fit(func: &Func) -> Vec<Diagnostic> {
    let warps = KernelAttrs::of(func).map_or(crate::ops::kernel::DEFAULT_NUM_WARPS, |a| a.num_warps).max(1);
    let threads = u64::from(warps) * 32;
    let budget = tile_register_budget(threads);
    let mut diags = Vec::new();
    func.body.walk(func.entry, &mut |id| {
        let op = func.body.op(id);
        for &r in &op.results {
            let Type::Tile(t) = func.body.ty(r) else { continue };
            if t.space != MemorySpace::Register || !diags.is_empty() {
                continue;
            }
            let Some(elements) = t.num_elements() else { continue };
            let total = elements.saturating_mul(u64::from(t.elem.bit_width())).div_ceil(32);
            let registers = total.div_ceil(threads);
            if registers <= budget {
                continue;
            }
            let has = registers_per_thread(threads);
            let fits_with = (0..=5u32)
                .map(|e| 1u64 << e)
                .filter(|&w| w > u64::from(warps))
                .find(|&w| total.div_ceil(w * 32) <= tile_register_budget(w * 32));
            let advice = match fits_with {
                Some(w) => format!(
                    "use smaller tiles, or num_warps = {w} ({} registers per thread)",
                    total.div_ceil(w * 32)
                ),
                None => format!(
                    "use smaller tiles: with any number of warps it takes more of the {REGISTERS_PER_BLOCK} registers of a thread block than leave room for the rest of the kernel"
                ),
            };
            diags.push(
                Diagnostic::error(
                    op.span,
                    format!(
                        "'{t}' needs {registers} registers per thread over {warps} warp(s), more than the {budget} a tile may take ({has} a thread has, less {REGISTERS_BESIDE_A_TILE} for the rest of the kernel); {advice}"
                    ),
                ),
            );
        }
    });
    diags
}

/// The kernel's shared tiles fit in the shared memory of the largest target (227 KiB per block): more can
/// never run, and rejecting it here spares the passes work on absurd sizes (a 65536-row tile took the
/// lowering minutes). Each target's own, smaller limit, with software pipelining's stages, is
/// `check-resources`'.
fn shared_memory_fits(func: &Func) -> Vec<Diagnostic> {
    let limit = crate::shared_memory::MAX_SHARED_BYTES;
    let past = crate::shared_memory::place_shared_allocations(func).into_iter().find(|p| p.end() > limit);
    match past {
        Some(p) => vec![Diagnostic::error(
            func.body.op(p.op).span,
            format!("@{}: its shared tiles need {} bytes up to this one, more than the {limit} bytes a thread block has on any target", func.name, p.end()),
        )],
        None => Vec::new(),
    }
}

/// Whether an op of the function makes a register tile (layout assignment distributes those over the warps; at
/// the nvgpu level none is left, and `warp_specialize` may then have made `num_warps` a multiple of 4).
fn has_register_tiles(func: &Func) -> bool {
    func.body.any_op(func.entry, &mut |op| {
        op.results.iter().any(|&r| matches!(func.body.ty(r), Type::Tile(t) if t.space == MemorySpace::Register))
    })
}

/// The kernel's attributes: each declared ([`KERNEL_ATTRS`]) and of its type, or an upper-case integer
/// parameter; `num_warps` in 1..=32, and a power of two where the kernel has register tiles.
pub fn kernel_attributes(func: &Func) -> Vec<Diagnostic> {
    let declared: Vec<_> = KERNEL_ATTRS.iter().collect();
    let owner = format!("kernel @{}", func.name);
    let mut diags = Vec::new();
    for (name, value) in &func.attrs {
        if let Err(d) = check_kernel_attribute(&owner, &declared, name, value, func.attr_span(name)) {
            diags.push(d);
        }
    }
    if let Ok(attrs) = KernelAttrs::of(func) {
        if !(1..=32).contains(&attrs.num_warps) {
            diags.push(Diagnostic::error(func.attr_span("num_warps"), format!("{owner}: 'num_warps' must be in 1..=32, found {}", attrs.num_warps)));
        } else if !attrs.num_warps.is_power_of_two() && has_register_tiles(func) {
            diags.push(Diagnostic::error(
                func.attr_span("num_warps"),
                format!(
                    "{owner}: 'num_warps' must be a power of two (1, 2, 4, 8, 16 or 32) in a kernel with register tiles, found {}: a tile is split over the warps by bits of its coordinates",
                    attrs.num_warps
                ),
            ));
        }
        if let Some(n) = attrs.pipeline_stages.filter(|n| !(1..=8).contains(n)) {
            let span = func.attr_span("pipeline_stages");
            diags.push(Diagnostic::error(span, format!("{owner}: 'pipeline_stages' must be in 1..=8 (1: no software pipelining), found {n}")));
        }
        if let Some(n) = attrs.raster_group.filter(|n| !(1..=65535).contains(n)) {
            let span = func.attr_span("raster_group");
            diags.push(Diagnostic::error(span, format!("{owner}: 'raster_group' must be in 1..=65535 rows of blocks (1: the plain block order), found {n}")));
        }
        if let Some(grid) = &attrs.grid {
            if !(1..=3).contains(&grid.len()) || grid.contains(&0) {
                let span = func.attr_span("grid");
                diags.push(Diagnostic::error(span, format!("{owner}: 'grid' must be one to three positive integers, found {grid:?}")));
            }
        }
        if attrs.sample_args.is_some() {
            if let Err(message) = crate::interp::sample_shapes(func) {
                diags.push(Diagnostic::error(func.attr_span("sample_args"), format!("{owner}: 'sample_args' {message}")));
            }
        }
        if let Some(GlobalAlignment::PerArgument(per_arg)) = &attrs.global_alignment {
            if per_arg.len() != func.args().len() {
                let (n, args) = (per_arg.len(), func.args().len());
                let span = func.attr_span("global_alignment");
                diags.push(Diagnostic::error(span, format!("{owner}: 'global_alignment' has {n} entries for {args} arguments")));
            }
        }
    }
    diags
}

/// One kernel attribute: a parameter (upper-case name, integer value) or a declared attribute.
pub fn check_kernel_attribute(
    owner: &str,
    declared: &[&'static AttrDef],
    name: &str,
    value: &Attribute,
    span: Span,
) -> Result<(), Diagnostic> {
    if is_param_name(name) {
        return match value {
            Attribute::Int(_) => Ok(()),
            _ => Err(Diagnostic::error(span, format!("{owner}: the parameter '{name}' must be an integer, found {value}"))),
        };
    }
    let unknown = !declared.iter().any(|a| a.name == name);
    check_attribute(owner, declared, name, value, span).map_err(|d| match unknown {
        true => d.with_note("upper-case names (BM = 128) are kernel parameters and may be any integer"),
        false => d,
    })
}

pub(crate) struct Verifier<'a> {
    pub(crate) func: &'a Func,
    pub(crate) diags: Vec<Diagnostic>,
    /// Values defined so far on the path to the current op (dominance for structured control flow).
    visible: HashSet<Value>,
}

impl<'a> Verifier<'a> {
    pub(crate) fn error(&mut self, span: Span, message: impl Into<String>) {
        self.diags.push(Diagnostic::error(span, message));
    }

    pub(crate) fn ty(&self, v: Value) -> &'a Type {
        self.func.body.ty(v)
    }

    /// Checks a block: its ops in order, then that it ends with the right terminator.
    fn block(&mut self, block: BlockId, parent: Option<OpId>) {
        let body = &self.func.body;
        let ops = &body.block(block).ops;
        for &arg in &body.block(block).args {
            self.visible.insert(arg);
        }
        for (i, &id) in ops.iter().enumerate() {
            let op = body.op(id);
            let is_last = i + 1 == ops.len();
            if op.kind.is_terminator() && !is_last {
                self.error(op.span, format!("'{}' must be the last operation of its block", op.kind));
            }
            self.operation(id, parent);
        }
        let last = ops.last().map(|&id| body.op(id));
        let expected = if parent.is_some() { OpKind::Yield } else { OpKind::Return };
        if last.map(|op| op.kind) != Some(expected) {
            let span = match (last, parent) {
                (Some(op), _) => op.span,
                (None, Some(p)) => body.op(p).span,
                (None, None) => self.func.span,
            };
            let place = if parent.is_some() { "a loop body" } else { "a function body" };
            self.error(span, format!("{place} must end with '{expected}'"));
        }
        for &arg in &body.block(block).args {
            self.visible.remove(&arg);
        }
    }

    /// Checks one op. One mistake gives one error: an op found wrong here still defines its results (their
    /// types are written in the text) and its regions are still checked, so that its users are checked on
    /// their own and do not report the same mistake again as a use of an undefined value.
    fn operation(&mut self, id: OpId, parent: Option<OpId>) {
        let op = self.func.body.op(id);
        if self.op_is_well_formed(op) {
            // Operands and attributes are well formed: the typed view exists.
            match AnyOp::from_op(op) {
                Some(typed) if op.kind.is_nvgpu() => nvgpu::verify(self, op, typed),
                Some(typed) => tile::verify(self, op, typed, parent),
                None => self.error(op.span, format!("'{}' is malformed", op.kind)),
            }
        }
        for &region in &op.regions {
            self.block(region, Some(id));
        }
        for &result in &op.results {
            self.visible.insert(result);
        }
    }

    /// The op's operand groups, results and attributes match its declaration, and its operands are defined
    /// before it; reports the first problem and returns false otherwise.
    fn op_is_well_formed(&mut self, op: &Operation) -> bool {
        // Operand structure and scoping: what the parser guarantees, builder-made IR may break.
        let def = op.kind.def();
        let mut structurally_ok = op.segments.len() == def.operands.len()
            && op.segments.iter().map(|&n| n as usize).sum::<usize>() == op.operands.len();
        if structurally_ok {
            for (group, &n) in def.operands.iter().zip(&op.segments) {
                let ok = match group.arity {
                    Arity::One => n == 1,
                    Arity::Optional => n <= 1,
                    Arity::Variadic => true,
                };
                if !ok {
                    structurally_ok = false;
                }
            }
        }
        if !structurally_ok {
            self.error(op.span, format!("'{}' has the wrong number of operands", op.kind));
            return false;
        }
        for &operand in &op.operands {
            if !self.visible.contains(&operand) {
                self.error(op.span, format!("'{}' uses a value that is not defined before it", op.kind));
                return false;
            }
        }
        match (def.results, op.results.len()) {
            (None, 0) | (Some(Arity::One), 1) | (Some(Arity::Variadic), _) => {}
            _ => {
                self.error(op.span, format!("'{}' has the wrong number of results", op.kind));
                return false;
            }
        }
        self.attributes(op)
    }

    /// Every attribute of the op is declared and of its declared type, and every required one is there
    /// (so the op's typed view exists). False when something is wrong.
    fn attributes(&mut self, op: &Operation) -> bool {
        let declared = op_attributes(op.kind);
        let mut ok = true;
        let owner = format!("'{}'", op.kind);
        for (name, value) in &op.attrs {
            if let Err(d) = check_attribute(&owner, &declared, name, value, op.attr_span(name)) {
                self.diags.push(d);
                ok = false;
            }
        }
        // `probe` marks per-lane values of nvgpu-level kernels for `tilec sim`; nothing reads it on a tile value
        // (a tile-level kernel is lowered before it is simulated), so there it would be silently ignored.
        let probe = crate::ops::COMMON_ATTRS[0].name;
        if let Some(tile) = op.attrs.contains_key(probe).then(|| op.results.iter().find_map(|&r| self.ty(r).as_tile())).flatten() {
            let d = Diagnostic::error(op.attr_span(probe), format!("{owner}: 'probe' is not supported on a tile value ('{tile}')"))
                .with_note("'probe' marks per-lane values of nvgpu-level kernels for `tilec sim`; print a tile-level kernel's results with `tilec interp --output NAME=FILE`, or mark an op of the lowered kernel (`tilec FILE --emit nvgpu -o k.nvgpu`)");
            self.diags.push(d);
            ok = false;
        }
        // A misspelt required attribute (`axs` for `axis`) is one mistake: its "did you mean" says it all.
        let misspelt: Vec<&str> = op
            .attrs
            .keys()
            .filter(|name| !declared.iter().any(|a| a.name == name.as_str()))
            .filter_map(|name| crate::diag::did_you_mean(name, declared.iter().map(|a| a.name)))
            .collect();
        for def in op.kind.def().attributes.iter().filter(|a| a.required) {
            if !op.attrs.contains_key(def.name) && !misspelt.contains(&def.name) {
                self.error(op.span, format!("'{}' needs the attribute '{}' ({})", op.kind, def.name, def.expected));
                ok = false;
            }
        }
        ok
    }

    // ---- small checks shared by the dialects ------------------------------------------------------------

    /// The value's type as a tile in the given memory space, or an error naming the operand.
    pub(crate) fn tile_in(&mut self, op: &Operation, v: Value, what: &str, space: MemorySpace) -> Option<&'a TileType> {
        match self.ty(v) {
            Type::Tile(t) if t.space == space => Some(t),
            other => {
                self.error(op.span, format!("'{}' expects {what} to be a {} tile, found '{other}'", op.kind, space.name()));
                None
            }
        }
    }

    pub(crate) fn vector(&mut self, op: &Operation, v: Value, what: &str) -> Option<&'a VectorType> {
        match self.ty(v) {
            Type::Vector(t) => Some(t),
            other => {
                self.error(op.span, format!("'{}' expects {what} to be a vector, found '{other}'", op.kind));
                None
            }
        }
    }

    /// Every value of an index list is an `index`, and there is one per dimension (or none when `optional`).
    pub(crate) fn indices(&mut self, op: &Operation, indices: &[Value], rank: usize, optional: bool) {
        if !(indices.len() == rank || optional && indices.is_empty()) {
            self.error(op.span, format!("'{}' needs {rank} indices, found {}", op.kind, indices.len()));
        }
        for &i in indices {
            if !self.ty(i).is_index() {
                self.error(op.span, format!("'{}' indices must be 'index', found '{}'", op.kind, self.ty(i)));
                return;
            }
        }
    }

    pub(crate) fn result_type(&self, op: &Operation) -> Option<&'a Type> {
        op.result().map(|r| self.ty(r))
    }

    /// The result is `index`.
    pub(crate) fn index_result(&mut self, op: &Operation) {
        if let Some(t) = self.result_type(op) {
            if !t.is_index() {
                self.error(op.span, format!("'{}' produces 'index', not '{t}'", op.kind));
            }
        }
    }
}

/// The element types `tile.mma` and `nvgpu.mma.sync` accept, as (A/B element, accumulator element).
pub fn mma_types_supported(ab: ScalarType, acc: ScalarType) -> bool {
    use ScalarType::*;
    matches!(
        (ab, acc),
        (F16, F32) | (F16, F16) | (BF16, F32) | (TF32, F32) | (F64, F64)
            | (I8, I32) | (U8, I32) | (I4, I32) | (U4, I32) | (F8E4M3, F32) | (F8E5M2, F32)
    )
}

/// Every op of `func` that the target cannot lower (its [`OpKind::min_target`] is newer than `target`), one
/// error each, as the backends word it: what `tilec check` and compilation report before running the
/// pipeline, and `tilec sim` before simulating an nvgpu-level kernel (the simulator runs every op, whatever
/// the target). The first error notes the target that would lower them.
pub fn target_legality(func: &Func, target: crate::target::Target) -> Vec<Diagnostic> {
    let mut diags: Vec<Diagnostic> = Vec::new();
    let mut newest = target;
    func.body.walk(func.entry, &mut |id| {
        let op = func.body.op(id);
        let needs = op.kind.min_target();
        if target < needs {
            let short = op.kind.name().trim_start_matches("nvgpu.");
            // An arch-specific target (sm_90a) has no newer targets: its instructions run on it alone.
            let newer = if needs.is_arch_specific() { "" } else { " or newer" };
            let message = format!("@{}: '{}': {short} needs {}{newer}; the target is {target}", func.name, op.kind, needs.chip());
            diags.push(Diagnostic::error(op.span, message));
            newest = newest.max(needs);
        }
    });
    let n = diags.len();
    if let Some(first) = diags.first_mut() {
        let message = format!("{n} op(s) of @{} need a newer target than {target}: pass '--target {}'", func.name, newest.chip());
        first.notes.push(crate::diag::Note { span: None, message });
    }
    diags
}
