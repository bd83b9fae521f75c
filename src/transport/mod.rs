//! Transports: how bytes move between ranks. [`wire`] holds what every transport and the
//! point-to-point protocols above share; [`shm`] is the node transport (shared memory, CMA).
pub mod shm;
pub mod wire;
