//! Environment management: init/finalize, thread queries, version, time, memory, errors.

use super::util::{out, put_string};
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::core::error::{class_string, fail, MpiResult};
use crate::core::runtime;
use core::ffi::{c_char, c_int, c_void};

pub(crate) unsafe fn MPI_Init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) -> MpiResult<()> {
    runtime::init(MPI_THREAD_SINGLE)?;
    after_init()
}

/// Sets the values of the predefined attributes of `MPI_COMM_WORLD`; connects a spawned
/// process to its parents.
fn after_init() -> MpiResult<()> {
    let (size, appnum) = runtime::with(|rt| Ok((rt.world_size, rt.appnum)))?;
    for (k, v) in [
        (MPI_TAG_UB, crate::core::p2p::TAG_UB),
        (MPI_HOST, MPI_PROC_NULL),
        (MPI_IO, MPI_ANY_SOURCE),
        (MPI_WTIME_IS_GLOBAL, 0),
        (MPI_APPNUM, appnum),
        (MPI_LASTUSEDCODE, super::errhandler::last_used_code()),
        (MPI_UNIVERSE_SIZE, size),
    ] {
        super::attr::set_predefined(k, v);
    }
    // A spawned process meets its parents.
    crate::core::objects::spawn::connect_parent()
}

pub(crate) unsafe fn MPI_Init_thread(
    _argc: *mut c_int,
    _argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> MpiResult<()> {
    let p = out(provided, "provided")?;
    *p = runtime::init(required)?;
    after_init()
}

pub(crate) unsafe fn MPI_Finalize() -> MpiResult<()> {
    // Services this process published are withdrawn (MPI-5.0 §11.10.3 asks it of the
    // application; a process that forgets leaves no stale name).
    crate::core::objects::names::withdraw_all();
    // MPI_COMM_SELF's attributes are deleted first, while MPI is still fully usable.
    // SAFETY: runs user delete callbacks registered with their C signature.
    unsafe { super::attr::delete_all_comm_attrs(MPI_COMM_SELF)? };
    runtime::finalize()
}

pub(crate) unsafe fn MPI_Initialized(flag: *mut c_int) -> MpiResult<()> {
    *out(flag, "flag")? = runtime::initialized() as c_int;
    Ok(())
}

pub(crate) unsafe fn MPI_Finalized(flag: *mut c_int) -> MpiResult<()> {
    *out(flag, "flag")? = runtime::finalized() as c_int;
    Ok(())
}

pub(crate) unsafe fn MPI_Query_thread(provided: *mut c_int) -> MpiResult<()> {
    let level = runtime::with(|rt| Ok(rt.thread_level))?;
    *out(provided, "provided")? = level;
    Ok(())
}

pub(crate) unsafe fn MPI_Is_thread_main(flag: *mut c_int) -> MpiResult<()> {
    runtime::with(|_| Ok(()))?;
    *out(flag, "flag")? = runtime::is_main_thread() as c_int;
    Ok(())
}

pub(crate) unsafe fn MPI_Abort(comm: MPI_Comm, errorcode: c_int) -> MpiResult<()> {
    let rank = runtime::world_rank_hint().unwrap_or(0);
    let name = runtime::with(|rt| {
        Ok(rt
            .comm(comm as usize)
            .map(|(_, c)| c.name.clone())
            .unwrap_or_else(|_| format!("{:#x}", comm as usize)))
    })
    .unwrap_or_else(|_| "MPI_COMM_WORLD".into());
    let msg = format!("rank {rank} called MPI_Abort({name}, {errorcode})");
    eprintln!("hympi: {msg}");
    runtime::abort(errorcode, &msg)
}

pub(crate) unsafe fn MPI_Comm_rank(comm: MPI_Comm, rank: *mut c_int) -> MpiResult<()> {
    let r = runtime::with(|rt| Ok(rt.comm(comm as usize)?.1.rank))?;
    *out(rank, "rank")? = r;
    Ok(())
}

pub(crate) unsafe fn MPI_Comm_size(comm: MPI_Comm, size: *mut c_int) -> MpiResult<()> {
    let s = runtime::with(|rt| Ok(rt.comm(comm as usize)?.1.size))?;
    *out(size, "size")? = s;
    Ok(())
}

pub(crate) unsafe fn MPI_Get_processor_name(
    name: *mut c_char,
    resultlen: *mut c_int,
) -> MpiResult<()> {
    let host = runtime::with(|rt| Ok(rt.processor_name.clone()))?;
    put_string(&host, name, MPI_MAX_PROCESSOR_NAME as usize, resultlen)
}

pub(crate) unsafe fn MPI_Get_version(version: *mut c_int, subversion: *mut c_int) -> MpiResult<()> {
    *out(version, "version")? = MPI_VERSION;
    *out(subversion, "subversion")? = MPI_SUBVERSION;
    Ok(())
}

/// The text of `MPI_Get_library_version`.
pub fn library_version() -> String {
    format!(
        "hympi {} (MPI {}.{}, standard ABI {}.{}; shared memory with CMA single copy)",
        env!("CARGO_PKG_VERSION"),
        MPI_VERSION,
        MPI_SUBVERSION,
        MPI_ABI_VERSION,
        MPI_ABI_SUBVERSION
    )
}

pub(crate) unsafe fn MPI_Get_library_version(
    version: *mut c_char,
    resultlen: *mut c_int,
) -> MpiResult<()> {
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    unsafe {
        put_string(
            &library_version(),
            version,
            MPI_MAX_LIBRARY_VERSION_STRING as usize,
            resultlen,
        )
    }
}

pub(crate) unsafe fn MPI_Wtime() -> MpiResult<f64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    Ok(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

pub(crate) unsafe fn MPI_Wtick() -> MpiResult<f64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    Ok((ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9).max(1e-9))
}

pub(crate) unsafe fn MPI_Alloc_mem(
    size: MPI_Aint,
    _info: MPI_Info,
    baseptr: *mut c_void,
) -> MpiResult<()> {
    if size < 0 {
        return fail(MPI_ERR_ARG, format!("invalid size {size}"));
    }
    let slot = out(baseptr as *mut *mut c_void, "baseptr")?;
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: posix_memalign writes a pointer to `p`; alignment is a power of two ≥ sizeof(void*).
    let rc = unsafe { libc::posix_memalign(&mut p, 64, (size as usize).max(1)) };
    if rc != 0 {
        return fail(MPI_ERR_NO_MEM, format!("cannot allocate {size} bytes"));
    }
    *slot = p;
    Ok(())
}

pub(crate) unsafe fn MPI_Free_mem(base: *mut c_void) -> MpiResult<()> {
    // SAFETY: `base` came from MPI_Alloc_mem (posix_memalign) or is NULL.
    unsafe { libc::free(base) };
    Ok(())
}

pub(crate) unsafe fn MPI_Error_class(errorcode: c_int, errorclass: *mut c_int) -> MpiResult<()> {
    let class = if (0..=MPI_ERR_LASTCODE).contains(&errorcode) {
        errorcode
    } else {
        match super::errhandler::user_code(errorcode) {
            Some((class, _)) => class,
            None => return fail(MPI_ERR_ARG, format!("invalid error code {errorcode}")),
        }
    };
    *out(errorclass, "errorclass")? = class;
    Ok(())
}

pub(crate) unsafe fn MPI_Error_string(
    errorcode: c_int,
    string: *mut c_char,
    resultlen: *mut c_int,
) -> MpiResult<()> {
    let user;
    let text = if (0..=MPI_ERR_LASTCODE).contains(&errorcode) {
        class_string(errorcode)
    } else {
        match super::errhandler::user_code(errorcode) {
            Some((_, t)) => {
                user = t;
                user.as_str()
            }
            None => return fail(MPI_ERR_ARG, format!("invalid error code {errorcode}")),
        }
    };
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    unsafe { put_string(text, string, MPI_MAX_ERROR_STRING as usize, resultlen) }
}
