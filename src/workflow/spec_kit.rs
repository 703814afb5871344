//! spec-kit (`.specify/`, github/spec-kit): a feature is `specs/<NNN-feature>/` (`spec.md`,
//! `plan.md`, `tasks.md`, `research.md`, `data-model.md`, `quickstart.md`, `contracts/`,
//! `checklists/`); the project's truth is the constitution, `.specify/memory/constitution.md`.
//!
//! A feature is named as spec-kit's own scripts name it (`scripts/bash/common.sh`): by its
//! folder's name, or by its number or timestamp prefix (`004`, `004-other-name`,
//! `20260319-143022-…`: the one folder of `specs/` with that prefix), a branch's single
//! `feat/` segment dropped. With no feature named, the current one is spec-kit's:
//! `SPECIFY_FEATURE_DIRECTORY`, then `.specify/feature.json`'s `feature_directory`, then
//! `SPECIFY_FEATURE`, then the current git branch.

use std::path::Path;

use crate::trust::tree::Tree;

use super::{Located, Workflow, direct, folders, is_dir};
use crate::model::Lang;

pub struct SpecKit;

const SPECS: &str = "specs";
const MARKER: &str = ".specify";

impl Workflow for SpecKit {
    fn name(&self) -> &'static str {
        "spec-kit"
    }

    fn detect(&self, root: &Tree) -> Option<String> {
        let constitution = ".specify/memory/constitution.md";
        if root.join(constitution).is_file() {
            Some(constitution.to_owned())
        } else {
            is_dir(root, MARKER).then(|| format!("{MARKER}/"))
        }
    }

    fn locate(&self, root: &Tree, id: &str, _run: Option<&str>) -> Option<Located> {
        direct(root, SPECS, id).or_else(|| match by_prefix(root, id).as_slice() {
            [one] => direct(root, SPECS, one),
            _ => None,
        })
    }

    /// Several features with the number named (spec-kit refuses them too: "Multiple spec
    /// directories found with prefix").
    fn ambiguous(&self, root: &Tree, id: &str, _run: Option<&str>) -> Option<String> {
        let found = by_prefix(root, id);
        (found.len() > 1).then(|| {
            format!(
                "several features of {SPECS}/ have the number {}: {}; name one by its folder",
                prefix(id).unwrap_or(id),
                found.join(", ")
            )
        })
    }

    fn changes_root(&self) -> Option<&'static str> {
        Some(SPECS)
    }

    fn looked(&self, id: &str) -> Vec<String> {
        let mut out = vec![format!("{SPECS}/{id}")];
        if let Some(p) = prefix(id) {
            out.push(format!("{SPECS}/{p}-*"));
        }
        out
    }

    /// `specs/<feature>/` (as spec-kit's scripts print `FEATURE_DIR`) and a branch with one
    /// leading segment (`feat/004-login`, as `spec_kit_effective_branch_name` strips it).
    fn normalize_id<'a>(&self, id: &'a str) -> &'a str {
        let id = id.trim_end_matches('/');
        let id = id.strip_prefix("specs/").unwrap_or(id);
        match id.split_once('/') {
            Some((_, rest)) if !rest.contains('/') => rest,
            _ => id,
        }
    }

    fn current(&self, root: &Tree) -> Option<String> {
        current_feature(root, &|name| std::env::var(name).ok())
    }

    fn manifest(&self) -> &'static str {
        "{changes}/{change}/curate/{role}-context.jsonl"
    }

    /// spec-kit's commands (`/speckit.implement`, `speckit-implement`) and its phases.
    fn roles(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("specify", "planner"),
            ("clarify", "planner"),
            ("plan", "planner"),
            ("tasks", "planner"),
            ("research", "explorer"),
            ("implement", "worker"),
            ("analyze", "reviewer"),
            ("checklist", "reviewer"),
        ]
    }

    fn normalize_role<'a>(&self, role: &'a str) -> &'a str {
        let role = role.strip_prefix('/').unwrap_or(role);
        role.strip_prefix("speckit.")
            .or_else(|| role.strip_prefix("speckit-"))
            .unwrap_or(role)
    }

    fn contracts(&self) -> &'static str {
        include_str!("../../contracts/workflows/spec-kit.json")
    }

    fn describes(&self, lang: Lang) -> &'static str {
        match lang {
            Lang::En => {
                "the project's constitution and the feature's spec, plan and tasks, with its research, data model, contracts and quickstart"
            }
            Lang::Zh => {
                "项目章程（constitution），以及该特性的 spec、plan、tasks 与 research、数据模型、接口契约和 quickstart"
            }
        }
    }
}

/// The number or timestamp a feature's name or branch begins with (`004` of `004-login`
/// or of `004`; `20260319-143022` of `20260319-143022-login`), as spec-kit reads it.
fn prefix(id: &str) -> Option<&str> {
    let b = id.as_bytes();
    let digits = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    // A timestamp: 8 digits, `-`, 6 digits, then `-`.
    if digits(0) == 8 && b.get(8) == Some(&b'-') && digits(9) == 6 && b.get(15) == Some(&b'-') {
        return Some(&id[..15]);
    }
    let n = digits(0);
    (n >= 3 && (n == id.len() || b[n] == b'-')).then(|| &id[..n])
}

/// The folders of `specs/` whose name begins with the prefix of `id` and a `-`.
fn by_prefix(root: &Path, id: &str) -> Vec<String> {
    let Some(p) = prefix(id) else {
        return Vec::new();
    };
    let head = format!("{p}-");
    folders(root, SPECS)
        .into_iter()
        .filter(|f| f.starts_with(&head))
        .collect()
}

/// The feature spec-kit's scripts would work on (see the module's words), when it names a
/// feature folder that is there; `env` reads the environment.
fn current_feature(root: &Tree, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let set = |name: &str| {
        env(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let named = set("SPECIFY_FEATURE_DIRECTORY")
        .or_else(|| feature_json(root))
        .map(|dir| {
            let dir = dir.trim_end_matches('/');
            dir.rsplit('/').next().unwrap_or(dir).to_owned()
        })
        .or_else(|| set("SPECIFY_FEATURE"))
        .or_else(|| git_branch(root))?;
    let name = SpecKit.normalize_id(&named).to_owned();
    let found = SpecKit.locate(root, &name, None)?;
    Some(found.folder)
}

/// `.specify/feature.json`'s `feature_directory`, as `/speckit.specify` records it.
fn feature_json(root: &Tree) -> Option<String> {
    let bytes = root.read(&root.join(".specify/feature.json")).ok()??;
    let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    value
        .get("feature_directory")?
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// The current branch, as spec-kit asks git for it (`git rev-parse --abbrev-ref HEAD`), where
/// the repository's root holds a `.git` (`has_git`): `git symbolic-ref`, which reads the
/// head alone (no index, no hook, no lock); none when the head is detached or git is not
/// there. (`.git/` itself is never read: the admission rules refuse it.)
fn git_branch(root: &Path) -> Option<String> {
    std::fs::symlink_metadata(root.join(".git")).ok()?;
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["symbolic-ref", "--quiet", "--short", "HEAD"])
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let branch = String::from_utf8(out.stdout).ok()?;
    let branch = branch.trim();
    (out.status.success() && !branch.is_empty()).then(|| branch.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_feature_is_named_as_spec_kit_names_it() {
        assert_eq!(prefix("004-login"), Some("004"));
        assert_eq!(prefix("004"), Some("004"));
        assert_eq!(prefix("1234-x"), Some("1234"));
        assert_eq!(prefix("20260319-143022-login"), Some("20260319-143022"));
        assert_eq!(prefix("04-x"), None);
        assert_eq!(prefix("004x"), None);
        assert_eq!(prefix("login"), None);
        let s = SpecKit;
        assert_eq!(s.normalize_id("specs/004-login/"), "004-login");
        assert_eq!(s.normalize_id("feat/004-login"), "004-login");
        assert_eq!(s.normalize_id("a/b/c"), "a/b/c");
        assert_eq!(s.normalize_role("/speckit.implement"), "implement");
        assert_eq!(s.normalize_role("speckit-analyze"), "analyze");
    }

    #[test]
    fn the_current_feature_follows_spec_kits_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for f in ["001-login", "002-search", "003-export"] {
            std::fs::create_dir_all(root.join("specs").join(f)).unwrap();
            std::fs::write(root.join("specs").join(f).join("spec.md"), "# s\n").unwrap();
        }
        std::fs::create_dir_all(root.join(".specify")).unwrap();
        let none = |_: &str| None;
        assert_eq!(current_feature(&Tree::new(root.clone()), &none), None);
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .arg("-C")
                .arg(&root)
                .args(args)
                .output()
                .is_ok_and(|o| o.status.success())
        };
        if !git(&["init", "-q"]) {
            return;
        }
        assert!(git(&[
            "symbolic-ref",
            "HEAD",
            "refs/heads/feat/002-other-name"
        ]));
        assert_eq!(
            current_feature(&Tree::new(root.clone()), &none).as_deref(),
            Some("002-search")
        );
        let feature = |name: &str| (name == "SPECIFY_FEATURE").then(|| "001".to_owned());
        assert_eq!(
            current_feature(&Tree::new(root.clone()), &feature).as_deref(),
            Some("001-login")
        );
        std::fs::write(
            root.join(".specify/feature.json"),
            r#"{"feature_directory": "specs/003-export"}"#,
        )
        .unwrap();
        assert_eq!(
            current_feature(&Tree::new(root.clone()), &feature).as_deref(),
            Some("003-export")
        );
        let dir_env = |name: &str| {
            (name == "SPECIFY_FEATURE_DIRECTORY").then(|| "specs/001-login".to_owned())
        };
        assert_eq!(
            current_feature(&Tree::new(root.clone()), &dir_env).as_deref(),
            Some("001-login")
        );
        // A branch that names no feature there names none.
        std::fs::remove_file(root.join(".specify/feature.json")).unwrap();
        assert!(git(&["symbolic-ref", "HEAD", "refs/heads/main"]));
        assert_eq!(current_feature(&Tree::new(root.clone()), &none), None);
    }
}
