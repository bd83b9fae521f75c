//! MPI-IO files: open, close, delete, sizes, views, pointers, hints, atomicity and file
//! error handlers (`core::io` does the work; data access is in `file_access.rs`).

use super::comm::c_string;
use super::errhandler::errh_of;
use super::util::out;
use crate::abi::consts::*;
use crate::abi::entry::ErrObj;
use crate::abi::types::*;
use crate::core::datatype::{derived, TypeEntry};
use crate::core::error::{fail, MpiError, MpiResult};
use crate::core::io::datarep::{Conversion, ConversionCount, ConversionInt, ExtentFn};
use crate::core::io::{self, view::Datarep, view::View};
use crate::core::objects::errhandler;
use crate::core::objects::group::Group;
use crate::core::objects::info::{self, Info};
use crate::core::runtime::{self, Runtime};
use core::ffi::{c_char, c_int, c_void};

fn hints(h: MPI_Info) -> MpiResult<Info> {
    Ok(info::lookup_opt(h as usize)?.unwrap_or_default())
}

/// Errors of calls without an open file go to `MPI_FILE_NULL`'s handler.
fn on_null<T>(r: MpiResult<T>) -> MpiResult<T> {
    r.map_err(|e| e.on(ErrObj::File(MPI_FILE_NULL)))
}

pub(crate) unsafe fn MPI_File_open(
    comm: MPI_Comm,
    filename: *const c_char,
    amode: c_int,
    info: MPI_Info,
    fh: *mut MPI_File,
) -> MpiResult<()> {
    let slot = on_null(out(fh, "fh"))?;
    let name = on_null(c_string(filename, "filename"))?.into_owned();
    let h = on_null(hints(info).and_then(|i| io::open(comm as usize, &name, amode, i)))?;
    *slot = h as MPI_File;
    Ok(())
}

pub(crate) unsafe fn MPI_File_close(fh: *mut MPI_File) -> MpiResult<()> {
    let slot = out(fh, "fh")?;
    let h = *slot as usize;
    io::close(h).map_err(|e| e.on(ErrObj::File(h)))?;
    *slot = MPI_FILE_NULL as MPI_File;
    Ok(())
}

pub(crate) unsafe fn MPI_File_delete(filename: *const c_char, info: MPI_Info) -> MpiResult<()> {
    let name = on_null(c_string(filename, "filename"))?.into_owned();
    on_null(hints(info).and_then(|_| io::delete(&name)))
}

pub(crate) unsafe fn MPI_File_set_size(fh: MPI_File, size: MPI_Offset) -> MpiResult<()> {
    io::set_size(fh as usize, size)
}

pub(crate) unsafe fn MPI_File_preallocate(fh: MPI_File, size: MPI_Offset) -> MpiResult<()> {
    io::preallocate(fh as usize, size)
}

pub(crate) unsafe fn MPI_File_get_size(fh: MPI_File, size: *mut MPI_Offset) -> MpiResult<()> {
    let slot = out(size, "size")?;
    *slot = io::size(fh as usize)? as MPI_Offset;
    Ok(())
}

pub(crate) unsafe fn MPI_File_get_group(fh: MPI_File, group: *mut MPI_Group) -> MpiResult<()> {
    let slot = out(group, "group")?;
    let h = runtime::with(|rt| {
        let comm = rt.file(fh as usize)?.1.comm;
        let g = Group::of_comm(rt.comm(comm)?.1);
        rt.new_group(g)
    })?;
    *slot = h as MPI_Group;
    Ok(())
}

pub(crate) unsafe fn MPI_File_get_amode(fh: MPI_File, amode: *mut c_int) -> MpiResult<()> {
    let slot = out(amode, "amode")?;
    *slot = runtime::with(|rt| Ok(rt.file(fh as usize)?.1.amode))?;
    Ok(())
}

pub(crate) unsafe fn MPI_File_set_info(fh: MPI_File, info: MPI_Info) -> MpiResult<()> {
    io::set_info(fh as usize, &hints(info)?)
}

pub(crate) unsafe fn MPI_File_get_info(fh: MPI_File, info_used: *mut MPI_Info) -> MpiResult<()> {
    let slot = out(info_used, "info_used")?;
    let used = runtime::with(|rt| {
        let (_, f) = rt.file(fh as usize)?;
        let mut nodes = f.nodes.clone();
        nodes.sort_unstable();
        nodes.dedup();
        Ok(f.hints.to_info(nodes.len()))
    })?;
    *slot = info::create(used)? as MPI_Info;
    Ok(())
}

/// A view type argument: a valid, committed datatype.
fn view_type(
    rt: &Runtime,
    h: MPI_Datatype,
    what: &str,
) -> MpiResult<(usize, std::sync::Arc<crate::core::datatype::Dtype>)> {
    let h = h as usize;
    if h == MPI_DATATYPE_NULL {
        return fail(MPI_ERR_TYPE, format!("the {what} is MPI_DATATYPE_NULL"));
    }
    rt.resolve_type(h, 1)?;
    Ok((h, rt.dtype(h)?))
}

pub(crate) unsafe fn MPI_File_set_view(
    fh: MPI_File,
    disp: MPI_Offset,
    etype: MPI_Datatype,
    filetype: MPI_Datatype,
    datarep: *const c_char,
    info: MPI_Info,
) -> MpiResult<()> {
    let rep = Datarep::parse(&c_string(datarep, "datarep")?)?;
    let given = hints(info)?;
    let h = fh as usize;
    if rep.converts() {
        // The file sizes of the view's types, asked of a user's extent function here, outside
        // the runtime (it may call MPI); `View::new` then finds them cached.
        let types = runtime::with(|rt| {
            Ok([etype, filetype]
                .iter()
                .filter_map(|&t| view_type(rt, t, "view type").ok().map(|t| t.1))
                .collect::<Vec<_>>())
        })?;
        for t in &types {
            io::datarep::file_size(rep, t)?;
        }
    }
    let view = runtime::with(|rt| {
        let (_, f) = rt.file(h)?;
        let disp = if disp == -1 {
            // MPI_DISPLACEMENT_CURRENT
            if f.amode & MPI_MODE_SEQUENTIAL == 0 {
                return fail(
                    MPI_ERR_ARG,
                    "MPI_DISPLACEMENT_CURRENT is for files opened MPI_MODE_SEQUENTIAL",
                );
            }
            // The current position of the shared pointer, in bytes of the old view.
            let sp = f.shared.get()? * f.view.etype_size();
            f.view.byte_offset(sp)
        } else if disp < 0 {
            return fail(MPI_ERR_ARG, format!("displacement {disp} is negative"));
        } else {
            disp as u64
        };
        let e = view_type(rt, etype, "etype")?;
        let t = view_type(rt, filetype, "filetype")?;
        View::new(disp, e, t, rep)
    })?;
    io::set_view(h, view, &given)
}

/// A handle the user receives for a view type: predefined ones as they are, a new
/// (committed) handle of the same type for derived ones.
fn returned_type(
    rt: &mut Runtime,
    t: &(usize, std::sync::Arc<crate::core::datatype::Dtype>),
) -> MpiResult<usize> {
    if crate::core::datatype::predefined(t.0).is_some() {
        return Ok(t.0);
    }
    let mut e = TypeEntry::new(derived::dup(&t.1));
    e.committed = true;
    match rt.types.insert(e) {
        Some(i) => Ok(rt.types.handle(i)),
        None => fail(MPI_ERR_INTERN, "too many datatypes"),
    }
}

pub(crate) unsafe fn MPI_File_get_view(
    fh: MPI_File,
    disp: *mut MPI_Offset,
    etype: *mut MPI_Datatype,
    filetype: *mut MPI_Datatype,
    datarep: *mut c_char,
) -> MpiResult<()> {
    let (d, e, t) = (
        out(disp, "disp")?,
        out(etype, "etype")?,
        out(filetype, "filetype")?,
    );
    if datarep.is_null() {
        return fail(MPI_ERR_ARG, "datarep must not be NULL");
    }
    let (v_disp, he, ht, rep) = runtime::with(|rt| {
        let v = rt.file(fh as usize)?.1.view.clone();
        let he = returned_type(rt, &v.etype)?;
        let ht = returned_type(rt, &v.filetype)?;
        Ok((v.disp, he, ht, v.datarep))
    })?;
    *d = v_disp as MPI_Offset;
    *e = he as MPI_Datatype;
    *t = ht as MPI_Datatype;
    let name = rep.name();
    let name = name.as_bytes();
    // SAFETY: the caller's buffer holds MPI_MAX_DATAREP_STRING bytes (C contract); the names
    // are shorter (registration checks the user's).
    unsafe {
        std::ptr::copy_nonoverlapping(name.as_ptr(), datarep as *mut u8, name.len());
        *datarep.add(name.len()) = 0;
    }
    Ok(())
}

pub(crate) unsafe fn MPI_File_seek(
    fh: MPI_File,
    offset: MPI_Offset,
    whence: c_int,
) -> MpiResult<()> {
    io::seek(fh as usize, offset, whence, false)
}

pub(crate) unsafe fn MPI_File_seek_shared(
    fh: MPI_File,
    offset: MPI_Offset,
    whence: c_int,
) -> MpiResult<()> {
    io::seek(fh as usize, offset, whence, true)
}

pub(crate) unsafe fn MPI_File_get_position(fh: MPI_File, offset: *mut MPI_Offset) -> MpiResult<()> {
    let slot = out(offset, "offset")?;
    *slot = runtime::with(|rt| Ok(rt.file(fh as usize)?.1.pos))? as MPI_Offset;
    Ok(())
}

pub(crate) unsafe fn MPI_File_get_position_shared(
    fh: MPI_File,
    offset: *mut MPI_Offset,
) -> MpiResult<()> {
    let slot = out(offset, "offset")?;
    *slot = io::position_shared(fh as usize)? as MPI_Offset;
    Ok(())
}

pub(crate) unsafe fn MPI_File_get_byte_offset(
    fh: MPI_File,
    offset: MPI_Offset,
    disp: *mut MPI_Offset,
) -> MpiResult<()> {
    let slot = out(disp, "disp")?;
    if offset < 0 {
        return fail(MPI_ERR_ARG, format!("offset {offset} is negative"));
    }
    *slot = runtime::with(|rt| {
        let v = &rt.file(fh as usize)?.1.view;
        Ok(v.byte_offset(offset as u64 * v.etype_size()))
    })? as MPI_Offset;
    Ok(())
}

fn type_extent(fh: MPI_File, datatype: MPI_Datatype) -> MpiResult<i64> {
    let (rep, t) = runtime::with(|rt| {
        let rep = rt.file(fh as usize)?.1.view.datarep;
        Ok((rep, rt.dtype(datatype as usize)?))
    })?;
    // Outside the runtime: a user's extent function may call MPI.
    io::datarep::type_extent(rep, &t)
}

/// A conversion function argument of `MPI_Register_datarep` (`int` counts) or of its `_c`
/// form (`large`).
fn conversion(f: *mut c_void, large: bool) -> Conversion {
    if f.is_null() {
        return Conversion::Null;
    }
    // SAFETY: a non-null conversion argument is a function of the C prototype
    // `MPI_Datarep_conversion_function(_c)` (C contract), which these types spell.
    unsafe {
        if large {
            Conversion::Count(std::mem::transmute::<*mut c_void, ConversionCount>(f))
        } else {
            Conversion::Int(std::mem::transmute::<*mut c_void, ConversionInt>(f))
        }
    }
}

/// `MPI_Register_datarep(_c)`; errors go to the handler of `MPI_FILE_NULL`.
unsafe fn register_datarep(
    datarep: *const c_char,
    read: *mut c_void,
    write: *mut c_void,
    extent: *mut c_void,
    extra: *mut c_void,
    large: bool,
) -> MpiResult<()> {
    on_null((|| {
        runtime::with(|_| Ok(()))?;
        let name = c_string(datarep, "datarep")?;
        if extent.is_null() {
            return fail(MPI_ERR_ARG, "dtype_file_extent_fn must not be NULL");
        }
        // SAFETY: a non-null extent argument is an `MPI_Datarep_extent_function` (C contract).
        let extent = unsafe { std::mem::transmute::<*mut c_void, ExtentFn>(extent) };
        io::datarep::register(
            &name,
            conversion(read, large),
            conversion(write, large),
            extent,
            extra as usize,
        )
    })())
}

pub(crate) unsafe fn MPI_Register_datarep(
    datarep: *const c_char,
    read_conversion_fn: *mut c_void,
    write_conversion_fn: *mut c_void,
    dtype_file_extent_fn: *mut c_void,
    extra_state: *mut c_void,
) -> MpiResult<()> {
    // SAFETY: the caller's arguments, forwarded.
    unsafe {
        register_datarep(
            datarep,
            read_conversion_fn,
            write_conversion_fn,
            dtype_file_extent_fn,
            extra_state,
            false,
        )
    }
}

pub(crate) unsafe fn MPI_Register_datarep_c(
    datarep: *const c_char,
    read_conversion_fn: *mut c_void,
    write_conversion_fn: *mut c_void,
    dtype_file_extent_fn: *mut c_void,
    extra_state: *mut c_void,
) -> MpiResult<()> {
    // SAFETY: the caller's arguments, forwarded.
    unsafe {
        register_datarep(
            datarep,
            read_conversion_fn,
            write_conversion_fn,
            dtype_file_extent_fn,
            extra_state,
            true,
        )
    }
}

pub(crate) unsafe fn MPI_File_get_type_extent(
    fh: MPI_File,
    datatype: MPI_Datatype,
    extent: *mut MPI_Aint,
) -> MpiResult<()> {
    let slot = out(extent, "extent")?;
    *slot = type_extent(fh, datatype)? as MPI_Aint;
    Ok(())
}

pub(crate) unsafe fn MPI_File_get_type_extent_c(
    fh: MPI_File,
    datatype: MPI_Datatype,
    extent: *mut MPI_Count,
) -> MpiResult<()> {
    let slot = out(extent, "extent")?;
    *slot = type_extent(fh, datatype)? as MPI_Count;
    Ok(())
}

pub(crate) unsafe fn MPI_File_set_atomicity(fh: MPI_File, flag: c_int) -> MpiResult<()> {
    io::set_atomicity(fh as usize, flag != 0)
}

pub(crate) unsafe fn MPI_File_get_atomicity(fh: MPI_File, flag: *mut c_int) -> MpiResult<()> {
    let slot = out(flag, "flag")?;
    *slot = runtime::with(|rt| Ok(rt.file(fh as usize)?.1.atomic))? as c_int;
    Ok(())
}

pub(crate) unsafe fn MPI_File_sync(fh: MPI_File) -> MpiResult<()> {
    io::sync(fh as usize)
}

// ---------------------------------------------------------------------------------------------
// error handlers

pub(crate) unsafe fn MPI_File_create_errhandler(
    file_errhandler_fn: *mut c_void,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    // SAFETY: same shape as a communicator handler: `void (MPI_File *, int *, ...)`.
    unsafe { super::errhandler::MPI_Comm_create_errhandler(file_errhandler_fn, errhandler) }
}

pub(crate) unsafe fn MPI_File_set_errhandler(
    file: MPI_File,
    errhandler: MPI_Errhandler,
) -> MpiResult<()> {
    let h = file as usize;
    runtime::with(|rt| {
        let new = errh_of(rt, errhandler as usize)?;
        let slot = if h == MPI_FILE_NULL {
            &mut rt.file_null_errh
        } else {
            &mut rt.file_mut(h)?.errh
        };
        let old = std::mem::replace(slot, new);
        rt.errh_ref(new);
        rt.errh_unref(old);
        Ok(())
    })
}

pub(crate) unsafe fn MPI_File_get_errhandler(
    file: MPI_File,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult<()> {
    let slot = out(errhandler, "errhandler")?;
    let h = file as usize;
    let e = runtime::with(|rt| {
        let e = if h == MPI_FILE_NULL {
            rt.file_null_errh
        } else {
            rt.file(h)?.1.errh
        };
        Ok(crate::core::objects::errhandler::handle_of(e))
    })?;
    *slot = e as MPI_Errhandler;
    Ok(())
}

pub(crate) unsafe fn MPI_File_call_errhandler(fh: MPI_File, errorcode: c_int) -> MpiResult<()> {
    let h = fh as usize;
    if h != MPI_FILE_NULL {
        runtime::with(|rt| rt.file(h).map(|_| ()))?;
    }
    let err = MpiError::new(
        errorcode,
        format!("MPI_File_call_errhandler with error code {errorcode}"),
    );
    errhandler::raise("MPI_File_call_errhandler", ErrObj::File(h), err);
    Ok(())
}
