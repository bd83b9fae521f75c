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

/// The thread level a request names; `MPI_ERR_ARG` for a value that is none.
fn thread_level(required: i32) -> MpiResult<i32> {
    match required {
        MPI_THREAD_SINGLE | MPI_THREAD_FUNNELED | MPI_THREAD_SERIALIZED | MPI_THREAD_MULTIPLE => {
            Ok(required)
        }
        _ => fail(MPI_ERR_ARG, format!("invalid thread level {required}")),
    }
}

/// `MPI_Init_thread`: starts the world model, building the runtime unless a session already
/// did. Returns the provided thread level (a runtime a session started keeps its level).
pub fn init(required: i32) -> MpiResult<i32> {
    let provided = thread_level(required)?;
    let mut holders = HOLDERS.lock();
    if WORLD_MODEL.load(Ordering::Acquire) != WORLD_NONE {
        return fail(
            MPI_ERR_OTHER,
            "MPI_Init called more than once (or after MPI_Finalize)",
        );
    }
    let provided = acquire(&mut holders, provided)?;
    IS_MAIN.with(|m| m.set(true));
    WORLD_MODEL.store(WORLD_ACTIVE, Ordering::Release);
    Ok(provided)
}

/// `MPI_Session_init`: one more session on the runtime, building it (at thread level
/// `required`) if nothing holds it yet, or waking it if the last holder left it dormant.
/// Returns the thread level the session gets: the runtime's.
pub fn session_start(required: i32) -> MpiResult<i32> {
    let required = thread_level(required)?;
    let mut holders = HOLDERS.lock();
    let provided = acquire(&mut holders, required)?;
    holders.sessions += 1;
    if !holders.exit_hook {
        // SAFETY: registers a plain `extern "C" fn()` that catches its own panics.
        if unsafe { libc::atexit(teardown_at_exit) } == 0 {
            holders.exit_hook = true;
        }
    }
    Ok(provided)
}

/// `MPI_Session_finalize`: one session fewer. When it was the last holder of the runtime,
/// the job is quiesced (collective, as the finalisation of MPI is) and the runtime stays,
/// dormant, for a later session; the process's exit tears it down.
pub fn session_end() -> MpiResult<()> {
    let mut holders = HOLDERS.lock();
    holders.sessions = holders.sessions.saturating_sub(1);
    if holders.sessions == 0 && WORLD_MODEL.load(Ordering::Acquire) != WORLD_ACTIVE {
        quiesce()?;
        holders.dormant = true;
    }
    Ok(())
}

/// The runtime for a new holder: built at `required` when there is none, woken when dormant.
/// Returns its thread level.
fn acquire(holders: &mut Holders, required: i32) -> MpiResult<i32> {
    match G.state.load(Ordering::Acquire) {
        UNINIT => start(required),
        FINALIZED => fail(
            MPI_ERR_OTHER,
            "MPI_Finalize has ended MPI in this process (no session was open then), and hympi cannot start it again; open the session before MPI_Finalize",
        ),
        _ => {
            if std::mem::take(&mut holders.dormant) {
                with(|rt| {
                    if let Some(n) = rt.net.as_mut() {
                        n.set_closing(false);
                    }
                    for n in rt.net_lanes.iter_mut().flatten() {
                        n.set_closing(false);
                    }
                    if let Some(shm) = rt.shm.as_ref() {
                        shm.mark_finalizing(false);
                    }
                    Ok(())
                })?;
            }
            with(|rt| Ok(rt.thread_level))
        }
    }
}

/// Builds the runtime at thread level `provided` and opens it.
fn start(provided: i32) -> MpiResult<i32> {
    if G.state
        .compare_exchange(UNINIT, BUSY, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return fail(MPI_ERR_OTHER, "MPI is being initialised by another thread");
    }
    match build(provided) {
        Ok(rt) => {
            RANK_HINT.store(rt.world_rank, Ordering::Relaxed);
            crate::core::diag::init(rt.world_rank);
            // Node peers ring this rank's doorbell; network peers and other threads do not.
            let bell = match (&rt.shm, &rt.net, rt.shm_lanes.is_empty()) {
                (Some(shm), None, true) => Some(shm.own_bell() as *const Doorbell),
                _ => None,
            };
            // SAFETY: state is BUSY, so no other thread reads `rt` until the store below.
            unsafe { *G.rt.get() = Box::into_raw(rt) };
            let async_progress = crate::core::threads::async_progress::requested();
            let state = if provided == MPI_THREAD_MULTIPLE || async_progress {
                match vci::queued() {
                    vci::Queued::Csync | vci::Queued::Offload => READY_DELEGATED,
                    vci::Queued::None | vci::Queued::Lockq => READY_LOCKED,
                }
            } else {
                READY
            };
            G.state.store(state, Ordering::Release);
            let offload =
                provided == MPI_THREAD_MULTIPLE && vci::thread_model() == vci::ThreadModel::Offload;
            if async_progress || offload {
                crate::core::threads::async_progress::start();
            }
            if offload && crate::core::threads::async_progress::running() {
                vci::set_queued(vci::Queued::Offload);
                G.state.store(READY_DELEGATED, Ordering::Release);
            }
            // The leaf fast paths' way in, once the state is final (see `vci::LeafWays`).
            vci::set_leaf_way(match G.state.load(Ordering::Acquire) {
                // Statistics and traces see every call: the leaves, which record nothing,
                // stay closed.
                _ if crate::core::diag::any_on() => vci::LeafWay::Closed,
                READY => vci::LeafWay::Direct,
                READY_LOCKED => vci::LeafWay::Locked,
                _ => vci::LeafWay::Closed,
            });
            if let (Some(bell), READY) = (bell, G.state.load(Ordering::Acquire)) {
                // Waits may sleep on the doorbell: one thread in MPI, every event it can wait
                // for comes from a node peer, which rings.
                // SAFETY: the doorbell lies in the node segment, mapped until `teardown`,
                // which clears it first.
                unsafe { doorbell::install(&*bell) };
            }
            Ok(provided)
        }
        Err(e) => {
            G.state.store(UNINIT, Ordering::Release);
            Err(e)
        }
    }
}

fn io_err(what: &str, e: std::io::Error) -> MpiError {
    MpiError::new(MPI_ERR_OTHER, format!("{what}: {e}"))
}

fn build(thread_level: i32) -> MpiResult<Box<Runtime>> {
    let mut boot =
        bootstrap::connect().map_err(|e| io_err("cannot reach the process manager", e))?;
    let (rank, size) = (boot.rank(), boot.size());
    // The node is what the launcher says: `HYMPI_NODE` (hympiexec's virtual nodes and hosts),
    // else the launcher's `PMI_process_mapping` (Hydra's hosts), else the host name.
    let host = match config::text(Knob::Node) {
        n if n.is_empty() => launcher_node(boot.as_mut(), rank, size).unwrap_or_else(hostname),
        n => n,
    };

    // Who shares this node.
    let mut local_of_world = vec![u32::MAX; size as usize];
    let mut locals = Vec::new();
    // The job's nodes, each once.
    let mut nodes: Vec<String> = Vec::new();
    let mut node_of_world = vec![0u32; size as usize];
    if size > 1 {
        // One round for the node layout and the lane counts (each node takes its first rank's).
        boot.put(&format!("host-{rank}"), &host)
            .map_err(|e| io_err("PMI put", e))?;
        boot.put(&lanes_key(rank), &wanted_lanes(thread_level).to_string())
            .map_err(|e| io_err("PMI put", e))?;
        boot.barrier().map_err(|e| io_err("PMI barrier", e))?;
        for r in 0..size {
            let h = boot
                .get(&format!("host-{r}"))
                .map_err(|e| io_err("PMI get", e))?;
            if h.as_deref() == Some(host.as_str()) {
                local_of_world[r as usize] = locals.len() as u32;
                locals.push(r);
            }
            if let Some(h) = h {
                node_of_world[r as usize] = match nodes.iter().position(|n| *n == h) {
                    Some(i) => i as u32,
                    None => {
                        nodes.push(h);
                        nodes.len() as u32 - 1
                    }
                };
            }
        }
    } else {
        local_of_world[0] = 0;
        locals.push(0);
        nodes.push(host.clone());
    }
    let nlocal = locals.len();
    // Another launcher that bound nothing: the rank takes its domain of cores itself
    // (hympiexec's ranks have theirs, or were asked to stay unbound).
    if config::flag(Knob::Bind) && std::env::var_os("HYMPI_LOCAL_RANK").is_none() {
        crate::platform::affinity::bind_domain(local_of_world[rank as usize] as usize, nlocal);
    }
    // The machine's ranks, which may be several (virtual) nodes' worth.
    let on_machine = nlocal.max(config::int(Knob::HostRanks) as usize);
    let oversubscribed = on_machine > wait::node_cpus();
    let spin = match config::setting(Knob::Spin) {
        Setting::Value(v) => v as u32,
        _ => {
            // With MPI_THREAD_MULTIPLE on one CPU's worth of the node, a waiting thread
            // spins only briefly: another thread of this process may need the CPU to make
            // the progress it waits for.
            let one_cpu = wait::usable_cpus().min(wait::node_cpus() / on_machine.max(1)) <= 1;
            if oversubscribed {
                1
            } else if one_cpu && thread_level == MPI_THREAD_MULTIPLE {
                64
            } else {
                2000
            }
        }
    };
    wait::set_spin_limit(spin);
    wait::set_sleep(config::flag(Knob::WaitSleep));

    let mut shm_lanes = Vec::new();
    let shm = if size > 1 {
        // The segments' setup synchronises through process-manager barriers, which every
        // rank of the job must join as often as every other: nodes with fewer lanes (or a
        // lone rank, which has none) join the barriers of the lanes they lack.
        let me = local_of_world[rank as usize];
        let (lanes, most) = agree_lanes(boot.as_mut(), &node_of_world, rank)?;
        let lanes = if nlocal > 1 { lanes } else { 0 };
        engine_ref::set_lane_count(lanes.max(1));
        let mut lane0 = None;
        for lane in (1..most).chain([0]) {
            if lane >= lanes {
                for _ in 0..ShmEngine::SETUP_BARRIERS {
                    boot.barrier().map_err(|e| io_err("PMI barrier", e))?;
                }
                continue;
            }
            let e = EngineBox::new(
                &engine_ref::SHM_LANES,
                ShmEngine::setup(boot.as_mut(), &host, me, nlocal as u32, lane)?,
                lane,
            );
            if lane == 0 {
                lane0 = Some(e);
            } else {
                shm_lanes.push(Some(e));
            }
        }
        lane0
    } else {
        engine_ref::set_lane_count(1);
        None
    };
    let job_id = bootstrap::job_id(&boot.job_name());
    let appnum = boot.appnum().max(0);
    // Every rank has peers on other nodes once one has: the setup is collective.
    let mut net_lanes = Vec::new();
    let net = if locals.len() < size as usize {
        let engines = NetEngine::setup(
            boot.as_mut(),
            rank as u32,
            size as u32,
            job_id,
            wanted_net_lanes(thread_level),
        )
        .map_err(|e| {
            MpiError::new(
                e.class(),
                format!(
                    "this job spans nodes ({} of {size} ranks on node {host}): {}",
                    locals.len(),
                    e.message()
                ),
            )
        })?;
        NET_LANES.set_count(engines.len());
        let mut boxes = engines
            .into_iter()
            .enumerate()
            .map(|(lane, e)| NetBox::new(&NET_LANES, e, lane));
        let lane0 = boxes.next();
        net_lanes.extend(boxes.map(Some));
        lane0
    } else {
        NET_LANES.set_count(1);
        None
    };
    let peer_watch = match &shm {
        Some(s) => watch_node_peers(s, &locals, rank),
        None => None,
    };
    let eager_max = match &shm {
        Some(s) => (config::int(Knob::EagerMax) as usize).min(s.payload_cap()),
        None => config::int(Knob::EagerMax) as usize,
    };
    // A network message up to one buffer goes eagerly: the rendezvous round trip costs more
    // there than a node peer's (16 KiB between two hosts: 22 us eager against 48 us).
    let net_eager_max = if config::is_set(Knob::EagerMax) {
        (config::int(Knob::EagerMax) as usize).min(crate::transport::ofi::PAYLOAD_CAP)
    } else {
        crate::transport::ofi::PAYLOAD_CAP
    };
    // Auto: measured per size class (`core::p2p::copy_choice`); a size fixes the limit, 0 turns
    // streaming off.
    let copy_choice = match (&shm, config::setting(Knob::StreamMax)) {
        (None, _) => CopyChoice::fixed(0),
        (Some(_), Setting::Value(v)) => CopyChoice::fixed(v as usize),
        (Some(_), _) => CopyChoice::measured(),
    };

    let mut comms = Slab::new(kind::COMM);
    let mut world = Comm::intra(0, rank, size, RankMap::Identity, Errh::Fatal);
    world.name = "MPI_COMM_WORLD".into();
    let mut selfc = Comm::intra(
        CONTEXTS_PER_ID,
        0,
        1,
        RankMap::Table(vec![rank as u32]),
        Errh::Fatal,
    );
    selfc.name = "MPI_COMM_SELF".into();
    assert_eq!(comms.insert(world), Some(WORLD));
    assert_eq!(comms.insert(selfc), Some(SELF));

    *BOOT.lock() = Some(boot);
    let pool = Pool::install(
        vci::default_count(thread_level == MPI_THREAD_MULTIPLE),
        eager_max,
        net_eager_max,
    );
    if thread_level == MPI_THREAD_MULTIPLE {
        match vci::thread_model() {
            vci::ThreadModel::Lockq => {
                crate::core::threads::lockq::install(pool);
                vci::set_queued(vci::Queued::Lockq);
            }
            vci::ThreadModel::Csync => vci::set_queued(vci::Queued::Csync),
            _ => {}
        }
    }
    Ok(Box::new(Runtime {
        world_rank: rank,
        world_size: size,
        thread_level,
        comms,
        reqs: {
            let mut reqs = Requests::new(pool);
            let done = reqs.insert(0, Request::done_send());
            assert_eq!(done, Some(crate::core::p2p::request::DONE_SEND));
            assert_eq!(
                reqs.handle(crate::core::p2p::request::DONE_SEND),
                crate::core::p2p::fastpath::DONE_SEND_HANDLE
            );
            reqs
        },
        messages: Slab::new(kind::MESSAGE),
        matchers: Matchers::new(pool),
        vcis: pool,
        shm,
        shm_lanes,
        local_of_world,
        node_of_world,
        node_names: nodes,
        net_spans_job: net.is_some(),
        net,
        net_lanes,
        job_id,
        appnum,
        on_machine,
        ports: Default::default(),
        parent: MPI_COMM_NULL,
        peer_watch,
        bsend: BsendBuffers::default(),
        eager_max,
        net_eager_max,
        split_min: match config::int(Knob::CmaSplitMin) {
            n if n <= 0 => usize::MAX,
            n => n as usize,
        },
        copy_choice,
        completions: Vec::new(),
        copies: Vec::new(),
        processor_name: host,
        self_errh_set: false,
        groups: Slab::new(kind::GROUP),
        contexts: ContextPool::default(),
        keyvals: Keyvals::default(),
        background: Vec::new(),
        predefined_type_attrs: Default::default(),
        types: Slab::new(kind::DATATYPE),
        dt_iov_min: match config::setting(Knob::DtIovMin) {
            Setting::Value(v) => v as usize,
            _ => usize::MAX,
        },
        ops: Slab::new(kind::OP),
        wins: Slab::new(kind::WIN),
        files: Slab::new(kind::FILE),
        file_null_errh: crate::core::io::DEFAULT_ERRH,
        streams: Default::default(),
    }))
}

/// `MPI_Finalize`: ends the world model. Unless a session still holds the runtime, flushes
/// outgoing traffic, waits for the job's ranks, and tears down.
pub fn finalize() -> MpiResult<()> {
    let mut holders = HOLDERS.lock();
    if WORLD_MODEL.load(Ordering::Acquire) != WORLD_ACTIVE {
        return not_ready(G.state.load(Ordering::Acquire));
    }
    if holders.sessions > 0 {
        // The sessions keep the runtime; the last one to end quiesces the job.
        WORLD_MODEL.store(WORLD_DONE, Ordering::Release);
        return Ok(());
    }
    quiesce()?;
    holders.dormant = false;
    teardown()?;
    WORLD_MODEL.store(WORLD_DONE, Ordering::Release);
    Ok(())
}

/// The collective part of finalisation: drains internal traffic (acknowledgements, streamed
/// data) and synchronises the job, so that no rank leaves while a peer still needs it.
fn quiesce() -> MpiResult<()> {
    wait_for(|rt| Ok(rt.transport_idle().then_some(())))?;
    with(|rt| {
        // A late engine (connections to other jobs): they are disconnected by now (the
        // standard asks it of the application); their endpoints may close before ours.
        if let (false, Some(n)) = (rt.net_spans_job, rt.net.as_mut()) {
            n.set_closing(true);
        }
        Ok(())
    })?;
    if with(|rt| Ok(rt.net_spans_job))? {
        // Every rank has received all it was sent before its endpoint closes: a barrier over
        // the job through the transports, the last sends completed, then one through the
        // process manager (which needs no progress), after which nobody sends any more.
        crate::core::objects::comm_build::barrier(MPI_COMM_WORLD)?;
        wait_for(|rt| Ok(rt.transport_idle().then_some(())))?;
        with(|rt| {
            if let Some(n) = rt.net.as_mut() {
                n.set_closing(true);
            }
            for n in rt.net_lanes.iter_mut().flatten() {
                n.set_closing(true);
            }
            Ok(())
        })?;
        if let Some(b) = BOOT.lock().as_mut() {
            b.barrier()
                .map_err(|e| io_err("PMI barrier at finalize", e))?;
        }
    }
    with(|rt| {
        if let Some(shm) = rt.shm.as_ref() {
            shm.mark_finalizing(true);
        }
        rt.node_barrier()
    })
}

/// The exit hook of a process that used sessions: tears a dormant runtime down (the local
/// part of finalisation, and the process manager's `finalize`). A runtime still held (a live
/// session, or the world model without `MPI_Finalize`) is left alone: the process ends
/// without finalising, as one that never called `MPI_Session_finalize`.
extern "C" fn teardown_at_exit() {
    let _ = std::panic::catch_unwind(|| {
        let Some(mut holders) = HOLDERS.try_lock() else {
            return;
        };
        if holders.dormant && holders.sessions == 0 {
            holders.dormant = false;
            let _ = teardown();
        }
    });
}

/// The local part of finalisation, after [`quiesce`]: stops the helper threads, frees the
/// runtime, and tells the process manager.
fn teardown() -> MpiResult<()> {
    // No other thread is inside MPI: nothing is posted to the communication thread any more.
    if vci::queued() == vci::Queued::Offload {
        G.state.store(READY_LOCKED, Ordering::Release);
        vci::set_queued(vci::Queued::None);
    }
    crate::core::threads::async_progress::stop();
    vci::set_leaf_way(vci::LeafWay::Closed);
    let prev = G.state.swap(BUSY, Ordering::AcqRel);
    if prev != READY && !locked_state(prev) {
        G.state.store(prev, Ordering::Release);
        return not_ready(prev);
    }
    if locked_state(prev) {
        // Wait for a thread that may still be inside `with` or a fast path.
        G.lock.lock();
        if let Some(p) = vci::pool() {
            p.lock_all();
            // SAFETY: locked just above.
            unsafe { p.unlock_all() };
        }
        // SAFETY: locked just above.
        unsafe { G.lock.unlock() };
    }
    // No wait runs any more (state is BUSY); the segment is still mapped.
    doorbell::clear();
    // SAFETY: state is BUSY: no thread can reach the runtime any more.
    let mut rt =
        unsafe { Box::from_raw(std::mem::replace(&mut *G.rt.get(), std::ptr::null_mut())) };
    // The watch reads the node segment: it ends before the transport does.
    drop(rt.peer_watch.take());
    crate::core::diag::finish_trace();
    if config::flag(Knob::Stats) {
        eprintln!(
            "{}",
            crate::core::diag::stats::report(rt.world_rank, rt.vcis.len())
        );
        eprintln!("{}", crate::core::threads::steal::stats_line(rt.world_rank));
        eprintln!("{}", crate::core::rma::acc_steal::stats_line(rt.world_rank));
        if let Some(line) = rt.copy_choice.stats_line(rt.world_rank) {
            eprintln!("{line}");
        }
        if crate::core::threads::lockq::on() {
            eprintln!("{}", crate::core::threads::lockq::stats_line(rt.world_rank));
        }
        if vci::queued() == vci::Queued::Csync {
            let (served, handed) = rt.vcis.combining_counts();
            eprintln!(
                "hympi[{}] csync: {served} operations run by a combiner for another thread, {handed} hand-ons of the combiner role",
                rt.world_rank
            );
        }
    }
    drop(rt);
    crate::core::threads::lockq::clear();
    vci::set_queued(vci::Queued::None);
    if let Some(p) = vci::pool() {
        p.clear();
    }
    if let Some(mut b) = BOOT.lock().take() {
        let _ = b.finalize();
    }
    G.state.store(FINALIZED, Ordering::Release);
    Ok(())
}

/// Asks the bootstrap to end the job (MPI_Abort).
pub fn abort(code: i32, message: &str) -> ! {
    abort_job(code, message)
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

/// Starts watching the node's other ranks (`HYMPI_PEER_WATCH`), unless hympiexec launched
/// the job (it ends the job itself, with a better report). When a peer ends before
/// `MPI_Finalize`, this rank reports it (the node's lowest surviving rank prints) and exits
/// with status 1, so that the launcher sees the whole node end.
fn watch_node_peers(shm: &ShmEngine, locals: &[i32], rank: i32) -> Option<PeerWatch> {
    if !config::flag(Knob::PeerWatch) || std::env::var_os("HYMPI_LOCAL_RANK").is_some() {
        return None;
    }
    let peers: Vec<Peer> = shm
        .watched_peers()
        .into_iter()
        .map(|(local, pid, finalizing)| Peer {
            world_rank: locals[local as usize],
            pid,
            finalizing,
        })
        .collect();
    let locals = locals.to_vec();
    let on_death = Box::new(move |dead: i32, report: String| {
        // The node's lowest rank still alive prints the report.
        if locals.iter().find(|&&r| r != dead) == Some(&rank) {
            eprintln!("hympi: {report}; ending the ranks of this node");
        }
        crate::core::diag::finish_trace();
        // SAFETY: ends this process at once, without running exit handlers that could block
        // on the dead peer; the process holds nothing that must be flushed but stderr (and
        // the trace, written just above).
        unsafe { libc::_exit(1) };
    });
    match PeerWatch::start(peers, on_death) {
        Ok(w) => Some(w),
        Err(e) => {
            eprintln!("hympi: rank {rank}: cannot watch the node's ranks ({e}); a rank that dies will not end the others");
            None
        }
    }
}

/// The key under which rank `r` publishes the lane count it wants.
fn lanes_key(r: i32) -> String {
    format!("shm-lanes-{r}")
}

/// The node transport lanes this rank would choose as its node's first rank:
/// `HYMPI_SHM_LANES`, else its VCIs at `MPI_THREAD_MULTIPLE`, else 1.
fn wanted_lanes(thread_level: i32) -> usize {
    match config::setting(Knob::ShmLanes) {
        Setting::Value(n) => n as usize,
        _ if thread_level == MPI_THREAD_MULTIPLE => vci::default_count(true),
        _ => 1,
    }
    .clamp(1, engine_ref::MAX_LANES)
}

/// Network lanes a rank asks for unless told: each costs a libfabric endpoint's own
/// buffers (with `tcp;ofi_rxm` about 22 MB resident per endpoint, most of it rxm's shared
/// receive pool).
const AUTO_NET_LANES_MAX: usize = 4;

/// The network transport lanes this rank asks for: `HYMPI_OFI_LANES`, else its VCIs at
/// `MPI_THREAD_MULTIPLE` (at most [`AUTO_NET_LANES_MAX`]), else 1 (the job runs the fewest any
/// rank asks for).
fn wanted_net_lanes(thread_level: i32) -> usize {
    match config::setting(Knob::OfiLanes) {
        Setting::Value(n) => n as usize,
        _ if thread_level == MPI_THREAD_MULTIPLE => {
            vci::default_count(true).min(AUTO_NET_LANES_MAX)
        }
        _ => 1,
    }
    .clamp(1, crate::transport::lanes::MAX_LANES)
}

/// The number of node transport lanes: this node's first rank's choice, and the most any
/// node of the job has (`node_of_world`: every rank's node). Reads what every rank published
/// with its host name (no barrier of its own).
fn agree_lanes(
    boot: &mut dyn Bootstrap,
    node_of_world: &[u32],
    rank: i32,
) -> MpiResult<(usize, usize)> {
    let mut lanes_of_rank = |r: usize| -> MpiResult<usize> {
        let text = boot
            .get(&lanes_key(r as i32))
            .map_err(|e| io_err("PMI get", e))?;
        Ok(text
            .and_then(|t| t.parse::<usize>().ok())
            .unwrap_or(1)
            .clamp(1, engine_ref::MAX_LANES))
    };
    let mut seen = Vec::new();
    let (mut mine, mut most) = (1, 1);
    for (r, &node) in node_of_world.iter().enumerate() {
        if seen.contains(&node) {
            continue;
        }
        seen.push(node);
        let lanes = lanes_of_rank(r)?;
        most = most.max(lanes);
        if node == node_of_world[rank as usize] {
            mine = lanes;
        }
    }
    Ok((mine, most))
}

/// This rank's node as named by the launcher's `PMI_process_mapping`, when it publishes one
/// that places every rank and puts more than one node in the job (a one-node mapping says
/// nothing the host name does not).
fn launcher_node(boot: &mut dyn bootstrap::Bootstrap, rank: i32, size: i32) -> Option<String> {
    if size <= 1 {
        return None;
    }
    let text = boot.process_mapping().ok()??;
    let node_of = crate::platform::nodemap::parse(&text, size as usize)?;
    let first = node_of[0];
    if node_of.iter().all(|&n| n == first) {
        return None;
    }
    Some(format!("pmi-node-{}", node_of[rank as usize]))
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0 {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).into_owned()
    } else {
        "localhost".into()
    }
}
