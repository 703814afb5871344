//! Guild Stack (`.guild/`, lookatitude/guild): a lane is a specialist and a task id within a
//! run (`.guild/runs/<run-id>/`). Its plan (`.guild/plan/<slug>.md`) has one `## Lane: <owner>`
//! section a lane, told apart by its `- task-id:` bullet, with `- depends-on: [..]`; the
//! receipts of finished lanes are `.guild/runs/<run-id>/handoffs/<owner>-<task-id>.md`.
//!
//! curate builds a lane's context from those artifacts (the specialist's agent file, the
//! spec, the PRD, the lane's part of the plan, the receipts of the lanes it depends on, its
//! task assignment and task run where present, the wiki's context and standards pages, the
//! in-repository paths the lane names) and writes,
//! beside its manifest and lock in `.guild/context/<run-id>/`, the lane's context bundle
//! `<specialist>-<task-id>.md` in Guild's `guild.context_bundle.v1` form.

use std::path::Path;

use crate::trust::tree::Tree;

use super::{Derived, Located, Workflow, folders, is_dir};
use crate::model::{Lang, Priority, Sections};

pub struct Guild;

/// The runs (`run`, else every one in `.guild/runs/`) whose plan has the lane `id`. Unnamed,
/// a run that names its plan (its `run-state.json`'s `plan_slug`, or the plan's `run_id`)
/// is taken over runs given the only plan for want of a name (`guild init` and ideation
/// runs, a folder of research), which would otherwise all hold every lane.
fn holding(root: &Tree, id: &str, run: Option<&str>) -> Vec<String> {
    let runs: Vec<String> = match run {
        Some(r) => vec![r.to_owned()],
        None => folders(root, RUNS),
    };
    let held: Vec<String> = runs
        .into_iter()
        .filter(|r| lane(root, r, id).is_some())
        .collect();
    if run.is_some() || held.len() < 2 {
        return held;
    }
    let named: Vec<String> = held
        .iter()
        .filter(|r| names_its_plan(root, r))
        .cloned()
        .collect();
    if named.is_empty() { held } else { named }
}

/// True when run `run` names its plan: its `run-state.json` has a `plan_slug`, or its plan's
/// front matter says `run_id: <run>`.
fn names_its_plan(root: &Tree, run: &str) -> bool {
    plan_slug(root, run).is_some_and(|(_, named)| named)
}

const RUNS: &str = ".guild/runs";
const CONTEXT: &str = ".guild/context";

impl Workflow for Guild {
    fn name(&self) -> &'static str {
        "guild"
    }

    fn detect(&self, root: &Tree) -> Option<String> {
        is_dir(root, ".guild").then(|| ".guild/".to_owned())
    }

    /// The run that holds lane `id` (its `run-state.json` lists it, or its plan has it), or
    /// `run` when named; the lane's results go to `.guild/context/<run-id>/`.
    fn locate(&self, root: &Tree, id: &str, run: Option<&str>) -> Option<Located> {
        match holding(root, id, run).as_slice() {
            [one] => Some(Located {
                changes_root: format!("{CONTEXT}/{one}"),
                folder: id.to_owned(),
            }),
            _ => None,
        }
    }

    fn ambiguous(&self, root: &Tree, id: &str, run: Option<&str>) -> Option<String> {
        // A run named that is not there: that, not the lane, is what is wrong.
        if let Some(r) = run
            && !is_dir(root, &format!("{RUNS}/{r}"))
        {
            let runs = folders(root, RUNS);
            return Some(format!(
                "--run {r:?}: there is no run {RUNS}/{r} ({})",
                if runs.is_empty() {
                    format!("{RUNS}/ holds no run")
                } else {
                    format!("the runs are: {}", runs.join(", "))
                }
            ));
        }
        let runs = holding(root, id, run);
        (runs.len() > 1).then(|| {
            format!(
                "the lane {id:?} is in {} runs ({}): name one with --run",
                runs.len(),
                runs.join(", ")
            )
        })
    }

    fn changes_root(&self) -> Option<&'static str> {
        Some(CONTEXT)
    }

    fn change_ids(&self, root: &Tree, _changes_root: &str) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        for run in folders(root, RUNS) {
            let Some((_, _, text)) = plan_of(root, &run) else {
                continue;
            };
            let lines: Vec<&str> = text.lines().collect();
            for (from, to) in lane_sections(&lines) {
                if let Some(id) = bullet(&lines[from..to], "task-id")
                    && crate::model::paths::is_name(id)
                    && !ids.iter().any(|x| x == id)
                {
                    ids.push(id.to_owned());
                }
            }
        }
        ids.sort();
        ids
    }

    /// A run whose plan cannot be found: its `run-state.json` is not JSON, or names a plan
    /// that is not there. Its lanes are then in no plan, and the change is not found.
    fn settings_warnings(&self, root: &Tree) -> Vec<super::SettingsWarning> {
        let mut out = Vec::new();
        for run in folders(root, RUNS) {
            let file = format!("{RUNS}/{run}/run-state.json");
            let Ok(Some(bytes)) = root.read(&root.join(&file)) else {
                continue;
            };
            let text = String::from_utf8_lossy(&bytes);
            match serde_json::from_str::<serde_json::Value>(&text) {
                Err(e) => out.push(super::SettingsWarning {
                    line: e.line(),
                    message: format!(
                        "invalid JSON ({}): its plan_slug is not read, and the run's plan is the only one in .guild/plan/ if there is just one",
                        crate::util::jsonpos::json_message(&e)
                    ),
                    file,
                }),
                Ok(v) => {
                    let Some(slug) = v.get("plan_slug").and_then(|s| s.as_str()) else {
                        continue;
                    };
                    let plan = format!(".guild/plan/{slug}.md");
                    let there = crate::model::paths::is_name(slug)
                        && matches!(
                            root.read(&root.join(&plan)),
                            Ok(Some(_))
                        );
                    if !there {
                        out.push(super::SettingsWarning {
                            line: crate::util::jsonpos::locate(&text, "/plan_slug")
                                .map_or(0, |p| p.line),
                            message: format!(
                                "plan_slug {slug:?} names {}, which is not there: the run's lanes are in no plan",
                                crate::model::quoted(&plan)
                            ),
                            file,
                        });
                    }
                }
            }
        }
        out
    }

    fn looked(&self, id: &str) -> Vec<String> {
        vec![format!(
            "the lanes (`- task-id: {id}`) of the plan of each run in {RUNS}/"
        )]
    }

    fn more_roots(&self) -> &'static [&'static str] {
        &[".guild/context/*"]
    }

    fn manifest(&self) -> &'static str {
        "{changes}/{role}-{change}.jsonl"
    }

    fn contracts(&self) -> &'static str {
        include_str!("../../contracts/workflows/guild.json")
    }

    /// Every specialist of `.guild/agents/` is a lane's role: the worker's contract.
    fn dynamic_roles(&self, root: &Tree) -> Vec<(String, String)> {
        folders_files(root, ".guild/agents")
            .iter()
            .filter_map(|p| p.strip_prefix(".guild/agents/")?.strip_suffix(".md"))
            .filter(|n| crate::model::paths::is_name(n))
            .map(|n| (n.to_owned(), "worker".to_owned()))
            .collect()
    }

    fn derived(&self, root: &Tree, change: &Located) -> Vec<Derived> {
        let Some(run) = change.changes_root.strip_prefix(&format!("{CONTEXT}/")) else {
            return Vec::new();
        };
        let Some(l) = lane(root, run, &change.folder) else {
            return Vec::new();
        };
        let d = |path: String, priority, kind: &str, reason: String, sections| Derived {
            path,
            priority,
            kind: kind.to_owned(),
            reason,
            sections,
        };
        let mut out = vec![
            d(
                format!(".guild/agents/{}.md", l.owner),
                Priority::High,
                "contract",
                format!(
                    "the {} specialist: its scope, boundaries and way of working",
                    l.owner
                ),
                Sections::Whole,
            ),
            d(
                format!(".guild/spec/{}.md", l.slug),
                Priority::High,
                "plan",
                "the run's spec".to_owned(),
                Sections::Whole,
            ),
            d(
                format!(".guild/prd/{}.md", l.slug),
                Priority::High,
                "plan",
                "the run's PRD".to_owned(),
                Sections::Whole,
            ),
            d(
                l.plan.clone(),
                Priority::High,
                "plan",
                format!("this lane's part of the plan (## Lane: {})", l.owner),
                Sections::ranges(vec![[l.lines.0, l.lines.1]]),
            ),
        ];
        for dep in &l.depends_on {
            let owner = lane(root, run, dep).map_or_else(|| dep.clone(), |x| x.owner);
            out.push(d(
                format!("{RUNS}/{run}/handoffs/{owner}-{dep}.md"),
                Priority::High,
                "handoff",
                format!("the receipt of {dep}, which this lane depends on"),
                Sections::Whole,
            ));
        }
        // The lane's task assignment and task run, where the run has them.
        for (path, what) in [
            (
                format!("{RUNS}/{run}/tasks/{}.json", l.owner),
                "this lane's task assignment",
            ),
            (
                format!("{RUNS}/{run}/task-runs/{}.yaml", change.folder),
                "this lane's task run",
            ),
        ] {
            out.push(d(
                path,
                Priority::Medium,
                "plan",
                what.to_owned(),
                Sections::Whole,
            ));
        }
        // The overview `guild init` writes for a repository it finds already built, where
        // the wiki has no `context/` page of its own.
        let overview = if root
            .join(".guild/wiki/context/project-overview.md")
            .is_file()
        {
            ".guild/wiki/context/project-overview.md"
        } else {
            ".guild/wiki/overview.md"
        };
        for page in [overview, ".guild/wiki/context/goals.md"] {
            out.push(d(
                page.to_owned(),
                Priority::Medium,
                "truth",
                "the project's context (universal layer)".to_owned(),
                Sections::Whole,
            ));
        }
        for page in folders_files(root, ".guild/wiki/standards") {
            out.push(d(
                page,
                Priority::Medium,
                "contract",
                "the project's standards (role layer)".to_owned(),
                Sections::Whole,
            ));
        }
        for path in l.named {
            out.push(d(
                path,
                Priority::Medium,
                "assigned",
                "named by this lane's part of the plan".to_owned(),
                Sections::Whole,
            ));
        }
        out.retain(|x| root.join(&x.path).is_file());
        out
    }

    /// The lane's receipts that do not exist yet, and the paths it names that it will create.
    fn missing(&self, root: &Tree, change: &Located) -> Vec<String> {
        let Some(run) = change.changes_root.strip_prefix(&format!("{CONTEXT}/")) else {
            return Vec::new();
        };
        let Some(l) = lane(root, run, &change.folder) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for dep in &l.depends_on {
            let owner = lane(root, run, dep).map_or_else(|| dep.clone(), |x| x.owner);
            let receipt = format!("{RUNS}/{run}/handoffs/{owner}-{dep}.md");
            if !root.join(&receipt).is_file() {
                out.push(format!(
                    "this lane depends on {dep}, whose receipt {receipt} does not exist yet: dispatch it after {dep} is done"
                ));
            }
        }
        out
    }

    fn template_values(&self, root: &Tree, change: &Located) -> serde_json::Value {
        let run = change
            .changes_root
            .strip_prefix(&format!("{CONTEXT}/"))
            .unwrap_or_default();
        let slug = plan_slug(root, run).map(|(s, _)| s).unwrap_or_default();
        serde_json::json!({
            "run_id": run,
            "spec": format!(".guild/spec/{slug}.md"),
            "plan": format!(".guild/plan/{slug}.md"),
        })
    }

    fn companion(&self, change: &Located, role: &str) -> Option<(String, &'static str)> {
        Some((
            format!("{}/{role}-{}.md", change.changes_root, change.folder),
            "guild-bundle",
        ))
    }

    fn describes(&self, lang: Lang) -> &'static str {
        match lang {
            Lang::En => {
                "your specialist definition, the run's spec and PRD, your lane's part of the plan, the receipts of the lanes you depend on, the project's standards and the files your lane names"
            }
            Lang::Zh => {
                "你的专家定义、本次运行的 spec 与 PRD、计划中属于你的 lane 的部分、你所依赖的 lane 的回执、项目标准，以及你的 lane 点名的文件"
            }
        }
    }
}

/// A lane of a run's plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lane {
    /// The plan file, repository-relative.
    pub plan: String,
    pub slug: String,
    pub owner: String,
    pub depends_on: Vec<String>,
    /// The lane's section of the plan: its `## Lane:` line to the line before the next
    /// `## ` heading (or the end).
    pub lines: (u64, u64),
    /// In-repository paths the lane names in backticks (that exist), in order.
    pub named: Vec<String>,
}

/// The plan of run `run`: its `run-state.json`'s `plan_slug`, else the plan whose front
/// matter names the run, else the only plan; true unless it is the only plan for want of
/// a name.
fn plan_slug(root: &Tree, run: &str) -> Option<(String, bool)> {
    if let Some(slug) = state_slug(root, run) {
        return crate::model::paths::is_name(&slug).then_some((slug, true));
    }
    let plans: Vec<String> = folders_files(root, ".guild/plan")
        .iter()
        .filter_map(|p| p.strip_prefix(".guild/plan/")?.strip_suffix(".md"))
        .filter(|slug| crate::model::paths::is_name(slug))
        .map(str::to_owned)
        .collect();
    // The plan whose front matter names the run, else the only plan.
    let named: Vec<&String> = plans
        .iter()
        .filter(|slug| {
            root.read(&root.join(format!(".guild/plan/{slug}.md")))
                .ok()
                .flatten()
                .is_some_and(|b| names_run(&String::from_utf8_lossy(&b), run))
        })
        .collect();
    match (named.as_slice(), plans.as_slice()) {
        ([one], _) => Some(((*one).clone(), true)),
        ([], [one]) => Some((one.clone(), false)),
        _ => None,
    }
}

/// True when a plan's front matter says `run_id: <run>` (read as Trellis' simple YAML is:
/// quotes and an inline comment taken off).
fn names_run(plan: &str, run: &str) -> bool {
    use super::simple_yaml::{Value, get, parse};
    crate::outline::markdown_front_matter(plan)
        .is_some_and(|fm| matches!(get(&parse(&fm), "run_id"), Some(Value::Str(r)) if r == run))
}

/// The `plan_slug` of run `run`'s `run-state.json`, as written.
fn state_slug(root: &Tree, run: &str) -> Option<String> {
    let state = root.join(format!("{RUNS}/{run}/run-state.json"));
    let bytes = root.read(&state).ok()??;
    let v = serde_json::from_slice::<serde_json::Value>(&bytes).ok()?;
    v.get("plan_slug")?.as_str().map(str::to_owned)
}

/// Lane `task` of run `run`, from the run's plan.
#[must_use]
pub fn lane(root: &Tree, run: &str, task: &str) -> Option<Lane> {
    let (slug, plan, text) = plan_of(root, run)?;
    let lines: Vec<&str> = text.lines().collect();
    lane_sections(&lines)
        .into_iter()
        .find_map(|(from, to)| read_lane(root, &plan, &slug, &lines, from, to, task))
}

/// The plan of run `run`: its slug, its path and its text.
fn plan_of(root: &Tree, run: &str) -> Option<(String, String, String)> {
    if !crate::model::paths::is_name(run) || !is_dir(root, &format!("{RUNS}/{run}")) {
        return None;
    }
    let (slug, _) = plan_slug(root, run)?;
    let plan = format!(".guild/plan/{slug}.md");
    let bytes = root.read(&root.join(&plan)).ok()??;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Some((slug, plan, text))
}

/// The lanes of a plan's lines: each `## Lane:` section, `[from, to)`, up to the next `## `.
fn lane_sections(lines: &[&str]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with("## ") {
            if let Some(s) = start.take() {
                out.push((s, i));
            }
            if line.starts_with("## Lane:") {
                start = Some(i);
            }
        }
    }
    out.extend(start.map(|s| (s, lines.len())));
    out
}

/// The value of a lane's `- key:` bullet, trimmed.
fn bullet<'a>(body: &[&'a str], key: &str) -> Option<&'a str> {
    body.iter().find_map(|l| {
        l.strip_prefix("- ")
            .and_then(|r| r.strip_prefix(key))
            .and_then(|r| r.strip_prefix(':'))
            .map(str::trim)
    })
}

/// The lane in `lines[from..to]` when its `- task-id:` is `task`.
fn read_lane(
    root: &Path,
    plan: &str,
    slug: &str,
    lines: &[&str],
    from: usize,
    to: usize,
    task: &str,
) -> Option<Lane> {
    let body = &lines[from..to];
    let bullet = |key: &str| bullet(body, key);
    if bullet("task-id")? != task {
        return None;
    }
    let owner = bullet("owner").map(str::to_owned).or_else(|| {
        body[0]
            .strip_prefix("## Lane:")
            .map(|o| o.trim().to_owned())
    })?;
    let depends_on = bullet("depends-on")
        .map(|d| {
            d.trim_matches(['[', ']'])
                .split(',')
                .map(str::trim)
                .filter(|x| crate::model::paths::is_name(x))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let mut named: Vec<String> = Vec::new();
    for line in body {
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 1
                && part.contains('/')
                && !part.contains(' ')
                && let Ok(p) = crate::model::paths::normalize(part)
                && !named.contains(&p)
                && root.join(&p).is_file()
            {
                named.push(p);
            }
        }
    }
    // Trailing blank lines belong to no lane.
    let mut last = to;
    while last > from + 1 && lines[last - 1].trim().is_empty() {
        last -= 1;
    }
    Some(Lane {
        plan: plan.to_owned(),
        slug: slug.to_owned(),
        owner: crate::model::paths::is_name(&owner).then_some(owner)?,
        depends_on,
        lines: (from as u64 + 1, last as u64),
        named,
    })
}

/// The regular `*.md` files of a folder, repository-relative, sorted.
fn folders_files(root: &Path, rel: &str) -> Vec<String> {
    use crate::util::read::{Entries, names_in};
    let Some(folder) = super::folder_inside(root, rel) else {
        return Vec::new();
    };
    names_in(&folder, Entries::Files)
        .into_iter()
        .filter(|n| {
            Path::new(n)
                .extension()
                .is_some_and(|x| x.eq_ignore_ascii_case("md"))
        })
        .map(|n| format!("{rel}/{n}"))
        .collect()
}
