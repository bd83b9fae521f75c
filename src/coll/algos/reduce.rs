//! Reduce algorithms, and the buffer bookkeeping every reduction algorithm shares
//! ([`Elems`], [`Acc`]).
//!
//! Reduction data stays in the user's layout: a temporary for `count` elements of a derived
//! type spans `true_extent + (count - 1) * extent` bytes and is addressed through its *base*
//! (the address the elements' displacements are relative to), so the reduction function sees
//! the same layout as in the user's buffers. Transfers pack and unpack through [`Span`].
//!
//! Known limit: the local reduction steps run inside the runtime (under its lock), so a user
//! op whose function itself calls MPI would deadlock (under `MPI_THREAD_MULTIPLE`) or fail;
//! the standard does not require user ops to be able to call MPI.

use crate::coll::sched::{Schedule, Span};
use crate::coll::tuning::{self, Coll, Query};
use crate::coll::Ctx;
use crate::core::op::Reducer;

/// The elements of a reduction: how a buffer of `count` elements is addressed, transferred,
/// reduced and copied into a temporary.
#[derive(Clone, Debug)]
pub struct Elems {
    /// The checked (op, datatype) pair.
    pub reducer: Reducer,
    /// Elements.
    pub count: usize,
    /// Transfer description of the whole buffer; `proto.addr` is the data's offset from the
    /// buffer base (nonzero for a contiguous derived type with a lower bound).
    pub proto: Span,
    /// Bytes a temporary holding `count` elements needs.
    pub tmp_bytes: usize,
    /// Offset of the base inside such a temporary (minus the lowest byte touched).
    pub tmp_base: isize,
}

impl Elems {
    /// Describes `count` elements whose buffer at base `base` transfers as `span`; `lo..hi`
    /// are the bytes (relative to the base) the elements touch.
    pub fn new(
        reducer: Reducer,
        count: usize,
        base: usize,
        span: &Span,
        lo: isize,
        hi: isize,
    ) -> Elems {
        let mut proto = span.clone();
        proto.addr = span.addr.wrapping_sub(base);
        Elems {
            reducer,
            count,
            proto,
            tmp_bytes: (hi - lo).max(0) as usize,
            tmp_base: -lo,
        }
    }

    /// The tuning query for a reduction of these elements on `p` ranks.
    pub fn query(&self, p: i32) -> Query {
        Query {
            comm_size: p,
            avg_msg_size: self.proto.bytes,
            total_msg_size: self.proto.bytes,
            count: self.count,
            commutative: self.reducer.commutative,
            ..Default::default()
        }
    }

    /// The transfer description of the buffer with base `base`.
    pub fn span(&self, base: usize) -> Span {
        let mut s = self.proto.clone();
        s.addr = base.wrapping_add(self.proto.addr);
        s
    }

    /// Whether element ranges can be addressed on their own ([`Elems::range`]): the elements
    /// are `extent` bytes apart (always, except a contiguous derived type seen as one block).
    pub fn splittable(&self) -> bool {
        self.proto.layout.is_some()
            || self.count <= 1
            || self.proto.unit.extent == self.reducer.extent
    }

    /// Bytes of data per element.
    fn elem_bytes(&self) -> usize {
        self.proto.bytes.checked_div(self.count).unwrap_or(0)
    }

    /// Elements `first..first + n` of the buffer with base `base` (only when
    /// [`Elems::splittable`], or for the whole range).
    pub fn range(&self, base: usize, first: usize, n: usize) -> Span {
        let mut s = self.proto.clone();
        s.addr = base
            .wrapping_add(self.proto.addr)
            .wrapping_add(first * self.reducer.extent);
        s.bytes = n * self.elem_bytes();
        if let Some(l) = &mut s.layout {
            l.count = n;
        }
        s
    }

    /// Address of element `first` of the buffer with base `base` (for reduce steps).
    pub fn at(&self, base: usize, first: usize) -> usize {
        base.wrapping_add(first * self.reducer.extent)
    }

    /// A new temporary for all the elements; returns its base.
    pub fn tmp(&self, s: &mut Schedule) -> usize {
        s.tmp(self.tmp_bytes).wrapping_add_signed(self.tmp_base)
    }

    /// `dst = src op dst` over all elements (buffer bases).
    pub fn reduce(&self, s: &mut Schedule, src: usize, dst: usize) {
        if self.count > 0 {
            s.reduce(self.reducer, self.count, src, dst);
        }
    }

    /// Copies all elements from base `src` to base `dst`.
    pub fn copy(&self, s: &mut Schedule, src: usize, dst: usize) {
        if src != dst && self.proto.bytes > 0 {
            s.copy(self.span(src), self.span(dst));
        }
    }
}

/// A running partial result and the writable buffers available to hold one, for the
/// algorithms that combine whole vectors: it tracks where the partial result lives (possibly
/// the read-only send buffer), picks free buffers to receive into and keeps operand order.
pub struct Acc {
    /// Base of the buffer holding the partial result.
    pub cur: usize,
    writable_cur: bool,
    /// Writable buffers (the receive buffer first when usable, then temporaries).
    pool: Vec<usize>,
}

impl Acc {
    /// Starts with the partial result in `start` (writable or not) and `pool` as the writable
    /// buffers to use first (typically the receive buffer).
    pub fn new(start: usize, writable: bool, pool: Vec<usize>) -> Acc {
        Acc {
            cur: start,
            writable_cur: writable,
            pool,
        }
    }

    /// A writable buffer other than the current partial result and `busy`, allocating a
    /// temporary when none is free.
    pub fn free(&mut self, e: &Elems, s: &mut Schedule, busy: &[usize]) -> usize {
        for &b in &self.pool {
            if b != self.cur && !busy.contains(&b) {
                return b;
            }
        }
        let t = e.tmp(s);
        self.pool.push(t);
        t
    }

    /// Combines the partial result with operand `inc` (a writable buffer just received, not
    /// the current one): `cur = inc op cur` when `inc_lower` (it holds lower ranks' data),
    /// else `cur = cur op inc`. Adds local steps to the current round.
    pub fn absorb(&mut self, e: &Elems, s: &mut Schedule, inc: usize, inc_lower: bool) {
        let comm = e.reducer.commutative;
        if self.writable_cur && (comm || inc_lower) {
            e.reduce(s, inc, self.cur);
        } else if comm || !inc_lower {
            e.reduce(s, self.cur, inc);
            self.cur = inc;
            self.writable_cur = true;
        } else {
            // Non-commutative, incoming lower, partial result read-only: copy it first.
            let w = self.free(e, s, &[inc]);
            e.copy(s, self.cur, w);
            e.reduce(s, inc, w);
            self.cur = w;
            self.writable_cur = true;
        }
    }

    /// Combines the operands `ops` (buffer bases in rank order, the current partial result
    /// among them, the others writable buffers just received) into one partial result
    /// `ops[0] op ops[1] op ... op ops[n-1]`, evaluated from the right into the last operand
    /// (a copy of it first when that is the read-only partial result). Adds local steps to
    /// the current round. Two operands of a commutative op combine into whichever is
    /// writable (no copy; `a op b` and `b op a` agree bit for bit for the built-in ops). More
    /// operands always combine in the same order, so that every rank of a group computes the
    /// same bits even for floating-point sums, which do not associate.
    pub fn combine(&mut self, e: &Elems, s: &mut Schedule, ops: &[usize]) {
        if e.reducer.commutative && ops.len() == 2 {
            let dst = if self.writable_cur {
                self.cur
            } else {
                *ops.iter()
                    .find(|&&o| o != self.cur)
                    .expect("a received operand")
            };
            for &o in ops.iter().filter(|&&o| o != dst) {
                e.reduce(s, o, dst);
            }
            self.cur = dst;
            self.writable_cur = true;
            return;
        }
        let Some((&last, rest)) = ops.split_last() else {
            return;
        };
        let dst = if last == self.cur && !self.writable_cur {
            let w = self.free(e, s, ops);
            e.copy(s, last, w);
            w
        } else {
            last
        };
        for &o in rest.iter().rev() {
            e.reduce(s, o, dst);
        }
        self.cur = dst;
        self.writable_cur = true;
    }

    /// Makes sure the partial result ends in `dst` (adds a copy when it is elsewhere).
    pub fn finish_in(&mut self, e: &Elems, s: &mut Schedule, dst: usize) {
        if self.cur != dst {
            e.copy(s, self.cur, dst);
            self.cur = dst;
        }
    }
}

/// Reduce of `e` from base `send` (the receive buffer for `MPI_IN_PLACE` at the root) into
/// base `recv` at `root`, with the radix the tuning table picks
/// ([`crate::coll::tuning`]; `HYMPI_REDUCE_ALGORITHM=knomial[:k=N]|binomial` overrides).
pub fn reduce(c: &Ctx, s: &mut Schedule, e: &Elems, send: usize, recv: usize, root: i32) {
    let k = tuning::select(Coll::Reduce, &e.query(c.size).on(c.shape)).k as i32;
    knomial(c, s, e, send, recv, root, k);
}

/// K-nomial tree reduce to `root` (k = 2: binomial). `send` is this rank's contribution (the
/// receive buffer itself for `MPI_IN_PLACE` at the root), `recv` the root's receive buffer
/// (ignored elsewhere). For a non-commutative op the tree is built on the ranks themselves
/// (root 0) so each subtree holds consecutive ranks and operands combine in rank order; the
/// result then goes from rank 0 to the root.
pub fn knomial(c: &Ctx, s: &mut Schedule, e: &Elems, send: usize, recv: usize, root: i32, k: i32) {
    let k = k.max(2);
    let p = c.size;
    let tree_root = if e.reducer.commutative { root } else { 0 };
    let rel = (c.rank - tree_root).rem_euclid(p);
    let final_at_root = c.rank == root && c.rank == tree_root;
    let in_place = send == recv && c.rank == root;
    let pool = if c.rank == root {
        vec![recv]
    } else {
        Vec::new()
    };
    let mut acc = Acc::new(send, in_place, pool);
    // Children: relative ranks rel + j * mask for each mask below this rank's lowest nonzero
    // base-k digit position, smallest mask first (each subtree is a block of consecutive
    // relative ranks, so absorbing in this order keeps rank order).
    let mut mask = 1;
    while mask < p {
        if rel % (mask * k) != 0 {
            break;
        }
        let mut kids = Vec::new();
        for j in 1..k {
            let child = rel + j * mask;
            if child < p {
                kids.push((child + tree_root) % p);
            }
        }
        if !kids.is_empty() {
            let mut bufs = Vec::new();
            for &kid in &kids {
                let b = acc.free(e, s, &bufs);
                s.recv(kid, e.span(b));
                bufs.push(b);
            }
            for b in bufs {
                acc.absorb(e, s, b, false);
            }
            s.next_round();
        }
        mask *= k;
    }
    if rel != 0 {
        let parent = rel - rel % (mask * k);
        s.send((parent + tree_root) % p, e.span(acc.cur));
        s.next_round();
    } else if final_at_root {
        acc.finish_in(e, s, recv);
        s.next_round();
    } else {
        // Rank 0 of a non-commutative reduce whose root is elsewhere.
        s.send(root, e.span(acc.cur));
        s.next_round();
    }
    if c.rank == root && !final_at_root {
        s.recv(tree_root, e.span(recv));
        s.next_round();
    }
}
