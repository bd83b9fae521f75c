//! The C boundary: entry points generated from `api/functions.txt` by build.rs, handle
//! conversion and error-handler dispatch (the ABI's constants and types are in
//! [`crate::mpi_abi`], below every layer).
//!
//! Everything `unsafe` about raw C pointers lives here and in [`imp`]; the core below works on
//! checked Rust values.
#![allow(non_snake_case, non_upper_case_globals, clippy::missing_safety_doc)]

pub mod entry;
pub mod imp;
/// MPICH's ABI (`libmpich.so.12`): the entry points of the `mpich-abi` build.
#[cfg(feature = "mpich-abi")]
pub mod mpich;
#[cfg(test)]
#[path = "mpich/values_tests.rs"]
mod mpich_values_tests;

/// The constants and C types of the ABI, from the crate's bottom module.
pub use crate::mpi_abi::{consts, types};

/// The generated `MPI_*` / `PMPI_*` entry points.
#[allow(
    unused_variables,
    unused_imports,
    unused_parens,
    clippy::too_many_arguments,
    clippy::unit_arg
)]
pub mod generated {
    use super::entry::{self, ErrObj};
    use super::imp;
    use super::types::*;
    use crate::core::error::MpiError;
    use core::ffi::{c_char, c_int, c_long, c_uint, c_void};
    include!(concat!(env!("OUT_DIR"), "/abi_entry.rs"));
}

// The C symbols `MPI_x` of the standard ABI: weak, jumping to `PMPI_x` (see build.rs).
#[cfg(all(not(feature = "mpich-abi"), target_arch = "x86_64"))]
include!(concat!(env!("OUT_DIR"), "/abi_profiling.rs"));
