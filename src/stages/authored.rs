//! The author's list: a manifest file that is also the list a workflow's own authors write
//! (Trellis' `implement.jsonl` / `check.jsonl`), read as layer 2 and written back with every
//! author row kept.
//!
//! Reads rows the way Trellis' readers do (one JSON object a line; `file`, or `path`, with
//! `type: "directory"` for a folder; rows without a file are skipped by Trellis and kept
//! here as they are). curate's own rows are told apart by their form: the header and notes
//! (`_curate`, `_curation`) and entries marked `"by": "curate"`, all regenerated on each
//! run; every other row is the author's. Pure text work but for listing a directory row's
//! folder.

use std::path::Path;

use crate::model::Entry;
use crate::model::Pos;
use crate::stages::manifest::{BY, CURATION_KEY, HEADER_KEY};

/// A row of the author's that names a file or a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// 1-based line in the file.
    pub line: usize,
    /// The row as written.
    pub raw: String,
    /// The path as written.
    pub file: String,
    pub reason: Option<String>,
    /// `type: "directory"`: the folder's `*.md` files, as Trellis' hook reads it.
    pub directory: bool,
    /// Written as [`WITHHELD`]: a row curate keeps from the consumer (a secret).
    pub withheld: bool,
}

impl Row {
    /// The row as written back when its file is read: as the author wrote it, a withheld
    /// row as a file row again.
    #[must_use]
    pub fn readable(&self) -> String {
        if self.withheld {
            restore(&self.raw)
        } else {
            self.raw.clone()
        }
    }
}

/// The key a file row is written under when curate keeps it out of the list (a secret, a
/// link out of the repository): the consumer reads no file from it, and curate reads it
/// back as the author's row on the next run, so the note and the "not given" line stay.
pub const WITHHELD: &str = "withheld";

/// `raw` (a file row, or one already withheld) as a withheld row: its `file` (or `path`)
/// key renamed [`WITHHELD`] in place, `why` the reason.
#[must_use]
pub fn withhold(raw: &str, why: &str) -> String {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(raw) else {
        return raw.to_owned();
    };
    let key = ["file", "path", WITHHELD]
        .into_iter()
        .find(|k| map.get(*k).is_some_and(serde_json::Value::is_string))
        .unwrap_or(WITHHELD);
    let mut out = serde_json::Map::new();
    for (k, v) in map {
        match k.as_str() {
            "why" => {}
            k if k == key => {
                out.insert(WITHHELD.to_owned(), v);
            }
            _ => {
                out.insert(k, v);
            }
        }
    }
    out.insert("why".to_owned(), serde_json::Value::from(why));
    serde_json::Value::Object(out).to_string()
}

/// A withheld row as a file row again (what it is written as once the file may be read).
#[must_use]
pub fn restore(raw: &str) -> String {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(raw) else {
        return raw.to_owned();
    };
    if map.contains_key("file") || !map.contains_key(WITHHELD) {
        return raw.to_owned();
    }
    let out: serde_json::Map<String, serde_json::Value> = map
        .into_iter()
        .filter(|(k, _)| k != "why")
        .map(|(k, v)| {
            if k == WITHHELD {
                ("file".to_owned(), v)
            } else {
                (k, v)
            }
        })
        .collect();
    serde_json::Value::Object(out).to_string()
}

/// The author's part of a manifest file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Authored {
    /// Rows kept byte for byte that name no file (Trellis' seed row `{"_example": …}`, a
    /// `{"drop": …}` row), in order.
    pub kept: Vec<String>,
    /// Rows that name a file or folder, in order.
    pub rows: Vec<Row>,
    /// `{"drop": GLOB, "why"?}` rows: (line, glob, why).
    pub drops: Vec<(usize, String, Option<String>)>,
    /// The file's lines end in `\r\n` (its first line's ending): written back so.
    pub crlf: bool,
}

/// Which `{"_curation": …}` rows of a list are curate's notes (written anew each run), the
/// rest being the author's (kept as they are).
pub enum Notes<'a> {
    /// A list without curate's header: curate never wrote it, every such row is the author's.
    NoneOurs,
    /// A list with curate's header but no lock beside it: every such row is taken for curate's.
    AllOurs,
    /// The note rows curate wrote last (its lock's), as written.
    These(&'a std::collections::HashSet<String>),
}

impl Notes<'_> {
    fn ours(&self, raw: &str) -> bool {
        match self {
            Notes::NoneOurs => false,
            Notes::AllOurs => true,
            Notes::These(set) => set.contains(raw),
        }
    }
}

/// Reads the author's rows of `text`. With `ours` (the rows curate wrote last, when the file
/// was edited since), a row marked as curate's that is not one of them was changed by the
/// author: it is the author's from now on (kept without the mark); `notes` tells curate's
/// note rows from the author's rows of the same form.
///
/// A line that is not a JSON object (nor blank) is an error at its position, a `//` comment
/// and a leading byte-order mark too: Trellis' hook would skip it and its `task.py
/// validate` reports it, and rewriting the list without it would lose what the author meant
/// there.
pub fn parse<S: std::hash::BuildHasher>(
    text: &str,
    ours: Option<&std::collections::HashSet<String, S>>,
    notes: &Notes<'_>,
) -> Result<Authored, (Pos, String)> {
    let mut out = Authored {
        crlf: text.split('\n').next().is_some_and(|l| l.ends_with('\r')) && text.contains('\n'),
        ..Authored::default()
    };
    if text.starts_with('\u{feff}') {
        return Err((
            Pos { line: 1, column: 1 },
            "the file starts with a byte-order mark (U+FEFF), which Trellis' readers take as invalid JSON: save it as UTF-8 without one".to_owned(),
        ));
    }
    for (i, line) in text.lines().enumerate() {
        let raw = line.trim();
        if raw.is_empty() {
            continue;
        }
        let lead = line.len() - line.trim_start().len();
        if raw.starts_with("//") {
            return Err((
                Pos {
                    line: i + 1,
                    column: lead + 1,
                },
                "a `//` comment is not a row (Trellis' readers skip it and `task.py validate` reports it): write it as a row without a file, {\"_note\": \"…\"}, which is kept as it is".to_owned(),
            ));
        }
        let mut map = match serde_json::from_str::<serde_json::Value>(raw) {
            Ok(serde_json::Value::Object(map)) => map,
            Ok(_) => {
                return Err((
                    Pos {
                        line: i + 1,
                        column: lead + 1,
                    },
                    "a row must be a JSON object ({\"file\": …, \"reason\": …})".to_owned(),
                ));
            }
            Err(e) => {
                return Err((
                    Pos {
                        line: i + 1,
                        column: e.column().max(1) + lead,
                    },
                    format!("invalid JSON: {}", crate::util::jsonpos::json_message(&e)),
                ));
            }
        };
        if map.contains_key(HEADER_KEY) || (map.contains_key(CURATION_KEY) && notes.ours(raw)) {
            continue;
        }
        let mut raw = raw.to_owned();
        if map.get(BY.0).and_then(serde_json::Value::as_str) == Some(BY.1) {
            match ours {
                Some(ours) if !ours.contains(&raw) => {
                    map.remove(BY.0);
                    raw = serde_json::Value::Object(map.clone()).to_string();
                }
                _ => continue,
            }
        }
        let text_of = |k: &str| map.get(k).and_then(serde_json::Value::as_str);
        let file = text_of("file")
            .or_else(|| text_of("path"))
            .filter(|f| !f.is_empty());
        let withheld = text_of(WITHHELD).filter(|f| file.is_none() && !f.is_empty());
        match file.or(withheld) {
            Some(file) => out.rows.push(Row {
                line: i + 1,
                raw: raw.clone(),
                file: file.to_owned(),
                reason: text_of("reason").map(str::to_owned),
                directory: text_of("type") == Some("directory"),
                withheld: withheld.is_some(),
            }),
            None => {
                if let Some(glob) = text_of("drop") {
                    out.drops
                        .push((i + 1, glob.to_owned(), text_of("why").map(str::to_owned)));
                }
                out.kept.push(raw);
            }
        }
    }
    Ok(out)
}

/// The files a directory row stands for, as Trellis' hook reads them
/// (`_materialize_directory`): the names in `folder` (repository-relative) that end in
/// `.md` and are files once links are followed, sorted, the first 20. A link is among them
/// as the hook would read it, so it goes through admission like any member: the folder's
/// row is written back only when every member is kept, and a link out of the repository
/// never is. A name that is not UTF-8 stands as its lossy form, which admission never
/// finds: such a folder is written as file rows too.
#[must_use]
pub fn directory_members(root: &Path, folder: &str) -> Vec<String> {
    let folder = folder.trim_end_matches('/');
    let dir = root.join(folder);
    let Ok(read) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = read
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        // Trellis compares the extension case-sensitively, and follows links.
        .filter(|n| n.as_encoded_bytes().ends_with(b".md"))
        .filter(|n| std::fs::metadata(dir.join(n)).is_ok_and(|m| m.is_file()))
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
        .into_iter()
        .take(20)
        .map(|n| {
            if folder.is_empty() {
                n
            } else {
                format!("{folder}/{n}")
            }
        })
        .collect()
}

/// The drop rows an author's removals stand for: each entry curate added last time (in
/// `written`, not the author's) that is gone from the hand-edited `text`, as a
/// `{"drop": …}` row to keep in the file.
#[must_use]
pub fn removals(text: &str, written: &[Entry], author_kind: &str) -> Vec<String> {
    let present: std::collections::HashSet<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
        .filter_map(|v| v.get("file").and_then(|f| f.as_str()).map(str::to_owned))
        .collect();
    written
        .iter()
        .filter(|e| e.kind != author_kind && !present.contains(&e.file))
        .map(|e| {
            serde_json::json!({
                "drop": globset::escape(&e.file),
                "why": "removed from the list by its author",
            })
            .to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_withheld_row_keeps_the_authors_keys_in_order_and_comes_back_whole() {
        let raw = r#"{"reason": "config", "file": ".env", "extra": [1]}"#;
        let held = withhold(raw, "secret: `.env` file");
        assert_eq!(
            held,
            r#"{"reason":"config","withheld":".env","extra":[1],"why":"secret: `.env` file"}"#
        );
        assert_eq!(
            withhold(&held, "binary"),
            held.replace("secret: `.env` file", "binary")
        );
        assert_eq!(
            restore(&held),
            r#"{"reason":"config","file":".env","extra":[1]}"#
        );
        // Read back as the author's row, flagged.
        let a =
            parse::<std::hash::RandomState>(&format!("{held}\n"), None, &Notes::NoneOurs).unwrap();
        assert_eq!(a.rows.len(), 1);
        assert_eq!(a.rows[0].file, ".env");
        assert!(a.rows[0].withheld);
        assert!(a.kept.is_empty());
        // A row with a file of its own is never taken for withheld.
        let both = r#"{"file": "a.md", "withheld": ".env"}"#;
        let a =
            parse::<std::hash::RandomState>(&format!("{both}\n"), None, &Notes::NoneOurs).unwrap();
        assert_eq!(a.rows[0].file, "a.md");
        assert!(!a.rows[0].withheld);
        assert_eq!(restore(both), both);
    }

    #[test]
    fn rows_are_the_authors_unless_curate_marked_them() {
        let text = concat!(
            "{\"_curate\":\"0.1.0 contracts=aaaaaaaaaaaa digest=bbbbbbbbbbbb\"}\n",
            "{\"_curation\":\"a note\"}\n",
            "{\"_example\": \"Fill with …\"}\n",
            "\n",
            "{\"file\": \"docs/a.md\", \"reason\": \"why\"}\n",
            "{\"file\":\"docs/b.md\",\"reason\":\"x\",\"sections\":null,\"priority\":\"medium\",\"kind\":\"truth\",\"by\":\"curate\"}\n",
            "{\"file\": \".trellis/spec/backend/\", \"type\": \"directory\", \"reason\": \"specs\"}\n",
            "{\"path\": \"docs/c.md\"}\n",
            "{\"drop\": \"docs/old.md\", \"why\": \"stale\"}\n",
        );
        let a =
            parse::<std::collections::hash_map::RandomState>(text, None, &Notes::AllOurs).unwrap();
        let files: Vec<(&str, bool)> = a
            .rows
            .iter()
            .map(|r| (r.file.as_str(), r.directory))
            .collect();
        assert_eq!(
            files,
            [
                ("docs/a.md", false),
                (".trellis/spec/backend/", true),
                ("docs/c.md", false)
            ]
        );
        assert_eq!(a.rows[0].line, 5);
        assert_eq!(
            a.rows[0].raw,
            "{\"file\": \"docs/a.md\", \"reason\": \"why\"}"
        );
        assert_eq!(a.rows[0].reason.as_deref(), Some("why"));
        assert_eq!(a.kept.len(), 2, "{:?}", a.kept);
        assert_eq!(
            a.drops,
            [(9, "docs/old.md".to_owned(), Some("stale".to_owned()))]
        );
    }

    /// A note row is curate's when curate wrote it last (its lock's); one the author wrote,
    /// or wrote in a list curate never wrote, is the author's, kept as written.
    #[test]
    fn a_note_row_curate_did_not_write_is_the_authors() {
        let text = "{\"_curation\":\"a note\"}\n{\"_curation\": \"author: keep this\"}\n";
        let ours: std::collections::HashSet<String> =
            std::iter::once("{\"_curation\":\"a note\"}".to_owned()).collect();
        let kept = |notes: &Notes<'_>| {
            parse::<std::collections::hash_map::RandomState>(text, None, notes)
                .unwrap()
                .kept
        };
        assert_eq!(
            kept(&Notes::These(&ours)),
            ["{\"_curation\": \"author: keep this\"}"]
        );
        assert_eq!(kept(&Notes::NoneOurs).len(), 2);
        assert!(kept(&Notes::AllOurs).is_empty());
    }

    #[test]
    fn a_row_that_is_not_a_json_object_is_refused_at_its_place() {
        let parse = |t: &str| {
            parse::<std::collections::hash_map::RandomState>(t, None, &Notes::AllOurs)
                .map_err(|(pos, m)| format!("{pos}: {}", m.split(':').next().unwrap_or_default()))
        };
        let ok = "{\"file\": \"a.md\"}\n";
        assert_eq!(
            parse(&format!("{ok}  {{\"file\": \"b.md\", \"reason\": }}\n")),
            Err("2:30: invalid JSON".to_owned())
        );
        assert_eq!(
            parse(&format!("{ok}[\"not\", \"an\", \"object\"]\n")),
            Err("2:1: a row must be a JSON object ({\"file\"".to_owned())
        );
        assert_eq!(
            parse(&format!("{ok}garbage text\n")),
            Err("2:1: invalid JSON".to_owned())
        );
        // Trellis' `task.py validate` calls a comment line invalid JSON, and a leading BOM too.
        assert_eq!(
            parse(&format!("{ok}\n  // a comment\n")),
            Err("3:3: a `//` comment is not a row (Trellis' readers skip it and `task.py validate` reports it)".to_owned())
        );
        assert_eq!(
            parse(&format!("\u{feff}{ok}")),
            Err("1:1: the file starts with a byte-order mark (U+FEFF), which Trellis' readers take as invalid JSON".to_owned())
        );
        assert!(parse(&format!("{ok}\n\n")).is_ok());
    }
}
