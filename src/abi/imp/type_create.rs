//! Datatypes: the constructors (`MPI_Type_contiguous` to `MPI_Type_create_resized`, with
//! their `_c` forms); the shared helpers live in `datatype.rs`.

use super::datatype::*;
use super::util::{count, out};
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::core::datatype::derived::{self, Contents};
use crate::core::datatype::{predefined, TypeEntry};
use crate::core::error::{fail, MpiResult};
use crate::core::runtime::{self};
use core::ffi::c_int;

unsafe fn contiguous(
    n: i64,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
    large: bool,
) -> MpiResult<()> {
    let c = count(n)?;
    create(newtype, |rt| {
        let o = old(rt, oldtype)?;
        let k = contents(
            MPI_COMBINER_CONTIGUOUS,
            large,
            vec![n],
            vec![],
            vec![o.clone()],
        );
        derived::contiguous(c, &o, k)
    })
}

pub(crate) unsafe fn MPI_Type_contiguous(
    count: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    contiguous(count as i64, oldtype, newtype, false)
}

pub(crate) unsafe fn MPI_Type_contiguous_c(
    count: MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    contiguous(count, oldtype, newtype, true)
}

unsafe fn vector(
    n: i64,
    bl: i64,
    stride: i64,
    bytes: bool,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
    large: bool,
) -> MpiResult<()> {
    let c = count(n)?;
    let b = blocklen(bl)?;
    let s = isz(stride)?;
    create(newtype, |rt| {
        let o = old(rt, oldtype)?;
        let (comb, ints, addrs) = match (bytes, large) {
            (false, _) => (MPI_COMBINER_VECTOR, vec![n, bl, stride], vec![]),
            (true, false) => (MPI_COMBINER_HVECTOR, vec![n, bl], vec![stride]),
            (true, true) => (MPI_COMBINER_HVECTOR, vec![n, bl, stride], vec![]),
        };
        let k = contents(comb, large, ints, addrs, vec![o.clone()]);
        let sb = if bytes {
            s
        } else {
            s.checked_mul(o.extent)
                .map_or_else(|| fail(MPI_ERR_ARG, "stride too large"), Ok)?
        };
        derived::vector_bytes(c, b, sb, &o, k)
    })
}

pub(crate) unsafe fn MPI_Type_vector(
    count: c_int,
    blocklength: c_int,
    stride: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    vector(
        count as i64,
        blocklength as i64,
        stride as i64,
        false,
        oldtype,
        newtype,
        false,
    )
}

pub(crate) unsafe fn MPI_Type_vector_c(
    count: MPI_Count,
    blocklength: MPI_Count,
    stride: MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    vector(count, blocklength, stride, false, oldtype, newtype, true)
}

pub(crate) unsafe fn MPI_Type_create_hvector(
    count: c_int,
    blocklength: c_int,
    stride: MPI_Aint,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    vector(
        count as i64,
        blocklength as i64,
        stride as i64,
        true,
        oldtype,
        newtype,
        false,
    )
}

pub(crate) unsafe fn MPI_Type_create_hvector_c(
    count: MPI_Count,
    blocklength: MPI_Count,
    stride: MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    vector(count, blocklength, stride, true, oldtype, newtype, true)
}

/// The indexed family. `bls` is `None` for the `_block` forms (one `bl` for all).
#[allow(clippy::too_many_arguments)]
unsafe fn indexed(
    combiner: i32,
    n: i64,
    bls: Vec<i64>,
    bl: Option<i64>,
    disps: Vec<i64>,
    bytes: bool,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
    large: bool,
) -> MpiResult<()> {
    let c = count(n)?;
    let mut blocks = Vec::with_capacity(c);
    for i in 0..c {
        let b = blocklen(bl.unwrap_or_else(|| bls[i]))?;
        blocks.push((isz(disps[i])?, b));
    }
    create(newtype, |rt| {
        let o = old(rt, oldtype)?;
        let mut ints = vec![n];
        match bl {
            Some(b) => ints.push(b),
            None => ints.extend(&bls),
        }
        let (ints, addrs) = if bytes || large {
            (ints, disps.clone())
        } else {
            ints.extend(&disps);
            (ints, vec![])
        };
        let k = contents(combiner, large, ints, addrs, vec![o.clone()]);
        let mut scaled = Vec::with_capacity(blocks.len());
        for &(d, b) in &blocks {
            let d = if bytes {
                d
            } else {
                d.checked_mul(o.extent)
                    .map_or_else(|| fail(MPI_ERR_ARG, "displacement too large"), Ok)?
            };
            scaled.push((d, b));
        }
        derived::indexed_bytes(scaled.into_iter(), &o, k)
    })
}

unsafe fn to_i64<T: Copy + Into<i64>>(p: *const T, n: i64, what: &str) -> MpiResult<Vec<i64>> {
    let n = count(n)?;
    Ok(arr(p, n, what)?.iter().map(|&v| v.into()).collect())
}

unsafe fn aints(p: *const MPI_Aint, n: i64, what: &str) -> MpiResult<Vec<i64>> {
    let n = count(n)?;
    Ok(arr(p, n, what)?.iter().map(|&v| v as i64).collect())
}

pub(crate) unsafe fn MPI_Type_indexed(
    count: c_int,
    array_of_blocklengths: *const c_int,
    array_of_displacements: *const c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    let n = count as i64;
    indexed(
        MPI_COMBINER_INDEXED,
        n,
        to_i64(array_of_blocklengths, n, "array_of_blocklengths")?,
        None,
        to_i64(array_of_displacements, n, "array_of_displacements")?,
        false,
        oldtype,
        newtype,
        false,
    )
}

pub(crate) unsafe fn MPI_Type_indexed_c(
    count: MPI_Count,
    array_of_blocklengths: *const MPI_Count,
    array_of_displacements: *const MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    indexed(
        MPI_COMBINER_INDEXED,
        count,
        to_i64(array_of_blocklengths, count, "array_of_blocklengths")?,
        None,
        to_i64(array_of_displacements, count, "array_of_displacements")?,
        false,
        oldtype,
        newtype,
        true,
    )
}

pub(crate) unsafe fn MPI_Type_create_hindexed(
    count: c_int,
    array_of_blocklengths: *const c_int,
    array_of_displacements: *const MPI_Aint,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    let n = count as i64;
    indexed(
        MPI_COMBINER_HINDEXED,
        n,
        to_i64(array_of_blocklengths, n, "array_of_blocklengths")?,
        None,
        aints(array_of_displacements, n, "array_of_displacements")?,
        true,
        oldtype,
        newtype,
        false,
    )
}

pub(crate) unsafe fn MPI_Type_create_hindexed_c(
    count: MPI_Count,
    array_of_blocklengths: *const MPI_Count,
    array_of_displacements: *const MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    indexed(
        MPI_COMBINER_HINDEXED,
        count,
        to_i64(array_of_blocklengths, count, "array_of_blocklengths")?,
        None,
        to_i64(array_of_displacements, count, "array_of_displacements")?,
        true,
        oldtype,
        newtype,
        true,
    )
}

pub(crate) unsafe fn MPI_Type_create_indexed_block(
    count: c_int,
    blocklength: c_int,
    array_of_displacements: *const c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    let n = count as i64;
    indexed(
        MPI_COMBINER_INDEXED_BLOCK,
        n,
        vec![],
        Some(blocklength as i64),
        to_i64(array_of_displacements, n, "array_of_displacements")?,
        false,
        oldtype,
        newtype,
        false,
    )
}

pub(crate) unsafe fn MPI_Type_create_indexed_block_c(
    count: MPI_Count,
    blocklength: MPI_Count,
    array_of_displacements: *const MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    indexed(
        MPI_COMBINER_INDEXED_BLOCK,
        count,
        vec![],
        Some(blocklength),
        to_i64(array_of_displacements, count, "array_of_displacements")?,
        false,
        oldtype,
        newtype,
        true,
    )
}

pub(crate) unsafe fn MPI_Type_create_hindexed_block(
    count: c_int,
    blocklength: c_int,
    array_of_displacements: *const MPI_Aint,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    let n = count as i64;
    indexed(
        MPI_COMBINER_HINDEXED_BLOCK,
        n,
        vec![],
        Some(blocklength as i64),
        aints(array_of_displacements, n, "array_of_displacements")?,
        true,
        oldtype,
        newtype,
        false,
    )
}

pub(crate) unsafe fn MPI_Type_create_hindexed_block_c(
    count: MPI_Count,
    blocklength: MPI_Count,
    array_of_displacements: *const MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    indexed(
        MPI_COMBINER_HINDEXED_BLOCK,
        count,
        vec![],
        Some(blocklength),
        to_i64(array_of_displacements, count, "array_of_displacements")?,
        true,
        oldtype,
        newtype,
        true,
    )
}

unsafe fn structure(
    n: i64,
    bls: Vec<i64>,
    disps: Vec<i64>,
    types: *const MPI_Datatype,
    newtype: *mut MPI_Datatype,
    large: bool,
) -> MpiResult<()> {
    let c = count(n)?;
    let hs = arr(types, c, "array_of_types")?;
    let mut b = Vec::with_capacity(c);
    for i in 0..c {
        b.push((blocklen(bls[i])?, isz(disps[i])?));
    }
    create(newtype, |rt| {
        let mut fields = Vec::with_capacity(c);
        let mut kids = Vec::with_capacity(c);
        for i in 0..c {
            let t = old(rt, hs[i])?;
            kids.push(t.clone());
            fields.push((b[i].0, b[i].1, t));
        }
        let mut ints = vec![n];
        ints.extend(&bls);
        let k = contents(MPI_COMBINER_STRUCT, large, ints, disps.clone(), kids);
        derived::structure(&fields, k)
    })
}

pub(crate) unsafe fn MPI_Type_create_struct(
    count: c_int,
    array_of_blocklengths: *const c_int,
    array_of_displacements: *const MPI_Aint,
    array_of_types: *const MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    let n = count as i64;
    structure(
        n,
        to_i64(array_of_blocklengths, n, "array_of_blocklengths")?,
        aints(array_of_displacements, n, "array_of_displacements")?,
        array_of_types,
        newtype,
        false,
    )
}

pub(crate) unsafe fn MPI_Type_create_struct_c(
    count: MPI_Count,
    array_of_blocklengths: *const MPI_Count,
    array_of_displacements: *const MPI_Count,
    array_of_types: *const MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    structure(
        count,
        to_i64(array_of_blocklengths, count, "array_of_blocklengths")?,
        to_i64(array_of_displacements, count, "array_of_displacements")?,
        array_of_types,
        newtype,
        true,
    )
}

fn ndims_ok(ndims: c_int) -> MpiResult<usize> {
    if ndims <= 0 {
        return fail(
            MPI_ERR_DIMS,
            format!("invalid number of dimensions {ndims} (must be positive)"),
        );
    }
    Ok(ndims as usize)
}

#[allow(clippy::too_many_arguments)]
unsafe fn subarray(
    ndims: c_int,
    sizes: Vec<i64>,
    subsizes: Vec<i64>,
    starts: Vec<i64>,
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
    large: bool,
) -> MpiResult<()> {
    create(newtype, |rt| {
        let o = old(rt, oldtype)?;
        let k = if large {
            Contents {
                combiner: MPI_COMBINER_SUBARRAY,
                ints: vec![ndims, order],
                counts: [&sizes[..], &subsizes[..], &starts[..]].concat(),
                types: vec![o.clone()],
                ..Default::default()
            }
        } else {
            let mut ints = vec![ndims];
            for v in [&sizes, &subsizes, &starts] {
                ints.extend(v.iter().map(|&x| x as i32));
            }
            ints.push(order);
            Contents {
                combiner: MPI_COMBINER_SUBARRAY,
                ints,
                types: vec![o.clone()],
                ..Default::default()
            }
        };
        derived::subarray(&sizes, &subsizes, &starts, order, &o, k)
    })
}

pub(crate) unsafe fn MPI_Type_create_subarray(
    ndims: c_int,
    array_of_sizes: *const c_int,
    array_of_subsizes: *const c_int,
    array_of_starts: *const c_int,
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    let n = ndims_ok(ndims)? as i64;
    subarray(
        ndims,
        to_i64(array_of_sizes, n, "array_of_sizes")?,
        to_i64(array_of_subsizes, n, "array_of_subsizes")?,
        to_i64(array_of_starts, n, "array_of_starts")?,
        order,
        oldtype,
        newtype,
        false,
    )
}

pub(crate) unsafe fn MPI_Type_create_subarray_c(
    ndims: c_int,
    array_of_sizes: *const MPI_Count,
    array_of_subsizes: *const MPI_Count,
    array_of_starts: *const MPI_Count,
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    let n = ndims_ok(ndims)? as i64;
    subarray(
        ndims,
        to_i64(array_of_sizes, n, "array_of_sizes")?,
        to_i64(array_of_subsizes, n, "array_of_subsizes")?,
        to_i64(array_of_starts, n, "array_of_starts")?,
        order,
        oldtype,
        newtype,
        true,
    )
}

#[allow(clippy::too_many_arguments)]
unsafe fn darray(
    size: c_int,
    rank: c_int,
    ndims: c_int,
    gsizes: Vec<i64>,
    distribs: *const c_int,
    dargs: *const c_int,
    psizes: *const c_int,
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
    large: bool,
) -> MpiResult<()> {
    let n = ndims as usize;
    let distribs = arr(distribs, n, "array_of_distribs")?;
    let dargs = arr(dargs, n, "array_of_dargs")?;
    let psizes = arr(psizes, n, "array_of_psizes")?;
    create(newtype, |rt| {
        let o = old(rt, oldtype)?;
        let mut ints = vec![size, rank, ndims];
        if !large {
            ints.extend(gsizes.iter().map(|&x| x as i32));
        }
        ints.extend(distribs);
        ints.extend(dargs);
        ints.extend(psizes);
        ints.push(order);
        let k = Contents {
            combiner: MPI_COMBINER_DARRAY,
            ints,
            counts: if large { gsizes.clone() } else { vec![] },
            types: vec![o.clone()],
            ..Default::default()
        };
        derived::darray(size, rank, &gsizes, distribs, dargs, psizes, order, &o, k)
    })
}

pub(crate) unsafe fn MPI_Type_create_darray(
    size: c_int,
    rank: c_int,
    ndims: c_int,
    array_of_gsizes: *const c_int,
    array_of_distribs: *const c_int,
    array_of_dargs: *const c_int,
    array_of_psizes: *const c_int,
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    let n = ndims_ok(ndims)? as i64;
    darray(
        size,
        rank,
        ndims,
        to_i64(array_of_gsizes, n, "array_of_gsizes")?,
        array_of_distribs,
        array_of_dargs,
        array_of_psizes,
        order,
        oldtype,
        newtype,
        false,
    )
}

pub(crate) unsafe fn MPI_Type_create_darray_c(
    size: c_int,
    rank: c_int,
    ndims: c_int,
    array_of_gsizes: *const MPI_Count,
    array_of_distribs: *const c_int,
    array_of_dargs: *const c_int,
    array_of_psizes: *const c_int,
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    let n = ndims_ok(ndims)? as i64;
    darray(
        size,
        rank,
        ndims,
        to_i64(array_of_gsizes, n, "array_of_gsizes")?,
        array_of_distribs,
        array_of_dargs,
        array_of_psizes,
        order,
        oldtype,
        newtype,
        true,
    )
}

unsafe fn resized(
    oldtype: MPI_Datatype,
    lb: i64,
    extent: i64,
    newtype: *mut MPI_Datatype,
    large: bool,
) -> MpiResult<()> {
    let (l, e) = (isz(lb)?, isz(extent)?);
    create(newtype, |rt| {
        let o = old(rt, oldtype)?;
        let k = contents(
            MPI_COMBINER_RESIZED,
            large,
            vec![],
            vec![lb, extent],
            vec![o.clone()],
        );
        derived::resized(&o, l, e, k)
    })
}

pub(crate) unsafe fn MPI_Type_create_resized(
    oldtype: MPI_Datatype,
    lb: MPI_Aint,
    extent: MPI_Aint,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    resized(oldtype, lb as i64, extent as i64, newtype, false)
}

pub(crate) unsafe fn MPI_Type_create_resized_c(
    oldtype: MPI_Datatype,
    lb: MPI_Count,
    extent: MPI_Count,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    resized(oldtype, lb, extent, newtype, true)
}

pub(crate) unsafe fn MPI_Type_dup(
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    let slot = out(newtype, "newtype")?;
    let attrs = runtime::with(|rt| {
        old(rt, oldtype)?;
        super::attr::type_attr_entries(rt, oldtype as usize)
    })?;
    // SAFETY: runs the user's copy callbacks with their registered C signatures.
    let copied = unsafe { super::attr::copy_attrs(oldtype as usize, &attrs)? };
    let h = runtime::with(|rt| {
        let o = old(rt, oldtype)?;
        let committed =
            predefined(oldtype as usize).is_some() || rt.type_entry(oldtype as usize)?.committed;
        let mut e = TypeEntry::new(derived::dup(&o));
        e.committed = committed;
        let h = match rt.types.insert(e) {
            Some(i) => rt.types.handle(i),
            None => return fail(MPI_ERR_INTERN, "too many datatypes"),
        };
        super::attr::attach_type_attrs(rt, h, copied)?;
        Ok(h)
    })?;
    *slot = h as MPI_Datatype;
    Ok(())
}
