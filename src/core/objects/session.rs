//! MPI-4 sessions: the table of open sessions and the process sets (psets) they show.
//!
//! A session is a handle on the runtime: the first one builds it (as `MPI_Init` does), the last
//! one to end leaves it quiesced for a later session (see `runtime::session_start` and
//! `runtime::session_end`). The table lives outside the runtime, like the info and error-handler
//! tables, so that a session's error handler is found before the runtime exists and after it
//! ends. Its lock is taken after the runtime's, never before.
//!
//! Process sets: `mpi://WORLD` (every process the launcher started), `mpi://SELF` (the
//! calling process) and `hympi://node/K`, one per node of the job (`K` counts nodes in the
//! order of their lowest world rank). Every process sees the same list. Names match without
//! regard to case, as URIs' schemes do.

use crate::core::error::{fail, MpiResult};
use crate::core::objects::errhandler::Errh;
use crate::core::objects::slab::{kind, Slab};
use crate::core::runtime::Runtime;
use crate::mpi_abi::consts::*;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

static NEXT_ID: AtomicU32 = AtomicU32::new(1);

/// A fresh session id.
pub fn new_id() -> u32 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// An open session.
#[derive(Clone, Copy, Debug)]
pub struct Session {
    /// Its id, never reused in the process: what groups and communicators derived from it
    /// carry (a handle's table slot is reused; an id is not).
    pub id: u32,
    /// Where errors on the session go.
    pub errh: Errh,
    /// The thread level the session got (the runtime's).
    pub thread_level: i32,
}

static TABLE: Mutex<Option<Slab<Session>>> = Mutex::new(None);

fn with_table<R>(f: impl FnOnce(&mut Slab<Session>) -> R) -> R {
    let mut guard = TABLE.lock();
    f(guard.get_or_insert_with(|| Slab::new(kind::SESSION)))
}

fn invalid(h: usize) -> crate::core::error::MpiError {
    use crate::core::error::MpiError;
    if h == MPI_SESSION_NULL {
        MpiError::new(MPI_ERR_SESSION, "the session is MPI_SESSION_NULL")
    } else {
        MpiError::new(MPI_ERR_SESSION, format!("invalid session handle {h:#x}"))
    }
}

/// Records a new session; its handle.
pub fn open(s: Session) -> MpiResult<usize> {
    with_table(|t| t.insert(s).map(|i| t.handle(i)))
        .map_or_else(|| fail(MPI_ERR_INTERN, "too many open sessions"), Ok)
}

/// Removes session `h` from the table; what it was.
pub fn close(h: usize) -> MpiResult<Session> {
    with_table(|t| t.decode(h).and_then(|i| t.remove(i))).ok_or_else(|| invalid(h))
}

/// Session `h`; `MPI_ERR_SESSION` when it names none.
pub fn get(h: usize) -> MpiResult<Session> {
    with_table(|t| t.decode(h).and_then(|i| t.get(i).copied())).ok_or_else(|| invalid(h))
}

/// Replaces the error handler of session `h`; the old one.
pub fn set_errh(h: usize, e: Errh) -> MpiResult<Errh> {
    with_table(|t| {
        t.decode(h)
            .and_then(|i| t.get_mut(i))
            .map(|s| std::mem::replace(&mut s.errh, e))
    })
    .ok_or_else(|| invalid(h))
}

/// The handle of the session at table index `i`, if one is open there (`MPI_Session_fromint`).
pub fn handle_at(i: u32) -> Option<usize> {
    with_table(|t| t.get(i).map(|_| t.handle(i)))
}

/// The error handler of session `h`, if it is one (error routing).
pub fn errh_of(h: usize) -> Option<Errh> {
    TABLE
        .lock()
        .as_ref()
        .and_then(|t| t.decode(h).and_then(|i| t.get(i)).map(|s| s.errh))
}

/// The name of `MPI_THREAD_*` level `level`.
pub fn level_name(level: i32) -> &'static str {
    match level {
        MPI_THREAD_SINGLE => "MPI_THREAD_SINGLE",
        MPI_THREAD_FUNNELED => "MPI_THREAD_FUNNELED",
        MPI_THREAD_SERIALIZED => "MPI_THREAD_SERIALIZED",
        _ => "MPI_THREAD_MULTIPLE",
    }
}

/// The level an info value `thread_level` names (`MPI_THREAD_MULTIPLE` or `multiple`, any
/// case); `MPI_ERR_INFO_VALUE` when it names none.
pub fn parse_level(text: &str) -> MpiResult<i32> {
    let t = text.trim().to_ascii_uppercase();
    let t = t.strip_prefix("MPI_THREAD_").unwrap_or(&t);
    match t {
        "SINGLE" => Ok(MPI_THREAD_SINGLE),
        "FUNNELED" => Ok(MPI_THREAD_FUNNELED),
        "SERIALIZED" => Ok(MPI_THREAD_SERIALIZED),
        "MULTIPLE" => Ok(MPI_THREAD_MULTIPLE),
        _ => fail(
            MPI_ERR_INFO_VALUE,
            format!("thread_level \"{text}\" names no thread level (MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE)"),
        ),
    }
}

/// The name of the pset of node `k`.
fn node_pset(k: usize) -> String {
    format!("hympi://node/{k}")
}

/// The psets every process of the job sees, in order.
pub fn pset_names(rt: &Runtime) -> Vec<String> {
    let mut v = vec!["mpi://WORLD".to_string(), "mpi://SELF".to_string()];
    v.extend((0..rt.node_names.len()).map(node_pset));
    v
}

/// The members (world ranks, in order) of pset `name`; `MPI_ERR_ARG` for a name that is no
/// pset.
pub fn pset_members(rt: &Runtime, name: &str) -> MpiResult<Vec<u32>> {
    let lower = name.to_ascii_lowercase();
    if lower == "mpi://world" {
        return Ok((0..rt.world_size as u32).collect());
    }
    if lower == "mpi://self" {
        return Ok(vec![rt.world_rank as u32]);
    }
    if let Some(k) = lower
        .strip_prefix("hympi://node/")
        .and_then(|k| k.parse::<usize>().ok())
        .filter(|&k| k < rt.node_names.len())
    {
        return Ok((0..rt.world_size as u32)
            .filter(|&w| rt.node_of_world[w as usize] as usize == k)
            .collect());
    }
    fail(
        MPI_ERR_ARG,
        format!(
            "\"{name}\" is not a process set of this session (MPI_Session_get_nth_pset lists them: {})",
            pset_names(rt).join(", ")
        ),
    )
}

/// The keys `MPI_Session_get_pset_info` gives for pset `name`: `mpi_size` (standard) and, for
/// a node's pset, `hympi_host` (the node's name).
pub fn pset_info(rt: &Runtime, name: &str) -> MpiResult<Vec<(String, String)>> {
    let members = pset_members(rt, name)?;
    let mut keys = vec![("mpi_size".to_string(), members.len().to_string())];
    let lower = name.to_ascii_lowercase();
    if let Some(k) = lower
        .strip_prefix("hympi://node/")
        .and_then(|k| k.parse::<usize>().ok())
    {
        keys.push(("hympi_host".to_string(), rt.node_names[k].clone()));
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_levels_parse_by_name() {
        assert_eq!(
            parse_level("MPI_THREAD_MULTIPLE").unwrap(),
            MPI_THREAD_MULTIPLE
        );
        assert_eq!(parse_level(" funneled ").unwrap(), MPI_THREAD_FUNNELED);
        assert_eq!(parse_level("mpi_thread_single").unwrap(), MPI_THREAD_SINGLE);
        assert_eq!(
            parse_level("NOT_A_LEVEL").unwrap_err().class(),
            MPI_ERR_INFO_VALUE
        );
        for l in [
            MPI_THREAD_SINGLE,
            MPI_THREAD_FUNNELED,
            MPI_THREAD_SERIALIZED,
            MPI_THREAD_MULTIPLE,
        ] {
            assert_eq!(parse_level(level_name(l)).unwrap(), l);
        }
    }

    #[test]
    fn sessions_are_found_until_closed() {
        let h = open(Session {
            id: new_id(),
            errh: Errh::Return,
            thread_level: MPI_THREAD_SINGLE,
        })
        .unwrap();
        assert_eq!(errh_of(h), Some(Errh::Return));
        assert_eq!(set_errh(h, Errh::Fatal).unwrap(), Errh::Return);
        assert_eq!(get(h).unwrap().errh, Errh::Fatal);
        close(h).unwrap();
        assert_eq!(get(h).unwrap_err().class(), MPI_ERR_SESSION);
        assert_eq!(close(h).unwrap_err().class(), MPI_ERR_SESSION);
        assert_eq!(get(MPI_SESSION_NULL).unwrap_err().class(), MPI_ERR_SESSION);
    }
}
