//! Warpgroup MMA (`nvgpu.warpgroup.*`, `nvgpu.wgmma.*`), from the PTX ISA's "Asynchronous Warpgroup Level
//! Matrix Multiply-Accumulate" sections: the matrix descriptor, the shared-memory matrix layouts it
//! describes, the accumulator's register layout, and the asynchronous ordering rules.
//!
//! # Descriptors
//! `nvgpu.warpgroup.generate.descriptor` makes the 64-bit descriptor of the ISA (bits 0-13: the start
//! address `>> 4`; 16-29: the leading byte offset `>> 4`; 32-45: the stride byte offset `>> 4`; 49-51: the base
//! offset, 0; 62-63: the swizzle mode, 0 none, 1 128-byte, 2 64-byte, 3 32-byte). It is a register value of its own here
//! (`Val::Descriptor`): a descriptor is read by `nvgpu.warpgroup.mma` only.
//!
//! # Shared-memory matrices (K-major)
//! The instruction reads rows of K: 64 rows of A, N rows of B (B is K-major: row `n` holds B[.., n]), each
//! row 32 bytes (16 16-bit or 32 8-bit elements) in two 16-byte chunks `c`. Byte `b` of chunk `c` of row `r`:
//! - no swizzle: `start + (r / 8) * SBO + (r % 8) * 16 + c * LBO + b` (8x16-byte core matrices);
//! - swizzle of `W` = 32, 64 or 128 bytes: rows `W` bytes apart, `x = start + (r / 8) * SBO + (r % 8) * W +
//!   c * 16 + b`, then the address bits 4.. (the 16-byte chunk) XOR the bits 7.. (`log2(W / 16)` of them):
//!   `x ^ (((x >> 7) & (W / 16 - 1)) << 4)` (CUTLASS's `Swizzle<1|2|3, 4, 3>` on byte addresses). The leading
//!   byte offset is unused (the verifier asks for 16). Tiles a descriptor reads are 1024-byte aligned
//!   ([`crate::shared_memory::WGMMA_ALIGN`]), so the simulator's addresses have the GPU's swizzle bits.
//!
//! # Shared-memory matrices (MN-major, `transposeA` / `transposeB`, 16-bit elements)
//! Element `(mn, k)` of `e` bytes (`mn` a row of A / a column of B, `k` along K); from CUTLASS's
//! `make_gmma_desc<Major::MN>` (`cute/atom/mma_traits_sm90_gmma.hpp`: `((T, W/16, m), (8, k))` with strides
//! `((1, T, LBO), (W/16 * T, SBO))` in elements, `T = 16 / e`):
//! - swizzle of `W` bytes: `x = start + (mn / (W / e)) * LBO + (k / 8) * SBO + (k % 8) * W + (mn % (W / e)) * e`,
//!   then the mode's permutation: panels `W` bytes wide along MN, `LBO` apart, each holding rows of K;
//! - no swizzle: `start + (mn / T) * SBO + (mn % T) * e + (k / 8) * LBO + (k % 8) * 16`.
//!
//! # A from registers
//! With a vector for A (`vector<4x2xf16>`, ...), each warp's 16 rows of A are its lanes' fragments, laid out
//! as an mma.sync m16n8k16 (m16n8k32 for 8-bit) A fragment ([`Warp::register_a`]); like C, they must be
//! written before the last fence.
//!
//! # Accumulator
//! Thread `t` of the warpgroup holds N/2 elements; element `i` is D[16 (t / 32) + (t % 32) / 4 + 8 ((i / 2) %
//! 2)][8 (i / 4) + 2 (t % 4) + i % 2] (the ISA's "WGMMA .m64nNk16 register fragment layout for matrix D").
//! Each warp computes its own 16 rows (from the A rows of those, and all of B): the four warps of a
//! warpgroup are simulated one after the other; the descriptors and shape of each warp's i-th mma must be
//! those of the other warps' i-th (checked), and uniform across its lanes. Arithmetic: the K exact products of a row and
//! a column summed in f64 in increasing k, then C added, then one rounding to f32 (integers: exact, then
//! wrapped to s32) -- the order `mma.sync` uses here; the GPU's f32 accumulation order inside one wgmma is
//! not specified, so results agree bit for bit when the sums are exact (small integers) and within
//! rounding otherwise.
//!
//! # Ordering
//! - A `nvgpu.wgmma.fence` must come before the first `nvgpu.warpgroup.mma` of a warp, and after any write
//!   of C's registers other than by a `nvgpu.warpgroup.mma` (a C written since the warp's last fence is an
//!   error; a loop-carried accumulator is written by the loop, so the fence goes inside the loop).
//! - D is pending until a `nvgpu.wgmma.commit_group` and a `nvgpu.wgmma.wait_group` that retires its group:
//!   reading it before is an error (`Val::Pending`); chaining it as the C of the next mma is not (the ISA
//!   orders accumulators of same-shape mmas).
//! - The shared memory it reads must not be written by the generic proxy (stores, `cp.async`) without a
//!   `nvgpu.fence.proxy.async` of the writing warp after the write (conservative: the simulator asks the
//!   writer to fence), nor be the target of a `cp.async` still pending; and while the mma is in flight (until
//!   a wait retires it) no warp may write what it reads (a store, `cp.async`, `stmatrix` or TMA load there is an error:
//!   the hardware may read it any time until then).

use std::collections::VecDeque;

use crate::body::{Operation, Value};
use crate::data::round_to;
use crate::ops::typed;
use crate::ops::OpKind;
use crate::types::{ScalarType, Type};
use tilec_layout::SwizzleMode;

use super::error::SimError;
use super::exec::{Ctx, Val, Warp};
use super::memory::MemRef;
use super::race::RaceSpace;

/// A wgmma matrix descriptor's fields, in bytes (the ISA stores them >> 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Descriptor {
    pub start: u64,
    pub leading: u64,
    pub stride: u64,
    pub base_offset: u64,
    /// 0 (none), 32, 64 or 128 bytes.
    pub swizzle: u64,
}

impl Descriptor {
    fn mode(&self) -> SwizzleMode {
        crate::ops::wgmma::swizzle_mode(self.swizzle as u32).unwrap_or(SwizzleMode::None)
    }

    /// The ISA's encoding ([`crate::ops::wgmma`]).
    pub fn encode(&self) -> u64 {
        ((self.start & crate::ops::wgmma::START_ADDRESS_MASK) >> 4)
            | crate::ops::wgmma::fields(self.leading, self.stride, self.base_offset, self.mode())
    }

    pub fn decode(bits: u64) -> Descriptor {
        let mode = SwizzleMode::ALL.into_iter().find(|m| m.wgmma_layout_type() == bits >> 62).unwrap_or(SwizzleMode::None);
        let swizzle = if mode == SwizzleMode::None { 0 } else { mode.span_bytes() };
        Descriptor {
            start: (bits & 0x3fff) << 4,
            leading: ((bits >> 16) & 0x3fff) << 4,
            stride: ((bits >> 32) & 0x3fff) << 4,
            base_offset: (bits >> 49) & 7,
            swizzle,
        }
    }

    /// The shared address of element `(mn, k)` of an MN-major matrix of `elem_bytes`-byte elements (module
    /// docs).
    pub fn address_mn(&self, mn: u64, k: u64, elem_bytes: u64) -> u64 {
        if self.swizzle == 0 {
            let per_chunk = 16 / elem_bytes;
            return self.start + (mn / per_chunk) * self.stride + (mn % per_chunk) * elem_bytes + (k / 8) * self.leading + (k % 8) * 16;
        }
        let per_row = self.swizzle / elem_bytes;
        let x = self.start + (mn / per_row) * self.leading + (k / 8) * self.stride + (k % 8) * self.swizzle + (mn % per_row) * elem_bytes;
        u64::from(self.mode().byte_swizzle().apply(x as u32))
    }

    /// The shared address of byte `byte` (0..32) of K-major row `row`.
    pub fn address(&self, row: u64, byte: u64) -> u64 {
        let (chunk, b) = (byte / 16, byte % 16);
        let group = (row / 8) * self.stride;
        if self.swizzle == 0 {
            return self.start + group + (row % 8) * 16 + chunk * self.leading + b;
        }
        // Rows one swizzle span apart; the mode's permutation of the address (`Swizzle<B, 4, 3>` on bytes).
        let x = self.start + group + (row % 8) * self.swizzle + chunk * 16 + b;
        u64::from(self.mode().byte_swizzle().apply(x as u32))
    }
}

/// The (row, column) of D that element `i` of warpgroup thread `t` holds.
pub(super) fn accumulator_coord(t: usize, i: usize) -> (usize, usize) {
    (16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * (t % 4) + i % 2)
}

/// The (row, column), within its warp's 16 rows, of value `i` of lane `lane`'s register A fragment of
/// `elem_bytes`-byte elements (the ISA's "wgmma register fragment layout for matrix A"; [`Warp::register_a`]).
pub(super) fn register_a_coord(lane: usize, i: usize, elem_bytes: u64) -> (usize, usize) {
    let (g, t) = (lane / 4, lane % 4);
    if elem_bytes == 2 {
        (g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2))
    } else {
        (g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3))
    }
}

/// One warp's wgmma state.
#[derive(Clone, Debug, Default)]
pub(super) struct WarpWgmma {
    /// How many `nvgpu.wgmma.fence` the warp has run.
    pub fence_epoch: u32,
    /// Results of the mmas issued (by id): per lane, the D elements, and the shape's N.
    results: Vec<(u32, Vec<Vec<f64>>)>,
    /// Ids issued since the last commit.
    open: Vec<u32>,
    /// Committed groups, oldest first.
    groups: VecDeque<Vec<u32>>,
    /// How many mmas the warp has issued (to match them with its warpgroup's other warps).
    issued: u64,
    /// The shared bytes each mma (by id) reads, released when it retires.
    reads: Vec<Vec<(u64, u64)>>,
}

fn error(w: &Warp, ctx: &Ctx<'_>, op: &Operation, message: String) -> SimError {
    SimError::Wgmma { span: op.span, op: op.kind.name(), at: w.place(ctx), message }
}

impl Warp {
    /// `nvgpu.warpgroup.generate.descriptor`: each lane's descriptor of the matrix at `%tensor[indices]`.
    pub(super) fn generate_descriptor(
        &mut self,
        ctx: &mut Ctx<'_>,
        op: &Operation,
        d: &typed::WarpgroupGenerateDescriptor,
        mask: u32,
    ) -> Result<(), SimError> {
        let r = op.result().ok_or_else(|| error(self, ctx, op, "needs a result".into()))?;
        for lane in super::error::LaneMask(mask).lanes() {
            let mem = self.mem(ctx, op, d.tensor, lane)?;
            let MemRef::Shared(tile) = mem else {
                return Err(error(self, ctx, op, format!("lane {lane}: the matrix is not in shared memory")));
            };
            let index = self.indices(ctx, op, &d.indices, lane)?;
            let (_, (start, _)) = self.access(ctx, op, lane, mem, &index, 1, None)?;
            let swizzle = u64::from(d.swizzle);
            if !start.is_multiple_of(16) {
                return Err(error(self, ctx, op, format!("lane {lane}: the matrix starts at shared address {start:#x}, not 16-byte aligned")));
            }
            let base = ctx.shared.tiles[tile].base;
            if swizzle != 0 && !base.is_multiple_of(crate::shared_memory::WGMMA_ALIGN) {
                return Err(error(self, ctx, op, format!("the tile at {base:#x} is not aligned for a {swizzle}-byte swizzle")));
            }
            let desc = Descriptor {
                start,
                leading: u64::from(d.leading_byte_offset),
                stride: u64::from(d.stride_byte_offset),
                base_offset: 0,
                swizzle,
            };
            self.set(r, lane, Val::Descriptor(desc.encode()));
        }
        Ok(())
    }

    /// The one descriptor of a warp (every lane must hold the same).
    fn uniform_descriptor(&self, ctx: &Ctx<'_>, op: &Operation, v: Value) -> Result<Descriptor, SimError> {
        let mut seen = None;
        for lane in 0..32u32 {
            let Val::Descriptor(bits) = self.val(v, lane) else {
                return Err(error(self, ctx, op, format!("lane {lane} has no descriptor from 'nvgpu.warpgroup.generate.descriptor'")));
            };
            match seen {
                None => seen = Some(*bits),
                Some(b) if b != *bits => {
                    return Err(error(self, ctx, op, format!("lane {lane}'s descriptor {bits:#x} differs from lane 0's {b:#x}: it must be warpgroup-uniform")));
                }
                _ => {}
            }
        }
        seen.map(Descriptor::decode).ok_or_else(|| error(self, ctx, op, "no descriptor".into()))
    }

    /// The element of type `elem` at shared address `address`, after the pending-copy and proxy-fence checks;
    /// records the read for the race detector.
    fn shared_element(&self, ctx: &mut Ctx<'_>, op: &Operation, address: u64, elem: ScalarType, reads: &mut Vec<(u64, u64)>) -> Result<f64, SimError> {
        let bytes = u64::from(elem.bit_width() / 8);
        let found = ctx.shared.tiles.iter().position(|t| {
            let len = t.data.values.len() as u64 * u64::from(t.data.elem.bit_width()) / 8;
            address >= t.base && address < t.base + len
        });
        let Some(tile) = found else {
            return Err(error(self, ctx, op, format!("reads shared address {address:#x}, which no shared tile holds")));
        };
        let t = &ctx.shared.tiles[tile];
        if t.data.elem != elem || !(address - t.base).is_multiple_of(bytes) {
            return Err(error(self, ctx, op, format!(
                "reads a '{elem}' at shared address {address:#x}, inside a tile of '{}' at {:#x}",
                t.data.elem, t.base
            )));
        }
        if let Some(a) = ctx.shared.pending_in((address, address + bytes)) {
            return Err(SimError::AsyncHazard { span: op.span, op: op.kind.name(), at: self.place(ctx), lane: 0, address: a });
        }
        if let Some((warp, a)) = ctx.shared.unfenced_in((address, address + bytes)) {
            return Err(error(self, ctx, op, format!(
                "reads shared address {a:#x}, which warp {warp} wrote (generic proxy) with no 'nvgpu.fence.proxy.async' after the write"
            )));
        }
        let physical = ((address - t.base) / bytes) as usize;
        let position = ctx.shared.logical_position(tile, physical).ok_or_else(|| {
            error(self, ctx, op, format!("reads shared address {address:#x}, outside the elements of its tile"))
        })?;
        let t = &ctx.shared.tiles[tile];
        let len = t.data.values.len();
        let x = t.data.values[position];
        let (place, name) = (self.place(ctx), op.kind.name());
        ctx.race.borrow_mut().read(RaceSpace::Shared(tile), len, std::iter::once(position), self.id, op.span, name, place)?;
        reads.push((address, address + bytes));
        Ok(x)
    }

    /// `nvgpu.warpgroup.mma`: this warp's 16 rows of D = A * B + C, pending until its group is waited for.
    pub(super) fn warpgroup_mma(&mut self, ctx: &mut Ctx<'_>, op: &Operation, mma: &typed::WarpgroupMma) -> Result<(), SimError> {
        self.require_converged(ctx, op)?;
        let body = &ctx.func.body;
        let d = op.result().ok_or_else(|| error(self, ctx, op, "needs a result".into()))?;
        // The element types, from the tiles the descriptors were made of (the verifier's rule).
        let elem_of = |v: Value| {
            body.defining_op(v)
                .map(|o| body.op(o))
                .filter(|o| o.kind == OpKind::WarpgroupGenerateDescriptor)
                .and_then(|o| o.operands.first())
                .map(|&t| body.ty(t).element_type())
        };
        // A from registers: the thread's fragment (the verifier's type).
        let register_a = crate::ops::wgmma::register_a_elem(body.ty(mma.descriptor_a));
        let (Some(ea), Some(eb)) = (register_a.or_else(|| elem_of(mma.descriptor_a)), elem_of(mma.descriptor_b)) else {
            return Err(error(self, ctx, op, "A and B must be descriptors made by 'nvgpu.warpgroup.generate.descriptor' (A may be a register fragment)".into()));
        };
        let acc = match body.ty(mma.matrix_c) {
            Type::Vector(v) => v.elem,
            _ => ScalarType::F32,
        };
        let n = mma.mma_shape.n as usize;
        let k = mma.mma_shape.k as usize;
        if self.wgmma.fence_epoch == 0 {
            return Err(error(self, ctx, op, "no 'nvgpu.wgmma.fence' before the warp's first 'nvgpu.warpgroup.mma'".into()));
        }
        // C: a pending or retired accumulator of an mma, or registers written before the last fence.
        let mut c = Vec::with_capacity(32);
        for lane in 0..32u32 {
            let values = match self.val(mma.matrix_c, lane) {
                Val::Pending(id) => {
                    let (id_n, values) = &self.wgmma.results[*id as usize];
                    if *id_n as usize != n {
                        return Err(error(self, ctx, op, format!("C is the pending D of an m64n{id_n} mma, not m64n{n}")));
                    }
                    values[lane as usize].clone()
                }
                Val::Vector(values) => {
                    if self.epoch(mma.matrix_c) >= self.wgmma.fence_epoch {
                        return Err(error(self, ctx, op, "C's registers were written after the last 'nvgpu.wgmma.fence': fence them first".into()));
                    }
                    values.clone()
                }
                _ => return Err(SimError::Undefined { span: op.span, op: op.kind.name(), at: self.place(ctx), lane }),
            };
            if values.len() != n / 2 {
                return Err(error(self, ctx, op, format!("C holds {} elements per thread, m64n{n} needs {}", values.len(), n / 2)));
            }
            c.push(values);
        }
        let da = if register_a.is_some() { None } else { Some(self.uniform_descriptor(ctx, op, mma.descriptor_a)?) };
        let db = self.uniform_descriptor(ctx, op, mma.descriptor_b)?;
        for desc in da.iter().chain([&db]) {
            if desc.base_offset != 0 {
                return Err(error(self, ctx, op, "a descriptor's base offset must be 0".into()));
            }
        }
        // The four warps of the warpgroup issue one instruction: the same descriptors and shape (a register A
        // shows as descriptor 0: each warp's registers are its own).
        let shape = [mma.mma_shape.m, mma.mma_shape.n, mma.mma_shape.k];
        let issue = (da.map_or(0, |d| d.encode()), db.encode(), shape);
        let key = (self.id / 4, self.wgmma.issued);
        self.wgmma.issued += 1;
        match ctx.shared.wgmma_issues.get(&key) {
            Some(first) if *first != issue => {
                return Err(error(self, ctx, op, format!(
                    "warp {} issues its warpgroup's wgmma #{} with descriptors {:#x}, {:#x} (m{}n{}k{}), another warp of the warpgroup with {:#x}, {:#x} (m{}n{}k{}): they must be warpgroup-uniform",
                    self.id, key.1, issue.0, issue.1, shape[0], shape[1], shape[2], first.0, first.1, first.2[0], first.2[1], first.2[2]
                )));
            }
            Some(_) => {}
            None => {
                ctx.shared.wgmma_issues.insert(key, issue);
            }
        }
        // This warp's 16 rows of A, and all of B (row n of the K-major B holds column n).
        let warp_in_group = (self.id % 4) as usize;
        let bytes_a = u64::from(ea.bit_width() / 8);
        let bytes_b = u64::from(eb.bit_width() / 8);
        let mut reads = Vec::with_capacity(16 * k + n * k);
        let mut a = vec![0.0; 16 * k];
        // K-major: row `mn` holds K contiguous; MN-major (transposed): MN contiguous (module docs).
        let address = |d: &Descriptor, transposed: bool, mn: u64, kk: u64, bytes: u64| {
            if transposed {
                d.address_mn(mn, kk, bytes)
            } else {
                d.address(mn, kk * bytes)
            }
        };
        match da {
            Some(da) => {
                for r in 0..16 {
                    for kk in 0..k {
                        let row = (16 * warp_in_group + r) as u64;
                        let at = address(&da, mma.transpose_a, row, kk as u64, bytes_a);
                        a[r * k + kk] = self.shared_element(ctx, op, at, ea, &mut reads)?;
                    }
                }
            }
            None => self.register_a(ctx, op, mma.descriptor_a, bytes_a, k, &mut a)?,
        }
        let mut b = vec![0.0; n * k];
        for col in 0..n {
            for kk in 0..k {
                let at = address(&db, mma.transpose_b, col as u64, kk as u64, bytes_b);
                b[col * k + kk] = self.shared_element(ctx, op, at, eb, &mut reads)?;
            }
        }
        let mut out = Vec::with_capacity(32);
        for (lane, cl) in c.iter().enumerate() {
            let t = 32 * warp_in_group + lane;
            let mut v = Vec::with_capacity(n / 2);
            for (i, &ci) in cl.iter().enumerate() {
                let (row, col) = accumulator_coord(t, i);
                let r = row - 16 * warp_in_group;
                let mut sum = 0.0f64;
                for kk in 0..k {
                    sum += a[r * k + kk] * b[col * k + kk];
                }
                v.push(round_to(acc, sum + ci));
            }
            out.push(v);
        }
        let id = self.wgmma.results.len() as u32;
        self.wgmma.results.push((n as u32, out));
        for &range in &reads {
            ctx.shared.async_read(range, true);
        }
        self.wgmma.reads.push(reads);
        self.wgmma.open.push(id);
        for lane in 0..32u32 {
            self.set(d, lane, Val::Pending(id));
        }
        Ok(())
    }

    /// A from registers: this warp's 16 rows of A (`a[r * k + kk]`) from its lanes' fragments, each value `i`
    /// of lane `l` (groupID `g = l / 4`, threadID_in_group `t = l % 4`) at the ISA's "wgmma register fragment
    /// layout for matrix A" ([`register_a_coord`]): 16-bit, row `g + 8 ((i >> 1) & 1)`, column `2 t + (i & 1) +
    /// 8 (i >> 2)`; 8-bit, row `g + 8 ((i >> 2) & 1)`, column `4 t + (i & 3) + 16 (i >> 3)`. The registers must
    /// have been written before the last fence, as C's.
    fn register_a(&self, ctx: &Ctx<'_>, op: &Operation, v: Value, elem_bytes: u64, k: usize, a: &mut [f64]) -> Result<(), SimError> {
        if self.epoch(v) >= self.wgmma.fence_epoch {
            return Err(error(self, ctx, op, "A's registers were written after the last 'nvgpu.wgmma.fence': fence them first".into()));
        }
        for lane in 0..32usize {
            let values = match self.val(v, lane as u32) {
                Val::Vector(values) => values,
                Val::Pending(_) => return Err(error(self, ctx, op, format!("lane {lane}: A is the D of a wgmma not yet waited for"))),
                _ => return Err(SimError::Undefined { span: op.span, op: op.kind.name(), at: self.place(ctx), lane: lane as u32 }),
            };
            let want = if elem_bytes == 2 { 8 } else { 16 };
            if values.len() != want {
                return Err(error(self, ctx, op, format!("lane {lane}: A holds {} values, the fragment has {want}", values.len())));
            }
            for (i, &x) in values.iter().enumerate() {
                let (r, c) = register_a_coord(lane, i, elem_bytes);
                a[r * k + c] = x;
            }
        }
        Ok(())
    }

    /// `nvgpu.wgmma.fence`.
    pub(super) fn wgmma_fence(&mut self, ctx: &Ctx<'_>, op: &Operation) -> Result<(), SimError> {
        self.require_converged(ctx, op)?;
        self.wgmma.fence_epoch += 1;
        Ok(())
    }

    /// `nvgpu.wgmma.commit_group`: the mmas issued since the last commit form a group.
    pub(super) fn wgmma_commit(&mut self, ctx: &Ctx<'_>, op: &Operation) -> Result<(), SimError> {
        self.require_converged(ctx, op)?;
        let open = std::mem::take(&mut self.wgmma.open);
        self.wgmma.groups.push_back(open);
        Ok(())
    }

    /// `nvgpu.wgmma.wait_group N`: the oldest groups retire until at most N are pending; their D registers
    /// (and every register a loop copied them to) become readable.
    pub(super) fn wgmma_wait(&mut self, ctx: &mut Ctx<'_>, op: &Operation, keep: u32) -> Result<(), SimError> {
        self.require_converged(ctx, op)?;
        let mut retired = Vec::new();
        while self.wgmma.groups.len() > keep as usize {
            if let Some(group) = self.wgmma.groups.pop_front() {
                retired.extend(group);
            }
        }
        for &id in &retired {
            for &range in &self.wgmma.reads[id as usize] {
                ctx.shared.async_read(range, false);
            }
            self.wgmma.reads[id as usize] = Vec::new();
        }
        if !retired.is_empty() {
            let results = std::mem::take(&mut self.wgmma.results);
            self.retire(|id, lane| retired.contains(&id).then(|| results[id as usize].1[lane as usize].clone()));
            self.wgmma.results = results;
        }
        Ok(())
    }
}

/// Whether the kernel has a `nvgpu.warpgroup.mma` (the simulator then tracks generic-proxy shared writes for
/// the fence check).
pub(super) fn has_wgmma(func: &crate::body::Func) -> bool {
    func.body.any_op(func.entry, &mut |op| op.kind == OpKind::WarpgroupMma)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The simulator's register A coordinates (the ISA's formula) are the catalogue's `wgmma.m64k16.f16.a` and
    /// `wgmma.m64k32.s8.a` layouts (written as bases in tilec-layout) on each warp's 16 rows.
    #[test]
    fn register_a_is_the_catalogue_layout() {
        for (name, bytes, values) in [("wgmma.m64k16.f16.a", 2u64, 8usize), ("wgmma.m64k32.s8.a", 1, 16)] {
            let h = tilec_layout::hardware_layout(name).unwrap();
            for thread in 0..128usize {
                for i in 0..values {
                    let (r, c) = register_a_coord(thread % 32, i, bytes);
                    let want = h.coord(i as u32, thread as u32).unwrap();
                    assert_eq!((16 * (thread / 32) + r, c), (want.0 as usize, want.1 as usize), "{name} thread {thread} value {i}");
                }
            }
        }
    }

    /// The descriptor round-trips through the ISA's bit fields.
    #[test]
    fn descriptor_encoding() {
        let d = Descriptor { start: 0x1230, leading: 16, stride: 1024, base_offset: 0, swizzle: 128 };
        let bits = d.encode();
        // start >> 4 = 0x123 in bits 0-13, 1 in 16-29, 64 in 32-45, mode 1 in 62-63.
        assert_eq!(bits, 0x123 | (1 << 16) | (64 << 32) | (1 << 62));
        assert_eq!(Descriptor::decode(bits), d);
        for (swizzle, mode) in [(0u64, 0u64), (32, 3), (64, 2), (128, 1)] {
            assert_eq!(Descriptor { swizzle, ..d }.encode() >> 62, mode);
        }
    }

    /// The swizzled addresses are those of a row-major tile of `W`-byte rows under the XOR of the 16-byte
    /// chunk with the row (mod 8 / the pattern): 128 bytes, chunk ^= row % 8; 64, chunk ^= (row / 2) % 4;
    /// 32, chunk ^= (row / 4) % 2 -- written here from the ISA's swizzle pictures, not from `address`.
    #[test]
    fn swizzled_rows() {
        for (w, f) in [(128u64, (|r: u64| r % 8) as fn(u64) -> u64), (64, |r| (r / 2) % 4), (32, |r| (r / 4) % 2)] {
            let d = Descriptor { start: 2048, leading: 16, stride: 8 * w, base_offset: 0, swizzle: w };
            for row in 0..64u64 {
                for byte in 0..32u64 {
                    let chunk = (byte / 16) ^ f(row);
                    assert_eq!(d.address(row, byte), 2048 + row * w + chunk * 16 + byte % 16, "W={w} row {row} byte {byte}");
                }
            }
        }
    }

    /// Without a swizzle: 8x16-byte core matrices, SBO between groups of 8 rows, LBO between the K chunks.
    #[test]
    fn interleaved_core_matrices() {
        let d = Descriptor { start: 4096, leading: 128, stride: 256, base_offset: 0, swizzle: 0 };
        assert_eq!(d.address(0, 0), 4096);
        assert_eq!(d.address(1, 0), 4096 + 16);
        assert_eq!(d.address(7, 15), 4096 + 7 * 16 + 15);
        assert_eq!(d.address(0, 16), 4096 + 128);
        assert_eq!(d.address(8, 0), 4096 + 256);
        assert_eq!(d.address(9, 17), 4096 + 256 + 16 + 128 + 1);
    }

    /// MN-major addresses, from CUTLASS's canonical MN-major layouts written out here: a 128-byte swizzle
    /// of f16 has panels of 64 elements along MN (LBO apart), K rows 128 bytes apart inside a group of 8
    /// (SBO apart), the 16-byte chunk XOR the row; without a swizzle, 8-element core-matrix columns SBO apart
    /// and groups of 8 K rows LBO apart.
    #[test]
    fn mn_major_addresses() {
        let d = Descriptor { start: 8192, leading: 4096, stride: 1024, base_offset: 0, swizzle: 128 };
        for mn in 0..128u64 {
            for k in 0..16u64 {
                let (panel, within) = (mn / 64, mn % 64);
                let row = k % 8;
                let chunk = (within / 8) ^ row;
                let want = 8192 + panel * 4096 + (k / 8) * 1024 + row * 128 + chunk * 16 + (within % 8) * 2;
                assert_eq!(d.address_mn(mn, k, 2), want, "mn {mn} k {k}");
            }
        }
        let d = Descriptor { start: 0, leading: 512, stride: 128, base_offset: 0, swizzle: 0 };
        assert_eq!(d.address_mn(3, 0, 2), 6);
        assert_eq!(d.address_mn(8, 0, 2), 128);
        assert_eq!(d.address_mn(0, 1, 2), 16);
        assert_eq!(d.address_mn(0, 8, 2), 512);
    }

    /// The simulator's accumulator map is the layout catalogue's `wgmma.m64n<N>k16.f32.d` (written separately,
    /// as linear-layout bases, and checked there against the ISA's formula).
    #[test]
    fn accumulator_is_the_catalogue_layout() {
        for n in [8u32, 64, 256] {
            let name = format!("wgmma.m64n{n}k16.f32.d");
            let Some(h) = crate::layout::hardware_layout(&name) else { panic!("{name} is not catalogued") };
            for t in 0..128u32 {
                for i in 0..n / 2 {
                    let (r, c) = accumulator_coord(t as usize, i as usize);
                    assert_eq!(h.coord(i, t), Some((r as u32, c as u32)), "{name} thread {t} element {i}");
                }
            }
        }
    }

    /// The accumulator map covers the 64xN tile once over the 128 threads.
    #[test]
    fn accumulator_is_a_bijection() {
        for n in [8usize, 64, 256] {
            let mut seen = vec![0; 64 * n];
            for t in 0..128 {
                for i in 0..n / 2 {
                    let (r, c) = accumulator_coord(t, i);
                    seen[r * n + c] += 1;
                }
            }
            assert!(seen.iter().all(|&s| s == 1), "n = {n}");
        }
    }
}
