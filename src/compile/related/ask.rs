//! Asking `curate watch` (docs/budgets.md#related-files): a compile with `--related` sends
//! its question to the process that watches the repository, over a Unix socket in the cache
//! folder, and takes its answer when one comes; otherwise it ranks as any run does. The
//! answer is the same [`Found`] list the compile would have made itself.
//!
//! The socket is `watch-<12 hex digits of the root's sha256>.sock`: one watcher a
//! repository and cache folder. A socket that is not this user's is never connected to;
//! an answer that does not decode, is another version's or names a path that is not a
//! normal repository path is not taken. What the answer names still goes through the
//! compile's admission like any other entry: the watcher can rank, never let a file in.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Found;

/// The protocol's version: a watcher of another answers nothing.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "/related-1");
/// At most this many bytes a question or an answer.
pub const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// What a compile asks: everything its ranking depends on besides the files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Question {
    pub version: String,
    /// The repository's canonical root.
    pub root: String,
    /// The walk's scope (`expand::Scope`): the changes root, the change, the ignore rules
    /// (false with `--no-ignore`) and the manifest template (curate's own files).
    pub changes_root: String,
    pub change: String,
    pub ignore: bool,
    pub manifest: String,
    pub owned: Vec<String>,
    /// `--related`'s token budget.
    pub budget: u64,
    pub max_file_size: u64,
    pub encoding: crate::compile::tokens::Encoding,
}

/// What the watcher answers: the related files, or why not.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Answer {
    pub version: String,
    #[serde(default)]
    pub found: Vec<Found>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The socket of the watcher of the repository at `root` (canonical), in the cache folder.
#[must_use]
pub fn socket_path(cache_dir: &Path, root: &Path) -> PathBuf {
    let name = crate::util::digest::hex12(root.to_string_lossy().as_bytes());
    cache_dir.join(format!("watch-{name}.sock"))
}

/// Whether a watcher answers for the repository at `root` (for `curate doctor`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Watching {
    /// No socket.
    No,
    /// A watcher of this user's takes connections at this socket.
    Answering(PathBuf),
    /// A socket that takes no connection (its watcher was killed), or is not this user's.
    Stale(PathBuf),
}

/// Whether a watcher answers for `root` in `cache_dir` (a connection opened and closed: the
/// watcher takes it as an empty question).
#[must_use]
pub fn watching(cache_dir: &Path, root: &Path) -> Watching {
    let path = socket_path(cache_dir, root);
    if std::fs::symlink_metadata(&path).is_err() {
        return Watching::No;
    }
    #[cfg(target_os = "linux")]
    if linux::connect(&path).is_some() {
        return Watching::Answering(path);
    }
    Watching::Stale(path)
}

/// The watcher's answer to `q`, when a watcher of this user's answers it in time; `None`
/// otherwise (no watcher: one `lstat`).
#[must_use]
pub fn ask(cache_dir: &Path, q: &Question) -> Option<Vec<Found>> {
    #[cfg(target_os = "linux")]
    {
        let path = socket_path(cache_dir, Path::new(&q.root));
        let answer = linux::exchange(&path, q)?;
        taken(q, answer)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (cache_dir, q);
        None
    }
}

/// The answer's files, when it is this version's and every path is a normal repository
/// path with sections that are line pairs.
fn taken(q: &Question, a: Answer) -> Option<Vec<Found>> {
    if a.version != q.version || a.error.is_some() {
        return None;
    }
    let fits = |f: &Found| {
        crate::util::paths::is_normal(&f.path)
            && crate::util::paths::RepoPath::new(&f.path).is_ok()
            && match &f.sections {
                crate::model::Sections::Ranges(r) => r.iter().all(|[a, b]| 1 <= *a && a <= b),
                _ => false,
            }
    };
    a.found.iter().all(fits).then_some(a.found)
}

/// How long a compile waits for the answer (the watcher's first run stamps every file).
pub const ANSWER_TIME: std::time::Duration = std::time::Duration::from_secs(30);

#[cfg(target_os = "linux")]
mod linux {
    use std::io::{Read, Write};
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    use std::os::unix::net::UnixStream;
    use std::path::Path;

    use super::{ANSWER_TIME, Answer, MAX_BYTES, Question};

    /// A connection to the socket at `path`, when it is a socket of this user's.
    pub fn connect(path: &Path) -> Option<UnixStream> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        if !meta.file_type().is_socket() || meta.uid() != rustix::process::geteuid().as_raw() {
            return None;
        }
        UnixStream::connect(path).ok()
    }

    /// Sends `q` to the socket at `path` and reads the answer; `None` when there is no
    /// socket of this user's there, or it does not answer in time.
    pub fn exchange(path: &Path, q: &Question) -> Option<Answer> {
        let mut stream = connect(path)?;
        stream.set_read_timeout(Some(ANSWER_TIME)).ok()?;
        stream.set_write_timeout(Some(ANSWER_TIME)).ok()?;
        let mut line = serde_json::to_vec(q).ok()?;
        line.push(b'\n');
        stream.write_all(&line).ok()?;
        stream.shutdown(std::net::Shutdown::Write).ok()?;
        let mut bytes = Vec::new();
        stream.take(MAX_BYTES).read_to_end(&mut bytes).ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}
