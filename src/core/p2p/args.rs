//! The arguments of point-to-point calls as the C functions receive them (buffer, count,
//! datatype and communicator handles, ranks, tags), checked and resolved into what the
//! protocols take ([`SendArgs`], [`RecvArgs`]), with the MPI error class of each fault.

use crate::core::datatype::{Layout, Resolved, TypeInfo};
use crate::core::error::{fail, MpiResult};
use crate::core::p2p::request::SendMode;
use crate::core::p2p::{
    check_dest, check_recv_tag, check_send_tag, check_source, check_spread, RecvArgs, SendArgs,
};
use crate::core::runtime::Runtime;
use crate::mpi_abi::consts::*;
use crate::mpi_abi::types::{MPI_Comm, MPI_Datatype};
use core::ffi::{c_int, c_void};

/// A count argument as a size (`MPI_ERR_COUNT` when negative).
#[inline(always)]
pub fn count(c: i64) -> MpiResult<usize> {
    if c >= 0 {
        Ok(c as usize)
    } else {
        fail(
            MPI_ERR_COUNT,
            format!("invalid count {c} (must be non-negative)"),
        )
    }
}

/// A validated transfer buffer: where the data starts, its bytes (span for predefined types,
/// packed length for derived layouts), the element layout and the derived layout if any.
pub struct Buf {
    pub ptr: *const u8,
    pub bytes: usize,
    pub unit: TypeInfo,
    pub layout: Option<Layout>,
}

/// Checks a transfer buffer of `n` elements of `dt` at `buf` (count, datatype, size, NULL).
#[inline(always)]
pub fn buffer_bytes(rt: &Runtime, buf: *const c_void, n: i64, dt: MPI_Datatype) -> MpiResult<Buf> {
    let n = count(n)?;
    let (t, ptr, layout) = match rt.resolve_type(dt as usize, n)? {
        Resolved::Plain { unit, offset: 0 } => (unit, buf as *const u8, None),
        Resolved::Plain { unit, offset } => {
            // A contiguous derived type; the buffer may be MPI_BOTTOM (absolute addresses).
            let p = (buf as *const u8).wrapping_offset(offset);
            return span(n, unit).map(|bytes| Buf {
                ptr: p,
                bytes,
                unit,
                layout: None,
            });
        }
        Resolved::Layout(dt) => {
            let unit = dt.info();
            if dt
                .size
                .checked_mul(n)
                .is_none_or(|b| b > isize::MAX as usize)
            {
                return too_large(n);
            }
            let l = Layout { dt, count: n };
            return Ok(Buf {
                ptr: buf as *const u8,
                bytes: l.bytes(),
                unit,
                layout: Some(l),
            });
        }
    };
    let bytes = span(n, t)?;
    if ptr.is_null() && bytes > 0 {
        return fail(
            MPI_ERR_BUFFER,
            "the buffer is NULL but the message is not empty",
        );
    }
    Ok(Buf {
        ptr,
        bytes,
        unit: t,
        layout,
    })
}

#[inline(always)]
fn span(n: usize, t: TypeInfo) -> MpiResult<usize> {
    match t.span(n) {
        Some(b) if b <= isize::MAX as usize => Ok(b),
        _ => too_large(n),
    }
}

#[cold]
fn too_large<T>(n: usize) -> MpiResult<T> {
    fail(
        MPI_ERR_COUNT,
        format!("count {n} is too large for this datatype"),
    )
}

/// The checked arguments of a send (`MPI_Send` and its family).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn send_args(
    rt: &Runtime,
    buf: *const c_void,
    n: i64,
    dt: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    mode: SendMode,
) -> MpiResult<SendArgs> {
    let (idx, c) = rt.comm(comm as usize)?;
    let b = buffer_bytes(rt, buf, n, dt)?;
    check_dest(c, dest)?;
    check_send_tag(tag)?;
    Ok(SendArgs {
        comm: idx,
        dest,
        tag,
        buf: b.ptr,
        bytes: b.bytes,
        mode,
        unit: b.unit,
        layout: b.layout,
    })
}

/// The checked arguments of a receive (`MPI_Recv` and its family).
#[inline(always)]
pub fn recv_args(
    rt: &Runtime,
    buf: *mut c_void,
    n: i64,
    dt: MPI_Datatype,
    src: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<RecvArgs> {
    let (idx, c) = rt.comm(comm as usize)?;
    let b = buffer_bytes(rt, buf, n, dt)?;
    check_source(c, src)?;
    check_recv_tag(tag)?;
    check_spread(c, src, tag)?;
    Ok(RecvArgs {
        comm: idx,
        src,
        tag,
        buf: b.ptr as *mut u8,
        cap: b.bytes,
        unit: b.unit,
        layout: b.layout,
    })
}
