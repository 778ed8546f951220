//! GPU targets and optimisation levels.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;

/// An NVIDIA GPU architecture tilec compiles for.
///
/// Every target is compiled with PTX ISA 8.0 (`+ptx80`, CUDA 12.0): it is the oldest ISA that covers all
/// four architectures (sm_89/sm_90 need 7.8) and the features tilec uses (`ldmatrix`, `cp.async`, `mma`,
/// sm_90's `stmatrix`), and it is well below ISA 9.0, the newest the CUDA 13.0 driver on the GPU host JIT-loads.
/// One ISA for every target keeps the PTX header identical across targets except for `.target`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    /// Ampere A100 (`sm_80`).
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

    /// The architecture name as PTX, ptxas and LLVM spell it: `sm_80`, ….
    pub fn chip(self) -> &'static str {
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

impl FromStr for Target {
    type Err = Error;

    /// Accepts `sm_80`, `sm80` and `80` (and likewise for the other targets).
    fn from_str(s: &str) -> Result<Self, Error> {
        let digits = s
            .strip_prefix("sm_")
            .or_else(|| s.strip_prefix("sm"))
            .unwrap_or(s);
        Target::ALL
            .into_iter()
            .find(|t| t.compute_capability().to_string() == digits)
            .ok_or_else(|| Error::UnknownTarget(s.to_string()))
    }
}

/// Optimisation level of the LLVM pipeline (`-O0` … `-O3`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum OptLevel {
    /// No optimisation.
    O0,
    /// Light optimisation.
    O1,
    /// Default optimisation.
    O2,
    /// Aggressive optimisation (tilec's default).
    #[default]
    O3,
}

impl OptLevel {
    /// All levels, lowest first.
    pub const ALL: [OptLevel; 4] = [OptLevel::O0, OptLevel::O1, OptLevel::O2, OptLevel::O3];

    /// The level as a number.
    pub fn as_u32(self) -> u32 {
        self as u32
    }

    /// The new pass manager's pipeline for this level: `default<O3>` etc.
    pub fn llvm_pipeline(self) -> String {
        format!("default<O{}>", self.as_u32())
    }
}

impl fmt::Display for OptLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "O{}", self.as_u32())
    }
}

impl FromStr for OptLevel {
    type Err = Error;

    /// Accepts `2`, `O2` and `-O2`.
    fn from_str(s: &str) -> Result<Self, Error> {
        let digits = s.trim_start_matches('-').trim_start_matches('O');
        match digits {
            "0" => Ok(OptLevel::O0),
            "1" => Ok(OptLevel::O1),
            "2" => Ok(OptLevel::O2),
            "3" => Ok(OptLevel::O3),
            _ => Err(Error::UnknownOptLevel(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_round_trips_through_text() {
        for t in Target::ALL {
            assert_eq!(t.to_string().parse::<Target>().unwrap(), t);
        }
        assert_eq!("sm90".parse::<Target>().unwrap(), Target::Sm90);
        assert_eq!("86".parse::<Target>().unwrap(), Target::Sm86);
        assert!("sm_75".parse::<Target>().is_err());
        assert!("sm_".parse::<Target>().is_err());
    }

    #[test]
    fn opt_level_parses() {
        assert_eq!("-O2".parse::<OptLevel>().unwrap(), OptLevel::O2);
        assert_eq!("O0".parse::<OptLevel>().unwrap(), OptLevel::O0);
        assert_eq!("3".parse::<OptLevel>().unwrap(), OptLevel::O3);
        assert!("O4".parse::<OptLevel>().is_err());
        assert_eq!(OptLevel::O1.llvm_pipeline(), "default<O1>");
    }
}
