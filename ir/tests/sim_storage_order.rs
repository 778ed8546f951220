//! Multi-element accesses follow the tile's storage order: in a rank-2 `#col_major` tile (global or shared)
//! a vector load or store, a `cp.async` chunk and an `ldmatrix` row run down a column, as they do on the GPU
//! (the backends address the first element through the layout and move consecutive bytes). The tensors are
//! still given and returned in logical row-major order. Expected values are written out from the
//! definition (`iota`: element `(r, c)` of an `R x C` tile holds `r * C + c`), not computed by the simulator.

use tilec_ir::data::TensorData;
use tilec_ir::sim::{simulate, Launch, SimArg, SimError};
use tilec_ir::{parse_module, verify::verify_module, Func, ScalarType};

fn parse(text: &str) -> Func {
    let module = parse_module(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify_module(&module).unwrap_or_else(|e| panic!("{e}\n{text}"));
    module.funcs.into_iter().next().expect("a kernel")
}

/// Element `(r, c)` of an `R x C` tile holds `r * C + c` (logical row-major order).
fn iota(shape: &[usize], elem: ScalarType) -> SimArg {
    let n = shape.iter().product::<usize>();
    SimArg::Tile(TensorData { shape: shape.to_vec(), elem, values: (0..n).map(|i| i as f64).collect() })
}

fn zeros(shape: &[usize], elem: ScalarType) -> SimArg {
    SimArg::Tile(TensorData::zeros(shape, elem))
}

fn values(arg: &SimArg) -> Vec<f64> {
    arg.as_tile().map(|t| t.values.clone()).unwrap_or_default()
}

/// Lane `l < 4` loads `vector<2>` at `(2 l, 1)` of a 8x4 column-major tile: rows `2 l` and `2 l + 1` of
/// column 1 (`8 * 1 + 2 l` and the next in memory), and stores it as row `l` of a row-major 4x2 tile.
#[test]
fn a_vector_load_runs_down_a_column_of_a_col_major_global_tile() {
    let func = parse(
        "tile.func @k(%A: tile<8x4xf32, global, #col_major>, %O: tile<4x2xf32, global>) attributes {num_warps = 1} {
  %c0 = tile.constant 0 : index
  %c1 = tile.constant 1 : index
  %c2 = tile.constant 2 : index
  %c4 = tile.constant 4 : index
  %tid = nvgpu.thread_id x : index
  %l = tile.rem %tid, %c4 : index
  %r = tile.mul %l, %c2 : index
  %v = nvgpu.load %A[%r, %c1] : vector<2xf32>
  nvgpu.store %v, %O[%l, %c0]
  tile.return
}",
    );
    let mut args = [iota(&[8, 4], ScalarType::F32), zeros(&[4, 2], ScalarType::F32)];
    simulate(&func, &mut args, &Launch::SINGLE).unwrap_or_else(|e| panic!("{e:?}"));
    // A(r, 1) = 4 r + 1.
    assert_eq!(values(&args[1]), [1.0, 5.0, 9.0, 13.0, 17.0, 21.0, 25.0, 29.0]);
}

/// A vector store into a column-major tile writes down a column too.
#[test]
fn a_vector_store_runs_down_a_column() {
    let func = parse(
        "tile.func @k(%A: tile<4x2xf32, global>, %O: tile<4x4xf32, global, #col_major>) attributes {num_warps = 1} {
  %c0 = tile.constant 0 : index
  %c1 = tile.constant 1 : index
  %c2 = tile.constant 2 : index
  %v = nvgpu.load %A[%c1, %c0] : vector<2xf32>
  nvgpu.store %v, %O[%c2, %c2]
  tile.return
}",
    );
    let mut args = [iota(&[4, 2], ScalarType::F32), zeros(&[4, 4], ScalarType::F32)];
    simulate(&func, &mut args, &Launch::SINGLE).unwrap_or_else(|e| panic!("{e:?}"));
    let mut want = vec![0.0; 16];
    want[2 * 4 + 2] = 2.0; // (2, 2) <- A(1, 0) = 2
    want[3 * 4 + 2] = 3.0; // (3, 2) <- A(1, 1) = 3
    assert_eq!(values(&args[1]), want);
}

/// 16x16 f16, both column-major: lane `l` copies 8 elements (16 bytes) starting at row `8 (l % 2)` of column
/// `l / 2`; after the wait, lane `l` reads back element `(l % 16, l / 16)` with a scalar load and writes it
/// to `O[l]`. Then `ldmatrix.x1` of the 8x8 block at (0, 0): lane `i < 8` addresses storage row `i`, which is
/// column `i`, so lane `t` receives matrix row `t / 4` = column `t / 4`, elements `2 (t % 4)`, `+1` = rows.
#[test]
fn cp_async_and_ldmatrix_move_columns_of_col_major_tiles() {
    let func = parse(
        "tile.func @k(%G: tile<16x16xf16, global, #col_major>, %O: tile<32xf16, global>, %R: tile<32x2xf16, global>) attributes {num_warps = 1} {
  %c0 = tile.constant 0 : index
  %c1 = tile.constant 1 : index
  %c2 = tile.constant 2 : index
  %c8 = tile.constant 8 : index
  %c16 = tile.constant 16 : index
  %tid = nvgpu.thread_id x : index
  %s = tile.alloc_shared : tile<16x16xf16, shared, #col_major>
  %col = tile.div %tid, %c2 : index
  %half = tile.rem %tid, %c2 : index
  %row = tile.mul %half, %c8 : index
  nvgpu.device_async_copy %G[%row, %col], %s[%row, %col], 8
  nvgpu.device_async_create_group
  nvgpu.device_async_wait
  nvgpu.barrier
  %r = tile.rem %tid, %c16 : index
  %c = tile.div %tid, %c16 : index
  %x = nvgpu.load %s[%r, %c] : f16
  nvgpu.store %x, %O[%tid]
  %i = tile.rem %tid, %c8 : index
  %m = nvgpu.ldmatrix %s[%c0, %i] {numTiles = 1, transpose = false} : vector<1x2xf16>
  %m0 = nvgpu.extract %m [0, 0] : f16
  %m1 = nvgpu.extract %m [0, 1] : f16
  nvgpu.store %m0, %R[%tid, %c0]
  nvgpu.store %m1, %R[%tid, %c1]
  tile.return
}",
    );
    let mut args = [iota(&[16, 16], ScalarType::F16), zeros(&[32], ScalarType::F16), zeros(&[32, 2], ScalarType::F16)];
    simulate(&func, &mut args, &Launch::SINGLE).unwrap_or_else(|e| panic!("{e:?}"));
    // G(r, c) = 16 r + c.
    let g = |r: usize, c: usize| (16 * r + c) as f64;
    let want: Vec<f64> = (0..32).map(|l| g(l % 16, l / 16)).collect();
    assert_eq!(values(&args[1]), want, "the copy landed column by column");
    let want: Vec<f64> = (0..32).flat_map(|t| [g(2 * (t % 4), t / 4), g(2 * (t % 4) + 1, t / 4)]).collect();
    assert_eq!(values(&args[2]), want, "ldmatrix rows are columns of a column-major tile");
}

/// In a column-major 12x8 f16 tile, column 1 starts at element 12 = byte 24: a 16-byte cp.async there is
/// misaligned (the run-time requirement that columns be a multiple of 8 elements), and 8 elements from row 8
/// run past the column's end.
#[test]
fn col_major_alignment_and_bounds_follow_the_columns() {
    let text = "tile.func @k(%G: tile<12x8xf16, global, #col_major>) attributes {num_warps = 1} {
  %c0 = tile.constant 0 : index
  %c1 = tile.constant 1 : index
  %c8 = tile.constant 8 : index
  %s = tile.alloc_shared : tile<16x8xf16, shared, #col_major>
  nvgpu.device_async_copy %G[ROW, COL], %s[%c0, %c0], 8
  tile.return
}";
    let func = parse(&text.replace("ROW", "%c0").replace("COL", "%c1"));
    let err = simulate(&func, &mut [iota(&[12, 8], ScalarType::F16)], &Launch::SINGLE).unwrap_err();
    assert!(matches!(err, SimError::Misaligned { address: 24, align: 16, .. }), "{err:?}");
    let func = parse(&text.replace("ROW", "%c8").replace("COL", "%c0"));
    let err = simulate(&func, &mut [iota(&[12, 8], ScalarType::F16)], &Launch::SINGLE).unwrap_err();
    match &err {
        SimError::OutOfBounds { index, count: 8, axis: 0, .. } => assert_eq!(index, &[8, 0]),
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("(+8 elements along axis 0)"), "{err}");
}
