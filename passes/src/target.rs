//! The GPU architecture a pipeline compiles for.
//!
//! The backend crate (`tilec-lower-ptx`) has its own `Target` with the same four variants; convert between
//! the two through the compute capability (`Target::from_compute_capability(t.compute_capability())`) or
//! the `sm_NN` name, so this crate does not depend on the backend.

use std::fmt;
use std::str::FromStr;

/// An NVIDIA architecture with tensor cores that tilec compiles for.
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
}

impl Target {
    /// All targets, oldest first.
    pub const ALL: [Target; 4] = [Target::Sm80, Target::Sm86, Target::Sm89, Target::Sm90];

    /// The architecture name: `sm_80`, `sm_86`, `sm_89`, `sm_90`.
    /// The most shared memory one thread block may use, in bytes (the opt-in maximum of the CUDA
    /// programming guide's "Technical Specifications per Compute Capability": 163 KiB on 8.0, 99 KiB on 8.6 and
    /// 8.9, 227 KiB on 9.0).
    pub fn max_shared_bytes_per_block(self) -> u64 {
        match self {
            Target::Sm80 => 163 * 1024,
            Target::Sm86 | Target::Sm89 => 99 * 1024,
            Target::Sm90 => 227 * 1024,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Target::Sm80 => "sm_80",
            Target::Sm86 => "sm_86",
            Target::Sm89 => "sm_89",
            Target::Sm90 => "sm_90",
        }
    }

    /// The compute capability as a number: 80, 86, 89, 90.
    pub fn compute_capability(self) -> u32 {
        match self {
            Target::Sm80 => 80,
            Target::Sm86 => 86,
            Target::Sm89 => 89,
            Target::Sm90 => 90,
        }
    }

    /// The target with this compute capability.
    pub fn from_compute_capability(cc: u32) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.compute_capability() == cc)
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A string that names no known target.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown target '{0}' (expected one of sm_80, sm_86, sm_89, sm_90)")]
pub struct UnknownTarget(pub String);

impl FromStr for Target {
    type Err = UnknownTarget;

    /// Accepts `sm_80`, `sm80` and `80` (and likewise for the other targets).
    fn from_str(s: &str) -> Result<Target, UnknownTarget> {
        let digits = s.strip_prefix("sm_").or_else(|| s.strip_prefix("sm")).unwrap_or(s);
        digits
            .parse::<u32>()
            .ok()
            .and_then(Target::from_compute_capability)
            .ok_or_else(|| UnknownTarget(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in Target::ALL {
            assert_eq!(t.name().parse::<Target>(), Ok(t));
            assert_eq!(t.compute_capability().to_string().parse::<Target>(), Ok(t));
        }
        assert!("sm_75".parse::<Target>().is_err());
        assert!("".parse::<Target>().is_err());
    }
}
