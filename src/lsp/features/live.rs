//! The preview document: `curate.preview` writes the prompt to a file under
//! `.curate/state/preview/` (git-ignored, atomically replaced, read-only, never through a
//! link) and asks the client to show it (`window/showDocument`, where the client has it).
//! The server then follows its inputs: an edit of an open document of the repository (the
//! overrides file, the task file and the contracts with their unsaved text), a save, a
//! watched file changed, an add, drop or adopt; a quarter of a second after the last, it
//! renders each followed preview again and replaces the file when its text changed. Any
//! editor that reloads a file changed on disk shows the new prompt; nothing
//! editor-specific is needed.

use std::path::{Path, PathBuf};

use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::{Value, json};

use super::{Server, Target};
use crate::error::{Error, Result};
use crate::settings::Workspace;
use crate::state::PREVIEWS;

/// At most this many previews are followed; the oldest is let go first.
const MAX_FOLLOWED: usize = 16;

/// A followed preview: its file (absolute) and what it shows.
#[derive(Debug, Clone)]
pub(super) struct Followed {
    pub path: PathBuf,
    pub target: Target,
}

/// The file name of `t`'s preview under [`PREVIEWS`]: `<change>/<role>.md`, with a task
/// file `<change>/<role>.<its stem>-<8 hex of its path's SHA-256>.md` (the role and change
/// are checked names; the stem keeps only `[A-Za-z0-9_-]`).
pub(super) fn file_name(t: &Target) -> String {
    match &t.task_file {
        None => format!("{}/{}.md", t.change, t.role),
        Some(f) => {
            let stem: String = Path::new(f)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .take(48)
                .collect();
            let hash = crate::util::digest::hex(f.as_bytes());
            format!("{}/{}.{stem}-{}.md", t.change, t.role, &hash[..8])
        }
    }
}

impl Server {
    /// Whether `path` is curate's own state (a preview, a scratch file): its changes are
    /// no input's.
    fn is_state(ws: &Workspace, path: &Path) -> bool {
        ws.relative(path)
            .is_none_or(|rel| rel.starts_with(".curate/state/") || rel.starts_with(".git/"))
    }

    /// Notes that an input may have changed (`path`): the followed previews are rendered
    /// again once the edits rest.
    pub(super) fn input_changed(&mut self, path: Option<&Path>) {
        if self.followed.is_empty() {
            return;
        }
        if let (Some(path), Ok(ws)) = (path, self.workspace())
            && Self::is_state(&ws, path)
        {
            return;
        }
        self.previews_stale = true;
        self.pending_since
            .get_or_insert_with(std::time::Instant::now);
    }

    /// `workspace/didChangeWatchedFiles`: any file of the repository but curate's state.
    pub(super) fn watched_changed(&mut self, p: &Value) {
        for c in p["changes"].as_array().into_iter().flatten() {
            let path = c["uri"].as_str().and_then(super::docs::path_of);
            if path.is_some() {
                self.input_changed(path.as_deref());
            }
        }
    }

    /// A followed preview whose document the client closed is let go.
    pub(super) fn closed(&mut self, path: &Path) {
        self.followed.retain(|f| f.path != path);
    }

    /// The text of the preview document of `t`: the prompt, or why there is none (the
    /// report of a compile that is not READY, an error), redacted.
    pub(super) fn document(&self, t: &Target) -> String {
        match self.preview(t) {
            Ok(prompt) => super::super::redacted(&prompt),
            Err(e) => error_document(&e),
        }
    }

    /// Writes `text` as the preview of `t`, follows it and asks the client to show it.
    /// A preview that cannot be written is said in a message; the command still answers.
    pub(super) fn open_preview(&mut self, t: &Target, text: &str) {
        let Ok(ws) = self.workspace() else {
            return;
        };
        let name = file_name(t);
        match crate::state::write_preview(&ws.root, &name, text.as_bytes()) {
            Ok(_) => {}
            Err(e) => {
                let message = super::super::redacted(&format!(
                    "curate could not write the preview document: {}",
                    crate::error::render(&e, "").trim()
                ));
                self.outbox.push(Message::Notification(Notification::new(
                    "window/showMessage".to_owned(),
                    json!({"type": 2, "message": message}),
                )));
                return;
            }
        }
        let path = ws.root.join(PREVIEWS).join(&name);
        self.followed.retain(|f| f.path != path);
        if self.followed.len() >= MAX_FOLLOWED {
            self.followed.remove(0);
        }
        self.followed.push(Followed {
            path: path.clone(),
            target: Target {
                file: None,
                ..t.clone()
            },
        });
        let uri = uri_of(&path);
        if self.show_document {
            let id = self.next_request_id();
            self.outbox.push(Message::Request(Request::new(
                id,
                "window/showDocument".to_owned(),
                json!({"uri": uri, "takeFocus": true}),
            )));
        } else {
            let shown = ws.shown(&path);
            self.outbox.push(Message::Notification(Notification::new(
                "window/showMessage".to_owned(),
                json!({"type": 3, "message": format!("curate: the preview is in {shown}; it follows your edits")}),
            )));
        }
    }

    /// Renders every followed preview again; a file whose text changed is replaced.
    pub(super) fn refresh_previews(&mut self) {
        if !std::mem::take(&mut self.previews_stale) {
            return;
        }
        let Ok(ws) = self.workspace() else {
            return;
        };
        for f in self.followed.clone() {
            let text = self.document(&f.target);
            let Ok(rel) = f.path.strip_prefix(ws.root.join(PREVIEWS)) else {
                continue;
            };
            let rel = rel.to_string_lossy().replace('\\', "/");
            if crate::state::write_preview(&ws.root, &rel, text.as_bytes()).is_err() {
                // A preview no longer writable is no longer followed.
                self.followed.retain(|g| g.path != f.path);
            }
        }
    }

    /// `client/registerCapability` for `workspace/didChangeWatchedFiles` on every file,
    /// when the client registers watchers on a server's asking.
    pub(super) fn register_watchers(&mut self) {
        if !self.watch_files {
            return;
        }
        let id = self.next_request_id();
        self.outbox.push(Message::Request(Request::new(
            id,
            "client/registerCapability".to_owned(),
            json!({"registrations": [{
                "id": "curate-watch",
                "method": "workspace/didChangeWatchedFiles",
                "registerOptions": {"watchers": [{"globPattern": "**/*"}]},
            }]}),
        )));
    }

    fn next_request_id(&mut self) -> RequestId {
        self.requests_sent += 1;
        RequestId::from(format!("curate-{}", self.requests_sent))
    }

    /// The editor's text of `path` when it is open with edits not saved (and differs from
    /// the file: an edit undone is no edit).
    fn unsaved(&self, ws: &Workspace, path: &Path) -> Option<&str> {
        let doc = self.docs.values().find(|d| d.path == path && d.dirty)?;
        let disk = crate::trust::admit::read_repo_file(&ws.root, path)
            .ok()
            .flatten();
        (disk.as_deref() != Some(doc.text.as_bytes())).then_some(doc.text.as_str())
    }

    /// The texts the preview of `t` takes from the editor, not saved: its task file's and
    /// its overrides file's, each written to a scratch file under [`PREVIEWS`] (removed by
    /// [`Scratch`]'s drop) that the compile reads in the file's place. A text holding a
    /// secret is refused, as the compile refuses the file.
    pub(super) fn scratch_task(&self, ws: &Workspace, t: &Target) -> Result<Option<Scratch>> {
        let Some(f) = &t.task_file else {
            return Ok(None);
        };
        let real = crate::trust::admit::contained(&ws.root, "task_file", f)?;
        let real = if real.is_absolute() {
            real
        } else {
            ws.root.join(real)
        };
        match self.unsaved(ws, &real) {
            Some(text) => Scratch::write(ws, "task.json", text).map(Some),
            None => Ok(None),
        }
    }

    /// The contracts' unsaved text (a contracts file of the repository), as
    /// [`Server::scratch_task`].
    pub(super) fn scratch_contracts(&self, ws: &Workspace) -> Result<Option<Scratch>> {
        let crate::stages::contract::Source::Repo(rel) = &ws.contracts else {
            return Ok(None);
        };
        match self.unsaved(ws, &ws.root.join(rel)) {
            Some(text) => Scratch::write(ws, "contracts.json", text).map(Some),
            None => Ok(None),
        }
    }

    /// The overrides file's unsaved text, as [`Server::scratch_task`] (`path`: the file's).
    pub(super) fn scratch_overrides(
        &self,
        ws: &Workspace,
        path: &Path,
        shown: &str,
    ) -> Result<Option<Scratch>> {
        match self.unsaved(ws, path) {
            Some(text) => {
                crate::compile::refuse_copied_secrets(text, Path::new(shown))?;
                Scratch::write(ws, "overrides.jsonl", text).map(Some)
            }
            None => Ok(None),
        }
    }
}

/// The preview document when there is no prompt: why (the report of a compile that is not
/// READY, an input that does not read), redacted.
pub(super) fn error_document(e: &Error) -> String {
    let text = match e {
        // The report of a compile that is not READY, kept as its lines.
        Error::Failed(report) => report.clone(),
        other => crate::error::render(other, "error:"),
    };
    super::super::redacted(&format!("{}\n", text.trim_end()))
}

/// A scratch copy of an editor's unsaved text, removed when dropped.
#[derive(Debug)]
pub(super) struct Scratch {
    pub path: PathBuf,
    /// Repository-relative.
    pub rel: String,
}

impl Scratch {
    fn write(ws: &Workspace, name: &str, text: &str) -> Result<Scratch> {
        let rules = crate::trust::admit::rules()?;
        if let Some(hit) = rules.scan(text.as_bytes()) {
            return Err(Error::Failed(format!(
                "the unsaved text holds a secret ({} on line {}): curate previews no text with a secret",
                hit.rule, hit.line
            )));
        }
        sweep_scratch(ws);
        let file = format!(".unsaved/{}-{name}", std::process::id());
        crate::state::write_preview(&ws.root, &file, text.as_bytes())?;
        let rel = format!("{PREVIEWS}/{file}");
        Ok(Scratch {
            path: ws.root.join(&rel),
            rel,
        })
    }
}

/// Removes the scratch files a server that stopped before removing its own left (those of
/// another process, a minute old or more): no editor's unsaved text stays on disk. Only
/// regular files of the real scratch folder are removed.
fn sweep_scratch(ws: &Workspace) {
    let dir = ws.root.join(PREVIEWS).join(".unsaved");
    if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
        return;
    }
    let ours = format!("{}-", std::process::id());
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .ok()
            .filter(std::fs::Metadata::is_file)
            .and_then(|m| {
                m.modified()
                    .ok()?
                    .elapsed()
                    .ok()
                    .map(|age| age.as_secs() >= 60)
            });
        let name = entry.file_name().to_string_lossy().into_owned();
        if old == Some(true) && !name.starts_with(&ours) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The `file://` URI of an absolute path, percent-encoded where a URI must be.
pub(super) fn uri_of(path: &Path) -> String {
    let mut out = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
