//! Pictures of fragment layouts: a text table, JSON and SVG (`tilec layout NAME`).
//!
//! All three take a layout from `(register, lane)` to `(row, col)`; any other
//! input dimension (e.g. `warp`) is held at 0. Each tile element is labelled
//! `T<lane>:V<value>` after the lane and value holding it; where several lanes
//! hold one element (a broadcast such as the `mma.m8n8k4` quad-pairs) the lowest
//! lane is shown and the header says so.

use std::fmt::Write as _;

use serde_json::json;

use crate::error::LayoutError;
use crate::linear::LinearLayout;

/// Who holds what: `cells[row][col]` = lowest `(lane, value)` holding it, and
/// `lanes[lane][value]` = `(row, col)`.
struct Ownership {
    rows: u32,
    cols: u32,
    lanes: Vec<Vec<(u32, u32)>>,
    cells: Vec<Vec<Option<(u32, u32)>>>,
    max_owners: usize,
}

fn ownership(layout: &LinearLayout) -> Result<Ownership, LayoutError> {
    for d in layout.in_dim_names() {
        if d != "register" && d != "lane" && layout.in_dim_size(d) != Some(1) && d != "warp" && d != "block" {
            return Err(LayoutError::Incompatible(format!("cannot draw input dimension `{d}`; expected register and lane")));
        }
    }
    for d in layout.out_dim_names() {
        if d != "row" && d != "col" {
            return Err(LayoutError::Incompatible(format!("cannot draw output dimension `{d}`; expected row and col")));
        }
    }
    let rows = layout.out_dim_size("row").unwrap_or(1);
    let cols = layout.out_dim_size("col").unwrap_or(1);
    let num_lanes = layout.in_dim_size("lane").unwrap_or(1);
    let num_values = layout.in_dim_size("register").unwrap_or(1);
    if u64::from(rows) * u64::from(cols) > 1 << 16 {
        return Err(LayoutError::TooLarge(format!("{rows}x{cols} is too large to draw")));
    }
    let mut counts = vec![vec![0usize; cols as usize]; rows as usize];
    let mut cells = vec![vec![None; cols as usize]; rows as usize];
    let mut lanes = Vec::with_capacity(num_lanes as usize);
    for lane in 0..num_lanes {
        let mut values = Vec::with_capacity(num_values as usize);
        for value in 0..num_values {
            let out = layout.apply_named(&[("register", value), ("lane", lane)].into_iter().filter(|(n, _)| layout.in_dim_index(n).is_some()).collect::<Vec<_>>())?;
            let get = |n: &str| out.iter().find(|(m, _)| m == n).map_or(0, |(_, v)| *v);
            let (row, col) = (get("row"), get("col"));
            values.push((row, col));
            let (r, c) = (row as usize, col as usize);
            counts[r][c] += 1;
            if cells[r][c].is_none() {
                cells[r][c] = Some((lane, value));
            }
        }
        lanes.push(values);
    }
    let max_owners = counts.iter().flatten().copied().max().unwrap_or(0);
    Ok(Ownership { rows, cols, lanes, cells, max_owners })
}

fn label(cell: Option<(u32, u32)>) -> String {
    match cell {
        Some((lane, value)) => format!("T{lane}:V{value}"),
        None => "-".to_string(),
    }
}

fn header(name: &str, o: &Ownership) -> String {
    let mut h = format!("{name}: {}x{} tile, {} lanes x {} values", o.rows, o.cols, o.lanes.len(), o.lanes.first().map_or(0, Vec::len));
    if o.max_owners > 1 {
        let _ = write!(h, " (each element is held by up to {} lanes; the lowest is shown)", o.max_owners);
    }
    h
}

/// A text table of the tile, one `T<lane>:V<value>` per element.
pub fn render_table(name: &str, layout: &LinearLayout) -> Result<String, LayoutError> {
    let o = ownership(layout)?;
    let labels: Vec<Vec<String>> = o.cells.iter().map(|row| row.iter().map(|c| label(*c)).collect()).collect();
    let width = labels.iter().flatten().map(String::len).max().unwrap_or(1).max(o.cols.to_string().len());
    let row_width = (o.rows.saturating_sub(1)).to_string().len();
    let mut s = header(name, &o);
    s.push('\n');
    let _ = write!(s, "{:row_width$} ", "");
    for c in 0..o.cols {
        let _ = write!(s, " {c:>width$}");
    }
    s.push('\n');
    for (r, row) in labels.iter().enumerate() {
        let _ = write!(s, "{r:>row_width$} ");
        for cell in row {
            let _ = write!(s, " {cell:>width$}");
        }
        s.push('\n');
    }
    Ok(s)
}

/// `{"name", "shape": [rows, cols], "lanes": [[[row, col] per value] per lane]}`.
pub fn render_json(name: &str, layout: &LinearLayout) -> Result<String, LayoutError> {
    let o = ownership(layout)?;
    let lanes: Vec<Vec<[u32; 2]>> = o.lanes.iter().map(|v| v.iter().map(|&(r, c)| [r, c]).collect()).collect();
    let value = json!({ "name": name, "shape": [o.rows, o.cols], "lanes": lanes });
    serde_json::to_string_pretty(&value).map_err(|e| LayoutError::BadInput(e.to_string()))
}

/// Fill colour of a lane: eight hues, four lightness steps (lanes `t` and
/// `t + 8` share a hue, not a shade).
pub fn lane_colour(lane: u32) -> String {
    const HUES: [u32; 8] = [4, 32, 52, 100, 160, 200, 235, 290];
    let hue = HUES[(lane % 8) as usize];
    let lightness = 86 - 7 * ((lane / 8) % 4);
    format!("hsl({hue}, 70%, {lightness}%)")
}

/// An SVG picture: the tile as a grid, each cell labelled `T<lane>:V<value>` and
/// filled with its lane's colour; row and column indices around it.
pub fn render_svg(name: &str, layout: &LinearLayout) -> Result<String, LayoutError> {
    let o = ownership(layout)?;
    let (cw, ch, left, top) = (64u32, 28u32, 36u32, 52u32);
    let (w, h) = (left + o.cols * cw + 8, top + o.rows * ch + 8);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="DejaVu Sans Mono, monospace">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="{left}" y="18" font-size="14" font-weight="bold">{}</text>"#, escape(&header(name, &o)));
    for c in 0..o.cols {
        let x = left + c * cw + cw / 2;
        let _ = writeln!(s, r##"<text x="{x}" y="{}" font-size="11" text-anchor="middle" fill="#555">{c}</text>"##, top - 8);
    }
    for (r, row) in o.cells.iter().enumerate() {
        let y = top + r as u32 * ch;
        let _ = writeln!(s, r##"<text x="{}" y="{}" font-size="11" text-anchor="end" fill="#555">{r}</text>"##, left - 6, y + ch / 2 + 4);
        for (c, cell) in row.iter().enumerate() {
            let x = left + c as u32 * cw;
            let fill = cell.map_or_else(|| "#eeeeee".to_string(), |(lane, _)| lane_colour(lane));
            let _ = writeln!(s, r##"<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="{fill}" stroke="#444" stroke-width="0.5"/>"##);
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" font-size="11" text-anchor="middle">{}</text>"#,
                x + cw / 2,
                y + ch / 2 + 4,
                label(*cell)
            );
        }
    }
    s.push_str("</svg>\n");
    Ok(s)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hardware::hardware_layout;

    #[test]
    fn table_json_svg() {
        let h = hardware_layout("ldmatrix.x1").unwrap();
        let t = render_table(&h.name, &h.layout).unwrap();
        let line1 = t.lines().nth(2).unwrap();
        let words: Vec<&str> = line1.split_whitespace().collect();
        assert_eq!(words[..4], ["0", "T0:V0", "T0:V1", "T1:V0"], "{t}");
        let j: serde_json::Value = serde_json::from_str(&render_json(&h.name, &h.layout).unwrap()).unwrap();
        assert_eq!(j["shape"], json!([8, 8]));
        assert_eq!(j["lanes"][5], json!([[1, 2], [1, 3]]));
        let svg = render_svg(&h.name, &h.layout).unwrap();
        assert_eq!(svg.matches("<rect").count(), 1 + 64);
        let q = hardware_layout("mma.m8n8k4.f32.c").unwrap();
        assert!(render_table(&q.name, &q.layout).unwrap().contains("up to 4 lanes"));
    }
}
