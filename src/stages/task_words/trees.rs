//! Vendored and generated files: the rule lives with the `--related` ranking
//! ([`crate::stages::related::foreign`]), whose central files never include them; the task's
//! words count them down by it.

pub use crate::stages::related::foreign::is_foreign;
