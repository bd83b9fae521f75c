//! Scatter algorithms: a binomial tree for small blocks (inner nodes receive their subtree's
//! blocks in a temporary and pass them on) and a linear one for large blocks; Scatterv is
//! linear.

use super::blocks::{copy, Blocks};
use super::gather::{children, subtree};
use crate::coll::sched::{Schedule, Span};
use crate::coll::Ctx;

/// Binomial-tree scatter of blocks of `packed` bytes from `root`. `send` is the root's send
/// blocks; `recv` this rank's receive block (`None` at a root scattering in place).
pub fn binomial(
    c: &Ctx,
    s: &mut Schedule,
    send: Option<&Blocks>,
    recv: Option<&Span>,
    packed: usize,
    root: i32,
) {
    let p = c.size;
    let rel = (c.rank - root).rem_euclid(p);
    let (size, parent) = subtree(rel, p);
    let kids = children(rel, size, p);
    let abs = |r: i32| (r + root) % p;
    match parent {
        None => {
            let send = send.expect("the root has send blocks");
            let mut sends = Vec::new();
            for (child, csz) in kids {
                let a = abs(child) as usize;
                let n = csz as usize;
                if a + n <= p as usize {
                    sends.push((abs(child), send.run(a, n)));
                } else {
                    // The subtree wraps past the last rank: assemble it in a temporary first.
                    let t = Blocks::tmp(s, n, packed);
                    let first = p as usize - a;
                    copy(s, send.run(a, first), t.run(0, first));
                    copy(s, send.run(0, n - first), t.run(first, n - first));
                    sends.push((abs(child), t.run(0, n)));
                }
            }
            s.next_round();
            for (to, span) in sends {
                s.send(to, span);
            }
            if let Some(recv) = recv {
                copy(s, send.block(root as usize), recv.clone());
            }
            s.next_round();
        }
        Some(parent) => {
            let recv = recv.expect("a non-root has a receive block");
            let from = abs(parent);
            if kids.is_empty() {
                s.recv(from, recv.clone());
                s.next_round();
            } else {
                let t = Blocks::tmp(s, size as usize, packed);
                s.recv(from, t.run(0, size as usize));
                s.next_round();
                for (child, csz) in kids {
                    s.send(abs(child), t.run((child - rel) as usize, csz as usize));
                }
                copy(s, t.block(0), recv.clone());
                s.next_round();
            }
        }
    }
}

/// Linear scatter: the root sends each rank its block. `send[r]` is the root's span for rank
/// `r`; `recv` is `None` at a root scattering in place.
pub fn linear(c: &Ctx, s: &mut Schedule, send: &[Span], recv: Option<&Span>, root: i32) {
    if c.rank == root {
        for (r, span) in send.iter().enumerate() {
            if r as i32 != root && span.bytes > 0 {
                s.send(r as i32, span.clone());
            }
        }
        if let Some(recv) = recv {
            copy(s, send[root as usize].clone(), recv.clone());
        }
    } else if let Some(recv) = recv {
        if recv.bytes > 0 {
            s.recv(root, recv.clone());
        }
    }
    s.next_round();
}
