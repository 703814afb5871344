//! `.curate/state/`: what a lead said about the current change (`curate use`), the
//! breadcrumbs a hook's `PreToolUse` pass leaves for its `SubagentStart` pass, and the hook
//! log `hooks.jsonl` (one line a hook run, read by `curate doctor`).
//!
//! The folder is the repository's own, never committed (it holds a `.gitignore` of `*`);
//! every read goes through [`read_repo_file`] and every write is atomic and stays inside
//! the repository. Nothing here guesses: a missing or damaged file is "no binding".

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::settings::check_name;
use crate::trust::admit::read_repo_file;
use crate::util::atomic::{self, Bound};

/// The state folder, relative to the repository root.
pub const DIR: &str = ".curate/state";

/// How long a breadcrumb waits for its `SubagentStart`.
pub const BREADCRUMB_TTL: Duration = Duration::from_secs(120);

/// The file name part for a session id: the id itself when it is
/// `[A-Za-z0-9._-]{1,128}` (and not `.`/`..`) and holds no token, else the first 16 hex
/// digits of its SHA-256.
#[must_use]
pub fn session_key(id: &str) -> String {
    let plain = crate::trust::secrets::rule_of_text(id).is_none()
        && !id.is_empty()
        && id.len() <= 128
        && id != "."
        && id != ".."
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if plain {
        id.to_owned()
    } else {
        crate::util::digest::hex(id.as_bytes())[..16].to_owned()
    }
}

/// A binding file: `{"change": "<id>"}`.
#[derive(Debug, Serialize, Deserialize)]
struct Binding {
    change: String,
}

/// The binding file for `session` (or the repository-wide one), relative to the root.
#[must_use]
pub fn binding_path(session: Option<&str>) -> String {
    match session {
        Some(s) => format!("{DIR}/session-{}.json", session_key(s)),
        None => format!("{DIR}/current.json"),
    }
}

/// Writes the binding of `change` (for one session, or for the repository); returns the
/// path written, relative to the root.
///
/// # Errors
/// An invalid change id, or a write that fails or would leave the repository.
pub fn bind(root: &Path, change: &str, session: Option<&str>) -> Result<String> {
    check_name("change id", change)?;
    crate::settings::check_no_secret("change id", change)?;
    ensure_folder(root)?;
    let rel = binding_path(session);
    let mut text = serde_json::to_string(&Binding {
        change: change.to_owned(),
    })
    .unwrap_or_default();
    text.push('\n');
    atomic::write_bounded(&root.join(&rel), Bound::Inside(root), text.as_bytes())?;
    Ok(rel)
}

/// Removes the binding (of one session, or the repository's); returns the path removed.
///
/// # Errors
/// A removal that fails, or a state folder that leads out of the repository.
pub fn unbind(root: &Path, session: Option<&str>) -> Result<Option<String>> {
    let rel = binding_path(session);
    let path = root.join(&rel);
    atomic::check_folder(path.parent().unwrap_or(root), Bound::Inside(root))?;
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(Some(rel)),
        Err(e) if crate::util::read::is_absent(&e) => Ok(None),
        Err(source) => Err(crate::error::Error::Write { path, source }),
    }
}

/// The change bound for `session`, else the repository-wide one; `None` when neither
/// exists or holds a valid id.
#[must_use]
pub fn bound_change(root: &Path, session: Option<&str>) -> Option<String> {
    let read = |rel: String| -> Option<String> {
        let bytes = read_repo_file(root, &root.join(rel)).ok()??;
        let b: Binding = serde_json::from_slice(&bytes).ok()?;
        check_name("change id", &b.change).ok()?;
        Some(b.change)
    };
    session
        .and_then(|s| read(binding_path(Some(s))))
        .or_else(|| read(binding_path(None)))
}

/// Where ad-hoc dispatches keep their manifests and locks, one folder each.
pub const DISPATCHES: &str = ".curate/state/dispatches";

/// At most this many ad-hoc dispatches are kept; the oldest go first.
pub const MAX_DISPATCHES: usize = 64;

/// Makes room for the ad-hoc dispatch `id`: creates `.curate/state/` (ignored by git) and
/// removes the oldest dispatch folders (by modification time, then name) beyond
/// [`MAX_DISPATCHES`], `id`'s own kept. Only real folders are counted and removed; a link
/// is left alone, and a dispatches folder that is no real folder is an error.
pub fn make_room_for_dispatch(root: &Path, id: &str) -> Result<()> {
    ensure_folder(root)?;
    let dir = root.join(DISPATCHES);
    let meta = match std::fs::symlink_metadata(&dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => return Err(Error::Read { path: dir, source }),
    };
    if !meta.is_dir() {
        return Err(Error::Usage(format!(
            "{DISPATCHES} is no folder of the repository (a link or a file)"
        )));
    }
    let mut folders: Vec<(SystemTime, String)> = std::fs::read_dir(&dir)
        .map_err(|source| Error::Read {
            path: dir.clone(),
            source,
        })?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let meta = entry.metadata().ok()?; // the entry itself: a link is no folder
            let name = entry.file_name().into_string().ok()?;
            (meta.is_dir() && name != id).then(|| (meta.modified().unwrap_or(UNIX_EPOCH), name))
        })
        .collect();
    folders.sort();
    let excess = (folders.len() + 1).saturating_sub(MAX_DISPATCHES);
    for (_, name) in folders.into_iter().take(excess) {
        let path = dir.join(name);
        std::fs::remove_dir_all(&path).map_err(|source| Error::Write { path, source })?;
    }
    Ok(())
}

/// Creates `.curate/state/` with its `.gitignore` of `*` (inside the repository only).
fn ensure_folder(root: &Path) -> Result<()> {
    let ignore = root.join(DIR).join(".gitignore");
    if read_repo_file(root, &ignore)?.is_none() {
        atomic::write_bounded(&ignore, Bound::Inside(root), b"*\n")?;
    }
    Ok(())
}

/// Where `curate lsp` keeps the previews it shows an editor (one file a role and change).
pub const PREVIEWS: &str = ".curate/state/preview";

/// Writes `bytes` to `<PREVIEWS>/<name>` (`name`: plain names joined by `/`) atomically and
/// read-only (mode 0444: an editor opens it read-only), unless it holds them already.
/// Never through a link: every folder on the way is a real folder of the repository, or is
/// made. Returns whether it wrote.
///
/// # Errors
/// A folder on the way that is a link or a file; a write that fails.
pub fn write_preview(root: &Path, name: &str, bytes: &[u8]) -> Result<bool> {
    let rel = Path::new(PREVIEWS).join(name);
    let mut dir = root.to_owned();
    for part in rel.parent().into_iter().flat_map(Path::components) {
        dir.push(part);
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.is_dir() => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
            _ => {
                return Err(Error::Usage(format!(
                    "{} is no folder of the repository (a link or a file): curate writes no preview through it",
                    dir.strip_prefix(root).unwrap_or(&dir).display()
                )));
            }
        }
    }
    ensure_folder(root)?;
    let path = root.join(&rel);
    let is_file = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
    if is_file && read_repo_file(root, &path).ok().flatten().as_deref() == Some(bytes) {
        return Ok(false);
    }
    atomic::write_bounded(&path, Bound::Inside(root), bytes)?;
    #[cfg(unix)]
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).map_err(
            |source| Error::Write {
                path: path.clone(),
                source,
            },
        )?;
    }
    Ok(true)
}

/// What a `PreToolUse` pass left for the `SubagentStart` of the sub-agent it dispatched.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Breadcrumb {
    pub session: String,
    /// The role name used for the manifest (after normalisation).
    pub role: String,
    /// The dispatched `subagent_type`, normalised (may differ when the role came from a
    /// `role:` line).
    pub agent_type: String,
    pub change: String,
    pub manifest: String,
    pub files: usize,
    pub lines: u64,
    pub tokens: u64,
    /// Milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// The context the sub-agent's start hands it whole (Copilot CLI, whose pre-tool
    /// rewrite would stay in the lead's history); none: a pointer at the manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn pending_dir(root: &Path) -> PathBuf {
    root.join(DIR).join("pending")
}

/// Leaves `crumb` (stamped now) in `.curate/state/pending/`, named
/// `<session key>.<ms>.<pid>-<n>.json` (unique across processes and calls).
///
/// # Errors
/// A write that fails or would leave the repository.
pub fn leave_breadcrumb(root: &Path, mut crumb: Breadcrumb) -> Result<()> {
    static SERIAL: AtomicU64 = AtomicU64::new(0);
    ensure_folder(root)?;
    crumb.at_ms = now_ms();
    // A host without the `SubagentStart` hook never takes its crumbs: sweep them here.
    let _ = pending(root, crumb.at_ms);
    let name = format!(
        "{}.{}.{}-{}.json",
        session_key(&crumb.session),
        crumb.at_ms,
        std::process::id(),
        SERIAL.fetch_add(1, Ordering::Relaxed)
    );
    let text = serde_json::to_string(&crumb).unwrap_or_default();
    // Taken by the sub-agent's start within seconds, or swept: no `fsync` for it.
    Ok(atomic::write_bounded_unsynced(
        &pending_dir(root).join(name),
        Bound::Inside(root),
        text.as_bytes(),
    )?)
}

/// The session key and time of a breadcrumb file name `<key>.<ms>.<suffix>.json`.
fn parse_name(name: &str) -> Option<(&str, u64)> {
    let (rest, _suffix) = name.strip_suffix(".json")?.rsplit_once('.')?;
    let (key, at) = rest.rsplit_once('.')?;
    Some((key, at.parse().ok()?))
}

/// The breadcrumbs still in time, oldest first, as (session key, ms, path); expired ones
/// of every session are removed on the way. Nothing is listed or removed through a link
/// that leaves the repository.
fn pending(root: &Path, now: u64) -> Vec<(String, u64, PathBuf)> {
    let dir = pending_dir(root);
    if atomic::check_folder(&dir, Bound::Inside(root)).is_err() {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let ttl = u64::try_from(BREADCRUMB_TTL.as_millis()).unwrap_or(u64::MAX);
    let mut out = Vec::new();
    for e in entries.filter_map(std::result::Result::ok) {
        let name = e.file_name();
        let Some((key, at)) = name.to_str().and_then(parse_name) else {
            continue;
        };
        if now.saturating_sub(at) > ttl {
            let _ = std::fs::remove_file(e.path());
        } else {
            out.push((key.to_owned(), at, e.path()));
        }
    }
    out.sort_by(|a, b| (a.1, &a.2).cmp(&(b.1, &b.2)));
    out
}

/// Takes (removes and returns) the oldest breadcrumb of `session` whose role or dispatched
/// agent type is one of `names`, no older than [`BREADCRUMB_TTL`].
#[must_use]
pub fn take_breadcrumb(root: &Path, session: &str, names: &[&str]) -> Option<Breadcrumb> {
    let key = session_key(session);
    for (_, _, path) in pending(root, now_ms())
        .into_iter()
        .filter(|(k, _, _)| *k == key)
    {
        let Ok(Some(bytes)) = read_repo_file(root, &path) else {
            continue;
        };
        let Ok(crumb) = serde_json::from_slice::<Breadcrumb>(&bytes) else {
            let _ = std::fs::remove_file(&path);
            continue;
        };
        if crumb.session != session
            || !names
                .iter()
                .any(|n| *n == crumb.role || *n == crumb.agent_type)
        {
            continue;
        }
        // Used once: whoever removes it owns it (parallel starts never share one).
        if std::fs::remove_file(&path).is_ok() {
            return Some(crumb);
        }
    }
    None
}

/// The hook log, relative to the root: one JSON line a hook run.
pub const HOOK_LOG: &str = ".curate/state/hooks.jsonl";

/// Past this size the hook log is moved to `hooks.jsonl.1` (one older file is kept).
pub const HOOK_LOG_MAX: u64 = 256 * 1024;

/// One hook run as `hooks.jsonl` records it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct HookRun {
    /// UTC, RFC 3339 (`2026-09-01T10:00:00Z`).
    pub time: String,
    /// `claude-code` or `opencode`.
    pub host: String,
    /// `PreToolUse`, `SubagentStart`, `task`, or `?` when the input named none.
    pub event: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
    /// `READY` (injected), `BLOCKED`, `OVER_BUDGET`, `skipped` (nothing to do: see
    /// `reason`), `off` (the kill switch), `deadline`, `crashed`.
    pub status: String,
    /// Why nothing was injected, when nothing was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How long the run took.
    pub ms: u64,
}

/// Appends `run` to `.curate/state/hooks.jsonl` in one `write` (O_APPEND: concurrent hooks
/// never interleave a line), first moving a log over [`HOOK_LOG_MAX`] to `hooks.jsonl.1`.
/// Never through a link that leaves the repository, never onto a link.
///
/// # Errors
/// Any failure; the hooks ignore it (a log never breaks a dispatch).
pub fn log_hook_run(root: &Path, run: &HookRun) -> Result<()> {
    use std::io::Write as _;
    ensure_folder(root)?;
    let path = root.join(HOOK_LOG);
    atomic::check_folder(path.parent().unwrap_or(root), Bound::Inside(root))?;
    let werr = |source| crate::error::Error::Write {
        path: path.clone(),
        source,
    };
    match std::fs::symlink_metadata(&path) {
        Ok(m) if !m.file_type().is_file() => {
            return Err(werr(std::io::Error::other("not a regular file")));
        }
        Ok(m) if m.len() > HOOK_LOG_MAX => {
            std::fs::rename(&path, root.join(format!("{HOOK_LOG}.1"))).map_err(werr)?;
        }
        _ => {}
    }
    let mut line = serde_json::to_string(run).unwrap_or_default();
    line.push('\n');
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NOFOLLOW).mode(0o600);
    }
    let mut file = options.open(&path).map_err(werr)?;
    file.write_all(line.as_bytes()).map_err(werr)
}

/// The last `n` hook runs, oldest first (from `hooks.jsonl`, then `hooks.jsonl.1` when the
/// newer file holds fewer); lines that do not parse are skipped.
#[must_use]
pub fn last_hook_runs(root: &Path, n: usize) -> Vec<HookRun> {
    let read = |rel: &str| -> Vec<HookRun> {
        read_repo_file(root, &root.join(rel))
            .ok()
            .flatten()
            .map(|b| {
                String::from_utf8_lossy(&b)
                    .lines()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut runs = read(HOOK_LOG);
    if runs.len() < n {
        let mut older = read(&format!("{HOOK_LOG}.1"));
        older.append(&mut runs);
        runs = older;
    }
    let skip = runs.len().saturating_sub(n);
    // A log written by an older curate (or by hand) may hold a token: shown as its rule.
    let shown = |t: &mut Option<String>| {
        if let Some(t) = t {
            *t = crate::trust::redact::redact(t);
        }
    };
    let mut last = runs.split_off(skip);
    for run in &mut last {
        run.event = crate::trust::redact::redact(&run.event);
        shown(&mut run.role);
        shown(&mut run.change);
        shown(&mut run.reason);
    }
    last
}

/// Now as UTC RFC 3339, to the second.
#[must_use]
pub fn now_rfc3339() -> String {
    let secs = now_ms() / 1000;
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = i64::try_from(days).unwrap_or(0) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hook_log_appends_rotates_and_reads_back_the_last_runs() {
        let (_t, root) = repo();
        let run = |status: &str| HookRun {
            time: now_rfc3339(),
            host: "claude-code".to_owned(),
            event: "PreToolUse".to_owned(),
            status: status.to_owned(),
            ..HookRun::default()
        };
        log_hook_run(&root, &run("READY")).unwrap();
        log_hook_run(&root, &run("skipped")).unwrap();
        let last = last_hook_runs(&root, 5);
        assert_eq!(last.len(), 2);
        assert_eq!(last[1].status, "skipped");
        assert_eq!(last_hook_runs(&root, 1)[0].status, "skipped");
        // Over the cap: moved to `.1`, still read back.
        let big = vec![b'x'; usize::try_from(HOOK_LOG_MAX).unwrap() + 1];
        std::fs::write(root.join(HOOK_LOG), [&big[..], b"\n"].concat()).unwrap();
        log_hook_run(&root, &run("BLOCKED")).unwrap();
        assert!(root.join(format!("{HOOK_LOG}.1")).is_file());
        assert_eq!(last_hook_runs(&root, 3).last().unwrap().status, "BLOCKED");
        assert!(now_rfc3339().ends_with('Z'));
    }

    #[cfg(unix)]
    #[test]
    fn the_hook_log_is_never_written_through_a_link() {
        let (_t, root) = repo();
        let outside = tempfile::tempdir().unwrap();
        ensure_folder(&root).unwrap();
        let target = outside.path().join("log");
        std::os::unix::fs::symlink(&target, root.join(HOOK_LOG)).unwrap();
        assert!(log_hook_run(&root, &HookRun::default()).is_err());
        assert!(!target.exists());
    }

    #[test]
    fn a_plain_session_id_is_kept_and_anything_else_hashed() {
        assert_eq!(session_key("abc-123_x.y"), "abc-123_x.y");
        for odd in [
            "a/b",
            "..",
            "",
            "é",
            &"x".repeat(129),
            "ghp_R7mK2pQ9xV4nL8wT3yH6jB1cF5dG0sZeAa9u",
        ] {
            let k = session_key(odd);
            assert_eq!(k.len(), 16, "{odd:?}");
            assert!(k.bytes().all(|b| b.is_ascii_hexdigit()));
        }
    }

    fn repo() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        (d, root)
    }

    #[test]
    fn the_session_binding_wins_over_the_repository_one() {
        let (_d, root) = repo();
        assert_eq!(bound_change(&root, Some("s1")), None);
        bind(&root, "repo-wide", None).unwrap();
        assert_eq!(
            bound_change(&root, Some("s1")).as_deref(),
            Some("repo-wide")
        );
        bind(&root, "mine", Some("s1")).unwrap();
        assert_eq!(bound_change(&root, Some("s1")).as_deref(), Some("mine"));
        assert_eq!(
            bound_change(&root, Some("s2")).as_deref(),
            Some("repo-wide")
        );
        assert_eq!(
            std::fs::read_to_string(root.join(".curate/state/.gitignore")).unwrap(),
            "*\n"
        );
        assert!(bind(&root, "../x", None).is_err());
    }

    fn crumb(role: &str, agent_type: &str) -> Breadcrumb {
        Breadcrumb {
            session: "s1".into(),
            role: role.into(),
            agent_type: agent_type.into(),
            change: "c".into(),
            manifest: "m.jsonl".into(),
            files: 1,
            lines: 2,
            tokens: 3,
            at_ms: 0,
            context: None,
        }
    }

    #[test]
    fn a_breadcrumb_is_used_once_by_its_session_and_role() {
        let (_d, root) = repo();
        leave_breadcrumb(&root, crumb("worker", "general-purpose")).unwrap();
        assert_eq!(take_breadcrumb(&root, "s2", &["worker"]), None);
        assert_eq!(take_breadcrumb(&root, "s1", &["reviewer"]), None);
        let got = take_breadcrumb(&root, "s1", &["general-purpose"]).unwrap();
        assert_eq!(got.role, "worker");
        assert_eq!(take_breadcrumb(&root, "s1", &["worker"]), None);
    }

    #[test]
    fn a_session_whose_id_extends_another_keeps_its_breadcrumb() {
        let (_d, root) = repo();
        let mut other = crumb("worker", "worker");
        other.session = "s1.1".into();
        leave_breadcrumb(&root, other).unwrap();
        assert_eq!(take_breadcrumb(&root, "s1", &["worker"]), None);
        assert_eq!(
            take_breadcrumb(&root, "s1.1", &["worker"]).unwrap().session,
            "s1.1"
        );
    }

    #[test]
    fn expired_breadcrumbs_of_any_session_are_swept() {
        let (_d, root) = repo();
        let dir = root.join(DIR).join("pending");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("old.1000.00.json"), "{}").unwrap();
        leave_breadcrumb(&root, crumb("worker", "worker")).unwrap();
        assert!(!dir.join("old.1000.00.json").exists());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    }
}
