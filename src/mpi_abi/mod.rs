//! The bottom of the crate: the MPI-5.0 standard ABI's integer constants and C types, which
//! every layer above names ([`crate::abi`] at the C boundary, [`crate::core`] for error
//! classes, predefined handles and statuses). Generated from `src/abi/api/prologue.h` by
//! build.rs; it imports nothing from the crate.

pub mod types;

/// Every integer constant of `mpi.h`, generated from `api/prologue.h`.
#[allow(missing_docs, clippy::unnecessary_cast, non_upper_case_globals)]
pub mod consts {
    include!(concat!(env!("OUT_DIR"), "/abi_consts.rs"));
}
