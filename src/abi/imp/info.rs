//! Info objects: the C functions (`MPI_Info_*`). They work before `MPI_Init` and after
//! `MPI_Finalize` (the table lives outside the runtime, see `core::objects::info`). Keys and values are
//! C strings; bytes that are not UTF-8 are stored with replacement characters.

use super::util::out;
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::core::error::{fail, MpiResult};
use crate::core::objects::info::{self, check_key, check_value, Info};
use core::ffi::{c_char, c_int, CStr};

/// A key argument: `MPI_ERR_INFO_KEY` when NULL, empty or too long.
unsafe fn key_arg(key: *const c_char) -> MpiResult<String> {
    if key.is_null() {
        return fail(MPI_ERR_INFO_KEY, "the info key is NULL");
    }
    // SAFETY: a non-NULL key is a NUL-terminated C string (C contract).
    let k = unsafe { CStr::from_ptr(key) }
        .to_string_lossy()
        .into_owned();
    check_key(&k)?;
    Ok(k)
}

/// Copies `text` and a NUL into `dst`, which holds `cap` bytes (`cap >= 1`), truncating.
unsafe fn copy_out(text: &str, dst: *mut c_char, cap: usize) {
    let n = text.len().min(cap - 1);
    // SAFETY: the caller's buffer holds `cap` bytes (checked non-NULL by the callers).
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), dst.cast::<u8>(), n);
        *dst.add(n) = 0;
    }
}

/// Stores a new info object in `*slot`.
unsafe fn new_info(slot: *mut MPI_Info, make: impl FnOnce() -> MpiResult<usize>) -> MpiResult<()> {
    let slot = out(slot, "info")?;
    *slot = make()? as MPI_Info;
    Ok(())
}

pub(crate) unsafe fn MPI_Info_create(info: *mut MPI_Info) -> MpiResult<()> {
    new_info(info, || info::create(Info::default()))
}

pub(crate) unsafe fn MPI_Info_set(
    info: MPI_Info,
    key: *const c_char,
    value: *const c_char,
) -> MpiResult<()> {
    info::with(info as usize, |_| ())?;
    let k = key_arg(key)?;
    if value.is_null() {
        return fail(MPI_ERR_INFO_VALUE, "the info value is NULL");
    }
    // SAFETY: a non-NULL value is a NUL-terminated C string (C contract).
    let v = unsafe { CStr::from_ptr(value) }.to_string_lossy();
    check_value(&v)?;
    info::with_mut(info as usize, |i| {
        i.set(&k, &v);
        Ok(())
    })
}

pub(crate) unsafe fn MPI_Info_delete(info: MPI_Info, key: *const c_char) -> MpiResult<()> {
    info::with(info as usize, |_| ())?;
    let k = key_arg(key)?;
    info::with_mut(info as usize, |i| {
        if i.delete(&k) {
            Ok(())
        } else {
            fail(
                MPI_ERR_INFO_NOKEY,
                format!("MPI_Info_delete: the key \"{k}\" is not set"),
            )
        }
    })
}

pub(crate) unsafe fn MPI_Info_get_string(
    info: MPI_Info,
    key: *const c_char,
    buflen: *mut c_int,
    value: *mut c_char,
    flag: *mut c_int,
) -> MpiResult<()> {
    info::with(info as usize, |_| ())?;
    let k = key_arg(key)?;
    let len = out(buflen, "buflen")?;
    let flag = out(flag, "flag")?;
    if *len < 0 {
        return fail(MPI_ERR_ARG, format!("buflen = {} is negative", *len));
    }
    if *len > 0 && value.is_null() {
        return fail(MPI_ERR_ARG, "value must not be NULL when buflen > 0");
    }
    let found = info::with(info as usize, |i| i.get(&k).map(str::to_string))?;
    match found {
        Some(v) => {
            if *len > 0 {
                // SAFETY: `value` holds `*len` bytes (C contract), checked non-NULL above.
                unsafe { copy_out(&v, value, *len as usize) };
            }
            *len = v.len() as c_int + 1;
            *flag = 1;
        }
        None => *flag = 0,
    }
    Ok(())
}

pub(crate) unsafe fn MPI_Info_get(
    info: MPI_Info,
    key: *const c_char,
    valuelen: c_int,
    value: *mut c_char,
    flag: *mut c_int,
) -> MpiResult<()> {
    info::with(info as usize, |_| ())?;
    let k = key_arg(key)?;
    if valuelen < 0 {
        return fail(MPI_ERR_ARG, format!("valuelen = {valuelen} is negative"));
    }
    if value.is_null() {
        return fail(MPI_ERR_ARG, "value must not be NULL");
    }
    let flag = out(flag, "flag")?;
    match info::with(info as usize, |i| i.get(&k).map(str::to_string))? {
        Some(v) => {
            // `valuelen` counts characters; the buffer holds one more for the NUL.
            // SAFETY: `value` holds `valuelen + 1` bytes (C contract), checked non-NULL.
            unsafe { copy_out(&v, value, valuelen as usize + 1) };
            *flag = 1;
        }
        None => *flag = 0,
    }
    Ok(())
}

pub(crate) unsafe fn MPI_Info_get_valuelen(
    info: MPI_Info,
    key: *const c_char,
    valuelen: *mut c_int,
    flag: *mut c_int,
) -> MpiResult<()> {
    info::with(info as usize, |_| ())?;
    let k = key_arg(key)?;
    let len = out(valuelen, "valuelen")?;
    let flag = out(flag, "flag")?;
    match info::with(info as usize, |i| i.get(&k).map(str::len))? {
        Some(n) => {
            *len = n as c_int;
            *flag = 1;
        }
        None => *flag = 0,
    }
    Ok(())
}

pub(crate) unsafe fn MPI_Info_get_nkeys(info: MPI_Info, nkeys: *mut c_int) -> MpiResult<()> {
    let n = info::with(info as usize, |i| i.entries.len() as c_int)?;
    *out(nkeys, "nkeys")? = n;
    Ok(())
}

pub(crate) unsafe fn MPI_Info_get_nthkey(
    info: MPI_Info,
    n: c_int,
    key: *mut c_char,
) -> MpiResult<()> {
    let k = info::with(info as usize, |i| {
        usize::try_from(n)
            .ok()
            .and_then(|n| i.entries.get(n))
            .map(|(k, _)| k.clone())
            .ok_or(i.entries.len())
    })?;
    let k = match k {
        Ok(k) => k,
        Err(nkeys) => {
            return fail(
                MPI_ERR_ARG,
                format!("n = {n} is not the number of a key (the info object has {nkeys})"),
            )
        }
    };
    if key.is_null() {
        return fail(MPI_ERR_ARG, "key must not be NULL");
    }
    // SAFETY: `key` holds MPI_MAX_INFO_KEY bytes (C contract); keys are shorter.
    unsafe { copy_out(&k, key, MPI_MAX_INFO_KEY as usize) };
    Ok(())
}

pub(crate) unsafe fn MPI_Info_dup(info: MPI_Info, newinfo: *mut MPI_Info) -> MpiResult<()> {
    let copy = info::lookup(info as usize)?;
    new_info(newinfo, || info::create(copy))
}

pub(crate) unsafe fn MPI_Info_free(info: *mut MPI_Info) -> MpiResult<()> {
    let slot = out(info, "info")?;
    info::free(*slot as usize)?;
    *slot = MPI_INFO_NULL as MPI_Info;
    Ok(())
}

pub(crate) unsafe fn MPI_Info_create_env(
    argc: c_int,
    argv: *mut *mut c_char,
    info: *mut MPI_Info,
) -> MpiResult<()> {
    let args: Option<Vec<String>> = if argc <= 0 || argv.is_null() {
        None
    } else {
        let mut v = Vec::with_capacity(argc as usize);
        for i in 0..argc as usize {
            // SAFETY: `argv` holds `argc` pointers (C contract: main's arguments).
            let p = unsafe { *argv.add(i) };
            if p.is_null() {
                break;
            }
            // SAFETY: each non-NULL entry is a NUL-terminated C string.
            v.push(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned());
        }
        Some(v)
    };
    new_info(info, || info::create_env(args.as_deref()))
}
