//! Platform services: bootstrap, shared segments, CMA, waiting, configuration.

pub mod pmi;
pub mod pmi_wire;
