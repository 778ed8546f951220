//! `nvgpu.ldmatrix` (not `.trans`) of a shared tile of bytes, on the warp simulator: the instruction moves
//! 16-byte rows, so lane `t` receives in register `i` the bytes `4(t%4) .. 4(t%4)+3` of row `t/4` of
//! matrix `i` (the PTX ISA's ldmatrix: row `t/4`, 16-bit elements `2(t%4)` and `2(t%4)+1`, low byte first).
//! Expected values are written from that description, not computed by the simulator; the last test ties
//! the result to the catalogue's m16n8k32 s8 A fragment, which the copy planner relies on.

use tilec_ir::data::TensorData;
use tilec_ir::layout::hardware_layout;
use tilec_ir::sim::{simulate, Launch, SimArg};
use tilec_ir::{parse_module, verify::verify_module, Func, ScalarType};

fn parse(text: &str) -> Func {
    let module = parse_module(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify_module(&module).unwrap_or_else(|e| panic!("{e}\n{text}"));
    module.funcs.into_iter().next().expect("a kernel")
}

/// A 16x32 tile of bytes, element `(r, c)` = `(32 r + c) % 251` (distinct within any 251 consecutive).
fn value(r: u32, c: u32) -> f64 {
    f64::from((32 * r + c) % 251)
}

/// Copies the 16x32 u8 matrix `%S` (flat) into shared memory with 16-byte cp.async (thread t: bytes
/// 16t .. 16t+15 = row t/2, columns 16(t%2) ..), then `ldmatrix.x4` with lane l addressing row l % 16,
/// byte column 16 (l / 16) (matrix 0: rows 0-7, columns 0-15; 1: rows 8-15; 2 and 3: columns 16-31), and
/// writes each lane's 16 bytes to row l of `%regs`.
fn kernel() -> String {
    let mut text = String::from(
        "tile.func @k(%S: tile<512xu8, global>, %regs: tile<32x16xu8, global>) attributes {num_warps = 1} {
  %c2 = tile.constant 2 : index
  %c16 = tile.constant 16 : index
  %tid = nvgpu.thread_id x : index
  %smem = tile.alloc_shared : tile<16x32xu8, shared>
  %src = tile.mul %tid, %c16 : index
  %srow = tile.div %tid, %c2 : index
  %shalf = tile.rem %tid, %c2 : index
  %scol = tile.mul %shalf, %c16 : index
  nvgpu.device_async_copy %S[%src], %smem[%srow, %scol], 16
  nvgpu.device_async_create_group
  nvgpu.device_async_wait {numGroups = 0}
  nvgpu.barrier
  %row = tile.rem %tid, %c16 : index
  %m = tile.div %tid, %c16 : index
  %col = tile.mul %m, %c16 : index
  %v = nvgpu.ldmatrix %smem[%row, %col] {numTiles = 4, transpose = false} : vector<4x4xu8>
",
    );
    for i in 0..4 {
        for b in 0..4 {
            let j = 4 * i + b;
            text += &format!("  %k{j} = tile.constant {j} : index\n  %x{j} = nvgpu.extract %v [{i}, {b}] : u8\n  nvgpu.store %x{j}, %regs[%tid, %k{j}]\n");
        }
    }
    text + "  tile.return\n}\n"
}

fn run() -> Vec<f64> {
    let s: Vec<f64> = (0..16).flat_map(|r| (0..32).map(move |c| value(r, c))).collect();
    let mut args = [
        SimArg::Tile(TensorData { shape: vec![512], elem: ScalarType::U8, values: s }),
        SimArg::Tile(TensorData::zeros(&[32, 16], ScalarType::U8)),
    ];
    simulate(&parse(&kernel()), &mut args, &Launch::SINGLE).unwrap_or_else(|e| panic!("{e:?}"));
    args[1].as_tile().expect("tile").values.clone()
}

#[test]
fn ldmatrix_x4_of_bytes_gives_each_lane_four_bytes_of_a_row_per_matrix() {
    let regs = run();
    for t in 0..32u32 {
        for i in 0..4u32 {
            for b in 0..4u32 {
                let (r, c) = (8 * (i & 1) + t / 4, 16 * (i >> 1) + 4 * (t % 4) + b);
                assert_eq!(regs[(16 * t + 4 * i + b) as usize], value(r, c), "lane {t} register {i} byte {b}");
            }
        }
    }
    // Spot values: lane 5 gets bytes 4..7 of row 1 (matrix 0), then of row 9 (matrix 1): 36..39, 41..44.
    assert_eq!(&regs[80..84], &[36.0, 37.0, 38.0, 39.0]);
    assert_eq!(&regs[84..88], &[41.0, 42.0, 43.0, 44.0]);
}

/// What the copy planner relies on: lane `t`'s 16 bytes are exactly the m16n8k32 s8 A fragment of the 16x32
/// tile (value `v` of lane `t` at the catalogue's `coord(v, t)`).
#[test]
fn ldmatrix_x4_of_bytes_is_the_m16n8k32_s8_a_fragment() {
    let regs = run();
    let a = hardware_layout("mma.m16n8k32.s8.a").expect("catalogued");
    for t in 0..32u32 {
        for v in 0..16u32 {
            let (r, c) = a.coord(v, t).expect("in range");
            assert_eq!(regs[(16 * t + v) as usize], value(r, c), "lane {t} value {v}");
        }
    }
}
