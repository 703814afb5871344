//! Asking `curate watch` (docs/budgets.md#related-files): a compile with `--related`, or
//! with the task's words (docs/selection.md), sends its question to the process that watches
//! the repository, over a Unix socket in the cache folder, and takes its answer when one
//! comes; otherwise it ranks as any run does. The answer is the same list the compile would
//! have made itself ([`Found`], [`task_words::Found`]).
//!
//! The socket is `watch-<12 hex digits of the root's sha256>.sock`: one watcher a
//! repository and cache folder. A socket that is not this user's is never connected to;
//! an answer that does not decode, is another version's or names a path that is not a
//! normal repository path is not taken. What the answer names still goes through the
//! compile's admission like any other entry: the watcher can rank, never let a file in.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Found;
use crate::stages::task_words;

/// The protocol's version: a watcher of another answers nothing.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "/related-2");
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
    pub max_file_size: u64,
    pub encoding: crate::model::Encoding,
    pub asking: Asking,
}

/// Which ranking a question asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Asking {
    /// `--related`: the files around the owned ones, within `budget` tokens.
    Related { owned: Vec<String>, budget: u64 },
    /// The task's words: the files the texts name or talk about, within `budget` tokens.
    /// `texts` are the compile's own (`--task-text`, the task file); the change's documents
    /// and the other changes' lists the watcher reads itself. `skip`: the files selected
    /// already.
    Task {
        texts: Vec<task_words::Text>,
        skip: Vec<String>,
        budget: u64,
    },
}

/// What the watcher answers: the related files, or the task's, or why not.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Answer {
    pub version: String,
    #[serde(default)]
    pub found: Vec<Found>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub task: Vec<task_words::Found>,
    /// For the task's words: how many texts describe the task (none: nothing to select).
    #[serde(default)]
    pub texts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Answer {
    /// An answer of this version's with no file.
    #[must_use]
    pub fn empty() -> Answer {
        Answer {
            version: VERSION.to_owned(),
            found: Vec::new(),
            task: Vec::new(),
            texts: 0,
            error: None,
        }
    }
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
    /// The watcher at this socket is stopped (Ctrl-Z, `SIGSTOP`): its process id.
    Stopped(PathBuf, i32),
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
    match linux::connect(&path) {
        Ok(_) => return Watching::Answering(path),
        Err(linux::Unreachable::Stopped(pid)) => return Watching::Stopped(path, pid),
        Err(_) => {}
    }
    Watching::Stale(path)
}

/// What asking the watcher gave.
#[derive(Debug)]
pub enum Asked {
    /// No watcher of this user's takes connections (no socket, or one left by a watcher
    /// that ended): nothing to say.
    Nobody,
    /// The files, as the compile would have found them.
    Answered(Answer),
    /// A watcher took the question but gave no answer the compile can take: why.
    Failed(String),
}

/// Asks the watcher of `q.root` in `cache_dir` (no watcher: one `lstat`).
#[must_use]
pub fn ask(cache_dir: &Path, q: &Question) -> Asked {
    #[cfg(target_os = "linux")]
    {
        let path = socket_path(cache_dir, Path::new(&q.root));
        let stream = match linux::connect(&path) {
            Ok(stream) => stream,
            // It would answer nothing until continued: waiting would only cost the time.
            Err(linux::Unreachable::Stopped(pid)) => {
                return Asked::Failed(format!(
                    "it is stopped, pid {pid}: `kill -CONT {pid}` or end it"
                ));
            }
            Err(linux::Unreachable::Nobody) => return Asked::Nobody,
        };
        match linux::exchange(stream, q) {
            Ok(answer) => taken(q, answer),
            Err(why) => Asked::Failed(why),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (cache_dir, q);
        Asked::Nobody
    }
}

/// True when `p` is a normal repository-relative path (what a question's owned files and
/// an answer's files must be: a peer's text is checked before it is used).
#[must_use]
pub fn is_repo_path(p: &str) -> bool {
    crate::model::paths::is_normal(p) && crate::model::paths::RepoPath::new(p).is_ok()
}

/// The answer, when it is this version's, answers what was asked, and every path is a
/// normal repository path with sections that are line pairs (the whole file, too, for the
/// task's words).
fn taken(q: &Question, a: Answer) -> Asked {
    use crate::model::Sections;
    if a.version != q.version {
        return Asked::Failed(format!("it is curate {}", a.version));
    }
    if let Some(why) = a.error {
        return Asked::Failed(why);
    }
    let pairs = |r: &[crate::model::Range]| r.iter().all(|[a, b]| 1 <= *a && a <= b);
    let related =
        |f: &Found| is_repo_path(&f.path) && matches!(&f.sections, Sections::Ranges(r) if pairs(r));
    let task = |f: &task_words::Found| {
        is_repo_path(&f.path)
            && match &f.sections {
                Sections::Ranges(r) => pairs(r),
                Sections::Whole => true,
                Sections::Anchored { .. } => false,
            }
    };
    let answers = match q.asking {
        Asking::Related { .. } => a.task.is_empty() && a.found.iter().all(related),
        Asking::Task { .. } => a.found.is_empty() && a.task.iter().all(task),
    };
    if answers {
        Asked::Answered(a)
    } else {
        Asked::Failed("its answer names a path or lines that are none".to_owned())
    }
}

/// How long a compile waits for the answer: well within a hook's deadline (10 s). The
/// watcher's first run stamps every file and may take longer on a large repository; the
/// compile then ranks alone (with a warning), as it would without a watcher.
pub const ANSWER_TIME: std::time::Duration = std::time::Duration::from_secs(5);

#[cfg(target_os = "linux")]
mod linux {
    use std::io::{Read, Write};
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    use std::os::unix::net::UnixStream;
    use std::path::Path;

    use super::{ANSWER_TIME, Answer, MAX_BYTES, Question};

    /// Why there is no watcher to ask.
    #[derive(Debug)]
    pub enum Unreachable {
        /// No socket, not this user's, or none takes the connection.
        Nobody,
        /// The process at the other end is stopped: its id.
        Stopped(i32),
    }

    /// A connection to the socket at `path`, when it is a socket of this user's and a
    /// process of this user's, not stopped, holds its other end.
    pub fn connect(path: &Path) -> Result<UnixStream, Unreachable> {
        let euid = rustix::process::geteuid().as_raw();
        let meta = std::fs::symlink_metadata(path).map_err(|_| Unreachable::Nobody)?;
        if !meta.file_type().is_socket() || meta.uid() != euid {
            return Err(Unreachable::Nobody);
        }
        let stream = UnixStream::connect(path).map_err(|_| Unreachable::Nobody)?;
        let peer =
            rustix::net::sockopt::socket_peercred(&stream).map_err(|_| Unreachable::Nobody)?;
        if peer.uid.as_raw() != euid {
            return Err(Unreachable::Nobody);
        }
        let pid = peer.pid.as_raw_nonzero().get();
        if is_stopped(pid) {
            return Err(Unreachable::Stopped(pid));
        }
        Ok(stream)
    }

    /// True when process `pid` is stopped (`/proc/<pid>/stat`'s state `T` or `t`).
    fn is_stopped(pid: i32) -> bool {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        // `pid (comm) state …`: the name may hold anything, the state follows its last `)`.
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|state| matches!(state, 'T' | 't'))
    }

    /// Sends `q` over `stream` and reads the answer, or says why there is none.
    pub fn exchange(mut stream: UnixStream, q: &Question) -> Result<Answer, String> {
        let failed = |what: &str, e: &dyn std::fmt::Display| format!("{what}: {e}");
        stream
            .set_read_timeout(Some(ANSWER_TIME))
            .and_then(|()| stream.set_write_timeout(Some(ANSWER_TIME)))
            .map_err(|e| failed("the socket", &e))?;
        let mut line = serde_json::to_vec(q).map_err(|e| failed("the question", &e))?;
        line.push(b'\n');
        stream
            .write_all(&line)
            .and_then(|()| stream.shutdown(std::net::Shutdown::Write))
            .map_err(|e| failed("sending the question", &e))?;
        let mut bytes = Vec::new();
        stream
            .take(MAX_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|e| {
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) {
                    format!("no answer within {} s", ANSWER_TIME.as_secs())
                } else {
                    failed("reading the answer", &e)
                }
            })?;
        if bytes.is_empty() {
            return Err("it ended before answering".to_owned());
        }
        serde_json::from_slice(&bytes).map_err(|e| failed("an answer that does not decode", &e))
    }
}
