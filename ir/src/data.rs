//! Tensor data for the oracles and the GPU runs: a dense row-major array of one element type.
//!
//! Every element is held as an `f64`, which represents every value of every element type exactly
//! (f64, f32, tf32, f16, bf16, fp8, integers up to 32 bits); [`round_to`] maps a computed value to the
//! nearest value of a type the way the hardware does. `to_le_bytes`/`from_le_bytes` give the exact
//! device encoding.

use half::{bf16, f16};

use crate::types::ScalarType;

/// Rounds a value to the given element type: round-to-nearest-even for floats, wrap-around for integers
/// (after truncation toward zero), `!= 0` for `i1`.
pub fn round_to(elem: ScalarType, x: f64) -> f64 {
    match elem {
        ScalarType::F64 => x,
        ScalarType::F32 => x as f32 as f64,
        ScalarType::TF32 => round_tf32(x as f32) as f64,
        ScalarType::F16 => f16::from_f64(x).to_f64(),
        ScalarType::BF16 => bf16::from_f64(x).to_f64(),
        ScalarType::F8E4M3 => decode_f8(encode_f8(x, 4, 3, true), 4, 3, true),
        ScalarType::F8E5M2 => decode_f8(encode_f8(x, 5, 2, false), 5, 2, false),
        ScalarType::I1 => f64::from(u8::from(x != 0.0)),
        ScalarType::I4 => wrap(x, 4, true),
        ScalarType::U4 => wrap(x, 4, false),
        ScalarType::I8 => wrap(x, 8, true),
        ScalarType::U8 => wrap(x, 8, false),
        ScalarType::I32 => wrap(x, 32, true),
        ScalarType::Index => x.trunc(),
    }
}

/// `tile.cast` of one value from `from` to `to`: a float into an integer type truncates toward zero and
/// *saturates* to the integer type's range, NaN giving 0 (as the GPU's `cvt.rzi.s32.f32` does: PTX clamps
/// float-to-integer conversions to the destination's range); everything else is [`round_to`] (round to nearest
/// even into floats, wrap between integers, `!= 0` into `i1`; an `index` result is the truncated value).
pub fn convert(from: ScalarType, to: ScalarType, x: f64) -> f64 {
    let range = match to {
        ScalarType::I4 => Some((-8.0, 7.0)),
        ScalarType::U4 => Some((0.0, 15.0)),
        ScalarType::I8 => Some((-128.0, 127.0)),
        ScalarType::U8 => Some((0.0, 255.0)),
        ScalarType::I32 => Some((-2147483648.0, 2147483647.0)),
        _ => None,
    };
    match range {
        Some((lo, hi)) if from.is_float() => {
            if x.is_nan() {
                0.0
            } else {
                // `+ 0.0`: an integer has no -0 (-0.5 truncates to 0).
                x.trunc().clamp(lo, hi) + 0.0
            }
        }
        _ => round_to(to, x),
    }
}

fn wrap(x: f64, bits: u32, signed: bool) -> f64 {
    if !x.is_finite() {
        return 0.0;
    }
    let n = x.trunc() as i128;
    let modulus = 1i128 << bits;
    let mut v = n.rem_euclid(modulus);
    if signed && v >= modulus / 2 {
        v -= modulus;
    }
    v as f64
}

/// TF32 keeps f32's exponent and the top 10 mantissa bits (round to nearest even).
fn round_tf32(x: f32) -> f32 {
    if !x.is_finite() {
        return x;
    }
    let bits = x.to_bits();
    let lsb = (bits >> 13) & 1;
    let rounded = bits.wrapping_add(0x0fff + lsb) & !0x1fff;
    f32::from_bits(rounded)
}

/// Encodes to an 8-bit float with `e` exponent and `m` mantissa bits. `fn_style` is E4M3's "finite, NaN is
/// all ones" convention (no infinities, saturates to ±448); E5M2 follows IEEE (±inf).
fn encode_f8(x: f64, e: u32, m: u32, fn_style: bool) -> u8 {
    let bias = (1i32 << (e - 1)) - 1;
    let sign = if x.is_sign_negative() { 0x80u8 } else { 0 };
    if x.is_nan() {
        return if fn_style { 0x7f } else { 0x7e } | sign;
    }
    let max = if fn_style { 448.0 } else { 57344.0 };
    let a = x.abs();
    if a.is_infinite() || a > max {
        // Hardware conversion with .satfinite saturates; without it E5M2 gives inf. We saturate for E4M3.
        return if fn_style { sign | 0x7e } else if a.is_infinite() { sign | 0x7c } else { sign | 0x7b };
    }
    // Search the 128 magnitudes for the nearest (ties to even): simple and exact.
    let mut best = 0u8;
    let mut best_err = f64::INFINITY;
    for code in 0u8..0x80 {
        let v = decode_f8(code, e, m, fn_style);
        if v.is_nan() || v.is_infinite() {
            continue;
        }
        let err = (v - a).abs();
        if err < best_err || err == best_err && code & 1 == 0 {
            best = code;
            best_err = err;
        }
    }
    let _ = bias;
    sign | best
}

fn decode_f8(code: u8, e: u32, m: u32, fn_style: bool) -> f64 {
    let sign = if code & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = ((code >> m) & ((1 << e) - 1) as u8) as i32;
    let man = (code & ((1 << m) - 1) as u8) as f64;
    let bias = (1i32 << (e - 1)) - 1;
    let all_ones = (1 << e) - 1;
    if fn_style && exp == all_ones && man as u32 == (1 << m) - 1 {
        return f64::NAN;
    }
    if !fn_style && exp == all_ones {
        return if man == 0.0 { sign * f64::INFINITY } else { f64::NAN };
    }
    let scale = 2f64.powi(m as i32);
    if exp == 0 {
        sign * man / scale * 2f64.powi(1 - bias)
    } else {
        sign * (1.0 + man / scale) * 2f64.powi(exp - bias)
    }
}

/// A dense row-major tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorData {
    pub shape: Vec<usize>,
    pub elem: ScalarType,
    pub values: Vec<f64>,
}

impl TensorData {
    /// All zeros.
    pub fn zeros(shape: &[usize], elem: ScalarType) -> TensorData {
        TensorData { shape: shape.to_vec(), elem, values: vec![0.0; shape.iter().product()] }
    }

    /// Deterministic pseudo-random contents for a seed: floats uniform in [-1, 1) rounded to the type,
    /// integers uniform over a range small enough that i32 accumulation of long dot products stays exact
    /// (-8..8 for 8-bit, the full range for 4-bit, -1000..1000 for i32).
    pub fn random(shape: &[usize], elem: ScalarType, seed: u64) -> TensorData {
        let mut rng = SplitMix64(seed ^ 0x7117_ec00_0000_0000);
        let n = shape.iter().product();
        let values = (0..n)
            .map(|_| {
                let u = rng.next_f64();
                match elem {
                    t if t.is_float() => round_to(t, 2.0 * u - 1.0),
                    ScalarType::I1 => f64::from(u8::from(u < 0.5)),
                    ScalarType::I4 => (u * 16.0).floor() - 8.0,
                    ScalarType::U4 => (u * 16.0).floor(),
                    ScalarType::I8 => (u * 16.0).floor() - 8.0,
                    ScalarType::U8 => (u * 16.0).floor(),
                    _ => (u * 2000.0).floor() - 1000.0,
                }
            })
            .collect();
        TensorData { shape: shape.to_vec(), elem, values }
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Row-major offset of an index, or `None` when outside the shape.
    pub fn offset(&self, index: &[i64]) -> Option<usize> {
        if index.len() != self.shape.len() {
            return None;
        }
        let mut offset = 0usize;
        for (&i, &n) in index.iter().zip(&self.shape) {
            if i < 0 || i as usize >= n {
                return None;
            }
            offset = offset * n + i as usize;
        }
        Some(offset)
    }

    /// The element at an index, `None` when outside.
    pub fn get(&self, index: &[i64]) -> Option<f64> {
        self.offset(index).map(|o| self.values[o])
    }

    /// Sets the element at an index (rounded to the element type); returns false when outside.
    pub fn set(&mut self, index: &[i64], value: f64) -> bool {
        match self.offset(index) {
            Some(o) => {
                self.values[o] = round_to(self.elem, value);
                true
            }
            None => false,
        }
    }

    /// A hash of the exact contents (element type, shape and every value's bits), printed by `tilec interp`.
    pub fn checksum(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |x: u64| {
            for b in x.to_le_bytes() {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        };
        eat(self.elem as u64);
        for &n in &self.shape {
            eat(n as u64);
        }
        for &v in &self.values {
            // +0.0 and -0.0 hash alike: the GPU and the oracles may differ in the sign of a zero sum.
            eat(if v == 0.0 { 0 } else { v.to_bits() });
        }
        h
    }

    /// The device encoding: little-endian, 4-bit types packed two per byte (low nibble first).
    pub fn to_le_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.values.len() * 4);
        match self.elem {
            ScalarType::I4 | ScalarType::U4 => {
                for pair in self.values.chunks(2) {
                    let lo = (pair[0] as i64 as u8) & 0xf;
                    let hi = pair.get(1).map_or(0, |&v| (v as i64 as u8) & 0xf);
                    out.push(lo | (hi << 4));
                }
            }
            elem => {
                for &v in &self.values {
                    match elem {
                        ScalarType::F64 => out.extend(v.to_le_bytes()),
                        ScalarType::F32 | ScalarType::TF32 => out.extend((v as f32).to_le_bytes()),
                        ScalarType::F16 => out.extend(f16::from_f64(v).to_le_bytes()),
                        ScalarType::BF16 => out.extend(bf16::from_f64(v).to_le_bytes()),
                        ScalarType::F8E4M3 => out.push(encode_f8(v, 4, 3, true)),
                        ScalarType::F8E5M2 => out.push(encode_f8(v, 5, 2, false)),
                        ScalarType::I1 | ScalarType::I8 | ScalarType::U8 => out.push(v as i64 as u8),
                        ScalarType::I32 => out.extend((v as i64 as i32).to_le_bytes()),
                        _ => out.extend((v as i64).to_le_bytes()),
                    }
                }
            }
        }
        out
    }

    /// Reads the device encoding back; `None` when the byte count does not match the shape.
    pub fn from_le_bytes(shape: &[usize], elem: ScalarType, bytes: &[u8]) -> Option<TensorData> {
        let n: usize = shape.iter().product();
        let values: Vec<f64> = match elem {
            ScalarType::I4 | ScalarType::U4 => {
                if bytes.len() != n.div_ceil(2) {
                    return None;
                }
                (0..n)
                    .map(|i| {
                        let nibble = (bytes[i / 2] >> (4 * (i % 2))) & 0xf;
                        if elem == ScalarType::I4 && nibble >= 8 {
                            f64::from(nibble) - 16.0
                        } else {
                            f64::from(nibble)
                        }
                    })
                    .collect()
            }
            _ => {
                let width = (elem.bit_width() as usize).max(8) / 8;
                if bytes.len() != n * width {
                    return None;
                }
                bytes
                    .chunks(width)
                    .map(|c| match elem {
                        ScalarType::F64 => f64::from_le_bytes(c.try_into().unwrap_or([0; 8])),
                        ScalarType::F32 | ScalarType::TF32 => f32::from_le_bytes(c.try_into().unwrap_or([0; 4])) as f64,
                        ScalarType::F16 => f16::from_le_bytes(c.try_into().unwrap_or([0; 2])).to_f64(),
                        ScalarType::BF16 => bf16::from_le_bytes(c.try_into().unwrap_or([0; 2])).to_f64(),
                        ScalarType::F8E4M3 => decode_f8(c[0], 4, 3, true),
                        ScalarType::F8E5M2 => decode_f8(c[0], 5, 2, false),
                        ScalarType::I1 | ScalarType::U8 => f64::from(c[0]),
                        ScalarType::I8 => f64::from(c[0] as i8),
                        ScalarType::I32 => f64::from(i32::from_le_bytes(c.try_into().unwrap_or([0; 4]))),
                        _ => i64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as f64,
                    })
                    .collect()
            }
        };
        Some(TensorData { shape: shape.to_vec(), elem, values })
    }
}

/// The small, well-known SplitMix64 generator: reproducible inputs across machines without a dependency.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 random bits.
    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_matches_the_formats() {
        assert_eq!(round_to(ScalarType::F16, 1.0 + 1.0 / 4096.0), 1.0);
        assert_eq!(round_to(ScalarType::F16, 65520.0), f64::INFINITY);
        assert_eq!(round_to(ScalarType::BF16, 1.0 + 1.0 / 256.0), 1.0);
        assert_eq!(round_to(ScalarType::TF32, 1.0 + 1.0 / 2048.0), 1.0);
        assert_eq!(round_to(ScalarType::TF32, 1.0 + 3.0 / 2048.0), 1.0 + 2.0 / 1024.0);
        assert_eq!(round_to(ScalarType::I8, 130.0), -126.0);
        assert_eq!(round_to(ScalarType::U4, -1.0), 15.0);
        assert_eq!(round_to(ScalarType::F8E4M3, 448.0), 448.0);
        assert_eq!(round_to(ScalarType::F8E4M3, 1000.0), 448.0);
        assert_eq!(round_to(ScalarType::F8E5M2, 1.0 + 1.0 / 8.0), 1.0);
    }

    #[test]
    fn bytes_round_trip_for_every_type() {
        for elem in ScalarType::ALL {
            if elem == ScalarType::Index {
                continue;
            }
            let t = TensorData::random(&[3, 5], elem, 7);
            let back = TensorData::from_le_bytes(&[3, 5], elem, &t.to_le_bytes()).expect("length matches");
            assert_eq!(t.values, back.values, "{elem}");
        }
    }

    #[test]
    fn random_is_deterministic_and_seeded() {
        let a = TensorData::random(&[4, 4], ScalarType::F16, 1);
        assert_eq!(a, TensorData::random(&[4, 4], ScalarType::F16, 1));
        assert_ne!(a.checksum(), TensorData::random(&[4, 4], ScalarType::F16, 2).checksum());
    }
}
