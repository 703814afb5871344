//! Admission: the one answer to "may this file's text enter a manifest or a prompt?".
//!
//! Every read of a repository file that may reach a prompt goes through [`admit`]: the
//! compile's measurement, `render --manifest`, the template's `excerpt()`, and `check`.
//! It receives a repository-relative path and returns the file's bytes, or a [`Refusal`]
//! that says why in words (never a secret's value). In order:
//! 1. the name: no control character, no `.git/` folder, no secret by name;
//! 2. the link: the path is resolved first, and a target outside the repository is never
//!    read; the target's own repository path is judged by the same name rules (a link
//!    `docs/settings.md -> ../.env` is a secret);
//! 3. the file: a regular file only (never a FIFO, socket or device), at most the size
//!    cap, read without blocking and never past the cap;
//! 4. the text: not binary, no secret by content.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::model::paths::{RepoPath, has_control_char};
use crate::trust::secrets::{self, ContentRules};
use crate::trust::spool::Spool;
use crate::util::cache::{DigestCache, key_of};
use crate::util::fault::Fault;
use crate::util::read::{ReadError, open_regular_inside, read_limited};
use crate::util::stamp::Stamp;

/// Why a file may not enter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The name holds a control character (a newline, DEL, …).
    ControlChar,
    /// The file lies inside `.git/` (it holds credentials: `http.extraheader`).
    GitFolder,
    /// A secret by its name (as named, or the name of the file a link leads to).
    SecretName(&'static str),
    /// A secret by its content: the rule and the line, never the value.
    SecretContent { rule: &'static str, line: usize },
    /// A link that leads out of the repository.
    Outside,
    /// The file does not exist (the system's words).
    Missing(String),
    /// The file cannot be read (the system refused).
    Unreadable(String),
    /// Not a regular file: a folder, FIFO, socket or device.
    NotRegular(&'static str),
    /// Larger than the size cap.
    TooLarge { size: u64, cap: u64 },
    /// A NUL byte in the first 8 KiB.
    Binary,
    /// Read again, it no longer has the content admitted before.
    Changed,
}

impl Refusal {}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::ControlChar => f.write_str("its name holds a control character"),
            Refusal::GitFolder => f.write_str("inside `.git/`, never read"),
            Refusal::SecretName(rule) => write!(f, "secret: {rule}"),
            Refusal::SecretContent { rule, line } => {
                write!(f, "secret by content: {rule} on line {line}")
            }
            Refusal::Outside => f.write_str("a link out of the repository, never read"),
            Refusal::Missing(e) | Refusal::Unreadable(e) => write!(f, "cannot be read: {e}"),
            Refusal::NotRegular(kind) => write!(f, "not a regular file ({kind}), never read"),
            Refusal::TooLarge { size, cap } => {
                write!(f, "{size} bytes, over --max-file-size {cap}")
            }
            Refusal::Binary => f.write_str("binary (a NUL byte in the first 8 KiB)"),
            Refusal::Changed => f.write_str("changed while curate was reading it"),
        }
    }
}

/// True when the first 8 KiB hold a NUL byte.
#[must_use]
pub fn is_binary(bytes: &[u8]) -> bool {
    memchr::memchr(0, &bytes[..bytes.len().min(8192)]).is_some()
}

/// The shared content rules, or the error that they did not build (every reader fails
/// closed on it: nothing is admitted without them).
pub fn rules() -> crate::util::fault::Result<&'static ContentRules> {
    ContentRules::shared().map_err(|e| Fault::SecretRules(Box::new(e.clone())))
}

/// The judgement of a path by its name alone (no disk access): control characters, `.git/`
/// and the secret name rules. (A path that holds a secret by content is left out before
/// anything reads it, by the compile.)
pub fn judge_name(path: &str) -> Result<(), Refusal> {
    if has_control_char(path) {
        return Err(Refusal::ControlChar);
    }
    if path.split('/').any(|s| s.eq_ignore_ascii_case(".git")) {
        return Err(Refusal::GitFolder);
    }
    match secrets::by_path(path) {
        Some(rule) => Err(Refusal::SecretName(rule)),
        None => Ok(()),
    }
}

/// Resolves `path` (repository-relative) inside `root` (canonical): the target's
/// repository-relative path, judged by name when it differs from `path`.
pub fn resolve(root: &Path, path: &RepoPath) -> Result<String, Refusal> {
    let full = root.join(path);
    let real = match full.canonicalize() {
        Ok(real) => real,
        Err(e) if crate::util::read::is_absent(&e) => {
            return Err(Refusal::Missing(e.to_string()));
        }
        Err(e) => return Err(Refusal::Unreadable(e.to_string())),
    };
    let Ok(inside) = real.strip_prefix(root) else {
        return Err(Refusal::Outside);
    };
    let target: Vec<&str> = inside
        .components()
        .map(|c| c.as_os_str().to_str().unwrap_or("\u{7f}"))
        .collect();
    let target = target.join("/");
    if target != path.as_str() {
        judge_name(&target)?;
    }
    Ok(target)
}

/// Reads `path` (repository-relative, under the canonical `root`) if it may enter: its
/// bytes, at most `max_file_size` of them (0 = no cap). See the module docs for the order.
pub fn admit(
    root: &Path,
    path: &RepoPath,
    max_file_size: u64,
    rules: &ContentRules,
) -> Result<Vec<u8>, Refusal> {
    let bytes = read_inside(root, path, max_file_size)?;
    judge_text(&bytes, rules)?;
    Ok(bytes)
}

/// What [`admit_hashed`] admitted.
#[derive(Debug)]
pub struct Admitted {
    pub bytes: Vec<u8>,
    /// Their sha256.
    pub key: [u8; 32],
    /// The file's stamp taken after the bytes were read (`None` where the platform has none).
    pub stamp: Option<Stamp>,
}

/// [`admit`], with the content scan's clean verdicts kept by the text's sha256 in
/// `verdicts` (a [`DigestCache::verdicts`]): a text the scanner passed before is not
/// scanned again. The bytes, their sha256, which the caller needs anyway, and the file's
/// stamp after the read (what checks it when it is read again).
pub fn admit_hashed(
    root: &Path,
    path: &RepoPath,
    max_file_size: u64,
    rules: &ContentRules,
    verdicts: &DigestCache,
) -> Result<Admitted, Refusal> {
    let (bytes, stamp) = read_inside_stamped(root, path, max_file_size, true)?;
    if is_binary(&bytes) {
        return Err(Refusal::Binary);
    }
    let key = key_of(&bytes);
    if !is_clean(verdicts, &key) {
        scan(&bytes, rules)?;
        verdicts.put_key(key, CLEAN);
    }
    Ok(Admitted { bytes, key, stamp })
}

/// True when the content scan passed the text whose sha256 is `key` before (`verdicts`, a
/// [`DigestCache::verdicts`]).
#[must_use]
pub fn is_clean(verdicts: &DigestCache, key: &[u8; 32]) -> bool {
    verdicts.get_key(key) == Some(CLEAN)
}

/// A verdict of [`admit_hashed`]'s cache: no content rule matched.
const CLEAN: u64 = 0;

/// Step 4 of [`admit`] on bytes read under steps 1–3 ([`read_unjudged`]): not binary, no
/// secret by content.
pub fn judge_text(bytes: &[u8], rules: &ContentRules) -> Result<(), Refusal> {
    if is_binary(bytes) {
        return Err(Refusal::Binary);
    }
    scan(bytes, rules)
}

/// The content rules over `bytes`: a hit is a refusal naming the rule and the line.
fn scan(bytes: &[u8], rules: &ContentRules) -> Result<(), Refusal> {
    match rules.scan(bytes) {
        Some(hit) => Err(Refusal::SecretContent {
            rule: hit.rule,
            line: hit.line,
        }),
        None => Ok(()),
    }
}

/// Steps 1–3 of [`admit`] (name, link, regular file, size), without the text's: for a file
/// only searched, whose text goes nowhere unless [`judge_text`] lets it in after.
pub fn read_unjudged(root: &Path, path: &RepoPath, max_file_size: u64) -> Result<Vec<u8>, Refusal> {
    read_inside(root, path, max_file_size)
}

/// Reads a file [`admit`] let in before, again (to count its tokens, to render it): the
/// name, link and regular-file checks as before, and bytes whose sha256 must be
/// `sha256` (hex), the content admitted then; the same bytes need no second scan.
pub fn reread(
    root: &Path,
    path: &RepoPath,
    max_file_size: u64,
    sha256: &str,
) -> Result<Vec<u8>, Refusal> {
    reread_vouched(root, path, max_file_size, sha256, None)
}

/// [`reread`]; when `vouched` (a stamp the compile trusted, taken after it read the bytes
/// of hash `sha256`) is the file's stamp after this read too, the file has not been written
/// since and its hash is not computed again.
fn reread_vouched(
    root: &Path,
    path: &RepoPath,
    max_file_size: u64,
    sha256: &str,
    vouched: Option<Stamp>,
) -> Result<Vec<u8>, Refusal> {
    let (bytes, stamp) = read_inside_stamped(root, path, max_file_size, vouched.is_some())?;
    if (stamp.is_some() && stamp == vouched) || crate::util::digest::hex(&bytes) == sha256 {
        Ok(bytes)
    } else {
        Err(Refusal::Changed)
    }
}

/// What a compile admitted, held for the rest of the process's work on it (the token
/// count after the budgets, a degraded file's outline, the render's excerpt): one read and
/// one hash per file. Bounded by a byte budget: a file past it goes to the spool when there
/// is one (a compile a render follows), else is read again by [`reread`] when it is needed,
/// checked by the stamp the compile trusted when it has one (the file not written since),
/// else by its hash.
pub struct Held {
    budget: u64,
    used: AtomicU64,
    files: Mutex<Files>,
    /// Where bytes past the budget are kept, if anywhere.
    spool: Option<Spool>,
    /// Files not held, by the sha256 admitted and a stamp that vouches for those bytes.
    vouched: Mutex<HashMap<String, (String, Stamp)>>,
}

/// Held bytes by file, with the sha256 they were admitted with.
type Files = HashMap<String, (String, Arc<Vec<u8>>)>;

/// The bytes a compile holds for its render, at most (the rest is read again): enough for
/// any change within the line caps many times over, and a bulk bundle stays under 150 MiB.
pub const HOLD_BYTES: u64 = 48 << 20;

impl Held {
    /// A store of at most `budget` bytes (0: holds nothing).
    #[must_use]
    pub fn new(budget: u64) -> Held {
        Held {
            budget,
            used: AtomicU64::new(0),
            files: Mutex::new(HashMap::new()),
            spool: None,
            vouched: Mutex::new(HashMap::new()),
        }
    }

    /// [`Held::new`], and what does not fit `budget` is kept in a [`Spool`] of at most
    /// `spool` bytes: for a compile whose render writes the files' text.
    #[must_use]
    pub fn spooling(budget: u64, spool: u64) -> Held {
        Held {
            spool: Some(Spool::new(spool)),
            ..Held::new(budget)
        }
    }

    /// The bytes the budget has left: what is not held now.
    #[must_use]
    pub fn room(&self) -> u64 {
        self.budget
            .saturating_sub(self.used.load(Ordering::Relaxed))
    }

    fn files(&self) -> std::sync::MutexGuard<'_, Files> {
        self.files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Holds the bytes `path` was admitted with (`sha256` their hash), if the budget allows;
    /// else spools them, if there is a spool with room; else keeps `stamp`, when given, as
    /// the file's stamp that vouches for them.
    pub fn hold(&self, path: &RepoPath, sha256: &str, bytes: Vec<u8>, stamp: Option<Stamp>) {
        let size = bytes.len() as u64;
        let before = self.used.fetch_add(size, Ordering::Relaxed);
        if before + size > self.budget {
            self.used.fetch_sub(size, Ordering::Relaxed);
            if let Some(spool) = &self.spool
                && spool.put(path.as_str(), sha256, &bytes)
            {
                return;
            }
            if let Some(stamp) = stamp {
                self.vouch(path, sha256, stamp);
            }
            return;
        }
        self.files().insert(
            path.as_str().to_owned(),
            (sha256.to_owned(), Arc::new(bytes)),
        );
    }

    /// Keeps `stamp` as what vouches that `path`'s bytes are those of hash `sha256` (a file
    /// known by its stamp, not read by the compile): its read is checked by the stamp.
    pub fn vouch(&self, path: &RepoPath, sha256: &str, stamp: Stamp) {
        self.vouched
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(path.as_str().to_owned(), (sha256.to_owned(), stamp));
    }

    /// The stamp that vouches for `path`'s bytes of hash `sha256`, if any.
    fn vouched(&self, path: &RepoPath, sha256: &str) -> Option<Stamp> {
        self.vouched
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(path.as_str())
            .filter(|(sha, _)| sha == sha256)
            .map(|(_, stamp)| *stamp)
    }

    /// The bytes of `path` admitted with hash `sha256`: the held ones, else read again
    /// ([`reread`]).
    pub fn read(
        &self,
        root: &Path,
        path: &RepoPath,
        max_file_size: u64,
        sha256: &str,
    ) -> Result<Arc<Vec<u8>>, Refusal> {
        let held = self.files().get(path.as_str()).cloned();
        self.or_reread(held, root, path, max_file_size, sha256)
    }

    /// [`Held::read`], and `path` is no longer held: for the last use (the render).
    pub fn take(
        &self,
        root: &Path,
        path: &RepoPath,
        max_file_size: u64,
        sha256: &str,
    ) -> Result<Arc<Vec<u8>>, Refusal> {
        let held = self.files().remove(path.as_str());
        if let Some((_, bytes)) = &held {
            self.used.fetch_sub(bytes.len() as u64, Ordering::Relaxed);
        }
        let bytes = self.or_reread(held, root, path, max_file_size, sha256);
        if let Some(spool) = &self.spool {
            spool.forget(path.as_str());
        }
        bytes
    }

    /// The held bytes when they have the hash asked for, else the spooled ones, else the
    /// file read again.
    fn or_reread(
        &self,
        held: Option<(String, Arc<Vec<u8>>)>,
        root: &Path,
        path: &RepoPath,
        max_file_size: u64,
        sha256: &str,
    ) -> Result<Arc<Vec<u8>>, Refusal> {
        match held {
            Some((sha, bytes)) if sha == sha256 => Ok(bytes),
            _ => {
                if let Some(bytes) = self
                    .spool
                    .as_ref()
                    .and_then(|s| s.get(path.as_str(), sha256))
                {
                    return Ok(Arc::new(bytes));
                }
                let vouched = self.vouched(path, sha256);
                reread_vouched(root, path, max_file_size, sha256, vouched).map(Arc::new)
            }
        }
    }
}

impl Default for Held {
    /// A store that holds nothing: every use reads again.
    fn default() -> Held {
        Held::new(0)
    }
}

impl fmt::Debug for Held {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Held")
            .field("budget", &self.budget)
            .field("files", &self.files().len())
            .field("bytes", &self.used.load(Ordering::Relaxed))
            .field("spool", &self.spool)
            .finish_non_exhaustive()
    }
}

/// The sha256 (hex) of a file read under steps 1–3 of [`admit`] (name, link, regular
/// file, size), without the content checks: for comparing a file with a recorded hash, when
/// its text goes nowhere.
pub fn hash(root: &Path, path: &RepoPath, max_file_size: u64) -> Result<String, Refusal> {
    read_inside(root, path, max_file_size).map(|bytes| crate::util::digest::hex(&bytes))
}

/// Steps 1–3 of [`admit`]: the name, the link, the regular file and its size.
fn read_inside(root: &Path, path: &RepoPath, max_file_size: u64) -> Result<Vec<u8>, Refusal> {
    read_inside_stamped(root, path, max_file_size, false).map(|(bytes, _)| bytes)
}

/// [`read_inside`], and with `stamped` the file's stamp taken after its bytes were read
/// (`None` where the platform has none).
fn read_inside_stamped(
    root: &Path,
    path: &RepoPath,
    max_file_size: u64,
    stamped: bool,
) -> Result<(Vec<u8>, Option<Stamp>), Refusal> {
    judge_name(path.as_str())?;
    // Most paths have no link on the way: the kernel says so by opening them beneath the
    // root with links refused, and the link step has nothing to judge. Any refusal there
    // (a link, a missing or odd file) takes the full path below, which says why.
    #[cfg(target_os = "linux")]
    if let Some(Ok((file, size))) = crate::util::read::open_regular_beneath(root, path.as_str()) {
        return read_opened(&file, size, &root.join(path), max_file_size, stamped);
    }
    let target = resolve(root, path)?;
    let full = root.join(&target);
    // The target has no link on its way: opened so that none can be put there meanwhile.
    let (file, size) = open_regular_inside(root, &target).map_err(refusal)?;
    read_opened(&file, size, &full, max_file_size, stamped)
}

/// Step 4 of [`admit`] on an opened regular file: the size cap, then the bytes.
fn read_opened(
    file: &std::fs::File,
    size: u64,
    full: &Path,
    max_file_size: u64,
    stamped: bool,
) -> Result<(Vec<u8>, Option<Stamp>), Refusal> {
    if max_file_size > 0 && size > max_file_size {
        return Err(Refusal::TooLarge {
            size,
            cap: max_file_size,
        });
    }
    let bytes = read_limited(file, full, max_file_size, size).map_err(refusal)?;
    Ok((bytes, stamped.then(|| Stamp::of_file(file)).flatten()))
}

/// A read's failure as a refusal.
fn refusal(e: ReadError) -> Refusal {
    match e {
        ReadError::NotRegular { kind, .. } => Refusal::NotRegular(kind),
        ReadError::Io { source, .. } => Refusal::Unreadable(source.to_string()),
        // It grew past the cap while being read: at least one byte more.
        ReadError::TooLarge { cap, .. } => Refusal::TooLarge { size: cap + 1, cap },
    }
}

/// A path argument as a path inside the repository: relative to the root, never absolute,
/// never climbing out with `..`, never through a link that leads out, never a file whose
/// name marks a secret. What does not exist is left to the reader to report.
pub fn contained(
    root: &Path,
    origin: &str,
    given: &str,
) -> crate::util::fault::Result<std::path::PathBuf> {
    let escape = |problem| Fault::Escape {
        origin: origin.to_owned(),
        path: given.to_owned(),
        problem,
    };
    if has_control_char(given) {
        return Err(escape("holds a control character"));
    }
    let rel = RepoPath::new(given).map_err(|e| escape(e.problem()))?;
    // The same name and link steps as a read's (`admit`).
    match judge_name(rel.as_str()).and_then(|()| resolve(root, &rel)) {
        Ok(target) => Ok(root.join(target)),
        Err(Refusal::Missing(_)) => Ok(root.join(rel.as_str())),
        Err(Refusal::Outside) => Err(escape(
            "leads out of the repository through a link: never read",
        )),
        Err(refusal) => Err(Fault::Invalid {
            path: rel.as_str().into(),
            message: format!("never read: {refusal}"),
        }),
    }
}

/// The most a host's own settings file outside the repository may hold.
pub const HOST_CONFIG_CAP: u64 = 4 * 1024 * 1024;

/// Reads a host's own settings file outside the repository (Codex's user `config.toml`,
/// for what `doctor` reports of project trust and hook approval): `Ok(None)` when nothing
/// is there; a regular file only, at most [`HOST_CONFIG_CAP`]. Its text never enters a
/// manifest or a prompt, and nothing prints its values.
pub fn read_host_config(path: &Path) -> crate::util::fault::Result<Option<Vec<u8>>> {
    match crate::util::read::read_capped(path, HOST_CONFIG_CAP) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(ReadError::Io { source, .. }) if crate::util::read::is_absent(&source) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Reads one of the small files curate keeps in a repository (an overrides file, an
/// existing manifest or lock, a repository contracts file or template) at `path`
/// (absolute, under the canonical `root`): `Ok(None)` when nothing is there; an error when
/// it is a link out of the repository, a secret by name, not a regular file, or over the
/// input cap. Never reads through a link that leaves the repository.
pub fn read_repo_file(root: &Path, path: &Path) -> crate::util::fault::Result<Option<Vec<u8>>> {
    match std::fs::symlink_metadata(path) {
        Err(e) if crate::util::read::is_absent(&e) => return Ok(None),
        Err(source) => {
            return Err(Fault::Read {
                path: path.to_owned(),
                source,
            });
        }
        Ok(_) => {}
    }
    let real = path.canonicalize().map_err(|source| Fault::Read {
        path: path.to_owned(),
        source,
    })?;
    let Ok(inside) = real.strip_prefix(root) else {
        return Err(Fault::Escape {
            origin: "read".to_owned(),
            path: path.display().to_string(),
            problem: "leads out of the repository through a link: never read",
        });
    };
    let rel: Vec<&str> = inside
        .components()
        .map(|c| c.as_os_str().to_str().unwrap_or("\u{7f}"))
        .collect();
    if let Err(refusal) = judge_name(&rel.join("/")) {
        return Err(Fault::Invalid {
            path: path.to_owned(),
            message: format!("never read: {refusal}"),
        });
    }
    Ok(Some(crate::util::read::read_capped(
        &real,
        crate::util::read::INPUT_CAP,
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rp(path: &str) -> RepoPath {
        RepoPath::new(path).unwrap()
    }

    /// A file not held is read again and checked by the stamp that vouched for it: while
    /// the stamp is the file's, the bytes are taken without a hash; once the file is
    /// written, even to the same size, the hash decides, and other bytes are refused.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_vouched_file_is_checked_by_its_stamp_then_by_its_hash() {
        let dir = tempfile::tempdir().unwrap();
        let root = &dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.md"), b"one\n").unwrap();
        let stamp = crate::util::stamp::Base::open(root)
            .regular_beneath("a.md")
            .unwrap();
        let held = Held::new(0);
        let sha = crate::util::digest::hex(b"one\n");
        held.hold(&rp("a.md"), &sha, b"one\n".to_vec(), Some(stamp));
        assert_eq!(held.vouched(&rp("a.md"), &sha), Some(stamp));
        assert_eq!(held.vouched(&rp("a.md"), "other"), None);
        assert_eq!(*held.read(root, &rp("a.md"), 0, &sha).unwrap(), b"one\n");
        // Vouched for other bytes than the hash asked: the hash decides.
        assert_eq!(
            held.read(root, &rp("a.md"), 0, &crate::util::digest::hex(b"two\n")),
            Err(Refusal::Changed)
        );
        std::fs::write(root.join("a.md"), b"two\n").unwrap();
        assert_eq!(held.take(root, &rp("a.md"), 0, &sha), Err(Refusal::Changed));
        // Written back: another stamp, but the same bytes, so the hash lets them in.
        std::fs::write(root.join("a.md"), b"one\n").unwrap();
        assert_eq!(*held.take(root, &rp("a.md"), 0, &sha).unwrap(), b"one\n");
    }

    #[test]
    fn what_is_held_is_used_without_reading_the_file_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("docs")).unwrap();
        std::fs::write(root.join("docs/a.md"), "admitted\n").unwrap();
        let rules = rules().unwrap();
        let held = Held::new(1 << 20);
        let bytes = admit(root, &rp("docs/a.md"), 0, rules).unwrap();
        let sha = crate::util::digest::hex(&bytes);
        held.hold(&rp("docs/a.md"), &sha, bytes, None);
        // Changed on disk after admission: the count and the render use what was admitted.
        std::fs::write(root.join("docs/a.md"), "changed since\n").unwrap();
        let read = held.read(root, &rp("docs/a.md"), 0, &sha).unwrap();
        assert_eq!(read.as_slice(), b"admitted\n");
        let taken = held.take(root, &rp("docs/a.md"), 0, &sha).unwrap();
        assert_eq!(taken.as_slice(), b"admitted\n");
        // Taken: no longer held, so read again, and its hash no longer matches.
        assert_eq!(
            held.read(root, &rp("docs/a.md"), 0, &sha),
            Err(Refusal::Changed)
        );
    }

    #[test]
    fn past_its_budget_nothing_more_is_held() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.md"), "aaaa").unwrap();
        std::fs::write(root.join("b.md"), "bbbb").unwrap();
        let held = Held::new(6);
        let sha = |text: &[u8]| crate::util::digest::hex(text);
        held.hold(&rp("a.md"), &sha(b"aaaa"), b"aaaa".to_vec(), None);
        held.hold(&rp("b.md"), &sha(b"bbbb"), b"bbbb".to_vec(), None);
        std::fs::remove_file(root.join("a.md")).unwrap();
        std::fs::remove_file(root.join("b.md")).unwrap();
        assert_eq!(
            held.read(root, &rp("a.md"), 0, &sha(b"aaaa"))
                .unwrap()
                .as_slice(),
            b"aaaa"
        );
        // Over the budget: read again, and gone from the disk.
        assert!(matches!(
            held.read(root, &rp("b.md"), 0, &sha(b"bbbb")),
            Err(Refusal::Missing(_))
        ));
        // Held under another hash: read again, never the held bytes.
        assert!(held.read(root, &rp("a.md"), 0, &sha(b"other")).is_err());
    }

    /// A compile a render follows: what does not fit the memory hold is spooled, so the
    /// render gives the bytes admitted without reading the file again, changed or gone.
    #[cfg(unix)]
    #[test]
    fn past_the_hold_a_spooled_file_is_not_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let sha = |text: &[u8]| crate::util::digest::hex(text);
        let held = Held::spooling(4, 1 << 20);
        held.hold(&rp("a.md"), &sha(b"aaaa"), b"aaaa".to_vec(), None);
        held.hold(&rp("b.md"), &sha(b"bbbbbb"), b"bbbbbb".to_vec(), None);
        // Neither exists on disk: both come from what was admitted.
        assert_eq!(
            *held.read(root, &rp("b.md"), 0, &sha(b"bbbbbb")).unwrap(),
            b"bbbbbb"
        );
        assert_eq!(
            *held.take(root, &rp("b.md"), 0, &sha(b"bbbbbb")).unwrap(),
            b"bbbbbb"
        );
        // Asked under another hash, or once taken: the file is read again.
        assert!(matches!(
            held.read(root, &rp("a.md"), 0, &sha(b"other")),
            Err(Refusal::Missing(_))
        ));
        std::fs::write(root.join("b.md"), "written since\n").unwrap();
        assert_eq!(
            held.read(root, &rp("b.md"), 0, &sha(b"bbbbbb")),
            Err(Refusal::Changed)
        );
        // Past the spool's cap too: read again, as without a spool.
        let small = Held::spooling(0, 4);
        small.hold(&rp("b.md"), &sha(b"bbbbbb"), b"bbbbbb".to_vec(), None);
        assert_eq!(
            small.read(root, &rp("b.md"), 0, &sha(b"bbbbbb")),
            Err(Refusal::Changed)
        );
    }

    #[test]
    fn binary_means_a_nul_early_on() {
        assert!(is_binary(b"PNG\0"));
        let mut late = vec![b'a'; 9000];
        late.push(0);
        assert!(!is_binary(&late));
    }

    #[test]
    fn names_are_judged_before_the_disk() {
        assert_eq!(judge_name("docs/a.md"), Ok(()));
        assert_eq!(judge_name("docs/a\nb.md"), Err(Refusal::ControlChar));
        assert_eq!(judge_name("x\u{7f}.md"), Err(Refusal::ControlChar));
        assert_eq!(judge_name(".git/config"), Err(Refusal::GitFolder));
        assert_eq!(judge_name("sub/.GIT/HEAD"), Err(Refusal::GitFolder));
        assert!(matches!(
            judge_name("config/.env"),
            Err(Refusal::SecretName(_))
        ));
        assert_eq!(judge_name(".github/workflows/ci.yml"), Ok(()));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_judged_by_its_target_too() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("docs")).unwrap();
        std::fs::write(root.join(".env"), "A=b\n").unwrap();
        std::os::unix::fs::symlink("../.env", root.join("docs/settings.md")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", root.join("docs/out.md")).unwrap();
        std::fs::write(root.join("docs/ok.md"), "fine\n").unwrap();
        std::os::unix::fs::symlink("ok.md", root.join("docs/alias.md")).unwrap();
        let rules = ContentRules::shared().unwrap();
        assert!(matches!(
            admit(&root, &rp("docs/settings.md"), 0, rules),
            Err(Refusal::SecretName(_))
        ));
        assert_eq!(
            admit(&root, &rp("docs/out.md"), 0, rules),
            Err(Refusal::Outside)
        );
        assert_eq!(
            admit(&root, &rp("docs/alias.md"), 0, rules).unwrap(),
            b"fine\n"
        );
        assert_eq!(
            admit(&root, &rp("docs/ok.md"), 3, rules),
            Err(Refusal::TooLarge { size: 5, cap: 3 })
        );
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_fifos_are_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(root.join("pipe"))
            .status()
            .unwrap();
        assert!(made.success());
        let rules = ContentRules::shared().unwrap();
        assert_eq!(
            admit(&root, &rp("pipe"), 0, rules),
            Err(Refusal::NotRegular("a FIFO"))
        );
        std::fs::create_dir(root.join("dir")).unwrap();
        assert_eq!(
            admit(&root, &rp("dir"), 0, rules),
            Err(Refusal::NotRegular("a folder"))
        );
    }
}
