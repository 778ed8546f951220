//! `CopyPlan`: how a warp moves a shared tile into a distributed register tile (seed 004's copy plan).
//!
//! The plan is computed from the source (shape, element width, memory layout with any swizzle) and the
//! destination's distributed layout (`register`, `lane`, `warp` → `row`, `col`), before any IR is emitted,
//! and is a value that can be printed and tested on its own. [`CopyPlan::new`] tries, in order,
//! `ldmatrix.x4`, `.x4.trans`, `.x2`, `.x2.trans`, `.x1`, `.x1.trans`; an instruction fits when
//!
//! - the destination restricted to `register` bit 0 and all `lane` bits is exactly the hardware layout of
//!   one 8x8 matrix (`ldmatrix.x1` or `ldmatrix.x1.trans` of the `tilec-layout` catalogue), and
//! - `register` bits `1..=log2(n)` (which of the `n` matrices) and every further `register` and `warp`
//!   bit translate whole 8x8 matrices (multiples of 8 in row and col) with disjoint bits, so that the
//!   layout is *additive*: the coordinate of any (register, lane, warp) is the sum of the images of its
//!   bits, and a thread can compute addresses with additions.
//!
//! For the catalogue's placement of the four matrices (`r8`, `c8`) the first condition with the matrix
//! bits is exactly "the destination restricted to the instruction's register bits and the lane bits equals
//! the `ldmatrix.x4` hardware layout"; allowing any 8-aligned placement is more general because the
//! lanes of each group `8i..8i+7` supply their own row addresses. The remaining register bits and the
//! warp bits enumerate instances: register bits in temporal order (one `ldmatrix` each), warp bits in
//! space (each warp issues its own). Each lane `l` supplies the address of row `l % 8` of matrix
//! `(l / 8) % n`: the instance origin plus the matrix origin plus `(l % 8, 0)` (for the catalogue
//! placement this is [`tilec_ir::layout::ldmatrix_row_addresses`]). Each such row of 8 elements must be
//! contiguous and 16-byte aligned in the shared tile's memory layout (checked for every instance, lane
//! and warp; a swizzle whose base is at least 3 bits on 16-bit elements keeps it so).
//!
//! 8-bit elements go through `ldmatrix` as 16-bit pairs when both the destination and the memory layout
//! keep adjacent elements of a storage row together ([`b16_pair_view`]: register bit 0, and offset bit 0,
//! step one column, and nothing else moves an odd number of columns). The plan is made on the 16-bit view
//! of both, where the conditions above apply unchanged, and its columns are doubled back. The m16n8k32 s8
//! A fragment (four consecutive k in each 32-bit register) of a row-major tile is, viewed so, the m16n8k16
//! f16 A fragment: `ldmatrix.x4`. The s8 B fragment of a row-major KxN tile also holds four consecutive k
//! per register, but they lie in four storage rows, so it has no such view, and `ldmatrix.trans` cannot
//! produce it either: it moves 16-bit units, so each 32-bit register gets two adjacent n of each of two
//! k, where the fragment wants one n in all four bytes. That B is loaded per element. (Two `.trans`
//! registers whose matrices take rows `4j, 4j+1` and `4j+2, 4j+3` do hold four consecutive k of the
//! columns `2g` and `2g+1`, which byte permutes would separate; that fits a B and C whose n order puts
//! lane group `g` on columns `2g, 2g+1` of every 16, a layout-assignment choice, not a copy plan.) A
//! column-major (K-contiguous) B has the view on its transpose and is plain `ldmatrix` like A.
//!
//! When no `ldmatrix` fits (32-bit elements, 8-bit ones without the pair view, or an incompatible layout
//! or swizzle), the plan falls back to per-thread `nvgpu.load`s of the widest vector (at most 16 bytes) of
//! elements that are consecutive in both the register order and the memory layout, and says so.
//!
//! A source whose storage runs down the columns (`#col_major`, possibly swizzled: offset bit 0 moves to
//! the next row) is planned on its transpose: the `row`/`col` outputs of the memory layout and of the
//! destination are exchanged, so that the rows above are its storage rows, and the plan's addresses are
//! exchanged back. `ldmatrix` (and a vector load) moves elements consecutive in storage order, which in a
//! column-major tile are consecutive rows (see `tilec_ir::sim`); so the m16n8k16 A fragment, which is
//! `ldmatrix` of a row-major tile, is `ldmatrix.trans` of a column-major one, and B the other way round.

use std::fmt;

use tilec_ir::layout::{hardware_layout, LinearLayout};

/// The shared-memory side of a copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedSource {
    pub rows: u32,
    pub cols: u32,
    pub elem_bits: u32,
    /// `offset -> (row, col)` in element offsets (row-major, swizzled, ...).
    pub memory: LinearLayout,
    /// How the memory layout is written in the IR (for printing).
    pub memory_name: String,
}

/// The instruction a plan issues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyInstr {
    /// `nvgpu.ldmatrix` of `num` 8x8 matrices.
    LdMatrix { num: u32, trans: bool },
    /// Per-thread `nvgpu.load` of `width` consecutive elements (a scalar when 1).
    Load { width: u32 },
}

impl fmt::Display for CopyInstr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CopyInstr::LdMatrix { num, trans } => write!(f, "ldmatrix.x{num}{}", if *trans { ".trans" } else { "" }),
            CopyInstr::Load { width: 1 } => write!(f, "load (scalar)"),
            CopyInstr::Load { width } => write!(f, "load.v{width}"),
        }
    }
}

/// One instruction instance of a warp, in temporal order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyInstance {
    /// The first of the destination register values it fills (`values_per_instance` consecutive ones).
    pub first_register: u32,
    /// `(row, col)` of its origin for lane 0 of warp 0 (the image of its register bits).
    pub origin: (u32, u32),
}

/// A planned shared → register copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyPlan {
    pub source: SharedSource,
    pub instr: CopyInstr,
    /// Register values each instance fills per lane (`2 * num` for ldmatrix).
    pub values_per_instance: u32,
    /// Per-thread register values of the destination.
    pub register_values: u32,
    pub instances: Vec<CopyInstance>,
    /// Image of each lane bit: for ldmatrix, in the row *address* the lane supplies; for loads, in the
    /// coordinate of the lane's first element.
    pub lane_bases: Vec<(u32, u32)>,
    /// Image of each warp bit (`(0, 0)` where the tile is replicated over that bit).
    pub warp_bases: Vec<(u32, u32)>,
    /// Why `ldmatrix` was not used, for a fallback plan.
    pub fallback_reason: Option<String>,
    /// Planned on the transpose (the source's storage runs down its columns); the addresses above are in
    /// the source's own `(row, col)`.
    pub transposed: bool,
}

fn named_bases(l: &LinearLayout, dim: &str) -> Vec<(u32, u32)> {
    let (ri, ci) = (l.out_dim_index("row"), l.out_dim_index("col"));
    l.bases(dim)
        .map(|bs| bs.iter().map(|b| (ri.map_or(0, |i| b[i]), ci.map_or(0, |i| b[i]))).collect())
        .unwrap_or_default()
}

/// The images of the destination's `register`, `lane`, `warp` bits as `(row, col)` pairs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DistributedBases {
    pub register: Vec<(u32, u32)>,
    pub lane: Vec<(u32, u32)>,
    pub warp: Vec<(u32, u32)>,
}

impl DistributedBases {
    pub fn of(l: &LinearLayout) -> DistributedBases {
        DistributedBases { register: named_bases(l, "register"), lane: named_bases(l, "lane"), warp: named_bases(l, "warp") }
    }

    /// Whether XOR-ing the bases of any set of bits equals adding them: the nonzero bases have pairwise
    /// disjoint bits in each coordinate. Then `coord(r, l, w) = reg(r) + lane(l) + warp(w)`.
    pub fn is_additive(&self) -> bool {
        let (mut rows, mut cols) = (0u32, 0u32);
        for &(r, c) in self.register.iter().chain(&self.lane).chain(&self.warp) {
            if rows & r != 0 || cols & c != 0 {
                return false;
            }
            rows |= r;
            cols |= c;
        }
        true
    }

    /// `(row, col)` of register value `r` (lane 0, warp 0).
    pub fn register_coord(&self, r: u32) -> (u32, u32) {
        sum_bits(&self.register, r)
    }
}

/// Sum (= XOR, for additive bases) of the bases of the set bits of `x`.
pub fn sum_bits(bases: &[(u32, u32)], x: u32) -> (u32, u32) {
    bases.iter().enumerate().filter(|(b, _)| x >> b & 1 == 1).fold((0, 0), |(r, c), (_, &(br, bc))| (r ^ br, c ^ bc))
}

fn aligned8(&(r, c): &(u32, u32)) -> bool {
    r % 8 == 0 && c % 8 == 0
}

impl SharedSource {
    /// Whether consecutive elements in memory are consecutive rows (offset bit 0 moves down a column), as in
    /// a `#col_major` tile, swizzled or not.
    pub fn runs_down_columns(&self) -> bool {
        let first = self.memory.in_dim_names().first().map(|d| d.to_string());
        let step = first.map(|d| named_bases(&self.memory, &d)).and_then(|b| b.first().copied());
        matches!(step, Some((r, 0)) if r != 0)
    }
}

/// The same layout with its `row` and `col` outputs exchanged: the layout of the transposed tile.
fn swap_row_col(l: &LinearLayout) -> Result<LinearLayout, String> {
    let ins: Vec<(String, Vec<Vec<u32>>)> =
        l.in_dim_names().into_iter().map(|d| (d.to_string(), l.bases(d).unwrap_or_default().to_vec())).collect();
    let outs: Vec<(String, u32)> = l
        .out_dims()
        .map(|(d, size)| (match d { "row" => "col", "col" => "row", other => other }.to_string(), size))
        .collect();
    LinearLayout::new(ins, outs).map_err(|e| format!("transposing a layout: {e}"))
}

/// The 16-bit view of a layout of 8-bit elements (`pair_dim`, ... → `row`, `col`), in which each pair of
/// adjacent elements `(r, 2j)`, `(r, 2j + 1)` of a row is one 16-bit element `(r, j)`.
///
/// It exists when bit 0 of `pair_dim` (the lowest register bit of a distributed layout, offset bit 0 of a
/// memory layout) steps exactly one column, and no other bit moves by an odd number of columns: then the
/// two values `2u`, `2u + 1` of `pair_dim` are the low and high byte of one 16-bit unit, in the order of
/// memory (little-endian), and the unit's column is the pair's column halved. The view is the composition
/// with the map `(row, col) -> (row, col / 2)`, which sends bit 0 of `pair_dim` to zero, followed by
/// dropping that bit. For the m16n8k32 s8 A fragment (4 consecutive k per 32-bit register) the view is
/// the m16n8k16 f16 A fragment, i.e. `ldmatrix.x4` (see the copy-plan tests, which compose the catalogue's
/// layouts).
pub fn b16_pair_view(l: &LinearLayout, pair_dim: &str) -> Result<LinearLayout, String> {
    let (Some(rows), Some(cols)) = (l.out_dim_size("row"), l.out_dim_size("col")) else {
        return Err("has no row and col".into());
    };
    if l.out_dims().count() != 2 || cols < 2 {
        return Err(format!("is not a map onto rows and at least 2 columns: {:?}", l.out_dim_names()));
    }
    let bases = named_bases(l, pair_dim);
    if bases.first() != Some(&(0, 1)) {
        return Err(format!("does not step one column with {pair_dim} bit 0, so adjacent elements are not a pair"));
    }
    for d in l.in_dim_names() {
        for (i, &(_, c)) in named_bases(l, d).iter().enumerate() {
            if c & 1 == 1 && !(d == pair_dim && i == 0) {
                return Err(format!("moves an odd number of columns with {d} bit {i}, which would split a pair"));
            }
        }
    }
    let bits = |n: u32| n.trailing_zeros();
    let halve = LinearLayout::new(
        [
            ("row", (0..bits(rows)).map(|i| vec![1 << i, 0]).collect::<Vec<_>>()),
            ("col", (0..bits(cols)).map(|i| vec![0, if i == 0 { 0 } else { 1 << (i - 1) }]).collect()),
        ],
        [("row", rows), ("col", cols / 2)],
    )
    .map_err(|e| e.to_string())?;
    let halved = l.compose(&halve).map_err(|e| e.to_string())?;
    let ins: Vec<(String, Vec<Vec<u32>>)> = halved
        .in_dim_names()
        .into_iter()
        .map(|d| {
            let b = halved.bases(d).unwrap_or_default();
            (d.to_string(), if d == pair_dim { b.get(1..).unwrap_or_default().to_vec() } else { b.to_vec() })
        })
        .collect();
    let outs: Vec<(String, u32)> = halved.out_dims().map(|(d, n)| (d.to_string(), n)).collect();
    LinearLayout::new(ins, outs).map_err(|e| e.to_string())
}

impl CopyPlan {
    /// Plans the copy of `source` into registers distributed by `dst` (`register`, `lane`, `warp` →
    /// `row`, `col`, covering the source's shape). Errors only when even per-thread loads cannot express
    /// the layout (a non-additive destination).
    pub fn new(source: SharedSource, dst: &LinearLayout) -> Result<CopyPlan, String> {
        Self::for_fragments(source, dst, None)
    }

    /// [`CopyPlan::new`] for a destination held as fragments of `fragment_values` register values each:
    /// an 8-bit `ldmatrix` (of pairs) then moves at most one fragment per instance. A wider one would
    /// have to be split into fragments by single-byte extracts and inserts, which LLVM's NVPTX backend
    /// turns into chains of byte permutes (`prmt`); an instance per fragment hands its vector over whole.
    /// (16-bit results split into whole 32-bit registers, so 16-bit plans take the widest instruction.)
    pub fn for_fragments(source: SharedSource, dst: &LinearLayout, fragment_values: Option<u32>) -> Result<CopyPlan, String> {
        if !source.runs_down_columns() {
            return Self::plan(source, dst, fragment_values);
        }
        let transposed_source = SharedSource {
            rows: source.cols,
            cols: source.rows,
            elem_bits: source.elem_bits,
            memory: swap_row_col(&source.memory)?,
            memory_name: source.memory_name.clone(),
        };
        let plan = Self::plan(transposed_source, &swap_row_col(dst)?, fragment_values)?;
        let swap = |v: &[(u32, u32)]| v.iter().map(|&(r, c)| (c, r)).collect::<Vec<_>>();
        Ok(CopyPlan {
            instances: plan.instances.iter().map(|i| CopyInstance { first_register: i.first_register, origin: (i.origin.1, i.origin.0) }).collect(),
            lane_bases: swap(&plan.lane_bases),
            warp_bases: swap(&plan.warp_bases),
            transposed: true,
            source,
            ..plan
        })
    }

    /// A plan of per-thread accesses only (no `ldmatrix`): the widest vector of register values that are
    /// consecutive in the registers and in memory. The store direction uses it where no `stmatrix` exists
    /// (`st.shared`); read as loads it is the fallback of [`CopyPlan::new`].
    pub fn per_thread(source: SharedSource, dst: &LinearLayout) -> Result<CopyPlan, String> {
        let bases = DistributedBases::of(dst);
        if !bases.is_additive() {
            return Err("the register layout is not additive (its bits overlap), so threads cannot compute their addresses by addition".into());
        }
        Self::loads(source, &bases)
    }

    /// [`CopyPlan::new`] for a source whose rows are its storage rows.
    fn plan(source: SharedSource, dst: &LinearLayout, fragment_values: Option<u32>) -> Result<CopyPlan, String> {
        let bases = DistributedBases::of(dst);
        if bases.lane.len() != 5 {
            return Err(format!("the destination layout has {} lane bits, not 5", bases.lane.len()));
        }
        if !bases.is_additive() {
            return Err("the destination layout is not additive (its bits overlap), so threads cannot compute their addresses by addition".into());
        }
        let mut reasons = Vec::new();
        match source.elem_bits {
            16 => {
                for (num, trans) in [(4, false), (4, true), (2, false), (2, true), (1, false), (1, true)] {
                    match Self::try_ldmatrix(&source, &bases, num, trans) {
                        Ok(plan) => return Ok(plan),
                        Err(why) => reasons.push(format!("ldmatrix.x{num}{}: {why}", if trans { ".trans" } else { "" })),
                    }
                }
            }
            8 => match Self::try_ldmatrix_pairs(&source, dst, fragment_values) {
                Ok(plan) => return Ok(plan),
                Err(why) => reasons.push(why),
            },
            bits => reasons.push(format!("ldmatrix moves 16-bit elements, these are {bits}-bit")),
        }
        let why = reasons.first().cloned().unwrap_or_default();
        let mut plan = Self::loads(source, &bases)?;
        plan.fallback_reason = Some(if reasons.len() > 1 { format!("no ldmatrix fits ({})", reasons.join("; ")) } else { why });
        Ok(plan)
    }

    fn try_ldmatrix(source: &SharedSource, bases: &DistributedBases, num: u32, trans: bool) -> Result<CopyPlan, String> {
        let name = if trans { "ldmatrix.x1.trans" } else { "ldmatrix.x1" };
        let hw = DistributedBases::of(&hardware_layout(name).ok_or("no ldmatrix.x1 in the catalogue")?.layout);
        let matrix_bits = num.trailing_zeros() as usize;
        let instr_bits = 1 + matrix_bits;
        if bases.register.len() < instr_bits {
            return Err(format!("needs {} register values per lane, the layout has {}", 1 << instr_bits, 1u32 << bases.register.len()));
        }
        if bases.register[0] != hw.register[0] || bases.lane != hw.lane {
            return Err("the lanes' fragment of one 8x8 matrix differs from the instruction's".into());
        }
        let translations = bases.register[1..].iter().chain(&bases.warp);
        if !translations.clone().all(aligned8) {
            return Err("the other register and warp bits do not move whole 8x8 matrices".into());
        }
        // Lane l supplies row l % 8 of matrix (l / 8) % num.
        let mut lane_bases = vec![(1, 0), (2, 0), (4, 0), (0, 0), (0, 0)];
        lane_bases[3..3 + matrix_bits].copy_from_slice(&bases.register[1..1 + matrix_bits]);
        let values = 2 * num;
        let count = 1u32 << bases.register.len() >> instr_bits;
        let instances: Vec<CopyInstance> = (0..count)
            .map(|i| {
                let first = i * values;
                CopyInstance { first_register: first, origin: bases.register_coord(first) }
            })
            .collect();
        let plan = CopyPlan {
            source: source.clone(),
            instr: CopyInstr::LdMatrix { num, trans },
            values_per_instance: values,
            register_values: 1 << bases.register.len(),
            instances,
            lane_bases,
            warp_bases: bases.warp.clone(),
            fallback_reason: None,
            transposed: false,
        };
        plan.check_rows_contiguous(8, 32.min(8 * num))?;
        Ok(plan)
    }

    /// `ldmatrix` of 8-bit elements moved as 16-bit pairs: plans on the [`b16_pair_view`] of the source's
    /// memory layout and of the destination, then scales the plan's columns back to 8-bit elements. Only
    /// the plain form: `.trans` would transpose 16-bit units, giving each 32-bit register two bytes of each
    /// of two storage rows, which no 8-bit mma fragment holds (and MLIR's `nvgpu.ldmatrix` accepts `.trans`
    /// only on 16-bit elements).
    fn try_ldmatrix_pairs(source: &SharedSource, dst: &LinearLayout, fragment_values: Option<u32>) -> Result<CopyPlan, String> {
        let offset = source.memory.in_dim_names().first().map(|d| d.to_string()).ok_or("the shared layout has no offset dimension")?;
        let memory = b16_pair_view(&source.memory, &offset).map_err(|e| format!("8-bit elements as 16-bit pairs: the shared layout {e}"))?;
        let dst16 = b16_pair_view(dst, "register").map_err(|e| format!("8-bit elements as 16-bit pairs: the destination {e}"))?;
        let pairs = SharedSource { rows: source.rows, cols: source.cols / 2, elem_bits: 16, memory, memory_name: source.memory_name.clone() };
        let bases = DistributedBases::of(&dst16);
        let mut reasons = Vec::new();
        for num in [4, 2, 1] {
            if num > 1 && fragment_values.is_some_and(|v| 4 * num > v) {
                reasons.push(format!("ldmatrix.x{num} of pairs: {} values per lane would straddle fragments of {}", 4 * num, fragment_values.unwrap_or(0)));
                continue;
            }
            match Self::try_ldmatrix(&pairs, &bases, num, false) {
                Ok(plan) => {
                    let wide = |&(r, c): &(u32, u32)| (r, 2 * c);
                    let plan = CopyPlan {
                        source: source.clone(),
                        values_per_instance: 2 * plan.values_per_instance,
                        register_values: 2 * plan.register_values,
                        instances: plan
                            .instances
                            .iter()
                            .map(|i| CopyInstance { first_register: 2 * i.first_register, origin: wide(&i.origin) })
                            .collect(),
                        lane_bases: plan.lane_bases.iter().map(wide).collect(),
                        warp_bases: plan.warp_bases.iter().map(wide).collect(),
                        ..plan
                    };
                    // The same condition in the 8-bit tile's own terms: every row is 16 contiguous,
                    // 16-byte aligned bytes (implied by the view; checked rather than assumed).
                    match plan.check_rows_contiguous(16, 32.min(8 * num)) {
                        Ok(()) => return Ok(plan),
                        Err(why) => reasons.push(format!("ldmatrix.x{num} of pairs: {why}")),
                    }
                }
                Err(why) => reasons.push(format!("ldmatrix.x{num} of pairs: {why}")),
            }
        }
        Err(reasons.join("; "))
    }

    fn loads(source: SharedSource, bases: &DistributedBases) -> Result<CopyPlan, String> {
        let max_width = (128 / source.elem_bits.max(1)).max(1);
        let mut width = 1;
        while width * 2 <= max_width
            && (width.trailing_zeros() as usize) < bases.register.len()
            && bases.register[width.trailing_zeros() as usize] == (0, width)
        {
            width *= 2;
        }
        loop {
            let count = (1u32 << bases.register.len()) / width;
            let plan = CopyPlan {
                source: source.clone(),
                instr: CopyInstr::Load { width },
                values_per_instance: width,
                register_values: 1 << bases.register.len(),
                instances: (0..count)
                    .map(|i| CopyInstance { first_register: i * width, origin: bases.register_coord(i * width) })
                    .collect(),
                lane_bases: bases.lane.clone(),
                warp_bases: bases.warp.clone(),
                fallback_reason: None,
                transposed: false,
            };
            match plan.check_rows_contiguous(width, 32) {
                Ok(()) => return Ok(plan),
                Err(_) if width > 1 => width /= 2,
                Err(e) => return Err(e),
            }
        }
    }

    /// Every address a lane supplies starts `len` elements that are consecutive and `len`-aligned in the
    /// shared tile's memory layout, for every instance and warp (lanes `0..lanes`).
    fn check_rows_contiguous(&self, len: u32, lanes: u32) -> Result<(), String> {
        let inv = self.source.memory.invert().map_err(|e| format!("the shared layout is not invertible: {e}"))?;
        // `inv` is linear over F2: the offset of (row, col) is the XOR of the images (first output) of the
        // set bits of `row` and `col` (what `inv.apply` computes, without its allocations: this runs for
        // every element of every instance); `None` past a dimension's size. A dimension other than `row`
        // and `col` is 0; one that `inv` lacks is ignored.
        let images = |dim: &str| -> Option<Vec<u32>> {
            inv.bases(dim).map(|bases| bases.iter().map(|image| image.first().copied().unwrap_or(0)).collect())
        };
        let (row_images, col_images) = (images("row"), images("col"));
        let part = |x: u32, images: &Option<Vec<u32>>| -> Option<u32> {
            let Some(images) = images else { return Some(0) };
            if u64::from(x) >= 1u64 << images.len() {
                return None;
            }
            Some(images.iter().enumerate().filter(|(bit, _)| x >> bit & 1 == 1).fold(0, |o, (_, image)| o ^ image))
        };
        let offset = |row: u32, col: u32| -> Option<u32> { Some(part(row, &row_images)? ^ part(col, &col_images)?) };
        let warps = 1u32 << self.warp_bases.len();
        for inst in &self.instances {
            for w in 0..warps {
                let wo = sum_bits(&self.warp_bases, w);
                for lane in 0..lanes {
                    let lo = sum_bits(&self.lane_bases, lane);
                    let (row, col) = (inst.origin.0 + wo.0 + lo.0, inst.origin.1 + wo.1 + lo.1);
                    if row >= self.source.rows || col + len > self.source.cols {
                        return Err(format!("lane {lane} of warp {w} would read ({row}, {col}) outside the {}x{} tile", self.source.rows, self.source.cols));
                    }
                    let first = offset(row, col).ok_or("bad shared layout")?;
                    if first % len != 0 {
                        return Err(format!("row ({row}, {col}) is not {}-byte aligned in shared memory", len * self.source.elem_bits / 8));
                    }
                    for e in 1..len {
                        if offset(row, col + e) != Some(first + e) {
                            return Err(format!("the {len} elements at ({row}, {col}) are not contiguous in shared memory"));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether this `ldmatrix` plan moves 8-bit elements as 16-bit pairs (see [`b16_pair_view`]).
    pub fn moves_pairs(&self) -> bool {
        matches!(self.instr, CopyInstr::LdMatrix { .. }) && self.source.elem_bits == 8
    }

    /// Instances per warp.
    pub fn instruction_count(&self) -> usize {
        self.instances.len()
    }

    /// The `(row, col)` lane `lane` of warp `warp` supplies for an instance (for loads: the coordinate of
    /// its first element).
    pub fn address(&self, instance: usize, lane: u32, warp: u32) -> (u32, u32) {
        let o = self.instances[instance].origin;
        let l = sum_bits(&self.lane_bases, lane);
        let w = sum_bits(&self.warp_bases, warp);
        (o.0 + l.0 + w.0, o.1 + l.1 + w.1)
    }
}

fn show_bases(bases: &[(u32, u32)]) -> String {
    let items: Vec<String> = bases.iter().map(|(r, c)| format!("({r},{c})")).collect();
    format!("[{}]", items.join(" "))
}

impl fmt::Display for CopyPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.source;
        writeln!(
            f,
            "copy plan: shared {}x{} ({}-bit, {}) -> {} register values per thread",
            s.rows, s.cols, s.elem_bits, s.memory_name, self.register_values
        )?;
        writeln!(
            f,
            "  instruction: {} x {} per warp ({} values per lane each)",
            self.instr,
            self.instruction_count(),
            self.values_per_instance
        )?;
        if self.transposed {
            writeln!(f, "  planned on the transpose: the tile's storage runs down its columns")?;
        }
        if self.moves_pairs() {
            writeln!(f, "  8-bit elements moved as 16-bit pairs: a register value pair (2i, 2i+1) is one b16 element")?;
        }
        if let Some(why) = &self.fallback_reason {
            writeln!(f, "  fallback: {why}")?;
        }
        let what = match (self.instr, self.transposed) {
            (CopyInstr::LdMatrix { .. }, false) => "row address",
            // The storage rows ldmatrix reads are columns of the tile.
            (CopyInstr::LdMatrix { .. }, true) => "column address",
            _ => "first element",
        };
        writeln!(f, "  lane bits -> {what}: {}", show_bases(&self.lane_bases))?;
        writeln!(f, "  warp bits -> offset: {}", show_bases(&self.warp_bases))?;
        for (i, inst) in self.instances.iter().enumerate() {
            writeln!(
                f,
                "  #{i}: registers {}..{} <- origin ({}, {})",
                inst.first_register,
                inst.first_register + self.values_per_instance,
                inst.origin.0,
                inst.origin.1
            )?;
        }
        Ok(())
    }
}
