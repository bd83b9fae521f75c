//! Communicator error handlers.

use super::util::out;
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::core::errhandler::{self, Errh, UserErrh};
use crate::core::error::{fail, MpiResult};
use crate::core::runtime::{self, Runtime};
use core::ffi::{c_int, c_void};

fn errh_of(rt: &Runtime, h: usize) -> MpiResult<Errh> {
    if let Some(e) = errhandler::predefined(h) {
        return Ok(e);
    }
    match rt.errhandlers.decode(h) {
        Some(i) => Ok(Errh::User(i)),
        None if h == MPI_ERRHANDLER_NULL => {
            fail(MPI_ERR_ARG, "the error handler is MPI_ERRHANDLER_NULL")
        }
        None => fail(MPI_ERR_ARG, format!("invalid error handler {h:#x}")),
    }
}

fn errh_handle(rt: &mut Runtime, e: Errh) -> usize {
    match e {
        Errh::Fatal => MPI_ERRORS_ARE_FATAL,
        Errh::Abort => MPI_ERRORS_ABORT,
        Errh::Return => MPI_ERRORS_RETURN,
        Errh::User(i) => {
            if let Some(u) = rt.errhandlers.get_mut(i) {
                u.refs += 1;
            }
            rt.errhandlers.handle(i)
        }
    }
}

fn unref(rt: &mut Runtime, e: Errh) {
    if let Errh::User(i) = e {
        if let Some(u) = rt.errhandlers.get_mut(i) {
            u.refs -= 1;
            if u.refs == 0 {
                rt.errhandlers.remove(i);
            }
        }
    }
}

pub(crate) unsafe fn MPI_Comm_create_errhandler(
    comm_errhandler_fn: *mut c_void,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    if comm_errhandler_fn.is_null() {
        return fail(MPI_ERR_ARG, "the error handler function must not be NULL");
    }
    let slot = out(errhandler, "errhandler")?;
    // SAFETY: the C type MPI_Comm_errhandler_function is `void (MPI_Comm *, int *, ...)`; we
    // call it with exactly those two arguments.
    let func: unsafe extern "C" fn(*mut MPI_Comm, *mut i32) =
        unsafe { std::mem::transmute(comm_errhandler_fn) };
    let h = runtime::with(
        |rt| match rt.errhandlers.insert(UserErrh { func, refs: 1 }) {
            Some(i) => Ok(rt.errhandlers.handle(i)),
            None => fail(MPI_ERR_INTERN, "too many error handlers"),
        },
    )?;
    *slot = h as MPI_Errhandler;
    Ok(())
}

pub(crate) unsafe fn MPI_Comm_set_errhandler(
    comm: MPI_Comm,
    errhandler: MPI_Errhandler,
) -> MpiResult<()> {
    runtime::with(|rt| {
        let (idx, _) = rt.comm(comm as usize)?;
        let new = errh_of(rt, errhandler as usize)?;
        if let Errh::User(i) = new {
            rt.errhandlers.get_mut(i).unwrap().refs += 1;
        }
        let old = std::mem::replace(&mut rt.comms.get_mut(idx).unwrap().errh, new);
        unref(rt, old);
        if comm as usize == MPI_COMM_SELF {
            rt.self_errh_set = true;
        }
        Ok(())
    })
}

pub(crate) unsafe fn MPI_Comm_get_errhandler(
    comm: MPI_Comm,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    let slot = out(errhandler, "errhandler")?;
    let h = runtime::with(|rt| {
        let (_, c) = rt.comm(comm as usize)?;
        let e = c.errh;
        Ok(errh_handle(rt, e))
    })?;
    *slot = h as MPI_Errhandler;
    Ok(())
}

pub(crate) unsafe fn MPI_Errhandler_free(errhandler: *mut MPI_Errhandler) -> MpiResult<()> {
    let slot = out(errhandler, "errhandler")?;
    runtime::with(|rt| {
        let e = errh_of(rt, *slot as usize)?;
        unref(rt, e);
        Ok(())
    })?;
    *slot = MPI_ERRHANDLER_NULL as MPI_Errhandler;
    Ok(())
}

pub(crate) unsafe fn MPI_Comm_call_errhandler(comm: MPI_Comm, errorcode: c_int) -> MpiResult<()> {
    runtime::with(|rt| rt.comm(comm as usize).map(|_| ()))?;
    let err = crate::core::error::MpiError::new(
        errorcode,
        format!("MPI_Comm_call_errhandler with error code {errorcode}"),
    );
    errhandler::raise(
        "MPI_Comm_call_errhandler",
        crate::abi::entry::ErrObj::Comm(comm as usize),
        err,
    );
    Ok(())
}
