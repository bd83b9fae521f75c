//! Rust mirrors of the C types of `mpi.h` (MPI-5.0 standard ABI).
#![allow(non_camel_case_types, non_snake_case)]

/// `MPI_Aint`: an address-sized signed integer.
pub type MPI_Aint = isize;
/// `MPI_Offset`: a file offset.
pub type MPI_Offset = i64;
/// `MPI_Count`: a large count.
pub type MPI_Count = i64;
/// `MPI_Fint`: a Fortran integer.
pub type MPI_Fint = i32;
/// `MPI_T_cb_safety`: the callback safety level of the tool interface (`MPI_T_CB_REQUIRE_*`).
pub type MPI_T_cb_safety = i32;
/// `MPI_T_source_order`: the ordering guarantee of an event source (`MPI_T_SOURCE_*`).
pub type MPI_T_source_order = i32;

/// `MPI_Status`: 8 ints. hympi keeps the received byte count in `MPI_internal[0..2]` (low and
/// high halves) and the cancelled flag in `MPI_internal[2]`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MPI_Status {
    /// Source rank of the message.
    pub MPI_SOURCE: i32,
    /// Tag of the message.
    pub MPI_TAG: i32,
    /// Error code of the operation (set by the multi-completion calls).
    pub MPI_ERROR: i32,
    /// Implementation fields.
    pub MPI_internal: [i32; 5],
}

macro_rules! opaque_handles {
    ($($name:ident => $inner:ident),* $(,)?) => {$(
        /// Opaque object behind a handle (never dereferenced from Rust).
        #[repr(C)]
        pub struct $inner { _private: [u8; 0] }
        /// Handle: a pointer-sized value; small values are the standard's predefined handles.
        pub type $name = *mut $inner;
    )*};
}

opaque_handles! {
    MPI_Comm => MPI_ABI_Comm,
    MPI_Datatype => MPI_ABI_Datatype,
    MPI_Errhandler => MPI_ABI_Errhandler,
    MPI_File => MPI_ABI_File,
    MPI_Group => MPI_ABI_Group,
    MPI_Info => MPI_ABI_Info,
    MPI_Message => MPI_ABI_Message,
    MPI_Op => MPI_ABI_Op,
    MPI_Request => MPI_ABI_Request,
    MPI_Session => MPI_ABI_Session,
    MPI_Win => MPI_ABI_Win,
    MPI_T_enum => MPI_ABI_T_enum,
    MPI_T_cvar_handle => MPI_ABI_T_cvar_handle,
    MPI_T_pvar_handle => MPI_ABI_T_pvar_handle,
    MPI_T_pvar_session => MPI_ABI_T_pvar_session,
    MPI_T_event_instance => MPI_ABI_T_event_instance,
    MPI_T_event_registration => MPI_ABI_T_event_registration,
    MPIX_Stream => MPIX_ABI_Stream,
}

/// `MPI_Comm_errhandler_function` and friends: `void f(handle *, int *, ...)`.
pub type ErrhandlerFn = unsafe extern "C" fn(*mut core::ffi::c_void, *mut i32);
