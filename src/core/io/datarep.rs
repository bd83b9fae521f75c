//! Data representations of file data (`datarep` of `MPI_File_set_view`): `native` and
//! `internal` (memory bytes as they are), `external32` (the standard's portable big-endian
//! form) and the user's own, registered with `MPI_Register_datarep`.
//!
//! A representation may store a basic type in a different number of bytes than memory does
//! (`long` is 4 bytes in external32; a user's representation says how many with its extent
//! function). Accesses keep counting a view's data in native bytes (positions, file
//! pointers, statuses); the view scales its file segments by the etype's file size over its
//! native size ([`crate::core::io::view::View`]), and the data crosses between the two forms
//! at the memory side of an access: [`to_file`] before a write, [`from_file`] after a read.
//! A user's conversion functions are called with the caller's buffer, datatype handle and
//! counts of data items (basic type-map entries), as the standard describes.

use super::access::{gather_mem, scatter_mem, Mem};
use crate::core::datatype::{external, Dtype, Kids};
use crate::core::error::{fail, MpiError, MpiResult};
use crate::mpi_abi::consts::*;
use crate::mpi_abi::types::*;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::Arc;

/// How file data is represented.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Datarep {
    /// `native`: memory bytes as they are.
    Native,
    /// `internal`: this implementation's choice, which is `native`.
    Internal,
    /// `external32`: the standard's big-endian portable representation.
    External32,
    /// A representation registered with `MPI_Register_datarep` (index in the registry).
    User(u32),
}

impl Datarep {
    /// The representation named `name` (`MPI_ERR_UNSUPPORTED_DATAREP` for others).
    pub fn parse(name: &str) -> MpiResult<Datarep> {
        match name {
            "native" => Ok(Datarep::Native),
            "internal" => Ok(Datarep::Internal),
            "external32" => Ok(Datarep::External32),
            other => match REGISTRY.lock().iter().position(|r| r.name == other) {
                Some(i) => Ok(Datarep::User(i as u32)),
                None => fail(
                    MPI_ERR_UNSUPPORTED_DATAREP,
                    format!(
                        "data representation \"{other}\" is not known (native, internal, \
                         external32 and those registered with MPI_Register_datarep are)"
                    ),
                ),
            },
        }
    }

    /// The name `MPI_File_get_view` returns.
    pub fn name(self) -> String {
        match self {
            Datarep::Native => "native".into(),
            Datarep::Internal => "internal".into(),
            Datarep::External32 => "external32".into(),
            Datarep::User(i) => user(i).name.clone(),
        }
    }

    /// Whether data changes form between memory and the file.
    pub fn converts(self) -> bool {
        !matches!(self, Datarep::Native | Datarep::Internal)
    }
}

/// `MPI_Datarep_conversion_function`.
pub type ConversionInt = unsafe extern "C" fn(
    *mut c_void,
    MPI_Datatype,
    c_int,
    *mut c_void,
    MPI_Offset,
    *mut c_void,
) -> c_int;
/// `MPI_Datarep_conversion_function_c`.
pub type ConversionCount = unsafe extern "C" fn(
    *mut c_void,
    MPI_Datatype,
    MPI_Count,
    *mut c_void,
    MPI_Offset,
    *mut c_void,
) -> c_int;
/// `MPI_Datarep_extent_function`.
pub type ExtentFn = unsafe extern "C" fn(MPI_Datatype, *mut MPI_Aint, *mut c_void) -> c_int;

/// A registered conversion function.
#[derive(Clone, Copy, Debug)]
pub enum Conversion {
    /// `MPI_CONVERSION_FN_NULL`: the items are copied as they are (the file sizes must then
    /// be the native ones).
    Null,
    /// From `MPI_Register_datarep` (`int` counts).
    Int(ConversionInt),
    /// From `MPI_Register_datarep_c` (`MPI_Count` counts).
    Count(ConversionCount),
}

/// A user's data representation.
#[derive(Debug)]
pub struct UserRep {
    /// Its name.
    pub name: String,
    /// File to native.
    pub read: Conversion,
    /// Native to file.
    pub write: Conversion,
    /// File extent of a predefined type.
    pub extent: ExtentFn,
    /// The `extra_state` given at registration.
    pub extra: usize,
    /// File extents the extent function gave, by predefined type handle.
    extents: Mutex<HashMap<usize, usize>>,
}

/// Registered representations; never removed (the standard has no call for it), so an
/// index stays valid for the life of the process.
static REGISTRY: Mutex<Vec<Arc<UserRep>>> = Mutex::new(Vec::new());

fn user(i: u32) -> Arc<UserRep> {
    REGISTRY.lock()[i as usize].clone()
}

/// `MPI_Register_datarep(_c)`: registers `name` (`MPI_ERR_DUP_DATAREP` when it is taken,
/// the predefined names included).
pub fn register(
    name: &str,
    read: Conversion,
    write: Conversion,
    extent: ExtentFn,
    extra: usize,
) -> MpiResult<()> {
    if name.is_empty() || name.len() >= MPI_MAX_DATAREP_STRING as usize {
        return fail(
            MPI_ERR_ARG,
            format!(
                "a data representation name has 1 to {} characters (\"{name}\" has {})",
                MPI_MAX_DATAREP_STRING - 1,
                name.len()
            ),
        );
    }
    let mut reg = REGISTRY.lock();
    if matches!(name, "native" | "internal" | "external32") || reg.iter().any(|r| r.name == name) {
        return fail(
            MPI_ERR_DUP_DATAREP,
            format!("data representation \"{name}\" is already defined"),
        );
    }
    reg.push(Arc::new(UserRep {
        name: name.to_string(),
        read,
        write,
        extent,
        extra,
        extents: Mutex::new(HashMap::new()),
    }));
    Ok(())
}

fn conversion_error(rep: &UserRep, what: &str, code: c_int) -> MpiError {
    MpiError::new(
        MPI_ERR_CONVERSION,
        format!(
            "the {what} function of data representation \"{}\" returned error {code}",
            rep.name
        ),
    )
}

impl UserRep {
    /// The file extent of predefined type `t` (asked of the extent function once).
    fn basic_extent(&self, t: &Dtype) -> MpiResult<usize> {
        if let Some(&e) = self.extents.lock().get(&t.handle) {
            return Ok(e);
        }
        let mut e: MPI_Aint = 0;
        // SAFETY: the user's extent function, called as `MPI_Datarep_extent_function` with a
        // predefined type, a valid out-pointer and the registered extra state.
        let rc =
            unsafe { (self.extent)(t.handle as MPI_Datatype, &mut e, self.extra as *mut c_void) };
        if rc != MPI_SUCCESS {
            return Err(conversion_error(self, "extent", rc));
        }
        if e < 0 {
            return fail(
                MPI_ERR_CONVERSION,
                format!(
                    "the extent function of data representation \"{}\" gave {e} bytes for \
                     datatype {:#x}",
                    self.name, t.handle
                ),
            );
        }
        self.extents.lock().insert(t.handle, e as usize);
        Ok(e as usize)
    }
}

/// Bytes one element of `t` takes in the file in representation `rep`.
pub fn file_size(rep: Datarep, t: &Dtype) -> MpiResult<usize> {
    match rep {
        Datarep::Native | Datarep::Internal => Ok(t.size),
        Datarep::External32 => external::size(t),
        Datarep::User(i) => {
            let u = user(i);
            walk_size(t, &|b| u.basic_extent(b))
        }
    }
}

/// The size of one element of `t` with each basic type taking `basic(b)` bytes.
fn walk_size(t: &Dtype, basic: &dyn Fn(&Dtype) -> MpiResult<usize>) -> MpiResult<usize> {
    let too_big = || MpiError::new(MPI_ERR_COUNT, "the file size of the data overflows");
    Ok(match &t.kids {
        _ if t.size == 0 => 0,
        Kids::Basic => basic(t)?,
        Kids::Single { n, child } => (*n as usize)
            .checked_mul(walk_size(child, basic)?)
            .ok_or_else(too_big)?,
        Kids::Struct(f) => {
            let mut s = 0usize;
            for (n, c) in f {
                let part = (*n as usize)
                    .checked_mul(walk_size(c, basic)?)
                    .ok_or_else(too_big)?;
                s = s.checked_add(part).ok_or_else(too_big)?;
            }
            s
        }
    })
}

/// Data items (basic type-map entries) in one element of `t`.
fn items(t: &Dtype) -> u64 {
    match &t.kids {
        _ if t.size == 0 => 0,
        Kids::Basic => 1,
        Kids::Single { n, child } => n * items(child),
        Kids::Struct(f) => f.iter().map(|(n, c)| n * items(c)).sum(),
    }
}

/// A prefix of whole data items: how many, and their native and file bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Prefix {
    items: u64,
    native: usize,
    file: usize,
}

/// The longest prefix of whole items of `count` elements of `t` whose file form fits in
/// `budget` bytes (`file_of(b)`: file bytes of basic type `b`).
fn prefix(
    t: &Dtype,
    count: u64,
    budget: usize,
    file_of: &dyn Fn(&Dtype) -> MpiResult<usize>,
) -> MpiResult<Prefix> {
    let mut p = Prefix::default();
    let mut left = budget;
    take(t, count, &mut left, &mut p, file_of)?;
    Ok(p)
}

/// Adds to `p` the whole items of `n` elements of `t` that fit in `left` file bytes; false
/// when they did not all fit.
fn take(
    t: &Dtype,
    n: u64,
    left: &mut usize,
    p: &mut Prefix,
    file_of: &dyn Fn(&Dtype) -> MpiResult<usize>,
) -> MpiResult<bool> {
    if n == 0 || t.size == 0 {
        return Ok(true);
    }
    let one = walk_size(t, file_of)?;
    let whole = left.checked_div(one).map_or(n, |fit| n.min(fit as u64));
    p.items += whole * items(t);
    p.native += whole as usize * t.size;
    p.file += whole as usize * one;
    *left -= whole as usize * one;
    if whole == n {
        return Ok(true);
    }
    // Part of one more element.
    match &t.kids {
        Kids::Basic => {}
        Kids::Single { n, child } => {
            take(child, *n, left, p, file_of)?;
        }
        Kids::Struct(f) => {
            for (n, c) in f {
                if !take(c, *n, left, p, file_of)? {
                    break;
                }
            }
        }
    }
    Ok(false)
}

/// What an access moves: `count` elements of type `dt` (handle `handle`) at the caller's
/// buffer `buf` (a user's conversion functions are given the buffer and handle as they are).
#[derive(Clone, Debug)]
pub struct Elements {
    /// Element type.
    pub dt: Arc<Dtype>,
    /// Elements.
    pub count: usize,
    /// The datatype handle as the caller gave it.
    pub handle: usize,
    /// The caller's buffer address as given.
    pub buf: usize,
}

/// File bytes of the access's data in `rep`.
pub fn file_bytes(rep: Datarep, el: &Elements) -> MpiResult<usize> {
    file_size(rep, &el.dt)?
        .checked_mul(el.count)
        .ok_or_else(|| MpiError::new(MPI_ERR_COUNT, "the file size of the data overflows"))
}

/// Calls conversion `f` of `rep` over `items` items from item 0 of the caller's data, with
/// `filebuf` holding their file form (in chunks that fit the `int` count of
/// `MPI_Datarep_conversion_function`, as the standard allows).
///
/// # Safety
/// `el` describes the caller's buffer; `filebuf` has the file bytes of `items` items.
unsafe fn call(
    rep: &UserRep,
    f: Conversion,
    what: &str,
    el: &Elements,
    items: u64,
    filebuf: *mut u8,
    file_of: &dyn Fn(&Dtype) -> MpiResult<usize>,
) -> MpiResult<()> {
    let handle = el.handle as MPI_Datatype;
    let (buf, extra) = (el.buf as *mut c_void, rep.extra as *mut c_void);
    match f {
        Conversion::Null => Ok(()),
        Conversion::Count(f) => {
            // SAFETY: the user's function called as `MPI_Datarep_conversion_function_c` with
            // the caller's buffer and datatype (valid for the whole access) and a file buffer
            // holding `items` items (caller's contract).
            let rc = unsafe { f(buf, handle, items as MPI_Count, filebuf.cast(), 0, extra) };
            match rc {
                MPI_SUCCESS => Ok(()),
                rc => Err(conversion_error(rep, what, rc)),
            }
        }
        Conversion::Int(f) => {
            let (mut done, mut at) = (0u64, 0usize);
            while done < items {
                let n = (items - done).min(i32::MAX as u64);
                // SAFETY: as above, for items `done..done + n`, whose file form starts `at`
                // bytes into `filebuf`.
                let rc = unsafe {
                    f(
                        buf,
                        handle,
                        n as c_int,
                        filebuf.add(at).cast(),
                        done as MPI_Offset,
                        extra,
                    )
                };
                if rc != MPI_SUCCESS {
                    return Err(conversion_error(rep, what, rc));
                }
                done += n;
                if done < items {
                    at += prefix_of_items(&el.dt, done, file_of)?;
                }
            }
            Ok(())
        }
    }
}

/// File bytes of the first `n` items of the tiled type `t`.
fn prefix_of_items(
    t: &Dtype,
    n: u64,
    file_of: &dyn Fn(&Dtype) -> MpiResult<usize>,
) -> MpiResult<usize> {
    let per = items(t).max(1);
    let whole = n / per;
    let mut bytes = whole as usize * walk_size(t, file_of)?;
    let rest = n % per;
    if rest > 0 {
        // Items of the partial element one by one (chunks of 2^31 items make this rare).
        let mut lo = 0usize;
        let mut hi = walk_size(t, file_of)?;
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if prefix(t, 1, mid, file_of)?.items <= rest {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        bytes += prefix(t, 1, lo, file_of)?.file;
    }
    Ok(bytes)
}

/// The file form, in `rep`, of the caller's data `mem` (a write).
///
/// # Safety
/// `mem` and `el` describe the caller's readable buffer.
pub unsafe fn to_file(rep: Datarep, mem: &Mem, el: &Elements) -> MpiResult<Vec<u8>> {
    match rep {
        // SAFETY: forwarded caller guarantee.
        Datarep::Native | Datarep::Internal => Ok(unsafe { gather_mem(mem) }),
        Datarep::External32 => {
            let mut out = vec![0u8; file_bytes(rep, el)?];
            let uniform = external::uniform(&el.dt);
            if let (Some(u), Mem::Contig { addr, len }) = (uniform, mem) {
                // SAFETY: caller guarantee: `len` readable bytes at `addr`.
                let user = unsafe { std::slice::from_raw_parts(*addr as *const u8, *len) };
                external::convert_uniform(u, user, &mut out, true)?;
                return Ok(out);
            }
            // SAFETY: forwarded caller guarantee.
            let native = unsafe { gather_mem(mem) };
            if let Some(u) = uniform {
                external::convert_uniform(u, &native, &mut out, true)?;
                return Ok(out);
            }
            let (mut r, mut w) = (0, 0);
            for _ in 0..el.count {
                let (a, b) = external::convert(&el.dt, &native[r..], &mut out[w..], true)?;
                r += a;
                w += b;
            }
            Ok(out)
        }
        Datarep::User(i) => {
            let u = user(i);
            let file_of = |b: &Dtype| u.basic_extent(b);
            let n = file_bytes(rep, el)?;
            if let Conversion::Null = u.write {
                same_sizes(&u, el, n)?;
                // SAFETY: forwarded caller guarantee.
                return Ok(unsafe { gather_mem(mem) });
            }
            let mut out = vec![0u8; n];
            let all = items(&el.dt) * el.count as u64;
            // SAFETY: forwarded caller guarantee; `out` holds the file form of every item.
            unsafe {
                call(
                    &u,
                    u.write,
                    "write conversion",
                    el,
                    all,
                    out.as_mut_ptr(),
                    &file_of,
                )?
            };
            Ok(out)
        }
    }
}

/// A representation without a conversion function copies items as they are: their file
/// sizes must be the native ones.
fn same_sizes(u: &UserRep, el: &Elements, file: usize) -> MpiResult<()> {
    if file != el.dt.size * el.count {
        return fail(
            MPI_ERR_CONVERSION,
            format!(
                "data representation \"{}\" has no conversion function (MPI_CONVERSION_FN_NULL) \
                 but stores this datatype in {} bytes instead of its native {}",
                u.name,
                file / el.count.max(1),
                el.dt.size
            ),
        );
    }
    Ok(())
}

/// Stores file data `data` (in `rep`, as read: possibly short; the access's own buffer,
/// which a user's read function receives as is) into the caller's buffer `mem`; returns the
/// native bytes stored (whole items; whole elements for external32).
///
/// # Safety
/// `mem` and `el` describe the caller's writable buffer.
pub unsafe fn from_file(
    rep: Datarep,
    data: &mut [u8],
    mem: &Mem,
    el: &Elements,
) -> MpiResult<usize> {
    match rep {
        Datarep::Native | Datarep::Internal => {
            // SAFETY: forwarded caller guarantee.
            unsafe { scatter_mem(mem, data) };
            Ok(data.len())
        }
        Datarep::External32 => {
            let one = file_size(rep, &el.dt)?;
            let whole = data.len().checked_div(one).unwrap_or(0);
            let (src, n) = (&data[..whole * one], whole * el.dt.size);
            match (external::uniform(&el.dt), mem) {
                (Some(u), Mem::Contig { addr, .. }) => {
                    // SAFETY: caller guarantee: the buffer holds `count` elements, of which
                    // the first `whole` are written, at `addr`.
                    let user = unsafe { std::slice::from_raw_parts_mut(*addr as *mut u8, n) };
                    external::convert_uniform(u, src, user, false)?;
                    return Ok(n);
                }
                (Some(u), _) => {
                    let mut native = vec![0u8; n];
                    external::convert_uniform(u, src, &mut native, false)?;
                    // SAFETY: forwarded caller guarantee.
                    unsafe { scatter_mem(mem, &native) };
                    return Ok(n);
                }
                (None, _) => {}
            }
            let mut native = vec![0u8; n];
            let (mut r, mut w) = (0, 0);
            for _ in 0..whole {
                let (a, b) = external::convert(&el.dt, &data[r..], &mut native[w..], false)?;
                r += a;
                w += b;
            }
            // SAFETY: forwarded caller guarantee.
            unsafe { scatter_mem(mem, &native) };
            Ok(native.len())
        }
        Datarep::User(i) => {
            let u = user(i);
            let file_of = |b: &Dtype| u.basic_extent(b);
            let p = prefix(&el.dt, el.count as u64, data.len(), &file_of)?;
            if let Conversion::Null = u.read {
                same_sizes(&u, el, file_bytes(rep, el)?)?;
                // SAFETY: forwarded caller guarantee.
                unsafe { scatter_mem(mem, &data[..p.native]) };
                return Ok(p.native);
            }
            if p.items > 0 {
                // SAFETY: forwarded caller guarantee; `data` holds the file form of `p.items`
                // items (the function may scribble on it: it is the access's own buffer).
                unsafe {
                    call(
                        &u,
                        u.read,
                        "read conversion",
                        el,
                        p.items,
                        data.as_mut_ptr(),
                        &file_of,
                    )?
                };
            }
            Ok(p.native)
        }
    }
}

/// The file extent of `t` in `rep` (`MPI_File_get_type_extent`): a predefined type's file
/// size; a derived type's memory extent scaled by its file size over its native size (types
/// with holes keep their holes).
pub fn type_extent(rep: Datarep, t: &Dtype) -> MpiResult<i64> {
    if !rep.converts() {
        return Ok(t.extent as i64);
    }
    let file = file_size(rep, t)? as i64;
    Ok(match &t.kids {
        Kids::Basic => file,
        _ if t.size == 0 => t.extent as i64,
        _ => t.extent as i64 * file / t.size as i64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basic(h: usize) -> Arc<Dtype> {
        Arc::new(Dtype::predefined(h).unwrap())
    }

    #[test]
    fn prefixes_take_whole_items_only() {
        // A struct-like type: 3 ints then a double, stored as 8 bytes each in the file.
        let int = basic(MPI_INT);
        let dbl = basic(MPI_DOUBLE);
        let c = crate::core::datatype::derived::contiguous(3, &int, Default::default()).unwrap();
        let s = crate::core::datatype::derived::structure(
            &[(1, 0, Arc::new(c)), (1, 16, dbl)],
            Default::default(),
        )
        .unwrap();
        let eight = |_: &Dtype| Ok(8usize);
        assert_eq!(walk_size(&s, &eight).unwrap(), 32);
        assert_eq!(items(&s), 4);
        // Two elements (64 file bytes, 20 native each); 45 bytes hold one element and one
        // int.
        let p = prefix(&s, 2, 45, &eight).unwrap();
        assert_eq!(
            p,
            Prefix {
                items: 5,
                native: 20 + 4,
                file: 40
            }
        );
        assert_eq!(prefix(&s, 2, 1000, &eight).unwrap().items, 8);
        assert_eq!(prefix(&s, 2, 7, &eight).unwrap(), Prefix::default());
        assert_eq!(prefix_of_items(&s, 5, &eight).unwrap(), 40);
        assert_eq!(prefix_of_items(&s, 3, &eight).unwrap(), 24);
    }

    #[test]
    fn names_are_unique_and_known() {
        unsafe extern "C" fn ext(_: MPI_Datatype, e: *mut MPI_Aint, _: *mut c_void) -> c_int {
            // SAFETY: the caller passes a valid out-pointer.
            unsafe { *e = 8 };
            MPI_SUCCESS
        }
        register("unit_rep", Conversion::Null, Conversion::Null, ext, 0).unwrap();
        let e = register("unit_rep", Conversion::Null, Conversion::Null, ext, 0).unwrap_err();
        assert_eq!(e.class(), MPI_ERR_DUP_DATAREP);
        let e = register("external32", Conversion::Null, Conversion::Null, ext, 0).unwrap_err();
        assert_eq!(e.class(), MPI_ERR_DUP_DATAREP);
        let r = Datarep::parse("unit_rep").unwrap();
        assert_eq!(r.name(), "unit_rep");
        assert_eq!(file_size(r, &basic(MPI_INT)).unwrap(), 8);
        assert_eq!(type_extent(r, &basic(MPI_SHORT)).unwrap(), 8);
        assert_eq!(
            Datarep::parse("no_such").unwrap_err().class(),
            MPI_ERR_UNSUPPORTED_DATAREP
        );
        let long = "x".repeat(MPI_MAX_DATAREP_STRING as usize);
        let e = register(&long, Conversion::Null, Conversion::Null, ext, 0).unwrap_err();
        assert_eq!(e.class(), MPI_ERR_ARG);
    }
}
