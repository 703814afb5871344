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
    let found = task_words::select(&task_words::Inputs {
        root: &ws.root,
        universe: universe.get()?,
        texts: &texts,
        skip: &skip,
        budget: s.task_tokens,
        max_file_size: s.max_file_size,
        rules,
        counter,
    });
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
            origin: Origin::TaskWords,
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
            source: "--task-text".to_owned(),
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
    let documents: Vec<&String> = universe
        .iter()
        .filter(|p| p.starts_with(&folder) && !scope.is_own_file(p))
        .filter(|p| {
            p.rsplit_once('.')
                .is_some_and(|(_, e)| matches!(e, "md" | "markdown" | "txt"))
        })
        .take(MAX_TASK_DOCUMENTS)
        .collect();
    for p in documents {
        let Ok(rp) = RepoPath::new(p) else {
            continue;
        };
        if let Ok(bytes) = admit::admit(&ws.root, &rp, s.max_file_size, rules) {
            texts.push(task_words::Text {
                source: p.clone(),
                dir: p.rsplit_once('/').map(|(d, _)| d.to_owned()),
                text: String::from_utf8_lossy(&bytes).into_owned(),
            });
        }
    }
    texts
}

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
