//! Optimisation levels. The GPU target is [`tilec_ir::Target`], shared with the passes; it is imported
//! here so the translators' `use crate::target::{OptLevel, Target}` reads as before.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;
pub(crate) use tilec_ir::Target;

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
    fn opt_level_parses() {
        assert_eq!("-O2".parse::<OptLevel>().unwrap(), OptLevel::O2);
        assert_eq!("O0".parse::<OptLevel>().unwrap(), OptLevel::O0);
        assert_eq!("3".parse::<OptLevel>().unwrap(), OptLevel::O3);
        assert!("O4".parse::<OptLevel>().is_err());
        assert_eq!(OptLevel::O1.llvm_pipeline(), "default<O1>");
    }
}
