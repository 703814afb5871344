//! The line in front of rmcp: every message the client sends is screened here before the
//! protocol library sees it, so that each malformed one gets the answer JSON-RPC 2.0 names
//! for it, with the request's id, and a client never waits on a request nobody answered.
//!
//! rmcp alone drops a line over its 16 MiB cap without a word (the client waits forever),
//! answers invalid JSON with `-32600` instead of `-32700`, a `tools/call` whose `params` are
//! missing or no object with `-32601` (method not found) or `-32600` without the id, and
//! leaves `id` out of the errors it cannot tie to a request (JSON-RPC says `"id": null`).
//! What passes the screen is forwarded byte for byte.

use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt};

/// The longest line a client may send: rmcp's own cap, so that nothing forwarded is
/// dropped behind the screen.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;
const METHOD_NOT_FOUND: i64 = -32601;

/// What to do with one line from the client.
#[derive(Debug, PartialEq)]
pub enum Screened {
    /// Hand it to the server as it is.
    Forward(Passing),
    /// Answer it here (an error response), and forward nothing.
    Answer(Value),
    /// Neither: a malformed notification, which JSON-RPC never answers.
    Ignore,
}

/// An error response.
fn error(id: Option<&Value>, code: i64, message: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id.cloned().unwrap_or(Value::Null),
        "error": {"code": code, "message": message},
    })
}

/// The id of a message, when it is one JSON-RPC allows (a string or a number).
fn id_of(obj: &Map<String, Value>) -> Option<&Value> {
    obj.get("id").filter(|v| v.is_string() || v.is_number())
}

/// Screens one line (without its line break).
#[must_use]
pub fn screen(line: &[u8]) -> Screened {
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            return Screened::Answer(error(None, PARSE_ERROR, &format!("Parse error: {e}")));
        }
    };
    let Value::Object(obj) = value else {
        return Screened::Answer(error(
            None,
            INVALID_REQUEST,
            "Invalid Request: a message is one JSON object (MCP has no batches)",
        ));
    };
    let id = id_of(&obj);
    let invalid = |message: &str| {
        Screened::Answer(error(
            id,
            INVALID_REQUEST,
            &format!("Invalid Request: {message}"),
        ))
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("\"jsonrpc\" must be \"2.0\"");
    }
    if obj.contains_key("id") && id.is_none() {
        return invalid("\"id\" must be a string or a number");
    }
    if id.is_some_and(|id| id.is_number() && id.as_i64().is_none()) {
        // MCP's ids are strings or integers (rmcp's, 64-bit): answered with the id as sent.
        return invalid("\"id\" must be a string or an integer (at most 64 bits, signed)");
    }
    let Some(method) = obj.get("method") else {
        // A response to a request of the server's: rmcp's to judge.
        return if obj.contains_key("result") || obj.contains_key("error") {
            Screened::Forward(Passing::Other)
        } else {
            invalid("a message has a \"method\", or a \"result\" or \"error\"")
        };
    };
    let Some(method) = method.as_str() else {
        return invalid("\"method\" must be a string");
    };
    let bad_params = |message: String| {
        if id.is_some() {
            Screened::Answer(error(
                id,
                INVALID_PARAMS,
                &format!("Invalid params: {message}"),
            ))
        } else {
            Screened::Ignore
        }
    };
    let params = obj.get("params");
    if params.is_some_and(|p| !p.is_object()) {
        return bad_params(format!("the params of {method} must be an object"));
    }
    match method {
        "tools/call" => {
            let Some(p) = params else {
                return bad_params(
                    "tools/call needs params {\"name\": …, \"arguments\": {…}}".to_owned(),
                );
            };
            if !p.get("name").is_some_and(Value::is_string) {
                return bad_params("tools/call needs the tool's \"name\", a string".to_owned());
            }
            if p.get("arguments").is_some_and(|a| !a.is_object()) {
                return bad_params("the \"arguments\" of tools/call must be an object".to_owned());
            }
        }
        "initialize" => {
            let Some(p) = params else {
                return bad_params("initialize needs its params".to_owned());
            };
            // What MCP's initialize request must hold; rmcp, given less, answers with a
            // message about `_meta` and then stops at the client's next message.
            let text = |k: &str| p.get(k).is_some_and(Value::is_string);
            let info = p.get("clientInfo");
            if !text("protocolVersion") {
                return bad_params(
                    "initialize needs \"protocolVersion\", a string such as \"2025-06-18\""
                        .to_owned(),
                );
            }
            if !p.get("capabilities").is_some_and(Value::is_object) {
                return bad_params("initialize needs \"capabilities\", an object".to_owned());
            }
            if !info.is_some_and(|i| {
                i.get("name").is_some_and(Value::is_string)
                    && i.get("version").is_some_and(Value::is_string)
            }) {
                return bad_params(
                    "initialize needs \"clientInfo\": {\"name\": …, \"version\": …}, strings"
                        .to_owned(),
                );
            }
        }
        _ => {}
    }
    Screened::Forward(match (id, method) {
        (Some(id), _) => Passing::Request(id.clone()),
        (None, "notifications/cancelled") => params
            .and_then(|p| p.get("requestId"))
            .map_or(Passing::Other, |r| Passing::Cancels(r.clone())),
        (None, _) => Passing::Other,
    })
}

/// What a message handed to the server means for the calls in flight ([`InFlight`]).
#[derive(Debug, PartialEq)]
pub enum Passing {
    /// A request, by its id: in flight until answered.
    Request(Value),
    /// A cancellation of the request with this id.
    Cancels(Value),
    /// A notification or a response.
    Other,
}

/// The answer to a line over [`MAX_LINE`], with the id [`IdFinder`] found in it.
#[must_use]
pub fn too_long(id: Option<&Value>) -> Value {
    error(
        id,
        INVALID_REQUEST,
        &format!(
            "Invalid Request: the message is over {} MiB; it was not read",
            MAX_LINE >> 20
        ),
    )
}

/// An answer of the server's as it goes to the client: an error without an id gets
/// `"id": null`, as JSON-RPC asks, and its message and data show a token the client sent
/// (a field's name or value rmcp quotes, a method's name) as `<secret: RULE>`; rmcp's
/// "method not found" names the method only, and says what it is. Every other line goes as
/// it is.
#[must_use]
pub fn mend_answer(line: Vec<u8>) -> Vec<u8> {
    // An error is short; a long line is a result (a prompt may hold the word).
    const LONGEST_ERROR: usize = 64 * 1024;
    if line.len() > LONGEST_ERROR || memchr::memmem::find(&line, b"\"error\"").is_none() {
        return line;
    }
    let Ok(Value::Object(mut obj)) = serde_json::from_slice::<Value>(&line) else {
        return line;
    };
    let Some(Value::Object(error)) = obj.get_mut("error") else {
        return line;
    };
    let not_found = error_code(error) == Some(METHOD_NOT_FOUND);
    if let Some(Value::String(message)) = error.get_mut("message") {
        let shown = crate::trust::redact::redact(message);
        *message = if not_found && !shown.starts_with("Method not found") {
            format!("Method not found: {shown}")
        } else {
            shown
        };
    }
    if let Some(data) = error.get_mut("data") {
        let text = data.to_string();
        let shown = crate::trust::redact::redact(&text);
        if shown != text {
            *data = Value::String(shown);
        }
    }
    obj.entry("id").or_insert(Value::Null);
    serde_json::to_vec(&obj).unwrap_or(line)
}

fn error_code(error: &Map<String, Value>) -> Option<i64> {
    error.get("code").and_then(Value::as_i64)
}

/// Finds the top-level `"id"` of a JSON object fed in pieces, in constant memory: what the
/// answer to a message too long to hold names (the id may come first or last).
#[derive(Debug, Default)]
pub struct IdFinder {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The top-level key being read, while it is short enough to be `id`.
    key: Option<Vec<u8>>,
    /// The last top-level key read.
    last_key: Vec<u8>,
    /// The bytes of the top-level `id` value, while it is being read.
    value: Option<Vec<u8>>,
    found: Option<Value>,
}

impl IdFinder {
    /// The longest id value kept.
    const MAX_ID: usize = 256;

    /// Feeds the next bytes of the line.
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.step(b);
        }
    }

    fn step(&mut self, b: u8) {
        if let Some(v) = &mut self.value {
            let ends = !self.in_string && self.depth == 1 && (b == b',' || b == b'}');
            if ends {
                self.found = serde_json::from_slice::<Value>(&v[..])
                    .ok()
                    .filter(|v| v.is_string() || v.is_number());
                self.value = None;
            } else if v.len() < Self::MAX_ID {
                v.push(b);
            } else {
                self.value = None;
            }
        }
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if let Some(key) = self.key.take() {
                    self.last_key = key;
                }
                return;
            }
            // Three bytes tell `id` from every other key.
            if let Some(key) = &mut self.key
                && key.len() < 3
            {
                key.push(b);
            }
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                // A string at the top level that no `:` has followed yet is a key.
                if self.depth == 1 && self.value.is_none() && !self.after_colon() {
                    self.key = Some(Vec::new());
                }
            }
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b':' if self.depth == 1 => {
                if self.last_key == b"id" {
                    self.value = Some(Vec::new());
                }
                self.last_key = b":".to_vec();
            }
            b',' if self.depth == 1 => self.last_key.clear(),
            _ => {}
        }
    }

    /// Between a top-level `:` and the `,` that ends its value.
    fn after_colon(&self) -> bool {
        self.last_key == b":"
    }

    /// The id found, if the line had one a response may name.
    #[must_use]
    pub fn id(&self) -> Option<&Value> {
        self.found.as_ref()
    }
}

/// Sends one answer line to the writer. The writer is gone only when the client is:
/// nothing is left to tell then.
fn send(answers: &tokio::sync::mpsc::UnboundedSender<Vec<u8>>, value: &Value) {
    let mut text = serde_json::to_vec(value).unwrap_or_default();
    text.push(b'\n');
    let _ = answers.send(text);
}

/// Whether a message rmcp is given before its session starts is one it can take then.
/// rmcp ends the whole server on a notification or a response that arrives before the
/// request that starts a session (`initialize`, or a request carrying the protocol version
/// in its `_meta`), so these are dropped until then: nothing answers a notification anyway,
/// and curate sends the client no request a response could answer.
#[derive(Debug, Default)]
pub struct Session {
    started: bool,
}

/// The `_meta` key by which a request alone starts a session (MCP's inline lifecycle).
const INLINE_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

impl Session {
    /// Whether `line` (a message the screen passed) is forwarded; marks the session started
    /// by the request that starts it.
    #[must_use]
    pub fn admits(&mut self, line: &[u8]) -> bool {
        if self.started {
            return true;
        }
        let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(line) else {
            return true;
        };
        let (Some(method), true) = (
            obj.get("method").and_then(Value::as_str),
            obj.contains_key("id"),
        ) else {
            // A notification or a response.
            return false;
        };
        self.started = method == "initialize"
            || obj
                .get("params")
                .and_then(|p| p.get("_meta"))
                .and_then(|m| m.get(INLINE_VERSION))
                .is_some();
        true
    }
}

/// Screens one whole line and forwards or answers it.
async fn deliver(
    line: &[u8],
    server: &mut (impl AsyncWrite + Unpin),
    answers: &tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
    session: &mut Session,
    in_flight: &InFlight,
) -> std::io::Result<()> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    match screen(line) {
        Screened::Forward(_) if !session.admits(line) => Ok(()),
        Screened::Forward(passing) => {
            if let Err(answer) = in_flight.passed(&passing) {
                send(answers, &answer);
                return Ok(());
            }
            server.write_all(line).await?;
            server.write_all(b"\n").await?;
            server.flush().await
        }
        Screened::Answer(v) => {
            send(answers, &v);
            Ok(())
        }
        Screened::Ignore => Ok(()),
    }
}

/// The client's requests rmcp was given and has not answered yet, by id. rmcp, told the
/// input ended, waits 5 s for the calls still running and then drops them; so the end is
/// passed on only once these are answered (or after [`InFlight::MAX_WAIT`]).
#[derive(Debug, Default)]
pub struct InFlight {
    ids: std::sync::Mutex<std::collections::HashSet<String>>,
    answered: tokio::sync::Notify,
}

impl InFlight {
    /// How long the end of the input waits for the calls still running.
    const MAX_WAIT: std::time::Duration = std::time::Duration::from_secs(600);

    fn ids(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<String>> {
        self.ids
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A message about to pass to rmcp: a request is in flight from now on, a cancellation
    /// ends one. `Err` with the answer when the request's id is one still in flight: rmcp
    /// would answer only one of the two, and the other would wait for ever.
    fn passed(&self, passing: &Passing) -> Result<(), Value> {
        match passing {
            Passing::Request(id) => {
                if !self.ids().insert(id.to_string()) {
                    return Err(error(
                        Some(id),
                        INVALID_REQUEST,
                        &format!(
                            "Invalid Request: the id {id} is that of a request still running; give each request its own id"
                        ),
                    ));
                }
            }
            Passing::Cancels(id) => self.done(&id.to_string()),
            Passing::Other => {}
        }
        Ok(())
    }

    /// A line of rmcp's: an answer ends its request. Read for its id alone (a result may
    /// be a prompt of many kilobytes: its content is skipped, not built).
    fn answered_by(&self, line: &[u8]) {
        use serde::de::IgnoredAny;
        #[derive(serde::Deserialize)]
        struct Reply {
            id: Option<Value>,
            method: Option<IgnoredAny>,
            result: Option<IgnoredAny>,
            error: Option<IgnoredAny>,
        }
        if let Ok(Reply {
            id: Some(id),
            method: None,
            result,
            error,
        }) = serde_json::from_slice::<Reply>(line)
            && (result.is_some() || error.is_some())
        {
            self.done(&id.to_string());
        }
    }

    fn done(&self, id: &str) {
        self.ids().remove(id);
        self.answered.notify_waiters();
    }

    /// Returns once no request is in flight.
    async fn settled(&self) {
        loop {
            let answered = self.answered.notified();
            tokio::pin!(answered);
            answered.as_mut().enable();
            if self.ids().is_empty() {
                return;
            }
            answered.await;
        }
    }
}

/// Reads the client's lines from `input` and screens them: what passes goes to `server`
/// (rmcp's end of the pipe), each answer to `answers`. At the input's end, once the calls
/// in flight are answered, closes `server`.
pub async fn pump_in(
    input: impl AsyncRead + Unpin,
    mut server: impl AsyncWrite + Unpin,
    answers: &tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
    in_flight: &InFlight,
) -> std::io::Result<()> {
    let mut input = tokio::io::BufReader::with_capacity(64 * 1024, input);
    let mut line: Vec<u8> = Vec::new();
    // `Some` while the current line is over the cap: it is scanned for its id, not kept.
    let mut over: Option<IdFinder> = None;
    let mut session = Session::default();
    loop {
        let chunk = input.fill_buf().await?;
        if chunk.is_empty() {
            break;
        }
        let (piece, ends) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (&chunk[..i], Some(i + 1)),
            None => (chunk, None),
        };
        if let Some(finder) = &mut over {
            finder.feed(piece);
        } else if line.len() + piece.len() > MAX_LINE {
            let mut finder = IdFinder::default();
            finder.feed(&line);
            finder.feed(piece);
            line = Vec::new();
            over = Some(finder);
        } else {
            line.extend_from_slice(piece);
        }
        let used = ends.unwrap_or(piece.len());
        input.consume(used);
        if ends.is_none() {
            continue;
        }
        match over.take() {
            Some(finder) => send(answers, &too_long(finder.id())),
            None => deliver(&line, &mut server, answers, &mut session, in_flight).await?,
        }
        line.clear();
    }
    // A last line without its line break is read all the same.
    match over.take() {
        Some(finder) => send(answers, &too_long(finder.id())),
        None => deliver(&line, &mut server, answers, &mut session, in_flight).await?,
    }
    // rmcp reads the end, answers what it was given, and stops: once it has answered.
    let _ = tokio::time::timeout(InFlight::MAX_WAIT, in_flight.settled()).await;
    server.shutdown().await
}

/// Reads the server's answers from `server` (rmcp's output), line by line, mends them and
/// hands them to `answers`, until rmcp closes its end.
pub async fn pump_out(
    server: impl AsyncRead + Unpin,
    answers: tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
    in_flight: &InFlight,
) -> std::io::Result<()> {
    let mut server = tokio::io::BufReader::new(server);
    loop {
        let mut line = Vec::new();
        if server.read_until(b'\n', &mut line).await? == 0 {
            return Ok(());
        }
        let ended = line.last() == Some(&b'\n');
        if ended {
            line.pop();
        }
        let mut line = mend_answer(line);
        in_flight.answered_by(&line);
        line.push(b'\n');
        if answers.send(line).is_err() {
            return Ok(());
        }
    }
}

/// Writes every answer to `output` as it comes, flushed, until every sender is gone.
pub async fn write_out(
    mut output: impl AsyncWrite + Unpin,
    mut answers: tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>,
) -> std::io::Result<()> {
    while let Some(line) = answers.recv().await {
        output.write_all(&line).await?;
        output.flush().await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str) -> Value {
        match screen(line.as_bytes()) {
            Screened::Answer(v) => v,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn each_malformed_message_gets_its_code_and_its_id() {
        let cases = [
            ("{not json", Value::Null, PARSE_ERROR),
            ("[1,2]", Value::Null, INVALID_REQUEST),
            ("\"x\"", Value::Null, INVALID_REQUEST),
            (
                r#"{"jsonrpc":"1.0","id":10,"method":"tools/list"}"#,
                json!(10),
                INVALID_REQUEST,
            ),
            (
                r#"{"id":"a","method":"tools/list"}"#,
                json!("a"),
                INVALID_REQUEST,
            ),
            (
                r#"{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}"#,
                Value::Null,
                INVALID_REQUEST,
            ),
            (
                r#"{"jsonrpc":"2.0","id":16,"method":5}"#,
                json!(16),
                INVALID_REQUEST,
            ),
            (
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call"}"#,
                json!(3),
                INVALID_PARAMS,
            ),
            (
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":5}"#,
                json!(4),
                INVALID_PARAMS,
            ),
            (
                r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{}}}"#,
                json!(9),
                INVALID_PARAMS,
            ),
            (
                r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"check","arguments":5}}"#,
                json!(12),
                INVALID_PARAMS,
            ),
            (
                r#"{"jsonrpc":"2.0","id":15,"method":"tools/list","params":[]}"#,
                json!(15),
                INVALID_PARAMS,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#,
                json!(1),
                INVALID_PARAMS,
            ),
            (
                r#"{"jsonrpc":"2.0","id":18,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}"#,
                json!(18),
                INVALID_PARAMS,
            ),
            (
                r#"{"jsonrpc":"2.0","id":19,"method":"initialize","params":{"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
                json!(19),
                INVALID_PARAMS,
            ),
            (r#"{"jsonrpc":"2.0","id":17}"#, json!(17), INVALID_REQUEST),
        ];
        for (line, id, code) in cases {
            let a = answer(line);
            assert_eq!(a["jsonrpc"], "2.0", "{line}");
            assert_eq!(a["id"], id, "{line}: {a}");
            assert_eq!(a["error"]["code"], code, "{line}: {a}");
        }
    }

    #[test]
    fn a_forwarded_message_says_what_it_means_for_the_calls_in_flight() {
        let passing = |line: &str| match screen(line.as_bytes()) {
            Screened::Forward(p) => p,
            other => panic!("{line}: {other:?}"),
        };
        assert_eq!(
            passing(r#"{"jsonrpc":"2.0","id":"x","method":"tools/list"}"#),
            Passing::Request(json!("x"))
        );
        assert_eq!(
            passing(
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#
            ),
            Passing::Cancels(json!(3))
        );
        assert_eq!(
            passing(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Passing::Other
        );
        assert_eq!(
            passing(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#),
            Passing::Other
        );
        // A request is in flight until answered; its id again meanwhile is refused.
        let flight = InFlight::default();
        assert!(flight.passed(&Passing::Request(json!(1))).is_ok());
        assert!(flight.passed(&Passing::Request(json!("1"))).is_ok());
        assert!(flight.passed(&Passing::Request(json!(1))).is_err());
        flight.answered_by(br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#);
        flight.answered_by(br#"{"jsonrpc":"2.0","id":"1","method":"ping"}"#);
        assert_eq!(
            flight.ids().len(),
            1,
            "a request of the server's ends nothing"
        );
        flight.passed(&Passing::Cancels(json!("1"))).unwrap();
        assert!(flight.ids().is_empty());
    }

    #[test]
    fn well_formed_messages_pass_and_bad_notifications_go_unanswered() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"check"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"unknown/method"}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
        ] {
            assert!(
                matches!(screen(line.as_bytes()), Screened::Forward(_)),
                "{line}"
            );
        }
        assert_eq!(
            screen(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#),
            Screened::Ignore
        );
    }

    #[test]
    fn the_id_of_a_message_too_long_to_hold_is_found_first_or_last() {
        let big = "x".repeat(10_000);
        let lines = [
            (
                format!(
                    r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"check","arguments":{{"paths":["{big}"]}}}}}}"#
                ),
                Some(json!(7)),
            ),
            (
                format!(
                    r#"{{"method":"tools/call","params":{{"arguments":{{"id":1,"s":"\"id\":2,{big}"}}}},"jsonrpc":"2.0","id":"last"}}"#
                ),
                Some(json!("last")),
            ),
            (
                format!(r#"{{"jsonrpc":"2.0","method":"x","params":{{"id":3,"a":"{big}"}}}}"#),
                None,
            ),
            (
                format!(
                    r#"{{"jsonrpc":"2.0", "id" : 42 , "method":"x","params":{{"a":"{big}"}}}}"#
                ),
                Some(json!(42)),
            ),
            (
                format!(r#"{{"params":{{"a":"{big}"}},"id":"a,b}}\"c","method":"x"}}"#),
                Some(json!("a,b}\"c")),
            ),
        ];
        for (line, id) in lines {
            // In pieces of every size, so a key or value cut in two is still read.
            for size in [1, 7, 4096] {
                let mut f = IdFinder::default();
                for piece in line.as_bytes().chunks(size) {
                    f.feed(piece);
                }
                assert_eq!(
                    f.id(),
                    id.as_ref(),
                    "{size}: {}",
                    &line[..60.min(line.len())]
                );
            }
        }
    }

    #[test]
    fn an_error_without_an_id_gets_a_null_one() {
        let mended = mend_answer(
            br#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}"#.to_vec(),
        );
        let v: Value = serde_json::from_slice(&mended).unwrap();
        assert_eq!(v["id"], Value::Null);
        assert!(v.as_object().unwrap().contains_key("id"));
        let ok = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec();
        assert_eq!(mend_answer(ok.clone()), ok);
    }

    #[test]
    fn an_error_shows_a_token_the_client_sent_by_its_rule_only() {
        let token = "ghp_R7mK2pQ9xV4nL8wT3yH6jB1cF5dG0sZeAa9u";
        for (line, said) in [
            (
                format!(
                    r#"{{"jsonrpc":"2.0","id":2,"error":{{"code":-32602,"message":"failed to deserialize parameters: unknown field `{token}`"}}}}"#
                ),
                "failed to deserialize parameters: unknown field `<secret: github-pat>`",
            ),
            (
                format!(
                    r#"{{"jsonrpc":"2.0","id":5,"error":{{"code":-32601,"message":"{token}"}}}}"#
                ),
                "Method not found: <secret: github-pat>",
            ),
            (
                r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"tools/nope"}}"#
                    .to_owned(),
                "Method not found: tools/nope",
            ),
        ] {
            let v: Value = serde_json::from_slice(&mend_answer(line.into_bytes())).unwrap();
            assert_eq!(v["error"]["message"], said);
            assert!(!v.to_string().contains("R7mK2pQ9"), "{v}");
        }
        let data = format!(
            r#"{{"jsonrpc":"2.0","id":7,"error":{{"code":-32602,"message":"bad","data":{{"field":"{token}"}}}}}}"#
        );
        let v: Value = serde_json::from_slice(&mend_answer(data.into_bytes())).unwrap();
        assert!(!v.to_string().contains("R7mK2pQ9"), "{v}");
        assert_eq!(v["id"], 7);
    }
}
