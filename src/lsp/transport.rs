//! The LSP framing on stdin (`Content-Length: N`, a blank line, N bytes of JSON), read on
//! its own thread. Unlike `lsp-server`'s reader, a malformed header or body does not end
//! the input: it is handed on as [`Incoming::Malformed`] (answered with a parse error) and
//! reading goes on at the next header. A body is bounded ([`MAX_BODY`]).

use std::io::{BufRead, Read};
use std::sync::mpsc::{Receiver, channel};

use lsp_server::Message;

/// The largest message body read (a whole file's text in `didChange` fits many times).
pub const MAX_BODY: usize = 64 << 20;

/// What the reader hands on.
#[derive(Debug)]
pub enum Incoming {
    Message(Message),
    /// A message that is not one: why.
    Malformed(String),
}

/// Reads stdin on a thread until it ends; the channel closes then.
pub fn read_stdin() -> Receiver<Incoming> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        while let Some(m) = next(&mut input) {
            if tx.send(m).is_err() {
                break;
            }
        }
    });
    rx
}

/// The next message of `input`; `None` at its end.
pub fn next(input: &mut impl BufRead) -> Option<Incoming> {
    let mut length: Option<usize> = None;
    let mut bad_header = None;
    loop {
        let mut line = Vec::new();
        let read = input
            .by_ref()
            .take(8 * 1024)
            .read_until(b'\n', &mut line)
            .ok()?;
        if read == 0 {
            return None;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if length.is_none() && bad_header.is_none() {
                // A stray blank line between messages.
                continue;
            }
            break;
        }
        match text.split_once(':') {
            Some((name, value)) if name.eq_ignore_ascii_case("content-length") => {
                match value.trim().parse::<usize>() {
                    Ok(n) => length = Some(n),
                    Err(_) => bad_header = Some(format!("bad Content-Length {:?}", value.trim())),
                }
            }
            Some(_) => {}
            None => bad_header = Some("a header line without `:`".to_owned()),
        }
    }
    let Some(length) = length else {
        return Some(Incoming::Malformed(
            bad_header.unwrap_or_else(|| "a message without Content-Length".to_owned()),
        ));
    };
    if length > MAX_BODY {
        // Skipped whole, so the next header is found.
        let skipped = std::io::copy(
            &mut input.by_ref().take(length as u64),
            &mut std::io::sink(),
        );
        return skipped.ok().map(|_| {
            Incoming::Malformed(format!(
                "a message of {length} bytes: curate lsp reads at most {MAX_BODY}"
            ))
        });
    }
    let mut body = vec![0; length];
    input.read_exact(&mut body).ok()?;
    Some(match serde_json::from_slice::<Message>(&body) {
        Ok(m) => Incoming::Message(m),
        Err(e) => Incoming::Malformed(format!("not a JSON-RPC message: {e}")),
    })
}

/// Writes a JSON value framed as a message.
pub fn write_raw(out: &mut impl std::io::Write, v: &serde_json::Value) -> crate::error::Result<()> {
    let body = serde_json::to_string(v).unwrap_or_default();
    write!(out, "Content-Length: {}\r\n\r\n{body}", body.len())
        .and_then(|()| out.flush())
        .map_err(|e| crate::error::Error::Failed(format!("the LSP server's output failed: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    #[test]
    fn a_malformed_message_is_said_and_the_next_one_read() {
        let text = format!(
            "{}{}Garbage\r\n\r\n{}",
            framed("{not json"),
            framed(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#),
            framed(r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#),
        );
        let mut input = std::io::Cursor::new(text.into_bytes());
        assert!(matches!(next(&mut input), Some(Incoming::Malformed(_))));
        assert!(matches!(
            next(&mut input),
            Some(Incoming::Message(Message::Notification(_)))
        ));
        assert!(matches!(next(&mut input), Some(Incoming::Malformed(_))));
        assert!(matches!(
            next(&mut input),
            Some(Incoming::Message(Message::Request(_)))
        ));
        assert!(next(&mut input).is_none());
    }
}
