//! Rendering an existing manifest (`render --manifest`, a hand-edited manifest in a hook):
//! its entries read back as a compile's result, each file measured again.

use super::{
    CompileSettings, Compiled, Entry, Error, Kept, Path, Result, Sections, Status, Value,
    Workspace, compile, measure, quoted,
};

/// A [`Compiled`] from an existing manifest, after the containment and secret checks.
pub fn from_manifest(ws: &Workspace, s: &CompileSettings, path: &Path) -> Result<Compiled> {
    // A file whose name marks a secret (`.env.production`, `creds.key`) is never read, as
    // `check` never reads it: its text would be the prompt's reasons. Judged by its
    // repository path (the target's, past links), or by its name outside the repository.
    let judged = match path.canonicalize() {
        Ok(real) => crate::model::paths::relative_to(&ws.root, &real).unwrap_or_else(|| {
            real.file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        }),
        Err(_) => String::new(),
    };
    if let Err(refusal) = crate::trust::admit::judge_name(&judged) {
        return Err(Error::Invalid {
            path: path.to_owned(),
            message: format!("never read: {refusal}"),
        });
    }
    let bytes = crate::util::read::read_capped(path, crate::util::read::INPUT_CAP)?;
    let text = String::from_utf8_lossy(&bytes);
    let parsed = crate::stages::manifest::parse(&text);
    let shown = ws.shown(path);
    if let Some((line, column, message)) = parsed.errors.first() {
        return Err(Error::Syntax {
            path: shown.into(),
            pos: crate::model::Pos {
                line: *line,
                column: *column,
            },
            message: message.clone(),
        });
    }
    let contracts = ws.load_contracts()?;
    let role = ws.contract_role_of(&contracts, &s.contract_role)?.clone();
    let rules = crate::trust::admit::rules()?;
    let cache = compile::token_cache(ws);
    let verdicts = compile::verdict_cache(ws, parsed.entries.len());
    let known = compile::known_files(ws, parsed.entries.len());
    let fast = crate::stages::tokens::Fast(ws.encoding);
    let counter = crate::stages::tokens::Cached::new(&cache, &fast);
    let mut kept = Vec::new();
    let mut excluded = Vec::new();
    let mut withheld = crate::compile::Withheld::default();
    let held = crate::trust::admit::Held::spooling(
        crate::trust::admit::HOLD_BYTES,
        crate::trust::spool::SPOOL_BYTES,
    );
    let mut entries = Vec::new();
    for (line, value) in &parsed.entries {
        let entry: Entry = lenient_entry(value).map_err(|message| Error::Syntax {
            path: shown.clone().into(),
            pos: crate::model::Pos {
                line: *line,
                column: 1,
            },
            message,
        })?;
        if !withheld.keeps(rules, &entry.file) {
            continue;
        }
        let file = crate::model::paths::RepoPath::new(&entry.file).map_err(|e| Error::Escape {
            origin: format!("{shown}:{line}"),
            path: entry.file.clone(),
            problem: e.problem(),
        })?;
        entries.push((entry, file));
    }
    // Measured as a compile measures: every file at once, in parallel, in the manifest's order.
    let reading = measure::Reading {
        root: &ws.root,
        limits: measure::Limits {
            max_file_size: s.max_file_size,
            cut_bytes: s.caps.file_bytes,
        },
        rules,
        verdicts: &verdicts,
        counter: &counter,
        count_all: true,
        held: &held,
        known: &known,
    };
    let candidates: Vec<_> = entries
        .iter()
        .map(|(entry, file)| (file.clone(), entry.sections.clone()))
        .collect();
    let fates = measure::read_all(reading, &candidates, &indicatif::ProgressBar::hidden());
    for ((entry, file), fate) in entries.into_iter().zip(fates) {
        match fate {
            measure::Fate::Measured(m) => kept.push(Kept {
                entry: Entry {
                    file: file.to_string(),
                    sections: m.sections.clone(),
                    ..entry
                },
                lines: m.lines,
                tokens: m.tokens.unwrap_or(0),
                bytes: None,
                anchors: m.anchors,
                degraded: None,
                cut_at: None,
                sha256: m.sha256,
            }),
            measure::Fate::Excluded(reason) => {
                excluded.push(crate::model::Exclusion::new(file.as_str(), &reason));
            }
        }
    }
    let _ = cache.save();
    let _ = verdicts.save();
    let _ = known.save();
    kept.sort_by_key(|k| k.entry.priority);
    let indexed = still_not_given(ws, path, &kept);
    let status = if kept.is_empty() {
        Status::Blocked
    } else {
        Status::Ready
    };
    Ok(Compiled {
        status,
        role,
        change: s.change.clone(),
        contracts_source: contracts.source.describe(),
        manifest_path: shown,
        kept,
        dropped: vec![],
        indexed,
        notes: excluded
            .iter()
            .map(|e| {
                crate::model::Note::warning(format!("excluded {}: {}", quoted(&e.file), e.reason))
            })
            .chain(withheld.notes())
            .collect(),
        excluded,
        curation: parsed.curation,
        caps: s.caps,
        overrun: None,
        candidates: vec![],
        manifest: None,
        lock: None,
        overrides_file: None,
        changed_truth: Vec::new(),
        role_name: s.role.clone(),
        workflow: crate::compile::Workflowed::of(ws),
        held: std::sync::Arc::new(held),
    })
}

/// What the compile named only (its lock says so), and the manifest, edited or not, does
/// not hold: still not given, so still in the prompt's "Not given" list.
fn still_not_given(ws: &Workspace, path: &Path, kept: &[Kept]) -> Vec<compile::Dropped> {
    ws.relative(path)
        .and_then(|rel| crate::stages::manifest::read_lock(&ws.root, &rel))
        .map(|lock| {
            lock.indexed
                .into_iter()
                .filter(|n| !kept.iter().any(|k| k.entry.file == n.file))
                .map(|n| compile::Dropped {
                    by: n.rule.replace('_', " "),
                    file: n.file,
                    priority: n.priority.unwrap_or(crate::model::Priority::Low),
                    kind: String::new(),
                    lines: Some(n.lines),
                    tokens: None,
                    rule: n.rule,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// An entry as the aiws plugin reads it: `priority` missing = medium, `kind` missing =
/// `unknown`, `reason` missing = empty. The error says what is wrong with the line.
pub(super) fn lenient_entry(v: &Value) -> std::result::Result<Entry, String> {
    let file = v
        .get("file")
        .and_then(Value::as_str)
        .ok_or("an entry needs a \"file\" string")?
        .to_owned();
    let priority = match v.get("priority") {
        None => crate::model::Priority::Medium,
        Some(p) => p
            .as_str()
            .and_then(crate::model::Priority::parse)
            .ok_or_else(|| format!("unknown priority {p}: use high, medium or low"))?,
    };
    let sections = match v.get("sections") {
        None | Some(Value::Null) => Sections::Whole,
        Some(s) => {
            let ranges: Vec<[u64; 2]> = serde_json::from_value(s.clone())
                .map_err(|e| format!("malformed sections: {e}"))?;
            crate::stages::overrides::checked_sections(ranges)
                .map_err(|e| format!("malformed sections: {e}"))?
        }
    };
    let text = |key: &str, default: &str| {
        v.get(key)
            .and_then(Value::as_str)
            .unwrap_or(default)
            .to_owned()
    };
    Ok(Entry {
        file,
        reason: text("reason", ""),
        sections,
        priority,
        kind: text("kind", "unknown"),
    })
}
