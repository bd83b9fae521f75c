//! One-sided windows: creation in every flavour, free, group, info, names, attributes and
//! error handlers (the operations are in `rma.rs`).

use super::attr::delete_one;
use super::comm::c_string;
use super::errhandler::errh_of;
use super::util::{out, put_string};
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::core::error::{fail, MpiError, MpiResult};
use crate::core::objects::attr::{AttrEntry, ObjKind};
use crate::core::objects::errhandler;
use crate::core::objects::group::Group;
use crate::core::objects::info::{self, Info};
use crate::core::rma::{self, Spec};
use crate::core::runtime::{self, Runtime};
use core::ffi::{c_char, c_int, c_void};

/// Checks the size and displacement unit of a window creation (errors go to the
/// communicator's handler).
fn checked(size: MPI_Aint, disp_unit: MPI_Aint) -> MpiResult<(usize, isize)> {
    if size < 0 {
        return fail(MPI_ERR_SIZE, format!("window size {size} is negative"));
    }
    if disp_unit <= 0 || disp_unit > i32::MAX as isize {
        return fail(
            MPI_ERR_DISP,
            format!("displacement unit {disp_unit} is not positive"),
        );
    }
    Ok((size as usize, disp_unit))
}

fn hints(h: MPI_Info) -> MpiResult<Info> {
    Ok(info::lookup_opt(h as usize)?.unwrap_or_default())
}

unsafe fn create(
    flavor: i32,
    base: *mut c_void,
    size: MPI_Aint,
    disp_unit: MPI_Aint,
    info: MPI_Info,
    comm: MPI_Comm,
    baseptr: *mut c_void,
    win: *mut MPI_Win,
) -> MpiResult<()> {
    let slot = out(win, "win")?;
    let (size, disp_unit) = checked(size, disp_unit)?;
    if flavor != MPI_WIN_FLAVOR_CREATE && flavor != MPI_WIN_FLAVOR_DYNAMIC && baseptr.is_null() {
        return fail(MPI_ERR_ARG, "baseptr must not be NULL");
    }
    if flavor == MPI_WIN_FLAVOR_CREATE && base.is_null() && size > 0 {
        return fail(
            MPI_ERR_BASE,
            "the window memory is NULL but its size is not 0",
        );
    }
    let spec = Spec {
        flavor,
        size,
        disp_unit,
        base: base as usize,
        info: hints(info)?,
    };
    let (h, at) = rma::create(comm as usize, spec)?;
    if matches!(flavor, MPI_WIN_FLAVOR_ALLOCATE | MPI_WIN_FLAVOR_SHARED) {
        // SAFETY: baseptr points to a `void *` (C contract), checked non-NULL above.
        unsafe { *(baseptr as *mut *mut c_void) = at as *mut c_void };
    }
    *slot = h as MPI_Win;
    Ok(())
}

pub(crate) unsafe fn MPI_Win_create(
    base: *mut c_void,
    size: MPI_Aint,
    disp_unit: c_int,
    info: MPI_Info,
    comm: MPI_Comm,
    win: *mut MPI_Win,
) -> MpiResult<()> {
    let null = std::ptr::null_mut();
    // SAFETY: forwarded C arguments.
    unsafe {
        create(
            MPI_WIN_FLAVOR_CREATE,
            base,
            size,
            disp_unit as isize,
            info,
            comm,
            null,
            win,
        )
    }
}

pub(crate) unsafe fn MPI_Win_create_c(
    base: *mut c_void,
    size: MPI_Aint,
    disp_unit: MPI_Aint,
    info: MPI_Info,
    comm: MPI_Comm,
    win: *mut MPI_Win,
) -> MpiResult<()> {
    let null = std::ptr::null_mut();
    // SAFETY: forwarded C arguments.
    unsafe {
        create(
            MPI_WIN_FLAVOR_CREATE,
            base,
            size,
            disp_unit,
            info,
            comm,
            null,
            win,
        )
    }
}

pub(crate) unsafe fn MPI_Win_allocate(
    size: MPI_Aint,
    disp_unit: c_int,
    info: MPI_Info,
    comm: MPI_Comm,
    baseptr: *mut c_void,
    win: *mut MPI_Win,
) -> MpiResult<()> {
    let null = std::ptr::null_mut();
    // SAFETY: forwarded C arguments.
    unsafe {
        create(
            MPI_WIN_FLAVOR_ALLOCATE,
            null,
            size,
            disp_unit as isize,
            info,
            comm,
            baseptr,
            win,
        )
    }
}

pub(crate) unsafe fn MPI_Win_allocate_c(
    size: MPI_Aint,
    disp_unit: MPI_Aint,
    info: MPI_Info,
    comm: MPI_Comm,
    baseptr: *mut c_void,
    win: *mut MPI_Win,
) -> MpiResult<()> {
    let null = std::ptr::null_mut();
    // SAFETY: forwarded C arguments.
    unsafe {
        create(
            MPI_WIN_FLAVOR_ALLOCATE,
            null,
            size,
            disp_unit,
            info,
            comm,
            baseptr,
            win,
        )
    }
}

pub(crate) unsafe fn MPI_Win_allocate_shared(
    size: MPI_Aint,
    disp_unit: c_int,
    info: MPI_Info,
    comm: MPI_Comm,
    baseptr: *mut c_void,
    win: *mut MPI_Win,
) -> MpiResult<()> {
    let null = std::ptr::null_mut();
    // SAFETY: forwarded C arguments.
    unsafe {
        create(
            MPI_WIN_FLAVOR_SHARED,
            null,
            size,
            disp_unit as isize,
            info,
            comm,
            baseptr,
            win,
        )
    }
}

pub(crate) unsafe fn MPI_Win_allocate_shared_c(
    size: MPI_Aint,
    disp_unit: MPI_Aint,
    info: MPI_Info,
    comm: MPI_Comm,
    baseptr: *mut c_void,
    win: *mut MPI_Win,
) -> MpiResult<()> {
    let null = std::ptr::null_mut();
    // SAFETY: forwarded C arguments.
    unsafe {
        create(
            MPI_WIN_FLAVOR_SHARED,
            null,
            size,
            disp_unit,
            info,
            comm,
            baseptr,
            win,
        )
    }
}

pub(crate) unsafe fn MPI_Win_create_dynamic(
    info: MPI_Info,
    comm: MPI_Comm,
    win: *mut MPI_Win,
) -> MpiResult<()> {
    let null = std::ptr::null_mut();
    // SAFETY: forwarded C arguments.
    unsafe { create(MPI_WIN_FLAVOR_DYNAMIC, null, 0, 1, info, comm, null, win) }
}

unsafe fn shared_query(
    win: MPI_Win,
    rank: c_int,
    size: *mut MPI_Aint,
    baseptr: *mut c_void,
) -> MpiResult<isize> {
    let size = out(size, "size")?;
    let baseptr = out(baseptr as *mut *mut c_void, "baseptr")?;
    let (s, unit, b) = runtime::with(|rt| rma::shared_query(rt, win as usize, rank))?;
    *size = s as MPI_Aint;
    *baseptr = b as *mut c_void;
    Ok(unit)
}

pub(crate) unsafe fn MPI_Win_shared_query(
    win: MPI_Win,
    rank: c_int,
    size: *mut MPI_Aint,
    disp_unit: *mut c_int,
    baseptr: *mut c_void,
) -> MpiResult<()> {
    let du = out(disp_unit, "disp_unit")?;
    // SAFETY: forwarded C arguments.
    *du = unsafe { shared_query(win, rank, size, baseptr)? } as c_int;
    Ok(())
}

pub(crate) unsafe fn MPI_Win_shared_query_c(
    win: MPI_Win,
    rank: c_int,
    size: *mut MPI_Aint,
    disp_unit: *mut MPI_Aint,
    baseptr: *mut c_void,
) -> MpiResult<()> {
    let du = out(disp_unit, "disp_unit")?;
    // SAFETY: forwarded C arguments.
    *du = unsafe { shared_query(win, rank, size, baseptr)? };
    Ok(())
}

pub(crate) unsafe fn MPI_Win_attach(
    win: MPI_Win,
    base: *mut c_void,
    size: MPI_Aint,
) -> MpiResult<()> {
    if size < 0 {
        return fail(MPI_ERR_SIZE, format!("attached size {size} is negative"));
    }
    runtime::with(|rt| rma::attach(rt, win as usize, base as usize, size as usize))
}

pub(crate) unsafe fn MPI_Win_detach(win: MPI_Win, base: *const c_void) -> MpiResult<()> {
    runtime::with(|rt| rma::detach(rt, win as usize, base as usize))
}

pub(crate) unsafe fn MPI_Win_free(win: *mut MPI_Win) -> MpiResult<()> {
    let slot = out(win, "win")?;
    let h = *slot as usize;
    runtime::with(|rt| rt.win(h)?.1.epochs.check_free())?;
    // SAFETY: runs the user's delete callbacks with their registered C signatures.
    unsafe { delete_all_win_attrs(h)? };
    rma::free(h)?;
    *slot = MPI_WIN_NULL as MPI_Win;
    Ok(())
}

pub(crate) unsafe fn MPI_Win_get_group(win: MPI_Win, group: *mut MPI_Group) -> MpiResult<()> {
    let slot = out(group, "group")?;
    let h = runtime::with(|rt| {
        let comm = rt.win(win as usize)?.1.comm;
        let g = Group::of_comm(rt.comm(comm)?.1);
        rt.new_group(g)
    })?;
    *slot = h as MPI_Group;
    Ok(())
}

pub(crate) unsafe fn MPI_Win_set_info(win: MPI_Win, info: MPI_Info) -> MpiResult<()> {
    if info as usize == MPI_INFO_NULL {
        return fail(MPI_ERR_INFO, "the info is MPI_INFO_NULL");
    }
    let given = hints(info)?;
    runtime::with(|rt| {
        let w = rt.win_mut(win as usize)?;
        for (k, v) in &given.entries {
            if k != "alloc_shared_noncontig" {
                w.info.set(k, v);
            }
        }
        Ok(())
    })
}

pub(crate) unsafe fn MPI_Win_get_info(win: MPI_Win, info_used: *mut MPI_Info) -> MpiResult<()> {
    let slot = out(info_used, "info_used")?;
    let kept = runtime::with(|rt| Ok(rt.win(win as usize)?.1.info.clone()))?;
    *slot = info::create(kept)? as MPI_Info;
    Ok(())
}

pub(crate) unsafe fn MPI_Win_set_name(win: MPI_Win, win_name: *const c_char) -> MpiResult<()> {
    let mut name = c_string(win_name, "win_name")?.into_owned();
    let max = MPI_MAX_OBJECT_NAME as usize - 1;
    if name.len() > max {
        let mut cut = max;
        while !name.is_char_boundary(cut) {
            cut -= 1;
        }
        name.truncate(cut);
    }
    runtime::with(|rt| {
        rt.win_mut(win as usize)?.name = name;
        Ok(())
    })
}

pub(crate) unsafe fn MPI_Win_get_name(
    win: MPI_Win,
    win_name: *mut c_char,
    resultlen: *mut c_int,
) -> MpiResult<()> {
    // The null handle has a name too (as MPI_COMM_NULL's; mpi4py's suite asks for it).
    let name = if win as usize == MPI_WIN_NULL {
        "MPI_WIN_NULL".to_string()
    } else {
        runtime::with(|rt| Ok(rt.win(win as usize)?.1.name.clone()))?
    };
    // SAFETY: the caller's buffer holds MPI_MAX_OBJECT_NAME bytes (C contract).
    unsafe { put_string(&name, win_name, MPI_MAX_OBJECT_NAME as usize, resultlen) }
}

// ---------------------------------------------------------------------------------------------
// error handlers

pub(crate) unsafe fn MPI_Win_create_errhandler(
    win_errhandler_fn: *mut c_void,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    // SAFETY: same shape as a communicator handler: `void (MPI_Win *, int *, ...)`.
    unsafe { super::errhandler::MPI_Comm_create_errhandler(win_errhandler_fn, errhandler) }
}

pub(crate) unsafe fn MPI_Win_set_errhandler(
    win: MPI_Win,
    errhandler: MPI_Errhandler,
) -> MpiResult<()> {
    runtime::with(|rt| {
        rt.win(win as usize)?;
        let new = errh_of(rt, errhandler as usize)?;
        rt.errh_ref(new);
        let old = std::mem::replace(&mut rt.win_mut(win as usize)?.errh, new);
        rt.errh_unref(old);
        Ok(())
    })
}

pub(crate) unsafe fn MPI_Win_get_errhandler(
    win: MPI_Win,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    let slot = out(errhandler, "errhandler")?;
    let h = runtime::with(|rt| {
        let e = rt.win(win as usize)?.1.errh;
        Ok(crate::core::objects::errhandler::handle_of(e))
    })?;
    *slot = h as MPI_Errhandler;
    Ok(())
}

pub(crate) unsafe fn MPI_Win_call_errhandler(win: MPI_Win, errorcode: c_int) -> MpiResult<()> {
    runtime::with(|rt| rt.win(win as usize).map(|_| ()))?;
    let err = MpiError::new(
        errorcode,
        format!("MPI_Win_call_errhandler with error code {errorcode}"),
    );
    errhandler::raise(
        "MPI_Win_call_errhandler",
        crate::abi::entry::ErrObj::Win(win as usize),
        err,
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// attributes

/// The predefined window attributes: `MPI_WIN_BASE` is the base address itself, the others
/// point to their value.
fn predefined_attr(rt: &Runtime, win: usize, keyval: i32) -> MpiResult<Option<usize>> {
    let (_, w) = rt.win(win)?;
    let v = &w.attr_values;
    Ok(match keyval {
        MPI_WIN_BASE => Some(w.base),
        MPI_WIN_SIZE => Some(&v.size as *const isize as usize),
        MPI_WIN_DISP_UNIT => Some(&v.disp_unit as *const i32 as usize),
        MPI_WIN_CREATE_FLAVOR => Some(&v.flavor as *const i32 as usize),
        MPI_WIN_MODEL => Some(&v.model as *const i32 as usize),
        _ => None,
    })
}

fn is_win_predefined(keyval: i32) -> bool {
    matches!(
        keyval,
        MPI_WIN_BASE | MPI_WIN_SIZE | MPI_WIN_DISP_UNIT | MPI_WIN_CREATE_FLAVOR | MPI_WIN_MODEL
    )
}

/// Deletes all attributes of window `h` (last set first), as `MPI_Win_free` does. Called
/// outside the runtime.
unsafe fn delete_all_win_attrs(h: usize) -> MpiResult<()> {
    loop {
        let next = runtime::with(|rt| {
            let last = rt.win(h)?.1.attrs.last().copied();
            Ok(last.map(|a| rt.keyvals.entries(&[a])))
        })?;
        let Some(entries) = next else {
            return Ok(());
        };
        if let Some(e) = entries.first() {
            // SAFETY: see delete_one.
            unsafe { delete_one(h, e)? };
        }
        runtime::with(|rt| {
            if let Some((k, _)) = rt.win_mut(h)?.attrs.pop() {
                rt.keyvals.detach(k);
            }
            Ok(())
        })?;
    }
}

pub(crate) unsafe fn MPI_Win_create_keyval(
    win_copy_attr_fn: *mut c_void,
    win_delete_attr_fn: *mut c_void,
    win_keyval: *mut c_int,
    extra_state: *mut c_void,
) -> MpiResult<()> {
    // SAFETY: forwarded C arguments; windows are never copied, so the copy function is kept
    // but never called.
    unsafe {
        super::attr::create_keyval(
            win_copy_attr_fn,
            win_delete_attr_fn,
            win_keyval,
            extra_state,
            ObjKind::Win,
        )
    }
}

pub(crate) unsafe fn MPI_Win_free_keyval(win_keyval: *mut c_int) -> MpiResult<()> {
    let slot = out(win_keyval, "win_keyval")?;
    runtime::with(|rt| rt.keyvals.free(*slot, ObjKind::Win))?;
    *slot = MPI_KEYVAL_INVALID;
    Ok(())
}

pub(crate) unsafe fn MPI_Win_set_attr(
    win: MPI_Win,
    win_keyval: c_int,
    attribute_val: *mut c_void,
) -> MpiResult<()> {
    let h = win as usize;
    if is_win_predefined(win_keyval) {
        return fail(
            MPI_ERR_KEYVAL,
            "the predefined window attributes cannot be set",
        );
    }
    let old = runtime::with(|rt| {
        let def = rt.keyvals.get(win_keyval, ObjKind::Win)?;
        let list = &rt.win(h)?.1.attrs;
        Ok(list.iter().find(|a| a.0 == win_keyval).map(|a| AttrEntry {
            keyval: win_keyval,
            value: a.1,
            def,
        }))
    })?;
    if let Some(e) = old {
        // SAFETY: see delete_one.
        unsafe { delete_one(h, &e)? };
    }
    runtime::with(|rt| {
        let value = attribute_val as usize;
        let list = &mut rt.win_mut(h)?.attrs;
        match list.iter_mut().find(|a| a.0 == win_keyval) {
            Some(a) => a.1 = value,
            None => {
                list.push((win_keyval, value));
                rt.keyvals.attach(win_keyval);
            }
        }
        Ok(())
    })
}

pub(crate) unsafe fn MPI_Win_get_attr(
    win: MPI_Win,
    win_keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> MpiResult<()> {
    let flag = out(flag, "flag")?;
    let dst = out(attribute_val.cast::<usize>(), "attribute_val")?;
    let found = runtime::with(|rt| {
        if is_win_predefined(win_keyval) {
            return predefined_attr(rt, win as usize, win_keyval);
        }
        rt.keyvals.get(win_keyval, ObjKind::Win)?;
        let list = &rt.win(win as usize)?.1.attrs;
        Ok(list.iter().find(|a| a.0 == win_keyval).map(|a| a.1))
    })?;
    match found {
        Some(v) => {
            *dst = v;
            *flag = 1;
        }
        None => *flag = 0,
    }
    Ok(())
}

pub(crate) unsafe fn MPI_Win_delete_attr(win: MPI_Win, win_keyval: c_int) -> MpiResult<()> {
    let h = win as usize;
    let entry = runtime::with(|rt| {
        let def = rt.keyvals.get(win_keyval, ObjKind::Win)?;
        match rt.win(h)?.1.attrs.iter().find(|a| a.0 == win_keyval) {
            Some(a) => Ok(AttrEntry {
                keyval: win_keyval,
                value: a.1,
                def,
            }),
            None => fail(
                MPI_ERR_KEYVAL,
                format!("the window has no attribute for keyval {win_keyval}"),
            ),
        }
    })?;
    // SAFETY: see delete_one.
    unsafe { delete_one(h, &entry)? };
    runtime::with(|rt| {
        let list = &mut rt.win_mut(h)?.attrs;
        let before = list.len();
        list.retain(|a| a.0 != win_keyval);
        if list.len() != before {
            rt.keyvals.detach(win_keyval);
        }
        Ok(())
    })
}
