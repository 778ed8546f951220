//! IR types → MLIR types.
//!
//! | IR | MLIR |
//! |---|---|
//! | `index` | `index` (64-bit in NVVM) |
//! | `i32`, `i8`, `u8`, `i1` | `i32`, `i8`, `i8`, `i1` (signedness is in the ops) |
//! | `f16`, `bf16`, `f32`, `f64` | the same |
//! | `tf32` | `f32` (low 13 mantissa bits zero) |
//! | `vector<NxMxT>` | `vector<NxMxT>` |
//! | global tile | `memref<?xT, 1>` (a flat view) |
//! | shared tile | `memref<NxT, #gpu.address_space<workgroup>>` (a flat view) |

use tilec_ir::types::{ScalarType, Type, VectorType};

/// The MLIR type of a scalar, or `None` for `i4`, `u4` and the fp8 formats.
pub(super) fn scalar_type(ty: ScalarType) -> Option<&'static str> {
    Some(match ty {
        ScalarType::Index => "index",
        ScalarType::I32 => "i32",
        ScalarType::I8 | ScalarType::U8 => "i8",
        ScalarType::I1 => "i1",
        ScalarType::F16 => "f16",
        ScalarType::BF16 => "bf16",
        ScalarType::F32 | ScalarType::TF32 => "f32",
        ScalarType::F64 => "f64",
        ScalarType::I4 | ScalarType::U4 | ScalarType::F8E4M3 | ScalarType::F8E5M2 => return None,
    })
}

/// `vector<4x2xf16>`.
pub(super) fn vector_type(ty: &VectorType) -> Option<String> {
    let shape: Vec<String> = ty.shape.iter().map(|d| d.to_string()).collect();
    Some(format!("vector<{}x{}>", shape.join("x"), scalar_type(ty.elem)?))
}

/// The MLIR type of a register value (scalar or vector); memory tiles have none.
pub(super) fn value_type(ty: &Type) -> Option<String> {
    match ty {
        Type::Scalar(s) => scalar_type(*s).map(str::to_string),
        Type::Vector(v) => vector_type(v),
        Type::Tile(_) => None,
    }
}

/// The same shape as `ty` (an MLIR scalar or vector type) with element type `elem`.
pub(super) fn with_element(ty: &str, elem: &str) -> String {
    match ty.strip_prefix("vector<").and_then(|r| r.strip_suffix('>')) {
        Some(inner) => {
            let shape = &inner[..inner.rfind('x').map_or(0, |i| i + 1)];
            format!("vector<{shape}{elem}>")
        }
        None => elem.to_string(),
    }
}
