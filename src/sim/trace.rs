//! The simulated schedule as a Chrome trace (the JSON `chrome://tracing` and Perfetto open):
//! one process per node, one thread per rank, one slice per round; the rounds on the
//! critical path are marked.

use super::build::{Machine, OpKind, Program};
use super::engine::Outcome;
use std::collections::HashSet;
use std::fmt::Write as _;

/// The trace of `outcome` (recorded with `Options::record`) as JSON text.
pub fn chrome_trace(machine: &Machine, programs: &[Program], outcome: &Outcome) -> String {
    let critical: HashSet<(u32, u32)> = outcome.critical_path().into_iter().collect();
    let mut s = String::from("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    let mut first = true;
    let mut sep = |s: &mut String| {
        if !first {
            s.push_str(",\n");
        }
        first = false;
    };
    for n in 0..machine.nodes() {
        sep(&mut s);
        let _ = write!(
            s,
            "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{n},\"args\":{{\"name\":\"node {n}\"}}}}"
        );
    }
    for (r, rounds) in outcome.rounds.iter().enumerate() {
        let node = machine.node_of[r];
        sep(&mut s);
        let _ = write!(
            s,
            "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{node},\"tid\":{r},\"args\":{{\"name\":\"rank {r}\"}}}}"
        );
        for (i, (span, ops)) in rounds.iter().zip(programs[r].each_round()).enumerate() {
            let count = |k: OpKind| ops.iter().filter(|o| o.kind == k).count();
            let sent: u64 = ops
                .iter()
                .filter(|o| o.kind == OpKind::Send)
                .map(|o| o.bytes)
                .sum();
            let on_path = critical.contains(&(r as u32, i as u32));
            sep(&mut s);
            let _ = write!(
                s,
                "{{\"name\":\"round {i}\",\"cat\":\"{}\",\"ph\":\"X\",\"pid\":{node},\"tid\":{r},\
                 \"ts\":{:.4},\"dur\":{:.4},\"args\":{{\"sends\":{},\"recvs\":{},\"bytes_sent\":{sent},\
                 \"local_steps\":{},\"cause\":\"rank {} round {}\",\"critical\":{on_path}}}}}",
                if on_path { "critical" } else { "round" },
                span.start * 1e6,
                (span.end - span.start) * 1e6,
                count(OpKind::Send),
                count(OpKind::Recv),
                count(OpKind::Reduce) + count(OpKind::Copy),
                span.cause.0,
                span.cause.1,
            );
        }
    }
    s.push_str("\n]}\n");
    s
}
