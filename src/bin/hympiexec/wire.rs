//! Messages between the launcher and its per-host proxies: one JSON object per line on the
//! proxy's TCP connection.
//!
//! A proxy connects, sends [`ToFront::Hello`] with the job token it read on its stdin, and gets
//! [`ToProxy::Start`]. From then on it forwards its ranks' PMI lines up and the launcher's
//! replies down, reports each rank's start and exit, and obeys signals. Both sides send
//! [`ToFront::Beat`] / [`ToProxy::Beat`] twice a second: silence for [`LOST_AFTER`] means the
//! other side or the link between them is gone.

use std::time::Duration;

use serde_json::{json, Value};

/// Silence after which the other side counts as lost.
pub const LOST_AFTER: Duration = Duration::from_secs(4);

/// Time between heartbeats.
pub const BEAT_EVERY: Duration = Duration::from_millis(500);

/// What a proxy is asked to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartSpec {
    /// The program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables to set for the ranks (the launcher's environment and its `-x` options).
    pub env: Vec<(String, String)>,
    /// Working directory of the ranks.
    pub cwd: String,
    /// Ranks in the job.
    pub np: usize,
    /// The world ranks this host runs, in order.
    pub ranks: Vec<usize>,
    /// This host's node name (`HYMPI_NODE`).
    pub node: String,
    /// Prefix output lines with `[rank] `.
    pub tag_output: bool,
    /// `--bind-to` as given (`core`, `numa`, `none`), or empty for the default.
    pub bind_to: String,
    /// `--cpus-per-rank`, or 0 for the default (the cores shared out).
    pub cpus_per_rank: usize,
    /// Ranks of the job on this host's machine, counting other hosts that share it (network
    /// namespaces or containers on one kernel): they share its cores.
    pub machine_ranks: usize,
    /// How many of those come before this host's first rank (its offset in the machine's
    /// binding plan).
    pub machine_first: usize,
}

/// Messages to the launcher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToFront {
    /// First message: which host this proxy serves, the job token, and which machine it
    /// runs on (the kernel's boot id; empty when unknown).
    Hello {
        host: usize,
        token: String,
        machine: String,
    },
    /// A rank was started with this pid.
    Started { rank: usize, pid: i32 },
    /// A rank could not be started.
    SpawnFailed {
        rank: usize,
        code: i32,
        message: String,
    },
    /// One PMI line from a rank (without its newline).
    Pmi { rank: usize, line: String },
    /// A rank was reaped with this raw wait status.
    Exit { rank: usize, status: i32 },
    /// Still here.
    Beat,
}

/// Messages to a proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToProxy {
    /// What to run.
    Start(StartSpec),
    /// PMI reply bytes for a rank (whole lines, with their newlines).
    Pmi { rank: usize, text: String },
    /// Send `sig` to a rank.
    Signal { rank: usize, sig: i32 },
    /// Still here.
    Beat,
}

fn field<'a>(v: &'a Value, k: &str) -> Result<&'a Value, String> {
    v.get(k).ok_or_else(|| format!("message without {k:?}"))
}

fn uint(v: &Value, k: &str) -> Result<usize, String> {
    field(v, k)?
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| format!("{k:?} is not a count"))
}

fn int(v: &Value, k: &str) -> Result<i32, String> {
    field(v, k)?
        .as_i64()
        .and_then(|n| i32::try_from(n).ok())
        .ok_or_else(|| format!("{k:?} is not an int"))
}

fn text(v: &Value, k: &str) -> Result<String, String> {
    field(v, k)?
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{k:?} is not a string"))
}

fn texts(v: &Value, k: &str) -> Result<Vec<String>, String> {
    field(v, k)?
        .as_array()
        .ok_or_else(|| format!("{k:?} is not a list"))?
        .iter()
        .map(|s| {
            s.as_str()
                .map(str::to_string)
                .ok_or(format!("{k:?}: not a string"))
        })
        .collect()
}

fn parse(line: &str) -> Result<(String, Value), String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("bad message: {e}"))?;
    let kind = text(&v, "t")?;
    Ok((kind, v))
}

fn encode(v: Value) -> String {
    let mut s = v.to_string();
    s.push('\n');
    s
}

impl ToFront {
    /// The message as one line, newline included.
    pub fn encode(&self) -> String {
        encode(match self {
            ToFront::Hello {
                host,
                token,
                machine,
            } => json!({"t": "hello", "host": host, "token": token, "machine": machine}),
            ToFront::Started { rank, pid } => json!({"t": "started", "rank": rank, "pid": pid}),
            ToFront::SpawnFailed {
                rank,
                code,
                message,
            } => json!({"t": "spawn_failed", "rank": rank, "code": code, "message": message}),
            ToFront::Pmi { rank, line } => json!({"t": "pmi", "rank": rank, "line": line}),
            ToFront::Exit { rank, status } => json!({"t": "exit", "rank": rank, "status": status}),
            ToFront::Beat => json!({"t": "beat"}),
        })
    }

    /// Parses one line.
    pub fn decode(line: &str) -> Result<ToFront, String> {
        let (kind, v) = parse(line)?;
        Ok(match kind.as_str() {
            "hello" => ToFront::Hello {
                host: uint(&v, "host")?,
                token: text(&v, "token")?,
                machine: text(&v, "machine")?,
            },
            "started" => ToFront::Started {
                rank: uint(&v, "rank")?,
                pid: int(&v, "pid")?,
            },
            "spawn_failed" => ToFront::SpawnFailed {
                rank: uint(&v, "rank")?,
                code: int(&v, "code")?,
                message: text(&v, "message")?,
            },
            "pmi" => ToFront::Pmi {
                rank: uint(&v, "rank")?,
                line: text(&v, "line")?,
            },
            "exit" => ToFront::Exit {
                rank: uint(&v, "rank")?,
                status: int(&v, "status")?,
            },
            "beat" => ToFront::Beat,
            other => return Err(format!("unknown message {other:?}")),
        })
    }
}

impl ToProxy {
    /// The message as one line, newline included.
    pub fn encode(&self) -> String {
        encode(match self {
            ToProxy::Start(s) => json!({
                "t": "start",
                "program": s.program,
                "args": s.args,
                "env": s.env.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
                "cwd": s.cwd,
                "np": s.np,
                "ranks": s.ranks,
                "node": s.node,
                "tag_output": s.tag_output,
                "bind_to": s.bind_to,
                "cpus_per_rank": s.cpus_per_rank,
                "machine_ranks": s.machine_ranks,
                "machine_first": s.machine_first,
            }),
            ToProxy::Pmi { rank, text } => json!({"t": "pmi", "rank": rank, "text": text}),
            ToProxy::Signal { rank, sig } => json!({"t": "signal", "rank": rank, "sig": sig}),
            ToProxy::Beat => json!({"t": "beat"}),
        })
    }

    /// Parses one line.
    pub fn decode(line: &str) -> Result<ToProxy, String> {
        let (kind, v) = parse(line)?;
        Ok(match kind.as_str() {
            "start" => {
                let env = field(&v, "env")?
                    .as_array()
                    .ok_or("\"env\" is not a list")?
                    .iter()
                    .map(|kv| match kv.as_array().map(Vec::as_slice) {
                        Some([Value::String(k), Value::String(val)]) => {
                            Ok((k.clone(), val.clone()))
                        }
                        _ => Err("\"env\": entries are [name, value]".to_string()),
                    })
                    .collect::<Result<_, _>>()?;
                let ranks = field(&v, "ranks")?
                    .as_array()
                    .ok_or("\"ranks\" is not a list")?
                    .iter()
                    .map(|r| {
                        r.as_u64()
                            .map(|r| r as usize)
                            .ok_or("\"ranks\": not a count")
                    })
                    .collect::<Result<_, _>>()?;
                ToProxy::Start(StartSpec {
                    program: text(&v, "program")?,
                    args: texts(&v, "args")?,
                    env,
                    cwd: text(&v, "cwd")?,
                    np: uint(&v, "np")?,
                    ranks,
                    node: text(&v, "node")?,
                    tag_output: field(&v, "tag_output")?.as_bool().unwrap_or(false),
                    bind_to: text(&v, "bind_to")?,
                    cpus_per_rank: uint(&v, "cpus_per_rank")?,
                    machine_ranks: uint(&v, "machine_ranks")?,
                    machine_first: uint(&v, "machine_first")?,
                })
            }
            "pmi" => ToProxy::Pmi {
                rank: uint(&v, "rank")?,
                text: text(&v, "text")?,
            },
            "signal" => ToProxy::Signal {
                rank: uint(&v, "rank")?,
                sig: int(&v, "sig")?,
            },
            "beat" => ToProxy::Beat,
            other => return Err(format!("unknown message {other:?}")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let spec = StartSpec {
            program: "/bin/prog".into(),
            args: vec!["a b".into(), "line\nbreak".into()],
            env: vec![("K".into(), "v=1 \"q\"".into())],
            cwd: "/tmp".into(),
            np: 4,
            ranks: vec![2, 3],
            node: "h2".into(),
            tag_output: true,
            bind_to: String::new(),
            cpus_per_rank: 2,
            machine_ranks: 5,
            machine_first: 3,
        };
        for m in [
            ToProxy::Start(spec),
            ToProxy::Pmi {
                rank: 3,
                text: "cmd=barrier_out\n".into(),
            },
            ToProxy::Signal { rank: 1, sig: 15 },
            ToProxy::Beat,
        ] {
            let line = m.encode();
            assert_eq!(line.matches('\n').count(), 1);
            assert_eq!(ToProxy::decode(line.trim_end()).unwrap(), m);
        }
        for m in [
            ToFront::Hello {
                host: 1,
                token: "ab12".into(),
                machine: "0f1e".into(),
            },
            ToFront::Started { rank: 0, pid: 42 },
            ToFront::SpawnFailed {
                rank: 0,
                code: 127,
                message: "not found".into(),
            },
            ToFront::Pmi {
                rank: 0,
                line: "cmd=init".into(),
            },
            ToFront::Exit { rank: 2, status: 9 },
            ToFront::Beat,
        ] {
            assert_eq!(ToFront::decode(m.encode().trim_end()).unwrap(), m);
        }
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(ToFront::decode("not json").is_err());
        assert!(ToFront::decode("{\"t\":\"nope\"}").is_err());
        assert!(ToFront::decode("{\"t\":\"exit\",\"rank\":-1,\"status\":0}").is_err());
        assert!(ToProxy::decode("{\"t\":\"signal\",\"rank\":1}").is_err());
    }
}
