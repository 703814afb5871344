//! The author-list layer: a workflow whose list an author keeps is also the manifest
//! (Trellis' `implement.jsonl` / `check.jsonl`). The author's rows are read as layer 2,
//! written back in their order, and what a consumer injects itself is left out or reserved.

use super::{
    Candidate, Caps, CompileSettings, Directive, Entry, Error, Exclusion, Ledger, Note, Origin,
    Path, Priority, Result, Scope, Sections, Workspace, admit, authored, manifest, quoted,
    refuse_copied_secrets,
};

/// The author's list in the manifest file itself (a workflow whose authors write it:
/// Trellis), with the author's removals of curate's rows since the last run.
pub(super) fn read_author_list(
    ws: &Workspace,
    s: &CompileSettings,
) -> Result<Option<(String, authored::Authored)>> {
    if !ws.workflow().authored() {
        return Ok(None);
    }
    let rel = ws.manifest_path(&s.change, &s.role);
    let Some(bytes) = admit::read_repo_file(&ws.root, &ws.root.join(&rel))? else {
        return Ok(Some((rel, authored::Authored::default())));
    };
    // Written back row by row: a byte that is not UTF-8 would come back changed.
    let text = crate::model::Pos::utf8(&bytes).map_err(|pos| Error::Syntax {
        path: std::path::PathBuf::from(&rel),
        pos,
        message: "not UTF-8 (Trellis' readers cannot read the list either): save it as UTF-8"
            .to_owned(),
    })?;
    refuse_copied_secrets(text, Path::new(&rel))?;
    let headed = manifest::parse_header(manifest::split_header(text).0).is_some();
    let edited = !manifest::is_intact(text) && headed;
    // The lock is read for the notes curate wrote last even when the list is intact: a note
    // row that is not one of them is the author's.
    let lock = if headed {
        manifest::read_lock(&ws.root, &rel)
    } else {
        None
    };
    let notes = lock.as_ref().map(|l| {
        manifest::body(manifest::Form::Rows, &l.curation, &[])
            .lines()
            .map(str::to_owned)
            .collect::<std::collections::HashSet<String>>()
    });
    let notes = match (headed, &notes) {
        (false, _) => authored::Notes::NoneOurs,
        (true, None) => authored::Notes::AllOurs,
        (true, Some(set)) => authored::Notes::These(set),
    };
    let lock = if edited { lock } else { None };
    // The rows curate wrote last, to tell the author's changes to them.
    let ours: Option<std::collections::HashSet<String>> = lock.as_ref().map(|l| {
        let entries: Vec<Entry> = l.written.clone();
        let lines: Vec<manifest::Line<'_>> = entries
            .iter()
            .filter(|e| e.kind != AUTHOR_KIND)
            .map(|entry| manifest::Line::Entry {
                entry,
                marked: true,
            })
            .collect();
        manifest::body(manifest::Form::Rows, &[], &lines)
            .lines()
            .map(str::to_owned)
            .collect()
    });
    let mut list =
        authored::parse(text, ours.as_ref(), &notes).map_err(|(pos, message)| Error::Syntax {
            path: std::path::PathBuf::from(&rel),
            pos,
            message,
        })?;
    if let Some(lock) = &lock {
        for row in authored::removals(text, &lock.written, AUTHOR_KIND) {
            if let Ok(serde_json::Value::Object(m)) = serde_json::from_str(&row)
                && let Some(glob) = m.get("drop").and_then(|g| g.as_str())
            {
                list.drops.push((
                    0,
                    glob.to_owned(),
                    Some("removed from the list by its author".to_owned()),
                ));
            }
            list.kept.push(row);
        }
    }
    Ok(Some((rel, list)))
}

/// `text` with each `FILE:LINE` (and `FILE:LINE:COLUMN`) of `file` reduced to `FILE`.
pub(super) fn without_lines_of(text: &str, file: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(file) {
        let end = at + file.len();
        out.push_str(&rest[..end]);
        rest = &rest[end..];
        // At most two `:DIGITS` parts (line, column).
        for _ in 0..2 {
            let digits = rest
                .strip_prefix(':')
                .map_or(0, |r| r.bytes().take_while(u8::is_ascii_digit).count());
            if digits == 0 {
                break;
            }
            rest = &rest[1 + digits..];
        }
    }
    out.push_str(rest);
    out
}

/// The kind of an entry the author listed.
pub const AUTHOR_KIND: &str = "author";

/// The author's rows as layer-2 entries in the author's order (ahead of the baseline), the
/// author's drops, and how each kept file is written back. A row that escapes the
/// repository is left out, one that names nothing that exists is kept as written, a second
/// row for a file is kept withheld (the file is read once); a note each.
pub(super) fn author_layer(
    ws: &Workspace,
    scope: &Scope<'_>,
    rel: &str,
    list: &authored::Authored,
    ledger: &mut Ledger,
) -> (Vec<Candidate>, Vec<Directive>, WriteBack) {
    let mut entries: Vec<Candidate> = Vec::new();
    let mut back = WriteBack {
        kept: list.kept.clone(),
        crlf: list.crlf,
        ..WriteBack::default()
    };
    // The author's file rows first: of two rows naming one file, a withheld one (written
    // back by an earlier run) is the one kept withheld again.
    let rows = list.rows.iter().filter(|r| !r.withheld);
    for row in rows.chain(list.rows.iter().filter(|r| r.withheld)) {
        let origin = Origin::Override {
            file: rel.to_owned(),
            shown: rel.to_owned(),
            line: row.line,
        };
        let path = match scope.resolve(&row.file, &origin) {
            Ok(p) => crate::workflow::archived_path(
                &ws.root,
                ws.workflow(),
                scope.changes_root,
                scope.change,
                p,
            ),
            Err(e) => {
                // The error names the row's place already.
                ledger
                    .notes
                    .push(Note::warning(format!("{e}: left out of the list")));
                if !row.directory {
                    back.escaped.push(authored::withhold(
                        &row.raw,
                        "outside the repository: never read",
                    ));
                }
                continue;
            }
        };
        let files = if row.directory {
            let members = authored::directory_members(&ws.root, &path);
            if members.is_empty() {
                ledger.notes.push(Note::warning(format!(
                    "{}: the folder {} holds no .md file: kept as written, nothing to read",
                    origin.describe(),
                    quoted(&row.file)
                )));
                back.kept.push(row.raw.clone());
                continue;
            }
            back.folders.push((row.readable(), members.clone()));
            members
        } else if ws.root.join(&path).is_file() {
            // Named by an earlier file row, or by an earlier folder row (whose row Trellis'
            // hook reads the file by already).
            if back.rows.contains_key(&path) || back.folders.iter().any(|(_, m)| m.contains(&path))
            {
                // No line number: the note and the row are written into the list, whose
                // lines move as curate's own rows come and go.
                ledger.notes.push(Note::warning(format!(
                    "{rel}: {} is listed twice: read once, the second row kept withheld",
                    quoted(&path)
                )));
                back.twice.push(authored::withhold(
                    &row.raw,
                    "listed by another row already",
                ));
                continue;
            }
            back.rows.insert(path.clone(), row.readable());
            back.order.push((path.clone(), row.raw.clone()));
            vec![path]
        } else {
            ledger.notes.push(Note::warning(format!(
                "{}: {} does not exist: kept as the author wrote it, nothing to read",
                origin.describe(),
                quoted(&row.file)
            )));
            back.kept.push(row.raw.clone());
            continue;
        };
        for file in files {
            if entries.iter().any(|c| c.path == file) {
                continue;
            }
            entries.push(Candidate {
                path: file,
                priority: Priority::High,
                kind: AUTHOR_KIND.to_owned(),
                sections: Sections::Whole,
                reason: Some(
                    row.reason
                        .clone()
                        .unwrap_or_else(|| "listed by the task's author".to_owned()),
                ),
                origin: origin.clone(),
                merged: Vec::new(),
            });
        }
    }
    let drops = list
        .drops
        .iter()
        .map(|(line, glob, why)| Directive::Drop {
            glob: glob.clone(),
            why: why.clone(),
            origin: Origin::Override {
                file: rel.to_owned(),
                shown: rel.to_owned(),
                line: *line,
            },
        })
        .collect();
    (entries, drops, back)
}

/// How the author's rows are written back: kept rows first, then each kept file as the
/// author's row, a folder's row (when every file of it is kept), or curate's marked entry.
#[derive(Debug, Default)]
pub(super) struct WriteBack {
    pub(super) kept: Vec<String>,
    /// A file's own row, as written (a withheld row as a file row again).
    pub(super) rows: std::collections::HashMap<String, String>,
    /// The file rows in the author's order, as read: those admission keeps out are
    /// written back withheld.
    pub(super) order: Vec<(String, String)>,
    /// Rows naming a path outside the repository, withheld.
    pub(super) escaped: Vec<String>,
    /// Rows naming a file an earlier row names, withheld.
    pub(super) twice: Vec<String>,
    /// A directory row and the files it stands for.
    pub(super) folders: Vec<(String, Vec<String>)>,
    /// The author's file ends its lines in `\r\n`.
    pub(super) crlf: bool,
}

impl WriteBack {
    /// The author's file rows kept out of the list (a secret, a link out, outside the
    /// repository), as withheld rows: written in place of the rows, so that the consumer
    /// reads none of them and the next run reads them back and notes them again.
    pub(super) fn withheld(&self, excluded: &[Exclusion]) -> Vec<String> {
        let mut out = self.escaped.clone();
        for (path, raw) in &self.order {
            if let Some(ex) = excluded.iter().find(|ex| &ex.file == path) {
                out.push(authored::withhold(raw, &ex.reason));
            }
        }
        out.extend(self.twice.iter().cloned());
        out
    }

    pub(super) fn lines<'a>(
        &'a self,
        entries: &'a [Entry],
        withheld: &'a [String],
    ) -> Vec<manifest::Line<'a>> {
        use manifest::Line;
        let kept: std::collections::HashSet<&str> =
            entries.iter().map(|e| e.file.as_str()).collect();
        let mut out: Vec<Line<'a>> = self
            .kept
            .iter()
            .chain(withheld)
            .map(|r| Line::Verbatim(r))
            .collect();
        let mut folders_written = vec![false; self.folders.len()];
        for e in entries {
            if let Some(raw) = self.rows.get(&e.file) {
                out.push(Line::Verbatim(raw));
                continue;
            }
            if let Some(i) = self.folders.iter().position(|(_, m)| m.contains(&e.file)) {
                let (raw, members) = &self.folders[i];
                if members.iter().all(|m| kept.contains(m.as_str())) {
                    if !folders_written[i] {
                        folders_written[i] = true;
                        out.push(Line::Verbatim(raw));
                    }
                    continue;
                }
            }
            out.push(Line::Entry {
                entry: e,
                marked: e.kind != AUTHOR_KIND,
            });
        }
        out
    }
}

/// What the consumer injects on its own (Trellis: the task's `prd.md`, `design.md`,
/// `implement.md`) is never listed; returns whether the change holds any of it.
pub(super) fn leave_out_injected(
    ws: &Workspace,
    s: &CompileSettings,
    candidates: &mut Vec<Candidate>,
    ledger: &mut Ledger,
) -> bool {
    let names = ws.workflow().injected();
    if names.is_empty() {
        return false;
    }
    let folder = format!("{}/{}", ws.changes_root, s.change);
    let injected: Vec<String> = names.iter().map(|n| format!("{folder}/{n}")).collect();
    candidates.retain(|c| {
        let theirs = injected.contains(&c.path);
        if theirs {
            ledger.notes.push(Note::info(format!(
                "{} is not listed: {} injects it itself",
                quoted(&c.path),
                ws.workflow().name()
            )));
        }
        !theirs
    });
    injected.iter().any(|p| ws.root.join(p).is_file())
}

/// The caps with room kept in the consumer's byte total for what it injects itself.
pub(super) fn reserve_for_injected(
    ws: &Workspace,
    s: &CompileSettings,
    ledger: &mut Ledger,
) -> Caps {
    let mut caps = s.caps;
    if caps.max_bytes == 0 {
        return caps;
    }
    let folder = format!("{}/{}", ws.changes_root, s.change);
    let reserved = ws.workflow().reserved_bytes(&ws.root, &folder);
    if reserved > 0 {
        let left = caps.max_bytes.saturating_sub(reserved).max(1);
        ledger.notes.push(Note::info(format!(
            "{} of the {}-byte total are kept for the task's own files that {} injects after the list: {left} bytes for the list",
            reserved,
            caps.max_bytes,
            ws.workflow().name()
        )));
        caps.max_bytes = left;
    }
    caps
}
