//! `curate`: a context-curation compiler and prompt renderer for multi-agent coding.
//!
//! Before a lead agent dispatches a sub-agent on a change, curate compiles exactly which
//! files (and which lines of them) it must read first, under budgets, with secrets kept
//! out, and renders its first instruction, context bundle and handoff envelope.
//!
//! The compile is a pipeline of stages, each in its own module, composed in
//! [`compile::compile`]: [`contract`] → [`expand`] → [`overrides`] → [`secrets`] →
//! [`measure`] → [`budget`] → [`manifest`].

pub mod adopt;
pub mod atomic;
pub mod budget;
pub mod cache;
pub mod check;
pub mod cli;
pub mod compile;
pub mod contract;
pub mod digest;
pub mod error;
pub mod expand;
pub mod gitignore;
pub mod init;
pub mod jsonpos;
pub mod manifest;
pub mod measure;
pub mod model;
pub mod overrides;
pub mod paths;
pub mod receipt;
pub mod render;
pub mod report;
pub mod run;
pub mod secrets;
pub mod settings;
pub mod task;
pub mod tokens;
pub mod verify;
pub mod verify_cmd;
