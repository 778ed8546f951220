//! Window copies between dense row-major arrays: the data movement of every `tile.copy_*` op.

/// Copies a window of shape `window`: for every window index `w` with `dst_off + w` inside `dst_shape`,
/// `dst[dst_off + w] = src[src_off + w]` when `src_off + w` is inside `src_shape`, and `0` otherwise.
/// Destination elements outside `dst_shape` are dropped.
///
/// This is `copy_g2s` (the source is the global tile: zero fill) and `copy_r2g` (the destination is the
/// global tile: dropped stores) at once; the shared-tile copies check their bounds first and use it too.
/// Works row by row along the last axis, with slice copies. Offsets may be any `i64` (no overflow).
pub(super) fn copy_window(
    src: &[f64],
    src_shape: &[usize],
    src_off: &[i64],
    dst: &mut [f64],
    dst_shape: &[usize],
    dst_off: &[i64],
    window: &[usize],
) {
    let rank = window.len();
    debug_assert!(src_shape.len() == rank && dst_shape.len() == rank && src_off.len() == rank && dst_off.len() == rank);
    if rank == 0 {
        if let (Some(d), Some(&s)) = (dst.first_mut(), src.first()) {
            *d = s;
        }
        return;
    }
    if window.contains(&0) {
        return;
    }
    let last = rank - 1;
    // Along the last axis: the window positions whose destination, and whose source, are in bounds.
    let in_range = |off: i64, extent: usize| -> (usize, usize) {
        let (off, extent, len) = (i128::from(off), extent as i128, window[last] as i128);
        let lo = (-off).clamp(0, len);
        let hi = (extent - off).clamp(lo, len);
        (lo as usize, hi as usize)
    };
    let (dlo, dhi) = in_range(dst_off[last], dst_shape[last]);
    if dlo == dhi {
        return;
    }
    let (slo, shi) = in_range(src_off[last], src_shape[last]);
    // The part of [dlo, dhi) that has a source: [clo, chi) (possibly empty).
    let (clo, chi) = (slo.max(dlo), shi.min(dhi).max(slo.max(dlo)));
    // Odometer over the leading window axes.
    let mut w = vec![0usize; last];
    loop {
        let row = |shape: &[usize], off: &[i64]| -> Option<usize> {
            // Row-major offset of (off + w, 0) for the leading axes, `None` when outside.
            let mut base = 0usize;
            for d in 0..last {
                let i = i128::from(off[d]) + w[d] as i128;
                if i < 0 || i >= shape[d] as i128 {
                    return None;
                }
                base = base * shape[d] + i as usize;
            }
            Some(base * shape[last])
        };
        if let Some(drow) = row(dst_shape, dst_off) {
            let dcol = |p: usize| (i128::from(dst_off[last]) + p as i128) as usize;
            let out = &mut dst[drow + dcol(dlo)..drow + dcol(dhi - 1) + 1];
            match row(src_shape, src_off) {
                Some(srow) if clo < chi => {
                    let scol = |p: usize| (i128::from(src_off[last]) + p as i128) as usize;
                    out[..clo - dlo].fill(0.0);
                    out[clo - dlo..chi - dlo].copy_from_slice(&src[srow + scol(clo)..srow + scol(chi - 1) + 1]);
                    out[chi - dlo..].fill(0.0);
                }
                _ => out.fill(0.0),
            }
        }
        // Next leading index.
        let mut d = last;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            w[d] += 1;
            if w[d] < window[d] {
                break;
            }
            w[d] = 0;
        }
    }
}

/// Whether the window `off .. off + window` lies inside `shape` on every axis.
pub(super) fn window_inside(shape: &[usize], off: &[i64], window: &[usize]) -> bool {
    shape.len() == off.len()
        && shape.len() == window.len()
        && shape
            .iter()
            .zip(off)
            .zip(window)
            .all(|((&n, &o), &w)| o >= 0 && i128::from(o) + w as i128 <= n as i128)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_fills_and_drops_at_the_edges() {
        // A 3x3 source 0..9; read a 2x2 window at (2, 2): only (0,0) is inside.
        let src: Vec<f64> = (0..9).map(f64::from).collect();
        let mut dst = vec![-1.0; 4];
        copy_window(&src, &[3, 3], &[2, 2], &mut dst, &[2, 2], &[0, 0], &[2, 2]);
        assert_eq!(dst, vec![8.0, 0.0, 0.0, 0.0]);
        // Negative offsets read zeros too.
        copy_window(&src, &[3, 3], &[-1, 0], &mut dst, &[2, 2], &[0, 0], &[2, 2]);
        assert_eq!(dst, vec![0.0, 0.0, 0.0, 1.0]);
        // Store a 2x2 at (2, 1) of a 3x3: only the first row lands.
        let mut big = vec![0.0; 9];
        copy_window(&[1.0, 2.0, 3.0, 4.0], &[2, 2], &[0, 0], &mut big, &[3, 3], &[2, 1], &[2, 2]);
        assert_eq!(big, vec![0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0]);
        // Entirely outside: nothing happens, nothing panics.
        copy_window(&[1.0, 2.0, 3.0, 4.0], &[2, 2], &[0, 0], &mut big, &[3, 3], &[i64::MAX, i64::MIN], &[2, 2]);
        assert_eq!(big.iter().sum::<f64>(), 3.0);
    }
}
