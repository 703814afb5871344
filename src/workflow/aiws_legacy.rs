//! aiws 0.0.39 (as in aipper/relay): everything under `changes/`, the manifest at
//! `changes/<id>/analysis/<role>-context.jsonl`.

use std::path::Path;

use super::aiws::{recorded_version, show};
use super::{Located, Workflow, direct};

pub struct AiwsLegacy;

impl Workflow for AiwsLegacy {
    fn name(&self) -> &'static str {
        "aiws-legacy"
    }

    fn detect(&self, root: &Path) -> Option<String> {
        let version = recorded_version(root)?;
        (version < (0, 0, 96)).then(|| format!(".aiws/manifest.json (aiws {})", show(version)))
    }

    fn locate(&self, root: &Path, id: &str, _run: Option<&str>) -> Option<Located> {
        direct(root, "changes", id)
    }

    fn changes_root(&self) -> Option<&'static str> {
        Some("changes")
    }
}
