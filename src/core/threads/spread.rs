//! One communicator's point-to-point traffic spread over several VCIs, as the MPI-4
//! assertions license it.
//!
//! A communicator created with `mpi_assert_no_any_source` and/or `mpi_assert_no_any_tag` set
//! to `true` (`MPI_Comm_dup_with_info`, `MPI_Comm_idup_with_info`, and `MPI_Comm_dup` of such
//! a communicator) no longer maps to one VCI: a message with source `s` and tag `t` on it is
//! matched on VCI `(id + s + t) % n` (`s` only when sources are asserted, `t` only when tags
//! are), `id` being the communicator's context id. A receive names its source and tag (the
//! assertions rule out the wildcards that would have to search every VCI, and hympi reports
//! such a receive or probe as an error), so it is posted on the VCI where its messages
//! arrive. Messages that one receive could match, from one source with one tag, share a VCI
//! and keep their order, so MPI's non-overtaking rule holds; messages in different VCIs could
//! never be matched by the same receive. Threads that share such a communicator but use
//! different tags (or talk to different ranks) therefore take different VCI locks.
//!
//! The choice is local to the receiving process: senders need not agree (a sender locks the
//! VCI of its destination and tag only to spread its own lock traffic). Only the
//! point-to-point context is spread; collectives on the communicator keep its VCI. A
//! communicator that also carries hympi's `hympi_per_thread_comm` = `true` keeps its one VCI
//! (one thread uses it: spreading would only share its VCIs with other threads'
//! communicators), as does one pinned by MPICH's `vci` hints. `MPI_Comm_set_info` records the
//! assertions without re-routing a communicator in use.

use crate::core::objects::comm::CONTEXTS_PER_ID;
use crate::core::objects::context::MAX_IDS;
use std::sync::atomic::{AtomicU8, Ordering};

/// Spread by source rank (`mpi_assert_no_any_source`).
pub const BY_SOURCE: u8 = 1;
/// Spread by tag (`mpi_assert_no_any_tag`).
pub const BY_TAG: u8 = 2;

/// Spreading mode of each context id (0: not spread).
static MODE: [AtomicU8; MAX_IDS as usize] = [const { AtomicU8::new(0) }; MAX_IDS as usize];

/// The spreading mode of context id `id` (0: not spread).
#[inline(always)]
pub fn mode(id: u32) -> u8 {
    MODE.get(id as usize)
        .map_or(0, |m| m.load(Ordering::Relaxed))
}

/// Sets the spreading mode of context id `id` (0 to stop; when it is released).
pub fn set(id: u32, mode: u8) {
    if let Some(m) = MODE.get(id as usize) {
        m.store(mode, Ordering::Relaxed);
    }
}

/// The mode the assertions of a communicator's info ask for (`value` of a key: its value,
/// if set).
pub fn mode_of_hints<'a>(value: impl Fn(&str) -> Option<&'a str>) -> u8 {
    let on = |k: &str| value(k).map(str::trim) == Some("true");
    let mut m = 0;
    if on("mpi_assert_no_any_source") {
        m |= BY_SOURCE;
    }
    if on("mpi_assert_no_any_tag") {
        m |= BY_TAG;
    }
    m
}

/// The VCI (of `n`) of a message with source `src` and tag `tag` on spread context id `id`
/// in mode `mode`; `None` for a wildcard in a spread dimension.
#[inline(always)]
pub fn vci(id: u32, mode: u8, src: i32, tag: i32, n: usize) -> Option<usize> {
    let mut k = id;
    if mode & BY_SOURCE != 0 {
        k = k.wrapping_add(u32::try_from(src).ok()?);
    }
    if mode & BY_TAG != 0 {
        k = k.wrapping_add(u32::try_from(tag).ok()?);
    }
    Some(k as usize % n.max(1))
}

/// The VCI of a message on wire context `ctx` when that is a spread point-to-point context;
/// `None` otherwise (the context's own VCI applies).
#[inline(always)]
pub fn vci_of_msg(ctx: u32, src: i32, tag: i32, n: usize) -> Option<usize> {
    if !ctx.is_multiple_of(CONTEXTS_PER_ID) {
        return None;
    }
    let id = ctx / CONTEXTS_PER_ID;
    match mode(id) {
        0 => None,
        m => vci(id, m, src, tag, n),
    }
}

/// Whether a receive or probe with source `src` and tag `tag` is allowed on spread context
/// id `id`: the error class and message when it uses a wildcard its communicator asserted
/// away.
pub fn check_wildcards(id: u32, src: i32, tag: i32) -> Result<(), (i32, &'static str)> {
    use crate::mpi_abi::consts::{MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_ERR_RANK, MPI_ERR_TAG};
    let m = mode(id);
    if m & BY_SOURCE != 0 && src == MPI_ANY_SOURCE {
        return Err((
            MPI_ERR_RANK,
            "MPI_ANY_SOURCE on a communicator created with mpi_assert_no_any_source = true",
        ));
    }
    if m & BY_TAG != 0 && tag == MPI_ANY_TAG {
        return Err((
            MPI_ERR_TAG,
            "MPI_ANY_TAG on a communicator created with mpi_assert_no_any_tag = true",
        ));
    }
    Ok(())
}

impl crate::core::runtime::Runtime {
    /// Spreads new intracommunicator `idx` over the VCIs when its assertions allow (see the
    /// module doc); one pinned to a VCI by MPICH's hints stays there. Called when it is
    /// created, so that no receive is posted yet; messages that already arrived move to the
    /// VCIs that will match them.
    pub fn apply_spread_hints(&mut self, idx: u32) {
        let Some(c) = self.comms.get(idx) else {
            return;
        };
        // With one VCI the spreading changes nothing but still rules out the asserted
        // wildcards, so that a program behaves the same with any number of VCIs.
        if c.is_inter() || c.endpoints.is_some() || c.stream.is_some() {
            return;
        }
        let id = c.context_id();
        let m = mode_of_hints(|k| c.info.get(k));
        // A communicator one thread uses gains nothing and would share its VCIs with the
        // other threads' communicators.
        let per_thread = c.info.get("hympi_per_thread_comm").map(str::trim) == Some("true");
        if m == 0 || per_thread || crate::core::threads::vci::pinned(id) {
            return;
        }
        let from = self.vcis.vci_of_ctx(c.ctx);
        let handle = self.comm_handle(idx);
        // The fast paths relearn it, then on every VCI.
        self.matchers.forget_comm(idx, handle);
        set(id, m);
        self.matchers.spread_out(id, from);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn spreads_by_the_asserted_dimensions_only() {
        assert_eq!(vci(7, BY_TAG, 3, 5, 4), Some((7 + 5) % 4));
        assert_eq!(vci(7, BY_SOURCE, 3, 5, 4), Some((7 + 3) % 4));
        assert_eq!(vci(7, BY_SOURCE | BY_TAG, 3, 5, 4), Some((7 + 3 + 5) % 4));
        // The wildcards of a spread dimension have no VCI; the others do not matter.
        assert_eq!(vci(7, BY_TAG, -1, -1, 4), None);
        assert_eq!(vci(7, BY_TAG, -1, 2, 4), Some(1));
        assert_eq!(vci(7, BY_SOURCE, -2, 2, 4), None);
    }

    #[test]
    fn only_point_to_point_contexts_of_spread_ids() {
        let id = MAX_IDS - 3;
        assert_eq!(vci_of_msg(id * CONTEXTS_PER_ID, 1, 2, 8), None);
        set(id, BY_TAG);
        assert_eq!(
            vci_of_msg(id * CONTEXTS_PER_ID, 1, 2, 8),
            Some((id as usize + 2) % 8)
        );
        assert_eq!(
            vci_of_msg(id * CONTEXTS_PER_ID + 1, 1, 2, 8),
            None,
            "collectives"
        );
        use crate::mpi_abi::consts::{MPI_ANY_SOURCE, MPI_ANY_TAG};
        assert!(check_wildcards(id, MPI_ANY_SOURCE, 3).is_ok());
        assert_eq!(
            check_wildcards(id, 0, MPI_ANY_TAG).unwrap_err().0,
            crate::mpi_abi::consts::MPI_ERR_TAG
        );
        set(id, 0);
        assert_eq!(vci_of_msg(id * CONTEXTS_PER_ID, 1, 2, 8), None);
    }

    #[test]
    fn hints_name_the_mode() {
        let info = |k: &str| match k {
            "mpi_assert_no_any_tag" => Some(" true"),
            "mpi_assert_no_any_source" => Some("false"),
            _ => None,
        };
        assert_eq!(mode_of_hints(info), BY_TAG);
        assert_eq!(mode_of_hints(|_| None), 0);
    }
}
