//! MPI-4 sessions: the C functions (`MPI_Session_*`, `MPI_Group_from_session_pset`). Errors
//! on a session go to its error handler; errors of `MPI_Session_init` to the handler it was
//! given (see `core::objects::errhandler`).

use super::util::out;
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::core::error::{fail, ErrObj, MpiError, MpiResult};
use crate::core::objects::errhandler;
use crate::core::objects::group::Group;
use crate::core::objects::info::{self, Info};
use crate::core::objects::session::{self, Session};
use crate::core::runtime;
use core::ffi::{c_char, c_int, c_void, CStr};

/// A pset name argument; `MPI_ERR_ARG` when NULL.
unsafe fn name_arg(p: *const c_char) -> MpiResult<String> {
    if p.is_null() {
        return fail(MPI_ERR_ARG, "the process set name must not be NULL");
    }
    // SAFETY: a non-NULL name is a NUL-terminated C string (C contract).
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// Checks that `session` is open (`MPI_ERR_SESSION` otherwise).
fn check(h: MPI_Session) -> MpiResult<Session> {
    session::get(h as usize)
}

pub(crate) unsafe fn MPI_Session_init(
    info: MPI_Info,
    errhandler: MPI_Errhandler,
    session: *mut MPI_Session,
) -> MpiResult<()> {
    let on = ErrObj::Handler(errhandler as usize);
    (|| {
        let slot = out(session, "session")?;
        let errh = errhandler::resolve(errhandler as usize)?;
        let hints = info::lookup_opt(info as usize)?.unwrap_or_default();
        let required = match hints.get("thread_level") {
            Some(v) => session::parse_level(v)?,
            None => MPI_THREAD_SINGLE,
        };
        let thread_level = runtime::session_start(required)?;
        errhandler::take_ref(errh);
        match session::open(Session {
            id: session::new_id(),
            errh,
            thread_level,
        }) {
            Ok(h) => {
                *slot = h as MPI_Session;
                Ok(())
            }
            Err(e) => {
                errhandler::drop_ref(errh);
                let _ = runtime::session_end();
                Err(e)
            }
        }
    })()
    .map_err(|e: MpiError| e.on(on))
}

pub(crate) unsafe fn MPI_Session_finalize(session: *mut MPI_Session) -> MpiResult<()> {
    let slot = out(session, "session")?;
    let h = *slot as usize;
    let s = session::close(h).map_err(|e| e.on(ErrObj::Session(h)))?;
    errhandler::drop_ref(s.errh);
    runtime::with(|rt| {
        rt.bsend.forget_session(s.id);
        Ok(())
    })?;
    *slot = MPI_SESSION_NULL as MPI_Session;
    runtime::session_end()
}

pub(crate) unsafe fn MPI_Session_get_num_psets(
    session: MPI_Session,
    info: MPI_Info,
    npset_names: *mut c_int,
) -> MpiResult<()> {
    check(session)?;
    info::lookup_opt(info as usize)?;
    let slot = out(npset_names, "npset_names")?;
    *slot = runtime::with(|rt| Ok(session::pset_names(rt).len()))? as c_int;
    Ok(())
}

pub(crate) unsafe fn MPI_Session_get_nth_pset(
    session: MPI_Session,
    info: MPI_Info,
    n: c_int,
    pset_len: *mut c_int,
    pset_name: *mut c_char,
) -> MpiResult<()> {
    check(session)?;
    info::lookup_opt(info as usize)?;
    let len = out(pset_len, "pset_len")?;
    if *len < 0 {
        return fail(MPI_ERR_ARG, format!("pset_len is negative ({})", *len));
    }
    let names = runtime::with(|rt| Ok(session::pset_names(rt)))?;
    let Some(name) = usize::try_from(n).ok().and_then(|i| names.get(i)) else {
        return fail(
            MPI_ERR_ARG,
            format!(
                "there is no process set number {n} (this session has {}, numbered from 0)",
                names.len()
            ),
        );
    };
    let cap = *len as usize;
    if cap > 0 {
        if pset_name.is_null() {
            return fail(MPI_ERR_ARG, "pset_name must not be NULL when pset_len > 0");
        }
        let k = name.len().min(cap - 1);
        // SAFETY: the caller's buffer holds `pset_len` bytes (C contract).
        unsafe {
            std::ptr::copy_nonoverlapping(name.as_ptr(), pset_name.cast::<u8>(), k);
            *pset_name.add(k) = 0;
        }
    }
    *len = name.len() as c_int + 1;
    Ok(())
}

pub(crate) unsafe fn MPI_Session_get_info(
    session: MPI_Session,
    info_used: *mut MPI_Info,
) -> MpiResult<()> {
    let s = check(session)?;
    let slot = out(info_used, "info_used")?;
    let mut i = Info::default();
    i.set("thread_level", session::level_name(s.thread_level));
    *slot = info::create(i)? as MPI_Info;
    Ok(())
}

pub(crate) unsafe fn MPI_Session_get_pset_info(
    session: MPI_Session,
    pset_name: *const c_char,
    info_: *mut MPI_Info,
) -> MpiResult<()> {
    check(session)?;
    let name = name_arg(pset_name)?;
    let slot = out(info_, "info")?;
    let keys = runtime::with(|rt| session::pset_info(rt, &name))?;
    let mut i = Info::default();
    for (k, v) in keys {
        i.set(&k, &v);
    }
    *slot = info::create(i)? as MPI_Info;
    Ok(())
}

pub(crate) unsafe fn MPI_Group_from_session_pset(
    session: MPI_Session,
    pset_name: *const c_char,
    newgroup: *mut MPI_Group,
) -> MpiResult<()> {
    let s = check(session)?;
    let name = name_arg(pset_name)?;
    let slot = out(newgroup, "newgroup")?;
    let h = runtime::with(|rt| {
        let members = session::pset_members(rt, &name)?;
        rt.new_group(Group {
            members,
            session: Some(s.id),
        })
    })?;
    *slot = h as MPI_Group;
    Ok(())
}

pub(crate) unsafe fn MPI_Session_create_errhandler(
    session_errhandler_fn: *mut c_void,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    // SAFETY: the caller's arguments, passed on.
    unsafe { super::errhandler::create_user(session_errhandler_fn, errhandler) }
}

pub(crate) unsafe fn MPI_Session_set_errhandler(
    session: MPI_Session,
    errhandler: MPI_Errhandler,
) -> MpiResult<()> {
    check(session)?;
    let new = errhandler::resolve(errhandler as usize)?;
    errhandler::take_ref(new);
    match session::set_errh(session as usize, new) {
        Ok(old) => {
            errhandler::drop_ref(old);
            Ok(())
        }
        Err(e) => {
            errhandler::drop_ref(new);
            Err(e)
        }
    }
}

pub(crate) unsafe fn MPI_Session_get_errhandler(
    session: MPI_Session,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    let s = check(session)?;
    let slot = out(errhandler, "errhandler")?;
    *slot = errhandler::handle_of(s.errh) as MPI_Errhandler;
    Ok(())
}

pub(crate) unsafe fn MPI_Session_call_errhandler(
    session: MPI_Session,
    errorcode: c_int,
) -> MpiResult<()> {
    check(session)?;
    let err = MpiError::new(
        errorcode,
        format!("MPI_Session_call_errhandler with error code {errorcode}"),
    );
    errhandler::raise(
        "MPI_Session_call_errhandler",
        ErrObj::Session(session as usize),
        err,
    );
    Ok(())
}
