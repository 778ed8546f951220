//! Resource limits: huge and deeply nested inputs finish in bounded time and never overflow the stack.

use std::time::{Duration, Instant};

use tilec_ir::expect;
use tilec_ir::syntax::parser::MAX_NESTING;

/// Runs `f` on a thread with a small stack: a recursion that depends on the input would overflow it.
fn with_small_stack<T: Send + 'static>(stack: usize, f: impl FnOnce() -> T + Send + 'static) -> T {
    let handle = std::thread::Builder::new().stack_size(stack).spawn(f).unwrap_or_else(|e| panic!("spawn: {e}"));
    handle.join().unwrap_or_else(|_| panic!("the thread panicked (stack overflow aborts the process instead)"))
}

const TWO_MIB: usize = 2 << 20;

#[test]
fn hundred_thousand_ops_parse_and_verify_in_bounded_time() {
    let n = 100_000;
    let mut text = String::with_capacity(n * 48);
    text.push_str("tile.func @big(%g: tile<?x?xf32, global>) {\n  %v0 = tile.constant 1 : index\n");
    for i in 1..n {
        // Alternate ops so that the printer and verifier see some variety.
        let op = if i % 2 == 0 { "tile.add" } else { "tile.mul" };
        text.push_str(&format!("  %v{i} = {op} %v{}, %v{} : index\n", i - 1, i / 2));
    }
    text.push_str("  tile.return\n}\n");
    let started = Instant::now();
    let (diags, elapsed, printed_len) = with_small_stack(TWO_MIB, move || {
        let diags = expect::diagnose(&text);
        let elapsed = started.elapsed();
        let printed = tilec_ir::parse_module(&text).map(|m| tilec_ir::print_module(&m).len()).unwrap_or(0);
        (diags, elapsed, printed)
    });
    assert!(diags.is_empty(), "{:?}", &diags[..diags.len().min(3)]);
    assert!(printed_len > 0);
    eprintln!("100k ops: parse + verify in {elapsed:?}");
    // A generous bound (debug build, shared CI machine); it catches quadratic behaviour, not small slowdowns.
    assert!(elapsed < Duration::from_secs(60), "100k ops took {elapsed:?}");
}

fn nested(depth: usize) -> String {
    let mut text = String::from("tile.func @deep() {\n  %c0 = tile.constant 0 : index\n  %c1 = tile.constant 1 : index\n");
    for i in 0..depth {
        text.push_str(&format!("tile.for %i{i} = %c0 to %c1 step %c1 {{\n"));
    }
    for _ in 0..depth {
        text.push_str("tile.yield\n}\n");
    }
    text.push_str("  tile.return\n}\n");
    text
}

#[test]
fn ten_thousand_nested_loops_give_the_nesting_diagnostic_on_a_small_stack() {
    let text = nested(10_000);
    let diags = with_small_stack(TWO_MIB, move || expect::diagnose(&text));
    assert!(!diags.is_empty());
    assert!(diags[0].message.contains(&format!("nesting is deeper than {MAX_NESTING} levels")), "{:?}", diags[0]);
    assert!(diags.len() <= 100, "{} diagnostics", diags.len());
}

#[test]
fn nesting_at_the_limit_verifies_and_prints_on_a_small_stack() {
    let text = nested(MAX_NESTING - 1);
    let ok = with_small_stack(TWO_MIB, move || {
        let module = tilec_ir::parse_module(&text).map_err(|d| d.to_string())?;
        tilec_ir::verify::verify_module(&module).map_err(|d| d.to_string())?;
        let printed = tilec_ir::print_module(&module);
        tilec_ir::parse_module(&printed).map(|_| ()).map_err(|d| d.to_string())
    });
    assert_eq!(ok, Ok(()));
}

#[test]
fn deeply_nested_attribute_arrays_give_the_nesting_diagnostic() {
    let depth = 10_000;
    let text = format!(
        "tile.func @f() attributes {{a = {}1{}}} {{\n  tile.return\n}}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let diags = with_small_stack(TWO_MIB, move || expect::diagnose(&text));
    assert!(diags.iter().any(|d| d.message.contains("nesting is deeper")), "{diags:?}");
}

#[test]
fn deeply_nested_layouts_are_rejected_on_a_small_stack() {
    let depth = 10_000;
    let text = format!(
        "tile.func @f(%a: tile<16x16xf16, shared, {}#row_major{}>) {{\n  tile.return\n}}\n",
        "#swizzle<3, 3, 3, ".repeat(depth),
        ">".repeat(depth)
    );
    let diags = with_small_stack(TWO_MIB, move || expect::diagnose(&text));
    assert!(!diags.is_empty());
}

#[test]
fn many_errors_are_capped() {
    let mut text = String::from("tile.func @f() {\n");
    for i in 0..10_000 {
        text.push_str(&format!("  %v{i} = tile.bogus{i}\n"));
    }
    text.push_str("  tile.return\n}\n");
    let diags = expect::diagnose(&text);
    assert!(!diags.is_empty() && diags.len() <= 200, "{} diagnostics", diags.len());
}
