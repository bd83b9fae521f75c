//! One-sided communication (RMA) on the node: windows, their epochs and operations.
//!
//! Every rank of a window maps one shared control block ([`ctrl`]): passive-target lock words,
//! accumulate locks, post/complete counters and the attached regions of dynamic windows.
//! `MPI_Win_allocate` and `MPI_Win_allocate_shared` put the window memory in the same
//! mapping, so every operation to them is a load or store ([`access::Place::Mapped`]);
//! `MPI_Win_create`d and attached memory of another process is reached by cross-memory attach.
//! Operations thus complete when the call returns: flushes order memory, unlocks release the
//! lock word, fences and generalized active-target synchronization only synchronize. A target
//! that never enters MPI still serves passive-target operations.
//!
//! A window whose ranks span nodes has one control block per node; operations to a rank on
//! another node go to that rank's window server ([`net`]).

pub mod acc_steal;
pub mod access;
pub mod atomic;
pub mod claimword;
pub mod ctrl;
pub mod epoch;
pub mod lockword;
pub mod net;
mod ops;
pub mod steal_choice;
mod sync;

use crate::core::datatype::{self, Dtype, TypeInfo};
use crate::core::error::{fail, MpiResult};
use crate::core::objects::comm_build::plan_dup;
use crate::core::objects::errhandler::Errh;
use crate::core::objects::info::Info;
use crate::core::objects::team::{self, tag, Combine, Round, Team};
use crate::core::op::{Builtin, OpRef};
use crate::core::runtime::{self, Runtime};
use crate::mpi_abi::consts::*;
use crate::platform::config::{self, Knob};
use crate::platform::shared_map::SharedMap;
use access::{Element, Place, Shape};
use ctrl::{Ctrl, Layout};
use epoch::{Epochs, Held, LockKind};
pub use ops::*;
use std::sync::atomic::{fence as memory_fence, Ordering};
use std::sync::Arc;
pub use sync::*;

/// One rank of a window, seen from this process.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// Where its memory is.
    pub place: Place,
    /// Bytes of its window (dynamic windows: unused, the attached regions count).
    pub size: usize,
    /// Its displacement unit.
    pub disp_unit: isize,
    /// Accumulates to it use hardware atomics per element ([`atomic`]): it asked for element
    /// granularity and its memory is mapped by the node's ranks.
    pub atomics: bool,
}

/// Values of the predefined window attributes, at stable addresses (the attribute value
/// handed to the user is a pointer to one of these, except `MPI_WIN_BASE`).
#[derive(Debug)]
pub struct AttrValues {
    /// `MPI_WIN_SIZE`.
    pub size: isize,
    /// `MPI_WIN_DISP_UNIT`.
    pub disp_unit: i32,
    /// `MPI_WIN_CREATE_FLAVOR`.
    pub flavor: i32,
    /// `MPI_WIN_MODEL`.
    pub model: i32,
}

/// A window.
#[derive(Debug)]
pub struct Win {
    /// The window's own communicator (a duplicate of the one it was created on).
    pub comm: usize,
    /// This process's rank.
    pub rank: i32,
    /// Ranks.
    pub size: i32,
    /// `MPI_WIN_FLAVOR_*`.
    pub flavor: i32,
    /// This rank's window memory (0 for dynamic windows).
    pub base: usize,
    /// Every rank's memory.
    pub targets: Vec<Target>,
    /// The shared control block (shared with the accumulate helpers' registry).
    pub ctrl: Arc<Ctrl>,
    /// Open epochs.
    pub epochs: Epochs,
    /// Error handler.
    pub errh: Errh,
    /// `MPI_Win_set_name`.
    pub name: String,
    /// Attributes (keyval, value).
    pub attrs: Vec<(i32, usize)>,
    /// Hints (`MPI_Win_get_info`).
    pub info: Info,
    /// Predefined attribute values.
    pub attr_values: Box<AttrValues>,
    /// Per target: posts of it consumed by our `MPI_Win_start`s.
    posts_seen: Vec<u32>,
    /// Per origin: its completes consumed by our `MPI_Win_wait`s.
    completes_seen: Vec<u32>,
    /// The window spans nodes: what it shares with this rank's window server.
    net: Option<Arc<net::Shared>>,
    /// Requests to other nodes' ranks whose answers the next synchronization awaits.
    pending: Vec<net::Started>,
    /// Batches of requests that threads of this process are settling ([`settle`]), and the
    /// next batch's number: a flush waits for the batches taken before it.
    open_batches: Vec<u64>,
    next_batch: u64,
    /// Targets of unanswered operations since the last synchronization (each gets a flush).
    unflushed: Vec<i32>,
    /// Targets of lock releases (each gets a flush before the window is freed).
    released: Vec<i32>,
}

/// What a window creation asks for.
#[derive(Clone, Debug)]
pub struct Spec {
    /// `MPI_WIN_FLAVOR_*`.
    pub flavor: i32,
    /// Bytes of this rank's memory.
    pub size: usize,
    /// Displacement unit.
    pub disp_unit: isize,
    /// The memory (`MPI_Win_create`).
    pub base: usize,
    /// Hints.
    pub info: Info,
}

/// Bytes of one rank's descriptor in the creation allgather.
const DESC: usize = 40;

fn desc(spec: &Spec, cma: bool, noncontig: bool) -> Vec<u8> {
    [
        spec.size as u64,
        spec.disp_unit as u64,
        spec.base as u64,
        std::process::id() as u64,
        (cma as u64) | (noncontig as u64) << 1 | (wants_atomics(&spec.info) as u64) << 2,
    ]
    .iter()
    .flat_map(|w| w.to_ne_bytes())
    .collect()
}

/// Whether this rank asks for accumulates by hardware atomics (`HYMPI_ACC_ATOMICS`, else
/// an `mpi_accumulate_granularity` hint of 1 to [`atomic::MAX_BYTES`] bytes).
fn wants_atomics(info: &Info) -> bool {
    match config::text(Knob::AccAtomics).as_str() {
        "always" => true,
        "never" => false,
        _ => info
            .get("mpi_accumulate_granularity")
            .and_then(|v| v.trim().parse::<usize>().ok())
            .is_some_and(|g| (1..=atomic::MAX_BYTES).contains(&g)),
    }
}

/// The hints a window keeps: the standard's and `alloc_shared_noncontig`.
fn kept_hints(info: &Info) -> Info {
    let mut kept = Info::default();
    for (k, v) in &info.entries {
        if matches!(
            k.as_str(),
            "no_locks"
                | "accumulate_ordering"
                | "accumulate_ops"
                | "same_size"
                | "same_disp_unit"
                | "alloc_shared_noncontig"
                | "mpi_accumulate_granularity"
        ) {
            kept.set(k, v);
        }
    }
    kept
}

/// Offsets of each rank's memory in the window area, and its total: packed one after the
/// other (`MPI_Win_allocate_shared`'s contiguous default), else each on its own page
/// (`alloc_shared_noncontig`) or cache line.
fn memory_offsets(sizes: &[usize], flavor: i32, noncontig: bool) -> MpiResult<(Vec<usize>, usize)> {
    let align = match flavor {
        MPI_WIN_FLAVOR_SHARED if !noncontig => 1,
        MPI_WIN_FLAVOR_SHARED => 4096,
        _ => 64,
    };
    let mut offs = Vec::with_capacity(sizes.len());
    let mut at = 0usize;
    for &s in sizes {
        at = at.next_multiple_of(align);
        offs.push(at);
        at = match at.checked_add(s) {
            Some(v) if v <= isize::MAX as usize / 2 => v,
            _ => {
                return fail(
                    MPI_ERR_NO_MEM,
                    "the window memory would not fit the address space",
                )
            }
        };
    }
    Ok((offs, at))
}

impl Runtime {
    /// The table index and entry of window handle `h` (`MPI_ERR_WIN` when invalid).
    #[inline]
    pub fn win(&self, h: usize) -> MpiResult<(u32, &Win)> {
        if let Some(i) = self.wins.decode(h) {
            if let Some(w) = self.wins.get(i) {
                return Ok((i, w));
            }
        }
        bad_window(h)
    }

    /// [`Runtime::win`], mutable.
    pub fn win_mut(&mut self, h: usize) -> MpiResult<&mut Win> {
        let (i, _) = self.win(h)?;
        Ok(self.wins.get_mut(i).expect("decoded window"))
    }
}

/// The error of a handle that names no window (out of line: lookups stay short).
#[cold]
#[inline(never)]
fn bad_window<T>(h: usize) -> MpiResult<T> {
    if h == MPI_WIN_NULL {
        fail(MPI_ERR_WIN, "the window is MPI_WIN_NULL")
    } else {
        fail(MPI_ERR_WIN, format!("invalid window handle {h:#x}"))
    }
}

/// Creates a window over communicator handle `comm` (collective; call outside
/// `runtime::with`). Returns the window handle and this rank's base address.
pub fn create(comm: usize, spec: Spec) -> MpiResult<(usize, usize)> {
    let noncontig = spec.info.get("alloc_shared_noncontig") == Some("true");
    let (plan, cma) = runtime::with(|rt| {
        let (_, c) = rt.comm_plain(comm)?;
        if c.is_inter() {
            return fail(
                MPI_ERR_COMM,
                "windows are created on intracommunicators only",
            );
        }
        let spans = c.members().iter().any(|&w| !on_node(rt, w));
        if spans && spec.flavor == MPI_WIN_FLAVOR_SHARED {
            return fail(
                MPI_ERR_RMA_SHARED,
                "MPI_Win_allocate_shared needs a communicator whose ranks share memory (one \
                 node); split one with MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)",
            );
        }
        let cma = rt.shm.as_ref().is_none_or(|e| e.cma_capable());
        Ok((plan_dup(rt, comm)?, cma))
    })?;
    let id = plan.agreement().run()?;
    let wcomm =
        runtime::with(|rt| rt.install_comm(id, plan.blueprint(Vec::new(), Info::default())))?;
    match build(wcomm, &spec, cma, noncontig) {
        Ok(made) => Ok(made),
        Err(e) => {
            let _ = runtime::with(|rt| {
                if let Some(i) = rt.comm_index(wcomm) {
                    rt.release_comm(i);
                }
                Ok(())
            });
            Err(e)
        }
    }
}

/// Whether world rank `w` runs on this process's node.
fn on_node(rt: &Runtime, w: u32) -> bool {
    w == rt.world_rank as u32
        || rt
            .local_of_world
            .get(w as usize)
            .is_some_and(|&l| l != u32::MAX)
}

/// The collective part of [`create`] on the window's own communicator `wcomm`.
fn build(wcomm: usize, spec: &Spec, cma: bool, noncontig: bool) -> MpiResult<(usize, usize)> {
    let (widx, rank, n, local) = runtime::with(|rt| {
        let (i, c) = rt.comm(wcomm)?;
        let local: Vec<bool> = c.members().iter().map(|&w| on_node(rt, w)).collect();
        Ok((i, c.rank, c.size, local))
    })?;
    let team = Team::whole(widx, n, rank, tag::WIN);
    // The ranks of this node map one control block; its lowest rank creates it.
    let node_ranks: Vec<i32> = (0..n).filter(|&r| local[r as usize]).collect();
    let node_team = Team {
        comm: widx,
        me: node_ranks
            .iter()
            .position(|&r| r == rank)
            .expect("own rank"),
        ranks: node_ranks,
        tag: tag::WIN,
    };
    let spans = node_team.ranks.len() < n as usize;
    let all = Round::new(
        team.clone(),
        None,
        Combine::Concat,
        desc(spec, cma, noncontig),
    )
    .run()?;
    let descs: Vec<[u64; 5]> = all
        .chunks_exact(DESC)
        .map(|c| {
            std::array::from_fn(|k| u64::from_ne_bytes(c[k * 8..k * 8 + 8].try_into().unwrap()))
        })
        .collect();
    // Only this node's memory lies in this node's mapping.
    let sizes: Vec<usize> = descs
        .iter()
        .enumerate()
        .map(|(r, d)| if local[r] { d[0] as usize } else { 0 })
        .collect();
    let dynamic = spec.flavor == MPI_WIN_FLAVOR_DYNAMIC;
    let owns_memory = matches!(spec.flavor, MPI_WIN_FLAVOR_ALLOCATE | MPI_WIN_FLAVOR_SHARED);
    // A rank without cross-memory attach has node peers (a rank alone on its node reports
    // it capable), and every rank sees every descriptor: all agree on the refusal.
    if !owns_memory && n > 1 && descs.iter().any(|d| d[4] & 1 == 0) {
        return fail(
            MPI_ERR_UNSUPPORTED_OPERATION,
            "MPI_Win_create and dynamic windows need cross-memory attach between the ranks, \
             which this system forbids (ptrace restrictions); use MPI_Win_allocate",
        );
    }
    let layout = Layout::new(n as usize, dynamic);
    let (offs, mem) = if owns_memory {
        memory_offsets(&sizes, spec.flavor, descs[0][4] & 2 != 0)?
    } else {
        (vec![0; n as usize], 0)
    };
    let total = layout.memory + mem;
    // The leader maps the block; the others attach with its key; all agree it worked.
    let mut made: Result<SharedMap, String> = Err(String::new());
    let mut key = [0u8; 16];
    if node_team.is_leader() {
        match SharedMap::create(total) {
            Ok((m, (pid, fd))) => {
                key[..8].copy_from_slice(&pid.to_ne_bytes());
                key[8..].copy_from_slice(&fd.to_ne_bytes());
                made = Ok(m);
            }
            Err(e) => made = Err(e.to_string()),
        }
    }
    let key = team::bcast(&node_team, key.to_vec())?;
    if !node_team.is_leader() {
        let pid = u64::from_ne_bytes(key[..8].try_into().unwrap());
        let fd = u64::from_ne_bytes(key[8..].try_into().unwrap());
        made = if pid == 0 {
            Err("the leader could not create it".into())
        } else {
            SharedMap::attach((pid, fd), total).map_err(|e| e.to_string())
        };
    }
    let ok: u64 = if made.is_ok() { u64::MAX } else { 0 };
    let agreed = Round::new(team, None, Combine::And, ok.to_ne_bytes().to_vec()).run()?;
    let mut map = match made {
        Ok(m) if agreed.iter().all(|&b| b == 0xff) => m,
        Ok(_) => {
            return fail(
                MPI_ERR_NO_MEM,
                "another rank could not map the window memory",
            )
        }
        Err(e) => {
            return fail(
                MPI_ERR_NO_MEM,
                format!("could not map {total} bytes of shared window memory: {e}"),
            )
        }
    };
    map.close_creator_fd();
    let ctrl = Arc::new(Ctrl::new(map, layout));
    acc_steal::register(&ctrl);
    let mem_base = ctrl.memory();
    let targets: Vec<Target> = descs
        .iter()
        .enumerate()
        .map(|(r, d)| Target {
            place: match spec.flavor {
                _ if !local[r] => Place::OtherNode,
                MPI_WIN_FLAVOR_ALLOCATE | MPI_WIN_FLAVOR_SHARED => {
                    Place::Mapped(mem_base + offs[r])
                }
                MPI_WIN_FLAVOR_DYNAMIC if r as i32 == rank => Place::Mapped(0),
                MPI_WIN_FLAVOR_DYNAMIC => Place::Remote {
                    pid: d[3] as i32,
                    base: 0,
                },
                _ if r as i32 == rank => Place::Mapped(d[2] as usize),
                _ => Place::Remote {
                    pid: d[3] as i32,
                    base: d[2] as usize,
                },
            },
            size: d[0] as usize,
            disp_unit: d[1] as isize,
            atomics: owns_memory && d[4] & 4 != 0,
        })
        .collect();
    let base = match targets[rank as usize].place {
        Place::Mapped(b) => b,
        Place::Remote { base, .. } => base,
        Place::OtherNode => unreachable!("this rank is on its own node"),
    };
    let (size, disp_unit) = (spec.size, spec.disp_unit);
    runtime::with(|rt| {
        let net = spans.then(|| {
            let mem = net::Memory {
                base,
                size,
                dynamic: spec.flavor == MPI_WIN_FLAVOR_DYNAMIC,
                atomics: targets[rank as usize].atomics,
            };
            net::serve(rt, widx, rank as usize, ctrl.clone(), mem)
        });
        // A new window's handler is MPI_ERRORS_ARE_FATAL, whatever its communicator's.
        let errh = Errh::Fatal;
        let win = Win {
            comm: wcomm,
            rank,
            size: n,
            flavor: spec.flavor,
            base,
            targets,
            ctrl,
            epochs: Epochs::default(),
            errh,
            name: String::new(),
            attrs: Vec::new(),
            info: kept_hints(&spec.info),
            attr_values: Box::new(AttrValues {
                size: size as isize,
                disp_unit: disp_unit as i32,
                flavor: spec.flavor,
                model: MPI_WIN_UNIFIED,
            }),
            posts_seen: vec![0; n as usize],
            completes_seen: vec![0; n as usize],
            net,
            pending: Vec::new(),
            open_batches: Vec::new(),
            next_batch: 0,
            unflushed: Vec::new(),
            released: Vec::new(),
        };
        match rt.wins.insert(win) {
            Some(i) => Ok((rt.wins.handle(i), base)),
            None => fail(MPI_ERR_INTERN, "too many windows"),
        }
    })
}

/// `MPI_Win_free` after the attributes are gone: the closing barrier, then the window and its
/// communicator are dropped (call outside `runtime::with`).
pub fn free(h: usize) -> MpiResult<()> {
    let (wcomm, net) = runtime::with(|rt| {
        let (_, w) = rt.win(h)?;
        w.epochs.check_free()?;
        Ok((w.comm, w.net.clone()))
    })?;
    // Every request this rank sent is handled before the window goes: its releases too.
    runtime::with(|rt| {
        let w = rt.win_mut(h)?;
        for t in std::mem::take(&mut w.released) {
            if !w.unflushed.contains(&t) {
                w.unflushed.push(t);
            }
        }
        Ok(())
    })?;
    // An error answered is reported once the window is gone (the others are freeing it).
    let settled = settle(h);
    // Nobody may still access this rank's memory (or the mapping) once it is gone.
    crate::core::objects::comm_build::barrier(wcomm)?;
    if let Some(net) = net {
        net.close()?;
    }
    runtime::with(|rt| {
        let (i, _) = rt.win(h)?;
        let w = rt.wins.remove(i).expect("decoded window");
        rt.errh_unref(w.errh);
        for &(k, _) in &w.attrs {
            rt.keyvals.detach(k);
        }
        if let Some(ci) = rt.comm_index(w.comm) {
            rt.release_comm(ci);
        }
        Ok(())
    })?;
    settled
}
