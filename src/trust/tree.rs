//! The repository one run works in: its root, and what the run's workflow read there.
//!
//! A workflow reads its own files (Trellis' `.trellis/config.yaml`, a Guild run's
//! `run-state.json` and plan, a task's `prd.md`) from several of its answers in one run:
//! the change's location, the hook's byte caps, the spec folders out of scope, the caps'
//! warnings. [`Tree::read`] reads each file once per run, through [`read_repo_file`] (the
//! same admission: no link out, a regular file, bounded), and hands the same bytes to
//! every later question. A `Tree` is made where a run resolves its workspace and dropped
//! with it, so a long-lived process (the watcher, the language server) never answers from
//! a stale copy; clones share what was read.
//!
//! Only what a workflow reads goes through here: the files curate writes (manifests,
//! locks, overrides) are read fresh each time.

use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use super::admit::read_repo_file;

/// A file's bytes as read once.
pub type Bytes = Arc<Vec<u8>>;

/// The repository root (canonical), with the workflow files this run has read.
#[derive(Clone)]
pub struct Tree {
    root: PathBuf,
    read: Arc<Mutex<HashMap<PathBuf, Option<Bytes>>>>,
}

impl Tree {
    /// A tree at `root` (canonical), nothing read yet.
    #[must_use]
    pub fn new(root: PathBuf) -> Self {
        Tree {
            root,
            read: Arc::default(),
        }
    }

    /// The root as a path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The file at `path` (absolute, under the root), as [`read_repo_file`] reads it, read
    /// at most once by this tree: `Ok(None)` when nothing is there. A refusal (a link out,
    /// a secret's name, not a regular file, too large) is returned each time it is asked,
    /// and never kept.
    pub fn read(&self, path: &Path) -> crate::util::fault::Result<Option<Bytes>> {
        if let Some(bytes) = self.lock().get(path) {
            return Ok(bytes.clone());
        }
        let bytes = read_repo_file(&self.root, path)?.map(Arc::new);
        self.lock().insert(path.to_owned(), bytes.clone());
        Ok(bytes)
    }

    /// [`Tree::read`] of a repository-relative path; `None` also when it is refused.
    #[must_use]
    pub fn read_rel(&self, rel: &str) -> Option<Bytes> {
        self.read(&self.root.join(rel)).ok().flatten()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Option<Bytes>>> {
        self.read.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Deref for Tree {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.root
    }
}

impl AsRef<Path> for Tree {
    fn as_ref(&self) -> &Path {
        &self.root
    }
}

impl fmt::Debug for Tree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Tree").field(&self.root).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file is read once: a second question gets the first answer, even after the file
    /// changed on disk; another tree (another run) reads it again.
    #[test]
    fn a_file_is_read_once_per_tree() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("config.yaml"), b"one\n").unwrap();
        let tree = Tree::new(root.clone());
        assert_eq!(tree.read_rel("config.yaml").unwrap().as_slice(), b"one\n");
        std::fs::write(root.join("config.yaml"), b"two\n").unwrap();
        assert_eq!(
            tree.clone().read_rel("config.yaml").unwrap().as_slice(),
            b"one\n"
        );
        assert_eq!(
            Tree::new(root).read_rel("config.yaml").unwrap().as_slice(),
            b"two\n"
        );
    }

    /// What is absent stays absent for the run; a link that leaves the repository is
    /// refused each time it is asked, never kept as read.
    #[cfg(unix)]
    #[test]
    fn an_absent_file_is_remembered_and_a_link_out_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(outside.path().join("secret.txt"), b"x").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.txt"), root.join("out.md")).unwrap();
        let tree = Tree::new(root.clone());
        assert!(tree.read_rel("none.md").is_none());
        std::fs::write(root.join("none.md"), b"late").unwrap();
        assert!(tree.read_rel("none.md").is_none());
        assert!(tree.read(&root.join("out.md")).is_err());
        assert!(tree.read(&root.join("out.md")).is_err());
    }
}
