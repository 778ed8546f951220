//! cuBLAS as the bench's reference: opening the library at run time, the mapping of a GEMM with row- or
//! column-major matrices onto cuBLAS's column-major `cublasGemmEx`, and the call.
//!
//! cuBLAS sees every matrix column-major. A row-major R x C matrix X is, to cuBLAS, the column-major C x R
//! matrix X^T with leading dimension C. So a row-major C = A * B is computed as the column-major
//! C^T = B^T * A^T (the operands swap places, nothing is copied); a column-major C is computed as C = A * B.
//! Each operand then needs `op = N` when its memory already holds the matrix cuBLAS wants, `T` otherwise.
//!
//! Types (`cublasGemmEx`): f16 or bf16 inputs with f32 accumulation (`CUBLAS_COMPUTE_32F`) and C of the input
//! type or f32; int8 inputs with int32 accumulation and output (`CUBLAS_COMPUTE_32I`, int32 alpha = 1,
//! beta = 0). cuBLAS runs int8 on the tensor cores in the "TN" form only (first operand transposed, second
//! not; leading dimensions multiples of 4), so an int8 operand in the other form is transposed once on the
//! host before upload — outside the timed region, and said in the report. Anything else is refused with the
//! reason, never approximated.

use std::ffi::c_void;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use cudarc::cublas::{result, sys};
use cudarc::driver::CudaStream;

use crate::bench::spec::{Elem, GemmSpec, MatrixLayout, Role};
use crate::{quietly, RunError};

/// `op(X)` of a cuBLAS operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    N,
    T,
}

/// One input operand of the cuBLAS call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanOperand {
    /// Which matrix of the GEMM it is.
    pub role: Role,
    pub op: Op,
    pub ld: i32,
    /// Upload a transposed copy of the matrix for cuBLAS (int8's TN form) instead of the kernel's buffer.
    pub transposed_copy: bool,
}

/// The accumulation cuBLAS is asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compute {
    /// f32 accumulation, f32 alpha/beta.
    F32,
    /// int32 accumulation, int32 alpha/beta.
    I32,
}

/// A `cublasGemmEx` call for a GEMM.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub m: i32,
    pub n: i32,
    pub k: i32,
    pub first: PlanOperand,
    pub second: PlanOperand,
    pub ldc: i32,
    pub input: Elem,
    pub output: Elem,
    pub compute: Compute,
    /// What the report should say about how cuBLAS was called, when it is not the plain form.
    pub note: Option<String>,
}

fn plan_operand(gemm: &GemmSpec, role: Role, need_transposed: bool) -> Result<PlanOperand, String> {
    let (rows, cols) = gemm.shape(role);
    let row_major = gemm.operand(role).layout == MatrixLayout::RowMajor;
    let op = if need_transposed == row_major { Op::N } else { Op::T };
    let ld = if row_major { cols } else { rows };
    let ld = i32::try_from(ld).map_err(|_| format!("leading dimension {ld} does not fit cuBLAS's int"))?;
    Ok(PlanOperand { role, op, ld, transposed_copy: false })
}

/// The same operand read from a transposed copy: the other layout, so the other op and leading dimension.
fn flipped(gemm: &GemmSpec, o: PlanOperand) -> Result<PlanOperand, String> {
    let (rows, cols) = gemm.shape(o.role);
    let row_major = gemm.operand(o.role).layout == MatrixLayout::RowMajor;
    let ld = if row_major { rows } else { cols };
    let ld = i32::try_from(ld).map_err(|_| format!("leading dimension {ld} does not fit cuBLAS's int"))?;
    let op = if o.op == Op::N { Op::T } else { Op::N };
    Ok(PlanOperand { role: o.role, op, ld, transposed_copy: true })
}

/// How to compute `gemm` with `cublasGemmEx`, or why cuBLAS cannot.
pub fn plan(gemm: &GemmSpec) -> Result<Plan, String> {
    let (input, output) = (gemm.a.elem, gemm.c.elem);
    if gemm.b.elem != input {
        return Err(format!("cuBLAS has no GEMM with A {} and B {}", input.name(), gemm.b.elem.name()));
    }
    let compute = match (input, output) {
        (Elem::F16, Elem::F16 | Elem::F32) | (Elem::Bf16, Elem::Bf16 | Elem::F32) => Compute::F32,
        (Elem::I8, Elem::I32) => Compute::I32,
        (Elem::F32, _) => {
            return Err("f32 inputs are not benchmarked (cuBLAS would use SGEMM or TF32 tensor cores: neither is what the kernel does)".into())
        }
        _ => return Err(format!("cuBLAS has no GEMM from {} inputs to {} output", input.name(), output.name())),
    };
    if compute == Compute::I32 && (gemm.alpha.is_some() || gemm.beta.is_some()) {
        return Err("an int8 kernel with f32 alpha/beta has no cuBLAS counterpart (int32 compute takes int32 scalars)".into());
    }
    let int = |x: u64| i32::try_from(x).map_err(|_| format!("{x} does not fit cuBLAS's int"));
    let c_row_major = gemm.c.layout == MatrixLayout::RowMajor;
    let (m, n, first, second, ldc) = if c_row_major {
        // C^T (N x M) = B^T (N x K) * A^T (K x M).
        (int(gemm.n)?, int(gemm.m)?, plan_operand(gemm, Role::B, true)?, plan_operand(gemm, Role::A, true)?, int(gemm.n)?)
    } else {
        (int(gemm.m)?, int(gemm.n)?, plan_operand(gemm, Role::A, false)?, plan_operand(gemm, Role::B, false)?, int(gemm.m)?)
    };
    let mut plan = Plan { m, n, k: int(gemm.k)?, first, second, ldc, input, output, compute, note: None };
    if compute == Compute::I32 {
        let mut copied = Vec::new();
        if plan.first.op == Op::N {
            plan.first = flipped(gemm, plan.first)?;
            copied.push(format!("{:?}", plan.first.role));
        }
        if plan.second.op == Op::T {
            plan.second = flipped(gemm, plan.second)?;
            copied.push(format!("{:?}", plan.second.role));
        }
        if !copied.is_empty() {
            plan.note = Some(format!("int8 in cuBLAS's TN form: {} transposed on the host first, not timed", copied.join(" and ")));
        }
    }
    Ok(plan)
}

/// Directories to look for libcublas in when the loader's search path lacks it.
fn library_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"] {
        if let Some(root) = std::env::var_os(var) {
            dirs.push(PathBuf::from(&root).join("lib64"));
            dirs.push(PathBuf::from(root).join("lib"));
        }
    }
    for root in ["/usr/local/cuda", "/usr/local/cuda-13.0", "/usr/local/cuda-13"] {
        dirs.push(PathBuf::from(root).join("lib64"));
    }
    dirs
}

/// Makes libcublas loadable: cudarc opens it by name (`libcublas.so.13`, ...) through the loader's search path;
/// when that fails, the library is opened here by its full path from a CUDA installation, and the loader then
/// finds it by that name among the loaded libraries. The handles stay open for the life of the process.
fn load_library() -> Result<(), RunError> {
    static RESULT: OnceLock<Result<(), String>> = OnceLock::new();
    let result = RESULT.get_or_init(|| {
        // SAFETY: only opens shared libraries that cudarc itself would open.
        if quietly(|| unsafe { sys::is_culib_present() }).unwrap_or(false) {
            return Ok(());
        }
        let dirs = library_dirs();
        for dir in &dirs {
            if !dir.join("libcublas.so.13").is_file() {
                continue;
            }
            // libcublasLt first: libcublas needs it and may not say where it is.
            for name in ["libcublasLt.so.13", "libcublas.so.13"] {
                // SAFETY: NVIDIA's libraries; their initialisers have no preconditions.
                if let Ok(lib) = unsafe { libloading::Library::new(dir.join(name)) } {
                    // Kept loaded for the life of the process: cudarc finds it by name from now on.
                    std::mem::forget(lib);
                }
            }
            if quietly(|| unsafe { sys::is_culib_present() }).unwrap_or(false) {
                return Ok(());
            }
        }
        let looked: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        Err(format!(
            "cuBLAS could not be loaded: libcublas.so.13 is neither on the loader's path (LD_LIBRARY_PATH) nor in {}",
            looked.join(", ")
        ))
    });
    result.clone().map_err(RunError::NoCublas)
}

/// A cuBLAS handle bound to one stream.
pub struct Cublas {
    handle: sys::cublasHandle_t,
    stream: Arc<CudaStream>,
}

impl Cublas {
    /// Loads libcublas and creates a handle whose work goes to `stream`.
    pub fn new(stream: &Arc<CudaStream>) -> Result<Cublas, RunError> {
        load_library()?;
        let fail = |what: &str, e: String| RunError::NoCublas(format!("cuBLAS: {what} failed: {e}"));
        stream.context().bind_to_thread().map_err(|e| fail("binding the context", format!("{e:?}")))?;
        let handle = quietly(result::create_handle)
            .map_err(|e| fail("opening the library", e))?
            .map_err(|e| fail("cublasCreate", format!("{e:?}")))?;
        let cublas = Cublas { handle, stream: stream.clone() };
        // SAFETY: a fresh handle and a live stream of the current context.
        unsafe { result::set_stream(cublas.handle, cublas.stream.cu_stream() as sys::cudaStream_t) }
            .map_err(|e| fail("cublasSetStream", format!("{e:?}")))?;
        Ok(cublas)
    }

    /// Queues `C = alpha * op(first) * op(second) + beta * C` on the stream (see [`plan`]); `first`, `second` and
    /// `c` are device pointers to the operands the plan names.
    ///
    /// # Safety
    /// The pointers must be live device allocations on this context holding the plan's matrices.
    pub unsafe fn gemm(&self, plan: &Plan, first: u64, second: u64, c: u64, alpha: f32, beta: f32) -> Result<(), String> {
        let ty = |e: Elem| match e {
            Elem::F16 => sys::cudaDataType::CUDA_R_16F,
            Elem::Bf16 => sys::cudaDataType::CUDA_R_16BF,
            Elem::F32 => sys::cudaDataType::CUDA_R_32F,
            Elem::I8 => sys::cudaDataType::CUDA_R_8I,
            Elem::I32 => sys::cudaDataType::CUDA_R_32I,
        };
        let op = |o: Op| match o {
            Op::N => sys::cublasOperation_t::CUBLAS_OP_N,
            Op::T => sys::cublasOperation_t::CUBLAS_OP_T,
        };
        let (alpha_i, beta_i) = (1i32, 0i32);
        let (alpha_p, beta_p, compute) = match plan.compute {
            Compute::F32 => (&alpha as *const f32 as *const c_void, &beta as *const f32 as *const c_void, sys::cublasComputeType_t::CUBLAS_COMPUTE_32F),
            Compute::I32 => (&alpha_i as *const i32 as *const c_void, &beta_i as *const i32 as *const c_void, sys::cublasComputeType_t::CUBLAS_COMPUTE_32I),
        };
        let call = || {
            // SAFETY: the caller vouches for the pointers; the sizes and leading dimensions come from the plan.
            unsafe {
                result::gemm_ex(
                    self.handle,
                    op(plan.first.op),
                    op(plan.second.op),
                    plan.m,
                    plan.n,
                    plan.k,
                    alpha_p,
                    first as *const c_void,
                    ty(plan.input),
                    plan.first.ld,
                    second as *const c_void,
                    ty(plan.input),
                    plan.second.ld,
                    beta_p,
                    c as *mut c_void,
                    ty(plan.output),
                    plan.ldc,
                    compute,
                    sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                )
            }
        };
        quietly(call)?.map_err(|e| format!("{:?}", e.0))
    }
}

impl Drop for Cublas {
    fn drop(&mut self) {
        // SAFETY: the handle was created by `new` and is destroyed once.
        let _ = unsafe { result::destroy_handle(self.handle) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::spec::Operand;

    fn gemm(m: u64, n: u64, k: u64, ab: Elem, c: Elem, layouts: [MatrixLayout; 3]) -> GemmSpec {
        let op = |elem, layout| Operand { elem, layout };
        GemmSpec { m, n, k, a: op(ab, layouts[0]), b: op(ab, layouts[1]), c: op(c, layouts[2]), alpha: None, beta: None }
    }
    use MatrixLayout::{ColMajor as Col, RowMajor as Row};

    #[test]
    fn row_major_gemm_swaps_the_operands() {
        let p = plan(&gemm(300, 200, 100, Elem::F16, Elem::F32, [Row, Row, Row])).unwrap();
        // C^T (200 x 300) = B^T * A^T, both read as they are.
        assert_eq!((p.m, p.n, p.k, p.ldc), (200, 300, 100, 200));
        assert_eq!(p.first, PlanOperand { role: Role::B, op: Op::N, ld: 200, transposed_copy: false });
        assert_eq!(p.second, PlanOperand { role: Role::A, op: Op::N, ld: 100, transposed_copy: false });
        assert_eq!(p.compute, Compute::F32);
        assert_eq!(p.note, None);
    }

    #[test]
    fn column_major_operands_are_transposed_by_cublas() {
        // Row-major C, A column-major (300 x 100, ld 300), B column-major (100 x 200, ld 100).
        let p = plan(&gemm(300, 200, 100, Elem::Bf16, Elem::Bf16, [Col, Col, Row])).unwrap();
        assert_eq!((p.first.role, p.first.op, p.first.ld), (Role::B, Op::T, 100));
        assert_eq!((p.second.role, p.second.op, p.second.ld), (Role::A, Op::T, 300));
        // Column-major C: C = A * B directly.
        let p = plan(&gemm(300, 200, 100, Elem::F16, Elem::F16, [Col, Row, Col])).unwrap();
        assert_eq!((p.m, p.n, p.ldc), (300, 200, 300));
        assert_eq!((p.first.role, p.first.op, p.first.ld), (Role::A, Op::N, 300));
        assert_eq!((p.second.role, p.second.op, p.second.ld), (Role::B, Op::T, 200));
    }

    #[test]
    fn int8_uses_the_tn_form() {
        // Row-major everything: natural form is N,N; B (first) gets a transposed copy.
        let p = plan(&gemm(64, 48, 80, Elem::I8, Elem::I32, [Row, Row, Row])).unwrap();
        assert_eq!(p.first, PlanOperand { role: Role::B, op: Op::T, ld: 80, transposed_copy: true });
        assert_eq!(p.second, PlanOperand { role: Role::A, op: Op::N, ld: 80, transposed_copy: false });
        assert_eq!(p.compute, Compute::I32);
        assert!(p.note.as_deref().is_some_and(|n| n.contains("B transposed")), "{:?}", p.note);
        // B column-major is already TN: nothing copied.
        let p = plan(&gemm(64, 48, 80, Elem::I8, Elem::I32, [Row, Col, Row])).unwrap();
        assert_eq!((p.first.op, p.first.transposed_copy, p.second.op), (Op::T, false, Op::N));
        assert_eq!(p.note, None);
    }

    #[test]
    fn impossible_combinations_are_refused_with_a_reason() {
        let e = plan(&gemm(8, 8, 8, Elem::F16, Elem::Bf16, [Row; 3])).unwrap_err();
        assert!(e.contains("no GEMM from f16 inputs to bf16"), "{e}");
        let e = plan(&gemm(8, 8, 8, Elem::F32, Elem::F32, [Row; 3])).unwrap_err();
        assert!(e.contains("f32 inputs"), "{e}");
        let mut g = gemm(8, 8, 8, Elem::I8, Elem::I32, [Row; 3]);
        g.alpha = Some(2.0);
        assert!(plan(&g).unwrap_err().contains("int8"));
    }
}
