//! Guild Stack (`.guild/`, lookatitude/guild).

use std::path::Path;

use super::{Located, Workflow, is_dir};

pub struct Guild;

impl Workflow for Guild {
    fn name(&self) -> &'static str {
        "guild"
    }

    fn detect(&self, root: &Path) -> Option<String> {
        is_dir(root, ".guild").then(|| ".guild/".to_owned())
    }

    fn locate(&self, _root: &Path, _id: &str) -> Option<Located> {
        None
    }
}
