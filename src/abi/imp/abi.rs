//! The MPI-5.0 ABI chapter: version query and handle/integer conversions.
//!
//! Integer form of a handle: predefined handles convert to their ABI value (< 0x1000); user
//! handles convert to their value without the generation (`((index + 1) << 12) | kind`, which
//! fits an `int` for up to 2^19 live objects of a kind), and back by looking up the object's
//! current generation — an integer of a freed object converts to the null handle.

use super::util::out;
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::core::error::MpiResult;
use crate::core::objects::slab::kind;
use crate::core::runtime::{self, Runtime};
use core::ffi::c_int;

pub(crate) unsafe fn MPI_Abi_get_version(
    abi_major: *mut c_int,
    abi_minor: *mut c_int,
) -> MpiResult<()> {
    *out(abi_major, "abi_major")? = MPI_ABI_VERSION;
    *out(abi_minor, "abi_minor")? = MPI_ABI_SUBVERSION;
    Ok(())
}

#[inline]
fn to_int(h: usize) -> MpiResult<c_int> {
    Ok((h & 0xffff_ffff) as u32 as c_int)
}

/// Rebuilds a handle from its integer form; `null` when the object is gone or the kind has no
/// user objects yet.
fn from_int(i: c_int, null: usize, lookup: impl Fn(u32) -> Option<usize>) -> MpiResult<usize> {
    let v = i as u32 as usize;
    if v < 0x1000 {
        return Ok(v);
    }
    let index = ((v >> 12) & 0xfffff) as u32;
    Ok(index.checked_sub(1).and_then(lookup).unwrap_or(null))
}

/// Looks an object up in the runtime's tables (none before `MPI_Init` or after finalize).
fn in_runtime(f: impl FnOnce(&Runtime) -> Option<usize>) -> Option<usize> {
    runtime::with(|rt| Ok(f(rt))).ok().flatten()
}

macro_rules! conversions {
    ($($toint:ident, $fromint:ident, $ty:ty, $null:expr, $kind:expr, $lookup:expr;)*) => {$(
        pub(crate) unsafe fn $toint(h: $ty) -> MpiResult<c_int> {
            to_int(h as usize)
        }
        pub(crate) unsafe fn $fromint(i: c_int) -> MpiResult<$ty> {
            let _ = $kind;
            from_int(i, $null, $lookup).map(|h| h as $ty)
        }
    )*};
}

/// `MPI_Request_toint`. Requests of VCI 0 convert like other handles; a request of VCI `v > 0`
/// converts to `(1 << 31) | (v << 25) | ((index + 1) << 12) | kind` (for its first 8191 slots).
pub(crate) unsafe fn MPI_Request_toint(h: MPI_Request) -> MpiResult<c_int> {
    let h = h as usize;
    let v = crate::core::objects::slab::Slab::<()>::tag_of(h);
    if h < 0x1000 || v == 0 {
        return to_int(h);
    }
    let slot = (h >> 12) & 0xfffff;
    if slot >= 1 << 13 {
        return crate::core::error::fail(
            MPI_ERR_REQUEST,
            "this request has no integer form (too many requests outstanding on its VCI)",
        );
    }
    Ok(((1u32 << 31) | ((v as u32) << 25) | ((slot as u32) << 12) | (h & 0xfff) as u32) as c_int)
}

/// `MPI_Request_fromint`: the inverse of [`MPI_Request_toint`]; the null request when the
/// request is gone.
pub(crate) unsafe fn MPI_Request_fromint(i: c_int) -> MpiResult<MPI_Request> {
    let u = i as u32;
    if u < 0x1000 {
        return Ok(u as usize as MPI_Request);
    }
    let (v, slot) = if u & (1 << 31) != 0 {
        (((u >> 25) & 63) as usize, (u >> 12) & 0x1fff)
    } else {
        (0, (u >> 12) & 0x7ffff)
    };
    let h = in_runtime(|rt| {
        slot.checked_sub(1)
            .and_then(|ix| rt.reqs.at(v, ix))
            .map(|rid| rt.reqs.handle(rid))
    })
    .unwrap_or(MPI_REQUEST_NULL);
    Ok(h as MPI_Request)
}

conversions! {
    MPI_Comm_toint, MPI_Comm_fromint, MPI_Comm, MPI_COMM_NULL, kind::COMM, |ix| in_runtime(|rt| rt.comms.get(ix).map(|_| rt.comms.handle(ix)));
    MPI_Errhandler_toint, MPI_Errhandler_fromint, MPI_Errhandler, MPI_ERRHANDLER_NULL, kind::ERRHANDLER, crate::core::objects::errhandler::handle_at;
    MPI_Message_toint, MPI_Message_fromint, MPI_Message, MPI_MESSAGE_NULL, kind::MESSAGE, |ix| in_runtime(|rt| rt.messages.get(ix).map(|_| rt.messages.handle(ix)));
    MPI_Type_toint, MPI_Type_fromint, MPI_Datatype, MPI_DATATYPE_NULL, kind::DATATYPE, |ix| in_runtime(|rt| rt.types.get(ix).map(|_| rt.types.handle(ix)));
    MPI_Op_toint, MPI_Op_fromint, MPI_Op, MPI_OP_NULL, kind::OP, |ix| in_runtime(|rt| rt.ops.get(ix).map(|_| rt.ops.handle(ix)));
    MPI_Group_toint, MPI_Group_fromint, MPI_Group, MPI_GROUP_NULL, kind::GROUP, |ix| in_runtime(|rt| rt.groups.get(ix).map(|_| rt.groups.handle(ix)));
    MPI_Info_toint, MPI_Info_fromint, MPI_Info, MPI_INFO_NULL, kind::INFO, crate::core::objects::info::handle_at;
    MPI_Win_toint, MPI_Win_fromint, MPI_Win, MPI_WIN_NULL, kind::WIN, |ix| in_runtime(|rt| rt.wins.get(ix).map(|_| rt.wins.handle(ix)));
    MPI_File_toint, MPI_File_fromint, MPI_File, MPI_FILE_NULL, kind::FILE, |ix| in_runtime(|rt| rt.files.get(ix).map(|_| rt.files.handle(ix)));
    MPI_Session_toint, MPI_Session_fromint, MPI_Session, MPI_SESSION_NULL, kind::SESSION, crate::core::objects::session::handle_at;
}

/// Defines `MPI_X_c2f` / `MPI_X_f2c` (the standard's handle conversions to and from Fortran
/// `INTEGER`s, which C clients such as rsmpi call): `MPI_Fint` is a C `int`, and a handle's
/// Fortran integer is its integer form (`MPI_X_toint` / `MPI_X_fromint`).
macro_rules! fortran_conversions {
    ($($c2f:ident, $f2c:ident, $toint:ident, $fromint:ident, $handle:ty;)*) => {$(
        #[doc = concat!("`", stringify!($c2f), "`: [`", stringify!($toint), "`].")]
        pub(crate) unsafe fn $c2f(h: $handle) -> MpiResult<MPI_Fint> {
            // SAFETY: the caller's argument, forwarded.
            unsafe { $toint(h) }
        }
        #[doc = concat!("`", stringify!($f2c), "`: [`", stringify!($fromint), "`].")]
        pub(crate) unsafe fn $f2c(i: MPI_Fint) -> MpiResult<$handle> {
            // SAFETY: the caller's argument, forwarded.
            unsafe { $fromint(i) }
        }
    )*};
}

fortran_conversions! {
    MPI_Comm_c2f, MPI_Comm_f2c, MPI_Comm_toint, MPI_Comm_fromint, MPI_Comm;
    MPI_Errhandler_c2f, MPI_Errhandler_f2c, MPI_Errhandler_toint, MPI_Errhandler_fromint, MPI_Errhandler;
    MPI_File_c2f, MPI_File_f2c, MPI_File_toint, MPI_File_fromint, MPI_File;
    MPI_Group_c2f, MPI_Group_f2c, MPI_Group_toint, MPI_Group_fromint, MPI_Group;
    MPI_Info_c2f, MPI_Info_f2c, MPI_Info_toint, MPI_Info_fromint, MPI_Info;
    MPI_Message_c2f, MPI_Message_f2c, MPI_Message_toint, MPI_Message_fromint, MPI_Message;
    MPI_Op_c2f, MPI_Op_f2c, MPI_Op_toint, MPI_Op_fromint, MPI_Op;
    MPI_Request_c2f, MPI_Request_f2c, MPI_Request_toint, MPI_Request_fromint, MPI_Request;
    MPI_Session_c2f, MPI_Session_f2c, MPI_Session_toint, MPI_Session_fromint, MPI_Session;
    MPI_Type_c2f, MPI_Type_f2c, MPI_Type_toint, MPI_Type_fromint, MPI_Datatype;
    MPI_Win_c2f, MPI_Win_f2c, MPI_Win_toint, MPI_Win_fromint, MPI_Win;
}

/// `MPI_Abi_get_fortran_info`: `MPI_INFO_NULL`, since no Fortran ABI is known: hympi has no
/// Fortran bindings, and `MPI_Abi_set_fortran_info` (not implemented) never set one.
pub(crate) unsafe fn MPI_Abi_get_fortran_info(info: *mut MPI_Info) -> MpiResult<()> {
    let slot = out(info, "info")?;
    *slot = MPI_INFO_NULL as MPI_Info;
    Ok(())
}

/// `MPI_Get_hw_resource_info` (MPI-4.1): a new info object describing the hardware the
/// calling process runs on (hwloc): `mpi_hw_resource_types` lists the levels that
/// `MPI_Comm_split_type(MPI_COMM_TYPE_HW_GUIDED)` takes (`hwloc://Package`, ...), and for each
/// level `hympi_hw_<level>_count` (objects of it on the node) and `hympi_hw_<level>_index`
/// (the logical index of the one holding this process's CPUs, -1 when they span several).
pub(crate) unsafe fn MPI_Get_hw_resource_info(hw_info: *mut MPI_Info) -> MpiResult<()> {
    let slot = out(hw_info, "hw_info")?;
    runtime::with(|_| Ok(()))?;
    let mut i = crate::core::objects::info::Info::default();
    let levels = crate::core::runtime::hwtopo::LEVELS;
    let names: Vec<String> = levels.iter().map(|(_, n)| format!("hwloc://{n}")).collect();
    i.set("mpi_hw_resource_types", &names.join(","));
    let counts = crate::core::runtime::hwtopo::object_counts();
    let within = crate::core::runtime::hwtopo::containing_objects();
    for (k, (_, n)) in levels.iter().enumerate() {
        let n = n.to_ascii_lowercase();
        i.set(&format!("hympi_hw_{n}_count"), &counts[k].to_string());
        i.set(&format!("hympi_hw_{n}_index"), &within[k].to_string());
    }
    *slot = crate::core::objects::info::create(i)? as MPI_Info;
    Ok(())
}

/// `MPI_Abi_get_info`: a new info object with the sizes, in bytes, of the ABI's integer types
/// (`mpi_aint_size`, `mpi_count_size`, `mpi_offset_size`).
pub(crate) unsafe fn MPI_Abi_get_info(info: *mut MPI_Info) -> MpiResult<()> {
    let slot = out(info, "info")?;
    let mut i = crate::core::objects::info::Info::default();
    i.set(
        "mpi_aint_size",
        &std::mem::size_of::<MPI_Aint>().to_string(),
    );
    i.set(
        "mpi_count_size",
        &std::mem::size_of::<MPI_Count>().to_string(),
    );
    i.set(
        "mpi_offset_size",
        &std::mem::size_of::<MPI_Offset>().to_string(),
    );
    *slot = crate::core::objects::info::create(i)? as MPI_Info;
    Ok(())
}
