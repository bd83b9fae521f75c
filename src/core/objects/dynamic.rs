//! Dynamic processes, "establishing communication" (MPI-5.0 §11.10): ports,
//! `MPI_Comm_accept` / `MPI_Comm_connect` between jobs started apart, `MPI_Comm_join`.
//!
//! A port is a number in this process, named with its job id, world rank and network
//! address: `hympi-port:<job>:<rank>:<port>:<address>`. Both sides open the network
//! transport if their job has none (`NetEngine::open_late`, by this process alone). The
//! connecting root sends a `Hello` to the port; the accepting process's engine answers at
//! once (welcome, or refused when the port is not open: `MPI_ERR_PORT`). Then the roots talk
//! over a *bridge*, a hidden two-process communicator on the reserved context id
//! [`BRIDGE_ID`] with a tag of the connection's own, and swap their groups' identities
//! (job id, world rank and address of every member), which they broadcast to their groups.
//! Each member registers the other group's processes with its engine (process indices after
//! the world's) and the intercommunicator is agreed on and installed as by
//! `MPI_Intercomm_create`, the acceptor's group first.

use crate::core::error::{fail, MpiError, MpiResult};
use crate::core::objects::comm::{RankMap, CONTEXTS_PER_ID};
use crate::core::objects::comm_build::{finish_intercomm, key, session_of};
use crate::core::objects::context::BRIDGE_ID;
use crate::core::objects::errhandler::Errh;
use crate::core::objects::team::{self, tag, Bridge, Combine, Round, Team};
use crate::core::runtime::{self, Runtime};
use crate::mpi_abi::consts::*;
use crate::transport::ofi::{hex, unhex, NetEngine};

/// The ports this process has open.
#[derive(Debug, Default)]
pub struct Ports {
    /// The number of the next port opened.
    next: u32,
    /// Open ports.
    open: Vec<u32>,
}

/// First field of every port name.
const PREFIX: &str = "hympi-port";

/// Longest network address a group member's record carries.
const ADDR_MAX: usize = 112;

/// Bytes of a member's record: job id, world rank, address length, machine, address.
const RECORD: usize = 16 + ADDR_MAX;

/// This machine's id in records: a hash of the running kernel's boot id (processes that
/// share it share the CPUs).
fn machine_id() -> u32 {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    crate::platform::bootstrap::job_id(boot.trim())
}

/// A port's name, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
struct PortName {
    job: u32,
    rank: u32,
    port: u32,
    addr: Vec<u8>,
}

impl PortName {
    /// Parses `hympi-port:<job hex>:<rank>:<port>:<address hex>`.
    fn parse(s: &str) -> Option<PortName> {
        let mut it = s.split(':');
        if it.next()? != PREFIX {
            return None;
        }
        let job = u32::from_str_radix(it.next()?, 16).ok()?;
        let rank = it.next()?.parse().ok()?;
        let port = it.next()?.parse().ok()?;
        let addr = unhex(it.next()?)?;
        if it.next().is_some() || addr.is_empty() || addr.len() > ADDR_MAX {
            return None;
        }
        Some(PortName {
            job,
            rank,
            port,
            addr,
        })
    }

    /// The name as `MPI_Open_port` gives it.
    fn format(&self) -> String {
        format!(
            "{PREFIX}:{:08x}:{}:{}:{}",
            self.job,
            self.rank,
            self.port,
            hex(&self.addr)
        )
    }
}

/// This process's network engine, opened if its job has none.
fn net(rt: &mut Runtime) -> MpiResult<&mut NetEngine> {
    if rt.net.is_none() {
        let n = NetEngine::open_late(rt.world_rank as u32, rt.world_size as u32, rt.job_id)?;
        // Network peers do not ring the node doorbell: waits no longer sleep on it.
        crate::platform::doorbell::clear();
        rt.net = Some(crate::transport::ofi::NetBox::new(
            &crate::transport::ofi::NET_LANES,
            n,
            0,
        ));
    }
    Ok(rt.net.as_mut().expect("opened"))
}

/// Grows the runtime's per-process tables to the engine's processes (those of other jobs
/// are on no node of this job).
fn sync_processes(rt: &mut Runtime) {
    let n = rt.net.as_ref().map_or(0, |n| n.process_count() as usize);
    if rt.local_of_world.len() < n {
        rt.local_of_world.resize(n, u32::MAX);
        rt.node_of_world.resize(n, u32::MAX);
    }
}

/// `MPI_Open_port`: a new port of this process; its name.
pub fn open_port() -> MpiResult<String> {
    runtime::with(|rt| {
        let (job, rank, port) = (rt.job_id, rt.world_rank as u32, rt.ports.next);
        let n = net(rt)?;
        let addr = n.address().to_vec();
        if addr.len() > ADDR_MAX {
            return fail(
                MPI_ERR_INTERN,
                format!(
                    "the network address of this process has {} bytes (at most {ADDR_MAX})",
                    addr.len()
                ),
            );
        }
        n.open_port(port);
        rt.ports.next += 1;
        rt.ports.open.push(port);
        Ok(PortName {
            job,
            rank,
            port,
            addr,
        }
        .format())
    })
}

/// The number of open port `name` of this process.
fn own_port(rt: &Runtime, name: &str) -> MpiResult<u32> {
    match PortName::parse(name) {
        Some(p)
            if p.job == rt.job_id
                && p.rank == rt.world_rank as u32
                && rt.ports.open.contains(&p.port) =>
        {
            Ok(p.port)
        }
        _ => fail(
            MPI_ERR_PORT,
            format!("{name:?} is not a port this process has open (MPI_Open_port)"),
        ),
    }
}

/// Checks that `name` is a port this process has open (`MPI_ERR_PORT` otherwise).
pub fn check_own_port(name: &str) -> MpiResult<()> {
    runtime::with(|rt| own_port(rt, name).map(|_| ()))
}

/// `MPI_Close_port`.
pub fn close_port(name: &str) -> MpiResult<()> {
    runtime::with(|rt| {
        let port = own_port(rt, name)?;
        rt.ports.open.retain(|&p| p != port);
        if let Some(n) = rt.net.as_mut() {
            n.close_port(port);
        }
        Ok(())
    })
}

/// The record of process (`job`, `rank`) at network address `addr` on machine `machine`.
fn record(job: u32, rank: u32, addr: &[u8], machine: u32) -> Vec<u8> {
    let mut r = vec![0u8; RECORD];
    r[0..4].copy_from_slice(&job.to_le_bytes());
    r[4..8].copy_from_slice(&rank.to_le_bytes());
    r[8..12].copy_from_slice(&(addr.len() as u32).to_le_bytes());
    r[12..16].copy_from_slice(&machine.to_le_bytes());
    r[16..16 + addr.len()].copy_from_slice(addr);
    r
}

/// (job, rank, address, machine) of a record.
fn parse_record(r: &[u8]) -> Option<(u32, u32, &[u8], u32)> {
    let word = |i: usize| u32::from_le_bytes(r[i..i + 4].try_into().unwrap());
    let len = word(8) as usize;
    (r.len() == RECORD && len <= ADDR_MAX).then(|| (word(0), word(4), &r[16..16 + len], word(12)))
}

/// A connection's tag on the bridge and its agreement's key, from its nonce.
fn tag_of(nonce: i32) -> i32 {
    tag::derived(nonce as u32 as u64)
}

/// A fresh connection nonce (random, below 2^24 like a derived tag's range).
fn fresh_nonce() -> i32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    (h.finish() % (1 << 24)) as i32
}

/// Installs a bridge: the hidden communicator of this process (rank `rank`) and `peer`.
fn open_bridge(rt: &mut Runtime, peer: u32, rank: i32) -> MpiResult<u32> {
    let me = rt.world_rank as u32;
    let members = if rank == 0 {
        vec![me, peer]
    } else {
        vec![peer, me]
    };
    let mut c = crate::core::objects::comm::Comm::intra(
        BRIDGE_ID * CONTEXTS_PER_ID,
        rank,
        2,
        RankMap::Table(members),
        Errh::Return,
    );
    c.hidden = true;
    rt.comms
        .insert(c)
        .ok_or_else(|| MpiError::new(MPI_ERR_INTERN, "too many communicators"))
}

/// Removes bridge `idx`.
fn close_bridge(rt: &mut Runtime, idx: u32) {
    let handle = rt.comms.handle(idx);
    rt.matchers.forget_comm(idx, handle);
    rt.comms.remove(idx);
}

/// Checked while an accepting root waits for the connection: an error ends the wait
/// (`MPI_Comm_spawn`: the spawned job ended before it connected).
pub type Abandon<'a> = &'a mut dyn FnMut() -> MpiResult<()>;

/// The root's part of the meeting: waits for a connection to port `port` (accepting, until
/// `abandon` fails) or connects to it; returns the bridge (table index) and the
/// connection's nonce.
fn meet(port: &str, accept: bool, abandon: Abandon<'_>) -> MpiResult<(u32, i32)> {
    if accept {
        abandon()?;
        let p = runtime::with(|rt| own_port(rt, port))?;
        let hello = runtime::wait_for(|rt| {
            // A close from another thread ends the wait.
            own_port(rt, port)?;
            let hello = net(rt)?.take_hello(p);
            if hello.is_none() {
                abandon()?;
            }
            Ok(hello)
        })?;
        let bridge = runtime::with(|rt| {
            sync_processes(rt);
            open_bridge(rt, hello.peer, 0)
        })?;
        return Ok((bridge, hello.nonce));
    }
    let Some(name) = PortName::parse(port) else {
        return fail(
            MPI_ERR_PORT,
            format!("{port:?} is not a port name (MPI_Open_port gives them)"),
        );
    };
    let nonce = fresh_nonce();
    let peer = runtime::with(|rt| {
        let peer = net(rt)?
            .add_peer(name.job, name.rank, &name.addr)
            .map_err(|e| MpiError::new(MPI_ERR_PORT, format!("port {port:?}: {e}")))?;
        sync_processes(rt);
        Ok(peer)
    })?;
    runtime::wait_for(|rt| Ok(net(rt)?.send_hello(peer, name.port, nonce).then_some(())))?;
    let welcome = runtime::wait_for(|rt| Ok(net(rt)?.take_answer(peer, nonce)))?;
    if !welcome {
        return fail(
            MPI_ERR_PORT,
            format!("port {port:?} is not open (closed, or never opened)"),
        );
    }
    let bridge = runtime::with(|rt| open_bridge(rt, peer, 1))?;
    Ok((bridge, nonce))
}

/// What the local group needs to know of a communicator being established.
struct Local {
    team: Team,
    members: Vec<u32>,
    errh: Errh,
    session: Option<u32>,
    mine: Vec<u8>,
}

/// Reads communicator `comm_h` (an intracommunicator with `root` in it) and this process's
/// record.
fn local_part(comm_h: usize, root: i32) -> MpiResult<Local> {
    runtime::with(|rt| {
        let (idx, c) = rt.comm_plain(comm_h)?;
        if c.is_inter() {
            return fail(
                MPI_ERR_COMM,
                "connecting and accepting take an intracommunicator",
            );
        }
        if root < 0 || root >= c.size {
            return fail(
                MPI_ERR_ROOT,
                format!(
                    "invalid root {root} (the communicator has {} ranks)",
                    c.size
                ),
            );
        }
        let (rank, size, members, errh) = (c.rank, c.size, c.members(), c.errh);
        let (t, _) = rt.next_construction(idx);
        let mut ranks = vec![root];
        ranks.extend((0..size).filter(|&r| r != root));
        let me = ranks.iter().position(|&r| r == rank).expect("a member");
        let session = session_of(rt, comm_h);
        let (job, wrank) = (rt.job_id, rt.world_rank as u32);
        let mine = record(job, wrank, net(rt)?.address(), machine_id());
        Ok(Local {
            team: Team {
                comm: idx,
                ranks,
                me,
                tag: t,
            },
            members,
            errh,
            session,
            mine,
        })
    })
}

/// Swaps the groups' records (rank order) with the other root over bridge `b`.
fn swap_records(b: Bridge, ours: &[u8]) -> MpiResult<Vec<u8>> {
    let n = team::exchange(b.comm, b.peer, b.tag, &(ours.len() as u64).to_le_bytes(), 8)?;
    let n = u64::from_le_bytes(n[..].try_into().unwrap()) as usize;
    if !n.is_multiple_of(RECORD) || n == 0 {
        return fail(
            MPI_ERR_INTERN,
            "the other group's identities came malformed",
        );
    }
    team::exchange(b.comm, b.peer, b.tag, ours, n)
}

/// `MPI_Comm_accept` (`accept`) or `MPI_Comm_connect` on port `port` (significant at
/// `root`), collective over intracommunicator `comm_h`: the new intercommunicator's handle.
pub fn establish(port: &str, root: i32, comm_h: usize, accept: bool) -> MpiResult<usize> {
    establish_with(port, root, comm_h, accept, MPI_ERR_PORT, &mut || Ok(()))
}

/// [`establish`], with the error class the other members report when the root fails
/// (`MPI_ERR_PORT`, `MPI_ERR_SPAWN`) and the root's [`Abandon`] check while accepting.
pub fn establish_with(
    port: &str,
    root: i32,
    comm_h: usize,
    accept: bool,
    class: i32,
    abandon: Abandon<'_>,
) -> MpiResult<usize> {
    let local = local_part(comm_h, root)?;
    // Every member's record, then in rank order for the other group.
    let gathered = Round::new(
        local.team.clone(),
        None,
        Combine::Concat,
        local.mine.clone(),
    )
    .run()?;
    let mut reply = Vec::new();
    let mut bridge_idx = None;
    let mut root_error = None;
    if local.team.is_leader() {
        let mut ours = vec![0u8; gathered.len()];
        for (pos, &r) in local.team.ranks.iter().enumerate() {
            ours[r as usize * RECORD..][..RECORD]
                .copy_from_slice(&gathered[pos * RECORD..][..RECORD]);
        }
        let met = meet(port, accept, abandon).and_then(|(idx, nonce)| {
            bridge_idx = Some(idx);
            let b = Bridge {
                comm: idx,
                peer: accept as i32,
                tag: tag_of(nonce),
            };
            Ok((nonce, swap_records(b, &ours)?))
        });
        match met {
            Ok((nonce, theirs)) => {
                reply.push(1u8);
                reply.extend_from_slice(&nonce.to_le_bytes());
                reply.extend_from_slice(&theirs);
            }
            Err(e) => {
                reply.push(0u8);
                root_error = Some(e);
            }
        }
    }
    let reply = team::bcast(&local.team, reply)?;
    if reply.first() != Some(&1) {
        if let Some(idx) = bridge_idx {
            runtime::with(|rt| {
                close_bridge(rt, idx);
                Ok(())
            })?;
        }
        return Err(root_error.unwrap_or_else(|| {
            MpiError::new(
                class,
                format!(
                    "the root (rank {root}) could not {} (it reported the cause)",
                    if accept { "accept" } else { "connect" }
                ),
            )
        }));
    }
    let nonce = i32::from_le_bytes(reply[1..5].try_into().unwrap());
    let here = machine_id();
    let remote = runtime::with(|rt| {
        let n = net(rt)?;
        let known = n.process_count();
        let (mut v, mut beside) = (Vec::new(), 0);
        for r in reply[5..].chunks_exact(RECORD) {
            let bad = || MpiError::new(MPI_ERR_INTERN, "a malformed identity of the other group");
            let (job, rank, addr, machine) = parse_record(r).ok_or_else(bad)?;
            let idx = n
                .add_peer(job, rank, addr)
                .map_err(|e| MpiError::new(MPI_ERR_OTHER, format!("network transport: {e}")))?;
            // Processes of another job met for the first time, on this machine.
            beside += (idx >= known && machine == here) as usize;
            v.push(idx);
        }
        sync_processes(rt);
        rt.add_machine_peers(beside);
        Ok(v)
    })?;
    let bridge = bridge_idx.map(|comm| Bridge {
        comm,
        peer: accept as i32,
        tag: tag_of(nonce),
    });
    let made = finish_intercomm(
        local.team,
        local.members,
        (remote, accept),
        bridge,
        key(u32::MAX - 2, tag_of(nonce)),
        local.errh,
        local.session,
    );
    if let Some(idx) = bridge_idx {
        runtime::with(|rt| {
            close_bridge(rt, idx);
            Ok(())
        })?;
    }
    made
}

/// `MPI_Comm_join`, once the two processes swapped the names of ports they opened (`mine`
/// and `theirs`): the one whose name sorts first accepts, the other connects.
pub fn join(mine: &str, theirs: &str) -> MpiResult<usize> {
    let self_h = MPI_COMM_SELF;
    if mine == theirs {
        return fail(
            MPI_ERR_ARG,
            "MPI_Comm_join: the socket leads back to this process",
        );
    }
    if mine < theirs {
        establish(mine, 0, self_h, true)
    } else {
        establish(theirs, 0, self_h, false)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn port_names_round_trip_and_bad_ones_are_refused() {
        let p = PortName {
            job: 0xabc,
            rank: 3,
            port: 7,
            addr: vec![1, 2, 0xff],
        };
        let s = p.format();
        assert_eq!(s, "hympi-port:00000abc:3:7:0102ff");
        assert_eq!(PortName::parse(&s), Some(p));
        for bad in [
            "",
            "hympi-port",
            "other:00000abc:3:7:0102ff",
            "hympi-port:xyz:3:7:0102ff",
            "hympi-port:00000abc:3:7:",
            "hympi-port:00000abc:3:7:010",
            "hympi-port:00000abc:3:7:0102ff:9",
        ] {
            assert_eq!(PortName::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn records_round_trip() {
        let r = record(9, 4, &[5, 6, 7], 77);
        assert_eq!(r.len(), RECORD);
        assert_eq!(parse_record(&r), Some((9, 4, &[5u8, 6, 7][..], 77)));
        let mut bad = r.clone();
        bad[8] = 200;
        assert_eq!(parse_record(&bad), None);
    }
}
