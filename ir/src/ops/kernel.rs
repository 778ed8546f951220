//! The attributes of a kernel (`tile.func @k(...) attributes {num_warps = 4}`), declared like ops' attributes:
//! name, Rust type, default, documentation. An attribute that is not declared here is an error (with a "did
//! you mean" note when a declared name is close), unless its name is upper case: then it is a kernel
//! parameter (`BM = 256`, see [`crate::is_param_name`]). Passes read the attributes through
//! [`KernelAttrs::of`], never by string.

use crate::attr::Attribute;
use crate::body::Func;
use crate::ops::{AttrDef, AttrValue};
use crate::ops::attr_value::{MmaInstruction, PipelineTail, Tolerance};

/// The alignment in bytes that global-to-shared copies may assume of global tiles: one number for every
/// global tile, or one per kernel argument (`global_alignment = 16` or `[16, 2, 16]`), each 16, 8, 4, 2 or 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GlobalAlignment {
    All(u32),
    PerArgument(Vec<u32>),
}

impl GlobalAlignment {
    /// The alignments a global copy may assume, widest first.
    pub const ALLOWED: [u32; 5] = [16, 8, 4, 2, 1];

    /// The alignment of argument number `arg` (every argument's for [`GlobalAlignment::All`]).
    pub fn of_argument(&self, arg: usize) -> Option<u32> {
        match self {
            GlobalAlignment::All(n) => Some(*n),
            GlobalAlignment::PerArgument(v) => v.get(arg).copied(),
        }
    }
}

impl AttrValue for GlobalAlignment {
    const EXPECTED: &'static str = "16, 8, 4, 2 or 1 (bytes), or an array of them with one per argument";

    fn decode(attr: &Attribute) -> Option<GlobalAlignment> {
        let one = |a: &Attribute| u32::decode(a).filter(|n| GlobalAlignment::ALLOWED.contains(n));
        match attr {
            Attribute::Array(items) => items.iter().map(one).collect::<Option<Vec<u32>>>().map(GlobalAlignment::PerArgument),
            a => one(a).map(GlobalAlignment::All),
        }
    }

    fn encode(&self) -> Option<Attribute> {
        Some(match self {
            GlobalAlignment::All(n) => Attribute::Int(i64::from(*n)),
            GlobalAlignment::PerArgument(v) => Attribute::Array(v.iter().map(|&n| Attribute::Int(i64::from(n))).collect()),
        })
    }
}

/// How `tile.copy_g2s` copies global memory into shared memory (`copy_g2s = "tma"` or `"cp_async"`). Without
/// the attribute: TMA on sm_90a where it is legal, else cp.async (a remark says why).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyG2SMode {
    /// TMA loads completing on mbarriers (sm_90a); where a copy cannot be one, an error at the copy.
    Tma,
    /// cp.async (or synchronous copies under a narrow `global_alignment`), on every target.
    CpAsync,
}

impl AttrValue for CopyG2SMode {
    const EXPECTED: &'static str = "\"tma\" or \"cp_async\"";

    fn decode(attr: &Attribute) -> Option<CopyG2SMode> {
        match attr {
            Attribute::Str(s) if s == "tma" => Some(CopyG2SMode::Tma),
            Attribute::Str(s) if s == "cp_async" => Some(CopyG2SMode::CpAsync),
            _ => None,
        }
    }

    fn encode(&self) -> Option<Attribute> {
        Some(Attribute::Str(match self {
            CopyG2SMode::Tma => "tma".into(),
            CopyG2SMode::CpAsync => "cp_async".into(),
        }))
    }
}

/// What the lowering of tile copies requires of the launch extents: `[[argument, axis, multiple], ...]`,
/// extent `axis` of argument number `argument` a multiple of `multiple` elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtentMultiple {
    pub argument: u32,
    pub axis: u32,
    pub multiple: u32,
}

impl AttrValue for Vec<ExtentMultiple> {
    const EXPECTED: &'static str = "an array of [argument, axis, multiple] triples";

    fn decode(attr: &Attribute) -> Option<Vec<ExtentMultiple>> {
        attr.as_array()?
            .iter()
            .map(|item| match Vec::<u32>::decode(item)?.as_slice() {
                &[argument, axis, multiple] => Some(ExtentMultiple { argument, axis, multiple }),
                _ => None,
            })
            .collect()
    }

    fn encode(&self) -> Option<Attribute> {
        let triple = |e: &ExtentMultiple| Vec::from([e.argument, e.axis, e.multiple]).encode();
        Some(Attribute::Array(self.iter().filter_map(triple).collect()))
    }
}

/// The hidden arguments a persistent kernel (`persistent = true`, the `persistent-grid` pass) gets after its
/// own: the logical grid along x, y and z, as `index` values the launcher passes.
pub const PERSISTENT_GRID_ARGS: [&str; 3] = ["persistent_grid_x", "persistent_grid_y", "persistent_grid_z"];

/// Whether `func` is a lowered persistent kernel: its last three arguments are [`PERSISTENT_GRID_ARGS`].
pub fn has_persistent_grid_args(func: &Func) -> bool {
    let args = func.args();
    args.len() >= 3
        && args[args.len() - 3..].iter().zip(PERSISTENT_GRID_ARGS).all(|(&a, n)| func.body.value(a).name.as_deref() == Some(n))
}

/// The warps per block when a kernel does not say (`num_warps`), as in Triton.
pub const DEFAULT_NUM_WARPS: u32 = 4;

macro_rules! kernel_attributes {
    ($($field:ident : $ty:ty = $default:expr ; $doc:literal),* $(,)?) => {
        /// Every attribute a kernel may carry besides its parameters, in the order the reference lists them.
        pub static KERNEL_ATTRS: &[AttrDef] = &[$(AttrDef {
            name: stringify!($field),
            expected: <$ty as AttrValue>::EXPECTED,
            accepts: |a| <$ty as AttrValue>::decode(a).is_some(),
            default: Some(|| <$ty as AttrValue>::encode(&$default)),
            required: false,
            doc: $doc,
        }),*];

        /// A kernel's declared attributes, decoded, defaults applied.
        #[derive(Clone, Debug, PartialEq)]
        pub struct KernelAttrs {
            $(#[doc = $doc] pub $field: $ty,)*
        }

        impl KernelAttrs {
            /// The attributes of `func`; `Err((name, value))` names the first attribute whose value is not of its
            /// declared type (the verifier reports it at the kernel).
            pub fn of(func: &Func) -> Result<KernelAttrs, (&'static str, Attribute)> {
                Ok(KernelAttrs {
                    $($field: match func.attrs.get(stringify!($field)) {
                        None => $default,
                        Some(a) => <$ty as AttrValue>::decode(a).ok_or_else(|| (stringify!($field), a.clone()))?,
                    },)*
                })
            }
        }
    };
}

kernel_attributes! {
    num_warps: u32 = DEFAULT_NUM_WARPS ; "Warps per thread block (1..=32; a power of two in a kernel with register tiles, which are split over the warps by bits of their coordinates).",
    grid: Option<Vec<u32>> = None ; "The launch grid `[x, y, z]` (1 to 3 positive numbers) for `tilec interp`/`sim`/`bundle`; by default derived from the stores of the output.",
    warp_tile: Option<Vec<u32>> = None ; "`[WM, WN]`: each warp's part of an mma's output tile (layout assignment); by default the most square one.",
    global_alignment: Option<GlobalAlignment> = None ; "The alignment in bytes global-to-shared copies may assume (default 16: 16-byte cp.async).",
    copy_g2s: Option<CopyG2SMode> = None ; "How `tile.copy_g2s` copies: `\"tma\"` (TMA loads on mbarriers, sm_90a; an error at a copy TMA cannot do) or `\"cp_async\"`; by default TMA on sm_90a wherever it is legal, else cp.async (`--remarks` says why).",
    pipeline_stages: Option<u32> = None ; "Stages of the software pipeline of the main loop, 1..=8 (1: no pipelining; default: 4, or as many as fit in shared memory; more than fit is an error at the attribute).",
    warp_specialize: Option<bool> = None ; "Whether the main loop gets a producer warpgroup (TMA and cp.async loads into an mbarrier ring with full and empty barriers, `setmaxnreg`) beside the `num_warps` consumer warps that run the wgmmas (sm_90a, wgmma with TMA loads; an error at the loop where it is not legal; default false).",
    fragments_ahead: Option<bool> = None ; "Whether the pipeliner loads the next k-step's register fragments during this one's mma (default true).",
    pipeline_tail: Option<PipelineTail> = None ; "How the software pipeline runs the iterations its main loop (unrolled once per stage) leaves over: `\"peeled\"` (default: one more copy of the body per leftover iteration, after the loop) or `\"guarded\"` (in the loop's last trip, each copy but the first runs where its iteration exists: fewer copies of the body, fewer registers where those copies cost some, a branch between the copies).",
    mma: Option<MmaInstruction> = None ; "Which tensor-core instruction `tile.mma` becomes: `\"wgmma\"` (sm_90a: warpgroup MMA reading A and B from shared memory; an error where it is not legal) or `\"mma_sync\"`; by default wgmma on sm_90a where legal, else mma.sync (a `--remarks` remark says why).",
    persistent: Option<bool> = None ; "Whether the kernel runs on a persistent grid (the `persistent-grid` pass): the launch is P blocks (P = min(tiles, SMs x resident blocks per SM), chosen at launch; `tilec sim` picks a P that does not divide the tiles) and each loops over the logical grid's tiles `t = block_id; t < tiles; t += P`, in grouped order under `raster_group`; the logical grid travels as three hidden `index` arguments after the kernel's own. An error where it cannot be lowered (default false).",
    raster_group: Option<u32> = None ; "Group size of the grouped block order for L2 reuse (the rasterize pass): 1..=65535 rows of blocks; default off (the plain block order, as 1).",
    sample_args: Option<Vec<String>> = None ; "Small inputs for running the kernel with no flags (`tilec interp`/`sim`/`bundle`/`run FILE`): `NAME=SHAPE` for a global tile (`\"A=64x32\"`, `\"x=64\"` for rank 1) or `NAME=VALUE` for a scalar (`\"alpha=2\"`), the `--arg` syntax; `--shape`, `--arg` and `--input` override them by name.",
    sim_tolerance: Option<Tolerance> = None ; "`[ATOL, RTOL]`: how far `tilec sim` lets the simulator's floating-point results be from the interpreter's (default: `tilec compare`'s per-type tolerance), for kernels whose result depends on the order of a sum or on roundings inside it; `--tolerance` overrides it.",
    async_copy_requirements: Option<String> = None ; "Written by the lowering: what its copies require of the launch extents, in words.",
    async_copy_alignment: Option<Vec<ExtentMultiple>> = None ; "Written by the lowering: `[[argument, axis, multiple], ...]`, the extents that must be multiples for its copies' global addresses to be aligned.",
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_attributes_decode_with_defaults() {
        let mut func = Func::new("k", vec![]);
        assert_eq!(KernelAttrs::of(&func).map(|a| a.num_warps), Ok(DEFAULT_NUM_WARPS));
        func.attrs.insert("global_alignment".into(), Attribute::Array(vec![Attribute::Int(16), Attribute::Int(2)]));
        func.attrs.insert("pipeline_stages".into(), Attribute::Int(3));
        let attrs = KernelAttrs::of(&func).unwrap();
        assert_eq!(attrs.global_alignment, Some(GlobalAlignment::PerArgument(vec![16, 2])));
        assert_eq!(attrs.pipeline_stages, Some(3));
        func.attrs.insert("global_alignment".into(), Attribute::Int(3));
        assert_eq!(KernelAttrs::of(&func).err().map(|e| e.0), Some("global_alignment"));
    }
}
