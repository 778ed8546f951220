//! The command line, declared with clap.

use std::fmt;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::target::{DEFAULT_TARGET, TARGET_VALUES};

const AFTER_HELP: &str = "\
Exit codes:
  0  success
  1  user error: a diagnostic (path:line:col: error: ...) or bad usage was printed
  2  environment error: something the machine lacks (no GPU, no ptxas)

Examples:
  tilec examples/gemm.tir -o gemm.ptx       compile to PTX (the output's extension picks --emit)
  tilec examples/gemm.tir --emit tir        print the IR after the tile-level cleanup
  tilec check examples/gemm.tir             parse and verify only
  tilec layout mma.m16n8k16.f16.a           show a hardware fragment layout";

/// tilec: compile tile IR for NVIDIA tensor cores down to PTX.
#[derive(Debug, Parser)]
#[command(name = "tilec", version, about, after_help = AFTER_HELP, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub compile: CompileArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Parse and verify a file; print diagnostics only.
    Check(CheckArgs),
    /// Show a hardware fragment layout as a table, JSON, or an SVG picture.
    Layout(LayoutArgs),
    /// Run the reference interpreter on seeded random inputs; print a checksum per argument.
    Interp(InterpArgs),
    /// Run a kernel on the CPU warp simulator: nvgpu-level kernels print probed per-lane registers; tile-level
    /// kernels are lowered first and compared with the reference interpreter.
    Sim(SimArgs),
    /// Compile a kernel and write a GPU run bundle (PTX, launch, seeded inputs, the oracle's results).
    Bundle(BundleArgs),
    /// Check the results a GPU run wrote into a bundle against the oracle's.
    Compare(CompareArgs),
    /// Compile, run on this machine's GPU and check against the oracle (needs a GPU and its driver).
    Run(RunArgs),
    /// Time a GEMM kernel against cuBLAS on the GPU (same process, same inputs) and check its result against
    /// cuBLAS's; or, with --bundle, write one bench bundle per shape for `tilec-gpu-runner bench`.
    Bench(BenchArgs),
    /// Search a kernel's attributes and parameters (a GEMM's pipeline_stages, num_warps, fragments_ahead, or any
    /// kernel's with --param and --arg) on the GPU and write the fastest as attributes; or, with --bundle, write one bench bundle per candidate for
    /// `tilec-gpu-runner tune`; or, with --results, write the fastest of the runner's records.
    Tune(TuneArgs),
}

/// Compile a `.tir` file (the default command).
#[derive(Debug, Args)]
pub struct CompileArgs {
    /// Input file (`-` for standard input).
    #[arg(value_name = "INPUT")]
    pub input_path: Option<String>,
    /// Output file (`-` for standard output). Written atomically: never partially.
    #[arg(short = 'o', long = "output", default_value = "-", value_name = "FILE")]
    pub output: String,
    /// What to produce. Default: from the extension of -o (`.ptx` ptx, `.ll` llvm, `.mlir` mlir, `.tir` tir,
    /// `.nvgpu` nvgpu); PTX for standard output and any other extension.
    #[arg(long, value_enum)]
    pub emit: Option<Emit>,
    /// GPU architecture; `native`: the one of this machine's GPU.
    #[arg(long, default_value = DEFAULT_TARGET, value_name = TARGET_VALUES)]
    pub target: String,
    /// Backend for --emit ptx: `llvm` (LLVM NVPTX through inkwell) or `mlir` (upstream gpu/nvgpu → NVVM
    /// through melior). Both give kernels with the same parameters. --emit mlir always uses the MLIR backend.
    #[arg(long, value_enum, default_value_t = Backend::Llvm)]
    pub backend: Backend,
    /// LLVM optimisation level for --emit llvm/mlir/ptx.
    #[arg(short = 'O', value_name = "0-3", default_value = "3")]
    pub opt_level: String,
    /// Also write each kernel's launch description (grid-independent: block size, shared memory,
    /// parameters) as JSON, for the GPU runner.
    #[arg(long, value_name = "FILE")]
    pub manifest: Option<String>,
    /// Pass pipeline, e.g. "canonicalize,cse,dce". Default: the tile-level cleanup for --emit tir; that plus
    /// layout assignment and lowering to nvgpu for the other --emit kinds.
    #[arg(long, value_name = "PASSES")]
    pub pipeline: Option<String>,
    /// Print the IR after every pass (to stderr).
    #[arg(long)]
    pub print_ir_after_all: bool,
    /// Print the IR after the named pass (repeatable).
    #[arg(long, value_name = "PASS")]
    pub print_ir_after: Vec<String>,
    /// Print the IR before the named pass (repeatable).
    #[arg(long, value_name = "PASS")]
    pub print_ir_before: Vec<String>,
    /// Run the verifier after every pass, naming a pass that breaks the IR (MLIR's `-verify-each`). Without
    /// it a release build verifies the input and, once, the IR the pipeline leaves (cheaper); a debug build,
    /// or `TILEC_VERIFY_EACH=1` (the lit tests set it), verifies after every pass.
    #[arg(long, overrides_with = "no_verify_each")]
    pub verify_each: bool,
    /// Verify only the input and the pipeline's result, also in a debug build or under `TILEC_VERIFY_EACH`.
    #[arg(long, overrides_with = "verify_each")]
    pub no_verify_each: bool,
    /// Print a per-pass wall-time table (to stderr), like `mlir-opt --mlir-timing`.
    #[arg(long)]
    pub timing: bool,
    /// Print the passes' remarks (why a tile was or was not swizzled, requirements the lowering assumes).
    #[arg(long)]
    pub remarks: bool,
    /// Print a report about the compiled code (to stderr): `bank-conflicts` counts the shared-memory
    /// wavefronts of every warp-level access after lowering.
    #[arg(long, value_enum, value_name = "KIND")]
    pub report: Vec<Report>,
    /// Do not use the on-disk cache of outputs (`$TILEC_CACHE_DIR`, `$XDG_CACHE_HOME/tilec` or
    /// `~/.cache/tilec`; `TILEC_CACHE=0` disables it too).
    #[arg(long)]
    pub no_cache: bool,
    /// Set a kernel parameter (an upper-case integer attribute such as `D` or `BM`, which the argument types and
    /// the body may use) or a kernel attribute (`num_warps=8`, `pipeline_stages=3`, `mma=wgmma|mma_sync`,
    /// `copy_g2s=tma|cp_async`, `raster_group=1`, `warp_tile=64x64`; values checked against the attribute's
    /// declared type) before parsing: `--param D=128` (repeatable). The file's text is changed in memory only;
    /// diagnostics point into it.
    #[arg(short = 'D', long = "param", value_name = "NAME=V")]
    pub params: Vec<String>,
    #[arg(skip)]
    pub input: String,
}

impl CompileArgs {
    /// What to produce: `--emit` when given, else what the output file's extension says
    /// ([`Emit::from_extension`]), else PTX.
    pub fn emit(&self) -> Emit {
        self.emit.unwrap_or_else(|| Emit::for_output(&self.output))
    }

    /// Whether the verifier runs after every pass: `--verify-each` / `--no-verify-each` when given, else in
    /// a debug build or with `TILEC_VERIFY_EACH` set (to anything but `0`), else not (a release build
    /// verifies the pipeline's result once).
    pub fn verifies_each_pass(&self) -> bool {
        if self.verify_each || self.no_verify_each {
            return self.verify_each;
        }
        cfg!(debug_assertions) || std::env::var_os("TILEC_VERIFY_EACH").is_some_and(|v| v != "0")
    }
}

/// What the compiler writes out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// The tile IR after the pipeline.
    Tir,
    /// The nvgpu-level IR after lowering.
    Nvgpu,
    /// LLVM IR with NVVM intrinsics.
    Llvm,
    /// MLIR (gpu + nvgpu dialects).
    Mlir,
    /// PTX assembly.
    Ptx,
}

impl Emit {
    /// The kind a file extension names: `ptx`, `ll` (LLVM IR), `mlir`, `tir`, `nvgpu`.
    pub fn from_extension(extension: &str) -> Option<Emit> {
        match extension {
            "ptx" => Some(Emit::Ptx),
            "ll" => Some(Emit::Llvm),
            "mlir" => Some(Emit::Mlir),
            "tir" => Some(Emit::Tir),
            "nvgpu" => Some(Emit::Nvgpu),
            _ => None,
        }
    }

    /// The default for an output path: what its extension names; PTX for `-` (standard output), no
    /// extension, or one that names nothing (`.s`, `.txt`: PTX is what tilec makes).
    pub fn for_output(path: &str) -> Emit {
        std::path::Path::new(path)
            .extension()
            .and_then(|e| e.to_str())
            .and_then(Emit::from_extension)
            .unwrap_or(Emit::Ptx)
    }
}

impl fmt::Display for Emit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default();
        f.write_str(&name)
    }
}

/// Which backend turns nvgpu-level IR into PTX.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// LLVM IR with NVVM intrinsics, NVPTX code generation.
    Llvm,
    /// MLIR gpu/nvgpu/arith/scf/vector, lowered with the upstream NVVM pipeline.
    Mlir,
}

/// The backend's name as the command line writes it.
pub fn backend_name(backend: Backend) -> &'static str {
    match backend {
        Backend::Llvm => "llvm",
        Backend::Mlir => "mlir",
    }
}

/// Reports `--report` can print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Report {
    /// Shared-memory bank conflicts per access (needs nvgpu-level IR: any --emit but tir).
    BankConflicts,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Input file (`-` for standard input).
    pub input: String,
    /// The GPU architecture to check lowering for (as for compilation: `native` picks the GPU present).
    #[arg(long, default_value = DEFAULT_TARGET, value_name = TARGET_VALUES)]
    pub target: String,
    /// Check the diagnostics against `// expected-error {{...}}` comments in the file instead of printing them.
    #[arg(long)]
    pub verify_diagnostics: bool,
    /// Set a kernel parameter (an upper-case integer attribute such as `D` or `BM`, which the argument types and
    /// the body may use) or a kernel attribute (`num_warps=8`, `pipeline_stages=3`, `mma=wgmma|mma_sync`,
    /// `copy_g2s=tma|cp_async`, `raster_group=1`, `warp_tile=64x64`; values checked against the attribute's
    /// declared type) before parsing: `--param D=128` (repeatable). The file's text is changed in memory only;
    /// diagnostics point into it.
    #[arg(short = 'D', long = "param", value_name = "NAME=V")]
    pub params: Vec<String>,
}

#[derive(Debug, Args)]
pub struct LayoutArgs {
    /// Layout name, e.g. `ldmatrix.x4`, `mma.m16n8k16.f16.a`, `wmma.m16n16k16.s8.a.row` (`--list` lists them).
    pub name: Option<String>,
    /// List the known layout names.
    #[arg(long, conflicts_with_all = ["json", "svg"])]
    pub list: bool,
    /// Print `{"name", "shape", "lanes": [[[row, col] per value] per lane]}`.
    #[arg(long, conflicts_with = "svg")]
    pub json: bool,
    /// Draw the tile as an SVG grid, each cell labelled `T<lane>:V<value>`.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<String>,
}

/// How to make up the inputs of a run: shapes, scalar values, seed, grid.
#[derive(Debug, Clone, Args)]
pub struct RunInputs {
    /// The GEMM convention: A is MxK, B is KxN, C is MxN.
    #[arg(long, value_name = "M,N,K")]
    pub shape: Option<String>,
    /// A tensor argument's shape (`A=256x128`) or a scalar argument's value (`alpha=1.5`); repeatable.
    #[arg(long = "arg", value_name = "NAME=SHAPE|VALUE")]
    pub args: Vec<String>,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Fill a tensor argument from a text file of whitespace-separated numbers, row-major (for example a
    /// matrix copied from a seed document); repeatable.
    #[arg(long = "input", value_name = "NAME=FILE")]
    pub files: Vec<String>,
    /// Grid size `x[,y[,z]]`; by default derived from the kernel (see `tilec_ir::interp::default_launch`).
    #[arg(long, value_name = "X,Y,Z")]
    pub grid: Option<String>,
    /// The kernel to run when the file has several.
    #[arg(long = "func", value_name = "NAME")]
    pub func: Option<String>,
    /// Set a kernel parameter (an upper-case integer attribute such as `D` or `BM`, which the argument types and
    /// the body may use) or a kernel attribute (`num_warps=8`, `pipeline_stages=3`, `mma=wgmma|mma_sync`,
    /// `copy_g2s=tma|cp_async`, `raster_group=1`, `warp_tile=64x64`; values checked against the attribute's
    /// declared type) before parsing: `--param D=128` (repeatable). The file's text is changed in memory only;
    /// diagnostics point into it.
    #[arg(short = 'D', long = "param", value_name = "NAME=V")]
    pub params: Vec<String>,
}

#[derive(Debug, Args)]
pub struct InterpArgs {
    /// Input file (`-` for standard input).
    pub input: String,
    #[command(flatten)]
    pub inputs: RunInputs,
    /// Write a tensor argument's values after the run to FILE: whitespace-separated numbers, row-major, one
    /// row per line (the `--input` format), so another tool can check them; repeatable.
    #[arg(long = "output", value_name = "NAME=FILE")]
    pub outputs: Vec<String>,
}

#[derive(Debug, Args)]
pub struct SimArgs {
    /// Input file (`-` for standard input).
    pub input: String,
    /// Target whose default pipeline lowers a tile-level kernel before simulation.
    #[arg(long, default_value = DEFAULT_TARGET, value_name = TARGET_VALUES)]
    pub target: String,
    #[command(flatten)]
    pub inputs: RunInputs,
    /// Write a tensor argument's values after the simulation to FILE (the simulator's, as `--input` reads
    /// them: whitespace-separated, row-major, one row per line); repeatable.
    #[arg(long = "output", value_name = "NAME=FILE")]
    pub outputs: Vec<String>,
    /// Compare floating-point results with `|sim - interp| <= ATOL + RTOL * |interp|` instead of the
    /// element type's default (f32: 1e-3,1e-3), for kernels that round an intermediate (a kernel's header
    /// states its tolerance).
    #[arg(long, value_name = "ATOL,RTOL")]
    pub tolerance: Option<String>,
}

#[derive(Debug, Args)]
pub struct BundleArgs {
    /// Input file (`-` for standard input).
    pub input: String,
    /// The bundle directory to write.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: String,
    /// GPU architecture of the PTX.
    #[arg(long, default_value = DEFAULT_TARGET, value_name = TARGET_VALUES)]
    pub target: String,
    /// Backend that compiles the kernel's PTX: `llvm` or `mlir` (same kernel parameters, same runner).
    #[arg(long, value_enum, default_value_t = Backend::Llvm)]
    pub backend: Backend,
    /// Timed launches for the runner, each between CUDA events (median time reported).
    #[arg(long, default_value_t = 0)]
    pub repeat: u32,
    /// Untimed launches before the timed ones.
    #[arg(long, default_value_t = 0)]
    pub warmup: u32,
    /// Floating-point operations one launch does: the runner reports TF/s from it and the median time.
    #[arg(long, value_name = "N")]
    pub flops: Option<f64>,
    /// Write no expected results and no input data: the runner makes the inputs from --seed (for timing runs
    /// at sizes the oracles would take too long on; the bundle is a few KB at any size).
    #[arg(long)]
    pub no_oracle: bool,
    #[command(flatten)]
    pub inputs: RunInputs,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// A bundle directory after `tilec-gpu-runner` ran it.
    pub bundle: String,
    /// Also compare the GPU's output of a tensor argument with values from a file, bit for bit (e.g. the
    /// hardware output printed in a seed document): whitespace-separated numbers in row-major order; repeatable.
    #[arg(long = "golden", value_name = "NAME=FILE")]
    pub golden: Vec<String>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Input file (`-` for standard input).
    pub input: String,
    /// GPU architecture of the PTX.
    #[arg(long, default_value = DEFAULT_TARGET, value_name = TARGET_VALUES)]
    pub target: String,
    /// Backend that compiles the kernel's PTX: `llvm` or `mlir`.
    #[arg(long, value_enum, default_value_t = Backend::Llvm)]
    pub backend: Backend,
    /// Extra timed launches (median time reported).
    #[arg(long, default_value_t = 0)]
    pub repeat: u32,
    /// Keep the bundle in this directory instead of a temporary one.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<String>,
    /// Compare the GPU's results with the reference interpreter (or the simulator); without it the inputs
    /// are made on the GPU and only the launch (and its time, with --repeat) is reported.
    #[arg(long)]
    pub check: bool,
    #[command(flatten)]
    pub inputs: RunInputs,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Input file (`-` for standard input): a GEMM kernel (A MxK, B KxN, C MxN global tiles, optional f32
    /// `alpha` and `beta`).
    pub input: String,
    /// A problem size `M,N,K`; repeatable.
    #[arg(long = "shape", value_name = "M,N,K", required = true)]
    pub shapes: Vec<String>,
    /// GPU architecture of the PTX. Default: this machine's GPU, or sm_90 with --bundle.
    #[arg(long, value_name = TARGET_VALUES)]
    pub target: Option<String>,
    /// Backend that compiles the kernel's PTX: `llvm` or `mlir`.
    #[arg(long, value_enum, default_value_t = Backend::Llvm)]
    pub backend: Backend,
    /// LLVM optimisation level of the kernel (as for compilation; the bench label names any other than 3).
    #[arg(short = 'O', value_name = "0-3", default_value = "3")]
    pub opt_level: String,
    /// Timed launches of each of tilec and cuBLAS (median reported).
    #[arg(long, default_value_t = 50)]
    pub repeat: u32,
    /// Untimed launches before the timed ones.
    #[arg(long, default_value_t = 10)]
    pub warmup: u32,
    /// Seed of the inputs (made where the GEMM runs: uniform in [-1, 1), int8 in -8..8).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The kernel's `alpha`, when it has one.
    #[arg(long, default_value_t = 1.5)]
    pub alpha: f32,
    /// The kernel's `beta`, when it has one.
    #[arg(long, default_value_t = -0.5)]
    pub beta: f32,
    /// Append one JSON line per shape to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Do not run: write one bench bundle per shape (PTX + bench.json, no data) into DIR/<file>_<M>x<N>x<K>
    /// (`_mlir` appended for --backend mlir).
    #[arg(long, value_name = "DIR")]
    pub bundle: Option<String>,
    /// The kernel to benchmark when the file has several.
    #[arg(long = "func", value_name = "NAME")]
    pub func: Option<String>,
    /// Set a kernel parameter (an upper-case integer attribute such as `D` or `BM`, which the argument types and
    /// the body may use) or a kernel attribute (`num_warps=8`, `pipeline_stages=3`, `mma=wgmma|mma_sync`,
    /// `copy_g2s=tma|cp_async`, `raster_group=1`, `warp_tile=64x64`; values checked against the attribute's
    /// declared type) before parsing: `--param D=128` (repeatable). The file's text is changed in memory only;
    /// diagnostics point into it.
    /// The settings name the bench label and, with --bundle, the bundle (`gemm_256x128_BK64_num_warps_8_4096x4096x4096`).
    #[arg(short = 'D', long = "param", value_name = "NAME=V")]
    pub params: Vec<String>,
}

#[derive(Debug, Args)]
pub struct TuneArgs {
    /// Input file (`-` for standard input): a GEMM kernel, as for `tilec bench`, or any kernel with --arg.
    pub input: String,
    /// The problem size `M,N,K` to tune a GEMM for (with --results: only the records of this shape count).
    #[arg(long, value_name = "M,N,K", required_unless_present_any = ["results", "args"])]
    pub shape: Option<String>,
    /// Any kernel (not a GEMM): a tensor argument's shape (`Q=128x4096x64`) or a scalar's value; repeatable.
    /// The candidates are timing bundles (inputs made by the runner from --seed), ranked by time, not checked.
    #[arg(long = "arg", value_name = "NAME=SHAPE|VALUE", conflicts_with = "shape")]
    pub args: Vec<String>,
    /// With --arg: floating-point operations one launch does, for the TF/s column.
    #[arg(long, value_name = "N", requires = "args")]
    pub flops: Option<f64>,
    /// GPU architecture of the PTX. Default: this machine's GPU, or sm_90 with --bundle.
    #[arg(long, value_name = TARGET_VALUES)]
    pub target: Option<String>,
    /// Backend that compiles the kernel's PTX: `llvm` or `mlir`.
    #[arg(long, value_enum, default_value_t = Backend::Llvm)]
    pub backend: Backend,
    /// Stage counts to try (`pipeline_stages`; default 2,3,4,5). The same as `--param pipeline_stages=...`.
    #[arg(long, value_name = "N,...", value_delimiter = ',')]
    pub stages: Vec<u32>,
    /// Warps per block to try (`num_warps`; default 4,8). The same as `--param num_warps=...`.
    #[arg(long, value_name = "N,...", value_delimiter = ',')]
    pub warps: Vec<u32>,
    /// Whether to try loading register fragments one iteration ahead (`fragments_ahead`): on, off or both
    /// (default both). The same as `--param fragments_ahead=true,false`.
    #[arg(long, value_name = "on|off,...", value_delimiter = ',')]
    pub fragments: Vec<OnOff>,
    /// Values to try for a kernel parameter (an upper-case integer attribute such as the block tile's `BM`,
    /// used in the body's shapes) or for any kernel attribute, each value read as `tilec FILE --param` (compilation) reads
    /// it: `--param BM=128,256 --param BK=32,64 --param raster_group=1,8 --param mma=wgmma,mma_sync
    /// --param copy_g2s=tma,cp_async --param num_warps=4,8 --param pipeline_stages=2,3,4` (repeatable; the value
    /// `default` leaves the attribute unset, the compiler's choice). One not given keeps the kernel's value.
    /// Combinations that do not lower for the target are skipped with the reason `tilec check` gives.
    #[arg(long = "param", value_name = "NAME=V,...")]
    pub params: Vec<String>,
    /// Timed launches of each candidate (median reported).
    #[arg(long, default_value_t = 50)]
    pub repeat: u32,
    /// Untimed launches before the timed ones.
    #[arg(long, default_value_t = 10)]
    pub warmup: u32,
    /// Seed of the inputs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Do not run: write one bench bundle per candidate into DIR/<file>_<candidate> for
    /// `tilec-gpu-runner tune DIR --json FILE` on the GPU machine.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["results", "output", "in_place", "json"])]
    pub bundle: Option<String>,
    /// Do not run: read the records `tilec-gpu-runner tune --json` wrote and write the fastest candidate.
    #[arg(long, value_name = "FILE", conflicts_with = "json")]
    pub results: Option<String>,
    /// Where to write the input with the best attributes set on its kernel (`-`: standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE", conflicts_with = "in_place")]
    pub output: Option<String>,
    /// Rewrite the input file itself (atomically) with the best attributes.
    #[arg(long)]
    pub in_place: bool,
    /// Append one JSON line per candidate to this file (runs on this machine's GPU only).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Say why each skipped candidate does not lower (the full diagnostic).
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// The kernel to tune when the file has several.
    #[arg(long = "func", value_name = "NAME")]
    pub func: Option<String>,
}

/// `on` or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

impl fmt::Display for OnOff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OnOff::On => "on",
            OnOff::Off => "off",
        })
    }
}
