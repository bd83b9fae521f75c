//! Groups: the C functions (`MPI_Group_*`, `MPI_Comm_group`). Errors here concern no
//! communicator, so they go to the default handler (see `core::objects::errhandler`).

use super::util::out;
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::core::error::{fail, MpiResult};
use crate::core::objects::group::Group;
use crate::core::runtime::{self, Runtime};
use core::ffi::c_int;

/// `n` ints from the caller; `MPI_ERR_ARG` for a negative `n` or a NULL array with `n > 0`.
pub(super) unsafe fn int_array<'a>(
    p: *const c_int,
    n: c_int,
    what: &str,
) -> MpiResult<&'a [c_int]> {
    if n < 0 {
        return fail(
            MPI_ERR_ARG,
            format!("the length of {what} is negative ({n})"),
        );
    }
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return fail(MPI_ERR_ARG, format!("{what} must not be NULL"));
    }
    // SAFETY: the caller passes an array of `n` ints (C contract, see the module docs of imp).
    Ok(unsafe { std::slice::from_raw_parts(p, n as usize) })
}

/// `n` writable ints from the caller (same checks as [`int_array`]).
pub(super) unsafe fn int_array_mut<'a>(
    p: *mut c_int,
    n: c_int,
    what: &str,
) -> MpiResult<&'a mut [c_int]> {
    if n < 0 {
        return fail(
            MPI_ERR_ARG,
            format!("the length of {what} is negative ({n})"),
        );
    }
    if n == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return fail(MPI_ERR_ARG, format!("{what} must not be NULL"));
    }
    // SAFETY: the caller passes a writable array of `n` ints (C contract).
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n as usize) })
}

/// Computes a group from one input group and stores it in `*newgroup`.
unsafe fn derive(
    group: MPI_Group,
    newgroup: *mut MPI_Group,
    f: impl FnOnce(&Runtime, &Group) -> MpiResult<Group>,
) -> MpiResult<()> {
    let slot = out(newgroup, "newgroup")?;
    let h = runtime::with(|rt| {
        let g = f(rt, rt.group(group as usize)?)?;
        rt.new_group(g)
    })?;
    *slot = h as MPI_Group;
    Ok(())
}

/// Computes a group from two input groups and stores it in `*newgroup`.
unsafe fn combine(
    group1: MPI_Group,
    group2: MPI_Group,
    newgroup: *mut MPI_Group,
    f: impl FnOnce(&Group, &Group) -> Group,
) -> MpiResult<()> {
    let slot = out(newgroup, "newgroup")?;
    let h = runtime::with(|rt| {
        let g = f(rt.group(group1 as usize)?, rt.group(group2 as usize)?);
        rt.new_group(g)
    })?;
    *slot = h as MPI_Group;
    Ok(())
}

pub(crate) unsafe fn MPI_Group_size(group: MPI_Group, size: *mut c_int) -> MpiResult<()> {
    let s = runtime::with(|rt| Ok(rt.group(group as usize)?.size()))?;
    *out(size, "size")? = s;
    Ok(())
}

pub(crate) unsafe fn MPI_Group_rank(group: MPI_Group, rank: *mut c_int) -> MpiResult<()> {
    let r = runtime::with(|rt| {
        let me = rt.world_rank as u32;
        Ok(rt
            .group(group as usize)?
            .rank_of(me)
            .unwrap_or(MPI_UNDEFINED))
    })?;
    *out(rank, "rank")? = r;
    Ok(())
}

pub(crate) unsafe fn MPI_Group_translate_ranks(
    group1: MPI_Group,
    n: c_int,
    ranks1: *const c_int,
    group2: MPI_Group,
    ranks2: *mut c_int,
) -> MpiResult<()> {
    runtime::with(|rt| {
        let g1 = rt.group(group1 as usize)?;
        let g2 = rt.group(group2 as usize)?;
        // SAFETY: arrays of `n` ints from the C caller.
        let r1 = unsafe { int_array(ranks1, n, "ranks1")? };
        // SAFETY: as above.
        let r2 = unsafe { int_array_mut(ranks2, n, "ranks2")? };
        g1.translate(r1, g2, r2)
    })
}

pub(crate) unsafe fn MPI_Group_compare(
    group1: MPI_Group,
    group2: MPI_Group,
    result: *mut c_int,
) -> MpiResult<()> {
    let r = runtime::with(|rt| {
        Ok(rt
            .group(group1 as usize)?
            .compare(rt.group(group2 as usize)?))
    })?;
    *out(result, "result")? = r;
    Ok(())
}

pub(crate) unsafe fn MPI_Comm_group(comm: MPI_Comm, group: *mut MPI_Group) -> MpiResult<()> {
    let slot = out(group, "group")?;
    let h = runtime::with(|rt| {
        let g = Group::of_comm(rt.comm_plain(comm as usize)?.1);
        rt.new_group(g)
    })?;
    *slot = h as MPI_Group;
    Ok(())
}

pub(crate) unsafe fn MPI_Group_union(
    group1: MPI_Group,
    group2: MPI_Group,
    newgroup: *mut MPI_Group,
) -> MpiResult<()> {
    combine(group1, group2, newgroup, Group::union)
}

pub(crate) unsafe fn MPI_Group_intersection(
    group1: MPI_Group,
    group2: MPI_Group,
    newgroup: *mut MPI_Group,
) -> MpiResult<()> {
    combine(group1, group2, newgroup, Group::intersection)
}

pub(crate) unsafe fn MPI_Group_difference(
    group1: MPI_Group,
    group2: MPI_Group,
    newgroup: *mut MPI_Group,
) -> MpiResult<()> {
    combine(group1, group2, newgroup, Group::difference)
}

pub(crate) unsafe fn MPI_Group_incl(
    group: MPI_Group,
    n: c_int,
    ranks: *const c_int,
    newgroup: *mut MPI_Group,
) -> MpiResult<()> {
    derive(group, newgroup, |_, g| {
        // SAFETY: an array of `n` ints from the C caller.
        g.incl(unsafe { int_array(ranks, n, "ranks")? })
    })
}

pub(crate) unsafe fn MPI_Group_excl(
    group: MPI_Group,
    n: c_int,
    ranks: *const c_int,
    newgroup: *mut MPI_Group,
) -> MpiResult<()> {
    derive(group, newgroup, |_, g| {
        // SAFETY: an array of `n` ints from the C caller.
        g.excl(unsafe { int_array(ranks, n, "ranks")? })
    })
}

/// `n` triplets `int ranges[][3]` from the caller.
unsafe fn triplets<'a>(ranges: *mut c_int, n: c_int) -> MpiResult<&'a [[c_int; 3]]> {
    let flat = int_array(ranges, n.checked_mul(3).unwrap_or(-1), "ranges")?;
    // SAFETY: `[c_int; 3]` has the layout of three consecutive ints and alignment of int.
    Ok(unsafe { std::slice::from_raw_parts(flat.as_ptr().cast(), flat.len() / 3) })
}

pub(crate) unsafe fn MPI_Group_range_incl(
    group: MPI_Group,
    n: c_int,
    ranges: *mut c_int,
    newgroup: *mut MPI_Group,
) -> MpiResult<()> {
    derive(group, newgroup, |_, g| {
        // SAFETY: `n` triplets of ints from the C caller.
        g.range_incl(unsafe { triplets(ranges, n)? })
    })
}

pub(crate) unsafe fn MPI_Group_range_excl(
    group: MPI_Group,
    n: c_int,
    ranges: *mut c_int,
    newgroup: *mut MPI_Group,
) -> MpiResult<()> {
    derive(group, newgroup, |_, g| {
        // SAFETY: `n` triplets of ints from the C caller.
        g.range_excl(unsafe { triplets(ranges, n)? })
    })
}

pub(crate) unsafe fn MPI_Group_free(group: *mut MPI_Group) -> MpiResult<()> {
    let slot = out(group, "group")?;
    let h = *slot as usize;
    runtime::with(|rt| rt.free_group(h))?;
    *slot = MPI_GROUP_NULL as MPI_Group;
    Ok(())
}
