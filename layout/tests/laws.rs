//! Property tests: the laws of the layout algebra, the text syntax round trip,
//! and that the parser never panics.

use proptest::prelude::*;
use tilec_layout::{hardware_layouts, Layout, LinearLayout, Swizzle};

/// A random layout with 1-3 input dims and 1-2 output dims (names from a
/// fixed set), sizes up to 2^4 per dim, arbitrary bases.
fn arb_layout() -> impl Strategy<Value = LinearLayout> {
    let outs = prop::collection::vec(0u32..=4, 1..=2);
    let ins = prop::collection::vec(0usize..=4, 1..=3);
    (outs, ins)
        .prop_flat_map(|(out_log2, in_bits)| {
            let n_bases: usize = in_bits.iter().sum();
            let comps = out_log2.clone();
            let bases = prop::collection::vec(
                comps.iter().map(|&k| 0u32..(1 << k)).collect::<Vec<_>>(),
                n_bases,
            );
            (Just(out_log2), Just(in_bits), bases)
        })
        .prop_map(|(out_log2, in_bits, bases)| {
            let in_names = ["register", "lane", "warp"];
            let out_names = ["row", "col"];
            let mut it = bases.into_iter();
            let ins: Vec<(&str, Vec<Vec<u32>>)> =
                in_bits.iter().enumerate().map(|(i, &k)| (in_names[i], it.by_ref().take(k).collect())).collect();
            let outs: Vec<(&str, u32)> = out_log2.iter().enumerate().map(|(j, &k)| (out_names[j], 1u32 << k)).collect();
            LinearLayout::new(ins, outs).expect("generated layout is valid")
        })
}

/// A random bijection `x -> row/col` built as a random invertible matrix.
fn arb_bijection() -> impl Strategy<Value = LinearLayout> {
    (1u32..=3, 1u32..=3, prop::collection::vec(any::<u64>(), 12)).prop_map(|(r, c, seeds)| {
        // Start from the identity and apply random elementary row operations
        // (XOR one basis into another), which keep the matrix invertible.
        let n = (r + c) as usize;
        let mut flat: Vec<u32> = (0..n).map(|i| 1 << i).collect();
        for s in seeds {
            let (a, b) = ((s % n as u64) as usize, ((s >> 8) % n as u64) as usize);
            if a != b {
                flat[a] ^= flat[b];
            }
            flat.swap((s >> 16) as usize % n, (s >> 24) as usize % n);
        }
        let split = |v: u32| vec![v & ((1 << r) - 1), v >> r];
        let bases: Vec<Vec<u32>> = flat.into_iter().map(split).collect();
        let (lo, hi) = bases.split_at(2);
        LinearLayout::new([("register", lo.to_vec()), ("lane", hi.to_vec())], [("row", 1 << r), ("col", 1 << c)]).unwrap()
    })
}

fn all_inputs(l: &LinearLayout) -> Vec<Vec<u32>> {
    let sizes: Vec<u32> = l.in_dims().map(|(_, s)| s).collect();
    let total: u64 = sizes.iter().map(|&s| u64::from(s)).product();
    (0..total)
        .map(|mut x| {
            sizes
                .iter()
                .map(|&s| {
                    let v = (x % u64::from(s)) as u32;
                    x /= u64::from(s);
                    v
                })
                .collect()
        })
        .collect()
}

proptest! {
    #[test]
    fn compose_with_inverse_is_identity(l in arb_bijection()) {
        let inv = l.invert().unwrap();
        let id_in = l.compose(&inv).unwrap();
        for x in all_inputs(&l) {
            prop_assert_eq!(id_in.apply(&x).unwrap(), x);
        }
        let id_out = inv.compose(&l).unwrap();
        for y in all_inputs(&inv) {
            prop_assert_eq!(id_out.apply(&y).unwrap(), y);
        }
    }

    #[test]
    fn invert_is_an_involution(l in arb_bijection()) {
        prop_assert_eq!(l.invert().unwrap().invert().unwrap(), l);
    }

    #[test]
    fn apply_then_find_input_round_trips(l in arb_layout()) {
        for x in all_inputs(&l) {
            let y = l.apply(&x).unwrap();
            let x2 = l.find_input(&y).expect("an output has a preimage");
            prop_assert_eq!(l.apply(&x2).unwrap(), y);
            if l.is_injective() {
                prop_assert_eq!(x2, x);
            }
        }
    }

    #[test]
    fn invert_and_compose_agrees(l in arb_layout(), m in arb_bijection()) {
        // m covers row/col; restrict l to the same outputs and sizes by composing.
        if let Ok(c) = l.invert_and_compose(&m) {
            for x in all_inputs(&l) {
                let via = m.apply(&c.apply(&x).unwrap()).unwrap();
                let direct = l.apply(&x).unwrap();
                prop_assert_eq!(via, direct);
            }
        }
    }

    #[test]
    fn product_sizes(a in arb_layout(), b in arb_layout()) {
        let p = a.product(&b).unwrap();
        prop_assert_eq!(p.total_in_bits(), a.total_in_bits() + b.total_in_bits());
        prop_assert_eq!(p.total_out_bits(), a.total_out_bits() + b.total_out_bits());
        for (name, size) in p.in_dims() {
            prop_assert_eq!(size, a.in_dim_size(name).unwrap_or(1) * b.in_dim_size(name).unwrap_or(1));
        }
        // inner and outer bases land on disjoint output bits, so ranks add
        prop_assert_eq!(p.is_injective(), a.is_injective() && b.is_injective());
    }

    #[test]
    fn reshape_round_trips(l in arb_layout()) {
        let flat = l.flatten_ins().flatten_outs();
        prop_assert_eq!(flat.total_in_bits(), l.total_in_bits());
        let ins: Vec<(String, u32)> = l.in_dims().map(|(n, s)| (n.to_string(), s)).collect();
        let outs: Vec<(String, u32)> = l.out_dims().map(|(n, s)| (n.to_string(), s)).collect();
        let ins: Vec<(&str, u32)> = ins.iter().map(|(n, s)| (n.as_str(), *s)).collect();
        let outs: Vec<(&str, u32)> = outs.iter().map(|(n, s)| (n.as_str(), *s)).collect();
        let back = flat.reshape_ins(&ins).unwrap().reshape_outs(&outs).unwrap();
        prop_assert_eq!(back, l);
    }

    #[test]
    fn swizzle_is_an_involution_when_shift_covers_bits(bits in 0u32..4, base in 0u32..4, extra in 0u32..3) {
        let s = Swizzle::new(bits, base, bits.max(1) + extra).unwrap();
        prop_assert!(s.is_involution());
        let l = s.to_linear(s.offset_bits()).unwrap();
        prop_assert_eq!(l.compose(&l).unwrap(), LinearLayout::identity_1d(1 << s.offset_bits(), "offset", "offset").unwrap());
        for o in 0..(1u32 << s.offset_bits()) {
            prop_assert_eq!(l.apply(&[o]).unwrap(), vec![s.apply(o)]);
        }
    }

    #[test]
    fn linear_text_round_trips(l in arb_layout()) {
        let attr = Layout::Linear(l);
        let text = attr.to_string();
        prop_assert_eq!(Layout::parse(&text).unwrap(), attr);
    }

    #[test]
    fn swizzled_text_round_trips(bits in 0u32..4, base in 0u32..4, shift in 1u32..4, col in any::<bool>()) {
        let inner = if col { Layout::ColMajor } else { Layout::RowMajor };
        let attr = Layout::Swizzled { swizzle: Swizzle::new(bits, base, shift).unwrap(), base: Box::new(inner) };
        prop_assert_eq!(Layout::parse(&attr.to_string()).unwrap(), attr);
    }

    #[test]
    fn parse_never_panics(s in "\\PC{0,80}") {
        let _ = Layout::parse(&s);
        let _ = tilec_layout::attribute_len(&s);
    }

    #[test]
    fn parse_never_panics_on_near_misses(s in "#(linear|swizzle|hw|row_major)[<>{}\\[\\],=0-9 a-z\"->]{0,60}") {
        if let Err(e) = Layout::parse(&s) {
            prop_assert!(e.offset <= s.len());
        }
        let _ = tilec_layout::attribute_len(&s);
    }
}

#[test]
fn every_hardware_layout_round_trips_through_text() {
    for h in hardware_layouts() {
        let by_name = Layout::Hardware(h.name.clone());
        assert_eq!(Layout::parse(&by_name.to_string()).unwrap(), by_name);
        let written_out = Layout::Linear(h.layout.clone());
        assert_eq!(Layout::parse(&written_out.to_string()).unwrap(), written_out);
    }
}

#[test]
fn fragments_against_memory_via_invert_and_compose() {
    // (register, lane) -> offset in a row-major and a swizzled tile, for every
    // catalogued fragment: the copy planner's question.
    for h in hardware_layouts() {
        let mem = tilec_layout::row_major(h.rows, h.cols).unwrap();
        let to_offset = h.layout.invert_and_compose(&mem).unwrap();
        for lane in 0..32 {
            for v in 0..h.values_per_lane() {
                let offset = to_offset.apply(&[v, lane]).unwrap();
                let (r, c) = h.coord(v, lane).unwrap();
                assert_eq!(offset, vec![r * h.cols + c], "{}", h.name);
            }
        }
        let bits = (h.rows * h.cols).trailing_zeros();
        if bits >= 6 {
            let swz = Swizzle::new(3, bits - 6, 3).unwrap().apply_to(&mem).unwrap();
            let to_phys = h.layout.invert_and_compose(&swz).unwrap();
            for lane in 0..32 {
                let p = to_phys.apply(&[0, lane]).unwrap();
                assert_eq!(swz.apply(&p).unwrap(), h.layout.apply(&[0, lane]).unwrap(), "{}", h.name);
            }
        }
    }
}
