//! Intercommunicator collectives (MPI-4.1 §6.2.2): the data of one group goes to the other.
//!
//! The algorithms combine two kinds of traffic in one schedule: point-to-point messages on
//! the intercommunicator's collective context (rank `r` is then rank `r` of the *remote*
//! group), and intracommunicator algorithms run over the hidden communicator of the local
//! group ([`Inter::local`], addressed with [`Schedule::target`]). Both use the tag of the
//! intercommunicator's collective, so concurrent collectives never mix.
//!
//! - Barrier: local barrier, empty message between the two leaders (local rank 0), local
//!   broadcast from the leader.
//! - Bcast: the root sends to the remote leader, which broadcasts over its local group.
//! - Reduce: the group without the root reduces to its leader (k-nomial tree, rank order kept
//!   for non-commutative ops), which sends the result to the root.
//! - Allreduce: each group reduces to its leader, the leaders swap results, each leader
//!   broadcasts the other group's result over its local group.
//! - Reduce_scatter(_block): as Allreduce, then the leader scatters the received vector over
//!   its local group by the local receive counts.
//! - Gather(v), Scatter(v), Allgather(v), Alltoall(v,w): every transfer goes directly between
//!   the two processes concerned, all in one round.

use super::algos::{barrier, bcast, reduce, scatter};
use super::sched::{Schedule, Span};
use super::{Ctx, Inter};
use crate::core::error::{fail, MpiResult};
use crate::mpi_abi::consts::{MPI_ERR_ROOT, MPI_PROC_NULL, MPI_ROOT};

/// What the `root` argument of a rooted intercommunicator collective makes of this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `MPI_ROOT`: this process is the root.
    Root,
    /// `MPI_PROC_NULL`: a process of the root's group other than the root; it takes no part.
    Idle,
    /// A process of the other group; the root is this remote rank.
    Remote(i32),
}

/// Reads the `root` argument on an intercommunicator whose remote group has `remote_size`
/// processes (`MPI_ERR_ROOT` for anything else).
pub fn role(root: i32, remote_size: i32) -> MpiResult<Role> {
    match root {
        MPI_ROOT => Ok(Role::Root),
        MPI_PROC_NULL => Ok(Role::Idle),
        r if (0..remote_size).contains(&r) => Ok(Role::Remote(r)),
        r => fail(
            MPI_ERR_ROOT,
            format!(
                "invalid root {r} on an intercommunicator (MPI_ROOT, MPI_PROC_NULL or a rank \
                 of the remote group of {remote_size} processes)"
            ),
        ),
    }
}

/// Appends to `s` whatever `f` builds over the local group's hidden intracommunicator (its
/// sends and receives address that communicator; the ranks are the local group's).
fn on_local(c: &Ctx, i: &Inter, s: &mut Schedule, f: impl FnOnce(&Ctx, &mut Schedule)) {
    let lc = Ctx {
        comm: i.local,
        rank: c.rank,
        size: c.size,
        inter: None,
        blocking: false,
        shape: Default::default(),
    };
    let before = s.target(i.local);
    f(&lc, s);
    s.next_round();
    s.target(before);
}

/// Intercommunicator barrier.
pub fn barrier(c: &Ctx, i: &Inter, s: &mut Schedule) {
    on_local(c, i, s, barrier::dissemination);
    let token = Span::bytes(0, 0);
    if c.rank == 0 {
        s.send(0, token.clone());
        s.recv(0, token.clone());
        s.next_round();
    }
    on_local(c, i, s, |lc, s| bcast::knomial(lc, s, &token, 0, 2));
}

/// Intercommunicator broadcast of `data` (the root's buffer, or the receive buffer in the
/// other group; unused on idle processes).
pub fn bcast(c: &Ctx, i: &Inter, s: &mut Schedule, data: &Span, role: Role) {
    match role {
        Role::Idle => {}
        Role::Root => {
            s.send(0, data.clone());
            s.next_round();
        }
        Role::Remote(root) => {
            if c.rank == 0 {
                s.recv(root, data.clone());
                s.next_round();
            }
            if c.size > 1 {
                on_local(c, i, s, |lc, s| bcast::knomial(lc, s, data, 0, 2));
            }
        }
    }
}

/// Intercommunicator gather: the root receives `recv[r]` from remote rank `r`; the other
/// group's processes send `send`.
pub fn gather(s: &mut Schedule, send: Option<&Span>, recv: &[Span], role: Role) {
    match role {
        Role::Idle => {}
        Role::Root => {
            for (r, span) in recv.iter().enumerate() {
                if span.bytes > 0 {
                    s.recv(r as i32, span.clone());
                }
            }
        }
        Role::Remote(root) => {
            if let Some(span) = send.filter(|x| x.bytes > 0) {
                s.send(root, span.clone());
            }
        }
    }
    s.next_round();
}

/// Intercommunicator scatter: the root sends `send[r]` to remote rank `r`; the other group's
/// processes receive into `recv`.
pub fn scatter(s: &mut Schedule, send: &[Span], recv: Option<&Span>, role: Role) {
    match role {
        Role::Idle => {}
        Role::Root => {
            for (r, span) in send.iter().enumerate() {
                if span.bytes > 0 {
                    s.send(r as i32, span.clone());
                }
            }
        }
        Role::Remote(root) => {
            if let Some(span) = recv.filter(|x| x.bytes > 0) {
                s.recv(root, span.clone());
            }
        }
    }
    s.next_round();
}

/// Intercommunicator all-to-all exchange: `send[r]` goes to remote rank `r`, `recv[r]` comes
/// from it (Allgather(v) passes the same send span for every remote rank).
pub fn exchange(s: &mut Schedule, send: &[Span], recv: &[Span]) {
    for (r, span) in recv.iter().enumerate() {
        if span.bytes > 0 {
            s.recv(r as i32, span.clone());
        }
    }
    for (r, span) in send.iter().enumerate() {
        if span.bytes > 0 {
            s.send(r as i32, span.clone());
        }
    }
    s.next_round();
}

/// Reduces the local group's vectors `e` (this rank's at base `send`) to the local leader,
/// into a new temporary; returns its base on the leader (0 elsewhere).
fn reduce_to_leader(c: &Ctx, i: &Inter, s: &mut Schedule, e: &reduce::Elems, send: usize) -> usize {
    let t = if c.rank == 0 { e.tmp(s) } else { 0 };
    on_local(c, i, s, |lc, s| reduce::knomial(lc, s, e, send, t, 0, 2));
    t
}

/// Intercommunicator reduce: the group without the root reduces its vectors `e` (base `send`)
/// to its leader, which sends the result to the root's buffer (base `recv`).
pub fn reduce(
    c: &Ctx,
    i: &Inter,
    s: &mut Schedule,
    e: &reduce::Elems,
    send: usize,
    recv: usize,
    role: Role,
) {
    match role {
        Role::Idle => {}
        Role::Root => {
            s.recv(0, e.span(recv));
            s.next_round();
        }
        Role::Remote(root) => {
            let t = reduce_to_leader(c, i, s, e, send);
            if c.rank == 0 {
                s.send(root, e.span(t));
                s.next_round();
            }
        }
    }
}

/// Intercommunicator allreduce: every process of a group gets in base `recv` the reduction
/// of the other group's vectors.
pub fn allreduce(
    c: &Ctx,
    i: &Inter,
    s: &mut Schedule,
    e: &reduce::Elems,
    send: usize,
    recv: usize,
) {
    let t = reduce_to_leader(c, i, s, e, send);
    if c.rank == 0 {
        s.send(0, e.span(t));
        s.recv(0, e.span(recv));
        s.next_round();
    }
    if c.size > 1 {
        let data = e.span(recv);
        on_local(c, i, s, |lc, s| bcast::knomial(lc, s, &data, 0, 2));
    }
}

/// Intercommunicator reduce-scatter: the reduction of the other group's vectors (`e`, all
/// `counts` blocks; `elem` packed bytes per element) is scattered over the local group,
/// block `counts[r]` going to local rank `r`'s `recv`.
#[allow(clippy::too_many_arguments)]
pub fn reduce_scatter(
    c: &Ctx,
    i: &Inter,
    s: &mut Schedule,
    e: &reduce::Elems,
    counts: &[usize],
    elem: usize,
    send: usize,
    recv: &Span,
) {
    let t = reduce_to_leader(c, i, s, e, send);
    let total: usize = counts.iter().sum();
    let mut blocks = Vec::new();
    if c.rank == 0 {
        // The other group's result arrives packed; its blocks are then byte ranges.
        let pk = s.tmp(total * elem);
        s.send(0, e.span(t));
        s.recv(0, Span::bytes(pk, total * elem));
        s.next_round();
        let mut off = 0;
        for &k in counts {
            blocks.push(Span::bytes(pk + off * elem, k * elem));
            off += k;
        }
    }
    on_local(c, i, s, |lc, s| {
        scatter::linear(lc, s, &blocks, Some(recv), 0)
    });
}
