//! The wgmma accumulator layouts (`wgmma.m64n<N>k16.f32.d`) against the PTX ISA's description of the
//! figure "WGMMA .m64nNk16 register fragment layout for accumulator matrix D", written out here independently
//! of the catalogue's bases: the warpgroup's warp w (thread / 32) owns rows 16w..16w+15 and, inside them,
//! lays the fragment out as the m16n8 mma.sync accumulator repeated every 8 columns:
//!
//!   row = 16 * w + groupID + 8 * ((i / 2) % 2)
//!   col = 8 * (i / 4) + 2 * threadID_in_group + (i % 2)
//!
//! with groupID = lane / 4, threadID_in_group = lane % 4 (lane = thread % 32), for the thread's f32 values
//! i = 0 .. N/2 (d0, d1, ... in register order).

use tilec_layout::{hardware_layout, hardware_layout_names};

fn isa_d(thread: u32, i: u32) -> (u32, u32) {
    let (warp, lane) = (thread / 32, thread % 32);
    let (group, tig) = (lane / 4, lane % 4);
    (16 * warp + group + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * tig + (i % 2))
}

#[test]
fn every_power_of_two_n_matches_the_isa_formula_and_covers_the_tile_once() {
    for n in [8u32, 16, 32, 64, 128, 256] {
        let name = format!("wgmma.m64n{n}k16.f32.d");
        let h = hardware_layout(&name).unwrap_or_else(|| panic!("{name} is not in the catalogue"));
        assert_eq!((h.rows, h.cols, h.element_bits), (64, n, 32), "{name}");
        assert_eq!(h.values_per_lane(), n / 2, "{name}: N/2 f32 values per thread");
        assert_eq!(h.layout.in_dim_size("lane"), Some(128), "{name}: the 128 threads of a warpgroup");
        let mut seen = vec![0u32; (64 * n) as usize];
        for thread in 0..128 {
            for i in 0..n / 2 {
                let expected = isa_d(thread, i);
                assert_eq!(h.coord(i, thread), Some(expected), "{name}: thread {thread}, d{i}");
                seen[(expected.0 * n + expected.1) as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&k| k == 1), "{name}: every element of the 64x{n} tile is held exactly once");
        // The inverse agrees: the owner of each element is the (thread, value) the formula puts there.
        assert_eq!(h.owner(9, 3), Some((1 + 4 * 1, 3)), "{name}: row 9 col 3 = groupID 1 (+8), tig 1, d3");
    }
}

#[test]
fn only_power_of_two_n_are_catalogued() {
    let names: Vec<&str> = hardware_layout_names().into_iter().filter(|n| n.starts_with("wgmma.") && n.ends_with(".d")).collect();
    assert_eq!(names.len(), 6, "{names:?}");
    assert!(hardware_layout("wgmma.m64n24k16.f32.d").is_none());
}
