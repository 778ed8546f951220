//! The warp simulator equals the interpreter on random tile shapes and dtypes (issue 10): generated
//! tile-level kernels (global → shared → registers, optionally a `tile.mma`, an elementwise epilogue, back
//! to global) are run by the reference interpreter, lowered by the whole default pipeline
//! (`tilec_compiler::lower` with the default options: `tilec_passes::full_pipeline`, cleanup, layout-assignment, swizzle, lower-tile-to-nvgpu, cleanup) and
//! run by the warp simulator on the same inputs; every output element must agree, bit-exactly for
//! integers and copies, within the tolerance of `tilec sim`/`tilec compare` for float MMAs (the two round
//! the MMA's partial sums differently; see `tilec_ir::interp` and `tilec_ir::sim`).
//!
//! A kernel the lowering declines (a diagnostic: a shape or dtype it does not support yet) is rejected,
//! not failed; proptest fails the test if too many are.

use proptest::prelude::*;
use proptest::test_runner::Config;
use tilec_ir::interp::{self, ArgShapes, ArgValue, Launch};
use tilec_ir::sim::{self, SimArg};
use tilec_ir::ScalarType;
use tilec_ir::Target;
use tilec_compiler::{CompileError, Options};

/// One generated kernel.
#[derive(Clone, Debug)]
struct Kernel {
    text: String,
    /// Whether float rounding may differ between the engines (an MMA with a float accumulator).
    float_mma: bool,
}

const EPILOGUES: [&str; 6] = ["", "tile.add", "tile.mul", "tile.max", "tile.min", "tile.sub"];

/// `copy_g2s → copy_s2r → [op] → copy_r2g` of an `rows x cols` tile of `elem`; with `col_major`, the global
/// tiles and the shared tile are `#col_major` (copies run down the columns, stores are scalar).
fn copy_kernel(rows: u32, cols: u32, elem: &str, warps: u32, epilogue: &str, col_major: bool) -> Kernel {
    let t = format!("{rows}x{cols}x{elem}");
    let l = if col_major { ", #col_major" } else { "" };
    let mut s = format!(
        "tile.func @copy(%in: tile<{t}, global{l}>, %out: tile<{t}, global{l}>) attributes {{num_warps = {warps}}} {{\n\
         \x20 %c0 = tile.constant 0 : index\n\
         \x20 %s = tile.alloc_shared : tile<{t}, shared{l}>\n\
         \x20 tile.copy_g2s %in[%c0, %c0], %s\n\
         \x20 %r = tile.copy_s2r %s : tile<{t}, reg>\n"
    );
    let result = if epilogue.is_empty() {
        "%r".to_string()
    } else {
        s.push_str(&format!("  %e = {epilogue} %r, %r : tile<{t}, reg>\n"));
        "%e".to_string()
    };
    s.push_str(&format!("  tile.copy_r2g {result}, %out[%c0, %c0]\n  tile.return\n}}\n"));
    Kernel { text: s, float_mma: false }
}

/// `D = A·B + C` (C from global) with an optional elementwise epilogue; `col_major` = (A, B): that operand's
/// global and shared tiles are `#col_major`.
#[allow(clippy::too_many_arguments)]
fn mma_kernel(m: u32, n: u32, k: u32, elem: &str, acc: &str, warps: u32, epilogue: &str, col_major: (bool, bool)) -> Kernel {
    let (ta, tb, tc) = (format!("{m}x{k}x{elem}"), format!("{k}x{n}x{elem}"), format!("{m}x{n}x{acc}"));
    let layout = |c: bool| if c { ", #col_major" } else { "" };
    let (la, lb) = (layout(col_major.0), layout(col_major.1));
    let mut s = format!(
        "tile.func @mma(%A: tile<{ta}, global{la}>, %B: tile<{tb}, global{lb}>, %C: tile<{tc}, global>, %D: tile<{tc}, global>) attributes {{num_warps = {warps}}} {{\n\
         \x20 %c0 = tile.constant 0 : index\n\
         \x20 %sa = tile.alloc_shared : tile<{ta}, shared{la}>\n\
         \x20 %sb = tile.alloc_shared : tile<{tb}, shared{lb}>\n\
         \x20 tile.copy_g2s %A[%c0, %c0], %sa\n\
         \x20 tile.copy_g2s %B[%c0, %c0], %sb\n\
         \x20 %a = tile.copy_s2r %sa : tile<{ta}, reg>\n\
         \x20 %b = tile.copy_s2r %sb : tile<{tb}, reg>\n\
         \x20 %z = tile.fill 0 : tile<{tc}, reg>\n\
         \x20 %d = tile.mma %a, %b, %z : tile<{tc}, reg>\n"
    );
    let result = if epilogue.is_empty() {
        "%d".to_string()
    } else {
        s.push_str(&format!("  %e = {epilogue} %d, %d : tile<{tc}, reg>\n"));
        "%e".to_string()
    };
    s.push_str(&format!("  tile.copy_r2g {result}, %D[%c0, %c0]\n  tile.return\n}}\n"));
    Kernel { text: s, float_mma: acc.starts_with('f') }
}

fn kernels() -> impl Strategy<Value = Kernel> {
    let dims = || prop::sample::select(vec![16u32, 32, 64]);
    let warps = || prop::sample::select(vec![1u32, 2, 4]);
    let epilogue = || prop::sample::select(EPILOGUES.to_vec());
    // Column-major tiles one time in four (for the mma: each operand independently).
    let col = || prop::sample::select(vec![false, false, false, true]);
    let copy = (dims(), dims(), prop::sample::select(vec!["f16", "bf16", "f32", "i8", "i32"]), warps(), epilogue(), col())
        .prop_map(|(r, c, e, w, op, cm)| copy_kernel(r, c, e, w, op, cm));
    let float_mma = (dims(), prop::sample::select(vec![8u32, 16, 32, 64]), dims(), prop::sample::select(vec!["f16", "bf16"]), warps(), epilogue(), (col(), col()))
        .prop_map(|(m, n, k, e, w, op, cm)| mma_kernel(m, n, k, e, "f32", w, op, cm));
    let int_mma = (dims(), prop::sample::select(vec![8u32, 16, 32, 64]), prop::sample::select(vec![32u32, 64]), warps(), epilogue(), (col(), col()))
        .prop_map(|(m, n, k, w, op, cm)| mma_kernel(m, n, k, "i8", "i32", w, op, cm));
    prop_oneof![copy, float_mma, int_mma]
}

fn tolerance(elem: ScalarType, float_mma: bool) -> (f64, f64) {
    if !float_mma {
        return (0.0, 0.0);
    }
    match elem {
        ScalarType::F32 | ScalarType::TF32 | ScalarType::F64 => (1e-3, 1e-3),
        ScalarType::F16 | ScalarType::BF16 => (1e-2, 1e-2),
        _ => (0.0, 0.0),
    }
}

/// Interprets, lowers, simulates and compares; `Err(None)` when the lowering declined the kernel.
fn compare(kernel: &Kernel, seed: u64) -> Result<(), Option<String>> {
    let module = tilec_ir::parse_module(&kernel.text).map_err(|d| Some(format!("generated kernel does not parse: {d}\n{}", kernel.text)))?;
    tilec_ir::verify::verify_module(&module).map_err(|d| Some(format!("generated kernel does not verify: {d}\n{}", kernel.text)))?;
    let func = &module.funcs[0];
    let inputs = interp::default_args(func, &ArgShapes::new(), seed).map_err(|e| Some(format!("default_args: {e}")))?;
    let mut expected = inputs.clone();
    interp::run(func, &mut expected, &Launch::new([1, 1, 1])).map_err(|e| Some(format!("interpreter: {e}\n{}", kernel.text)))?;

    let lowered = match tilec_compiler::lower(module.clone(), &Options::for_target(Target::Sm80)) {
        Ok(lowered) => lowered.module,
        Err(CompileError::Pass { diagnostics, .. }) => {
            let text = diagnostics.to_string();
            if text.contains("panicked") || text.contains("the pass broke it") {
                return Err(Some(format!("the lowering failed badly: {text}\n{}", kernel.text)));
            }
            return Err(None);
        }
        Err(e) => return Err(Some(format!("lowering: {e}"))),
    };
    let mut args: Vec<SimArg> = inputs
        .into_iter()
        .map(|a| match a {
            ArgValue::Tensor(t) => SimArg::Tile(t),
            ArgValue::Scalar(_, x) => SimArg::Scalar(x),
        })
        .collect();
    sim::simulate(&lowered.funcs[0], &mut args, &sim::Launch::SINGLE)
        .map_err(|e| Some(format!("simulator: {e}\n{}\n--- lowered:\n{}", kernel.text, tilec_ir::print_module(&lowered))))?;
    for (i, (want, got)) in expected.iter().zip(&args).enumerate() {
        let (ArgValue::Tensor(want), SimArg::Tile(got)) = (want, got) else { continue };
        let (atol, rtol) = tolerance(want.elem, kernel.float_mma);
        for (j, (&w, &g)) in want.values.iter().zip(&got.values).enumerate() {
            let ok = w == g || (w.is_nan() && g.is_nan()) || (g - w).abs() <= atol + rtol * w.abs();
            if !ok {
                return Err(Some(format!(
                    "argument #{i} element {j} (row {}, col {}): interpreter {w}, simulator {g}\n{}",
                    j / want.shape.get(1).copied().unwrap_or(1).max(1),
                    j % want.shape.get(1).copied().unwrap_or(1).max(1),
                    kernel.text
                )));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(Config { cases: 48, max_global_rejects: 4096, ..Config::default() })]

    #[test]
    fn simulator_equals_interpreter_on_random_tile_kernels(kernel in kernels(), seed in 0u64..1000) {
        match compare(&kernel, seed) {
            Ok(()) => {}
            Err(None) => prop_assume!(false, "the lowering declined this kernel"),
            Err(Some(message)) => prop_assert!(false, "{}", message),
        }
    }
}

/// The shapes the examples use, as fixed cases: the lowering must accept them (not merely be skipped).
#[test]
fn example_shapes_lower_and_agree() {
    for kernel in [
        copy_kernel(16, 16, "f16", 1, "", false),
        mma_kernel(16, 8, 16, "f16", "f32", 1, "", (false, false)),
        mma_kernel(64, 64, 32, "f16", "f32", 4, "tile.add", (false, false)),
        mma_kernel(64, 64, 64, "i8", "i32", 4, "", (false, false)),
        // Column-major tiles: copies down the columns, ldmatrix(.trans) or loads of the transpose.
        copy_kernel(32, 64, "f16", 4, "tile.add", true),
        copy_kernel(64, 16, "f32", 2, "", true),
        mma_kernel(64, 64, 32, "f16", "f32", 4, "", (true, false)),
        mma_kernel(64, 32, 32, "bf16", "f32", 4, "tile.mul", (false, true)),
        mma_kernel(64, 64, 64, "i8", "i32", 4, "", (true, true)),
    ] {
        if let Err(e) = compare(&kernel, 3) {
            panic!("{}", e.unwrap_or_else(|| format!("the lowering declined:\n{}", kernel.text)));
        }
    }
}
