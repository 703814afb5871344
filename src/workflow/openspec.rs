//! OpenSpec (`openspec/`): a change is `openspec/changes/<id>/` (`proposal.md`, `design.md`,
//! `tasks.md`, delta specs `specs/<capability>/spec.md`), archived as
//! `openspec/changes/archive/<YYYY-MM-DD>-<id>/`; the project's truth is `openspec/project.md`
//! and the current specs `openspec/specs/<capability>/spec.md`.

use std::path::Path;

use crate::trust::tree::Tree;

use super::{Derived, Located, Selection, SettingsWarning, Workflow, direct, folders, is_dir};
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

    fn detect(&self, root: &Tree) -> Option<String> {
        is_dir(root, CHANGES).then(|| format!("{CHANGES}/"))
    }

    fn locate(&self, root: &Tree, id: &str, _run: Option<&str>) -> Option<Located> {
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
    fn change_ids(&self, root: &Tree, changes_root: &str) -> Vec<String> {
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
    fn derived(&self, root: &Tree, change: &Located) -> Vec<Derived> {
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

    /// The spec stores `openspec/config.yaml` references (`references:`): OpenSpec reads
    /// them from its own store folders, outside the repository, which curate never reads.
    fn settings_warnings(&self, root: &Tree) -> Vec<SettingsWarning> {
        let config = "openspec/config.yaml";
        let Ok(Some(bytes)) = root.read(&root.join(config)) else {
            return Vec::new();
        };
        let text = String::from_utf8_lossy(&bytes);
        let map = super::simple_yaml::parse(&text);
        let ids: Vec<String> = match super::simple_yaml::get(&map, "references") {
            Some(super::simple_yaml::Value::List(items)) => items
                .iter()
                .filter_map(|i| {
                    let i = i.trim();
                    let id = i.strip_prefix("id:").map_or(i, str::trim);
                    (!id.contains(':') && !id.is_empty())
                        .then(|| id.trim_matches(['"', '\'']).to_owned())
                })
                .collect(),
            Some(super::simple_yaml::Value::Str(s)) if s.trim_start().starts_with('[') => s
                .trim()
                .trim_matches(['[', ']'])
                .split(',')
                .map(|i| i.trim().trim_matches(['"', '\'']).to_owned())
                .filter(|i| !i.is_empty())
                .collect(),
            _ => Vec::new(),
        };
        if ids.is_empty() {
            return Vec::new();
        }
        let line = text
            .lines()
            .position(|l| l.starts_with("references"))
            .map_or(0, |i| i + 1);
        vec![SettingsWarning {
            file: config.to_owned(),
            line,
            message: format!(
                "references the spec store{} {}: OpenSpec reads {} from its own store folders, outside the repository, so no file of {} is listed",
                if ids.len() == 1 { "" } else { "s" },
                ids.join(", "),
                if ids.len() == 1 { "it" } else { "them" },
                if ids.len() == 1 { "it" } else { "them" },
            ),
        }]
    }

    /// The change's files a project schema (`openspec/schemas/<name>/schema.yaml`) does not
    /// generate: `openspec instructions` does not list them, so the default baseline's
    /// globs do not either.
    fn out_of_scope(&self, root: &Tree, change: &Located) -> Vec<(String, String)> {
        let schema = Schema::of(root, &change.path());
        if !schema.custom {
            return Vec::new();
        }
        let outputs = schema.outputs(root, &change.path());
        change_files(root, &change.path())
            .into_iter()
            .filter(|f| !outputs.iter().any(|(_, o)| o == f))
            .map(|f| {
                (
                    f,
                    format!(
                        "no artifact of schema {} generates it (openspec instructions does not list it)",
                        schema.name
                    ),
                )
            })
            .collect()
    }

    /// What `openspec instructions apply --json` lists as the change's context files: each
    /// artifact's outputs in the change's schema (its `.openspec.yaml`, else
    /// `openspec/config.yaml`, else `spec-driven`), for the worker; with a project schema,
    /// for every role (the default baseline knows none of its artifacts).
    fn derived_for(&self, root: &Tree, change: &Located, for_: &Selection<'_>) -> Vec<Derived> {
        let schema = Schema::of(root, &change.path());
        if !schema.custom && for_.role != "worker" {
            return Vec::new();
        }
        schema
            .outputs(root, &change.path())
            .into_iter()
            .map(|(artifact, path)| Derived {
                path,
                priority: Priority::High,
                kind: "plan".to_owned(),
                reason: format!(
                    "artifact {artifact} of schema {} (openspec instructions lists it)",
                    schema.name
                ),
                sections: crate::model::Sections::Whole,
            })
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

/// The artifacts of OpenSpec's built-in schema, `spec-driven` (its `schema.yaml`).
const SPEC_DRIVEN: [(&str, &str); 4] = [
    ("proposal", "proposal.md"),
    ("specs", "specs/**/*.md"),
    ("design", "design.md"),
    ("tasks", "tasks.md"),
];

/// A change's schema as OpenSpec resolves it, with its artifacts (`id`, `generates`).
struct Schema {
    name: String,
    /// A project schema (`openspec/schemas/<name>/schema.yaml`), not the built-in one.
    custom: bool,
    artifacts: Vec<(String, String)>,
}

impl Schema {
    /// `resolveSchemaForChange`: the change's `.openspec.yaml` `schema`, else
    /// `openspec/config.yaml`'s, else `spec-driven`; then the project's schema of that
    /// name, else the built-in one. A schema found in neither (OpenSpec's user-level schemas
    /// are outside the repository, never read) counts as the built-in one.
    fn of(root: &Tree, change: &str) -> Schema {
        let read = |rel: &str| {
            root.read(&root.join(rel))
                .ok()
                .flatten()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
        };
        let named = |text: Option<String>| {
            let map = super::simple_yaml::parse(&text?);
            match super::simple_yaml::get(&map, "schema") {
                Some(super::simple_yaml::Value::Str(s)) if !s.trim().is_empty() => {
                    Some(s.trim().to_owned())
                }
                _ => None,
            }
        };
        let name = named(read(&format!("{change}/.openspec.yaml")))
            .or_else(|| named(read("openspec/config.yaml")))
            .unwrap_or_else(|| "spec-driven".to_owned());
        let project = crate::model::paths::is_name(&name)
            .then(|| read(&format!("openspec/schemas/{name}/schema.yaml")))
            .flatten()
            .map(|text| artifacts_of(&text));
        match project {
            Some(artifacts) => Schema {
                name,
                custom: true,
                artifacts,
            },
            None => Schema {
                name,
                custom: false,
                artifacts: SPEC_DRIVEN
                    .iter()
                    .map(|(id, g)| ((*id).to_owned(), (*g).to_owned()))
                    .collect(),
            },
        }
    }

    /// Each artifact's files in the change (`resolveArtifactOutputs`: a path, or a glob's
    /// matches in byte order), in the schema's order, each once, as `(artifact, path)`.
    fn outputs(&self, root: &Tree, change: &str) -> Vec<(String, String)> {
        let files = change_files(root, change);
        let mut out: Vec<(String, String)> = Vec::new();
        for (id, generates) in &self.artifacts {
            let Ok(generates) = crate::model::paths::normalize(generates) else {
                continue;
            };
            let Ok(m) = crate::util::glob::matcher(&generates) else {
                continue;
            };
            for f in &files {
                let rel = &f[change.len() + 1..];
                if m.is_match(rel) && !out.iter().any(|(_, p)| p == f) {
                    out.push((id.clone(), f.clone()));
                }
            }
        }
        out
    }
}

/// The `artifacts:` of a schema's YAML: each item's `id` and `generates`.
fn artifacts_of(text: &str) -> Vec<(String, String)> {
    let unquote = |v: &str| v.trim().trim_matches(['"', '\'']).to_owned();
    let mut out = Vec::new();
    let (mut inside, mut item_indent) = (false, None::<usize>);
    let mut current: Option<(Option<String>, Option<String>)> = None;
    let mut flush = |c: &mut Option<(Option<String>, Option<String>)>| {
        if let Some((Some(id), Some(generates))) = c.take() {
            out.push((id, generates));
        }
    };
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if indent == 0 {
            flush(&mut current);
            inside = trimmed == "artifacts:";
            item_indent = None;
            continue;
        }
        if !inside {
            continue;
        }
        let mut body = trimmed;
        let mut key_indent = indent;
        if let Some(rest) = trimmed.strip_prefix("- ") {
            let at = *item_indent.get_or_insert(indent);
            if indent == at {
                flush(&mut current);
                current = Some((None, None));
                body = rest;
                key_indent = indent + 2;
            }
        }
        let Some(at) = item_indent else { continue };
        if key_indent != at + 2 {
            continue;
        }
        if let (Some(c), Some((key, value))) = (current.as_mut(), body.split_once(':')) {
            match key.trim() {
                "id" => c.0 = Some(unquote(value)),
                "generates" => c.1 = Some(unquote(value)),
                _ => {}
            }
        }
    }
    flush(&mut current);
    out
}

/// How many of a change's files are looked at at most.
const MAX_CHANGE_FILES: usize = 4096;

/// The regular files of change folder `change` (repository-relative), curate's own output
/// and dot files left out (OpenSpec's globs skip them too), in byte order; links are not
/// followed.
fn change_files(root: &Path, change: &str) -> Vec<String> {
    use crate::util::read::{Entries, names_in};
    let mut out = Vec::new();
    let mut stack = vec![(change.to_owned(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Some(abs) = super::folder_inside(root, &dir) else {
            continue;
        };
        let files = names_in(&abs, Entries::Files);
        for f in &files {
            let own = f.ends_with(".lock.json")
                || f.strip_suffix(".overrides.jsonl")
                    .or_else(|| f.strip_suffix(".jsonl"))
                    .is_some_and(|stem| files.iter().any(|g| *g == format!("{stem}.lock.json")));
            if !f.starts_with('.') && !own && out.len() < MAX_CHANGE_FILES {
                out.push(format!("{dir}/{f}"));
            }
        }
        if depth < MAX_CAPABILITY_DEPTH {
            for sub in names_in(&abs, Entries::Folders) {
                if !sub.starts_with('.') {
                    stack.push((format!("{dir}/{sub}"), depth + 1));
                }
            }
        }
    }
    out.sort();
    out
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
