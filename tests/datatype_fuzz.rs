//! The datatype fuzz driver (`tests/datatype_fuzz/driver.rs`, also the body of the cargo-fuzz
//! target `fuzz/fuzz_targets/datatype.rs`) on stable Rust: every file of the seed and
//! regression corpus `fuzz/corpus/datatype/`, then inputs from a fixed-seed generator.

#[path = "datatype_fuzz/driver.rs"]
mod driver;

use std::path::PathBuf;

/// Pseudo-random inputs run by `random_inputs` (`HYMPI_FUZZ_CASES` overrides).
const CASES: usize = 100_000;

fn corpus() -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/datatype");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let d = std::fs::read(&p).unwrap();
            (p, d)
        })
        .collect()
}

#[test]
fn corpus_and_random_inputs() {
    let files = corpus();
    assert!(!files.is_empty(), "the seed corpus is empty");
    for (p, d) in &files {
        eprintln!("corpus: {}", p.display());
        driver::run(d);
    }
    let cases = std::env::var("HYMPI_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CASES);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for case in 0..cases {
        let len = (next() % 512) as usize;
        let data: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        let r = std::panic::catch_unwind(|| driver::run(&data));
        if r.is_err() {
            let out = std::env::temp_dir().join(format!("hympi-datatype-fuzz-{case}"));
            std::fs::write(&out, &data).unwrap();
            panic!("case {case} failed; its input is in {}", out.display());
        }
    }
    let s: Vec<usize> = driver::STATS
        .iter()
        .map(|c| c.load(std::sync::atomic::Ordering::Relaxed))
        .collect();
    eprintln!(
        "{} inputs: {} types created, {} calls failed with a valid error class, {} round trips checked against the naive type map, {} without one",
        files.len() + cases, s[0], s[1], s[2], s[3]
    );
    // The generator must reach the interesting paths, not only argument errors.
    assert!(
        s[0] > cases && s[2] > cases / 20,
        "too few types or round trips: {s:?}"
    );
}
