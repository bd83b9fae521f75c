//! Contention-aware single-copy collectives on the node (`papers/contention-aware-cma-
//! collectives.md`): large blocking Scatter, Gather, Alltoall and Allgather on a
//! communicator that runs on a node slot (`coll::shm`), with the data copied straight
//! between the processes (`platform::cma`) and the slot carrying only buffer addresses and
//! "done" words. One address exchange per call replaces a rendezvous handshake per message.
//!
//! Each call takes two sequence numbers of the slot: `s` publishes the addresses, `s + 1`
//! says "my copies are done". A process never returns while others may still copy from or
//! into its buffer, and nobody copies from a buffer before its owner published it.
//!
//! - **Scatter: throttled reads.** The root publishes its send buffer; at most `k` non-roots
//!   read their blocks from it at once. The readers, numbered from the root, form `k` chains:
//!   reader `j` starts when reader `j - k` has published `s + 1` (the paper's chain of
//!   zero-byte messages, here a slot word). The root copies its own block meanwhile and
//!   returns once every reader is done.
//! - **Gather: throttled writes.** The mirror image: the root publishes its receive buffer,
//!   at most `k` non-roots write their blocks into it at once.
//! - **Alltoall: pairwise reads.** Everybody publishes its send buffer; in step `i` a rank
//!   reads its block from rank `me XOR i` (`p` a power of two) or `me - i`, so each process
//!   is read by one peer per step and nobody waits between steps.
//! - **Allgather: ring-source reads.** Everybody publishes its own block; in step `i` a rank
//!   reads rank `me - i`'s block from its owner (valid from the start, so no per-step
//!   synchronisation).
//! - Both read in that order while the peers keep up; a peer that has not published its
//!   address yet (descheduled on an oversubscribed node) is passed over for the next one
//!   that has, and read later.
//!
//! The throttle `k` is the contention model's best (`platform::cma_model`'s `best_throttle`, the
//! paper's `k*`) or `HYMPI_CMA_THROTTLE` (`hympi-tune --cma` measures the model here). A rank whose data is not
//! one packed block goes through a packed buffer of its own, so the transfers are always
//! between packed bytes whatever the datatypes. A failed transfer still publishes `s + 1`
//! (nobody waits forever) and is reported as `MPI_ERR_OTHER`.

use crate::coll::algos::blocks::Blocks;
use crate::coll::sched::Span;
use crate::core::error::{fail, MpiResult};
use crate::mpi_abi::consts::MPI_ERR_OTHER;
use crate::platform::cma;
use crate::platform::config::{self, Knob, Setting};
use crate::transport::shm::collslot::Slot;
use std::sync::OnceLock;

use super::shm::{pack, unpack, wait, wait_all};

/// A large on-node collective with single-copy transfers.
#[derive(Debug)]
pub enum Call {
    /// `MPI_Scatter` from `root`.
    Scatter {
        /// The root's send blocks (`None` on the others).
        send: Option<Blocks>,
        /// This rank's receive buffer (`None`: `MPI_IN_PLACE` at the root).
        recv: Option<Span>,
        /// Root rank.
        root: usize,
        /// Bytes per block.
        block: usize,
        /// The root's process id.
        root_pid: i32,
        /// At most this many ranks read from the root at once.
        throttle: usize,
    },
    /// `MPI_Gather` to `root`.
    Gather {
        /// This rank's block (`None`: `MPI_IN_PLACE` at the root).
        send: Option<Span>,
        /// The root's receive blocks (`None` on the others).
        recv: Option<Blocks>,
        /// Root rank.
        root: usize,
        /// Bytes per block.
        block: usize,
        /// The root's process id.
        root_pid: i32,
        /// At most this many ranks write into the root at once.
        throttle: usize,
    },
    /// `MPI_Alltoall` with equal blocks.
    Alltoall {
        /// Send blocks (`None`: `MPI_IN_PLACE`, the receive blocks).
        send: Option<Blocks>,
        /// Receive blocks.
        recv: Blocks,
        /// Process id of every rank.
        pids: Vec<i32>,
    },
    /// `MPI_Allgather`.
    Allgather {
        /// This rank's block (`None`: `MPI_IN_PLACE`, block `rank` of `recv`).
        own: Option<Span>,
        /// Receive blocks.
        recv: Blocks,
        /// Process id of every rank.
        pids: Vec<i32>,
    },
}

/// The throttle of this node: `HYMPI_CMA_THROTTLE`, else the built-in contention model's
/// best number of concurrent readers ([`crate::platform::cma_model::Cma::best_throttle`], the
/// paper's `k*`; 4 for its Broadwell fit). It is not capped by the CPUs: on an
/// oversubscribed node the readers beyond them time-share, and a chain of hand-overs costs
/// more wake-ups (measured on 4 ranks and 2 CPUs: 3 readers at once beat 2 by 1.3x at 4 MiB).
pub fn throttle() -> usize {
    static K: OnceLock<usize> = OnceLock::new();
    *K.get_or_init(|| match config::setting(Knob::CmaThrottle) {
        Setting::Value(k) => k.max(1) as usize,
        _ => crate::platform::cma_model::BUILT_IN.best_throttle(),
    })
}

/// A rank's data as one run of packed bytes: the user buffer itself when it is one, else a
/// staging buffer of its own.
struct Packed {
    addr: usize,
    staging: Vec<u8>,
}

impl Packed {
    /// `blocks`' first `n` blocks of `b` bytes, packed (copied into staging when `fill`).
    ///
    /// # Safety
    /// `blocks` describes valid memory for `n` blocks.
    unsafe fn of_blocks(blocks: &Blocks, n: usize, fill: bool) -> Packed {
        if blocks.is_packed() {
            return Packed {
                addr: blocks.first.addr,
                staging: Vec::new(),
            };
        }
        let b = blocks.packed;
        let mut staging = vec![0u8; n * b];
        if fill {
            for i in 0..n {
                // SAFETY: caller's guarantee; `staging` has room for block `i`.
                unsafe { pack(&blocks.block(i), staging.as_mut_ptr().add(i * b)) };
            }
        }
        let addr = staging.as_mut_ptr() as usize;
        Packed { addr, staging }
    }

    /// `span` as packed bytes (copied into staging when `fill`).
    ///
    /// # Safety
    /// `span` describes valid memory.
    unsafe fn of_span(span: &Span, fill: bool) -> Packed {
        if span.is_contiguous() {
            return Packed {
                addr: span.addr,
                staging: Vec::new(),
            };
        }
        let mut staging = vec![0u8; span.packed()];
        if fill {
            // SAFETY: caller's guarantee; `staging` has the packed size.
            unsafe { pack(span, staging.as_mut_ptr()) };
        }
        let addr = staging.as_mut_ptr() as usize;
        Packed { addr, staging }
    }

    fn staged(&self) -> bool {
        !self.staging.is_empty()
    }
}

/// Publishes `addr` as this rank's word of call `s`.
fn publish_addr(slot: Slot, p: usize, me: usize, s: u64, addr: usize) -> MpiResult<()> {
    // SAFETY: an area holds at least 8 bytes and is 16-byte aligned; `contribute` writes it
    // only once its previous readers are done.
    super::shm::contribute(slot, p, me, s, |d| unsafe {
        (d as *mut u64).write(addr as u64)
    })
}

/// The address rank `r` published for call `s` (after [`Slot::ready`]).
fn address_of(slot: Slot, r: usize, s: u64) -> u64 {
    // SAFETY: rank `r` published its word for call `s` (the caller waited for it) and keeps
    // it until every rank entered call `s + 1`.
    unsafe { (slot.data(r, s) as *const u64).read() }
}

/// Runs `call` as call `s` (and `s + 1`) of `slot`, as rank `me` of `p`.
pub fn run(call: &Call, slot: Slot, s: u64, me: usize, p: usize) -> MpiResult<()> {
    match call {
        Call::Scatter {
            send,
            recv,
            root,
            block,
            root_pid,
            throttle,
        } => scatter(
            slot,
            s,
            me,
            p,
            send.as_ref(),
            recv.as_ref(),
            (*root, *root_pid),
            *block,
            *throttle,
        ),
        Call::Gather {
            send,
            recv,
            root,
            block,
            root_pid,
            throttle,
        } => gather(
            slot,
            s,
            me,
            p,
            send.as_ref(),
            recv.as_ref(),
            (*root, *root_pid),
            *block,
            *throttle,
        ),
        Call::Alltoall { send, recv, pids } => alltoall(slot, s, me, p, send.as_ref(), recv, pids),
        Call::Allgather { own, recv, pids } => allgather(slot, s, me, p, own.as_ref(), recv, pids),
    }
}

/// Rank of reader `j` (0-based, numbered from the root).
fn reader(root: usize, p: usize, j: usize) -> usize {
    (root + 1 + j) % p
}

/// Waits until this reader's turn: the root's address is out and, under the throttle `k`,
/// reader `j - k` of the chain has finished.
fn wait_turn(slot: Slot, s: u64, root: usize, p: usize, me: usize, k: usize) -> MpiResult<()> {
    wait(|| slot.ready(root, s))?;
    let j = (me + p - root - 1) % p;
    if j >= k {
        let before = reader(root, p, j - k);
        wait(|| slot.ready(before, s + 1))?;
    }
    Ok(())
}

/// Reports a failed transfer of `function` with process `pid`.
fn transfer_failed(function: &str, pid: i32, e: std::io::Error) -> MpiResult<()> {
    fail(
        MPI_ERR_OTHER,
        format!("{function}: single-copy transfer with process {pid} failed: {e}"),
    )
}

#[allow(clippy::too_many_arguments)]
fn scatter(
    slot: Slot,
    s: u64,
    me: usize,
    p: usize,
    send: Option<&Blocks>,
    recv: Option<&Span>,
    (root, root_pid): (usize, i32),
    b: usize,
    k: usize,
) -> MpiResult<()> {
    if me == root {
        let send = send.expect("the root has send blocks");
        // SAFETY: the root's send buffer holds `p` blocks (MPI's contract).
        let src = unsafe { Packed::of_blocks(send, p, true) };
        publish_addr(slot, p, me, s, src.addr)?;
        if let Some(r) = recv {
            // SAFETY: `src` holds `p` packed blocks; `r` is the caller's receive buffer.
            unsafe { unpack(r, (src.addr + root * b) as *const u8, b) };
        }
        slot.publish(me, s + 1);
        return wait_all(slot, p, s + 1);
    }
    let recv = recv.expect("a non-root receives");
    slot.publish(me, s);
    // SAFETY: the caller's receive buffer holds one block.
    let dst = unsafe { Packed::of_span(recv, false) };
    let moved = wait_turn(slot, s, root, p, me, k).map(|()| {
        let remote = address_of(slot, root, s) + (me * b) as u64;
        // SAFETY: `dst` has room for the block; the kernel checks the remote range, which
        // the root keeps until it sees our `s + 1`.
        unsafe { cma::read_from(root_pid, remote, dst.addr as *mut u8, b) }
    });
    slot.publish(me, s + 1);
    match moved? {
        Err(e) => transfer_failed("MPI_Scatter", root_pid, e),
        Ok(()) => {
            if dst.staged() {
                // SAFETY: the staging holds the block; `recv` is the caller's buffer.
                unsafe { unpack(recv, dst.staging.as_ptr(), b) };
            }
            Ok(())
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn gather(
    slot: Slot,
    s: u64,
    me: usize,
    p: usize,
    send: Option<&Span>,
    recv: Option<&Blocks>,
    (root, root_pid): (usize, i32),
    b: usize,
    k: usize,
) -> MpiResult<()> {
    if me == root {
        let recv = recv.expect("the root has receive blocks");
        // SAFETY: the root's receive buffer holds `p` blocks (MPI's contract).
        let dst = unsafe { Packed::of_blocks(recv, p, false) };
        publish_addr(slot, p, me, s, dst.addr)?;
        if let Some(own) = send {
            // SAFETY: block `root` of `dst` has room for the block.
            unsafe { pack(own, (dst.addr + root * b) as *mut u8) };
        }
        slot.publish(me, s + 1);
        wait_all(slot, p, s + 1)?;
        if dst.staged() {
            for r in (0..p).filter(|&r| r != root || send.is_some()) {
                // SAFETY: the staging holds every block; `recv` is the caller's buffer.
                unsafe { unpack(&recv.block(r), dst.staging.as_ptr().add(r * b), b) };
            }
        }
        return Ok(());
    }
    let send = send.expect("a non-root sends");
    // SAFETY: the caller's send buffer holds one block.
    let src = unsafe { Packed::of_span(send, true) };
    slot.publish(me, s);
    let moved = wait_turn(slot, s, root, p, me, k).map(|()| {
        let remote = address_of(slot, root, s) + (me * b) as u64;
        // SAFETY: `src` holds the block; the kernel checks the remote range, which the root
        // keeps until it sees our `s + 1`.
        unsafe { cma::write_to(root_pid, src.addr as *const u8, remote, b) }
    });
    slot.publish(me, s + 1);
    match moved? {
        Err(e) => transfer_failed("MPI_Gather", root_pid, e),
        Ok(()) => Ok(()),
    }
}

/// The peer a rank reads from in step `i` of a pairwise exchange of `p` ranks.
fn pairwise_peer(me: usize, p: usize, i: usize) -> usize {
    if p.is_power_of_two() {
        me ^ i
    } else {
        (me + p - i) % p
    }
}

/// Reads `b` bytes at `remote` in process `pid` into block `r` of `recv` (through `bounce`
/// when the blocks are not packed).
fn read_block(
    pid: i32,
    remote: u64,
    recv: &Blocks,
    r: usize,
    b: usize,
    bounce: &mut [u8],
) -> std::io::Result<()> {
    if recv.is_packed() {
        let dst = recv.first.addr + r * b;
        // SAFETY: block `r` of the caller's packed receive buffer has room for `b` bytes.
        return unsafe { cma::read_from(pid, remote, dst as *mut u8, b) };
    }
    // SAFETY: `bounce` has `b` bytes.
    unsafe { cma::read_from(pid, remote, bounce.as_mut_ptr(), b)? };
    // SAFETY: `bounce` holds the block; block `r` of `recv` is the caller's memory.
    unsafe { unpack(&recv.block(r), bounce.as_ptr(), b) };
    Ok(())
}

/// Copies from every peer of `order` once, with `copy`: in that order while the peers have
/// published their addresses for call `s`, else from the first of them that has, so a
/// descheduled peer (an oversubscribed node) does not hold up the copies that could go on.
/// With every peer in step (a quiet node) the order is the contention-free one. Stops at the
/// first failed copy and returns it; `Err` only when waiting failed.
fn read_in_order<E>(
    slot: Slot,
    s: u64,
    mut order: Vec<usize>,
    mut copy: impl FnMut(usize) -> Result<(), E>,
) -> MpiResult<Result<(), E>> {
    while !order.is_empty() {
        let mut next = None;
        wait(|| {
            next = order.iter().position(|&r| slot.ready(r, s));
            next.is_some()
        })?;
        let peer = order.remove(next.expect("a peer is ready"));
        if let Err(e) = copy(peer) {
            return Ok(Err(e));
        }
    }
    Ok(Ok(()))
}

fn alltoall(
    slot: Slot,
    s: u64,
    me: usize,
    p: usize,
    send: Option<&Blocks>,
    recv: &Blocks,
    pids: &[i32],
) -> MpiResult<()> {
    let b = recv.packed;
    // In place, the blocks others read are a copy: our own buffer changes under them.
    // SAFETY: the send (or, in place, receive) buffer holds `p` blocks (MPI's contract).
    let src = unsafe {
        match send {
            Some(sb) => Packed::of_blocks(sb, p, true),
            None => {
                let mut copy = vec![0u8; p * b];
                for i in 0..p {
                    pack(&recv.block(i), copy.as_mut_ptr().add(i * b));
                }
                Packed {
                    addr: copy.as_mut_ptr() as usize,
                    staging: copy,
                }
            }
        }
    };
    publish_addr(slot, p, me, s, src.addr)?;
    if send.is_some() {
        // SAFETY: `src` holds `p` packed blocks; block `me` of `recv` is the caller's.
        unsafe { unpack(&recv.block(me), (src.addr + me * b) as *const u8, b) };
    }
    let mut bounce = vec![0u8; if recv.is_packed() { 0 } else { b }];
    let order = (1..p).map(|i| pairwise_peer(me, p, i)).collect();
    let moved = read_in_order(slot, s, order, |peer| {
        let remote = address_of(slot, peer, s) + (me * b) as u64;
        read_block(pids[peer], remote, recv, peer, b, &mut bounce).map_err(|e| (pids[peer], e))
    })?;
    slot.publish(me, s + 1);
    wait_all(slot, p, s + 1)?;
    match moved {
        Err((pid, e)) => transfer_failed("MPI_Alltoall", pid, e),
        Ok(()) => Ok(()),
    }
}

fn allgather(
    slot: Slot,
    s: u64,
    me: usize,
    p: usize,
    own: Option<&Span>,
    recv: &Blocks,
    pids: &[i32],
) -> MpiResult<()> {
    let b = recv.packed;
    let mine = own.cloned().unwrap_or_else(|| recv.block(me));
    // SAFETY: `mine` is the caller's block (MPI's contract).
    let src = unsafe { Packed::of_span(&mine, true) };
    publish_addr(slot, p, me, s, src.addr)?;
    if own.is_some() {
        // SAFETY: `src` holds the packed block; block `me` of `recv` is the caller's.
        unsafe { unpack(&recv.block(me), src.addr as *const u8, b) };
    }
    let mut bounce = vec![0u8; if recv.is_packed() { 0 } else { b }];
    let order = (1..p).map(|i| (me + p - i) % p).collect();
    let moved = read_in_order(slot, s, order, |peer| {
        let remote = address_of(slot, peer, s);
        read_block(pids[peer], remote, recv, peer, b, &mut bounce).map_err(|e| (pids[peer], e))
    })?;
    slot.publish(me, s + 1);
    wait_all(slot, p, s + 1)?;
    match moved {
        Err((pid, e)) => transfer_failed("MPI_Allgather", pid, e),
        Ok(()) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairwise_peers_read_each_process_once_per_step() {
        for p in 2..=9 {
            for i in 1..p {
                let mut read = vec![0; p];
                for me in 0..p {
                    let peer = pairwise_peer(me, p, i);
                    assert_ne!(peer, me, "p {p} step {i}");
                    read[peer] += 1;
                }
                assert!(read.iter().all(|&n| n == 1), "p {p} step {i}: {read:?}");
            }
            // Over the steps every rank reads every other rank once.
            for me in 0..p {
                let mut peers: Vec<usize> = (1..p).map(|i| pairwise_peer(me, p, i)).collect();
                peers.sort_unstable();
                assert_eq!(peers, (0..p).filter(|&r| r != me).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn readers_form_throttle_chains_from_the_root() {
        // Readers numbered from the root: reader j waits on reader j - k, so at most k read
        // at once and every non-root reads exactly once.
        for p in 2..=9 {
            for root in 0..p {
                let ranks: Vec<usize> = (0..p - 1).map(|j| reader(root, p, j)).collect();
                let mut sorted = ranks.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..p).filter(|&r| r != root).collect::<Vec<_>>());
                for (j, &r) in ranks.iter().enumerate() {
                    assert_eq!((r + p - root - 1) % p, j);
                }
            }
        }
    }
}
