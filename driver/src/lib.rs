//! The `tilec` driver: command-line parsing, subcommands, and how failures become exit codes.
//! `main.rs` only calls [`main_with_args`].

pub mod cache;
pub mod cli;
pub mod commands;
pub mod error;
pub mod input;
pub mod params;
pub mod target;

use std::io::{IsTerminal, Write};

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::error::DriverError;

/// Runs tilec with the given arguments (the first is the program name); returns the exit code.
pub fn main_with_args(args: Vec<String>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => 0,
                _ => 1,
            };
        }
    };
    match run(cli) {
        Ok(text) => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes());
            0
        }
        Err(e) => {
            let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            let _ = std::io::stderr().write_all(e.render(color).as_bytes());
            e.exit_code()
        }
    }
}

fn run(cli: Cli) -> Result<String, DriverError> {
    match cli.command {
        Some(Command::Check(args)) => commands::check::run(&args),
        Some(Command::Layout(args)) => commands::layout::run(&args),
        Some(Command::Interp(args)) => commands::interp::run(&args),
        Some(Command::Sim(args)) => commands::sim::run(&args),
        Some(Command::Bundle(args)) => commands::bundle::run(&args),
        Some(Command::Compare(args)) => commands::compare::run(&args),
        Some(Command::Run(args)) => commands::run::run(&args),
        Some(Command::Bench(args)) => commands::bench::run(&args),
        Some(Command::Tune(args)) => commands::tune::run(&args),
        None => {
            let mut args = cli.compile;
            args.input = args.input_path.clone().ok_or_else(|| {
                DriverError::Usage("no input file (run `tilec --help` for usage)".into())
            })?;
            commands::compile::run(&args).map(|()| String::new())
        }
    }
}
