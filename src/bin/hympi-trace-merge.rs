//! `hympi-trace-merge DIR [-o OUT]`: joins the per-rank traces a `HYMPI_TRACE=DIR` run wrote
//! (`DIR/rank-N.json`) into one Chrome-trace file (default `DIR/trace.json`) with one process
//! per rank, its threads as tracks, and time counted from the job's first event. Open it in
//! Perfetto (ui.perfetto.dev) or `chrome://tracing`.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The rank of a per-rank trace file name (`rank-N.json`).
fn rank_of(path: &Path) -> Option<u32> {
    path.file_name()?
        .to_str()?
        .strip_prefix("rank-")?
        .strip_suffix(".json")?
        .parse()
        .ok()
}

/// Joins the traces `docs` (one per rank, in rank order) into one document.
fn merge(docs: Vec<Value>) -> Result<Value, String> {
    let mut events: Vec<Value> = Vec::new();
    let mut dropped = 0u64;
    let mut ranks = Vec::new();
    for d in docs {
        let list = d["traceEvents"]
            .as_array()
            .ok_or("a trace without traceEvents")?;
        dropped += d["otherData"]["dropped_events"].as_u64().unwrap_or(0);
        ranks.push(d["otherData"]["rank"].clone());
        events.extend(list.iter().cloned());
    }
    let epoch = events
        .iter()
        .filter(|e| e["ph"] != "M")
        .filter_map(|e| e["ts"].as_f64())
        .fold(f64::INFINITY, f64::min);
    if epoch.is_finite() {
        for e in events.iter_mut().filter(|e| e["ph"] != "M") {
            if let Some(ts) = e["ts"].as_f64() {
                e["ts"] = json!(ts - epoch);
            }
        }
    }
    Ok(json!({
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "library": "hympi",
            "ranks": ranks,
            "dropped_events": dropped,
            "epoch_us": if epoch.is_finite() { epoch } else { 0.0 },
        },
    }))
}

fn run(args: &[String]) -> Result<(PathBuf, usize), String> {
    let usage = "usage: hympi-trace-merge DIR [-o OUT]";
    let mut dir = None;
    let mut out = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-o" => out = Some(PathBuf::from(it.next().ok_or(usage)?)),
            "-h" | "--help" => return Err(usage.into()),
            _ if dir.is_none() => dir = Some(PathBuf::from(a)),
            _ => return Err(usage.into()),
        }
    }
    let dir = dir.ok_or(usage)?;
    let mut files: Vec<(u32, PathBuf)> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| rank_of(&p).map(|r| (r, p)))
        .collect();
    if files.is_empty() {
        return Err(format!("{}: no rank-N.json traces", dir.display()));
    }
    files.sort();
    let n = files.len();
    let docs = files
        .iter()
        .map(|(_, p)| {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))
        })
        .collect::<Result<Vec<Value>, String>>()?;
    let merged = merge(docs)?;
    let out = out.unwrap_or_else(|| dir.join("trace.json"));
    let text = serde_json::to_string(&merged).map_err(|e| e.to_string())?;
    std::fs::write(&out, text).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok((out, n))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok((out, n)) => {
            println!("hympi-trace-merge: {n} ranks -> {}", out.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("hympi-trace-merge: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_join_with_time_from_the_first_event() {
        let a = json!({"traceEvents": [
            {"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "rank 0"}},
            {"name": "MPI_Send", "ph": "X", "ts": 1000.0, "dur": 1.0, "pid": 0, "tid": 1},
        ], "otherData": {"rank": 0, "dropped_events": 2}});
        let b = json!({"traceEvents": [
            {"name": "MPI_Recv", "ph": "X", "ts": 990.0, "dur": 11.0, "pid": 1, "tid": 1},
        ], "otherData": {"rank": 1, "dropped_events": 0}});
        let m = merge(vec![a, b]).unwrap();
        let ev = m["traceEvents"].as_array().unwrap();
        assert_eq!(ev.len(), 3);
        assert_eq!(ev[1]["ts"], 10.0);
        assert_eq!(ev[2]["ts"], 0.0);
        assert_eq!(m["otherData"]["dropped_events"], 2);
        assert_eq!(m["otherData"]["epoch_us"], 990.0);
    }

    #[test]
    fn only_rank_files_count() {
        assert_eq!(rank_of(Path::new("/t/rank-12.json")), Some(12));
        assert_eq!(rank_of(Path::new("/t/trace.json")), None);
        assert_eq!(rank_of(Path::new("/t/rank-x.json")), None);
    }
}
