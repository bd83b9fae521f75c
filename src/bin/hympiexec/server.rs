//! The PMI-1 server's logic: the job's key-value space, the barrier and the replies.
//!
//! Pure state machine: [`PmiServer::handle`] takes one parsed request from one rank and returns
//! the replies to send (possibly to every rank, when a barrier completes) and at most one event
//! for the job supervisor (finalize, abort, protocol error). No I/O happens here.

use std::collections::HashMap;

use hympi::platform::pmi_wire::{check_key, Message, MAX_KEY_LEN, MAX_KVSNAME_LEN, MAX_VALUE_LEN};

/// Something the job supervisor must act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The rank sent `finalize`: its exit no longer kills the job.
    Finalized,
    /// The rank asked to abort the job.
    Abort {
        /// The exit code it asked for.
        code: i32,
        /// Its message (may be empty).
        message: String,
    },
    /// The rank broke the protocol; the job cannot go on safely.
    ProtocolError(String),
}

/// Replies to send and what happened.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// `(rank, message)` pairs, in order.
    pub replies: Vec<(usize, Message)>,
    /// An event for the supervisor, if any.
    pub event: Option<Event>,
}

impl Outcome {
    fn reply(rank: usize, msg: Message) -> Outcome {
        Outcome {
            replies: vec![(rank, msg)],
            event: None,
        }
    }

    fn event(event: Event) -> Outcome {
        Outcome {
            replies: Vec::new(),
            event: Some(event),
        }
    }
}

/// State of the PMI service for one job of `size` ranks on one node.
#[derive(Debug)]
pub struct PmiServer {
    size: usize,
    kvsname: String,
    /// Puts made visible by the last completed barrier.
    committed: HashMap<String, String>,
    /// Puts since the last barrier.
    pending: Vec<(String, String)>,
    in_barrier: Vec<bool>,
    waiting: usize,
    /// `PMI_process_mapping`, from the node of each rank.
    mapping: String,
    /// Application number of each rank (MPMD programs); empty: all 0.
    appnums: Vec<usize>,
}

impl PmiServer {
    /// A server for `size` ranks whose key-value space is called `kvsname`; rank `r` runs on
    /// node `node_of[r]`.
    pub fn new(size: usize, kvsname: String, node_of: &[usize]) -> PmiServer {
        assert!(kvsname.len() <= MAX_KVSNAME_LEN && size > 0 && node_of.len() == size);
        PmiServer {
            mapping: hympi::platform::nodemap::format(node_of),
            size,
            kvsname,
            committed: HashMap::new(),
            pending: Vec::new(),
            in_barrier: vec![false; size],
            waiting: 0,
            appnums: Vec::new(),
        }
    }

    /// Sets the application number of every rank (several programs, `:`).
    pub fn set_appnums(&mut self, appnums: Vec<usize>) {
        assert_eq!(appnums.len(), self.size);
        self.appnums = appnums;
    }

    /// `PMI_process_mapping`: the node of every rank.
    fn process_mapping(&self) -> String {
        self.mapping.clone()
    }

    /// Handles one request from `rank`.
    pub fn handle(&mut self, rank: usize, msg: &Message) -> Outcome {
        let ok = |cmd: &str| Message::new(cmd).arg("rc", 0);
        match msg.cmd() {
            "init" => {
                let v = (msg.get_int("pmi_version"), msg.get_int("pmi_subversion"));
                let reply = Message::new("response_to_init");
                let reply = if v.0 == Some(1) {
                    reply.arg("rc", 0)
                } else {
                    reply
                        .arg("rc", -1)
                        .arg("msg", "only PMI version 1 is served")
                };
                Outcome::reply(rank, reply.arg("pmi_version", 1).arg("pmi_subversion", 1))
            }
            "get_maxes" => Outcome::reply(
                rank,
                ok("maxes")
                    .arg("kvsname_max", MAX_KVSNAME_LEN)
                    .arg("keylen_max", MAX_KEY_LEN)
                    .arg("vallen_max", MAX_VALUE_LEN),
            ),
            "get_my_kvsname" => {
                Outcome::reply(rank, ok("my_kvsname").arg("kvsname", &self.kvsname))
            }
            "get_universe_size" => Outcome::reply(rank, ok("universe_size").arg("size", self.size)),
            "get_appnum" => Outcome::reply(
                rank,
                ok("appnum").arg("appnum", self.appnums.get(rank).copied().unwrap_or(0)),
            ),
            "put" => self.put(rank, msg),
            "get" => self.get(rank, msg),
            "barrier_in" => self.barrier_in(rank),
            "finalize" => Outcome {
                replies: vec![(rank, ok("finalize_ack"))],
                event: Some(Event::Finalized),
            },
            "abort" => Outcome::event(Event::Abort {
                code: msg
                    .get_int("exitcode")
                    .and_then(|c| i32::try_from(c).ok())
                    .unwrap_or(1),
                message: msg.get("message").unwrap_or_default().to_string(),
            }),
            name @ ("publish_name" | "unpublish_name" | "lookup_name") => {
                let result = format!("{}_result", name.trim_end_matches("_name"));
                Outcome::reply(
                    rank,
                    Message::new(&result)
                        .arg("rc", -1)
                        .arg("msg", "name publishing is not supported by hympiexec"),
                )
            }
            other => Outcome::event(Event::ProtocolError(format!(
                "unknown PMI command {other:?}"
            ))),
        }
    }

    /// Checks the `kvsname` of a put or get; the error reply otherwise.
    fn check_kvs(&self, rank: usize, msg: &Message, result: &str) -> Result<(), Outcome> {
        match msg.get("kvsname") {
            Some(k) if k == self.kvsname => Ok(()),
            other => Err(Outcome::reply(
                rank,
                Message::new(result).arg("rc", -1).arg(
                    "msg",
                    format!("unknown key-value space {:?}", other.unwrap_or_default()),
                ),
            )),
        }
    }

    fn put(&mut self, rank: usize, msg: &Message) -> Outcome {
        if let Err(o) = self.check_kvs(rank, msg, "put_result") {
            return o;
        }
        let key = msg.get("key").unwrap_or_default();
        if let Err(e) = check_key(key) {
            return Outcome::reply(rank, Message::new("put_result").arg("rc", -1).arg("msg", e));
        }
        // The parser already refused values over the limit.
        let value = msg.get("value").unwrap_or_default();
        self.pending.push((key.to_string(), value.to_string()));
        Outcome::reply(
            rank,
            Message::new("put_result")
                .arg("rc", 0)
                .arg("msg", "success"),
        )
    }

    fn get(&mut self, rank: usize, msg: &Message) -> Outcome {
        if let Err(o) = self.check_kvs(rank, msg, "get_result") {
            return o;
        }
        let key = msg.get("key").unwrap_or_default();
        let value = if key == "PMI_process_mapping" {
            Some(self.process_mapping())
        } else {
            self.committed.get(key).cloned()
        };
        let reply = match value {
            Some(v) => Message::new("get_result")
                .arg("rc", 0)
                .arg("msg", "success")
                .arg("found", "TRUE")
                .arg("value", v),
            // Like Hydra: a missing key is rc=-1 (MPICH's client expects that).
            None => Message::new("get_result")
                .arg("rc", -1)
                .arg("msg", "key_not_found")
                .arg("found", "FALSE"),
        };
        Outcome::reply(rank, reply)
    }

    fn barrier_in(&mut self, rank: usize) -> Outcome {
        if self.in_barrier[rank] {
            return Outcome::event(Event::ProtocolError(
                "barrier_in while already in the barrier".to_string(),
            ));
        }
        self.in_barrier[rank] = true;
        self.waiting += 1;
        if self.waiting < self.size {
            return Outcome::default();
        }
        self.committed.extend(self.pending.drain(..));
        self.in_barrier.iter_mut().for_each(|b| *b = false);
        self.waiting = 0;
        Outcome {
            replies: (0..self.size)
                .map(|r| (r, Message::new("barrier_out").arg("rc", 0)))
                .collect(),
            event: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(line: &str) -> Message {
        Message::parse(line).unwrap()
    }

    fn one(o: Outcome) -> Message {
        assert_eq!(o.replies.len(), 1, "{o:?}");
        o.replies.into_iter().next().unwrap().1
    }

    #[test]
    fn startup_queries() {
        let mut s = PmiServer::new(4, "kvs_1".into(), &[0, 0, 1, 1]);
        let r = one(s.handle(0, &req("cmd=init pmi_version=1 pmi_subversion=1")));
        assert_eq!((r.cmd(), r.rc()), ("response_to_init", 0));
        let r = one(s.handle(0, &req("cmd=init pmi_version=2 pmi_subversion=0")));
        assert_ne!(r.rc(), 0);
        let r = one(s.handle(0, &req("cmd=get_maxes")));
        assert_eq!(r.get_int("vallen_max"), Some(1024));
        assert_eq!(r.get_int("keylen_max"), Some(64));
        assert_eq!(r.get_int("kvsname_max"), Some(256));
        let r = one(s.handle(1, &req("cmd=get_my_kvsname")));
        assert_eq!(r.get("kvsname"), Some("kvs_1"));
        let r = one(s.handle(1, &req("cmd=get_universe_size")));
        assert_eq!(r.get_int("size"), Some(4));
        let r = one(s.handle(1, &req("cmd=get_appnum")));
        assert_eq!(r.get_int("appnum"), Some(0));
        let r = one(s.handle(2, &req("cmd=get kvsname=kvs_1 key=PMI_process_mapping")));
        assert_eq!(r.get("value"), Some("(vector,(0,2,2))"));
    }

    #[test]
    fn puts_are_visible_after_the_barrier() {
        let mut s = PmiServer::new(2, "kvs".into(), &[0, 0]);
        let r = one(s.handle(0, &req("cmd=put kvsname=kvs key=a value=1")));
        assert_eq!((r.cmd(), r.rc()), ("put_result", 0));
        let r = one(s.handle(1, &req("cmd=get kvsname=kvs key=a")));
        assert_ne!(r.rc(), 0, "visible before the barrier");
        assert_eq!(s.handle(0, &req("cmd=barrier_in")), Outcome::default());
        let o = s.handle(1, &req("cmd=barrier_in"));
        let to: Vec<usize> = o.replies.iter().map(|(r, _)| *r).collect();
        assert_eq!(to, vec![0, 1]);
        assert!(o.replies.iter().all(|(_, m)| m.cmd() == "barrier_out"));
        let r = one(s.handle(1, &req("cmd=get kvsname=kvs key=a")));
        assert_eq!((r.rc(), r.get("value")), (0, Some("1")));
        // A second round works the same.
        s.handle(1, &req("cmd=put kvsname=kvs key=b value=2"));
        s.handle(1, &req("cmd=barrier_in"));
        assert_eq!(s.handle(0, &req("cmd=barrier_in")).replies.len(), 2);
        let r = one(s.handle(0, &req("cmd=get kvsname=kvs key=b")));
        assert_eq!(r.get("value"), Some("2"));
    }

    #[test]
    fn bad_requests() {
        let mut s = PmiServer::new(2, "kvs".into(), &[0, 0]);
        let r = one(s.handle(0, &req("cmd=put kvsname=other key=a value=1")));
        assert_ne!(r.rc(), 0);
        let r = one(s.handle(0, &req("cmd=get kvsname=kvs")));
        assert_ne!(r.rc(), 0);
        let r = one(s.handle(0, &req("cmd=put kvsname=kvs value=1")));
        assert_ne!(r.rc(), 0);
        s.handle(0, &req("cmd=barrier_in"));
        let o = s.handle(0, &req("cmd=barrier_in"));
        assert!(matches!(o.event, Some(Event::ProtocolError(_))));
        let o = s.handle(1, &req("cmd=frobnicate"));
        assert!(matches!(o.event, Some(Event::ProtocolError(_))));
        let r = one(s.handle(1, &req("cmd=lookup_name service=x")));
        assert_eq!((r.cmd(), r.rc()), ("lookup_result", -1));
    }

    #[test]
    fn finalize_and_abort() {
        let mut s = PmiServer::new(1, "kvs".into(), &[0]);
        let o = s.handle(0, &req("cmd=finalize"));
        assert_eq!(o.event, Some(Event::Finalized));
        assert_eq!(o.replies[0].1.cmd(), "finalize_ack");
        let o = s.handle(0, &req("cmd=abort exitcode=3 message=it\\ broke"));
        assert!(o.replies.is_empty());
        assert_eq!(
            o.event,
            Some(Event::Abort {
                code: 3,
                message: "it broke".into()
            })
        );
    }
}
