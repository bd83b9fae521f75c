//! Collective algorithms, one file each. Every function appends its steps to a schedule
//! and works for any communicator size and count.

pub mod barrier;
pub mod bcast;
