//! `mma.sync` in the simulator (fragment maps transcribed from the PTX ISA in `sim/mma.rs`) against the
//! fragment layouts of the `tilec-layout` catalogue, an independent transcription: for each variant, random
//! small-integer fragments go through a one-instruction kernel, and every lane's D must equal A x B + C
//! computed from the catalogue's (lane, value) -> (row, col) maps. All values are exact, so the comparison is.

use tilec_ir::data::TensorData;
use tilec_ir::layout::{hardware_layout, HardwareLayout};
use tilec_ir::sim::{simulate, Launch, SimArg};
use tilec_ir::{parse_module, verify::verify_module, ScalarType};

struct Case {
    shape: [usize; 3],
    ab: &'static str,
    acc: &'static str,
    layouts: (&'static str, &'static str),
    names: [&'static str; 3],
}

fn elem(name: &str) -> ScalarType {
    ScalarType::from_name(name).expect("type")
}

fn kernel(case: &Case, na: usize, nb: usize, nc: usize) -> String {
    let [m, n, k] = case.shape;
    let (ab, acc) = (case.ab, case.acc);
    let layouts = if (m, n, k) == (8, 8, 4) {
        format!(", layoutA = {}, layoutB = {}", case.layouts.0, case.layouts.1)
    } else {
        String::new()
    };
    format!(
        "tile.func @k(%A: tile<32x{na}x{ab}, global>, %B: tile<32x{nb}x{ab}, global>, %C: tile<32x{nc}x{acc}, global>, %D: tile<32x{nc}x{acc}, global>) attributes {{num_warps = 1}} {{
  %c0 = tile.constant 0 : index
  %tid = nvgpu.thread_id x : index
  %a = nvgpu.load %A[%tid, %c0] : vector<{na}x{ab}>
  %b = nvgpu.load %B[%tid, %c0] : vector<{nb}x{ab}>
  %c = nvgpu.load %C[%tid, %c0] : vector<{nc}x{acc}>
  %d = nvgpu.mma.sync(%a, %b, %c) {{mmaShape = [{m}, {n}, {k}]{layouts}}} : vector<{nc}x{acc}>
  nvgpu.store %d, %D[%tid, %c0]
  tile.return
}}
"
    )
}

/// Deterministic small values that every type represents exactly.
fn values(len: usize, elem: ScalarType, seed: u64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = (x % 8) as f64;
            if elem.is_unsigned() { v } else { v - 4.0 }
        })
        .collect()
}

/// The matrix of one product group from lane-major fragments through a catalogue layout.
fn gather(layout: &HardwareLayout, frags: &[f64], per_lane: usize, lanes: &[usize]) -> Vec<f64> {
    let (rows, cols) = (layout.rows as usize, layout.cols as usize);
    let mut m = vec![f64::NAN; rows * cols];
    for &lane in lanes {
        for v in 0..per_lane {
            let (r, c) = layout.coord(v as u32, lane as u32).expect("in range");
            m[r as usize * cols + c as usize] = frags[lane * per_lane + v];
        }
    }
    assert!(m.iter().all(|x| !x.is_nan()), "{} does not cover its matrix from lanes {lanes:?}", layout.name);
    m
}

#[test]
fn mma_sync_agrees_with_the_layout_catalogue() {
    let cases = [
        Case { shape: [16, 8, 16], ab: "f16", acc: "f32", layouts: ("row", "col"), names: ["mma.m16n8k16.f16.a", "mma.m16n8k16.f16.b", "mma.m16n8k16.f32.c"] },
        Case { shape: [16, 8, 16], ab: "f16", acc: "f16", layouts: ("row", "col"), names: ["mma.m16n8k16.f16.a", "mma.m16n8k16.f16.b", "mma.m16n8k16.f16.c"] },
        Case { shape: [16, 8, 16], ab: "bf16", acc: "f32", layouts: ("row", "col"), names: ["mma.m16n8k16.bf16.a", "mma.m16n8k16.bf16.b", "mma.m16n8k16.f32.c"] },
        Case { shape: [16, 8, 8], ab: "f16", acc: "f32", layouts: ("row", "col"), names: ["mma.m16n8k8.f16.a", "mma.m16n8k8.f16.b", "mma.m16n8k8.f32.c"] },
        Case { shape: [16, 8, 8], ab: "bf16", acc: "f32", layouts: ("row", "col"), names: ["mma.m16n8k8.bf16.a", "mma.m16n8k8.bf16.b", "mma.m16n8k8.f32.c"] },
        Case { shape: [16, 8, 8], ab: "tf32", acc: "f32", layouts: ("row", "col"), names: ["mma.m16n8k8.tf32.a", "mma.m16n8k8.tf32.b", "mma.m16n8k8.f32.c"] },
        Case { shape: [16, 8, 16], ab: "i8", acc: "i32", layouts: ("row", "col"), names: ["mma.m16n8k16.s8.a", "mma.m16n8k16.s8.b", "mma.m16n8k16.f32.c"] },
        Case { shape: [16, 8, 32], ab: "i8", acc: "i32", layouts: ("row", "col"), names: ["mma.m16n8k32.s8.a", "mma.m16n8k32.s8.b", "mma.m16n8k32.s32.c"] },
        Case { shape: [16, 8, 32], ab: "u8", acc: "i32", layouts: ("row", "col"), names: ["mma.m16n8k32.u8.a", "mma.m16n8k32.u8.b", "mma.m16n8k32.s32.c"] },
        Case { shape: [16, 8, 64], ab: "i4", acc: "i32", layouts: ("row", "col"), names: ["mma.m16n8k64.s4.a", "mma.m16n8k64.s4.b", "mma.m16n8k64.s32.c"] },
        Case { shape: [16, 8, 64], ab: "u4", acc: "i32", layouts: ("row", "col"), names: ["mma.m16n8k64.u4.a", "mma.m16n8k64.u4.b", "mma.m16n8k64.s32.c"] },
        Case { shape: [8, 8, 4], ab: "f16", acc: "f32", layouts: ("row", "col"), names: ["mma.m8n8k4.f16.a.row", "mma.m8n8k4.f16.b.col", "mma.m8n8k4.f32.c"] },
        Case { shape: [8, 8, 4], ab: "f16", acc: "f32", layouts: ("col", "row"), names: ["mma.m8n8k4.f16.a.col", "mma.m8n8k4.f16.b.row", "mma.m8n8k4.f32.c"] },
        Case { shape: [8, 8, 4], ab: "f16", acc: "f16", layouts: ("row", "row"), names: ["mma.m8n8k4.f16.a.row", "mma.m8n8k4.f16.b.row", "mma.m8n8k4.f16.c"] },
        Case { shape: [8, 8, 4], ab: "f16", acc: "f32", layouts: ("col", "col"), names: ["mma.m8n8k4.f16.a.col", "mma.m8n8k4.f16.b.col", "mma.m8n8k4.f32.c"] },
    ];
    let mut checked = 0;
    let mut missing = Vec::new();
    for (ci, case) in cases.iter().enumerate() {
        let layouts: Vec<_> = case.names.iter().map(|n| hardware_layout(n)).collect();
        let [Some(la), Some(lb), Some(lc)] = [layouts[0], layouts[1], layouts[2]] else {
            missing.push(case.names);
            continue;
        };
        let [m, n, k] = case.shape;
        let group = if m == 8 { 8 } else { 32 };
        let (na, nb, nc) = (m * k / group, k * n / group, m * n / group);
        assert_eq!((na as u32, nb as u32, nc as u32), (la.values_per_lane(), lb.values_per_lane(), lc.values_per_lane()), "{:?}", case.names);
        let text = kernel(case, na, nb, nc);
        let module = parse_module(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        verify_module(&module).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let (ab, acc) = (elem(case.ab), elem(case.acc));
        let (a, b, c) = (values(32 * na, ab, 3 * ci as u64 + 1), values(32 * nb, ab, 3 * ci as u64 + 2), values(32 * nc, acc, 3 * ci as u64 + 3));
        let t = |shape: &[usize], e, v: &Vec<f64>| SimArg::Tile(TensorData { shape: shape.to_vec(), elem: e, values: v.clone() });
        let mut args = vec![t(&[32, na], ab, &a), t(&[32, nb], ab, &b), t(&[32, nc], acc, &c), SimArg::Tile(TensorData::zeros(&[32, nc], acc))];
        simulate(&module.funcs[0], &mut args, &Launch::SINGLE).unwrap_or_else(|e| panic!("{:?}: {e}", case.names));
        let d = args[3].as_tile().expect("tile").values.clone();
        let groups: Vec<Vec<usize>> = if m == 8 {
            (0..4).map(|q| (4 * q..4 * q + 4).chain(16 + 4 * q..20 + 4 * q).collect()).collect()
        } else {
            vec![(0..32).collect()]
        };
        for lanes in groups {
            let (ma, mb, mc) = (gather(la, &a, na, &lanes), gather(lb, &b, nb, &lanes), gather(lc, &c, nc, &lanes));
            for &lane in &lanes {
                for v in 0..nc {
                    let (r, col) = lc.coord(v as u32, lane as u32).expect("in range");
                    let (r, col) = (r as usize, col as usize);
                    let expected = (0..k).map(|kk| ma[r * k + kk] * mb[kk * n + col]).sum::<f64>() + mc[r * n + col];
                    assert_eq!(d[lane * nc + v], expected, "{:?}: lane {lane} value {v} (D[{r}][{col}])", case.names);
                }
            }
        }
        checked += 1;
    }
    assert!(checked >= 14, "only {checked} variants checked; the catalogue lacks {missing:?}");
    eprintln!("mma.sync variants checked against tilec-layout: {checked} (missing from the catalogue: {missing:?})");
}
