//! Platform services: bootstrap, shared segments, CMA, waiting, configuration.
pub mod affinity;
pub mod bootstrap;
pub mod cma;
pub mod cma_calibrate;
pub mod cma_model;
pub mod config;
pub mod doorbell;
pub mod file_lock;
pub mod nodemap;
pub mod peer_watch;
pub mod pmi;
pub mod pmi2;
pub mod pmi2_wire;
pub mod pmi_wire;
pub mod shared_map;
pub mod wait;
