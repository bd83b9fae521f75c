//! Collective algorithms, one file each. Every function appends its steps to a schedule
//! and works for any communicator size and count.

pub mod allgather;
pub mod allreduce;
pub mod alltoall;
pub mod barrier;
pub mod bcast;
pub mod blocks;
pub mod gather;
pub mod hier;
pub mod multi_object;
pub mod radix;
pub mod reduce;
pub mod reduce_scatter;
pub mod scatter;
