//! Scope verification: did a change touch only the files it owns?
//!
//! This is the engine behind `curate verify`. A [`Scope`] is built from the
//! owned and read-only patterns of a change; [`verify`] checks a list of
//! touched files against it and returns a [`Verdict`].
//!
//! # Pattern rules
//!
//! * A pattern is a **glob** when it contains one of `*`, `?`, `[` or `{`;
//!   otherwise it is a **literal path** that matches itself (after
//!   normalisation, see [`normalize`]) and everything below it, as a folder:
//!   `src/auth` and `src/auth/` both cover `src/auth/a.rs` and
//!   `src/auth/x/.env`.
//! * A glob that ends in `/` (or `\`) names folders and covers everything
//!   below them too.
//! * In a glob, `*` and `?` never cross a `/`; `**` does. A `**` component
//!   matches dot-files like any other file (`src/**` covers `src/.env`), and
//!   so does `*` (`src/*` covers `src/.env`).
//! * `{a,b}` is alternation, `[abc]` a character class, `[!abc]` its negation.
//! * `\` is a path separator, never an escape: write `[*]` to match a
//!   literal `*`.
//! * `<id>` anywhere in a pattern is replaced by the change id (escaped, so
//!   glob characters in the id match literally).
//! * Patterns are normalised like paths (`./`, repeated `/`, `\`); a pattern
//!   that is absolute, names a drive, or contains a `..` component in a glob
//!   (or a `..` that escapes the root in a literal) is an error.
//! * Matching is case-sensitive.
//!
//! A touched file that matches a read-only pattern is a violation even if it
//! also matches an owned pattern (read-only wins); a touched file that
//! matches no owned pattern is a violation. An empty touched list is valid.

use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;
use std::process::Command;

use globset::{GlobSet, GlobSetBuilder};

/// Errors raised while building a [`Scope`], normalising paths or asking git.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// A glob pattern that globset rejected.
    #[error("invalid glob {glob:?}: {source}")]
    InvalidGlob {
        /// The pattern as it was given.
        glob: String,
        /// The underlying globset error.
        #[source]
        source: globset::Error,
    },
    /// A pattern that is not a glob error but still unusable (empty,
    /// absolute, escaping the root, ...).
    #[error("invalid pattern {pattern:?}: {reason}")]
    InvalidPattern {
        /// The pattern as it was given.
        pattern: String,
        /// Why it was rejected.
        reason: String,
    },
    /// A pattern uses `<id>` but the change id is blank.
    #[error("pattern {pattern:?} uses <id> but the change id is empty")]
    EmptyChangeId {
        /// The pattern as it was given.
        pattern: String,
    },
    /// A touched path that cannot be normalised to a repository-relative path.
    #[error("invalid path {path:?}: {reason}")]
    InvalidPath {
        /// The path as it was given.
        path: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// A revision that would be taken for an option, or is empty.
    #[error("invalid revision {rev:?}: {reason}")]
    InvalidRev {
        /// The revision as it was given.
        rev: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// `git` could not be started at all.
    #[error("could not run git: {source}")]
    GitSpawn {
        /// The I/O error from spawning the process.
        #[source]
        source: std::io::Error,
    },
    /// `git` ran and failed.
    #[error("`{command}` failed ({status}): {stderr}")]
    GitFailed {
        /// The git command line (without the `-C`/`-c` prefix).
        command: String,
        /// The exit status as text.
        status: String,
        /// The first non-empty line of git's stderr.
        stderr: String,
    },
    /// `git` printed something this module does not understand.
    #[error("unexpected output from `{command}`: {detail}")]
    GitOutput {
        /// The git command line.
        command: String,
        /// What was wrong with it.
        detail: String,
    },
    /// git reported a path that is not valid UTF-8.
    #[error("git reported a path that is not valid UTF-8: {path:?}")]
    NonUtf8Path {
        /// The path, decoded lossily.
        path: String,
    },
}

/// Which rule a touched file broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationRule {
    /// The file matches a read-only pattern.
    ReadOnly,
    /// The file matches none of the owned patterns.
    OutsideOwned,
    /// A checkable success criterion failed (`--run-criteria`).
    CriterionFailed,
}

impl ViolationRule {
    /// Human-readable text of the rule.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only file",
            Self::OutsideOwned => "outside the owned globs",
            Self::CriterionFailed => "success criterion failed",
        }
    }

    /// The learning signal an orchestrator records (seed 000's `swarm_complete`).
    #[must_use]
    pub const fn signal(self) -> &'static str {
        match self {
            Self::ReadOnly => "readonly_touched",
            Self::OutsideOwned => "scope_creep",
            Self::CriterionFailed => "criterion_failed",
        }
    }
}

impl fmt::Display for ViolationRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One touched file that broke a rule, or a success criterion that failed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Violation {
    /// The normalised path of the file (empty for a criterion).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub file: String,
    /// The rule it broke.
    pub rule: ViolationRule,
    /// The rule's learning signal: `scope_creep`, `readonly_touched`, `criterion_failed`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The criterion that failed, with its exit code (`None`: a signal or the timeout).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub criterion: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
}

impl Violation {
    /// A file that broke `rule`.
    #[must_use]
    pub fn file(file: String, rule: ViolationRule) -> Violation {
        Violation {
            file,
            rule,
            kind: rule.signal(),
            criterion: None,
            exit_code: None,
        }
    }

    /// A criterion that failed.
    #[must_use]
    pub fn criterion(o: &crate::criteria::Outcome) -> Violation {
        Violation {
            file: String::new(),
            rule: ViolationRule::CriterionFailed,
            kind: ViolationRule::CriterionFailed.signal(),
            criterion: Some(o.criterion.clone()),
            exit_code: o.exit_code,
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.criterion {
            Some(c) => write!(f, "{}: {}", c, self.rule),
            None => write!(f, "{}: {}", self.file, self.rule),
        }
    }
}

/// The result of [`verify`]: `valid` is true exactly when `violations` is
/// empty.
#[derive(Debug, serde::Serialize)]
pub struct Verdict {
    /// Whether every touched file was allowed.
    pub valid: bool,
    /// Violations, in the byte-wise order of the normalised file paths (then the failed
    /// criteria, in order).
    pub violations: Vec<Violation>,
    /// The checkable success criteria, run (`--run-criteria`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub criteria: Vec<crate::criteria::Outcome>,
}

impl Verdict {
    /// Adds the criteria that ran; each failure is a violation.
    #[must_use]
    pub fn with_criteria(mut self, criteria: Vec<crate::criteria::Outcome>) -> Verdict {
        self.violations.extend(
            criteria
                .iter()
                .filter(|o| !o.passed)
                .map(Violation::criterion),
        );
        self.valid = self.violations.is_empty();
        self.criteria = criteria;
        self
    }

    /// The verdict as it may be shown: a touched path, and a line of a criterion's output,
    /// that holds a secret (`rule_of` names the rule it holds one by) replaced by words that
    /// name the rule only; a criterion's text and command (the task file's words) with the
    /// secret itself replaced (`<secret: rule>`). A verdict is printed, logged and sent to an
    /// orchestrator.
    #[must_use]
    pub fn hiding_secrets(mut self, rule_of: impl Fn(&str) -> Option<&'static str>) -> Verdict {
        let redacted = |text: &mut String| {
            if rule_of(text).is_some() {
                *text = crate::trust::redact::redact(text);
            }
        };
        for v in &mut self.violations {
            if let Some(rule) = rule_of(&v.file).filter(|_| !v.file.is_empty()) {
                v.file = format!("<a path that holds a secret ({rule})>");
            }
            if let Some(c) = &mut v.criterion {
                redacted(c);
            }
        }
        for o in &mut self.criteria {
            redacted(&mut o.criterion);
            redacted(&mut o.command);
            if o.output_tail.lines().any(|line| rule_of(line).is_some()) {
                o.output_tail = o
                    .output_tail
                    .lines()
                    .map(|line| match rule_of(line) {
                        Some(rule) => format!("<a line that holds a secret ({rule})>"),
                        None => line.to_owned(),
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
            }
        }
        self
    }
}

/// The compiled owned and read-only patterns of one change.
#[derive(Debug, Clone)]
pub struct Scope {
    owned: GlobSet,
    readonly: GlobSet,
    owned_patterns: Vec<String>,
    readonly_patterns: Vec<String>,
}

impl Scope {
    /// Compiles the owned and read-only patterns of change `change`.
    ///
    /// `<id>` in a pattern is replaced by `change`. See the module
    /// documentation for the pattern rules.
    ///
    /// # Errors
    ///
    /// [`VerifyError::InvalidGlob`] for a glob globset rejects (naming the
    /// glob), [`VerifyError::InvalidPattern`] for an empty, absolute or
    /// escaping pattern, [`VerifyError::EmptyChangeId`] when a pattern uses
    /// `<id>` and `change` is blank.
    pub fn new(change: &str, owned: &[String], readonly: &[String]) -> Result<Self, VerifyError> {
        let (owned, owned_patterns) = compile_set(change, owned)?;
        let (readonly, readonly_patterns) = compile_set(change, readonly)?;
        Ok(Self {
            owned,
            readonly,
            owned_patterns,
            readonly_patterns,
        })
    }

    /// The owned patterns as given, with `<id>` substituted.
    #[must_use]
    pub fn owned_patterns(&self) -> &[String] {
        &self.owned_patterns
    }

    /// The read-only patterns as given, with `<id>` substituted.
    #[must_use]
    pub fn readonly_patterns(&self) -> &[String] {
        &self.readonly_patterns
    }

    /// The rule a normalised path breaks, if any.
    #[must_use]
    pub fn check(&self, normalized: &str) -> Option<ViolationRule> {
        if self.readonly.is_match(normalized) {
            Some(ViolationRule::ReadOnly)
        } else if self.owned.is_match(normalized) {
            None
        } else {
            Some(ViolationRule::OutsideOwned)
        }
    }
}

fn compile_set(change: &str, patterns: &[String]) -> Result<(GlobSet, Vec<String>), VerifyError> {
    let mut builder = GlobSetBuilder::new();
    let mut raw = Vec::with_capacity(patterns.len());
    for pattern in patterns {
        let (globs, substituted) = compile_pattern(change, pattern)?;
        for glob in globs {
            builder.add(glob);
        }
        raw.push(substituted);
    }
    let set = builder.build().map_err(|source| VerifyError::InvalidGlob {
        glob: patterns.join(" "),
        source,
    })?;
    Ok((set, raw))
}

const GLOB_CHARS: [char; 4] = ['*', '?', '[', '{'];
const ID_PLACEHOLDER: &str = "<id>";

/// Compiles one pattern into one or two globs; returns them and the pattern
/// with `<id>` substituted.
fn compile_pattern(
    change: &str,
    pattern: &str,
) -> Result<(Vec<globset::Glob>, String), VerifyError> {
    let invalid = |reason: &str| VerifyError::InvalidPattern {
        pattern: pattern.to_owned(),
        reason: reason.to_owned(),
    };
    if pattern.is_empty() {
        return Err(invalid("empty pattern"));
    }
    let uses_id = pattern.contains(ID_PLACEHOLDER);
    if uses_id && change.trim().is_empty() {
        return Err(VerifyError::EmptyChangeId {
            pattern: pattern.to_owned(),
        });
    }
    let is_glob = pattern.contains(GLOB_CHARS);
    // A literal covers what lies below it too, as a literal folder does in a compile: a
    // task that owns `src/auth` owns the module, and one that reads it may not write in it.
    let is_folder = pattern.ends_with(['/', '\\']) || !is_glob;
    let substituted = pattern.replace(ID_PLACEHOLDER, change);

    let base = if is_glob {
        let id = globset::escape(change);
        normalize_glob(&pattern.replace(ID_PLACEHOLDER, &id)).map_err(invalid)?
    } else {
        let norm = normalize(&substituted).map_err(|e| match e {
            VerifyError::InvalidPath { reason, .. } => invalid(reason),
            other => other,
        })?;
        globset::escape(&norm)
    };

    let mut sources = vec![base.clone()];
    if is_folder {
        sources.push(format!("{base}/**"));
    }
    let globs = sources
        .iter()
        .map(|source| {
            crate::util::glob::compile(source).map_err(|err| VerifyError::InvalidGlob {
                glob: pattern.to_owned(),
                source: err,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((globs, substituted))
}

/// Normalises a glob with the one path normaliser; a glob may not hold `..` at all (what it
/// would match above or beside its folder is not what its writer meant).
fn normalize_glob(glob: &str) -> Result<String, &'static str> {
    if glob.replace('\\', "/").split('/').any(|part| part == "..") {
        return Err("`..` is not allowed in a glob");
    }
    crate::model::paths::normalize(glob).map_err(crate::model::paths::Escape::problem)
}

/// Normalises a repository-relative path: `\` becomes `/`, `./` and
/// repeated `/` go, `a/../b` becomes `b`.
///
/// For example `./a//b\\c` becomes `a/b/c` and `a/../b` becomes `b`.
///
/// # Errors
///
/// [`VerifyError::InvalidPath`] (naming the path) for an absolute path, a
/// drive letter (`C:...`), a `..` that escapes the root, or a path that
/// names the root itself (empty, `.`, `a/..`).
pub fn normalize(path: &str) -> Result<String, VerifyError> {
    crate::model::paths::normalize(path).map_err(|e| VerifyError::InvalidPath {
        path: path.to_owned(),
        reason: e.problem(),
    })
}

/// Checks every touched file against `scope`.
///
/// The touched paths are normalised, deduplicated and sorted byte-wise;
/// violations come in that order.
///
/// # Errors
///
/// [`VerifyError::InvalidPath`] for the first touched path that cannot be
/// normalised.
pub fn verify(scope: &Scope, touched: &[String]) -> Result<Verdict, VerifyError> {
    let files = touched
        .iter()
        .map(|path| normalize(path))
        .collect::<Result<BTreeSet<String>, _>>()?;
    let violations: Vec<Violation> = files
        .into_iter()
        .filter_map(|file| scope.check(&file).map(|rule| Violation::file(file, rule)))
        .collect();
    Ok(Verdict {
        valid: violations.is_empty(),
        violations,
        criteria: Vec::new(),
    })
}

/// Splits a list of touched files.
///
/// Entries are NUL-separated when the text holds any NUL byte, otherwise
/// newline-separated. In newline mode a trailing `\r` is trimmed from each
/// line and a leading UTF-8 byte-order mark is dropped; NUL-separated entries
/// are taken exactly. Empty entries are skipped; bytes that are not UTF-8 are
/// replaced with U+FFFD.
#[must_use]
pub fn parse_touched_list(text: &[u8]) -> Vec<String> {
    let nul_mode = memchr::memchr(0, text).is_some();
    if nul_mode {
        return text
            .split(|&b| b == 0)
            .filter(|entry| !entry.is_empty())
            .map(|entry| String::from_utf8_lossy(entry).into_owned())
            .collect();
    }
    let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
    text.split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .filter(|line| !line.is_empty())
        .map(|line| String::from_utf8_lossy(line).into_owned())
        .collect()
}

/// Lists the files touched since `rev` in the repository at `repo_root`.
///
/// That is every file that differs between `rev` and the working tree
/// (`git diff --name-status -z --find-renames REV`: modified, added —
/// staged or not yet —, deleted, type-changed, unmerged; for a rename both
/// the old and the new path, for a copy the new path), plus every untracked
/// file that is not ignored (`git ls-files --others --exclude-standard`).
/// Paths are relative to the top of the work tree, even when `repo_root` is
/// a subfolder, and come sorted and deduplicated.
///
/// # Errors
///
/// [`VerifyError::InvalidRev`] when `rev` is empty or starts with `-`;
/// [`VerifyError::GitSpawn`] when git cannot be run;
/// [`VerifyError::GitFailed`] (with git's first stderr line) when git fails,
/// e.g. for an unknown revision or a folder outside any repository;
/// [`VerifyError::NonUtf8Path`] / [`VerifyError::GitOutput`] for output
/// this function cannot use.
pub fn git_touched(repo_root: &Path, rev: &str) -> Result<Vec<String>, VerifyError> {
    if rev.trim().is_empty() {
        return Err(VerifyError::InvalidRev {
            rev: rev.to_owned(),
            reason: "empty revision",
        });
    }
    if rev.starts_with('-') {
        return Err(VerifyError::InvalidRev {
            rev: rev.to_owned(),
            reason: "a revision must not start with '-'",
        });
    }

    // Outside a repository `git diff` would silently turn into
    // `git diff --no-index`; fail early with git's own message instead.
    run_git(repo_root, &["rev-parse", "--is-inside-work-tree"])?;

    let mut files = BTreeSet::new();

    let diff_args = [
        "diff",
        "--name-status",
        "-z",
        "--find-renames",
        "--no-ext-diff",
        "--no-color",
        "--end-of-options",
        rev,
        "--",
    ];
    let diff = run_git(repo_root, &diff_args)?;
    parse_name_status(&diff, &diff_args, &mut files)?;

    let untracked_args = [
        "ls-files",
        "--others",
        "--exclude-standard",
        "--full-name",
        "-z",
        "--",
        ":/",
    ];
    let untracked = run_git(repo_root, &untracked_args)?;
    for entry in untracked.split(|&b| b == 0).filter(|e| !e.is_empty()) {
        files.insert(utf8_path(entry)?);
    }

    Ok(files.into_iter().collect())
}

fn run_git(repo_root: &Path, args: &[&str]) -> Result<Vec<u8>, VerifyError> {
    let output = Command::new("git")
        .arg("-C")
        .arg(repo_root)
        .args(["-c", "core.quotepath=off", "-c", "diff.relative=false"])
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|source| VerifyError::GitSpawn { source })?;
    if output.status.success() {
        return Ok(output.stdout);
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let first = stderr
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("(no message)")
        .to_owned();
    Err(VerifyError::GitFailed {
        command: command_text(args),
        status: output.status.to_string(),
        stderr: first,
    })
}

fn command_text(args: &[&str]) -> String {
    let mut text = String::from("git");
    for arg in args {
        text.push(' ');
        text.push_str(arg);
    }
    text
}

fn utf8_path(bytes: &[u8]) -> Result<String, VerifyError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| VerifyError::NonUtf8Path {
        path: String::from_utf8_lossy(bytes).into_owned(),
    })
}

/// Parses `git diff --name-status -z` output into `files`.
fn parse_name_status(
    output: &[u8],
    args: &[&str],
    files: &mut BTreeSet<String>,
) -> Result<(), VerifyError> {
    let malformed = |detail: String| VerifyError::GitOutput {
        command: command_text(args),
        detail,
    };
    let mut fields = output.split(|&b| b == 0);
    while let Some(status) = fields.next() {
        if status.is_empty() {
            // The trailing NUL leaves one empty field at the end.
            continue;
        }
        let mut path = || {
            fields.next().filter(|p| !p.is_empty()).ok_or_else(|| {
                malformed(format!(
                    "status {:?} without a path",
                    String::from_utf8_lossy(status)
                ))
            })
        };
        match status.first() {
            Some(b'R') => {
                let old = path()?;
                let new = path()?;
                files.insert(utf8_path(old)?);
                files.insert(utf8_path(new)?);
            }
            Some(b'C') => {
                // A copy leaves its source untouched: only the copy is new.
                let _source = path()?;
                let new = path()?;
                files.insert(utf8_path(new)?);
            }
            Some(b'A' | b'D' | b'M' | b'T' | b'U' | b'X' | b'B') => {
                files.insert(utf8_path(path()?)?);
            }
            _ => {
                return Err(malformed(format!(
                    "unknown status {:?}",
                    String::from_utf8_lossy(status)
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    fn scope(owned: &[&str], readonly: &[&str]) -> Scope {
        Scope::new("chg-1", &strings(owned), &strings(readonly)).unwrap()
    }

    fn rules(scope: &Scope, touched: &[&str]) -> Vec<(String, ViolationRule)> {
        verify(scope, &strings(touched))
            .unwrap()
            .violations
            .into_iter()
            .map(|v| (v.file, v.rule))
            .collect()
    }

    #[test]
    fn double_star_covers_dot_files() {
        let s = scope(&["src/**"], &[]);
        assert!(rules(&s, &["src/.env", "src/a/.hidden/.x", "src/main.rs"]).is_empty());
        let s = scope(&["src/*"], &[]);
        assert!(rules(&s, &["src/.env"]).is_empty());
        let s = scope(&["**/*.rs"], &[]);
        assert!(rules(&s, &[".hidden/x.rs", "top.rs"]).is_empty());
    }

    #[test]
    fn read_only_wins_over_owned() {
        let s = scope(&["src/**"], &["src/generated/**", "src/lock.rs"]);
        assert_eq!(
            rules(
                &s,
                &[
                    "src/generated/a.rs",
                    "src/lock.rs",
                    "src/ok.rs",
                    "docs/x.md"
                ]
            ),
            vec![
                ("docs/x.md".to_owned(), ViolationRule::OutsideOwned),
                ("src/generated/a.rs".to_owned(), ViolationRule::ReadOnly),
                ("src/lock.rs".to_owned(), ViolationRule::ReadOnly),
            ]
        );
        // Read-only also applies to files that are not owned at all.
        let s = scope(&[], &["README.md"]);
        assert_eq!(
            rules(&s, &["README.md"]),
            vec![("README.md".to_owned(), ViolationRule::ReadOnly)]
        );
    }

    #[test]
    fn empty_touched_list_is_valid() {
        let s = scope(&[], &[]);
        let verdict = verify(&s, &[]).unwrap();
        assert!(verdict.valid);
        assert!(verdict.violations.is_empty());
    }

    #[test]
    fn verdict_serialises_as_specified() {
        let s = scope(&["src/**"], &["src/ro.rs"]);
        let verdict = verify(&s, &strings(&["src/ro.rs", "x"])).unwrap();
        assert!(!verdict.valid);
        assert_eq!(
            serde_json::to_string(&verdict).unwrap(),
            r#"{"valid":false,"violations":[{"file":"src/ro.rs","rule":"read_only","type":"readonly_touched"},{"file":"x","rule":"outside_owned","type":"scope_creep"}]}"#
        );
        assert_eq!(ViolationRule::ReadOnly.to_string(), "read-only file");
        assert_eq!(
            ViolationRule::OutsideOwned.to_string(),
            "outside the owned globs"
        );
        assert_eq!(
            verdict.violations[1].to_string(),
            "x: outside the owned globs"
        );
    }

    #[test]
    fn touched_is_normalised_deduplicated_and_sorted() {
        let s = scope(&["owned.txt"], &[]);
        assert_eq!(
            rules(
                &s,
                &["./b", "b", "a\\x", "a//x", "owned.txt", "./owned.txt", "B"]
            ),
            vec![
                ("B".to_owned(), ViolationRule::OutsideOwned),
                ("a/x".to_owned(), ViolationRule::OutsideOwned),
                ("b".to_owned(), ViolationRule::OutsideOwned),
            ]
        );
    }

    #[test]
    fn normalisation() {
        assert_eq!(normalize("./a//b\\c").unwrap(), "a/b/c");
        assert_eq!(normalize("a/../b").unwrap(), "b");
        assert_eq!(normalize("a/./b/").unwrap(), "a/b");
        assert_eq!(normalize(".\\src\\.env").unwrap(), "src/.env");
        assert_eq!(normalize("a/b/../../c").unwrap(), "c");
        assert_eq!(
            normalize("dir with space/ü.txt").unwrap(),
            "dir with space/ü.txt"
        );
        for bad in [
            "/etc/passwd",
            "\\x",
            "C:\\x",
            "c:x",
            "..",
            "../a",
            "a/../../b",
            "",
            ".",
            "a/..",
        ] {
            let err = normalize(bad).unwrap_err();
            assert!(
                matches!(&err, VerifyError::InvalidPath { path, .. } if path == bad),
                "{bad:?}: {err}"
            );
            assert!(err.to_string().contains(&format!("{bad:?}")), "{err}");
        }
        let s = scope(&["**"], &[]);
        assert!(matches!(
            verify(&s, &strings(&["ok", "../up"])),
            Err(VerifyError::InvalidPath { path, .. }) if path == "../up"
        ));
    }

    #[test]
    fn single_star_does_not_cross_separator() {
        let s = scope(&["src/*.rs"], &[]);
        assert_eq!(
            rules(&s, &["src/a.rs", "src/sub/b.rs"]),
            vec![("src/sub/b.rs".to_owned(), ViolationRule::OutsideOwned)]
        );
        let s = scope(&["src/?.rs"], &[]);
        assert_eq!(rules(&s, &["src/a.rs", "src/ab.rs"]).len(), 1);
        let s = scope(&["src/**/*.rs"], &[]);
        assert!(rules(&s, &["src/a.rs", "src/x/y/b.rs"]).is_empty());
    }

    #[test]
    fn alternation_and_classes() {
        let s = scope(&["{src,tests}/**/*.{rs,toml}", "doc/[ab].md"], &[]);
        assert_eq!(
            rules(
                &s,
                &[
                    "src/a.rs",
                    "tests/x/y.toml",
                    "benches/a.rs",
                    "src/a.py",
                    "doc/a.md",
                    "doc/c.md"
                ]
            ),
            vec![
                ("benches/a.rs".to_owned(), ViolationRule::OutsideOwned),
                ("doc/c.md".to_owned(), ViolationRule::OutsideOwned),
                ("src/a.py".to_owned(), ViolationRule::OutsideOwned),
            ]
        );
    }

    #[test]
    fn literal_patterns() {
        // A literal matches itself (after normalisation) and what lies below it.
        let s = scope(&["./src//lib.rs", "src\\main.rs"], &[]);
        assert_eq!(
            rules(
                &s,
                &["src/lib.rs", "src/main.rs", "src/lib.rsx", "src/lib.rs/x"]
            ),
            vec![("src/lib.rsx".to_owned(), ViolationRule::OutsideOwned),]
        );
        // A trailing slash names a folder: everything below it, dot-files too.
        let s = scope(&["src/auth/"], &[]);
        assert_eq!(
            rules(
                &s,
                &[
                    "src/auth/a.rs",
                    "src/auth/x/.env",
                    "src/authz.rs",
                    "src/auth"
                ]
            ),
            vec![("src/authz.rs".to_owned(), ViolationRule::OutsideOwned)]
        );
        // Without it, the literal covers what lies below it as well.
        let s = scope(&["src/auth"], &[]);
        assert_eq!(
            rules(&s, &["src/auth", "src/auth/a.rs", "src/authz.rs"]),
            vec![("src/authz.rs".to_owned(), ViolationRule::OutsideOwned)]
        );
        // `]` and `}` alone do not make a glob and match literally.
        let s = scope(&["a]b}.txt"], &[]);
        assert!(rules(&s, &["a]b}.txt"]).is_empty());
    }

    #[test]
    fn id_placeholder() {
        let s = Scope::new(
            "chg-42",
            &strings(&["changes/<id>/**", "notes/<id>.md"]),
            &strings(&["changes/<id>/frozen.md"]),
        )
        .unwrap();
        assert_eq!(s.owned_patterns(), ["changes/chg-42/**", "notes/chg-42.md"]);
        assert_eq!(s.readonly_patterns(), ["changes/chg-42/frozen.md"]);
        assert_eq!(
            rules(
                &s,
                &[
                    "changes/chg-42/a.md",
                    "notes/chg-42.md",
                    "changes/chg-43/a.md",
                    "changes/chg-42/frozen.md"
                ]
            ),
            vec![
                (
                    "changes/chg-42/frozen.md".to_owned(),
                    ViolationRule::ReadOnly
                ),
                (
                    "changes/chg-43/a.md".to_owned(),
                    ViolationRule::OutsideOwned
                ),
            ]
        );
        // Glob characters in the id are matched literally.
        let s = Scope::new("a*", &strings(&["x/<id>/*"]), &[]).unwrap();
        assert_eq!(
            rules(&s, &["x/a*/f", "x/ab/f"]),
            vec![("x/ab/f".to_owned(), ViolationRule::OutsideOwned)]
        );
        assert!(matches!(
            Scope::new(" ", &strings(&["x/<id>/*"]), &[]),
            Err(VerifyError::EmptyChangeId { .. })
        ));
    }

    #[test]
    fn invalid_glob_is_an_error_naming_it() {
        for bad in ["src/[a", "src/{a,b", "a/**b/[z-a]"] {
            let err = Scope::new("c", &strings(&["ok/**", bad]), &[]).unwrap_err();
            assert!(
                matches!(&err, VerifyError::InvalidGlob { glob, .. } if glob == bad),
                "{bad}: {err:?}"
            );
            assert!(err.to_string().contains(bad), "{err}");
            assert!(std::error::Error::source(&err).is_some());
        }
        let err = Scope::new("c", &[], &strings(&["[oops"])).unwrap_err();
        assert!(err.to_string().contains("[oops"), "{err}");
    }

    #[test]
    fn unusable_patterns_are_errors_naming_them() {
        for bad in [
            "", "/abs/**", "/abs", "C:/x/*", "../x", "a/../*", "./", "**/../x",
        ] {
            let err = Scope::new("c", &strings(&[bad]), &[]).unwrap_err();
            assert!(
                matches!(&err, VerifyError::InvalidPattern { pattern, .. } if pattern == bad),
                "{bad:?}: {err:?}"
            );
        }
    }

    #[test]
    fn touched_list_parsing() {
        assert_eq!(
            parse_touched_list(b"a\nb\r\n\n c \r\n"),
            strings(&["a", "b", " c "])
        );
        assert_eq!(
            parse_touched_list(b"\xEF\xBB\xBFa\nb"),
            strings(&["a", "b"])
        );
        assert_eq!(
            parse_touched_list(b"a\nb\0c\r\0\0"),
            strings(&["a\nb", "c\r"])
        );
        assert_eq!(parse_touched_list(b""), Vec::<String>::new());
        assert_eq!(parse_touched_list(b"\n\r\n"), Vec::<String>::new());
        assert_eq!(parse_touched_list(b"\xFFx\n"), strings(&["\u{FFFD}x"]));
    }

    #[test]
    fn rejects_option_like_revisions() {
        let dir = std::env::temp_dir();
        for rev in ["-x", "--output=/tmp/pwned", ""] {
            assert!(matches!(
                git_touched(&dir, rev),
                Err(VerifyError::InvalidRev { .. })
            ));
        }
    }

    #[test]
    fn name_status_parsing() {
        let mut files = BTreeSet::new();
        parse_name_status(
            b"M\0m.txt\0R087\0old\0new\0C100\0src\0copy\0D\0gone\0A\0ad d\0",
            &["diff"],
            &mut files,
        )
        .unwrap();
        assert_eq!(
            files.into_iter().collect::<Vec<_>>(),
            strings(&["ad d", "copy", "gone", "m.txt", "new", "old"])
        );
        let mut files = BTreeSet::new();
        assert!(matches!(
            parse_name_status(b"R100\0old\0", &["diff"], &mut files),
            Err(VerifyError::GitOutput { .. })
        ));
        assert!(matches!(
            parse_name_status(b"Q\0x\0", &["diff"], &mut files),
            Err(VerifyError::GitOutput { .. })
        ));
    }
}
