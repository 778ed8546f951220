//! What can go wrong in the driver, and the exit code each failure gets.

use tilec_ir::{Diagnostic, SourceFile};

/// A driver failure. Only `main` prints these and chooses the exit code.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// Problems in the user's input, located in a source file.
    #[error("{} error(s) in {}", .diagnostics.len(), .source_file.name)]
    Diagnostics { source_file: Box<SourceFile>, diagnostics: Vec<Diagnostic> },
    /// A user error without a source location (bad option value, unknown layout name, ...).
    #[error("{0}")]
    Usage(String),
    /// Reading or writing a file the user named failed.
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    /// Something the machine lacks (no GPU, no ptxas, ...).
    #[error("{0}")]
    Environment(String),
}

impl DriverError {
    /// 1 for user errors, 2 for a missing environment.
    pub fn exit_code(&self) -> i32 {
        match self {
            DriverError::Environment(_) => 2,
            _ => 1,
        }
    }

    pub fn io(path: &str, error: &std::io::Error) -> DriverError {
        DriverError::Io { path: path.to_string(), message: error.to_string() }
    }

    /// The text printed on stderr.
    pub fn render(&self, color: bool) -> String {
        match self {
            DriverError::Diagnostics { source_file, diagnostics } => source_file.render(diagnostics, color),
            DriverError::Usage(message) => format!("tilec: error: {message}\n"),
            DriverError::Io { path, message } => format!("{path}: error: {message}\n"),
            DriverError::Environment(message) => format!("tilec: error: {message}\n"),
        }
    }
}
