//! MPI objects other than requests and datatypes: communicators and their construction
//! (context ids, the internal collectives that build them), groups, info, attributes, error
//! handlers, topologies, and the generation-checked handle tables behind them all.
pub mod attr;
pub mod comm;
pub mod comm_build;
pub mod context;
pub mod dynamic;
pub mod errhandler;
pub mod group;
pub mod info;
pub mod names;
pub mod nodes;
pub mod session;
pub mod slab;
pub mod spawn;
pub mod team;
pub mod topo;
