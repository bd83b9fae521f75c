//! The crate's layers import only downwards: each top-level module of `src/` may name only
//! the modules below it (ARCHITECTURE.md, "Layers"). Reads the sources and fails on the
//! first `crate::<module>` path a layer may not use (comments are skipped).

use std::path::{Path, PathBuf};

/// Each layer, bottom first, with the modules it may name besides itself.
const LAYERS: &[(&str, &[&str])] = &[
    ("mpi_abi", &[]),
    ("error", &["mpi_abi"]),
    ("platform", &["mpi_abi", "error"]),
    ("transport", &["mpi_abi", "error", "platform"]),
    ("core", &["mpi_abi", "error", "platform", "transport"]),
    (
        "coll",
        &["mpi_abi", "error", "platform", "transport", "core"],
    ),
    (
        "sim",
        &["mpi_abi", "error", "platform", "transport", "core", "coll"],
    ),
    (
        "tune",
        &[
            "mpi_abi",
            "error",
            "platform",
            "transport",
            "core",
            "coll",
            "sim",
        ],
    ),
];

/// The Rust files of layer `name` (a folder or a single file under `src/`).
fn files_of(name: &str) -> Vec<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let file = src.join(format!("{name}.rs"));
    if file.is_file() {
        return vec![file];
    }
    let mut out = Vec::new();
    let mut dirs = vec![src.join(name)];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out
}

/// The modules `line` names as `crate::<module>`, outside a trailing comment.
fn crate_paths(line: &str) -> Vec<String> {
    let code = line.split("//").next().unwrap_or("");
    code.match_indices("crate::")
        .filter(|(i, _)| {
            // Not `hympi_crate::` or the like: a path start.
            *i == 0
                || !code.as_bytes()[i - 1].is_ascii_alphanumeric() && code.as_bytes()[i - 1] != b'_'
        })
        .map(|(i, _)| {
            code[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

#[test]
fn every_layer_imports_only_the_layers_below_it() {
    let mut wrong = Vec::new();
    for (layer, below) in LAYERS {
        let files = files_of(layer);
        assert!(!files.is_empty(), "layer {layer} has no sources");
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for (n, line) in text.lines().enumerate() {
                if line.trim_start().starts_with("//") {
                    continue;
                }
                for m in crate_paths(line) {
                    if m != *layer && !below.contains(&m.as_str()) {
                        wrong.push(format!(
                            "{}:{}: {layer} names crate::{m}",
                            f.display(),
                            n + 1
                        ));
                    }
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layering:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_checker_sees_paths_and_skips_comments() {
    assert_eq!(crate_paths("use crate::core::p2p;"), vec!["core"]);
    assert_eq!(
        crate_paths("x(crate::abi::f(), crate::coll::g())"),
        vec!["abi", "coll"]
    );
    assert!(crate_paths("let a = 1; // crate::abi").is_empty());
    assert!(crate_paths("my_crate::abi").is_empty());
}
