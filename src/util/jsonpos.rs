//! Map a JSON Pointer (RFC 6901) to a `line:column` in JSON source text.
//!
//! Validation errors carry an *instance path* such as
//! `/roleTypes/2/contextFiles/0/sections/1`; to report `file:line:column` we
//! walk the original source text following that pointer. The scanner here is
//! small, hand-written and allocation-free:
//!
//! * It walks one pointer token at a time and only scans the containers on the
//!   pointer's path. Values it does not descend into are skipped with an
//!   iterative bracket counter (never recursion), so arbitrarily deep nesting
//!   cannot overflow the stack.
//! * It is a *locator*, not a validator: skipped values are checked only as far
//!   as needed to find their end (strings and brackets are tracked, scalars are
//!   taken as runs of literal characters). Malformed or truncated input never
//!   panics; the walk stops at the first point where it cannot continue and
//!   reports the deepest value it had located by then.
//! * Object keys are compared after unescaping both sides (`\uXXXX` escapes
//!   including surrogate pairs in the source; `~0`/`~1` in the pointer). With
//!   duplicate keys the last occurrence wins, as with `serde_json`.
//!
//! Cost is linear in the size of the containers on the pointer's path; since an
//! object must be scanned to its end (a later duplicate key wins), the matched
//! member is scanned once more when descending into it, so the worst case is
//! `O(len(source) * pointer depth)`.

/// A 1-based line and column in source text. The column counts characters
/// (Unicode scalar values), not bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// 1-based line number. Lines are terminated by `\n` (so `\r\n` counts once).
    pub line: usize,
    /// 1-based column, counted in characters.
    pub column: usize,
}

impl From<Position> for crate::model::Pos {
    fn from(p: Position) -> crate::model::Pos {
        crate::model::Pos {
            line: p.line,
            column: p.column,
        }
    }
}

/// [`locate`] as an error's place: the document's start when `pointer` cannot be walked to.
#[must_use]
pub fn place(source: &str, pointer: &str) -> crate::model::Pos {
    locate(source, pointer).map_or(crate::model::Pos { line: 1, column: 1 }, Into::into)
}

const BOM: char = '\u{FEFF}';

/// 1-based line and column (column counted in characters, not bytes) of the value that `pointer` names in the JSON `source`.
/// For an object member, the position is that of the member's KEY string (its opening quote), which is where a person looks;
/// for an array element, the element's first character; for "" the first non-whitespace character of the document.
/// When the pointer names something that does not exist (e.g. a missing property), return the position of the deepest existing ancestor value.
/// Returns None only if the source is not well-formed enough to walk (it never panics on any input, including truncated or invalid JSON and invalid pointers).
///
/// Details:
/// * A leading UTF-8 byte order mark is skipped (and not counted as a column).
/// * Array index tokens must be canonical decimal (`0`, `17`; not `01`, `+1`
///   or `-`); any other token on an array, and any token on a scalar, names
///   nothing, so the array/scalar's own position is returned.
/// * A pointer that is neither empty nor starts with `/` (not a valid JSON
///   Pointer) names nothing below the root, so the root position is returned.
/// * `None` is returned when there is no root value to start from: the source
///   is empty, only whitespace (and/or a BOM), or starts with a character that
///   cannot begin a JSON value. Malformation further in (truncation, bad
///   syntax) stops the walk at the deepest value located before it.
#[must_use]
pub fn locate(source: &str, pointer: &str) -> Option<Position> {
    let offset = locate_offset(source, pointer)?;
    Some(position_of(source, offset))
}

/// 1-based line/column of a byte offset in `source` (column in characters). Offsets past the end clamp to the end.
///
/// An offset inside a multi-byte character is treated as the start of that
/// character. Only `\n` ends a line (a `\r` before it is just the last
/// character of the line). A UTF-8 byte order mark at the very start of
/// `source` is not counted as a column, as editors do not display it.
#[must_use]
pub fn position_of(source: &str, byte_offset: usize) -> Position {
    let mut offset = byte_offset.min(source.len());
    while !source.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = source.get(..offset).unwrap_or(source);
    let (line, line_text) = match before.rfind('\n') {
        Some(newline) => (
            before.bytes().filter(|&b| b == b'\n').count() + 1,
            before.get(newline + 1..).unwrap_or(""),
        ),
        None => (1, before.strip_prefix(BOM).unwrap_or(before)),
    };
    Position {
        line,
        column: line_text.chars().count() + 1,
    }
}

/// Byte offset of the position [`locate`] reports.
fn locate_offset(source: &str, pointer: &str) -> Option<usize> {
    let bytes = source.as_bytes();
    let start = if source.starts_with(BOM) {
        BOM.len_utf8()
    } else {
        0
    };
    let root = skip_whitespace(bytes, start);
    if !bytes.get(root).copied().is_some_and(is_value_start) {
        return None;
    }

    // "" names the root; anything not starting with '/' is not a pointer and
    // names nothing below the root.
    let Some(tokens) = pointer.strip_prefix('/') else {
        return Some(root);
    };

    let mut found = root;
    let mut value = root;
    for token in tokens.split('/') {
        let next = match bytes.get(value) {
            Some(b'{') => find_member(source, value, token),
            Some(b'[') => array_index(token)
                .and_then(|index| find_element(bytes, value, index))
                .map(|element| (element, element)),
            _ => None,
        };
        let Some((report, next_value)) = next else {
            break;
        };
        found = report;
        value = next_value;
    }
    Some(found)
}

/// In the object opening at `open`, find the last member whose key equals the
/// (still `~`-escaped) pointer `token`. Returns `(key offset, value offset)`.
///
/// On malformed input the scan stops and the last match seen so far (if any)
/// is returned.
fn find_member(source: &str, open: usize, token: &str) -> Option<(usize, usize)> {
    let bytes = source.as_bytes();
    let mut best = None;
    let mut i = skip_whitespace(bytes, open + 1);
    if bytes.get(i) == Some(&b'}') {
        return None;
    }
    loop {
        if bytes.get(i) != Some(&b'"') {
            break;
        }
        let key_start = i;
        let Some(key_end) = skip_string(bytes, key_start) else {
            break;
        };
        i = skip_whitespace(bytes, key_end);
        if bytes.get(i) != Some(&b':') {
            break;
        }
        let value_start = skip_whitespace(bytes, i + 1);
        // The quotes are ASCII, so these are char boundaries.
        let raw_key = source.get(key_start + 1..key_end - 1).unwrap_or("");
        if key_matches(raw_key, token) {
            best = Some((key_start, value_start));
        }
        let Some(value_end) = skip_value(bytes, value_start) else {
            break;
        };
        i = skip_whitespace(bytes, value_end);
        match bytes.get(i) {
            Some(b',') => i = skip_whitespace(bytes, i + 1),
            _ => break, // '}' ends the object; anything else is malformed
        }
    }
    best
}

/// Offset of element `index` of the array opening at `open`, if it exists
/// (and every element before it can be skipped).
fn find_element(bytes: &[u8], open: usize, index: usize) -> Option<usize> {
    let mut i = skip_whitespace(bytes, open + 1);
    if bytes.get(i) == Some(&b']') {
        return None;
    }
    for _ in 0..index {
        i = skip_whitespace(bytes, skip_value(bytes, i)?);
        if bytes.get(i) != Some(&b',') {
            return None; // ']' (too few elements) or malformed
        }
        i = skip_whitespace(bytes, i + 1);
    }
    bytes
        .get(i)
        .copied()
        .is_some_and(is_value_start)
        .then_some(i)
}

/// Parse a canonical array index token: `0` or a decimal without a leading
/// zero. `-` (past the end), leading zeros, signs and overflow yield `None`.
fn array_index(token: &str) -> Option<usize> {
    let canonical = match token.as_bytes() {
        [b'0'] => true,
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if canonical { token.parse().ok() } else { None }
}

fn skip_whitespace(bytes: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(i) {
        i += 1;
    }
    i
}

fn is_value_start(byte: u8) -> bool {
    matches!(
        byte,
        b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
    )
}

/// Offset just past the value starting at `i`, or `None` if it is malformed
/// or truncated.
fn skip_value(bytes: &[u8], i: usize) -> Option<usize> {
    match *bytes.get(i)? {
        b'"' => skip_string(bytes, i),
        b'{' | b'[' => skip_container(bytes, i),
        first if is_value_start(first) => {
            // Number or literal: a run of literal characters.
            let mut end = i + 1;
            while bytes
                .get(end)
                .is_some_and(|&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
            {
                end += 1;
            }
            Some(end)
        }
        _ => None,
    }
}

/// Offset just past the string whose opening quote is at `i`.
fn skip_string(bytes: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        match *bytes.get(j)? {
            b'"' => return Some(j + 1),
            b'\\' => j += 2,
            _ => j += 1,
        }
    }
}

/// Offset just past the array/object opening at `i`. Iterative: only a depth
/// counter is kept, so nesting depth is unbounded.
fn skip_container(bytes: &[u8], i: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut j = i;
    loop {
        match *bytes.get(j)? {
            b'"' => {
                j = skip_string(bytes, j)?;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j + 1);
                }
            }
            _ => {}
        }
        j += 1;
    }
}

/// The first key that an object of `source` holds twice, with the position of its second
/// occurrence: `serde_json` keeps the last silently, so a hand-written file would lose the
/// first without a word. Meant for text `serde_json` has already parsed; on malformed text
/// it stops where it cannot go on. Iterative (a stack of the open containers), linear in
/// the text.
#[must_use]
pub fn duplicate_key(source: &str) -> Option<(Position, String)> {
    enum Open {
        Object {
            keys: std::collections::HashSet<String>,
            expect_key: bool,
        },
        Array,
    }
    let bytes = source.as_bytes();
    let mut stack: Vec<Open> = Vec::new();
    let mut i = source.strip_prefix(BOM).map_or(0, |_| BOM.len_utf8());
    while let Some(&b) = bytes.get(i) {
        match b {
            b'{' => stack.push(Open::Object {
                keys: std::collections::HashSet::new(),
                expect_key: true,
            }),
            b'[' => stack.push(Open::Array),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => {
                if let Some(Open::Object { expect_key, .. }) = stack.last_mut() {
                    *expect_key = true;
                }
            }
            b'"' => {
                let end = skip_string(bytes, i)?;
                if let Some(Open::Object { keys, expect_key }) = stack.last_mut()
                    && *expect_key
                {
                    *expect_key = false;
                    let raw = source.get(i + 1..end - 1)?;
                    let key: String = JsonStringChars { raw, pos: 0 }
                        .map_while(Result::ok)
                        .collect();
                    if !keys.insert(key.clone()) {
                        return Some((position_of(source, i), key));
                    }
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Whether the raw (escaped) JSON string content `raw_key` equals the
/// `~`-escaped pointer token. Invalid escapes on either side never match.
fn key_matches(raw_key: &str, token: &str) -> bool {
    let mut key = JsonStringChars {
        raw: raw_key,
        pos: 0,
    };
    let mut token = TokenChars {
        chars: token.chars(),
    };
    loop {
        match (key.next(), token.next()) {
            (None, None) => return true,
            (Some(Ok(a)), Some(Ok(b))) if a == b => {}
            _ => return false,
        }
    }
}

/// Decodes the content of a JSON string literal (between the quotes) into
/// characters. Yields `Err(())` (and then stops) on an invalid escape or an
/// unpaired surrogate.
struct JsonStringChars<'a> {
    raw: &'a str,
    pos: usize,
}

impl JsonStringChars<'_> {
    fn hex4(&self, at: usize) -> Option<u16> {
        let digits = self.raw.get(at..at + 4)?;
        if digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            u16::from_str_radix(digits, 16).ok()
        } else {
            None
        }
    }

    /// Decode the escape sequence at `self.pos` (a backslash); returns the
    /// character and the escape's length in bytes.
    fn escape(&self) -> Option<(char, usize)> {
        let simple = match *self.raw.as_bytes().get(self.pos + 1)? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4(self.pos + 2)?;
                return match unit {
                    0xD800..=0xDBFF => {
                        if self.raw.get(self.pos + 6..self.pos + 8) != Some("\\u") {
                            return None;
                        }
                        let low = self.hex4(self.pos + 8)?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return None;
                        }
                        let code = 0x1_0000
                            + ((u32::from(unit) - 0xD800) << 10)
                            + (u32::from(low) - 0xDC00);
                        Some((char::from_u32(code)?, 12))
                    }
                    _ => Some((char::from_u32(u32::from(unit))?, 6)),
                };
            }
            _ => return None,
        };
        Some((simple, 2))
    }
}

impl Iterator for JsonStringChars<'_> {
    type Item = Result<char, ()>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.raw.get(self.pos..)?;
        let c = rest.chars().next()?;
        if c != '\\' {
            self.pos += c.len_utf8();
            return Some(Ok(c));
        }
        if let Some((decoded, len)) = self.escape() {
            self.pos += len;
            Some(Ok(decoded))
        } else {
            self.pos = self.raw.len();
            Some(Err(()))
        }
    }
}

/// Decodes a JSON Pointer reference token (`~0` → `~`, `~1` → `/`). Yields
/// `Err(())` for any other `~` sequence.
struct TokenChars<'a> {
    chars: std::str::Chars<'a>,
}

impl Iterator for TokenChars<'_> {
    type Item = Result<char, ()>;

    fn next(&mut self) -> Option<Self::Item> {
        let c = self.chars.next()?;
        if c != '~' {
            return Some(Ok(c));
        }
        Some(match self.chars.next() {
            Some('0') => Ok('~'),
            Some('1') => Ok('/'),
            _ => Err(()),
        })
    }
}

/// Where serde_json found a problem, 1-based (it says column 0 right after a line break).
#[must_use]
pub fn json_pos(e: &serde_json::Error) -> crate::model::Pos {
    crate::model::Pos {
        line: e.line().max(1),
        column: e.column().max(1),
    }
}

/// [`json_message`] of the error parsing `text`, but a leading byte-order mark (which
/// serde_json reports as "expected value" at 1:1) is named as such.
#[must_use]
pub fn json_message_of(text: &str, e: &serde_json::Error) -> String {
    if text.starts_with('\u{feff}') {
        return "the file starts with a byte-order mark (U+FEFF), which JSON does not allow: save it as UTF-8 without one".to_owned();
    }
    json_message(e)
}

/// serde_json's message without its ` at line L column C` (the position is given apart).
#[must_use]
pub fn json_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    match full.rfind(" at line ") {
        Some(i) => full[..i].to_owned(),
        None => full,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: usize, column: usize) -> Position {
        Position { line, column }
    }

    /// Run `(pointer, expected)` cases against one document.
    #[track_caller]
    fn check(source: &str, cases: &[(&str, Position)]) {
        for &(pointer, expected) in cases {
            assert_eq!(
                locate(source, pointer),
                Some(expected),
                "pointer {pointer:?} in {source:?}"
            );
        }
    }

    const DOC: &str = r#"{
  "name": "demo",
  "roleTypes": [
    {"id": 0},
    {"id": 1},
    {
      "id": 2,
      "contextFiles": [
        {
          "sections": ["intro", "body"]
        }
      ]
    }
  ],
  "a/b": 1,
  "m~n": 2,
  "~1": 3,
  "": 4,
  "str": "}]\"[{,:",
  "n": -1.5e+3,
  "t": [true, false, null]
}"#;

    #[test]
    fn root_is_first_non_whitespace_character() {
        check(DOC, &[("", pos(1, 1))]);
        check(" \t\r\n\n  [1]", &[("", pos(3, 3))]);
        check("  42  ", &[("", pos(1, 3))]);
    }

    #[test]
    fn top_level_key_points_at_the_key_quote() {
        check(
            DOC,
            &[
                ("/name", pos(2, 3)),
                ("/roleTypes", pos(3, 3)),
                ("/str", pos(19, 3)),
                ("/n", pos(20, 3)),
                ("/t", pos(21, 3)),
            ],
        );
    }

    #[test]
    fn nested_array_elements_and_members() {
        check(
            DOC,
            &[
                ("/roleTypes/0", pos(4, 5)),
                ("/roleTypes/1/id", pos(5, 6)),
                ("/roleTypes/2", pos(6, 5)),
                ("/roleTypes/2/contextFiles/0", pos(9, 9)),
                ("/roleTypes/2/contextFiles/0/sections", pos(10, 11)),
                ("/roleTypes/2/contextFiles/0/sections/0", pos(10, 24)),
                ("/roleTypes/2/contextFiles/0/sections/1", pos(10, 33)),
                ("/t/2", pos(21, 22)),
            ],
        );
    }

    #[test]
    fn pointer_tilde_escapes() {
        check(
            DOC,
            &[
                ("/a~1b", pos(15, 3)),
                ("/m~0n", pos(16, 3)),
                // "~01" decodes to "~1" (not "/"), which is the key "~1".
                ("/~01", pos(17, 3)),
                ("/", pos(18, 3)), // the empty key
                // Invalid escapes name nothing: fall back to the root.
                ("/m~2n", pos(1, 1)),
                ("/m~", pos(1, 1)),
                // Unescaped, "a/b" is two tokens: "a" does not exist.
                ("/a/b", pos(1, 1)),
            ],
        );
    }

    #[test]
    fn source_key_escapes_are_decoded_before_comparing() {
        let source = r#"{"caf\u00e9": 1, "\ud83d\ude00": 2, "q\"b\\s\/": 3, "tab\t": 4, "\u0041": 5, "lone\ud800": 6}"#;
        check(
            source,
            &[
                ("/café", pos(1, 2)),
                ("/😀", pos(1, 18)),
                ("/q\"b\\s~1", pos(1, 37)),
                // An unescaped '/' splits tokens: "q\"b\\s" does not exist.
                ("/q\"b\\s/", pos(1, 1)),
                ("/tab\t", pos(1, 53)),
                ("/A", pos(1, 65)),
                ("/a", pos(1, 1)), // case-sensitive
                // An unpaired surrogate decodes to nothing a pointer can name.
                ("/lone\u{fffd}", pos(1, 1)),
                ("/lone", pos(1, 1)),
                // Invalid escapes on both sides still never match.
                ("/lone~2", pos(1, 1)),
            ],
        );
    }

    #[test]
    fn non_ascii_keys_in_the_source() {
        check(
            "{\"ключ\": {\"日本\": [0, 1]}}",
            &[
                ("/ключ", pos(1, 2)),
                ("/ключ/日本", pos(1, 11)),
                ("/ключ/日本/1", pos(1, 21)),
            ],
        );
    }

    #[test]
    fn missing_property_falls_back_to_deepest_existing_ancestor() {
        check(
            DOC,
            &[
                ("/nope", pos(1, 1)),
                ("/roleTypes/1/nope", pos(5, 5)),
                ("/roleTypes/2/contextFiles/0/nope/deeper/still", pos(9, 9)),
                // Descending into a scalar names nothing.
                ("/name/x", pos(2, 3)),
                ("/name/0", pos(2, 3)),
            ],
        );
        check("{}", &[("/a", pos(1, 1))]);
    }

    #[test]
    fn bad_or_out_of_range_index_falls_back_to_the_array() {
        check(
            DOC,
            &[
                ("/roleTypes/3", pos(3, 3)),
                ("/roleTypes/99999999999999999999999999", pos(3, 3)),
                ("/roleTypes/-", pos(3, 3)),
                ("/roleTypes/01", pos(3, 3)),
                ("/roleTypes/+1", pos(3, 3)),
                ("/roleTypes/1.0", pos(3, 3)),
                ("/roleTypes/", pos(3, 3)),
                ("/roleTypes/id", pos(3, 3)),
                ("/t/3", pos(21, 3)),
            ],
        );
        check("[]", &[("/0", pos(1, 1))]);
        check("[ 5 ]", &[("/0", pos(1, 3)), ("/1", pos(1, 1))]);
    }

    #[test]
    fn crlf_line_endings() {
        let source = "{\r\n  \"a\": 1,\r\n  \"b\": [10,\r\n    20]\r\n}\r\n";
        check(
            source,
            &[
                ("/a", pos(2, 3)),
                ("/b", pos(3, 3)),
                ("/b/0", pos(3, 9)),
                ("/b/1", pos(4, 5)),
            ],
        );
    }

    #[test]
    fn column_counts_characters_not_bytes() {
        // "é" is 2 bytes, "日" 3 bytes and "😀" 4 bytes, each one column.
        let source = "{\"é\": \"日😀\", \"x\": 1}";
        check(source, &[("/x", pos(1, 13))]);
        let source = "[\"ü\",\n \"ααα\", {\"k\": 0}]";
        check(source, &[("/2", pos(2, 9)), ("/2/k", pos(2, 10))]);
    }

    #[test]
    fn leading_bom_is_skipped_and_not_counted() {
        let source = "\u{FEFF}{\"a\": [1, 2]}";
        check(
            source,
            &[("", pos(1, 1)), ("/a", pos(1, 2)), ("/a/1", pos(1, 11))],
        );
        check("\u{FEFF}\n  {}", &[("", pos(2, 3))]);
        // A BOM anywhere else is not whitespace.
        assert_eq!(locate("\u{FEFF}\u{FEFF}{}", ""), None);
    }

    #[test]
    fn a_key_held_twice_is_found_at_its_second_occurrence() {
        assert_eq!(duplicate_key(r#"{"a": 1, "b": {"a": 2}}"#), None);
        assert_eq!(duplicate_key(r#"[{"a": 1}, {"a": 2}]"#), None);
        assert_eq!(
            duplicate_key("{\n  \"a\": \"{\\\"a\\\"\",\n  \"\\u0061\": 2\n}"),
            Some((pos(3, 3), "a".to_owned()))
        );
        assert_eq!(
            duplicate_key(r#"{"r": [{"id": "x", "v": {"k": [1, {"id": 0}]}, "id": "y"}]}"#),
            Some((pos(1, 48), "id".to_owned()))
        );
        assert_eq!(
            duplicate_key(r#"{"a": [1, 2], "a""#),
            Some((pos(1, 15), "a".to_owned()))
        );
        assert_eq!(
            duplicate_key("\u{feff}{\"é\": 1, \"é\": 2}"),
            Some((pos(1, 10), "é".to_owned()))
        );
    }

    #[test]
    fn duplicate_keys_use_the_last_occurrence() {
        let source = r#"{"a": {"x": 1}, "b": 0, "a": {"y": 2}}"#;
        check(
            source,
            &[
                ("/a", pos(1, 25)),
                ("/a/y", pos(1, 31)),
                // "x" only exists in the shadowed first "a".
                ("/a/x", pos(1, 25)),
            ],
        );
    }

    #[test]
    fn skipped_values_may_contain_brackets_and_quotes_in_strings() {
        let source = r#"{"s": "}]\\\"[{", "arr": [[], {}, "]", {"k": ["}"]}], "z": 1}"#;
        check(source, &[("/z", pos(1, 55)), ("/arr/3/k/0", pos(1, 47))]);
    }

    #[test]
    fn unusable_source_returns_none() {
        for source in [
            "",
            "   \n\t",
            "\u{FEFF}",
            "\u{FEFF}  ",
            "}",
            "]{}",
            "x",
            "'a'",
            ":",
        ] {
            assert_eq!(locate(source, ""), None, "{source:?}");
            assert_eq!(locate(source, "/a/0"), None, "{source:?}");
        }
    }

    #[test]
    fn invalid_pointer_without_leading_slash_names_the_root() {
        check(
            DOC,
            &[("name", pos(1, 1)), ("#/name", pos(1, 1)), ("~", pos(1, 1))],
        );
    }

    #[test]
    fn truncated_and_malformed_json() {
        check(
            "{\"a\": 1, \"b\": [10, 20",
            &[
                ("", pos(1, 1)),
                ("/a", pos(1, 2)),
                ("/b", pos(1, 10)),
                ("/b/1", pos(1, 20)),
                ("/b/2", pos(1, 10)),
                ("/c", pos(1, 1)),
            ],
        );
        check(
            "{\"a\": ",
            &[("/a", pos(1, 2)), ("/a/0", pos(1, 2)), ("/b", pos(1, 1))],
        );
        check("{\"a", &[("/a", pos(1, 1))]);
        check(
            "[1, 2, \"unterminated",
            &[("/2", pos(1, 8)), ("/3", pos(1, 1))],
        );
        check("[1, 2 3]", &[("/1", pos(1, 5)), ("/2", pos(1, 1))]);
        // A syntax error after the key was found still reports the key.
        check(
            "{\"a\": 1 \"b\": 2}",
            &[("/a", pos(1, 2)), ("/b", pos(1, 1))],
        );
        check("{\"a\" 1}", &[("/a", pos(1, 1))]);
        check("[,]", &[("/0", pos(1, 1))]);
    }

    #[test]
    fn no_panics_on_any_prefix_or_garbage() {
        let pointers = [
            "",
            "/",
            "/roleTypes/2/contextFiles/0/sections/1",
            "/str",
            "/t/2",
            "/~01",
            "/-",
            "x",
        ];
        let mut located = 0;
        for (cut, _) in DOC.char_indices() {
            let prefix = &DOC[..cut];
            for pointer in pointers {
                if let Some(p) = locate(prefix, pointer) {
                    located += 1;
                    assert!(p.line >= 1 && p.column >= 1);
                }
            }
        }
        // Every non-empty prefix starts with '{', so only the empty one fails.
        assert_eq!(located, (DOC.char_indices().count() - 1) * pointers.len());

        let garbage = [
            "\\",
            "\"\\",
            "{\"\\u",
            "{\"\\ud83d\\u\": 1}",
            "[[[[",
            "]]]]",
            "{{{{",
            "{\"a\":]",
        ];
        for source in garbage {
            for pointer in pointers {
                let _ = locate(source, pointer);
            }
        }
    }

    #[test]
    fn deep_nesting_does_not_overflow_the_stack() {
        const DEPTH: usize = 100_000;
        let open = "[".repeat(DEPTH);
        let close = "]".repeat(DEPTH);

        // Skipping a deep value to reach its sibling.
        let source = format!("{{\"deep\": {open}{close}, \"after\": 1}}");
        check(
            &source,
            &[("/after", pos(1, 2 * DEPTH + 12)), ("/deep", pos(1, 2))],
        );

        // Truncated: 100k '[' and nothing else.
        check(
            &open,
            &[("", pos(1, 1)), ("/1", pos(1, 1)), ("/0/0/0", pos(1, 4))],
        );
        let source = format!("{{\"deep\": {open}, \"after\": 1}}");
        check(&source, &[("/after", pos(1, 1)), ("/deep/0", pos(1, 11))]);

        // Walking a pointer all the way down.
        let source = format!("{open}7{close}");
        let pointer = "/0".repeat(DEPTH);
        check(&source, &[(pointer.as_str(), pos(1, DEPTH + 1))]);
        let too_deep = format!("{pointer}/0");
        check(&source, &[(too_deep.as_str(), pos(1, DEPTH + 1))]);
    }

    #[test]
    fn position_of_offsets() {
        let source = "ab\r\ncé😀d\n\nx";
        let cases = [
            (0, (1, 1)),
            (2, (1, 3)),  // '\r'
            (3, (1, 4)),  // '\n'
            (4, (2, 1)),  // 'c'
            (5, (2, 2)),  // 'é'
            (6, (2, 2)),  // inside 'é': start of that character
            (7, (2, 3)),  // '😀'
            (9, (2, 3)),  // inside '😀'
            (11, (2, 4)), // 'd'
            (13, (3, 1)), // empty line
            (14, (4, 1)), // 'x'
            (15, (4, 2)), // end
            (1000, (4, 2)),
            (usize::MAX, (4, 2)),
        ];
        for (offset, (line, column)) in cases {
            assert_eq!(
                position_of(source, offset),
                Position { line, column },
                "offset {offset}"
            );
        }
        assert_eq!(position_of("", 5), Position { line: 1, column: 1 });
        assert_eq!(position_of("\u{FEFF}x", 0), Position { line: 1, column: 1 });
        assert_eq!(position_of("\u{FEFF}x", 3), Position { line: 1, column: 1 });
        assert_eq!(position_of("\u{FEFF}x", 4), Position { line: 1, column: 2 });
    }

    /// Byte offset of a `Position` (inverse of `position_of`, ignoring BOMs).
    fn offset_of(source: &str, position: Position) -> usize {
        let line_start: usize = source
            .split_inclusive('\n')
            .take(position.line - 1)
            .map(str::len)
            .sum();
        source[line_start..]
            .char_indices()
            .nth(position.column - 1)
            .map_or(source.len(), |(i, _)| line_start + i)
    }

    /// Cross-check against `serde_json`: for every value in the document, the
    /// reported position holds the member's key, or the element itself.
    #[test]
    fn every_pointer_agrees_with_serde_json() {
        fn walk(value: &serde_json::Value, pointer: &str, out: &mut Vec<(String, Option<String>)>) {
            match value {
                serde_json::Value::Object(map) => {
                    for (key, child) in map {
                        let escaped = key.replace('~', "~0").replace('/', "~1");
                        let child_pointer = format!("{pointer}/{escaped}");
                        out.push((child_pointer.clone(), Some(key.clone())));
                        walk(child, &child_pointer, out);
                    }
                }
                serde_json::Value::Array(items) => {
                    for (i, child) in items.iter().enumerate() {
                        let child_pointer = format!("{pointer}/{i}");
                        out.push((child_pointer.clone(), None));
                        walk(child, &child_pointer, out);
                    }
                }
                _ => {}
            }
        }

        let source = format!(
            "\r\n{}\r\n",
            r#"{"é\u00e9": [1, {"~/": [[], {}, "x"], "a": null}], "k\"": {"": [true, 2.5e3]}, "dup": 1, "dup": [0]}"#
        );
        let root: serde_json::Value = serde_json::from_str(&source).unwrap();
        let mut pointers = Vec::new();
        walk(&root, "", &mut pointers);
        assert_eq!(pointers.len(), 14); // "dup" is counted once

        for (pointer, key) in pointers {
            let position = locate(&source, &pointer).unwrap();
            let offset = offset_of(&source, position);
            let mut stream = serde_json::Deserializer::from_str(&source[offset..])
                .into_iter::<serde_json::Value>();
            let found = stream.next().unwrap().unwrap();
            let expected = match key {
                Some(key) => serde_json::Value::String(key),
                None => root.pointer(&pointer).unwrap().clone(),
            };
            assert_eq!(found, expected, "pointer {pointer:?} at {position:?}");
        }
    }
}
