//! TMA tensor maps built at launch (issue 18): a bundle's [`TensorMapParam`] names a buffer parameter (the
//! tensor), its extents, the box, the swizzle mode and the element type; [`encode_args`] turns that into
//! `cuTensorMapEncodeTiled`'s arguments (a pure function, unit-tested without a GPU) and [`encode`] calls the
//! driver with the buffer's device address. The result is passed by value as the kernel's
//! `.param .align 64 .b8 [128]` parameter ([`TensorMapArg`]).
//!
//! The driver's conventions (CUDA driver API, "Tensor Map Object Management"): dimensions innermost first;
//! `globalStrides` are the byte strides of dimensions 1..rank (the innermost is contiguous), each a multiple of
//! 16 and below 2^40; the global address 16-byte aligned (32 with interleave); box extents 1..=256, the inner
//! one's bytes a multiple of 16 and, swizzled, at most the swizzle span; element strides 1 (every element).
//! Out-of-bounds elements of a load are zero (`CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE`), and a store skips them.

use serde::{Deserialize, Serialize};

/// A tensor-map parameter of a bundle.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TensorMapParam {
    /// The buffer parameter (index into the bundle's `params`) holding the tensor.
    pub buffer: usize,
    /// `CUtensorMapDataType` (`cuda.h`: FLOAT16 6, FLOAT32 7, BFLOAT16 9, ...).
    pub data_type: u32,
    /// Bytes per element.
    pub elem_bytes: u32,
    /// The tensor's extents, outermost first (row-major, densely packed): the memory's row-major view, so a
    /// column-major matrix's map (over its transpose) has its extents reversed.
    pub shape: Vec<u64>,
    /// The box, outermost first.
    #[serde(rename = "box")]
    pub box_shape: Vec<u64>,
    /// `none`, `32b`, `64b` or `128b`.
    pub swizzle: String,
}

/// The arguments of `cuTensorMapEncodeTiled` besides the tensor map and the address, in the driver's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodeArgs {
    pub data_type: u32,
    pub rank: u32,
    /// Innermost first.
    pub global_dim: Vec<u64>,
    /// Byte strides of dimensions 1..rank (innermost first).
    pub global_strides: Vec<u64>,
    /// Innermost first.
    pub box_dim: Vec<u32>,
    pub element_strides: Vec<u32>,
    /// `CU_TENSOR_MAP_INTERLEAVE_NONE` (0).
    pub interleave: u32,
    /// `CU_TENSOR_MAP_SWIZZLE_*`: NONE 0, 32B 1, 64B 2, 128B 3.
    pub swizzle: u32,
    /// `CU_TENSOR_MAP_L2_PROMOTION_NONE` (0).
    pub l2_promotion: u32,
    /// `CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE` (0): zeros.
    pub oob_fill: u32,
}

/// The swizzle mode's driver value and span in bytes.
fn swizzle_mode(name: &str) -> Option<(u32, u64)> {
    Some(match name {
        "none" => (0, 16),
        "32b" => (1, 32),
        "64b" => (2, 64),
        "128b" => (3, 128),
        _ => return None,
    })
}

/// `cuTensorMapEncodeTiled`'s arguments for `p`, checked against the driver's limits.
pub fn encode_args(p: &TensorMapParam) -> Result<EncodeArgs, String> {
    let rank = p.shape.len();
    if !(1..=5).contains(&rank) || p.box_shape.len() != rank {
        return Err(format!("a tensor map has rank 1 to 5 and a box of the same rank, found shape {:?} and box {:?}", p.shape, p.box_shape));
    }
    let (swizzle, span) = swizzle_mode(&p.swizzle).ok_or_else(|| format!("unknown swizzle mode '{}'", p.swizzle))?;
    let e = u64::from(p.elem_bytes);
    if ![1, 2, 4, 8].contains(&e) {
        return Err(format!("{e}-byte elements"));
    }
    if let Some(&n) = p.shape.iter().find(|&&n| n == 0 || n > 1 << 32) {
        return Err(format!("extent {n} is outside 1..=2^32"));
    }
    if let Some(&n) = p.box_shape.iter().find(|&&n| n == 0 || n > 256) {
        return Err(format!("box extent {n} is outside 1..=256"));
    }
    let inner = p.box_shape[rank - 1] * e;
    if !inner.is_multiple_of(16) || (swizzle != 0 && inner > span) {
        return Err(format!("the box's inner extent is {inner} bytes: a multiple of 16, at most {span} with the {} swizzle", p.swizzle));
    }
    let global_dim: Vec<u64> = p.shape.iter().rev().copied().collect();
    let mut global_strides = Vec::with_capacity(rank - 1);
    let mut stride = e;
    for &n in &global_dim[..rank - 1] {
        stride *= n;
        if !stride.is_multiple_of(16) || stride >= 1 << 40 {
            return Err(format!(
                "the tensor {:?} has a row pitch of {stride} bytes; TMA needs a multiple of 16 (pad the innermost extent to a multiple of {})",
                p.shape,
                16 / e
            ));
        }
        global_strides.push(stride);
    }
    Ok(EncodeArgs {
        data_type: p.data_type,
        rank: rank as u32,
        global_dim,
        global_strides,
        box_dim: p.box_shape.iter().rev().map(|&n| n as u32).collect(),
        element_strides: vec![1; rank],
        interleave: 0,
        swizzle,
        l2_promotion: 0,
        oob_fill: 0,
    })
}

/// A tensor map as a kernel argument: 128 bytes, 64-byte aligned, passed by value.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub struct TensorMapArg(pub [u64; 16]);

// SAFETY: plain bytes, laid out as the kernel's `.param .align 64 .b8 [128]` parameter.
unsafe impl cudarc::driver::DeviceRepr for TensorMapArg {}

/// Encodes the tensor map of `args` over the tensor at device address `address` (16-byte aligned).
pub fn encode(args: &EncodeArgs, address: u64) -> Result<TensorMapArg, String> {
    use cudarc::driver::sys;
    if !address.is_multiple_of(16) {
        return Err(format!("the tensor's address {address:#x} is not 16-byte aligned"));
    }
    let data_type = match args.data_type {
        0 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT8,
        3 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_INT32,
        6 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        7 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        8 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
        9 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        other => return Err(format!("tensor map data type {other} is not one tilec uses")),
    };
    let swizzle = match args.swizzle {
        0 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
        1 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
        2 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
        3 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
        other => return Err(format!("swizzle {other}")),
    };
    let mut map = sys::CUtensorMap { opaque: [0; 16] };
    // SAFETY: every array holds `rank` (strides: rank - 1) entries, as `encode_args` built them; the driver
    // writes only the 128-byte map.
    let result = crate::quietly(|| unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut map,
            data_type,
            args.rank,
            address as *mut std::ffi::c_void,
            args.global_dim.as_ptr(),
            args.global_strides.as_ptr(),
            args.box_dim.as_ptr(),
            args.element_strides.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_NONE,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    })?;
    result.result().map_err(|e| format!("cuTensorMapEncodeTiled failed: {e:?} (arguments {args:?})"))?;
    Ok(TensorMapArg(map.opaque))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(shape: &[u64], box_shape: &[u64], swizzle: &str) -> TensorMapParam {
        TensorMapParam { buffer: 0, data_type: 6, elem_bytes: 2, shape: shape.to_vec(), box_shape: box_shape.to_vec(), swizzle: swizzle.into() }
    }

    /// A 100x72 f16 tensor, 64x64 box, 128-byte swizzle: dims (72, 100) innermost first, one stride of
    /// 72 * 2 = 144 bytes, box (64, 64), CU_TENSOR_MAP_SWIZZLE_128B = 3.
    #[test]
    fn encodes_a_ragged_f16_tensor() {
        let args = encode_args(&param(&[100, 72], &[64, 64], "128b")).unwrap();
        assert_eq!(
            args,
            EncodeArgs {
                data_type: 6,
                rank: 2,
                global_dim: vec![72, 100],
                global_strides: vec![144],
                box_dim: vec![64, 64],
                element_strides: vec![1, 1],
                interleave: 0,
                swizzle: 3,
                l2_promotion: 0,
                oob_fill: 0,
            }
        );
        // Rank 3: strides of dims 1 and 2 (bytes): 8 * 4 = 32, 32 * 5 = 160.
        let mut p = param(&[3, 5, 8], &[1, 2, 8], "none");
        p.data_type = 7;
        p.elem_bytes = 4;
        let args = encode_args(&p).unwrap();
        assert_eq!((args.global_dim, args.global_strides, args.box_dim, args.swizzle), (vec![8, 5, 3], vec![32, 160], vec![8, 2, 1], 0));
    }

    #[test]
    fn refuses_what_the_driver_refuses() {
        // A row of 70 f16 is 140 bytes: not a multiple of 16.
        assert!(encode_args(&param(&[100, 70], &[64, 64], "128b")).unwrap_err().contains("multiple of 8"));
        assert!(encode_args(&param(&[100, 72], &[64, 300], "none")).unwrap_err().contains("1..=256"));
        // 128-byte inner box with the 64-byte swizzle.
        assert!(encode_args(&param(&[100, 72], &[64, 64], "64b")).unwrap_err().contains("at most 64"));
        assert!(encode_args(&param(&[100, 72], &[64, 64], "256b")).is_err());
    }

    #[test]
    fn the_argument_is_128_bytes_64_aligned() {
        assert_eq!((std::mem::size_of::<TensorMapArg>(), std::mem::align_of::<TensorMapArg>()), (128, 64));
    }
}
