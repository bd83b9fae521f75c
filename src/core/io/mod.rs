//! MPI-IO: files opened by a communicator, their views, and data access through explicit
//! offsets, individual and shared file pointers, independently or collectively.
//!
//! Every rank opens the file itself (POSIX, `pread`/`pwrite`); the open is agreed on over the
//! file's own duplicate of the communicator, which also carries the ordered and collective
//! steps. Independent noncontiguous access sieves ([`access`]); collective access runs
//! two-phase I/O with one aggregator per node ([`collective`]). The shared file pointer lives
//! in a hidden file beside the data ([`shared_fp`]), so all of this works on one node and
//! across nodes that share the file system.

pub mod access;
pub mod collective;
pub mod datarep;
pub mod errno;
pub mod hints;
pub mod shared_fp;
pub mod view;
pub mod worker;

use crate::core::error::{fail, MpiResult};
use crate::core::objects::comm_build::plan_dup;
use crate::core::objects::errhandler::Errh;
use crate::core::objects::info::Info;
use crate::core::objects::team::{self, tag, Team};
use crate::core::runtime::{self, Runtime};
use crate::mpi_abi::consts::*;
use crate::platform::file_lock;
use crate::platform::shared_map::SharedMap;
use access::{Elements, Mem, Target};
use errno::io_error;
use hints::Hints;
use shared_fp::SharedPointer;
use std::path::PathBuf;
use std::sync::Arc;
use view::View;

/// An open file.
#[derive(Debug)]
pub struct File {
    /// The file's own communicator (a duplicate of the one it was opened on).
    pub comm: usize,
    /// This process's rank in it.
    pub rank: i32,
    /// Ranks.
    pub size: i32,
    /// Node of every rank (the lowest world rank on it), for choosing aggregators.
    pub nodes: Vec<u32>,
    /// The path as opened.
    pub path: PathBuf,
    /// The open file.
    pub os: Arc<std::fs::File>,
    /// `MPI_MODE_*` bits it was opened with.
    pub amode: i32,
    /// The open file can be read (also when write-only for MPI: sieving writes read).
    pub readable: bool,
    /// Some rank's view has holes: writes take byte-range locks (see `access::Target`).
    pub lock_writes: bool,
    /// The view.
    pub view: View,
    /// Individual file pointer, in etypes of the view.
    pub pos: u64,
    /// Atomic mode.
    pub atomic: bool,
    /// Error handler.
    pub errh: Errh,
    /// Hints in use.
    pub hints: Hints,
    /// The shared file pointer.
    pub shared: Arc<SharedPointer>,
    /// A split collective in progress: the bytes it moved (`*_end` reports them).
    pub split: Option<u64>,
}

impl Runtime {
    /// The table index and entry of file handle `h` (`MPI_ERR_FILE` when invalid).
    pub fn file(&self, h: usize) -> MpiResult<(u32, &File)> {
        match self.files.decode(h) {
            Some(i) => Ok((i, self.files.get(i).expect("decoded file"))),
            None if h == MPI_FILE_NULL => fail(MPI_ERR_FILE, "the file is MPI_FILE_NULL"),
            None => fail(MPI_ERR_FILE, format!("invalid file handle {h:#x}")),
        }
    }

    /// [`Runtime::file`], mutable.
    /// The handle of the open file whose own communicator is `comm` (its requests' errors go
    /// to the file's handler).
    pub fn file_of_comm(&self, comm: usize) -> Option<usize> {
        self.files
            .iter()
            .find(|(_, f)| f.comm == comm)
            .map(|(i, _)| self.files.handle(i))
    }

    pub fn file_mut(&mut self, h: usize) -> MpiResult<&mut File> {
        let (i, _) = self.file(h)?;
        Ok(self.files.get_mut(i).expect("decoded file"))
    }
}

/// Checks an access mode: exactly one of read-only, write-only, read-write, and the
/// combinations the standard forbids.
pub fn check_amode(amode: i32) -> MpiResult<()> {
    let rw = [MPI_MODE_RDONLY, MPI_MODE_WRONLY, MPI_MODE_RDWR]
        .iter()
        .filter(|&&m| amode & m != 0)
        .count();
    let known = MPI_MODE_RDONLY
        | MPI_MODE_WRONLY
        | MPI_MODE_RDWR
        | MPI_MODE_CREATE
        | MPI_MODE_EXCL
        | MPI_MODE_DELETE_ON_CLOSE
        | MPI_MODE_UNIQUE_OPEN
        | MPI_MODE_SEQUENTIAL
        | MPI_MODE_APPEND;
    let why = if amode & !known != 0 {
        Some("it has bits that are no MPI_MODE_* constant")
    } else if rw != 1 {
        Some("it must hold exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY and MPI_MODE_RDWR")
    } else if amode & MPI_MODE_RDONLY != 0 && amode & (MPI_MODE_CREATE | MPI_MODE_EXCL) != 0 {
        Some("MPI_MODE_RDONLY cannot be combined with MPI_MODE_CREATE or MPI_MODE_EXCL")
    } else if amode & MPI_MODE_RDWR != 0 && amode & MPI_MODE_SEQUENTIAL != 0 {
        Some("MPI_MODE_RDWR cannot be combined with MPI_MODE_SEQUENTIAL")
    } else {
        None
    };
    match why {
        Some(w) => fail(
            MPI_ERR_AMODE,
            format!("invalid access mode {amode:#x}: {w}"),
        ),
        None => Ok(()),
    }
}

fn team_of(rt: &Runtime, comm: usize) -> MpiResult<Team> {
    let (i, c) = rt.comm(comm)?;
    Ok(Team::whole(i, c.size, c.rank, tag::FILE))
}

/// Every rank's error class of a collective step (0: success) agreed on: the first failing
/// rank's error, with its message when it is this rank's.
pub(crate) fn agree(team: &Team, mine: MpiResult<()>) -> MpiResult<()> {
    let class = match &mine {
        Ok(()) => 0,
        Err(e) => e.class() as u32,
    };
    let all = team::allgather_u32(team.clone(), class)?;
    mine?;
    match all.iter().position(|&c| c != 0) {
        Some(r) => fail(
            all[r] as i32,
            format!("the operation failed on rank {r} of the file's communicator"),
        ),
        None => Ok(()),
    }
}

/// The rank's node: the lowest world rank on it.
fn node_of_me(rt: &Runtime) -> u32 {
    rt.local_of_world
        .iter()
        .position(|&l| l != u32::MAX)
        .unwrap_or(rt.world_rank as usize) as u32
}

/// Opens the file for this rank. A write-only file is opened for reading too when the
/// permissions allow it (as ROMIO does), so that strided writes can sieve; the access mode
/// still forbids reads through MPI. Returns the file and whether it can be read.
fn os_open(path: &PathBuf, amode: i32, create: bool) -> std::io::Result<(std::fs::File, bool)> {
    if amode & MPI_MODE_WRONLY != 0 {
        let rw = (amode & !MPI_MODE_WRONLY) | MPI_MODE_RDWR;
        match os_open_as(path, rw, create) {
            Ok(f) => return Ok((f, true)),
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {}
            Err(e) => return Err(e),
        }
    }
    let readable = amode & MPI_MODE_WRONLY == 0;
    os_open_as(path, amode, create).map(|f| (f, readable))
}

fn os_open_as(path: &PathBuf, amode: i32, create: bool) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::File::options();
    o.read(amode & (MPI_MODE_RDONLY | MPI_MODE_RDWR) != 0)
        .write(amode & (MPI_MODE_WRONLY | MPI_MODE_RDWR) != 0);
    if create {
        if amode & MPI_MODE_EXCL != 0 {
            o.create_new(true);
        } else {
            o.create(true);
        }
    }
    o.open(path)
}

/// `MPI_File_open` on communicator `comm` (collective; call outside `runtime::with`).
pub fn open(comm: usize, path: &str, amode: i32, info: Info) -> MpiResult<usize> {
    check_amode(amode)?;
    if path.is_empty() {
        return fail(MPI_ERR_BAD_FILE, "the file name is empty");
    }
    // ROMIO's file-system prefixes (`ufs:`, `nfs:`...) name the driver; the path follows.
    let plain = match path.split_once(':') {
        Some((fs, rest)) if fs.len() > 1 && !fs.contains('/') => rest,
        _ => path,
    };
    let path = PathBuf::from(plain);
    let hints = Hints::from_info(&info)?;
    let (plan, node) = runtime::with(|rt| {
        let (_, c) = rt.comm_plain(comm)?;
        if c.is_inter() {
            return fail(MPI_ERR_COMM, "files are opened on intracommunicators only");
        }
        Ok((plan_dup(rt, comm)?, node_of_me(rt)))
    })?;
    let id = plan.agreement().run()?;
    let fcomm =
        runtime::with(|rt| rt.install_comm(id, plan.blueprint(Vec::new(), Info::default())))?;
    let drop_comm = || {
        let _ = runtime::with(|rt| {
            if let Some(i) = rt.comm_index(fcomm) {
                rt.release_comm(i);
            }
            Ok(())
        });
    };
    match open_on(fcomm, path, amode, hints, node) {
        Ok(h) => Ok(h),
        Err(e) => {
            drop_comm();
            Err(e)
        }
    }
}

fn open_on(fcomm: usize, path: PathBuf, amode: i32, hints: Hints, node: u32) -> MpiResult<usize> {
    let (team, rank, size) = runtime::with(|rt| {
        let t = team_of(rt, fcomm)?;
        let (_, c) = rt.comm(fcomm)?;
        Ok((t, c.rank, c.size))
    })?;
    let create = amode & MPI_MODE_CREATE != 0;
    // Rank 0 creates (so that MPI_MODE_EXCL fails on one rank only), then the others open.
    let mut opened = None;
    let first = if rank == 0 {
        match os_open(&path, amode, create) {
            Ok(f) => {
                opened = Some(f);
                Ok(())
            }
            Err(e) => Err(io_error(&e, "cannot open", &path)),
        }
    } else {
        Ok(())
    };
    agree(&team, first)?;
    let mine = if rank != 0 {
        match os_open(&path, amode, false) {
            Ok(f) => {
                opened = Some(f);
                Ok(())
            }
            Err(e) => Err(io_error(&e, "cannot open", &path)),
        }
    } else {
        Ok(())
    };
    agree(&team, mine)?;
    let (os, readable) = opened.expect("opened on every rank");
    // The node of every rank, and rank 0's token naming the shared pointer's file.
    let token = (std::process::id() as u64) << 32
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
    let nodes = team::allgather_u32(team.clone(), node)?;
    let token = u64::from_ne_bytes(
        team::bcast(&team, token.to_ne_bytes().to_vec())?[..8]
            .try_into()
            .expect("8 bytes"),
    );
    let mut shared = SharedPointer::new(&path, token);
    if nodes.iter().all(|&n| n == nodes[0]) {
        if let Some(map) = node_word(&team, rank)? {
            shared = shared.in_memory(map);
        }
    }
    let shared = Arc::new(shared);
    let mut f = File {
        comm: fcomm,
        rank,
        size,
        nodes,
        path,
        os: Arc::new(os),
        amode,
        readable,
        lock_writes: false,
        view: View::default(),
        pos: 0,
        atomic: false,
        errh: Errh::Return,
        hints,
        shared,
        split: None,
    };
    if amode & MPI_MODE_APPEND != 0 {
        let end =
            f.os.metadata()
                .map_err(|e| io_error(&e, "cannot read the size of", &f.path))?
                .len();
        f.pos = end;
        if rank == 0 && end > 0 {
            f.shared.set(end)?;
        }
        team::allgather_u32(team.clone(), 0)?;
    }
    runtime::with(|rt| {
        f.errh = rt.file_null_errh;
        rt.errh_ref(f.errh);
        match rt.files.insert(f) {
            Some(i) => Ok(rt.files.handle(i)),
            None => fail(MPI_ERR_INTERN, "too many open files"),
        }
    })
}

/// A shared mapping of one page for ranks all on this node: rank 0 makes it, the others
/// attach; `None` (the file-backed pointer then) when any rank could not.
fn node_word(team: &Team, rank: i32) -> MpiResult<Option<SharedMap>> {
    let mut made = None;
    let mut key = [0u64; 2];
    if rank == 0 {
        if let Ok((m, (pid, fd))) = SharedMap::create(8) {
            key = [pid, fd];
            made = Some(m);
        }
    }
    let key = team::words(&team::bcast(team, team::bytes(&key))?);
    if rank != 0 && key[0] != 0 {
        made = SharedMap::attach((key[0], key[1]), 8).ok();
    }
    let all = team::allgather_u32(team.clone(), made.is_some() as u32)?;
    Ok(match made {
        Some(mut m) if all.iter().all(|&x| x == 1) => {
            m.close_creator_fd();
            Some(m)
        }
        _ => None,
    })
}

/// `MPI_File_close` (collective): every rank's accesses end before the file (with
/// `MPI_MODE_DELETE_ON_CLOSE`) and the shared pointer's file are removed.
pub fn close(h: usize) -> MpiResult<()> {
    let (team, fcomm) = runtime::with(|rt| {
        let (_, f) = rt.file(h)?;
        if f.split.is_some() {
            return fail(
                MPI_ERR_FILE,
                "a split collective is still in progress on the file (call its _end first)",
            );
        }
        Ok((team_of(rt, f.comm)?, f.comm))
    })?;
    agree(&team, Ok(()))?;
    let f = runtime::with(|rt| {
        let (i, _) = rt.file(h)?;
        let f = rt.files.remove(i).expect("decoded file");
        rt.errh_unref(f.errh);
        Ok(f)
    })?;
    let mut result = Ok(());
    if f.rank == 0 {
        f.shared.remove();
        if f.amode & MPI_MODE_DELETE_ON_CLOSE != 0 {
            if let Err(e) = std::fs::remove_file(&f.path) {
                result = Err(io_error(&e, "cannot delete on close", &f.path));
            }
        }
    }
    drop(f);
    let agreed = agree(&team, result);
    runtime::with(|rt| {
        if let Some(i) = rt.comm_index(fcomm) {
            rt.release_comm(i);
        }
        Ok(())
    })?;
    agreed
}

/// `MPI_File_delete`.
pub fn delete(path: &str) -> MpiResult<()> {
    let p = PathBuf::from(path);
    std::fs::remove_file(&p).map_err(|e| io_error(&e, "cannot delete", &p))
}

/// Runs `f` on rank 0 of file `h`'s communicator once every rank has arrived, and agrees on
/// its outcome (collective).
fn on_root(h: usize, f: impl FnOnce(&File) -> MpiResult<()>) -> MpiResult<()> {
    let (team, root) = runtime::with(|rt| {
        let (_, file) = rt.file(h)?;
        Ok((team_of(rt, file.comm)?, file.rank == 0))
    })?;
    // Every rank's earlier accesses are done before the file changes under them.
    agree(&team, Ok(()))?;
    let mine = if root {
        runtime::with(|rt| f(rt.file(h)?.1))
    } else {
        Ok(())
    };
    agree(&team, mine)
}

/// `MPI_File_set_size` (collective).
pub fn set_size(h: usize, size: i64) -> MpiResult<()> {
    if size < 0 {
        return fail(MPI_ERR_ARG, format!("file size {size} is negative"));
    }
    writable(h)?;
    on_root(h, |f| {
        f.os.set_len(size as u64)
            .map_err(|e| io_error(&e, "cannot set the size of", &f.path))
    })
}

/// `MPI_File_preallocate` (collective).
pub fn preallocate(h: usize, size: i64) -> MpiResult<()> {
    if size < 0 {
        return fail(MPI_ERR_ARG, format!("size {size} is negative"));
    }
    writable(h)?;
    on_root(h, |f| {
        file_lock::preallocate(&f.os, size as u64)
            .map_err(|e| io_error(&e, "cannot preallocate", &f.path))
    })
}

fn writable(h: usize) -> MpiResult<()> {
    runtime::with(|rt| {
        let (_, f) = rt.file(h)?;
        if f.amode & MPI_MODE_RDONLY != 0 {
            return fail(MPI_ERR_READ_ONLY, "the file was opened read-only");
        }
        Ok(())
    })
}

/// `MPI_File_get_size`.
pub fn size(h: usize) -> MpiResult<u64> {
    let (os, path) = runtime::with(|rt| {
        let (_, f) = rt.file(h)?;
        Ok((f.os.clone(), f.path.clone()))
    })?;
    os.metadata()
        .map(|m| m.len())
        .map_err(|e| io_error(&e, "cannot read the size of", &path))
}

/// `MPI_File_sync` (collective): the data of every rank is on storage when it returns.
pub fn sync(h: usize) -> MpiResult<()> {
    let (team, os, path) = runtime::with(|rt| {
        let (_, f) = rt.file(h)?;
        Ok((team_of(rt, f.comm)?, f.os.clone(), f.path.clone()))
    })?;
    agree(&team, Ok(()))?;
    let mine = os
        .sync_data()
        .map_err(|e| io_error(&e, "cannot sync", &path));
    agree(&team, mine)
}

/// `MPI_File_set_atomicity` (collective).
pub fn set_atomicity(h: usize, on: bool) -> MpiResult<()> {
    let team = runtime::with(|rt| {
        let f = rt.file_mut(h)?;
        f.atomic = on;
        let c = f.comm;
        team_of(rt, c)
    })?;
    agree(&team, Ok(()))
}

/// `MPI_File_set_view` (collective): resets the individual and shared file pointers.
pub fn set_view(h: usize, view: View, info: &Info) -> MpiResult<()> {
    let (team, shared, root) = runtime::with(|rt| {
        let (_, f) = rt.file(h)?;
        if f.split.is_some() {
            return fail(
                MPI_ERR_FILE,
                "a split collective is in progress on the file",
            );
        }
        Ok((team_of(rt, f.comm)?, f.shared.clone(), f.rank == 0))
    })?;
    // Whether any rank's new view has holes (then every write locks its span).
    let holes = team::allgather_u32(team.clone(), !view.contiguous() as u32)?;
    let lock_writes = holes.contains(&1);
    let mine = runtime::with(|rt| {
        let f = rt.file_mut(h)?;
        f.hints.update(info)?;
        f.view = view;
        f.pos = 0;
        f.lock_writes = lock_writes;
        Ok(())
    });
    let mine = mine.and_then(|_| if root { shared.reset() } else { Ok(()) });
    agree(&team, mine)
}

/// `MPI_File_set_info` (collective).
pub fn set_info(h: usize, info: &Info) -> MpiResult<()> {
    let (team, mine) = runtime::with(|rt| {
        let f = rt.file_mut(h)?;
        let r = f.hints.update(info);
        let c = f.comm;
        Ok((team_of(rt, c)?, r))
    })?;
    agree(&team, mine)
}

/// Where an access starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pos {
    /// An explicit offset, in etypes.
    At(u64),
    /// The individual file pointer.
    Individual,
    /// The shared file pointer.
    Shared,
    /// The shared file pointer, in rank order (collective).
    Ordered,
}

/// A data access request.
#[derive(Clone, Copy, Debug)]
pub struct Access {
    /// Where.
    pub pos: Pos,
    /// A write (else a read).
    pub write: bool,
    /// A collective call (`_all`, `_ordered`).
    pub collective: bool,
    /// May run two-phase I/O (the blocking collectives; the nonblocking and split ones
    /// access independently so that they never wait for other ranks).
    pub two_phase: bool,
    /// A nonblocking access (`MPI_File_i*`): the bytes move on the worker thread.
    pub nonblocking: bool,
    /// The user buffer.
    pub buf: usize,
    /// Elements.
    pub count: usize,
    /// Their datatype handle.
    pub dt: usize,
}

/// What an access found about the file, taken out of the runtime for the I/O.
struct Prepared {
    os: Arc<std::fs::File>,
    path: PathBuf,
    view: View,
    atomic: bool,
    readable: bool,
    lock_writes: bool,
    hints: Hints,
    shared: Arc<SharedPointer>,
    mem: Mem,
    el: Elements,
    /// Start in view data bytes (not yet known for shared-pointer access).
    start: u64,
    team: Team,
    nodes: Vec<u32>,
}

fn prepare(rt: &Runtime, h: usize, a: &Access) -> MpiResult<Prepared> {
    let (_, f) = rt.file(h)?;
    if a.write && f.amode & MPI_MODE_RDONLY != 0 {
        return fail(MPI_ERR_READ_ONLY, "writing a file opened MPI_MODE_RDONLY");
    }
    if !a.write && f.amode & MPI_MODE_WRONLY != 0 {
        return fail(MPI_ERR_ACCESS, "reading a file opened MPI_MODE_WRONLY");
    }
    if f.amode & MPI_MODE_SEQUENTIAL != 0 && matches!(a.pos, Pos::At(_) | Pos::Individual) {
        return fail(
            MPI_ERR_UNSUPPORTED_OPERATION,
            "a file opened MPI_MODE_SEQUENTIAL is accessed through the shared file pointer only",
        );
    }
    let dt = rt.dtype(a.dt)?;
    let mem = match rt.resolve_type(a.dt, a.count)? {
        crate::core::datatype::Resolved::Plain { unit, offset } if unit.size == unit.extent => {
            Mem::Contig {
                addr: a.buf.wrapping_add_signed(offset),
                len: unit.size * a.count,
            }
        }
        _ => Mem::Layout {
            base: a.buf,
            layout: crate::core::datatype::Layout {
                dt: dt.clone(),
                count: a.count,
            },
        },
    };
    let es = f.view.etype_size();
    let start = match a.pos {
        Pos::At(o) => o
            .checked_mul(es)
            .map_or_else(|| fail(MPI_ERR_ARG, "the offset is too large"), Ok)?,
        Pos::Individual => f.pos * es,
        Pos::Shared | Pos::Ordered => 0,
    };
    Ok(Prepared {
        os: f.os.clone(),
        path: f.path.clone(),
        view: f.view.clone(),
        atomic: f.atomic,
        readable: f.readable,
        lock_writes: f.lock_writes,
        hints: f.hints.clone(),
        shared: f.shared.clone(),
        mem,
        el: Elements {
            dt,
            count: a.count,
            handle: a.dt,
            buf: a.buf,
        },
        start,
        team: team_of(rt, f.comm)?,
        nodes: f.nodes.clone(),
    })
}

/// How far an access got when its call returns.
pub enum Started {
    /// Done: the bytes moved.
    Done(u64),
    /// Queued on the worker thread (a nonblocking access): its outcome will be in the slot.
    Queued(std::sync::Arc<worker::Slot>),
}

/// Where this rank's part of an ordered access of `n` bytes starts (collective): the leader
/// gathers every rank's size, moves the shared pointer past them all and sends each rank its
/// offset (one round trip).
fn ordered_start(team: &Team, shared: &SharedPointer, n: u64, es: u64) -> MpiResult<u64> {
    let (comm, tag) = (team.comm, team.tag);
    let others = &team.ranks[1..];
    if !team.is_leader() {
        let leader = team.ranks[0];
        let mut got = [(leader, vec![0u8; 8])];
        collective::exchange(comm, tag, &[(leader, n.to_ne_bytes().to_vec())], &mut got)?;
        return match u64::from_ne_bytes(got[0].1[..].try_into().expect("8 bytes")) {
            u64::MAX => fail(MPI_ERR_IO, "the shared file pointer could not be updated"),
            at => Ok(at),
        };
    }
    let mut sizes: Vec<(i32, Vec<u8>)> = others.iter().map(|&r| (r, vec![0u8; 8])).collect();
    collective::exchange(comm, tag, &[], &mut sizes)?;
    let size_of = |b: &[u8]| u64::from_ne_bytes(b.try_into().expect("8 bytes"));
    let total = n + sizes.iter().map(|(_, b)| size_of(b)).sum::<u64>();
    let base = shared.fetch_add(total / es).map(|b| b * es);
    let mut at = base.as_ref().map_or(u64::MAX, |b| b + n);
    let offsets: Vec<(i32, Vec<u8>)> = sizes
        .iter()
        .map(|(r, b)| {
            let mine = at;
            if at != u64::MAX {
                at += size_of(b);
            }
            (*r, mine.to_ne_bytes().to_vec())
        })
        .collect();
    collective::exchange(comm, tag, &offsets, &mut [])?;
    base
}

/// Runs a data access on file `h` (call outside `runtime::with`): a blocking access to the
/// end, a nonblocking one up to queuing it.
///
/// # Safety
/// `a.buf` must be the C caller's buffer of `a.count` elements of `a.dt`, readable for writes
/// and writable for reads, untouched by the caller until the access is over (the call
/// returns, or for a nonblocking access its request completes).
pub unsafe fn access(h: usize, a: &Access) -> MpiResult<Started> {
    let p = runtime::with(|rt| prepare(rt, h, a));
    // Blocking collectives agree on the arguments first; the nonblocking ones stay local.
    let mut p = if a.collective && (a.two_phase || a.pos == Pos::Ordered) {
        // A rank whose arguments fail still takes part, so that the others do not hang.
        let ok = p
            .as_ref()
            .map(|_| ())
            .map_err(|e| crate::core::error::MpiError::new(e.class(), e.message().to_string()));
        let team = runtime::with(|rt| team_of(rt, rt.file(h)?.1.comm))?;
        agree(&team, ok)?;
        p?
    } else {
        p?
    };
    let n = p.mem.bytes() as u64;
    let es = p.view.etype_size();
    match a.pos {
        Pos::Shared => p.start = p.shared.fetch_add(n / es)? * es,
        Pos::Ordered => p.start = ordered_start(&p.team, &p.shared, n, es)?,
        _ => {}
    }
    // A user's conversion functions run in the caller's thread, while its datatype handle
    // is sure to be valid: a nonblocking access in such a representation completes at once.
    let queued = a.nonblocking && !matches!(p.view.datarep, view::Datarep::User(_));
    if queued {
        // The pointers move at the start, by the amount asked for.
        if a.pos == Pos::Individual {
            runtime::with(|rt| {
                rt.file_mut(h)?.pos += n / es;
                Ok(())
            })?;
        }
        let write = a.write;
        let job = move || {
            let t = Target {
                file: &p.os,
                path: &p.path,
                view: &p.view,
                atomic: p.atomic,
                readable: p.readable,
                sieve: &p.hints.sieve,
                lock_writes: p.lock_writes,
            };
            // SAFETY: forwarded caller guarantee: the buffer stays the access's until its
            // request completes, which happens after this returns.
            unsafe {
                if write {
                    access::write(&t, p.start, &p.mem, &p.el)
                } else {
                    access::read(&t, p.start, &p.mem, &p.el)
                }
            }
        };
        return Ok(Started::Queued(worker::submit(Box::new(job))));
    }
    let target = Target {
        file: &p.os,
        path: &p.path,
        view: &p.view,
        atomic: p.atomic,
        readable: p.readable,
        sieve: &p.hints.sieve,
        lock_writes: p.lock_writes,
    };
    let moved =
        if a.collective && a.two_phase && collective::wanted(&p.hints, a.write, p.team.ranks.len())
        {
            // SAFETY: forwarded caller guarantee.
            unsafe {
                collective::run(
                    &target, &p.team, &p.nodes, &p.hints, p.start, &p.mem, &p.el, a.write,
                )?
            }
        } else if a.write {
            // SAFETY: forwarded caller guarantee.
            unsafe { access::write(&target, p.start, &p.mem, &p.el)? }
        } else {
            // SAFETY: forwarded caller guarantee.
            unsafe { access::read(&target, p.start, &p.mem, &p.el)? }
        };
    if a.pos == Pos::Individual {
        runtime::with(|rt| {
            rt.file_mut(h)?.pos += moved / es;
            Ok(())
        })?;
    }
    Ok(Started::Done(moved))
}

/// `MPI_File_seek` (`shared` false) and `MPI_File_seek_shared` (collective): the new
/// position in etypes.
pub fn seek(h: usize, offset: i64, whence: i32, shared: bool) -> MpiResult<()> {
    let (view, cur, os, path, sp, team, root) = runtime::with(|rt| {
        let (_, f) = rt.file(h)?;
        Ok((
            f.view.clone(),
            f.pos,
            f.os.clone(),
            f.path.clone(),
            f.shared.clone(),
            team_of(rt, f.comm)?,
            f.rank == 0,
        ))
    })?;
    let es = view.etype_size();
    let compute = || -> MpiResult<u64> {
        let base = match whence {
            MPI_SEEK_SET => 0,
            MPI_SEEK_CUR if shared => sp.get()?,
            MPI_SEEK_CUR => cur,
            MPI_SEEK_END => {
                let end = os
                    .metadata()
                    .map_err(|e| io_error(&e, "cannot read the size of", &path))?
                    .len();
                view.data_before(end) / es
            }
            w => return fail(MPI_ERR_ARG, format!("invalid whence {w}")),
        };
        match (base as i64).checked_add(offset) {
            Some(v) if v >= 0 => Ok(v as u64),
            _ => fail(
                MPI_ERR_ARG,
                format!("seeking to a negative position (offset {offset})"),
            ),
        }
    };
    if !shared {
        let to = compute()?;
        return runtime::with(|rt| {
            rt.file_mut(h)?.pos = to;
            Ok(())
        });
    }
    // Every rank computes (the same) position; rank 0 stores it after all have read.
    let to = compute();
    agree(
        &team,
        to.as_ref()
            .map(|_| ())
            .map_err(|e| crate::core::error::MpiError::new(e.class(), e.message().to_string())),
    )?;
    let to = to?;
    let mine = if root { sp.set(to) } else { Ok(()) };
    agree(&team, mine)
}

/// `MPI_File_get_position_shared`.
pub fn position_shared(h: usize) -> MpiResult<u64> {
    let sp = runtime::with(|rt| Ok(rt.file(h)?.1.shared.clone()))?;
    sp.get()
}

/// The default error handler of files (`MPI_FILE_NULL`'s): `MPI_ERRORS_RETURN`.
pub const DEFAULT_ERRH: Errh = Errh::Return;
