//! Decoded views of the encoded text inside a byte buffer, as gitleaks' decoder makes them by
//! default: a secret written as base64 (a Helm or ConfigMap value, a data URL) or with
//! `\uXXXX` escapes (a JSON file) is found in its decoded view.
//!
//! A view is scanned by the same rules as the bytes; a hit is reported at the line the
//! encoded text starts on. Base64 inside a decoded view is decoded again, to a bounded
//! depth; what decodes to bytes that are not text (a hash, an image) is no view.

use base64::Engine as _;

/// The shortest base64 run decoded (24 bytes once decoded: less holds no key worth a rule).
const MIN_BASE64: usize = 32;
/// How many times a view is decoded again (base64 of base64).
pub const MAX_DEPTH: usize = 2;
/// The share of a decoded run that must be text for it to be a view, in percent.
const TEXT_SHARE: usize = 95;

/// One decoded view: its text, and the 1-based line of the original its hits are at (one
/// per line of `text`, for the `\u` view; one for the whole text, for a base64 run).
#[derive(Debug)]
pub struct View {
    pub text: Vec<u8>,
    lines: Vec<usize>,
}

impl View {
    /// The original's line of byte `offset` of [`View::text`].
    #[must_use]
    pub fn line_of(&self, offset: usize) -> usize {
        if self.lines.len() == 1 {
            return self.lines[0];
        }
        let line = memchr::memchr_iter(b'\n', &self.text[..offset.min(self.text.len())]).count();
        self.lines
            .get(line)
            .or(self.lines.last())
            .copied()
            .unwrap_or(1)
    }
}

/// The decoded views of `bytes`: each base64 run that decodes to text, then the lines that
/// hold `\u` escapes with them decoded (none when there is nothing to decode).
#[must_use]
pub fn views(bytes: &[u8]) -> Vec<View> {
    let mut out = Vec::new();
    base64_views(bytes, &mut out);
    if let Some(v) = unescaped(bytes) {
        out.push(v);
    }
    out
}

/// The bytes that may be in a base64 run (the standard and the URL-safe alphabets).
const BASE64: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'-' | b'_');
        b += 1;
    }
    t
};

/// Each run of at least [`MIN_BASE64`] base64 characters that decodes to text, as a view.
///
/// A run that long holds the byte [`MIN_BASE64`] - 1 places after any of its first bytes:
/// the search looks at that byte first and jumps past it when it is no base64 character
/// (in source code, most of the time), so most bytes are never looked at.
fn base64_views(bytes: &[u8], out: &mut Vec<View>) {
    let is = |k: usize| BASE64[usize::from(bytes[k])];
    let mut i = 0;
    let mut line = 1usize;
    let mut counted = 0usize;
    while i + MIN_BASE64 <= bytes.len() {
        let probe = i + MIN_BASE64 - 1;
        if !is(probe) {
            i = probe + 1;
            continue;
        }
        // The run through the probe: back to its start (not before `i`), on to its end.
        let mut start = probe;
        while start > i && is(start - 1) {
            start -= 1;
        }
        let mut end = probe + 1;
        while end < bytes.len() && is(end) {
            end += 1;
        }
        if end - start >= MIN_BASE64 {
            line += memchr::memchr_iter(b'\n', &bytes[counted..start]).count();
            counted = start;
            if let Some(text) = decode(&bytes[start..end]) {
                out.push(View {
                    text,
                    lines: vec![line],
                });
            }
        }
        i = end + 1;
    }
}

/// A run decoded, when it is base64 of text.
fn decode(run: &[u8]) -> Option<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    let url = run.iter().any(|b| matches!(b, b'-' | b'_'));
    let standard = run.iter().any(|b| matches!(b, b'+' | b'/'));
    if url && standard {
        return None;
    }
    // A length of 4n + 1 is no base64: the last character is another text's.
    let run = if run.len() % 4 == 1 {
        &run[..run.len() - 1]
    } else {
        run
    };
    let engine = if url {
        URL_SAFE_NO_PAD
    } else {
        STANDARD_NO_PAD
    };
    let decoded = engine.decode(run).ok()?;
    let text = decoded
        .iter()
        .filter(|&&b| matches!(b, b'\t' | b'\n' | b'\r' | b' '..=b'~') || b >= 0x80)
        .count();
    (text * 100 >= decoded.len() * TEXT_SHARE && std::str::from_utf8(&decoded).is_ok())
        .then_some(decoded)
}

/// The lines of `bytes` that hold a `\uXXXX` escape, each with its escapes decoded, one line
/// of the view a line of the original.
fn unescaped(bytes: &[u8]) -> Option<View> {
    memchr::memmem::find(bytes, b"\\u")?;
    let mut text = Vec::new();
    let mut lines = Vec::new();
    for (n, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if memchr::memmem::find(line, b"\\u").is_none() {
            continue;
        }
        let before = text.len();
        let mut decoded = false;
        let mut k = 0;
        while k < line.len() {
            if line[k] == b'\\'
                && line.get(k + 1) == Some(&b'u')
                && let Some(c) = line
                    .get(k + 2..k + 6)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .and_then(char::from_u32)
            {
                let mut buf = [0u8; 4];
                text.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                decoded = true;
                k += 6;
            } else {
                text.push(line[k]);
                k += 1;
            }
        }
        if decoded {
            text.push(b'\n');
            lines.push(n + 1);
        } else {
            text.truncate(before);
        }
    }
    (!lines.is_empty()).then_some(View { text, lines })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_of_text_is_a_view_at_its_line_and_of_bytes_is_none() {
        let secret = "password = hunter2hunter2hunter2hunter2";
        let b64 = base64::engine::general_purpose::STANDARD.encode(secret);
        let text = format!("a: 1\nb: 2\nvalue: {b64}\n");
        let v = views(text.as_bytes());
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].text, secret.as_bytes());
        assert_eq!(v[0].line_of(5), 3);
        // A hash or an image: bytes, not text.
        let binary: Vec<u8> = (0u8..=255).collect();
        let b64 = base64::engine::general_purpose::STANDARD.encode(&binary);
        assert!(views(format!("integrity: {b64}\n").as_bytes()).is_empty());
        // Short runs and identifiers are not decoded.
        assert!(views(b"let some_long_identifier_name_here = 1;\n").is_empty());
    }

    #[test]
    fn a_run_is_found_wherever_it_starts_and_ends() {
        // 24 bytes of text: a run of exactly 32 characters.
        let run = base64::engine::general_purpose::STANDARD.encode("ghp_abcdefghijklmnopqrst");
        assert_eq!(run.len(), MIN_BASE64);
        for before in 0..40 {
            for after in ["", "\n", " x"] {
                let text = format!(
                    "{}{run}{after}",
                    ". ".repeat(before / 2) + &".".repeat(before % 2)
                );
                let v = views(text.as_bytes());
                assert_eq!(v.len(), 1, "{text:?}");
                assert_eq!(v[0].text, b"ghp_abcdefghijklmnopqrst");
            }
        }
        // One character short: not a run.
        assert!(views(format!("x {}\n", &run[1..]).as_bytes()).is_empty());
    }

    #[test]
    fn unicode_escapes_are_decoded_line_by_line() {
        let text = b"{\n  \"a\": 1,\n  \"t\": \"\\u0067\\u0068p_x\"\n}\n";
        let v = views(text);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].text, b"  \"t\": \"ghp_x\"\n");
        assert_eq!(v[0].line_of(3), 3);
        // No escape on the line: no view.
        assert!(views(b"path \\users and \\u00zz\n").is_empty());
    }
}
