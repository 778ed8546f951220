//! The A-from-registers layouts of wgmma (`wgmma.m64k16.{f16,bf16}.a`, `wgmma.m64k32.{s8,u8}.a`) against the
//! PTX ISA's register fragment figures for matrix A, written out here independently of the catalogue's bases:
//! warp w (thread / 32) of the warpgroup holds rows 16w..16w+15 as the mma.sync A fragment of that type,
//!
//!   16-bit: row = 16w + groupID + 8 * ((i / 2) % 2), col = 2 * threadID_in_group + (i % 2) + 8 * (i / 4), i < 8
//!   8-bit:  row = 16w + groupID + 8 * ((i / 4) % 2), col = 4 * threadID_in_group + (i % 4) + 16 * (i / 8), i < 16
//!
//! with groupID = lane / 4, threadID_in_group = lane % 4.

use tilec_layout::hardware_layout;

fn isa_a(bits: u32, thread: u32, i: u32) -> (u32, u32) {
    let (w, lane) = (thread / 32, thread % 32);
    let (g, t) = (lane / 4, lane % 4);
    if bits == 16 {
        (16 * w + g + 8 * ((i / 2) % 2), 2 * t + (i % 2) + 8 * (i / 4))
    } else {
        (16 * w + g + 8 * ((i / 4) % 2), 4 * t + (i % 4) + 16 * (i / 8))
    }
}

#[test]
fn a_fragments_match_the_isa_formula_and_cover_the_tile_once() {
    for (name, bits, cols, values) in [
        ("wgmma.m64k16.f16.a", 16, 16, 8),
        ("wgmma.m64k16.bf16.a", 16, 16, 8),
        ("wgmma.m64k32.s8.a", 8, 32, 16),
        ("wgmma.m64k32.u8.a", 8, 32, 16),
    ] {
        let h = hardware_layout(name).unwrap_or_else(|| panic!("{name} is not in the catalogue"));
        assert_eq!((h.rows, h.cols, h.element_bits), (64, cols, bits), "{name}");
        assert_eq!(h.values_per_lane(), values, "{name}");
        assert_eq!(h.layout.in_dim_size("lane"), Some(128), "{name}: the 128 threads of a warpgroup");
        let mut seen = vec![0u32; (64 * cols) as usize];
        for thread in 0..128 {
            for i in 0..values {
                let expected = isa_a(bits, thread, i);
                assert_eq!(h.coord(i, thread), Some(expected), "{name}: thread {thread}, a{i}");
                seen[(expected.0 * cols + expected.1) as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&k| k == 1), "{name}: every element of A is held exactly once");
    }
}
