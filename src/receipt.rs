//! Checking `guild.handoff_receipt.v1` Markdown receipts.
//!
//! This is the engine behind `curate receipt check FILE…`. A receipt is a
//! Markdown file that holds exactly one fenced code block whose info string
//! starts with the word `guild.handoff.v2`; the block holds a JSON object
//! that must follow the `guild.handoff.v2` rules. [`check_receipt`] reports
//! every violation it finds, each with its line.
//!
//! # Fences
//!
//! Fences follow `CommonMark`: a line indented by at most three spaces, then
//! at least three backticks or tildes; the rest of the line is the info
//! string, whose first word names the block (a backtick fence's info string
//! may not contain a backtick). The block ends at a line (indented at most
//! three spaces) holding only a run of the same character at least as long
//! as the opening run, optionally followed by spaces or tabs. So a block
//! opened with four backticks can hold lines of three. Fences inside container
//! blocks (block quotes, list items indented four or more spaces) are not
//! recognised. A fence that is never closed is an error, whatever its info
//! string.
//!
//! # `guild.handoff.v2` rules
//!
//! Required keys: `schema_version` (`"guild.handoff.v2"`), `task_id`
//! (non-blank string), `tier` (`cheap`, `mid` or `powerful`), `status`
//! (`done`, `blocked` or `escalate`), `summary` (non-blank string of at most
//! 600 characters), `artifacts` (list of strings, by convention
//! `"<file>:<line-range>"`; the convention is not checked), `issues` (list of
//! strings).
//!
//! Optional keys: `escalate_reason` (string; required and non-blank when
//! `status` is `"escalate"`), `learnings` (list of strings), `notes` (string
//! of at most 200 characters), `injection_clean` (`clean`, `flagged` or
//! `unverified`). Any other key, and any key given twice, is an error.
//!
//! "Non-blank" means not empty after trimming Unicode whitespace. Lengths
//! count Unicode scalar values (`char`s) of the whole, untrimmed string. An
//! optional key given as `null` is a type error, not an absent key.
//!
//! A field violation is reported at the line (and column) of its key in the
//! Markdown file; a missing key at the line of the block's opening fence.
//! Values are echoed only shortened.
//!
//! The text `guild.handoff_receipt.v1` should appear somewhere in the file
//! (front matter `schema: guild.handoff_receipt.v1`, a heading, ...); when it
//! does not, a [`Severity::Warning`] finding is reported on line 1.

use std::collections::HashMap;
use std::fmt;

use serde_json::{Map, Value};

/// The info-string word that names the receipt's JSON block.
pub const BLOCK_INFO: &str = "guild.handoff.v2";
/// The marker that identifies a receipt file.
pub const RECEIPT_SCHEMA: &str = "guild.handoff_receipt.v1";

const SUMMARY_MAX: usize = 600;
const NOTES_MAX: usize = 200;
const ECHO_MAX: usize = 40;
const TIERS: &[&str] = &["cheap", "mid", "powerful"];
const STATUSES: &[&str] = &["done", "blocked", "escalate"];
const INJECTION: &[&str] = &["clean", "flagged", "unverified"];
const KNOWN_KEYS: &[&str] = &[
    "schema_version",
    "task_id",
    "tier",
    "status",
    "summary",
    "artifacts",
    "issues",
    "escalate_reason",
    "learnings",
    "notes",
    "injection_clean",
];
const REQUIRED_KEYS: &[&str] = &[
    "schema_version",
    "task_id",
    "tier",
    "status",
    "summary",
    "artifacts",
    "issues",
];

/// How serious a [`Finding`] is: errors fail the check, warnings do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The receipt breaks a rule.
    Error,
    /// Worth a look, but the receipt still passes.
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Error => "error",
            Self::Warning => "warning",
        })
    }
}

/// One problem found in a receipt.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// 1-based line in the Markdown file.
    pub line: usize,
    /// 1-based column, counted in characters, when known.
    pub column: Option<usize>,
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong, naming the field and the rule.
    pub message: String,
}

impl Finding {
    /// A file that could not be read (`why`), reported as its finding: the other files are
    /// still checked.
    #[must_use]
    pub fn unreadable(why: &str) -> Self {
        Self::error(1, None, why)
    }

    fn error(line: usize, column: Option<usize>, message: impl Into<String>) -> Self {
        Self {
            line,
            column,
            severity: Severity::Error,
            message: message.into(),
        }
    }
}

/// `LINE[:COLUMN]: SEVERITY: MESSAGE`, ready to be prefixed with a file name.
impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.column {
            Some(column) => write!(f, "{}:{column}", self.line)?,
            None => write!(f, "{}", self.line)?,
        }
        write!(f, ": {}: {}", self.severity, self.message)
    }
}

/// Whether any finding is an error (so the check fails).
#[must_use]
pub fn has_errors(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity == Severity::Error)
}

/// Checks the text of a receipt; returns every finding, sorted by line
/// (findings on the same line keep the order they were found in).
#[must_use]
pub fn check_receipt(text: &str) -> Vec<Finding> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect();
    let mut findings = Vec::new();

    let blocks = scan_fences(&lines);
    for block in blocks.iter().filter(|b| b.close_line.is_none()) {
        let name = if block.info_word.is_empty() {
            String::new()
        } else {
            format!(" {}", quote(&block.info_word))
        };
        findings.push(Finding::error(
            block.open_line,
            None,
            format!(
                "unclosed fence{name}: no closing {} before the end of the file",
                block.marker()
            ),
        ));
    }

    let mut handoff = blocks.iter().filter(|b| b.info_word == BLOCK_INFO);
    match handoff.next() {
        None => findings.push(Finding::error(
            1,
            None,
            format!("no fenced {BLOCK_INFO} block"),
        )),
        Some(first) => {
            for extra in handoff {
                findings.push(Finding::error(
                    extra.open_line,
                    None,
                    format!(
                        "extra {BLOCK_INFO} block (the first is at line {}); a receipt holds exactly one",
                        first.open_line
                    ),
                ));
            }
            if first.close_line.is_some() {
                check_block(&lines, first, &mut findings);
            }
        }
    }

    if !text.contains(RECEIPT_SCHEMA) {
        findings.push(Finding {
            line: 1,
            column: None,
            severity: Severity::Warning,
            message: format!(
                "{RECEIPT_SCHEMA} not found: mark the receipt, e.g. with front matter \"schema: {RECEIPT_SCHEMA}\""
            ),
        });
    }

    findings.sort_by_key(|f| f.line);
    findings
}

/// A fenced code block found in the Markdown.
#[derive(Debug)]
struct Block {
    fence_char: char,
    fence_len: usize,
    info_word: String,
    /// 1-based line of the opening fence.
    open_line: usize,
    /// 1-based line of the closing fence, if any.
    close_line: Option<usize>,
}

impl Block {
    fn marker(&self) -> String {
        std::iter::repeat_n(self.fence_char, self.fence_len).collect()
    }

    /// 0-based index range of the content lines.
    fn content_range(&self, line_count: usize) -> std::ops::Range<usize> {
        let start = self.open_line.min(line_count);
        let end = self
            .close_line
            .map_or(line_count, |close| close.saturating_sub(1))
            .clamp(start, line_count);
        start..end
    }
}

/// Splits off up to three spaces of indentation; `None` for more (or a tab).
fn fence_indent(line: &str) -> Option<&str> {
    let spaces = line.len() - line.trim_start_matches(' ').len();
    if spaces > 3 {
        return None;
    }
    line.get(spaces..)
}

fn opening_fence(line: &str) -> Option<(char, usize, &str)> {
    let rest = fence_indent(line)?;
    let fence_char = rest.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let run = rest.len() - rest.trim_start_matches(fence_char).len();
    if run < 3 {
        return None;
    }
    let info = rest.get(run..)?.trim();
    if fence_char == '`' && info.contains('`') {
        return None;
    }
    Some((fence_char, run, info))
}

fn closes(line: &str, fence_char: char, fence_len: usize) -> bool {
    let Some(rest) = fence_indent(line) else {
        return false;
    };
    let after = rest.trim_start_matches(fence_char);
    // The run is made of one-byte characters, so byte lengths count them.
    let run = rest.len() - after.len();
    run >= fence_len && after.trim_matches([' ', '\t']).is_empty()
}

fn scan_fences(lines: &[&str]) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let Some((fence_char, fence_len, info)) = opening_fence(lines[index]) else {
            index += 1;
            continue;
        };
        let close = lines
            .iter()
            .enumerate()
            .skip(index + 1)
            .find(|(_, line)| closes(line, fence_char, fence_len))
            .map(|(i, _)| i);
        blocks.push(Block {
            fence_char,
            fence_len,
            info_word: info.split_whitespace().next().unwrap_or("").to_owned(),
            open_line: index + 1,
            close_line: close.map(|i| i + 1),
        });
        match close {
            Some(i) => index = i + 1,
            None => break,
        }
    }
    blocks
}

/// Validates the JSON of a closed `guild.handoff.v2` block.
fn check_block(lines: &[&str], block: &Block, findings: &mut Vec<Finding>) {
    let range = block.content_range(lines.len());
    let first_content_line = range.start + 1;
    let content_lines = lines.get(range).unwrap_or_default();
    let content = content_lines.join("\n");

    if content.trim().is_empty() {
        findings.push(Finding::error(
            block.open_line,
            None,
            format!("{BLOCK_INFO} block is empty"),
        ));
        return;
    }

    let value: Value = match serde_json::from_str(&content) {
        Ok(value) => value,
        Err(err) => {
            findings.push(json_error(&err, content_lines, first_content_line));
            return;
        }
    };
    let Value::Object(map) = value else {
        findings.push(Finding::error(
            block.open_line,
            None,
            format!(
                "{BLOCK_INFO} block must hold a JSON object, found {}",
                kind(&value)
            ),
        ));
        return;
    };

    let keys = top_level_keys(&content)
        .into_iter()
        .map(|(key, offset)| {
            let (line, column) = position(&content, offset);
            (key, first_content_line + line, column)
        })
        .collect::<Vec<_>>();
    let mut fields = Fields {
        map: &map,
        positions: HashMap::new(),
        open_line: block.open_line,
        findings,
    };
    fields.check_keys(&keys);
    fields.check_values();
}

/// Turns a `serde_json` syntax error into a finding at its place in the file.
fn json_error(
    err: &serde_json::Error,
    content_lines: &[&str],
    first_content_line: usize,
) -> Finding {
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    let full = err.to_string();
    let message = full.strip_suffix(&suffix).unwrap_or(&full);
    let line_index = err.line().saturating_sub(1);
    let column = match (err.column(), content_lines.get(line_index)) {
        (0, _) | (_, None) => None,
        (byte_column, Some(text)) => Some(char_column(text, byte_column - 1)),
    };
    Finding::error(
        first_content_line + line_index,
        column,
        format!("invalid JSON: {message}"),
    )
}

/// 1-based character column of the byte at `byte_offset` in `line`.
fn char_column(line: &str, byte_offset: usize) -> usize {
    let mut end = byte_offset.min(line.len());
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    line.get(..end).map_or(0, |prefix| prefix.chars().count()) + 1
}

/// 0-based line and 1-based character column of byte `offset` in `text`.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = text.get(..end).unwrap_or_default();
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (line, column)
}

/// The keys of the top-level object of valid JSON `content`, each with the
/// byte offset of its opening quote, in document order (duplicates kept).
fn top_level_keys(content: &str) -> Vec<(String, usize)> {
    let bytes = content.as_bytes();
    let mut keys = Vec::new();
    let mut depth = 0usize;
    let mut expect_key = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if depth == 1 && expect_key {
                    let raw = content
                        .get(start..=i.min(bytes.len() - 1))
                        .unwrap_or_default();
                    let key =
                        serde_json::from_str::<String>(raw).unwrap_or_else(|_| raw.to_owned());
                    keys.push((key, start));
                    expect_key = false;
                }
            }
            b'{' => {
                depth += 1;
                expect_key = depth == 1;
            }
            b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' => expect_key = depth == 1,
            _ => {}
        }
        i += 1;
    }
    keys
}

/// Field-level validation of the block's object.
struct Fields<'a> {
    map: &'a Map<String, Value>,
    /// Line and column of the (last) occurrence of each key.
    positions: HashMap<String, (usize, usize)>,
    open_line: usize,
    findings: &'a mut Vec<Finding>,
}

impl<'a> Fields<'a> {
    fn error_at(&mut self, key: &str, message: String) {
        let (line, column) = self
            .positions
            .get(key)
            .map_or((self.open_line, None), |&(line, column)| {
                (line, Some(column))
            });
        self.findings.push(Finding::error(line, column, message));
    }

    fn missing(&mut self, message: String) {
        self.findings
            .push(Finding::error(self.open_line, None, message));
    }

    /// Unknown and duplicate keys; records where each key is.
    fn check_keys(&mut self, keys: &[(String, usize, usize)]) {
        let mut first_seen: HashMap<&str, usize> = HashMap::new();
        for (key, line, column) in keys {
            if let Some(first) = first_seen.get(key.as_str()) {
                self.findings.push(Finding::error(
                    *line,
                    Some(*column),
                    format!("duplicate key {} (first at line {first})", quote(key)),
                ));
            } else {
                first_seen.insert(key, *line);
                if !KNOWN_KEYS.contains(&key.as_str()) {
                    self.findings.push(Finding::error(
                        *line,
                        Some(*column),
                        format!("unknown key {}", quote(key)),
                    ));
                }
            }
            self.positions.insert(key.clone(), (*line, *column));
        }
    }

    fn check_values(&mut self) {
        for key in REQUIRED_KEYS {
            if !self.map.contains_key(*key) {
                self.missing(format!("{key}: required key missing"));
            }
        }

        if let Some(value) = self.string("schema_version")
            && value != BLOCK_INFO
        {
            let message = format!("schema_version: {} is not \"{BLOCK_INFO}\"", quote(value));
            self.error_at("schema_version", message);
        }
        self.non_blank("task_id");
        self.one_of("tier", TIERS);
        let status = self.one_of("status", STATUSES);
        if self.non_blank("summary") {
            self.max_chars("summary", SUMMARY_MAX);
        }
        self.string_list("artifacts");
        self.string_list("issues");

        let reason = self.string("escalate_reason");
        if status == Some("escalate") {
            match reason {
                None if !self.map.contains_key("escalate_reason") => {
                    self.missing(
                        "escalate_reason: required when status is \"escalate\"".to_owned(),
                    );
                }
                Some(reason) if reason.trim().is_empty() => self.error_at(
                    "escalate_reason",
                    "escalate_reason: must not be blank when status is \"escalate\"".to_owned(),
                ),
                _ => {}
            }
        }
        self.string_list("learnings");
        if self.string("notes").is_some() {
            self.max_chars("notes", NOTES_MAX);
        }
        self.one_of("injection_clean", INJECTION);
    }

    /// The string value of `key`; `None` (after reporting a type error) if
    /// present but not a string, `None` if absent.
    fn string(&mut self, key: &str) -> Option<&'a str> {
        let map = self.map;
        match map.get(key)? {
            Value::String(s) => Some(s.as_str()),
            other => {
                let message = format!("{key}: expected a string, found {}", kind(other));
                self.error_at(key, message);
                None
            }
        }
    }

    /// Checks a present value is a non-blank string; true when it is.
    fn non_blank(&mut self, key: &str) -> bool {
        match self.string(key) {
            Some(value) if value.trim().is_empty() => {
                self.error_at(key, format!("{key}: must not be blank"));
                false
            }
            Some(_) => true,
            None => false,
        }
    }

    fn max_chars(&mut self, key: &str, max: usize) {
        let count = self
            .map
            .get(key)
            .and_then(Value::as_str)
            .map_or(0, |s| s.chars().count());
        if count > max {
            self.error_at(key, format!("{key}: {count} characters, at most {max}"));
        }
    }

    /// Checks a present value is one of `allowed`; returns it when it is.
    fn one_of(&mut self, key: &str, allowed: &[&'static str]) -> Option<&'static str> {
        let value = self.string(key)?;
        if let Some(hit) = allowed.iter().find(|a| **a == value) {
            return Some(hit);
        }
        let message = format!(
            "{key}: {} is not one of {}",
            quote(value),
            allowed.join(", ")
        );
        self.error_at(key, message);
        None
    }

    fn string_list(&mut self, key: &str) {
        let map = self.map;
        match map.get(key) {
            None => {}
            Some(Value::Array(items)) => {
                for (index, item) in items.iter().enumerate() {
                    if !item.is_string() {
                        let message =
                            format!("{key}[{index}]: expected a string, found {}", kind(item));
                        self.error_at(key, message);
                    }
                }
            }
            Some(other) => {
                let message = format!("{key}: expected a list of strings, found {}", kind(other));
                self.error_at(key, message);
            }
        }
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A JSON-quoted, shortened copy of `text` for messages.
fn quote(text: &str) -> String {
    let mut short: String = text.chars().take(ECHO_MAX).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    serde_json::to_string(&short).unwrap_or_else(|_| String::from("\"?\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "---\nschema: guild.handoff_receipt.v1\n---\n# Handoff\n\n";

    fn valid_json() -> serde_json::Map<String, Value> {
        let value = serde_json::json!({
            "schema_version": "guild.handoff.v2",
            "task_id": "T-12",
            "tier": "mid",
            "status": "done",
            "summary": "Implemented the thing.",
            "artifacts": ["src/lib.rs:1-40"],
            "issues": [],
            "learnings": ["x"],
            "notes": "n",
            "injection_clean": "clean"
        });
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    /// A receipt whose block starts at line 6 and whose JSON opens on line 7,
    /// one key per line from line 8 on.
    fn receipt(map: &serde_json::Map<String, Value>) -> String {
        let json = one_key_per_line(map);
        format!("{HEADER}```{BLOCK_INFO}\n{json}\n```\n\nThanks.\n")
    }

    fn one_key_per_line(map: &serde_json::Map<String, Value>) -> String {
        let entries: Vec<String> = map
            .iter()
            .map(|(k, v)| format!("  {}: {}", Value::from(k.as_str()), v))
            .collect();
        format!("{{\n{}\n}}", entries.join(",\n"))
    }

    fn messages(findings: &[Finding]) -> Vec<String> {
        findings.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn valid_receipt_has_no_findings() {
        assert_eq!(check_receipt(&receipt(&valid_json())), vec![]);
        let mut map = valid_json();
        for key in ["learnings", "notes", "injection_clean"] {
            map.remove(key);
        }
        assert_eq!(check_receipt(&receipt(&map)), vec![]);
        map.insert("status".into(), "escalate".into());
        map.insert("escalate_reason".into(), "needs a bigger model".into());
        assert_eq!(check_receipt(&receipt(&map)), vec![]);
        // escalate_reason may be present (even blank) for other statuses.
        map.insert("status".into(), "blocked".into());
        map.insert("escalate_reason".into(), "".into());
        assert_eq!(check_receipt(&receipt(&map)), vec![]);
    }

    #[test]
    fn missing_marker_is_only_a_warning() {
        let text = receipt(&valid_json()).replace("schema: guild.handoff_receipt.v1\n", "");
        let findings = check_receipt(&text);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].severity, Severity::Warning);
        assert_eq!(findings[0].line, 1);
        assert!(!has_errors(&findings));
        // Any mention counts, e.g. in a heading.
        let text = format!("# {RECEIPT_SCHEMA}\n{text}");
        assert_eq!(check_receipt(&text), vec![]);
    }

    /// Applies `edit` to a valid receipt and returns the single finding.
    fn single(edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> String {
        let mut map = valid_json();
        edit(&mut map);
        let findings = check_receipt(&receipt(&map));
        assert_eq!(findings.len(), 1, "{findings:#?}");
        assert_eq!(findings[0].severity, Severity::Error);
        findings[0].to_string()
    }

    #[test]
    #[allow(clippy::too_many_lines)]
    fn each_rule_violated_once() {
        let set = |key: &'static str, value: Value| {
            move |m: &mut Map<String, Value>| {
                m.insert(key.to_owned(), value);
            }
        };
        let remove = |key: &'static str| {
            move |m: &mut Map<String, Value>| {
                m.remove(key);
            }
        };
        // Keys are on lines 8 (schema_version) to 17 (injection_clean).
        let cases: Vec<(String, &str)> = vec![
            (
                single(remove("schema_version")),
                "6: error: schema_version: required key missing",
            ),
            (
                single(set("schema_version", "guild.handoff.v1".into())),
                "8:3: error: schema_version: \"guild.handoff.v1\" is not \"guild.handoff.v2\"",
            ),
            (
                single(remove("task_id")),
                "6: error: task_id: required key missing",
            ),
            (
                single(set("task_id", " \t".into())),
                "9:3: error: task_id: must not be blank",
            ),
            (
                single(set("task_id", 12.into())),
                "9:3: error: task_id: expected a string, found a number",
            ),
            (
                single(remove("tier")),
                "6: error: tier: required key missing",
            ),
            (
                single(set("tier", "huge".into())),
                "10:3: error: tier: \"huge\" is not one of cheap, mid, powerful",
            ),
            (
                single(remove("status")),
                "6: error: status: required key missing",
            ),
            (
                single(set("status", "finished".into())),
                "11:3: error: status: \"finished\" is not one of done, blocked, escalate",
            ),
            (
                single(remove("summary")),
                "6: error: summary: required key missing",
            ),
            (
                single(set("summary", "".into())),
                "12:3: error: summary: must not be blank",
            ),
            (
                single(set("summary", "x".repeat(734).into())),
                "12:3: error: summary: 734 characters, at most 600",
            ),
            (
                single(remove("artifacts")),
                "6: error: artifacts: required key missing",
            ),
            (
                single(set("artifacts", serde_json::json!(["a:1", 3]))),
                "13:3: error: artifacts[1]: expected a string, found a number",
            ),
            (
                single(remove("issues")),
                "6: error: issues: required key missing",
            ),
            (
                single(set("issues", "none".into())),
                "14:3: error: issues: expected a list of strings, found a string",
            ),
            (
                single(set("status", "escalate".into())),
                "6: error: escalate_reason: required when status is \"escalate\"",
            ),
            (
                single(|m| {
                    m.insert("status".into(), "escalate".into());
                    m.insert("escalate_reason".into(), "  ".into());
                }),
                "18:3: error: escalate_reason: must not be blank when status is \"escalate\"",
            ),
            (
                single(set("escalate_reason", Value::Null)),
                "18:3: error: escalate_reason: expected a string, found null",
            ),
            (
                single(set("learnings", serde_json::json!([{"a": 1}]))),
                "15:3: error: learnings[0]: expected a string, found an object",
            ),
            (
                single(set("notes", "n".repeat(201).into())),
                "16:3: error: notes: 201 characters, at most 200",
            ),
            (
                single(set("injection_clean", "yes".into())),
                "17:3: error: injection_clean: \"yes\" is not one of clean, flagged, unverified",
            ),
            (
                single(set("extra", true.into())),
                "18:3: error: unknown key \"extra\"",
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn lengths_count_characters() {
        let mut map = valid_json();
        map.insert("summary".into(), "é".repeat(600).into());
        map.insert("notes".into(), "👍".repeat(200).into());
        assert_eq!(check_receipt(&receipt(&map)), vec![]);
        map.insert("summary".into(), "é".repeat(601).into());
        assert_eq!(
            messages(&check_receipt(&receipt(&map))),
            ["12:3: error: summary: 601 characters, at most 600"]
        );
    }

    #[test]
    fn long_values_are_not_echoed() {
        let long = format!("{}{}", "a".repeat(40), "SECRET".repeat(100));
        let message = single(|m| {
            m.insert("status".into(), long.clone().into());
        });
        assert!(!message.contains("SECRET"), "{message}");
        assert!(
            message.contains(&format!("\"{}…\"", "a".repeat(40))),
            "{message}"
        );
        let message = single(|m| {
            m.insert(long.clone(), 1.into());
        });
        assert!(!message.contains("SECRET"), "{message}");
    }

    #[test]
    fn every_violation_is_reported_in_line_order() {
        let text = format!(
            "{HEADER}```{BLOCK_INFO}\n{}\n```\n",
            r#"{
  "schema_version": "guild.handoff.v3",
  "task_id": "",
  "tier": "mid",
  "status": "escalate",
  "summary": 5,
  "issues": {},
  "extra": {"status": "nested keys are not top-level", "tier": 1},
  "another": [1, {"x": 2}]
}"#
        );
        assert_eq!(
            messages(&check_receipt(&text)),
            [
                "6: error: artifacts: required key missing",
                "6: error: escalate_reason: required when status is \"escalate\"",
                "8:3: error: schema_version: \"guild.handoff.v3\" is not \"guild.handoff.v2\"",
                "9:3: error: task_id: must not be blank",
                "12:3: error: summary: expected a string, found a number",
                "13:3: error: issues: expected a list of strings, found an object",
                "14:3: error: unknown key \"extra\"",
                "15:3: error: unknown key \"another\"",
            ]
        );
    }

    #[test]
    fn duplicate_keys_are_errors() {
        let text = format!(
            "{HEADER}```{BLOCK_INFO}\n{}\n```\n",
            r#"{"schema_version": "guild.handoff.v2", "task_id": "t", "tier": "mid",
"status": "done", "summary": "s", "artifacts": [], "issues": [],
  "status": "nope"}"#
        );
        assert_eq!(
            messages(&check_receipt(&text)),
            [
                "9:3: error: duplicate key \"status\" (first at line 8)",
                "9:3: error: status: \"nope\" is not one of done, blocked, escalate",
            ]
        );
    }

    #[test]
    fn two_blocks() {
        let one = receipt(&valid_json());
        let text = format!("{one}\n~~~{BLOCK_INFO}\n{{}}\n~~~\n");
        let findings = check_receipt(&text);
        let extra_line = one.lines().count() + 2;
        assert_eq!(
            messages(&findings),
            [format!(
                "{extra_line}: error: extra {BLOCK_INFO} block (the first is at line 6); a receipt holds exactly one"
            )]
        );
    }

    #[test]
    fn no_block() {
        let text =
            format!("{HEADER}```json\n{{}}\n```\nNo handoff here; ``` {BLOCK_INFO}``` inline.\n");
        assert_eq!(
            messages(&check_receipt(&text)),
            [format!("1: error: no fenced {BLOCK_INFO} block")]
        );
        assert_eq!(
            messages(&check_receipt("")),
            [
                format!("1: error: no fenced {BLOCK_INFO} block"),
                format!(
                    "1: warning: {RECEIPT_SCHEMA} not found: mark the receipt, e.g. with front matter \"schema: {RECEIPT_SCHEMA}\""
                ),
            ]
        );
        // Indented four spaces: an indented code block, not a fence.
        let text = receipt(&valid_json())
            .replace(&format!("```{BLOCK_INFO}"), &format!("    ```{BLOCK_INFO}"));
        assert!(
            messages(&check_receipt(&text))
                .contains(&format!("1: error: no fenced {BLOCK_INFO} block"))
        );
    }

    #[test]
    fn info_string_first_word_counts() {
        let json = one_key_per_line(&valid_json());
        let ok = format!("{HEADER}``` {BLOCK_INFO} extra words\n{json}\n```\n");
        assert_eq!(check_receipt(&ok), vec![]);
        let other = format!("{HEADER}```json {BLOCK_INFO}\n{json}\n```\n");
        assert_eq!(
            messages(&check_receipt(&other)),
            [format!("1: error: no fenced {BLOCK_INFO} block")]
        );
    }

    #[test]
    fn tilde_fences() {
        let json = one_key_per_line(&valid_json());
        let text = format!("{HEADER}~~~{BLOCK_INFO}\n{json}\n~~~~~\n");
        assert_eq!(check_receipt(&text), vec![]);
        // A backtick line does not close a tilde fence.
        let text = format!("{HEADER}~~~{BLOCK_INFO}\n{json}\n```\n");
        let findings = messages(&check_receipt(&text));
        assert_eq!(
            findings,
            [format!(
                "6: error: unclosed fence \"{BLOCK_INFO}\": no closing ~~~ before the end of the file"
            )]
        );
    }

    #[test]
    fn longer_fences_hold_shorter_ones() {
        let json = one_key_per_line(&valid_json());
        // An example block (4 backticks) holding a fake handoff block, then the real one.
        let text = format!(
            "{HEADER}````markdown\n```{BLOCK_INFO}\n{{}}\n```\n````\n\n  ````{BLOCK_INFO}\n{json}\n   `````  \n"
        );
        assert_eq!(check_receipt(&text), vec![]);
        // Inside a 4-backtick handoff block a ``` line is content (and bad JSON).
        let text = format!("{HEADER}````{BLOCK_INFO}\n{json}\n```\n````\n");
        let findings = check_receipt(&text);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].line, 7 + json.lines().count());
        assert_eq!(findings[0].column, Some(1));
        assert!(
            findings[0]
                .message
                .starts_with("invalid JSON: trailing characters"),
            "{findings:?}"
        );
        // A backtick info string may not contain backticks: not a fence.
        assert!(opening_fence("```a`b").is_none());
        assert!(opening_fence("~~~a`b").is_some());
        assert!(!closes("```x", '`', 3));
        assert!(!closes("``", '`', 3));
        assert!(closes("   ```` \t", '`', 3));
    }

    #[test]
    fn crlf_line_endings() {
        let text = receipt(&valid_json()).replace('\n', "\r\n");
        assert_eq!(check_receipt(&text), vec![]);
        let mut map = valid_json();
        map.insert("tier".into(), "x".into());
        let text = format!("\u{feff}{}", receipt(&map).replace('\n', "\r\n"));
        assert_eq!(
            messages(&check_receipt(&text)),
            ["10:3: error: tier: \"x\" is not one of cheap, mid, powerful"]
        );
    }

    #[test]
    fn malformed_json_line_and_column() {
        let text = format!("{HEADER}```{BLOCK_INFO}\n{{\n  \"task_id\": \"é\" \"tier\"\n}}\n```\n");
        let findings = check_receipt(&text);
        assert_eq!(
            messages(&findings),
            ["8:18: error: invalid JSON: expected `,` or `}`"]
        );
        // Unterminated object: reported at the last content line.
        let text = format!("{HEADER}```{BLOCK_INFO}\n{{\n  \"a\": 1,\n```\n");
        let findings = check_receipt(&text);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].line, 8);
        assert!(
            findings[0].message.starts_with("invalid JSON: EOF"),
            "{findings:?}"
        );
    }

    #[test]
    fn odd_blocks() {
        let text = format!("{HEADER}```{BLOCK_INFO}\n\n  \n```\n");
        assert_eq!(
            messages(&check_receipt(&text)),
            [format!("6: error: {BLOCK_INFO} block is empty")]
        );
        let text = format!("{HEADER}```{BLOCK_INFO}\n[1, 2]\n```\n");
        assert_eq!(
            messages(&check_receipt(&text)),
            [format!(
                "6: error: {BLOCK_INFO} block must hold a JSON object, found a list"
            )]
        );
        let text = format!("{HEADER}```{BLOCK_INFO}\n{{}}");
        assert_eq!(
            messages(&check_receipt(&text)),
            [format!(
                "6: error: unclosed fence \"{BLOCK_INFO}\": no closing ``` before the end of the file"
            )]
        );
        // An unclosed fence of another kind swallows what follows.
        let text = format!("{HEADER}```sh\nls\n\n```{BLOCK_INFO}\n{{}}\n");
        assert_eq!(
            messages(&check_receipt(&text)),
            [
                format!("1: error: no fenced {BLOCK_INFO} block"),
                "6: error: unclosed fence \"sh\": no closing ``` before the end of the file"
                    .to_owned(),
            ]
        );
        let text = format!("{HEADER}~~~\n");
        assert_eq!(
            messages(&check_receipt(&text)),
            [
                format!("1: error: no fenced {BLOCK_INFO} block"),
                "6: error: unclosed fence: no closing ~~~ before the end of the file".to_owned(),
            ]
        );
    }

    #[test]
    fn findings_serialise() {
        let finding = Finding::error(3, Some(2), "m");
        assert_eq!(
            serde_json::to_string(&finding).unwrap(),
            r#"{"line":3,"column":2,"severity":"error","message":"m"}"#
        );
    }

    #[test]
    fn never_panics_on_odd_input() {
        for text in [
            "```guild.handoff.v2\n\"",
            "```guild.handoff.v2\n{\"a\\",
            "```guild.handoff.v2\n{\"\\\n```",
            "```guild.handoff.v2\n{\"é\":\"\\u00e9\"}\n```",
            "\u{feff}",
            "\r\n\r",
            "```guild.handoff.v2\r\n```",
            "~~~guild.handoff.v2\n{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]}\n~~~",
        ] {
            let _ = check_receipt(text);
        }
        let _ = top_level_keys("{\"a\\");
        assert_eq!(
            top_level_keys("{\"a\": {\"b\": 1}, \"c\\\"d\": 2}")
                .into_iter()
                .map(|k| k.0)
                .collect::<Vec<_>>(),
            ["a", "c\"d"]
        );
    }
}
