//! The operations: what a front-end asks for, one function a file. The command line, the
//! hooks and the MCP server only turn their input into a request and print or send what
//! comes back; the work is here.
//!
//! - [`check`]: every committed manifest valid, within its budget, and (with `--stale`)
//!   what a compile makes of its lock's inputs today;
//! - [`compile`]: compile a role's context for a change and write the manifest and lock
//!   (one compile at a time per manifest folder; the lock first, the manifest last);
//! - [`doctor`]: is every dispatch curated: each host's wiring, the binary it runs, the
//!   last hook runs;
//! - [`init`]: the contracts, a workflow's config or a host's wiring written into a repository;
//! - [`preview`]: compile in memory and render a template into a string;
//! - [`render`]: the compile (or a manifest read back) a render streams, its files read ahead;
//! - [`verify`]: the files a worker touched stay in its write scope; its criteria pass;
//! - [`watch`]: `curate watch`, the `--related` index kept in memory and told of changes.

pub mod check;
pub mod compile;
pub mod doctor;
pub mod init;
pub mod preview;
pub mod render;
pub mod verify;
pub mod watch;
