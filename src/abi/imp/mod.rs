//! Implementations of the C functions, named exactly like them (`fn MPI_Send(...)`); build.rs
//! finds them here and wires the generated entry points to them.
//!
//! This is the C-facing half of the work: raw pointers are checked and turned into Rust
//! values here, then the core does the MPI semantics.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

mod abi;
mod errhandler;
mod p2p;
mod runtime;
mod util;

pub(crate) use abi::*;
pub(crate) use errhandler::*;
pub(crate) use p2p::*;
pub(crate) use runtime::*;
