//! `hympi-sim` as users run it: a prediction with its critical path and trace, a sweep, and
//! the errors of bad arguments.

use std::process::Command;

fn sim(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hympi-sim"))
        .args(args)
        .output()
        .expect("hympi-sim runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn run_prints_the_prediction_path_and_trace() {
    let trace = std::env::temp_dir().join(format!("hympi-sim-{}.json", std::process::id()));
    let t = trace.to_str().unwrap();
    let (ok, out, err) = sim(&[
        "run",
        "--coll",
        "bcast",
        "--algo",
        "knomial:k=2",
        "--bytes",
        "1K",
        "--nodes",
        "8",
        "--ppn",
        "1",
        "--path",
        "--trace",
        t,
    ]);
    assert!(ok, "{err}");
    assert!(
        out.contains("bcast knomial:k=2 of 1024 B on 8 nodes x 1 ranks"),
        "{out}"
    );
    // A binomial tree over 8 ranks: 7 messages, all between nodes; its critical path runs
    // through three rounds of sends and receives at least.
    assert!(out.contains("7 messages (7 between nodes)"), "{out}");
    assert!(out.contains("critical path ("), "{out}");
    let text = std::fs::read_to_string(&trace).unwrap();
    std::fs::remove_file(&trace).ok();
    assert!(text.contains("\"traceEvents\"") && text.contains("\"critical\":true"));
}

#[test]
fn sweep_tabulates_algorithms_by_size() {
    let (ok, out, err) = sim(&[
        "sweep",
        "--coll",
        "allreduce",
        "--algos",
        "recursive_doubling,ring,smp",
        "--sizes",
        "8,64K",
        "--node-sizes",
        "2,3",
    ]);
    assert!(ok, "{err}");
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.trim_start().starts_with(char::is_numeric))
        .collect();
    assert_eq!(rows.len(), 2, "{out}");
    // Ring needs an element per rank: 8 bytes is one double on 5 ranks.
    assert!(rows[0].contains(" - "), "{out}");
    assert!(!rows[1].contains(" - "), "{out}");
}

#[test]
fn bad_arguments_fail_with_a_message() {
    for (args, want) in [
        (
            &["run", "--coll", "bcast", "--algo", "nope", "--bytes", "8"][..],
            "no algorithm `nope`",
        ),
        (
            &[
                "run",
                "--coll",
                "frobnicate",
                "--algo",
                "ring",
                "--bytes",
                "8",
            ][..],
            "unknown collective",
        ),
        (
            &[
                "run", "--coll", "bcast", "--algo", "knomial", "--bytes", "8", "--root", "9",
            ][..],
            "root 9",
        ),
        (&["sweep", "--coll", "bcast"][..], "--sizes"),
        (&["launch"][..], "unknown command"),
    ] {
        let (ok, _, err) = sim(args);
        assert!(!ok && err.contains(want), "{args:?}: {err}");
    }
}
