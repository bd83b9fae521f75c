//! Communicators: the C functions (construction, comparison, names, hints,
//! intercommunicators). The collective work is in `core::objects::comm_build`.

use super::attr::{comm_attr_entries, copy_attrs, delete_all_comm_attrs};
use super::util::{out, put_string};
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::core::error::{fail, MpiError, MpiResult};
use crate::core::objects::attr::AttrEntry;
use crate::core::objects::comm_build::{self, IdupOp};
use crate::core::objects::errhandler::Errh;
use crate::core::objects::group::Group;
use crate::core::objects::info::Info;
use crate::core::p2p::request::ReqKind;
use crate::core::runtime::{self, Runtime};
use core::ffi::{c_char, c_int};

/// The world ranks of group handle `h`.
fn group_members(rt: &Runtime, h: usize) -> MpiResult<Vec<u32>> {
    Ok(rt.group(h)?.members.clone())
}

/// The contents of info handle `h` (`MPI_INFO_NULL`: empty).
fn info_contents(_rt: &Runtime, h: usize) -> MpiResult<Info> {
    Ok(crate::core::objects::info::lookup_opt(h)?.unwrap_or_default())
}

/// The hints a communicator keeps (and `MPI_Comm_get_info` returns): the MPI assertions,
/// the resource type of `MPI_Comm_split_type`, MPICH's VCI hints (`vci`, `sender_vci`,
/// `receiver_vci`, `inherit_vci`: see `core::threads::stream::hinted_vci`) and hympi's own `hympi_*`
/// keys. Others are ignored, as the standard allows.
fn kept_hints(info: &Info) -> Info {
    let mut kept = Info::default();
    for (k, v) in &info.entries {
        let known = matches!(
            k.as_str(),
            "mpi_assert_no_any_tag"
                | "mpi_assert_no_any_source"
                | "mpi_assert_exact_length"
                | "mpi_assert_allow_overtaking"
                | "mpi_hw_resource_type"
                | "vci"
                | "sender_vci"
                | "receiver_vci"
                | "inherit_vci"
        ) || k.starts_with("hympi_");
        if known {
            kept.set(k, v);
        }
    }
    kept
}

unsafe fn set_comm(slot: *mut MPI_Comm, h: Option<usize>) -> MpiResult<()> {
    *out(slot, "newcomm")? = h.unwrap_or(MPI_COMM_NULL) as MPI_Comm;
    Ok(())
}

/// What a duplicate of communicator `idx` (hints `parent`) starts from: the attributes to
/// copy, and its hints (those kept of `info`, or the parent's).
fn dup_inputs(
    rt: &Runtime,
    idx: u32,
    parent: &Info,
    info: Option<MPI_Info>,
) -> MpiResult<(Vec<AttrEntry>, Info)> {
    let attrs = comm_attr_entries(rt, idx);
    let info = match info {
        Some(i) => kept_hints(&info_contents(rt, i as usize)?),
        None => parent.clone(),
    };
    Ok((attrs, info))
}

/// `MPI_Comm_dup` / `MPI_Comm_dup_with_info` of `comm` (hints from `info` when given).
///
/// # Safety
/// The attributes' copy callbacks registered by the application are called with their C
/// signatures.
unsafe fn dup(comm: MPI_Comm, info: Option<MPI_Info>) -> MpiResult<usize> {
    let h = comm as usize;
    if runtime::with(|rt| Ok(rt.is_endpoint_comm(h)))? {
        // SAFETY: forwarded from the caller.
        return unsafe { dup_endpoint(h, info) };
    }
    let (plan, attrs, info) = runtime::with(|rt| {
        let plan = comm_build::plan_dup(rt, h)?;
        let (attrs, info) = dup_inputs(rt, plan.idx, &plan.info, info)?;
        Ok((plan, attrs, info))
    })?;
    // SAFETY: runs the user's copy callbacks with their registered C signatures.
    let copied = unsafe { copy_attrs(h, &attrs)? };
    let id = plan.agreement().run()?;
    runtime::with(|rt| {
        let parent_ctx = rt.comms.get(plan.idx).map(|c| c.ctx);
        let h = rt.install_comm(id, plan.blueprint(copied, info))?;
        if let Some(idx) = rt.comm_index(h) {
            rt.apply_vci_hints(idx, parent_ctx);
            rt.apply_spread_hints(idx);
        }
        Ok(h)
    })
}

/// [`dup`] of endpoint communicator `h`: a split with one color that keeps the ranks' order.
///
/// # Safety
/// As for [`dup`]: the attributes' copy callbacks registered by the application are called
/// with their C signatures.
unsafe fn dup_endpoint(h: usize, info: Option<MPI_Info>) -> MpiResult<usize> {
    let (attrs, info) = runtime::with(|rt| {
        let (idx, c) = rt.comm(h)?;
        dup_inputs(rt, idx, &c.info, info)
    })?;
    // SAFETY: runs the user's copy callbacks with their registered C signatures.
    let copied = unsafe { copy_attrs(h, &attrs)? };
    let made = crate::core::threads::endpoints::split(h, 0, 0, copied, info)?;
    made.ok_or_else(|| MpiError::new(MPI_ERR_INTERN, "a duplicate has a color"))
}

pub(crate) unsafe fn MPI_Comm_dup(comm: MPI_Comm, newcomm: *mut MPI_Comm) -> MpiResult<()> {
    out(newcomm, "newcomm")?;
    let h = dup(comm, None)?;
    set_comm(newcomm, Some(h))
}

pub(crate) unsafe fn MPI_Comm_dup_with_info(
    comm: MPI_Comm,
    info: MPI_Info,
    newcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    out(newcomm, "newcomm")?;
    let h = dup(comm, Some(info))?;
    set_comm(newcomm, Some(h))
}

unsafe fn idup(
    comm: MPI_Comm,
    info: Option<MPI_Info>,
    newcomm: *mut MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let slot = out(newcomm, "newcomm")?;
    let req = out(request, "request")?;
    let h = comm as usize;
    let (plan, attrs, info) = runtime::with(|rt| {
        let plan = comm_build::plan_dup(rt, h)?;
        let (attrs, info) = dup_inputs(rt, plan.idx, &plan.info, info)?;
        Ok((plan, attrs, info))
    })?;
    // SAFETY: runs the user's copy callbacks with their registered C signatures.
    let copied = unsafe { copy_attrs(h, &attrs)? };
    let (newh, reqh) = runtime::with(|rt| {
        let entry = rt.reserve_comm()?;
        let rid = rt.new_request(ReqKind::Done, plan.idx)?;
        let op = IdupOp::new(plan, copied, info, entry, rid);
        rt.background.push(Box::new(op));
        Ok((rt.comms.handle(entry), rt.reqs.handle(rid)))
    })?;
    *slot = newh as MPI_Comm;
    *req = reqh as MPI_Request;
    Ok(())
}

pub(crate) unsafe fn MPI_Comm_idup(
    comm: MPI_Comm,
    newcomm: *mut MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    idup(comm, None, newcomm, request)
}

pub(crate) unsafe fn MPI_Comm_idup_with_info(
    comm: MPI_Comm,
    info: MPI_Info,
    newcomm: *mut MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    idup(comm, Some(info), newcomm, request)
}

pub(crate) unsafe fn MPI_Comm_split(
    comm: MPI_Comm,
    color: c_int,
    key: c_int,
    newcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    out(newcomm, "newcomm")?;
    let h = comm_build::split(comm as usize, color, key)?;
    set_comm(newcomm, h)
}

pub(crate) unsafe fn MPI_Comm_split_type(
    comm: MPI_Comm,
    split_type: c_int,
    key: c_int,
    info: MPI_Info,
    newcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    out(newcomm, "newcomm")?;
    let info_handle = info as usize;
    let info = runtime::with(|rt| info_contents(rt, info as usize))?;
    let made = comm_build::split_type(comm as usize, split_type, key, &info)?;
    if let Some((h, key, what)) = &made {
        runtime::with(|rt| {
            let (idx, _) = rt.comm(*h)?;
            rt.comms.get_mut(idx).unwrap().info.set(key, what);
            Ok(())
        })?;
        // MPI-4.0: for an unguided split the caller's info object (INOUT) learns the
        // resource type the new communicator shares.
        if split_type == MPI_COMM_TYPE_HW_UNGUIDED && info_handle != MPI_INFO_NULL {
            crate::core::objects::info::with_table(|t| {
                t.get_mut(info_handle).map(|i| i.set(key, what))
            })?;
        }
    }
    set_comm(newcomm, made.map(|m| m.0))
}

pub(crate) unsafe fn MPI_Comm_create(
    comm: MPI_Comm,
    group: MPI_Group,
    newcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    out(newcomm, "newcomm")?;
    let members = runtime::with(|rt| group_members(rt, group as usize))?;
    let h = comm_build::create(comm as usize, members)?;
    set_comm(newcomm, h)
}

pub(crate) unsafe fn MPI_Comm_create_group(
    comm: MPI_Comm,
    group: MPI_Group,
    tag: c_int,
    newcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    out(newcomm, "newcomm")?;
    let members = runtime::with(|rt| group_members(rt, group as usize))?;
    if members.is_empty() {
        return set_comm(newcomm, None);
    }
    let h = comm_build::create_group(comm as usize, members, tag)?;
    set_comm(newcomm, Some(h))
}

pub(super) unsafe fn c_string<'a>(
    s: *const c_char,
    what: &str,
) -> MpiResult<std::borrow::Cow<'a, str>> {
    if s.is_null() {
        return fail(MPI_ERR_ARG, format!("{what} must not be NULL"));
    }
    // SAFETY: a non-NULL string from the C caller is NUL-terminated.
    Ok(unsafe { std::ffi::CStr::from_ptr(s) }.to_string_lossy())
}

fn errh_arg(rt: &Runtime, h: MPI_Errhandler) -> MpiResult<Errh> {
    super::errhandler::errh_of(rt, h as usize)
}

pub(crate) unsafe fn MPI_Comm_create_from_group(
    group: MPI_Group,
    stringtag: *const c_char,
    info: MPI_Info,
    errhandler: MPI_Errhandler,
    newcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    out(newcomm, "newcomm")?;
    let tag = c_string(stringtag, "stringtag")?;
    let (members, errh, info, session) = runtime::with(|rt| {
        Ok((
            group_members(rt, group as usize)?,
            errh_arg(rt, errhandler)?,
            kept_hints(&info_contents(rt, info as usize)?),
            rt.group(group as usize)?.session,
        ))
    })?;
    if members.is_empty() {
        return set_comm(newcomm, None);
    }
    let h = comm_build::create_from_group(members, &tag, errh, session)?;
    runtime::with(|rt| {
        let (idx, _) = rt.comm(h)?;
        rt.comms.get_mut(idx).unwrap().info = info;
        Ok(())
    })?;
    set_comm(newcomm, Some(h))
}

pub(crate) unsafe fn MPI_Comm_free(comm: *mut MPI_Comm) -> MpiResult<()> {
    let slot = out(comm, "comm")?;
    let h = *slot as usize;
    runtime::with(|rt| rt.freeable_comm(h).map(|_| ()))?;
    // SAFETY: runs the user's delete callbacks with their registered C signatures.
    unsafe { delete_all_comm_attrs(h)? };
    runtime::with(|rt| {
        let idx = rt.freeable_comm(h)?;
        rt.release_comm(idx);
        Ok(())
    })?;
    *slot = MPI_COMM_NULL as MPI_Comm;
    Ok(())
}

/// `MPI_Comm_disconnect`: waits until every process of the communicator (both groups of an
/// intercommunicator) has called it, so that no communication on it is pending anywhere,
/// then frees it as `MPI_Comm_free` does.
pub(crate) unsafe fn MPI_Comm_disconnect(comm: *mut MPI_Comm) -> MpiResult<()> {
    let slot = out(comm, "comm")?;
    let h = *slot as usize;
    runtime::with(|rt| rt.freeable_comm(h).map(|_| ()))?;
    // SAFETY: a valid communicator handle (checked above).
    unsafe { super::coll::MPI_Barrier(h as MPI_Comm)? };
    // SAFETY: the caller's argument, forwarded.
    unsafe { MPI_Comm_free(comm) }
}

pub(crate) unsafe fn MPI_Comm_compare(
    comm1: MPI_Comm,
    comm2: MPI_Comm,
    result: *mut c_int,
) -> MpiResult<()> {
    let res = out(result, "result")?;
    *res = runtime::with(|rt| {
        let (i1, a) = rt.comm(comm1 as usize)?;
        let (i2, b) = rt.comm(comm2 as usize)?;
        if i1 == i2 {
            return Ok(MPI_IDENT);
        }
        if a.is_inter() != b.is_inter() {
            return Ok(MPI_UNEQUAL);
        }
        let groups = |c: &crate::core::objects::comm::Comm| {
            (
                c.members(),
                c.remote
                    .as_ref()
                    .map(|r| r.map.members(r.size))
                    .unwrap_or_default(),
            )
        };
        let (la, ra) = groups(a);
        let (lb, rb) = groups(b);
        if la == lb && ra == rb {
            return Ok(MPI_CONGRUENT);
        }
        let sorted = |mut v: Vec<u32>| {
            v.sort_unstable();
            v
        };
        if sorted(la) == sorted(lb) && sorted(ra) == sorted(rb) {
            Ok(MPI_SIMILAR)
        } else {
            Ok(MPI_UNEQUAL)
        }
    })?;
    Ok(())
}

pub(crate) unsafe fn MPI_Comm_test_inter(comm: MPI_Comm, flag: *mut c_int) -> MpiResult<()> {
    let f = out(flag, "flag")?;
    *f = runtime::with(|rt| Ok(rt.comm(comm as usize)?.1.is_inter() as c_int))?;
    Ok(())
}

pub(crate) unsafe fn MPI_Comm_remote_size(comm: MPI_Comm, size: *mut c_int) -> MpiResult<()> {
    let s = out(size, "size")?;
    *s = runtime::with(|rt| match &rt.comm(comm as usize)?.1.remote {
        Some(r) => Ok(r.size),
        None => fail(
            MPI_ERR_COMM,
            "MPI_Comm_remote_size needs an intercommunicator",
        ),
    })?;
    Ok(())
}

pub(crate) unsafe fn MPI_Comm_remote_group(comm: MPI_Comm, group: *mut MPI_Group) -> MpiResult<()> {
    let g = out(group, "group")?;
    *g = runtime::with(|rt| {
        let session = rt.comm(comm as usize)?.1.session;
        let members = match &rt.comm(comm as usize)?.1.remote {
            Some(r) => r.map.members(r.size),
            None => {
                return fail(
                    MPI_ERR_COMM,
                    "MPI_Comm_remote_group needs an intercommunicator",
                )
            }
        };
        rt.new_group(Group { members, session })
    })? as MPI_Group;
    Ok(())
}

pub(crate) unsafe fn MPI_Comm_set_name(comm: MPI_Comm, comm_name: *const c_char) -> MpiResult<()> {
    let name = c_string(comm_name, "comm_name")?;
    let max = MPI_MAX_OBJECT_NAME as usize - 1;
    let mut name = name.into_owned();
    if name.len() > max {
        let mut cut = max;
        while !name.is_char_boundary(cut) {
            cut -= 1;
        }
        name.truncate(cut);
    }
    runtime::with(|rt| {
        let (idx, _) = rt.comm(comm as usize)?;
        rt.comms.get_mut(idx).unwrap().name = name;
        Ok(())
    })
}

pub(crate) unsafe fn MPI_Comm_get_name(
    comm: MPI_Comm,
    comm_name: *mut c_char,
    resultlen: *mut c_int,
) -> MpiResult<()> {
    // The null handle has its own name, as in MPICH and Open MPI.
    let name = if comm as usize == MPI_COMM_NULL {
        "MPI_COMM_NULL".to_string()
    } else {
        runtime::with(|rt| Ok(rt.comm(comm as usize)?.1.name.clone()))?
    };
    // SAFETY: the caller's buffer holds MPI_MAX_OBJECT_NAME bytes (C contract).
    unsafe { put_string(&name, comm_name, MPI_MAX_OBJECT_NAME as usize, resultlen) }
}

pub(crate) unsafe fn MPI_Comm_set_info(comm: MPI_Comm, info: MPI_Info) -> MpiResult<()> {
    runtime::with(|rt| {
        let (idx, _) = rt.comm(comm as usize)?;
        if info as usize == MPI_INFO_NULL {
            return fail(MPI_ERR_INFO, "the info is MPI_INFO_NULL");
        }
        let given = kept_hints(&info_contents(rt, info as usize)?);
        let c = rt.comms.get_mut(idx).unwrap();
        for (k, v) in given.entries {
            c.info.set(&k, &v);
        }
        rt.apply_vci_hints(idx, None);
        Ok(())
    })
}

pub(crate) unsafe fn MPI_Comm_get_info(comm: MPI_Comm, info_used: *mut MPI_Info) -> MpiResult<()> {
    let slot = out(info_used, "info_used")?;
    *slot = runtime::with(|rt| {
        let info = rt.comm(comm as usize)?.1.info.clone();
        crate::core::objects::info::create(info)
    })? as MPI_Info;
    Ok(())
}

pub(crate) unsafe fn MPI_Intercomm_create(
    local_comm: MPI_Comm,
    local_leader: c_int,
    peer_comm: MPI_Comm,
    remote_leader: c_int,
    tag: c_int,
    newintercomm: *mut MPI_Comm,
) -> MpiResult<()> {
    out(newintercomm, "newintercomm")?;
    let h = comm_build::intercomm_create(
        local_comm as usize,
        local_leader,
        peer_comm as usize,
        remote_leader,
        tag,
    )?;
    set_comm(newintercomm, Some(h))
}

pub(crate) unsafe fn MPI_Intercomm_create_from_groups(
    local_group: MPI_Group,
    local_leader: c_int,
    remote_group: MPI_Group,
    remote_leader: c_int,
    stringtag: *const c_char,
    info: MPI_Info,
    errhandler: MPI_Errhandler,
    newintercomm: *mut MPI_Comm,
) -> MpiResult<()> {
    out(newintercomm, "newintercomm")?;
    let tag = c_string(stringtag, "stringtag")?;
    let (local, remote, errh, info, session) = runtime::with(|rt| {
        Ok((
            group_members(rt, local_group as usize)?,
            group_members(rt, remote_group as usize)?,
            errh_arg(rt, errhandler)?,
            kept_hints(&info_contents(rt, info as usize)?),
            rt.group(local_group as usize)?.session,
        ))
    })?;
    let h = comm_build::intercomm_from_groups(
        local,
        local_leader,
        remote,
        remote_leader,
        &tag,
        errh,
        session,
    )?;
    runtime::with(|rt| {
        let (idx, _) = rt.comm(h)?;
        rt.comms.get_mut(idx).unwrap().info = info;
        Ok(())
    })?;
    set_comm(newintercomm, Some(h))
}

pub(crate) unsafe fn MPI_Intercomm_merge(
    intercomm: MPI_Comm,
    high: c_int,
    newintracomm: *mut MPI_Comm,
) -> MpiResult<()> {
    out(newintracomm, "newintracomm")?;
    let h = comm_build::intercomm_merge(intercomm as usize, high != 0)?;
    set_comm(newintracomm, Some(h))
}

/// `MPI_Comm_get_parent`: the intercommunicator with the parents of a process started by
/// `MPI_Comm_spawn` (until it is freed or disconnected), else `MPI_COMM_NULL`.
pub(crate) unsafe fn MPI_Comm_get_parent(parent: *mut MPI_Comm) -> MpiResult<()> {
    let slot = out(parent, "parent")?;
    *slot = crate::core::objects::spawn::parent()? as MPI_Comm;
    Ok(())
}
