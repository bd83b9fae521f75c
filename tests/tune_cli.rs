//! `hympi-tune` as users run it: tuning on the simulator writes a table the runtime's reader
//! takes, scores it against exhaustive search and draws it; bad arguments are refused.

use hympi::coll::tuning::{Coll, Query, Table};
use std::process::Command;

fn tune(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hympi-tune"))
        .args(args)
        .output()
        .expect("hympi-tune runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn tunes_on_the_simulator_and_writes_a_readable_table_and_plot() {
    let dir = std::env::temp_dir().join(format!("hympi-tune-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let table = dir.join("table.json");
    let plot = dir.join("choices.svg");
    let (ok, out, err) = tune(&[
        "--colls",
        "allreduce,allgather",
        "--sim",
        "--nodes",
        "1,2,4",
        "--ppn",
        "1,4",
        "--sizes",
        "8:64K",
        "--k",
        "2,4",
        "--exhaustive",
        "--quiet",
        "--out",
        table.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert!(ok, "{out}\n{err}");
    for coll in ["allreduce", "allgather"] {
        assert!(out.contains(&format!("{coll}: converged after")), "{out}");
        assert!(dir.join(format!("choices-{coll}.svg")).is_file());
    }
    assert!(out.contains("tuned table: average slowdown"), "{out}");
    assert!(out.contains("built-in table: average slowdown"), "{out}");
    let text = std::fs::read_to_string(&table).unwrap();
    let t = Table::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(t.has(Coll::Allreduce) && t.has(Coll::Allgather) && !t.has(Coll::Bcast));
    // Every query finds an algorithm: the rules are complete.
    for p in [2, 3, 4, 16, 64] {
        for b in [0, 1, 100, 5000, 1 << 24] {
            assert!(t.select(Coll::Allreduce, &Query::new(p, b, b)).is_some());
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn refuses_bad_arguments() {
    for args in [
        &["--sim"][..],
        &["--colls", "bcast"],
        &["--colls", "bcast", "--sim", "--real"],
        &["--colls", "bcast", "--real"],
        &["--colls", "nope", "--sim"],
        &["--colls", "bcast", "--sim", "--algos", "nope"],
        &["--colls", "bcast", "--sim", "--sizes", "8"],
    ] {
        let (ok, _, err) = tune(args);
        assert!(!ok, "{args:?} accepted");
        assert!(err.contains("hympi-tune: "), "{args:?}: {err}");
    }
}
