//! Ignore rules (`.gitignore`, `.ignore`, `.git/info/exclude`) for repository-relative paths,
//! whether or not the folder is a git repository.
//!
//! A path is ignored when it or any folder above it is, including the folder a walk starts
//! from. Only the ignore files of the folders on a path's way down from the root are read
//! (and each only once), so the cost follows what is selected, not the repository's size.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// Lazily loaded ignore files, one matcher per folder.
#[derive(Debug)]
pub struct IgnoreRules {
    root: PathBuf,
    enabled: bool,
    exclude: Option<Gitignore>,
    folders: HashMap<String, Option<Gitignore>>,
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
        let abs = self.root.join(path);
        // The deepest ignore file decides first, as in git.
        let mut dir = path.rsplit_once('/').map_or("", |(d, _)| d).to_owned();
        loop {
            if let Some(gi) = self.folder(&dir) {
                match gi.matched(&abs, is_dir) {
                    Match::Ignore(_) => return true,
                    Match::Whitelist(_) => return false,
                    Match::None => {}
                }
            }
            if dir.is_empty() {
                break;
            }
            dir = dir.rsplit_once('/').map_or("", |(d, _)| d).to_owned();
        }
        self.exclude
            .as_ref()
            .is_some_and(|gi| gi.matched(&abs, is_dir).is_ignore())
    }

    fn folder(&mut self, dir: &str) -> Option<&Gitignore> {
        if !self.folders.contains_key(dir) {
            let base = if dir.is_empty() {
                self.root.clone()
            } else {
                self.root.join(dir)
            };
            let mut builder = GitignoreBuilder::new(&base);
            let mut any = false;
            // `.ignore` is added last so that its rules win over `.gitignore`'s.
            for name in [".gitignore", ".ignore"] {
                let file = base.join(name);
                if file.is_file() {
                    any = true;
                    let _ = builder.add(&file);
                }
            }
            let gi = if any { builder.build().ok() } else { None };
            self.folders.insert(dir.to_owned(), gi);
        }
        self.folders.get(dir).and_then(Option::as_ref)
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
