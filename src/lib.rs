//! hympi: an MPI implementation in Rust for hybrid MPI+threads codes.
//!
//! Layers (dependencies point down only; see ARCHITECTURE.md):
//! - [`abi`]: the C entry points generated from one signature table, handle conversion,
//!   argument checks, the panic boundary and error-handler dispatch;
//! - [`tune`] and [`sim`]: the collective autotuner and the schedule simulator it may
//!   measure on (tools over [`coll`]; the library's calls never use them);
//! - [`coll`]: the collective algorithms as schedules, and their selection tables;
//! - [`core`]: the MPI semantics (runtime, communicators, requests, matching, point-to-point);
//! - [`transport`]: how bytes move (self, node-local shared memory with CMA single copy);
//! - [`platform`]: bootstrap (PMI-1), shared segments, CMA, waiting, configuration;
//! - [`error`] and [`mpi_abi`]: MPI errors, and the MPI-5.0 ABI's constants and C types,
//!   which every layer names.

pub mod abi;
pub mod coll;
pub mod core;
pub mod error;
pub mod mpi_abi;
pub mod platform;
pub mod sim;
pub mod transport;
pub mod tune;
