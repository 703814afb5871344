//! OpenSpec (`openspec/`): a change is `openspec/changes/<id>/` (`proposal.md`, `design.md`,
//! `tasks.md`, delta specs `specs/<capability>/spec.md`), archived as
//! `openspec/changes/archive/<YYYY-MM-DD>-<id>/`; the project's truth is `openspec/project.md`
//! and the current specs `openspec/specs/<capability>/spec.md`.

use std::path::Path;

use super::{Derived, Located, Workflow, direct, folders, is_dir};
use crate::model::{Lang, Priority};

pub struct OpenSpec;

const CHANGES: &str = "openspec/changes";

impl Workflow for OpenSpec {
    fn name(&self) -> &'static str {
        "openspec"
    }

    /// `openspec list` shows and sorts changes by their newest file (`getLastModified`).
    fn dates_changes_by_files(&self) -> bool {
        true
    }

    fn detect(&self, root: &Path) -> Option<String> {
        is_dir(root, CHANGES).then(|| format!("{CHANGES}/"))
    }

    fn locate(&self, root: &Path, id: &str, _run: Option<&str>) -> Option<Located> {
        let archive = format!("{CHANGES}/archive");
        direct(root, CHANGES, id)
            // An archived change by its whole dated name; an undated folder in the archive
            // is none of OpenSpec's.
            .or_else(|| archived_id(id).and_then(|_| direct(root, &archive, id)))
            .or_else(|| {
                // `2026-10-02-add-login` for `add-login`; the newest when archived twice.
                folders(root, &archive)
                    .into_iter()
                    .rev()
                    .find(|name| archived_id(name) == Some(id))
                    .map(|folder| Located {
                        changes_root: archive.clone(),
                        folder,
                    })
            })
    }

    fn looked(&self, id: &str) -> Vec<String> {
        vec![
            format!("{CHANGES}/{id}"),
            format!("{CHANGES}/archive/<yyyy-mm-dd>-{id}"),
        ]
    }

    /// The live changes, then the archived ones by their own names (`--change <name>`
    /// finds the newest archive of it), for a "did you mean".
    fn change_ids(&self, root: &Path, changes_root: &str) -> Vec<String> {
        let mut ids: Vec<String> = folders(root, changes_root)
            .into_iter()
            .filter(|f| f != "archive")
            .collect();
        for folder in folders(root, &format!("{CHANGES}/archive")) {
            if let Some(id) = archived_id(&folder)
                && !ids.iter().any(|i| i == id)
            {
                ids.push(id.to_owned());
            }
        }
        ids
    }

    fn reserved(&self) -> Option<(&'static str, &'static str)> {
        Some((
            "archive",
            "archive/<yyyy-mm-dd>-<name>, <yyyy-mm-dd>-<name> or the change's own name",
        ))
    }

    fn live_name<'a>(&self, archived: &'a str) -> &'a str {
        archived_id(archived).unwrap_or(archived)
    }

    /// `openspec/changes/<id>` and `archive/<yyyy-mm-dd>-<id>` (as `openspec list` and the
    /// archive folder show them) are the change.
    fn normalize_id<'a>(&self, id: &'a str) -> &'a str {
        let id = id.strip_prefix("openspec/changes/").unwrap_or(id);
        let id = id.trim_end_matches('/');
        match id.strip_prefix("archive/") {
            Some(folder) if !folder.contains('/') => folder,
            _ => id,
        }
    }

    fn changes_root(&self) -> Option<&'static str> {
        Some(CHANGES)
    }

    fn more_roots(&self) -> &'static [&'static str] {
        &["openspec/changes/archive"]
    }

    fn contracts(&self) -> &'static str {
        include_str!("../../contracts/workflows/openspec.json")
    }

    /// The current spec of every capability the change's delta specs touch.
    fn derived(&self, root: &Path, change: &Located) -> Vec<Derived> {
        capabilities(root, &format!("{}/specs", change.path()))
            .into_iter()
            .map(|capability| Derived {
                path: format!("openspec/specs/{capability}/spec.md"),
                priority: Priority::Medium,
                kind: "truth".to_owned(),
                reason: format!(
                    "the current spec of `{capability}`, which this change's delta spec changes"
                ),
                sections: crate::model::Sections::Whole,
            })
            .filter(|d| root.join(&d.path).is_file())
            .collect()
    }

    fn describes(&self, lang: Lang) -> &'static str {
        match lang {
            Lang::En => {
                "the project's conventions, the change's proposal, design, tasks and delta specs, and the current specs they change"
            }
            Lang::Zh => {
                "项目约定，变更的 proposal、design、tasks 与增量规范，以及它们所修改的现行规范"
            }
        }
    }
}

/// How deep below a change's `specs/` a capability may sit (`<area>/<capability>` is two).
const MAX_CAPABILITY_DEPTH: usize = 8;

/// The capabilities a change's delta specs change, as OpenSpec finds them: every folder below
/// `specs` that holds a `spec.md` (a regular file), named by its path there, so a nested
/// `specs/platform/session-layout/spec.md` is `platform/session-layout`; dot folders and links
/// are skipped. Sorted in byte order.
fn capabilities(root: &Path, specs: &str) -> Vec<String> {
    use crate::util::read::{Entries, names_in};
    let mut out = Vec::new();
    let mut stack = vec![(String::new(), 0)];
    while let Some((id, depth)) = stack.pop() {
        // A folder reached through a link out of the repository is not looked in.
        let Some(dir) = super::folder_inside(root, &format!("{specs}/{id}")) else {
            continue;
        };
        if !id.is_empty()
            && names_in(&dir, Entries::Files)
                .iter()
                .any(|f| f == "spec.md")
        {
            out.push(id.clone());
        }
        if depth < MAX_CAPABILITY_DEPTH {
            for name in folders(root, &format!("{specs}/{id}")) {
                let sub = if id.is_empty() {
                    name
                } else {
                    format!("{id}/{name}")
                };
                stack.push((sub, depth + 1));
            }
        }
    }
    out.sort();
    out
}

/// The change id of an archive folder's name: the name after its `YYYY-MM-DD-` prefix (a
/// month 01–12, a day 01–31).
fn archived_id(name: &str) -> Option<&str> {
    let (date, id) = (name.get(..10)?, name.get(11..)?);
    let b = date.as_bytes();
    let number = |r: std::ops::Range<usize>| {
        b[r.clone()]
            .iter()
            .all(u8::is_ascii_digit)
            .then(|| date[r].parse::<u32>().ok())
            .flatten()
    };
    let (month, day) = (number(5..7), number(8..10));
    (number(0..4).is_some()
        && b[4] == b'-'
        && month.is_some_and(|m| (1..=12).contains(&m))
        && b[7] == b'-'
        && day.is_some_and(|d| (1..=31).contains(&d))
        && name.as_bytes()[10] == b'-'
        && !id.is_empty())
    .then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_archive_name_gives_its_id() {
        assert_eq!(archived_id("2026-10-02-add-login"), Some("add-login"));
        assert_eq!(archived_id("2026-10-02"), None);
        assert_eq!(archived_id("add-login"), None);
        assert_eq!(archived_id("2026-1x-02-add"), None);
        // Not a date: never the newest of anything.
        assert_eq!(archived_id("2026-99-99-add-login"), None);
        assert_eq!(archived_id("2026-00-10-add-login"), None);
        assert_eq!(archived_id("2026-12-31-add-login"), Some("add-login"));
    }

    #[test]
    fn an_id_written_as_a_path_is_the_change() {
        let o = OpenSpec;
        assert_eq!(o.normalize_id("add-2fa"), "add-2fa");
        assert_eq!(o.normalize_id("openspec/changes/add-2fa/"), "add-2fa");
        assert_eq!(
            o.normalize_id("archive/2026-10-02-add-login"),
            "2026-10-02-add-login"
        );
        // Deeper paths stay as written (and are refused as names).
        assert_eq!(o.normalize_id("archive/a/b"), "archive/a/b");
        assert_eq!(o.reserved().map(|(name, _)| name), Some("archive"));
    }
}
