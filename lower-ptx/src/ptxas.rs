//! Finding and running NVIDIA's `ptxas`, and reading its `-v` resource report.
//!
//! tilec has no GPU at build time; ptxas (from the PyPI wheel `nvidia-cuda-nvcc`, installed by
//! `scripts/setup.sh` into the project-local `.tools/`) is the check that the PTX tilec emits is accepted by
//! NVIDIA's own assembler, and its `-v` report tells registers, spills and shared memory per kernel.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};
use crate::target::Target;

/// Where `scripts/setup.sh` installs ptxas, relative to the workspace root.
pub const PROJECT_LOCAL_PTXAS: &str = ".tools/nvcc/nvidia/cu13/bin/ptxas";

/// Environment variable that names the ptxas to use; it wins over every other place.
pub const PTXAS_ENV: &str = "PTXAS";

/// A located ptxas executable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ptxas {
    path: PathBuf,
}

/// Resources one kernel (entry function) uses, from `ptxas -v`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelResources {
    /// The entry function's (mangled) name.
    pub name: String,
    /// The architecture ptxas compiled it for (`sm_80`).
    pub arch: String,
    /// Registers per thread.
    pub registers: u32,
    /// Bytes of register spill stores per thread.
    pub spill_stores: u32,
    /// Bytes of register spill loads per thread.
    pub spill_loads: u32,
    /// Bytes of stack frame per thread.
    pub stack_frame: u32,
    /// Bytes of static shared memory per block.
    pub shared_bytes: u32,
    /// Named barriers used.
    pub barriers: u32,
    /// Bytes of constant bank 0 (kernel parameters and driver constants).
    pub constant_bytes: u32,
}

impl KernelResources {
    /// Whether ptxas spilled registers to local memory.
    pub fn has_spills(&self) -> bool {
        self.spill_stores > 0 || self.spill_loads > 0
    }
}

/// What a successful ptxas run reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PtxasReport {
    /// One entry per kernel, in the order ptxas reported them.
    pub kernels: Vec<KernelResources>,
    /// ptxas's whole `-v` output (also holds warnings).
    pub log: String,
    /// The assembled cubin.
    pub cubin: Vec<u8>,
}

impl PtxasReport {
    /// The resources of the kernel called `name`, if ptxas reported it.
    pub fn kernel(&self, name: &str) -> Option<&KernelResources> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

impl Ptxas {
    /// Uses the ptxas at `path` (not checked until it is run).
    pub fn at(path: impl Into<PathBuf>) -> Self {
        Ptxas { path: path.into() }
    }

    /// Finds ptxas: `$PTXAS`, then the project-local `.tools/` (relative to this workspace's root and to
    /// the current directory), then every directory of `PATH`.
    pub fn locate() -> Result<Self> {
        let mut searched = Vec::new();
        if let Some(p) = std::env::var_os(PTXAS_ENV).filter(|p| !p.is_empty()) {
            let p = PathBuf::from(p);
            if is_executable(&p) {
                return Ok(Ptxas::at(p));
            }
            searched.push(p);
        }
        let workspace_root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for base in [workspace_root, PathBuf::from(".")] {
            let p = base.join(PROJECT_LOCAL_PTXAS);
            if is_executable(&p) {
                return Ok(Ptxas::at(p.canonicalize().unwrap_or(p)));
            }
            searched.push(p);
        }
        let path_var = std::env::var_os("PATH").unwrap_or_default();
        for dir in std::env::split_paths(&path_var) {
            let p = dir.join("ptxas");
            if is_executable(&p) {
                return Ok(Ptxas::at(p));
            }
        }
        searched.push(PathBuf::from("$PATH"));
        Err(Error::PtxasNotFound { searched })
    }

    /// The executable's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The last line of `ptxas --version` (e.g. `Build cuda_13.5.r13.5/compiler.…`).
    pub fn version(&self) -> Result<String> {
        let out = Command::new(&self.path)
            .arg("--version")
            .output()
            .map_err(|source| Error::PtxasSpawn {
                path: self.path.clone(),
                source,
            })?;
        let text = String::from_utf8_lossy(&out.stdout);
        Ok(text.lines().last().unwrap_or("").trim().to_string())
    }

    /// Assembles `ptx` for `target` with `-v` and returns the resource report and the cubin.
    ///
    /// ptxas rejects PTX whose `.target` is newer than `target`, so compile the PTX per target.
    pub fn assemble(&self, ptx: &str, target: Target) -> Result<PtxasReport> {
        let dir = ScratchDir::new()?;
        let input = dir.path.join("input.ptx");
        let output = dir.path.join("output.cubin");
        std::fs::write(&input, ptx)?;
        let out = Command::new(&self.path)
            .arg(format!("-arch={}", target.chip()))
            .arg("-v")
            .arg(&input)
            .arg("-o")
            .arg(&output)
            .output()
            .map_err(|source| Error::PtxasSpawn {
                path: self.path.clone(),
                source,
            })?;
        let mut log = String::from_utf8_lossy(&out.stdout).into_owned();
        log.push_str(&String::from_utf8_lossy(&out.stderr));
        if !out.status.success() {
            return Err(Error::PtxasRejected { target, log });
        }
        let cubin = std::fs::read(&output)?;
        Ok(PtxasReport {
            kernels: parse_resource_report(&log),
            log,
            cubin,
        })
    }
}

/// Parses the `-v` output of ptxas into one [`KernelResources`] per compiled entry function.
///
/// The lines it reads look like:
/// ```text
/// ptxas info    : Compiling entry function 'smoke' for 'sm_80'
/// ptxas info    : Function properties for smoke
///     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
/// ptxas info    : Used 14 registers, used 1 barriers, 1024 bytes smem, 368 bytes cmem[0]
/// ```
/// Lines it does not recognise are ignored; fields ptxas leaves out stay 0.
pub fn parse_resource_report(log: &str) -> Vec<KernelResources> {
    let mut kernels: Vec<KernelResources> = Vec::new();
    for line in log.lines() {
        let body = line
            .trim_start_matches("ptxas info")
            .trim_start()
            .trim_start_matches(':')
            .trim();
        if let Some(rest) = body.strip_prefix("Compiling entry function ") {
            let mut quoted = rest.split('\'').skip(1).step_by(2);
            let name = quoted.next().unwrap_or_default().to_string();
            let arch = quoted.next().unwrap_or_default().to_string();
            kernels.push(KernelResources {
                name,
                arch,
                ..Default::default()
            });
            continue;
        }
        let Some(current) = kernels.last_mut() else {
            continue;
        };
        if body.contains("stack frame") || body.contains("spill stores") {
            for field in body.split(',') {
                let n = leading_number(field);
                if field.contains("stack frame") {
                    current.stack_frame = n;
                } else if field.contains("spill stores") {
                    current.spill_stores = n;
                } else if field.contains("spill loads") {
                    current.spill_loads = n;
                }
            }
        } else if let Some(rest) = body.strip_prefix("Used ") {
            for field in rest.split(',') {
                let field = field.trim();
                if field.ends_with("registers") {
                    current.registers = leading_number(field);
                } else if field.starts_with("used ") && field.ends_with("barriers") {
                    current.barriers = leading_number(field.trim_start_matches("used "));
                } else if field.ends_with("bytes smem") {
                    current.shared_bytes = leading_number(field);
                } else if field.ends_with("bytes cmem[0]") {
                    current.constant_bytes = leading_number(field);
                }
            }
        }
    }
    kernels
}

fn leading_number(text: &str) -> u32 {
    let text = text.trim();
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    text[..end].parse().unwrap_or(0)
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// A private temporary directory for one ptxas run, removed on drop.
struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    fn new() -> Result<Self> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("tilec-ptxas-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        Ok(ScratchDir { path })
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'smoke' for 'sm_80'
ptxas info    : Function properties for smoke
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 14 registers, used 1 barriers, 1024 bytes smem, 368 bytes cmem[0]
ptxas info    : Compiling entry function 'gemm' for 'sm_90'
ptxas info    : Function properties for gemm
    24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 255 registers, 368 bytes cmem[0]
ptxas info    : Compile time = 2.703 ms
";

    #[test]
    fn parses_two_kernels() {
        let ks = parse_resource_report(REPORT);
        assert_eq!(ks.len(), 2);
        assert_eq!(
            ks[0],
            KernelResources {
                name: "smoke".into(),
                arch: "sm_80".into(),
                registers: 14,
                spill_stores: 0,
                spill_loads: 0,
                stack_frame: 0,
                shared_bytes: 1024,
                barriers: 1,
                constant_bytes: 368,
            }
        );
        assert!(!ks[0].has_spills());
        assert_eq!(
            (
                ks[1].registers,
                ks[1].stack_frame,
                ks[1].spill_stores,
                ks[1].spill_loads
            ),
            (255, 24, 8, 12)
        );
        assert_eq!(ks[1].shared_bytes, 0);
        assert!(ks[1].has_spills());
    }

    #[test]
    fn ignores_garbage() {
        assert!(parse_resource_report("garbage\nUsed 3 registers\n").is_empty());
    }
}
