//! The MPI core: safe Rust semantics behind the C boundary.
pub mod attr;
pub mod comm;
pub mod comm_build;
pub mod context;
pub mod datatype;
pub mod errhandler;
pub mod error;
pub mod group;
pub mod hwtopo;
pub mod info;
pub mod matching;
pub mod p2p;
pub mod request;
pub mod runtime;
pub mod slab;
pub mod team;
pub mod topo;
