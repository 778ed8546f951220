//! Shared-memory bank-conflict analysis of warp-level (`nvgpu`) IR: [`analyze_bank_conflicts`] gives a
//! [`BankConflictReport`], the table `tilec FILE --report bank-conflicts` prints.
//!
//! # The hardware model
//! Shared memory has 32 banks of 4 bytes; one *wavefront* serves at most one 4-byte word per bank
//! (128 bytes). A warp-level access is split into *phases*, each served on its own:
//! - accesses of at most 4 bytes per lane: one phase of 32 lanes;
//! - 8 bytes per lane: two phases of 16 lanes (lanes 0-15, 16-31);
//! - 16 bytes per lane (`nvgpu.device_async_copy` of 16 bytes, `vector<16xi8>` loads, ...): four phases of
//!   8 lanes;
//! - `nvgpu.ldmatrix` / `nvgpu.stmatrix` with `numTiles = n`: `n` phases, phase `i` the 8 row addresses
//!   that lanes `8i..8i+7` supply (16 bytes each: one 8x8 b16 matrix is 128 bytes). `.trans` changes
//!   what lands in which register, not the addresses, so it costs the same.
//!
//! A phase needs as many wavefronts as the largest number of *distinct* words that fall into one bank
//! (lanes reading the same word are served by one broadcast). Its minimum is `ceil(distinct words / 32)`.
//! An access is conflict-free when every phase takes its minimum.
//!
//! # Evaluating addresses
//! The analysis runs the kernel's scalar index arithmetic once per lane ([`eval`]): `nvgpu.thread_id`,
//! `lane_id`, `warp_id`, `tile.constant`, `tile.add/sub/mul/div/rem/min/max/cmp/select/cast`, with
//! `tile.block_id` and `tile.dim` taken from [`BankConflictOptions`], for every warp of the block
//! (`num_warps`), and each `tile.for` for its first [`BankConflictOptions::loop_iterations`] iterations
//! (lanes whose loop ended are inactive). Each lane's index is mapped to a byte address through the
//! shared tile's memory layout (row-major, column-major, `#swizzle<...>`, or any linear layout);
//! shared tiles are placed as the simulator places them (program order, 128-byte aligned).
//! An access whose address depends on something else (a loaded value, a vector element) is listed as
//! not analysed, with the reason.

mod eval;

use std::collections::BTreeSet;
use std::fmt;

use tilec_ir::{Func, Module, OpId, SourceFile, Span, Value};

pub use eval::element_offset;

/// Number of shared-memory banks.
pub const NUM_BANKS: u64 = 32;
/// Width of one bank in bytes.
pub const BANK_BYTES: u64 = 4;
/// Bytes one wavefront serves when there are no conflicts.
pub const WAVEFRONT_BYTES: u64 = NUM_BANKS * BANK_BYTES;
/// Lanes of a warp.
pub const WARP_LANES: usize = 32;

/// How a warp-level access is split into phases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phasing {
    /// By the bytes each lane moves (4 or less: 1 phase of 32 lanes; 8: 2 of 16; 16 or more: 4 of 8).
    ByWidth,
    /// `ldmatrix`/`stmatrix` of this many 8x8 matrices: phase `i` = lanes `8i..8i+7`.
    Matrices(u32),
}

/// One warp-level shared-memory access: the byte address each lane touches (`None`: lane inactive or
/// not taking part) and how many bytes from there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarpAccess {
    pub addresses: [Option<u64>; WARP_LANES],
    pub bytes_per_lane: u32,
    pub phasing: Phasing,
}

/// The cost of one warp-level access.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccessCost {
    /// Phases with at least one active lane.
    pub phases: u32,
    /// The fewest wavefronts the bytes moved could take: per phase `ceil(distinct words / 32)`.
    pub min_wavefronts: u32,
    /// Wavefronts the hardware needs: per phase the most distinct words in one bank.
    pub wavefronts: u32,
}

impl AccessCost {
    /// `wavefronts / min_wavefronts` (1.0 when conflict-free or empty).
    pub fn conflict_factor(&self) -> f64 {
        if self.min_wavefronts == 0 {
            1.0
        } else {
            f64::from(self.wavefronts) / f64::from(self.min_wavefronts)
        }
    }

    pub fn is_conflict_free(&self) -> bool {
        self.wavefronts == self.min_wavefronts
    }
}

impl WarpAccess {
    /// An ordinary access (`ld.shared`, `st.shared`, `cp.async`) of `bytes_per_lane` bytes.
    pub fn new(addresses: [Option<u64>; WARP_LANES], bytes_per_lane: u32) -> WarpAccess {
        WarpAccess { addresses, bytes_per_lane, phasing: Phasing::ByWidth }
    }

    /// An `ldmatrix`/`stmatrix` of `num_matrices` 8x8 b16 matrices; lane `8i + r` gives row `r` of matrix `i`.
    pub fn matrices(addresses: [Option<u64>; WARP_LANES], num_matrices: u32) -> WarpAccess {
        WarpAccess { addresses, bytes_per_lane: 16, phasing: Phasing::Matrices(num_matrices) }
    }

    /// The lanes of each phase.
    pub fn phases(&self) -> Vec<std::ops::Range<usize>> {
        let lanes_per_phase = match self.phasing {
            Phasing::Matrices(n) => return (0..n.min(4) as usize).map(|i| 8 * i..8 * i + 8).collect(),
            Phasing::ByWidth if self.bytes_per_lane <= 4 => 32,
            Phasing::ByWidth if self.bytes_per_lane <= 8 => 16,
            Phasing::ByWidth => 8,
        };
        (0..WARP_LANES / lanes_per_phase).map(|i| lanes_per_phase * i..lanes_per_phase * (i + 1)).collect()
    }

    /// Counts the wavefronts the way the hardware serves the access (see the [module docs](self)).
    pub fn cost(&self) -> AccessCost {
        let mut cost = AccessCost::default();
        for lanes in self.phases() {
            let mut words = BTreeSet::new();
            for addr in self.addresses[lanes].iter().flatten() {
                let first = addr / BANK_BYTES;
                let last = (addr + u64::from(self.bytes_per_lane.max(1)) - 1) / BANK_BYTES;
                words.extend(first..=last);
            }
            if words.is_empty() {
                continue;
            }
            let mut per_bank = [0u32; NUM_BANKS as usize];
            for w in &words {
                per_bank[(w % NUM_BANKS) as usize] += 1;
            }
            cost.phases += 1;
            cost.min_wavefronts += (words.len() as u64).div_ceil(NUM_BANKS) as u32;
            cost.wavefronts += per_bank.iter().copied().max().unwrap_or(0);
        }
        cost
    }
}

/// What kind of shared-memory access an op is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    LdMatrix { num_tiles: u32, transpose: bool },
    StMatrix { num_tiles: u32, transpose: bool },
    /// `nvgpu.device_async_copy`: a write into shared memory.
    AsyncCopy,
    Load,
    Store,
}

impl fmt::Display for AccessKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let matrix = |f: &mut fmt::Formatter<'_>, name: &str, n: u32, t: bool| {
            write!(f, "{name}.x{n}{}", if t { ".trans" } else { "" })
        };
        match *self {
            AccessKind::LdMatrix { num_tiles, transpose } => matrix(f, "ldmatrix", num_tiles, transpose),
            AccessKind::StMatrix { num_tiles, transpose } => matrix(f, "stmatrix", num_tiles, transpose),
            AccessKind::AsyncCopy => f.write_str("cp.async"),
            AccessKind::Load => f.write_str("ld.shared"),
            AccessKind::Store => f.write_str("st.shared"),
        }
    }
}

/// Which warps of the block to analyse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WarpSelection {
    /// Every warp (`num_warps` of the function, default 4 as for layout assignment).
    All,
    /// Only these warps.
    Only(Vec<u32>),
}

/// Settings of [`analyze_bank_conflicts`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BankConflictOptions {
    pub warps: WarpSelection,
    /// Iterations of each `tile.for` evaluated (from the first); nested loops multiply.
    pub loop_iterations: u32,
    /// The value of every `tile.dim` (run-time extents of global tiles).
    pub dim_extent: i64,
    /// `tile.block_id` along x, y, z.
    pub block_id: [i64; 3],
    /// `tile.grid_dim` along x, y, z.
    pub grid_dim: [i64; 3],
    /// Upper bound on op executions per warp, so huge unrolled programs stay cheap.
    pub max_op_executions: u64,
}

impl Default for BankConflictOptions {
    /// All warps, 2 iterations of each loop, `tile.dim` = 1024, block (0, 0, 0) of an 8x8x1 grid.
    fn default() -> Self {
        BankConflictOptions {
            warps: WarpSelection::All,
            loop_iterations: 2,
            dim_extent: 1024,
            block_id: [0; 3],
            grid_dim: [8, 8, 1],
            max_op_executions: 2_000_000,
        }
    }
}

/// The accumulated cost of one access op over the (warp, iteration) instances evaluated.
#[derive(Clone, Debug, PartialEq)]
pub struct AccessReport {
    pub op: OpId,
    pub span: Span,
    pub kind: AccessKind,
    /// The shared tile, as `%name` (or `%<value number>`), with its type.
    pub tile: String,
    /// The shared tile's defining value (`tile.alloc_shared` result or argument; loop-carried copies
    /// resolve to it).
    pub tile_value: Value,
    pub tile_type: String,
    pub bytes_per_lane: u32,
    /// Warp-level executions evaluated.
    pub instances: u32,
    /// Sums over the instances.
    pub total: AccessCost,
    /// The instance with the highest conflict factor, and the warp it ran in.
    pub worst: AccessCost,
    pub worst_warp: u32,
}

impl AccessReport {
    pub fn conflict_factor(&self) -> f64 {
        self.total.conflict_factor()
    }

    pub fn is_conflict_free(&self) -> bool {
        self.total.is_conflict_free()
    }

    /// Minimum wavefronts per instance (the mean over instances).
    pub fn min_per_instance(&self) -> f64 {
        f64::from(self.total.min_wavefronts) / f64::from(self.instances.max(1))
    }

    /// Actual wavefronts per instance (the mean over instances).
    pub fn wavefronts_per_instance(&self) -> f64 {
        f64::from(self.total.wavefronts) / f64::from(self.instances.max(1))
    }
}

/// A shared-memory access whose addresses could not be computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unanalyzed {
    pub op: OpId,
    pub span: Span,
    pub op_name: &'static str,
    pub reason: String,
}

/// The bank conflicts of one function: one row per shared-memory access op, in program order.
#[derive(Clone, Debug, PartialEq)]
pub struct BankConflictReport {
    pub func: String,
    pub warps: Vec<u32>,
    pub loop_iterations: u32,
    pub accesses: Vec<AccessReport>,
    pub unanalyzed: Vec<Unanalyzed>,
    /// Set when [`BankConflictOptions::max_op_executions`] cut the evaluation short.
    pub truncated: bool,
}

impl BankConflictReport {
    /// The sums over every access.
    pub fn total(&self) -> AccessCost {
        let mut t = AccessCost::default();
        for a in &self.accesses {
            t.phases += a.total.phases;
            t.min_wavefronts += a.total.min_wavefronts;
            t.wavefronts += a.total.wavefronts;
        }
        t
    }

    /// The sums over the accesses of one shared tile.
    pub fn total_for_tile(&self, tile: Value) -> AccessCost {
        let mut t = AccessCost::default();
        for a in self.accesses.iter().filter(|a| a.tile_value == tile) {
            t.phases += a.total.phases;
            t.min_wavefronts += a.total.min_wavefronts;
            t.wavefronts += a.total.wavefronts;
        }
        t
    }

    /// Every analysed access takes its minimum number of wavefronts.
    pub fn is_conflict_free(&self) -> bool {
        self.accesses.iter().all(AccessReport::is_conflict_free)
    }

    /// The accesses with conflicts.
    pub fn conflicts(&self) -> impl Iterator<Item = &AccessReport> {
        self.accesses.iter().filter(|a| !a.is_conflict_free())
    }

    /// The table, with locations as `line:col` of `source` (byte offsets `@N` without one).
    pub fn render(&self, source: Option<&SourceFile>) -> String {
        let loc = |span: Span| match source {
            Some(s) if !span.is_unknown() => {
                let (l, c) = s.line_col(span.start as usize);
                format!("{}:{l}:{c}", s.name)
            }
            _ if span.is_unknown() => "?".to_string(),
            _ => format!("@{}", span.start),
        };
        let warps = match self.warps.as_slice() {
            [] => "no warps".to_string(),
            [w] => format!("warp {w}"),
            ws if ws.windows(2).all(|p| p[1] == p[0] + 1) => format!("warps {}-{}", ws[0], ws[ws.len() - 1]),
            ws => format!("warps {ws:?}"),
        };
        let mut rows: Vec<[String; 10]> = vec![[
            "location".into(),
            "access".into(),
            "tile".into(),
            "B/lane".into(),
            "ops".into(),
            "runs".into(),
            "min".into(),
            "actual".into(),
            "factor".into(),
            "worst".into(),
        ]];
        let per = |x: f64| if x.fract() == 0.0 { format!("{x}") } else { format!("{x:.2}") };
        // One row per source location, access kind and tile: the lowering emits many ops per tile op.
        let mut groups: Vec<(usize, AccessReport)> = Vec::new();
        for a in &self.accesses {
            let same = |g: &AccessReport| {
                g.span == a.span && g.kind == a.kind && g.tile_value == a.tile_value && g.bytes_per_lane == a.bytes_per_lane
            };
            match groups.iter_mut().find(|(_, g)| same(g)) {
                Some((n, g)) => {
                    *n += 1;
                    g.instances += a.instances;
                    g.total.phases += a.total.phases;
                    g.total.min_wavefronts += a.total.min_wavefronts;
                    g.total.wavefronts += a.total.wavefronts;
                    if a.worst.conflict_factor() > g.worst.conflict_factor() {
                        g.worst = a.worst;
                        g.worst_warp = a.worst_warp;
                    }
                }
                None => groups.push((1, a.clone())),
            }
        }
        for (n, a) in &groups {
            rows.push([
                loc(a.span),
                a.kind.to_string(),
                a.tile.clone(),
                a.bytes_per_lane.to_string(),
                n.to_string(),
                a.instances.to_string(),
                per(a.min_per_instance()),
                per(a.wavefronts_per_instance()),
                format!("{:.2}x", a.conflict_factor()),
                format!("{}/{} (warp {})", a.worst.wavefronts, a.worst.min_wavefronts, a.worst_warp),
            ]);
        }
        let t = self.total();
        rows.push([
            "total".into(),
            String::new(),
            String::new(),
            String::new(),
            self.accesses.len().to_string(),
            String::new(),
            t.min_wavefronts.to_string(),
            t.wavefronts.to_string(),
            format!("{:.2}x", t.conflict_factor()),
            String::new(),
        ]);
        let mut widths = [0usize; 10];
        for r in &rows {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let mut out = format!(
            "bank conflicts in @{} ({warps}, first {} iteration(s) of each loop; ops: nvgpu ops from one source op; runs: warp-level executions; min/actual: wavefronts per run; total: summed over runs)\n",
            self.func, self.loop_iterations
        );
        for (i, r) in rows.iter().enumerate() {
            let mut line = String::from("  ");
            for (j, (c, w)) in r.iter().zip(widths).enumerate() {
                // Text columns left-aligned, numbers right-aligned.
                if j < 3 || j == 9 {
                    line.push_str(&format!("{c:<w$}  "));
                } else {
                    line.push_str(&format!("{c:>w$}  "));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
            if i == 0 || i + 2 == rows.len() {
                out.push_str(&format!("  {}\n", "-".repeat(widths.iter().sum::<usize>() + 2 * 9)));
            }
        }
        if self.accesses.is_empty() {
            out.push_str("  (no shared-memory accesses at the nvgpu level)\n");
        }
        for u in &self.unanalyzed {
            out.push_str(&format!("  not analysed: {} {}: {}\n", loc(u.span), u.op_name, u.reason));
        }
        if self.truncated {
            out.push_str("  (evaluation stopped early: too many op executions, or loops nested deeper than 32)\n");
        }
        out
    }
}

impl fmt::Display for BankConflictReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(None))
    }
}

/// Analyses the warp-level shared-memory accesses of `func` (see the [module docs](self)).
///
/// ```
/// use tilec_passes::bank_conflicts::{analyze_bank_conflicts, BankConflictOptions};
///
/// // Each lane reads the f32 at column 0 of row `lane` of a 32x32 row-major tile: stride 128 bytes,
/// // so all 32 lanes hit bank 0 with different words, a 32-way conflict (in the one warp).
/// let m = tilec_ir::parse_module(r#"
/// tile.func @f() attributes {num_warps = 1} {
///   %c0 = tile.constant 0 : index
///   %lane = nvgpu.lane_id : index
///   %s = tile.alloc_shared : tile<32x32xf32, shared>
///   %x = nvgpu.load %s[%lane, %c0] : f32
///   tile.return
/// }"#).unwrap();
/// let report = analyze_bank_conflicts(&m.funcs[0], &BankConflictOptions::default());
/// assert_eq!(report.accesses[0].total.wavefronts, 32);
/// assert_eq!(report.accesses[0].total.min_wavefronts, 1);
/// ```
pub fn analyze_bank_conflicts(func: &Func, options: &BankConflictOptions) -> BankConflictReport {
    eval::analyze(func, options)
}

/// [`analyze_bank_conflicts`] for every function of a module, in order.
pub fn analyze_module_bank_conflicts(module: &Module, options: &BankConflictOptions) -> Vec<BankConflictReport> {
    module.funcs.iter().map(|f| analyze_bank_conflicts(f, options)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes(f: impl Fn(u64) -> Option<u64>) -> [Option<u64>; 32] {
        std::array::from_fn(|l| f(l as u64))
    }

    #[test]
    fn word_accesses() {
        // Consecutive words: conflict-free.
        let c = WarpAccess::new(lanes(|l| Some(4 * l)), 4).cost();
        assert_eq!((c.phases, c.min_wavefronts, c.wavefronts), (1, 1, 1));
        // Stride 2 words: banks 0, 2, ..., 30 twice each: 2-way.
        let c = WarpAccess::new(lanes(|l| Some(8 * l)), 4).cost();
        assert_eq!((c.min_wavefronts, c.wavefronts), (1, 2));
        // Same word: broadcast.
        let c = WarpAccess::new(lanes(|_| Some(64)), 4).cost();
        assert_eq!((c.min_wavefronts, c.wavefronts), (1, 1));
        // Two bytes per lane, consecutive: 16 words, each shared by two lanes.
        let c = WarpAccess::new(lanes(|l| Some(2 * l)), 2).cost();
        assert_eq!((c.min_wavefronts, c.wavefronts), (1, 1));
    }

    #[test]
    fn wide_accesses() {
        // 16 bytes per lane, consecutive: 4 phases of 128 contiguous bytes.
        let c = WarpAccess::new(lanes(|l| Some(16 * l)), 16).cost();
        assert_eq!((c.phases, c.min_wavefronts, c.wavefronts), (4, 4, 4));
        // 8 bytes per lane, consecutive: 2 phases of 128 bytes.
        let c = WarpAccess::new(lanes(|l| Some(8 * l)), 8).cost();
        assert_eq!((c.phases, c.min_wavefronts, c.wavefronts), (2, 2, 2));
        // 16 bytes per lane at a 256-byte stride: every lane of a phase on banks 0-3: 8 wavefronts per phase.
        let c = WarpAccess::new(lanes(|l| Some(256 * l)), 16).cost();
        assert_eq!((c.min_wavefronts, c.wavefronts), (4, 32));
        // Inactive lanes do not count; a phase without lanes costs nothing.
        let c = WarpAccess::new(lanes(|l| (l < 8).then_some(16 * l)), 16).cost();
        assert_eq!((c.phases, c.min_wavefronts, c.wavefronts), (1, 1, 1));
    }

    #[test]
    fn matrices() {
        // ldmatrix.x2 of rows 64 bytes apart: row r at chunk 0 → banks 0-3 (r even) or 16-19 (r odd): 4-way.
        let c = WarpAccess::matrices(lanes(|l| Some(64 * (l % 16))), 2).cost();
        assert_eq!((c.phases, c.min_wavefronts, c.wavefronts), (2, 2, 8));
        assert_eq!(c.conflict_factor(), 4.0);
    }
}
