//! Collective operations: algorithms that build schedules (`sched`), run blocking or in the
//! background. Each algorithm lives in its own file; `select` picks one per call.

pub mod algos;
pub mod sched;

use crate::core::error::{fail, MpiResult};
use crate::core::runtime::Runtime;
use sched::{coll_tag, Schedule};

/// What an algorithm needs to know about the communicator of a collective call.
#[derive(Clone, Copy, Debug)]
pub struct Ctx {
    /// Communicator table index.
    pub comm: u32,
    /// This process's rank.
    pub rank: i32,
    /// Number of ranks.
    pub size: i32,
}

impl Ctx {
    /// An empty schedule for this call.
    pub fn schedule(&self, tag: i32) -> Schedule {
        Schedule::new(self.comm, tag)
    }
}

/// Starts a collective on communicator handle `h`: resolves it (intracommunicators only for
/// now) and takes the next collective sequence number, whose tag names the call's traffic.
pub fn begin(rt: &mut Runtime, h: usize, function: &str) -> MpiResult<(Ctx, i32)> {
    let (idx, c) = rt.comm(h)?;
    if c.is_inter() {
        return fail(
            crate::abi::consts::MPI_ERR_UNSUPPORTED_OPERATION,
            format!("{function} on an intercommunicator is not implemented by hympi yet"),
        );
    }
    let ctx = Ctx {
        comm: idx,
        rank: c.rank,
        size: c.size,
    };
    let c = rt.comms.get_mut(idx).unwrap();
    let seq = c.coll_seq;
    c.coll_seq = c.coll_seq.wrapping_add(1);
    Ok((ctx, coll_tag(seq)))
}
