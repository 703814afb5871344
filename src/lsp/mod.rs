//! The Language Server (`curate lsp`): curate in any editor with an LSP client, on stdin and
//! stdout, a front-end beside the command line, the hooks and the MCP server.
//!
//! Built on `lsp-server` (rust-analyzer's, maintained with it): synchronous, so no async
//! runtime for a server whose every answer is one library call (`tower-lsp` would bring
//! one). Its messages ([`lsp_server::Message`]) are used, but not its stdio threads: their
//! reader stops the server at the first malformed message, and here a malformed message is
//! answered with a parse error and the server reads on ([`transport`]). The few fields read
//! of each request are taken from its JSON as it comes, so a field of the wrong type is a
//! missing one, never a failed request.
//!
//! What it offers, each the library call of a command (`crate::ops`), never a second
//! implementation:
//! - diagnostics on overrides files (every bad line), task files and contracts (their
//!   parsers) and on manifests and locks (`check`, with the editor's texts in the place of
//!   the files), all from the editor's text as it is typed; cleared when fixed;
//! - `curate.preview` (`workspace/executeCommand`, arguments `{role, change}`): the prompt
//!   `curate preview --role R --change C` prints, byte for byte, answered and written to a
//!   read-only document under `.curate/state/preview/` that the client is asked to show
//!   (`window/showDocument`) and that follows its inputs (`features::live`); a code lens
//!   on the first line of a manifest (its lock, its overrides file), a plan and a task file
//!   runs it, and a code action does for the editors without lenses;
//! - hover on a manifest or overrides entry: what the compile makes of its file; on a
//!   contracts glob: the files it selects;
//! - code actions "add to <role>'s context for <change>" / "drop from it", appended to the
//!   overrides file (`curate.add` / `curate.drop`); "adopt" on a manifest edited by hand
//!   (`curate.adopt`, as `curate compile --adopt`).
//!
//! Stdout carries the protocol only. Every answer, notification and preview document passes
//! [`crate::trust::redact::redact`]: nothing secret reaches the editor.

mod docs;
mod features;
mod transport;

use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use lsp_server::{ErrorCode, Message, Notification, Request, Response};
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::settings::WorkspaceOptions;

/// How long the text must rest after an edit before its diagnostics are computed.
const DEBOUNCE: Duration = Duration::from_millis(250);

/// The longest diagnostics wait while messages keep coming (a client that never rests).
const MAX_WAIT: Duration = Duration::from_secs(2);

/// The commands the server runs (`workspace/executeCommand`).
pub const COMMANDS: [&str; 4] = [
    "curate.preview",
    "curate.add",
    "curate.drop",
    "curate.adopt",
];

/// Serves LSP on stdin and stdout until `exit` or the end of stdin. `root` names where the
/// repository is found (`dir` is `-C`); the client's `rootUri` is used when `-C` is not given.
pub fn serve(root: WorkspaceOptions) -> Result<()> {
    let incoming = transport::read_stdin();
    let mut out = std::io::stdout().lock();
    let mut server = features::Server::new(WorkspaceOptions {
        progress: false,
        ..root
    });
    let mut shutting_down = false;
    loop {
        if server.waited() >= MAX_WAIT {
            for n in guarded(|| server.publish_pending()).unwrap_or_default() {
                send(&mut out, &n.into())?;
            }
        }
        let wait = if server.pending() {
            incoming.recv_timeout(DEBOUNCE)
        } else {
            incoming.recv().map_err(|_| RecvTimeoutError::Disconnected)
        };
        let message = match wait {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => {
                for n in guarded(|| server.publish_pending()).unwrap_or_default() {
                    send(&mut out, &n.into())?;
                }
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => return Ok(()),
        };
        match message {
            transport::Incoming::Malformed(why) => {
                let r = Response::new_err(
                    lsp_server::RequestId::from(0),
                    ErrorCode::ParseError as i32,
                    why,
                );
                // The id of a message that did not parse is unknown: JSON-RPC says null.
                let mut v = serde_json::to_value(&r).unwrap_or(Value::Null);
                v["id"] = Value::Null;
                transport::write_raw(&mut out, &v)?;
            }
            transport::Incoming::Message(Message::Request(req)) => {
                if req.method == "shutdown" {
                    shutting_down = true;
                    send(&mut out, &Response::new_ok(req.id, Value::Null).into())?;
                    continue;
                }
                if shutting_down {
                    send(
                        &mut out,
                        &Response::new_err(
                            req.id,
                            ErrorCode::InvalidRequest as i32,
                            "the server is shutting down".to_owned(),
                        )
                        .into(),
                    )?;
                    continue;
                }
                let response = answer(&mut server, &req);
                send(&mut out, &response.into())?;
                for m in server.take_outbox() {
                    send(&mut out, &m)?;
                }
            }
            transport::Incoming::Message(Message::Notification(n)) => {
                if n.method == "exit" {
                    return Ok(());
                }
                let notes = guarded(|| server.notified(&n)).unwrap_or_default();
                for note in notes {
                    send(&mut out, &note.into())?;
                }
                for m in server.take_outbox() {
                    send(&mut out, &m)?;
                }
            }
            // The answer to one of the server's requests (showing a document, registering
            // watchers): nothing waits for it.
            transport::Incoming::Message(Message::Response(_)) => {}
        }
    }
}

/// The response to a request: its answer, or an error with curate's message (a panic is
/// an internal error, and the server goes on).
fn answer(server: &mut features::Server, req: &Request) -> Response {
    let id = req.id.clone();
    match guarded(|| server.request(req)) {
        Some(Ok(v)) => Response::new_ok(id, v),
        Some(Err(Failure::Params(why))) => {
            Response::new_err(id, ErrorCode::InvalidParams as i32, redacted(&why))
        }
        Some(Err(Failure::Unknown)) => Response::new_err(
            id,
            ErrorCode::MethodNotFound as i32,
            format!("curate lsp does not answer {}", req.method),
        ),
        Some(Err(Failure::Curate(e))) => Response::new_err(
            id,
            ErrorCode::RequestFailed as i32,
            redacted(crate::error::render(&e, "error:").trim_end()),
        ),
        None => Response::new_err(
            id,
            ErrorCode::InternalError as i32,
            "internal error: the request panicked".to_owned(),
        ),
    }
}

/// Why a request has no answer.
#[derive(Debug)]
pub enum Failure {
    /// Its parameters are not what the method takes.
    Params(String),
    /// A method the server does not answer.
    Unknown,
    /// curate's own error (an unreadable input, an unknown role…).
    Curate(Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Curate(e)
    }
}

/// Runs `work`, a panic caught (`None`).
fn guarded<T>(work: impl FnOnce() -> T) -> Option<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).ok()
}

fn send(out: &mut impl std::io::Write, m: &Message) -> Result<()> {
    m.clone()
        .write(out)
        .map_err(|e| Error::Failed(format!("the LSP server's output failed: {e}")))
}

/// `text` with every secret in it replaced: what the editor is shown.
fn redacted(text: &str) -> String {
    crate::trust::redact::redact(text)
}

/// The parameters of a request or notification, as the method's type.
fn params<T: serde::de::DeserializeOwned>(v: &Value) -> std::result::Result<T, Failure> {
    serde_json::from_value(v.clone()).map_err(|e| Failure::Params(format!("invalid params: {e}")))
}

/// The server's capabilities, answered at `initialize`.
fn capabilities() -> Value {
    json!({
        "textDocumentSync": {"openClose": true, "change": 1, "save": {"includeText": false}},
        "hoverProvider": true,
        "codeLensProvider": {"resolveProvider": false},
        "codeActionProvider": true,
        "executeCommandProvider": {"commands": COMMANDS},
    })
}

/// A notification to the client.
fn notification(method: &str, params: Value) -> Notification {
    Notification::new(method.to_owned(), params)
}
