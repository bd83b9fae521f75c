//! Collective algorithms, one file each. Every function appends its steps to a schedule
//! and works for any communicator size and count.

pub mod allreduce;
pub mod barrier;
pub mod bcast;
pub mod reduce;
pub mod reduce_scatter;
