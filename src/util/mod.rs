//! Leaves: small helpers that know nothing of contracts, manifests or commands.

pub mod atomic;
pub mod cache;
pub mod digest;
pub mod fault;
pub mod glob;
pub mod jsonpos;
pub mod lock;
pub mod read;
pub mod stamp;
