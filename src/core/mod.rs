//! The MPI core: safe Rust semantics behind the C boundary.
pub mod errhandler;
pub mod error;
