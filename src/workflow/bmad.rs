//! BMAD (`.bmad-core/core-config.yaml`, BMAD-METHOD v4): a change is a story file of the
//! config's `devStoryLocation` (`docs/stories/1.1.story.md`, `1.2.login-form.story.md`),
//! named by its file name (with or without `.md`) or by its number (`1.1`). The config says
//! where everything else is: `devLoadAlwaysFiles` (what BMAD's dev agent loads before any
//! story: the worker's truth files), the PRD (`prd.prdFile`, or its shards in
//! `prd.prdShardedLocation`, the story's epic by `prd.epicFilePattern`) and the
//! architecture (`architecture.architectureFile`, or `index.md` of its shards). The story's
//! Dev Notes name their sources (`[Source: architecture/tech-stack.md#Stack]`): each one
//! that is there is listed.

use std::path::Path;

use crate::trust::tree::Tree;

use super::simple_yaml::{self, Map, Value};
use super::{Derived, Located, Selection, SettingsWarning, Workflow, is_dir};
use crate::model::{Lang, Priority, Sections};

pub struct Bmad;

const CONFIG: &str = ".bmad-core/core-config.yaml";
const STORIES: &str = "docs/stories";

/// How many story files are looked at at most.
const MAX_STORIES: usize = 4096;

impl Workflow for Bmad {
    fn name(&self) -> &'static str {
        "bmad"
    }

    fn detect(&self, root: &Tree) -> Option<String> {
        (is_dir(root, ".bmad-core") && root.join(CONFIG).is_file()).then(|| CONFIG.to_owned())
    }

    fn locate(&self, root: &Tree, id: &str, _run: Option<&str>) -> Option<Located> {
        let stories = Config::read(root).stories;
        match matching(root, &stories, id).as_slice() {
            [one] => Some(Located {
                changes_root: stories,
                folder: one.clone(),
            }),
            _ => None,
        }
    }

    fn ambiguous(&self, root: &Tree, id: &str, _run: Option<&str>) -> Option<String> {
        let stories = Config::read(root).stories;
        let found = matching(root, &stories, id);
        (found.len() > 1).then(|| {
            let files: Vec<String> = found.iter().map(|f| format!("{f}.md")).collect();
            format!(
                "several stories of {stories}/ are story {id}: {}; name one by its file",
                files.join(", ")
            )
        })
    }

    fn changes_root(&self) -> Option<&'static str> {
        Some(STORIES)
    }

    fn roots_in(&self, root: &Tree) -> Vec<String> {
        vec![Config::read(root).stories]
    }

    fn looked(&self, id: &str) -> Vec<String> {
        vec![format!("{STORIES}/{id}.md"), format!("{STORIES}/{id}.*.md")]
    }

    /// The stories there are, by their file names without `.md`.
    fn change_ids(&self, root: &Tree, changes_root: &str) -> Vec<String> {
        stories(root, changes_root)
    }

    /// A story's path (`docs/stories/1.1.story.md`) or file name is the story.
    fn normalize_id<'a>(&self, id: &'a str) -> &'a str {
        let id = id.rsplit('/').next().unwrap_or(id);
        id.strip_suffix(".md").unwrap_or(id)
    }

    fn manifest(&self) -> &'static str {
        "{changes}/curate/{change}/{role}-context.jsonl"
    }

    /// BMAD's agents: the scrum master drafts stories, the developer implements one, QA
    /// reviews it.
    fn roles(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("sm", "planner"),
            ("pm", "planner"),
            ("architect", "planner"),
            ("dev", "worker"),
            ("qa", "reviewer"),
            ("po", "reviewer"),
        ]
    }

    fn normalize_role<'a>(&self, role: &'a str) -> &'a str {
        let role = role.strip_prefix("bmad-").unwrap_or(role);
        role.strip_prefix("BMad:agents:").unwrap_or(role)
    }

    fn contracts(&self) -> &'static str {
        include_str!("../../contracts/workflows/bmad.json")
    }

    fn derived_for(&self, root: &Tree, change: &Located, for_: &Selection<'_>) -> Vec<Derived> {
        let config = Config::read(root);
        let story = format!("{}/{}.md", change.changes_root, change.folder);
        let mut out = Vec::new();
        let mut add = |path: &str, priority: Priority, kind: &str, reason: String| {
            let Ok(path) = crate::model::paths::normalize(path) else {
                return;
            };
            if root.join(&path).is_file() && !out.iter().any(|d: &Derived| d.path == path) {
                out.push(Derived {
                    path,
                    priority,
                    kind: kind.to_owned(),
                    reason,
                    sections: Sections::Whole,
                });
            }
        };
        let always = |add: &mut dyn FnMut(&str, Priority, &str, String)| {
            for f in &config.dev_load_always {
                add(
                    f,
                    Priority::High,
                    "truth",
                    format!("devLoadAlwaysFiles of {CONFIG}: the developer loads it always"),
                );
            }
        };
        match for_.role {
            "worker" | "reviewer" => {
                always(&mut add);
                for source in dev_note_sources(root, &story, &config) {
                    add(
                        &source,
                        Priority::Medium,
                        "reference",
                        "named as a source in the story's Dev Notes".to_owned(),
                    );
                }
            }
            _ => {
                for (path, why) in config.prd_for(root, &change.folder) {
                    add(&path, Priority::High, "plan", why);
                }
                for (path, why) in config.architecture() {
                    add(&path, Priority::Medium, "truth", why);
                }
                always(&mut add);
            }
        }
        out
    }

    fn settings_warnings(&self, root: &Tree) -> Vec<SettingsWarning> {
        let config = Config::read(root);
        config
            .dev_load_always
            .iter()
            .filter(|f| crate::model::paths::normalize(f).map_or(true, |p| !root.join(p).is_file()))
            .map(|f| SettingsWarning {
                file: CONFIG.to_owned(),
                line: config.line_of(f),
                message: format!(
                    "devLoadAlwaysFiles names {f}, which is not a file of the repository"
                ),
            })
            .collect()
    }

    fn describes(&self, lang: Lang) -> &'static str {
        match lang {
            Lang::En => {
                "your story (its tasks, acceptance criteria and Dev Notes), the files BMAD's developer always loads, and the PRD and architecture the project's core-config.yaml points at"
            }
            Lang::Zh => {
                "你的 story（任务、验收标准与 Dev Notes）、BMAD 开发者总要加载的文件，以及 core-config.yaml 指向的 PRD 与架构文档"
            }
        }
    }
}

/// What `.bmad-core/core-config.yaml` says, with BMAD's defaults where it says nothing.
struct Config {
    text: String,
    stories: String,
    dev_load_always: Vec<String>,
    prd_file: String,
    prd_sharded: Option<(String, String)>,
    arch_file: String,
    arch_sharded: Option<String>,
}

impl Config {
    fn read(root: &Tree) -> Config {
        let text = root
            .read(&root.join(CONFIG))
            .ok()
            .flatten()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        let map = simple_yaml::parse(&text);
        let str_of = |m: &Map, k: &str| match simple_yaml::get(m, k) {
            Some(Value::Str(s)) if !s.is_empty() && s != "null" => Some(s.clone()),
            _ => None,
        };
        let sub = |k: &str| match simple_yaml::get(&map, k) {
            Some(Value::Map(m)) => m.clone(),
            _ => Map::new(),
        };
        let (prd, arch) = (sub("prd"), sub("architecture"));
        let yes = |m: &Map, k: &str| str_of(m, k).is_some_and(|v| v == "true");
        let stories = str_of(&map, "devStoryLocation")
            .and_then(|s| crate::model::paths::normalize(s.trim_end_matches('/')).ok())
            .unwrap_or_else(|| STORIES.to_owned());
        Config {
            stories,
            dev_load_always: match simple_yaml::get(&map, "devLoadAlwaysFiles") {
                Some(Value::List(items)) => items.clone(),
                _ => Vec::new(),
            },
            prd_file: str_of(&prd, "prdFile").unwrap_or_else(|| "docs/prd.md".to_owned()),
            prd_sharded: yes(&prd, "prdSharded").then(|| {
                (
                    str_of(&prd, "prdShardedLocation").unwrap_or_else(|| "docs/prd".to_owned()),
                    str_of(&prd, "epicFilePattern").unwrap_or_else(|| "epic-{n}*.md".to_owned()),
                )
            }),
            arch_file: str_of(&arch, "architectureFile")
                .unwrap_or_else(|| "docs/architecture.md".to_owned()),
            arch_sharded: yes(&arch, "architectureSharded").then(|| {
                str_of(&arch, "architectureShardedLocation")
                    .unwrap_or_else(|| "docs/architecture".to_owned())
            }),
            text,
        }
    }

    /// The line of the config that names `value` (0: none).
    fn line_of(&self, value: &str) -> usize {
        self.text
            .lines()
            .position(|l| l.contains(value))
            .map_or(0, |i| i + 1)
    }

    /// The PRD for story `story` (a file name without `.md`): its epic's shard (the
    /// `epicFilePattern` with the story's epic number) and the shards' `index.md`, or the
    /// whole PRD.
    fn prd_for(&self, root: &Tree, story: &str) -> Vec<(String, String)> {
        let Some((dir, pattern)) = &self.prd_sharded else {
            return vec![(
                self.prd_file.clone(),
                format!("the PRD (prd.prdFile of {CONFIG})"),
            )];
        };
        let mut out = Vec::new();
        if let Some(epic) = story
            .split(['.', '-'])
            .next()
            .filter(|n| n.parse::<u32>().is_ok())
            && let Ok(m) = crate::util::glob::matcher(&pattern.replace("{n}", epic))
        {
            for name in
                crate::util::read::names_in(&root.join(dir), crate::util::read::Entries::Files)
            {
                if m.is_match(&name) {
                    out.push((
                        format!("{dir}/{name}"),
                        format!("the PRD's epic {epic} ({pattern} in prd.prdShardedLocation)"),
                    ));
                }
            }
        }
        out.push((
            format!("{dir}/index.md"),
            "the sharded PRD's index".to_owned(),
        ));
        out
    }

    /// The architecture: the index of its shards, or the whole document.
    fn architecture(&self) -> Vec<(String, String)> {
        match &self.arch_sharded {
            Some(dir) => vec![(
                format!("{dir}/index.md"),
                "the sharded architecture's index".to_owned(),
            )],
            None => vec![(
                self.arch_file.clone(),
                format!("the architecture (architecture.architectureFile of {CONFIG})"),
            )],
        }
    }
}

/// The story files (`*.md`) of `dir`, by their names without `.md`, in byte order.
fn stories(root: &Path, dir: &str) -> Vec<String> {
    let Some(folder) = super::folder_inside(root, dir) else {
        return Vec::new();
    };
    crate::util::read::names_in(&folder, crate::util::read::Entries::Files)
        .into_iter()
        .filter_map(|n| n.strip_suffix(".md").map(str::to_owned))
        .filter(|n| crate::model::paths::is_name(n))
        .take(MAX_STORIES)
        .collect()
}

/// The stories of `dir` that `id` names: the one whose file is `<id>.md`, else those whose
/// name is the story number `id` followed by `.` or `-` (`1.1` names `1.1.login.story`).
fn matching(root: &Path, dir: &str, id: &str) -> Vec<String> {
    let all = stories(root, dir);
    if all.iter().any(|s| s == id) {
        return vec![id.to_owned()];
    }
    let numbered = id.split('.').count() >= 2
        && id
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if !numbered {
        return Vec::new();
    }
    all.into_iter()
        .filter(|s| {
            s.strip_prefix(id)
                .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('-'))
        })
        .collect()
}

/// The files the story's `## Dev Notes` name as `[Source: <path>#…]`, where they are:
/// as written, under `docs/`, or beside the sharded architecture's or PRD's folder.
fn dev_note_sources(root: &Tree, story: &str, config: &Config) -> Vec<String> {
    let Ok(Some(bytes)) = root.read(&root.join(story)) else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    let Some(start) = text.find("## Dev Notes") else {
        return Vec::new();
    };
    let notes = &text[start + 3..];
    let notes = notes.find("\n## ").map_or(notes, |end| &notes[..end]);
    let mut bases = vec![String::new(), "docs/".to_owned()];
    for dir in [
        config.arch_sharded.as_deref(),
        config.prd_sharded.as_ref().map(|(d, _)| d.as_str()),
    ]
    .into_iter()
    .flatten()
    {
        if let Some((parent, _)) = dir.rsplit_once('/') {
            bases.push(format!("{parent}/"));
        }
    }
    let mut out: Vec<String> = Vec::new();
    for (i, _) in notes.match_indices("[Source:") {
        let rest = &notes[i + "[Source:".len()..];
        let Some(end) = rest.find(']') else { continue };
        let named = rest[..end].trim();
        let named = named
            .split('#')
            .next()
            .unwrap_or(named)
            .trim()
            .trim_matches('`');
        let found = bases.iter().find_map(|b| {
            let path = crate::model::paths::normalize(&format!("{b}{named}")).ok()?;
            root.join(&path).is_file().then_some(path)
        });
        if let Some(path) = found
            && !out.contains(&path)
        {
            out.push(path);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_story_is_named_by_its_file_or_its_number() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("docs/stories")).unwrap();
        for f in [
            "1.1.story.md",
            "1.2.login-form.story.md",
            "1.2-old.md",
            "2.1.story.md",
            "README",
        ] {
            std::fs::write(root.join("docs/stories").join(f), "# s\n").unwrap();
        }
        let m = |id: &str| matching(&root, "docs/stories", id);
        assert_eq!(m("1.1"), ["1.1.story"]);
        assert_eq!(m("1.1.story"), ["1.1.story"]);
        assert_eq!(m("1.2"), ["1.2-old", "1.2.login-form.story"]);
        assert_eq!(m("1"), Vec::<String>::new());
        assert_eq!(m("3.1"), Vec::<String>::new());
        assert_eq!(Bmad.normalize_id("docs/stories/1.1.story.md"), "1.1.story");
    }
}
