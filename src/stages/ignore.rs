//! Ignore rules (`.gitignore`, `.ignore`, `.git/info/exclude`) for repository-relative paths,
//! whether or not the folder is a git repository.
//!
//! A path is ignored when it or any folder above it is, including the folder a walk starts
//! from. Only the ignore files of the folders on a path's way down from the root are read
//! (and each only once), so the cost follows what is selected, not the repository's size.
//! A walk that lists a folder says which ignore files it holds ([`IgnoreRules::of_listing`]), so
//! nothing is probed for, and matches against the chain of folder rules it went down
//! ([`Chain`]). As in git (2.32 on), an ignore file is read only when it is a regular file,
//! never through a link.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// Lazily loaded ignore files, one matcher per folder.
#[derive(Debug)]
pub struct IgnoreRules {
    root: PathBuf,
    enabled: bool,
    exclude: Option<Gitignore>,
    folders: HashMap<String, Option<Arc<Gitignore>>>,
}

/// The ignore files a folder's listing shows.
#[derive(Debug, Clone, Copy, Default)]
pub struct Present {
    pub gitignore: bool,
    pub ignore: bool,
}

/// The rules of the folders from the root down to the one a walk is in: each folder's
/// path length (with its `/`) and its rules.
#[derive(Debug, Default, Clone)]
pub struct Chain(Vec<(usize, Option<Arc<Gitignore>>)>);

impl Chain {
    /// Goes down into folder `dir` (repository-relative, `""` the root), with its rules.
    pub fn push(&mut self, dir: &str, rules: Option<Arc<Gitignore>>) {
        let base = if dir.is_empty() { 0 } else { dir.len() + 1 };
        self.0.push((base, rules));
    }

    /// Comes back up out of the last folder.
    pub fn pop(&mut self) {
        self.0.pop();
    }
}

impl IgnoreRules {
    /// Rules for the repository at `root`; `enabled = false` (`--no-ignore`) ignores nothing.
    #[must_use]
    pub fn new(root: &Path, enabled: bool) -> IgnoreRules {
        let exclude = if enabled {
            let path = root.join(".git/info/exclude");
            path.is_file().then(|| {
                let mut b = GitignoreBuilder::new(root);
                // A broken line in an ignore file ignores that line, as git does.
                let _ = b.add(&path);
                b.build().unwrap_or_else(|_| Gitignore::empty())
            })
        } else {
            None
        };
        IgnoreRules {
            root: root.to_owned(),
            enabled,
            exclude,
            folders: HashMap::new(),
        }
    }

    /// True when the repository-relative `path` (or any folder above it) is ignored.
    pub fn is_ignored(&mut self, path: &str, is_dir: bool) -> bool {
        if !self.enabled || path.is_empty() {
            return false;
        }
        let segments: Vec<&str> = path.split('/').collect();
        let mut prefix_len = 0;
        for (i, segment) in segments.iter().enumerate() {
            if i > 0 {
                prefix_len += 1;
            }
            prefix_len += segment.len();
            let last = i + 1 == segments.len();
            if self.matches(&path[..prefix_len], if last { is_dir } else { true }) {
                return true;
            }
        }
        false
    }

    /// True when `path` itself is ignored by the rules of the folders above it (its parent
    /// folders are assumed not ignored: a walk prunes those).
    pub fn matches(&mut self, path: &str, is_dir: bool) -> bool {
        if !self.enabled {
            return false;
        }
        let chain = self.chain_above(path);
        self.matches_in(&chain, path, is_dir)
    }

    /// The rules of the root and of every folder above `path` (each looked up once).
    pub fn chain_above(&mut self, path: &str) -> Chain {
        let mut chain = Chain::default();
        chain.push("", self.folder(""));
        let mut end = 0;
        while let Some(slash) = path[end..].find('/') {
            let dir = &path[..end + slash];
            chain.push(dir, self.folder(dir));
            end += slash + 1;
        }
        chain
    }

    /// True when `path`, in the last folder of `chain`, is ignored: the rules of the chain's
    /// folders, the deepest first, then `.git/info/exclude` (as [`IgnoreRules::matches`]).
    pub fn matches_in(&self, chain: &Chain, path: &str, is_dir: bool) -> bool {
        if !self.enabled {
            return false;
        }
        for (base, rules) in chain.0.iter().rev() {
            let Some(gi) = rules else { continue };
            // A relative path is matched relative to the ignore file's folder.
            match gi.matched(path.get(*base..).unwrap_or(path), is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        self.exclude
            .as_ref()
            .is_some_and(|gi| gi.matched(path, is_dir).is_ignore())
    }

    /// The rules of folder `dir`, whose listing shows the ignore files `present` (none is
    /// looked for, and nothing is kept: a walk, which may run on several threads, lists
    /// each folder once).
    pub fn of_listing(&self, dir: &str, present: Present) -> Option<Arc<Gitignore>> {
        if !self.enabled {
            return None;
        }
        if let Some(known) = self.folders.get(dir) {
            return known.clone();
        }
        self.build(dir, [present.gitignore, present.ignore])
    }

    /// The rules of folder `dir`, looked up once.
    pub fn folder(&mut self, dir: &str) -> Option<Arc<Gitignore>> {
        if let Some(known) = self.folders.get(dir) {
            return known.clone();
        }
        let base = self.base(dir);
        let regular = |name| {
            std::fs::symlink_metadata(base.join(name)).is_ok_and(|m| m.file_type().is_file())
        };
        let rules = self.build(dir, [regular(".gitignore"), regular(".ignore")]);
        self.folders.insert(dir.to_owned(), rules.clone());
        rules
    }

    fn base(&self, dir: &str) -> PathBuf {
        if dir.is_empty() {
            self.root.clone()
        } else {
            self.root.join(dir)
        }
    }

    fn build(&self, dir: &str, [gitignore, ignore]: [bool; 2]) -> Option<Arc<Gitignore>> {
        if !gitignore && !ignore {
            return None;
        }
        let base = self.base(dir);
        let mut builder = GitignoreBuilder::new(&base);
        // `.ignore` is added last so that its rules win over `.gitignore`'s.
        for (name, present) in [(".gitignore", gitignore), (".ignore", ignore)] {
            if present {
                let _ = builder.add(base.join(name));
            }
        }
        builder.build().ok().map(Arc::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_rules_apply_below_and_parents_count() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join(".gitignore"), "build/\n*.log\n").unwrap();
        std::fs::write(root.join("a/.gitignore"), "secret.txt\n!keep.log\n").unwrap();
        let mut rules = IgnoreRules::new(root, true);
        assert!(rules.is_ignored("build/x.js", false));
        assert!(rules.is_ignored("build", true));
        assert!(rules.is_ignored("x.log", false));
        assert!(rules.is_ignored("a/secret.txt", false));
        assert!(!rules.is_ignored("a/keep.log", false));
        assert!(!rules.is_ignored("a/b/c.md", false));
        let mut off = IgnoreRules::new(root, false);
        assert!(!off.is_ignored("build/x.js", false));
    }
}
