//! Datatypes: constructors, queries, commit/free, names, and the pack/unpack API (native and
//! "external32").

use super::util::{count, out, put_string};
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::core::datatype::derived::{self, Contents, Dtype};
use crate::core::datatype::{engine, external, names, predefined, Resolved, TypeEntry};
use crate::core::error::{fail, MpiResult};
use crate::core::runtime::{self, Runtime};
use core::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

// ---------------------------------------------------------------------------------------------
// helpers

/// A C array argument of `n` elements; `MPI_ERR_ARG` when NULL and non-empty.
unsafe fn arr<'a, T>(p: *const T, n: usize, what: &str) -> MpiResult<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return fail(MPI_ERR_ARG, format!("{what} must not be NULL"));
    }
    // SAFETY: the C caller passes an array of `n` elements (module contract).
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// A block length: `MPI_ERR_COUNT` when negative (as MPICH).
fn blocklen(b: i64) -> MpiResult<usize> {
    if b < 0 {
        return fail(
            MPI_ERR_COUNT,
            format!("invalid block length {b} (must be non-negative)"),
        );
    }
    Ok(b as usize)
}

fn isz(v: i64) -> MpiResult<isize> {
    isize::try_from(v).or_else(|_| fail(MPI_ERR_ARG, format!("value {v} is out of range")))
}

/// Builds a type with `f` (given the runtime) and stores its new handle in `newtype`.
unsafe fn create(
    newtype: *mut MPI_Datatype,
    f: impl FnOnce(&Runtime) -> MpiResult<Dtype>,
) -> MpiResult<()> {
    let slot = out(newtype, "newtype")?;
    let h = runtime::with(|rt| {
        let t = f(rt)?;
        match rt.types.insert(TypeEntry::new(t)) {
            Some(i) => Ok(rt.types.handle(i)),
            None => fail(MPI_ERR_INTERN, "too many datatypes"),
        }
    })?;
    *slot = h as MPI_Datatype;
    Ok(())
}

fn old(rt: &Runtime, h: MPI_Datatype) -> MpiResult<Arc<Dtype>> {
    rt.dtype(h as usize)
}

/// Contents of a constructor call: small-count (`ints`/`addrs`) or large-count form.
fn contents(
    combiner: i32,
    large: bool,
    ints: Vec<i64>,
    addrs: Vec<i64>,
    types: Vec<Arc<Dtype>>,
) -> Contents {
    if large {
        let mut counts = ints;
        counts.extend(addrs);
        Contents {
            combiner,
            counts,
            types,
            ..Default::default()
        }
    } else {
        Contents {
            combiner,
            ints: ints.into_iter().map(|v| v as i32).collect(),
            addrs: addrs.into_iter().map(|v| v as isize).collect(),
            types,
            ..Default::default()
        }
    }
}

// ---------------------------------------------------------------------------------------------
// constructors

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

// ---------------------------------------------------------------------------------------------
// commit, free, names

pub(crate) unsafe fn MPI_Type_commit(datatype: *mut MPI_Datatype) -> MpiResult<()> {
    let h = *out(datatype, "datatype")? as usize;
    runtime::with(|rt| {
        if predefined(h).is_some() {
            return Ok(());
        }
        let i = rt.types.decode(h);
        match i.and_then(|i| rt.types.get_mut(i)) {
            // The layout program was compiled at construction; commit makes it usable.
            Some(e) => {
                e.committed = true;
                Ok(())
            }
            None => {
                rt.type_entry(h)?;
                unreachable!()
            }
        }
    })
}

pub(crate) unsafe fn MPI_Type_free(datatype: *mut MPI_Datatype) -> MpiResult<()> {
    let slot = out(datatype, "datatype")?;
    let h = *slot as usize;
    if predefined(h).is_none() && runtime::with(|rt| rt.type_entry(h).map(|_| ())).is_ok() {
        // SAFETY: runs the user's delete callbacks with their registered C signatures.
        unsafe { super::attr::delete_all_type_attrs(h)? };
    }
    runtime::with(|rt| {
        if predefined(h).is_some() || rt.type_entry(h).is_ok_and(|e| e.f90_base.is_some()) {
            return fail(MPI_ERR_TYPE, "a predefined datatype cannot be freed");
        }
        match rt.types.decode(h) {
            // Requests and derived types using it hold their own reference.
            Some(i) => {
                rt.types.free(i);
                Ok(())
            }
            None => rt.type_entry(h).map(|_| ()),
        }
    })?;
    *slot = MPI_DATATYPE_NULL as MPI_Datatype;
    Ok(())
}

/// Names given to predefined datatypes with `MPI_Type_set_name` (handle, name).
static PREDEFINED_NAMES: parking_lot::Mutex<Vec<(usize, String)>> =
    parking_lot::Mutex::new(Vec::new());

pub(crate) unsafe fn MPI_Type_set_name(
    datatype: MPI_Datatype,
    type_name: *const c_char,
) -> MpiResult<()> {
    if type_name.is_null() {
        return fail(MPI_ERR_ARG, "type_name must not be NULL");
    }
    // SAFETY: a non-null name is a NUL-terminated C string (C contract).
    let name = unsafe { std::ffi::CStr::from_ptr(type_name) }
        .to_string_lossy()
        .into_owned();
    let name: String = name
        .chars()
        .take(MPI_MAX_OBJECT_NAME as usize - 1)
        .collect();
    runtime::with(|rt| {
        let h = datatype as usize;
        if predefined(h).is_some() {
            // A predefined type may be renamed too (MPICH and Open MPI allow it).
            let mut t = PREDEFINED_NAMES.lock();
            t.retain(|e| e.0 != h);
            t.push((h, name.clone()));
            return Ok(());
        }
        let Some(e) = rt.types.decode(h).and_then(|i| rt.types.get_mut(i)) else {
            return rt.type_entry(h).map(|_| ());
        };
        e.name = name;
        Ok(())
    })
}

pub(crate) unsafe fn MPI_Type_get_name(
    datatype: MPI_Datatype,
    type_name: *mut c_char,
    resultlen: *mut c_int,
) -> MpiResult<()> {
    let h = datatype as usize;
    let renamed = PREDEFINED_NAMES
        .lock()
        .iter()
        .find(|e| e.0 == h)
        .map(|e| e.1.clone());
    let name = match names::NAMES.iter().find(|(v, _)| *v == h) {
        Some(_) if renamed.is_some() => renamed.unwrap_or_default(),
        Some((_, n)) => n.to_string(),
        None => runtime::with(|rt| Ok(rt.type_entry(h)?.name.clone()))?,
    };
    out(resultlen, "resultlen")?;
    put_string(&name, type_name, MPI_MAX_OBJECT_NAME as usize, resultlen)
}

// ---------------------------------------------------------------------------------------------
// queries

fn with_type<T>(dt: MPI_Datatype, f: impl FnOnce(&Dtype) -> T) -> MpiResult<T> {
    if let Some(t) = Dtype::predefined(dt as usize) {
        return Ok(f(&t));
    }
    runtime::with(|rt| Ok(f(&rt.type_entry(dt as usize)?.dt)))
}

pub(crate) unsafe fn MPI_Type_size(datatype: MPI_Datatype, size: *mut c_int) -> MpiResult<()> {
    let s = with_type(datatype, |t| t.size)?;
    *out(size, "size")? = if s > i32::MAX as usize {
        MPI_UNDEFINED
    } else {
        s as c_int
    };
    Ok(())
}

pub(crate) unsafe fn MPI_Type_size_c(
    datatype: MPI_Datatype,
    size: *mut MPI_Count,
) -> MpiResult<()> {
    *out(size, "size")? = with_type(datatype, |t| t.size as MPI_Count)?;
    Ok(())
}

pub(crate) unsafe fn MPI_Type_size_x(
    datatype: MPI_Datatype,
    size: *mut MPI_Count,
) -> MpiResult<()> {
    MPI_Type_size_c(datatype, size)
}

pub(crate) unsafe fn MPI_Type_get_extent(
    datatype: MPI_Datatype,
    lb: *mut MPI_Aint,
    extent: *mut MPI_Aint,
) -> MpiResult<()> {
    let (l, e) = with_type(datatype, |t| (t.lb, t.extent))?;
    *out(lb, "lb")? = l;
    *out(extent, "extent")? = e;
    Ok(())
}

pub(crate) unsafe fn MPI_Type_get_extent_c(
    datatype: MPI_Datatype,
    lb: *mut MPI_Count,
    extent: *mut MPI_Count,
) -> MpiResult<()> {
    let (l, e) = with_type(datatype, |t| (t.lb, t.extent))?;
    *out(lb, "lb")? = l as MPI_Count;
    *out(extent, "extent")? = e as MPI_Count;
    Ok(())
}

pub(crate) unsafe fn MPI_Type_get_extent_x(
    datatype: MPI_Datatype,
    lb: *mut MPI_Count,
    extent: *mut MPI_Count,
) -> MpiResult<()> {
    MPI_Type_get_extent_c(datatype, lb, extent)
}

pub(crate) unsafe fn MPI_Type_get_true_extent(
    datatype: MPI_Datatype,
    true_lb: *mut MPI_Aint,
    true_extent: *mut MPI_Aint,
) -> MpiResult<()> {
    let (l, e) = with_type(datatype, |t| (t.true_lb, t.true_extent))?;
    *out(true_lb, "true_lb")? = l;
    *out(true_extent, "true_extent")? = e;
    Ok(())
}

pub(crate) unsafe fn MPI_Type_get_true_extent_c(
    datatype: MPI_Datatype,
    true_lb: *mut MPI_Count,
    true_extent: *mut MPI_Count,
) -> MpiResult<()> {
    let (l, e) = with_type(datatype, |t| (t.true_lb, t.true_extent))?;
    *out(true_lb, "true_lb")? = l as MPI_Count;
    *out(true_extent, "true_extent")? = e as MPI_Count;
    Ok(())
}

pub(crate) unsafe fn MPI_Type_get_true_extent_x(
    datatype: MPI_Datatype,
    true_lb: *mut MPI_Count,
    true_extent: *mut MPI_Count,
) -> MpiResult<()> {
    MPI_Type_get_true_extent_c(datatype, true_lb, true_extent)
}

pub(crate) unsafe fn MPI_Get_elements_x(
    status: *const MPI_Status,
    datatype: MPI_Datatype,
    count: *mut MPI_Count,
) -> MpiResult<()> {
    super::p2p::MPI_Get_elements_c(status, datatype, count)
}

pub(crate) unsafe fn MPI_Type_get_envelope(
    datatype: MPI_Datatype,
    num_integers: *mut c_int,
    num_addresses: *mut c_int,
    num_datatypes: *mut c_int,
    combiner: *mut c_int,
) -> MpiResult<()> {
    let (ni, na, nl, nd, c) = with_type(datatype, |t| {
        let k = &t.contents;
        (
            k.ints.len(),
            k.addrs.len(),
            k.counts.len(),
            k.types.len(),
            k.combiner,
        )
    })?;
    if nl > 0 {
        return fail(
            MPI_ERR_TYPE,
            "the datatype was built with large counts: use MPI_Type_get_envelope_c",
        );
    }
    *out(num_integers, "num_integers")? = ni as c_int;
    *out(num_addresses, "num_addresses")? = na as c_int;
    *out(num_datatypes, "num_datatypes")? = nd as c_int;
    *out(combiner, "combiner")? = c;
    Ok(())
}

pub(crate) unsafe fn MPI_Type_get_envelope_c(
    datatype: MPI_Datatype,
    num_integers: *mut MPI_Count,
    num_addresses: *mut MPI_Count,
    num_large_counts: *mut MPI_Count,
    num_datatypes: *mut MPI_Count,
    combiner: *mut c_int,
) -> MpiResult<()> {
    let (ni, na, nl, nd, c) = with_type(datatype, |t| {
        let k = &t.contents;
        (
            k.ints.len(),
            k.addrs.len(),
            k.counts.len(),
            k.types.len(),
            k.combiner,
        )
    })?;
    *out(num_integers, "num_integers")? = ni as MPI_Count;
    *out(num_addresses, "num_addresses")? = na as MPI_Count;
    *out(num_large_counts, "num_large_counts")? = nl as MPI_Count;
    *out(num_datatypes, "num_datatypes")? = nd as MPI_Count;
    *out(combiner, "combiner")? = c;
    Ok(())
}

/// Writes the contents of `datatype`; derived argument types come back as new handles (the
/// caller frees them), predefined ones as themselves.
#[allow(clippy::too_many_arguments)]
unsafe fn get_contents(
    datatype: MPI_Datatype,
    max_i: i64,
    max_a: i64,
    max_l: Option<i64>,
    max_d: i64,
    ints: *mut c_int,
    addrs: *mut MPI_Aint,
    larges: *mut MPI_Count,
    types: *mut MPI_Datatype,
) -> MpiResult<()> {
    runtime::with(|rt| {
        let t = rt.dtype(datatype as usize)?;
        let k = &t.contents;
        if k.combiner == MPI_COMBINER_NAMED {
            return fail(
                MPI_ERR_TYPE,
                "a predefined datatype has no contents (its combiner is MPI_COMBINER_NAMED)",
            );
        }
        if max_l.is_none() && !k.counts.is_empty() {
            return fail(
                MPI_ERR_TYPE,
                "the datatype was built with large counts: use MPI_Type_get_contents_c",
            );
        }
        let short = |what: &str, have: i64, need: usize| -> MpiResult<()> {
            if have < need as i64 {
                return fail(
                    MPI_ERR_ARG,
                    format!("{what} is {have} but the datatype has {need}"),
                );
            }
            Ok(())
        };
        short("max_integers", max_i, k.ints.len())?;
        short("max_addresses", max_a, k.addrs.len())?;
        short("max_large_counts", max_l.unwrap_or(0), k.counts.len())?;
        short("max_datatypes", max_d, k.types.len())?;
        let fill = |dst: *mut c_void, what: &str, n: usize| -> MpiResult<*mut c_void> {
            if n > 0 && dst.is_null() {
                return fail(MPI_ERR_ARG, format!("{what} must not be NULL"));
            }
            Ok(dst)
        };
        let pi = fill(ints.cast(), "array_of_integers", k.ints.len())? as *mut c_int;
        let pa = fill(addrs.cast(), "array_of_addresses", k.addrs.len())? as *mut MPI_Aint;
        let pl = fill(larges.cast(), "array_of_large_counts", k.counts.len())? as *mut MPI_Count;
        let pd = fill(types.cast(), "array_of_datatypes", k.types.len())? as *mut MPI_Datatype;
        let mut hs = Vec::with_capacity(k.types.len());
        for c in &k.types {
            if c.handle != 0 {
                hs.push(c.handle);
            } else {
                let mut e = TypeEntry {
                    dt: c.clone(),
                    committed: true,
                    name: String::new(),
                    attrs: Vec::new(),
                    f90_base: None,
                };
                e.committed = true;
                match rt.types.insert(e) {
                    Some(i) => hs.push(rt.types.handle(i)),
                    None => return fail(MPI_ERR_INTERN, "too many datatypes"),
                }
            }
        }
        // SAFETY: each array holds at least as many entries as its max argument, which was
        // checked to cover the contents (C contract).
        unsafe {
            for (i, v) in k.ints.iter().enumerate() {
                *pi.add(i) = *v;
            }
            for (i, v) in k.addrs.iter().enumerate() {
                *pa.add(i) = *v;
            }
            for (i, v) in k.counts.iter().enumerate() {
                *pl.add(i) = *v;
            }
            for (i, v) in hs.iter().enumerate() {
                *pd.add(i) = *v as MPI_Datatype;
            }
        }
        Ok(())
    })
}

pub(crate) unsafe fn MPI_Type_get_contents(
    datatype: MPI_Datatype,
    max_integers: c_int,
    max_addresses: c_int,
    max_datatypes: c_int,
    array_of_integers: *mut c_int,
    array_of_addresses: *mut MPI_Aint,
    array_of_datatypes: *mut MPI_Datatype,
) -> MpiResult<()> {
    get_contents(
        datatype,
        max_integers as i64,
        max_addresses as i64,
        None,
        max_datatypes as i64,
        array_of_integers,
        array_of_addresses,
        std::ptr::null_mut(),
        array_of_datatypes,
    )
}

pub(crate) unsafe fn MPI_Type_get_contents_c(
    datatype: MPI_Datatype,
    max_integers: MPI_Count,
    max_addresses: MPI_Count,
    max_large_counts: MPI_Count,
    max_datatypes: MPI_Count,
    array_of_integers: *mut c_int,
    array_of_addresses: *mut MPI_Aint,
    array_of_large_counts: *mut MPI_Count,
    array_of_datatypes: *mut MPI_Datatype,
) -> MpiResult<()> {
    get_contents(
        datatype,
        max_integers,
        max_addresses,
        Some(max_large_counts),
        max_datatypes,
        array_of_integers,
        array_of_addresses,
        array_of_large_counts,
        array_of_datatypes,
    )
}

pub(crate) unsafe fn MPI_Type_match_size(
    typeclass: c_int,
    size: c_int,
    datatype: *mut MPI_Datatype,
) -> MpiResult<()> {
    let slot = out(datatype, "datatype")?;
    let cands: &[usize] = match typeclass {
        MPI_TYPECLASS_INTEGER => &[
            MPI_INTEGER1,
            MPI_INTEGER2,
            MPI_INTEGER4,
            MPI_INTEGER8,
            MPI_INTEGER16,
        ],
        MPI_TYPECLASS_REAL => &[MPI_REAL2, MPI_REAL4, MPI_REAL8, MPI_REAL16],
        MPI_TYPECLASS_COMPLEX => &[MPI_COMPLEX4, MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32],
        _ => return fail(MPI_ERR_ARG, format!("invalid type class {typeclass}")),
    };
    match cands
        .iter()
        .find(|&&h| predefined(h).is_some_and(|t| t.size as c_int == size))
    {
        Some(&h) => {
            *slot = h as MPI_Datatype;
            Ok(())
        }
        None => fail(
            MPI_ERR_ARG,
            format!("no predefined type of this class has {size} bytes"),
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// Fortran 90 parameterized types

/// The predefined type a Fortran `SELECTED_REAL_KIND(p, r)` / `SELECTED_INT_KIND(r)` names on
/// this platform (gfortran's kinds: 4 and 8 byte IEEE reals and quad precision; 1 to 16 byte
/// integers), or `MPI_ERR_ARG` when no kind has the precision and range. `MPI_UNDEFINED` leaves
/// a parameter free.
fn f90_kind(combiner: i32, p: i32, r: i32) -> MpiResult<usize> {
    let free = |v: i32| v == MPI_UNDEFINED;
    if combiner == MPI_COMBINER_F90_INTEGER {
        if free(r) || r < 0 {
            return fail(
                MPI_ERR_ARG,
                format!("invalid decimal exponent range r = {r}"),
            );
        }
        let kinds = [
            (2, MPI_INTEGER1),
            (4, MPI_INTEGER2),
            (9, MPI_INTEGER4),
            (18, MPI_INTEGER8),
            (38, MPI_INTEGER16),
        ];
        return match kinds.iter().find(|k| r <= k.0) {
            Some(k) => Ok(k.1),
            None => fail(MPI_ERR_ARG, format!("no integer kind has range r = {r}")),
        };
    }
    if (free(p) && free(r)) || (!free(p) && p < 0) || (!free(r) && r < 0) {
        return fail(
            MPI_ERR_ARG,
            format!(
                "invalid precision p = {p} or range r = {r} (at most one may be MPI_UNDEFINED)"
            ),
        );
    }
    let complex = combiner == MPI_COMBINER_F90_COMPLEX;
    // (decimal precision, decimal exponent range, real type, complex type)
    let kinds = [
        (6, 37, MPI_REAL4, MPI_COMPLEX8),
        (15, 307, MPI_REAL8, MPI_COMPLEX16),
        (33, 4931, MPI_REAL16, MPI_COMPLEX32),
    ];
    match kinds
        .iter()
        .find(|k| (free(p) || p <= k.0) && (free(r) || r <= k.1))
    {
        Some(k) => Ok(if complex { k.3 } else { k.2 }),
        None => fail(
            MPI_ERR_ARG,
            format!("no real kind has precision p = {p} and range r = {r}"),
        ),
    }
}

/// (combiner, p, r) of a parameterized type.
type F90Params = (i32, i32, i32);

/// Handles of the parameterized types made so far, by (combiner, p, r): the same parameters
/// give the same handle, as for any predefined type.
static F90_TYPES: parking_lot::Mutex<Vec<(F90Params, usize)>> = parking_lot::Mutex::new(Vec::new());

/// `MPI_Type_create_f90_*`: a predefined-like type (committed, never freed) that has the
/// layout of the matching Fortran kind and reports `combiner` with its parameters.
///
/// # Safety
/// `newtype` is NULL or valid for a write (C contract).
unsafe fn f90_type(combiner: i32, p: i32, r: i32, newtype: *mut MPI_Datatype) -> MpiResult<()> {
    // SAFETY: the caller's contract.
    let slot = unsafe { out(newtype, "newtype")? };
    let base = f90_kind(combiner, p, r)?;
    let ints = if combiner == MPI_COMBINER_F90_INTEGER {
        vec![r]
    } else {
        vec![p, r]
    };
    let h = runtime::with(|rt| {
        let mut cache = F90_TYPES.lock();
        if let Some(&(_, h)) = cache.iter().find(|e| e.0 == (combiner, p, r)) {
            if rt.type_entry(h).is_ok() {
                return Ok(h);
            }
        }
        let o = old(rt, base as MPI_Datatype)?;
        let mut dt = derived::dup(&o);
        dt.contents = derived::Contents {
            combiner,
            ints,
            ..Default::default()
        };
        let mut e = TypeEntry::new(dt);
        e.committed = true;
        e.f90_base = Some(base);
        let h = match rt.types.insert(e) {
            Some(i) => rt.types.handle(i),
            None => return fail(MPI_ERR_INTERN, "too many datatypes"),
        };
        cache.retain(|e| e.0 != (combiner, p, r));
        cache.push(((combiner, p, r), h));
        Ok(h)
    })?;
    *slot = h as MPI_Datatype;
    Ok(())
}

pub(crate) unsafe fn MPI_Type_create_f90_real(
    p: c_int,
    r: c_int,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    // SAFETY: `newtype` is the caller's output argument (C contract).
    unsafe { f90_type(MPI_COMBINER_F90_REAL, p, r, newtype) }
}

pub(crate) unsafe fn MPI_Type_create_f90_complex(
    p: c_int,
    r: c_int,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    // SAFETY: `newtype` is the caller's output argument (C contract).
    unsafe { f90_type(MPI_COMBINER_F90_COMPLEX, p, r, newtype) }
}

pub(crate) unsafe fn MPI_Type_create_f90_integer(
    r: c_int,
    newtype: *mut MPI_Datatype,
) -> MpiResult<()> {
    // SAFETY: `newtype` is the caller's output argument (C contract).
    unsafe { f90_type(MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, newtype) }
}

// ---------------------------------------------------------------------------------------------
// addresses

pub(crate) unsafe fn MPI_Get_address(
    location: *const c_void,
    address: *mut MPI_Aint,
) -> MpiResult<()> {
    *out(address, "address")? = location as MPI_Aint;
    Ok(())
}

pub(crate) unsafe fn MPI_Aint_add(base: MPI_Aint, disp: MPI_Aint) -> MpiResult<MPI_Aint> {
    Ok(base.wrapping_add(disp))
}

pub(crate) unsafe fn MPI_Aint_diff(addr1: MPI_Aint, addr2: MPI_Aint) -> MpiResult<MPI_Aint> {
    Ok(addr1.wrapping_sub(addr2))
}

// ---------------------------------------------------------------------------------------------
// pack and unpack

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

/// The predefined value-index pair type of `MPI_MINLOC` / `MPI_MAXLOC` for a value type and an
/// index type (MPI-4.1 section 6.9.4), if the standard names one.
fn value_index_pair(value: usize, index: usize) -> Option<usize> {
    Some(match (value, index) {
        (MPI_FLOAT, MPI_INT) => MPI_FLOAT_INT,
        (MPI_DOUBLE, MPI_INT) => MPI_DOUBLE_INT,
        (MPI_LONG, MPI_INT) => MPI_LONG_INT,
        (MPI_INT, MPI_INT) => MPI_2INT,
        (MPI_SHORT, MPI_INT) => MPI_SHORT_INT,
        (MPI_LONG_DOUBLE, MPI_INT) => MPI_LONG_DOUBLE_INT,
        (MPI_REAL, MPI_REAL) => MPI_2REAL,
        (MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION) => MPI_2DOUBLE_PRECISION,
        (MPI_INTEGER, MPI_INTEGER) => MPI_2INTEGER,
        _ => return None,
    })
}

pub(crate) unsafe fn MPI_Type_get_value_index(
    value_type: MPI_Datatype,
    index_type: MPI_Datatype,
    pair_type: *mut MPI_Datatype,
) -> MpiResult<()> {
    let slot = out(pair_type, "pair_type")?;
    // Both must be valid datatypes (MPI_ERR_TYPE otherwise); any other pair has no
    // predefined type and gives MPI_DATATYPE_NULL.
    with_type(value_type, |_| ())?;
    with_type(index_type, |_| ())?;
    let pair = value_index_pair(value_type as usize, index_type as usize);
    *slot = pair.unwrap_or(MPI_DATATYPE_NULL) as MPI_Datatype;
    Ok(())
}
