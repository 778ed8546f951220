//! One module per subcommand.

pub mod check;
pub mod compile;
pub mod interp;
pub mod layout;
pub mod sim;
