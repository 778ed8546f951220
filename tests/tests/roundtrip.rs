//! Every example (`examples/**/*.tir`, seeds included) verifies, prints stably, and reads back to the same IR.

use tilec_ir::{parse_module, print_module, verify::verify_module, SourceFile};
use tilec_tests::{display_path, examples_dir, files_with_extension, numbered, structurally_equal};

fn examples() -> Vec<(String, String)> {
    files_with_extension(&examples_dir(), "tir")
        .into_iter()
        .map(|p| (display_path(&p), std::fs::read_to_string(&p).unwrap_or_default()))
        .collect()
}

/// One example: the list of what went wrong (empty when the round trip holds).
fn round_trip(name: &str, text: &str) -> Vec<String> {
    let source = SourceFile::new(name, text);
    let module = match parse_module(text) {
        Ok(m) => m,
        Err(d) => return vec![format!("{name} does not parse:\n{}", source.render(&d.0, false))],
    };
    let mut problems = Vec::new();
    if let Err(d) = verify_module(&module) {
        problems.push(format!("{name} does not verify:\n{}", source.render(&d.0, false)));
    }
    let printed = print_module(&module);
    let reparsed = match parse_module(&printed) {
        Ok(m) => m,
        Err(d) => {
            let printed_source = SourceFile::new(format!("print({name})"), printed.as_str());
            problems.push(format!("the printed {name} does not parse:\n{}", printed_source.render(&d.0, false)));
            return problems;
        }
    };
    if let Err(e) = structurally_equal(&module, &reparsed) {
        problems.push(format!("parse(print({name})) differs from parse({name}): {e}\nprinted:\n{}", numbered(&printed)));
    }
    let printed_again = print_module(&reparsed);
    if printed_again != printed {
        problems.push(format!(
            "printing {name} is not stable:\nfirst:\n{}\nsecond:\n{}",
            numbered(&printed),
            numbered(&printed_again)
        ));
    }
    if let Err(d) = verify_module(&reparsed) {
        problems.push(format!("the printed {name} does not verify: {d}"));
    }
    problems
}

#[test]
fn every_example_round_trips() {
    let examples = examples();
    assert!(examples.len() >= 5, "found only {} examples under examples/", examples.len());
    let problems: Vec<String> = examples.iter().flat_map(|(name, text)| round_trip(name, text)).collect();
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// The structural comparison notices what a round trip could lose.
#[test]
fn structural_equality_notices_differences() {
    let base = "tile.func @f(%a: f32) {\n  %b = tile.add %a, %a : f32\n  %c = tile.mul %b, %a : f32\n  tile.return\n}\n";
    let same_renamed = "tile.func @f(%x: f32) {\n  %y = tile.add %x, %x : f32\n  %z = tile.mul %y, %x : f32\n  tile.return\n}\n";
    let rewired = "tile.func @f(%a: f32) {\n  %b = tile.add %a, %a : f32\n  %c = tile.mul %a, %b : f32\n  tile.return\n}\n";
    let other_kind = "tile.func @f(%a: f32) {\n  %b = tile.sub %a, %a : f32\n  %c = tile.mul %b, %a : f32\n  tile.return\n}\n";
    let other_attr = "tile.func @f(%a: f32) attributes {num_warps = 2} {\n  %b = tile.add %a, %a : f32\n  %c = tile.mul %b, %a : f32\n  tile.return\n}\n";
    let parse = |t: &str| parse_module(t).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(structurally_equal(&parse(base), &parse(same_renamed)), Ok(()));
    for other in [rewired, other_kind, other_attr] {
        assert!(structurally_equal(&parse(base), &parse(other)).is_err(), "{other}");
    }
}
