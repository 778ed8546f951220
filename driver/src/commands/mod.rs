//! One module per subcommand.

pub mod bench;
pub mod bundle;
pub mod check;
pub mod compare;
pub mod compile;
pub mod interp;
pub mod layout;
pub mod run;
pub mod sim;
pub mod tune;
