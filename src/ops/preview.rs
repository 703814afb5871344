//! Preview: compile in memory and render a template into a string; nothing is written.
//! What `curate preview --format json` prints and the MCP `preview` tool answers.

use crate::compile::Compiled;
use crate::error::Result;
use crate::render::{self, ByteCaps, Job, Lang, Template};
use crate::settings::{CompileSettings, Workspace};
use crate::stages::budget::Status;

pub use crate::ops::render::Source;

/// A compile and, when READY, its prompt.
#[derive(Debug)]
pub struct Previewed {
    pub compiled: Compiled,
    /// The rendered template: READY only.
    pub prompt: Option<String>,
    /// What is amiss with the manifest on disk (missing, or not this compile's): the
    /// prompt names it. `again` said what writes it.
    pub warnings: Vec<String>,
}

/// Compiles `s` in `ws` (or reads the manifest `source` names) and, when READY, renders the template `template` gives (asked
/// for only then) in `lang` within `caps`. `again` tells, in a warning, what writes the
/// manifest (a command, or an MCP tool).
///
/// # Errors
/// Every compile error, and the template's when it fails to render.
pub fn preview(
    ws: &Workspace,
    s: &CompileSettings,
    source: Source<'_>,
    template: impl FnOnce() -> Result<Template>,
    lang: Lang,
    caps: ByteCaps,
    again: &str,
) -> Result<Previewed> {
    let crate::ops::render::Prepared {
        compiled,
        warnings,
        ahead,
    } = crate::ops::render::prepare(ws, s, source, caps, again)?;
    let prompt = if compiled.status == Status::Ready {
        let job = Job::new(ws, s, &compiled, lang, caps);
        Some(render::render_template_string(&job, &template()?, ahead)?)
    } else {
        None
    };
    Ok(Previewed {
        compiled,
        prompt,
        warnings,
    })
}
