//! aiws before 0.0.96 (0.0.39 as first released): everything under `changes/`, the
//! manifest at `changes/<id>/analysis/<role>-context.jsonl`. A workspace recording such a
//! version whose changes are under `.aiws/changes/` (aipper/relay) has the `aiws` layout.

use crate::trust::tree::Tree;

use super::aiws::{recorded_version, show};
use super::{Located, Workflow, direct};

pub struct AiwsLegacy;

impl Workflow for AiwsLegacy {
    fn name(&self) -> &'static str {
        "aiws-legacy"
    }

    fn detect(&self, root: &Tree) -> Option<String> {
        let version = recorded_version(root)?;
        // Its changes are under `changes/`; a workspace with `.aiws/changes/` and no
        // `changes/` keeps them where aiws ≥ 0.0.96 does (see `Aiws`). With both, the one
        // that holds the change decides. A `changes/` that holds only what curate wrote there
        // (aiws' manifests, `changes/<id>/analysis/`) is no layout of changes.
        let changes =
            super::is_dir(root, "changes") && !super::only_curates_output(&root.join("changes"));
        let newer_layout = super::is_dir(root, ".aiws/changes") && !changes;
        (version < (0, 0, 96) && !newer_layout)
            .then(|| format!(".aiws/manifest.json (aiws {})", show(version)))
    }

    fn locate(&self, root: &Tree, id: &str, _run: Option<&str>) -> Option<Located> {
        direct(root, "changes", id)
    }

    fn changes_root(&self) -> Option<&'static str> {
        Some("changes")
    }
}
