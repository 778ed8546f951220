//! `software-pipeline` reads the function attribute `fragments_ahead` like its pass option `fragments=on|off`:
//! `false` makes what `fragments=off` makes, `true` (and no attribute) what `fragments=on` makes, the two
//! differ (with fragments ahead the main loop carries the next iteration's fragments), and the pass option
//! wins over the attribute. A value that is not a bool is a diagnostic at the attribute (the verifier's).

use tilec_ir::{Attribute, Module, OpKind, Target};
use tilec_passes::pipelining::FRAGMENTS_AHEAD_ATTR;
use tilec_passes::{full_pipeline, Pass, PassContext, PassManager, PassRegistry, SoftwarePipeline};

fn gemm(attr: Option<&str>) -> Module {
    let text = std::fs::read_to_string(format!("{}/../examples/gemm.tir", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let text = match attr {
        Some(value) => {
            let header = "attributes {num_warps = 4";
            assert!(text.contains(header), "examples/gemm.tir changed its attributes");
            text.replace(header, &format!("attributes {{{FRAGMENTS_AHEAD_ATTR} = {value}, num_warps = 4"))
        }
        None => text,
    };
    tilec_ir::parse_module(&text).unwrap()
}

/// The default pipeline, with `options` given to software-pipeline (empty: none).
fn lowered(mut m: Module, options: &str) -> Result<Module, String> {
    let pipeline = full_pipeline(Target::Sm90);
    assert!(pipeline.contains("software-pipeline,"), "{pipeline}");
    let pipeline = if options.is_empty() { pipeline } else { pipeline.replace("software-pipeline,", &format!("software-pipeline{{{options}}},")) };
    let pm = PassManager::from_pipeline(&PassRegistry::with_builtin(), &pipeline).unwrap();
    pm.run(&mut m, &mut PassContext::new(Target::Sm90)).map_err(|e| format!("{:?}", e.diagnostics))?;
    Ok(m)
}

/// The lowered IR as text, without the attribute itself (so runs with and without it compare equal when the
/// pass made the same code).
fn text(mut m: Module) -> String {
    m.funcs[0].attrs.remove(FRAGMENTS_AHEAD_ATTR);
    tilec_ir::print_module(&m)
}

/// How many values the first top-level loop (the pipelined main loop) carries.
fn carried(m: &Module) -> usize {
    let f = &m.funcs[0];
    let main = f.body.block(f.entry).ops.iter().copied().find(|&o| f.body.op(o).kind == OpKind::For).expect("a main loop");
    f.body.op(main).results.len()
}

#[test]
fn the_attribute_does_what_the_option_does() {
    let default = lowered(gemm(None), "").unwrap();
    let attr_off = lowered(gemm(Some("false")), "").unwrap();
    let attr_on = lowered(gemm(Some("true")), "").unwrap();
    let option_off = lowered(gemm(None), "fragments=off").unwrap();
    let option_on = lowered(gemm(None), "fragments=on").unwrap();

    // The attribute changes what the pass makes: with fragments ahead the loop carries them.
    assert!(carried(&attr_on) > carried(&attr_off), "carried: on {} vs off {}", carried(&attr_on), carried(&attr_off));
    let (off, on) = (text(attr_off), text(attr_on));
    assert_ne!(off, on);
    assert_eq!(off, text(option_off), "fragments_ahead = false differs from fragments=off");
    assert_eq!(on, text(option_on), "fragments_ahead = true differs from fragments=on");
    assert_eq!(on, text(default), "the default is fragments ahead");
}

#[test]
fn the_pass_option_wins_over_the_attribute() {
    let forced_on = lowered(gemm(Some("false")), "fragments=on").unwrap();
    let forced_off = lowered(gemm(Some("true")), "fragments=off").unwrap();
    assert_eq!(text(forced_on), text(lowered(gemm(None), "fragments=on").unwrap()));
    assert_eq!(text(forced_off), text(lowered(gemm(None), "fragments=off").unwrap()));
}

#[test]
fn a_value_that_is_not_a_bool_is_diagnosed() {
    // The verifier checks kernel attributes against their declarations before any pass runs, so a bad value
    // is an error even where the pass option would override the attribute.
    for options in ["", "fragments=off"] {
        let err = lowered(gemm(Some("2")), options).unwrap_err();
        assert!(err.contains("kernel @gemm: 'fragments_ahead' must be true or false, found 2"), "{err}");
    }
    // Unverified IR: the pass says so itself, unless its options say everything it would read.
    let mut m = gemm(None);
    m.funcs[0].attrs.insert(FRAGMENTS_AHEAD_ATTR.into(), Attribute::Int(2));
    let err = SoftwarePipeline::default().run(&mut m, &mut PassContext::new(Target::Sm90)).unwrap_err();
    assert!(err.message.contains("fragments_ahead = 2: expected true or false"), "{}", err.message);
    let forced = SoftwarePipeline { stages: Some(4), fragments_ahead: Some(false), tail: Some(tilec_ir::ops::PipelineTail::Peeled) };
    forced.run(&mut m, &mut PassContext::new(Target::Sm90)).unwrap();
    assert_eq!(m.funcs[0].attrs.get(FRAGMENTS_AHEAD_ATTR), Some(&Attribute::Int(2)));
}
