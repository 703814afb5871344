//! Leaves: small helpers that know nothing of contracts, manifests or commands.

pub mod atomic;
pub mod digest;
pub mod glob;
pub mod jsonpos;
pub mod lock;
pub mod paths;
pub mod read;
pub mod similar;
pub mod stamp;
