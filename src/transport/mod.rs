//! Transports: how bytes move between ranks.
pub mod shm;
