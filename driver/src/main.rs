/// The process's allocator, for Rust and (mimalloc's `override` feature: it defines `malloc`, `free`, ...) for
/// the statically linked LLVM and MLIR too. glibc's malloc and free were ~6% of the instructions of a cold
/// compile (`examples/gemm.tir`); mimalloc executes ~60 M fewer of its 1.33 G and is faster in wall time too
/// (README "Compile time"). The machine code tilec emits cannot depend on it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(tilec::main_with_args(std::env::args().collect()));
}
