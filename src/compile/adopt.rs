//! `--adopt`: turn a person's edits of a manifest into overrides-file lines, so the next
//! compile keeps every one of them.
//!
//! Pure: receives the edited manifest text and what curate last wrote (from the lock);
//! returns the lines to append to the overrides file.

use serde_json::{Map, Value, json};

use crate::compile::manifest;
use crate::model::Entry;

/// The overrides lines that reproduce the edits of `edited` against what curate wrote
/// (`written_curation`, `written`). Without a lock (`None`), every entry and curation line
/// of the manifest is taken as the person's.
#[must_use]
pub fn diff(edited: &str, written: Option<(&[String], &[Entry])>) -> Vec<String> {
    let parsed = manifest::parse(edited);
    let (old_curation, old_entries): (&[String], &[Entry]) = written.unwrap_or((&[], &[]));
    let mut lines = Vec::new();
    for c in &parsed.curation {
        if !old_curation.contains(c) {
            lines.push(format!("{} {c}", manifest::CURATION));
        }
    }
    let mut seen = Vec::new();
    for (_, value) in &parsed.entries {
        let Some(obj) = value.as_object() else {
            continue;
        };
        let Some(file) = obj.get("file").and_then(Value::as_str) else {
            continue;
        };
        seen.push(file.to_owned());
        let old = old_entries.iter().find(|e| e.file == file);
        let old_value = old.map(|e| serde_json::to_value(e).unwrap_or(Value::Null));
        let mut changed = Map::new();
        changed.insert("file".to_owned(), json!(file));
        for key in ["reason", "sections", "priority", "kind"] {
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
    lines
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
        let lines = diff(edited, Some((&curation, &written)));
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
}
