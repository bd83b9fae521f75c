//! An SVG map of a table's choices: one row per layout (nodes × ranks per node), one column
//! per power-of-two size, each cell coloured by the algorithm the table selects there.

use super::eval::selected;
use super::space::Space;
use crate::coll::tuning::Table;
use std::fmt::Write;

const PALETTE: [&str; 12] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac", "#86bcb6", "#d37295",
];

fn label(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 20 && b.is_multiple_of(1 << 20) => format!("{}M", b >> 20),
        b if b >= 1 << 10 && b.is_multiple_of(1 << 10) => format!("{}K", b >> 10),
        b => b.to_string(),
    }
}

/// The SVG document of `table`'s choices for `space.coll` over `space`'s grid.
pub fn choices_svg(table: &Table, space: &Space, title: &str) -> String {
    let (cell_w, cell_h, left, top) = (34, 22, 70, 40);
    let cols = space.sizes.len();
    let rows = space.layouts.len();
    let mut names: Vec<String> = Vec::new();
    let mut grid = vec![vec![usize::MAX; cols]; rows];
    for (r, l) in space.layouts.iter().enumerate() {
        for (c, &b) in space.sizes.iter().enumerate() {
            if let Some(ch) = selected(table, space, l.nodes, l.ppn, b) {
                let name = if ch.k > 0 {
                    format!("{}:k={}", ch.name, ch.k)
                } else {
                    ch.name.to_string()
                };
                let i = names.iter().position(|n| *n == name).unwrap_or_else(|| {
                    names.push(name);
                    names.len() - 1
                });
                grid[r][c] = i;
            }
        }
    }
    let legend_top = top + rows * cell_h + 40;
    let width = (left + cols * cell_w + 20).max(420);
    let height = legend_top + names.len() * 18 + 10;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(
        s,
        r#"<text x="{left}" y="20" font-size="14">{title}</text>"#
    );
    for (r, l) in space.layouts.iter().enumerate() {
        let y = top + r * cell_h;
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end">{l}</text>"#,
            left - 6,
            y + cell_h - 7
        );
        for (c, &i) in grid[r].iter().enumerate() {
            let fill = if i == usize::MAX {
                "#ffffff"
            } else {
                PALETTE[i % PALETTE.len()]
            };
            let _ = writeln!(
                s,
                r##"<rect x="{}" y="{y}" width="{cell_w}" height="{cell_h}" fill="{fill}" stroke="#fff"/>"##,
                left + c * cell_w
            );
        }
    }
    for (c, &b) in space.sizes.iter().enumerate() {
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            left + c * cell_w + cell_w / 2,
            top + rows * cell_h + 14,
            label(b)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}">bytes per rank → (rows: nodes x ranks per node)</text>"#,
        left,
        top + rows * cell_h + 30
    );
    for (i, n) in names.iter().enumerate() {
        let y = legend_top + i * 18;
        let _ = writeln!(
            s,
            r#"<rect x="{left}" y="{y}" width="12" height="12" fill="{}"/><text x="{}" y="{}">{n}</text>"#,
            PALETTE[i % PALETTE.len()],
            left + 18,
            y + 10
        );
    }
    s.push_str("</svg>\n");
    s
}
