//! The reference interpreter: runs `tile`-dialect IR on the CPU, with the hardware's arithmetic. It is the
//! oracle that the warp simulator (`tilec sim`) and the GPU runs (`tilec run`) are compared against.
//!
//! ```
//! use tilec_ir::interp::{self, ArgShapes, ArgValue};
//!
//! let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/gemm.tir")).unwrap();
//! let module = tilec_ir::parse_module(&text).unwrap();
//! let func = &module.funcs[0];
//! // A is 64x32, B is 32x48, C is 64x48.
//! let shapes = ArgShapes::gemm(64, 48, 32);
//! let mut args = interp::default_args(func, &shapes, 7).unwrap();
//! let launch = interp::default_launch(func, &args).unwrap();
//! interp::run(func, &mut args, &launch).unwrap();
//! let ArgValue::Tensor(c) = &args[2] else { unreachable!() };
//! println!("C checksum {:016x}", c.checksum());
//! ```
//!
//! # Execution model
//! Tile ops are block-collective, so the interpreter runs the whole function once per thread block of the
//! grid, one block after another: `z` outermost, then `y`, then `x` (fastest). Global tiles are the
//! kernel's tensor arguments and persist across blocks; each `tile.alloc_shared` names one zero-initialised
//! buffer per block (an `alloc_shared` inside a loop names the same buffer every iteration, as static shared
//! memory does on the GPU); register tiles are values.
//!
//! # Numerics (the decisions every other oracle must agree with)
//! - Every element is held as an `f64` (exact for every element type); results are rounded with
//!   [`crate::data::round_to`]. Argument tensors are rounded to their element type on entry, as the device
//!   encoding would do.
//! - Elementwise `add`/`sub`/`mul`/`div` on floats: computed in `f64`, then rounded once to the element type.
//!   For f32, f16, bf16 and tf32 this is the correctly rounded IEEE result (f64 has more than `2p + 2` bits,
//!   so the double rounding is innocuous). The GPU gives this for `add`/`sub`/`mul`; for `div` it does only
//!   with `div.rn` (the lowering must not use `div.approx`/`div.full`). fp8 results are rounded to fp8
//!   (E4M3 saturates to ±448, as `round_to` does). `min`/`max` return the non-NaN operand when one is NaN
//!   (as PTX `min`/`max` do). `cmp` on NaN: every predicate is false except `ne`.
//! - Integer ops are exact in `i128`, then wrap to the type (two's complement). `div` truncates toward
//!   zero, `rem` takes the dividend's sign; division or remainder by zero is an error
//!   ([`InterpError::DivisionByZero`]). `index` is 64-bit, but held exactly only up to 2^53: an `index`
//!   result beyond ±2^53 is an error ([`InterpError::IndexOverflow`]) rather than a silent loss of bits.
//! - `tile.cast`: to a float, round to nearest even; float to integer truncates toward zero and then
//!   wraps (no saturation: `300.7 -> i8` is `44`; NaN and ±inf give `0`); to `i1`, `x != 0`.
//!   Saturating conversions would need an attribute; none exists yet.
//! - `tile.mma` (D = A·B + C), per element of D, with `acc = C[i][j]` and `k` ascending:
//!   - f16/bf16/tf32/fp8 inputs with an f32 accumulator: `acc = f32(acc + a*b)`; the product is exact (it
//!     is formed in f64) and every partial sum is rounded to f32. Real tensor cores add several products
//!     at once with a wider internal adder, so the GPU may differ from this by a few f32 ulps per K step.
//!   - f16 accumulator: `acc = f16(acc + a*b)` (sum formed in f64, rounded to f16 every step).
//!   - s8/u8/s4/u4 inputs: exact integer dot product, wrapped to i32 (two's complement wrap-around).
//!   - f64: `acc = acc + a*b` in f64, unfused.
//! - Copies: `copy_g2s` reads zeros for window elements outside the global tile; `copy_r2g` drops the
//!   elements that fall outside it. Windows of shared tiles (`copy_s2r`, `copy_r2s`) must lie inside the
//!   shared tile ([`InterpError::OutOfBounds`] otherwise: on the GPU that would be a stray access).
//! - Layouts do not change values: a `tile<?x?xf16, global, #col_major>` of shape `M x K` is the same
//!   logical `M x K` tensor (element `(m, k)` is `A[m][k]`, and the argument's data is given in logical
//!   row-major order); `#col_major` only says that its device buffer holds it column after column
//!   (element `(m, k)` at `k * M + m`), which the lowering, the warp simulator and `tilec bundle` honour.
//!   Likewise a shared tile's layout (row-major, column-major, swizzled) is invisible here.
//!
//! # Limits
//! A hostile or mistaken program ends with an error, never a hang, panic or abort: the work is metered in
//! element operations ([`Limits::fuel`]; every executed op costs its element count plus
//! [`OP_OVERHEAD`]), shared memory per block and register tile sizes are capped ([`Limits`]).
//!
//! The interpreter assumes verified IR (see [`crate::verify`]) but never panics on unverified IR: it
//! reports [`InterpError::Malformed`] instead.

pub(crate) mod arith;
mod defaults;
mod error;
mod exec;
mod mma;
mod window;

pub use defaults::{default_args, default_launch, sample_shapes, shape_args, ArgSetting, ArgShapes, DEFAULT_EXTENT};
pub use error::InterpError;

use crate::body::Func;
use crate::data::TensorData;
use crate::types::ScalarType;

/// A kernel argument: a tensor for a global tile argument, or a scalar.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgValue {
    /// The contents of a global tile; the kernel's stores land here.
    Tensor(TensorData),
    /// A scalar argument of the given type (the value is rounded to the type when the kernel starts).
    Scalar(ScalarType, f64),
}

impl ArgValue {
    /// The tensor, for a tensor argument.
    pub fn as_tensor(&self) -> Option<&TensorData> {
        match self {
            ArgValue::Tensor(t) => Some(t),
            ArgValue::Scalar(..) => None,
        }
    }
}

/// How a kernel is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The number of thread blocks along `x`, `y` and `z`; each must be at least 1.
    pub grid: [u32; 3],
}

impl Launch {
    /// A launch of `grid` blocks.
    pub fn new(grid: [u32; 3]) -> Launch {
        Launch { grid }
    }

    /// The total number of blocks.
    pub fn num_blocks(&self) -> u64 {
        self.grid.iter().map(|&g| u64::from(g)).product()
    }
}

/// Resource limits that make every program terminate with an error rather than run away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most element operations a run may do over the whole grid (each executed op costs the number of
    /// elements it touches, `M*N*K` for an MMA, plus [`OP_OVERHEAD`]).
    pub fuel: u64,
    /// The most shared memory one block may allocate, in bytes (the sum over all `tile.alloc_shared`).
    pub max_shared_bytes: u64,
    /// The most elements one register tile (or vector) may have.
    pub max_tile_elements: u64,
}

/// The fuel charged for executing any op (and for starting a block or a loop iteration), on top of its
/// element count: it keeps fuel roughly proportional to time for programs of many tiny ops.
pub const OP_OVERHEAD: u64 = 64;

impl Default for Limits {
    /// 2^32 element operations (a 1024^3 GEMM takes about 2^30), 1 MiB of shared memory per block
    /// (4.4x an H100's 228 KiB), 64 Mi elements per register tile.
    fn default() -> Limits {
        Limits { fuel: 1 << 32, max_shared_bytes: 1 << 20, max_tile_elements: 64 << 20 }
    }
}

/// Runs `func` over the whole grid of `launch`, with the default [`Limits`]. Global tile arguments are
/// read and written in place in `args`.
pub fn run(func: &Func, args: &mut [ArgValue], launch: &Launch) -> Result<(), InterpError> {
    run_with_limits(func, args, launch, &Limits::default())
}

/// Runs `func` over the whole grid of `launch` with the given limits.
///
/// Checks the arguments against the function's signature first (count, scalar/tile, element type, rank,
/// static extents; a `?` extent takes the tensor's), then that the function contains only `tile` ops and
/// stays within the limits' memory caps, and only then executes. On error, `args` may hold the partial
/// results of the blocks that ran.
pub fn run_with_limits(func: &Func, args: &mut [ArgValue], launch: &Launch, limits: &Limits) -> Result<(), InterpError> {
    exec::Machine::new(func, args, limits)?.run_grid(launch)
}
