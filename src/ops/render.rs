//! Render: the compile (or a manifest already written, read back) a prompt is made from,
//! with the files' text read ahead while the compile finishes. What `curate render` streams
//! to a file or stdout and a preview renders into a string.

use std::path::Path;

use crate::compile::{Compiled, compile_then};
use crate::error::Result;
use crate::render::{self, ByteCaps, ReadAhead};
use crate::settings::{CompileSettings, Workspace};

/// What is rendered: a compile, or a manifest already written (`--manifest`: its entries
/// read back, each file measured again; no warning about the manifest on disk).
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    Compile,
    Manifest(&'a Path),
}

/// A compile ready to render.
pub struct Prepared {
    pub compiled: Compiled,
    /// What is amiss with the manifest on disk (missing, or not this compile's): the
    /// prompt names it. Empty for a manifest read back.
    pub warnings: Vec<String>,
    /// The excerpts, read while the compile finished (a render that writes files' text).
    pub ahead: Option<ReadAhead>,
}

/// Compiles `s` in `ws` (or reads back the manifest `source` names). When `s.renders`,
/// the kept files' text is read ahead within `caps` as soon as the compile knows them.
/// `again` tells, in a warning, what writes the manifest (a command, or an MCP tool).
///
/// # Errors
/// Every compile error; a manifest that cannot be read back.
pub fn prepare(
    ws: &Workspace,
    s: &CompileSettings,
    source: Source<'_>,
    caps: ByteCaps,
    again: &str,
) -> Result<Prepared> {
    match source {
        Source::Manifest(path) => Ok(Prepared {
            compiled: render::from_manifest(ws, s, path)?,
            warnings: Vec::new(),
            ahead: None,
        }),
        Source::Compile => {
            let mut ahead = None;
            let compiled = compile_then(ws, s, |kept, held| {
                if s.renders {
                    ahead = ReadAhead::start(&ws.root, kept, held, s.max_file_size, caps).ok();
                }
            })?;
            let warnings = render::manifest_warnings(ws, &compiled, again);
            Ok(Prepared {
                compiled,
                warnings,
                ahead,
            })
        }
    }
}
