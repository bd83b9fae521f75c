//! Collective operations: algorithms that build schedules (`sched`), run blocking or in the
//! background. Each algorithm lives in its own file; [`tuning`] picks one per call.

pub mod algos;
pub mod cma;
pub mod inter;
pub mod sched;
pub mod shm;
pub mod tuning;

use crate::core::error::{fail, MpiResult};
use crate::core::runtime::Runtime;
use sched::{coll_tag, nb_coll_tag, Schedule};

/// What an algorithm needs to know about the communicator of a collective call.
#[derive(Clone, Copy, Debug)]
pub struct Ctx {
    /// Communicator table index.
    pub comm: u32,
    /// This process's rank.
    pub rank: i32,
    /// Number of ranks (of the local group on an intercommunicator).
    pub size: i32,
    /// The remote group, when the communicator is an intercommunicator.
    pub inter: Option<Inter>,
    /// A blocking call, which may take the shared-memory path ([`shm`]).
    pub blocking: bool,
    /// The nodes the ranks span, for the tables' `node_count` and `comm_avg_ppn`.
    pub shape: tuning::Shape,
}

/// What an intercommunicator's collective needs beyond [`Ctx`]: its remote group's size and
/// the hidden intracommunicator of its local group.
#[derive(Clone, Copy, Debug)]
pub struct Inter {
    /// Number of processes in the remote group.
    pub remote_size: i32,
    /// Table index of the hidden intracommunicator of the local group (same ranks as the
    /// local group of the intercommunicator).
    pub local: u32,
}

impl Ctx {
    /// An empty schedule for this call.
    pub fn schedule(&self, tag: i32) -> Schedule {
        Schedule::new(self.comm, tag)
    }
}

/// Starts a collective on communicator handle `h`: resolves it and takes the next collective
/// sequence number, whose tag names the call's traffic. Blocking and nonblocking (or
/// persistent) calls are numbered apart, in two halves of the tag space: in a correct
/// program both kinds come in the same order on every process, so each is matched by its
/// own count; and a program that crosses a blocking call with a pending nonblocking one
/// (an `MPI_Iallreduce` started before an `MPI_Barrier` on one process and after it on
/// another, as mpi4py's agreement fallback does) completes as under MPICH, whose blocking
/// and nonblocking collectives use different tags too. On an intercommunicator the prefix
/// reductions (`MPI_Scan`, `MPI_Exscan`: `MPI_ERR_COMM`) and the neighbourhood collectives
/// (no topology: `MPI_ERR_TOPOLOGY`) are refused; the other builders see [`Ctx::inter`].
pub fn begin(rt: &mut Runtime, h: usize, function: &str, blocking: bool) -> MpiResult<(Ctx, i32)> {
    let (idx, c) = rt.comm(h)?;
    let inter = c.remote.as_ref().map(|r| Inter {
        remote_size: r.size,
        local: r.local_comm,
    });
    if inter.is_some() {
        let name = function.to_ascii_lowercase();
        if name.contains("scan") {
            return fail(
                crate::mpi_abi::consts::MPI_ERR_COMM,
                format!("{function} is not defined on an intercommunicator"),
            );
        }
        if name.contains("neighbor") {
            return fail(
                crate::mpi_abi::consts::MPI_ERR_TOPOLOGY,
                format!("{function} needs a communicator with a process topology"),
            );
        }
    }
    // The node shape, for tables that choose by layout; one node never looks.
    let shape = if inter.is_none() && rt.node_names.len() > 1 {
        let l = crate::core::objects::nodes::layout(rt, idx);
        tuning::Shape::of(l.nodes(), l.node_of.len())
    } else {
        tuning::Shape::default()
    };
    let ctx = Ctx {
        comm: idx,
        rank: c.rank,
        size: c.size,
        inter,
        blocking,
        shape,
    };
    let c = rt.comms.get_mut(idx).unwrap();
    let tag = if blocking {
        let seq = c.coll_seq;
        c.coll_seq = c.coll_seq.wrapping_add(1);
        coll_tag(seq)
    } else {
        let seq = c.nb_coll_seq;
        c.nb_coll_seq = c.nb_coll_seq.wrapping_add(1);
        nb_coll_tag(seq)
    };
    Ok((ctx, tag))
}
