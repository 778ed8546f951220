//! `tilec FILE [-o OUT] [--emit ...]`: the compiler proper.

use crate::cli::{CompileArgs, Emit};
use crate::error::DriverError;
use crate::input::{parse_and_verify, read_source, write_output};

pub fn run(args: &CompileArgs) -> Result<(), DriverError> {
    let source = read_source(&args.input)?;
    let module = parse_and_verify(&source)?;
    let output = match args.emit {
        Emit::Tir => tilec_ir::print_module(&module),
        other => {
            return Err(DriverError::Usage(format!(
                "--emit {other}: lowering past the tile dialect is not built yet (only --emit tir works in this version)"
            )))
        }
    };
    write_output(&args.output, output.as_bytes())
}
