//! Transports: how bytes move between ranks.
