//! Host-side matrix data for the bench: seeded pseudo-random contents, reading elements back as numbers, and
//! transposing a copy (for cuBLAS's int8 layout). Little-endian device bytes throughout, no dependency.

use crate::bench::spec::{Elem, MatrixLayout};

/// The state the plain bundles' `random` buffers start from ([`crate::RandomFill`]); kept so that their
/// contents stay what they were.
pub const DEFAULT_STATE: u64 = 0x2545_f491_4f6c_dd1d;

/// A generator state for one matrix of one bench run: distinct per `seed` and per `stream` (0, 1, 2 for A, B, C),
/// never zero (xorshift would stay at zero).
pub fn state_for(seed: u64, stream: u64) -> u64 {
    // splitmix64 of the pair: nearby seeds give unrelated streams.
    let mut z = seed.wrapping_add(stream.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) | 1
}

/// `count` elements of `elem` as little-endian bytes: floats uniform in [-1, 1) rounded toward zero to the type,
/// integers uniform in -8..8 (so an int8 GEMM's int32 sums stay far from overflow at any K the bench runs).
pub fn random_bytes(elem: Elem, count: usize, state: u64) -> Vec<u8> {
    let mut state = if state == 0 { DEFAULT_STATE } else { state };
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut out = Vec::with_capacity(count * elem.bytes());
    for _ in 0..count {
        let u = next();
        let x = (2.0 * u - 1.0) as f32;
        let i = (u * 16.0).floor() as i32 - 8;
        match elem {
            Elem::F16 => out.extend(f32_to_f16_bits(x).to_le_bytes()),
            Elem::Bf16 => out.extend(((x.to_bits() >> 16) as u16).to_le_bytes()),
            Elem::F32 => out.extend(x.to_le_bytes()),
            Elem::I8 => out.push(i as i8 as u8),
            Elem::I32 => out.extend(i.to_le_bytes()),
        }
    }
    out
}

/// Element `i` of a buffer of `elem`s, as a number (the caller keeps `i` in range).
pub fn value(elem: Elem, bytes: &[u8], i: usize) -> f64 {
    let at = i * elem.bytes();
    let get = |n: usize| -> &[u8] { bytes.get(at..at + n).unwrap_or(&[]) };
    match elem {
        Elem::F16 => get(2).try_into().map(|b| f16_bits_to_f32(u16::from_le_bytes(b)) as f64).unwrap_or(f64::NAN),
        Elem::Bf16 => get(2).try_into().map(|b| f32::from_bits((u16::from_le_bytes(b) as u32) << 16) as f64).unwrap_or(f64::NAN),
        Elem::F32 => get(4).try_into().map(|b| f32::from_le_bytes(b) as f64).unwrap_or(f64::NAN),
        Elem::I8 => get(1).first().map(|&b| b as i8 as f64).unwrap_or(f64::NAN),
        Elem::I32 => get(4).try_into().map(|b| i32::from_le_bytes(b) as f64).unwrap_or(f64::NAN),
    }
}

/// The same matrix stored the other way: `rows x cols` elements of `elem_bytes` bytes in row-major order become
/// the column-major order (equivalently, a row-major `cols x rows` matrix).
pub fn transpose(bytes: &[u8], rows: usize, cols: usize, elem_bytes: usize) -> Vec<u8> {
    let mut out = vec![0u8; bytes.len()];
    for r in 0..rows {
        for c in 0..cols {
            let from = (r * cols + c) * elem_bytes;
            let to = (c * rows + r) * elem_bytes;
            if let (Some(src), Some(dst)) = (bytes.get(from..from + elem_bytes), out.get_mut(to..to + elem_bytes)) {
                dst.copy_from_slice(src);
            }
        }
    }
    out
}

/// A matrix of `rows x cols` elements of `elem_bytes` bytes stored in `layout`, copied into a zeroed
/// `new_rows x new_cols` one in the same layout (`new_*` at least the old extents): for cuBLAS's int8, whose
/// extents must be multiples of 4 (zeros add nothing to a product).
pub fn pad(bytes: &[u8], (rows, cols): (usize, usize), (new_rows, new_cols): (usize, usize), elem_bytes: usize, layout: MatrixLayout) -> Vec<u8> {
    let (lines, len) = storage(layout, rows, cols);
    let (_, new_len) = storage(layout, new_rows, new_cols);
    copy_lines(bytes, lines, len * elem_bytes, len * elem_bytes, new_len * elem_bytes, new_rows * new_cols * elem_bytes)
}

/// The `rows x cols` top-left corner of a padded `padded_rows x padded_cols` matrix: [`pad`]'s inverse.
pub fn crop(bytes: &[u8], (padded_rows, padded_cols): (usize, usize), (rows, cols): (usize, usize), elem_bytes: usize, layout: MatrixLayout) -> Vec<u8> {
    let (lines, len) = storage(layout, rows, cols);
    let (_, padded_len) = storage(layout, padded_rows, padded_cols);
    copy_lines(bytes, lines, len * elem_bytes, padded_len * elem_bytes, len * elem_bytes, rows * cols * elem_bytes)
}

/// (lines, elements per line) of a `rows x cols` matrix as stored.
pub fn storage(layout: MatrixLayout, rows: usize, cols: usize) -> (usize, usize) {
    match layout {
        MatrixLayout::RowMajor => (rows, cols),
        MatrixLayout::ColMajor => (cols, rows),
    }
}

/// `lines` runs of `run` bytes, `from_stride` bytes apart in `bytes`, copied `to_stride` bytes apart into a
/// zeroed buffer of `size` bytes.
fn copy_lines(bytes: &[u8], lines: usize, run: usize, from_stride: usize, to_stride: usize, size: usize) -> Vec<u8> {
    let mut out = vec![0u8; size];
    for line in 0..lines {
        let (from, to) = (line * from_stride, line * to_stride);
        if let (Some(src), Some(dst)) = (bytes.get(from..from + run), out.get_mut(to..to + run)) {
            dst.copy_from_slice(src);
        }
    }
    out
}

/// The distance between `x` and the next representable number of `elem` away from zero (for `|x|`'s binade):
/// one unit in the last place. Integers: 1.
pub fn ulp(elem: Elem, x: f64) -> f64 {
    let (mantissa_bits, min_exp) = match elem {
        Elem::F16 => (10, -14),
        Elem::Bf16 => (7, -126),
        Elem::F32 => (23, -126),
        Elem::I8 | Elem::I32 => return 1.0,
    };
    let x = x.abs();
    let exp = if x > 0.0 { (x.log2().floor() as i32).max(min_exp) } else { min_exp };
    2f64.powi(exp - mantissa_bits)
}

/// f32 to IEEE half bits, rounding toward zero (the inputs are in [-1, 1)).
pub fn f32_to_f16_bits(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32 - 127 + 15;
    let man = bits & 0x7f_ffff;
    if exp <= 0 {
        if exp < -10 {
            return sign;
        }
        let man = (man | 0x80_0000) >> (1 - exp);
        return sign | (man >> 13) as u16;
    }
    if exp >= 31 {
        return sign | 0x7c00;
    }
    sign | ((exp as u16) << 10) | (man >> 13) as u16
}

/// IEEE half bits to f32 (exact).
pub fn f16_bits_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let man = (h & 0x3ff) as f32;
    match exp {
        0 => sign * man * 2f32.powi(-24),
        31 if man == 0.0 => sign * f32::INFINITY,
        31 => f32::NAN,
        _ => sign * (1.0 + man / 1024.0) * 2f32.powi(exp - 15),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn padding_keeps_the_matrix_and_cropping_undoes_it() {
        use super::{crop, pad};
        use crate::bench::spec::MatrixLayout::{ColMajor, RowMajor};
        // 2x3, one byte per element, row-major 1 2 3 / 4 5 6.
        let m = [1u8, 2, 3, 4, 5, 6];
        let p = pad(&m, (2, 3), (4, 4), 1, RowMajor);
        assert_eq!(p, [1, 2, 3, 0, 4, 5, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(crop(&p, (4, 4), (2, 3), 1, RowMajor), m);
        // The same matrix column-major (1 4 / 2 5 / 3 6 in memory): columns of 2 become columns of 4.
        let c = [1u8, 4, 2, 5, 3, 6];
        let p = pad(&c, (2, 3), (4, 4), 1, ColMajor);
        assert_eq!(p, [1, 4, 0, 0, 2, 5, 0, 0, 3, 6, 0, 0, 0, 0, 0, 0]);
        assert_eq!(crop(&p, (4, 4), (2, 3), 1, ColMajor), c);
        // Two-byte elements move whole.
        let w = [1u8, 0, 2, 0];
        assert_eq!(pad(&w, (1, 2), (2, 2), 2, RowMajor), [1, 0, 2, 0, 0, 0, 0, 0]);
    }

    use super::*;

    #[test]
    fn half_round_trips_through_the_generator() {
        let bytes = random_bytes(Elem::F16, 1000, state_for(1, 0));
        for i in 0..1000 {
            let x = value(Elem::F16, &bytes, i);
            assert!((-1.0..=1.0).contains(&x), "{x}");
            assert_eq!(f32_to_f16_bits(x as f32), u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]));
        }
        assert_eq!(f16_bits_to_f32(0x3c00), 1.0);
        assert_eq!(f16_bits_to_f32(0xc000), -2.0);
        assert_eq!(f16_bits_to_f32(0x0001), 2f32.powi(-24));
    }

    #[test]
    fn integers_stay_in_range_and_streams_differ() {
        let a = random_bytes(Elem::I8, 4096, state_for(7, 0));
        let b = random_bytes(Elem::I8, 4096, state_for(7, 1));
        assert_ne!(a, b);
        assert!(a.iter().all(|&x| (-8..8).contains(&(x as i8))));
        assert!(a.iter().any(|&x| x as i8 == -8) && a.iter().any(|&x| x as i8 == 7));
        let c = random_bytes(Elem::I32, 100, state_for(7, 2));
        assert!((0..100).all(|i| (-8.0..8.0).contains(&value(Elem::I32, &c, i))));
    }

    #[test]
    fn transpose_moves_elements() {
        // 2x3 row-major of 2-byte elements.
        let m: Vec<u8> = (0u8..12).collect();
        let t = transpose(&m, 2, 3, 2);
        // (r, c) -> c * 2 + r: element (0,1) = bytes 2,3 lands at index 2 -> bytes 4,5.
        assert_eq!(t, vec![0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11]);
    }

    #[test]
    fn ulps() {
        assert_eq!(ulp(Elem::F16, 1.0), 2f64.powi(-10));
        assert_eq!(ulp(Elem::F16, 1.5), 2f64.powi(-10));
        assert_eq!(ulp(Elem::Bf16, 3.0), 2f64.powi(-6));
        assert_eq!(ulp(Elem::F32, 0.0), 2f64.powi(-149));
        assert_eq!(ulp(Elem::I32, 5.0), 1.0);
    }
}
