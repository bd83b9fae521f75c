//! The schedule simulator (`hympi-sim`): runs the schedule any collective algorithm builds
//! for a modelled job (nodes × ranks per node, uneven nodes allowed) without running MPI,
//! under a LogGP model with separate on-node and between-node links, one NIC per node
//! shared by its ranks, the CMA paper's contention term for large on-node transfers and a
//! per-byte reduction cost ([`model`]). It reports each rank's time, the critical path and a
//! Chrome trace of the simulated rounds.
//!
//! - [`build`]: every rank's schedule, built by the library's own algorithm code
//!   (`coll::algos`) and compacted;
//! - [`engine`]: the discrete-event simulation;
//! - [`model`]: the machine parameters and their file format;
//! - [`trace`]: the Chrome-trace writer;
//! - [`calibrate`]: fitting the model's parameters to measurements of this machine;
//! - [`cli`]: argument parsing shared by the two commands.

pub mod build;
pub mod calibrate;
pub mod cli;
pub mod engine;
pub mod model;
pub mod trace;

pub use build::{Algorithm, Call, Machine};
pub use engine::{simulate, Options, Outcome, SimError};
pub use model::Model;

/// Builds the schedules of `call` on `machine` and simulates them on `model`.
pub fn run(
    call: &Call,
    machine: &Machine,
    model: &Model,
    opts: Options,
) -> Result<Outcome, String> {
    let programs = build::programs(call, machine)?;
    simulate(model, machine, &programs, opts).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests;
