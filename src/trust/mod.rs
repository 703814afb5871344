//! The trust boundary: the one "may this file enter?" ([`admit`]), the secret rules
//! ([`secrets`]) and redaction ([`redact`]). Everything that reads the repository reads
//! through here; nothing here imports anything but the leaves below it (`util`, `model`):
//! a failure is a `util::fault::Fault`, which the error type above takes over.

pub mod admit;
pub mod redact;
pub mod secrets;
pub mod spool;
pub mod tree;
