//! `curate::util::jsonpos::locate(source, pointer)`: never panics, and, on valid JSON, agrees with
//! serde_json: the position it gives is where the value that the pointer names (or its
//! deepest existing ancestor) starts, or, for an object member, where its key starts.
#![no_main]

use curate::util::jsonpos;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

// The input is the pointer on the first line, then the JSON source.
fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (pointer, source) = text.split_once('\n').unwrap_or((text, ""));
    let found = jsonpos::locate(source, pointer);
    if let Some(p) = found {
        assert!(p.line >= 1 && p.column >= 1);
        let line_count = source.split('\n').count();
        assert!(p.line <= line_count, "line {} of {line_count}", p.line);
    }
    let Ok(root) = serde_json::from_str::<Value>(source) else {
        return;
    };
    let pos = found.expect("valid JSON but no position");
    check(source, &root, pointer, pos);
    // A few common pointers too, so every valid document is checked on real paths.
    for extra in ["", "/0", "/a", "/0/0", "/roleTypes/0/contextFiles/0"] {
        if let Some(p) = jsonpos::locate(source, extra) {
            check(source, &root, extra, p);
        } else {
            panic!("valid JSON but no position for {extra:?}");
        }
    }
});

/// The tokens of a pointer, unescaped, or `None` when it cannot name anything below the root
/// or holds an escape RFC 6901 does not define (where serde_json and a strict reader may
/// differ).
fn tokens(pointer: &str) -> Option<Vec<String>> {
    if pointer.is_empty() {
        return Some(Vec::new());
    }
    let rest = pointer.strip_prefix('/')?;
    let mut out = Vec::new();
    for raw in rest.split('/') {
        let mut t = String::new();
        let mut chars = raw.chars();
        while let Some(c) = chars.next() {
            if c == '~' {
                match chars.next() {
                    Some('0') => t.push('~'),
                    Some('1') => t.push('/'),
                    _ => return None,
                }
            } else {
                t.push(c);
            }
        }
        out.push(t);
    }
    Some(out)
}

fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn check(source: &str, root: &Value, pointer: &str, pos: jsonpos::Position) {
    let toks = if pointer.is_empty() || pointer.starts_with('/') {
        match tokens(pointer) {
            Some(t) => t,
            None => return,
        }
    } else {
        Vec::new()
    };
    // The deepest prefix of the pointer that names a value.
    let mut depth = 0;
    let mut path = String::new();
    let mut parent_is_object = false;
    let mut value = root;
    for t in &toks {
        let next_path = format!("{path}/{}", escape(t));
        let Some(v) = root.pointer(&next_path) else {
            break;
        };
        parent_is_object = value.is_object();
        value = v;
        path = next_path;
        depth += 1;
    }
    let offset =
        byte_offset(source, pos).unwrap_or_else(|| panic!("position {pos:?} is not in the source"));
    let at = &source[offset..];
    if depth > 0 && parent_is_object {
        // A member: its key string, then `:`, then the value.
        let mut de = serde_json::Deserializer::from_str(at).into_iter::<String>();
        let key = de
            .next()
            .unwrap_or_else(|| panic!("no key at {pos:?} for {path:?}"))
            .unwrap_or_else(|e| panic!("no key at {pos:?} for {path:?}: {e}"));
        assert_eq!(&key, &toks[depth - 1], "wrong key at {pos:?} for {path:?}");
        let after = at[de.byte_offset()..].trim_start_matches([' ', '\t', '\n', '\r']);
        let after = after
            .strip_prefix(':')
            .unwrap_or_else(|| panic!("no `:` after the key at {pos:?}"));
        assert_eq!(
            &first_value(after, pos),
            value,
            "wrong member at {pos:?} for {path:?}"
        );
    } else {
        assert_eq!(
            &first_value(at, pos),
            value,
            "wrong value at {pos:?} for {path:?}"
        );
    }
}

fn first_value(text: &str, pos: jsonpos::Position) -> Value {
    serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .next()
        .unwrap_or_else(|| panic!("no value at {pos:?}"))
        .unwrap_or_else(|e| panic!("no value at {pos:?}: {e}"))
}

/// The byte offset of a 1-based line and character column (a leading BOM not counted).
fn byte_offset(source: &str, pos: jsonpos::Position) -> Option<usize> {
    let mut start = 0;
    for _ in 1..pos.line {
        start += source[start..].find('\n')? + 1;
    }
    if pos.line == 1 && source.starts_with('\u{FEFF}') {
        start += '\u{FEFF}'.len_utf8();
    }
    let line = &source[start..];
    let mut chars = line.char_indices();
    for _ in 1..pos.column {
        chars.next()?;
    }
    Some(start + chars.next().map_or(line.len(), |(i, _)| i))
}
