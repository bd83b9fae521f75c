//! Attribute caching on communicators: keyvals, set/get/delete, and the copy and delete
//! callbacks run by `MPI_Comm_dup` and `MPI_Comm_free`.

use super::util::out;
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::core::error::{fail, MpiError, MpiResult};
use crate::core::objects::attr::{is_predefined, AttrEntry, CopyAction, Keyval, ObjKind};
use crate::core::runtime::{self, Runtime};
use core::ffi::{c_int, c_void};

type CopyFn =
    unsafe extern "C" fn(usize, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;
type DeleteFn = unsafe extern "C" fn(usize, c_int, *mut c_void, *mut c_void) -> c_int;

/// Values of the predefined attributes of `MPI_COMM_WORLD`, at stable addresses (the
/// attribute value handed to the user is a pointer to one of these).
static PREDEFINED_VALUES: [std::sync::atomic::AtomicI32; 8] =
    [const { std::sync::atomic::AtomicI32::new(0) }; 8];

/// Sets the value of predefined attribute `keyval`.
pub(crate) fn set_predefined(keyval: i32, value: i32) {
    PREDEFINED_VALUES[(keyval - MPI_TAG_UB) as usize]
        .store(value, std::sync::atomic::Ordering::Relaxed);
}

/// The C address of predefined attribute `keyval`'s value.
fn predefined_addr(keyval: i32) -> usize {
    PREDEFINED_VALUES[(keyval - MPI_TAG_UB) as usize].as_ptr() as usize
}

fn keyval_def(copy: *mut c_void, delete: *mut c_void, extra: *mut c_void, kind: ObjKind) -> Keyval {
    Keyval {
        copy: match copy as usize {
            0 => CopyAction::Null,
            1 => CopyAction::Dup,
            f => CopyAction::User(f),
        },
        delete: match delete as usize {
            0 => None,
            f => Some(f),
        },
        extra: extra as usize,
        kind,
        freed: false,
        refs: 0,
    }
}

/// Runs the copy callbacks of `attrs` of the object `handle` being duplicated; returns the
/// attributes of the copy. Called outside the runtime.
pub(crate) unsafe fn copy_attrs(
    handle: usize,
    attrs: &[AttrEntry],
) -> MpiResult<Vec<(i32, usize)>> {
    let mut copied = Vec::new();
    for a in attrs {
        match a.def.copy {
            CopyAction::Null => {}
            CopyAction::Dup => copied.push((a.keyval, a.value)),
            CopyAction::User(f) => {
                // SAFETY: `f` was registered through MPI_*_create_keyval as a copy function
                // with this C signature.
                let f: CopyFn = unsafe { std::mem::transmute(f) };
                let mut outv: usize = 0;
                let mut flag: c_int = 0;
                // SAFETY: calling the user's callback with valid pointers to locals.
                let rc = unsafe {
                    f(
                        handle,
                        a.keyval,
                        a.def.extra as *mut c_void,
                        a.value as *mut c_void,
                        (&mut outv as *mut usize).cast(),
                        &mut flag,
                    )
                };
                if rc != MPI_SUCCESS {
                    return Err(MpiError::new(
                        rc,
                        format!(
                            "the copy callback of keyval {} returned error {rc}",
                            a.keyval
                        ),
                    ));
                }
                if flag != 0 {
                    copied.push((a.keyval, outv));
                }
            }
        }
    }
    Ok(copied)
}

/// Runs the delete callback of one attribute. Called outside the runtime.
pub(crate) unsafe fn delete_one(handle: usize, a: &AttrEntry) -> MpiResult<()> {
    if let Some(f) = a.def.delete {
        // SAFETY: `f` was registered through MPI_*_create_keyval as a delete function with
        // this C signature.
        let f: DeleteFn = unsafe { std::mem::transmute(f) };
        // SAFETY: plain values are passed.
        let rc = unsafe {
            f(
                handle,
                a.keyval,
                a.value as *mut c_void,
                a.def.extra as *mut c_void,
            )
        };
        if rc != MPI_SUCCESS {
            return Err(MpiError::new(
                rc,
                format!(
                    "the delete callback of keyval {} returned error {rc}",
                    a.keyval
                ),
            ));
        }
    }
    Ok(())
}

/// Deletes all attributes of communicator handle `h` (last set first), as `MPI_Comm_free`
/// and `MPI_Finalize` (for `MPI_COMM_SELF`) do. Called outside the runtime.
pub(crate) unsafe fn delete_all_comm_attrs(h: usize) -> MpiResult<()> {
    loop {
        let next = runtime::with(|rt| {
            let (idx, c) = rt.comm(h)?;
            Ok(c.attrs
                .last()
                .copied()
                .map(|a| (idx, rt.keyvals.entries(&[a]))))
        })?;
        let Some((idx, entries)) = next else {
            return Ok(());
        };
        if let Some(e) = entries.first() {
            // SAFETY: see delete_one.
            unsafe { delete_one(h, e)? };
        }
        runtime::with(|rt| {
            if let Some(c) = rt.comms.get_mut(idx) {
                if let Some((k, _)) = c.attrs.pop() {
                    rt.keyvals.detach(k);
                }
            }
            Ok(())
        })?;
    }
}

/// The attributes of communicator `idx` with their keyval definitions.
pub(crate) fn comm_attr_entries(rt: &Runtime, idx: u32) -> Vec<AttrEntry> {
    rt.keyvals.entries(
        &rt.comms
            .get(idx)
            .map(|c| c.attrs.clone())
            .unwrap_or_default(),
    )
}

pub(crate) unsafe fn MPI_Comm_create_keyval(
    comm_copy_attr_fn: *mut c_void,
    comm_delete_attr_fn: *mut c_void,
    comm_keyval: *mut c_int,
    extra_state: *mut c_void,
) -> MpiResult<()> {
    let slot = out(comm_keyval, "comm_keyval")?;
    let def = keyval_def(
        comm_copy_attr_fn,
        comm_delete_attr_fn,
        extra_state,
        ObjKind::Comm,
    );
    *slot = runtime::with(|rt| rt.keyvals.create(def))?;
    Ok(())
}

pub(crate) unsafe fn MPI_Comm_free_keyval(comm_keyval: *mut c_int) -> MpiResult<()> {
    let slot = out(comm_keyval, "comm_keyval")?;
    if is_predefined(*slot) {
        return fail(
            MPI_ERR_KEYVAL,
            format!("keyval {} is predefined and cannot be freed", *slot),
        );
    }
    runtime::with(|rt| rt.keyvals.free(*slot, ObjKind::Comm))?;
    *slot = MPI_KEYVAL_INVALID;
    Ok(())
}

pub(crate) unsafe fn MPI_Comm_set_attr(
    comm: MPI_Comm,
    comm_keyval: c_int,
    attribute_val: *mut c_void,
) -> MpiResult<()> {
    if is_predefined(comm_keyval) {
        return fail(
            MPI_ERR_KEYVAL,
            format!("predefined attribute {comm_keyval} cannot be set"),
        );
    }
    let h = comm as usize;
    // Replacing a value runs the delete callback on the old one first.
    let old = runtime::with(|rt| {
        let (idx, c) = rt.comm(h)?;
        let def = rt.keyvals.get(comm_keyval, ObjKind::Comm)?;
        let old = c
            .attrs
            .iter()
            .find(|a| a.0 == comm_keyval)
            .map(|a| AttrEntry {
                keyval: comm_keyval,
                value: a.1,
                def,
            });
        let _ = idx;
        Ok(old)
    })?;
    if let Some(e) = old {
        // SAFETY: see delete_one.
        unsafe { delete_one(h, &e)? };
    }
    runtime::with(|rt| {
        let (idx, _) = rt.comm(h)?;
        let value = attribute_val as usize;
        let c = rt.comms.get_mut(idx).unwrap();
        match c.attrs.iter_mut().find(|a| a.0 == comm_keyval) {
            Some(a) => a.1 = value,
            None => {
                c.attrs.push((comm_keyval, value));
                rt.keyvals.attach(comm_keyval);
            }
        }
        Ok(())
    })
}

pub(crate) unsafe fn MPI_Comm_get_attr(
    comm: MPI_Comm,
    comm_keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> MpiResult<()> {
    let flag = out(flag, "flag")?;
    let dst = out(attribute_val.cast::<usize>(), "attribute_val")?;
    let found = runtime::with(|rt| {
        let (idx, c) = rt.comm(comm as usize)?;
        if is_predefined(comm_keyval) {
            let on_world = idx == crate::core::objects::comm::WORLD;
            return Ok(on_world.then(|| predefined_addr(comm_keyval)));
        }
        rt.keyvals.get(comm_keyval, ObjKind::Comm)?;
        Ok(c.attrs.iter().find(|a| a.0 == comm_keyval).map(|a| a.1))
    })?;
    match found {
        Some(v) => {
            *dst = v;
            *flag = 1;
        }
        None => *flag = 0,
    }
    Ok(())
}

pub(crate) unsafe fn MPI_Comm_delete_attr(comm: MPI_Comm, comm_keyval: c_int) -> MpiResult<()> {
    if is_predefined(comm_keyval) {
        return fail(
            MPI_ERR_KEYVAL,
            format!("predefined attribute {comm_keyval} cannot be deleted"),
        );
    }
    let h = comm as usize;
    let entry = runtime::with(|rt| {
        let (_, c) = rt.comm(h)?;
        let def = rt.keyvals.get(comm_keyval, ObjKind::Comm)?;
        match c.attrs.iter().find(|a| a.0 == comm_keyval) {
            Some(a) => Ok(AttrEntry {
                keyval: comm_keyval,
                value: a.1,
                def,
            }),
            None => fail(
                MPI_ERR_KEYVAL,
                format!("the communicator has no attribute for keyval {comm_keyval}"),
            ),
        }
    })?;
    // SAFETY: see delete_one.
    unsafe { delete_one(h, &entry)? };
    runtime::with(|rt| {
        let (idx, _) = rt.comm(h)?;
        let c = rt.comms.get_mut(idx).unwrap();
        let before = c.attrs.len();
        c.attrs.retain(|a| a.0 != comm_keyval);
        if c.attrs.len() != before {
            rt.keyvals.detach(comm_keyval);
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// the MPI-1 attribute interface (deprecated since MPI-2.0, still in MPI-5.0): communicator
// attributes under their old names. `MPI_Copy_function` and `MPI_Delete_function` have the
// signatures of `MPI_Comm_copy_attr_function` and `MPI_Comm_delete_attr_function`, and
// `MPI_NULL_COPY_FN` / `MPI_DUP_FN` / `MPI_NULL_DELETE_FN` the values of their `MPI_COMM_`
// counterparts, so each call is the communicator call.

pub(crate) unsafe fn MPI_Keyval_create(
    copy_fn: *mut c_void,
    delete_fn: *mut c_void,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> MpiResult<()> {
    // SAFETY: same contract as MPI_Comm_create_keyval (the callbacks have its signatures).
    unsafe { MPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state) }
}

pub(crate) unsafe fn MPI_Keyval_free(keyval: *mut c_int) -> MpiResult<()> {
    // SAFETY: same contract as MPI_Comm_free_keyval.
    unsafe { MPI_Comm_free_keyval(keyval) }
}

pub(crate) unsafe fn MPI_Attr_put(
    comm: MPI_Comm,
    keyval: c_int,
    attribute_val: *mut c_void,
) -> MpiResult<()> {
    // SAFETY: same contract as MPI_Comm_set_attr.
    unsafe { MPI_Comm_set_attr(comm, keyval, attribute_val) }
}

pub(crate) unsafe fn MPI_Attr_get(
    comm: MPI_Comm,
    keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> MpiResult<()> {
    // SAFETY: same contract as MPI_Comm_get_attr.
    unsafe { MPI_Comm_get_attr(comm, keyval, attribute_val, flag) }
}

pub(crate) unsafe fn MPI_Attr_delete(comm: MPI_Comm, keyval: c_int) -> MpiResult<()> {
    // SAFETY: same contract as MPI_Comm_delete_attr.
    unsafe { MPI_Comm_delete_attr(comm, keyval) }
}

// ---------------------------------------------------------------------------------------------
// datatype attributes

/// The attribute list of datatype `h` (predefined types keep theirs in a side table).
fn type_attrs_mut(rt: &mut Runtime, h: usize) -> MpiResult<&mut Vec<(i32, usize)>> {
    if crate::core::datatype::predefined(h).is_some() {
        return Ok(rt.predefined_type_attrs.entry(h).or_default());
    }
    rt.type_entry(h)?;
    let i = rt.types.decode(h).expect("checked above");
    Ok(&mut rt.types.get_mut(i).unwrap().attrs)
}

/// The attributes of datatype `h` with their keyval definitions.
pub(crate) fn type_attr_entries(rt: &mut Runtime, h: usize) -> MpiResult<Vec<AttrEntry>> {
    let attrs = type_attrs_mut(rt, h)?.clone();
    Ok(rt.keyvals.entries(&attrs))
}

/// Attaches copied attributes to a new datatype (`MPI_Type_dup`).
pub(crate) fn attach_type_attrs(
    rt: &mut Runtime,
    h: usize,
    attrs: Vec<(i32, usize)>,
) -> MpiResult<()> {
    for &(k, _) in &attrs {
        rt.keyvals.attach(k);
    }
    *type_attrs_mut(rt, h)? = attrs;
    Ok(())
}

/// Deletes all attributes of datatype `h` (last set first), as `MPI_Type_free` does. Called
/// outside the runtime.
pub(crate) unsafe fn delete_all_type_attrs(h: usize) -> MpiResult<()> {
    loop {
        let next = runtime::with(|rt| {
            let last = type_attrs_mut(rt, h)?.last().copied();
            Ok(last.map(|a| rt.keyvals.entries(&[a])))
        })?;
        let Some(entries) = next else {
            return Ok(());
        };
        if let Some(e) = entries.first() {
            // SAFETY: see delete_one.
            unsafe { delete_one(h, e)? };
        }
        runtime::with(|rt| {
            if let Some((k, _)) = type_attrs_mut(rt, h)?.pop() {
                rt.keyvals.detach(k);
            }
            Ok(())
        })?;
    }
}

pub(crate) unsafe fn MPI_Type_create_keyval(
    type_copy_attr_fn: *mut c_void,
    type_delete_attr_fn: *mut c_void,
    type_keyval: *mut c_int,
    extra_state: *mut c_void,
) -> MpiResult<()> {
    let slot = out(type_keyval, "type_keyval")?;
    let def = keyval_def(
        type_copy_attr_fn,
        type_delete_attr_fn,
        extra_state,
        ObjKind::Type,
    );
    *slot = runtime::with(|rt| rt.keyvals.create(def))?;
    Ok(())
}

pub(crate) unsafe fn MPI_Type_free_keyval(type_keyval: *mut c_int) -> MpiResult<()> {
    let slot = out(type_keyval, "type_keyval")?;
    runtime::with(|rt| rt.keyvals.free(*slot, ObjKind::Type))?;
    *slot = MPI_KEYVAL_INVALID;
    Ok(())
}

pub(crate) unsafe fn MPI_Type_set_attr(
    datatype: MPI_Datatype,
    type_keyval: c_int,
    attribute_val: *mut c_void,
) -> MpiResult<()> {
    let h = datatype as usize;
    let old = runtime::with(|rt| {
        let def = rt.keyvals.get(type_keyval, ObjKind::Type)?;
        let list = type_attrs_mut(rt, h)?;
        Ok(list.iter().find(|a| a.0 == type_keyval).map(|a| AttrEntry {
            keyval: type_keyval,
            value: a.1,
            def,
        }))
    })?;
    if let Some(e) = old {
        // SAFETY: see delete_one.
        unsafe { delete_one(h, &e)? };
    }
    runtime::with(|rt| {
        let value = attribute_val as usize;
        let list = type_attrs_mut(rt, h)?;
        match list.iter_mut().find(|a| a.0 == type_keyval) {
            Some(a) => a.1 = value,
            None => {
                list.push((type_keyval, value));
                rt.keyvals.attach(type_keyval);
            }
        }
        Ok(())
    })
}

pub(crate) unsafe fn MPI_Type_get_attr(
    datatype: MPI_Datatype,
    type_keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> MpiResult<()> {
    let flag = out(flag, "flag")?;
    let dst = out(attribute_val.cast::<usize>(), "attribute_val")?;
    let found = runtime::with(|rt| {
        rt.keyvals.get(type_keyval, ObjKind::Type)?;
        let list = type_attrs_mut(rt, datatype as usize)?;
        Ok(list.iter().find(|a| a.0 == type_keyval).map(|a| a.1))
    })?;
    match found {
        Some(v) => {
            *dst = v;
            *flag = 1;
        }
        None => *flag = 0,
    }
    Ok(())
}

pub(crate) unsafe fn MPI_Type_delete_attr(
    datatype: MPI_Datatype,
    type_keyval: c_int,
) -> MpiResult<()> {
    let h = datatype as usize;
    let entry = runtime::with(|rt| {
        let def = rt.keyvals.get(type_keyval, ObjKind::Type)?;
        let list = type_attrs_mut(rt, h)?;
        match list.iter().find(|a| a.0 == type_keyval) {
            Some(a) => Ok(AttrEntry {
                keyval: type_keyval,
                value: a.1,
                def,
            }),
            None => fail(
                MPI_ERR_KEYVAL,
                format!("the datatype has no attribute for keyval {type_keyval}"),
            ),
        }
    })?;
    // SAFETY: see delete_one.
    unsafe { delete_one(h, &entry)? };
    runtime::with(|rt| {
        let list = type_attrs_mut(rt, h)?;
        let before = list.len();
        list.retain(|a| a.0 != type_keyval);
        if list.len() != before {
            rt.keyvals.detach(type_keyval);
        }
        Ok(())
    })
}

/// `MPI_*_create_keyval` for objects of `kind`.
pub(crate) unsafe fn create_keyval(
    copy_fn: *mut c_void,
    delete_fn: *mut c_void,
    keyval: *mut c_int,
    extra_state: *mut c_void,
    kind: ObjKind,
) -> MpiResult<()> {
    let slot = out(keyval, "keyval")?;
    let def = keyval_def(copy_fn, delete_fn, extra_state, kind);
    *slot = runtime::with(|rt| rt.keyvals.create(def))?;
    Ok(())
}
