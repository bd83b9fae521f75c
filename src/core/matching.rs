//! Message matching: the posted-receive queue and the unexpected-message queue.
//!
//! Both queues are kept in arrival/post order and searched from the front, which gives MPI's
//! non-overtaking rule: for one (source, communicator) stream, a message matches the oldest
//! eligible receive, and a receive matches the oldest eligible message.

use crate::abi::consts::{MPI_ANY_SOURCE, MPI_ANY_TAG};
use std::collections::VecDeque;

/// Who sent a message, on which context, with which tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope {
    /// Context id.
    pub ctx: u32,
    /// Source rank in the communicator.
    pub src: i32,
    /// Tag.
    pub tag: i32,
}

/// What a posted receive accepts.
#[derive(Clone, Copy, Debug)]
pub struct Pattern {
    /// Context id.
    pub ctx: u32,
    /// Source rank or `MPI_ANY_SOURCE`.
    pub src: i32,
    /// Tag or `MPI_ANY_TAG`.
    pub tag: i32,
}

impl Pattern {
    /// Whether a message with envelope `e` matches.
    #[inline(always)]
    pub fn accepts(&self, e: &Envelope) -> bool {
        self.ctx == e.ctx
            && (self.src == e.src || self.src == MPI_ANY_SOURCE)
            && (self.tag == e.tag || self.tag == MPI_ANY_TAG)
    }
}

/// A posted receive.
#[derive(Clone, Copy, Debug)]
pub struct Posted {
    /// What it accepts.
    pub pattern: Pattern,
    /// Its request index.
    pub req: u32,
}

/// How the data of an unexpected message can be had.
#[derive(Debug)]
pub enum Payload {
    /// The bytes, copied out of the transport. `ack` is set for a synchronous send: the
    /// (local rank, sender request token) to acknowledge when it is matched.
    Eager {
        /// The message bytes.
        data: Vec<u8>,
        /// Synchronous-send acknowledgement target.
        ack: Option<(u32, u64)>,
    },
    /// A rendezvous announcement from local rank `src_local`: `total` bytes at `addr` in the
    /// sender, whose request is `sreq`.
    Rendezvous {
        /// Sender's local rank.
        src_local: u32,
        /// Sender's request token.
        sreq: u64,
        /// Sender's buffer address.
        addr: u64,
        /// Message length.
        total: u64,
        /// How `addr` is to be read: 0 contiguous, [`RTS_STREAM`] only through a stream,
        /// else the number of (address, length) segments listed at `addr`.
        nseg: u64,
    },
    /// A message from this process to itself that was not buffered: the sender's request
    /// `sreq` completes when the data is copied from `addr`.
    SelfPending {
        /// Sender's request index.
        sreq: u32,
        /// Sender's buffer.
        addr: *const u8,
        /// Message length.
        total: u64,
    },
}

impl Payload {
    /// Message length in bytes.
    pub fn len(&self) -> u64 {
        match self {
            Payload::Eager { data, .. } => data.len() as u64,
            Payload::Rendezvous { total, .. } | Payload::SelfPending { total, .. } => *total,
        }
    }
    /// Whether the message is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `Payload::Rendezvous::nseg` of a sender whose data must be streamed (packed into cells).
pub const RTS_STREAM: u64 = u64::MAX;

/// A message that arrived before its receive.
#[derive(Debug)]
pub struct Unexpected {
    /// Envelope.
    pub env: Envelope,
    /// Data.
    pub payload: Payload,
}

/// The two matching queues.
#[derive(Default)]
pub struct Matcher {
    /// Receives waiting for a message.
    pub posted: VecDeque<Posted>,
    /// Messages waiting for a receive.
    pub unexpected: VecDeque<Unexpected>,
}

impl Matcher {
    /// Removes and returns the oldest posted receive that accepts `e`.
    #[inline(always)]
    pub fn take_posted(&mut self, e: &Envelope) -> Option<Posted> {
        if let Some(front) = self.posted.front() {
            if front.pattern.accepts(e) {
                return self.posted.pop_front();
            }
        } else {
            return None;
        }
        let i = self.posted.iter().position(|p| p.pattern.accepts(e))?;
        self.posted.remove(i)
    }

    /// Index of the oldest unexpected message that `p` accepts.
    #[inline(always)]
    pub fn find_unexpected(&self, p: &Pattern) -> Option<usize> {
        if self.unexpected.is_empty() {
            return None;
        }
        self.unexpected.iter().position(|u| p.accepts(&u.env))
    }

    /// Removes and returns the oldest unexpected message that `p` accepts.
    #[inline(always)]
    pub fn take_unexpected(&mut self, p: &Pattern) -> Option<Unexpected> {
        let i = self.find_unexpected(p)?;
        self.unexpected.remove(i)
    }

    /// Removes the posted receive of request `req` (cancel); whether it was there.
    pub fn cancel_posted(&mut self, req: u32) -> bool {
        match self.posted.iter().position(|p| p.req == req) {
            Some(i) => {
                self.posted.remove(i);
                true
            }
            None => false,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn env(src: i32, tag: i32) -> Envelope {
        Envelope { ctx: 0, src, tag }
    }
    fn eager(n: u8) -> Payload {
        Payload::Eager {
            data: vec![n],
            ack: None,
        }
    }

    #[test]
    fn wildcards_and_order() {
        let mut m = Matcher::default();
        m.posted.push_back(Posted {
            pattern: Pattern {
                ctx: 0,
                src: 1,
                tag: 5,
            },
            req: 1,
        });
        m.posted.push_back(Posted {
            pattern: Pattern {
                ctx: 0,
                src: MPI_ANY_SOURCE,
                tag: MPI_ANY_TAG,
            },
            req: 2,
        });
        m.posted.push_back(Posted {
            pattern: Pattern {
                ctx: 0,
                src: 1,
                tag: 5,
            },
            req: 3,
        });
        assert_eq!(
            m.take_posted(&env(2, 9)).unwrap().req,
            2,
            "wildcard receive takes any source/tag"
        );
        assert_eq!(
            m.take_posted(&env(1, 5)).unwrap().req,
            1,
            "oldest match first"
        );
        assert_eq!(m.take_posted(&env(1, 5)).unwrap().req, 3);
        assert!(m.take_posted(&env(1, 5)).is_none());
        assert!(m
            .take_posted(&Envelope {
                ctx: 7,
                src: 1,
                tag: 5
            })
            .is_none());
    }

    #[test]
    fn unexpected_non_overtaking() {
        let mut m = Matcher::default();
        m.unexpected.push_back(Unexpected {
            env: env(1, 1),
            payload: eager(1),
        });
        m.unexpected.push_back(Unexpected {
            env: env(2, 1),
            payload: eager(2),
        });
        m.unexpected.push_back(Unexpected {
            env: env(1, 2),
            payload: eager(3),
        });
        m.unexpected.push_back(Unexpected {
            env: env(1, 1),
            payload: eager(4),
        });
        let any_tag_from_1 = Pattern {
            ctx: 0,
            src: 1,
            tag: MPI_ANY_TAG,
        };
        let got: Vec<u64> = std::iter::from_fn(|| m.take_unexpected(&any_tag_from_1))
            .map(|u| match u.payload {
                Payload::Eager { data, .. } => data[0] as u64,
                _ => 0,
            })
            .collect();
        assert_eq!(got, vec![1, 3, 4]);
        assert_eq!(m.unexpected.len(), 1);
        assert!(!m.cancel_posted(9));
    }
}
