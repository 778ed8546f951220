//! Pipeline strings: what parses, what does not, and the diagnostics for the latter.

use tilec_ir::Target;
use tilec_passes::{default_pipeline, Pass, PassContext, PassOptions, PassRegistry, Pipeline};

fn err(text: &str) -> tilec_ir::Diagnostic {
    PassRegistry::with_builtin().parse_pipeline(text).expect_err(text)
}

fn notes(d: &tilec_ir::Diagnostic) -> Vec<&str> {
    d.notes.iter().map(|n| n.message.as_str()).collect()
}

#[test]
fn good_pipelines() {
    let r = PassRegistry::with_builtin();
    for (text, names) in [
        ("canonicalize,cse,dce", vec!["canonicalize", "cse", "dce"]),
        ("  dce ", vec!["dce"]),
        ("cse , cse,cse", vec!["cse", "cse", "cse"]),
        ("canonicalize{}", vec!["canonicalize"]),
        ("", vec![]),
    ] {
        assert_eq!(r.parse_pipeline(text).unwrap().names(), names, "{text:?}");
    }
    for t in Target::ALL {
        assert!(r.parse_pipeline(default_pipeline(t)).is_ok());
    }
}

#[test]
fn unknown_pass_suggests_the_closest_name() {
    let d = err("canonicalize,csee,dce");
    assert_eq!(d.message, "unknown pass 'csee'");
    assert_eq!(d.span.range(), 13..17);
    assert_eq!(notes(&d), ["did you mean 'cse'?"]);

    let d = err("canonicalise");
    assert_eq!(notes(&d)[0], "did you mean 'canonicalize'?");

    let d = err("vectorize");
    assert_eq!(d.message, "unknown pass 'vectorize'");
    assert_eq!(notes(&d), ["available passes: canonicalize, check-resources, cse, dce, layout-assignment, lower-tile-to-nvgpu, persistent-grid, rasterize, software-pipeline, swizzle"]);
}

#[test]
fn syntax_errors() {
    let cases = [
        ("cse,,dce", "empty pass name in pipeline", 4..5),
        (",cse", "empty pass name in pipeline", 0..1),
        ("cse,", "trailing ',' in pipeline", 3..4),
        ("cse dce", "expected ',' between passes, found 'd'", 4..5),
        ("cse;dce", "expected ',' between passes, found ';'", 3..4),
        ("cse{a=1", "unclosed '{' in the options of pass 'cse'", 3..4),
        ("cse{a}", "expected '=' after option 'a', found '}'", 5..6),
        ("cse{=1}", "expected an option name, found '='", 4..5),
        ("cse{a=}", "expected a value for option 'a', found '}'", 6..7),
        ("cse{a=1 a=2}", "option 'a' of pass 'cse' is given twice", 8..9),
        ("{a=1}", "expected a pass name, found '{'", 0..1),
    ];
    for (text, message, range) in cases {
        let d = Pipeline::parse(text).expect_err(text);
        assert_eq!(d.message, message, "{text:?}");
        assert_eq!(d.span.range(), range, "{text:?}");
        // The registry reports the same syntax error.
        assert_eq!(err(text).message, message);
    }
}

#[test]
fn options_are_parsed_and_checked_by_the_pass() {
    let p = Pipeline::parse("canonicalize{max-iterations=4 mode=aggressive},dce").unwrap();
    assert_eq!(p.entries[0].options.get("max-iterations"), Some("4"));
    assert_eq!(p.entries[0].options.get("mode"), Some("aggressive"));
    assert_eq!(p.to_string(), "canonicalize{max-iterations=4 mode=aggressive},dce");
    // The built-in cleanup passes take no options.
    let d = err("canonicalize{mode=aggressive}");
    assert_eq!(d.message, "pass 'canonicalize' has no option 'mode'");
    assert_eq!(notes(&d), ["'canonicalize' takes no options"]);
    assert_eq!(d.span.range(), 12..29);
}

/// A pass with an option, registered by hand with a constructor.
struct Unroll {
    factor: u32,
}

impl Pass for Unroll {
    fn name(&self) -> &'static str {
        "unroll"
    }
    fn description(&self) -> &'static str {
        "pretend to unroll"
    }
    fn run(&self, _: &mut tilec_ir::Module, cx: &mut PassContext) -> Result<(), tilec_ir::Diagnostic> {
        cx.remark(tilec_ir::Span::UNKNOWN, format!("unroll by {}", self.factor));
        Ok(())
    }
}

fn unroll(options: &PassOptions) -> Result<Box<dyn Pass>, tilec_ir::Diagnostic> {
    options.expect_only("unroll", &["factor"])?;
    Ok(Box::new(Unroll { factor: options.parse_or("unroll", "factor", 2)? }))
}

#[test]
fn passes_with_options_from_an_embedder() {
    let mut r = PassRegistry::with_builtin();
    assert!(!r.register("unroll", "pretend to unroll", unroll));
    assert!(r.parse_pipeline("unroll{factor=4},dce").is_ok());
    let d = r.parse_pipeline("unroll{factor=four}").unwrap_err();
    assert_eq!(d.message, "option 'factor' of pass 'unroll' has an invalid value 'four'");
    let d = r.parse_pipeline("unroll{factr=4}").unwrap_err();
    assert_eq!(d.message, "pass 'unroll' has no option 'factr'");
    assert_eq!(notes(&d), ["'unroll' accepts: factor"]);
    assert_eq!(r.suggest("unrol"), Some("unroll"));

    let pm = tilec_passes::PassManager::from_pipeline(&r, "unroll{factor=8},unroll").unwrap();
    let mut cx = PassContext::new(Target::Sm90);
    pm.run(&mut tilec_ir::Module::default(), &mut cx).unwrap();
    let remarks: Vec<_> = cx.remarks.iter().map(|r| (r.pass.as_str(), r.message.as_str())).collect();
    assert_eq!(remarks, [("unroll", "unroll by 8"), ("unroll", "unroll by 2")]);
}

#[test]
fn registering_a_name_twice_replaces_it() {
    let mut r = PassRegistry::with_builtin();
    assert!(r.register("dce", "my dce", |_| Ok(Box::new(tilec_passes::cleanup::Dce))));
    assert_eq!(r.get("dce").unwrap().description, "my dce");
    assert_eq!(r.names(), ["canonicalize", "check-resources", "cse", "dce", "layout-assignment", "lower-tile-to-nvgpu", "persistent-grid", "rasterize", "software-pipeline", "swizzle"]);
}
