//! Every `HYMPI_*` environment variable, declared once with its type, default and meaning.
//! `hympi-info` prints this table; the library reads its values at `MPI_Init`.

/// One knob.
pub struct Knob {
    /// Environment variable name.
    pub name: &'static str,
    /// Default value (as text).
    pub default: &'static str,
    /// What it does.
    pub doc: &'static str,
}

/// All knobs known to hympi.
pub const KNOBS: &[Knob] = &[
    Knob { name: "HYMPI_CMA", default: "1", doc: "1: single-copy large transfers with process_vm_readv when the kernel allows it; 0: pipelined copies through shared-memory cells" },
    Knob { name: "HYMPI_EAGER_MAX", default: "16320", doc: "largest message (bytes) sent eagerly in one shared-memory cell; larger ones use rendezvous (capped by the cell payload)" },
    Knob { name: "HYMPI_SHM_CELLS", default: "64", doc: "shared-memory cells owned by each local rank" },
    Knob { name: "HYMPI_SHM_LANES", default: "auto", doc: "independent lanes of the node transport (segments with their own cells and queues; a context id always uses lane id % lanes), as chosen by local rank 0 (auto: its VCIs at MPI_THREAD_MULTIPLE, else 1; at most 16)" },
    Knob { name: "HYMPI_SHM_CELL_SIZE", default: "16384", doc: "bytes per shared-memory cell (header included)" },
    Knob { name: "HYMPI_CMA_SPLIT_MIN", default: "262144", doc: "rendezvous messages of at least this many bytes are copied by both ranks at once when the sender is waiting (its half with process_vm_writev); 0 turns splitting off" },
    Knob { name: "HYMPI_STREAM_MAX", default: "auto", doc: "how a contiguous rendezvous from a waiting node peer is copied: streamed through shared-memory cells (two copies, on the two ranks' cores at once) or read with CMA. auto: the receiver measures both per power-of-two size class and takes the faster (core::copy_choice; one VM streamed 1 MiB at 51 against 30 GB/s, another read it with CMA at 49 against 16); a size: streamed up to it, CMA above; 0: never streamed" },
    Knob { name: "HYMPI_DT_IOV_MIN", default: "off", doc: "large noncontiguous sends whose contiguous pieces average at least this many bytes are copied by one vectored process_vm_readv from the sender's segments (one copy on one core; each remote segment costs a page pinning, ~0.5 us); off: every large noncontiguous send is packed through shared-memory cells while the receiver unpacks (two copies on two cores, measured 2-4x faster than the vectored read at every segment size, also with both ranks on one CPU)" },
    Knob { name: "HYMPI_THREAD_MODEL", default: "vci", doc: "thread-safety model at MPI_THREAD_MULTIPLE: vci (a lock per VCI), global (one VCI, one lock for every call), lockq (a lock per VCI, tried: a nonblocking Isend/Irecv that misses it queues its operation for the lock holder and returns), csync (a lock per VCI behind a combining queue: the thread at its head runs the operations announced behind it) or offload (a communication thread runs every Isend/Irecv the application threads post to it); unknown names fall back to vci with a warning" },
    Knob { name: "HYMPI_NUM_VCIS", default: "auto", doc: "VCIs (per-VCI locks, request tables and matching queues) at MPI_THREAD_MULTIPLE (auto: the CPUs this process may run on, at most 64; below MULTIPLE always 1)" },
    Knob { name: "HYMPI_STEAL", default: "1", doc: "1: at MPI_THREAD_MULTIPLE, a large single-copy receive becomes chunks that threads waiting inside MPI copy in parallel (stealing-aware waits) when another thread of the process is waiting; 0: off" },
    Knob { name: "HYMPI_STEAL_MIN", default: "1048576", doc: "smallest receive (bytes) cut into stealable chunks" },
    Knob { name: "HYMPI_STEAL_CHUNK", default: "0", doc: "chunk size (bytes) of stealable copies; 0: a quarter of the message, between 256 KiB and 1 MiB" },
    Knob { name: "HYMPI_STATS", default: "0", doc: "1: each rank prints its stealing statistics (stealable copies, chunks, chunks copied by waiting threads) to stderr at MPI_Finalize" },
    Knob { name: "HYMPI_ASYNC_PROGRESS", default: "0", doc: "1: a library thread progresses communication while the application computes (the runtime then locks as at MPI_THREAD_MULTIPLE whatever the thread level)" },
    Knob { name: "HYMPI_COLL_TUNING_FILE", default: "", doc: "JSON table (MPICH's condition grammar) choosing collective algorithms; its matching rules win over the built-in table (docs/collectives.md)" },
    Knob { name: "HYMPI_<COLL>_ALGORITHM", default: "auto", doc: "forces the algorithm of one collective, e.g. HYMPI_BCAST_ALGORITHM=knomial:k=4 or HYMPI_ALLREDUCE_ALGORITHM=ring (names in docs/collectives.md)" },
    Knob { name: "HYMPI_SPIN", default: "auto", doc: "empty polls before a waiting thread yields the CPU (auto: 2000; 64 at MPI_THREAD_MULTIPLE when the process has one CPU of the node; 1 when oversubscribed)" },
];

/// Reads an integer knob, falling back to its default when unset or unparsable.
pub fn int(name: &str) -> i64 {
    let default = KNOBS
        .iter()
        .find(|k| k.name == name)
        .map(|k| k.default)
        .unwrap_or("0");
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .or_else(|| default.parse().ok())
        .unwrap_or(0)
}

/// Reads a text knob.
pub fn text(name: &str) -> String {
    let default = KNOBS
        .iter()
        .find(|k| k.name == name)
        .map(|k| k.default)
        .unwrap_or("");
    std::env::var(name).unwrap_or_else(|_| default.to_string())
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
