//! The MPICH-ABI entry points written by hand: the calls that register callbacks whose
//! arguments carry handles, statuses or error codes (each callback is wrapped so that it sees
//! MPICH's values), and a few whose strings or attribute values differ between the ABIs.
//!
//! A callback without a context argument (reduction operations, error handlers) is wrapped by
//! one of a fixed set of trampolines per signature, each reading its user function from its
//! own slot; a function registered twice reuses its slot, so the limit ([`SLOTS`] distinct
//! functions per signature) is on distinct functions, not on calls. Callbacks with an
//! `extra_state` argument (attribute copy/delete, generalized requests, data representations)
//! get a context allocated for them instead.

use super::{err_out, err_to_mpich, err_to_std, file_out, keyval_to_mpich, keyval_to_std};
use super::{HandleRef, Kind, MpichStatus};
use crate::abi::consts;
use crate::abi::generated as std_entry;
use crate::abi::types::{MPI_Aint, MPI_Count, MPI_Offset, MPI_Status};
use crate::error::{ErrObj, MpiError};
use core::ffi::{c_char, c_int, c_void};
use core::sync::atomic::{AtomicUsize, Ordering};

/// Distinct user functions per callback signature.
pub const SLOTS: usize = 32;

/// A table of user function addresses, one per trampoline.
type SlotTable = [AtomicUsize; SLOTS];

/// The slot holding `f` (claiming a free one the first time).
fn claim(table: &SlotTable, f: usize) -> Option<usize> {
    if let Some(i) = table.iter().position(|s| s.load(Ordering::Acquire) == f) {
        return Some(i);
    }
    for (i, s) in table.iter().enumerate() {
        match s.compare_exchange(0, f, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return Some(i),
            Err(cur) if cur == f => return Some(i),
            Err(_) => {}
        }
    }
    None
}

/// Reports that every trampoline of a signature is taken, through the error handler.
fn out_of_slots(name: &'static str) -> c_int {
    err_out(crate::abi::entry::call(
        name,
        ErrObj::None,
        || -> Result<(), MpiError> {
            Err(MpiError::new(
                consts::MPI_ERR_INTERN,
                format!(
                    "{name}: more than {SLOTS} distinct callback functions registered through \
                 MPICH's ABI (libmpich.so.12)"
                ),
            ))
        },
    ))
}

/// Defines a slot table and its trampolines: `$table`, `$tramps[i]` calling slot `i`.
macro_rules! trampolines {
    ($table:ident, $tramps:ident, $user:ty, fn($($arg:ident: $aty:ty),*), |$f:ident| $body:expr) => {
        static $table: SlotTable = [const { AtomicUsize::new(0) }; SLOTS];
        const $tramps: [unsafe extern "C" fn($($aty),*); SLOTS] = trampolines!(@list $table, $user, ($($arg: $aty),*), |$f| $body,
            [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31]);
    };
    (@list $table:ident, $user:ty, $args:tt, |$f:ident| $body:expr, [$($i:literal)*]) => {
        [$(trampolines!(@one $table, $user, $args, |$f| $body, $i)),*]
    };
    (@one $table:ident, $user:ty, ($($arg:ident: $aty:ty),*), |$f:ident| $body:expr, $i:literal) => {
        {
            unsafe extern "C" fn t($($arg: $aty),*) {
                // SAFETY: slot $i holds the address of a function of this signature (stored
                // by the registering call before the trampoline was handed out).
                let $f: $user = unsafe { core::mem::transmute::<usize, $user>($table[$i].load(Ordering::Acquire)) };
                // SAFETY: the arguments come from hympi's call of the callback.
                unsafe { $body }
            }
            t
        }
    };
}

type UserFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut c_int);
type UserFnC = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut MPI_Count, *mut c_int);
type ErrFn = unsafe extern "C" fn(*mut c_int, *mut c_int);
type FileErrFn = unsafe extern "C" fn(*mut *mut c_void, *mut c_int);

trampolines!(
    OPS,
    OP_TRAMPS,
    UserFn,
    fn(a: *mut c_void, b: *mut c_void, len: *mut c_int, dt: *mut usize),
    |f| {
        let mut d = Kind::Datatype.to_mpich(*dt);
        f(a, b, len, &mut d)
    }
);
trampolines!(
    OPS_C,
    OP_C_TRAMPS,
    UserFnC,
    fn(a: *mut c_void, b: *mut c_void, len: *mut MPI_Count, dt: *mut usize),
    |f| {
        let mut d = Kind::Datatype.to_mpich(*dt);
        f(a, b, len, &mut d)
    }
);
trampolines!(
    COMM_EH,
    COMM_EH_TRAMPS,
    ErrFn,
    fn(h: *mut usize, code: *mut c_int),
    |f| {
        let mut m = Kind::Comm.to_mpich(*h);
        let mut c = err_out(*code);
        f(&mut m, &mut c)
    }
);
trampolines!(
    WIN_EH,
    WIN_EH_TRAMPS,
    ErrFn,
    fn(h: *mut usize, code: *mut c_int),
    |f| {
        let mut m = Kind::Win.to_mpich(*h);
        let mut c = err_out(*code);
        f(&mut m, &mut c)
    }
);
trampolines!(
    SESSION_EH,
    SESSION_EH_TRAMPS,
    ErrFn,
    fn(h: *mut usize, code: *mut c_int),
    |f| {
        let mut m = Kind::Session.to_mpich(*h);
        let mut c = err_out(*code);
        f(&mut m, &mut c)
    }
);
trampolines!(
    FILE_EH,
    FILE_EH_TRAMPS,
    FileErrFn,
    fn(h: *mut *mut c_void, code: *mut c_int),
    |f| {
        let mut m = file_out((*h).cast()).cast::<c_void>();
        let mut c = err_out(*code);
        f(&mut m, &mut c)
    }
);

/// Registers `user_fn` through the trampoline of its slot and calls `create` with it.
unsafe fn with_trampoline<T: Copy>(
    name: &'static str,
    table: &SlotTable,
    tramps: &[T; SLOTS],
    user_fn: *mut c_void,
    create: impl FnOnce(*mut c_void) -> c_int,
) -> c_int {
    if user_fn.is_null() {
        return err_out(create(core::ptr::null_mut()));
    }
    match claim(table, user_fn as usize) {
        // SAFETY: `T` is a function pointer type (the trampolines' array).
        Some(i) => err_out(create(unsafe {
            core::mem::transmute_copy::<T, *mut c_void>(&tramps[i])
        })),
        None => out_of_slots(name),
    }
}

/// `MPI_Op_create` in MPICH's ABI.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Op_create(
    user_fn: *mut c_void,
    commute: c_int,
    op: *mut c_int,
) -> c_int {
    let mut op_ = HandleRef::new(op, Kind::Op);
    let rc = with_trampoline("MPI_Op_create", &OPS, &OP_TRAMPS, user_fn, |t| {
        std_entry::PMPI_Op_create(t, commute, op_.ptr().cast())
    });
    op_.finish();
    rc
}

/// `MPI_Op_create_c` in MPICH's ABI.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Op_create_c(
    user_fn: *mut c_void,
    commute: c_int,
    op: *mut c_int,
) -> c_int {
    let mut op_ = HandleRef::new(op, Kind::Op);
    let rc = with_trampoline("MPI_Op_create_c", &OPS_C, &OP_C_TRAMPS, user_fn, |t| {
        std_entry::PMPI_Op_create_c(t, commute, op_.ptr().cast())
    });
    op_.finish();
    rc
}

macro_rules! errhandler_create {
    ($pname:ident, $name:ident, $std:ident, $table:ident, $tramps:ident) => {
        #[doc = concat!("`", stringify!($name), "` in MPICH's ABI.")]
        #[no_mangle]
        pub unsafe extern "C" fn $pname(user_fn: *mut c_void, errhandler: *mut c_int) -> c_int {
            let mut eh = HandleRef::new(errhandler, Kind::Errhandler);
            let rc = with_trampoline(stringify!($name), &$table, &$tramps, user_fn, |t| {
                std_entry::$std(t, eh.ptr().cast())
            });
            eh.finish();
            rc
        }
    };
}

errhandler_create!(
    PMPI_Comm_create_errhandler,
    MPI_Comm_create_errhandler,
    PMPI_Comm_create_errhandler,
    COMM_EH,
    COMM_EH_TRAMPS
);
errhandler_create!(
    PMPI_Win_create_errhandler,
    MPI_Win_create_errhandler,
    PMPI_Win_create_errhandler,
    WIN_EH,
    WIN_EH_TRAMPS
);
errhandler_create!(
    PMPI_File_create_errhandler,
    MPI_File_create_errhandler,
    PMPI_File_create_errhandler,
    FILE_EH,
    FILE_EH_TRAMPS
);
errhandler_create!(
    PMPI_Session_create_errhandler,
    MPI_Session_create_errhandler,
    PMPI_Session_create_errhandler,
    SESSION_EH,
    SESSION_EH_TRAMPS
);

// ---------------------------------------------------------------------------------------------
// attribute keys

/// What a keyval created through MPICH's ABI calls: the user's functions and extra state.
struct KeyvalCtx {
    kind: Kind,
    copy: usize,
    delete: usize,
    extra: *mut c_void,
}

type CopyFn =
    unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;
type DeleteFn = unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void) -> c_int;

unsafe extern "C" fn copy_trampoline(
    old: usize,
    keyval: c_int,
    extra: *mut c_void,
    attr_in: *mut c_void,
    attr_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: `extra` is the context `create_keyval` registered (never freed).
    let ctx = unsafe { &*(extra as *const KeyvalCtx) };
    // SAFETY: `copy` is the user's copy function (non-null: checked at registration).
    let f: CopyFn = unsafe { core::mem::transmute::<usize, CopyFn>(ctx.copy) };
    // SAFETY: the arguments are hympi's, converted to MPICH's values.
    err_to_std(unsafe {
        f(
            ctx.kind.to_mpich(old),
            keyval_to_mpich(keyval),
            ctx.extra,
            attr_in,
            attr_out,
            flag,
        )
    })
}

unsafe extern "C" fn delete_trampoline(
    h: usize,
    keyval: c_int,
    attr: *mut c_void,
    extra: *mut c_void,
) -> c_int {
    // SAFETY: as in `copy_trampoline`.
    let ctx = unsafe { &*(extra as *const KeyvalCtx) };
    // SAFETY: `delete` is the user's delete function (non-null: checked at registration).
    let f: DeleteFn = unsafe { core::mem::transmute::<usize, DeleteFn>(ctx.delete) };
    // SAFETY: as in `copy_trampoline`.
    err_to_std(unsafe {
        f(
            ctx.kind.to_mpich(h),
            keyval_to_mpich(keyval),
            attr,
            ctx.extra,
        )
    })
}

/// MPICH's `MPI_DUP_FN` (`MPIR_Dup_fn`): copies the attribute value.
#[no_mangle]
pub unsafe extern "C" fn MPIR_Dup_fn(
    _old: c_int,
    _keyval: c_int,
    _extra: *mut c_void,
    attr_in: *mut c_void,
    attr_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: `attr_out` points to a `void *` and `flag` to an int (the callback contract).
    unsafe {
        *(attr_out as *mut *mut c_void) = attr_in;
        *flag = 1;
    }
    0
}

/// Creates a keyval whose callbacks see MPICH's handles and values.
unsafe fn create_keyval(
    kind: Kind,
    copy: *mut c_void,
    delete: *mut c_void,
    keyval: *mut c_int,
    extra: *mut c_void,
    std: unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut c_void) -> c_int,
) -> c_int {
    let ctx = Box::into_raw(Box::new(KeyvalCtx {
        kind,
        copy: copy as usize,
        delete: delete as usize,
        extra,
    }));
    // The predefined callbacks: null (MPI_NULL_COPY_FN / _DELETE_FN) and MPIR_Dup_fn.
    let std_copy = if copy.is_null() {
        core::ptr::null_mut()
    } else if core::ptr::eq(copy as *const (), MPIR_Dup_fn as *const ()) {
        // The standard ABI's MPI_COMM_DUP_FN (and the type and window ones) is the value 1.
        core::ptr::dangling_mut::<c_void>()
    } else {
        copy_trampoline as *mut c_void
    };
    let std_delete = if delete.is_null() {
        core::ptr::null_mut()
    } else {
        delete_trampoline as *mut c_void
    };
    let mut k = 0;
    let rc = std(std_copy, std_delete, &mut k, ctx.cast());
    if rc == 0 && !keyval.is_null() {
        // SAFETY: `keyval` points to an int (the caller's contract).
        unsafe { *keyval = keyval_to_mpich(k) };
    }
    if rc != 0 {
        // SAFETY: not registered: nothing else holds the context.
        drop(unsafe { Box::from_raw(ctx) });
    }
    err_out(rc)
}

macro_rules! keyval_create {
    ($pname:ident, $kind:ident, $std:ident) => {
        #[doc = concat!("`", stringify!($pname), "` (without the P) in MPICH's ABI.")]
        #[no_mangle]
        pub unsafe extern "C" fn $pname(
            copy: *mut c_void,
            delete: *mut c_void,
            keyval: *mut c_int,
            extra: *mut c_void,
        ) -> c_int {
            unsafe extern "C" fn std(
                a: *mut c_void,
                b: *mut c_void,
                k: *mut c_int,
                e: *mut c_void,
            ) -> c_int {
                // SAFETY: forwarded as given.
                unsafe { std_entry::$std(a, b, k, e) }
            }
            create_keyval(Kind::$kind, copy, delete, keyval, extra, std)
        }
    };
}

keyval_create!(PMPI_Comm_create_keyval, Comm, PMPI_Comm_create_keyval);
keyval_create!(PMPI_Keyval_create, Comm, PMPI_Keyval_create);
keyval_create!(PMPI_Win_create_keyval, Win, PMPI_Win_create_keyval);
keyval_create!(PMPI_Type_create_keyval, Datatype, PMPI_Type_create_keyval);

/// Attribute values whose meaning differs between the ABIs, as MPICH's programs expect them:
/// window flavours and models, `MPI_HOST` (a rank), `MPI_LASTUSEDCODE` (an error code).
static FLAVORS: [c_int; 4] = [
    super::c::MPI_WIN_FLAVOR_CREATE,
    super::c::MPI_WIN_FLAVOR_ALLOCATE,
    super::c::MPI_WIN_FLAVOR_DYNAMIC,
    super::c::MPI_WIN_FLAVOR_SHARED,
];
/// See [`FLAVORS`].
static MODELS: [c_int; 2] = [super::c::MPI_WIN_SEPARATE, super::c::MPI_WIN_UNIFIED];
/// See [`FLAVORS`].
static HOST_PROC_NULL: c_int = super::c::MPI_PROC_NULL;
/// See [`FLAVORS`] (updated at each query).
static LAST_USED: core::sync::atomic::AtomicI32 = core::sync::atomic::AtomicI32::new(0);

/// The address of MPICH's form of a predefined attribute's value (`*value` is hympi's).
unsafe fn translate_attr(keyval: c_int, value: *mut c_void) {
    let slot = value as *mut *const c_int;
    // SAFETY: for these keys `*slot` points to hympi's int.
    let v = unsafe { **slot };
    let found: Option<*const c_int> = if keyval == consts::MPI_WIN_CREATE_FLAVOR {
        FLAVORS
            .iter()
            .find(|f| super::flavor_to_std(**f) == v)
            .map(|f| f as *const c_int)
    } else if keyval == consts::MPI_WIN_MODEL {
        MODELS
            .iter()
            .find(|m| super::model_to_std(**m) == v)
            .map(|m| m as *const c_int)
    } else if keyval == consts::MPI_HOST && v == consts::MPI_PROC_NULL {
        Some(&HOST_PROC_NULL)
    } else if keyval == consts::MPI_LASTUSEDCODE {
        LAST_USED.store(err_to_mpich(v), Ordering::Relaxed);
        Some(LAST_USED.as_ptr())
    } else {
        None
    };
    if let Some(p) = found {
        // SAFETY: `slot` is the caller's `void *` output.
        unsafe { *slot = p };
    }
}

/// `MPI_Comm_get_attr` in MPICH's ABI.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_get_attr(
    comm: c_int,
    keyval: c_int,
    value: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    let k = keyval_to_std(keyval);
    let rc = std_entry::PMPI_Comm_get_attr(Kind::Comm.to_std(comm) as _, k, value, flag);
    if rc == 0
        && !flag.is_null()
        && *flag != 0
        && (k == consts::MPI_HOST || k == consts::MPI_LASTUSEDCODE)
    {
        translate_attr(k, value);
    }
    err_out(rc)
}

/// `MPI_Win_get_attr` in MPICH's ABI.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_get_attr(
    win: c_int,
    keyval: c_int,
    value: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    let k = keyval_to_std(keyval);
    let rc = std_entry::PMPI_Win_get_attr(Kind::Win.to_std(win) as _, k, value, flag);
    if rc == 0
        && !flag.is_null()
        && *flag != 0
        && (k == consts::MPI_WIN_CREATE_FLAVOR || k == consts::MPI_WIN_MODEL)
    {
        translate_attr(k, value);
    }
    err_out(rc)
}

// ---------------------------------------------------------------------------------------------
// generalized requests and data representations

/// A generalized request's user functions and extra state.
struct GrequestCtx {
    query: usize,
    free: usize,
    cancel: usize,
    extra: *mut c_void,
}

type QueryFn = unsafe extern "C" fn(*mut c_void, *mut MpichStatus) -> c_int;
type FreeFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type CancelFn = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;

unsafe extern "C" fn grequest_query(extra: *mut c_void, status: *mut MPI_Status) -> c_int {
    // SAFETY: `extra` is the context `MPI_Grequest_start` registered (freed by `grequest_free`).
    let ctx = unsafe { &*(extra as *const GrequestCtx) };
    let mut m = if status.is_null() {
        MpichStatus::default()
    } else {
        // SAFETY: hympi hands a valid status.
        MpichStatus::from_std(unsafe { &*status })
    };
    // SAFETY: `query` is the user's query function (non-null: checked at registration).
    let rc = unsafe { core::mem::transmute::<usize, QueryFn>(ctx.query)(ctx.extra, &mut m) };
    if !status.is_null() {
        // SAFETY: as above.
        unsafe { *status = m.to_std() };
    }
    err_to_std(rc)
}

unsafe extern "C" fn grequest_free(extra: *mut c_void) -> c_int {
    // SAFETY: as in `grequest_query`; hympi calls free once, last.
    let ctx = unsafe { Box::from_raw(extra as *mut GrequestCtx) };
    // SAFETY: `free` is the user's free function.
    err_to_std(unsafe { core::mem::transmute::<usize, FreeFn>(ctx.free)(ctx.extra) })
}

unsafe extern "C" fn grequest_cancel(extra: *mut c_void, complete: c_int) -> c_int {
    // SAFETY: as in `grequest_query`.
    let ctx = unsafe { &*(extra as *const GrequestCtx) };
    // SAFETY: `cancel` is the user's cancel function.
    err_to_std(unsafe { core::mem::transmute::<usize, CancelFn>(ctx.cancel)(ctx.extra, complete) })
}

/// `MPI_Grequest_start` in MPICH's ABI.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Grequest_start(
    query: *mut c_void,
    free: *mut c_void,
    cancel: *mut c_void,
    extra: *mut c_void,
    request: *mut c_int,
) -> c_int {
    if query.is_null() || free.is_null() || cancel.is_null() {
        let rc = std_entry::PMPI_Grequest_start(query, free, cancel, extra, core::ptr::null_mut());
        return err_out(rc);
    }
    let ctx = Box::into_raw(Box::new(GrequestCtx {
        query: query as usize,
        free: free as usize,
        cancel: cancel as usize,
        extra,
    }));
    let mut req = HandleRef::new(request, Kind::Request);
    let rc = std_entry::PMPI_Grequest_start(
        grequest_query as *mut c_void,
        grequest_free as *mut c_void,
        grequest_cancel as *mut c_void,
        ctx.cast(),
        req.ptr().cast(),
    );
    if rc != 0 {
        // SAFETY: not registered: nothing else holds the context.
        drop(unsafe { Box::from_raw(ctx) });
    }
    req.finish();
    err_out(rc)
}

/// A data representation's user functions and extra state.
struct DatarepCtx {
    read: usize,
    write: usize,
    extent: usize,
    extra: *mut c_void,
}

type ConvFn =
    unsafe extern "C" fn(*mut c_void, c_int, c_int, *mut c_void, MPI_Offset, *mut c_void) -> c_int;
type ConvFnC = unsafe extern "C" fn(
    *mut c_void,
    c_int,
    MPI_Count,
    *mut c_void,
    MPI_Offset,
    *mut c_void,
) -> c_int;
type ExtentFn = unsafe extern "C" fn(c_int, *mut MPI_Aint, *mut c_void) -> c_int;

unsafe extern "C" fn datarep_extent(dt: usize, extent: *mut MPI_Aint, extra: *mut c_void) -> c_int {
    // SAFETY: `extra` is the context `register_datarep` registered (never freed: data
    // representations live until finalize).
    let ctx = unsafe { &*(extra as *const DatarepCtx) };
    // SAFETY: `extent` is the user's extent function (non-null: checked at registration).
    err_to_std(unsafe {
        core::mem::transmute::<usize, ExtentFn>(ctx.extent)(
            Kind::Datatype.to_mpich(dt),
            extent,
            ctx.extra,
        )
    })
}

macro_rules! datarep_conversions {
    ($read:ident, $write:ident, $count:ty, $fnty:ty) => {
        unsafe extern "C" fn $read(
            buf: *mut c_void,
            dt: usize,
            count: $count,
            file: *mut c_void,
            pos: MPI_Offset,
            extra: *mut c_void,
        ) -> c_int {
            // SAFETY: as in `datarep_extent`.
            let ctx = unsafe { &*(extra as *const DatarepCtx) };
            // SAFETY: `read` is the user's read conversion (non-null when this is registered).
            err_to_std(unsafe {
                core::mem::transmute::<usize, $fnty>(ctx.read)(
                    buf,
                    Kind::Datatype.to_mpich(dt),
                    count,
                    file,
                    pos,
                    ctx.extra,
                )
            })
        }
        unsafe extern "C" fn $write(
            buf: *mut c_void,
            dt: usize,
            count: $count,
            file: *mut c_void,
            pos: MPI_Offset,
            extra: *mut c_void,
        ) -> c_int {
            // SAFETY: as in `datarep_extent`.
            let ctx = unsafe { &*(extra as *const DatarepCtx) };
            // SAFETY: `write` is the user's write conversion (non-null when this is registered).
            err_to_std(unsafe {
                core::mem::transmute::<usize, $fnty>(ctx.write)(
                    buf,
                    Kind::Datatype.to_mpich(dt),
                    count,
                    file,
                    pos,
                    ctx.extra,
                )
            })
        }
    };
}

datarep_conversions!(datarep_read, datarep_write, c_int, ConvFn);
datarep_conversions!(datarep_read_c, datarep_write_c, MPI_Count, ConvFnC);

/// Registers a data representation whose callbacks see MPICH's datatype handles.
#[allow(clippy::too_many_arguments)]
unsafe fn register_datarep(
    datarep: *const c_char,
    read: *mut c_void,
    write: *mut c_void,
    extent: *mut c_void,
    extra: *mut c_void,
    read_tramp: *mut c_void,
    write_tramp: *mut c_void,
    std: unsafe extern "C" fn(
        *const c_char,
        *mut c_void,
        *mut c_void,
        *mut c_void,
        *mut c_void,
    ) -> c_int,
) -> c_int {
    let ctx = Box::into_raw(Box::new(DatarepCtx {
        read: read as usize,
        write: write as usize,
        extent: extent as usize,
        extra,
    }));
    let pick = |user: *mut c_void, tramp: *mut c_void| if user.is_null() { user } else { tramp };
    let rc = std(
        datarep,
        pick(read, read_tramp),
        pick(write, write_tramp),
        pick(extent, datarep_extent as *mut c_void),
        ctx.cast(),
    );
    if rc != 0 {
        // SAFETY: not registered: nothing else holds the context.
        drop(unsafe { Box::from_raw(ctx) });
    }
    err_out(rc)
}

/// `MPI_Register_datarep` in MPICH's ABI.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Register_datarep(
    datarep: *const c_char,
    read: *mut c_void,
    write: *mut c_void,
    extent: *mut c_void,
    extra: *mut c_void,
) -> c_int {
    unsafe extern "C" fn std(
        d: *const c_char,
        r: *mut c_void,
        w: *mut c_void,
        e: *mut c_void,
        x: *mut c_void,
    ) -> c_int {
        // SAFETY: forwarded as given.
        unsafe { std_entry::PMPI_Register_datarep(d, r, w, e, x) }
    }
    register_datarep(
        datarep,
        read,
        write,
        extent,
        extra,
        datarep_read as *mut c_void,
        datarep_write as *mut c_void,
        std,
    )
}

/// `MPI_Register_datarep_c` in MPICH's ABI.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Register_datarep_c(
    datarep: *const c_char,
    read: *mut c_void,
    write: *mut c_void,
    extent: *mut c_void,
    extra: *mut c_void,
) -> c_int {
    unsafe extern "C" fn std(
        d: *const c_char,
        r: *mut c_void,
        w: *mut c_void,
        e: *mut c_void,
        x: *mut c_void,
    ) -> c_int {
        // SAFETY: forwarded as given.
        unsafe { std_entry::PMPI_Register_datarep_c(d, r, w, e, x) }
    }
    register_datarep(
        datarep,
        read,
        write,
        extent,
        extra,
        datarep_read_c as *mut c_void,
        datarep_write_c as *mut c_void,
        std,
    )
}

// ---------------------------------------------------------------------------------------------
// strings and rank arrays

/// `MPI_Get_processor_name` in MPICH's ABI (`MPI_MAX_PROCESSOR_NAME` is 128, hympi's 256).
#[no_mangle]
pub unsafe extern "C" fn PMPI_Get_processor_name(
    name: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    let mut buf = [0 as c_char; consts::MPI_MAX_PROCESSOR_NAME as usize];
    let mut len = 0;
    let rc = std_entry::PMPI_Get_processor_name(
        if name.is_null() {
            name
        } else {
            buf.as_mut_ptr()
        },
        if resultlen.is_null() {
            resultlen
        } else {
            &mut len
        },
    );
    if rc == 0 {
        let max = super::c::MPI_MAX_PROCESSOR_NAME - 1;
        let n = len.clamp(0, max);
        // SAFETY: MPICH's programs pass `MPI_MAX_PROCESSOR_NAME` (128) bytes; `n` < 128.
        unsafe {
            core::ptr::copy_nonoverlapping(buf.as_ptr(), name, n as usize);
            *name.add(n as usize) = 0;
            *resultlen = n;
        }
    }
    err_out(rc)
}

/// `MPI_Group_translate_ranks` in MPICH's ABI (`MPI_PROC_NULL` differs).
#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_translate_ranks(
    group1: c_int,
    n: c_int,
    ranks1: *const c_int,
    group2: c_int,
    ranks2: *mut c_int,
) -> c_int {
    let ins = super::IntArray::new(ranks1, n, super::rank_to_std);
    let rc = std_entry::PMPI_Group_translate_ranks(
        Kind::Group.to_std(group1) as _,
        n,
        ins.ptr(),
        Kind::Group.to_std(group2) as _,
        ranks2,
    );
    if rc == 0 && !ranks2.is_null() {
        for i in 0..usize::try_from(n).unwrap_or(0) {
            // SAFETY: `ranks2` has `n` elements (the call's contract).
            unsafe { *ranks2.add(i) = super::rank_to_mpich(*ranks2.add(i)) };
        }
    }
    err_out(rc)
}

/// `MPI_Get_version` in MPICH's ABI: the version of the interface a program built with MPICH
/// 4.0's `mpi.h` sees (the header's `MPI_VERSION` / `MPI_SUBVERSION`).
#[no_mangle]
pub unsafe extern "C" fn PMPI_Get_version(version: *mut c_int, subversion: *mut c_int) -> c_int {
    let (mut v, mut s) = (0, 0);
    let rc = std_entry::PMPI_Get_version(
        if version.is_null() { version } else { &mut v },
        if subversion.is_null() {
            subversion
        } else {
            &mut s
        },
    );
    if rc == 0 {
        // SAFETY: both pointers were checked by the call (it fails on null).
        unsafe {
            *version = 4;
            *subversion = 0;
        }
    }
    err_out(rc)
}

/// The `MPI_x` names of the hand-written `PMPI_x` (profiling interface).
macro_rules! forwarders {
    ($($name:ident => $pname:ident($($a:ident: $t:ty),*);)*) => {$(
        #[doc = concat!("`", stringify!($name), "` in MPICH's ABI: forwards to `", stringify!($pname), "`.")]
        #[no_mangle]
        pub unsafe extern "C" fn $name($($a: $t),*) -> c_int {
            $pname($($a),*)
        }
    )*};
}

forwarders! {
    MPI_Op_create => PMPI_Op_create(f: *mut c_void, c: c_int, o: *mut c_int);
    MPI_Op_create_c => PMPI_Op_create_c(f: *mut c_void, c: c_int, o: *mut c_int);
    MPI_Comm_create_errhandler => PMPI_Comm_create_errhandler(f: *mut c_void, e: *mut c_int);
    MPI_Win_create_errhandler => PMPI_Win_create_errhandler(f: *mut c_void, e: *mut c_int);
    MPI_File_create_errhandler => PMPI_File_create_errhandler(f: *mut c_void, e: *mut c_int);
    MPI_Session_create_errhandler => PMPI_Session_create_errhandler(f: *mut c_void, e: *mut c_int);
    MPI_Comm_create_keyval => PMPI_Comm_create_keyval(c: *mut c_void, d: *mut c_void, k: *mut c_int, x: *mut c_void);
    MPI_Keyval_create => PMPI_Keyval_create(c: *mut c_void, d: *mut c_void, k: *mut c_int, x: *mut c_void);
    MPI_Win_create_keyval => PMPI_Win_create_keyval(c: *mut c_void, d: *mut c_void, k: *mut c_int, x: *mut c_void);
    MPI_Type_create_keyval => PMPI_Type_create_keyval(c: *mut c_void, d: *mut c_void, k: *mut c_int, x: *mut c_void);
    MPI_Comm_get_attr => PMPI_Comm_get_attr(c: c_int, k: c_int, v: *mut c_void, f: *mut c_int);
    MPI_Win_get_attr => PMPI_Win_get_attr(w: c_int, k: c_int, v: *mut c_void, f: *mut c_int);
    MPI_Grequest_start => PMPI_Grequest_start(q: *mut c_void, f: *mut c_void, c: *mut c_void, x: *mut c_void, r: *mut c_int);
    MPI_Register_datarep => PMPI_Register_datarep(d: *const c_char, r: *mut c_void, w: *mut c_void, e: *mut c_void, x: *mut c_void);
    MPI_Register_datarep_c => PMPI_Register_datarep_c(d: *const c_char, r: *mut c_void, w: *mut c_void, e: *mut c_void, x: *mut c_void);
    MPI_Get_processor_name => PMPI_Get_processor_name(n: *mut c_char, l: *mut c_int);
    MPI_Get_version => PMPI_Get_version(v: *mut c_int, s: *mut c_int);
    MPI_Group_translate_ranks => PMPI_Group_translate_ranks(g1: c_int, n: c_int, r1: *const c_int, g2: c_int, r2: *mut c_int);
}
