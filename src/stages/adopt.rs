//! `--adopt`: turn a person's edits of a manifest into overrides-file lines, so the next
//! compile keeps every one of them.
//!
//! Pure: receives the edited manifest text and what curate last wrote (from the lock);
//! returns the lines to append to the overrides file.

use serde_json::{Map, Value, json};

use crate::model::Entry;
use crate::model::Pos;
use crate::stages::manifest;

/// The keys of a manifest entry, all an overrides line can carry.
const KEYS: [&str; 5] = ["file", "reason", "sections", "priority", "kind"];

/// A line of the edited manifest that no overrides line can keep: adopting it would lose it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unadoptable {
    pub pos: Pos,
    pub message: String,
}

/// The overrides lines that reproduce the edits of `edited` against what curate wrote
/// (`written_curation`, `written`). Without a lock (`None`), every entry and curation line
/// of the manifest is taken as the person's. A plain comment a person wrote (`// …`, `# …`:
/// curate writes none) becomes a curation line, the manifest's own form of a note.
///
/// # Errors
/// The first line that cannot be kept: not JSON, an entry without a `file`, or a key no
/// manifest entry has. Nothing is adopted then.
pub fn diff(
    edited: &str,
    written: Option<(&[String], &[Entry])>,
) -> Result<Vec<String>, Unadoptable> {
    let parsed = manifest::parse(edited);
    if let Some((line, column, message)) = parsed.errors.first() {
        return Err(Unadoptable {
            pos: Pos {
                line: *line,
                column: *column,
            },
            message: message.clone(),
        });
    }
    let (old_curation, old_entries): (&[String], &[Entry]) = written.unwrap_or((&[], &[]));
    // A note curate wrote (this run's, or the overrides file's) that the person removed or
    // reworded: no overrides line removes a note, so adopting would bring it back.
    if let Some(gone) = old_curation
        .iter()
        .find(|c| !c.is_empty() && !parsed.curation.contains(c) && !parsed.comments.contains(c))
    {
        return Err(Unadoptable {
            pos: Pos { line: 1, column: 1 },
            message: format!(
                "the note {gone:?} curate wrote is no longer in the manifest: adopting cannot remove or reword a note (remove it from the overrides file if it is there, or put it back)"
            ),
        });
    }
    let mut lines = Vec::new();
    let notes = parsed
        .curation
        .iter()
        .chain(&parsed.comments)
        .filter(|c| !c.is_empty());
    for c in notes {
        let line = format!("{} {c}", manifest::CURATION);
        if !old_curation.contains(c) && !lines.contains(&line) {
            lines.push(line);
        }
    }
    let mut seen = Vec::new();
    for (n, value) in &parsed.entries {
        let unadoptable = |message: String| Unadoptable {
            pos: Pos {
                line: *n,
                column: 1,
            },
            message,
        };
        // (A line that is no JSON object is one of `parsed.errors`.)
        let Some(obj) = value.as_object() else {
            continue;
        };
        if let Some(key) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(unadoptable(format!(
                "{key:?} is no key of a manifest entry ({}): write it into the reason",
                KEYS.join(", ")
            )));
        }
        let Some(file) = obj.get("file").and_then(Value::as_str) else {
            return Err(unadoptable(
                "an entry needs \"file\", the path it names".to_owned(),
            ));
        };
        seen.push(file.to_owned());
        let old = old_entries.iter().find(|e| e.file == file);
        let old_value = old.map(|e| serde_json::to_value(e).unwrap_or(Value::Null));
        let mut changed = Map::new();
        changed.insert("file".to_owned(), json!(file));
        for &key in &KEYS[1..] {
            let new = obj.get(key);
            let before = old_value.as_ref().and_then(|o| o.get(key));
            if let Some(new) = new
                && Some(new) != before
            {
                changed.insert(key.to_owned(), new.clone());
            }
        }
        if changed.len() > 1 {
            lines.push(Value::Object(changed).to_string());
        }
    }
    // The entries' order is curate's: by priority, then the baseline's order. An edit that
    // moves an entry otherwise cannot be kept by any overrides line.
    let priority_of = |file: &str| {
        parsed
            .entries
            .iter()
            .filter_map(|(_, v)| v.as_object())
            .find(|o| o.get("file").and_then(Value::as_str) == Some(file))
            .and_then(|o| o.get("priority").and_then(Value::as_str))
            .and_then(crate::model::Priority::parse)
    };
    let kept: Vec<(usize, &Entry)> = seen
        .iter()
        .filter_map(|f| {
            old_entries
                .iter()
                .position(|e| &e.file == f)
                .map(|i| (i, &old_entries[i]))
        })
        .collect();
    let mut expected = kept.clone();
    expected.sort_by_key(|(i, e)| (priority_of(&e.file).unwrap_or(e.priority), *i));
    if let Some(((_, moved), _)) = kept.iter().zip(&expected).find(|(a, b)| a.0 != b.0) {
        let line = parsed
            .entries
            .iter()
            .find(|(_, v)| v.get("file").and_then(Value::as_str) == Some(moved.file.as_str()))
            .map_or(1, |(n, _)| *n);
        return Err(Unadoptable {
            pos: Pos { line, column: 1 },
            message: format!(
                "{:?} was moved: the entries' order is curate's (by priority, then the baseline's), and no overrides line keeps a place; change its priority, or put it back",
                moved.file
            ),
        });
    }
    for e in old_entries {
        if !seen.contains(&e.file) {
            lines.push(
                // `[*]`-style escapes, not backslashes: a drop glob is normalised like a
                // path, and `\` becomes `/` there.
                json!({"drop": globset::escape(&e.file), "why": "removed from the manifest by hand"})
                    .to_string(),
            );
        }
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Priority, Sections};

    fn entry(file: &str, priority: Priority) -> Entry {
        Entry {
            file: file.to_owned(),
            reason: "r".to_owned(),
            sections: Sections::Whole,
            priority,
            kind: "plan".to_owned(),
        }
    }

    #[test]
    fn edits_become_override_lines() {
        let written = vec![
            entry("a.md", Priority::High),
            entry("b[1].md", Priority::Low),
        ];
        let curation = vec!["old note".to_owned()];
        let edited = "// curate: 0.1.0 contracts=000000000000 digest=000000000000\n// curation: old note\n// curation: my note\n{\"file\":\"a.md\",\"reason\":\"r\",\"sections\":[[1,3]],\"priority\":\"medium\",\"kind\":\"plan\"}\n{\"file\":\"c.md\",\"reason\":\"mine\",\"sections\":null,\"priority\":\"high\",\"kind\":\"truth\"}\n";
        let lines = diff(edited, Some((&curation, &written))).unwrap();
        assert_eq!(
            lines,
            vec![
                "// curation: my note".to_owned(),
                r#"{"file":"a.md","sections":[[1,3]],"priority":"medium"}"#.to_owned(),
                r#"{"file":"c.md","reason":"mine","sections":null,"priority":"high","kind":"truth"}"#.to_owned(),
                r#"{"drop":"b[[]1[]].md","why":"removed from the manifest by hand"}"#.to_owned(),
            ]
        );
    }

    #[test]
    fn a_plain_comment_becomes_a_curation_line() {
        let written = vec![entry("a.md", Priority::High)];
        let edited = "// curate: 0.1.0 contracts=000000000000 digest=000000000000\n// my note\n# another\n//\n{\"file\":\"a.md\",\"reason\":\"r\",\"sections\":null,\"priority\":\"high\",\"kind\":\"plan\"}\n// curation: my note\n";
        assert_eq!(
            diff(edited, Some((&[], &written))).unwrap(),
            ["// curation: my note", "// curation: another"]
        );
    }

    #[test]
    fn a_line_no_overrides_line_can_keep_is_refused_with_its_position() {
        let written = vec![entry("a.md", Priority::High)];
        let head = "// curate: 0.1.0 contracts=000000000000 digest=000000000000\n";
        let refused =
            |body: &str| diff(&format!("{head}{body}"), Some((&[], &written))).unwrap_err();
        let e = refused("{\"file\":\"a.md\",\"priority\":\"low\"\n");
        assert_eq!((e.pos.line, e.pos.column), (2, 31), "{e:?}");
        assert!(e.message.starts_with("invalid JSON"), "{e:?}");
        let e = refused("// ok\n{\"file\":\"a.md\",\"note\":\"mine\"}\n");
        assert_eq!(e.pos.line, 3);
        assert!(
            e.message
                .starts_with("\"note\" is no key of a manifest entry"),
            "{e:?}"
        );
        let e = refused("{\"reason\":\"r\"}\n");
        assert_eq!(e.message, "an entry needs \"file\", the path it names");
        let e = refused("[1]\n");
        assert_eq!(e.message, "an entry must be a JSON object");
    }
}
