//! The collective autotuner (`hympi-tune`): ACCLAiM's active learning over a feature space
//! of node layouts, message sizes and algorithms ([`space`]), with a random forest whose
//! jackknife variance picks the next point to measure ([`forest`], [`active`]); the
//! measurements come from real runs, the simulator or a formula ([`bench`]). It writes the
//! selection table `HYMPI_COLL_TUNING_FILE` reads ([`table`]), scores tables against
//! exhaustive measurements ([`eval`]) and draws their choices ([`plot`]); [`real`] launches the
//! jobs that measure on this machine.
//! See docs/tuner.md.

pub mod active;
pub mod bench;
pub mod eval;
pub mod forest;
pub mod plot;
pub mod real;
pub mod space;
pub mod table;

pub use active::{Sample, Settings, Stop, Tuner};
pub use bench::{Bench, Formula, Simulated};
pub use space::{Layout, Space};

#[cfg(test)]
mod tests;
