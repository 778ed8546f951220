//! The GPU architectures tilec compiles for: one type for the passes, the backends and the driver.

use std::fmt;
use std::str::FromStr;

/// An NVIDIA architecture with tensor cores that tilec compiles for.
///
/// Every target is compiled with PTX ISA 8.0 (`+ptx80`, CUDA 12.0): it is the oldest ISA that covers all
/// four architectures (sm_89/sm_90 need 7.8) and the features tilec uses (`ldmatrix`, `cp.async`, `mma`,
/// sm_90's `stmatrix`), and it is well below ISA 9.0, the newest the CUDA 13.0 driver on the GPU host JIT-loads.
/// One ISA for every target keeps the PTX header identical across targets except for `.target`.
///
/// `sm_90a` is sm_90 with its *architecture-specific* features (`wgmma.mma_async`, `setmaxnreg`): code for
/// it runs on compute capability 9.0 exactly, not on later GPUs, so it orders after sm_90 (an op that needs
/// sm_90 lowers on sm_90a) but a GPU newer than 9.0 never gets it as its newest target.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    /// Ampere A100 (`sm_80`).
    #[default]
    Sm80,
    /// Ampere GA10x (`sm_86`).
    Sm86,
    /// Ada (`sm_89`).
    Sm89,
    /// Hopper H100 (`sm_90`).
    Sm90,
    /// Hopper H100 with the architecture-specific features (`sm_90a`: wgmma, setmaxnreg).
    Sm90a,
}

impl Target {
    /// All targets, oldest first.
    pub const ALL: [Target; 5] = [Target::Sm80, Target::Sm86, Target::Sm89, Target::Sm90, Target::Sm90a];

    /// The target every command compiles for when none is given (`Target::default()`).
    pub const DEFAULT: Target = Target::Sm80;

    /// The architecture name as users, PTX, ptxas and LLVM spell it: `sm_80`, `sm_86`, `sm_89`, `sm_90`,
    /// `sm_90a`.
    pub const fn chip(self) -> &'static str {
        match self {
            Target::Sm80 => "sm_80",
            Target::Sm86 => "sm_86",
            Target::Sm89 => "sm_89",
            Target::Sm90 => "sm_90",
            Target::Sm90a => "sm_90a",
        }
    }

    /// The compute capability as a number: 80, 86, 89, 90 (sm_90a too).
    pub fn compute_capability(self) -> u32 {
        match self {
            Target::Sm80 => 80,
            Target::Sm86 => 86,
            Target::Sm89 => 89,
            Target::Sm90 | Target::Sm90a => 90,
        }
    }

    /// Whether the target has architecture-specific features (`sm_90a`), which run only on GPUs of exactly
    /// its compute capability.
    pub const fn is_arch_specific(self) -> bool {
        matches!(self, Target::Sm90a)
    }

    /// The portable target with exactly this compute capability (`sm_90` for 90, not `sm_90a`).
    pub fn from_compute_capability(cc: u32) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.compute_capability() == cc && !t.is_arch_specific())
    }

    /// The newest target a GPU of compute capability `cc` runs (`None` below sm_80): on a 9.0 GPU (H100)
    /// `sm_90a`; an architecture-specific target only on its own compute capability (a 12.0 GPU gets sm_90).
    pub fn newest_for_compute_capability(cc: u32) -> Option<Target> {
        Target::ALL
            .into_iter()
            .filter(|t| if t.is_arch_specific() { t.compute_capability() == cc } else { t.compute_capability() <= cc })
            .max()
    }

    /// The most shared memory one thread block may use, in bytes (the opt-in maximum of the CUDA
    /// programming guide's "Technical Specifications per Compute Capability": 163 KiB on 8.0, 99 KiB on 8.6 and
    /// 8.9, 227 KiB on 9.0).
    pub const fn max_shared_bytes_per_block(self) -> u64 {
        match self {
            Target::Sm80 => 163 * 1024,
            Target::Sm86 | Target::Sm89 => 99 * 1024,
            Target::Sm90 | Target::Sm90a => 227 * 1024,
        }
    }

    /// The LLVM NVPTX feature string that selects the PTX ISA version (see the type's documentation).
    pub fn ptx_features(self) -> &'static str {
        "+ptx80"
    }

    /// The PTX ISA version written in the `.version` directive, as (major, minor).
    pub fn ptx_isa_version(self) -> (u32, u32) {
        (8, 0)
    }

    /// Whether the architecture has `stmatrix` (sm_90 and later).
    pub fn has_stmatrix(self) -> bool {
        self.compute_capability() >= 90
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.chip())
    }
}

/// A string that names no known target.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown target '{0}' (expected one of sm_80, sm_86, sm_89, sm_90, sm_90a)")]
pub struct UnknownTarget(pub String);

impl FromStr for Target {
    type Err = UnknownTarget;

    /// Accepts `sm_80`, `sm80` and `80` (and likewise for the other targets: `sm_90a`, `sm90a`, `90a`).
    fn from_str(s: &str) -> Result<Target, UnknownTarget> {
        let digits = s.strip_prefix("sm_").or_else(|| s.strip_prefix("sm")).unwrap_or(s);
        Target::ALL
            .into_iter()
            .find(|t| t.chip().strip_prefix("sm_") == Some(digits))
            .ok_or_else(|| UnknownTarget(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in Target::ALL {
            assert_eq!(t.chip().parse::<Target>(), Ok(t));
            assert_eq!(t.to_string().parse::<Target>(), Ok(t));
            assert_eq!(t.chip().trim_start_matches("sm_").parse::<Target>(), Ok(t));
        }
        assert_eq!("sm90".parse::<Target>(), Ok(Target::Sm90));
        assert_eq!("sm90a".parse::<Target>(), Ok(Target::Sm90a));
        assert_eq!("90a".parse::<Target>(), Ok(Target::Sm90a));
        assert!("sm_90b".parse::<Target>().is_err());
        assert!("sm_80a".parse::<Target>().is_err());
        assert!("sm_75".parse::<Target>().is_err());
        assert!("sm_".parse::<Target>().is_err());
        assert!("".parse::<Target>().is_err());
        assert!("+80".parse::<Target>().is_err());
    }

    #[test]
    fn newest_for_a_gpu() {
        assert_eq!(Target::newest_for_compute_capability(75), None);
        assert_eq!(Target::newest_for_compute_capability(80), Some(Target::Sm80));
        assert_eq!(Target::newest_for_compute_capability(87), Some(Target::Sm86));
        // An H100 runs sm_90a; a newer GPU runs sm_90 code but not sm_90a's arch-specific instructions.
        assert_eq!(Target::newest_for_compute_capability(90), Some(Target::Sm90a));
        assert_eq!(Target::newest_for_compute_capability(100), Some(Target::Sm90));
        assert_eq!(Target::newest_for_compute_capability(120), Some(Target::Sm90));
        assert_eq!(Target::from_compute_capability(90), Some(Target::Sm90));
        assert_eq!(Target::default(), Target::DEFAULT);
    }

    #[test]
    fn sm_90a_is_sm_90_and_more() {
        // An op that needs sm_90 (`OpKind::min_target`) lowers on sm_90a: the walk compares with `<`.
        assert!(Target::Sm90 < Target::Sm90a);
        assert!(Target::Sm90a.is_arch_specific() && !Target::Sm90.is_arch_specific());
        assert_eq!(Target::Sm90a.max_shared_bytes_per_block(), Target::Sm90.max_shared_bytes_per_block());
        assert!(Target::Sm90a.has_stmatrix());
    }
}
