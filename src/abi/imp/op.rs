//! Reduction operations: the C functions (`MPI_Op_*`, `MPI_Reduce_local`).

use super::util::{count, out};
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::core::error::{fail, MpiResult};
use crate::core::op::{OpRef, Reducer, UserFn, UserFnBig, UserFnInt};
use crate::core::runtime;
use core::ffi::{c_int, c_void};

unsafe fn op_create(
    user_fn: *mut c_void,
    commute: c_int,
    op: *mut MPI_Op,
    big: bool,
) -> MpiResult<()> {
    if user_fn.is_null() {
        return fail(MPI_ERR_ARG, "the user function must not be NULL");
    }
    let slot = out(op, "op")?;
    let func = if big {
        // SAFETY: the C type of the argument is MPI_User_function_c, `void (void *, void *,
        // MPI_Count *, MPI_Datatype *)`; function pointers and data pointers have the same
        // representation on the supported platforms.
        UserFn::Big(unsafe { std::mem::transmute::<*mut c_void, UserFnBig>(user_fn) })
    } else {
        // SAFETY: as above, with MPI_User_function, `void (void *, void *, int *,
        // MPI_Datatype *)`.
        UserFn::Int(unsafe { std::mem::transmute::<*mut c_void, UserFnInt>(user_fn) })
    };
    let h = runtime::with(|rt| rt.op_create(func, commute != 0))?;
    *slot = h as MPI_Op;
    Ok(())
}

pub(crate) unsafe fn MPI_Op_create(
    user_fn: *mut c_void,
    commute: c_int,
    op: *mut MPI_Op,
) -> MpiResult<()> {
    // SAFETY: C caller contract (see mod.rs).
    unsafe { op_create(user_fn, commute, op, false) }
}

pub(crate) unsafe fn MPI_Op_create_c(
    user_fn: *mut c_void,
    commute: c_int,
    op: *mut MPI_Op,
) -> MpiResult<()> {
    // SAFETY: C caller contract (see mod.rs).
    unsafe { op_create(user_fn, commute, op, true) }
}

pub(crate) unsafe fn MPI_Op_free(op: *mut MPI_Op) -> MpiResult<()> {
    let slot = out(op, "op")?;
    runtime::with(|rt| rt.op_free(*slot as usize))?;
    *slot = MPI_OP_NULL as MPI_Op;
    Ok(())
}

pub(crate) unsafe fn MPI_Op_commutative(op: MPI_Op, commute: *mut c_int) -> MpiResult<()> {
    let slot = out(commute, "commute")?;
    let c = runtime::with(|rt| {
        let o: OpRef = rt.op(op as usize)?;
        Ok(rt.op_commutative(o))
    })?;
    *slot = c as c_int;
    Ok(())
}

unsafe fn reduce_local(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    n: i64,
    datatype: MPI_Datatype,
    op: MPI_Op,
) -> MpiResult<()> {
    let n = count(n)?;
    let r: Reducer = runtime::with(|rt| rt.reducer(op as usize, datatype as usize))?;
    let bytes = match n.checked_mul(r.extent) {
        Some(b) if b <= isize::MAX as usize => b,
        _ => {
            return fail(
                MPI_ERR_COUNT,
                format!("count {n} is too large for this datatype"),
            )
        }
    };
    if inbuf as usize == MPI_IN_PLACE || inoutbuf as usize == MPI_IN_PLACE {
        return fail(
            MPI_ERR_BUFFER,
            "MPI_Reduce_local does not accept MPI_IN_PLACE",
        );
    }
    if bytes > 0 && (inbuf.is_null() || inoutbuf.is_null()) {
        return fail(MPI_ERR_BUFFER, "a buffer is NULL but the count is not zero");
    }
    // SAFETY: C caller contract: both buffers hold `n` elements of `datatype`, i.e. `bytes`
    // bytes from their start. The reducer is applied outside the runtime lock, so a user
    // function may call MPI.
    unsafe { r.apply_raw(n, inbuf.cast(), inoutbuf.cast()) };
    Ok(())
}

pub(crate) unsafe fn MPI_Reduce_local(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
) -> MpiResult<()> {
    // SAFETY: C caller contract (see mod.rs).
    unsafe { reduce_local(inbuf, inoutbuf, count as i64, datatype, op) }
}

pub(crate) unsafe fn MPI_Reduce_local_c(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
) -> MpiResult<()> {
    // SAFETY: C caller contract (see mod.rs).
    unsafe { reduce_local(inbuf, inoutbuf, count, datatype, op) }
}
