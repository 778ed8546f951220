//! Prints a catalogued layout: `cargo run -p tilec-layout --example render_layout -- NAME [table|json|svg]`.
fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "mma.m16n8k16.f16.a".to_string());
    let format = args.next().unwrap_or_else(|| "table".to_string());
    let Some(h) = tilec_layout::hardware_layout(&name) else {
        eprintln!("unknown layout {name}; known: {}", tilec_layout::hardware_layout_names().join(", "));
        std::process::exit(1);
    };
    let out = match format.as_str() {
        "json" => tilec_layout::render_json(&h.name, &h.layout),
        "svg" => tilec_layout::render_svg(&h.name, &h.layout),
        _ => tilec_layout::render_table(&h.name, &h.layout),
    };
    match out {
        Ok(s) => print!("{s}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
