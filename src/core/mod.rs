//! The MPI core: safe Rust semantics behind the C boundary, in rooms by concern:
//! - [`runtime`]: the process-wide state (init, finalize, progress) and the tool interface;
//! - [`p2p`]: point-to-point protocols, matching, requests and their fast paths;
//! - [`threads`]: VCIs, their locks and the thread-safety models, endpoints, streams,
//!   stealing-aware waits, asynchronous progress;
//! - [`objects`]: communicators and their construction, groups, info, attributes, error
//!   handlers, topologies, handle tables;
//! - [`datatype`] and [`op`]: derived datatypes and reduction operations;
//! - [`diag`]: statistics and tracing users switch on (`HYMPI_STATS`, `HYMPI_TRACE`).
pub use crate::error;

pub mod datatype;
pub mod diag;
pub mod io;
pub mod objects;
pub mod op;
pub mod p2p;
pub mod rma;
pub mod runtime;
pub mod threads;
