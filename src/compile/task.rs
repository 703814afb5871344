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
/// A `curate watch` of the repository answers in the place of the walk and the ranking.
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
    let asked = Asked {
        scope: universe.scope,
        texts: own_texts(s),
        skip: candidates.iter().map(|c| c.path.clone()).collect(),
        budget: s.task_tokens,
        max_file_size: s.max_file_size,
    };
    let dir = super::cache_dir(ws);
    let asking = crate::stages::related::ask::Asking::Task {
        texts: asked.texts.clone(),
        skip: asked.skip.clone(),
        budget: asked.budget,
    };
    let watched = super::ask_watcher(
        ws,
        asked.scope,
        asked.max_file_size,
        asking,
        "the task's words",
        ledger,
    );
    let found = match watched {
        // No text: nothing to select, nothing to say.
        Some(answer) if answer.texts == 0 => return Ok(candidates),
        Some(answer) => answer.task,
        None => {
            let walked = universe.get()?;
            let texts = texts_of(&asked, walked)?;
            if texts.is_empty() {
                return Ok(candidates);
            }
            let terms = crate::stages::related::Terms::open(
                dir.clone(),
                &ws.root,
                &task_words::rank::words_of(),
            );
            let prepared = task_words::Prepared::new(walked);
            let kept = Kept {
                terms: &terms,
                cache: dir,
                watched: None,
            };
            let found = select(&asked, &texts, walked, &prepared, counter, kept)?;
            // The word index is a cache, as the `--related` index is: a failed save changes
            // nothing else.
            let _ = terms.save(walked);
            found
        }
    };
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
            kind: f.kind.into_owned(),
            sections: f.sections,
            reason: Some(f.reason),
            origin: Origin::TaskWords(f.score),
            merged: Vec::new(),
        });
    }
    Ok(candidates)
}

/// A selection from the task's words, as a compile or `curate watch` asks it.
pub struct Asked<'a> {
    pub scope: &'a Scope<'a>,
    /// The compile's own texts ([`own_texts`]); the change's documents are read here.
    pub texts: Vec<task_words::Text>,
    /// The files selected already.
    pub skip: Vec<String>,
    pub budget: u64,
    pub max_file_size: u64,
}

/// What the selection keeps from one run to the next.
pub struct Kept<'a> {
    /// The word index.
    pub terms: &'a crate::stages::related::Terms,
    /// The cache folder of the `--related` index (`None`: no cache).
    pub cache: Option<std::path::PathBuf>,
    /// In `curate watch`: its `--related` index and what it knows did not change.
    pub watched: Option<task_words::graph::Watched<'a>>,
}

/// Every text that describes the task of `a`: the compile's own and the change's
/// documents in `universe`.
pub fn texts_of(a: &Asked<'_>, universe: &[String]) -> Result<Vec<task_words::Text>> {
    let mut texts = a.texts.clone();
    texts.extend(documents(
        a.scope,
        a.max_file_size,
        universe,
        admit::rules()?,
    ));
    Ok(texts)
}

/// The files `texts` (of `a`, [`texts_of`]) name or talk about, ranked over `universe`
/// (every file a selection may name, sorted), their words from `terms`.
pub fn select(
    a: &Asked<'_>,
    texts: &[task_words::Text],
    universe: &[String],
    prepared: &task_words::Prepared,
    counter: &dyn TokenCounter,
    kept: Kept<'_>,
) -> Result<Vec<task_words::Found>> {
    let rules = admit::rules()?;
    let mut skip: std::collections::BTreeSet<String> = a.skip.iter().cloned().collect();
    skip.extend(texts.iter().map(|t| t.source.clone()));
    let precedents = precedents(a.scope, a.max_file_size, universe, rules);
    Ok(task_words::select(&task_words::Inputs {
        root: a.scope.root,
        universe,
        prepared,
        texts,
        precedents: &precedents,
        skip: &skip,
        budget: a.budget,
        max_file_size: a.max_file_size,
        rules,
        counter,
        terms: kept.terms,
        cache: kept.cache,
        watched: kept.watched,
    }))
}

/// The texts the compile has of its own: `--task-text` and the task file's title,
/// description and criteria.
fn own_texts(s: &CompileSettings) -> Vec<task_words::Text> {
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
    texts
}

/// The change's own documents (read through admission; curate's own files left out).
fn documents(
    scope: &Scope<'_>,
    max_file_size: u64,
    universe: &[String],
    rules: &crate::trust::secrets::ContentRules,
) -> Vec<task_words::Text> {
    let folder = format!("{}/{}/", scope.changes_root, scope.change);
    under(universe, &folder)
        .iter()
        .filter(|p| !scope.is_own_file(p) && is_document(p))
        .take(MAX_TASK_DOCUMENTS)
        .filter_map(|p| {
            Some(task_words::Text {
                source: p.clone(),
                dir: p.rsplit_once('/').map(|(d, _)| d.to_owned()),
                text: read_text(scope.root, max_file_size, rules, p)?,
            })
        })
        .collect()
}

/// The workspace's other changes that keep a list of files (`*.jsonl` in their folder or
/// its `analysis/`: Trellis' `implement.jsonl`, curate's manifests), with their text (their
/// documents, as [`documents`] reads this change's) and the files their lists name (a
/// row's `file` or `path`, in the universe, outside the change's own folder).
fn precedents(
    scope: &Scope<'_>,
    max_file_size: u64,
    universe: &[String],
    rules: &crate::trust::secrets::ContentRules,
) -> Vec<task_words::precedent::Precedent> {
    use rayon::prelude::*;
    let root = format!("{}/", scope.changes_root);
    let own = format!("{root}{}/", scope.change);
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
    let read = |p: &str| read_text(scope.root, max_file_size, rules, p);
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
    root: &std::path::Path,
    max_file_size: u64,
    rules: &crate::trust::secrets::ContentRules,
    path: &str,
) -> Option<String> {
    let rp = RepoPath::new(path).ok()?;
    let bytes = admit::admit(root, &rp, max_file_size, rules).ok()?;
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
