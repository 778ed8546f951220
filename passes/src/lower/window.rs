//! Windows of a shared tile: `tile.copy_s2r %s[%i, %j]` and `tile.copy_r2s %x, %s[%i, %j]` of a register
//! tile smaller than the shared tile, at constant or run-time offsets.
//!
//! The copy is planned on the window (a [`SharedSource`] of the window's shape over the whole tile's memory
//! layout), and every address gets the offset added. That is correct for any offset; what needs care is
//! that each access (an `ldmatrix`/`stmatrix` row, a vector load or store) still covers elements that are
//! consecutive and aligned in memory. Offsets are required to be provably multiples of the window's extent
//! along their axis (constants, or what [`super::copy_g2s::known_divisor`] proves of `%i` and `%j`, e.g. a
//! loop counter stepping by 16), so adding one is an XOR of disjoint bits, and the memory layout, a linear
//! map, gives `offset(i + r, j + c) = offset(i, j) ^ offset(r, c)`. The plan checked the accesses at
//! offset zero; they stay contiguous and aligned at every offset when `offset(i, j)` is a multiple of the
//! access length, which holds when the image of every coordinate bit the offsets may set is
//! ([`Window::check_offsets`]). A swizzle that permutes whole 16-byte chunks keeps this for every window
//! whose columns span whole chunks.

use tilec_ir::{Diagnostic, Span, TileType, Value};

use super::copy_plan::{CopyInstr, CopyPlan, SharedSource};
use super::copy_s2r::shared_source;
use super::Lowering;

/// A window of a shared tile, as a copy sees it.
#[derive(Clone, Debug)]
pub(crate) struct Window {
    /// The window's shape over the whole tile's memory layout.
    pub source: SharedSource,
    /// `(rows, cols)` of the whole shared tile.
    pub tile: (u32, u32),
    /// The row and column offsets (`None`: a constant 0).
    pub offsets: [Option<Value>; 2],
    /// The largest power of two each offset is known to be a multiple of.
    pub divisors: [u64; 2],
}

impl Window {
    /// Checks that every access of `plan` stays contiguous and aligned at any offset the window may take
    /// (see the [module documentation](self)).
    pub fn check_offsets(&self, plan: &CopyPlan, span: Span, what: &str) -> Result<(), Diagnostic> {
        let len = match plan.instr {
            CopyInstr::LdMatrix { .. } => 128 / self.source.elem_bits.max(1),
            CopyInstr::Load { width } => width,
        };
        if len <= 1 {
            return Ok(());
        }
        let inv = self.source.memory.invert().map_err(|e| Diagnostic::error(span, format!("the shared layout is not invertible: {e}")))?;
        let order: Vec<&str> = inv.in_dim_names();
        let offset = |row: u32, col: u32| -> Option<u32> {
            let input: Vec<u32> = order.iter().map(|d| if *d == "row" { row } else if *d == "col" { col } else { 0 }).collect();
            inv.apply(&input).ok().map(|o| o[0])
        };
        for (axis, extent) in [(0usize, self.tile.0), (1, self.tile.1)] {
            let mut bit = self.divisors[axis].max(1);
            while bit < u64::from(extent) {
                let unit = bit as u32;
                let (r, c) = if axis == 0 { (unit, 0) } else { (0, unit) };
                match offset(r, c) {
                    Some(o) if o.is_multiple_of(len) => {}
                    _ => {
                        return Err(Diagnostic::error(
                            span,
                            format!(
                                "'{what}': a window offset that is a multiple of {} along {} moves the {len}-element accesses of this copy ({}) off their alignment in the shared layout {}",
                                self.divisors[axis],
                                if axis == 0 { "the rows" } else { "the columns" },
                                plan.instr,
                                self.source.memory_name
                            ),
                        )
                        .with_note("make the offset a multiple of a larger power of two, or use a window spanning whole 16-byte chunks"))
                    }
                }
                bit *= 2;
            }
        }
        Ok(())
    }
}

impl Lowering<'_> {
    /// The window `shape` of the shared tile `tile` at `indices` (see the [module documentation](self)).
    pub(super) fn shared_window(&mut self, tile: &TileType, shape: &[u64], indices: &[Value], what: &str) -> Result<Window, Diagnostic> {
        let span = self.span;
        let full = shared_source(tile).map_err(|m| Diagnostic::error(span, m))?;
        // No indices: the window at offset zero.
        let (&[wr, wc], 0 | 2) = (shape, indices.len()) else {
            return Err(Diagnostic::error(span, format!("'{what}' lowering handles windows of rank-2 tiles")));
        };
        let window = [wr, wc];
        let tile_extent = [u64::from(full.rows), u64::from(full.cols)];
        let mut offsets = [None, None];
        let mut divisors = [1u64 << 20; 2];
        for axis in 0..2 {
            if window[axis] > tile_extent[axis] {
                return Err(Diagnostic::error(span, format!("'{what}': the {wr}x{wc} window is larger than the {}x{} shared tile", full.rows, full.cols)));
            }
            let Some(&v) = indices.get(axis) else { continue };
            let constant = self.func.body.constant_int(v);
            if let Some(c) = constant {
                if c < 0 || c as u64 + window[axis] > tile_extent[axis] {
                    return Err(Diagnostic::error(span, format!("'{what}': the {wr}x{wc} window at offset {c} along axis {axis} lies outside the {}x{} shared tile", full.rows, full.cols)));
                }
                if c == 0 {
                    continue;
                }
            }
            let d = super::copy_g2s::known_divisor(&self.func.body, v, 0);
            if !window[axis].is_power_of_two() || !d.is_multiple_of(window[axis]) {
                let shown = constant.map_or_else(|| format!("only provably a multiple of {d}"), |c| format!("{c}"));
                return Err(Diagnostic::error(
                    span,
                    format!(
                        "'{what}' of a {wr}x{wc} window needs its {} offset to be a multiple of {} (the window's extent); it is {shown}",
                        if axis == 0 { "row" } else { "column" },
                        window[axis]
                    ),
                )
                .with_note("offsets such as a loop counter stepping by the window's extent qualify"));
            }
            offsets[axis] = Some(v);
            divisors[axis] = d;
        }
        let source = SharedSource { rows: wr as u32, cols: wc as u32, ..full.clone() };
        Ok(Window { source, tile: (full.rows, full.cols), offsets, divisors })
    }

    /// `base + offset` for the window's offset along `axis` (no op at offset zero).
    pub(super) fn add_window_offset(&mut self, base: Value, window: &Window, axis: usize) -> Value {
        match window.offsets[axis] {
            Some(o) => self.binary(tilec_ir::ops::BinaryArith::Add, base, o),
            None => base,
        }
    }
}
