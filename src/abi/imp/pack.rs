//! Datatypes: the pack/unpack API, native (`MPI_Pack`, `MPI_Unpack`, their sizes and `_c`
//! forms) and "external32" (`MPI_Pack_external` and the rest).

use super::util::{count, out};
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::core::datatype::derived::Dtype;
use crate::core::datatype::{engine, external, predefined, Resolved};
use crate::core::error::{fail, MpiResult};
use crate::core::runtime::{self, Runtime};
use core::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

/// What a pack or unpack moves: `count` elements of a type at a buffer.
enum Data {
    /// Contiguous bytes at `ptr` (predefined types without holes, contiguous derived types).
    Bytes(*mut u8, usize),
    /// A layout program (derived types, pair types with holes).
    Prog(Arc<Dtype>, usize, usize),
}

fn data_of(
    rt: &Runtime,
    buf: *const c_void,
    n: usize,
    dt: MPI_Datatype,
) -> MpiResult<(Data, usize)> {
    match rt.resolve_type(dt as usize, n)? {
        Resolved::Plain { unit, offset } if unit.size == unit.extent => {
            let bytes = data_bytes(unit.size, n)?;
            let p = (buf as *mut u8).wrapping_offset(offset);
            if p.is_null() && bytes > 0 {
                return fail(
                    MPI_ERR_BUFFER,
                    "the buffer is NULL but the data is not empty",
                );
            }
            Ok((Data::Bytes(p, bytes), bytes))
        }
        Resolved::Plain { .. } => {
            let t = Arc::new(Dtype::predefined(dt as usize).expect("pair type"));
            let bytes = data_bytes(t.size, n)?;
            Ok((Data::Prog(t, n, buf as usize), bytes))
        }
        Resolved::Layout(t) => {
            let bytes = data_bytes(t.size, n)?;
            Ok((Data::Prog(t, n, buf as usize), bytes))
        }
    }
}

/// `n` elements of `size` bytes (`MPI_ERR_COUNT` when the product overflows).
fn data_bytes(size: usize, n: usize) -> MpiResult<usize> {
    size.checked_mul(n)
        .map_or_else(|| fail(MPI_ERR_COUNT, "count too large"), Ok)
}

/// Whether `bytes` of data exceed the `room` left in a buffer (also when `bytes` is beyond
/// what an `i64` position can address).
fn exceeds(bytes: usize, room: i64) -> bool {
    i64::try_from(bytes).map_or(true, |b| b > room)
}

fn check_comm(rt: &Runtime, comm: MPI_Comm) -> MpiResult<()> {
    rt.comm(comm as usize).map(|_| ())
}

unsafe fn pack(
    inbuf: *const c_void,
    incount: i64,
    dt: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: i64,
    position: &mut i64,
    comm: Option<MPI_Comm>,
) -> MpiResult<()> {
    let n = count(incount)?;
    if outsize < 0 {
        return fail(MPI_ERR_ARG, format!("invalid outsize {outsize}"));
    }
    let pos = *position;
    if pos < 0 || pos > outsize {
        return fail(
            MPI_ERR_ARG,
            format!("position {pos} is outside the buffer of {outsize} bytes"),
        );
    }
    let (data, bytes) = runtime::with(|rt| {
        if let Some(c) = comm {
            check_comm(rt, c)?;
        }
        data_of(rt, inbuf, n, dt)
    })?;
    if exceeds(bytes, outsize - pos) {
        return fail(
            MPI_ERR_TRUNCATE,
            format!(
                "packing {bytes} bytes at position {pos} overflows the buffer of {outsize} bytes"
            ),
        );
    }
    if bytes == 0 {
        return Ok(());
    }
    if outbuf.is_null() {
        return fail(MPI_ERR_BUFFER, "outbuf must not be NULL");
    }
    // SAFETY: the output buffer holds `outsize` bytes (C contract) and [pos, pos + bytes) lies
    // inside it; the input is a valid buffer of `n` elements of the type.
    unsafe {
        let dst = std::slice::from_raw_parts_mut((outbuf as *mut u8).add(pos as usize), bytes);
        match data {
            Data::Bytes(p, len) => std::ptr::copy_nonoverlapping(p, dst.as_mut_ptr(), len),
            Data::Prog(t, n, base) => engine::pack(&t.prog, t.extent, n, base, 0, dst),
        }
    }
    *position = pos + bytes as i64;
    Ok(())
}

unsafe fn unpack(
    inbuf: *const c_void,
    insize: i64,
    position: &mut i64,
    outbuf: *mut c_void,
    outcount: i64,
    dt: MPI_Datatype,
    comm: Option<MPI_Comm>,
) -> MpiResult<()> {
    let n = count(outcount)?;
    if insize < 0 {
        return fail(MPI_ERR_ARG, format!("invalid insize {insize}"));
    }
    let pos = *position;
    if pos < 0 || pos > insize {
        return fail(
            MPI_ERR_ARG,
            format!("position {pos} is outside the buffer of {insize} bytes"),
        );
    }
    let (data, bytes) = runtime::with(|rt| {
        if let Some(c) = comm {
            check_comm(rt, c)?;
        }
        data_of(rt, outbuf, n, dt)
    })?;
    if exceeds(bytes, insize - pos) {
        return fail(
            MPI_ERR_TRUNCATE,
            format!(
                "unpacking {bytes} bytes at position {pos} reads past the buffer of {insize} bytes"
            ),
        );
    }
    if bytes == 0 {
        return Ok(());
    }
    if inbuf.is_null() {
        return fail(MPI_ERR_BUFFER, "inbuf must not be NULL");
    }
    // SAFETY: the input buffer holds `insize` bytes and [pos, pos + bytes) lies inside it; the
    // output is a valid buffer of `n` elements of the type.
    unsafe {
        let src = std::slice::from_raw_parts((inbuf as *const u8).add(pos as usize), bytes);
        match data {
            Data::Bytes(p, len) => std::ptr::copy_nonoverlapping(src.as_ptr(), p, len),
            Data::Prog(t, n, base) => engine::unpack(&t.prog, t.extent, n, base, 0, src),
        }
    }
    *position = pos + bytes as i64;
    Ok(())
}

pub(crate) unsafe fn MPI_Pack(
    inbuf: *const c_void,
    incount: c_int,
    datatype: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: c_int,
    position: *mut c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let p = out(position, "position")?;
    let mut pos = *p as i64;
    pack(
        inbuf,
        incount as i64,
        datatype,
        outbuf,
        outsize as i64,
        &mut pos,
        Some(comm),
    )?;
    *p = pos as c_int;
    Ok(())
}

pub(crate) unsafe fn MPI_Pack_c(
    inbuf: *const c_void,
    incount: MPI_Count,
    datatype: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: MPI_Count,
    position: *mut MPI_Count,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let p = out(position, "position")?;
    pack(inbuf, incount, datatype, outbuf, outsize, p, Some(comm))
}

pub(crate) unsafe fn MPI_Unpack(
    inbuf: *const c_void,
    insize: c_int,
    position: *mut c_int,
    outbuf: *mut c_void,
    outcount: c_int,
    datatype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let p = out(position, "position")?;
    let mut pos = *p as i64;
    unpack(
        inbuf,
        insize as i64,
        &mut pos,
        outbuf,
        outcount as i64,
        datatype,
        Some(comm),
    )?;
    *p = pos as c_int;
    Ok(())
}

pub(crate) unsafe fn MPI_Unpack_c(
    inbuf: *const c_void,
    insize: MPI_Count,
    position: *mut MPI_Count,
    outbuf: *mut c_void,
    outcount: MPI_Count,
    datatype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    let p = out(position, "position")?;
    unpack(inbuf, insize, p, outbuf, outcount, datatype, Some(comm))
}

fn pack_size(incount: i64, dt: MPI_Datatype, comm: MPI_Comm) -> MpiResult<i64> {
    let n = count(incount)?;
    runtime::with(|rt| {
        check_comm(rt, comm)?;
        let t = rt.dtype(dt as usize)?;
        match t.size.checked_mul(n) {
            Some(b) if b <= i64::MAX as usize => Ok(b as i64),
            _ => fail(MPI_ERR_COUNT, "count too large"),
        }
    })
}

pub(crate) unsafe fn MPI_Pack_size(
    incount: c_int,
    datatype: MPI_Datatype,
    comm: MPI_Comm,
    size: *mut c_int,
) -> MpiResult<()> {
    let s = pack_size(incount as i64, datatype, comm)?;
    *out(size, "size")? = if s > i32::MAX as i64 {
        MPI_UNDEFINED
    } else {
        s as c_int
    };
    Ok(())
}

pub(crate) unsafe fn MPI_Pack_size_c(
    incount: MPI_Count,
    datatype: MPI_Datatype,
    comm: MPI_Comm,
    size: *mut MPI_Count,
) -> MpiResult<()> {
    *out(size, "size")? = pack_size(incount, datatype, comm)?;
    Ok(())
}

unsafe fn check_datarep(datarep: *const c_char) -> MpiResult<()> {
    if datarep.is_null() {
        return fail(MPI_ERR_ARG, "datarep must not be NULL");
    }
    // SAFETY: a non-null datarep is a NUL-terminated C string (C contract).
    let s = unsafe { std::ffi::CStr::from_ptr(datarep) };
    if s.to_bytes() != b"external32" {
        return fail(
            MPI_ERR_ARG,
            format!(
                "unsupported data representation {:?} (only \"external32\")",
                s.to_string_lossy()
            ),
        );
    }
    Ok(())
}

fn ext_size(dt: MPI_Datatype, n: usize) -> MpiResult<(Arc<Dtype>, usize)> {
    let t = runtime::with(|rt| {
        if predefined(dt as usize).is_none() && !rt.type_entry(dt as usize)?.committed {
            return fail(MPI_ERR_TYPE, "the datatype is not committed");
        }
        rt.dtype(dt as usize)
    })?;
    let s = external::size(&t)?;
    match s.checked_mul(n) {
        Some(b) if b <= i64::MAX as usize => Ok((t, b)),
        _ => fail(MPI_ERR_COUNT, "count too large"),
    }
}

unsafe fn pack_external(
    datarep: *const c_char,
    inbuf: *const c_void,
    incount: i64,
    dt: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: i64,
    position: &mut i64,
) -> MpiResult<()> {
    check_datarep(datarep)?;
    let n = count(incount)?;
    let (t, bytes) = ext_size(dt, n)?;
    let pos = *position;
    if pos < 0 || outsize < 0 || pos > outsize || exceeds(bytes, outsize - pos) {
        return fail(
            MPI_ERR_TRUNCATE,
            format!(
                "packing {bytes} bytes at position {pos} overflows the buffer of {outsize} bytes"
            ),
        );
    }
    if bytes == 0 {
        return Ok(());
    }
    if outbuf.is_null() {
        return fail(MPI_ERR_BUFFER, "outbuf must not be NULL");
    }
    let mut native = vec![0u8; data_bytes(t.size, n)?];
    // SAFETY: the input is a valid buffer of `n` elements; the output holds `outsize` bytes
    // and [pos, pos + bytes) lies inside it.
    let dst = unsafe {
        engine::pack(&t.prog, t.extent, n, inbuf as usize, 0, &mut native);
        std::slice::from_raw_parts_mut((outbuf as *mut u8).add(pos as usize), bytes)
    };
    let (mut r, mut w) = (0, 0);
    for _ in 0..n {
        let (a, b) = external::convert(&t, &native[r..], &mut dst[w..], true)?;
        r += a;
        w += b;
    }
    *position = pos + bytes as i64;
    Ok(())
}

unsafe fn unpack_external(
    datarep: *const c_char,
    inbuf: *const c_void,
    insize: i64,
    position: &mut i64,
    outbuf: *mut c_void,
    outcount: i64,
    dt: MPI_Datatype,
) -> MpiResult<()> {
    check_datarep(datarep)?;
    let n = count(outcount)?;
    let (t, bytes) = ext_size(dt, n)?;
    let pos = *position;
    if pos < 0 || insize < 0 || pos > insize || exceeds(bytes, insize - pos) {
        return fail(
            MPI_ERR_TRUNCATE,
            format!(
                "unpacking {bytes} bytes at position {pos} reads past the buffer of {insize} bytes"
            ),
        );
    }
    if bytes == 0 {
        return Ok(());
    }
    if inbuf.is_null() {
        return fail(MPI_ERR_BUFFER, "inbuf must not be NULL");
    }
    // SAFETY: [pos, pos + bytes) lies inside the input buffer of `insize` bytes.
    let src = unsafe { std::slice::from_raw_parts((inbuf as *const u8).add(pos as usize), bytes) };
    let mut native = vec![0u8; data_bytes(t.size, n)?];
    let (mut r, mut w) = (0, 0);
    for _ in 0..n {
        let (a, b) = external::convert(&t, &src[r..], &mut native[w..], false)?;
        r += a;
        w += b;
    }
    // SAFETY: the output is a valid buffer of `n` elements of the type.
    unsafe { engine::unpack(&t.prog, t.extent, n, outbuf as usize, 0, &native) };
    *position = pos + bytes as i64;
    Ok(())
}

pub(crate) unsafe fn MPI_Pack_external(
    datarep: *const c_char,
    inbuf: *const c_void,
    incount: c_int,
    datatype: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: MPI_Aint,
    position: *mut MPI_Aint,
) -> MpiResult<()> {
    let p = out(position, "position")?;
    let mut pos = *p as i64;
    pack_external(
        datarep,
        inbuf,
        incount as i64,
        datatype,
        outbuf,
        outsize as i64,
        &mut pos,
    )?;
    *p = pos as MPI_Aint;
    Ok(())
}

pub(crate) unsafe fn MPI_Pack_external_c(
    datarep: *const c_char,
    inbuf: *const c_void,
    incount: MPI_Count,
    datatype: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: MPI_Count,
    position: *mut MPI_Count,
) -> MpiResult<()> {
    let p = out(position, "position")?;
    pack_external(datarep, inbuf, incount, datatype, outbuf, outsize, p)
}

pub(crate) unsafe fn MPI_Unpack_external(
    datarep: *const c_char,
    inbuf: *const c_void,
    insize: MPI_Aint,
    position: *mut MPI_Aint,
    outbuf: *mut c_void,
    outcount: c_int,
    datatype: MPI_Datatype,
) -> MpiResult<()> {
    let p = out(position, "position")?;
    let mut pos = *p as i64;
    unpack_external(
        datarep,
        inbuf,
        insize as i64,
        &mut pos,
        outbuf,
        outcount as i64,
        datatype,
    )?;
    *p = pos as MPI_Aint;
    Ok(())
}

pub(crate) unsafe fn MPI_Unpack_external_c(
    datarep: *const c_char,
    inbuf: *const c_void,
    insize: MPI_Count,
    position: *mut MPI_Count,
    outbuf: *mut c_void,
    outcount: MPI_Count,
    datatype: MPI_Datatype,
) -> MpiResult<()> {
    let p = out(position, "position")?;
    unpack_external(datarep, inbuf, insize, p, outbuf, outcount, datatype)
}

pub(crate) unsafe fn MPI_Pack_external_size(
    datarep: *const c_char,
    incount: c_int,
    datatype: MPI_Datatype,
    size: *mut MPI_Aint,
) -> MpiResult<()> {
    check_datarep(datarep)?;
    let (_, b) = ext_size(datatype, count(incount as i64)?)?;
    *out(size, "size")? = b as MPI_Aint;
    Ok(())
}

pub(crate) unsafe fn MPI_Pack_external_size_c(
    datarep: *const c_char,
    incount: MPI_Count,
    datatype: MPI_Datatype,
    size: *mut MPI_Count,
) -> MpiResult<()> {
    check_datarep(datarep)?;
    let (_, b) = ext_size(datatype, count(incount)?)?;
    *out(size, "size")? = b as MPI_Count;
    Ok(())
}
