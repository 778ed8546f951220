//! Rules of the Hopper ops of the `nvgpu` dialect (issue 18): `nvgpu.mbarrier.*`, shaped like MLIR's, and
//! the wgmma synchronization (`nvgpu.wgmma.fence/commit_group/wait_group`, NVVM's `wgmma.*`), which needs
//! whole warpgroups (num_warps a multiple of 4), as does `nvgpu.setmaxnreg.inc/dec`.
//!
//! An mbarrier group is the result of `nvgpu.mbarrier.create`: a rank-1 shared tile of `index` (one 64-bit
//! word per barrier). Every mbarrier op names its group and one barrier of it (`%bars[%id]`), and only a
//! group made by `nvgpu.mbarrier.create` is one (a plain shared tile of `index` is data, not barriers). Counts
//! and ids are `index`, the phase parity and the predicate `i1`, as in MLIR. Which target lowers them is the
//! catalogue's (`OpKind::min_target`: sm_90), checked where the target is known (`tilec check --target`).
//!
//! `nvgpu.warpgroup.mma` reads A from registers or through a descriptor, and B through a descriptor; only through descriptors made by
//! `nvgpu.warpgroup.generate.descriptor` in the same kernel (no arithmetic on descriptors): their tiles give
//! the element types, and their tiles are `tile.alloc_shared` allocations, which the placement aligns to 1024
//! bytes so that the swizzle the hardware applies to addresses is the one the tile's layout applies to offsets.
//! TMA (`nvgpu.tma.async.load/store`): the tensor map follows from the global tile argument and the shared
//! tile (`crate::tma`, whose limits the verifier reports at the op); a load completes on a barrier of a group.

use crate::body::{Operation, Value};
use crate::ops::typed::{self, AnyOp};
use crate::ops::OpKind;
use crate::types::{MemorySpace, ScalarType, Type};
use crate::verify::Verifier;

/// The rules of one Hopper op; `false` when `typed` is not one (the caller goes on with its own rules).
pub(super) fn verify(v: &mut Verifier<'_>, op: &Operation, typed: &AnyOp) -> bool {
    match typed {
        AnyOp::MBarrierCreate(_) => create(v, op),
        AnyOp::MBarrierInit(init) => {
            group(v, op, init.barriers, init.mbar_id);
            scalar(v, op, init.count, ScalarType::Index, "the arrival count");
            predicate(v, op, init.predicate);
        }
        AnyOp::MBarrierArrive(arrive) => group(v, op, arrive.barriers, arrive.mbar_id),
        AnyOp::MBarrierArriveExpectTx(arrive) => {
            group(v, op, arrive.barriers, arrive.mbar_id);
            scalar(v, op, arrive.txcount, ScalarType::Index, "the transaction count");
            predicate(v, op, arrive.predicate);
        }
        AnyOp::MBarrierTryWaitParity(wait) => {
            group(v, op, wait.barriers, wait.mbar_id);
            scalar(v, op, wait.phase_parity, ScalarType::I1, "the phase parity");
            scalar(v, op, wait.ticks, ScalarType::Index, "the suspend-time hint");
        }
        AnyOp::WgmmaFence(_) | AnyOp::WgmmaCommitGroup(_) => whole_warpgroups(v, op),
        AnyOp::WgmmaWaitGroup(wait) => {
            whole_warpgroups(v, op);
            if wait.num_groups > 7 {
                v.error(op.span, format!("'nvgpu.wgmma.wait_group' numGroups must be an integer in 0..=7, found {}", wait.num_groups));
            }
        }
        AnyOp::SetMaxNRegInc(typed::SetMaxNRegInc { count }) | AnyOp::SetMaxNRegDec(typed::SetMaxNRegDec { count }) => {
            whole_warpgroups(v, op);
            if !(24..=256).contains(count) || !count.is_multiple_of(8) {
                v.error(op.span, format!("'{}' count must be a multiple of 8 in 24..=256, found {count}", op.kind));
            }
        }
        AnyOp::WarpgroupGenerateDescriptor(d) => descriptor(v, op, d),
        AnyOp::WarpgroupMma(mma) => warpgroup_mma(v, op, mma),
        AnyOp::TmaAsyncLoad(load) => {
            tensor_map(v, op, load.tensor, load.dst, &load.coords);
            group(v, op, load.barriers, load.mbar_id);
            predicate(v, op, load.predicate);
        }
        AnyOp::TmaAsyncStore(store) => {
            tensor_map(v, op, store.tensor, store.src, &store.coords);
            predicate(v, op, store.predicate);
        }
        AnyOp::TmaWaitGroup(wait) if wait.num_groups > 7 => {
            v.error(op.span, format!("'nvgpu.tma.wait_group' numGroups must be an integer in 0..=7, found {}", wait.num_groups));
        }
        AnyOp::TmaCommitGroup(_) | AnyOp::TmaWaitGroup(_) | AnyOp::FenceProxyAsync(_) => {}
        _ => return false,
    }
    true
}

/// The swizzle modes of a wgmma descriptor, in bytes (0: none).
pub const WGMMA_SWIZZLES: [u32; 4] = [0, 32, 64, 128];

/// The `N` of `wgmma.mma_async.m64nNkK` for inputs of `bits` bits (16: f16/bf16, 8: s8/u8), from the PTX ISA's
/// table of shapes: multiples of 8 up to 256 for 16-bit inputs; 8, 16, 24, then multiples of 16 up to 256
/// for 8-bit integers.
pub fn wgmma_n_supported(bits: u32, n: u32) -> bool {
    match bits {
        16 => (8..=256).contains(&n) && n.is_multiple_of(8),
        8 => matches!(n, 8 | 16 | 24) || (32..=256).contains(&n) && n.is_multiple_of(16),
        _ => false,
    }
}

/// The element types `nvgpu.warpgroup.mma` reads from shared memory, and what they accumulate into.
pub fn wgmma_accumulator(a: ScalarType, b: ScalarType) -> Option<ScalarType> {
    use ScalarType::*;
    match (a, b) {
        (F16, F16) | (BF16, BF16) => Some(F32),
        (I8 | U8, I8 | U8) => Some(I32),
        _ => None,
    }
}

/// `%tensor[indices]`: a rank-2 shared tile of 16- or 8-bit elements made by `tile.alloc_shared` (so the
/// placement can align it for the swizzle), one `index` per axis; the modes and offsets the ISA encodes.
fn descriptor(v: &mut Verifier<'_>, op: &Operation, d: &typed::WarpgroupGenerateDescriptor) {
    let name = "'nvgpu.warpgroup.generate.descriptor'";
    let body = &v.func.body;
    let allocated = body.defining_op(d.tensor).is_some_and(|o| body.op(o).kind == OpKind::AllocShared);
    let ty = v.ty(d.tensor);
    match ty {
        Type::Tile(t) if allocated && t.space == MemorySpace::Shared && t.rank() == 2 && t.static_shape().is_some() => {
            if wgmma_accumulator(t.elem, t.elem).is_none() {
                v.error(op.span, format!("{name} reads f16, bf16, i8 or u8 matrices, not '{}'", t.elem));
            }
            if d.indices.len() != 2 {
                v.error(op.span, format!("{name} takes one index per axis of '{ty}' (2), found {}", d.indices.len()));
            }
        }
        _ => v.error(op.span, format!("{name} needs a rank-2 shared tile of static shape made by 'tile.alloc_shared', found '{ty}'")),
    }
    for &i in &d.indices {
        scalar(v, op, i, ScalarType::Index, "an index");
    }
    if !WGMMA_SWIZZLES.contains(&d.swizzle) {
        v.error(op.span, format!("{name} swizzle must be 0, 32, 64 or 128 (bytes), found {}", d.swizzle));
    }
    for (what, bytes) in [("leadingByteOffset", d.leading_byte_offset), ("strideByteOffset", d.stride_byte_offset)] {
        if !bytes.is_multiple_of(16) || bytes >= 1 << 18 {
            v.error(op.span, format!("{name} {what} must be a multiple of 16 below 2^18 (14 bits of 16-byte units), found {bytes}"));
        }
    }
    if let (Type::Tile(t), Some(mode)) = (ty, crate::ops::wgmma::swizzle_mode(d.swizzle)) {
        layout_matches_mode(v, op, t, mode);
    }
    if v.result_type(op).is_some_and(|t| t != &Type::INDEX) {
        v.error(op.span, format!("{name} returns the 64-bit descriptor as an 'index'"));
    }
}

/// The tile's layout must be the one the descriptor's mode reads, or wgmma reads other elements than the
/// program wrote: for a swizzle of `S` bytes, column panels `S` bytes wide ([`tilec_layout::column_panels`],
/// one panel being `#row_major`) under the mode's permutation (`#swizzle<B, 4 - log2 e, 3, ...>`,
/// [`tilec_layout::SwizzleMode::element_swizzle`]), the panels along the columns or (a column-major K-major
/// B) along the rows; with none, row-major rows of 16 bytes (a core matrix's row; LBO and SBO place the core
/// matrices).
fn layout_matches_mode(v: &mut Verifier<'_>, op: &Operation, t: &crate::types::TileType, mode: tilec_layout::SwizzleMode) {
    use tilec_layout::{Layout, SwizzleMode};
    let elem_bytes = t.elem.bit_width() / 8;
    let Some(&[rows, cols]) = t.static_shape().as_deref() else { return };
    if t.space != MemorySpace::Shared || elem_bytes == 0 || t.rank() != 2 || wgmma_accumulator(t.elem, t.elem).is_none() {
        return;
    }
    let row_bytes = cols * u64::from(elem_bytes);
    if mode != SwizzleMode::None && is_panel_layout(t, mode, rows, cols, elem_bytes) {
        return;
    }
    let layout_mode = match &t.layout {
        None | Some(Layout::RowMajor) => Some(SwizzleMode::None),
        Some(Layout::Swizzled { swizzle, base }) if **base == Layout::RowMajor => SwizzleMode::of_element_swizzle(*swizzle, elem_bytes),
        _ => None,
    };
    let want_bytes = if mode == SwizzleMode::None { 16 } else { mode.span_bytes() };
    if layout_mode != Some(mode) || row_bytes != want_bytes {
        let want = match mode.element_swizzle(elem_bytes) {
            Some(s) if mode != SwizzleMode::None => format!("#swizzle<{}, {}, {}, #row_major>", s.bits, s.base, s.shift),
            _ => "#row_major".to_string(),
        };
        let found = t.layout.as_ref().map_or("#row_major".to_string(), |l| l.to_string());
        v.error(op.span, format!(
            "'nvgpu.warpgroup.generate.descriptor' with swizzle = {} reads rows of {want_bytes} bytes laid out as {want}: the tile has rows of {row_bytes} bytes laid out as {found}",
            mode.span_bytes() * u64::from(mode != SwizzleMode::None)
        ));
    }
}

/// Whether the tile's layout is `mode`'s permutation of column panels one span wide, along the columns or
/// (transposed) along the rows: compared as linear layouts, so `#row_major` / `#col_major` bases of one panel
/// count too.
fn is_panel_layout(t: &crate::types::TileType, mode: tilec_layout::SwizzleMode, rows: u64, cols: u64, elem_bytes: u32) -> bool {
    use tilec_layout::{column_panels, Layout};
    let (Ok(r), Ok(c)) = (u32::try_from(rows), u32::try_from(cols)) else { return false };
    let Some(layout) = &t.layout else { return false };
    let Some(swizzle) = mode.element_swizzle(elem_bytes) else { return false };
    let Ok(have) = layout.to_linear(r, c) else { return false };
    let pc = (mode.span_bytes() / u64::from(elem_bytes)) as u32;
    let along_cols = column_panels(r, c, pc).ok();
    let along_rows = column_panels(c, r, pc).ok().and_then(|l| l.exchange_outs("row", "col").ok());
    [along_cols, along_rows].into_iter().flatten().any(|panels| {
        let want = Layout::Swizzled { swizzle, base: Box::new(Layout::Linear(panels)) };
        want.to_linear(r, c).is_ok_and(|w| w == have)
    })
}

/// `%da, %db, %c`: descriptors made by `nvgpu.warpgroup.generate.descriptor` (whose tiles give the element
/// types) or, for A, the thread's register fragment ([`crate::ops::wgmma::register_a_type`], K-major), an
/// instruction shape of the ISA, and C and D the thread's N/2 accumulator elements.
fn warpgroup_mma(v: &mut Verifier<'_>, op: &Operation, mma: &typed::WarpgroupMma) {
    whole_warpgroups(v, op);
    let name = "'nvgpu.warpgroup.mma'";
    let mut elems = Vec::new();
    for (what, desc) in [("A", mma.descriptor_a), ("B", mma.descriptor_b)] {
        let body = &v.func.body;
        if what == "A" && matches!(v.ty(desc), Type::Vector(_)) {
            // A from registers: the thread's fragment of four 32-bit registers, always K-major.
            match crate::ops::wgmma::register_a_elem(v.ty(desc)) {
                Some(e) => elems.push(e),
                None => v.error(op.span, format!(
                    "{name}: A from registers is the thread's fragment 'vector<4x2xf16>', 'vector<4x2xbf16>', 'vector<4x4xi8>' or 'vector<4x4xu8>', not '{}'",
                    v.ty(desc)
                )),
            }
            if mma.transpose_a {
                v.error(op.span, format!("{name}: A from registers is K-major; transposeA is for A in shared memory only"));
            }
            continue;
        }
        let source = body
            .defining_op(desc)
            .map(|d| body.op(d))
            .filter(|d| d.kind == OpKind::WarpgroupGenerateDescriptor)
            .and_then(|d| d.operands.first().copied());
        match source.map(|t| v.ty(t)) {
            Some(Type::Tile(t)) => elems.push(t.elem),
            _ => v.error(op.span, format!("{name}: {what} must be a descriptor made by 'nvgpu.warpgroup.generate.descriptor'{}", if what == "A" { " or a register fragment" } else { "" })),
        }
    }
    let [a, b] = elems[..] else { return };
    for (what, transposed, e) in [("transposeA", mma.transpose_a, a), ("transposeB", mma.transpose_b, b)] {
        if transposed && e.bit_width() != 16 {
            v.error(op.span, format!("{name}: {what} (an MN-major operand) is for f16 and bf16 only; '{e}' operands must be K-major"));
        }
    }
    let Some(acc) = wgmma_accumulator(a, b) else {
        v.error(op.span, format!("{name} has no variant for '{a}' x '{b}' inputs (f16 x f16, bf16 x bf16, or 8-bit integers)"));
        return;
    };
    let crate::ops::MmaShape { m, n, k } = mma.mma_shape;
    let bits = a.bit_width();
    let want_k = if bits == 16 { 16 } else { 32 };
    if m != 64 || k != want_k || !wgmma_n_supported(bits, n) {
        v.error(op.span, format!(
            "{name} has no m{m}n{n}k{k} shape for '{a}' inputs: m64nNk{want_k} with N {}",
            if bits == 16 { "a multiple of 8 in 8..=256" } else { "8, 16, 24 or a multiple of 16 in 32..=256" }
        ));
        return;
    }
    let want = Type::Vector(crate::types::VectorType::new(&[u64::from(n / 2)], acc));
    let c = v.ty(mma.matrix_c);
    if c != &want {
        v.error(op.span, format!("{name} m64n{n}k{k}: C holds the thread's {} '{acc}' accumulators, '{want}', not '{c}'", n / 2));
    }
    if v.result_type(op).is_some_and(|t| t != &want) {
        v.error(op.span, format!("{name}: the result has C's type '{want}'"));
    }
}

/// A TMA op's tensor map ([`crate::tma::tensor_map_of`]: a global tile argument, a shared tile whose shape
/// is the box and whose layout names the swizzle mode) and one `index` coordinate per axis.
fn tensor_map(v: &mut Verifier<'_>, op: &Operation, tensor: Value, shared: Value, coords: &[Value]) {
    match crate::tma::tensor_map_of(v.func, tensor, shared) {
        Ok(map) => {
            if coords.len() != map.rank {
                v.error(op.span, format!("'{}' needs {} coordinates (one per axis of the tensor), found {}", op.kind, map.rank, coords.len()));
            }
        }
        Err(message) => v.error(op.span, format!("'{}': {message}", op.kind)),
    }
    for &c in coords {
        scalar(v, op, c, ScalarType::Index, "a coordinate");
    }
}

/// The `wgmma` instructions are warpgroup-wide (`.sync.aligned` over 4 warps): the kernel's warps must
/// form whole warpgroups.
fn whole_warpgroups(v: &mut Verifier<'_>, op: &Operation) {
    let warps = crate::KernelAttrs::of(v.func).map_or(crate::ops::kernel::DEFAULT_NUM_WARPS, |a| a.num_warps);
    if !warps.is_multiple_of(4) {
        v.error(op.span, format!("'{}' is warpgroup-wide: the kernel's num_warps must be a multiple of 4, found {warps}", op.kind));
    }
}

/// `nvgpu.mbarrier.create : tile<N x index, shared>` with 1 <= N.
fn create(v: &mut Verifier<'_>, op: &Operation) {
    let Some(ty) = v.result_type(op) else { return };
    let ok = matches!(ty, Type::Tile(t) if t.space == MemorySpace::Shared && t.elem == ScalarType::Index
        && t.rank() == 1 && t.layout.is_none() && t.num_elements().is_some_and(|n| n >= 1));
    if !ok {
        v.error(op.span, format!("'nvgpu.mbarrier.create' makes a group of N barriers, 'tile<Nxindex, shared>' (one 64-bit word each), not '{ty}'"));
    }
}

/// `barriers` is a group made by `nvgpu.mbarrier.create`, and `id` an `index`.
fn group(v: &mut Verifier<'_>, op: &Operation, barriers: Value, id: Value) {
    let body = &v.func.body;
    let made_by_create = body.defining_op(barriers).is_some_and(|d| body.op(d).kind == OpKind::MBarrierCreate);
    if !made_by_create {
        let ty = v.ty(barriers);
        v.error(op.span, format!("'{}' needs a barrier group made by 'nvgpu.mbarrier.create', found '{ty}'", op.kind));
    }
    scalar(v, op, id, ScalarType::Index, "the barrier's index in its group");
}

fn scalar(v: &mut Verifier<'_>, op: &Operation, x: Value, want: ScalarType, what: &str) {
    let ty = v.ty(x);
    if ty != &Type::Scalar(want) {
        v.error(op.span, format!("'{}': {what} must be '{want}', found '{ty}'", op.kind));
    }
}

fn predicate(v: &mut Verifier<'_>, op: &Operation, p: Option<Value>) {
    if let Some(p) = p {
        scalar(v, op, p, ScalarType::I1, "the predicate");
    }
}
