//! Every `HYMPI_*` environment variable, declared once ([`KNOBS`]): name, type and range,
//! default, tool-interface category and verbosity, and meaning. Reads go through [`Knob`]
//! (a mistyped knob is a compile error) and parse and clamp here; an unparsable value is
//! reported once on stderr and the default used. `hympi-info`, the tool interface
//! (`MPI_T_cvar_*`) and the README's knob table ([`markdown_table`]; a test keeps it current)
//! come from the same table.

/// A knob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Knob {
    /// `HYMPI_CMA`.
    Cma,
    /// `HYMPI_EAGER_MAX`.
    EagerMax,
    /// `HYMPI_SHM_CELLS`.
    ShmCells,
    /// `HYMPI_SHM_LANES`.
    ShmLanes,
    /// `HYMPI_SHM_CELL_SIZE`.
    ShmCellSize,
    /// `HYMPI_CMA_SPLIT_MIN`.
    CmaSplitMin,
    /// `HYMPI_CMA_THROTTLE`.
    CmaThrottle,
    /// `HYMPI_STREAM_MAX`.
    StreamMax,
    /// `HYMPI_DT_IOV_MIN`.
    DtIovMin,
    /// `HYMPI_THREAD_MODEL`.
    ThreadModel,
    /// `HYMPI_NUM_VCIS`.
    NumVcis,
    /// `HYMPI_STEAL`.
    Steal,
    /// `HYMPI_STEAL_MIN`.
    StealMin,
    /// `HYMPI_STEAL_CHUNK`.
    StealChunk,
    /// `HYMPI_STEAL_ACC_MIN`.
    StealAccMin,
    /// `HYMPI_STEAL_ACC`.
    StealAcc,
    /// `HYMPI_STATS`.
    Stats,
    /// `HYMPI_ASYNC_PROGRESS`.
    AsyncProgress,
    /// `HYMPI_COLL_TUNING_FILE`.
    CollTuningFile,
    /// `HYMPI_<COLL>_ALGORITHM`.
    CollAlgorithm,
    /// `HYMPI_SPIN`.
    Spin,
    /// `HYMPI_WAIT_SLEEP`.
    WaitSleep,
    /// `HYMPI_NODE`.
    Node,
    /// `HYMPI_OFI_PROVIDER`.
    OfiProvider,
    /// `HYMPI_OFI_ADDR`.
    OfiAddr,
    /// `HYMPI_HOST_RANKS`.
    HostRanks,
    /// `HYMPI_OFI_DIRECT_MIN`.
    OfiDirectMin,
    /// `HYMPI_OFI_LANES`.
    OfiLanes,
    /// `HYMPI_BIND`.
    Bind,
    /// `HYMPI_PMI_VERSION`.
    PmiVersion,
    /// `HYMPI_PEER_WATCH`.
    PeerWatch,
    /// `HYMPI_TRACE`.
    Trace,
    /// `HYMPI_TRACE_EVENTS`.
    TraceEvents,
    /// `HYMPI_NAME_DIR`.
    NameDir,
    /// `HYMPI_ACC_ATOMICS`.
    AccAtomics,
}

/// What values a knob takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// 0 (off) or any other integer (on).
    Flag,
    /// An integer, clamped to `[min, max]`.
    Int {
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
    },
    /// `auto` or an integer clamped to `[min, max]`.
    AutoInt {
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
    },
    /// `off` or an integer clamped to `[min, max]`.
    OffInt {
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
    },
    /// Text, checked by its reader.
    Text,
}

/// The tool interface's category of a knob (`MPI_T_category_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    /// How bytes move on the node.
    Transport,
    /// Thread models, VCIs, waiting.
    Threads,
    /// Stealing-aware waits.
    Stealing,
    /// Collective algorithms.
    Collectives,
    /// Statistics and tracing.
    Diagnostics,
}

/// The tool interface's verbosity of a knob (`MPI_T_VERBOSITY_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verbosity {
    /// For every user.
    UserBasic,
    /// For tuning, basic.
    TunerBasic,
    /// For tuning, detailed.
    TunerDetail,
}

/// The declaration of one knob.
#[derive(Debug)]
pub struct KnobSpec {
    /// The knob.
    pub knob: Knob,
    /// Environment variable name.
    pub name: &'static str,
    /// Its values.
    pub kind: Kind,
    /// Default value (as text).
    pub default: &'static str,
    /// Tool-interface category.
    pub category: Category,
    /// Tool-interface verbosity.
    pub verbosity: Verbosity,
    /// What it does.
    pub doc: &'static str,
}

/// Every knob, in the order of [`Knob`] (a test checks it).
pub const KNOBS: &[KnobSpec] = &[
    KnobSpec {
        knob: Knob::Cma,
        name: "HYMPI_CMA",
        kind: Kind::Flag,
        default: "1",
        category: Category::Transport,
        verbosity: Verbosity::UserBasic,
        doc: "1: single-copy large transfers with process_vm_readv when the kernel allows it; 0: pipelined copies through shared-memory cells",
    },
    KnobSpec {
        knob: Knob::EagerMax,
        name: "HYMPI_EAGER_MAX",
        kind: Kind::Int { min: 0, max: i64::MAX },
        default: "16320",
        category: Category::Transport,
        verbosity: Verbosity::TunerBasic,
        doc: "largest message (bytes) sent eagerly in one shared-memory cell; larger ones use rendezvous (capped by the cell payload); set, it also caps the network transport's eager limit, which is otherwise one network buffer's payload (32768)",
    },
    KnobSpec {
        knob: Knob::ShmCells,
        name: "HYMPI_SHM_CELLS",
        kind: Kind::Int { min: 4, max: 1 << 16 },
        default: "64",
        category: Category::Transport,
        verbosity: Verbosity::TunerDetail,
        doc: "shared-memory cells owned by each local rank",
    },
    KnobSpec {
        knob: Knob::ShmLanes,
        name: "HYMPI_SHM_LANES",
        kind: Kind::AutoInt { min: 1, max: 16 },
        default: "auto",
        category: Category::Transport,
        verbosity: Verbosity::TunerDetail,
        doc: "independent lanes of the node transport (segments with their own cells and queues; a context id always uses lane id % lanes), as chosen by local rank 0 (auto: its VCIs at MPI_THREAD_MULTIPLE, else 1; at most 16)",
    },
    KnobSpec {
        knob: Knob::ShmCellSize,
        name: "HYMPI_SHM_CELL_SIZE",
        kind: Kind::Int { min: 1024, max: 1 << 22 },
        default: "16384",
        category: Category::Transport,
        verbosity: Verbosity::TunerDetail,
        doc: "bytes per shared-memory cell (header included)",
    },
    KnobSpec {
        knob: Knob::CmaSplitMin,
        name: "HYMPI_CMA_SPLIT_MIN",
        kind: Kind::Int { min: 0, max: i64::MAX },
        default: "262144",
        category: Category::Transport,
        verbosity: Verbosity::TunerDetail,
        doc: "rendezvous messages of at least this many bytes are copied by both ranks at once when the sender is waiting (its half with process_vm_writev); 0 turns splitting off",
    },
    KnobSpec {
        knob: Knob::CmaThrottle,
        name: "HYMPI_CMA_THROTTLE",
        kind: Kind::AutoInt { min: 1, max: 1024 },
        default: "auto",
        category: Category::Collectives,
        verbosity: Verbosity::TunerBasic,
        doc: "at most this many ranks copy from (or into) one process's memory at once in the single-copy on-node Scatter and Gather (auto: the built-in contention model's best k = sqrt(page*beta/(lock*gamma2)), 4; `hympi-tune --cma` measures the model on this machine and prints its k)",
    },
    KnobSpec {
        knob: Knob::StreamMax,
        name: "HYMPI_STREAM_MAX",
        kind: Kind::AutoInt { min: 0, max: i64::MAX },
        default: "auto",
        category: Category::Transport,
        verbosity: Verbosity::TunerBasic,
        doc: "how a contiguous rendezvous from a waiting node peer is copied: streamed through shared-memory cells (two copies, on the two ranks' cores at once) or read with CMA. auto: the receiver measures both per power-of-two size class and takes the faster (core::p2p::copy_choice; one VM streamed 1 MiB at 51 against 30 GB/s, another read it with CMA at 49 against 16); a size: streamed up to it, CMA above; 0: never streamed",
    },
    KnobSpec {
        knob: Knob::DtIovMin,
        name: "HYMPI_DT_IOV_MIN",
        kind: Kind::OffInt { min: 0, max: i64::MAX },
        default: "off",
        category: Category::Transport,
        verbosity: Verbosity::TunerDetail,
        doc: "large noncontiguous sends whose contiguous pieces average at least this many bytes are copied by one vectored process_vm_readv from the sender's segments (one copy on one core; each remote segment costs a page pinning, ~0.5 us); off: every large noncontiguous send is packed through shared-memory cells while the receiver unpacks (two copies on two cores, measured 2-4x faster than the vectored read at every segment size, also with both ranks on one CPU)",
    },
    KnobSpec {
        knob: Knob::ThreadModel,
        name: "HYMPI_THREAD_MODEL",
        kind: Kind::Text,
        default: "vci",
        category: Category::Threads,
        verbosity: Verbosity::UserBasic,
        doc: "thread-safety model at MPI_THREAD_MULTIPLE: vci (a lock per VCI), global (one VCI, one lock for every call), lockq (a lock per VCI, tried: a nonblocking Isend/Irecv that misses it queues its operation for the lock holder and returns), csync (a lock per VCI behind a combining queue: the thread at its head runs the operations announced behind it) or offload (a communication thread runs every Isend/Irecv the application threads post to it); unknown names fall back to vci with a warning",
    },
    KnobSpec {
        knob: Knob::NumVcis,
        name: "HYMPI_NUM_VCIS",
        kind: Kind::AutoInt { min: 1, max: 64 },
        default: "auto",
        category: Category::Threads,
        verbosity: Verbosity::TunerBasic,
        doc: "VCIs (per-VCI locks, request tables and matching queues) at MPI_THREAD_MULTIPLE (auto: the CPUs this process may run on, at most 64; below MULTIPLE always 1)",
    },
    KnobSpec {
        knob: Knob::Steal,
        name: "HYMPI_STEAL",
        kind: Kind::Flag,
        default: "1",
        category: Category::Stealing,
        verbosity: Verbosity::UserBasic,
        doc: "1: stealing-aware waits: at MPI_THREAD_MULTIPLE a large single-copy receive becomes chunks that threads waiting inside MPI copy in parallel when another thread of the process is waiting, and a large accumulate into window memory of the node becomes chunks that waiting processes of the node reduce (HYMPI_STEAL_ACC_MIN, HYMPI_STEAL_ACC); 0: off",
    },
    KnobSpec {
        knob: Knob::StealMin,
        name: "HYMPI_STEAL_MIN",
        kind: Kind::Int { min: 1, max: i64::MAX },
        default: "1048576",
        category: Category::Stealing,
        verbosity: Verbosity::TunerBasic,
        doc: "smallest receive (bytes) cut into stealable chunks",
    },
    KnobSpec {
        knob: Knob::StealChunk,
        name: "HYMPI_STEAL_CHUNK",
        kind: Kind::Int { min: 0, max: i64::MAX },
        default: "0",
        category: Category::Stealing,
        verbosity: Verbosity::TunerDetail,
        doc: "chunk size (bytes) of stealable copies; 0: a quarter of the message, between 256 KiB and 1 MiB",
    },
    KnobSpec {
        knob: Knob::StealAccMin,
        name: "HYMPI_STEAL_ACC_MIN",
        kind: Kind::Int { min: 1, max: i64::MAX },
        default: "2097152",
        category: Category::Stealing,
        verbosity: Verbosity::TunerBasic,
        doc: "smallest contiguous accumulate into window memory of the node cut into 64 KiB chunks that processes waiting inside MPI on the node reduce with the origin (with HYMPI_STEAL=1, at any thread level)",
    },
    KnobSpec {
        knob: Knob::StealAcc,
        name: "HYMPI_STEAL_ACC",
        kind: Kind::Text,
        default: "auto",
        category: Category::Stealing,
        verbosity: Verbosity::TunerBasic,
        doc: "whether accumulates from HYMPI_STEAL_ACC_MIN are shared: auto (the origin times both ways per target memory kind and size class and keeps the faster, probing the other now and then) or always",
    },
    KnobSpec {
        knob: Knob::Stats,
        name: "HYMPI_STATS",
        kind: Kind::Flag,
        default: "0",
        category: Category::Diagnostics,
        verbosity: Verbosity::UserBasic,
        doc: "1: each rank prints its statistics to stderr at MPI_Finalize: per VCI, messages and bytes sent and received by protocol, lock acquisitions and misses, time waiting; the collective algorithms chosen; stealing, copy-choice and thread-model counters",
    },
    KnobSpec {
        knob: Knob::AsyncProgress,
        name: "HYMPI_ASYNC_PROGRESS",
        kind: Kind::Flag,
        default: "0",
        category: Category::Threads,
        verbosity: Verbosity::UserBasic,
        doc: "1: a library thread progresses communication while the application computes (the runtime then locks as at MPI_THREAD_MULTIPLE whatever the thread level)",
    },
    KnobSpec {
        knob: Knob::CollTuningFile,
        name: "HYMPI_COLL_TUNING_FILE",
        kind: Kind::Text,
        default: "",
        category: Category::Collectives,
        verbosity: Verbosity::TunerBasic,
        doc: "JSON table (MPICH's condition grammar) choosing collective algorithms; its matching rules win over the built-in table (docs/collectives.md)",
    },
    KnobSpec {
        knob: Knob::CollAlgorithm,
        name: "HYMPI_<COLL>_ALGORITHM",
        kind: Kind::Text,
        default: "auto",
        category: Category::Collectives,
        verbosity: Verbosity::TunerBasic,
        doc: "forces the algorithm of one collective, e.g. HYMPI_BCAST_ALGORITHM=knomial:k=4 or HYMPI_ALLREDUCE_ALGORITHM=ring (names in docs/collectives.md)",
    },
    KnobSpec {
        knob: Knob::Spin,
        name: "HYMPI_SPIN",
        kind: Kind::AutoInt { min: 0, max: i64::MAX },
        default: "auto",
        category: Category::Threads,
        verbosity: Verbosity::TunerDetail,
        doc: "empty polls before a waiting thread yields the CPU (auto: 2000; 64 at MPI_THREAD_MULTIPLE when the process has one CPU of the node; 1 when oversubscribed)",
    },
    KnobSpec {
        knob: Knob::WaitSleep,
        name: "HYMPI_WAIT_SLEEP",
        kind: Kind::Flag,
        default: "1",
        category: Category::Threads,
        verbosity: Verbosity::TunerDetail,
        doc: "1: a rank waiting for node peers sleeps on a futex its senders ring once a yield shows the node loaded (another process took the CPU for a slice), so that a message wakes it at once; 0: it keeps yielding (only jobs on one node, below MPI_THREAD_MULTIPLE)",
    },
    KnobSpec {
        knob: Knob::Node,
        name: "HYMPI_NODE",
        kind: Kind::Text,
        default: "",
        category: Category::Transport,
        verbosity: Verbosity::TunerDetail,
        doc: "the node this rank is on, as the launcher says (hympiexec --nodes sets it per rank: virtual nodes); ranks of one node talk through shared memory, ranks of different nodes through libfabric; empty: the host name",
    },
    KnobSpec {
        knob: Knob::OfiProvider,
        name: "HYMPI_OFI_PROVIDER",
        kind: Kind::Text,
        default: "tcp;ofi_rxm",
        category: Category::Transport,
        verbosity: Verbosity::UserBasic,
        doc: "libfabric provider of the network transport (between nodes), e.g. tcp;ofi_rxm or sockets; empty: libfabric's choice, which its own FI_PROVIDER narrows (FI_PROVIDER set and this unset also means libfabric's choice)",
    },
    KnobSpec {
        knob: Knob::OfiAddr,
        name: "HYMPI_OFI_ADDR",
        kind: Kind::Text,
        default: "",
        category: Category::Transport,
        verbosity: Verbosity::TunerDetail,
        doc: "the address the network transport's endpoint binds to (hympiexec sets 127.0.0.1 for virtual nodes); empty: the provider's default interface",
    },
    KnobSpec {
        knob: Knob::HostRanks,
        name: "HYMPI_HOST_RANKS",
        kind: Kind::Int { min: 0, max: i64::MAX },
        default: "0",
        category: Category::Threads,
        verbosity: Verbosity::TunerDetail,
        doc: "ranks of the job on this machine, which decides whether waiting ranks yield the CPU at once (hympiexec sets it: with virtual nodes a machine holds several nodes); 0: the node's ranks",
    },
    KnobSpec {
        knob: Knob::OfiDirectMin,
        name: "HYMPI_OFI_DIRECT_MIN",
        kind: Kind::OffInt { min: 1, max: i64::MAX },
        default: "131072",
        category: Category::Transport,
        verbosity: Verbosity::TunerDetail,
        doc: "network rendezvous messages of at least this many bytes go straight between the two user buffers (one tagged send, carried by the provider's own rendezvous); smaller ones, and all with off, are streamed in 32 KiB chunks through the transport's buffers (tcp;ofi_rxm: chunks win below 128 KiB, the direct send above)",
    },
    KnobSpec {
        knob: Knob::OfiLanes,
        name: "HYMPI_OFI_LANES",
        kind: Kind::AutoInt { min: 1, max: 16 },
        default: "auto",
        category: Category::Transport,
        verbosity: Verbosity::TunerDetail,
        doc: "independent lanes of the network transport (libfabric endpoints with their own completion queues and buffers; a context id always uses lane id % lanes, so each VCI drives its own endpoint), the fewest any rank of the job asks for (auto: its VCIs at MPI_THREAD_MULTIPLE, at most 4, else 1; at most 16; each costs an endpoint's buffers, about 22 MB resident with tcp;ofi_rxm, 5 MB with sockets)",
    },
    KnobSpec {
        knob: Knob::Bind,
        name: "HYMPI_BIND",
        kind: Kind::Flag,
        default: "1",
        category: Category::Threads,
        verbosity: Verbosity::UserBasic,
        doc: "1: a rank that another launcher (Hydra, Slurm) started without a binding binds its threads at MPI_Init to its domain of cores (hympiexec's rule: the cores it may use split among the node's ranks in contiguous blocks; never wider than its affinity, nothing when oversubscribed); 0: leave the affinity alone",
    },
    KnobSpec {
        knob: Knob::PmiVersion,
        name: "HYMPI_PMI_VERSION",
        kind: Kind::AutoInt { min: 1, max: 2 },
        default: "auto",
        category: Category::Transport,
        verbosity: Verbosity::UserBasic,
        doc: "the PMI protocol spoken over PMI_FD: 1 (PMI-1, hympiexec's and Hydra's default), 2 (PMI-2, as Slurm's srun --mpi=pmi2 and Hydra serve it); auto: 2 when PMI_JOBID is set (Slurm's pmi2 plugin sets it), else 1. PMI_PORT launches always speak PMI-1",
    },
    KnobSpec {
        knob: Knob::PeerWatch,
        name: "HYMPI_PEER_WATCH",
        kind: Kind::Flag,
        default: "1",
        category: Category::Transport,
        verbosity: Verbosity::UserBasic,
        doc: "1: under a launcher other than hympiexec (Slurm, Hydra), each rank watches its node's other ranks (pidfds) and, when one ends before MPI_Finalize, the node's ranks report it and exit with status 1 instead of waiting forever (srun without --kill-on-bad-exit would leave them); 0: no watch",
    },
    KnobSpec {
        knob: Knob::Trace,
        name: "HYMPI_TRACE",
        kind: Kind::Text,
        default: "",
        category: Category::Diagnostics,
        verbosity: Verbosity::UserBasic,
        doc: "a directory: each rank writes its timeline there as a Chrome-trace JSON file (rank-N.json, one track per thread: MPI calls with communicator, peer, tag, bytes and VCI, waits, collective schedule rounds, rendezvous copies) at MPI_Finalize or when the job aborts; hympi-trace-merge joins them",
    },
    KnobSpec {
        knob: Knob::TraceEvents,
        name: "HYMPI_TRACE_EVENTS",
        kind: Kind::Int { min: 16, max: 1 << 26 },
        default: "262144",
        category: Category::Diagnostics,
        verbosity: Verbosity::TunerBasic,
        doc: "events each thread keeps for HYMPI_TRACE (a ring: the oldest are dropped, and counted, when it is full)",
    },
    KnobSpec {
        knob: Knob::NameDir,
        name: "HYMPI_NAME_DIR",
        kind: Kind::Text,
        default: "",
        category: Category::Transport,
        verbosity: Verbosity::UserBasic,
        doc: "the directory of the name service (MPI_Publish_name, MPI_Lookup_name): a file per published service; jobs that see the same directory see each other's names (a shared file system: across hosts); empty: hympi-names-UID in the temporary directory",
    },
    KnobSpec {
        knob: Knob::AccAtomics,
        name: "HYMPI_ACC_ATOMICS",
        kind: Kind::Text,
        default: "hint",
        category: Category::Transport,
        verbosity: Verbosity::TunerBasic,
        doc: "how accumulates update MPI_Win_allocate(_shared) memory: hint (by hardware atomics, element by element without a lock, on windows whose mpi_accumulate_granularity info is 1 to 8 bytes; under a per-target lock otherwise), always (hardware atomics on every such window) or never (always the lock); elements no atomic instruction holds (unaligned, wider than 8 bytes, pairs with holes) always take the lock",
    },
];

/// What an `auto`/`off`-or-integer knob is set to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// `auto` (or unset with default `auto`).
    Auto,
    /// `off` (or unset with default `off`).
    Off,
    /// An integer, clamped to the knob's range.
    Value(i64),
}

impl Knob {
    /// The knob's declaration.
    pub fn spec(self) -> &'static KnobSpec {
        &KNOBS[self as usize]
    }

    /// Its environment variable.
    pub fn name(self) -> &'static str {
        self.spec().name
    }
}

/// The knob's value as set in the environment, else its default (as text, trimmed).
fn raw(k: Knob) -> String {
    std::env::var(k.name())
        .map(|v| v.trim().to_string())
        .unwrap_or_else(|_| k.spec().default.to_string())
}

/// Reports once per knob that `value` is not one it takes, and that the default is used.
fn invalid(k: Knob, value: &str) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static WARNED: AtomicU64 = AtomicU64::new(0);
    let bit = 1u64 << (k as u32 % 64);
    if WARNED.fetch_or(bit, Ordering::Relaxed) & bit == 0 {
        eprintln!(
            "hympi: {}={value} is not valid ({}); using the default {}",
            k.name(),
            expected(k.spec().kind),
            k.spec().default
        );
    }
}

/// What a knob of `kind` takes, for messages and the knob table.
fn expected(kind: Kind) -> String {
    let range = |min: i64, max: i64| {
        if max == i64::MAX {
            format!("an integer >= {min}")
        } else {
            format!("an integer in {min}..={max}")
        }
    };
    match kind {
        Kind::Flag => "0 or 1".to_string(),
        Kind::Int { min, max } => range(min, max),
        Kind::AutoInt { min, max } => format!("auto or {}", range(min, max)),
        Kind::OffInt { min, max } => format!("off or {}", range(min, max)),
        Kind::Text => "text".to_string(),
    }
}

/// Parses `value` as knob `k` takes it.
fn parse(k: Knob, value: &str) -> Option<Setting> {
    let int = |min: i64, max: i64| {
        value
            .parse::<i64>()
            .ok()
            .map(|v| Setting::Value(v.clamp(min, max)))
    };
    match k.spec().kind {
        Kind::Flag => int(i64::MIN, i64::MAX),
        Kind::Int { min, max } => int(min, max),
        Kind::AutoInt { min, max } => match value {
            "auto" | "" => Some(Setting::Auto),
            _ => int(min, max),
        },
        Kind::OffInt { min, max } => match value {
            "off" | "" => Some(Setting::Off),
            _ => int(min, max),
        },
        Kind::Text => None,
    }
}

/// The setting of a numeric knob: its value when valid, else (reported once) its default.
pub fn setting(k: Knob) -> Setting {
    let v = raw(k);
    parse(k, &v).unwrap_or_else(|| {
        invalid(k, &v);
        parse(k, k.spec().default).expect("a knob's default is valid")
    })
}

/// An integer or flag knob's value (clamped to its range). `auto`/`off` knobs read through
/// [`setting`].
pub fn int(k: Knob) -> i64 {
    match setting(k) {
        Setting::Value(v) => v,
        Setting::Auto | Setting::Off => {
            debug_assert!(false, "{} is read with setting()", k.name());
            0
        }
    }
}

/// Whether a flag knob is on (nonzero).
pub fn flag(k: Knob) -> bool {
    int(k) != 0
}

/// Whether knob `k` is set in the environment (to anything, even empty).
pub fn is_set(k: Knob) -> bool {
    std::env::var_os(k.name()).is_some()
}

/// A text knob's value (trimmed), else its default.
pub fn text(k: Knob) -> String {
    raw(k)
}

/// The README's table of knobs (name, default, what it takes, what it does).
pub fn markdown_table() -> String {
    let mut s = String::from("| Variable | Default | Takes | Meaning |\n|---|---|---|---|\n");
    for k in KNOBS {
        let default = if k.default.is_empty() {
            "(none)"
        } else {
            k.default
        };
        s.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            k.name,
            default,
            expected(k.kind),
            k.doc.replace('|', "\\|")
        ));
    }
    s
}

/// The collectives whose algorithm a knob can force (`HYMPI_<COLL>_ALGORITHM`, one knob each):
/// the name in tuning tables and the knob's name, in the order of the collective layer's
/// `tuning::COLLS` (which checks it). The tool interface lists one variable for each.
pub const COLL_ALGORITHM_KNOBS: [(&str, &str); 9] = [
    ("bcast", "HYMPI_BCAST_ALGORITHM"),
    ("reduce", "HYMPI_REDUCE_ALGORITHM"),
    ("allreduce", "HYMPI_ALLREDUCE_ALGORITHM"),
    ("allgather", "HYMPI_ALLGATHER_ALGORITHM"),
    ("alltoall", "HYMPI_ALLTOALL_ALGORITHM"),
    ("gather", "HYMPI_GATHER_ALGORITHM"),
    ("scatter", "HYMPI_SCATTER_ALGORITHM"),
    ("barrier", "HYMPI_BARRIER_ALGORITHM"),
    ("reduce_scatter", "HYMPI_REDUCE_SCATTER_ALGORITHM"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_follows_the_enum_and_every_default_parses() {
        for (i, k) in KNOBS.iter().enumerate() {
            assert_eq!(k.knob as usize, i, "{} out of order", k.name);
            assert!(k.name.starts_with("HYMPI_"));
            if k.kind != Kind::Text {
                assert!(
                    parse(k.knob, k.default).is_some(),
                    "{}: default {}",
                    k.name,
                    k.default
                );
            }
        }
    }

    #[test]
    fn values_are_parsed_and_clamped_by_kind() {
        assert_eq!(
            parse(Knob::ShmCells, "2"),
            Some(Setting::Value(4)),
            "clamped up"
        );
        assert_eq!(
            parse(Knob::ShmCells, "1000000"),
            Some(Setting::Value(1 << 16))
        );
        assert_eq!(parse(Knob::ShmCells, "many"), None);
        assert_eq!(parse(Knob::NumVcis, "auto"), Some(Setting::Auto));
        assert_eq!(parse(Knob::NumVcis, "500"), Some(Setting::Value(64)));
        assert_eq!(parse(Knob::DtIovMin, "off"), Some(Setting::Off));
        assert_eq!(parse(Knob::DtIovMin, "4096"), Some(Setting::Value(4096)));
        assert_eq!(parse(Knob::DtIovMin, "auto"), None);
        assert_eq!(parse(Knob::Cma, "0"), Some(Setting::Value(0)));
    }

    #[test]
    fn the_readme_knob_table_is_the_generated_one() {
        let readme = include_str!("../../README.md");
        let begin =
            "<!-- knobs:begin (generated: cargo run --bin hympi-info -- --knob-table) -->\n";
        let end = "<!-- knobs:end -->";
        let a = readme
            .find(begin)
            .expect("README has the knob table markers")
            + begin.len();
        let b = a + readme[a..].find(end).expect("end marker");
        assert_eq!(
            &readme[a..b],
            markdown_table(),
            "README.md's knob table is stale: regenerate it with `cargo run --bin hympi-info -- --knob-table`"
        );
    }
}
