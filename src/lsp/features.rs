//! What the server answers: the open documents and their diagnostics, the preview command
//! and its code lens, hover, and the code actions that write the overrides file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use lsp_server::{Notification, Request};
use serde::Deserialize;
use serde_json::{Value, json};

mod live;

use super::docs::{self, Kind, Pair};
use super::{Failure, notification, params};
use crate::compile::Compiled;
use crate::error::{Error, Result};
use crate::ops::preview::{Previewed, Source};
use crate::render::{self, ByteCaps};
use crate::report::{self, Style};
use crate::settings::{CompileOptions, CompileSettings, Workspace, WorkspaceOptions, check_name};
use crate::stages::contract::Source as ContractSource;

/// The template `curate preview` renders unless told otherwise.
const TEMPLATE: &str = "bundle";

/// An open document.
#[derive(Debug)]
struct Doc {
    path: PathBuf,
    text: String,
    /// Edited since it was opened or saved.
    dirty: bool,
}

/// The server's state: where the repository is, the open documents, and those whose
/// diagnostics wait for the text to rest.
#[derive(Debug)]
pub struct Server {
    root: WorkspaceOptions,
    docs: BTreeMap<String, Doc>,
    pending: BTreeSet<String>,
    /// When the oldest edit still waiting for its diagnostics came.
    pending_since: Option<std::time::Instant>,
    /// The role and change the client named (`initializationOptions`).
    named: Option<Pair>,
    /// The preview documents kept up to date, oldest first.
    followed: Vec<live::Followed>,
    /// An input changed since the followed previews were rendered.
    previews_stale: bool,
    /// The client shows a document on the server's asking (`window/showDocument`).
    show_document: bool,
    /// The client registers file watchers on the server's asking.
    watch_files: bool,
    /// What the server sends the client beside its answers (its requests, messages).
    outbox: Vec<lsp_server::Message>,
    requests_sent: u64,
}

/// `curate.preview`'s argument (and `curate.add` / `curate.drop`'s, with `file`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Target {
    role: String,
    change: String,
    #[serde(default)]
    file: Option<String>,
    /// A task file, as `--task-file` (preview only).
    #[serde(default)]
    task_file: Option<String>,
}

impl Server {
    pub fn new(root: WorkspaceOptions) -> Server {
        Server {
            root,
            docs: BTreeMap::new(),
            pending: BTreeSet::new(),
            pending_since: None,
            named: None,
            followed: Vec::new(),
            previews_stale: false,
            show_document: false,
            watch_files: false,
            outbox: Vec::new(),
            requests_sent: 0,
        }
    }

    /// Whether diagnostics or previews wait to be computed.
    pub fn pending(&self) -> bool {
        !self.pending.is_empty() || self.previews_stale
    }

    /// What the server sends the client beside its answers, taken.
    pub fn take_outbox(&mut self) -> Vec<lsp_server::Message> {
        std::mem::take(&mut self.outbox)
    }

    /// How long the oldest edit waiting for its diagnostics has waited.
    pub fn waited(&self) -> std::time::Duration {
        self.pending_since.map(|t| t.elapsed()).unwrap_or_default()
    }

    /// The diagnostics of the documents edited since they were last computed; the
    /// followed previews rendered again when an input changed.
    pub fn publish_pending(&mut self) -> Vec<Notification> {
        self.pending_since = None;
        let uris = std::mem::take(&mut self.pending);
        let ws = self.workspace().ok();
        let out = uris
            .iter()
            .filter_map(|u| self.publish(ws.as_ref(), u))
            .collect();
        self.refresh_previews();
        out
    }

    fn workspace(&self) -> Result<Workspace> {
        Workspace::resolve(&self.root)
    }

    /// The diagnostics of document `uri`, from the editor's text (and, for a manifest and
    /// its lock, the other's text when it is open too).
    fn publish(&self, ws: Option<&Workspace>, uri: &str) -> Option<Notification> {
        let doc = self.docs.get(uri)?;
        let found = match ws {
            Some(ws) => {
                let kind = docs::kind(ws, &doc.path);
                let open = |path: &std::path::Path| -> Option<&str> {
                    self.docs
                        .values()
                        .find(|d| d.path == path)
                        .map(|d| d.text.as_str())
                };
                docs::problems(ws, &doc.path, &kind, &doc.text, &open)
            }
            None => Vec::new(),
        };
        Some(notification(
            "textDocument/publishDiagnostics",
            json!({"uri": uri, "diagnostics": docs::diagnostics(&found, &doc.text)}),
        ))
    }

    /// A notification from the client: documents opened, changed, saved, closed.
    pub fn notified(&mut self, n: &Notification) -> Vec<Notification> {
        let p = &n.params;
        let uri = p["textDocument"]["uri"].as_str().unwrap_or("").to_owned();
        match n.method.as_str() {
            "textDocument/didOpen" => {
                let (Some(path), Some(text)) =
                    (docs::path_of(&uri), p["textDocument"]["text"].as_str())
                else {
                    return Vec::new();
                };
                // Opened with edits not saved (an editor restoring its session): dirty.
                let dirty =
                    self.workspace().ok().is_some_and(
                        |ws| match crate::trust::admit::read_repo_file(&ws.root, &path) {
                            Ok(Some(disk)) => disk != text.as_bytes(),
                            Ok(None) => !text.is_empty(),
                            Err(_) => false,
                        },
                    );
                self.docs.insert(
                    uri.clone(),
                    Doc {
                        path,
                        text: text.to_owned(),
                        dirty,
                    },
                );
                let ws = self.workspace().ok();
                self.publish(ws.as_ref(), &uri).into_iter().collect()
            }
            "textDocument/didChange" => {
                // Full sync: the last change holds the whole text.
                let text = p["contentChanges"]
                    .as_array()
                    .and_then(|c| c.last())
                    .and_then(|c| c["text"].as_str());
                if let (Some(doc), Some(text)) = (self.docs.get_mut(&uri), text) {
                    text.clone_into(&mut doc.text);
                    doc.dirty = true;
                    let path = doc.path.clone();
                    self.pending.extend(self.partners(&uri));
                    self.pending.insert(uri);
                    self.pending_since
                        .get_or_insert_with(std::time::Instant::now);
                    self.input_changed(Some(&path));
                }
                Vec::new()
            }
            "textDocument/didSave" => {
                self.pending.remove(&uri);
                let path = self.docs.get_mut(&uri).map(|d| {
                    d.dirty = false;
                    d.path.clone()
                });
                self.input_changed(path.as_deref());
                let ws = self.workspace().ok();
                self.publish(ws.as_ref(), &uri).into_iter().collect()
            }
            "workspace/didChangeWatchedFiles" => {
                self.watched_changed(p);
                Vec::new()
            }
            "initialized" => {
                self.register_watchers();
                Vec::new()
            }
            "textDocument/didClose" => {
                self.pending.remove(&uri);
                if let Some(path) = docs::path_of(&uri) {
                    self.closed(&path);
                }
                if self.docs.remove(&uri).is_none() {
                    return Vec::new();
                }
                vec![notification(
                    "textDocument/publishDiagnostics",
                    json!({"uri": uri, "diagnostics": []}),
                )]
            }
            _ => Vec::new(),
        }
    }

    /// The answer to a request.
    pub fn request(&mut self, req: &Request) -> std::result::Result<Value, Failure> {
        match req.method.as_str() {
            "initialize" => Ok(self.initialize(&req.params)),
            "textDocument/codeLens" => Ok(self.code_lens(&req.params)),
            "textDocument/codeAction" => Ok(self.code_actions(&req.params)),
            "textDocument/hover" => self.hover(&req.params),
            "workspace/executeCommand" => self.execute(&req.params),
            _ => Err(Failure::Unknown),
        }
    }

    fn initialize(&mut self, p: &Value) -> Value {
        if self.root.dir.is_none()
            && let Some(path) = p["rootUri"].as_str().and_then(docs::path_of)
        {
            self.root.dir = Some(path);
        }
        let caps = &p["capabilities"];
        self.show_document = caps["window"]["showDocument"]["support"] == true;
        self.watch_files =
            caps["workspace"]["didChangeWatchedFiles"]["dynamicRegistration"] == true;
        let o = &p["initializationOptions"];
        if let (Some(role), Some(change)) = (o["role"].as_str(), o["change"].as_str()) {
            self.named = Some(Pair {
                role: role.to_owned(),
                change: change.to_owned(),
            });
        }
        json!({
            "capabilities": super::capabilities(),
            "serverInfo": {"name": "curate", "version": env!("CARGO_PKG_VERSION")},
        })
    }

    /// The role and change of an open document (a manifest, its lock or overrides file).
    fn pair_of(&self, ws: &Workspace, uri: &str) -> Option<Pair> {
        match docs::kind(ws, &self.docs.get(uri)?.path) {
            Kind::Manifest(p) | Kind::Lock(p) | Kind::Overrides(p) => Some(p),
            _ => None,
        }
    }

    /// The open documents whose diagnostics follow `uri`'s: a manifest's lock, a lock's
    /// manifest (`check` reads the one with the other).
    fn partners(&self, uri: &str) -> Vec<String> {
        let Ok(ws) = self.workspace() else {
            return Vec::new();
        };
        let Some(doc) = self.docs.get(uri) else {
            return Vec::new();
        };
        let (Kind::Manifest(pair) | Kind::Lock(pair)) = docs::kind(&ws, &doc.path) else {
            return Vec::new();
        };
        self.docs
            .iter()
            .filter(|(u, d)| {
                u.as_str() != uri
                    && matches!(docs::kind(&ws, &d.path),
                        Kind::Manifest(p) | Kind::Lock(p) if p == pair)
            })
            .map(|(u, _)| u.clone())
            .collect()
    }

    /// A lens on the first line of a manifest, its lock or overrides file: the preview.
    fn code_lens(&self, p: &Value) -> Value {
        let uri = p["textDocument"]["uri"].as_str().unwrap_or("");
        let Ok(ws) = self.workspace() else {
            return json!([]);
        };
        Value::Array(
            self.preview_commands(&ws, uri)
                .into_iter()
                .map(|command| {
                    json!({
                        "range": {"start": {"line": 0, "character": 0},
                                  "end": {"line": 0, "character": 0}},
                        "command": command,
                    })
                })
                .collect(),
        )
    }

    /// The `curate.preview` commands a document offers (its lens, and the code actions of
    /// an editor without lenses).
    fn preview_commands(&self, ws: &Workspace, uri: &str) -> Vec<Value> {
        self.lens_targets(ws, uri)
            .into_iter()
            .map(|t| {
                let title = format!("Preview {}'s prompt for {}", t.role, t.change);
                let mut argument = json!({"role": t.role, "change": t.change});
                if let Some(f) = t.task_file {
                    argument["task_file"] = Value::String(f);
                }
                json!({"title": title, "command": "curate.preview", "arguments": [argument]})
            })
            .collect()
    }

    /// The previews a document's first line offers: a manifest's (its lock's, its overrides
    /// file's) own; a task file's, with it, for its `your_role`; a file of a change folder
    /// (a plan), each role's that has a manifest for the change, and the client's.
    fn lens_targets(&self, ws: &Workspace, uri: &str) -> Vec<Target> {
        let Some(doc) = self.docs.get(uri) else {
            return Vec::new();
        };
        let kind = docs::kind(ws, &doc.path);
        if let Kind::Manifest(p) | Kind::Lock(p) | Kind::Overrides(p) = kind {
            return vec![Target {
                role: p.role,
                change: p.change,
                file: None,
                task_file: None,
            }];
        }
        let rel = ws.relative(&doc.path).unwrap_or_default();
        let change =
            docs::change_of(ws, &rel).or_else(|| self.named.as_ref().map(|n| n.change.clone()));
        let Some(change) = change else {
            return Vec::new();
        };
        if kind == Kind::Task {
            let task = crate::task::parse(doc.text.as_bytes(), &doc.path).ok();
            let role = task
                .map(|t| t.your_role)
                .filter(|r| !r.is_empty())
                .or_else(|| self.named.as_ref().map(|n| n.role.clone()));
            return role
                .map(|role| Target {
                    role,
                    change,
                    file: None,
                    task_file: Some(rel),
                })
                .into_iter()
                .collect();
        }
        let mut roles: BTreeSet<String> = self
            .named
            .iter()
            .filter(|n| n.change == change)
            .map(|n| n.role.clone())
            .collect();
        if docs::change_of(ws, &rel).is_some()
            && let Ok(contracts) = ws.load_contracts()
        {
            roles.extend(
                contracts
                    .roles
                    .iter()
                    .filter(|r| ws.root.join(ws.manifest_path(&change, &r.id)).is_file())
                    .map(|r| r.id.clone()),
            );
        }
        roles
            .into_iter()
            .map(|role| Target {
                role,
                change: change.clone(),
                file: None,
                task_file: None,
            })
            .collect()
    }

    /// "add to <role>'s context for <change>" and "drop from it", for every role and change
    /// known: the client's, and those of the open manifests and overrides files.
    fn code_actions(&self, p: &Value) -> Value {
        let uri = p["textDocument"]["uri"].as_str().unwrap_or("");
        let Ok(ws) = self.workspace() else {
            return json!([]);
        };
        let Some(file) = docs::path_of(uri).and_then(|path| ws.relative(&path)) else {
            return json!([]);
        };
        if file.starts_with(".curate/state/") {
            // curate's own state (a preview document): nothing to add or preview.
            return json!([]);
        }
        let mut actions = self.adopt_action(&ws, uri);
        // The preview as an action too: Helix and Zed show no code lens.
        actions.extend(self.preview_commands(&ws, uri).into_iter().map(|command| {
            json!({"title": command["title"].clone(), "kind": "source", "command": command})
        }));
        let mut pairs: BTreeSet<Pair> = self.named.iter().cloned().collect();
        pairs.extend(self.docs.keys().filter_map(|u| self.pair_of(&ws, u)));
        for pair in pairs {
            let target = json!({"role": pair.role, "change": pair.change, "file": file});
            for (verb, command) in [
                (
                    format!("add to {}'s context for {}", pair.role, pair.change),
                    "curate.add",
                ),
                (
                    format!("drop from {}'s context for {}", pair.role, pair.change),
                    "curate.drop",
                ),
            ] {
                actions.push(json!({
                    "title": verb,
                    "kind": "refactor",
                    "command": {"title": verb, "command": command, "arguments": [target]},
                }));
            }
        }
        Value::Array(actions)
    }

    /// "adopt" on a manifest edited by hand (saved): its edits into the overrides file.
    fn adopt_action(&self, ws: &Workspace, uri: &str) -> Vec<Value> {
        let Some(doc) = self.docs.get(uri) else {
            return Vec::new();
        };
        let Kind::Manifest(pair) = docs::kind(ws, &doc.path) else {
            return Vec::new();
        };
        let claims_curate = doc.text.starts_with("// curate:");
        if !claims_curate || crate::stages::manifest::is_intact(&doc.text) {
            return Vec::new();
        }
        let title = format!(
            "adopt the hand edits into {}",
            ws.overrides_path(&pair.change, &pair.role)
        );
        vec![json!({
            "title": title,
            "kind": "quickfix",
            "command": {"title": title, "command": "curate.adopt",
                        "arguments": [{"role": pair.role, "change": pair.change}]},
        })]
    }

    fn execute(&mut self, p: &Value) -> std::result::Result<Value, Failure> {
        let command = p["command"].as_str().unwrap_or("");
        let target: Target = params(&p["arguments"][0])?;
        check_name("role", &target.role)?;
        crate::settings::check_change_id(&target.change)?;
        match command {
            "curate.preview" => {
                let prompt = self.preview(&target).map(|p| super::redacted(&p));
                let shown = match &prompt {
                    Ok(p) => p.clone(),
                    Err(e) => live::error_document(e),
                };
                self.open_preview(&target, &shown);
                Ok(Value::String(prompt?))
            }
            "curate.adopt" => {
                let said = self.adopt(&target)?;
                self.input_changed(None);
                Ok(Value::String(super::redacted(&said)))
            }
            "curate.add" | "curate.drop" => {
                let said = self.write_override(&target, command == "curate.add")?;
                self.input_changed(None);
                Ok(Value::String(super::redacted(&said)))
            }
            other => Err(Failure::Params(format!(
                "unknown command {other:?}: curate lsp runs {}",
                super::COMMANDS.join(", ")
            ))),
        }
    }

    /// The compile settings of `t`, as `curate preview --role R --change C` resolves them.
    fn settings(&self, t: &Target) -> Result<(Workspace, CompileSettings)> {
        let (ws, change) = self.workspace()?.for_change(&t.change)?;
        Self::settings_of(ws, &change, t)
    }

    /// [`Server::settings`] in `ws`, the workspace of `change`.
    fn settings_of(
        ws: Workspace,
        change: &str,
        t: &Target,
    ) -> Result<(Workspace, CompileSettings)> {
        let task_file = match &t.task_file {
            Some(f) => Some(crate::trust::admit::contained(&ws.root, "task_file", f)?),
            None => None,
        };
        let o = CompileOptions {
            task_file,
            ..CompileOptions::defaults(&ws, &t.role, change)
        };
        let s = CompileSettings::resolve(&ws, &o)?;
        Ok((ws, s))
    }

    /// The prompt `curate preview --role R --change C` prints; a report when not READY.
    /// The task file, the contracts and the overrides file are read as the editor holds
    /// them, saved or not; a message that names a scratch copy names the file instead.
    fn preview(&self, t: &Target) -> Result<String> {
        let mut renames: Vec<(String, String)> = Vec::new();
        self.preview_unsaved(t, &mut renames).map_err(|e| {
            let text = match &e {
                Error::Failed(report) => report.clone(),
                other => crate::error::render(other, "error:"),
            };
            if renames.iter().any(|(from, _)| text.contains(from.as_str())) {
                let text = renames
                    .iter()
                    .fold(text, |text, (from, to)| text.replace(from.as_str(), to));
                Error::Failed(text.trim_end().to_owned())
            } else {
                e
            }
        })
    }

    /// [`Server::preview`], each scratch copy it reads pushed on `renames` with the file it
    /// stands for.
    fn preview_unsaved(&self, t: &Target, renames: &mut Vec<(String, String)>) -> Result<String> {
        let ws = self.workspace()?;
        let task = self.scratch_task(&ws, t)?;
        if let (Some(scratch), Some(f)) = (&task, &t.task_file) {
            renames.push((scratch.rel.clone(), f.clone()));
        }
        let given = Target {
            task_file: task.as_ref().map(|s| s.rel.clone()).or(t.task_file.clone()),
            ..t.clone()
        };
        let (mut ws, change) = ws.for_change(&t.change)?;
        let contracts = self.scratch_contracts(&ws)?;
        if let (Some(scratch), ContractSource::Repo(real)) = (&contracts, &ws.contracts) {
            renames.push((scratch.rel.clone(), real.clone()));
            ws.contracts = ContractSource::Repo(scratch.rel.clone());
        }
        let (ws, mut s) = Self::settings_of(ws, &change, &given)?;
        if let (Some(_), Some((f, _)), Some(real)) = (&task, &mut s.task, &t.task_file) {
            // Recorded as the file it stands for.
            f.path = crate::trust::admit::contained(&ws.root, "task_file", real)
                .ok()
                .and_then(|p| ws.relative(&ws.root.join(p)))
                .unwrap_or_else(|| real.clone());
        }
        let overrides = self.scratch_overrides(&ws, &s.overrides.path, &s.overrides.shown)?;
        if let Some(scratch) = &overrides {
            s.overrides.path.clone_from(&scratch.path);
        }
        let lang = ws.config.lang;
        let template = render::Template::resolve(&ws, TEMPLATE, lang);
        s.renders = template.as_ref().is_ok_and(render::Template::names_excerpt);
        let Previewed {
            compiled, prompt, ..
        } = crate::ops::preview::preview(
            &ws,
            &s,
            Source::Compile,
            || template,
            lang,
            ByteCaps::of(&ws.config),
            "run `curate compile` with the same role and change",
        )?;
        prompt.ok_or_else(|| {
            Error::Failed(report::human(
                &compiled,
                Style { color: false },
                false,
                false,
                "",
                None,
            ))
        })
    }

    /// `curate compile --adopt` for `t`: the manifest's hand edits into the overrides file,
    /// then a compile written; refused while the manifest has edits not saved.
    fn adopt(&self, t: &Target) -> std::result::Result<String, Failure> {
        let ws = self.workspace()?;
        let manifest = ws.root.join(ws.manifest_path(&t.change, &t.role));
        self.refuse_unsaved(&ws, &manifest, &ws.manifest_path(&t.change, &t.role))?;
        let (ws, change) = ws.for_change(&t.change)?;
        let o = CompileOptions::defaults(&ws, &t.role, &change);
        let mode = crate::ops::compile::Mode {
            write: true,
            adopt: true,
            ..crate::ops::compile::Mode::default()
        };
        let done = crate::ops::compile::commit(&ws, &o, mode)?;
        if done.written {
            Ok(format!(
                "{}wrote {}",
                done.outcome, done.compiled.manifest_path
            ))
        } else {
            Err(Error::Failed(report::human(
                &done.compiled,
                Style { color: false },
                false,
                false,
                &done.outcome,
                None,
            ))
            .into())
        }
    }

    /// An error when `path` is open with edits not saved (a write would lose them).
    fn refuse_unsaved(
        &self,
        ws: &Workspace,
        path: &std::path::Path,
        shown: &str,
    ) -> std::result::Result<(), Failure> {
        let unsaved = self.docs.values().any(|d| {
            d.path == path
                && crate::trust::admit::read_repo_file(&ws.root, &d.path)
                    .ok()
                    .flatten()
                    .is_none_or(|disk| disk != d.text.as_bytes())
        });
        if unsaved {
            return Err(Error::Failed(format!(
                "{shown} has edits not saved: save it, then run this again"
            ))
            .into());
        }
        Ok(())
    }

    /// Appends `{"file": …}` (add) or `{"drop": …}` to the overrides file of `t`, unless
    /// that file is open with edits not saved (they would be lost).
    fn write_override(&self, t: &Target, add: bool) -> std::result::Result<String, Failure> {
        let file = t
            .file
            .as_deref()
            .ok_or_else(|| Failure::Params("give the file to add or drop".to_owned()))?;
        let (ws, s) = self.settings(t)?;
        let path = crate::trust::admit::contained(&ws.root, "file", file).map_err(Error::from)?;
        let rel = if path.is_absolute() {
            ws.relative(&path)
                .ok_or_else(|| Failure::Params(format!("{file} is outside the repository")))?
        } else {
            path.to_string_lossy().replace('\\', "/")
        };
        crate::settings::check_no_secret("file", &rel)?;
        self.refuse_unsaved(&ws, &s.overrides.path, &s.overrides.shown)?;
        let line = if add {
            json!({"file": rel, "priority": "high", "kind": "reference", "reason": "added in the editor"})
        } else {
            json!({"drop": rel, "why": "dropped in the editor"})
        };
        crate::ops::compile::append_overrides(&ws, &s, &[line.to_string()])?;
        Ok(format!(
            "{} {rel} in {}",
            if add { "added" } else { "dropped" },
            s.overrides.shown
        ))
    }

    /// Hover on a manifest or overrides line: what the compile makes of the file it names.
    fn hover(&self, p: &Value) -> std::result::Result<Value, Failure> {
        let uri = p["textDocument"]["uri"].as_str().unwrap_or("");
        let line = p["position"]["line"].as_u64().unwrap_or(0);
        let ws = self.workspace()?;
        let Some(doc) = self.docs.get(uri) else {
            return Ok(Value::Null);
        };
        let text = usize::try_from(line)
            .ok()
            .and_then(|l| doc.text.lines().nth(l))
            .unwrap_or("");
        if docs::kind(&ws, &doc.path) == Kind::Contracts {
            return self.hover_glob(text);
        }
        let Some(pair) = self.pair_of(&ws, uri) else {
            return Ok(Value::Null);
        };
        let Ok(entry) = serde_json::from_str::<Value>(text.trim()) else {
            return Ok(Value::Null);
        };
        let Some(file) = entry["file"].as_str().or(entry["drop"].as_str()) else {
            return Ok(Value::Null);
        };
        let target = Target {
            role: pair.role,
            change: pair.change,
            file: None,
            task_file: None,
        };
        let (ws, s) = self.settings(&target)?;
        let compiled = crate::compile::compile(&ws, &s)?;
        let value = super::redacted(&fate(&compiled, file));
        Ok(json!({"contents": {"kind": "markdown", "value": value}}))
    }
}

impl Server {
    /// Hover on a contracts line holding a `"glob"`: the files it selects, and their fate,
    /// for each role and change known (the client's, those of the open manifests).
    fn hover_glob(&self, line: &str) -> std::result::Result<Value, Failure> {
        let re = regex::Regex::new(r#""glob"\s*:\s*("(?:[^"\\]|\\.)*")"#)
            .map_err(|e| Failure::Curate(Error::Failed(e.to_string())))?;
        let Some(glob) = re
            .captures(line)
            .and_then(|c| serde_json::from_str::<String>(c.get(1)?.as_str()).ok())
        else {
            return Ok(Value::Null);
        };
        let ws = self.workspace()?;
        let mut pairs: BTreeSet<Pair> = self.named.iter().cloned().collect();
        pairs.extend(self.docs.keys().filter_map(|u| self.pair_of(&ws, u)));
        let mut parts = vec![format!("**{glob}**")];
        if pairs.is_empty() {
            parts.push("open a manifest (or name a role and change in the client's initializationOptions) to see what it selects".to_owned());
        }
        let source = crate::model::quoted(&glob);
        for pair in pairs {
            let target = Target {
                role: pair.role,
                change: pair.change,
                file: None,
                task_file: None,
            };
            let (ws, s) = self.settings(&target)?;
            let compiled = crate::compile::compile(&ws, &CompileSettings { explain: true, ..s })?;
            let selected: Vec<String> = compiled
                .candidates
                .iter()
                .filter(|t| t.source.starts_with("contextFiles[") && t.source.ends_with(&source))
                .map(|t| format!("- {} · {}", t.file, t.fate))
                .collect();
            parts.push(format!(
                "{} for {}: {}",
                target.role,
                target.change,
                if selected.is_empty() {
                    "selects nothing".to_owned()
                } else {
                    format!("{} file(s)\n{}", selected.len(), selected.join("\n"))
                }
            ));
        }
        let value = super::redacted(&parts.join("\n\n"));
        Ok(json!({"contents": {"kind": "markdown", "value": value}}))
    }
}

/// What a compile made of `file` (a path, or a drop's glob): kept with its lines, tokens,
/// reason and the rung it was cut to; dropped, indexed or excluded, and why.
fn fate(c: &Compiled, file: &str) -> String {
    let head = format!("**{file}** · {} for {}\n\n", c.role_name, c.change);
    if let Some(k) = c.kept.iter().find(|k| k.entry.file == file) {
        let rung = k.degraded.as_ref().map_or_else(
            || "as selected".to_owned(),
            |d| format!("cut to {} (from {} lines)", d.to.describe(), d.from_lines),
        );
        return format!(
            "{head}kept · {} lines · about {} tokens · {} · {}\n\nrung: {rung}\n\nreason: {}",
            k.lines,
            k.tokens,
            k.entry.priority.name(),
            k.entry.kind,
            k.entry.reason
        );
    }
    let matches =
        |f: &str| f == file || crate::util::glob::matcher(file).is_ok_and(|m| m.is_match(f));
    let gone: Vec<String> = c
        .dropped
        .iter()
        .filter(|d| matches(&d.file))
        .map(|d| format!("dropped: {} ({} by {})", d.file, d.rule, d.by))
        .chain(
            c.indexed
                .iter()
                .filter(|d| matches(&d.file))
                .map(|d| format!("cut to an index line: {} ({})", d.file, d.rule)),
        )
        .chain(
            c.excluded
                .iter()
                .filter(|e| matches(&e.file))
                .map(|e| format!("excluded: {} ({})", e.file, e.reason)),
        )
        .collect();
    if gone.is_empty() {
        format!("{head}not in the context")
    } else {
        format!("{head}{}", gone.join("\n\n"))
    }
}
