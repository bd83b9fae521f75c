//! Threads and VCIs: the per-VCI state and its locks, the thread-safety models (offload,
//! csync, lockq), endpoints and thread communicators, streams, spreading one communicator
//! over VCIs, stealing-aware waits and asynchronous progress.
pub mod async_progress;
pub mod csync;
pub mod endpoints;
pub mod lockq;
pub mod offload;
pub mod spread;
pub mod steal;
pub mod stream;
pub mod vci;
pub mod vci_lock;
