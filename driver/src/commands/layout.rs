//! `tilec layout NAME [--json | --svg FILE]` and `tilec layout --list`: hardware layouts as tables and pictures.

use tilec_layout::{hardware_layout, hardware_layout_names, render_json, render_svg, render_table};

use crate::cli::LayoutArgs;
use crate::error::DriverError;
use crate::input::write_output;

pub fn run(args: &LayoutArgs) -> Result<String, DriverError> {
    if args.list {
        let mut out = String::new();
        for name in hardware_layout_names() {
            out.push_str(name);
            out.push('\n');
        }
        return Ok(out);
    }
    let Some(name) = args.name.as_deref() else {
        return Err(DriverError::Usage("name a layout (see `tilec layout --list`)".into()));
    };
    let Some(hw) = hardware_layout(name) else {
        let hint = tilec_ir::diag::NameHint::new(name, hardware_layout_names()).note("layouts");
        return Err(DriverError::Usage(format!("unknown layout '{name}'; {hint}")));
    };
    let rendered = |r: Result<String, tilec_layout::LayoutError>| r.map_err(|e| DriverError::Usage(format!("{name}: {e}")));
    if let Some(path) = &args.svg {
        let svg = rendered(render_svg(name, &hw.layout))?;
        write_output(path, svg.as_bytes())?;
        return Ok(String::new());
    }
    if args.json {
        let mut json = rendered(render_json(name, &hw.layout))?;
        json.push('\n');
        return Ok(json);
    }
    let mut text = rendered(render_table(name, &hw.layout))?;
    if let Some(note) = hw.note {
        text.push_str(&format!("note: {note}\n"));
    }
    Ok(text)
}
