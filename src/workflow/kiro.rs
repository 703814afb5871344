//! Kiro specs (`.kiro/`): a feature is `.kiro/specs/<feature>/` (`requirements.md`,
//! `design.md`, `tasks.md`); the project's steering files are `.kiro/steering/*.md`, each
//! included by its front matter as Kiro includes it: `inclusion: always` (or no front
//! matter: Kiro's default) in every baseline as truth; `inclusion: fileMatch` with
//! `fileMatchPattern` (a glob, or a list of them) when the selection holds a matching file;
//! `inclusion: manual` (and `auto`) only when the task names it, as a Kiro chat does with
//! `#<name>`.

use std::path::Path;

use crate::trust::tree::Tree;

use super::simple_yaml::{self, Value};
use super::{Derived, Located, Selection, SettingsWarning, Workflow, direct, is_dir};
use crate::model::{Lang, Priority, Sections};

pub struct Kiro;

const SPECS: &str = ".kiro/specs";
const STEERING: &str = ".kiro/steering";

/// How many steering files are read at most (Kiro's own are a handful).
const MAX_STEERING: usize = 256;

impl Workflow for Kiro {
    fn name(&self) -> &'static str {
        "kiro"
    }

    fn detect(&self, root: &Tree) -> Option<String> {
        is_dir(root, SPECS).then(|| format!("{SPECS}/"))
    }

    fn locate(&self, root: &Tree, id: &str, _run: Option<&str>) -> Option<Located> {
        direct(root, SPECS, id)
    }

    fn changes_root(&self) -> Option<&'static str> {
        Some(SPECS)
    }

    /// `.kiro/specs/<feature>/` as Kiro's panel and its task links show it.
    fn normalize_id<'a>(&self, id: &'a str) -> &'a str {
        let id = id.trim_end_matches('/');
        id.strip_prefix(".kiro/specs/").unwrap_or(id)
    }

    fn manifest(&self) -> &'static str {
        "{changes}/{change}/curate/{role}-context.jsonl"
    }

    /// A spec's phases: requirements, design and tasks are written by the planner; a task
    /// is executed by the worker.
    fn roles(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("requirements", "planner"),
            ("design", "planner"),
            ("tasks", "planner"),
            ("execute", "worker"),
            ("implement", "worker"),
            ("review", "reviewer"),
        ]
    }

    fn contracts(&self) -> &'static str {
        include_str!("../../contracts/workflows/kiro.json")
    }

    fn derived_for(&self, root: &Tree, change: &Located, for_: &Selection<'_>) -> Vec<Derived> {
        let mut text = for_.task_text.to_owned();
        for doc in ["requirements.md", "design.md", "tasks.md"] {
            let path = root.join(change.path()).join(doc);
            if let Ok(Some(bytes)) = root.read(&path) {
                text.push('\n');
                text.push_str(&String::from_utf8_lossy(&bytes));
            }
        }
        steering(root)
            .into_iter()
            .filter_map(|s| s.included(for_.selected, &text))
            .collect()
    }

    fn settings_warnings(&self, root: &Tree) -> Vec<SettingsWarning> {
        steering(root)
            .into_iter()
            .filter_map(|s| {
                let message = match &s.inclusion {
                    Inclusion::Unknown(v) => format!(
                        "inclusion {v:?} is none of always, fileMatch, manual, auto: included only when the task names it"
                    ),
                    Inclusion::FileMatch(p) if p.is_empty() => {
                        "inclusion: fileMatch without a fileMatchPattern: never included".to_owned()
                    }
                    _ => return None,
                };
                Some(SettingsWarning {
                    file: s.path,
                    line: s.line,
                    message,
                })
            })
            .collect()
    }

    fn describes(&self, lang: Lang) -> &'static str {
        match lang {
            Lang::En => {
                "the project's steering files and the spec's requirements, design and tasks"
            }
            Lang::Zh => "项目的 steering 文件，以及该 spec 的 requirements、design 与 tasks",
        }
    }
}

/// A steering file's `inclusion`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Inclusion {
    Always,
    /// Its `fileMatchPattern` globs.
    FileMatch(Vec<String>),
    /// `manual`, and `auto` (Kiro matches its description to the request; here, the task
    /// names it).
    Manual,
    Unknown(String),
}

/// One steering file.
struct Steering {
    path: String,
    /// Its name without `.md`: `#<stem>` names it.
    stem: String,
    inclusion: Inclusion,
    /// The line of its `inclusion` key (0: none).
    line: usize,
}

impl Steering {
    /// The baseline entry this file gives, if the selection or the task brings it in.
    fn included(self, selected: &[&str], text: &str) -> Option<Derived> {
        let (priority, reason) = match &self.inclusion {
            Inclusion::Always => (
                Priority::High,
                "steering (inclusion: always): in every Kiro interaction".to_owned(),
            ),
            Inclusion::FileMatch(patterns) => {
                let (pattern, file) = first_match(patterns, selected)?;
                (
                    Priority::Medium,
                    format!("steering (fileMatch {pattern:?}): the selection holds {file}"),
                )
            }
            Inclusion::Manual | Inclusion::Unknown(_) => {
                if !names(text, &self.stem) {
                    return None;
                }
                (
                    Priority::Medium,
                    format!("steering (manual): the task names #{}", self.stem),
                )
            }
        };
        Some(Derived {
            path: self.path,
            priority,
            kind: "truth".to_owned(),
            reason,
            sections: Sections::Whole,
        })
    }
}

/// The first of `patterns` that matches one of `selected` (the whole path; a pattern without
/// `/` also the file's name), with that file.
fn first_match<'a>(patterns: &'a [String], selected: &[&'a str]) -> Option<(&'a str, &'a str)> {
    patterns.iter().find_map(|p| {
        let m = crate::util::glob::matcher(p.trim_start_matches("./")).ok()?;
        let found = selected.iter().find(|f| {
            m.is_match(f) || (!p.contains('/') && m.is_match(f.rsplit('/').next().unwrap_or(f)))
        })?;
        Some((p.as_str(), *found))
    })
}

/// Whether `text` names steering file `stem`: `#<stem>` (not followed by more of a name),
/// or its file `<stem>.md` by name.
fn names(text: &str, stem: &str) -> bool {
    let tag = format!("#{stem}");
    let name_char = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_' | '.');
    let tagged = text.match_indices(&tag).any(|(i, _)| {
        let after = text[i + tag.len()..].chars().next();
        after.is_none_or(|c| !name_char(c) || c == '.')
    });
    tagged
        || text.match_indices(&format!("{stem}.md")).any(|(i, _)| {
            text[..i]
                .chars()
                .next_back()
                .is_none_or(|c| !name_char(c) || c == '/')
        })
}

/// The steering files, in name order, with their inclusion.
fn steering(root: &Tree) -> Vec<Steering> {
    use crate::util::read::{Entries, names_in};
    let Some(dir) = super::folder_inside(root, STEERING) else {
        return Vec::new();
    };
    names_in(&dir, Entries::Files)
        .into_iter()
        .filter(|n| {
            Path::new(n).extension().is_some_and(|e| e == "md") && crate::model::paths::is_name(n)
        })
        .take(MAX_STEERING)
        .filter_map(|name| {
            let path = format!("{STEERING}/{name}");
            let bytes = root.read(&root.join(&path)).ok()??;
            let (inclusion, line) = inclusion_of(&String::from_utf8_lossy(&bytes));
            Some(Steering {
                stem: name.trim_end_matches(".md").to_owned(),
                path,
                inclusion,
                line,
            })
        })
        .collect()
}

/// A steering file's inclusion from its front matter (`---` lines at its top), with the
/// line of its `inclusion` key; none is Kiro's default, `always`.
fn inclusion_of(text: &str) -> (Inclusion, usize) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return (Inclusion::Always, 0);
    }
    let front: Vec<&str> = lines.take_while(|l| l.trim_end() != "---").collect();
    let map = simple_yaml::parse(&front.join("\n"));
    let line = front
        .iter()
        .position(|l| l.trim_start().starts_with("inclusion"))
        .map_or(0, |i| i + 2);
    let value = match simple_yaml::get(&map, "inclusion") {
        Some(Value::Str(v)) => v.trim().to_owned(),
        _ => return (Inclusion::Always, line),
    };
    let inclusion = match value.as_str() {
        "always" => Inclusion::Always,
        "manual" | "auto" => Inclusion::Manual,
        "fileMatch" => Inclusion::FileMatch(patterns(simple_yaml::get(&map, "fileMatchPattern"))),
        _ => Inclusion::Unknown(value),
    };
    (inclusion, line)
}

/// `fileMatchPattern` as a list: one glob, a `- ` list, or a flow list `["a", "b"]`.
fn patterns(value: Option<&Value>) -> Vec<String> {
    let unquote = |s: &str| s.trim().trim_matches(['"', '\'']).to_owned();
    match value {
        Some(Value::Str(s)) if s.trim_start().starts_with('[') => s
            .trim()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .split(',')
            .map(unquote)
            .filter(|p| !p.is_empty())
            .collect(),
        Some(Value::Str(s)) if !s.trim().is_empty() => vec![unquote(s)],
        Some(Value::List(items)) => items.iter().map(|s| unquote(s)).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_gives_the_inclusion() {
        assert_eq!(inclusion_of("# Tech\n").0, Inclusion::Always);
        assert_eq!(
            inclusion_of("---\ninclusion: always\n---\n# P\n"),
            (Inclusion::Always, 2)
        );
        assert_eq!(
            inclusion_of("---\ninclusion: fileMatch\nfileMatchPattern: 'apps/**/*.{ts,js}'\n---\n")
                .0,
            Inclusion::FileMatch(vec!["apps/**/*.{ts,js}".to_owned()])
        );
        assert_eq!(
            inclusion_of(
                "---\ninclusion: fileMatch\nfileMatchPattern: [\"*.ts\", \"*.tsx\"]\n---\n"
            )
            .0,
            Inclusion::FileMatch(vec!["*.ts".to_owned(), "*.tsx".to_owned()])
        );
        assert_eq!(
            inclusion_of("---\r\ninclusion: manual\r\n---\r\n").0,
            Inclusion::Manual
        );
        assert_eq!(
            inclusion_of("---\ninclusion: sometimes\n---\n").0,
            Inclusion::Unknown("sometimes".to_owned())
        );
    }

    #[test]
    fn a_task_names_a_steering_file_by_its_tag_or_its_file() {
        assert!(names("use #api-standards here", "api-standards"));
        assert!(names("#api-standards", "api-standards"));
        assert!(names(
            "see .kiro/steering/api-standards.md",
            "api-standards"
        ));
        assert!(!names("#api-standards-v2", "api-standards"));
        assert!(!names("api standards", "api-standards"));
        assert!(!names("old-api-standards.md", "api-standards"));
    }

    #[test]
    fn a_pattern_matches_a_selected_file() {
        let p = vec!["apps/medusa/**/*.{ts,js}".to_owned()];
        assert_eq!(
            first_match(&p, &["README.md", "apps/medusa/src/api/route.ts"]),
            Some((p[0].as_str(), "apps/medusa/src/api/route.ts"))
        );
        assert_eq!(first_match(&p, &["apps/web/x.ts"]), None);
        let bare = vec!["*.tsx".to_owned()];
        assert_eq!(
            first_match(&bare, &["src/ui/Button.tsx"]),
            Some(("*.tsx", "src/ui/Button.tsx"))
        );
    }
}
