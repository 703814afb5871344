//! What the authors of similar tasks listed. A workspace keeps, beside each of its other
//! changes, the list of files someone chose for it (Trellis' `implement.jsonl` and
//! `check.jsonl`, curate's own adopted manifests): the tasks whose text is closest to this
//! one's say which files such a task needs. Each file scores the similarity of the tasks
//! that list it, summed; the most similar task counts 1.
//!
//! Deterministic: tasks ranked by [`rank::rank`] (ties by name), files by score, ties by path.

use std::collections::BTreeMap;

use super::rank;

/// Another change of the workspace: its name, its text and the files its lists name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Precedent {
    /// The change's folder, repository-relative (`.trellis/tasks/archive/2026-04/04-20-x`).
    pub folder: String,
    pub text: String,
    /// The files its lists name, in the universe, outside its own folder, each once.
    pub files: Vec<String>,
}

/// A file the similar tasks listed: its score and the tasks that listed it, most similar
/// first.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub path: String,
    pub score: f64,
    pub by: Vec<String>,
}

/// At most this many of the most similar tasks are asked.
const SIMILAR: usize = 8;
/// A task is similar when it scores at least this part of the most similar one.
const MIN_SIMILARITY: f64 = 0.3;

/// The files the tasks most similar to `query` listed, best first.
#[must_use]
pub fn listed(query: &str, precedents: &[Precedent]) -> Vec<Listed> {
    let docs: Vec<(String, rank::Doc)> = precedents
        .iter()
        .map(|p| (p.folder.clone(), rank::Doc::new("", Some(&p.text))))
        .collect();
    let similar = rank::rank(query, &docs);
    let Some(best) = similar.first().map(|r| r.score) else {
        return Vec::new();
    };
    let by_folder: BTreeMap<&str, &Precedent> =
        precedents.iter().map(|p| (p.folder.as_str(), p)).collect();
    let mut files: BTreeMap<&str, Listed> = BTreeMap::new();
    for task in similar
        .iter()
        .take(SIMILAR)
        .filter(|r| r.score >= best * MIN_SIMILARITY)
    {
        let weight = task.score / best;
        let name = task.path.rsplit('/').next().unwrap_or(&task.path);
        for f in &by_folder[task.path.as_str()].files {
            let entry = files.entry(f).or_insert_with(|| Listed {
                path: f.clone(),
                score: 0.0,
                by: Vec::new(),
            });
            entry.score += weight;
            entry.by.push(name.to_owned());
        }
    }
    let mut out: Vec<Listed> = files.into_values().collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.path.cmp(&b.path)));
    out
}

/// A file is the workspace's convention when at least this part of its tasks with a list
/// list it ...
const CONVENTION: f64 = 0.4;
/// ... and at least this many.
const MIN_CONVENTION: usize = 3;

/// The files most of the workspace's tasks list, whatever they are about (Trellis'
/// `workflow.md` and spec index files): a file listed by at least [`CONVENTION`] of the
/// tasks (and [`MIN_CONVENTION`]), most listed first, ties by path; its `score` is the
/// share of the tasks that list it, `by` how many do.
#[must_use]
pub fn conventional(precedents: &[Precedent]) -> Vec<(String, usize)> {
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for p in precedents {
        for f in &p.files {
            *count.entry(f).or_default() += 1;
        }
    }
    let at_least = MIN_CONVENTION.max((precedents.len() as f64 * CONVENTION).ceil() as usize);
    let mut out: Vec<(String, usize)> = count
        .into_iter()
        .filter(|&(_, n)| n >= at_least)
        .map(|(f, n)| (f.to_owned(), n))
        .collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(folder: &str, text: &str, files: &[&str]) -> Precedent {
        Precedent {
            folder: folder.to_owned(),
            text: text.to_owned(),
            files: files.iter().map(|f| (*f).to_owned()).collect(),
        }
    }

    #[test]
    fn the_files_the_closest_tasks_listed_come_first() {
        let tasks = [
            task(
                "t/01-login-lockout",
                "Lock the account after five failed logins",
                &["spec/auth.md", "spec/errors.md"],
            ),
            task(
                "t/02-login-rate",
                "Rate limit failed logins per account",
                &["spec/auth.md", "spec/rate.md"],
            ),
            task(
                "t/03-deploy",
                "Ship the container to the cluster",
                &["spec/deploy.md"],
            ),
        ];
        let got = listed("Unlock an account after failed logins expire", &tasks);
        let order: Vec<&str> = got.iter().map(|l| l.path.as_str()).collect();
        // Listed by both login tasks first; nothing of the deploy task, which shares no word.
        assert_eq!(order[0], "spec/auth.md");
        assert_eq!(got[0].by.len(), 2);
        assert!(!order.contains(&"spec/deploy.md"), "{order:?}");
        assert!(listed("nothing in common here", &tasks).is_empty());
    }

    #[test]
    fn what_most_of_the_workspaces_tasks_list_is_its_convention() {
        let tasks = [
            task(
                "t/01",
                "a",
                &["workflow.md", "spec/index.md", "spec/auth.md"],
            ),
            task("t/02", "b", &["workflow.md", "spec/index.md"]),
            task("t/03", "c", &["workflow.md", "spec/deploy.md"]),
            task("t/04", "d", &["workflow.md", "spec/index.md"]),
            task("t/05", "e", &["spec/rate.md"]),
        ];
        // Four of five list the workflow, three the spec index (at least 40 %, and three).
        assert_eq!(
            conventional(&tasks),
            [
                ("workflow.md".to_owned(), 4),
                ("spec/index.md".to_owned(), 3)
            ]
        );
        // Too few tasks to speak of a convention.
        assert!(conventional(&tasks[..2]).is_empty());
    }
}
