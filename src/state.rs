//! `.curate/state/`: what a lead said about the current change (`curate use`), and the
//! breadcrumbs a hook's `PreToolUse` pass leaves for its `SubagentStart` pass.
//!
//! The folder is the repository's own, never committed (it holds a `.gitignore` of `*`);
//! every read goes through [`read_repo_file`] and every write is atomic and stays inside
//! the repository. Nothing here guesses: a missing or damaged file is "no binding".

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::compile::admit::read_repo_file;
use crate::error::Result;
use crate::settings::check_name;
use crate::util::atomic::{self, Bound};

/// The state folder, relative to the repository root.
pub const DIR: &str = ".curate/state";

/// How long a breadcrumb waits for its `SubagentStart`.
pub const BREADCRUMB_TTL: Duration = Duration::from_secs(120);

/// The file name part for a session id: the id itself when it is
/// `[A-Za-z0-9._-]{1,128}` (and not `.`/`..`), else the first 16 hex digits of its SHA-256.
#[must_use]
pub fn session_key(id: &str) -> String {
    let plain = !id.is_empty()
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
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
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

/// Creates `.curate/state/` with its `.gitignore` of `*` (inside the repository only).
fn ensure_folder(root: &Path) -> Result<()> {
    let ignore = root.join(DIR).join(".gitignore");
    if read_repo_file(root, &ignore)?.is_none() {
        atomic::write_bounded(&ignore, Bound::Inside(root), b"*\n")?;
    }
    Ok(())
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
    atomic::write_bounded(
        &pending_dir(root).join(name),
        Bound::Inside(root),
        text.as_bytes(),
    )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_session_id_is_kept_and_anything_else_hashed() {
        assert_eq!(session_key("abc-123_x.y"), "abc-123_x.y");
        for odd in ["a/b", "..", "", "é", &"x".repeat(129)] {
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
