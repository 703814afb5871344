//! `--task-text`: text that describes the task, read once when the request is resolved
//! (a file, standard input, or a lock's record), and checked for secrets: it is recorded
//! in the lock and its words go into reasons.

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::util::read::{INPUT_CAP, read_capped, read_stdin};

use super::{CompileOptions, Workspace};

/// Where the text of `--task-text` comes from.
#[derive(Debug, Clone)]
pub enum TextSource {
    /// A file, relative to the working folder.
    File(PathBuf),
    /// Standard input (`-`).
    Stdin,
    /// Already read (a lock's recorded text).
    Given(String),
    /// A hook's dispatch prompt (an ad-hoc dispatch): reasons name it [`PROMPT`].
    Prompt(String),
}

/// What the reasons call a dispatch prompt read as the task's text.
pub const PROMPT: &str = "the prompt";

/// The text of `--task-text`, read once (a file, standard input, or a lock's record); it
/// is recorded in the lock and its words go into reasons, so it holds no secret.
pub(super) fn read_task_text(
    ws: &Workspace,
    o: &CompileOptions,
    rules: &crate::trust::secrets::ContentRules,
) -> Result<String> {
    let task_text = match &o.task_text {
        None => String::new(),
        Some(TextSource::Given(text) | TextSource::Prompt(text)) => text.clone(),
        Some(TextSource::Stdin) => text_of("--task-text -", read_stdin(INPUT_CAP)?)?,
        Some(TextSource::File(p)) => text_of(
            &ws.shown(&ws.arg_path(p)),
            read_capped(&ws.arg_path(p), INPUT_CAP)?,
        )?,
    };
    if let Some(hit) = rules.scan(task_text.as_bytes()) {
        return Err(Error::Failed(format!(
            "--task-text: holds a secret ({} on line {}); curate would copy it into the lock",
            hit.rule, hit.line
        )));
    }
    Ok(task_text)
}

/// The bytes of `--task-text` as text (UTF-8).
fn text_of(shown: &str, bytes: Vec<u8>) -> Result<String> {
    String::from_utf8(bytes)
        .map_err(|_| Error::Failed(format!("--task-text {shown}: is not UTF-8 text")))
}
