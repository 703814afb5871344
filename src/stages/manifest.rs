//! The context manifest (JSONL) and its lock: formatting, the digest header, parsing an
//! existing manifest back, and telling curate's own output from a person's hand edit.
//!
//! Pure text work; the caller writes through [`crate::util::atomic`], the lock first and the
//! manifest last (the commit point).

use crate::model::FileRef;
use serde::{Deserialize, Serialize};

use crate::model::Caps;
use crate::model::Entry;
use crate::util::digest;

/// The marker of the first line.
pub const HEADER: &str = "// curate:";
/// The marker of a curation line.
pub const CURATION: &str = "// curation:";

/// The key of the header row a manifest written as rows starts with (Trellis' form: a JSON
/// row without a `file` key, which Trellis' readers skip).
pub const HEADER_KEY: &str = "_curate";
/// The key of a curation row.
pub const CURATION_KEY: &str = "_curation";
/// The key and value that mark an entry curate added (not the author's) in a manifest that
/// is also the author's list.
pub const BY: (&str, &str) = ("by", "curate");

/// How the header and the notes are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `// curate: …` and `// curation: …` lines (the aiws plugin skips them).
    Comments,
    /// `{"_curate": "…"}` and `{"_curation": "…"}` rows: every line is JSON (Trellis'
    /// `task.py validate` refuses a line that is not).
    Rows,
}

/// One line of the body: a note, a line kept as its author wrote it, or an entry.
#[derive(Debug, Clone, PartialEq)]
pub enum Line<'a> {
    /// A row of the author's, byte for byte.
    Verbatim(&'a str),
    /// An entry curate wrote; `marked` adds the [`BY`] key.
    Entry { entry: &'a Entry, marked: bool },
}

/// A manifest's first line, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub version: String,
    pub contracts: String,
    pub digest: String,
}

/// Formats a manifest: the header, the curation lines, one entry a line.
#[must_use]
pub fn format(contracts12: &str, curation: &[String], entries: &[Entry]) -> String {
    let lines: Vec<Line<'_>> = entries
        .iter()
        .map(|entry| Line::Entry {
            entry,
            marked: false,
        })
        .collect();
    format_lines(Form::Comments, contracts12, curation, &lines)
}

/// Formats a manifest of `form` from its lines (entries, and rows kept as written).
#[must_use]
pub fn format_lines(
    form: Form,
    contracts12: &str,
    curation: &[String],
    lines: &[Line<'_>],
) -> String {
    let body = body(form, curation, lines);
    let header = format!(
        "{} contracts={contracts12} digest={}",
        env!("CARGO_PKG_VERSION"),
        digest::hex12(body.as_bytes())
    );
    match form {
        Form::Comments => format!("{HEADER} {header}\n{body}"),
        Form::Rows => format!("{}\n{body}", row(HEADER_KEY, &header)),
    }
}

/// `text` as [`format_lines`] makes it, with every line ended by `\r\n` (an author's list
/// kept in Windows line endings) and its digest over the body as written.
#[must_use]
pub fn with_crlf(text: &str) -> String {
    let (first, rest) = split_header(text);
    let body = rest.replace('\n', "\r\n");
    let first = match parse_header(first) {
        Some(h) => first.replacen(
            &format!("digest={}", h.digest),
            &format!("digest={}", digest::hex12(body.as_bytes())),
            1,
        ),
        None => first.to_owned(),
    };
    format!("{first}\r\n{body}")
}

/// `{"<key>": "<text>"}`.
fn row(key: &str, text: &str) -> String {
    let mut map = serde_json::Map::new();
    map.insert(key.to_owned(), serde_json::Value::String(text.to_owned()));
    serde_json::Value::Object(map).to_string()
}

/// Everything below the header.
#[must_use]
pub fn body(form: Form, curation: &[String], lines: &[Line<'_>]) -> String {
    let mut out = String::new();
    for line in curation {
        match form {
            Form::Comments => {
                out.push_str(CURATION);
                out.push(' ');
                out.push_str(&crate::model::one_line(line));
            }
            Form::Rows => out.push_str(&row(CURATION_KEY, &crate::model::one_line(line))),
        }
        out.push('\n');
    }
    for line in lines {
        match line {
            Line::Verbatim(raw) => out.push_str(raw),
            // Serialising a plain struct of strings and numbers cannot fail.
            Line::Entry {
                entry,
                marked: false,
            } => out.push_str(&serde_json::to_string(entry).unwrap_or_default()),
            Line::Entry {
                entry,
                marked: true,
            } => {
                let mut v = serde_json::to_value(entry).unwrap_or_default();
                if let Some(map) = v.as_object_mut() {
                    map.insert(BY.0.to_owned(), serde_json::Value::String(BY.1.to_owned()));
                }
                out.push_str(&v.to_string());
            }
        }
        out.push('\n');
    }
    out
}

/// Parses a `// curate: <version> contracts=<hex12> digest=<hex12>` line.
#[must_use]
pub fn parse_header(line: &str) -> Option<Header> {
    let from_row;
    let rest = if line.starts_with('{') {
        from_row = row_text(line, HEADER_KEY)?;
        from_row.trim()
    } else {
        line.strip_prefix(HEADER)?.trim()
    };
    let mut parts = rest.split(' ');
    let version = parts.next()?.to_owned();
    let contracts = parts.next()?.strip_prefix("contracts=")?.to_owned();
    let digest = parts.next()?.strip_prefix("digest=")?.to_owned();
    let hex12 = |s: &str| s.len() == 12 && s.bytes().all(|b| b.is_ascii_hexdigit());
    if parts.next().is_some() || !hex12(&contracts) || !hex12(&digest) {
        return None;
    }
    Some(Header {
        version,
        contracts,
        digest,
    })
}

/// The text of a `{"<key>": "<text>"}` row (one key only), when `line` is one.
#[must_use]
pub fn row_text(line: &str, key: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    let map = v.as_object()?;
    if map.len() != 1 {
        return None;
    }
    map.get(key)?.as_str().map(str::to_owned)
}

/// Splits a manifest into its first line and the rest.
#[must_use]
pub fn split_header(text: &str) -> (&str, &str) {
    match text.find('\n') {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => (text, ""),
    }
}

/// True when the text is exactly what curate writes: a valid header whose digest matches
/// every byte after it.
#[must_use]
pub fn is_intact(text: &str) -> bool {
    let (first, rest) = split_header(text);
    parse_header(first).is_some_and(|h| h.digest == digest::hex12(rest.as_bytes()))
}

/// A manifest read back: its curation lines and entries (other comment lines skipped).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    pub header: Option<Header>,
    pub curation: Vec<String>,
    /// Each entry line's number and raw JSON value.
    pub entries: Vec<(usize, serde_json::Value)>,
    /// The text (after the marker) of each comment line that is neither the header nor a
    /// curation line (`// …`, `# …`).
    pub comments: Vec<String>,
    /// Lines that are not comments, blank, or JSON objects: (line, column, message).
    pub errors: Vec<(usize, usize, String)>,
}

/// Parses manifest text leniently, as a reader would (comment and blank lines allowed).
#[must_use]
pub fn parse(text: &str) -> Parsed {
    let mut out = Parsed::default();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let trimmed = line.trim();
        if i == 0 {
            out.header = parse_header(trimmed);
            if out.header.is_some() {
                continue;
            }
        }
        if trimmed.is_empty() {
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix('#') {
            out.comments.push(rest.trim().to_owned());
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix(CURATION) {
            out.curation.push(rest.trim().to_owned());
            continue;
        }
        if let Some(text) = trimmed
            .starts_with("{\"_curation\"")
            .then(|| row_text(trimmed, CURATION_KEY))
            .flatten()
        {
            out.curation.push(text.trim().to_owned());
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("//") {
            out.comments.push(rest.trim().to_owned());
            continue;
        }
        match serde_json::from_str::<serde_json::Value>(trimmed) {
            Ok(v @ serde_json::Value::Object(_)) => out.entries.push((n, v)),
            Ok(_) => out
                .errors
                .push((n, 1, "an entry must be a JSON object".to_owned())),
            Err(e) => out.errors.push((
                n,
                e.column().max(1),
                format!("invalid JSON: {}", crate::util::jsonpos::json_message(&e)),
            )),
        }
    }
    out
}

/// The resolved inputs of a compile, enough to run it again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inputs {
    pub role: String,
    pub change: String,
    pub changes_root: String,
    pub encoding: crate::model::Encoding,
    pub caps: Caps,
    pub max_file_size: u64,
    pub no_ignore: bool,
    /// `--related` tokens (0: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub related: u64,
    /// `--task-text`, as given.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub task_text: String,
    /// Where that text came from when not `--task-text` (`the prompt`: a hook's ad-hoc
    /// dispatch).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub task_text_from: String,
    /// Tokens for the files the task names or talks about (0: off; a lock written before
    /// there was such a selection has none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub task_tokens: u64,
    pub owns: Vec<String>,
    pub reads: Vec<String>,
    pub files_from: Vec<String>,
    pub overrides: Option<FileRef>,
    pub add: Vec<String>,
    pub drop: Vec<String>,
    pub task_file: Option<FileRef>,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Per entry: what was measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockEntry {
    pub file: String,
    pub sha256: String,
    pub lines: u64,
    pub tokens: u64,
    /// Bytes as the consumer injects them, when it counts bytes (Trellis' hook).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Each heading anchor of the entry's sections, with the lines it resolved to (`check
    /// --stale` resolves them again).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub anchors: Vec<(String, crate::model::Range)>,
    /// How far down the budget ladder a cap moved the entry (its sections are then its
    /// outline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded: Option<crate::stages::budget::Degraded>,
    pub encoding: crate::model::Encoding,
}

/// An entry a cap cut to an index line: named in the prompt, not read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockNamed {
    pub file: String,
    /// Its lines as selected.
    pub lines: u64,
    /// `soft_cap`, `hard_cap`, `token_cap` or `byte_cap`.
    pub rule: String,
    /// Its priority (absent in a lock written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<crate::model::Priority>,
}

/// The lock beside a manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lock {
    pub curate: String,
    /// The manifest, repository-relative.
    pub manifest: String,
    /// sha256 of every byte after the manifest's first line.
    pub digest: String,
    pub contracts: LockContracts,
    pub inputs: Inputs,
    pub entries: Vec<LockEntry>,
    /// The entries a cap cut to an index line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub indexed: Vec<LockNamed>,
    /// The curation lines curate wrote.
    pub curation: Vec<String>,
    /// The entries curate wrote.
    pub written: Vec<Entry>,
    /// The workflow's second file curate wrote beside the manifest (Guild's lane bundle),
    /// so a later run tells its own from a hand edit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub companion: Option<FileRef>,
}

/// The contracts a compile used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockContracts {
    pub source: String,
    pub sha256: String,
    /// A contracts file named by `--contracts` or `CURATE_CONTRACTS` inside the repository:
    /// its repository-relative path, so that `check --stale` compiles with it again (the
    /// repository's own, the config's or the embedded ones are found again as they were).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Named by `--contracts` or `CURATE_CONTRACTS` outside the repository: no other
    /// machine, nor `check --stale`, can read it again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub outside: bool,
}

impl Lock {
    /// True when this lock describes `manifest_text` (its digest matches the body).
    #[must_use]
    pub fn matches(&self, manifest_text: &str) -> bool {
        let (_, rest) = split_header(manifest_text);
        self.digest == digest::hex(rest.as_bytes())
    }

    /// The lock as pretty JSON with a final newline.
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// The lock's path beside a manifest path.
#[must_use]
pub fn lock_path(manifest_path: &str) -> String {
    let stem = manifest_path
        .strip_suffix(".jsonl")
        .unwrap_or(manifest_path);
    format!("{stem}.lock.json")
}

/// The default overrides file beside a manifest: the same stem, `.overrides.jsonl`.
#[must_use]
pub fn overrides_path(manifest_path: &str) -> String {
    let stem = manifest_path
        .strip_suffix(".jsonl")
        .unwrap_or(manifest_path);
    format!("{stem}.overrides.jsonl")
}

/// Reads a lock, when there is a readable one.
#[must_use]
pub fn read_lock(root: &std::path::Path, manifest_path: &str) -> Option<Lock> {
    let text =
        crate::trust::admit::read_repo_file(root, &root.join(lock_path(manifest_path))).ok()??;
    serde_json::from_slice(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Priority, Sections};

    fn entry(file: &str) -> Entry {
        Entry {
            file: file.to_owned(),
            reason: "r".to_owned(),
            sections: Sections::Whole,
            priority: Priority::High,
            kind: "truth".to_owned(),
        }
    }

    #[test]
    fn formatted_manifests_are_intact_and_edits_are_seen() {
        let text = format("0123456789ab", &["a note".into()], &[entry("a.md")]);
        assert!(text.starts_with("// curate: "));
        assert!(is_intact(&text));
        let edited = text.replace("a note", "a changed note");
        assert!(!is_intact(&edited));
        assert!(!is_intact("{\"file\":\"a.md\"}\n"));
    }

    #[test]
    fn a_list_in_crlf_is_intact_and_its_lines_are_the_same() {
        let e = entry("a.md");
        let lines = [
            Line::Verbatim("{\"_example\": \"x\"}"),
            Line::Entry {
                entry: &e,
                marked: true,
            },
        ];
        let text = format_lines(Form::Rows, "0123456789ab", &["a note".into()], &lines);
        let crlf = with_crlf(&text);
        assert!(is_intact(&crlf) && !is_intact(&crlf.replace("a note", "b note")));
        assert_eq!(crlf.matches("\r\n").count(), text.matches('\n').count());
        assert_eq!(
            crlf.lines().skip(1).collect::<Vec<_>>(),
            text.lines().skip(1).collect::<Vec<_>>()
        );
        assert_eq!(
            parse_header(crlf.lines().next().unwrap()).map(|h| h.contracts),
            Some("0123456789ab".into())
        );
    }

    #[test]
    fn header_fields_are_checked() {
        assert!(
            parse_header("// curate: 0.1.0 contracts=0123456789ab digest=0123456789ab").is_some()
        );
        assert!(parse_header("// curate: 0.1.0 contracts=0123 digest=0123456789ab").is_none());
        assert!(parse_header("// curate: 0.1.0 digest=0123456789ab").is_none());
    }

    #[test]
    fn notes_cannot_break_a_line() {
        let text = format("0123456789ab", &["two\nlines".into()], &[]);
        assert_eq!(text.lines().count(), 2);
    }

    #[test]
    fn parse_reads_entries_and_reports_bad_lines() {
        let p = parse("// curate: x\n// curation: c\n\n{\"file\":\"a\"}\n[1]\n{bad\n");
        assert_eq!(p.curation, vec!["c"]);
        assert_eq!(p.entries.len(), 1);
        assert_eq!(p.errors.len(), 2);
        assert_eq!(p.errors[0].0, 5);
    }
}
