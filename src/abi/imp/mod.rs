//! Implementations of the C functions, named exactly like them (`fn MPI_Send(...)`); build.rs
//! finds them here and wires the generated entry points to them.
//!
//! This is the C-facing half of the work: raw pointers are checked and turned into Rust
//! values here, then the core does the MPI semantics.
//!
//! Safety contract: every function here is `unsafe fn` because its pointer arguments come from
//! a C caller. The MPI standard obliges that caller to pass pointers valid for the documented
//! sizes (`count` elements of `datatype`, one `MPI_Status`, `count` requests, ...) or the
//! documented sentinels (`MPI_STATUS_IGNORE`, `MPI_BOTTOM`, ... which are checked here). NULL
//! where an output is required is reported as `MPI_ERR_ARG` by `util::out`, never dereferenced.
//! This is the justification the `SAFETY` comments in these files refer to.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

mod abi;
mod attr;
mod coll;
mod coll_init;
mod coll_neighbor;
mod comm;
mod datatype;
mod dynamic;
mod endpoints;
mod errhandler;
mod file;
mod file_access;
mod grequest;
mod group;
mod info;
mod p2p;
mod pack;
mod part;
mod runtime;
mod session;
mod stream;
mod topo;
mod topo_create;
mod type_create;
mod util;

pub(crate) use abi::*;
pub(crate) use attr::*;
pub(crate) use coll::*;
pub(crate) use coll_init::*;
pub(crate) use coll_neighbor::*;
pub(crate) use comm::*;
pub(crate) use datatype::*;
pub(crate) use dynamic::*;
pub(crate) use endpoints::*;
pub(crate) use errhandler::*;
pub(crate) use file::*;
pub(crate) use file_access::*;
pub(crate) use grequest::{MPI_Grequest_complete, MPI_Grequest_start};
pub(crate) use group::*;
pub(crate) use info::*;
pub(crate) use p2p::*;
pub(crate) use pack::*;
pub(crate) use part::*;
pub(crate) use runtime::*;
pub(crate) use session::*;
pub(crate) use stream::*;
pub(crate) use topo::*;
pub(crate) use topo_create::*;
pub(crate) use type_create::*;

mod op;
pub(crate) use op::*;

mod coll_reduce;
pub(crate) use coll_reduce::*;
mod coll_move;
mod coll_move_blocking;
mod coll_move_nonblocking;
pub(crate) use coll_move_blocking::*;
pub(crate) use coll_move_nonblocking::*;

mod tool;
pub(crate) use tool::*;

mod rma;
pub(crate) use rma::*;
mod rma_win;
pub(crate) use rma_win::*;
