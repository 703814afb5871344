//! The one atomic-write helper every output goes through (manifest, lock, rendered prompt,
//! adopted overrides).
//!
//! Writes a temporary `.<name>.tmp-<pid>-<random>` in the same folder, then renames it over
//! the target, so a reader sees the old file or the new one, never a part. Temporary files
//! are removed on SIGINT/SIGTERM (see [`install_cleanup`]) and stale ones left by a killed
//! process are swept on the next write into the same folder.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::util::fault::{Fault, Result};

static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Set once a termination signal arrived: no new temporary file may be registered after it.
static TERMINATING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Removes every temporary file still pending, then exits with 130; for Ctrl-C and SIGTERM.
#[allow(clippy::exit)] // the signal handler ends the process, as the default one would
pub fn install_cleanup() {
    let _ = ctrlc::set_handler(|| {
        TERMINATING.store(true, std::sync::atomic::Ordering::SeqCst);
        // Temporary files are created under this lock (see `create`), so once the handler
        // holds it no file can be half-registered; it keeps the lock until the process ends.
        let pending = PENDING.lock();
        if let Ok(pending) = &pending {
            for p in pending.iter() {
                let _ = std::fs::remove_file(p);
            }
        }
        std::process::exit(130);
    });
}

/// Removes every temporary file still pending and refuses new ones, for a front-end that
/// gives up on its work (the hook's deadline) and ends the process itself.
pub fn abandon() {
    TERMINATING.store(true, std::sync::atomic::Ordering::SeqCst);
    if let Ok(pending) = PENDING.lock() {
        for p in pending.iter() {
            let _ = std::fs::remove_file(p);
        }
        // Held until the process ends, so that no file is half-registered after this.
        std::mem::forget(pending);
    }
}

/// Creates the temporary file and registers it for removal on a signal, both under the
/// registry's lock; refuses once termination started.
fn create(
    builder: &tempfile::Builder<'_, '_>,
    dir: &Path,
) -> std::io::Result<tempfile::NamedTempFile> {
    let mut pending = PENDING
        .lock()
        .map_err(|_| std::io::Error::other("the temporary-file registry is poisoned"))?;
    if TERMINATING.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(std::io::Error::from(std::io::ErrorKind::Interrupted));
    }
    let tmp = builder.tempfile_in(dir)?;
    pending.push(tmp.path().to_owned());
    Ok(tmp)
}

/// Registers a file this process made that must not outlive it (`curate watch`'s socket)
/// for removal on a signal, as temporary files are; false once termination started.
pub fn remove_on_signal(path: &Path) -> bool {
    let Ok(mut pending) = PENDING.lock() else {
        return false;
    };
    if TERMINATING.load(std::sync::atomic::Ordering::SeqCst) {
        return false;
    }
    pending.push(path.to_owned());
    true
}

/// Forgets a file registered by [`remove_on_signal`] (or a temporary file that was
/// renamed or removed).
pub fn unregister(path: &Path) {
    if let Ok(mut pending) = PENDING.lock() {
        pending.retain(|p| p != path);
    }
}

/// The temporary-name prefix for `name`.
fn temp_prefix(name: &str) -> String {
    format!(".{name}.tmp-")
}

/// True when `file_name` is one of curate's temporary files.
#[must_use]
pub fn is_temp_name(file_name: &str) -> bool {
    file_name.starts_with('.') && file_name.contains(".tmp-")
}

/// Where a write may land.
#[derive(Debug, Clone, Copy)]
pub enum Bound<'a> {
    /// Inside this repository root (canonical), through no link that leaves it.
    Inside(&'a Path),
    /// A path a person named (`-o`): anywhere, but never through a link that leads out of
    /// this repository root unless the path named is already the link's target.
    Named(&'a Path),
}

/// The folder `dir` as the system resolves it: its longest existing ancestor made
/// canonical, with the rest appended.
fn resolved(dir: &Path) -> std::io::Result<PathBuf> {
    let mut existing = dir.to_owned();
    let mut rest = Vec::new();
    // `symlink_metadata`: a dangling link is an existing component, and fails below.
    while std::fs::symlink_metadata(&existing).is_err() {
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_owned());
                existing = parent.to_owned();
            }
            _ => break,
        }
    }
    let mut real = existing.canonicalize()?;
    for name in rest.iter().rev() {
        real.push(name);
    }
    Ok(real)
}

/// Refuses a folder that `bound` does not allow (see [`Bound`]).
pub fn check_folder(dir: &Path, bound: Bound<'_>) -> Result<()> {
    let real = resolved(dir).map_err(|source| Fault::Write {
        path: dir.to_owned(),
        source,
    })?;
    let refuse = |root: &Path| Fault::Escape {
        origin: "write".to_owned(),
        path: dir.display().to_string(),
        problem: if real.starts_with(root) {
            "is not a folder curate may write to"
        } else {
            "leads out of the repository through a link: curate never writes through it"
        },
    };
    match bound {
        Bound::Inside(root) => {
            if !real.starts_with(root) {
                return Err(refuse(root));
            }
        }
        Bound::Named(root) => {
            let lexical = crate::model::paths::lexical(dir);
            let through_link = real != lexical;
            if through_link && !real.starts_with(root) && lexical.starts_with(root) {
                return Err(refuse(root));
            }
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` atomically, creating its folder when needed, only where
/// `bound` allows.
pub fn write_bounded(path: &Path, bound: Bound<'_>, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    check_folder(dir, bound)?;
    write(path, bytes)
}

/// [`write_with_unsynced`], only where `bound` allows: a rendered output, which the same
/// command makes again (a bulk bundle's `fsync` was an eighth of its render).
pub fn write_with_bounded_unsynced<E: From<Fault>>(
    path: &Path,
    bound: Bound<'_>,
    fill: impl FnOnce(&mut dyn Write) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let dir = path.parent().unwrap_or(Path::new("."));
    check_folder(dir, bound)?;
    write_with_unsynced(path, fill)
}

/// [`write_bounded`] without the `fsync` before the rename, for a file that only has to
/// outlive the process, not a power cut (a breadcrumb another hook takes seconds later):
/// a reader still sees the old file or the new one, never a part.
pub fn write_bounded_unsynced(path: &Path, bound: Bound<'_>, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    check_folder(dir, bound)?;
    write_inner(path, false, |w| write_all(w, path, bytes))
}

/// [`write`] without the `fsync` before the rename, for a cache whose records are checked
/// when read: one a power cut left damaged is read as no cache.
pub fn write_unsynced(path: &Path, bytes: &[u8]) -> Result<()> {
    write_inner(path, false, |w| write_all(w, path, bytes))
}

/// Writes `bytes` to `path` atomically, creating its folder when needed.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    write_with(path, |w| write_all(w, path, bytes))
}

fn write_all(w: &mut dyn Write, path: &Path, bytes: &[u8]) -> Result<()> {
    w.write_all(bytes).map_err(|source| Fault::Write {
        path: path.to_owned(),
        source,
    })
}

/// Writes to `path` atomically what `fill` streams into the writer it is given (buffered);
/// when `fill` fails, the temporary file is removed and the target is left as it was.
pub fn write_with<E: From<Fault>>(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    write_inner(path, true, fill)
}

/// [`write_with`] without the `fsync` before the rename, for a file made again by the run
/// that needs it (a cache, a rendered output): a reader still sees the old file or the
/// new one, never a part.
pub fn write_with_unsynced<E: From<Fault>>(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    write_inner(path, false, fill)
}

/// The write; `sync`: flushed to the disk (`fsync`) before the rename.
fn write_inner<E: From<Fault>>(
    path: &Path,
    sync: bool,
    fill: impl FnOnce(&mut dyn Write) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // The folders this write makes are removed again if it fails: nothing is left.
    let made = missing_folders(&dir);
    if let Err(source) = std::fs::create_dir_all(&dir) {
        remove_empty(&made);
        return Err(Fault::Write {
            path: path.to_owned(),
            source,
        }
        .into());
    }
    let result = write_in(path, &dir, &name, sync, fill);
    if result.is_err() {
        remove_empty(&made);
    }
    result
}

/// The folders of `dir` that do not exist, deepest first.
fn missing_folders(dir: &Path) -> Vec<PathBuf> {
    dir.ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && std::fs::symlink_metadata(d).is_err())
        .map(Path::to_owned)
        .collect()
}

/// Removes `folders` (deepest first), each only while it is empty.
fn remove_empty(folders: &[PathBuf]) {
    for folder in folders {
        if std::fs::remove_dir(folder).is_err() {
            return;
        }
    }
}

/// [`write_inner`] in its folder, which exists.
fn write_in<E: From<Fault>>(
    path: &Path,
    dir: &Path,
    name: &str,
    sync: bool,
    fill: impl FnOnce(&mut dyn Write) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let werr = |source| -> E {
        Fault::Write {
            path: path.to_owned(),
            source,
        }
        .into()
    };
    sweep(dir, name);
    let prefix = format!("{}{}-", temp_prefix(name), std::process::id());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).rand_bytes(8);
    // tempfile creates 0600 files; a new output gets 0666 less the umask, as `File::create`.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut tmp = create(&builder, dir).map_err(werr)?;
    let tmp_path = tmp.path().to_owned();
    let result = (|| {
        // A rewritten file keeps its mode; a new one gets the usual 0666 less the umask.
        if let Ok(meta) = std::fs::metadata(path) {
            tmp.as_file()
                .set_permissions(meta.permissions())
                .map_err(werr)?;
        }
        let mut out = std::io::BufWriter::with_capacity(256 * 1024, tmp.as_file_mut());
        fill(&mut out)?;
        out.flush().map_err(werr)?;
        drop(out);
        if sync {
            tmp.as_file().sync_all().map_err(werr)?;
            tmp.persist(path).map_err(|e| werr(e.error))?;
        } else {
            replace_unsynced(tmp, path).map_err(werr)?;
        }
        Ok(())
    })();
    unregister(&tmp_path);
    result
}

/// Puts the temporary file, not flushed to the disk, in the place of `path`. An existing
/// regular file is exchanged with it (`renameat2` with `RENAME_EXCHANGE`, as atomic for a
/// reader as a rename), then removed under the temporary name: renamed over, ext4 would first
/// write the new file out (`auto_da_alloc`: ≈ 70 ms for a 100 MB bundle), the flush this
/// write chose not to make. Elsewhere, or when the exchange is refused, a rename.
fn replace_unsynced(tmp: tempfile::NamedTempFile, path: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file()) {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        let exchange = || renameat_with(CWD, tmp.path(), CWD, path, RenameFlags::EXCHANGE);
        if exchange().is_ok() {
            // The old file now has the temporary name: removed. Were it no longer a file (a
            // folder put in its place meanwhile), the two go back and the rename decides.
            if std::fs::remove_file(tmp.path()).is_ok() {
                let _ = tmp.into_temp_path().keep();
                return Ok(());
            }
            exchange()?;
        }
    }
    tmp.persist(path).map(drop).map_err(|e| e.error)
}

/// Removes temporary files for `name` in `dir` whose writer is gone.
fn sweep(dir: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let prefix = temp_prefix(name);
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else {
            continue;
        };
        let Some(rest) = file_name.strip_prefix(&prefix) else {
            continue;
        };
        let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|pid| !alive(pid)) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether a process is running (on Linux; elsewhere a temporary file older than an hour
/// counts as stale by its age, which `sweep` does not check, so it is kept).
fn alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    if cfg!(target_os = "linux") {
        Path::new(&format!("/proc/{pid}")).exists()
    } else {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_whole_files_and_leaves_no_temporary_behind() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("sub/out.txt");
        write(&target, b"one").unwrap();
        write(&target, b"two").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.txt")]);
    }

    /// Unsynced, an existing file is exchanged with the new one and the old removed: the
    /// target has the new bytes and its mode, no temporary is left; a folder in the target's
    /// place is an error and stays as it was.
    #[test]
    fn an_unsynced_write_replaces_a_file_and_never_a_folder() {
        let names = |dir: &Path| -> Vec<String> {
            let mut v: Vec<String> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        };
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.md");
        write_with_unsynced(&target, |w| write_all(w, &target, b"first")).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
        }
        write_with_unsynced(&target, |w| write_all(w, &target, b"second")).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"second");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&target).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o640);
        }
        assert_eq!(names(dir.path()), ["out.md"]);
        let folder = dir.path().join("sub");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("kept.txt"), b"kept").unwrap();
        assert!(write_with_unsynced(&folder, |w| write_all(w, &folder, b"x")).is_err());
        assert_eq!(std::fs::read(folder.join("kept.txt")).unwrap(), b"kept");
        assert_eq!(names(dir.path()), ["out.md", "sub"]);
    }

    /// A write that fails leaves nothing: not the temporary file, not the folders it made
    /// for the target; a folder that was there stays, and so does one that holds something.
    #[test]
    fn a_failed_write_removes_the_folders_it_made() {
        let dir = tempfile::tempdir().unwrap();
        let fail = |_: &mut dyn Write| -> Result<()> { Err(Fault::Failed("no".to_owned())) };
        assert!(write_with(&dir.path().join("a/b/c/out.md"), fail).is_err());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        std::fs::create_dir(dir.path().join("a")).unwrap();
        assert!(write_with_unsynced(&dir.path().join("a/b/out.md"), fail).is_err());
        assert!(dir.path().join("a").is_dir());
        assert!(!dir.path().join("a/b").exists());
        // Written: the folders stay.
        write(&dir.path().join("a/b/out.md"), b"x").unwrap();
        assert_eq!(std::fs::read(dir.path().join("a/b/out.md")).unwrap(), b"x");
    }

    #[test]
    fn stale_temporaries_of_dead_processes_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        // pid 0 is never a user process, so the file counts as stale.
        let stale = dir.path().join(".out.txt.tmp-999999999-abcdefgh");
        std::fs::write(&stale, b"partial").unwrap();
        write(&dir.path().join("out.txt"), b"x").unwrap();
        assert!(!stale.exists());
    }
}
