//! IR types → LLVM types.
//!
//! | IR | LLVM |
//! |---|---|
//! | `index` | `i64` |
//! | `i32` | `i32` |
//! | `i8`, `u8` | `i8` (signedness is in the ops) |
//! | `i1` | `i1` (`i8` as a kernel parameter) |
//! | `f16`, `bf16` | `half`, `bfloat` |
//! | `f32`, `tf32` | `float` (tf32 values are floats with the low 13 mantissa bits zero) |
//! | `f64` | `double` |
//! | `vector<NxMxT>` | `<N*M x T>`, elements in row-major order |

use inkwell::context::ContextRef;
use inkwell::types::{BasicType, BasicTypeEnum, VectorType as LlvmVectorType};

use tilec_ir::types::{ScalarType, Type, VectorType};

/// The LLVM type of a scalar, or `None` for the element types the backend does not translate
/// (`i4`, `u4`, the fp8 formats).
pub(super) fn scalar_type<'ctx>(cx: ContextRef<'ctx>, ty: ScalarType) -> Option<BasicTypeEnum<'ctx>> {
    Some(match ty {
        ScalarType::Index => cx.i64_type().into(),
        ScalarType::I32 => cx.i32_type().into(),
        ScalarType::I8 | ScalarType::U8 => cx.i8_type().into(),
        ScalarType::I1 => cx.bool_type().into(),
        ScalarType::F16 => cx.f16_type().into(),
        ScalarType::BF16 => cx.bf16_type().into(),
        ScalarType::F32 | ScalarType::TF32 => cx.f32_type().into(),
        ScalarType::F64 => cx.f64_type().into(),
        ScalarType::I4 | ScalarType::U4 | ScalarType::F8E4M3 | ScalarType::F8E5M2 => return None,
    })
}

/// The flat LLVM vector of a per-thread vector.
pub(super) fn vector_type<'ctx>(cx: ContextRef<'ctx>, ty: &VectorType) -> Option<LlvmVectorType<'ctx>> {
    let n = u32::try_from(ty.num_elements()).ok()?;
    Some(match scalar_type(cx, ty.elem)? {
        BasicTypeEnum::IntType(t) => t.vec_type(n),
        BasicTypeEnum::FloatType(t) => t.vec_type(n),
        _ => return None,
    })
}

/// The LLVM type of a register value (scalar or vector); memory tiles have none.
pub(super) fn value_type<'ctx>(cx: ContextRef<'ctx>, ty: &Type) -> Option<BasicTypeEnum<'ctx>> {
    match ty {
        Type::Scalar(s) => scalar_type(cx, *s),
        Type::Vector(v) => vector_type(cx, v).map(|t| t.as_basic_type_enum()),
        Type::Tile(_) => None,
    }
}

/// The same shape as `ty` (scalar or vector) with `elem` elements.
pub(super) fn with_element<'ctx>(
    cx: ContextRef<'ctx>,
    ty: BasicTypeEnum<'ctx>,
    elem: BasicTypeEnum<'ctx>,
) -> BasicTypeEnum<'ctx> {
    let _ = cx;
    match ty {
        BasicTypeEnum::VectorType(v) => {
            let n = v.get_size();
            match elem {
                BasicTypeEnum::IntType(t) => t.vec_type(n).into(),
                BasicTypeEnum::FloatType(t) => t.vec_type(n).into(),
                other => other,
            }
        }
        _ => elem,
    }
}
