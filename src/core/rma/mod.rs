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
pub mod steal_choice;

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
use std::sync::atomic::{fence as memory_fence, Ordering};
use std::sync::Arc;

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

/// A datatype as a one-sided operation needs it: predefined ones without allocating.
#[derive(Clone, Debug)]
enum Ty {
    /// A predefined type.
    Basic {
        /// Its handle.
        handle: usize,
        /// Its layout.
        info: TypeInfo,
    },
    /// A committed derived type.
    Derived(Arc<Dtype>),
}

impl Ty {
    /// The type of handle `h`: committed, not `MPI_DATATYPE_NULL`.
    fn of(rt: &Runtime, h: usize) -> MpiResult<Ty> {
        if let Some(info) = datatype::predefined(h) {
            return Ok(Ty::Basic { handle: h, info });
        }
        if h == MPI_DATATYPE_NULL {
            return fail(MPI_ERR_TYPE, "the datatype is MPI_DATATYPE_NULL");
        }
        let e = rt.type_entry(h)?;
        if !e.committed {
            return fail(MPI_ERR_TYPE, "the datatype is not committed");
        }
        Ok(Ty::Derived(e.dt.clone()))
    }

    /// The shape of `count` elements at `addr`.
    fn shape(&self, addr: usize, count: usize) -> Shape {
        match self {
            Ty::Basic { info, .. } if info.extent == info.size => Shape::Contig {
                addr,
                len: info.size * count,
            },
            Ty::Basic { handle, .. } => Shape::new(
                addr,
                count,
                &Arc::new(Dtype::predefined(*handle).expect("predefined")),
            ),
            Ty::Derived(d) => Shape::new(addr, count, d),
        }
    }

    /// The one predefined type the type is made of, if so.
    fn basic(&self) -> Option<usize> {
        match self {
            Ty::Basic { handle, .. } => Some(*handle),
            Ty::Derived(d) => d.basic_type(),
        }
    }

    /// Data bytes of one element.
    fn size(&self) -> usize {
        match self {
            Ty::Basic { info, .. } => info.size,
            Ty::Derived(d) => d.size,
        }
    }
}

/// A local buffer argument: (address, count, datatype handle).
#[derive(Clone, Copy, Debug)]
pub struct Buf {
    /// Address.
    pub addr: usize,
    /// Elements.
    pub count: usize,
    /// Datatype handle.
    pub dt: usize,
}

/// A target argument: (rank, displacement, count, datatype handle).
#[derive(Clone, Copy, Debug)]
pub struct TargetArg {
    /// Rank in the window (`MPI_PROC_NULL`: the operation does nothing).
    pub rank: i32,
    /// Displacement in the target's units.
    pub disp: isize,
    /// Elements.
    pub count: usize,
    /// Datatype handle.
    pub dt: usize,
}

/// A checked operation's target: where, and the data's shape there.
struct Resolved {
    rank: usize,
    place: Place,
    shape: Shape,
    ty: Ty,
}

impl Win {
    /// Checks the target of an operation (rank, epoch, displacement, range) and resolves it.
    fn resolve(&self, rt: &Runtime, t: &TargetArg) -> MpiResult<Option<Resolved>> {
        if t.rank == MPI_PROC_NULL {
            return Ok(None);
        }
        if t.rank < 0 || t.rank >= self.size {
            return fail(
                MPI_ERR_RANK,
                format!(
                    "target rank {} is not in the window (size {})",
                    t.rank, self.size
                ),
            );
        }
        self.epochs.check_access(t.rank)?;
        if t.disp < 0 {
            return fail(
                MPI_ERR_DISP,
                format!("target displacement {} is negative", t.disp),
            );
        }
        let tgt = self.targets[t.rank as usize];
        let ty = Ty::of(rt, t.dt)?;
        let Some(off) = t.disp.checked_mul(tgt.disp_unit) else {
            return fail(MPI_ERR_DISP, "the target displacement overflows");
        };
        let at = match tgt.place {
            Place::Mapped(b) => b,
            Place::Remote { base, .. } => base,
            Place::OtherNode => 0,
        };
        let shape = ty.shape(at.wrapping_add(off as usize), t.count);
        if let Some((lo, hi)) = shape.span() {
            let inside = if self.flavor == MPI_WIN_FLAVOR_DYNAMIC && tgt.place == Place::OtherNode {
                // Another node's attached regions: its server checks.
                true
            } else if self.flavor == MPI_WIN_FLAVOR_DYNAMIC {
                let _g = self.ctrl.acc_lock(t.rank as usize);
                // Dynamic displacements are addresses in the target: the regions it attached.
                let (lo, hi) = (lo.wrapping_sub(at) as u64, hi.wrapping_sub(at) as u64);
                self.ctrl
                    .regions(t.rank as usize)
                    .iter()
                    .any(|&(b, l)| lo >= b && hi <= b + l)
            } else {
                lo >= at && hi <= at + tgt.size && lo <= hi
            };
            if !inside {
                return fail(
                    MPI_ERR_RMA_RANGE,
                    format!(
                        "the access (displacement {}, {} bytes) is outside target rank {}'s {}",
                        t.disp,
                        shape.bytes(),
                        t.rank,
                        if self.flavor == MPI_WIN_FLAVOR_DYNAMIC {
                            "attached memory"
                        } else {
                            "window"
                        }
                    ),
                );
            }
        }
        Ok(Some(Resolved {
            rank: t.rank as usize,
            place: tgt.place,
            shape,
            ty,
        }))
    }
}

fn local_shape(rt: &Runtime, b: &Buf) -> MpiResult<(Shape, Ty)> {
    let ty = Ty::of(rt, b.dt)?;
    Ok((ty.shape(b.addr, b.count), ty))
}

fn same_bytes(what: &str, a: usize, b: usize) -> MpiResult<()> {
    if a != b {
        return fail(
            MPI_ERR_TYPE,
            format!("the {what} buffer holds {a} bytes but the target buffer {b}"),
        );
    }
    Ok(())
}

/// The element type and reduction of an accumulate with `op` on target type `tdt` (and
/// origin type `odt`, unless the op is `MPI_NO_OP`); `None` for `MPI_NO_OP`.
fn element(rt: &Runtime, op: usize, tty: &Ty, oty: Option<&Ty>) -> MpiResult<Option<Element>> {
    let b = match rt.op(op)? {
        OpRef::User(_) => {
            return fail(
                MPI_ERR_OP,
                "user-defined operations are not allowed in one-sided accumulates",
            )
        }
        OpRef::Builtin(b) => b,
    };
    let Some(basic) = tty.basic() else {
        return fail(
            MPI_ERR_TYPE,
            "an accumulate's target datatype must be made of one predefined type",
        );
    };
    if b == Builtin::NoOp {
        return Ok(None);
    }
    if let Some(o) = oty {
        if o.size() > 0 && o.basic() != Some(basic) {
            return fail(
                MPI_ERR_TYPE,
                "an accumulate's origin and target datatypes must be made of the same \
                 predefined type",
            );
        }
    }
    basic_element(rt, op, basic).map(Some)
}

/// The element of predefined type `basic` and the reduction of builtin `op` on it (also for
/// the window server, whose request names both).
fn basic_element(rt: &Runtime, op: usize, basic: usize) -> MpiResult<Element> {
    let reducer = rt.accumulate_reducer(op, basic)?;
    let Some(info) = datatype::predefined(basic) else {
        return fail(MPI_ERR_TYPE, "not a predefined element type");
    };
    let spread = (info.extent != info.size)
        .then(|| Arc::new(Dtype::predefined(basic).expect("a basic type is predefined")));
    Ok(Element {
        reducer,
        handle: basic,
        size: info.size,
        extent: info.extent,
        spread,
        replace: Builtin::from_handle(op) == Some(Builtin::Replace),
    })
}

/// The common case in one step: origin and target of the same predefined hole-free type and
/// count, to memory mapped here, inside the window and an access epoch. Returns the target
/// rank, the target data's address here and its length; `None` sends the operation down the
/// general path (which also reports every error).
#[inline]
fn direct(w: &Win, o: &Buf, t: &TargetArg) -> Option<(usize, usize, usize)> {
    if o.dt != t.dt || o.count != t.count || t.rank < 0 || t.rank >= w.size || t.disp < 0 {
        return None;
    }
    // A predefined type without holes (a byte-table lookup).
    let size = datatype::contiguous_size(t.dt)?;
    if w.flavor == MPI_WIN_FLAVOR_DYNAMIC {
        return None;
    }
    let tgt = w.targets.get(t.rank as usize)?;
    let Place::Mapped(base) = tgt.place else {
        return None;
    };
    let len = size.checked_mul(t.count)?;
    let off = (t.disp as usize).checked_mul(tgt.disp_unit as usize)?;
    if off.checked_add(len)? > tgt.size || !w.epochs.may_access(t.rank) {
        return None;
    }
    Some((t.rank as usize, base + off, len))
}

/// What an operation left to do: nothing, or a request to a rank on another node, to
/// [`defer`] or to run outside the runtime ([`net::run`]).
pub type Issued = MpiResult<Option<net::Call>>;

/// Sends `call` (an operation of window `win`) and keeps it for the next synchronization;
/// on a dynamic window (whose ranges only the target can check, an error the call itself
/// should report) it hands the call back to be run at once.
pub fn defer_op(rt: &mut Runtime, win: usize, call: net::Call) -> Issued {
    if rt.win(win)?.1.flavor == MPI_WIN_FLAVOR_DYNAMIC {
        return Ok(Some(call));
    }
    defer(rt, win, call).map(|_| None)
}

/// Sends `call` (of window `win`) and keeps it for the next synchronization.
fn defer(rt: &mut Runtime, win: usize, call: net::Call) -> MpiResult<()> {
    let comm = rt.win(win)?.1.comm;
    let (ci, _) = rt.comm(comm)?;
    let (target, released) = (call.unflushed_target(), call.released_target());
    let started = net::start(rt, ci, call)?;
    let w = rt.win_mut(win)?;
    w.pending.push(started);
    if let Some(t) = target.filter(|t| !w.unflushed.contains(t)) {
        w.unflushed.push(t);
    }
    if let Some(t) = released.filter(|t| !w.released.contains(t)) {
        w.released.push(t);
    }
    Ok(())
}

/// Whether window `win` spans nodes (its synchronization calls then also progress, so a
/// process spinning on them serves the other nodes' requests to it).
pub fn spans(rt: &Runtime, win: usize) -> bool {
    rt.win(win).is_ok_and(|(_, w)| w.net.is_some())
}

/// Whether window `win` has deferred requests, or requests another thread is settling
/// (then [`settle`]).
pub fn has_pending(rt: &Runtime, win: usize) -> bool {
    rt.win(win).is_ok_and(|(_, w)| w.has_pending())
}

/// Completes the deferred requests of window `win`: waits for their answers, lands fetched
/// data, reports the first error (call outside `runtime::with`). The requests another
/// thread took to settle before this call are complete too when it returns (a flush
/// completes every operation the process issued).
pub fn settle(win: usize) -> MpiResult<()> {
    let Some((pending, batch, earlier)) = runtime::with(|rt| {
        let w = rt.win_mut(win)?;
        if !w.has_pending() && w.unflushed.is_empty() {
            // Nothing deferred, unanswered or being settled by another thread.
            return Ok(None);
        }
        let (mut pending, targets) = (
            std::mem::take(&mut w.pending),
            std::mem::take(&mut w.unflushed),
        );
        let comm = w.comm;
        let (ci, _) = rt.comm(comm)?;
        // Each target of unanswered operations answers a flush once it has done them.
        for t in targets {
            pending.push(net::start(rt, ci, net::Call::flush(comm, t))?);
        }
        let w = rt.win_mut(win)?;
        let batch = w.next_batch;
        w.next_batch += 1;
        let earlier = w.open_batches.clone();
        w.open_batches.push(batch);
        Ok(Some((pending, batch, earlier)))
    })?
    else {
        return Ok(());
    };
    let done = net::finish(pending);
    runtime::with(|rt| {
        rt.win_mut(win)?.open_batches.retain(|&b| b != batch);
        Ok(())
    })?;
    if !earlier.is_empty() {
        runtime::wait_for_unrung(|rt| {
            let (_, w) = rt.win(win)?;
            let open = w.open_batches.iter().any(|b| earlier.contains(b));
            Ok((!open).then_some(()))
        })?;
    }
    done
}

/// `MPI_Put` (and `MPI_Rput`).
pub fn put(rt: &Runtime, win: usize, o: &Buf, t: &TargetArg) -> Issued {
    let (_, w) = rt.win(win)?;
    if let Some((_, at, len)) = direct(w, o, t) {
        // SAFETY: the origin holds `len` bytes (C contract); the target range lies in the
        // target's mapped window memory (checked); they may overlap (our own window).
        unsafe { move_bytes(o.addr as *const u8, at as *mut u8, len) };
        return Ok(None);
    }
    let Some(r) = w.resolve(rt, t)? else {
        return Ok(None);
    };
    let (os, _) = local_shape(rt, o)?;
    same_bytes("origin", os.bytes(), r.shape.bytes())?;
    if r.place == Place::OtherNode {
        let answered = w.answer_next();
        // SAFETY: the origin buffer is the caller's (C contract).
        let call = unsafe { net::Call::put(w.comm, t.rank, &os, &r.shape, answered) };
        return Ok(Some(call));
    }
    // SAFETY: the origin buffer is the caller's (C contract); the target range was checked
    // against the target's window (mapped here, or written through the kernel).
    unsafe { access::put(r.place, &os, &r.shape) }.map(|_| None)
}

/// Copies `len` bytes between ranges that may overlap: the common 4-, 8- and 16-byte elements
/// by register moves (every load before the store), the rest by `memmove`.
///
/// # Safety
/// `src` readable and `dst` writable for `len` bytes.
#[inline(always)]
unsafe fn move_bytes(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: each arm reads and writes exactly `len` bytes of the caller's ranges.
    unsafe {
        match len {
            8 => (dst as *mut u64).write_unaligned((src as *const u64).read_unaligned()),
            4 => (dst as *mut u32).write_unaligned((src as *const u32).read_unaligned()),
            16 => (dst as *mut u128).write_unaligned((src as *const u128).read_unaligned()),
            _ => std::ptr::copy(src, dst, len),
        }
    }
}

/// The target address here and the length of an operation of window `win` that takes the
/// [`direct`] path; `None` for anything else (an invalid window included).
#[inline(always)]
fn direct_at(rt: &Runtime, win: usize, o: &Buf, t: &TargetArg) -> Option<(usize, usize)> {
    let (_, w) = rt.win(win).ok()?;
    direct(w, o, t).map(|(_, at, len)| (at, len))
}

/// [`put`] when it takes the direct path (on-node mapped target, one predefined type, in
/// an access epoch): whether it did the put. Without a request to hand out nor a call to
/// return, the C entry's short way in; anything else (errors included) is [`put`]'s.
#[inline(always)]
pub fn put_direct(rt: &Runtime, win: usize, o: &Buf, t: &TargetArg) -> bool {
    let Some((at, len)) = direct_at(rt, win, o, t) else {
        return false;
    };
    // SAFETY: as in `put`.
    unsafe { move_bytes(o.addr as *const u8, at as *mut u8, len) };
    true
}

/// [`get`] when it takes the direct path: whether it did the get (see [`put_direct`]).
#[inline(always)]
pub fn get_direct(rt: &Runtime, win: usize, o: &Buf, t: &TargetArg) -> bool {
    let Some((at, len)) = direct_at(rt, win, o, t) else {
        return false;
    };
    // SAFETY: as in `get`.
    unsafe { move_bytes(at as *const u8, o.addr as *mut u8, len) };
    true
}

/// `MPI_Get` (and `MPI_Rget`).
pub fn get(rt: &Runtime, win: usize, o: &Buf, t: &TargetArg) -> Issued {
    let (_, w) = rt.win(win)?;
    if let Some((_, at, len)) = direct(w, o, t) {
        // SAFETY: as in `put`, the other way.
        unsafe { move_bytes(at as *const u8, o.addr as *mut u8, len) };
        return Ok(None);
    }
    let Some(r) = w.resolve(rt, t)? else {
        return Ok(None);
    };
    let (os, _) = local_shape(rt, o)?;
    same_bytes("origin", os.bytes(), r.shape.bytes())?;
    if r.place == Place::OtherNode {
        return Ok(Some(net::Call::get(w.comm, t.rank, os, &r.shape)));
    }
    // SAFETY: as in `put`.
    unsafe { access::get(r.place, &os, &r.shape) }.map(|_| None)
}

/// [`accumulate`] when it takes the direct path ([`accumulate_direct`]): whether it did the
/// operation (see [`put_direct`]); errors are left to [`accumulate`].
#[inline(always)]
pub fn accumulate_direct_way(
    rt: &Runtime,
    win: usize,
    o: &Buf,
    result: Option<&Buf>,
    t: &TargetArg,
    op: usize,
) -> bool {
    let Ok((_, w)) = rt.win(win) else {
        return false;
    };
    let Some(at) = direct(w, o, t) else {
        return false;
    };
    accumulate_scalar(w, at, o, result, t, op)
        || accumulate_direct(rt, w, at, o, result, t, op).unwrap_or(false)
}

/// The commonest direct accumulate inline: one element of a common sum ([`atomic::Scalar`]),
/// atomically on a target that uses atomics when aligned, else under its accumulate lock.
/// Whether it did the operation (else [`accumulate_direct`] decides).
#[inline(always)]
fn accumulate_scalar(
    w: &Win,
    (rank, at, len): (usize, usize, usize),
    o: &Buf,
    result: Option<&Buf>,
    t: &TargetArg,
    op: usize,
) -> bool {
    let Some(s) = Builtin::from_handle(op)
        .and_then(|b| atomic::Scalar::of(b, t.dt))
        .filter(|s| s.size() == len)
    else {
        return false;
    };
    if result.is_some_and(|r| r.dt != t.dt || r.count != t.count) {
        return false;
    }
    let atomics = w.targets[rank].atomics && atomic::capable(len, true, at);
    let _g = (!atomics).then(|| w.ctrl.acc_lock(rank));
    // SAFETY: `at` is one element of window memory mapped here (`direct`), aligned when
    // `atomics`; the origin and result buffers hold one element each (C contract).
    unsafe {
        s.add(
            atomics,
            o.addr as *const u8,
            at as *mut u8,
            result.map(|r| r.addr as *mut u8),
        )
    };
    true
}

/// `MPI_Accumulate` and `MPI_Get_accumulate` (`result` given), and their request forms.
pub fn accumulate(
    rt: &Runtime,
    win: usize,
    o: &Buf,
    result: Option<&Buf>,
    t: &TargetArg,
    op: usize,
) -> Issued {
    let (_, w) = rt.win(win)?;
    if let Some(at) = direct(w, o, t) {
        if accumulate_scalar(w, at, o, result, t, op)
            || accumulate_direct(rt, w, at, o, result, t, op)?
        {
            return Ok(None);
        }
    }
    let Some(r) = w.resolve(rt, t)? else {
        // Still check the op (an error even to MPI_PROC_NULL).
        rt.op(op)?;
        return Ok(None);
    };
    if r.shape.bytes() == 0 {
        // Nothing to combine: any valid op goes, whatever the type (as in MPICH; mpi4py
        // probes support with a zero-count MPI_SUM on MPI_BYTE).
        rt.op(op)?;
        return Ok(None);
    }
    let no_op = op == MPI_NO_OP;
    let origin = if no_op && result.is_some() {
        None
    } else {
        Some(local_shape(rt, o)?)
    };
    let el = element(rt, op, &r.ty, origin.as_ref().map(|(_, t)| t))?;
    if let Some((os, _)) = &origin {
        same_bytes("origin", os.bytes(), r.shape.bytes())?;
    }
    let res = match result {
        Some(b) => {
            let (rs, _) = local_shape(rt, b)?;
            same_bytes("result", rs.bytes(), r.shape.bytes())?;
            Some(rs)
        }
        None => None,
    };
    if el.is_none() && res.is_none() {
        return Ok(None);
    }
    let empty = Shape::Contig { addr: 0, len: 0 };
    let os = origin.as_ref().map(|(s, _)| s).unwrap_or(&empty);
    if r.place == Place::OtherNode {
        let basic = r.ty.basic().expect("checked by `element`");
        let op = if el.is_none() { MPI_NO_OP } else { op };
        let answered = w.answer_next();
        let (comm, shape) = (w.comm, &r.shape);
        // SAFETY: the origin buffer is the caller's (C contract).
        let call =
            unsafe { net::Call::accumulate(comm, t.rank, os, shape, res, op, basic, answered) };
        return Ok(Some(call));
    }
    let tgt = &w.targets[r.rank];
    let width = r.ty.basic().and_then(atomic::width);
    if let (true, Place::Mapped(_), Some(size)) = (tgt.atomics, r.place, width) {
        let mut origin = vec![0u8; if el.is_some() { os.bytes() } else { 0 }];
        // SAFETY: the origin is the caller's (C contract); the target was checked as in
        // `put`, in window memory mapped here; elements of `size` bytes, whole per segment.
        unsafe {
            if el.is_some() {
                os.pack(&mut origin);
            }
            let segs = r.shape.segments();
            let fetch = res.is_some();
            let old = atomic::accumulate_packed(
                &w.ctrl,
                r.rank,
                size,
                &segs,
                &origin,
                fetch,
                el.as_ref(),
            );
            if let Some(rs) = &res {
                rs.unpack(&old);
            }
        }
        return Ok(None);
    }
    let _g = w.ctrl.acc_lock(r.rank);
    let timed = match stealable(w, &r, os, res.as_ref(), el.as_ref(), op) {
        Sharing::Ineligible => None,
        Sharing::Alone(kind) => Some((kind, std::time::Instant::now())),
        Sharing::Shared(task, _packed) => {
            let (kind, len, t0) = (task.kind(), task.len, std::time::Instant::now());
            if !acc_steal::run(&w.ctrl, r.rank, task) {
                return fail(
                    MPI_ERR_OTHER,
                    "a chunk of the accumulate could not be reduced",
                );
            }
            steal_choice::record(kind, len, true, t0.elapsed().as_nanos() as u64);
            return Ok(None);
        }
    };
    // SAFETY: as in `put`; the accumulate lock makes the read-modify-write atomic with
    // respect to every other accumulate to this target.
    unsafe { access::accumulate(r.place, os, &r.shape, res.as_ref(), el.as_ref()) }?;
    if let Some((kind, t0)) = timed {
        let ns = t0.elapsed().as_nanos() as u64;
        steal_choice::record(kind, r.shape.bytes(), false, ns);
    }
    Ok(None)
}

/// Whether an accumulate is shared out (`stealable`).
enum Sharing {
    /// It cannot be.
    Ineligible,
    /// It could be, and the measured choice (`steal_choice`) says the origin alone is faster
    /// (or is measuring that way): its target data is of this kind.
    Alone(steal_choice::TargetKind),
    /// Shared: the task, and the packed origin data it may point into.
    Shared(acc_steal::Task, Vec<u8>),
}

/// The accumulate family on the [`direct`] path, after [`accumulate_scalar`] declined: builtin
/// op, same predefined type and count everywhere (result included). By hardware atomics on a target that uses them, else under
/// its accumulate lock; false leaves the operation to the general path (errors, a user op,
/// a different result type, an accumulate large enough to share).
#[inline(never)]
fn accumulate_direct(
    rt: &Runtime,
    w: &Win,
    (rank, at, len): (usize, usize, usize),
    o: &Buf,
    result: Option<&Buf>,
    t: &TargetArg,
    op: usize,
) -> MpiResult<bool> {
    let Some(b) = Builtin::from_handle(op) else {
        return Ok(false);
    };
    if len == 0 || result.is_some_and(|r| r.dt != t.dt || r.count != t.count) {
        return Ok(false);
    }
    let no_op = b == Builtin::NoOp;
    if no_op && result.is_none() {
        return Ok(false);
    }
    let old = result.map(|r| r.addr as *mut u8);
    let reducer = rt.accumulate_reducer(op, t.dt)?;
    let size = reducer.extent.max(1);
    let n = len / size;
    if w.targets[rank].atomics && atomic::capable(size, true, at) {
        let update = match b {
            Builtin::NoOp => atomic::Update::Read,
            Builtin::Replace => atomic::Update::Replace,
            _ => atomic::Update::Reduce(&reducer),
        };
        // SAFETY: `at` is `n` aligned elements of window memory mapped here (`direct`,
        // `capable`); the origin and result buffers hold `n` elements each (C contract).
        unsafe { atomic::update(update, size, n, o.addr as *const u8, at as *mut u8, old) };
        return Ok(true);
    }
    if result.is_none() && len >= acc_steal::min_bytes().unwrap_or(usize::MAX) {
        // Large enough to share (`stealable`; fetches into mapped memory are not shared).
        return Ok(false);
    }
    let _g = w.ctrl.acc_lock(rank);
    // SAFETY: the target run and the origin and result buffers hold `n` whole elements
    // (`direct`, C contract); the accumulate lock makes the update atomic; `apply_raw` copes
    // with overlap.
    unsafe {
        if let Some(p) = old {
            std::ptr::copy(at as *const u8, p, len);
        }
        if !no_op {
            reducer.apply_raw(n, o.addr as *const u8, at as *mut u8);
        }
    }
    Ok(true)
}

/// The accumulate as a task waiting processes may share (`acc_steal`): large, a hole-free
/// element, contiguous target data in shared window memory or in a process of the node
/// (`MPI_Win_create`d or attached memory, reached by CMA); with a result buffer only into
/// another process's memory, and contiguous.
/// Whether to share it is `steal_choice`'s measured choice. A non-contiguous origin is packed
/// first: the returned buffer holds it and must outlive the task.
fn stealable(
    w: &Win,
    r: &Resolved,
    o: &Shape,
    result: Option<&Shape>,
    el: Option<&Element>,
    op: usize,
) -> Sharing {
    match eligible(w, r, o, result, el, op) {
        None => Sharing::Ineligible,
        Some(task) if !steal_choice::choose(task.kind(), task.len) => Sharing::Alone(task.kind()),
        Some(mut task) => {
            let mut packed = Vec::new();
            if o.contig().is_none() {
                packed = vec![0u8; task.len];
                // SAFETY: the origin buffer is the caller's (C contract); `packed` holds its
                // bytes.
                unsafe { o.pack(&mut packed) };
                task.origin = packed.as_ptr() as usize;
            }
            Sharing::Shared(task, packed)
        }
    }
}

/// The accumulate as a task to share, if it may be (see [`stealable`]); a non-contiguous
/// origin's address is left 0 to be packed.
fn eligible(
    w: &Win,
    r: &Resolved,
    o: &Shape,
    result: Option<&Shape>,
    el: Option<&Element>,
    op: usize,
) -> Option<acc_steal::Task> {
    let min = acc_steal::min_bytes()?;
    let el = el?;
    let Shape::Contig { addr: ta, len } = r.shape else {
        return None;
    };
    let owns_memory = matches!(w.flavor, MPI_WIN_FLAVOR_ALLOCATE | MPI_WIN_FLAVOR_SHARED);
    let me = std::process::id() as i32;
    let target = match r.place {
        Place::Mapped(_) if owns_memory => acc_steal::TaskTarget::Shared {
            off: ta - w.ctrl.memory(),
        },
        Place::Mapped(_) => acc_steal::TaskTarget::Process { pid: me, addr: ta },
        Place::Remote { pid, .. } => acc_steal::TaskTarget::Process { pid, addr: ta },
        Place::OtherNode => return None,
    };
    // Fetched values are shared out only when the origin reaches the target by CMA: where it
    // copies them with loads and stores, helpers writing them back by CMA made
    // `MPI_Get_accumulate` slower (benches/README.md, "Accumulate stealing").
    let result = match result {
        None => 0,
        Some(Shape::Contig { addr, .. }) if matches!(target, acc_steal::TaskTarget::Process { pid, .. } if pid != me) => {
            *addr
        }
        Some(_) => return None,
    };
    if w.targets[r.rank].atomics
        || len < min
        || el.size == 0
        || !el.dense()
        || len / acc_steal::CHUNK >= ctrl::MAX_CHUNKS
        || o.bytes() != len
    {
        return None;
    }
    Some(acc_steal::Task {
        pid: me,
        origin: o.contig().map_or(0, |(a, _)| a),
        result,
        target,
        len,
        op,
        dt: el.handle,
    })
}

/// The local buffers of `MPI_Compare_and_swap`: one element each.
#[derive(Clone, Copy, Debug)]
pub struct Swap {
    /// The value to write.
    pub origin: usize,
    /// The value to compare with.
    pub compare: usize,
    /// Where the old value goes.
    pub result: usize,
}

/// [`compare_and_swap`] when it takes the direct path (see [`put_direct`]): one element of
/// 1, 2, 4 or 8 bytes in memory mapped here, by one atomic instruction on a target that uses
/// atomics when aligned, else under the target's accumulate lock. Whether it did the swap.
#[inline(always)]
pub fn compare_and_swap_direct(rt: &Runtime, win: usize, s: Swap, t: &TargetArg) -> bool {
    let Ok((_, w)) = rt.win(win) else {
        return false;
    };
    let o = Buf {
        addr: s.origin,
        count: t.count,
        dt: t.dt,
    };
    let Some((rank, at, len)) = direct(w, &o, t) else {
        return false;
    };
    if atomic::width(t.dt) != Some(len) {
        return false;
    }
    let (origin, compare, result) = (
        s.origin as *const u8,
        s.compare as *const u8,
        s.result as *mut u8,
    );
    if w.targets[rank].atomics && atomic::capable(len, true, at) {
        // SAFETY: one aligned element of window memory mapped here (`direct`, `capable`);
        // the three local buffers hold one element each (C contract).
        unsafe { atomic::compare_and_swap(len, origin, compare, result, at as *mut u8) };
        return true;
    }
    let _g = w.ctrl.acc_lock(rank);
    let (mut cur, mut new) = ([0u8; 8], [0u8; 8]);
    // SAFETY: `at` is one element of `len <= 8` bytes of window memory mapped here
    // (`direct`); the local buffers hold one element each (C contract); the accumulate lock
    // makes the swap atomic. Both values are read before anything is written (the buffers
    // may overlap).
    unsafe {
        std::ptr::copy_nonoverlapping(at as *const u8, cur.as_mut_ptr(), len);
        std::ptr::copy_nonoverlapping(origin, new.as_mut_ptr(), len);
        let equal = cur[..len] == *std::slice::from_raw_parts(compare, len);
        std::ptr::copy_nonoverlapping(cur.as_ptr(), result, len);
        if equal {
            std::ptr::copy_nonoverlapping(new.as_ptr(), at as *mut u8, len);
        }
    }
    true
}

/// `MPI_Compare_and_swap` (`t.count` is 1).
pub fn compare_and_swap(rt: &Runtime, win: usize, s: Swap, t: &TargetArg) -> Issued {
    let (origin, compare, result) = (s.origin, s.compare, s.result);
    let (_, w) = rt.win(win)?;
    let Some(r) = w.resolve(rt, t)? else {
        return Ok(None);
    };
    let Ty::Basic { info, .. } = &r.ty else {
        return fail(
            MPI_ERR_TYPE,
            "MPI_Compare_and_swap takes a predefined datatype",
        );
    };
    if r.place == Place::OtherNode {
        let bufs = (origin, compare, result);
        // SAFETY: the three local buffers hold one element each (C contract).
        let call =
            unsafe { net::Call::compare_and_swap(w.comm, t.rank, bufs, &r.shape, info.size) };
        return Ok(Some(call));
    }
    if let (true, Place::Mapped(_), Shape::Contig { addr, .. }) =
        (w.targets[r.rank].atomics, r.place, &r.shape)
    {
        if atomic::capable(info.size, info.size == info.extent, *addr) {
            // SAFETY: one aligned element of window memory mapped here (checked as in
            // `put`); the three local buffers hold one element each (C contract).
            unsafe {
                atomic::compare_and_swap(
                    info.size,
                    origin as *const u8,
                    compare as *const u8,
                    result as *mut u8,
                    *addr as *mut u8,
                )
            };
            return Ok(None);
        }
    }
    let _g = w.ctrl.acc_lock(r.rank);
    // SAFETY: the three local buffers hold one element each (C contract); the target was
    // checked as in `put`; the accumulate lock makes the swap atomic.
    unsafe { access::compare_and_swap(r.place, origin, compare, result, &r.shape, info.size) }
        .map(|_| None)
}

/// Window ranks of the world ranks `members` (`MPI_ERR_RANK` when one is not in the window).
pub fn window_ranks(rt: &Runtime, win: usize, members: &[u32]) -> MpiResult<Vec<i32>> {
    let (_, w) = rt.win(win)?;
    let (_, c) = rt.comm(w.comm)?;
    let world: Vec<u32> = c.members();
    members
        .iter()
        .map(|m| match world.iter().position(|x| x == m) {
            Some(r) => Ok(r as i32),
            None => fail(MPI_ERR_RANK, "a process of the group is not in the window"),
        })
        .collect()
}

/// Checks an assert argument: only the `MPI_MODE_*` bits in `allowed`.
pub fn check_assert(assert: i32, allowed: i32) -> MpiResult<()> {
    if assert & !allowed != 0 {
        return fail(
            MPI_ERR_ASSERT,
            format!("assert {assert:#x} has bits this call does not take"),
        );
    }
    Ok(())
}

/// `MPI_Win_fence`'s epoch bookkeeping (the caller then synchronizes the ranks).
pub fn fence(rt: &mut Runtime, win: usize, assert: i32) -> MpiResult<usize> {
    check_assert(
        assert,
        MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED,
    )?;
    let w = rt.win_mut(win)?;
    w.epochs.fence(assert)?;
    fence_memory();
    Ok(w.comm)
}

/// Orders this process's loads and stores around a synchronization.
pub fn fence_memory() {
    memory_fence(Ordering::SeqCst);
}

impl Win {
    /// Whether the next put or accumulate to another node should be answered: on dynamic
    /// windows always (the call reports range errors), else when nothing is pending, so a
    /// lone operation's flush waits for its answer instead of sending a flush of its own
    /// (one round trip, not a message more), while a stream of them goes unanswered.
    fn answer_next(&self) -> bool {
        self.flavor == MPI_WIN_FLAVOR_DYNAMIC || self.pending.is_empty()
    }

    /// Whether it has deferred requests, or requests another thread is settling.
    fn has_pending(&self) -> bool {
        !self.pending.is_empty() || !self.open_batches.is_empty()
    }

    /// Whether window rank `r` is on another node.
    fn elsewhere(&self, r: i32) -> bool {
        self.targets[r as usize].place == Place::OtherNode
    }
}

/// `MPI_Win_post` to window ranks `group` (call outside `runtime::with`: origins on other
/// nodes are told by message).
pub fn post(win: usize, group: Vec<i32>, assert: i32) -> MpiResult<()> {
    check_assert(assert, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT)?;
    let calls = runtime::with(|rt| {
        let w = rt.win_mut(win)?;
        w.epochs.post(group.clone())?;
        fence_memory();
        let mut calls = Vec::new();
        if assert & MPI_MODE_NOCHECK == 0 {
            for &o in &group {
                if w.elsewhere(o) {
                    calls.push(net::Call::sync(w.comm, o, net::Kind::Post, None));
                } else {
                    w.ctrl
                        .post_count(w.rank as usize, o as usize)
                        .fetch_add(1, Ordering::Release);
                }
            }
        }
        Ok(calls)
    })?;
    net::run(calls)
}

/// `MPI_Win_start` on window ranks `group`: waits for their posts (unless `MPI_MODE_NOCHECK`).
pub fn start(win: usize, group: Vec<i32>, assert: i32) -> MpiResult<()> {
    check_assert(assert, MPI_MODE_NOCHECK)?;
    runtime::with(|rt| rt.win_mut(win)?.epochs.start(group.clone()))?;
    if assert & MPI_MODE_NOCHECK == 0 {
        runtime::wait_for_unrung(|rt| {
            let w = rt.win_mut(win)?;
            let me = w.rank as usize;
            let ready = group.iter().all(|&t| {
                w.ctrl.post_count(t as usize, me).load(Ordering::Acquire)
                    != w.posts_seen[t as usize]
            });
            if ready {
                for &t in &group {
                    w.posts_seen[t as usize] = w.posts_seen[t as usize].wrapping_add(1);
                }
            }
            Ok(ready.then_some(()))
        })?;
    }
    fence_memory();
    Ok(())
}

/// `MPI_Win_complete` (call outside `runtime::with`: targets on other nodes are told by
/// message).
pub fn complete(win: usize) -> MpiResult<()> {
    // The epoch ends even when an operation failed (reported after).
    let settled = settle(win);
    let calls = runtime::with(|rt| {
        let w = rt.win_mut(win)?;
        let group = w.epochs.complete()?;
        fence_memory();
        let mut calls = Vec::new();
        for t in group {
            if w.elsewhere(t) {
                calls.push(net::Call::sync(w.comm, t, net::Kind::Complete, None));
            } else {
                w.ctrl
                    .complete_count(t as usize, w.rank as usize)
                    .fetch_add(1, Ordering::Release);
            }
        }
        Ok(calls)
    })?;
    net::run(calls)?;
    settled
}

/// `MPI_Win_test` (and one step of `MPI_Win_wait`): whether every origin of the exposure
/// epoch has completed; ends the epoch when so.
pub fn test(rt: &mut Runtime, win: usize) -> MpiResult<bool> {
    let w = rt.win_mut(win)?;
    let me = w.rank as usize;
    let group = w.epochs.posted()?.to_vec();
    let done = group.iter().all(|&o| {
        w.ctrl
            .complete_count(me, o as usize)
            .load(Ordering::Acquire)
            != w.completes_seen[o as usize]
    });
    if done {
        for &o in &group {
            w.completes_seen[o as usize] = w.completes_seen[o as usize].wrapping_add(1);
        }
        w.epochs.end_post();
        fence_memory();
    }
    Ok(done)
}

/// `MPI_Win_wait`.
pub fn wait(win: usize) -> MpiResult<()> {
    runtime::with(|rt| rt.win(win)?.1.epochs.posted().map(|_| ()))?;
    runtime::wait_for_unrung(|rt| Ok(test(rt, win)?.then_some(())))
}

/// `MPI_Win_lock`.
pub fn lock(win: usize, kind: i32, target: i32, assert: i32) -> MpiResult<()> {
    check_assert(assert, MPI_MODE_NOCHECK)?;
    let kind = LockKind::from_arg(kind)?;
    let taken = assert & MPI_MODE_NOCHECK == 0;
    let found = runtime::with(|rt| {
        let (_, w) = rt.win(win)?;
        if target == MPI_PROC_NULL {
            return Ok(None);
        }
        if target < 0 || target >= w.size {
            return fail(
                MPI_ERR_RANK,
                format!("target rank {target} is not in the window"),
            );
        }
        w.epochs.check_lock(target)?;
        let (comm, elsewhere) = (w.comm, w.elsewhere(target));
        // A lock on the node that is free (or not taken: MPI_MODE_NOCHECK) is held at once.
        if !elsewhere && (!taken || w.ctrl.try_lock(target as usize, kind)) {
            rt.win_mut(win)?.epochs.locked(Held {
                rank: target,
                kind,
                taken,
            });
            fence_memory();
            return Ok(None);
        }
        Ok(Some((comm, elsewhere)))
    })?;
    let Some((comm, elsewhere)) = found else {
        return Ok(());
    };
    if taken && elsewhere {
        net::run(vec![net::Call::sync(
            comm,
            target,
            net::Kind::Lock,
            Some(kind),
        )])?;
    } else if taken {
        runtime::wait_for_unrung(|rt| {
            let (_, w) = rt.win(win)?;
            Ok(w.ctrl.try_lock(target as usize, kind).then_some(()))
        })?;
    }
    runtime::with(|rt| {
        rt.win_mut(win)?.epochs.locked(Held {
            rank: target,
            kind,
            taken,
        });
        Ok(())
    })?;
    fence_memory();
    Ok(())
}

/// `MPI_Win_unlock` (call outside `runtime::with`: a target on another node is told by
/// message).
pub fn unlock(win: usize, target: i32) -> MpiResult<()> {
    let far = runtime::with(|rt| {
        let (_, w) = rt.win(win)?;
        let far = target >= 0 && target < w.size && w.elsewhere(target);
        if !far && !w.has_pending() && w.unflushed.is_empty() {
            // On the node with nothing to settle: released at once.
            return release(rt, win, target, false).map(|_| None);
        }
        Ok(Some(far))
    })?;
    let Some(far) = far else {
        return Ok(());
    };
    // Operations to ranks on the node are complete; those to other nodes complete here: a
    // release to another node goes right after them and its answer (when one is pending)
    // stands for their flush, else they settle first. Either way the lock is released even
    // when an operation failed (reported after).
    let settled = if far { Ok(()) } else { settle(win) };
    runtime::with(|rt| release(rt, win, target, far))?;
    if far {
        settle(win)
    } else {
        settled
    }
}

/// Ends the lock epoch of window `win` on `target` and releases its lock: at once on the
/// node, by a deferred message to a target on another node (`far`).
fn release(rt: &mut Runtime, win: usize, target: i32, far: bool) -> MpiResult<()> {
    let w = rt.win_mut(win)?;
    if target == MPI_PROC_NULL {
        return Ok(());
    }
    if target < 0 || target >= w.size {
        return fail(
            MPI_ERR_RANK,
            format!("target rank {target} is not in the window"),
        );
    }
    let held = w.epochs.unlock(target)?;
    fence_memory();
    if held.taken && far {
        let answered = !w.pending.is_empty() || w.unflushed.contains(&target);
        w.unflushed.retain(|&t| t != target || !answered);
        let call = net::Call::unlock(w.comm, target, held.kind, answered);
        defer(rt, win, call)?;
    } else if held.taken {
        w.ctrl.unlock(target as usize, held.kind);
    }
    Ok(())
}

/// `MPI_Win_lock_all`: a shared lock on every rank.
pub fn lock_all(win: usize, assert: i32) -> MpiResult<()> {
    check_assert(assert, MPI_MODE_NOCHECK)?;
    let (comm, elsewhere) = runtime::with(|rt| {
        let (_, w) = rt.win(win)?;
        w.epochs.check_lock_all()?;
        Ok((
            w.comm,
            (0..w.size).map(|t| w.elsewhere(t)).collect::<Vec<_>>(),
        ))
    })?;
    let taken = assert & MPI_MODE_NOCHECK == 0;
    if taken {
        let mut calls = Vec::new();
        for (t, &far) in elsewhere.iter().enumerate() {
            if far {
                let shared = Some(LockKind::Shared);
                calls.push(net::Call::sync(comm, t as i32, net::Kind::Lock, shared));
                continue;
            }
            runtime::wait_for_unrung(|rt| {
                let (_, w) = rt.win(win)?;
                Ok(w.ctrl.try_lock(t, LockKind::Shared).then_some(()))
            })?;
        }
        net::run(calls)?;
    }
    runtime::with(|rt| {
        rt.win_mut(win)?.epochs.locked_all(taken);
        Ok(())
    })?;
    fence_memory();
    Ok(())
}

/// `MPI_Win_unlock_all` (call outside `runtime::with`).
pub fn unlock_all(win: usize) -> MpiResult<()> {
    // As in `unlock`.
    let settled = settle(win);
    runtime::with(|rt| {
        let w = rt.win_mut(win)?;
        let taken = w.epochs.unlock_all()?;
        fence_memory();
        if !taken {
            return Ok(());
        }
        let comm = w.comm;
        let mut far = Vec::new();
        for t in 0..w.size {
            if w.elsewhere(t) {
                far.push(t);
            } else {
                w.ctrl.unlock(t as usize, LockKind::Shared);
            }
        }
        for t in far {
            let shared = Some(LockKind::Shared);
            defer(rt, win, net::Call::sync(comm, t, net::Kind::Unlock, shared))?;
        }
        Ok(())
    })?;
    settled
}

/// The flushes: operations on the node complete when issued, so a flush checks its epoch and
/// orders memory (the caller then [`settle`]s requests to other nodes). `target` `None`:
/// every target.
#[inline(always)]
pub fn flush(rt: &Runtime, win: usize, target: Option<i32>) -> MpiResult<Flushed> {
    let (_, w) = rt.win(win)?;
    match target {
        Some(MPI_PROC_NULL) => {}
        Some(t) if t < 0 || t >= w.size => return rank_outside(t),
        Some(t) => w.epochs.check_passive(t)?,
        None => w.epochs.check_any_passive()?,
    }
    fence_memory();
    Ok(Flushed {
        spans: w.net.is_some(),
        pending: w.has_pending(),
    })
}

/// The error of a flush to a rank outside the window (out of line).
#[cold]
#[inline(never)]
fn rank_outside<T>(t: i32) -> MpiResult<T> {
    fail(
        MPI_ERR_RANK,
        format!("target rank {t} is not in the window"),
    )
}

/// What [`flush`] found of its window (one lookup for the caller's next steps).
#[derive(Clone, Copy, Debug)]
pub struct Flushed {
    /// The window spans nodes ([`spans`]): the caller progresses, then asks [`has_pending`].
    pub spans: bool,
    /// The window has requests to settle ([`has_pending`], before any progress).
    pub pending: bool,
}

/// `MPI_Win_attach` of `[base, base + len)`.
pub fn attach(rt: &Runtime, win: usize, base: usize, len: usize) -> MpiResult<()> {
    let (_, w) = rt.win(win)?;
    if w.flavor != MPI_WIN_FLAVOR_DYNAMIC {
        return fail(MPI_ERR_RMA_FLAVOR, "MPI_Win_attach needs a dynamic window");
    }
    if len == 0 {
        return Ok(());
    }
    if base == 0 {
        return fail(MPI_ERR_BASE, "the attached memory's base is NULL");
    }
    let me = w.rank as usize;
    let _g = w.ctrl.acc_lock(me);
    let (lo, hi) = (base as u64, (base + len) as u64);
    if w.ctrl
        .regions(me)
        .iter()
        .any(|&(b, l)| lo < b + l && b < hi)
    {
        return fail(
            MPI_ERR_RMA_ATTACH,
            "the memory overlaps memory already attached to the window",
        );
    }
    if !w.ctrl.add_region(me, lo, len as u64) {
        return fail(
            MPI_ERR_RMA_ATTACH,
            format!(
                "at most {} regions may be attached at once",
                ctrl::MAX_REGIONS
            ),
        );
    }
    Ok(())
}

/// `MPI_Win_detach` of the region starting at `base`.
pub fn detach(rt: &Runtime, win: usize, base: usize) -> MpiResult<()> {
    let (_, w) = rt.win(win)?;
    if w.flavor != MPI_WIN_FLAVOR_DYNAMIC {
        return fail(MPI_ERR_RMA_FLAVOR, "MPI_Win_detach needs a dynamic window");
    }
    let me = w.rank as usize;
    let _g = w.ctrl.acc_lock(me);
    if !w.ctrl.remove_region(me, base as u64) {
        return fail(
            MPI_ERR_RMA_ATTACH,
            "no attached memory starts at this address",
        );
    }
    Ok(())
}

/// `MPI_Win_shared_query`: (size, displacement unit, base address here) of `rank`'s memory;
/// `MPI_PROC_NULL`: the lowest rank with memory.
pub fn shared_query(rt: &Runtime, win: usize, rank: i32) -> MpiResult<(usize, isize, usize)> {
    let (_, w) = rt.win(win)?;
    let rank = if rank == MPI_PROC_NULL {
        match w.targets.iter().position(|t| t.size > 0) {
            Some(r) => r as i32,
            None => 0,
        }
    } else {
        rank
    };
    if rank < 0 || rank >= w.size {
        return fail(MPI_ERR_RANK, format!("rank {rank} is not in the window"));
    }
    let t = w.targets[rank as usize];
    match (w.flavor, t.place) {
        (MPI_WIN_FLAVOR_DYNAMIC, _) => fail(
            MPI_ERR_RMA_FLAVOR,
            "MPI_Win_shared_query does not take a dynamic window",
        ),
        // Memory mapped here: every rank's of an allocated window (shared memory), our own of
        // an `MPI_Win_create`d one (MPI-4.1 allows the query on those flavours).
        (_, Place::Mapped(b)) => Ok((t.size, t.disp_unit, b)),
        // Another process's private memory: no load/store access (MPI-4.1: size 0, NULL).
        (_, Place::Remote { .. } | Place::OtherNode) => Ok((0, t.disp_unit, 0)),
    }
}
