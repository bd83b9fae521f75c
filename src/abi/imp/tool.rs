//! The MPI tool information interface (`MPI_T_*`) and `MPI_Pcontrol`. The variable tables
//! and the handle/session state are in `crate::core::runtime::tool`.
//!
//! `MPI_T` functions never invoke error handlers: every one returns [`Code`] (`MPI_SUCCESS`
//! or an `MPI_T_ERR_*`), needs no MPI runtime (they work before `MPI_Init` and after
//! `MPI_Finalize`), and all but `MPI_T_init_thread` return `MPI_T_ERR_NOT_INITIALIZED` outside
//! an `MPI_T_init_thread`/`MPI_T_finalize` bracket. Optional outputs of the `_get_info` calls
//! may be NULL (not returned); required ones (counts, indices, handles, buffers) give
//! `MPI_T_ERR_INVALID` when NULL.

use crate::abi::consts::*;
use crate::abi::entry::Code;
use crate::abi::types::*;
use crate::core::error::MpiResult;
use crate::core::runtime::tool::{self, tables, CvarKind, CvarValue, TResult};
use core::ffi::{c_char, c_int, c_void, CStr};

/// The final return code of a tool call's body.
fn run(body: impl FnOnce() -> TResult<()>) -> Code {
    Code(match body() {
        Ok(()) => MPI_SUCCESS,
        Err(code) => code,
    })
}

/// A required output: `MPI_T_ERR_INVALID` when NULL.
unsafe fn req<'a, T>(p: *mut T) -> TResult<&'a mut T> {
    // SAFETY: a non-NULL output points to a `T` (C contract, module doc of `imp`).
    unsafe { p.as_mut() }.ok_or(MPI_T_ERR_INVALID)
}

/// Stores `v` in an optional output (nothing for NULL).
unsafe fn put<T>(p: *mut T, v: T) {
    // SAFETY: a non-NULL output points to a `T` (C contract).
    if let Some(p) = unsafe { p.as_mut() } {
        *p = v;
    }
}

/// Returns `text` through a buffer and its in-out length (MPI-4.1 15.3.3; see
/// `tool::string_plan`). A NULL length returns nothing.
unsafe fn put_string(text: &str, buf: *mut c_char, len: *mut c_int) {
    // SAFETY: a non-NULL length points to an int (C contract).
    let Some(len) = (unsafe { len.as_mut() }) else {
        return;
    };
    let (copy, full) = tool::string_plan(text.len(), *len, buf.is_null());
    if let Some(n) = copy {
        // SAFETY: the caller's buffer holds `*len > n` bytes (C contract; `n < *len` by
        // `string_plan`).
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), n);
            *buf.add(n) = 0;
        }
    }
    *len = full;
}

/// A name argument: `MPI_T_ERR_INVALID` when NULL, `MPI_T_ERR_INVALID_NAME` when not UTF-8
/// (no variable has such a name).
unsafe fn name_arg<'a>(name: *const c_char) -> TResult<&'a str> {
    if name.is_null() {
        return Err(MPI_T_ERR_INVALID);
    }
    // SAFETY: a non-NULL name is a NUL-terminated C string (C contract).
    unsafe { CStr::from_ptr(name) }
        .to_str()
        .map_err(|_| MPI_T_ERR_INVALID_NAME)
}

/// Writes the first `min(len, items.len())` of `items` to `indices` (category queries).
unsafe fn put_indices(items: &[i32], len: c_int, indices: *mut c_int) -> TResult<()> {
    if len < 0 {
        return Err(MPI_T_ERR_INVALID);
    }
    let n = (len as usize).min(items.len());
    if n > 0 {
        if indices.is_null() {
            return Err(MPI_T_ERR_INVALID);
        }
        // SAFETY: the caller's array holds `len >= n` ints (C contract).
        unsafe { std::ptr::copy_nonoverlapping(items.as_ptr(), indices, n) };
    }
    Ok(())
}

fn count_of(n: usize) -> c_int {
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

// ---- profiling control ----

/// `MPI_Pcontrol`: hympi has no profiling levels of its own; a profiling library
/// interposing `MPI_Pcontrol` sees the call.
pub(crate) unsafe fn MPI_Pcontrol(level: c_int) -> MpiResult<()> {
    let _ = level;
    Ok(())
}

// ---- initialization ----

pub(crate) unsafe fn MPI_T_init_thread(required: c_int, provided: *mut c_int) -> Code {
    let _ = required;
    run(|| {
        // SAFETY: C contract (module doc).
        let provided = unsafe { req(provided) }?;
        tool::init();
        // The tables are immutable and the handle state behind a mutex: any thread may call.
        *provided = MPI_THREAD_MULTIPLE;
        Ok(())
    })
}

pub(crate) unsafe fn MPI_T_finalize() -> Code {
    run(tool::finalize)
}

// ---- enumerations ----

pub(crate) unsafe fn MPI_T_enum_get_info(
    enumtype: MPI_T_enum,
    num: *mut c_int,
    name: *mut c_char,
    name_len: *mut c_int,
) -> Code {
    run(|| {
        tool::check_init()?;
        let e = tables().enumeration(enumtype as usize)?;
        // SAFETY: C contract (module doc), for this and the outputs below.
        unsafe {
            put(num, count_of(e.items.len()));
            put_string(e.name, name, name_len);
        }
        Ok(())
    })
}

pub(crate) unsafe fn MPI_T_enum_get_item(
    enumtype: MPI_T_enum,
    indx: c_int,
    value: *mut c_int,
    name: *mut c_char,
    name_len: *mut c_int,
) -> Code {
    run(|| {
        tool::check_init()?;
        let e = tables().enumeration(enumtype as usize)?;
        let &(v, n) = usize::try_from(indx)
            .ok()
            .and_then(|i| e.items.get(i))
            .ok_or(MPI_T_ERR_INVALID_INDEX)?;
        // SAFETY: C contract (module doc).
        unsafe {
            put(value, v);
            put_string(n, name, name_len);
        }
        Ok(())
    })
}

// ---- control variables ----

pub(crate) unsafe fn MPI_T_cvar_get_num(num_cvar: *mut c_int) -> Code {
    run(|| {
        tool::check_init()?;
        // SAFETY: C contract (module doc).
        *unsafe { req(num_cvar) }? = count_of(tables().cvars.len());
        Ok(())
    })
}

pub(crate) unsafe fn MPI_T_cvar_get_info(
    cvar_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    verbosity: *mut c_int,
    datatype: *mut MPI_Datatype,
    enumtype: *mut MPI_T_enum,
    desc: *mut c_char,
    desc_len: *mut c_int,
    bind: *mut c_int,
    scope: *mut c_int,
) -> Code {
    run(|| {
        tool::check_init()?;
        let c = tables().cvar(cvar_index)?;
        let e = match c.kind {
            CvarKind::Enum(i) => tool::enum_handle(i),
            _ => MPI_T_ENUM_NULL,
        };
        // SAFETY: C contract (module doc).
        unsafe {
            put_string(&c.name, name, name_len);
            put(verbosity, c.verbosity);
            put(datatype, c.datatype() as MPI_Datatype);
            put(enumtype, e as MPI_T_enum);
            put_string(&c.desc, desc, desc_len);
            put(bind, MPI_T_BIND_NO_OBJECT);
            put(scope, MPI_T_SCOPE_CONSTANT);
        }
        Ok(())
    })
}

pub(crate) unsafe fn MPI_T_cvar_get_index(name: *const c_char, cvar_index: *mut c_int) -> Code {
    run(|| {
        tool::check_init()?;
        // SAFETY: C contract (module doc).
        let (name, out) = unsafe { (name_arg(name)?, req(cvar_index)?) };
        *out = tables().cvar_index(name).ok_or(MPI_T_ERR_INVALID_NAME)? as c_int;
        Ok(())
    })
}

pub(crate) unsafe fn MPI_T_cvar_handle_alloc(
    cvar_index: c_int,
    obj_handle: *mut c_void,
    handle: *mut MPI_T_cvar_handle,
    count: *mut c_int,
) -> Code {
    // Every variable is bound to no object: `obj_handle` is ignored.
    let _ = obj_handle;
    run(|| {
        tool::with(|s| {
            let c = tables().cvar(cvar_index)?;
            // SAFETY: C contract (module doc).
            let (handle, count) = unsafe { (req(handle)?, req(count)?) };
            let n = c.count();
            *handle = s.cvar_alloc(cvar_index as usize, n) as MPI_T_cvar_handle;
            *count = n;
            Ok(())
        })
    })
}

pub(crate) unsafe fn MPI_T_cvar_handle_free(handle: *mut MPI_T_cvar_handle) -> Code {
    run(|| {
        tool::with(|s| {
            // SAFETY: C contract (module doc).
            let handle = unsafe { req(handle) }?;
            s.cvar_free(*handle as usize)?;
            *handle = MPI_T_CVAR_HANDLE_NULL as MPI_T_cvar_handle;
            Ok(())
        })
    })
}

pub(crate) unsafe fn MPI_T_cvar_read(handle: MPI_T_cvar_handle, buf: *mut c_void) -> Code {
    run(|| {
        let (cvar, count) = tool::with(|s| s.cvar_handle(handle as usize))?;
        if buf.is_null() {
            return Err(MPI_T_ERR_INVALID);
        }
        match tables().cvars[cvar].value() {
            // SAFETY: `buf` holds `count` (1) ints (C contract).
            CvarValue::Int(v) => unsafe { *buf.cast::<c_int>() = v },
            CvarValue::Text(t) => {
                // The buffer holds `count` chars, the length at allocation (the value is
                // constant, so the same).
                let n = t.len().min(count.max(1) as usize - 1);
                // SAFETY: `buf` holds `count > n` chars (C contract).
                unsafe {
                    std::ptr::copy_nonoverlapping(t.as_ptr(), buf.cast::<u8>(), n);
                    *buf.cast::<u8>().add(n) = 0;
                }
            }
        }
        Ok(())
    })
}

pub(crate) unsafe fn MPI_T_cvar_write(handle: MPI_T_cvar_handle, buf: *const c_void) -> Code {
    let _ = buf;
    run(|| {
        tool::with(|s| s.cvar_handle(handle as usize))?;
        // Every control variable has scope MPI_T_SCOPE_CONSTANT.
        Err(MPI_T_ERR_CVAR_SET_NEVER)
    })
}

// ---- performance variables ----

pub(crate) unsafe fn MPI_T_pvar_get_num(num_pvar: *mut c_int) -> Code {
    run(|| {
        tool::check_init()?;
        // SAFETY: C contract (module doc).
        *unsafe { req(num_pvar) }? = count_of(tables().pvars.len());
        Ok(())
    })
}

pub(crate) unsafe fn MPI_T_pvar_get_info(
    pvar_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    verbosity: *mut c_int,
    var_class: *mut c_int,
    datatype: *mut MPI_Datatype,
    enumtype: *mut MPI_T_enum,
    desc: *mut c_char,
    desc_len: *mut c_int,
    bind: *mut c_int,
    readonly: *mut c_int,
    continuous: *mut c_int,
    atomic: *mut c_int,
) -> Code {
    run(|| {
        tool::check_init()?;
        let p = tables().pvar(pvar_index)?;
        // SAFETY: C contract (module doc).
        unsafe {
            put_string(p.name, name, name_len);
            put(verbosity, p.verbosity);
            put(var_class, p.class);
            put(datatype, MPI_UNSIGNED_LONG_LONG as MPI_Datatype);
            put(enumtype, MPI_T_ENUM_NULL as MPI_T_enum);
            put_string(p.desc, desc, desc_len);
            put(bind, MPI_T_BIND_NO_OBJECT);
            put(readonly, 1);
            put(continuous, 1);
            put(atomic, 0);
        }
        Ok(())
    })
}

pub(crate) unsafe fn MPI_T_pvar_get_index(
    name: *const c_char,
    var_class: c_int,
    pvar_index: *mut c_int,
) -> Code {
    run(|| {
        tool::check_init()?;
        // SAFETY: C contract (module doc).
        let (name, out) = unsafe { (name_arg(name)?, req(pvar_index)?) };
        *out = tables()
            .pvar_index(name, var_class)
            .ok_or(MPI_T_ERR_INVALID_NAME)? as c_int;
        Ok(())
    })
}

pub(crate) unsafe fn MPI_T_pvar_session_create(session: *mut MPI_T_pvar_session) -> Code {
    run(|| {
        tool::with(|s| {
            // SAFETY: C contract (module doc).
            *unsafe { req(session) }? = s.session_create() as MPI_T_pvar_session;
            Ok(())
        })
    })
}

pub(crate) unsafe fn MPI_T_pvar_session_free(session: *mut MPI_T_pvar_session) -> Code {
    run(|| {
        tool::with(|s| {
            // SAFETY: C contract (module doc).
            let session = unsafe { req(session) }?;
            s.session_free(*session as usize)?;
            *session = MPI_T_PVAR_SESSION_NULL as MPI_T_pvar_session;
            Ok(())
        })
    })
}

pub(crate) unsafe fn MPI_T_pvar_handle_alloc(
    session: MPI_T_pvar_session,
    pvar_index: c_int,
    obj_handle: *mut c_void,
    handle: *mut MPI_T_pvar_handle,
    count: *mut c_int,
) -> Code {
    // Every variable is bound to no object: `obj_handle` is ignored.
    let _ = obj_handle;
    run(|| {
        tool::with(|s| {
            s.session(session as usize)?;
            tables().pvar(pvar_index)?;
            // SAFETY: C contract (module doc).
            let (handle, count) = unsafe { (req(handle)?, req(count)?) };
            *handle = s.pvar_alloc(session as usize, pvar_index as usize)? as MPI_T_pvar_handle;
            *count = tables().pvars[pvar_index as usize].count() as c_int;
            Ok(())
        })
    })
}

pub(crate) unsafe fn MPI_T_pvar_handle_free(
    session: MPI_T_pvar_session,
    handle: *mut MPI_T_pvar_handle,
) -> Code {
    run(|| {
        tool::with(|s| {
            s.session(session as usize)?;
            // SAFETY: C contract (module doc).
            let handle = unsafe { req(handle) }?;
            s.pvar_free(session as usize, *handle as usize)?;
            *handle = MPI_T_PVAR_HANDLE_NULL as MPI_T_pvar_handle;
            Ok(())
        })
    })
}

/// Start, stop and reset: every variable is continuous and read-only, so a single handle
/// fails with `single_err`; `MPI_T_PVAR_ALL_HANDLES` applies to the session's handles that
/// allow the operation (none) and succeeds.
fn all_or_fail(session: MPI_T_pvar_session, handle: MPI_T_pvar_handle, single_err: i32) -> Code {
    run(|| {
        tool::with(|s| {
            s.session(session as usize)?;
            if handle as usize == MPI_T_PVAR_ALL_HANDLES {
                return Ok(());
            }
            s.pvar_handle(session as usize, handle as usize)?;
            Err(single_err)
        })
    })
}

pub(crate) unsafe fn MPI_T_pvar_start(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
) -> Code {
    all_or_fail(session, handle, MPI_T_ERR_PVAR_NO_STARTSTOP)
}

pub(crate) unsafe fn MPI_T_pvar_stop(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
) -> Code {
    all_or_fail(session, handle, MPI_T_ERR_PVAR_NO_STARTSTOP)
}

pub(crate) unsafe fn MPI_T_pvar_reset(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
) -> Code {
    all_or_fail(session, handle, MPI_T_ERR_PVAR_NO_WRITE)
}

/// The handle of a read or write (`MPI_T_PVAR_ALL_HANDLES` is not allowed there).
fn single_handle(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
) -> TResult<tool::PvarHandle> {
    tool::with(|s| {
        s.session(session as usize)?;
        s.pvar_handle(session as usize, handle as usize)
    })
}

pub(crate) unsafe fn MPI_T_pvar_read(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
    buf: *mut c_void,
) -> Code {
    run(|| {
        let h = single_handle(session, handle)?;
        let values = tool::pvar_value(&h);
        // SAFETY: C contract (module doc): `count` unsigned long longs, the count the
        // handle's allocation returned, which is `values.len()`.
        let out: *mut u64 = unsafe { req(buf.cast::<u64>()) }?;
        // SAFETY: as above: `out` starts an array of `values.len()` elements.
        unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), out, values.len()) };
        Ok(())
    })
}

pub(crate) unsafe fn MPI_T_pvar_write(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
    buf: *const c_void,
) -> Code {
    let _ = buf;
    run(|| {
        single_handle(session, handle)?;
        Err(MPI_T_ERR_PVAR_NO_WRITE)
    })
}

pub(crate) unsafe fn MPI_T_pvar_readreset(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
    buf: *mut c_void,
) -> Code {
    let _ = buf;
    run(|| {
        single_handle(session, handle)?;
        Err(MPI_T_ERR_PVAR_NO_WRITE)
    })
}

// ---- event sources ----

const SOURCE_NAME: &str = "hympi_process_clock";
const SOURCE_DESC: &str =
    "this MPI process: CLOCK_MONOTONIC in nanoseconds, the clock of MPI_Wtime";

fn source(index: c_int) -> TResult<()> {
    tool::check_init()?;
    if index != 0 {
        return Err(MPI_T_ERR_INVALID_INDEX);
    }
    Ok(())
}

pub(crate) unsafe fn MPI_T_source_get_num(num_sources: *mut c_int) -> Code {
    run(|| {
        tool::check_init()?;
        // SAFETY: C contract (module doc).
        *unsafe { req(num_sources) }? = 1;
        Ok(())
    })
}

pub(crate) unsafe fn MPI_T_source_get_info(
    source_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    desc: *mut c_char,
    desc_len: *mut c_int,
    ordering: *mut MPI_T_source_order,
    ticks_per_second: *mut MPI_Count,
    max_ticks: *mut MPI_Count,
    info: *mut MPI_Info,
) -> Code {
    run(|| {
        source(source_index)?;
        if !info.is_null() {
            // An empty info object, which the caller frees (the info table needs no runtime).
            let h = crate::core::objects::info::create(crate::core::objects::info::Info::default())
                .map_err(|_| MPI_T_ERR_MEMORY)?;
            // SAFETY: C contract (module doc).
            unsafe { *info = h as MPI_Info };
        }
        // SAFETY: C contract (module doc).
        unsafe {
            put_string(SOURCE_NAME, name, name_len);
            put_string(SOURCE_DESC, desc, desc_len);
            put(ordering, MPI_T_SOURCE_ORDERED);
            put(ticks_per_second, 1_000_000_000);
            put(max_ticks, i64::MAX);
        }
        Ok(())
    })
}

pub(crate) unsafe fn MPI_T_source_get_timestamp(
    source_index: c_int,
    timestamp: *mut MPI_Count,
) -> Code {
    run(|| {
        source(source_index)?;
        // SAFETY: C contract (module doc).
        *unsafe { req(timestamp) }? = tool::timestamp_ns();
        Ok(())
    })
}

// ---- events: hympi exposes none ----

pub(crate) unsafe fn MPI_T_event_get_num(num_events: *mut c_int) -> Code {
    run(|| {
        tool::check_init()?;
        // SAFETY: C contract (module doc).
        *unsafe { req(num_events) }? = 0;
        Ok(())
    })
}

pub(crate) unsafe fn MPI_T_event_get_info(
    event_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    verbosity: *mut c_int,
    array_of_datatypes: *mut MPI_Datatype,
    array_of_displacements: *mut MPI_Aint,
    num_elements: *mut c_int,
    enumtype: *mut MPI_T_enum,
    info: *mut MPI_Info,
    desc: *mut c_char,
    desc_len: *mut c_int,
    bind: *mut c_int,
) -> Code {
    let _ = (event_index, name, name_len, verbosity, array_of_datatypes);
    let _ = (array_of_displacements, num_elements, enumtype, info, desc);
    let _ = (desc_len, bind);
    run(|| {
        tool::check_init()?;
        Err(MPI_T_ERR_INVALID_INDEX)
    })
}

pub(crate) unsafe fn MPI_T_event_get_index(name: *const c_char, event_index: *mut c_int) -> Code {
    run(|| {
        tool::check_init()?;
        // SAFETY: C contract (module doc).
        unsafe { (name_arg(name)?, req(event_index)?) };
        Err(MPI_T_ERR_INVALID_NAME)
    })
}

pub(crate) unsafe fn MPI_T_event_handle_alloc(
    event_index: c_int,
    obj_handle: *mut c_void,
    info: MPI_Info,
    event_registration: *mut MPI_T_event_registration,
) -> Code {
    let _ = (event_index, obj_handle, info, event_registration);
    run(|| {
        tool::check_init()?;
        Err(MPI_T_ERR_INVALID_INDEX)
    })
}

/// Calls on an event registration or instance: none can exist.
fn no_event_handle() -> Code {
    run(|| {
        tool::check_init()?;
        Err(MPI_T_ERR_INVALID_HANDLE)
    })
}

pub(crate) unsafe fn MPI_T_event_handle_set_info(
    event_registration: MPI_T_event_registration,
    info: MPI_Info,
) -> Code {
    let _ = (event_registration, info);
    no_event_handle()
}

pub(crate) unsafe fn MPI_T_event_handle_get_info(
    event_registration: MPI_T_event_registration,
    info_used: *mut MPI_Info,
) -> Code {
    let _ = (event_registration, info_used);
    no_event_handle()
}

pub(crate) unsafe fn MPI_T_event_register_callback(
    event_registration: MPI_T_event_registration,
    cb_safety: MPI_T_cb_safety,
    info: MPI_Info,
    user_data: *mut c_void,
    event_cb_function: *mut c_void,
) -> Code {
    let _ = (
        event_registration,
        cb_safety,
        info,
        user_data,
        event_cb_function,
    );
    no_event_handle()
}

pub(crate) unsafe fn MPI_T_event_callback_set_info(
    event_registration: MPI_T_event_registration,
    cb_safety: MPI_T_cb_safety,
    info: MPI_Info,
) -> Code {
    let _ = (event_registration, cb_safety, info);
    no_event_handle()
}

pub(crate) unsafe fn MPI_T_event_callback_get_info(
    event_registration: MPI_T_event_registration,
    cb_safety: MPI_T_cb_safety,
    info_used: *mut MPI_Info,
) -> Code {
    let _ = (event_registration, cb_safety, info_used);
    no_event_handle()
}

pub(crate) unsafe fn MPI_T_event_handle_free(
    event_registration: MPI_T_event_registration,
    user_data: *mut c_void,
    free_cb_function: *mut c_void,
) -> Code {
    let _ = (event_registration, user_data, free_cb_function);
    no_event_handle()
}

pub(crate) unsafe fn MPI_T_event_set_dropped_handler(
    event_registration: MPI_T_event_registration,
    dropped_cb_function: *mut c_void,
) -> Code {
    let _ = (event_registration, dropped_cb_function);
    no_event_handle()
}

pub(crate) unsafe fn MPI_T_event_read(
    event_instance: MPI_T_event_instance,
    element_index: c_int,
    buffer: *mut c_void,
) -> Code {
    let _ = (event_instance, element_index, buffer);
    no_event_handle()
}

pub(crate) unsafe fn MPI_T_event_copy(
    event_instance: MPI_T_event_instance,
    buffer: *mut c_void,
) -> Code {
    let _ = (event_instance, buffer);
    no_event_handle()
}

pub(crate) unsafe fn MPI_T_event_get_timestamp(
    event_instance: MPI_T_event_instance,
    event_timestamp: *mut MPI_Count,
) -> Code {
    let _ = (event_instance, event_timestamp);
    no_event_handle()
}

pub(crate) unsafe fn MPI_T_event_get_source(
    event_instance: MPI_T_event_instance,
    source_index: *mut c_int,
) -> Code {
    let _ = (event_instance, source_index);
    no_event_handle()
}

// ---- categories ----

pub(crate) unsafe fn MPI_T_category_get_num(num_cat: *mut c_int) -> Code {
    run(|| {
        tool::check_init()?;
        // SAFETY: C contract (module doc).
        *unsafe { req(num_cat) }? = count_of(tables().categories.len());
        Ok(())
    })
}

pub(crate) unsafe fn MPI_T_category_get_info(
    cat_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    desc: *mut c_char,
    desc_len: *mut c_int,
    num_cvars: *mut c_int,
    num_pvars: *mut c_int,
    num_categories: *mut c_int,
) -> Code {
    run(|| {
        tool::check_init()?;
        let c = tables().category(cat_index)?;
        // SAFETY: C contract (module doc).
        unsafe {
            put_string(c.name, name, name_len);
            put_string(c.desc, desc, desc_len);
            put(num_cvars, count_of(c.cvars.len()));
            put(num_pvars, count_of(c.pvars.len()));
            put(num_categories, count_of(c.categories.len()));
        }
        Ok(())
    })
}

pub(crate) unsafe fn MPI_T_category_get_num_events(
    cat_index: c_int,
    num_events: *mut c_int,
) -> Code {
    run(|| {
        tool::check_init()?;
        tables().category(cat_index)?;
        // SAFETY: C contract (module doc).
        *unsafe { req(num_events) }? = 0;
        Ok(())
    })
}

pub(crate) unsafe fn MPI_T_category_get_index(name: *const c_char, cat_index: *mut c_int) -> Code {
    run(|| {
        tool::check_init()?;
        // SAFETY: C contract (module doc).
        let (name, out) = unsafe { (name_arg(name)?, req(cat_index)?) };
        *out = tables()
            .category_index(name)
            .ok_or(MPI_T_ERR_INVALID_NAME)? as c_int;
        Ok(())
    })
}

/// The category queries returning index lists.
unsafe fn category_list(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
    pick: impl FnOnce(&tool::Category) -> &[i32],
) -> Code {
    run(|| {
        tool::check_init()?;
        let c = tables().category(cat_index)?;
        // SAFETY: C contract (module doc).
        unsafe { put_indices(pick(c), len, indices) }
    })
}

pub(crate) unsafe fn MPI_T_category_get_cvars(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
) -> Code {
    // SAFETY: C contract (module doc).
    unsafe { category_list(cat_index, len, indices, |c| &c.cvars) }
}

pub(crate) unsafe fn MPI_T_category_get_pvars(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
) -> Code {
    // SAFETY: C contract (module doc).
    unsafe { category_list(cat_index, len, indices, |c| &c.pvars) }
}

pub(crate) unsafe fn MPI_T_category_get_events(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
) -> Code {
    // SAFETY: C contract (module doc).
    unsafe { category_list(cat_index, len, indices, |_| &[]) }
}

pub(crate) unsafe fn MPI_T_category_get_categories(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
) -> Code {
    // SAFETY: C contract (module doc).
    unsafe { category_list(cat_index, len, indices, |c| &c.categories) }
}

pub(crate) unsafe fn MPI_T_category_changed(update_number: *mut c_int) -> Code {
    run(|| {
        tool::check_init()?;
        // The categories never change.
        // SAFETY: C contract (module doc).
        *unsafe { req(update_number) }? = 0;
        Ok(())
    })
}
