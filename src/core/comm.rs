//! Communicators: context id, rank translation and error handler.

use crate::core::errhandler::Errh;

/// Index of `MPI_COMM_WORLD` in the communicator table.
pub const WORLD: u32 = 0;
/// Index of `MPI_COMM_SELF` in the communicator table.
pub const SELF: u32 = 1;

/// How communicator ranks map to world ranks.
#[derive(Clone, Debug)]
pub enum RankMap {
    /// Rank `r` is world rank `r`.
    Identity,
    /// Rank `r` is world rank `table[r]`.
    Table(Vec<u32>),
}

/// A communicator.
#[derive(Debug)]
pub struct Comm {
    /// Context id of its point-to-point traffic (collectives use `ctx + 1`).
    pub ctx: u32,
    /// This process's rank in it.
    pub rank: i32,
    /// Number of ranks.
    pub size: i32,
    /// Rank translation.
    pub map: RankMap,
    /// Error handler.
    pub errh: Errh,
    /// Name (`MPI_Comm_set_name`).
    pub name: String,
    /// Virtual topology (`MPI_Cart_create`, `MPI_Graph_create`, `MPI_Dist_graph_create*`).
    pub topo: Option<std::sync::Arc<crate::core::topo::Topology>>,
}

impl Comm {
    /// World rank of communicator rank `r` (which must be in range).
    #[inline]
    pub fn world_rank(&self, r: i32) -> u32 {
        match &self.map {
            RankMap::Identity => r as u32,
            RankMap::Table(t) => t[r as usize],
        }
    }
}
