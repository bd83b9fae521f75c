//! The runtime's life: `MPI_Init`/`MPI_Init_thread`, sessions, building the runtime (transports,
//! lanes, VCIs), `MPI_Finalize` (quiesce, teardown) and aborts, with the helpers that agree on
//! node lanes and watch node peers.

use super::*;

/// The thread level a request names; `MPI_ERR_ARG` for a value that is none.
pub(super) fn thread_level(required: i32) -> MpiResult<i32> {
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
pub(super) fn acquire(holders: &mut Holders, required: i32) -> MpiResult<i32> {
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
pub(super) fn start(provided: i32) -> MpiResult<i32> {
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

pub(super) fn io_err(what: &str, e: std::io::Error) -> MpiError {
    MpiError::new(MPI_ERR_OTHER, format!("{what}: {e}"))
}

pub(super) fn build(thread_level: i32) -> MpiResult<Box<Runtime>> {
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
pub(super) fn quiesce() -> MpiResult<()> {
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
pub(super) fn teardown() -> MpiResult<()> {
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

/// Starts watching the node's other ranks (`HYMPI_PEER_WATCH`), unless hympiexec launched
/// the job (it ends the job itself, with a better report). When a peer ends before
/// `MPI_Finalize`, this rank reports it (the node's lowest surviving rank prints) and exits
/// with status 1, so that the launcher sees the whole node end.
pub(super) fn watch_node_peers(shm: &ShmEngine, locals: &[i32], rank: i32) -> Option<PeerWatch> {
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
pub(super) fn lanes_key(r: i32) -> String {
    format!("shm-lanes-{r}")
}

/// The node transport lanes this rank would choose as its node's first rank:
/// `HYMPI_SHM_LANES`, else its VCIs at `MPI_THREAD_MULTIPLE`, else 1.
pub(super) fn wanted_lanes(thread_level: i32) -> usize {
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
pub(super) const AUTO_NET_LANES_MAX: usize = 4;

/// The network transport lanes this rank asks for: `HYMPI_OFI_LANES`, else its VCIs at
/// `MPI_THREAD_MULTIPLE` (at most [`AUTO_NET_LANES_MAX`]), else 1 (the job runs the fewest any
/// rank asks for).
pub(super) fn wanted_net_lanes(thread_level: i32) -> usize {
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
pub(super) fn agree_lanes(
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
pub(super) fn launcher_node(
    boot: &mut dyn bootstrap::Bootstrap,
    rank: i32,
    size: i32,
) -> Option<String> {
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

pub(super) fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0 {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).into_owned()
    } else {
        "localhost".into()
    }
}
