//! Repository-relative paths: normalising what a person or a file names, and refusing what
//! escapes the repository.
//!
//! Pure string work; nothing here touches the disk. A path that escapes is an error, never
//! something to be clamped back inside.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A name curate builds paths from (an id, a role, a folder it found):
/// `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`.
#[must_use]
pub fn is_name(value: &str) -> bool {
    let bytes = value.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 128
        && bytes[0].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Why a path was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    Absolute,
    DriveLetter,
    ParentDir,
    Empty,
}

impl Escape {
    /// The problem in words, for error messages.
    #[must_use]
    pub fn problem(self) -> &'static str {
        match self {
            Escape::Absolute => "is an absolute path outside the repository",
            Escape::DriveLetter => "names a drive, outside the repository",
            Escape::ParentDir => "climbs out of the repository with `..`",
            Escape::Empty => "is empty",
        }
    }
}

/// A repository-relative path in its one normal form (see [`normalize`]): `/`-separated,
/// without `.`, `..`, empty segments, a leading `/` or a drive. The only way to make one is
/// to normalise, so a function that takes a `RepoPath` never sees a path that escapes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RepoPath(String);

impl RepoPath {
    /// Normalises `path` (see [`normalize`]).
    ///
    /// # Errors
    /// Why the path escapes the repository (or is empty).
    pub fn new(path: &str) -> Result<RepoPath, Escape> {
        normalize(path).map(RepoPath)
    }

    /// The path as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for RepoPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for RepoPath {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl AsRef<Path> for RepoPath {
    fn as_ref(&self) -> &Path {
        Path::new(&self.0)
    }
}

/// `path` (absolute) as a `/` path relative to `root`, when it lies inside it (lexically:
/// links are not resolved here).
#[must_use]
pub fn relative_to(root: &Path, path: &Path) -> Option<String> {
    let clean = lexical(path);
    let rel = clean.strip_prefix(root).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

/// Normalises a repository-relative path or glob: `\` becomes `/`, `./` and repeated `/`
/// go, a trailing `/` goes, `a/../b` becomes `b`. A `..` that climbs above the root, an
/// absolute path or a drive letter is refused.
pub fn normalize(path: &str) -> Result<String, Escape> {
    if is_normal(path) {
        return Ok(path.to_owned());
    }
    normalize_each(path)
}

/// [`normalize`] segment by segment.
fn normalize_each(path: &str) -> Result<String, Escape> {
    let unified = path.replace('\\', "/");
    if unified.starts_with('/') {
        return Err(Escape::Absolute);
    }

    let mut parts = Vec::new();
    for segment in unified.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(Escape::ParentDir);
                }
            }
            s => parts.push(s),
        }
    }
    if parts.is_empty() {
        return Err(Escape::Empty);
    }
    // Checked on the result, so that `./C:/x` or `a/../C:/x` cannot slip a drive through.
    let first = parts[0].as_bytes();
    if first.len() >= 2 && first[0].is_ascii_alphabetic() && first[1] == b':' {
        return Err(Escape::DriveLetter);
    }
    Ok(parts.join("/"))
}

/// True when [`normalize`] would give `path` back as it is (as a walk's paths are): no `\\`,
/// no empty, `.` or `..` segment, no drive letter first.
#[must_use]
pub fn is_normal(path: &str) -> bool {
    let first = path.split('/').next().unwrap_or_default().as_bytes();
    let drive = first.len() >= 2 && first[0].is_ascii_alphabetic() && first[1] == b':';
    !drive && !path.contains('\\') && path.split('/').all(|s| !matches!(s, "" | "." | ".."))
}

/// True when `pattern` holds a glob character (`*`, `?`, `[`, `{`).
#[must_use]
pub fn has_glob_chars(pattern: &str) -> bool {
    pattern.contains(['*', '?', '[', '{'])
}

/// The literal folder prefix of a glob: every whole segment before the first one holding a
/// glob character (`changes/add-auth/plan` for `changes/add-auth/plan/*.md`; `""` for `**/x`).
#[must_use]
pub fn literal_prefix(pattern: &str) -> &str {
    let mut end = 0;
    for (i, segment) in pattern.split('/').enumerate() {
        if has_glob_chars(segment) {
            break;
        }
        // `end` is the byte length of the first `i` segments joined by `/`.
        if i > 0 {
            end += 1;
        }
        end += segment.len();
    }
    if end >= pattern.len() {
        // No glob segment: the whole pattern is literal; its folder is the parent.
        return pattern.rsplit_once('/').map_or("", |(dir, _)| dir);
    }
    // Do not include a trailing partial segment: cut back to the last complete folder.
    let prefix = &pattern[..end];
    if pattern.as_bytes().get(end) == Some(&b'/') {
        prefix
    } else {
        prefix.rsplit_once('/').map_or("", |(dir, _)| dir)
    }
}

/// True when a path holds a control character (such names are excluded with a note).
#[must_use]
pub fn has_control_char(path: &str) -> bool {
    path.chars().any(char::is_control)
}

/// Removes `.` and resolves `..` without touching the disk.
#[must_use]
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// A file the compile read, by path and content hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRef {
    pub path: String,
    pub sha256: String,
    /// Read from outside the repository (an `--overrides` file elsewhere): `path` is its
    /// name alone, which no other machine, nor `check --stale`, can read again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub outside: bool,
}

/// A path template (the manifest setting) with its placeholders `{changes}`, `{change}`
/// and `{role}` filled in.
#[must_use]
pub fn fill(template: &str, changes: &str, change: &str, role: &str) -> String {
    template
        .replace("{changes}", changes)
        .replace("{change}", change)
        .replace("{role}", role)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_already_normal_is_taken_as_it_is_and_any_other_segment_by_segment() {
        let segments = ["a", "", ".", "..", "b\\c", "C:", "x:y", "é", "d.ts"];
        // How many paths took the shortcut: some must, and some must not.
        let mut normal = 0;
        for a in segments {
            for b in segments {
                for c in segments {
                    for lead in ["", "/"] {
                        let path = format!("{lead}{a}/{b}/{c}");
                        assert_eq!(normalize(&path), normalize_each(&path), "{path:?}");
                        normal += usize::from(is_normal(&path));
                    }
                }
            }
        }
        // No leading `/`; first `a`, `é` or `d.ts` (`C:` and `x:y` are drive letters there),
        // then any of those or `C:` or `x:y`.
        assert_eq!(normal, 3 * 5 * 5);
        for p in ["a", "C:", "c:/x", "a\\b", ".", "a/./b", "a//b", "a/"] {
            assert_eq!(normalize(p), normalize_each(p), "{p:?}");
        }
    }

    #[test]
    fn a_repo_path_is_only_ever_normal() {
        assert_eq!(
            RepoPath::new("./src//a\\b.rs").unwrap().as_str(),
            "src/a/b.rs"
        );
        assert_eq!(RepoPath::new("../x"), Err(Escape::ParentDir));
        assert_eq!(RepoPath::new("/etc/passwd"), Err(Escape::Absolute));
        assert_eq!(RepoPath::new("a/.."), Err(Escape::Empty));
    }

    #[test]
    fn normalises_separators_dots_and_repeats() {
        assert_eq!(
            normalize("./src//auth\\login.ts").unwrap(),
            "src/auth/login.ts"
        );
        assert_eq!(normalize("docs/").unwrap(), "docs");
    }

    #[test]
    fn refuses_escapes() {
        assert_eq!(normalize("../x"), Err(Escape::ParentDir));
        assert_eq!(normalize("a/../../x"), Err(Escape::ParentDir));
        assert_eq!(normalize("a/../b").unwrap(), "b");
        assert_eq!(normalize("/etc/passwd"), Err(Escape::Absolute));
        assert_eq!(normalize("\\\\server\\share"), Err(Escape::Absolute));
        assert_eq!(normalize("C:\\x"), Err(Escape::DriveLetter));
        // Regression: a drive behind `./` or `a/..` passed the check on the raw text.
        assert_eq!(normalize("./C:/x"), Err(Escape::DriveLetter));
        assert_eq!(normalize("a/../C:/x"), Err(Escape::DriveLetter));
        assert_eq!(normalize("./"), Err(Escape::Empty));
    }

    #[test]
    fn literal_prefixes_stop_at_the_first_glob_segment() {
        assert_eq!(
            literal_prefix("changes/add-auth/plan/*.md"),
            "changes/add-auth/plan"
        );
        assert_eq!(literal_prefix("**/x.md"), "");
        assert_eq!(literal_prefix("src/{a,b}/x"), "src");
        assert_eq!(literal_prefix("docs/**"), "docs");
        assert_eq!(literal_prefix("AI_PROJECT.md"), "");
        assert_eq!(literal_prefix("a/b/c.md"), "a/b");
    }
}
