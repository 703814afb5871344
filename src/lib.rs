//! `curate`: a context-curation compiler and prompt renderer for multi-agent coding.
//!
//! Before a lead agent dispatches a sub-agent on a change, curate compiles exactly which
//! files (and which lines of them) it must read first, under budgets, with secrets kept
//! out, and renders its first instruction, context bundle and handoff envelope.
//!
//! The layers, top to bottom (each imports only the layers below it; docs/development.md
//! draws them and `tests/it/architecture.rs` holds them):
//! - the command line, [`cli`]; the other front-ends, [`hook`] and `mcp` (the MCP server,
//!   with the `mcp` feature): they translate input and print output;
//! - the operations, [`ops`] (compile and write, preview, check, verify, watch), and
//!   [`warm`];
//! - rendering ([`render`]) and the report ([`report`]);
//! - the pipeline, [`compile`], and the repository's [`state`];
//! - the request, [`settings`]; the configuration, [`config`]; the [`workflow`]s;
//! - the compile's [`stages`], the [`task`] file, [`hosts`]' wiring, scope [`verify`];
//! - the [`error`] type;
//! - the trust boundary, [`trust`]: admission, the secret rules, redaction;
//! - leaves: [`util`], [`outline`], [`criteria`], [`receipt`];
//! - the vocabulary every layer shares, [`model`].

pub mod cli;
pub mod compile;
pub mod config;
pub mod criteria;
pub mod error;
pub mod hook;
pub mod hosts;
pub mod lsp;
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
pub mod workflow;
