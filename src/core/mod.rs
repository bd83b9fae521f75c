//! The MPI core: safe Rust semantics behind the C boundary.
pub mod comm;
pub mod datatype;
pub mod errhandler;
pub mod error;
pub mod group;
pub mod info;
pub mod matching;
pub mod op;
pub mod p2p;
pub mod request;
pub mod runtime;
pub mod slab;
