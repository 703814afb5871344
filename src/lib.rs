//! `curate`: a context-curation compiler and prompt renderer for multi-agent coding.
//!
//! Before a lead agent dispatches a sub-agent on a change, curate compiles exactly which
//! files (and which lines of them) it must read first, under budgets, with secrets kept
//! out, and renders its first instruction, context bundle and handoff envelope.
//!
//! The layers, top to bottom (nothing imports a layer above it):
//! - front-ends: [`cli`] (the command line), [`hook`] (Claude Code and OpenCode
//!   dispatches) and `mcp` (the MCP server, with the `mcp` feature), thin layers over the
//!   library;
//! - the compile pipeline, [`compile`], one module a stage;
//! - beside it, on its types: [`render`], [`report`], [`check`], [`verify`], [`receipt`];
//! - plain data shared by all: [`settings`], [`model`], [`task`], [`error`], and the
//!   repository's [`state`] (change bindings, hook breadcrumbs);
//! - leaves: [`util`] (atomic writes, digests, paths, JSON positions, bounded reads).

pub mod check;
pub mod cli;
pub mod compile;
pub mod config;
pub mod criteria;
pub mod error;
pub mod hook;
pub mod hosts;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod model;
pub mod ops;
pub mod outline;
pub mod receipt;
pub mod render;
pub mod report;
pub mod settings;
pub mod stages;
pub mod state;
pub mod task;
pub mod trust;
pub mod util;
pub mod verify;
pub mod warm;
pub mod watch;
pub mod workflow;
