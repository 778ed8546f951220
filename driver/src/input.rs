//! Reading inputs (a path or `-` for stdin) and writing outputs atomically.

use std::io::{Read, Write};
use std::path::Path;

use tilec_ir::{Module, SourceFile};

use crate::error::DriverError;

/// Reads a source file, or standard input for `-`.
pub fn read_source(path: &str) -> Result<SourceFile, DriverError> {
    let mut bytes = Vec::new();
    if path == "-" {
        std::io::stdin().read_to_end(&mut bytes).map_err(|e| DriverError::io("<stdin>", &e))?;
    } else {
        bytes = std::fs::read(path).map_err(|e| DriverError::io(path, &e))?;
    }
    let name = if path == "-" { "<stdin>" } else { path };
    // Invalid UTF-8 becomes U+FFFD, which the lexer then reports at its place.
    let text = String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Ok(SourceFile::new(name, text))
}

/// [`read_source`], then the `--param NAME=V` settings applied to the text ([`crate::params::apply_params`]).
pub fn read_source_with(path: &str, params: &[String]) -> Result<SourceFile, DriverError> {
    crate::params::apply_params(read_source(path)?, params)
}

/// Parses and verifies a source file.
pub fn parse_and_verify(source: &SourceFile) -> Result<Module, DriverError> {
    let module = tilec_ir::parse_module(&source.text).map_err(|d| diagnostics(source, d.0))?;
    tilec_ir::verify::verify_module(&module).map_err(|d| diagnostics(source, d.0))?;
    Ok(module)
}

/// What is said, at the start of the input, of one that defines no `tile.func` (an empty file, or only
/// comments): an error when compiling (an empty PTX module is never what was meant), a warning in `check`.
pub const NO_FUNCTIONS: &str = "the input defines no 'tile.func': nothing to compile";

/// Prints located warnings on stderr, rendered like errors (`path:line:col: warning: ...` with the caret).
pub fn print_warnings(source: &SourceFile, warnings: &[tilec_ir::Diagnostic]) {
    use std::io::IsTerminal;
    if warnings.is_empty() {
        return;
    }
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let _ = std::io::stderr().lock().write_all(source.render(warnings, color).as_bytes());
}

pub fn diagnostics(source: &SourceFile, diagnostics: Vec<tilec_ir::Diagnostic>) -> DriverError {
    DriverError::Diagnostics { source_file: Box::new(source.clone()), diagnostics }
}

/// A front-door failure as a driver error: diagnostics located in `source` (a bad `--pipeline` string's in
/// the string itself), or a usage error.
pub fn compile_error(source: &SourceFile, error: tilec_compiler::CompileError) -> DriverError {
    use tilec_compiler::CompileError;
    match error {
        CompileError::Pipeline { text, diagnostic } => diagnostics(&SourceFile::new("--pipeline", text), vec![diagnostic]),
        CompileError::Misaligned(message) | CompileError::Unsupported(message) => DriverError::Usage(message),
        other => diagnostics(source, other.diagnostics()),
    }
}

/// Writes `contents` to `path` (stdout for `-`), all or nothing: a temporary file beside the target is
/// renamed over it, so a failure never leaves a partial output. Devices and pipes are written in place.
pub fn write_output(path: &str, contents: &[u8]) -> Result<(), DriverError> {
    if path == "-" {
        let mut out = std::io::stdout().lock();
        return match out.write_all(contents).and_then(|_| out.flush()) {
            // The reader is done (`tilec k.tir | head`): as for `cat`, not an error (the rest is not wanted).
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            other => other.map_err(|e| DriverError::io("<stdout>", &e)),
        };
    }
    let target = Path::new(path);
    if target.is_dir() {
        return Err(DriverError::Usage(format!("{path} is a directory: give a file name to write, such as {}", target.join("out").display())));
    }
    // A device or a pipe (`-o /dev/null`, `-o /dev/stdout`, a FIFO) is written in place: renaming a temporary
    // file over it would replace the device node itself (and, as root, break /dev/null for everyone).
    if let Ok(meta) = std::fs::metadata(target) {
        if !meta.is_file() && !meta.is_dir() {
            let mut file = std::fs::OpenOptions::new().write(true).open(target).map_err(|e| DriverError::io(path, &e))?;
            return file.write_all(contents).and_then(|_| file.flush()).map_err(|e| DriverError::io(path, &e));
        }
    }
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let file_name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{file_name}.tilec-{}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(contents)?;
        // No fsync: the rename already makes the write all-or-nothing for readers and for a crash of tilec;
        // surviving a power cut is not a compiler's job (gcc, clang and rustc do not sync either), and the
        // sync cost 5-10 ms of each compile's wall time (most of a cache hit's).
        std::fs::rename(&tmp, target)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        DriverError::io(path, &e)
    })
}
