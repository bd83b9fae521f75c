//! Endpoint communicators (`MPIX_Comm_create_endpoints`) and thread communicators
//! (`MPIX_Threadcomm_*`, MPICH's interface): communicators in which one process holds
//! several ranks, one per thread.
//!
//! Each endpoint is a communicator table entry of its own, with its own context id, so its
//! traffic has its own matching queues and lands on its own VCI (contexts map to VCIs
//! round-robin): threads driving different endpoints take different VCI locks on the fast
//! paths. The members agree on a run of `M` consecutive context ids, `M` being the largest
//! endpoint count of any process; endpoint `k` of every process uses id `base + k`, and each
//! process returns the ids it has no endpoint for. A message to rank `r` travels on `r`'s
//! context (`Comm::dest_ctx`), so the receiving process files it with the right endpoint even
//! when sender and receiver live in the same process. Ranks are numbered by parent rank, then
//! endpoint index.
//!
//! A thread communicator is an endpoint communicator with one endpoint per thread plus a
//! table entry standing for "the calling thread's endpoint": between `MPIX_Threadcomm_start`
//! and `MPIX_Threadcomm_finish` a thread-local binding redirects its handle
//! (`Runtime::comm`). Threads get their ids in the order they call start, as in MPICH.
//!
//! `MPI_Comm_dup`, `MPI_Comm_dup_with_info`, `MPI_Comm_split` and `MPI_Comm_split_type` on an
//! endpoint communicator ([`split`]) make another endpoint communicator. Its ranks do not
//! agree on context ids at all: each takes an id unique in its own process
//! (`ContextPool::take_local`) and one allgather tells everybody every rank's id, which is
//! all a sender needs (messages travel on the destination rank's context). The other
//! constructors (`MPI_Comm_idup`, `MPI_Comm_create`, intercommunicators), topologies and
//! `MPI_Comm_group` on endpoint communicators are refused with
//! `MPI_ERR_UNSUPPORTED_OPERATION` (`Runtime::comm_plain`): a group names processes, not
//! endpoints, and the agreement of a plain communicator's id lends one mask per process,
//! which two endpoints of a process cannot share.

use crate::core::error::{fail, MpiResult};
use crate::core::objects::comm::{Comm, Endpoints, RankMap, CONTEXTS_PER_ID};
use crate::core::objects::comm_build::{Agreement, PENDING_CTX};
use crate::core::objects::errhandler::Errh;
use crate::core::objects::info::Info;
use crate::core::objects::team::{self, Combine, Round, Team};
use crate::core::runtime::{self, Runtime};
use crate::mpi_abi::consts::*;
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

/// Internal tag of the endpoint-count allgather.
const TAG_COUNTS: i32 = team::tag::ENDPOINTS;

/// Creates `my_num_ep` endpoints of a new endpoint communicator over the processes of
/// intracommunicator handle `parent` (collective over it); returns their handles in rank
/// order.
pub fn create(parent: usize, my_num_ep: i32, info: Info) -> MpiResult<Vec<usize>> {
    if my_num_ep < 1 {
        return fail(
            MPI_ERR_ARG,
            format!("my_num_ep is {my_num_ep}; every process needs at least one endpoint"),
        );
    }
    let (team_counts, team_agree, ctx, world_of, errh) = runtime::with(|rt| {
        let (idx, c) = rt.comm_plain(parent)?;
        if c.is_inter() {
            return fail(
                MPI_ERR_COMM,
                "endpoints are created from an intracommunicator",
            );
        }
        if c.threads.is_some() {
            return fail(
                MPI_ERR_COMM,
                "endpoints cannot be created from a thread communicator",
            );
        }
        Ok((
            Team::whole(idx, c.size, c.rank, TAG_COUNTS),
            Team::whole(idx, c.size, c.rank, team::tag::AGREE),
            c.ctx,
            c.members(),
            c.errh,
        ))
    })?;
    let counts = team::allgather_u32(team_counts, my_num_ep as u32)?;
    let most = counts.iter().copied().max().unwrap_or(1);
    let key = ((ctx as u64) << 32) | (TAG_COUNTS as u32 as u64);
    let base = Agreement::for_run(team_agree, key, most).run()?;
    runtime::with(|rt| Ok(rt.install_endpoints(base, most, &counts, &world_of, errh, &info)))
}

/// `MPI_Comm_split` on endpoint communicator `h` (`MPI_Comm_dup` is color 0, key 0, with the
/// parent's copied attributes `attrs` and hints `info`): collective over its endpoints, each
/// calling from the thread that drives it. Every rank takes a context id unique in its
/// process, then one allgather carries (color, key, id) of every rank; the members of a
/// color, ordered by key and then old rank, form a new endpoint communicator whose rank `r`
/// is addressed on the id rank `r` took. `None` for `MPI_UNDEFINED`.
pub fn split(
    h: usize,
    color: i32,
    key: i32,
    attrs: Vec<(i32, usize)>,
    info: Info,
) -> MpiResult<Option<usize>> {
    if color < 0 && color != MPI_UNDEFINED {
        return fail(
            MPI_ERR_ARG,
            format!("invalid color {color} (must be non-negative or MPI_UNDEFINED)"),
        );
    }
    let (team, worlds, errh) = runtime::with(|rt| {
        let (idx, c) = rt.comm(h)?;
        Ok((
            Team::whole(idx, c.size, c.rank, team::tag::SPLIT),
            c.members(),
            c.errh,
        ))
    })?;
    let me = team.me;
    let id = match color {
        MPI_UNDEFINED => None,
        // `None` while the mask is lent to another communicator's agreement round.
        _ => Some(runtime::wait_for(|rt| Ok(rt.contexts.take_local()))?),
    };
    let mut mine = color.to_ne_bytes().to_vec();
    mine.extend_from_slice(&key.to_ne_bytes());
    mine.extend_from_slice(&id.unwrap_or(0).to_ne_bytes());
    let all = Round::new(team, None, Combine::Concat, mine).run();
    let (all, id) = match (all, id) {
        (Ok(all), Some(id)) => (all, id),
        (Ok(_), None) => return Ok(None),
        (Err(e), id) => {
            if let Some(id) = id {
                runtime::with(|rt| {
                    rt.contexts.release(id);
                    Ok(())
                })?;
            }
            return Err(e);
        }
    };
    let int = |b: &[u8]| i32::from_ne_bytes(b.try_into().expect("4 bytes"));
    let mut chosen: Vec<(i32, usize, u32)> = all
        .chunks_exact(12)
        .enumerate()
        .filter(|(_, r)| int(&r[..4]) == color)
        .map(|(rank, r)| (int(&r[4..8]), rank, int(&r[8..]) as u32))
        .collect();
    chosen.sort_unstable();
    let rank = chosen
        .iter()
        .position(|c| c.1 == me)
        .expect("this rank has its own color") as i32;
    let eps = Arc::new(Endpoints {
        ctx_of_rank: chosen.iter().map(|c| c.2 * CONTEXTS_PER_ID).collect(),
    });
    let map = RankMap::Table(chosen.iter().map(|c| worlds[c.1]).collect());
    runtime::with(|rt| {
        let mut c = Comm::intra(id * CONTEXTS_PER_ID, rank, chosen.len() as i32, map, errh);
        c.endpoints = Some(eps);
        c.info = info;
        let keys: Vec<i32> = attrs.iter().map(|a| a.0).collect();
        c.attrs = attrs;
        match rt.comms.insert(c) {
            Some(i) => {
                rt.errh_ref(errh);
                for k in keys {
                    rt.keyvals.attach(k);
                }
                Ok(Some(rt.comms.handle(i)))
            }
            None => {
                rt.contexts.release(id);
                fail(MPI_ERR_INTERN, "too many communicators")
            }
        }
    })
}

impl Runtime {
    /// Whether handle `h` names an endpoint communicator (or a thread communicator, which
    /// stands for the calling thread's endpoint).
    pub fn is_endpoint_comm(&self, h: usize) -> bool {
        self.comm(h).is_ok_and(|(_, c)| c.endpoints.is_some())
    }

    /// Installs this process's endpoints of an endpoint communicator whose ids are
    /// `base..base + most` (`counts[p]` endpoints on parent rank `p`, whose world rank is
    /// `world_of[p]`) and returns the ids it does not use; returns the handles.
    fn install_endpoints(
        &mut self,
        base: u32,
        most: u32,
        counts: &[u32],
        world_of: &[u32],
        errh: Errh,
        info: &Info,
    ) -> Vec<usize> {
        let me = self.world_rank as u32;
        let mut ctx_of_rank = Vec::new();
        let mut worlds = Vec::new();
        let mut first_mine = 0;
        let mut mine = 0;
        for (&n, &w) in counts.iter().zip(world_of) {
            if w == me {
                first_mine = ctx_of_rank.len();
                mine = n;
            }
            for k in 0..n {
                ctx_of_rank.push((base + k) * CONTEXTS_PER_ID);
                worlds.push(w);
            }
        }
        let size = ctx_of_rank.len() as i32;
        let eps = Arc::new(Endpoints { ctx_of_rank });
        let map = RankMap::Table(worlds);
        let mut handles = Vec::new();
        for k in 0..mine {
            self.errh_ref(errh);
            let mut c = Comm::intra(
                (base + k) * CONTEXTS_PER_ID,
                (first_mine + k as usize) as i32,
                size,
                map.clone(),
                errh,
            );
            c.endpoints = Some(eps.clone());
            c.info = info.clone();
            match self.comms.insert(c) {
                Some(i) => handles.push(self.comms.handle(i)),
                None => {
                    // Table full: give the id back; the caller sees fewer handles.
                    self.contexts.release(base + k);
                }
            }
        }
        for k in mine..most {
            self.contexts.release(base + k);
        }
        handles
    }
}

/// A thread communicator: its endpoints (one per thread of this process) and the
/// synchronisation of `MPIX_Threadcomm_start`/`finish`.
#[derive(Debug)]
pub struct ThreadComm {
    /// Table index of the endpoint of thread id `t`.
    pub endpoints: Vec<u32>,
    next: AtomicUsize,
    barrier: Barrier,
}

thread_local! {
    /// The calling thread's bindings: (thread communicator index, endpoint index).
    static BOUND: RefCell<Vec<(u32, u32)>> = const { RefCell::new(Vec::new()) };
}

/// The endpoint the calling thread uses for thread communicator `idx`, if it started it.
pub fn bound_endpoint(idx: u32) -> Option<u32> {
    BOUND.with(|b| b.borrow().iter().find(|e| e.0 == idx).map(|e| e.1))
}

/// `MPIX_Threadcomm_init`: a thread communicator with `num_threads` ranks on this process
/// over the processes of `parent` (collective over it); returns its handle.
pub fn threadcomm_init(parent: usize, num_threads: i32) -> MpiResult<usize> {
    let eps = create(parent, num_threads, Info::default())?;
    runtime::with(|rt| {
        let mut idxs = Vec::with_capacity(eps.len());
        for &h in &eps {
            idxs.push(rt.comm_index(h).expect("new endpoint"));
        }
        let errh = rt.comms.get(idxs[0]).expect("new endpoint").errh;
        rt.errh_ref(errh);
        let mut c = Comm::intra(PENDING_CTX, 0, 0, RankMap::Table(Vec::new()), errh);
        c.threads = Some(Arc::new(ThreadComm {
            barrier: Barrier::new(idxs.len()),
            endpoints: idxs,
            next: AtomicUsize::new(0),
        }));
        match rt.comms.insert(c) {
            Some(i) => Ok(rt.comms.handle(i)),
            None => fail(MPI_ERR_INTERN, "too many communicators"),
        }
    })
}

/// The thread communicator entry of handle `h`.
fn threadcomm_of(rt: &Runtime, h: usize) -> MpiResult<(u32, Arc<ThreadComm>)> {
    match rt
        .comm_index(h)
        .and_then(|i| rt.comms.get(i).map(|c| (i, c.threads.clone())))
    {
        Some((i, Some(t))) => Ok((i, t)),
        Some(_) => fail(
            MPI_ERR_COMM,
            "the communicator is not a thread communicator (MPIX_Threadcomm_init)",
        ),
        None => fail(MPI_ERR_COMM, format!("invalid communicator handle {h:#x}")),
    }
}

/// `MPIX_Threadcomm_start`: binds the calling thread to the next free endpoint, then waits
/// for the other threads of this process.
pub fn threadcomm_start(h: usize) -> MpiResult<()> {
    let (idx, t) = runtime::with(|rt| threadcomm_of(rt, h))?;
    if bound_endpoint(idx).is_some() {
        return fail(
            MPI_ERR_OTHER,
            "MPIX_Threadcomm_start: this thread already started the thread communicator",
        );
    }
    let n = t.endpoints.len();
    let tid = t.next.fetch_add(1, Ordering::AcqRel);
    if tid >= n {
        return fail(
            MPI_ERR_OTHER,
            format!(
                "MPIX_Threadcomm_start called by more than the {n} threads of MPIX_Threadcomm_init"
            ),
        );
    }
    if tid == n - 1 {
        t.next.store(0, Ordering::Release);
    }
    BOUND.with(|b| b.borrow_mut().push((idx, t.endpoints[tid])));
    t.barrier.wait();
    Ok(())
}

/// `MPIX_Threadcomm_finish`: unbinds the calling thread, then waits for the other threads.
pub fn threadcomm_finish(h: usize) -> MpiResult<()> {
    let (idx, t) = runtime::with(|rt| threadcomm_of(rt, h))?;
    let had = BOUND.with(|b| {
        let mut b = b.borrow_mut();
        let before = b.len();
        b.retain(|e| e.0 != idx);
        before != b.len()
    });
    if !had {
        return fail(
            MPI_ERR_OTHER,
            "MPIX_Threadcomm_finish: this thread did not start the thread communicator",
        );
    }
    t.barrier.wait();
    Ok(())
}

/// `MPIX_Threadcomm_free`: frees the endpoints and the thread communicator (outside the
/// parallel region).
pub fn threadcomm_free(h: usize) -> MpiResult<()> {
    runtime::with(|rt| {
        let (idx, t) = threadcomm_of(rt, h)?;
        if bound_endpoint(idx).is_some() {
            return fail(
                MPI_ERR_OTHER,
                "MPIX_Threadcomm_free inside MPIX_Threadcomm_start/finish",
            );
        }
        for &e in &t.endpoints {
            rt.release_comm(e);
        }
        if let Some(c) = rt.comms.remove(idx) {
            rt.errh_unref(c.errh);
        }
        Ok(())
    })
}
