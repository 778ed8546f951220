//! What can go wrong while simulating: misuse of an instruction as the PTX ISA defines it, or a program that
//! the simulator cannot (or will not, for lack of fuel) run. Every error names the op's span, and where it
//! matters the block, warp, lane and address, and converts into a located [`Diagnostic`].

use std::fmt;

use crate::diag::{Diagnostic, Span};

/// Where in the launch an error happened: the thread block and the warp in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Place {
    pub block: [u32; 3],
    pub warp: u32,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.block;
        write!(f, "block ({x}, {y}, {z}), warp {}", self.warp)
    }
}

/// A set of lanes of a warp, printed as ranges (`0-7, 16`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaneMask(pub u32);

impl LaneMask {
    pub const FULL: LaneMask = LaneMask(u32::MAX);

    pub fn contains(self, lane: u32) -> bool {
        lane < 32 && self.0 >> lane & 1 == 1
    }

    pub fn lanes(self) -> impl Iterator<Item = u32> {
        (0..32).filter(move |&l| self.contains(l))
    }
}

impl fmt::Display for LaneMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0 {
            return f.write_str("none");
        }
        let mut first = true;
        let mut lane = 0;
        while lane < 32 {
            if !self.contains(lane) {
                lane += 1;
                continue;
            }
            let start = lane;
            while lane + 1 < 32 && self.contains(lane + 1) {
                lane += 1;
            }
            if !first {
                f.write_str(", ")?;
            }
            first = false;
            if start == lane {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{lane}")?;
            }
            lane += 1;
        }
        Ok(())
    }
}

/// An error of the warp simulator.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SimError {
    /// An address is not aligned as the instruction requires (an `ldmatrix`/`stmatrix` row address not
    /// 16-byte aligned, a vector access or an asynchronous copy not aligned to its size).
    #[error("'{op}': lane {lane} gives {space} address {address:#x}, which is not {align}-byte aligned ({at})")]
    Misaligned { span: Span, op: &'static str, at: Place, lane: u32, space: &'static str, address: u64, align: u64 },

    /// An access outside a global or shared tile.
    #[error("'{op}': lane {lane} accesses {space} tile of shape {shape:?} at index {index:?}{extent}, out of bounds ({at})", extent = extent_note(*.count, *.axis))]
    OutOfBounds {
        span: Span,
        op: &'static str,
        at: Place,
        lane: u32,
        space: &'static str,
        index: Vec<i64>,
        /// How many elements the access covers, consecutive in memory along `axis`.
        count: usize,
        /// The axis that runs contiguously in memory (the last; the first of a `#col_major` tile).
        axis: usize,
        shape: Vec<usize>,
    },

    /// A warp-synchronous op (`.sync`: `ldmatrix`, `stmatrix`, `mma.sync`; or `barrier`) reached with only
    /// part of the warp active, because a loop before it ran a lane-dependent number of iterations.
    #[error("'{op}' needs all 32 lanes of the warp converged, but only lanes {active} are active ({at})")]
    Divergent { span: Span, op: &'static str, at: Place, active: LaneMask, loop_span: Option<Span> },

    /// An operand's type is not the fragment the instruction needs.
    #[error("'{op}': {message}")]
    FragmentType { span: Span, op: &'static str, message: String },

    /// Shared memory is read or written while an asynchronous copy into it is still pending (not covered by a
    /// `nvgpu.device_async_wait` of the thread that issued it).
    #[error("'{op}': lane {lane} accesses shared address {address:#x} while an asynchronous copy into it is still pending; wait for its group first ({at})")]
    AsyncHazard { span: Span, op: &'static str, at: Place, lane: u32, address: u64 },

    /// Two warps of a block access one element of shared memory (or of a global tile), at least one of them
    /// writing, with no barrier between them ([`super::race`]).
    #[error("data race: '{op}' {does} {space} memory that '{first_op}' in warp {first_warp} {did}, with no barrier in between ({at})")]
    Race {
        span: Span,
        op: &'static str,
        does: &'static str,
        space: &'static str,
        first_span: Span,
        first_op: &'static str,
        first_warp: u32,
        did: &'static str,
        at: Place,
        /// One of the two is a TMA load's write (the async proxy): a wait on its mbarrier phase orders it.
        async_proxy: bool,
    },

    /// Integer division or remainder by zero.
    #[error("'{op}': lane {lane} divides by zero ({at})")]
    DivisionByZero { span: Span, op: &'static str, at: Place, lane: u32 },

    /// A loop whose step is not positive would never end.
    #[error("'tile.for': lane {lane} has step {step}; the step must be positive ({at})")]
    BadLoopStep { span: Span, at: Place, lane: u32, step: i64 },

    /// The program ran more operations than its fuel allows.
    #[error("the simulation ran out of fuel after {fuel} warp-operations (an endless or very long loop?)")]
    FuelExhausted { span: Span, fuel: u64 },

    /// An op the simulator does not execute (the `tile` dialect's tile-level ops: lower them first).
    #[error("'{op}' cannot be simulated: {reason}")]
    Unsupported { span: Span, op: &'static str, reason: String },

    /// The arguments do not match the kernel's signature.
    #[error("{message}")]
    Arguments { span: Span, message: String },

    /// The kernel's shared tiles do not fit in the shared memory of a thread block.
    #[error("the shared tiles need {bytes} bytes, more than the {limit} bytes of shared memory of a block")]
    SharedMemoryExceeded { span: Span, bytes: u64, limit: u64 },

    /// A value is read in a lane where it was never computed.
    #[error("'{op}': lane {lane} reads a value that has not been computed ({at})")]
    Undefined { span: Span, op: &'static str, at: Place, lane: u32 },

    /// Misuse of an mbarrier (uninitialized, out-of-range counts or ids) or a wait on one that can never end.
    #[error("'{op}': {message} ({at})")]
    MBarrier { span: Span, op: &'static str, at: Place, message: String },

    /// Misuse of warpgroup MMA: a missing `nvgpu.wgmma.fence` or proxy fence, a D read before its group
    /// retired, a descriptor that does not describe a shared matrix.
    #[error("'{op}': {message} ({at})")]
    Wgmma { span: Span, op: &'static str, at: Place, message: String },

    /// A per-thread value is larger than a thread's registers could hold.
    #[error("'{op}': a vector of {elements} elements per thread is more than the simulator allows ({limit})")]
    TooLarge { span: Span, op: &'static str, elements: u64, limit: u64 },
}

fn extent_note(count: usize, axis: usize) -> String {
    if count > 1 {
        format!(" (+{count} elements along axis {axis})")
    } else {
        String::new()
    }
}

impl SimError {
    /// The span of the op (or function) the error is about.
    pub fn span(&self) -> Span {
        match self {
            SimError::Misaligned { span, .. }
            | SimError::OutOfBounds { span, .. }
            | SimError::Divergent { span, .. }
            | SimError::FragmentType { span, .. }
            | SimError::AsyncHazard { span, .. }
            | SimError::Race { span, .. }
            | SimError::DivisionByZero { span, .. }
            | SimError::BadLoopStep { span, .. }
            | SimError::FuelExhausted { span, .. }
            | SimError::Unsupported { span, .. }
            | SimError::Arguments { span, .. }
            | SimError::SharedMemoryExceeded { span, .. }
            | SimError::Undefined { span, .. }
            | SimError::MBarrier { span, .. }
            | SimError::Wgmma { span, .. }
            | SimError::TooLarge { span, .. } => *span,
        }
    }
}

impl From<SimError> for Diagnostic {
    fn from(e: SimError) -> Diagnostic {
        let d = Diagnostic::error(e.span(), e.to_string());
        match e {
            SimError::Divergent { loop_span: Some(l), .. } => {
                d.with_note_at(l, "the warp diverged here: its lanes ran this loop a different number of times")
            }
            SimError::Divergent { loop_span: None, .. } => d,
            SimError::Race { first_span, first_op, first_warp, async_proxy: true, .. } => d
                .with_note_at(first_span, format!("the other access: '{first_op}' issued by warp {first_warp}"))
                .with_note("a TMA load writes shared memory through the async proxy: only a wait on the mbarrier phase it completes ('nvgpu.mbarrier.try_wait.parity') orders its writes before an access, and an access before it needs a barrier before the issue"),
            SimError::Race { first_span, first_op, first_warp, .. } => d
                .with_note_at(first_span, format!("the other access: '{first_op}' in warp {first_warp}"))
                .with_note("order them with a barrier ('nvgpu.barrier' at the nvgpu level); the simulator runs the warps of a block one after another between barriers, so it sees every such pair"),
            SimError::Misaligned { op: "nvgpu.ldmatrix" | "nvgpu.stmatrix", .. } => {
                d.with_note("each of the 8 rows of an 8x8 b16 matrix is 16 contiguous bytes starting at a 16-byte aligned shared address")
            }
            _ => d,
        }
    }
}
