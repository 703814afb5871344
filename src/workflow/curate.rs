//! curate's own layout (the seed's): `changes/<id>/` with `plan/`, `analysis/`, `evidence/`,
//! or the same under `.aiws/changes/`; the manifest beside the change's analysis.

use crate::trust::tree::Tree;

use super::{Located, Workflow, direct};

/// The changes roots the plain layout looks in, in order of preference.
pub const ROOTS: [&str; 2] = ["changes", ".aiws/changes"];

pub struct Curate;

impl Workflow for Curate {
    fn name(&self) -> &'static str {
        "curate"
    }

    /// The plain layout is what is left when no other workflow shows.
    fn detect(&self, _root: &Tree) -> Option<String> {
        None
    }

    fn locate(&self, root: &Tree, id: &str, _run: Option<&str>) -> Option<Located> {
        ROOTS.iter().find_map(|r| direct(root, r, id))
    }
}
