//! A fake model server on 127.0.0.1 (port 0): it speaks the Anthropic Messages API
//! (`/v1/messages`, SSE when `stream` is set, and `count_tokens`), the OpenAI chat
//! completions API (`/chat/completions`), the OpenAI Responses API (`/responses`, as
//! Codex streams it) and Gemini's `generateContent` (SSE with `alt=sse`), records every request with its headers, and answers each with the
//! reply a test's script picks for it. Standard library only; nothing else is listened on
//! or connected to.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

/// What the model answers one request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A text, and the turn ends.
    Text(String),
    /// One tool call (the turn stops for its result).
    Call {
        id: String,
        name: String,
        input: Value,
    },
}

impl Reply {
    pub fn text(text: &str) -> Reply {
        Reply::Text(text.to_owned())
    }

    pub fn call(id: &str, name: &str, input: Value) -> Reply {
        Reply::Call {
            id: id.to_owned(),
            name: name.to_owned(),
            input,
        }
    }
}

/// The API a request was made in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Anthropic,
    OpenAi,
    /// The Responses API (`input` items; a namespaced tool called as `namespace/name`).
    Responses,
    /// Gemini's `generateContent` (`contents` of `parts`; a call and its result are known
    /// by the tool's name).
    Gemini,
}

/// One recorded request to a model endpoint.
#[derive(Clone, Debug)]
pub struct Exchange {
    pub dialect: Dialect,
    /// The request body as sent, in bytes: what the host resends of its context.
    pub size: usize,
    pub body: Value,
    /// The request's headers, names in lower case.
    pub headers: Vec<(String, String)>,
}

/// A message of a request, both dialects alike.
#[derive(Clone, Debug, Default)]
pub struct Message {
    pub role: String,
    /// The text parts, in order.
    pub texts: Vec<String>,
    /// Tool calls (the assistant's): id, name, input.
    pub calls: Vec<(String, String, Value)>,
    /// Tool results: the call id and the result's text.
    pub results: Vec<(String, String)>,
}

impl Exchange {
    /// The conversation's messages (the system prompt is not one).
    pub fn messages(&self) -> Vec<Message> {
        if self.dialect == Dialect::Responses {
            return responses_messages(&self.body["input"]);
        }
        if self.dialect == Dialect::Gemini {
            return gemini_messages(&self.body["contents"]);
        }
        let list = self.body["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        list.iter()
            .map(|m| match self.dialect {
                Dialect::Anthropic => anthropic_message(m),
                Dialect::OpenAi | Dialect::Responses | Dialect::Gemini => openai_message(m),
            })
            .collect()
    }

    /// Every text of every user message, in order.
    pub fn user_texts(&self) -> Vec<String> {
        self.messages()
            .into_iter()
            .filter(|m| m.role == "user")
            .flat_map(|m| m.texts)
            .collect()
    }

    /// True when a user text holds `needle`.
    pub fn user_says(&self, needle: &str) -> bool {
        self.user_texts().iter().any(|t| t.contains(needle))
    }

    /// The first user message, which starts the conversation.
    pub fn first_user_message(&self) -> Option<Message> {
        self.messages().into_iter().find(|m| m.role == "user")
    }

    /// The names of the tools offered.
    pub fn tools(&self) -> Vec<String> {
        let list = self.body["tools"].as_array().cloned().unwrap_or_default();
        if self.dialect == Dialect::Gemini {
            return list
                .iter()
                .flat_map(|t| {
                    t["functionDeclarations"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default()
                })
                .filter_map(|d| d["name"].as_str().map(str::to_owned))
                .collect();
        }
        if self.dialect == Dialect::Responses {
            // Functions by name, a namespace's tools as `namespace/name`.
            return list
                .iter()
                .flat_map(|t| -> Vec<String> {
                    match t["tools"].as_array() {
                        Some(inner) => inner
                            .iter()
                            .filter_map(|i| i["name"].as_str())
                            .map(|i| format!("{}/{i}", t["name"].as_str().unwrap_or_default()))
                            .collect(),
                        None => t["name"].as_str().map(str::to_owned).into_iter().collect(),
                    }
                })
                .collect();
        }
        list.iter()
            .filter_map(|t| match self.dialect {
                Dialect::Anthropic => t["name"].as_str(),
                _ => t["function"]["name"].as_str(),
            })
            .map(str::to_owned)
            .collect()
    }

    /// The value of the header `name` (lower case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// True when the tool `name` is offered.
    pub fn offers(&self, name: &str) -> bool {
        self.tools().iter().any(|t| t == name)
    }

    /// The call `id` as the assistant made it earlier in this conversation: name and input.
    pub fn call(&self, id: &str) -> Option<(String, Value)> {
        self.messages()
            .into_iter()
            .flat_map(|m| m.calls)
            .find(|(i, _, _)| i == id)
            .map(|(_, name, input)| (name, input))
    }

    /// The text of the result of the call `id`, when this request carries it.
    pub fn result_of(&self, id: &str) -> Option<String> {
        self.messages()
            .into_iter()
            .flat_map(|m| m.results)
            .find(|(i, _)| i == id)
            .map(|(_, text)| text)
    }
}

fn text_parts(content: &Value) -> Vec<String> {
    match content {
        Value::String(s) => vec![s.clone()],
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p["type"] == "text")
            .filter_map(|p| p["text"].as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

fn anthropic_message(m: &Value) -> Message {
    let mut out = Message {
        role: m["role"].as_str().unwrap_or_default().to_owned(),
        ..Message::default()
    };
    let blocks = match &m["content"] {
        Value::String(s) => vec![json!({"type": "text", "text": s})],
        Value::Array(a) => a.clone(),
        _ => Vec::new(),
    };
    for b in &blocks {
        match b["type"].as_str() {
            Some("text") => out
                .texts
                .push(b["text"].as_str().unwrap_or_default().to_owned()),
            Some("tool_use") => out.calls.push((
                b["id"].as_str().unwrap_or_default().to_owned(),
                b["name"].as_str().unwrap_or_default().to_owned(),
                b["input"].clone(),
            )),
            Some("tool_result") => out.results.push((
                b["tool_use_id"].as_str().unwrap_or_default().to_owned(),
                text_parts(&b["content"]).concat(),
            )),
            _ => {}
        }
    }
    out
}

/// Gemini's `contents` as messages: text parts, `functionCall`s and `functionResponse`s,
/// both known by the tool's name.
fn gemini_messages(contents: &Value) -> Vec<Message> {
    let list = contents.as_array().cloned().unwrap_or_default();
    list.iter()
        .map(|c| {
            let mut m = Message {
                role: c["role"].as_str().unwrap_or("user").to_owned(),
                ..Message::default()
            };
            for p in c["parts"].as_array().into_iter().flatten() {
                if let Some(t) = p["text"].as_str() {
                    m.texts.push(t.to_owned());
                } else if p["functionCall"].is_object() {
                    let name = p["functionCall"]["name"].as_str().unwrap_or_default();
                    m.calls.push((
                        name.to_owned(),
                        name.to_owned(),
                        p["functionCall"]["args"].clone(),
                    ));
                } else if p["functionResponse"].is_object() {
                    let name = p["functionResponse"]["name"].as_str().unwrap_or_default();
                    m.results.push((
                        name.to_owned(),
                        p["functionResponse"]["response"].to_string(),
                    ));
                }
            }
            m
        })
        .collect()
}

/// The Responses API's `input` items as messages: a `message` item, a `function_call` (an
/// assistant's call), a `function_call_output` (a tool's result).
fn responses_messages(input: &Value) -> Vec<Message> {
    let items = input.as_array().cloned().unwrap_or_default();
    items
        .iter()
        .filter_map(|item| match item["type"].as_str() {
            Some("message") => Some(Message {
                role: item["role"].as_str().unwrap_or_default().to_owned(),
                texts: item["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p["text"].as_str().map(str::to_owned))
                    .collect(),
                ..Message::default()
            }),
            Some("function_call") => Some(Message {
                role: "assistant".to_owned(),
                calls: vec![(
                    item["call_id"].as_str().unwrap_or_default().to_owned(),
                    item["name"].as_str().unwrap_or_default().to_owned(),
                    serde_json::from_str(item["arguments"].as_str().unwrap_or("null"))
                        .unwrap_or(Value::Null),
                )],
                ..Message::default()
            }),
            Some("function_call_output") => Some(Message {
                role: "tool".to_owned(),
                results: vec![(
                    item["call_id"].as_str().unwrap_or_default().to_owned(),
                    match &item["output"] {
                        Value::String(s) => s.clone(),
                        other => text_parts(other).concat(),
                    },
                )],
                ..Message::default()
            }),
            _ => None,
        })
        .collect()
}

fn openai_message(m: &Value) -> Message {
    let role = m["role"].as_str().unwrap_or_default().to_owned();
    let mut out = Message {
        role: role.clone(),
        ..Message::default()
    };
    if role == "tool" {
        let id = m["tool_call_id"].as_str().unwrap_or_default().to_owned();
        out.results.push((id, text_parts(&m["content"]).concat()));
        return out;
    }
    out.texts = text_parts(&m["content"]);
    for c in m["tool_calls"].as_array().into_iter().flatten() {
        let args = c["function"]["arguments"].as_str().unwrap_or("null");
        out.calls.push((
            c["id"].as_str().unwrap_or_default().to_owned(),
            c["function"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            serde_json::from_str(args).unwrap_or(Value::Null),
        ));
    }
    out
}

type Script = dyn Fn(&Exchange) -> Reply + Send + Sync;

/// The running server; it stops when dropped.
pub struct FakeModel {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<Exchange>>>,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl FakeModel {
    /// Starts the server on 127.0.0.1 with `script` choosing each reply.
    pub fn start(script: impl Fn(&Exchange) -> Reply + Send + Sync + 'static) -> FakeModel {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let script: Arc<Script> = Arc::new(script);
        let accept = {
            let (log, stop) = (Arc::clone(&log), Arc::clone(&stop));
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let (log, script) = (Arc::clone(&log), Arc::clone(&script));
                    std::thread::spawn(move || serve(stream, &log, &*script));
                }
            })
        };
        FakeModel {
            addr,
            log,
            stop,
            accept: Some(accept),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every model request received so far, in order.
    pub fn requests(&self) -> Vec<Exchange> {
        self.log.lock().expect("log lock").clone()
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so that it sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

struct Request {
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// Serves one connection, request after request (keep-alive), until the client closes it
/// or stays silent for 60 s.
fn serve(stream: TcpStream, log: &Mutex<Vec<Exchange>>, script: &Script) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader) {
        let (status, kind, body) = answer(&request, log, script);
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: keep-alive\r\n\r\n",
            body.len()
        );
        if writer.write_all(head.as_bytes()).is_err() || writer.write_all(&body).is_err() {
            return;
        }
        let _ = writer.flush();
    }
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let path = line.split_whitespace().nth(1)?.to_owned();
    let (mut length, mut chunked) = (0usize, false);
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
        headers.push((name.clone(), value.to_owned()));
        if name == "content-length" {
            length = value.parse().ok()?;
        } else if name == "transfer-encoding" && value.eq_ignore_ascii_case("chunked") {
            chunked = true;
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).ok()?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else {
        body.resize(length, 0);
        reader.read_exact(&mut body).ok()?;
    }
    Some(Request {
        path,
        headers,
        body,
    })
}

fn answer(
    request: &Request,
    log: &Mutex<Vec<Exchange>>,
    script: &Script,
) -> (&'static str, &'static str, Vec<u8>) {
    let route = request.path.split('?').next().unwrap_or_default();
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    if route.ends_with("/messages/count_tokens") {
        return ok_json(&json!({"input_tokens": 100}));
    }
    if route.ends_with(":countTokens") {
        return ok_json(&json!({"totalTokens": 100}));
    }
    let dialect = if route.ends_with("/v1/messages") {
        Dialect::Anthropic
    } else if route.ends_with("/chat/completions") {
        Dialect::OpenAi
    } else if route.ends_with("/responses") {
        Dialect::Responses
    } else if route.ends_with(":generateContent") || route.ends_with(":streamGenerateContent") {
        Dialect::Gemini
    } else {
        let error = json!({"error": {"type": "not_found_error", "message": "not served here"}});
        return (
            "404 Not Found",
            "application/json",
            error.to_string().into(),
        );
    };
    let exchange = Exchange {
        dialect,
        size: request.body.len(),
        body,
        headers: request.headers.clone(),
    };
    let reply = script(&exchange);
    let model = exchange.body["model"].as_str().unwrap_or("fake").to_owned();
    let stream = exchange.body["stream"] == true || request.path.contains("alt=sse");
    log.lock().expect("log lock").push(exchange);
    match (dialect, stream) {
        (Dialect::Anthropic, true) => sse(&anthropic_events(&model, &reply)),
        (Dialect::Anthropic, false) => ok_json(&anthropic_message_json(&model, &reply)),
        (Dialect::OpenAi, true) => sse(&openai_chunks(&model, &reply)),
        (Dialect::OpenAi, false) => ok_json(&openai_completion(&model, &reply)),
        (Dialect::Responses, _) => sse(&responses_events(&reply)),
        (Dialect::Gemini, true) => sse(&[("", gemini_response(&reply))]),
        (Dialect::Gemini, false) => ok_json(&gemini_response(&reply)),
    }
}

fn ok_json(v: &Value) -> (&'static str, &'static str, Vec<u8>) {
    ("200 OK", "application/json", v.to_string().into())
}

/// Server-sent events: `(event name, data)`. Anthropic names every event; OpenAI names none
/// and ends its stream with `data: [DONE]`.
fn sse(events: &[(&str, Value)]) -> (&'static str, &'static str, Vec<u8>) {
    let mut out = String::new();
    for (name, data) in events {
        if !name.is_empty() {
            out.push_str(&format!("event: {name}\n"));
        }
        out.push_str(&format!("data: {data}\n\n"));
    }
    let openai = events.iter().all(|(name, _)| name.is_empty())
        && !events.is_empty()
        && events
            .iter()
            .all(|(_, data)| data.get("candidates").is_none());
    if openai {
        out.push_str("data: [DONE]\n\n");
    }
    ("200 OK", "text/event-stream", out.into())
}

fn usage() -> Value {
    json!({"input_tokens": 100, "output_tokens": 5})
}

fn anthropic_content(reply: &Reply) -> (Value, &'static str) {
    match reply {
        Reply::Text(text) => (json!({"type": "text", "text": text}), "end_turn"),
        Reply::Call { id, name, input } => (
            json!({"type": "tool_use", "id": id, "name": name, "input": input}),
            "tool_use",
        ),
    }
}

fn anthropic_message_json(model: &str, reply: &Reply) -> Value {
    let (block, stop) = anthropic_content(reply);
    json!({"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
           "content": [block], "stop_reason": stop, "stop_sequence": null, "usage": usage()})
}

fn anthropic_events(model: &str, reply: &Reply) -> Vec<(&'static str, Value)> {
    let (start, delta) = match reply {
        Reply::Text(text) => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": text}),
        ),
        Reply::Call { id, name, input } => (
            json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": input.to_string()}),
        ),
    };
    let (_, stop) = anthropic_content(reply);
    vec![
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_fake", "type": "message",
                   "role": "assistant", "model": model, "content": [], "stop_reason": null,
                   "stop_sequence": null, "usage": {"input_tokens": 100, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": start}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                   "usage": {"output_tokens": 5}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]
}

fn openai_completion(model: &str, reply: &Reply) -> Value {
    let (message, finish) = match reply {
        Reply::Text(text) => (json!({"role": "assistant", "content": text}), "stop"),
        Reply::Call { id, name, input } => (
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": id,
                   "type": "function", "function": {"name": name, "arguments": input.to_string()}}]}),
            "tool_calls",
        ),
    };
    json!({"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
           "choices": [{"index": 0, "message": message, "finish_reason": finish}],
           "usage": {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105}})
}

fn openai_chunks(model: &str, reply: &Reply) -> Vec<(&'static str, Value)> {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
               "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let (delta, finish) = match reply {
        Reply::Text(text) => (json!({"content": text}), "stop"),
        Reply::Call { id, name, input } => (
            json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
                   "function": {"name": name, "arguments": input.to_string()}}]}),
            "tool_calls",
        ),
    };
    let usage = json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                       "model": model, "choices": [],
                       "usage": {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105}});
    vec![
        (
            "",
            chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        ),
        ("", chunk(delta, Value::Null)),
        ("", chunk(json!({}), json!(finish))),
        ("", usage),
    ]
}

/// The Responses API's stream for one reply: created, the one output item, completed.
fn responses_events(reply: &Reply) -> Vec<(&'static str, Value)> {
    let item = match reply {
        Reply::Text(text) => json!({"type": "message", "role": "assistant", "id": "msg_1",
            "content": [{"type": "output_text", "text": text}]}),
        Reply::Call { id, name, input } => {
            let mut call = json!({"type": "function_call", "id": format!("fc_{id}"),
                "call_id": id, "arguments": input.to_string()});
            match name.split_once('/') {
                Some((namespace, short)) => {
                    call["namespace"] = json!(namespace);
                    call["name"] = json!(short);
                }
                None => call["name"] = json!(name),
            }
            call
        }
    };
    vec![
        (
            "response.created",
            json!({"type": "response.created", "response": {"id": "resp_1"}}),
        ),
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "item": item}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed", "response": {"id": "resp_1", "usage": {
                "input_tokens": 10, "input_tokens_details": null, "output_tokens": 5,
                "output_tokens_details": null, "total_tokens": 15}}}),
        ),
    ]
}

/// Gemini's answer: one candidate with one part, the turn's end.
fn gemini_response(reply: &Reply) -> Value {
    let part = match reply {
        Reply::Text(text) => json!({"text": text}),
        Reply::Call { name, input, .. } => json!({"functionCall": {"name": name, "args": input}}),
    };
    json!({"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP",
           "index": 0}],
           "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}})
}
