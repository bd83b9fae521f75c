//! Datatypes: commit/free, names, queries, Fortran 90 parameterized types, addresses and
//! value-index pairs, and the helpers the constructors share (constructors:
//! `type_create.rs`; the pack/unpack API: `pack.rs`).

use super::util::{out, put_string};
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::core::datatype::derived::{self, Contents, Dtype};
use crate::core::datatype::{names, predefined, TypeEntry};
use crate::core::error::{fail, MpiResult};
use crate::core::runtime::{self, Runtime};
use core::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

// ---------------------------------------------------------------------------------------------
// helpers

/// A C array argument of `n` elements; `MPI_ERR_ARG` when NULL and non-empty.
pub(super) unsafe fn arr<'a, T>(p: *const T, n: usize, what: &str) -> MpiResult<&'a [T]> {
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
pub(super) fn blocklen(b: i64) -> MpiResult<usize> {
    if b < 0 {
        return fail(
            MPI_ERR_COUNT,
            format!("invalid block length {b} (must be non-negative)"),
        );
    }
    Ok(b as usize)
}

pub(super) fn isz(v: i64) -> MpiResult<isize> {
    isize::try_from(v).or_else(|_| fail(MPI_ERR_ARG, format!("value {v} is out of range")))
}

/// Builds a type with `f` (given the runtime) and stores its new handle in `newtype`.
pub(super) unsafe fn create(
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

pub(super) fn old(rt: &Runtime, h: MPI_Datatype) -> MpiResult<Arc<Dtype>> {
    rt.dtype(h as usize)
}

/// Contents of a constructor call: small-count (`ints`/`addrs`) or large-count form.
pub(super) fn contents(
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

pub(super) fn with_type<T>(dt: MPI_Datatype, f: impl FnOnce(&Dtype) -> T) -> MpiResult<T> {
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
