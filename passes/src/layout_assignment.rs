//! `layout-assignment`: gives every register tile a distributed layout.
//!
//! A distributed layout is a [`LinearLayout`] from the hardware indices `register`, `lane`, `warp` to the
//! `row`, `col` of the block-level tile (Triton's linear layouts). For each `tile.mma` this pass
//!
//! 1. chooses the instruction by element type ([`MmaInstr::for_types`]: f16/bf16 → m16n8k16, s8/u8 →
//!    m16n8k32, tf32 → m16n8k8);
//! 2. chooses a warp grid `wm x wn` with `wm * wn = num_warps` (function attribute, default 4, written
//!    back so later passes and the simulator agree) whose warp tile `M/wm x N/wn` is a multiple of the
//!    instruction's `m x n` and as square as possible (least ldmatrix traffic per mma: 128x128 over 4
//!    warps → 2x2, 256x128 over 8 → 4x2, 128x256 over 8 → 2x4), ties going to the most balanced grid with
//!    `wm >= wn`; the function attribute `warp_tile = [WM, WN]` asks for a warp tile instead (the grid
//!    `M/WM x N/WN`, an error unless it holds `num_warps` whole-instruction warp tiles), and the mma's own
//!    `warp_tile` attribute overrides the function's for that mma (attention: S = Q·Kᵀ is BM x BN, O = P·V
//!    is BM x D, and both want the warps to own whole rows);
//! 3. builds the operand layouts as products of the hardware fragment layout with repetitions over
//!    instruction tiles (more `register` bits) and the warp grid (`warp` bits):
//!    - A = frag_a × rep(k) × rep(m) × warp_m(row) × zero(wn): A is replicated over the warps of a row;
//!    - B = frag_b × rep(n) × rep(k) × zero(wm) × warp_n(col): B is replicated over the warps of a column;
//!    - C = frag_c × rep(n) × rep(m) × warp_m(row) × warp_n(col).
//!
//!    The warp index is `w = w_m + wm * w_n`. For B the n-repetition comes first so that two
//!    neighbouring n8 fragments form one 16x16 `ldmatrix.x4.trans` (see `lower::copy_plan`).
//!
//! A `tile.transpose` relates two classes instead of tying them: a requirement on either side gives the
//! other side the same layout with `row` and `col` exchanged (the same registers hold the transposed
//! elements), so `tile.mma %q, tile.transpose(%k)` asks of `%k` the transpose of the B fragment layout,
//! which the copy plan loads from a row-major `[N, K]` tile with `ldmatrix` without `.trans`. Where both
//! sides already have requirements that disagree, the source is converted first (like an mma operand).
//!
//! Layouts then spread through the values that must share them: the accumulator and the result of an
//! mma, the four faces of a loop-carried value (init, block argument, yield operand, result), the
//! operands and results of elementwise ops, `tile.select` and `tile.cast`. Each such class of values
//! ([`LayoutClasses`]) takes the layout of the mma operand in it; where a second mma requires another
//! layout of a class, [`crate::layout_conversion`] splits the class with a `tile.convert_layout`. A class that no mma constrains gets a default
//! ([`default_layout`]): the m16n8k16 A fragment for 16-bit elements, the m16n8 accumulator for 32-bit
//! ones and the m16n8k32 A fragment for 8-bit ones, tiled over the warps without replication where the
//! tile allows it. A tile smaller than that fragment along an axis (`1x4xf32`, `4x64xf32`, `1x8xf16`) takes the
//! default layout of the smallest tile of whole fragments that covers it, cropped to its extents
//! ([`crate::slice_layout::crop`]): the lanes and warps that would hold elements past its edge hold copies.
//!
//! Shared tiles are left alone: without a layout they are row-major; the swizzle pass may give them
//! one, and the lowering reads it from the type. Except on the wgmma path ([`crate::wgmma`], decided first
//! for each `tile.mma`): there the operand tiles get wgmma's panel layouts, only the accumulator is
//! constrained ([`wgmma_accumulator_layout`], fragments of N/2 values, one per m64 tile), and A and B take
//! default layouts (their copies vanish in the lowering); an A computed in registers gets the wgmma A
//! fragment layout ([`wgmma_a_layout`]), which an f16 cast of an earlier wgmma's accumulator over the same
//! rows already has up to a renaming of registers.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use tilec_ir::layout::{hardware_layout, Layout, LinearLayout};
use tilec_ir::ops::MmaShape;
use tilec_ir::{typed, Attribute, Diagnostic, Func, KernelAttrs, MemorySpace, Module, OpId, ScalarType, Span, Type, Value};

use crate::kernel_attrs::kernel_attrs;

/// The function attribute naming the number of warps of a block (its name, for tools that set it; passes read
/// it as [`KernelAttrs::num_warps`]).
pub const NUM_WARPS_ATTR: &str = "num_warps";
/// The function attribute naming the warp tile of its mma, `[rows, cols]` (else the most square one).
pub const WARP_TILE_ATTR: &str = "warp_tile";
/// The number of warps when a function does not say.
pub use tilec_ir::ops::kernel::DEFAULT_NUM_WARPS;

/// One `mma.sync` instruction shape with the catalogue names of its fragment layouts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MmaInstr {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    /// `tilec_layout` catalogue names of the A, B and C fragments.
    pub a: &'static str,
    pub b: &'static str,
    pub c: &'static str,
}

impl MmaInstr {
    /// The instruction for A/B elements `ab` accumulating into `acc`, or why there is none yet.
    pub fn for_types(ab: ScalarType, acc: ScalarType) -> Result<MmaInstr, String> {
        use ScalarType::*;
        let i = |m, n, k, a, b, c| Ok(MmaInstr { m, n, k, a, b, c });
        match (ab, acc) {
            (F16, F32) => i(16, 8, 16, "mma.m16n8k16.f16.a", "mma.m16n8k16.f16.b", "mma.m16n8k16.f32.c"),
            (F16, F16) => i(16, 8, 16, "mma.m16n8k16.f16.a", "mma.m16n8k16.f16.b", "mma.m16n8k16.f16.c"),
            (BF16, F32) => i(16, 8, 16, "mma.m16n8k16.bf16.a", "mma.m16n8k16.bf16.b", "mma.m16n8k16.f32.c"),
            (I8, I32) => i(16, 8, 32, "mma.m16n8k32.s8.a", "mma.m16n8k32.s8.b", "mma.m16n8k32.s32.c"),
            (U8, I32) => i(16, 8, 32, "mma.m16n8k32.u8.a", "mma.m16n8k32.u8.b", "mma.m16n8k32.s32.c"),
            (TF32, F32) => i(16, 8, 8, "mma.m16n8k8.tf32.a", "mma.m16n8k8.tf32.b", "mma.m16n8k8.f32.c"),
            _ => Err(format!("'{ab}' inputs with a '{acc}' accumulator are not supported by layout assignment yet (supported: f16/bf16 -> m16n8k16, s8/u8 -> m16n8k32, tf32 -> m16n8k8)")),
        }
    }

    /// `[m, n, k]`, as the `mmaShape` attribute writes it.
    pub fn shape(&self) -> [i64; 3] {
        [self.m as i64, self.n as i64, self.k as i64]
    }

    /// Per-thread values of the A, B and C fragments of one instruction.
    pub fn fragment_values(&self) -> [u32; 3] {
        [self.m * self.k / 32, self.k * self.n / 32, self.m * self.n / 32]
    }
}

/// The warp grids for `num_warps` warps, most preferred first: balanced, then `wm >= wn`.
pub fn warp_grids(num_warps: u32) -> Vec<(u32, u32)> {
    let mut grids: Vec<(u32, u32)> = (1..=num_warps).filter(|wm| num_warps.is_multiple_of(*wm)).map(|wm| (wm, num_warps / wm)).collect();
    let lg = |x: u32| x.trailing_zeros() as i32;
    grids.sort_by_key(|&(wm, wn)| ((lg(wm) - lg(wn)).abs(), wm < wn));
    grids
}

/// What layout assignment decided for one `tile.mma`.
#[derive(Clone, Debug)]
pub struct MmaAssignment {
    pub instr: MmaInstr,
    /// `(wm, wn)`.
    pub warps: (u32, u32),
    pub a: LinearLayout,
    pub b: LinearLayout,
    pub c: LinearLayout,
}

fn lin(r: Result<LinearLayout, tilec_ir::layout::LayoutError>) -> Result<LinearLayout, String> {
    r.map_err(|e| e.to_string())
}

/// `hw × Π reps`, where each rep is `(in_dim, out_dim, count, zero)`: `count` copies along `out_dim`
/// (or, when `zero`, a broadcast over `count` values of `in_dim`).
fn tiled(hw: &LinearLayout, reps: &[(&str, &str, u32, bool)]) -> Result<LinearLayout, String> {
    let mut l = hw.clone();
    for &(input, output, count, zero) in reps {
        let rep = if zero { LinearLayout::zeros_1d(count, input, output) } else { LinearLayout::identity_1d(count, input, output) };
        l = lin(l.product(&lin(rep)?))?;
    }
    Ok(l)
}

fn hw(name: &str) -> Result<&'static LinearLayout, String> {
    hardware_layout(name).map(|h| &h.layout).ok_or_else(|| format!("no hardware layout '{name}'"))
}

fn pow2(what: &str, n: u64) -> Result<u32, String> {
    if n == 0 || !n.is_power_of_two() || n > 1 << 20 {
        return Err(format!("{what} is {n}, not a power of two; distributed layouts need power-of-two extents"));
    }
    Ok(n as u32)
}

/// Chooses the instruction and warp grid of an `M x N x K` mma and builds its operand layouts.
pub fn assign_mma(m: u64, n: u64, k: u64, ab: ScalarType, acc: ScalarType, num_warps: u32) -> Result<MmaAssignment, String> {
    assign_mma_with(m, n, k, ab, acc, num_warps, None)
}

/// [`assign_mma`] with the warp tile asked for (the function attribute `warp_tile = [WM, WN]`): the warp grid
/// is then `M/WM x N/WN`, which must hold `num_warps` warps.
pub fn assign_mma_with(
    m: u64,
    n: u64,
    k: u64,
    ab: ScalarType,
    acc: ScalarType,
    num_warps: u32,
    warp_tile: Option<(u64, u64)>,
) -> Result<MmaAssignment, String> {
    let instr = MmaInstr::for_types(ab, acc)?;
    let (m, n, k) = (pow2("M", m)?, pow2("N", n)?, pow2("K", k)?);
    pow2("num_warps", num_warps as u64)?;
    if k % instr.k != 0 {
        return Err(format!("K = {k} is not a multiple of the instruction's k = {} (m{}n{}k{})", instr.k, instr.m, instr.n, instr.k));
    }
    let grids = warp_grids(num_warps);
    // Of the grids that divide the tile, the one whose warp tile is the most square: a warp's ldmatrix traffic
    // per mma is proportional to wtm + wtn for a fixed wtm * wtn, least when wtm = wtn (a 128x256 tile over
    // 8 warps: 2x4 gives 64x64 warp tiles, 4 KB of fragments per 32 mma, where 4x2 gives 32x128, 5 KB).
    // Ties keep the order of `warp_grids` (balanced, then wm >= wn).
    let lg = |x: u32| x.trailing_zeros() as i32;
    let fits = |&&(wm, wn): &&(u32, u32)| m % (wm * instr.m) == 0 && n % (wn * instr.n) == 0;
    let best = match warp_tile {
        Some((wtm, wtn)) => {
            let (mm, nn) = (u64::from(m), u64::from(n));
            let grid = (wtm > 0 && wtn > 0 && mm % wtm == 0 && nn % wtn == 0).then(|| ((mm / wtm) as u32, (nn / wtn) as u32));
            match grid.and_then(|g| grids.iter().find(|&&x| x == g)) {
                Some(g) if fits(&g) => Some(g),
                _ => {
                    return Err(format!(
                        "warp_tile = [{wtm}, {wtn}] does not split the {m}x{n} tile into {num_warps} warp tiles of whole m{}n{} instructions",
                        instr.m, instr.n
                    ))
                }
            }
        }
        None => grids.iter().filter(fits).min_by_key(|&&(wm, wn)| (lg(m / wm) - lg(n / wn)).abs()),
    };
    let Some(&(wm, wn)) = best else {
        let (wm, wn) = grids[0];
        let tried: Vec<String> = grids.iter().map(|(a, b)| format!("{a}x{b}")).collect();
        return Err(format!(
            "{m}x{n} tile cannot be split over {wm}x{wn} warps into m{}n{} instructions (nor over {}): the warp tile M/wm x N/wn must be a multiple of {}x{}",
            instr.m,
            instr.n,
            if tried.len() > 1 { tried[1..].join(", ") } else { "any other grid".into() },
            instr.m,
            instr.n
        ));
    };
    let (wtm, wtn) = (m / wm, n / wn);
    let a = tiled(hw(instr.a)?, &[
        ("register", "col", k / instr.k, false),
        ("register", "row", wtm / instr.m, false),
        ("warp", "row", wm, false),
        ("warp", "row", wn, true),
    ])?;
    let b = tiled(hw(instr.b)?, &[
        ("register", "col", wtn / instr.n, false),
        ("register", "row", k / instr.k, false),
        ("warp", "col", wm, true),
        ("warp", "col", wn, false),
    ])?;
    let c = tiled(hw(instr.c)?, &[
        ("register", "col", wtn / instr.n, false),
        ("register", "row", wtm / instr.m, false),
        ("warp", "row", wm, false),
        ("warp", "col", wn, false),
    ])?;
    Ok(MmaAssignment { instr, warps: (wm, wn), a, b, c })
}

/// The accumulator layout of a wgmma plan: the ISA's D layout of one m64nN instruction over a warpgroup
/// (`wgmma.m64n<N>k16.f32.d`, its 128 `lane`s split into 32 lanes of 4 warps; the s32 one is the same), repeated over the warpgroup's m64 tiles (more
/// `register` bits), then the warpgroups along M, then along N (`warp` bits above the warpgroup's 4 warps).
pub fn wgmma_accumulator_layout(plan: &crate::wgmma::WgmmaPlan) -> Result<LinearLayout, String> {
    let name = format!("wgmma.m64n{}k16.f32.d", plan.n);
    let d = hardware_layout(&name).map(|h| &h.layout).ok_or_else(|| format!("no hardware layout '{name}'"))?;
    // The catalogue's layout spans the warpgroup's 128 threads as `lane`; here lanes 32..128 are warps 1..4.
    let d = lin(d.reshape_ins(&[("register", plan.n / 2), ("lane", 32), ("warp", 4)]))?;
    tiled(&d, &[
        ("register", "row", plan.m_tiles, false),
        ("warp", "row", plan.groups.0, false),
        ("warp", "col", plan.groups.1, false),
    ])
}

/// The layout of a register A of a wgmma plan (the RS form): the ISA's A fragment of one m64 x k tile over a
/// warpgroup (`wgmma.m64k16.{f16,bf16}.a`, `wgmma.m64k32.{s8,u8}.a`: warp w of the warpgroup holds rows
/// 16w..16w+15 as an mma.sync A fragment), repeated over the k steps, then the warpgroup's m64 tiles
/// (`register` bits: fragment `f` is k step `f % (K / k)` of m64 tile `f / (K / k)`), then the warpgroups along
/// M, and replicated over those along N (`warp` bits mapping to zero). With the warpgroups along M only, it
/// is the accumulator layout of a wgmma of the same rows with N = K, the k steps' columns in the same
/// register bits: f32 → f16 P of FlashAttention's S = Q·Kᵀ feeds P·V with no data movement.
pub fn wgmma_a_layout(plan: &crate::wgmma::WgmmaPlan, elem: ScalarType, k_total: u64) -> Result<LinearLayout, String> {
    let name = match elem {
        ScalarType::F16 => "wgmma.m64k16.f16.a",
        ScalarType::BF16 => "wgmma.m64k16.bf16.a",
        ScalarType::I8 => "wgmma.m64k32.s8.a",
        ScalarType::U8 => "wgmma.m64k32.u8.a",
        other => return Err(format!("wgmma has no register A of '{other}' elements")),
    };
    let h = hardware_layout(name).ok_or_else(|| format!("no hardware layout '{name}'"))?;
    let values = h.values_per_lane();
    let a = lin(h.layout.reshape_ins(&[("register", values), ("lane", 32), ("warp", 4)]))?;
    let k = u64::from(plan.k);
    if k_total == 0 || !k_total.is_multiple_of(k) {
        return Err(format!("K = {k_total} is not a multiple of the instruction's k = {k}"));
    }
    tiled(&a, &[
        ("register", "col", pow2("K / k", k_total / k)?, false),
        ("register", "row", plan.m_tiles, false),
        ("warp", "row", plan.groups.0, false),
        ("warp", "row", plan.groups.1, true),
    ])
}

/// The role a class of register tiles plays for the mma, which fixes its fragment size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    A,
    B,
    C,
    /// Not an mma operand: a default layout.
    Free,
}

/// The default layout of a register tile that no mma constrains, with its per-thread fragment size. A tile
/// smaller than the fragment along an axis gets the crop of the covering tile's layout (module docs).
pub fn default_layout(rows: u64, cols: u64, elem: ScalarType, num_warps: u32) -> Result<(LinearLayout, u32), String> {
    let (name, values) = match elem.bit_width() {
        16 => ("ldmatrix.x4", 8),
        32 => ("mma.m16n8k16.f32.c", 4),
        8 => ("mma.m16n8k32.s8.a", 16),
        bits => return Err(format!("register tiles of {bits}-bit '{elem}' elements have no layout yet")),
    };
    let h = hardware_layout(name).ok_or_else(|| format!("no hardware layout '{name}'"))?;
    let (rows, cols) = (pow2("rows", rows)?, pow2("cols", cols)?);
    if rows < h.rows || cols < h.cols {
        // Smaller than one fragment along an axis: the layout of the smallest tile of whole fragments that
        // covers it, cropped (the threads past the tile's edge hold copies; `slice_layout::crop`).
        let (pr, pc) = (rows.max(h.rows), cols.max(h.cols));
        let (parent, _) = default_layout(u64::from(pr), u64::from(pc), elem, num_warps)?;
        let cropped = crate::slice_layout::crop(&parent, rows, cols)?;
        let registers = cropped.layout.in_dim_size("register").unwrap_or(1);
        return Ok((cropped.layout, values.min(registers)));
    }
    if rows % h.rows != 0 || cols % h.cols != 0 {
        return Err(format!("a {rows}x{cols} '{elem}' register tile is not a multiple of the {}x{} fragment '{name}'", h.rows, h.cols));
    }
    pow2("num_warps", num_warps as u64)?;
    // Spread the warps without replication when the tile has enough fragments, else replicate.
    let grid = warp_grids(num_warps).into_iter().find(|&(wm, wn)| rows % (wm * h.rows) == 0 && cols % (wn * h.cols) == 0);
    let l = match grid {
        Some((wm, wn)) => tiled(&h.layout, &[
            ("register", "col", cols / wn / h.cols, false),
            ("register", "row", rows / wm / h.rows, false),
            ("warp", "row", wm, false),
            ("warp", "col", wn, false),
        ])?,
        // Too few fragments for the warps: every warp holds the whole tile.
        None => tiled(&h.layout, &[
            ("register", "col", cols / h.cols, false),
            ("register", "row", rows / h.rows, false),
            ("warp", "row", num_warps, true),
        ])?,
    };
    Ok((l, values))
}

/// The number of warps of a function (its `num_warps` attribute, default [`DEFAULT_NUM_WARPS`]; the default
/// too when an attribute is mistyped, which the verifier reports).
pub fn num_warps(func: &Func) -> u32 {
    KernelAttrs::of(func).map_or(DEFAULT_NUM_WARPS, |attrs| attrs.num_warps).clamp(1, 32)
}

/// Register tile values that must share one layout, found by union-find over the ops that tie them.
#[derive(Clone, Debug, Default)]
pub struct LayoutClasses {
    parent: HashMap<Value, Value>,
}

impl LayoutClasses {
    fn find(&mut self, v: Value) -> Value {
        let p = *self.parent.entry(v).or_insert(v);
        if p == v {
            return v;
        }
        let root = self.find(p);
        self.parent.insert(v, root);
        root
    }

    fn union(&mut self, a: Value, b: Value) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent.insert(ra.max(rb), ra.min(rb));
        }
    }

    /// The class representative of a register tile value.
    pub fn class_of(&mut self, v: Value) -> Value {
        self.find(v)
    }

    /// Builds the classes of a function.
    pub fn of(func: &Func) -> LayoutClasses {
        let body = &func.body;
        let is_reg = |v: Value| matches!(body.ty(v), Type::Tile(t) if t.space == MemorySpace::Register);
        let mut classes = LayoutClasses::default();
        let mut ops = Vec::new();
        body.walk(func.entry, &mut |op| ops.push(op));
        for id in ops {
            let op = body.op(id);
            for &r in &op.results {
                if is_reg(r) {
                    classes.find(r);
                }
            }
            let mut tie = |vals: &[Value]| {
                let regs: Vec<Value> = vals.iter().copied().filter(|&v| is_reg(v)).collect();
                for w in regs.windows(2) {
                    classes.union(w[0], w[1]);
                }
            };
            match typed::AnyOp::from_op(op) {
                Some(typed::AnyOp::For(lp)) => {
                    let block = body.block(op.regions[0]);
                    let yielded = block.ops.last().map(|&y| body.op(y).operands.clone()).unwrap_or_default();
                    for (i, &init) in lp.inits.iter().enumerate() {
                        let mut faces = vec![init];
                        faces.extend(block.args.get(i + 1).copied());
                        faces.extend(op.results.get(i).copied());
                        faces.extend(yielded.get(i).copied());
                        tie(&faces);
                    }
                }
                _ if op.kind.is_binary_arith() || op.kind.is_unary_math() => {
                    tie(&[op.operands.clone(), op.results.clone()].concat())
                }
                Some(typed::AnyOp::Cmp(_) | typed::AnyOp::Fma(_)) => tie(&[op.operands.clone(), op.results.clone()].concat()),
                Some(typed::AnyOp::Select(sel)) => {
                    tie(&[vec![sel.cond, sel.true_value, sel.false_value], op.results.clone()].concat())
                }
                Some(typed::AnyOp::Cast(cast)) => tie(&[vec![cast.source], op.results.clone()].concat()),
                Some(typed::AnyOp::Mma(mma)) => tie(&[vec![mma.c], op.results.clone()].concat()),
                _ => {}
            }
        }
        classes
    }
}

/// A requirement on a class: this layout (with this fragment size and role), because of this op.
#[derive(Clone, Debug)]
struct Requirement {
    layout: LinearLayout,
    values: u32,
    role: Role,
    op: OpId,
}

/// Records what `op` wants of its operands' classes (value, layout, fragment values, role); a class that
/// already has a different requirement is a conflict between the two ops.
fn require(
    reqs: &mut HashMap<Value, Requirement>,
    classes: &mut LayoutClasses,
    op: OpId,
    wanted: impl IntoIterator<Item = (Value, LinearLayout, u32, Role)>,
) -> Result<(), LayoutConflict> {
    for (v, layout, values, role) in wanted {
        let c = classes.class_of(v);
        match reqs.get(&c) {
            Some(prev) if prev.layout != layout || prev.values != values => {
                return Err(LayoutConflict { op, operand: v, role, other: prev.op });
            }
            Some(_) => {}
            None => {
                reqs.insert(c, Requirement { layout, values, role, op });
            }
        }
    }
    Ok(())
}

/// The layout and fragment size each register tile class gets.
#[derive(Clone, Debug, Default)]
pub struct LayoutSolution {
    classes: LayoutClasses,
    /// class representative → (layout, per-thread values of one fragment, role)
    chosen: HashMap<Value, (LinearLayout, u32, Role)>,
    /// What was decided per `tile.mma`.
    pub mmas: Vec<(OpId, MmaAssignment)>,
}

impl LayoutSolution {
    /// The layout, fragment size and role of a register tile value.
    pub fn of(&mut self, v: Value) -> Option<&(LinearLayout, u32, Role)> {
        let c = self.classes.class_of(v);
        self.chosen.get(&c)
    }
}

fn op_span(func: &Func, op: OpId) -> Span {
    func.body.op(op).span
}

/// The values of the function's placed ops and blocks (erased ops' results stay in the arena).
pub fn live_values(func: &Func) -> Vec<Value> {
    let body = &func.body;
    let mut values: Vec<Value> = func.args().to_vec();
    body.walk(func.entry, &mut |op| {
        let o = body.op(op);
        values.extend(&o.results);
        for &r in &o.regions {
            values.extend(&body.block(r).args);
        }
    });
    values
}

/// Two requirements on one class of register tiles: `operand` of the mma `op` needs a layout (as `role`)
/// other than the one the op `other` already requires of its class; or (`role` [`Role::Free`]) the thin side
/// `operand` of the reduce or broadcast `op` needs the slice of its parent's layout, and the edge `other` gave
/// its class another slice.
#[derive(Clone, Debug)]
pub struct LayoutConflict {
    pub op: OpId,
    pub operand: Value,
    pub role: Role,
    pub other: OpId,
}

impl LayoutConflict {
    /// What the conflict is, for a diagnostic.
    pub fn describe(&self, func: &Func) -> String {
        match func.body.op(self.op).kind {
            tilec_ir::OpKind::Mma => format!("operand {:?} of this 'tile.mma' needs a layout that another op already requires differently", self.role),
            tilec_ir::OpKind::Transpose => "the source of this 'tile.transpose' needs a layout that another op already requires differently".into(),
            kind => format!(
                "the {} of this '{kind}' needs the slice of the other side's layout, and another op gives it a different one",
                if kind == tilec_ir::OpKind::Reduce { "result" } else { "source" }
            ),
        }
    }
}

/// Solves the layouts of one function (does not change it); a conflict is an error (layout assignment
/// resolves them with conversions first, [`crate::layout_conversion::insert_conversions`]).
pub fn solve_layouts(func: &Func) -> Result<LayoutSolution, Diagnostic> {
    match solve_layouts_or_conflict(func)? {
        Ok(solution) => Ok(solution),
        Err(c) => Err(Diagnostic::error(op_span(func, c.op), format!("{}; run layout-assignment, which inserts a conversion", c.describe(func)))
            .with_note_at(op_span(func, c.other), "the other requirement comes from here")),
    }
}

/// [`solve_layouts`], with the first conflict as a value.
pub fn solve_layouts_or_conflict(func: &Func) -> Result<Result<LayoutSolution, LayoutConflict>, Diagnostic> {
    let body = &func.body;
    let attrs = kernel_attrs(func)?;
    let warps = attrs.num_warps.clamp(1, 32);
    let warp_tile = match attrs.warp_tile.as_deref() {
        None => None,
        Some(&[rows, cols]) if rows > 0 && cols > 0 => Some((u64::from(rows), u64::from(cols))),
        Some(_) => return Err(Diagnostic::error(func.span, format!("{WARP_TILE_ATTR} must be [rows, cols] of positive integers"))),
    };
    let mut classes = LayoutClasses::of(func);
    let mut reqs: HashMap<Value, Requirement> = HashMap::default();
    let mut mmas = Vec::new();
    let mut ops = Vec::new();
    body.walk(func.entry, &mut |op| ops.push(op));
    for &id in &ops {
        let op = body.op(id);
        let Some(mma) = op.view::<typed::Mma>() else { continue };
        let tile = |v: Value| body.ty(v).as_tile().cloned();
        let (Some(ta), Some(tb), Some(tc)) = (tile(mma.a), tile(mma.b), tile(mma.c)) else { continue };
        let (Some(sa), Some(sb)) = (ta.static_shape(), tb.static_shape()) else {
            return Err(Diagnostic::error(op.span, "'tile.mma' needs static shapes for layout assignment"));
        };
        // The mma's own warp tile, else the kernel's.
        let warp_tile = match mma.warp_tile.as_deref() {
            None => warp_tile,
            Some(&[rows, cols]) if rows > 0 && cols > 0 => Some((u64::from(rows), u64::from(cols))),
            Some(_) => return Err(Diagnostic::error(op.span, format!("the '{WARP_TILE_ATTR}' of a 'tile.mma' must be [rows, cols] of positive integers"))),
        };
        if crate::wgmma::is_wgmma(&mma) {
            // Decided by `choose_instructions`: only the accumulator, and a register A, have register layouts
            // (a shared A and B are read from shared memory; their copies vanish in the lowering and they take
            // a default layout).
            let plan = crate::wgmma::wgmma_plan(func, id, warps)
                .map_err(|m| Diagnostic::error(op.span, format!("this 'tile.mma' has a wgmma shape (mmaShape m = 64) but cannot use wgmma: {m}")))?;
            let layout = wgmma_accumulator_layout(&plan).map_err(|m| Diagnostic::error(op.span, format!("no wgmma accumulator layout: {m}")))?;
            let mut wanted = vec![(mma.c, layout.clone(), plan.n / 2, Role::C)];
            let mut a_layout = LinearLayout::empty();
            if plan.a.is_none() {
                // A from registers: the wgmma A fragments, one per (m64 tile, k step).
                a_layout = wgmma_a_layout(&plan, ta.elem, sa[1]).map_err(|m| Diagnostic::error(op.span, format!("no wgmma register A layout: {m}")))?;
                let values = if ta.elem.bit_width() == 8 { 16 } else { 8 };
                wanted.push((mma.a, a_layout.clone(), values, Role::A));
            }
            if let Err(conflict) = require(&mut reqs, &mut classes, id, wanted) {
                return Ok(Err(conflict));
            }
            let a_name = if plan.a.is_some() { "wgmma.shared" } else { "wgmma.m64kK.a" };
            let instr = MmaInstr { m: 64, n: plan.n, k: plan.k, a: a_name, b: "wgmma.shared", c: "wgmma.m64nNk16.d" };
            mmas.push((id, MmaAssignment { instr, warps: plan.groups, a: a_layout, b: LinearLayout::empty(), c: layout }));
            continue;
        }
        let asg = assign_mma_with(sa[0], sb[1], sa[1], ta.elem, tc.elem, warps, warp_tile).map_err(|m| {
            Diagnostic::error(op.span, format!("no layout assignment for this 'tile.mma': {m}"))
                .with_note(format!("the block has {warps} warps (function attribute 'num_warps')"))
        })?;
        let [va, vb, vc] = asg.instr.fragment_values();
        let wanted = [
            (mma.a, asg.a.clone(), va, Role::A),
            (mma.b, asg.b.clone(), vb, Role::B),
            (mma.c, asg.c.clone(), vc, Role::C),
        ];
        if let Err(conflict) = require(&mut reqs, &mut classes, id, wanted) {
            return Ok(Err(conflict));
        }
        mmas.push((id, asg));
    }
    // A `tile.transpose` carries a requirement across, row and col exchanged, both ways, until nothing changes.
    let transposes = transpose_edges(func, &ops);
    let mut progress = true;
    while progress {
        progress = false;
        for e in &transposes {
            let (cs, cr) = (classes.class_of(e.source), classes.class_of(e.result));
            match (reqs.get(&cs).cloned(), reqs.get(&cr).cloned()) {
                (Some(s), Some(r)) => {
                    if transposed(&s.layout, e.op, func)? != r.layout || s.values != r.values {
                        // The source is converted to the transpose of what the result needs.
                        return Ok(Err(LayoutConflict { op: e.op, operand: e.source, role: Role::Free, other: s.op }));
                    }
                }
                (Some(s), None) => {
                    reqs.insert(cr, Requirement { layout: transposed(&s.layout, e.op, func)?, values: s.values, role: Role::Free, op: e.op });
                    progress = true;
                }
                (None, Some(r)) => {
                    reqs.insert(cs, Requirement { layout: transposed(&r.layout, e.op, func)?, values: r.values, role: Role::Free, op: e.op });
                    progress = true;
                }
                (None, None) => {}
            }
        }
    }
    // Every register tile value gets its class's layout, or a default; the thin side of a reduce or broadcast
    // gets the slice of its parent's (below).
    let edges = slice_edges(func, &ops);
    let mut slice_sides: HashSet<Value> = HashSet::default();
    for e in &edges {
        slice_sides.insert(classes.class_of(e.slice));
    }
    let mut chosen: HashMap<Value, (LinearLayout, u32, Role)> = HashMap::default();
    for v in live_values(func) {
        if !matches!(body.ty(v), Type::Tile(t) if t.space == MemorySpace::Register) {
            continue;
        }
        let c = classes.class_of(v);
        if chosen.contains_key(&c) || (slice_sides.contains(&c) && !reqs.contains_key(&c)) {
            continue;
        }
        if let Some(r) = reqs.get(&c) {
            chosen.insert(c, (r.layout.clone(), r.values, r.role));
            continue;
        }
        // The other side of a transpose that already has a layout: its transpose.
        let mut across = None;
        for e in &transposes {
            let (cs, cr) = (classes.class_of(e.source), classes.class_of(e.result));
            let other = if cs == c { cr } else if cr == c { cs } else { continue };
            if let Some((l, n, _)) = chosen.get(&other) {
                across = Some((transposed(l, e.op, func)?, *n));
                break;
            }
        }
        if let Some((l, n)) = across {
            chosen.insert(c, (l, n, Role::Free));
            continue;
        }
        let Some(t) = body.ty(v).as_tile() else { continue };
        let span = body.value(v).span;
        let Some(&[rows, cols]) = t.static_shape().as_deref() else {
            return Err(not_rank2(span, t));
        };
        let (l, n) = if rows == 1 || cols == 1 {
            thin_default_layout(rows, cols, t.elem, warps)
        } else {
            default_layout(rows, cols, t.elem, warps)
        }
        .map_err(|m| Diagnostic::error(span, format!("no layout for '{t}': {m}")))?;
        chosen.insert(c, (l, n, Role::Free));
    }
    if let Some(conflict) = propagate_slices(func, &edges, &mut classes, &mut chosen, warps)? {
        return Ok(Err(conflict));
    }
    for e in &transposes {
        let (cs, cr) = (classes.class_of(e.source), classes.class_of(e.result));
        let agree = match (chosen.get(&cs), chosen.get(&cr)) {
            (Some((ls, ns, _)), Some((lr, nr, _))) => transposed(ls, e.op, func)? == *lr && ns == nr,
            _ => false,
        };
        if !agree {
            return Err(Diagnostic::error(
                op_span(func, e.op),
                "no layouts for this 'tile.transpose': its source and result get layouts from other ops that are not each other's transpose (a thin tile's slice layout, or a loop-carried value tied to both sides); layout conversion is not placed here yet",
            ));
        }
    }
    Ok(Ok(LayoutSolution { classes, chosen, mmas }))
}

/// The error for a register tile without a static rank-2 shape; a 1-D one is told to be a row or a column.
fn not_rank2(span: Span, t: &tilec_ir::TileType) -> Diagnostic {
    let d = Diagnostic::error(span, format!("register tile '{t}' needs a static rank-2 shape for layout assignment"));
    if t.rank() == 1 {
        d.with_note("register and shared tiles are 2-D: write a vector as a 1xN row or an Mx1 column (a 1-D global tile copies to and from either)")
    } else {
        d
    }
}

// ---- transposes ------------------------------------------------------------------------------------------------

/// A `tile.transpose`: `result` has the layout of `source` with `row` and `col` exchanged.
#[derive(Clone, Copy, Debug)]
pub struct TransposeEdge {
    pub source: Value,
    pub result: Value,
    pub op: OpId,
}

/// The transpose ops of a function as edges.
pub fn transpose_edges(func: &Func, ops: &[OpId]) -> Vec<TransposeEdge> {
    ops.iter()
        .filter_map(|&id| {
            let op = func.body.op(id);
            let t = op.view::<typed::Transpose>()?;
            Some(TransposeEdge { source: t.source, result: op.result()?, op: id })
        })
        .collect()
}

/// `layout` with `row` and `col` exchanged: the layout of the transposed tile in the same registers.
pub fn transposed(layout: &LinearLayout, op: OpId, func: &Func) -> Result<LinearLayout, Diagnostic> {
    layout
        .exchange_outs("row", "col")
        .map_err(|e| Diagnostic::error(op_span(func, op), format!("no transposed layout for this 'tile.transpose': {e}")))
}

// ---- slice layouts of reductions and broadcasts (issue 16) ------------------------------------------------------

/// A reduce or broadcast: the thin value `slice` has the layout of `parent` sliced along `axes`.
#[derive(Clone, Debug)]
pub struct SliceEdge {
    pub parent: Value,
    pub slice: Value,
    pub axes: Vec<usize>,
    pub op: OpId,
}

/// The axes of `parent` that `slice` has at extent 1 and `parent` does not.
pub fn sliced_axes(parent: &[u64], slice: &[u64]) -> Vec<usize> {
    parent.iter().zip(slice).enumerate().filter(|(_, (&p, &s))| s == 1 && p != 1).map(|(i, _)| i).collect()
}

/// The reduce and broadcast ops of a function as slice edges.
pub fn slice_edges(func: &Func, ops: &[OpId]) -> Vec<SliceEdge> {
    let body = &func.body;
    let shape = |v: Value| body.ty(v).as_tile().and_then(|t| t.static_shape()).unwrap_or_default();
    let mut edges = Vec::new();
    for &id in ops {
        let op = body.op(id);
        let Some(result) = op.result() else { continue };
        let (parent, slice) = match typed::AnyOp::from_op(op) {
            Some(typed::AnyOp::Reduce(r)) => (r.source, result),
            Some(typed::AnyOp::Broadcast(b)) => (result, b.source),
            _ => continue,
        };
        let axes = sliced_axes(&shape(parent), &shape(slice));
        edges.push(SliceEdge { parent, slice, axes, op: id });
    }
    edges
}

/// Values per fragment vector of a thin tile with `registers` values per thread: pairs where it has two.
fn thin_fragment_values(registers: u32) -> u32 {
    registers.min(2)
}

/// The layout of a thin tile (`1xN`, `Mx1`, `1x1`) that no reduce or broadcast relates to a parent: the slice of
/// the default layout of the smallest tile of full fragments that covers it.
pub fn thin_default_layout(rows: u64, cols: u64, elem: ScalarType, num_warps: u32) -> Result<(LinearLayout, u32), String> {
    let (name, _) = match elem.bit_width() {
        16 => ("ldmatrix.x4", 8),
        32 | 1 => ("mma.m16n8k16.f32.c", 4),
        8 => ("mma.m16n8k32.s8.a", 16),
        bits => return Err(format!("register tiles of {bits}-bit '{elem}' elements have no layout yet")),
    };
    let h = hardware_layout(name).ok_or_else(|| format!("no hardware layout '{name}'"))?;
    let parent_rows = if rows == 1 { u64::from(h.rows) } else { rows };
    let parent_cols = if cols == 1 { u64::from(h.cols) } else { cols };
    let elem = if elem.bit_width() == 1 { ScalarType::F32 } else { elem };
    let (parent, _) = default_layout(parent_rows, parent_cols, elem, num_warps)
        .map_err(|m| format!("a thin tile takes the slice of the default layout of a {parent_rows}x{parent_cols} tile, and {m}"))?;
    let axes: Vec<usize> = [(0, rows), (1, cols)].iter().filter(|(_, n)| *n == 1).map(|(a, _)| *a).collect();
    let s = crate::slice_layout::slice(&parent, &axes)?;
    let registers = s.layout.in_dim_size("register").unwrap_or(1);
    Ok((s.layout, thin_fragment_values(registers)))
}

/// Gives every thin side of an edge the slice of its parent's layout (repeating while a slice is itself a parent,
/// `1xN` → `1x1`). A thin class that two edges give different slices (a row vector broadcast against two tiles
/// of different layouts) is a conflict at the second edge, which [`crate::layout_conversion::insert_conversions`]
/// resolves with a `tile.convert_layout` of its thin side.
fn propagate_slices(
    func: &Func,
    edges: &[SliceEdge],
    classes: &mut LayoutClasses,
    chosen: &mut HashMap<Value, (LinearLayout, u32, Role)>,
    warps: u32,
) -> Result<Option<LayoutConflict>, Diagnostic> {
    // The edge that gave each thin class its layout (for the conflict's note).
    let mut given_by: HashMap<Value, OpId> = HashMap::default();
    let mut progress = true;
    while progress {
        progress = false;
        for e in edges {
            let (pc, sc) = (classes.class_of(e.parent), classes.class_of(e.slice));
            let Some((parent, _, _)) = chosen.get(&pc).cloned() else { continue };
            let span = op_span(func, e.op);
            let s = crate::slice_layout::slice(&parent, &e.axes)
                .map_err(|m| Diagnostic::error(span, format!("no slice layout for this op: {m}")))?;
            let registers = s.layout.in_dim_size("register").unwrap_or(1);
            match chosen.get(&sc) {
                Some((l, _, _)) if *l != s.layout => {
                    let other = given_by.get(&sc).copied().unwrap_or(e.op);
                    return Ok(Some(LayoutConflict { op: e.op, operand: e.slice, role: Role::Free, other }));
                }
                Some(_) => {}
                None => {
                    chosen.insert(sc, (s.layout, thin_fragment_values(registers), Role::Free));
                    given_by.insert(sc, e.op);
                    progress = true;
                }
            }
        }
    }
    // A thin side whose parent never got a layout (only through other thin tiles): the thin default.
    for e in edges {
        for v in [e.slice, e.parent] {
            let c = classes.class_of(v);
            if chosen.contains_key(&c) {
                continue;
            }
            let Some(t) = func.body.ty(v).as_tile() else { continue };
            let span = op_span(func, e.op);
            let Some(&[rows, cols]) = t.static_shape().as_deref() else {
                return Err(not_rank2(span, t));
            };
            let (l, n) = thin_default_layout(rows, cols, t.elem, warps).map_err(|m| Diagnostic::error(span, format!("no layout for '{t}': {m}")))?;
            chosen.insert(c, (l, n, Role::Free));
        }
    }
    Ok(None)
}

/// Runs layout assignment on every function of a module: writes `#linear<...>` layouts into every register
/// tile type, `num_warps` into the function, and `mmaShape`/`warpGrid` onto each `tile.mma`.
pub fn assign_layouts(module: &mut Module) -> Result<(), Diagnostic> {
    for func in &mut module.funcs {
        assign_layouts_in(func)?;
    }
    Ok(())
}

/// [`assign_layouts`] for one function.
pub fn assign_layouts_in(func: &mut Func) -> Result<(), Diagnostic> {
    assign_layouts_for(func, tilec_ir::Target::default()).map(|_| ())
}

/// [`assign_layouts_in`] for a target, with conversions where requirements conflict
/// ([`crate::layout_conversion`]); returns their remarks.
pub fn assign_layouts_for(func: &mut Func, target: tilec_ir::Target) -> Result<Vec<crate::layout_conversion::ConversionRemark>, Diagnostic> {
    // wgmma or mma.sync per tile.mma (recorded in the op, so later runs find the same choice).
    let choices = crate::wgmma::choose_instructions(func, target)?;
    let mut remarks: Vec<crate::layout_conversion::ConversionRemark> =
        choices.into_iter().map(|c| crate::layout_conversion::ConversionRemark { span: c.span, message: c.message }).collect();
    let more = assign_layouts_after_choice(func, target)?;
    remarks.extend(more);
    Ok(remarks)
}

fn assign_layouts_after_choice(func: &mut Func, target: tilec_ir::Target) -> Result<Vec<crate::layout_conversion::ConversionRemark>, Diagnostic> {
    crate::layout_conversion::insert_conversions(func)?;
    write_layouts(func)?;
    let (expanded, remarks) = crate::layout_conversion::expand_through_shared(func, target)?;
    if expanded {
        // The loads out of the scratch tiles are new values: give them their layouts.
        write_layouts(func)?;
    }
    Ok(remarks)
}

fn write_layouts(func: &mut Func) -> Result<(), Diagnostic> {
    let mut solution = solve_layouts(func)?;
    let warps = num_warps(func);
    func.attrs.insert(NUM_WARPS_ATTR.to_string(), Attribute::Int(warps as i64));
    for v in live_values(func) {
        let i = v.index();
        let is_reg = matches!(func.body.ty(v), Type::Tile(t) if t.space == MemorySpace::Register);
        if !is_reg {
            continue;
        }
        if let Some((layout, _, _)) = solution.of(v).cloned() {
            if let Type::Tile(t) = &mut func.body.values[i].ty {
                t.layout = Some(Layout::Linear(layout));
            }
        }
    }
    for (id, asg) in &solution.mmas {
        let op = func.body.op_mut(*id);
        if let Some(mma) = op.view::<typed::Mma>() {
            let MmaInstr { m, n, k, .. } = asg.instr;
            op.set_from(typed::Mma { mma_shape: Some(MmaShape { m, n, k }), warp_grid: Some(vec![asg.warps.0, asg.warps.1]), ..mma });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_prefer_balanced_rows_first() {
        assert_eq!(warp_grids(4), vec![(2, 2), (4, 1), (1, 4)]);
        assert_eq!(warp_grids(8)[0], (4, 2));
        assert_eq!(warp_grids(1), vec![(1, 1)]);
    }

    #[test]
    fn small_tiles_are_replicated_over_the_warps() {
        let (l, values) = default_layout(16, 8, ScalarType::I32, 4).unwrap();
        assert_eq!(values, 4);
        assert_eq!(l.in_dim_size("warp"), Some(4));
        assert_eq!(l.apply(&[3, 31, 3]).unwrap(), l.apply(&[3, 31, 0]).unwrap());
    }

    #[test]
    fn gemm_layouts_cover_the_tiles() {
        let asg = assign_mma(128, 128, 32, ScalarType::F16, ScalarType::F32, 4).unwrap();
        assert_eq!(asg.warps, (2, 2));
        // A: 128x32 over (8 values x 2 k x 4 m registers, 32 lanes, 4 warps), replicated over wn.
        assert_eq!(asg.a.out_dim_size("row"), Some(128));
        assert_eq!(asg.a.out_dim_size("col"), Some(32));
        assert_eq!(asg.a.in_dim_size("register"), Some(64));
        assert_eq!(asg.a.apply(&[0, 0, 1]).unwrap(), vec![64, 0]);
        assert_eq!(asg.a.apply(&[0, 0, 2]).unwrap(), vec![0, 0]);
        assert_eq!(asg.c.apply(&[0, 0, 3]).unwrap(), vec![64, 64]);
        assert!(asg.c.is_bijective());
    }
}

/// The `layout-assignment` pass (see the [module documentation](self)).
#[derive(Clone, Copy, Debug, Default)]
pub struct LayoutAssignment;

impl crate::Pass for LayoutAssignment {
    fn name(&self) -> &'static str {
        "layout-assignment"
    }

    fn description(&self) -> &'static str {
        "choose mma instruction shapes and warp grids; give every register tile a distributed #linear layout"
    }

    fn run(&self, module: &mut Module, cx: &mut crate::PassContext) -> Result<(), Diagnostic> {
        for func in &mut module.funcs {
            for remark in assign_layouts_for(func, cx.target)? {
                cx.remark(remark.span, remark.message);
            }
        }
        Ok(())
    }
}
