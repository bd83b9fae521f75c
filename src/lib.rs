//! hympi: an MPI implementation in Rust for hybrid MPI+threads codes.
//!
//! Layers (dependencies point down only; see ARCHITECTURE.md):
//! - [`abi`]: the C entry points generated from one signature table, handle conversion,
//!   argument checks, the panic boundary and error-handler dispatch;
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
