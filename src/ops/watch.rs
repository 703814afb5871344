//! `curate watch` (docs/budgets.md#related-files): a process that stays, holding one
//! repository's related-files index and folder listings in memory, told of every change by
//! the kernel (inotify), and answering the `--related` questions of compiles over a Unix
//! socket in the cache folder ([`crate::stages::related::ask`]).
//!
//! A run of `--related` must otherwise stamp every folder it walks and every file it ranks
//! (105,000 `lstat`s on a 100,000-file tree: more than 150 ms on two cores before anything is
//! read). Here a stamp is taken as kept when this process has watched the file's folder since
//! before a run of its own stamped it, and no event names the file, its folder or a folder
//! above it since; anything else is stamped as in any run. The answer is the list the
//! compile would have made itself: the same walk, admission and ranking, run here.
//!
//! What the kernel does not tell: a change written through `mmap`, or through another hard
//! link to the same file (the events go to that name's folder); a folder past the watch limit
//! (`fs.inotify.max_user_watches`) is stamped at every run. An overflow of the event queue
//! makes the next run stamp everything.

// Elsewhere than Linux only `run`'s refusal is built: the rest serves the Linux watcher.
#![cfg_attr(not(target_os = "linux"), allow(dead_code, unused_imports))]

use foldhash::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use crate::stages::related::ask::{Answer, Asking, Question, is_repo_path};
#[cfg(target_os = "linux")]
use crate::stages::related::{Index, Listings, Terms, Unchanged};

/// What the watcher tells its user on the way (on stderr, by the front-end).
#[derive(Debug, Clone, Copy)]
pub enum Told<'a> {
    /// Something that makes it slower than it should be (a folder left unwatched).
    Warning(&'a str),
    /// One line a question answered (not under `-q`).
    Answered(&'a str),
}

/// What has changed since the last run, as the events told.
#[derive(Debug, Default)]
struct Dirty {
    /// Files written, created, removed or renamed.
    files: HashSet<String>,
    /// Folders whose entries changed (listed again).
    folders: HashSet<String>,
    /// Folders created, removed or renamed: nothing under them is vouched for.
    trees: HashSet<String>,
}

impl Dirty {
    /// True when `rel` or a folder above it is in [`Dirty::trees`].
    fn in_tree(&self, rel: &str) -> bool {
        if self.trees.is_empty() {
            return false;
        }
        let mut at = rel;
        loop {
            if self.trees.contains(at) {
                return true;
            }
            match at.rfind('/') {
                Some(i) => at = &at[..i],
                None => return !at.is_empty() && self.trees.contains(""),
            }
        }
    }
}

/// The folder a repository-relative path is in (`""`: the root).
fn parent(rel: &str) -> &str {
    rel.rfind('/').map_or("", |i| &rel[..i])
}

/// `dir/name`, or `name` at the root.
fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

/// The watcher's answer to one question that is not for it.
fn refusal(why: String) -> Answer {
    Answer {
        error: Some(why),
        ..Answer::empty()
    }
}

/// Checks that `q` is for this watcher (its version, its repository).
fn check_question(q: &Question, root: &Path) -> std::result::Result<(), String> {
    if q.version != crate::stages::related::ask::VERSION {
        return Err(format!(
            "asked by curate {}, this watcher is {}",
            q.version,
            crate::stages::related::ask::VERSION
        ));
    }
    if Path::new(&q.root) != root {
        return Err("a question for another repository".to_owned());
    }
    // What a compile sends is checked there; a question from elsewhere is checked here.
    let (named, what) = match &q.asking {
        Asking::Related { owned, .. } => (owned, "owned"),
        Asking::Task { skip, texts, .. } => {
            if let Some(bad) = texts
                .iter()
                .find_map(|t| t.dir.as_ref().filter(|d| !is_repo_path(d)))
            {
                return Err(format!("text folder {bad:?} is not a repository path"));
            }
            (skip, "selected")
        }
    };
    if let Some(bad) = named.iter().find(|p| !is_repo_path(p)) {
        return Err(format!("{what} path {bad:?} is not a repository path"));
    }
    if !q.changes_root.is_empty() && !is_repo_path(&q.changes_root) {
        return Err("the changes root is not a repository path".to_owned());
    }
    crate::settings::check_change_id(&q.change).map_err(|e| e.to_string())
}

#[cfg(target_os = "linux")]
pub use linux::run;

/// `curate watch` where the kernel tells no changes: an error saying so.
#[cfg(not(target_os = "linux"))]
pub fn run(
    _root: &Path,
    _cache_dir: &Path,
    _ready: impl FnOnce(&Path),
    _tell: &dyn Fn(Told<'_>),
) -> Result<()> {
    Err(Error::Usage(
        "curate watch needs Linux's inotify; elsewhere each --related run stamps the files itself"
            .to_owned(),
    ))
}

#[cfg(target_os = "linux")]
mod linux {
    use std::io::{Read, Write};
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::FileTypeExt;
    use std::os::unix::net::{UnixListener, UnixStream};

    use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};

    use super::{
        Answer, Arc, Asking, Dirty, Error, HashMap, HashSet, Index, Listings, Mutex, Path, PathBuf,
        Question, Result, Terms, Told, Unchanged, check_question, join, parent, refusal,
    };
    use crate::stages::expand::{OwnFiles, Scope};

    /// What a folder's watch is told of.
    const EVENTS: WatchFlags = WatchFlags::MODIFY
        .union(WatchFlags::ATTRIB)
        .union(WatchFlags::CLOSE_WRITE)
        .union(WatchFlags::MOVED_FROM)
        .union(WatchFlags::MOVED_TO)
        .union(WatchFlags::CREATE)
        .union(WatchFlags::DELETE)
        .union(WatchFlags::DELETE_SELF)
        .union(WatchFlags::MOVE_SELF)
        .union(WatchFlags::DONT_FOLLOW)
        .union(WatchFlags::ONLYDIR);
    /// How long a question may take to arrive once connected.
    const QUESTION_TIME: std::time::Duration = std::time::Duration::from_secs(2);
    /// At most this many scopes' walks are kept.
    const UNIVERSES: usize = 4;

    /// The folders watched.
    #[derive(Debug)]
    struct Watches {
        fd: Arc<OwnedFd>,
        root: PathBuf,
        /// Repository-relative folder by watch descriptor.
        by_wd: HashMap<i32, String>,
        /// Watch descriptor by folder.
        by_path: HashMap<String, i32>,
        /// Added in a run that has not yet ended well: not vouched for before one has.
        pending: Vec<(String, u64)>,
        /// The last run started.
        run: u64,
        /// True while a run is under way: a watch it adds before listing a folder is
        /// vouched for once that run ends well; one added between runs, once the next does.
        in_run: bool,
        /// The first folder the kernel refused a watch, and why.
        refused: Option<(String, rustix::io::Errno)>,
    }

    impl Watches {
        fn add(&mut self, rel: &str) {
            if self.by_path.contains_key(rel) {
                return;
            }
            let abs = if rel.is_empty() {
                self.root.clone()
            } else {
                self.root.join(rel)
            };
            match inotify::add_watch(&*self.fd, &abs, EVENTS) {
                // A folder seen under another name (a bind mount): left unwatched.
                Ok(wd) if self.by_wd.contains_key(&wd) => {}
                Ok(wd) => {
                    let since = if self.in_run { self.run } else { self.run + 1 };
                    self.by_wd.insert(wd, rel.to_owned());
                    self.by_path.insert(rel.to_owned(), wd);
                    self.pending.push((rel.to_owned(), since));
                }
                Err(e) => {
                    if self.refused.is_none() {
                        self.refused = Some((rel.to_owned(), e));
                    }
                }
            }
        }

        /// Stops watching `rel` and every folder under it (removed or renamed: a watch
        /// follows the folder, not its name).
        fn remove_tree(&mut self, rel: &str, settled: &mut HashSet<String>) {
            let prefix = format!("{rel}/");
            let gone: Vec<String> = self
                .by_path
                .keys()
                .filter(|p| rel.is_empty() || *p == rel || p.starts_with(&prefix))
                .cloned()
                .collect();
            for p in gone {
                if let Some(wd) = self.by_path.remove(&p) {
                    self.by_wd.remove(&wd);
                    let _ = inotify::remove_watch(&*self.fd, wd);
                }
                settled.remove(&p);
            }
            // A watch no longer there is never vouched for later.
            let by_path = &self.by_path;
            self.pending.retain(|(p, _)| by_path.contains_key(p));
        }
    }

    /// What one run is told it may take as kept.
    #[derive(Debug)]
    struct Vouch {
        settled: Arc<HashSet<String>>,
        dirty: Dirty,
        watches: Arc<Mutex<Watches>>,
    }

    impl Unchanged for Vouch {
        fn folder(&self, rel: &str) -> bool {
            self.settled.contains(rel)
                && !self.dirty.folders.contains(rel)
                && !self.dirty.in_tree(rel)
        }

        fn file(&self, rel: &str) -> bool {
            self.settled.contains(parent(rel))
                && !self.dirty.files.contains(rel)
                && !self.dirty.in_tree(rel)
        }

        fn before_listing(&self, rel: &str) {
            self.watches
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .add(rel);
        }
    }

    /// The walk's scope a question names, in the repository at `root`.
    fn scope_of<'q>(root: &'q Path, q: &'q Question) -> Scope<'q> {
        Scope {
            root,
            changes_root: &q.changes_root,
            change: &q.change,
            ignore: q.ignore,
            own: OwnFiles::new(&q.manifest, &q.changes_root, &q.change),
        }
    }

    /// The scope a walk depends on.
    type ScopeKey = (String, String, bool, String);

    /// A walk kept: its files, and what the task's words derive from them, made when first
    /// asked.
    struct Walked {
        files: Vec<String>,
        prepared: std::sync::OnceLock<crate::stages::task_words::Prepared>,
    }

    /// The watcher's state between runs.
    struct Watcher {
        root: PathBuf,
        cache_dir: PathBuf,
        fd: Arc<OwnedFd>,
        watches: Arc<Mutex<Watches>>,
        /// Folders watched since before a run that ended well stamped them.
        settled: Arc<HashSet<String>>,
        dirty: Dirty,
        /// Moves when a folder's entries or an ignore file change: the walks kept are stale.
        shape: u64,
        /// The last run that ended well.
        last_ok: u64,
        listings: Listings,
        index: Index,
        /// The word index of the task's words, opened at the first such question.
        terms: Option<Terms>,
        universes: Vec<(ScopeKey, u64, Arc<Walked>)>,
        /// The repository's folder was removed or moved: the watcher stops.
        gone: bool,
        /// Watches at `.git` and `.git/info` (the ignore rules of `info/exclude`).
        git: HashMap<i32, &'static str>,
        /// The walk of the last run, when it ran: its listings are kept after the answer.
        walked: bool,
        /// The kernel's refusal of a watch was said.
        said_refused: bool,
    }

    /// Watches the repository at `root` (canonical) until a signal ends the process (its
    /// socket removed) or the repository's folder goes, answering on a socket in
    /// `cache_dir`; `ready` is called with the socket's path once it listens, `tell` with
    /// what the user should know on the way.
    pub fn run(
        root: &Path,
        cache_dir: &Path,
        ready: impl FnOnce(&Path),
        tell: &dyn Fn(Told<'_>),
    ) -> Result<()> {
        let socket = crate::stages::related::ask::socket_path(cache_dir, root);
        let io =
            |what: &str, e: std::io::Error| Error::Failed(format!("curate watch: {what}: {e}"));
        std::fs::create_dir_all(cache_dir).map_err(|e| io("cannot make the cache folder", e))?;
        // The repository as it is at the start, watched before the socket is there: a
        // compile (or a test) that finds the socket may move it at once.
        let root_id = identity(root);
        if root_id.is_none() {
            return Err(Error::Failed(format!(
                "curate watch: {} was removed or moved",
                root.display()
            )));
        }
        let fd = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC)
            .map_err(|e| io("inotify", e.into()))?;
        let fd = Arc::new(fd);
        let watches = Arc::new(Mutex::new(Watches {
            fd: Arc::clone(&fd),
            root: root.to_owned(),
            by_wd: HashMap::default(),
            by_path: HashMap::default(),
            pending: Vec::new(),
            run: 0,
            in_run: false,
            refused: None,
        }));
        let dir = Some(cache_dir.to_owned());
        let mut w = Watcher {
            root: root.to_owned(),
            cache_dir: cache_dir.to_owned(),
            fd,
            watches,
            settled: Arc::new(HashSet::default()),
            dirty: Dirty::default(),
            shape: 0,
            last_ok: 0,
            listings: Listings::open(dir.clone(), root),
            index: Index::open(dir, root),
            terms: None,
            universes: Vec::new(),
            gone: false,
            git: HashMap::default(),
            walked: false,
            said_refused: false,
        };
        // The root from the start: its removal ends the watcher before any run.
        w.watches
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .add("");
        w.watch_git();
        let (listener, made) = listen(&socket)?;
        // Removed when the process ends, by a signal too.
        if !crate::util::atomic::remove_on_signal(&socket) {
            let _ = std::fs::remove_file(&socket);
            return Ok(());
        }
        ready(&socket);
        let served = w.serve(&listener, (&socket, made), root_id, tell);
        let _ = std::fs::remove_file(&socket);
        crate::util::atomic::unregister(&socket);
        served
    }

    /// A file's device and inode, as `lstat` gives them (`None`: not there).
    fn identity(path: &Path) -> Option<(u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        std::fs::symlink_metadata(path)
            .ok()
            .map(|m| (m.dev(), m.ino()))
    }

    /// Answers a connection with an error, not reading its question.
    fn refuse(stream: UnixStream, why: &str) {
        let _ = stream.set_nonblocking(false);
        let _ = stream.set_write_timeout(Some(QUESTION_TIME));
        send(stream, &refusal(why.to_owned()));
    }

    /// Writes `answer` as one JSON line and closes the connection (a client gone is no error).
    fn send(mut stream: UnixStream, answer: &Answer) {
        if let Ok(mut line) = serde_json::to_vec(answer) {
            line.push(b'\n');
            let _ = stream.write_all(&line);
        }
    }

    /// Listens at `socket`: a socket left by a watcher that ended without removing it is
    /// replaced; one that answers is another watcher's (an error).
    /// Listens at `socket`: the listener, and the socket's identity as made (taken before
    /// it is renamed into place: one removed or replaced at once is told apart).
    fn listen(socket: &Path) -> Result<(UnixListener, Option<(u64, u64)>)> {
        if let Ok(meta) = std::fs::symlink_metadata(socket) {
            if !meta.file_type().is_socket() {
                return Err(Error::Failed(format!(
                    "curate watch: {} is there and is no socket",
                    socket.display()
                )));
            }
            if UnixStream::connect(socket).is_ok() {
                return Err(Error::Failed(format!(
                    "curate watch: this repository is watched already (by the process answering at {})",
                    socket.display()
                )));
            }
            let _ = std::fs::remove_file(socket);
        }
        // This user's only (the cache folder may be shared): made so, not changed after.
        // Bound and listening under a name of its own, then renamed into place: a compile
        // that finds the socket never meets it between `bind` and `listen`, where a
        // connection is refused (and, under load, it would fall back to ranking alone).
        // (A shorter name than the socket's: what `sun_path` takes is judged by the socket.)
        let pending = socket.with_file_name(format!(".w{}", std::process::id()));
        let _ = std::fs::remove_file(&pending);
        let mask = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o177));
        let bound = UnixListener::bind(&pending);
        rustix::process::umask(mask);
        // `sun_path`: 108 bytes with the closing NUL.
        let long = socket.as_os_str().len() >= 108;
        let bound = bound.and_then(|listener| {
            if long {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "path must be shorter than SUN_LEN",
                ));
            }
            let made = identity(&pending);
            std::fs::rename(&pending, socket).map(|()| (listener, made))
        });
        if bound.is_err() {
            let _ = std::fs::remove_file(&pending);
        }
        let (listener, made) = bound.map_err(|e| {
            Error::Failed(format!(
                "curate watch: cannot listen at {}: {e}{}",
                socket.display(),
                if long {
                    format!(
                        " (its path is {} bytes, over the 107 a Unix socket allows: set CURATE_CACHE_DIR to a shorter folder)",
                        socket.as_os_str().len()
                    )
                } else {
                    String::new()
                }
            ))
        })?;
        listener
            .set_nonblocking(true)
            .map_err(|e| Error::Failed(format!("curate watch: {}: {e}", socket.display())))?;
        Ok((listener, made))
    }

    impl Watcher {
        fn serve(
            &mut self,
            listener: &UnixListener,
            (socket, ours): (&Path, Option<(u64, u64)>),
            root: Option<(u64, u64)>,
            tell: &dyn Fn(Told<'_>),
        ) -> Result<()> {
            use rustix::event::{PollFd, PollFlags, Timespec, poll};
            // `ours`: its own socket as it was made; `root`: the repository's folder at the
            // start.
            // What no event tells (the folder removed while a process still holds it, a
            // folder above it renamed, the cache folder removed) is looked at this often.
            let tick = Timespec {
                tv_sec: 2,
                tv_nsec: 0,
            };
            loop {
                let mut fds = [
                    PollFd::new(listener, PollFlags::IN),
                    PollFd::new(&*self.fd, PollFlags::IN),
                ];
                match poll(&mut fds, Some(&tick)) {
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(e) => return Err(Error::Failed(format!("curate watch: poll: {e}"))),
                }
                let asked = fds[0].revents().contains(PollFlags::IN);
                // Events are taken while idle too: the kernel's queue does not overflow.
                self.drain();
                if self.gone || identity(&self.root) != root {
                    // A question waiting is told so, not left to its timeout.
                    while let Ok((stream, _)) = listener.accept() {
                        refuse(stream, "the repository it watched was removed or moved");
                    }
                    return Err(Error::Failed(format!(
                        "curate watch: {} was removed or moved",
                        self.root.display()
                    )));
                }
                if identity(socket) != ours {
                    return Err(Error::Failed(format!(
                        "curate watch: its socket {} was removed or replaced: no compile can ask it",
                        socket.display()
                    )));
                }
                if asked {
                    while let Ok((stream, _)) = listener.accept() {
                        self.answer(stream, tell);
                    }
                }
            }
        }

        /// Watches `.git` and `.git/info` where they are folders and are not watched yet (a
        /// repository made or remade after the watcher started): a new watch moves the shape,
        /// for `info/exclude` may have changed before it.
        fn watch_git(&mut self) {
            for (rel, name) in [(".git", "info"), (".git/info", "exclude")] {
                let abs = self.root.join(rel);
                if !std::fs::symlink_metadata(&abs).is_ok_and(|m| m.is_dir()) {
                    continue;
                }
                if let Ok(wd) = inotify::add_watch(&*self.fd, &abs, EVENTS)
                    && self.git.insert(wd, name).is_none()
                {
                    self.shape += 1;
                }
            }
        }

        /// Reads every event the kernel holds into [`Watcher::dirty`].
        fn drain(&mut self) {
            let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 16 * 1024];
            let fd = Arc::clone(&self.fd);
            let mut reader = inotify::Reader::new(fd.as_fd(), &mut buf);
            loop {
                let (wd, flags, name) = match reader.next() {
                    Ok(e) => (
                        e.wd(),
                        e.events(),
                        e.file_name()
                            .map(|n| String::from_utf8_lossy(n.to_bytes()).into_owned()),
                    ),
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(_) => break,
                };
                self.event(wd, flags, name.as_deref());
            }
        }

        fn event(&mut self, wd: i32, flags: ReadFlags, name: Option<&str>) {
            if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                self.unsettle_all();
                return;
            }
            if let Some(&wanted) = self.git.get(&wd) {
                // `.git/info/exclude` is an ignore file; nothing else in `.git` is walked.
                if name == Some(wanted) {
                    self.shape += 1;
                }
                if flags
                    .intersects(ReadFlags::IGNORED | ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF)
                {
                    self.git.remove(&wd);
                    self.shape += 1;
                }
                return;
            }
            let mut watches = self
                .watches
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let Some(dir) = watches.by_wd.get(&wd).cloned() else {
                return;
            };
            let settled = Arc::make_mut(&mut self.settled);
            let Some(name) = name else {
                // The folder itself.
                if flags.intersects(
                    ReadFlags::DELETE_SELF
                        | ReadFlags::MOVE_SELF
                        | ReadFlags::IGNORED
                        | ReadFlags::UNMOUNT,
                ) {
                    if dir.is_empty() {
                        self.gone = true;
                    }
                    watches.remove_tree(&dir, settled);
                    self.dirty.trees.insert(dir);
                } else {
                    self.dirty.folders.insert(dir);
                }
                self.shape += 1;
                return;
            };
            let path = join(&dir, name);
            let entries_changed = flags.intersects(
                ReadFlags::CREATE | ReadFlags::DELETE | ReadFlags::MOVED_FROM | ReadFlags::MOVED_TO,
            );
            if flags.contains(ReadFlags::ISDIR) {
                if entries_changed {
                    if flags.intersects(ReadFlags::DELETE | ReadFlags::MOVED_FROM) {
                        watches.remove_tree(&path, settled);
                    }
                    self.dirty.trees.insert(path);
                    self.dirty.folders.insert(dir);
                } else {
                    // Its own stamp (a `chmod`, a `touch`).
                    self.dirty.folders.insert(path);
                }
                self.shape += 1;
                return;
            }
            if entries_changed {
                self.dirty.folders.insert(dir);
                self.shape += 1;
            }
            if matches!(name, ".gitignore" | ".ignore") {
                self.shape += 1;
            }
            self.dirty.files.insert(path);
        }

        /// Nothing is vouched for until a run has stamped it all again (an overflow, a
        /// run that failed).
        fn unsettle_all(&mut self) {
            let mut watches = self
                .watches
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let run = watches.run;
            let again: Vec<(String, u64)> = watches
                .by_path
                .keys()
                .map(|p| (p.clone(), run + 1))
                .collect();
            watches.pending = again;
            self.settled = Arc::new(HashSet::default());
            self.dirty = Dirty::default();
            if let Some(terms) = &mut self.terms {
                terms.forget_watched();
            }
            self.universes.clear();
            self.shape += 1;
        }

        /// Answers one connection; a question that does not come or does not decode is
        /// dropped.
        fn answer(&mut self, mut stream: UnixStream, tell: &dyn Fn(Told<'_>)) {
            let _ = stream.set_nonblocking(false);
            let _ = stream.set_read_timeout(Some(QUESTION_TIME));
            let _ = stream.set_write_timeout(Some(QUESTION_TIME));
            let mut bytes = Vec::new();
            let limit = crate::stages::related::ask::MAX_BYTES;
            if (&mut stream).take(limit).read_to_end(&mut bytes).is_err() {
                return;
            }
            let answer = match serde_json::from_slice::<Question>(&bytes) {
                Ok(q) => match check_question(&q, &self.root) {
                    Ok(()) => {
                        let started = std::time::Instant::now();
                        let answer = self.rank(&q, tell);
                        if answer.error.is_none() {
                            let ms = started.elapsed().as_millis();
                            tell(Told::Answered(&match &q.asking {
                                Asking::Related { owned, .. } => format!(
                                    "curate watch: change {}: {} related file{} for {} owned, {ms} ms\n",
                                    q.change,
                                    answer.found.len(),
                                    if answer.found.len() == 1 { "" } else { "s" },
                                    owned.len(),
                                ),
                                Asking::Task { .. } => format!(
                                    "curate watch: change {}: {} file{} from the task's words, {ms} ms\n",
                                    q.change,
                                    answer.task.len(),
                                    if answer.task.len() == 1 { "" } else { "s" },
                                ),
                            }));
                        }
                        answer
                    }
                    Err(why) => refusal(why),
                },
                Err(e) => refusal(format!("a question that does not decode: {e}")),
            };
            send(stream, &answer);
            // After the answer: what the run kept becomes the next run's start.
            if std::mem::take(&mut self.walked)
                && let Some(next) = self.listings.save_next()
            {
                self.listings = next;
            }
            if let Some(next) = self.index.save_next() {
                self.index = next;
            }
        }

        /// Runs `--related` for `q`, taking as kept what the events vouch for.
        fn rank(&mut self, q: &Question, tell: &dyn Fn(Told<'_>)) -> Answer {
            // Whatever happened before the question was sent is in the kernel's queue now.
            self.drain();
            self.watch_git();
            let run = {
                let mut watches = self
                    .watches
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                watches.run += 1;
                watches.in_run = true;
                // Watched since before a run that ended well: its stamps since are told.
                let last_ok = self.last_ok;
                let (ready, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut watches.pending)
                    .into_iter()
                    .partition(|(_, since)| *since <= last_ok);
                watches.pending = waiting;
                let settled = Arc::make_mut(&mut self.settled);
                settled.extend(
                    ready
                        .into_iter()
                        .map(|(p, _)| p)
                        .filter(|p| watches.by_path.contains_key(p)),
                );
                watches.run
            };
            let vouch = Arc::new(Vouch {
                settled: Arc::clone(&self.settled),
                dirty: std::mem::take(&mut self.dirty),
                watches: Arc::clone(&self.watches),
            });
            // Every run, whatever it asks: what changed since the last is trusted no more.
            if let Some(terms) = &mut self.terms {
                terms.watched_by(Arc::clone(&vouch) as Arc<dyn Unchanged>);
            }
            let ranked = self.rank_with(q, &vouch);
            self.watches
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .in_run = false;
            match ranked {
                Ok(answer) => {
                    self.last_ok = run;
                    self.report_refused(tell);
                    answer
                }
                Err(e) => {
                    self.unsettle_all();
                    refusal(e.to_string())
                }
            }
        }

        /// Answers `q`, taking as kept what the events vouch for.
        fn rank_with(&mut self, q: &Question, vouch: &Arc<Vouch>) -> Result<Answer> {
            let universe = self.universe(q, vouch)?;
            let cache =
                crate::util::cache::DigestCache::open(Some(self.cache_dir.clone()), q.encoding);
            let fast = crate::stages::tokens::Fast(q.encoding);
            let counter = crate::stages::tokens::Cached::new(&cache, &fast);
            let mut answer = Answer::empty();
            match &q.asking {
                Asking::Related { owned, budget } => {
                    answer.found =
                        crate::stages::related::related(&crate::stages::related::Inputs {
                            root: &self.root,
                            universe: &universe.files,
                            owned: owned.clone(),
                            budget: *budget,
                            max_file_size: q.max_file_size,
                            rules: crate::trust::admit::rules()?,
                            counter: &counter,
                            index: &self.index,
                            unchanged: Some(&**vouch),
                        });
                }
                Asking::Task {
                    texts,
                    skip,
                    budget,
                } => {
                    use crate::compile::task;
                    let scope = scope_of(&self.root, q);
                    let asked = task::Asked {
                        scope: &scope,
                        texts: texts.clone(),
                        skip: skip.clone(),
                        budget: *budget,
                        max_file_size: q.max_file_size,
                    };
                    let texts = task::texts_of(&asked, &universe.files)?;
                    answer.texts = u32::try_from(texts.len()).unwrap_or(u32::MAX);
                    if !texts.is_empty() {
                        let terms = self.terms.get_or_insert_with(|| {
                            let mut terms = Terms::open(
                                Some(self.cache_dir.clone()),
                                &self.root,
                                &crate::stages::task_words::rank::words_of(),
                            );
                            terms.watched_by(Arc::clone(vouch) as Arc<dyn Unchanged>);
                            terms
                        });
                        let prepared = universe.prepared.get_or_init(|| {
                            crate::stages::task_words::Prepared::new(&universe.files)
                        });
                        answer.task = task::select(
                            &asked,
                            &texts,
                            &universe.files,
                            prepared,
                            &counter,
                            task::Kept {
                                terms,
                                cache: Some(self.cache_dir.clone()),
                                watched: Some(crate::stages::task_words::graph::Watched {
                                    index: &self.index,
                                    unchanged: &**vouch,
                                }),
                            },
                        )?;
                        if let Some(next) = terms.save_next(&universe.files) {
                            *terms = next;
                        }
                    }
                }
            }
            let _ = cache.save();
            Ok(answer)
        }

        /// Every file a ranking for `q` may name: the walk kept for its scope while no
        /// folder's entries changed, or walked again with the listings the events vouch for.
        fn universe(&mut self, q: &Question, vouch: &Arc<Vouch>) -> Result<Arc<Walked>> {
            let key: ScopeKey = (
                q.changes_root.clone(),
                q.change.clone(),
                q.ignore,
                q.manifest.clone(),
            );
            if let Some((_, _, u)) = self
                .universes
                .iter()
                .find(|(k, shape, _)| *k == key && *shape == self.shape)
            {
                return Ok(Arc::clone(u));
            }
            let scope = scope_of(&self.root, q);
            let shape = self.shape;
            self.listings.begin(Arc::clone(vouch) as Arc<dyn Unchanged>);
            let walked = crate::compile::related_universe(&scope, &self.listings);
            self.listings.end();
            self.walked = true;
            let walked = Arc::new(Walked {
                files: walked?,
                prepared: std::sync::OnceLock::new(),
            });
            self.universes.retain(|(k, _, _)| *k != key);
            self.universes.insert(0, (key, shape, Arc::clone(&walked)));
            self.universes.truncate(UNIVERSES);
            Ok(walked)
        }

        /// Says once that the kernel refused a watch (its limit, most often).
        fn report_refused(&mut self, tell: &dyn Fn(Told<'_>)) {
            let watches = self
                .watches
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some((rel, e)) = &watches.refused
                && !std::mem::replace(&mut self.said_refused, true)
            {
                let limit = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
                    .map_or_else(|_| "?".to_owned(), |s| s.trim().to_owned());
                tell(Told::Warning(&format!(
                    "curate watch: warning: the kernel refused to watch {} ({e}; fs.inotify.max_user_watches = {limit}, {} folders watched): folders without a watch are stamped at every run\n",
                    if rel.is_empty() { "." } else { rel },
                    watches.by_path.len()
                )));
            }
        }
    }
}
