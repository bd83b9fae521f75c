//! Message matching: the posted-receive queue and the unexpected-message queue.
//!
//! Both queues are kept in arrival/post order and searched from the front, which gives MPI's
//! non-overtaking rule: for one (source, communicator) stream, a message matches the oldest
//! eligible receive, and a receive matches the oldest eligible message.

use crate::mpi_abi::consts::{MPI_ANY_SOURCE, MPI_ANY_TAG};
use std::collections::VecDeque;

pub use crate::transport::wire::Envelope;

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

/// The posted-receive queue, oldest first: a ring buffer whose capacity is a power of two, so
/// that the fast paths' push, front and pop are a few instructions (no wrap-around branch, no
/// out-of-line growth check beyond one compare).
#[derive(Clone, Default)]
pub struct PostedQueue {
    /// The ring; empty or a power of two long.
    buf: Box<[Posted]>,
    /// Ring index of the oldest entry.
    head: usize,
    /// Number of entries.
    len: usize,
}

/// Iterator over a [`PostedQueue`], oldest first.
pub struct PostedIter<'a> {
    q: &'a PostedQueue,
    i: usize,
}

impl<'a> Iterator for PostedIter<'a> {
    type Item = &'a Posted;

    #[inline]
    fn next(&mut self) -> Option<&'a Posted> {
        let p = self.q.get(self.i)?;
        self.i += 1;
        Some(p)
    }
}

/// What unused ring entries hold.
const NO_POSTED: Posted = Posted {
    pattern: Pattern {
        ctx: u32::MAX,
        src: MPI_ANY_SOURCE,
        tag: MPI_ANY_TAG,
    },
    req: u32::MAX,
};

impl PostedQueue {
    /// Number of posted receives.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no receive is posted.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entries the ring holds before it must grow.
    #[inline(always)]
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// The ring index of the `i`-th oldest entry.
    #[inline(always)]
    fn slot(&self, i: usize) -> usize {
        (self.head + i) & self.buf.len().wrapping_sub(1)
    }

    /// The oldest posted receive.
    #[inline(always)]
    pub fn front(&self) -> Option<&Posted> {
        if self.len == 0 {
            return None;
        }
        self.buf.get(self.head)
    }

    /// The `i`-th oldest posted receive.
    #[inline(always)]
    pub fn get(&self, i: usize) -> Option<&Posted> {
        if i >= self.len {
            return None;
        }
        self.buf.get(self.slot(i))
    }

    /// Appends a posted receive (the newest).
    #[inline(always)]
    pub fn push_back(&mut self, p: Posted) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let i = self.slot(self.len);
        if let Some(e) = self.buf.get_mut(i) {
            *e = p;
            self.len += 1;
        }
    }

    /// The ring entry the next append fills, when the ring has room (never grows it, so
    /// never allocates). Changes nothing: the caller fills the entry, then counts it with
    /// [`PostedQueue::count_back`]. Taking the entry early lets a hot path compute its place
    /// from the fields it has just checked.
    #[inline(always)]
    pub fn vacant_back(&mut self) -> Option<&mut Posted> {
        if self.len >= self.buf.len() {
            return None;
        }
        let i = self.slot(self.len);
        self.buf.get_mut(i)
    }

    /// Counts the entry [`PostedQueue::vacant_back`] returned, which the caller filled, as
    /// the newest posted receive.
    #[inline(always)]
    pub fn count_back(&mut self) {
        debug_assert!(self.len < self.buf.len());
        self.len += 1;
    }

    /// Removes and returns the oldest posted receive.
    #[inline(always)]
    pub fn pop_front(&mut self) -> Option<Posted> {
        if self.len == 0 {
            return None;
        }
        let p = *self.buf.get(self.head)?;
        self.head = self.slot(1);
        self.len -= 1;
        Some(p)
    }

    /// Removes and returns the `i`-th oldest posted receive, keeping the order of the others
    /// (moves the shorter side).
    pub fn remove(&mut self, i: usize) -> Option<Posted> {
        let p = *self.get(i)?;
        if i < self.len / 2 {
            for k in (1..=i).rev() {
                let (to, from) = (self.slot(k), self.slot(k - 1));
                self.buf[to] = self.buf[from];
            }
            self.head = self.slot(1);
        } else {
            for k in i..self.len - 1 {
                let (to, from) = (self.slot(k), self.slot(k + 1));
                self.buf[to] = self.buf[from];
            }
        }
        self.len -= 1;
        Some(p)
    }

    /// The posted receives, oldest first.
    pub fn iter(&self) -> PostedIter<'_> {
        PostedIter { q: self, i: 0 }
    }

    /// Removes every posted receive and returns them, oldest first.
    pub fn drain(&mut self, _all: std::ops::RangeFull) -> std::vec::IntoIter<Posted> {
        let v: Vec<Posted> = self.iter().copied().collect();
        self.head = 0;
        self.len = 0;
        v.into_iter()
    }

    /// Doubles the capacity (at least 8 entries), the oldest entry moving to ring index 0.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let cap = (self.buf.len() * 2).max(8);
        let mut buf = vec![NO_POSTED; cap].into_boxed_slice();
        for (i, p) in self.iter().enumerate() {
            buf[i] = *p;
        }
        self.buf = buf;
        self.head = 0;
    }
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

pub use crate::transport::wire::RTS_STREAM;

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
    pub posted: PostedQueue,
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

    /// A posted receive of request `req` on context 0, source 0, tag 0.
    fn post(req: u32) -> Posted {
        Posted {
            pattern: Pattern {
                ctx: 0,
                src: 0,
                tag: 0,
            },
            req,
        }
    }

    #[test]
    fn vacant_back_fills_the_ring_without_growing_it() {
        let mut q = PostedQueue::default();
        assert_eq!(q.capacity(), 0, "an empty queue has no ring yet");
        q.push_back(post(0)); // grows to 8
        assert_eq!(q.pop_front().unwrap().req, 0);
        let cap = q.capacity();
        assert_eq!(cap, 8);
        // From a head in the middle of the ring, fill it exactly, wrapping around.
        for r in 1..=cap as u32 {
            *q.vacant_back().expect("room") = post(r);
            q.count_back();
        }
        assert_eq!(q.len(), cap);
        assert_eq!(q.capacity(), cap, "never grew");
        assert!(q.vacant_back().is_none(), "full");
        let got: Vec<u32> = std::iter::from_fn(|| q.pop_front().map(|p| p.req)).collect();
        assert_eq!(got, (1..=cap as u32).collect::<Vec<_>>());
    }

    #[test]
    fn posted_ring_keeps_order_through_growth_and_removal() {
        let mut q = PostedQueue::default();
        let reqs = |q: &PostedQueue| q.iter().map(|p| p.req).collect::<Vec<_>>();
        assert!(q.front().is_none() && q.pop_front().is_none() && q.get(0).is_none());
        for r in 0..6 {
            q.push_back(post(r));
        }
        assert_eq!(q.pop_front().unwrap().req, 0);
        assert_eq!(q.pop_front().unwrap().req, 1);
        // Wraps around the 8-entry ring, then grows to 16 with the oldest first.
        for r in 6..20 {
            q.push_back(post(r));
        }
        assert_eq!(q.len(), 18);
        assert_eq!(reqs(&q), (2..20).collect::<Vec<_>>());
        assert_eq!(q.remove(1).unwrap().req, 3, "front half");
        assert_eq!(q.remove(14).unwrap().req, 17, "back half");
        assert!(q.remove(16).is_none());
        let mut want: Vec<u32> = (2..20).collect();
        want.retain(|&r| r != 3 && r != 17);
        assert_eq!(reqs(&q), want);
        assert_eq!(q.front().unwrap().req, 2);
        assert_eq!(q.get(2).unwrap().req, 5);
        let all: Vec<u32> = q.drain(..).map(|p| p.req).collect();
        assert_eq!(all, want);
        assert!(q.is_empty());
        q.push_back(post(99));
        assert_eq!(reqs(&q), vec![99]);
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
