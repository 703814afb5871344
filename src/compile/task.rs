//! The task's words in the pipeline: the texts that describe the task (`--task-text`, the
//! task file, the change's own documents) handed to `stages::task_words`, and what it
//! selects added to the candidates.

use super::{
    Candidate, CompileSettings, Ledger, Note, Origin, Priority, RepoPath, Result, Scope,
    TokenCounter, Universe, Workspace, admit, task_words,
};

/// The files the task's text names or talks about (docs/selection.md), added as
/// `referenced` (medium) and `related` (low) entries within `s.task_tokens`. The text: the
/// change's own documents, the task file's title, description and criteria, `--task-text`.
pub(super) fn with_task_words(
    ws: &Workspace,
    universe: &Universe<'_, '_>,
    s: &CompileSettings,
    counter: &dyn TokenCounter,
    mut candidates: Vec<Candidate>,
    ledger: &mut Ledger,
) -> Result<Vec<Candidate>> {
    if s.task_tokens == 0 {
        return Ok(candidates);
    }
    let rules = admit::rules()?;
    let texts = task_texts(ws, universe.scope, s, universe.get()?, rules);
    if texts.is_empty() {
        return Ok(candidates);
    }
    let mut skip: std::collections::BTreeSet<String> =
        candidates.iter().map(|c| c.path.clone()).collect();
    skip.extend(texts.iter().map(|t| t.source.clone()));
    let precedents = precedents(ws, s, universe.get()?, rules);
    // The files' words as last read, kept as the `--related` index is: a cache, whose failed
    // save changes nothing else.
    let terms = crate::stages::related::Terms::open(
        super::cache_dir(ws),
        &ws.root,
        &task_words::rank::words_of(),
    );
    let found = task_words::select(&task_words::Inputs {
        root: &ws.root,
        universe: universe.get()?,
        texts: &texts,
        precedents: &precedents,
        skip: &skip,
        budget: s.task_tokens,
        max_file_size: s.max_file_size,
        rules,
        counter,
        terms: &terms,
        cache: super::cache_dir(ws),
    });
    let _ = terms.save(universe.get()?);
    let named = found.iter().filter(|f| f.kind == "referenced").count();
    let tokens: u64 = found.iter().map(|f| f.tokens).sum();
    ledger.notes.push(
        Note::info(format!(
            "the task's words: {named} file{} named, {} ranked, {tokens} tokens (of {})",
            if named == 1 { "" } else { "s" },
            found.len() - named,
            s.task_tokens
        ))
        .report_only(),
    );
    for f in found {
        candidates.push(Candidate {
            path: f.path,
            priority: if f.kind == "referenced" {
                Priority::Medium
            } else {
                Priority::Low
            },
            kind: f.kind.to_owned(),
            sections: f.sections,
            reason: Some(f.reason),
            origin: Origin::TaskWords(f.score),
            merged: Vec::new(),
        });
    }
    Ok(candidates)
}

/// The texts that describe the task: `--task-text`, the task file's words, and the
/// change's own documents (read through admission; curate's own files left out).
pub(super) fn task_texts(
    ws: &Workspace,
    scope: &Scope<'_>,
    s: &CompileSettings,
    universe: &[String],
    rules: &crate::trust::secrets::ContentRules,
) -> Vec<task_words::Text> {
    let mut texts = Vec::new();
    if !s.task_text.trim().is_empty() {
        texts.push(task_words::Text {
            source: if s.task_text_from.is_empty() {
                "--task-text".to_owned()
            } else {
                s.task_text_from.clone()
            },
            dir: None,
            text: s.task_text.clone(),
        });
    }
    if let Some((_, task)) = &s.task {
        let mut text = format!("{}\n{}\n", task.title, task.description);
        for c in &task.success_criteria {
            text.push_str(c);
            text.push('\n');
        }
        texts.push(task_words::Text {
            source: "the task file".to_owned(),
            dir: None,
            text,
        });
    }
    let folder = format!("{}/{}/", ws.changes_root, s.change);
    let documents = under(universe, &folder)
        .iter()
        .filter(|p| !scope.is_own_file(p) && is_document(p))
        .take(MAX_TASK_DOCUMENTS);
    for p in documents {
        if let Some(text) = read_text(ws, s, rules, p) {
            texts.push(task_words::Text {
                source: p.clone(),
                dir: p.rsplit_once('/').map(|(d, _)| d.to_owned()),
                text,
            });
        }
    }
    texts
}

/// The workspace's other changes that keep a list of files (`*.jsonl` in their folder or
/// its `analysis/`: Trellis' `implement.jsonl`, curate's manifests), with their text (their
/// documents, as [`task_texts`] reads this change's) and the files their lists name (a
/// row's `file` or `path`, in the universe, outside the change's own folder).
fn precedents(
    ws: &Workspace,
    s: &CompileSettings,
    universe: &[String],
    rules: &crate::trust::secrets::ContentRules,
) -> Vec<task_words::precedent::Precedent> {
    use rayon::prelude::*;
    let root = format!("{}/", ws.changes_root);
    let own = format!("{root}{}/", s.change);
    let mut folders: std::collections::BTreeMap<String, Vec<&String>> =
        std::collections::BTreeMap::new();
    for list in under(universe, &root).iter().filter(|p| {
        std::path::Path::new(p.as_str())
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("jsonl"))
            && !p.starts_with(&own)
    }) {
        let Some((dir, _)) = list.rsplit_once('/') else {
            continue;
        };
        let folder = dir.strip_suffix("/analysis").unwrap_or(dir);
        if folder.len() > root.len() {
            folders.entry(folder.to_owned()).or_default().push(list);
        }
    }
    let read = |p: &str| read_text(ws, s, rules, p);
    let in_universe = |p: &str| universe.binary_search_by(|u| u.as_str().cmp(p)).is_ok();
    let folders: Vec<(String, Vec<&String>)> = folders.into_iter().take(MAX_PRECEDENTS).collect();
    folders
        .par_iter()
        .filter_map(|(folder, lists)| {
            let inside = format!("{folder}/");
            let mut files: Vec<String> = Vec::new();
            for list in lists {
                for line in read(list)?.lines() {
                    let Ok(row) = serde_json::from_str::<serde_json::Value>(line) else {
                        continue;
                    };
                    let named = row.get("file").or_else(|| row.get("path"));
                    if let Some(f) = named.and_then(serde_json::Value::as_str)
                        && !f.starts_with(&inside)
                        && in_universe(f)
                        && !files.iter().any(|g| g == f)
                    {
                        files.push(f.to_owned());
                    }
                }
            }
            let text: String = under(universe, &inside)
                .iter()
                .filter(|p| is_document(p))
                .take(MAX_TASK_DOCUMENTS)
                .filter_map(|p| read(p))
                .collect::<Vec<_>>()
                .join("\n");
            (!files.is_empty() && !text.trim().is_empty()).then(|| {
                task_words::precedent::Precedent {
                    folder: folder.clone(),
                    text,
                    files,
                }
            })
        })
        .collect()
}

/// The text of the repository file `path`, when admission lets it in (lossy UTF-8).
fn read_text(
    ws: &Workspace,
    s: &CompileSettings,
    rules: &crate::trust::secrets::ContentRules,
    path: &str,
) -> Option<String> {
    let rp = RepoPath::new(path).ok()?;
    let bytes = admit::admit(&ws.root, &rp, s.max_file_size, rules).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The files of the sorted `universe` whose path starts with `prefix`.
fn under<'u>(universe: &'u [String], prefix: &str) -> &'u [String] {
    let start = universe.partition_point(|p| p.as_str() < prefix);
    let len = universe[start..].partition_point(|p| p.starts_with(prefix));
    &universe[start..start + len]
}

/// True for a document read as a task's text.
fn is_document(path: &str) -> bool {
    path.rsplit_once('.')
        .is_some_and(|(_, e)| matches!(e, "md" | "markdown" | "txt"))
}

/// At most this many other changes are read for [`precedents`].
const MAX_PRECEDENTS: usize = 2_000;

/// At most this many of the change's documents are read as the task's text.
pub(super) const MAX_TASK_DOCUMENTS: usize = 64;

/// What the task says of itself: `--task-text` and the task file's title, description and
/// criteria.
pub(super) fn task_words_of(s: &CompileSettings) -> String {
    let mut text = s.task_text.clone();
    if let Some((_, task)) = &s.task {
        for line in [&task.title, &task.description]
            .into_iter()
            .chain(&task.success_criteria)
        {
            text.push('\n');
            text.push_str(line);
        }
    }
    text
}
