//! Communicator error handlers.

use super::util::out;
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::core::error::{fail, MpiResult};
use crate::core::objects::errhandler::{self, Errh};
use crate::core::runtime::{self, Runtime};
use core::ffi::{c_char, c_int, c_void};

/// The handler `h` names (the runtime argument keeps the call sites' shape).
pub(crate) fn errh_of(_rt: &Runtime, h: usize) -> MpiResult<Errh> {
    errhandler::resolve(h)
}

fn errh_handle(_rt: &mut Runtime, e: Errh) -> usize {
    errhandler::handle_of(e)
}

fn unref(rt: &mut Runtime, e: Errh) {
    rt.errh_unref(e)
}

pub(crate) unsafe fn MPI_Comm_create_errhandler(
    comm_errhandler_fn: *mut c_void,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    runtime::with(|_| Ok(()))?;
    // SAFETY: the caller's arguments, passed on.
    unsafe { create_user(comm_errhandler_fn, errhandler) }
}

/// Registers a user handler function of any object kind (communicator, window, file,
/// session): all are `void (HANDLE *, int *, ...)` with a pointer-sized handle.
///
/// # Safety
/// `errhandler` is NULL or points to a writable handle.
pub(crate) unsafe fn create_user(
    errhandler_fn: *mut c_void,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    if errhandler_fn.is_null() {
        return fail(MPI_ERR_ARG, "the error handler function must not be NULL");
    }
    let slot = out(errhandler, "errhandler")?;
    // SAFETY: the C error handler types are `void (HANDLE *, int *, ...)` with a pointer-sized
    // handle; we call them with exactly those two arguments.
    let func: unsafe extern "C" fn(*mut MPI_Comm, *mut i32) =
        unsafe { std::mem::transmute(errhandler_fn) };
    match errhandler::create(func) {
        Some(h) => {
            *slot = h as MPI_Errhandler;
            Ok(())
        }
        None => fail(MPI_ERR_INTERN, "too many error handlers"),
    }
}

pub(crate) unsafe fn MPI_Comm_set_errhandler(
    comm: MPI_Comm,
    errhandler: MPI_Errhandler,
) -> MpiResult<()> {
    runtime::with(|rt| {
        let (idx, _) = rt.comm(comm as usize)?;
        let new = errh_of(rt, errhandler as usize)?;
        rt.errh_ref(new);
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

// ---------------------------------------------------------------------------------------------
// user-defined error classes, codes and strings

/// An error class or code added by the user.
#[derive(Clone, Debug)]
struct UserCode {
    /// The class of a code (a class is its own class).
    class: i32,
    /// Its string (`MPI_Add_error_string`).
    text: String,
}

/// User error classes and codes, by value (`MPI_ERR_LASTCODE + 1 + index`); removed ones are
/// `None` and their values are not reused (stale codes stay invalid).
static USER_CODES: parking_lot::Mutex<Vec<Option<UserCode>>> = parking_lot::Mutex::new(Vec::new());

/// The largest error code in use (`MPI_LASTUSEDCODE`).
pub(crate) fn last_used_code() -> i32 {
    let t = USER_CODES.lock();
    match t.iter().rposition(|c| c.is_some()) {
        Some(i) => MPI_ERR_LASTCODE + 1 + i as i32,
        None => MPI_ERR_LASTCODE,
    }
}

/// The class and string of a user error code, if it is one.
pub(crate) fn user_code(code: i32) -> Option<(i32, String)> {
    let i = code.checked_sub(MPI_ERR_LASTCODE + 1)?;
    let t = USER_CODES.lock();
    t.get(usize::try_from(i).ok()?)
        .and_then(|c| c.as_ref())
        .map(|c| (c.class, c.text.clone()))
}

fn add_code(class: Option<i32>) -> MpiResult<i32> {
    runtime::with(|_| Ok(()))?;
    let mut t = USER_CODES.lock();
    let code = MPI_ERR_LASTCODE + 1 + t.len() as i32;
    t.push(Some(UserCode {
        class: class.unwrap_or(code),
        text: String::new(),
    }));
    drop(t);
    super::attr::set_predefined(MPI_LASTUSEDCODE, last_used_code());
    Ok(code)
}

pub(crate) unsafe fn MPI_Add_error_class(errorclass: *mut c_int) -> MpiResult<()> {
    let slot = out(errorclass, "errorclass")?;
    *slot = add_code(None)?;
    Ok(())
}

pub(crate) unsafe fn MPI_Add_error_code(errorclass: c_int, errorcode: *mut c_int) -> MpiResult<()> {
    let slot = out(errorcode, "errorcode")?;
    let valid = (0..=MPI_ERR_LASTCODE).contains(&errorclass)
        || user_code(errorclass).is_some_and(|(c, _)| c == errorclass);
    if !valid {
        return fail(MPI_ERR_ARG, format!("{errorclass} is not an error class"));
    }
    *slot = add_code(Some(errorclass))?;
    Ok(())
}

pub(crate) unsafe fn MPI_Add_error_string(
    errorcode: c_int,
    string: *const c_char,
) -> MpiResult<()> {
    if string.is_null() {
        return fail(MPI_ERR_ARG, "the string must not be NULL");
    }
    // SAFETY: a non-NULL string from the C caller is NUL-terminated.
    let text = unsafe { std::ffi::CStr::from_ptr(string) }
        .to_string_lossy()
        .into_owned();
    if text.len() >= MPI_MAX_ERROR_STRING as usize {
        return fail(
            MPI_ERR_ARG,
            format!(
                "the error string is longer than MPI_MAX_ERROR_STRING - 1 ({} bytes)",
                text.len()
            ),
        );
    }
    let i = errorcode - MPI_ERR_LASTCODE - 1;
    let mut t = USER_CODES.lock();
    match usize::try_from(i).ok().and_then(|i| t.get_mut(i)).and_then(|c| c.as_mut()) {
        Some(c) => {
            c.text = text;
            Ok(())
        }
        None => fail(
            MPI_ERR_ARG,
            format!("{errorcode} is not a user-defined error code or class (predefined strings cannot change)"),
        ),
    }
}

fn remove(code: i32, want_class: bool) -> MpiResult<()> {
    let i = code - MPI_ERR_LASTCODE - 1;
    let mut t = USER_CODES.lock();
    let Some(Some(entry)) = usize::try_from(i).ok().and_then(|i| t.get(i)) else {
        return fail(
            MPI_ERR_ARG,
            format!("{code} is not a user-defined error code or class"),
        );
    };
    let is_class = entry.class == code;
    if is_class != want_class {
        return fail(
            MPI_ERR_ARG,
            format!(
                "{code} is not a user-defined error {}",
                if want_class { "class" } else { "code" }
            ),
        );
    }
    if !entry.text.is_empty() {
        // MPI-4.1: a string must be removed (MPI_Remove_error_string) before its code or
        // class.
        return fail(
            MPI_ERR_ARG,
            format!(
                "error {} {code} still has an error string (remove it with MPI_Remove_error_string first)",
                if want_class { "class" } else { "code" }
            ),
        );
    }
    if want_class
        && t.iter()
            .enumerate()
            .any(|(j, c)| j as i32 != i && c.as_ref().is_some_and(|c| c.class == code))
    {
        return fail(
            MPI_ERR_ARG,
            format!("error class {code} still has error codes"),
        );
    }
    t[i as usize] = None;
    drop(t);
    super::attr::set_predefined(MPI_LASTUSEDCODE, last_used_code());
    Ok(())
}

pub(crate) unsafe fn MPI_Remove_error_class(errorclass: c_int) -> MpiResult<()> {
    remove(errorclass, true)
}

pub(crate) unsafe fn MPI_Remove_error_code(errorcode: c_int) -> MpiResult<()> {
    remove(errorcode, false)
}

pub(crate) unsafe fn MPI_Remove_error_string(errorcode: c_int) -> MpiResult<()> {
    let i = errorcode - MPI_ERR_LASTCODE - 1;
    let mut t = USER_CODES.lock();
    match usize::try_from(i)
        .ok()
        .and_then(|i| t.get_mut(i))
        .and_then(|c| c.as_mut())
    {
        Some(c) => {
            c.text.clear();
            Ok(())
        }
        None => fail(
            MPI_ERR_ARG,
            format!("{errorcode} is not a user-defined error code or class"),
        ),
    }
}
