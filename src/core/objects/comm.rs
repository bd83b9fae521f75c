//! Communicators: context id, groups (rank translation), error handler, attributes and hints.
//!
//! Context ids: every communicator owns one *context id* `id`, agreed by its members (see
//! `core::objects::context`), which gives it four wire contexts: `4*id` for point-to-point traffic,
//! `4*id + 1` for its internal collective traffic, and for an intercommunicator `4*id + 2` and
//! `4*id + 3` for its hidden local-group communicator. Messages on different contexts never
//! match each other, so user wildcards never see internal traffic.

use crate::core::objects::errhandler::Errh;
use crate::core::objects::info::Info;

/// Index of `MPI_COMM_WORLD` in the communicator table.
pub const WORLD: u32 = 0;
/// Index of `MPI_COMM_SELF` in the communicator table.
pub const SELF: u32 = 1;
pub use crate::transport::wire::CONTEXTS_PER_ID;

/// How communicator ranks map to world ranks.
#[derive(Clone, Debug)]
pub enum RankMap {
    /// Rank `r` is world rank `r`.
    Identity,
    /// Rank `r` is world rank `table[r]`.
    Table(Vec<u32>),
}

impl RankMap {
    /// World rank of rank `r`.
    #[inline(always)]
    pub fn world(&self, r: i32) -> u32 {
        match self {
            RankMap::Identity => r as u32,
            RankMap::Table(t) => t[r as usize],
        }
    }

    /// The world ranks of ranks `0..size`.
    pub fn members(&self, size: i32) -> Vec<u32> {
        (0..size).map(|r| self.world(r)).collect()
    }
}

/// The remote group of an intercommunicator.
#[derive(Clone, Debug)]
pub struct RemoteGroup {
    /// Number of remote processes.
    pub size: i32,
    /// Remote rank to world rank.
    pub map: RankMap,
    /// Table index of the hidden intracommunicator of the local group.
    pub local_comm: u32,
    /// Whether the local group was ordered first by `MPI_Intercomm_create` (its leader had the
    /// lower world rank); used by `MPI_Intercomm_merge` when both sides pass the same `high`.
    pub local_first: bool,
}

/// A communicator.
#[derive(Debug)]
pub struct Comm {
    /// Point-to-point wire context (`4 * context id`); collectives use `ctx + 1`.
    pub ctx: u32,
    /// This process's rank in it (in the local group for an intercommunicator).
    pub rank: i32,
    /// Number of ranks (of the local group for an intercommunicator).
    pub size: i32,
    /// Rank translation of the (local) group.
    pub map: RankMap,
    /// Error handler.
    pub errh: Errh,
    /// Name (`MPI_Comm_set_name`).
    pub name: String,
    /// Remote group, for an intercommunicator.
    pub remote: Option<Box<RemoteGroup>>,
    /// Attributes: (keyval, value), in the order they were first set.
    pub attrs: Vec<(i32, usize)>,
    /// Hints in effect (`MPI_Comm_set_info` / `MPI_Comm_get_info`).
    pub info: Info,
    /// Hidden communicator (internal use by an intercommunicator): never given to the user.
    pub hidden: bool,
    /// Collectives started on it so far (names their traffic: see `coll::sched`).
    pub coll_seq: u32,
    /// Sequence number of the next nonblocking or persistent collective call, counted apart
    /// from the blocking ones (`coll::begin`).
    pub nb_coll_seq: u32,
    /// Communicators constructed from it so far (names the traffic and orders the
    /// context-id agreement of each: see `Runtime::next_construction`).
    pub build_seq: u32,
    /// Virtual topology (`MPI_Cart_create`, `MPI_Graph_create`, `MPI_Dist_graph_create*`).
    pub topo: Option<std::sync::Arc<crate::core::objects::topo::Topology>>,
    /// Endpoint communicator (`MPIX_Comm_create_endpoints`): the context of every rank.
    pub endpoints: Option<std::sync::Arc<Endpoints>>,
    /// Thread communicator (`MPIX_Threadcomm_init`): its handle stands for the endpoint of
    /// the calling thread between `MPIX_Threadcomm_start` and `MPIX_Threadcomm_finish`.
    pub threads: Option<std::sync::Arc<crate::core::threads::endpoints::ThreadComm>>,
    /// Stream communicator (`MPIX_Stream_comm_create*`): its streams and stream pairs.
    pub stream: Option<std::sync::Arc<crate::core::threads::stream::Attached>>,
    /// The collective layer's state on it: its slot for shared-memory collectives, if
    /// any, and cached selections ([`CollState`]).
    pub coll_shm: CollState,
    /// The session the communicator belongs to (its id; `None`: the world model).
    pub session: Option<u32>,
    /// Its node layout, computed on first use ([`crate::core::objects::nodes::layout`]).
    pub nodes: std::sync::OnceLock<std::sync::Arc<crate::core::objects::nodes::NodeLayout>>,
}

/// How many collectives the collective layer keeps a cached selection for on each
/// communicator ([`CollState::choice`]); the collective layer checks that its list of
/// collectives has this length.
pub const COLL_KINDS: usize = crate::platform::config::COLL_ALGORITHM_KNOBS.len();

/// The collective layer's state on a communicator, kept here and interpreted by `coll`: the
/// communicator owns the words, so that the core needs none of the collective layer's
/// types. Atomics only so that builders holding a shared reference to the runtime can
/// advance it; it is touched under the runtime only.
#[derive(Debug, Default)]
pub struct CollState {
    /// Its use of the node segment's collective region: [`CollState::UNKNOWN`] (not decided
    /// yet), [`CollState::OFF`] (not possible), or `SLOT0 + k` while it holds slot `k`.
    pub state: std::sync::atomic::AtomicU32,
    /// The sequence number of its last call in its slot.
    pub seq: std::sync::atomic::AtomicU64,
    /// The last selection for each collective (the collective layer's encoding).
    pub choice: [std::sync::atomic::AtomicU64; COLL_KINDS],
}

impl CollState {
    /// [`CollState::state`]: not decided yet.
    pub const UNKNOWN: u32 = 0;
    /// [`CollState::state`]: no slot, and none will be tried.
    pub const OFF: u32 = 1;
    /// [`CollState::state`] values from here on name slot `state - SLOT0`.
    pub const SLOT0: u32 = 2;

    /// The slot of the collective region it holds, if any.
    #[inline]
    pub fn slot(&self) -> Option<u32> {
        self.state
            .load(std::sync::atomic::Ordering::Relaxed)
            .checked_sub(Self::SLOT0)
    }
}

/// The ranks of an endpoint communicator: a process may hold several of them, each with its
/// own context id, hence its own matching queues and VCI. A message to rank `r` travels on
/// `r`'s context, so the receiving process files it with the right endpoint; the envelope's
/// source is the sender's rank in the communicator as usual.
#[derive(Debug)]
pub struct Endpoints {
    /// Point-to-point wire context of every rank.
    pub ctx_of_rank: Vec<u32>,
}

impl Comm {
    /// A new intracommunicator on context `ctx` with default handler, name and hints.
    pub fn intra(ctx: u32, rank: i32, size: i32, map: RankMap, errh: Errh) -> Comm {
        Comm {
            ctx,
            rank,
            size,
            map,
            errh,
            name: String::new(),
            remote: None,
            attrs: Vec::new(),
            info: Info::default(),
            hidden: false,
            coll_seq: 0,
            nb_coll_seq: 0,
            build_seq: 0,
            topo: None,
            endpoints: None,
            threads: None,
            stream: None,
            coll_shm: Default::default(),
            session: None,
            nodes: std::sync::OnceLock::new(),
        }
    }

    /// Point-to-point wire context of messages to rank `dest` (valid, not `MPI_PROC_NULL`):
    /// the communicator's own, or on an endpoint communicator the destination rank's.
    #[inline(always)]
    pub fn dest_ctx(&self, dest: i32) -> u32 {
        match &self.endpoints {
            None => self.ctx,
            Some(e) => e.ctx_of_rank[dest as usize],
        }
    }

    /// The context id (table entry in the context pool).
    #[inline]
    pub fn context_id(&self) -> u32 {
        self.ctx / CONTEXTS_PER_ID
    }

    /// World rank of point-to-point peer `r` (a remote rank on an intercommunicator), which
    /// must be in range.
    #[inline(always)]
    pub fn world_rank(&self, r: i32) -> u32 {
        match &self.remote {
            None => self.map.world(r),
            Some(g) => g.map.world(r),
        }
    }

    /// Number of point-to-point peers: the size, or the remote size of an intercommunicator.
    #[inline(always)]
    pub fn peer_count(&self) -> i32 {
        match &self.remote {
            None => self.size,
            Some(g) => g.size,
        }
    }

    /// Whether this is an intercommunicator.
    #[inline]
    pub fn is_inter(&self) -> bool {
        self.remote.is_some()
    }

    /// World ranks of the (local) group in rank order.
    pub fn members(&self) -> Vec<u32> {
        self.map.members(self.size)
    }
}
