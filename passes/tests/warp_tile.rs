//! The warp grid of a `tile.mma`: by default the one whose warp tiles are the most square (a 128x256 tile
//! over 8 warps: 2x4, 64x64 warp tiles), or the one the function attribute `warp_tile = [WM, WN]` asks for
//! (`[32, 128]`: 4x2), or the mma's own `warp_tile` attribute, which overrides the function's; a warp tile that
//! does not split the tile into `num_warps` whole-instruction tiles is a diagnostic at the mma.

use tilec_ir::Attribute;
use tilec_ir::Target;
use tilec_passes::{PassContext, PassManager, PassRegistry};

fn kernel(attrs: &str) -> String {
    kernel_with(attrs, "")
}

/// The kernel with `mma_attrs` (`{...}` or empty) on its mma.
fn kernel_with(attrs: &str, mma_attrs: &str) -> String {
    format!(
        "tile.func @k(%A: tile<128x32xf16, global>, %B: tile<32x256xf16, global>, %C: tile<128x256xf32, global>) attributes {{num_warps = 8{attrs}}} {{
  %c0 = tile.constant 0 : index
  %sa = tile.alloc_shared : tile<128x32xf16, shared>
  %sb = tile.alloc_shared : tile<32x256xf16, shared>
  tile.copy_g2s %A[%c0, %c0], %sa
  tile.copy_g2s %B[%c0, %c0], %sb
  %a = tile.copy_s2r %sa : tile<128x32xf16, reg>
  %b = tile.copy_s2r %sb : tile<32x256xf16, reg>
  %z = tile.fill 0.0 : tile<128x256xf32, reg>
  %d = tile.mma %a, %b, %z {mma_attrs} : tile<128x256xf32, reg>
  tile.copy_r2g %d, %C[%c0, %c0]
  tile.return
}}
"
    )
}

/// The warp grid layout assignment wrote onto the mma, or the diagnostic.
fn warp_grid(attrs: &str) -> Result<Vec<i64>, String> {
    warp_grid_of(&kernel(attrs))
}

fn warp_grid_of(src: &str) -> Result<Vec<i64>, String> {
    let mut m = tilec_ir::parse_module(src).map_err(|d| format!("{d:?}"))?;
    let pm = PassManager::from_pipeline(&PassRegistry::with_builtin(), "layout-assignment").unwrap();
    pm.run(&mut m, &mut PassContext::new(Target::Sm90)).map_err(|e| format!("{:?}", e.diagnostics))?;
    let f = &m.funcs[0];
    let mut grid = None;
    f.body.walk(f.entry, &mut |id| {
        if let Some(Attribute::Array(items)) = f.body.op(id).attr("warpGrid") {
            grid = Some(items.iter().filter_map(Attribute::as_int).collect());
        }
    });
    Ok(grid.expect("no mma with a warpGrid"))
}

#[test]
fn the_default_warp_tile_is_the_most_square() {
    assert_eq!(warp_grid("").unwrap(), [2, 4]);
}

#[test]
fn the_warp_tile_attribute_chooses_the_grid() {
    assert_eq!(warp_grid(", warp_tile = [32, 128]").unwrap(), [4, 2]);
    assert_eq!(warp_grid(", warp_tile = [128, 32]").unwrap(), [1, 8]);
}

#[test]
fn a_warp_tile_that_does_not_fit_is_a_diagnostic() {
    let e = warp_grid(", warp_tile = [64, 32]").unwrap_err();
    assert!(e.contains("warp_tile = [64, 32] does not split the 128x256 tile into 8 warp tiles"), "{e}");
    let e = warp_grid(", warp_tile = [0, 32]").unwrap_err();
    assert!(e.contains("warp_tile must be [rows, cols] of positive integers"), "{e}");
    let e = warp_grid(", warp_tile = [32]").unwrap_err();
    assert!(e.contains("warp_tile must be [rows, cols] of positive integers"), "{e}");
    // Not a list at all: the verifier checks the declared type (KernelAttrs) before any pass runs.
    let e = warp_grid(", warp_tile = 64").unwrap_err();
    assert!(e.contains("kernel @k: 'warp_tile' must be a list of non-negative integers, found 64"), "{e}");
}

#[test]
fn the_mma_attribute_overrides_the_function_attribute() {
    // 128x256 over 8 warps: [32, 128] is a 4x2 grid, [128, 32] a 1x8 one.
    assert_eq!(warp_grid_of(&kernel_with("", "{warp_tile = [32, 128]}")).unwrap(), [4, 2]);
    assert_eq!(warp_grid_of(&kernel_with(", warp_tile = [32, 128]", "{warp_tile = [128, 32]}")).unwrap(), [1, 8]);
    // A kernel parameter stands for its value in the attribute.
    assert_eq!(warp_grid_of(&kernel_with(", WN = 32", "{warp_tile = [128, WN]}")).unwrap(), [1, 8]);
}

#[test]
fn a_bad_mma_warp_tile_is_a_diagnostic() {
    let e = warp_grid_of(&kernel_with(", warp_tile = [32, 128]", "{warp_tile = [64, 32]}")).unwrap_err();
    assert!(e.contains("warp_tile = [64, 32] does not split the 128x256 tile into 8 warp tiles"), "{e}");
    let e = warp_grid_of(&kernel_with("", "{warp_tile = [32]}")).unwrap_err();
    assert!(e.contains("the 'warp_tile' of a 'tile.mma' must be [rows, cols] of positive integers"), "{e}");
    let e = warp_grid_of(&kernel_with("", "{warp_tile = [0, 32]}")).unwrap_err();
    assert!(e.contains("the 'warp_tile' of a 'tile.mma' must be [rows, cols] of positive integers"), "{e}");
}
