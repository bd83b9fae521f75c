//! The process-wide MPI state: creation at `MPI_Init`, access from every call, teardown at
//! `MPI_Finalize`.
//!
//! Access goes through [`with`]. Under `MPI_THREAD_SINGLE`, `FUNNELED` and `SERIALIZED` the
//! application guarantees one caller at a time, so no lock is taken; under
//! `MPI_THREAD_MULTIPLE` the global mutex plus every VCI lock serialise callers of the slow path,
//! while the fast paths of `crate::core::p2p::fastpath` take one VCI lock only (see
//! `crate::core::threads::vci`).
//! Waiting calls release the state between polls ([`wait_for`]), so other threads progress.

pub mod hwtopo;
pub mod tool;

mod lifecycle;
pub use lifecycle::*;

use crate::core::error::ErrObj;
use crate::core::error::{fail, MpiError, MpiResult};
use crate::core::objects::attr::Keyvals;
use crate::core::objects::comm::{Comm, RankMap, CONTEXTS_PER_ID, SELF, WORLD};
use crate::core::objects::context::ContextPool;
use crate::core::objects::errhandler::{self, Errh};
use crate::core::objects::group::Group;
use crate::core::objects::slab::{kind, Slab};
use crate::core::p2p::bsend::BsendBuffers;
use crate::core::p2p::copy_choice::CopyChoice;
use crate::core::p2p::matching::Unexpected;
use crate::core::p2p::request::Request;
use crate::core::threads::vci::{self, Matchers, Pool, Requests};
use crate::mpi_abi::consts::*;
use crate::platform::bootstrap::{self, Bootstrap};
use crate::platform::config::{self, Knob, Setting};
use crate::platform::doorbell::{self, Doorbell};
use crate::platform::peer_watch::{Peer, PeerWatch};
use crate::platform::wait;
use crate::transport::ofi::{NetBox, NetEngine, NET_LANES};
use crate::transport::shm::engine_ref::{self, EngineBox};
use crate::transport::shm::ShmEngine;
use parking_lot::lock_api::RawMutex as _;
use parking_lot::{Mutex, RawMutex};
use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicI32, AtomicU8, Ordering};

/// All state of an initialised MPI process.
pub struct Runtime {
    /// Rank in `MPI_COMM_WORLD`.
    pub world_rank: i32,
    /// Size of `MPI_COMM_WORLD`.
    pub world_size: i32,
    /// Thread level provided.
    pub thread_level: i32,
    /// Communicators (`WORLD` and `SELF` at fixed indices).
    pub comms: Slab<Comm>,
    /// Requests (in the VCI of their communicator).
    pub reqs: Requests,
    /// Messages taken by `MPI_Mprobe`, with their communicator index.
    pub messages: Slab<(Unexpected, u32)>,
    /// Matching queues (per VCI) and the fast paths' communicator caches.
    pub matchers: Matchers,
    /// The VCIs.
    pub vcis: &'static Pool,
    /// Node-local transport, lane 0 (absent when alone on the node).
    pub shm: Option<EngineBox>,
    /// Its other lanes (`transport::shm::engine_ref`), lane `i + 1` at index `i`.
    pub shm_lanes: Vec<Option<EngineBox>>,
    /// Local rank of each world rank (`u32::MAX`: on another node).
    pub local_of_world: Vec<u32>,
    /// Node of each world rank: an index into `node_names`, numbered in order of each
    /// node's lowest world rank.
    pub node_of_world: Vec<u32>,
    /// The job's nodes, as the launcher names them.
    pub node_names: Vec<String>,
    /// The network transport (present when the job spans nodes, or once this process
    /// connected to another job: see `net_spans_job`).
    pub net: Option<NetBox>,
    /// Its other lanes (`transport::ofi::NET_LANES`), lane `i + 1` at index `i`.
    pub net_lanes: Vec<Option<NetBox>>,
    /// The network transport was set up at `MPI_Init` with every rank (the job spans
    /// nodes); else it is absent or was opened late by this process alone.
    pub net_spans_job: bool,
    /// This job's id (`platform::bootstrap::job_id`).
    pub job_id: u32,
    /// This process's application number (`MPI_APPNUM`: which program of the launch).
    pub appnum: i32,
    /// Processes on this machine that this one may wait for: the job's, plus those of other
    /// jobs it connected to here (see [`Runtime::add_machine_peers`]).
    pub on_machine: usize,
    /// Dynamic processes: open ports and the ports' counter (`core::objects::dynamic`).
    pub ports: crate::core::objects::dynamic::Ports,
    /// The intercommunicator with the parents of a spawned process (`MPI_COMM_NULL`: not
    /// spawned), see `core::objects::spawn`.
    pub parent: usize,
    /// Watches the node's other ranks when the launcher would not end the job for a rank
    /// that dies (`platform::peer_watch`); stopped before the node transport is dropped.
    pub peer_watch: Option<PeerWatch>,
    /// Buffers of buffered-mode sends (`MPI_Buffer_attach`, `MPI_Comm_attach_buffer`).
    pub bsend: BsendBuffers,
    /// Largest eager message to a node peer (or oneself).
    pub eager_max: usize,
    /// Largest eager message to a rank on another node (one network buffer's payload, or
    /// less when `HYMPI_EAGER_MAX` says so).
    pub net_eager_max: usize,
    /// Smallest rendezvous copied by both ranks (`usize::MAX`: never).
    pub split_min: usize,
    /// How a contiguous rendezvous from a waiting node peer is copied (streamed through
    /// cells or read with CMA), fixed by `HYMPI_STREAM_MAX` or measured.
    pub copy_choice: CopyChoice,
    /// Scratch list of send tokens completed by the transport.
    pub completions: Vec<u64>,
    /// Large receives being copied in stealable chunks (`core::threads::steal`).
    pub copies: Vec<crate::core::p2p::PendingCopy>,
    /// `MPI_Get_processor_name`.
    pub processor_name: String,
    /// `MPI_COMM_SELF`'s handler was set by the user.
    pub self_errh_set: bool,
    /// User groups (`MPI_GROUP_EMPTY` is predefined, not stored).
    pub groups: Slab<Group>,
    /// Context ids free in this process.
    pub contexts: ContextPool,
    /// Attribute keyvals.
    pub keyvals: Keyvals,
    /// Nonblocking operations advanced by the progress engine (e.g. `MPI_Comm_idup`).
    pub background: Vec<Box<dyn Background>>,
    /// Attributes of predefined datatypes (derived ones keep theirs in their entry).
    pub predefined_type_attrs: std::collections::HashMap<usize, Vec<(i32, usize)>>,
    /// User datatypes (predefined ones are not stored).
    pub types: Slab<crate::core::datatype::TypeEntry>,
    /// Noncontiguous rendezvous sends whose segments average at least this many bytes are
    /// copied by a vectored CMA read; smaller pieces are streamed packed (`usize::MAX`: all).
    pub dt_iov_min: usize,
    /// User reduction operations (the predefined ones are not stored).
    pub ops: Slab<crate::core::op::UserOp>,
    /// Streams (`MPIX_Stream_create`).
    pub streams: crate::core::threads::stream::Streams,
    /// One-sided windows.
    pub wins: Slab<crate::core::rma::Win>,
    /// Open files.
    pub files: Slab<crate::core::io::File>,
    /// `MPI_FILE_NULL`'s error handler: the default of new files, and the handler of
    /// `MPI_File_open` and `MPI_File_delete` errors.
    pub file_null_errh: Errh,
}

/// An operation the progress engine advances until it reports completion.
pub trait Background {
    /// Advances; returns true once finished (it is then dropped).
    fn poll(&mut self, rt: &mut Runtime) -> bool;
}

const UNINIT: u8 = 0;
/// Initialised, one thread in MPI at a time: no locks.
pub const READY: u8 = 1;
/// Initialised, threads may call concurrently: the runtime lock and per-VCI locks.
pub const READY_LOCKED: u8 = 2;
const FINALIZED: u8 = 3;
const BUSY: u8 = 4;
/// [`READY_LOCKED`] under the `csync` or `offload` model (fast paths run their operations
/// through the VCI's combining queue or the communication thread).
pub const READY_DELEGATED: u8 = 5;

/// Whether `state` is initialised with locking (threads may call concurrently).
#[inline(always)]
fn locked_state(state: u8) -> bool {
    matches!(state, READY_LOCKED | READY_DELEGATED)
}

struct Global {
    state: AtomicU8,
    lock: RawMutex,
    rt: UnsafeCell<*mut Runtime>,
}

// SAFETY: `rt` is written only during init/finalize transitions (guarded by `state`), and the
// runtime it points to is accessed under `lock` whenever more than one thread may call MPI.
unsafe impl Sync for Global {}

static G: Global = Global {
    state: AtomicU8::new(UNINIT),
    lock: RawMutex::INIT,
    rt: UnsafeCell::new(std::ptr::null_mut()),
};

/// The bootstrap lives apart from the runtime so that aborting never waits for the runtime lock.
static BOOT: Mutex<Option<Box<dyn Bootstrap>>> = Mutex::new(None);
/// World rank for messages, readable without the runtime.
static RANK_HINT: AtomicI32 = AtomicI32::new(-1);

/// The world model (`MPI_Init` .. `MPI_Finalize`): not started yet.
const WORLD_NONE: u8 = 0;
/// The world model is initialised.
const WORLD_ACTIVE: u8 = 1;
/// `MPI_Finalize` has run.
const WORLD_DONE: u8 = 2;
/// Where the world model stands (`MPI_Initialized`, `MPI_Finalized`), apart from the runtime,
/// which sessions may start before and keep after it.
static WORLD_MODEL: AtomicU8 = AtomicU8::new(WORLD_NONE);

/// Who holds the runtime: the world model and the live sessions. Its lock orders
/// initialisation and finalisation between threads (sessions may start from any thread).
struct Holders {
    /// Live sessions.
    sessions: usize,
    /// The job was quiesced (the collective part of finalisation ran) when the last holder
    /// let go; the runtime stays, dormant, for a later session, and the process's exit
    /// tears it down.
    dormant: bool,
    /// The exit hook that tears down a dormant runtime is registered.
    exit_hook: bool,
}

static HOLDERS: Mutex<Holders> = Mutex::new(Holders {
    sessions: 0,
    dormant: false,
    exit_hook: false,
});

thread_local! {
    static IS_MAIN: Cell<bool> = const { Cell::new(false) };
}

struct Unlock(&'static Pool);
impl Drop for Unlock {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: constructed only right after G.lock.lock() and Pool::lock_all() on this
        // thread.
        unsafe {
            self.0.unlock_all();
            G.lock.unlock();
        }
    }
}

/// The runtime state, for the fast paths to tell apart with one load how they may reach a
/// VCI: [`READY`] (directly), [`READY_LOCKED`] (under the VCI's lock: the `global`, `vci` and
/// `lockq` models, whose fast paths differ only when the lock is contended),
/// [`READY_DELEGATED`]; any other value sends them to the slow path (which reports an
/// uninitialised or finalised MPI).
#[inline(always)]
pub fn fast_state() -> u8 {
    G.state.load(Ordering::Acquire)
}

/// Runs `f` on the runtime. Fails with `MPI_ERR_OTHER` before `MPI_Init` or after
/// `MPI_Finalize`.
#[inline(always)]
pub fn with<R>(f: impl FnOnce(&mut Runtime) -> MpiResult<R>) -> MpiResult<R> {
    // One call site of `f`, so that it inlines into the caller.
    let _unlock = match G.state.load(Ordering::Acquire) {
        READY => None,
        s if locked_state(s) => {
            G.lock.lock();
            let pool = vci::pool().expect("VCIs exist once MPI is initialised");
            pool.lock_all();
            Some(Unlock(pool))
        }
        s => return not_ready(s),
    };
    // SAFETY: READY means the runtime exists and the application calls MPI from one thread
    // at a time (thread level below MULTIPLE); READY_LOCKED means the lock is now held. Either
    // way this is the only reference to the runtime.
    let rt = unsafe { &mut **G.rt.get() };
    if crate::core::threads::lockq::on() {
        // Every VCI lock is held: run the operations queued by threads that missed one first.
        crate::core::threads::lockq::drain_all(rt);
    }
    f(rt)
}

/// The runtime when it is reached without a lock (state [`READY`]: the application calls MPI
/// from one thread at a time) and no queued operation waits; `None` otherwise, and then
/// [`with`] is the way (it also reports an uninitialised MPI). For the shortest fast paths:
/// no closure left to the inliner.
///
/// # Safety
/// No other reference to the runtime may be live on this thread (call it at the C boundary,
/// never inside [`with`]), and the reference must not outlive the MPI call.
#[inline(always)]
pub unsafe fn unlocked() -> Option<&'static Runtime> {
    if G.state.load(Ordering::Acquire) != READY || crate::core::threads::lockq::on() {
        return None;
    }
    // SAFETY: READY means the runtime exists and the application calls MPI from one thread
    // at a time; the caller holds no other reference to it (the contract above).
    Some(unsafe { &**G.rt.get() })
}

/// Like [`with`], for error routing: never blocks on a lock held by a waiting thread for long
/// (it takes the same lock), and reports "not initialised" as an error without a message cost.
pub fn with_quiet<R>(f: impl FnOnce(&mut Runtime) -> MpiResult<R>) -> MpiResult<R> {
    with(f)
}

#[cold]
fn not_ready<R>(state: u8) -> MpiResult<R> {
    match state {
        UNINIT | BUSY => fail(
            MPI_ERR_OTHER,
            "MPI is not initialized: call MPI_Init or MPI_Init_thread first",
        ),
        _ => fail(MPI_ERR_OTHER, "MPI has already been finalized"),
    }
}

/// Polls `step` until it yields a value, progressing communication in between and backing off
/// (spin, then yield) while nothing happens. The state is released between polls.
#[inline]
pub fn wait_for<R>(step: impl FnMut(&mut Runtime) -> MpiResult<Option<R>>) -> MpiResult<R> {
    wait_marked(false, wait::Backoff::for_peers(), step)
}

/// [`wait_for`] for a condition on shared memory that node peers change without ringing
/// this rank's doorbell (collective slots, window lock words): it never sleeps, only yields.
#[inline]
pub fn wait_for_unrung<R>(step: impl FnMut(&mut Runtime) -> MpiResult<Option<R>>) -> MpiResult<R> {
    wait_marked(false, wait::Backoff::new(), step)
}

/// [`wait_for`] for a caller that published "waiting" ([`Runtime::set_waiting`]) itself before
/// it started what it waits for (so that a peer matching its message at once sees it): the
/// wait withdraws the mark when it ends, however it ends.
#[inline]
pub fn wait_for_published<R>(
    step: impl FnMut(&mut Runtime) -> MpiResult<Option<R>>,
) -> MpiResult<R> {
    wait_marked(true, wait::Backoff::for_peers(), step)
}

/// [`wait_for`] with "waiting" already published when `published`, backing off with
/// `backoff` (which may sleep on the doorbell when what the wait waits for rings it: node
/// peers' messages; anything else that does not, a sleep's timeout bounds).
#[inline]
fn wait_marked<R>(
    published: bool,
    mut backoff: wait::Backoff,
    mut step: impl FnMut(&mut Runtime) -> MpiResult<Option<R>>,
) -> MpiResult<R> {
    // This wait has published "waiting" (node peers then stream or split large copies with
    // us), so it must withdraw it however it leaves.
    let mut marked = published;
    let mut counted: Option<crate::core::threads::steal::Waiting> = None;
    // Only threads of a MULTIPLE process can help each other.
    let steal = crate::core::threads::steal::settings().on && locked_state(fast_state());
    let acc_help = crate::core::rma::acc_steal::min_bytes().is_some();
    // Statistics and tracing time the wait once it has to wait.
    let mut waiting: Option<crate::core::diag::Waiting> = None;
    loop {
        let polled = with(|rt| {
            let polled = (|| {
                if let Some(v) = step(rt)? {
                    return Ok((Some(v), true));
                }
                if !marked {
                    rt.set_waiting(true);
                    marked = true;
                }
                let progressed = rt.progress()?;
                Ok((if progressed { step(rt)? } else { None }, progressed))
            })();
            if marked && !matches!(polled, Ok((None, _))) {
                // Leaving (done or failed): withdraw the mark in the same critical section.
                rt.set_waiting(false);
            }
            polled
        });
        let (got, progressed) = polled?;
        if let Some(v) = got {
            return Ok(v);
        }
        if waiting.is_none() {
            waiting = crate::core::diag::Waiting::start_if_on(crate::core::diag::stats::SLOW_PATH);
        }
        if steal {
            // Waiting threads copy chunks of large receives (their own or others').
            if counted.is_none() {
                counted = Some(crate::core::threads::steal::Waiting::start());
            }
            if crate::core::threads::steal::help() {
                backoff.reset();
                continue;
            }
        }
        if acc_help && crate::core::rma::acc_steal::help() {
            // Chunks of a large accumulate into a window this process maps (any thread level).
            backoff.reset();
            continue;
        }
        if progressed {
            backoff.reset();
        } else {
            backoff.idle();
        }
    }
}

/// Whether `MPI_Init` has completed (`MPI_Initialized`): the world model only, as MPI-4 says
/// (sessions do not count).
pub fn initialized() -> bool {
    WORLD_MODEL.load(Ordering::Acquire) != WORLD_NONE
}

/// Whether `MPI_Finalize` has completed (`MPI_Finalized`).
pub fn finalized() -> bool {
    WORLD_MODEL.load(Ordering::Acquire) == WORLD_DONE
}

/// Whether the calling thread called `MPI_Init` (`MPI_Is_thread_main`).
pub fn is_main_thread() -> bool {
    IS_MAIN.with(|m| m.get())
}

/// World rank, if known (for messages).
pub fn world_rank_hint() -> Option<i32> {
    let r = RANK_HINT.load(Ordering::Relaxed);
    (r >= 0).then_some(r)
}

/// Ends the whole job: tells the process manager, then exits with `code`.
pub fn abort_job(code: i32, message: &str) -> ! {
    crate::core::diag::finish_trace();
    if let Some(mut guard) = BOOT.try_lock_for(std::time::Duration::from_millis(200)) {
        if let Some(b) = guard.as_mut() {
            let _ = b.abort(code, message);
        }
    }
    std::process::exit(if code == 0 { 1 } else { code & 0xff });
}

impl Runtime {
    /// The handler an error on `obj` goes to, with the function and handle to call for user
    /// handlers.
    pub fn handler_for(&self, obj: ErrObj) -> (Errh, Option<errhandler::Target>) {
        let (idx, handle) = match obj {
            ErrObj::Comm(h) => match self.comm_index(h) {
                Some(i) => (i, h),
                None => (WORLD, MPI_COMM_WORLD),
            },
            ErrObj::Win(h) => match self.wins.decode(h).and_then(|i| self.wins.get(i)) {
                Some(w) => return errhandler::target(w.errh, h),
                // An invalid window: the communicator rules (as MPICH does).
                None if self.self_errh_set => (SELF, MPI_COMM_SELF),
                None => (WORLD, MPI_COMM_WORLD),
            },
            ErrObj::File(h) => {
                // Errors on MPI_FILE_NULL or an invalid handle go to MPI_FILE_NULL's handler.
                let e = match self.files.decode(h).and_then(|i| self.files.get(i)) {
                    Some(f) => f.errh,
                    None => self.file_null_errh,
                };
                return errhandler::target(e, h);
            }
            _ if self.self_errh_set => (SELF, MPI_COMM_SELF),
            _ => (WORLD, MPI_COMM_WORLD),
        };
        let errh = self.comms.get(idx).map(|c| c.errh).unwrap_or(Errh::Fatal);
        errhandler::target(errh, handle)
    }

    /// Counts `n` more processes on this machine (of another job this one connected to);
    /// waits yield at once from when the machine has more processes than CPUs, unless
    /// `HYMPI_SPIN` says otherwise: a spawned child spinning beside its parents would
    /// otherwise take the CPU their messages need.
    pub fn add_machine_peers(&mut self, n: usize) {
        self.on_machine += n;
        if self.on_machine > wait::node_cpus() && !config::is_set(Knob::Spin) {
            wait::set_spin_limit(1);
        }
    }

    /// Communicator table index of a handle, if valid.
    #[inline(always)]
    pub fn comm_index(&self, h: usize) -> Option<u32> {
        if h == MPI_COMM_WORLD {
            Some(WORLD)
        } else if h == MPI_COMM_SELF {
            Some(SELF)
        } else {
            self.comms.decode(h)
        }
    }

    /// The handle of communicator `idx`.
    #[inline]
    pub fn comm_handle(&self, idx: u32) -> usize {
        match idx {
            WORLD => MPI_COMM_WORLD,
            SELF => MPI_COMM_SELF,
            i => self.comms.handle(i),
        }
    }

    /// Resolves a communicator handle; `MPI_ERR_COMM` when invalid. A thread communicator's
    /// handle resolves to the calling thread's endpoint (`core::threads::endpoints`).
    #[inline(always)]
    pub fn comm(&self, h: usize) -> MpiResult<(u32, &Comm)> {
        match self
            .comm_index(h)
            .and_then(|i| self.comms.get(i).map(|c| (i, c)))
        {
            Some((i, c)) if c.threads.is_some() => self.thread_endpoint(i),
            Some(x) => Ok(x),
            None if h == MPI_COMM_NULL => fail(MPI_ERR_COMM, "the communicator is MPI_COMM_NULL"),
            None => fail(MPI_ERR_COMM, format!("invalid communicator handle {h:#x}")),
        }
    }

    /// The calling thread's endpoint of thread communicator `idx`.
    #[cold]
    fn thread_endpoint(&self, idx: u32) -> MpiResult<(u32, &Comm)> {
        match crate::core::threads::endpoints::bound_endpoint(idx)
            .and_then(|e| self.comms.get(e).map(|c| (e, c)))
        {
            Some(x) => Ok(x),
            None => fail(
                MPI_ERR_COMM,
                "a thread communicator is used outside MPIX_Threadcomm_start/MPIX_Threadcomm_finish",
            ),
        }
    }

    /// Resolves a communicator for an operation that builds on its group (communicator
    /// constructors, topologies, `MPI_Comm_group`), which endpoint communicators do not
    /// support yet (`MPI_ERR_UNSUPPORTED_OPERATION`).
    pub fn comm_plain(&self, h: usize) -> MpiResult<(u32, &Comm)> {
        let (i, c) = self.comm(h)?;
        if c.endpoints.is_some() {
            return fail(
                MPI_ERR_UNSUPPORTED_OPERATION,
                "on endpoint and thread communicators hympi implements MPI_Comm_dup, MPI_Comm_dup_with_info, MPI_Comm_split and MPI_Comm_split_type; other constructors, topologies and MPI_Comm_group are not implemented",
            );
        }
        Ok((i, c))
    }

    /// Advances the background operations; whether one finished.
    pub fn poll_background(&mut self) -> bool {
        let mut ops = std::mem::take(&mut self.background);
        let before = ops.len();
        ops.retain_mut(|op| !op.poll(self));
        let finished = ops.len() != before;
        ops.append(&mut self.background);
        self.background = ops;
        finished
    }

    /// Takes one more reference to error handler `e` (a communicator starts using it).
    pub fn errh_ref(&mut self, e: Errh) {
        errhandler::take_ref(e)
    }

    /// Drops one reference to an error handler (a communicator let go of it).
    pub fn errh_unref(&mut self, e: Errh) {
        errhandler::drop_ref(e)
    }

    /// Publishes whether this rank is blocked waiting (see `ShmEngine::set_waiting`).
    #[inline]
    pub fn set_waiting(&self, on: bool) {
        if let Some(s) = self.shm.as_ref() {
            s.set_waiting(on);
        }
        for s in self.shm_lanes.iter().flatten() {
            s.set_waiting(on);
        }
    }

    /// Whether no internal traffic is pending.
    pub fn transport_idle(&self) -> bool {
        self.copies.is_empty()
            && self.net.as_ref().is_none_or(|n| n.idle())
            && self.net_lanes.iter().flatten().all(|n| n.idle())
            && self.shm.as_ref().map(|s| s.idle()).unwrap_or(true)
            && self.shm_lanes.iter().flatten().all(|s| s.idle())
    }

    /// Barrier of the node's ranks through shared memory, progressing while waiting.
    pub fn node_barrier(&mut self) -> MpiResult<()> {
        let Some(mut shm) = self.shm.take() else {
            return Ok(());
        };
        let gen = shm.barrier_arrive();
        let mut backoff = wait::Backoff::new();
        let mut result = Ok(());
        while !shm.barrier_done(gen) {
            match self
                .progress_with(&mut *shm)
                .and_then(|a| Ok(self.progress_lanes()? || a))
            {
                Ok(true) => backoff.reset(),
                Ok(false) => backoff.idle(),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        self.shm = Some(shm);
        result
    }
}
