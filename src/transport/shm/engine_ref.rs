//! The node transport's lanes ([`crate::transport::lanes`]) and their access from the fast
//! paths: whole engines (segment, cells, queues, fastboxes, per-pair sequence numbers), all
//! ranks of the node agreeing on their number.

use super::ShmEngine;
use crate::transport::lanes::{LaneBox, LaneTable};

pub use crate::transport::lanes::MAX_LANES;

/// The node transport's lanes.
pub static SHM_LANES: LaneTable<ShmEngine> = LaneTable::new();

/// The runtime's handle to one lane of the node transport.
pub type EngineBox = LaneBox<ShmEngine>;

/// Sets the number of lanes (at init, before any traffic).
pub fn set_lane_count(n: usize) {
    SHM_LANES.set_count(n);
}

/// The number of lanes in use (1 before `MPI_Init` chose it).
pub fn lane_count() -> usize {
    SHM_LANES.count()
}

/// The lane of the messages of wire context `ctx`.
#[inline(always)]
pub fn lane_of(ctx: u32) -> usize {
    SHM_LANES.lane_of(ctx)
}

/// Runs `f` on the engine of lane `lane`, if there is one. `serialize`: take the lane's
/// fast-path lock (the process has several VCIs and runs at `MPI_THREAD_MULTIPLE`).
///
/// # Safety
/// As [`LaneTable::with`]: the caller holds a VCI lock (`MPI_THREAD_MULTIPLE`) or is the only
/// thread inside MPI, and is not inside the slow path.
#[inline(always)]
pub unsafe fn with_engine<R>(
    lane: usize,
    serialize: bool,
    f: impl FnOnce(&mut ShmEngine) -> R,
) -> Option<R> {
    // SAFETY: forwarded from the caller.
    unsafe { SHM_LANES.with(lane, serialize, f) }
}
