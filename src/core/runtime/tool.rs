//! The MPI tool information interface (`MPI_T_*`, MPI-4.1 chapter 15.3): the variable
//! tables and the state of tool handles and sessions. The C functions are in
//! `crate::abi::imp::tool`.
//!
//! - Control variables: one per knob of [`crate::platform::config::KNOBS`], named like the
//!   environment variable (the pseudo-knob `HYMPI_<COLL>_ALGORITHM` becomes one variable per
//!   collective, `HYMPI_BCAST_ALGORITHM`, ...). Every knob is read once at start-up (or, for
//!   `HYMPI_STATS`, from the unchanging environment at `MPI_Finalize`), so every variable has
//!   scope `MPI_T_SCOPE_CONSTANT` and cannot be written; its value is the effective setting:
//!   the environment value, else the default. Integer knobs are `MPI_INT`, others `MPI_CHAR`,
//!   `HYMPI_THREAD_MODEL` is an `MPI_INT` with an enumeration of the models.
//! - Performance variables: counters the library keeps anyway (stealing, the `lockq` and
//!   `csync` thread models: what `HYMPI_STATS=1` prints) and two sizes (VCIs, transport
//!   lanes); all per process, read-only and continuous, `MPI_UNSIGNED_LONG_LONG`. A counter
//!   reads as its growth since the handle was allocated (its class's starting value is 0).
//! - Per-VCI statistics (`crate::core::diag::stats`): messages and bytes by protocol and
//!   direction, lock acquisitions and misses, waits; a handle on one has a count of 65 (an
//!   element per possible VCI, then the slow path's) and turns counting on. The collective
//!   choices are one counter.
//! - Categories: a root `hympi` holding `transport`, `threads`, `stealing`, `collectives`,
//!   `diagnostics`.
//! - No events; one source (the process clock of `MPI_Wtime`).
//!
//! The tables are built once and never change (`MPI_T_category_changed` stays 0); handles
//! and sessions live in one mutex-protected table, emptied when the last `MPI_T_finalize`
//! pairs the first `MPI_T_init_thread`.

use crate::core::diag::stats::{Counter, Proto};
use crate::mpi_abi::consts::*;
use crate::platform::config::{self, Knob, KnobSpec, Verbosity, KNOBS};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// An `MPI_T_ERR_*` code (or another MPI return code) of a failed tool call.
pub type TErr = i32;

/// The result of a tool call's body.
pub type TResult<T> = Result<T, TErr>;

/// What a control variable holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CvarKind {
    /// An `MPI_INT` (a plain integer knob).
    Int,
    /// An `MPI_CHAR` string.
    Text,
    /// An `MPI_INT` whose values are the items of enumeration `.0` of [`Tables::enums`].
    Enum(usize),
}

/// The value of a control variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CvarValue {
    /// An integer (`MPI_INT`).
    Int(i32),
    /// A string (`MPI_CHAR`, without its NUL).
    Text(String),
}

/// One control variable.
#[derive(Debug)]
pub struct Cvar {
    /// Name (the environment variable).
    pub name: String,
    /// Description.
    pub desc: String,
    /// `MPI_T_VERBOSITY_*`.
    pub verbosity: i32,
    /// Type of the value.
    pub kind: CvarKind,
    /// Default (as text).
    pub default: &'static str,
}

impl Cvar {
    /// The `MPI_Datatype` (raw handle) of the value.
    pub fn datatype(&self) -> usize {
        match self.kind {
            CvarKind::Text => MPI_CHAR,
            CvarKind::Int | CvarKind::Enum(_) => MPI_INT,
        }
    }

    /// The effective setting: the environment value, else the default.
    pub fn value(&self) -> CvarValue {
        let text = || std::env::var(&self.name).unwrap_or_else(|_| self.default.to_string());
        match self.kind {
            CvarKind::Text => CvarValue::Text(text()),
            CvarKind::Int => {
                let v = std::env::var(&self.name)
                    .ok()
                    .and_then(|v| v.trim().parse::<i64>().ok())
                    .or_else(|| self.default.parse().ok())
                    .unwrap_or(0);
                CvarValue::Int(v.clamp(i32::MIN as i64, i32::MAX as i64) as i32)
            }
            CvarKind::Enum(_) => {
                // Unknown names fall back to the default model, as at `MPI_Init`.
                let m = crate::core::threads::vci::parse_thread_model(&text());
                let i = crate::core::threads::vci::THREAD_MODELS
                    .iter()
                    .position(|x| Some(x.1) == m)
                    .unwrap_or(0);
                CvarValue::Int(i as i32)
            }
        }
    }

    /// Number of elements of the value: 1 for integers, the buffer length (NUL included) of
    /// the current string.
    pub fn count(&self) -> i32 {
        match self.value() {
            CvarValue::Int(_) => 1,
            CvarValue::Text(t) => i32::try_from(t.len() + 1).unwrap_or(i32::MAX),
        }
    }
}

/// Where a performance variable's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// `crate::core::threads::steal::counts`, element `.0`.
    Steal(usize),
    /// `crate::core::threads::lockq::counts`, element `.0`.
    Lockq(usize),
    /// `Pool::combining_counts`, element `.0` (0: operations run for others, 1: hand-ons).
    Csync(usize),
    /// Number of VCIs (0 before `MPI_Init`).
    Vcis,
    /// Number of lanes of the node transport.
    Lanes,
    /// Number of lanes of the network transport.
    NetLanes,
    /// A counter of the per-VCI statistics, summed over the VCIs.
    Diag(Counter),
}

/// One performance variable.
#[derive(Debug)]
pub struct Pvar {
    /// Name.
    pub name: &'static str,
    /// Description.
    pub desc: &'static str,
    /// `MPI_T_PVAR_CLASS_*`.
    pub class: i32,
    /// `MPI_T_VERBOSITY_*`.
    pub verbosity: i32,
    source: Source,
}

impl Pvar {
    /// Elements of the value (`count` of its handles): one per VCI and one for the slow
    /// path for the per-VCI statistics, else one.
    pub fn count(&self) -> usize {
        match self.source {
            Source::Diag(c) => crate::core::diag::stats::width(c),
            _ => 1,
        }
    }

    /// The current values ([`Pvar::count`] of them).
    pub fn values(&self) -> Vec<u64> {
        match self.source {
            Source::Diag(c) => crate::core::diag::stats::per_row(c),
            _ => vec![self.current()],
        }
    }

    /// The current value of the underlying counter or size (a sum over the VCIs for the
    /// per-VCI statistics).
    pub fn current(&self) -> u64 {
        let v = match self.source {
            Source::Steal(i) => {
                let (a, b, c) = crate::core::threads::steal::counts();
                [a, b, c][i]
            }
            Source::Lockq(i) => crate::core::threads::lockq::counts()[i],
            Source::Csync(i) => crate::core::threads::vci::pool()
                .map(|p| {
                    let (a, b) = p.combining_counts();
                    [a, b][i]
                })
                .unwrap_or(0),
            Source::Vcis => crate::core::threads::vci::pool()
                .map(|p| p.len())
                .unwrap_or(0),
            Source::Lanes => crate::transport::shm::engine_ref::lane_count(),
            Source::NetLanes => crate::transport::ofi::NET_LANES.count(),
            Source::Diag(c) => return crate::core::diag::stats::total(c),
        };
        v as u64
    }

    /// Whether the value is a counter (read relative to the handle's allocation).
    pub fn is_counter(&self) -> bool {
        self.class == MPI_T_PVAR_CLASS_COUNTER
    }
}

/// One category.
#[derive(Debug)]
pub struct Category {
    /// Name.
    pub name: &'static str,
    /// Description.
    pub desc: &'static str,
    /// Control variables in it (indices).
    pub cvars: Vec<i32>,
    /// Performance variables in it (indices).
    pub pvars: Vec<i32>,
    /// Categories in it (indices).
    pub categories: Vec<i32>,
}

/// One enumeration.
#[derive(Debug)]
pub struct Enumeration {
    /// Name.
    pub name: &'static str,
    /// Items: value and name.
    pub items: Vec<(i32, &'static str)>,
}

/// Every variable, category and enumeration (built once, immutable).
#[derive(Debug)]
pub struct Tables {
    /// Control variables, by index.
    pub cvars: Vec<Cvar>,
    /// Performance variables, by index.
    pub pvars: Vec<Pvar>,
    /// Categories, by index.
    pub categories: Vec<Category>,
    /// Enumerations, by index.
    pub enums: Vec<Enumeration>,
}

const CAT_ROOT: usize = 0;
const CAT_TRANSPORT: usize = 1;
const CAT_THREADS: usize = 2;
const CAT_STEALING: usize = 3;
const CAT_COLL: usize = 4;
const CAT_DIAG: usize = 5;

const USER_BASIC: i32 = MPI_T_VERBOSITY_USER_BASIC;
const TUNER_BASIC: i32 = MPI_T_VERBOSITY_TUNER_BASIC;
const TUNER_DETAIL: i32 = MPI_T_VERBOSITY_TUNER_DETAIL;

/// Category and verbosity of a knob, from its declaration.
fn place_of(k: &KnobSpec) -> (usize, i32) {
    let cat = match k.category {
        config::Category::Transport => CAT_TRANSPORT,
        config::Category::Threads => CAT_THREADS,
        config::Category::Stealing => CAT_STEALING,
        config::Category::Collectives => CAT_COLL,
        config::Category::Diagnostics => CAT_DIAG,
    };
    let verbosity = match k.verbosity {
        Verbosity::UserBasic => USER_BASIC,
        Verbosity::TunerBasic => TUNER_BASIC,
        Verbosity::TunerDetail => TUNER_DETAIL,
    };
    (cat, verbosity)
}

/// The performance variables: (name, class, verbosity, category, source, description).
const PVARS: &[(&str, i32, i32, usize, Source, &str)] = &[
    ("steal_copies", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_STEALING, Source::Steal(0),
     "large receives made into stealable chunked copies (HYMPI_STEAL)"),
    ("steal_chunks", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_STEALING, Source::Steal(1),
     "chunks of stealable copies copied"),
    ("steal_chunks_by_waiters", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_STEALING, Source::Steal(2),
     "chunks of stealable copies copied by threads waiting inside MPI (outside the progress engine)"),
    ("lockq_sends_queued", MPI_T_PVAR_CLASS_COUNTER, TUNER_DETAIL, CAT_THREADS, Source::Lockq(0),
     "lockq thread model: nonblocking sends queued for the VCI lock holder"),
    ("lockq_recvs_queued", MPI_T_PVAR_CLASS_COUNTER, TUNER_DETAIL, CAT_THREADS, Source::Lockq(1),
     "lockq thread model: nonblocking receives queued for the VCI lock holder"),
    ("lockq_slow_path_runs", MPI_T_PVAR_CLASS_COUNTER, TUNER_DETAIL, CAT_THREADS, Source::Lockq(2),
     "lockq thread model: queued operations run by the slow path"),
    ("lockq_lock_waits", MPI_T_PVAR_CLASS_COUNTER, TUNER_DETAIL, CAT_THREADS, Source::Lockq(3),
     "lockq thread model: lock misses that waited for the lock"),
    ("lockq_parked", MPI_T_PVAR_CLASS_COUNTER, TUNER_DETAIL, CAT_THREADS, Source::Lockq(4),
     "lockq thread model: operations parked for the slow path"),
    ("csync_combined_ops", MPI_T_PVAR_CLASS_COUNTER, TUNER_DETAIL, CAT_THREADS, Source::Csync(0),
     "csync thread model: operations a combiner ran for another thread"),
    ("csync_handoffs", MPI_T_PVAR_CLASS_COUNTER, TUNER_DETAIL, CAT_THREADS, Source::Csync(1),
     "csync thread model: hand-ons of the combiner role"),
    ("vci_count", MPI_T_PVAR_CLASS_SIZE, TUNER_BASIC, CAT_THREADS, Source::Vcis,
     "VCIs (locks, request tables and matching queues) of this process; 0 before MPI_Init"),
    ("shm_lanes", MPI_T_PVAR_CLASS_SIZE, TUNER_BASIC, CAT_TRANSPORT, Source::Lanes,
     "lanes of the shared-memory transport in use"),
    ("ofi_lanes", MPI_T_PVAR_CLASS_SIZE, TUNER_BASIC, CAT_TRANSPORT, Source::NetLanes,
     "lanes of the network transport in use (libfabric endpoints; 1 when the job does not span nodes)"),
    ("sent_msgs_self", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::SentMsgs(Proto::SelfCopy)),
     "messages sent to oneself, all VCIs (counted while statistics are on: HYMPI_STATS=1 or a handle on a diagnostics variable)"),
    ("sent_bytes_self", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::SentBytes(Proto::SelfCopy)),
     "bytes sent to oneself, all VCIs"),
    ("recv_msgs_self", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::RecvMsgs(Proto::SelfCopy)),
     "messages received to oneself, all VCIs (counted while statistics are on: HYMPI_STATS=1 or a handle on a diagnostics variable)"),
    ("recv_bytes_self", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::RecvBytes(Proto::SelfCopy)),
     "bytes received to oneself, all VCIs"),
    ("sent_msgs_shm_eager", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::SentMsgs(Proto::ShmEager)),
     "messages sent eager through shared memory, all VCIs (counted while statistics are on: HYMPI_STATS=1 or a handle on a diagnostics variable)"),
    ("sent_bytes_shm_eager", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::SentBytes(Proto::ShmEager)),
     "bytes sent eager through shared memory, all VCIs"),
    ("recv_msgs_shm_eager", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::RecvMsgs(Proto::ShmEager)),
     "messages received eager through shared memory, all VCIs (counted while statistics are on: HYMPI_STATS=1 or a handle on a diagnostics variable)"),
    ("recv_bytes_shm_eager", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::RecvBytes(Proto::ShmEager)),
     "bytes received eager through shared memory, all VCIs"),
    ("sent_msgs_shm_rendezvous", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::SentMsgs(Proto::ShmRendezvous)),
     "messages sent rendezvous with node peers, all VCIs (counted while statistics are on: HYMPI_STATS=1 or a handle on a diagnostics variable)"),
    ("sent_bytes_shm_rendezvous", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::SentBytes(Proto::ShmRendezvous)),
     "bytes sent rendezvous with node peers, all VCIs"),
    ("recv_msgs_shm_rendezvous", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::RecvMsgs(Proto::ShmRendezvous)),
     "messages received rendezvous with node peers, all VCIs (counted while statistics are on: HYMPI_STATS=1 or a handle on a diagnostics variable)"),
    ("recv_bytes_shm_rendezvous", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::RecvBytes(Proto::ShmRendezvous)),
     "bytes received rendezvous with node peers, all VCIs"),
    ("sent_msgs_net_eager", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::SentMsgs(Proto::NetEager)),
     "messages sent eager over the network, all VCIs (counted while statistics are on: HYMPI_STATS=1 or a handle on a diagnostics variable)"),
    ("sent_bytes_net_eager", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::SentBytes(Proto::NetEager)),
     "bytes sent eager over the network, all VCIs"),
    ("recv_msgs_net_eager", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::RecvMsgs(Proto::NetEager)),
     "messages received eager over the network, all VCIs (counted while statistics are on: HYMPI_STATS=1 or a handle on a diagnostics variable)"),
    ("recv_bytes_net_eager", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::RecvBytes(Proto::NetEager)),
     "bytes received eager over the network, all VCIs"),
    ("sent_msgs_net_rendezvous", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::SentMsgs(Proto::NetRendezvous)),
     "messages sent rendezvous over the network, all VCIs (counted while statistics are on: HYMPI_STATS=1 or a handle on a diagnostics variable)"),
    ("sent_bytes_net_rendezvous", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::SentBytes(Proto::NetRendezvous)),
     "bytes sent rendezvous over the network, all VCIs"),
    ("recv_msgs_net_rendezvous", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::RecvMsgs(Proto::NetRendezvous)),
     "messages received rendezvous over the network, all VCIs (counted while statistics are on: HYMPI_STATS=1 or a handle on a diagnostics variable)"),
    ("recv_bytes_net_rendezvous", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::RecvBytes(Proto::NetRendezvous)),
     "bytes received rendezvous over the network, all VCIs"),
    ("vci_lock_acquisitions", MPI_T_PVAR_CLASS_COUNTER, TUNER_DETAIL, CAT_DIAG, Source::Diag(Counter::Locks),
     "VCI lock acquisitions (MPI_THREAD_MULTIPLE), all VCIs"),
    ("vci_lock_misses", MPI_T_PVAR_CLASS_COUNTER, TUNER_DETAIL, CAT_DIAG, Source::Diag(Counter::LockMisses),
     "VCI lock attempts that found the lock held, all VCIs"),
    ("waits", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::Waits),
     "waits inside MPI that had to wait for communication"),
    ("wait_ns", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::WaitNs),
     "nanoseconds spent in those waits"),
    ("coll_algorithm_choices", MPI_T_PVAR_CLASS_COUNTER, TUNER_BASIC, CAT_DIAG, Source::Diag(Counter::CollChoices),
     "collective calls whose algorithm the tuning tables chose (HYMPI_STATS=1 lists them by algorithm)"),
];

const CATEGORIES: [(&str, &str); 6] = [
    ("hympi", "all of hympi's variables, by subsystem"),
    ("transport", "shared-memory transport: cells, eager/rendezvous thresholds, single-copy (CMA) transfers, lanes"),
    ("threads", "MPI_THREAD_MULTIPLE: thread-safety model, VCIs, waiting, asynchronous progress"),
    ("stealing", "parallel copies of large receives by threads waiting inside MPI"),
    ("collectives", "selection of collective algorithms"),
    ("diagnostics", "statistics (HYMPI_STATS: per-VCI traffic by protocol, locks, waits, collective choices) and tracing (HYMPI_TRACE)"),
];

fn build() -> Tables {
    let mut enums = Vec::new();
    let mut cvars = Vec::new();
    let mut cat_cvars: Vec<Vec<i32>> = vec![Vec::new(); CATEGORIES.len()];
    let mut push = |cvars: &mut Vec<Cvar>, cvar: Cvar, cat: usize| {
        cat_cvars[cat].push(cvars.len() as i32);
        cvars.push(cvar);
    };
    for k in KNOBS {
        let (cat, verbosity) = place_of(k);
        if k.knob == Knob::CollAlgorithm {
            for (coll, env_var) in crate::platform::config::COLL_ALGORITHM_KNOBS {
                let desc = format!(
                    "forces the algorithm of MPI_{}{} (auto: the tuning tables choose; names in docs/collectives.md)",
                    coll[..1].to_uppercase(),
                    &coll[1..]
                );
                let cvar = Cvar {
                    name: env_var.to_string(),
                    desc,
                    verbosity,
                    kind: CvarKind::Text,
                    default: k.default,
                };
                push(&mut cvars, cvar, cat);
            }
            continue;
        }
        let kind = if k.knob == Knob::ThreadModel {
            enums.push(Enumeration {
                name: "hympi_thread_model",
                items: crate::core::threads::vci::THREAD_MODELS
                    .iter()
                    .enumerate()
                    .map(|(i, m)| (i as i32, m.0))
                    .collect(),
            });
            CvarKind::Enum(enums.len() - 1)
        } else if k.default.parse::<i64>().is_ok() {
            CvarKind::Int
        } else {
            CvarKind::Text
        };
        let cvar = Cvar {
            name: k.name.to_string(),
            desc: k.doc.to_string(),
            verbosity,
            kind,
            default: k.default,
        };
        push(&mut cvars, cvar, cat);
    }
    let mut cat_pvars: Vec<Vec<i32>> = vec![Vec::new(); CATEGORIES.len()];
    let pvars = PVARS
        .iter()
        .enumerate()
        .map(|(i, &(name, class, verbosity, cat, source, desc))| {
            cat_pvars[cat].push(i as i32);
            Pvar {
                name,
                desc,
                class,
                verbosity,
                source,
            }
        })
        .collect();
    let categories = CATEGORIES
        .iter()
        .enumerate()
        .map(|(i, &(name, desc))| Category {
            name,
            desc,
            cvars: std::mem::take(&mut cat_cvars[i]),
            pvars: std::mem::take(&mut cat_pvars[i]),
            categories: if i == CAT_ROOT {
                (1..CATEGORIES.len() as i32).collect()
            } else {
                Vec::new()
            },
        })
        .collect();
    Tables {
        cvars,
        pvars,
        categories,
        enums,
    }
}

/// The tables.
pub fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(build)
}

impl Tables {
    /// Index of the control variable `name`.
    pub fn cvar_index(&self, name: &str) -> Option<usize> {
        self.cvars.iter().position(|c| c.name == name)
    }

    /// Index of the performance variable `name` of class `class`.
    pub fn pvar_index(&self, name: &str, class: i32) -> Option<usize> {
        self.pvars
            .iter()
            .position(|p| p.name == name && p.class == class)
    }

    /// Index of the category `name`.
    pub fn category_index(&self, name: &str) -> Option<usize> {
        self.categories.iter().position(|c| c.name == name)
    }

    /// The control variable at a C index.
    pub fn cvar(&self, index: i32) -> TResult<&Cvar> {
        at(&self.cvars, index)
    }

    /// The performance variable at a C index.
    pub fn pvar(&self, index: i32) -> TResult<&Pvar> {
        at(&self.pvars, index)
    }

    /// The category at a C index.
    pub fn category(&self, index: i32) -> TResult<&Category> {
        at(&self.categories, index)
    }

    /// The enumeration of an `MPI_T_enum` handle value.
    pub fn enumeration(&self, handle: usize) -> TResult<&Enumeration> {
        if handle & 0xf != TAG_ENUM || handle == 0 {
            return Err(MPI_T_ERR_INVALID_HANDLE);
        }
        (handle >> 4)
            .checked_sub(1)
            .and_then(|i| self.enums.get(i))
            .ok_or(MPI_T_ERR_INVALID_HANDLE)
    }
}

fn at<T>(v: &[T], index: i32) -> TResult<&T> {
    usize::try_from(index)
        .ok()
        .and_then(|i| v.get(i))
        .ok_or(MPI_T_ERR_INVALID_INDEX)
}

/// Low bits of handle values, one per kind (never 0, and a value of 1 is never a handle:
/// it is `MPI_T_PVAR_ALL_HANDLES`).
const TAG_ENUM: usize = 0x7;
const TAG_CVAR: usize = 0x3;
const TAG_SESSION: usize = 0x5;
const TAG_PVAR: usize = 0x9;

/// The `MPI_T_enum` handle of enumeration `i`.
pub fn enum_handle(i: usize) -> usize {
    ((i + 1) << 4) | TAG_ENUM
}

fn encode(id: u64, tag: usize) -> usize {
    ((id as usize) << 4) | tag
}

fn decode(h: usize, tag: usize) -> Option<u64> {
    (h & 0xf == tag && h >> 4 != 0).then_some((h >> 4) as u64)
}

/// How an `MPI_T` string of `len` bytes is returned into a buffer of `cap` bytes (`cap` is
/// the in-out length argument, `buf_null` whether the buffer is NULL): `Some(n)` copies the
/// first `n` bytes followed by a NUL, `None` writes nothing; the length argument becomes the
/// string's length plus one either way (MPI-4.1 15.3.3: truncated to `cap - 1` characters,
/// nothing written for a NULL buffer or a length of 0).
pub fn string_plan(len: usize, cap: i32, buf_null: bool) -> (Option<usize>, i32) {
    let full = i32::try_from(len + 1).unwrap_or(i32::MAX);
    if buf_null || cap <= 0 {
        return (None, full);
    }
    (Some(len.min(cap as usize - 1)), full)
}

/// A performance variable bound to a session.
#[derive(Debug, Clone)]
pub struct PvarHandle {
    /// The variable's index.
    pub pvar: usize,
    /// A counter's values at allocation (its reads are relative to them).
    pub baseline: Vec<u64>,
}

/// Handles and sessions of the tool interface.
#[derive(Debug)]
pub struct State {
    /// `MPI_T_init_thread` calls not yet paired by `MPI_T_finalize`.
    nesting: u32,
    /// Next handle or session id (never reused: a stale handle stays invalid).
    next: u64,
    /// Control-variable handles: id -> (variable, count at allocation).
    cvar_handles: BTreeMap<u64, (usize, i32)>,
    /// Sessions: id -> their performance-variable handles by id.
    sessions: BTreeMap<u64, BTreeMap<u64, PvarHandle>>,
}

static STATE: Mutex<State> = Mutex::new(State {
    nesting: 0,
    next: 1,
    cvar_handles: BTreeMap::new(),
    sessions: BTreeMap::new(),
});

/// `MPI_T_init_thread`: one more nesting level.
pub fn init() {
    let mut s = STATE.lock();
    s.nesting += 1;
    drop(s);
    let _ = tables();
}

/// `MPI_T_finalize`: one level less; the last one frees every handle and session.
pub fn finalize() -> TResult<()> {
    let mut s = STATE.lock();
    if s.nesting == 0 {
        return Err(MPI_T_ERR_NOT_INITIALIZED);
    }
    s.nesting -= 1;
    if s.nesting == 0 {
        s.cvar_handles.clear();
        s.sessions.clear();
    }
    Ok(())
}

/// Runs `f` on the state when the interface is initialized, else `MPI_T_ERR_NOT_INITIALIZED`.
pub fn with<R>(f: impl FnOnce(&mut State) -> TResult<R>) -> TResult<R> {
    let mut s = STATE.lock();
    if s.nesting == 0 {
        return Err(MPI_T_ERR_NOT_INITIALIZED);
    }
    f(&mut s)
}

/// `MPI_T_ERR_NOT_INITIALIZED` unless the interface is initialized.
pub fn check_init() -> TResult<()> {
    with(|_| Ok(()))
}

impl State {
    fn new_id(&mut self) -> u64 {
        let id = self.next;
        self.next += 1;
        id
    }

    /// A new handle for control variable `cvar` whose value has `count` elements.
    pub fn cvar_alloc(&mut self, cvar: usize, count: i32) -> usize {
        let id = self.new_id();
        self.cvar_handles.insert(id, (cvar, count));
        encode(id, TAG_CVAR)
    }

    /// The variable and count of a control-variable handle.
    pub fn cvar_handle(&self, h: usize) -> TResult<(usize, i32)> {
        decode(h, TAG_CVAR)
            .and_then(|id| self.cvar_handles.get(&id).copied())
            .ok_or(MPI_T_ERR_INVALID_HANDLE)
    }

    /// Frees a control-variable handle.
    pub fn cvar_free(&mut self, h: usize) -> TResult<()> {
        decode(h, TAG_CVAR)
            .and_then(|id| self.cvar_handles.remove(&id))
            .map(|_| ())
            .ok_or(MPI_T_ERR_INVALID_HANDLE)
    }

    /// A new, empty session.
    pub fn session_create(&mut self) -> usize {
        let id = self.new_id();
        self.sessions.insert(id, BTreeMap::new());
        encode(id, TAG_SESSION)
    }

    /// Frees a session and its handles.
    pub fn session_free(&mut self, h: usize) -> TResult<()> {
        decode(h, TAG_SESSION)
            .and_then(|id| self.sessions.remove(&id))
            .map(|_| ())
            .ok_or(MPI_T_ERR_INVALID_SESSION)
    }

    /// The handles of a session.
    pub fn session(&mut self, h: usize) -> TResult<&mut BTreeMap<u64, PvarHandle>> {
        decode(h, TAG_SESSION)
            .and_then(|id| self.sessions.get_mut(&id))
            .ok_or(MPI_T_ERR_INVALID_SESSION)
    }

    /// A new handle for performance variable `pvar` in session `session`.
    pub fn pvar_alloc(&mut self, session: usize, pvar: usize) -> TResult<usize> {
        self.session(session)?;
        let id = self.new_id();
        let p = &tables().pvars[pvar];
        if matches!(p.source, Source::Diag(_)) {
            // The statistics count from now on if they did not already (their handles read
            // growth since allocation, which is then exact).
            crate::core::diag::enable_stats();
        }
        let baseline = if p.is_counter() {
            p.values()
        } else {
            vec![0; p.count()]
        };
        self.session(session)?
            .insert(id, PvarHandle { pvar, baseline });
        Ok(encode(id, TAG_PVAR))
    }

    /// A performance-variable handle of a session (`MPI_T_ERR_INVALID_SESSION` for a bad
    /// session, `MPI_T_ERR_INVALID_HANDLE` for a handle not in it).
    pub fn pvar_handle(&mut self, session: usize, h: usize) -> TResult<PvarHandle> {
        let s = self.session(session)?;
        decode(h, TAG_PVAR)
            .and_then(|id| s.get(&id).cloned())
            .ok_or(MPI_T_ERR_INVALID_HANDLE)
    }

    /// Frees a performance-variable handle of a session.
    pub fn pvar_free(&mut self, session: usize, h: usize) -> TResult<()> {
        let s = self.session(session)?;
        decode(h, TAG_PVAR)
            .and_then(|id| s.remove(&id))
            .map(|_| ())
            .ok_or(MPI_T_ERR_INVALID_HANDLE)
    }
}

/// The values a performance-variable handle reads now (as many as its count).
pub fn pvar_value(h: &PvarHandle) -> Vec<u64> {
    let p = &tables().pvars[h.pvar];
    let mut v = p.values();
    if p.is_counter() {
        for (x, b) in v.iter_mut().zip(&h.baseline) {
            *x = x.saturating_sub(*b);
        }
    }
    v
}

/// Nanoseconds of `CLOCK_MONOTONIC`, the clock of `MPI_Wtime` (the ticks of the one event
/// source).
pub fn timestamp_ns() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    // time_t and c_long are i64 on the 64-bit Linux targets hympi builds for.
    ts.tv_sec
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn every_knob_has_a_variable() {
        let t = tables();
        for k in KNOBS {
            if k.knob != Knob::CollAlgorithm {
                assert!(t.cvar_index(k.name).is_some(), "{}", k.name);
            }
        }
        assert_eq!(
            t.cvars.len(),
            KNOBS.len() - 1 + crate::platform::config::COLL_ALGORITHM_KNOBS.len()
        );
        // Every variable is in exactly one category; subcategories of the root only.
        let mut seen = vec![0; t.cvars.len()];
        for c in &t.categories {
            for &i in &c.cvars {
                seen[i as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n == 1));
        let pv: usize = t.categories.iter().map(|c| c.pvars.len()).sum();
        assert_eq!(pv, t.pvars.len());
        assert_eq!(t.categories[CAT_ROOT].categories, vec![1, 2, 3, 4, 5]);
        // The statistics are in `diagnostics`, with the knobs that switch them on.
        let d = &t.categories[CAT_DIAG];
        assert_eq!(t.category_index("diagnostics"), Some(CAT_DIAG));
        let sent = t
            .pvar_index("sent_msgs_shm_eager", MPI_T_PVAR_CLASS_COUNTER)
            .unwrap();
        assert!(d.pvars.contains(&(sent as i32)));
        let stats = t.cvar_index("HYMPI_STATS").unwrap();
        assert!(d.cvars.contains(&(stats as i32)));
    }

    #[test]
    fn lookups_by_name_and_index() {
        let t = tables();
        let i = t.cvar_index("HYMPI_EAGER_MAX").unwrap();
        assert_eq!(t.cvar(i as i32).unwrap().name, "HYMPI_EAGER_MAX");
        assert_eq!(t.cvar(i as i32).unwrap().kind, CvarKind::Int);
        assert_eq!(t.cvar(i as i32).unwrap().datatype(), MPI_INT);
        let b = t.cvar_index("HYMPI_BCAST_ALGORITHM").unwrap();
        assert_eq!(t.cvars[b].kind, CvarKind::Text);
        assert_eq!(t.cvars[b].datatype(), MPI_CHAR);
        assert!(t.cvar_index("HYMPI_<COLL>_ALGORITHM").is_none());
        assert!(t.cvar_index("HYMPI_NOPE").is_none());
        assert_eq!(t.cvar(-1).unwrap_err(), MPI_T_ERR_INVALID_INDEX);
        assert_eq!(
            t.cvar(t.cvars.len() as i32).unwrap_err(),
            MPI_T_ERR_INVALID_INDEX
        );
        let p = t
            .pvar_index("steal_chunks", MPI_T_PVAR_CLASS_COUNTER)
            .unwrap();
        assert_eq!(t.pvars[p].name, "steal_chunks");
        assert!(t
            .pvar_index("steal_chunks", MPI_T_PVAR_CLASS_SIZE)
            .is_none());
        assert_eq!(t.category_index("stealing"), Some(CAT_STEALING));
        assert!(t.categories[CAT_STEALING].pvars.contains(&(p as i32)));
        assert!(t.category_index("nope").is_none());
    }

    #[test]
    fn thread_model_is_an_enumeration() {
        let t = tables();
        let c = &t.cvars[t.cvar_index("HYMPI_THREAD_MODEL").unwrap()];
        let CvarKind::Enum(e) = c.kind else {
            panic!("not an enum")
        };
        let h = enum_handle(e);
        let en = t.enumeration(h).unwrap();
        assert_eq!(en.items[0], (0, "vci"));
        assert_eq!(en.items.len(), 5);
        assert_eq!(t.enumeration(0).unwrap_err(), MPI_T_ERR_INVALID_HANDLE);
        assert_eq!(
            t.enumeration(enum_handle(99)).unwrap_err(),
            MPI_T_ERR_INVALID_HANDLE
        );
        assert_eq!(t.enumeration(h + 1).unwrap_err(), MPI_T_ERR_INVALID_HANDLE);
    }

    #[test]
    fn string_truncation_follows_the_standard() {
        // "abcd": 4 bytes, length returned 5.
        assert_eq!(string_plan(4, 10, false), (Some(4), 5));
        assert_eq!(string_plan(4, 5, false), (Some(4), 5));
        assert_eq!(string_plan(4, 4, false), (Some(3), 5));
        assert_eq!(string_plan(4, 1, false), (Some(0), 5));
        assert_eq!(string_plan(4, 0, false), (None, 5));
        assert_eq!(string_plan(4, -3, false), (None, 5));
        assert_eq!(string_plan(4, 10, true), (None, 5));
        assert_eq!(string_plan(0, 1, false), (Some(0), 1));
    }

    #[test]
    fn handles_of_each_kind_are_distinct_and_stale_ones_invalid() {
        for tag in [TAG_ENUM, TAG_CVAR, TAG_SESSION, TAG_PVAR] {
            assert_ne!(encode(1, tag), MPI_T_PVAR_ALL_HANDLES);
            assert_ne!(encode(1, tag), 0);
        }
        assert_eq!(decode(encode(7, TAG_CVAR), TAG_CVAR), Some(7));
        assert_eq!(decode(encode(7, TAG_CVAR), TAG_PVAR), None);
        assert_eq!(decode(TAG_CVAR, TAG_CVAR), None);
        let mut s = State {
            nesting: 1,
            next: 1,
            cvar_handles: BTreeMap::new(),
            sessions: BTreeMap::new(),
        };
        let h = s.cvar_alloc(0, 1);
        assert_eq!(s.cvar_handle(h), Ok((0, 1)));
        s.cvar_free(h).unwrap();
        assert_eq!(s.cvar_handle(h), Err(MPI_T_ERR_INVALID_HANDLE));
        let a = s.session_create();
        let b = s.session_create();
        let p = s.pvar_alloc(a, 0).unwrap();
        assert!(s.pvar_handle(a, p).is_ok());
        assert_eq!(s.pvar_handle(b, p).unwrap_err(), MPI_T_ERR_INVALID_HANDLE);
        assert_eq!(s.pvar_handle(p, p).unwrap_err(), MPI_T_ERR_INVALID_SESSION);
        s.session_free(a).unwrap();
        assert_eq!(s.session_free(a), Err(MPI_T_ERR_INVALID_SESSION));
        assert_eq!(s.pvar_handle(a, p).unwrap_err(), MPI_T_ERR_INVALID_SESSION);
    }

    #[test]
    fn cvar_values_are_the_environment_else_the_default() {
        let t = tables();
        let c = &t.cvars[t.cvar_index("HYMPI_SHM_CELLS").unwrap()];
        // Tests in this process do not set HYMPI_SHM_CELLS.
        if std::env::var("HYMPI_SHM_CELLS").is_err() {
            assert_eq!(c.value(), CvarValue::Int(64));
        }
        let c = &t.cvars[t.cvar_index("HYMPI_COLL_TUNING_FILE").unwrap()];
        if std::env::var("HYMPI_COLL_TUNING_FILE").is_err() {
            assert_eq!(c.value(), CvarValue::Text(String::new()));
            assert_eq!(c.count(), 1);
        }
    }
}
