//! Bounded reads of regular files: the one way curate opens a file.
//!
//! A FIFO, socket or device is refused before a byte is read (it is opened non-blocking and
//! checked on the open handle, so nothing waits on a writer that never comes), and no read
//! takes more than its cap: `/dev/zero` named as any input is an error, never an
//! out-of-memory. Nothing here knows about repositories or secrets; `trust::admit` does.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The size cap of a small input: contracts, config, overrides, task file, a list of paths,
/// a manifest read by `check` or `render --manifest`, a template.
pub const INPUT_CAP: u64 = 16 * 1024 * 1024;

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not a regular file ({kind}); only regular files are read", path.display())]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error("{} is larger than {cap} bytes", path.display())]
    TooLarge { path: PathBuf, cap: u64 },
}

/// Nothing is at the path: not found, or a step of it is a file (`changes/notes.md/x`).
#[must_use]
pub fn is_absent(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

/// What kind of file a file type is, in words.
#[must_use]
pub fn kind_of(ft: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_socket() {
            return "a socket";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
    }
    if ft.is_dir() {
        "a folder"
    } else if ft.is_symlink() {
        "a link"
    } else if ft.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// Opens a regular file for reading without ever blocking on a FIFO or a device.
pub fn open_regular(path: &Path) -> Result<(File, u64), ReadError> {
    let io = |source| ReadError::Io {
        path: path.to_owned(),
        source,
    };
    // A cheap first look: a FIFO is refused before `open`, which would wait for a writer.
    regular(&std::fs::metadata(path).map_err(io)?, path)?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Swapped for a FIFO between the look and the open: still never blocks.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    regular(&meta, path)?;
    Ok((file, meta.len()))
}

/// `Ok` for a regular file; else what it is.
fn regular(meta: &std::fs::Metadata, path: &Path) -> Result<(), ReadError> {
    if meta.is_file() {
        Ok(())
    } else {
        Err(ReadError::NotRegular {
            path: path.to_owned(),
            kind: kind_of(meta.file_type()),
        })
    }
}

/// Opens `rel` (a `/` path without links) below the folder `root` for reading, the kernel
/// refusing a link anywhere on the way and any step out of `root` (`openat2` with
/// `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`): nothing can be swapped for a link between the
/// caller's check of the path and the open. A FIFO or device is looked at (`lstat`), never
/// opened. `None` where the kernel has no `openat2` (the caller opens by path).
#[cfg(target_os = "linux")]
pub fn open_regular_beneath(root: &Path, rel: &str) -> Option<Result<(File, u64), ReadError>> {
    use rustix::fs::{Mode, OFlags, ResolveFlags, openat2};
    use rustix::io::Errno;
    let path = root.join(rel);
    let io = |e: std::io::Error| ReadError::Io {
        path: path.clone(),
        source: e,
    };
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    let dir = match rustix::fs::open(
        root,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(dir) => dir,
        Err(e) => return Some(Err(io(e.into()))),
    };
    let open =
        |flags: OFlags| match openat2(&dir, rel, flags | OFlags::CLOEXEC, Mode::empty(), resolve) {
            Err(Errno::NOSYS | Errno::PERM | Errno::INVAL | Errno::AGAIN) => None,
            Err(Errno::LOOP | Errno::XDEV) => Some(Err(io(std::io::Error::other(
                "its path met a link or left the repository while it was read",
            )))),
            Err(e) => Some(Err(io(e.into()))),
            Ok(fd) => Some(Ok(File::from(fd))),
        };
    let checked = |file: File| -> Result<(File, u64), ReadError> {
        let meta = file.metadata().map_err(io)?;
        regular(&meta, &path)?;
        Ok((file, meta.len()))
    };
    // Looked at first (a `stat`, which opens nothing: a device is never opened), then
    // opened for reading, beneath the root and without links, and looked at again: what
    // was swapped in between is refused by that second look, never read.
    if let Err(e) = looked_at(&dir, rel, &path) {
        return Some(Err(e));
    }
    Some(open(OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY)?.and_then(checked))
}

/// `Ok` when `rel` below `dir` is a regular file by `lstat`; a link is refused as
/// `openat2` refuses one on the way (a link on the way is refused by the open after).
#[cfg(target_os = "linux")]
fn looked_at(dir: &impl rustix::fd::AsFd, rel: &str, path: &Path) -> Result<(), ReadError> {
    use rustix::fs::{AtFlags, FileType, statat};
    let io = |source| ReadError::Io {
        path: path.to_owned(),
        source,
    };
    let stat = statat(dir, rel, AtFlags::SYMLINK_NOFOLLOW | AtFlags::NO_AUTOMOUNT)
        .map_err(|e| io(e.into()))?;
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => Ok(()),
        FileType::Symlink => Err(io(std::io::Error::other(
            "its path met a link or left the repository while it was read",
        ))),
        // Named in [`kind_of`]'s words (a second look, on this rare path only).
        _ => {
            let meta = std::fs::symlink_metadata(path).map_err(io)?;
            regular(&meta, path)
        }
    }
}

/// [`open_regular_beneath`] where the platform has it, else [`open_regular`] by path.
pub fn open_regular_inside(root: &Path, rel: &str) -> Result<(File, u64), ReadError> {
    #[cfg(target_os = "linux")]
    if let Some(opened) = open_regular_beneath(root, rel) {
        return opened;
    }
    open_regular(&root.join(rel))
}

/// Reads a whole regular file of at most `cap` bytes (0 = no cap).
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    let (file, len) = match open_regular(path) {
        Ok(opened) => opened,
        // The null device, named as an input, is the empty input (`--touched-from /dev/null`:
        // an empty list); every other device is refused unread.
        Err(ReadError::NotRegular { .. }) if is_null_device(path) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    if cap > 0 && len > cap {
        return Err(ReadError::TooLarge {
            path: path.to_owned(),
            cap,
        });
    }
    read_limited(file, path, cap, len)
}

/// True when `path` is the null device (`/dev/null`, or a link to it).
fn is_null_device(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let (Ok(meta), Ok(null)) = (std::fs::metadata(path), std::fs::metadata("/dev/null")) else {
            return false;
        };
        meta.file_type().is_char_device() && meta.rdev() == null.rdev()
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// Reads at most `cap` bytes from `reader` (0 = no cap); more is [`ReadError::TooLarge`].
pub fn read_limited(
    reader: impl Read,
    path: &Path,
    cap: u64,
    hint: u64,
) -> Result<Vec<u8>, ReadError> {
    let limit = if cap == 0 { u64::MAX } else { cap + 1 };
    let mut buf = Vec::with_capacity(usize::try_from(hint.min(INPUT_CAP)).unwrap_or(0));
    reader
        .take(limit)
        .read_to_end(&mut buf)
        .map_err(|source| ReadError::Io {
            path: path.to_owned(),
            source,
        })?;
    if cap > 0 && buf.len() as u64 > cap {
        return Err(ReadError::TooLarge {
            path: path.to_owned(),
            cap,
        });
    }
    Ok(buf)
}

/// Reads standard input, up to `cap` bytes.
pub fn read_stdin(cap: u64) -> Result<Vec<u8>, ReadError> {
    read_limited(std::io::stdin().lock(), Path::new("<stdin>"), cap, 0)
}

/// What [`names_in`] lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entries {
    /// Regular files (not links).
    Files,
    /// Folders (not links).
    Folders,
}

/// The UTF-8 names of the regular files or folders directly in `dir` (links are not
/// followed, so not listed), sorted in byte order; empty when `dir` is not a folder.
#[must_use]
pub fn names_in(dir: &Path, what: Entries) -> Vec<String> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = read
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_type().is_ok_and(|t| match what {
                Entries::Files => t.is_file(),
                Entries::Folders => t.is_dir(),
            })
        })
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}

/// Bytes as text, invalid UTF-8 replaced: valid text (nearly every file) is checked by the
/// standard library's word-at-a-time validator and borrowed; only invalid text pays for
/// `from_utf8_lossy`'s chunked walk and copy (that walk alone was 6 % of a token count).
#[must_use]
pub fn text_of(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn beneath_the_root_no_link_and_no_climb_is_ever_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        std::fs::write(root.join("real/a.md"), b"text").unwrap();
        std::os::unix::fs::symlink("real", root.join("alias")).unwrap();
        let (_, len) = open_regular_inside(&root, "real/a.md").unwrap();
        assert_eq!(len, 4);
        for refused in ["alias/a.md", "../x", "real/../../x"] {
            assert!(
                matches!(
                    open_regular_inside(&root, refused),
                    Err(ReadError::Io { .. })
                ),
                "{refused}"
            );
        }
        let fifo = root.join("pipe");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        assert!(matches!(
            open_regular_inside(&root, "pipe"),
            Err(ReadError::NotRegular { kind: "a FIFO", .. })
        ));
        assert!(matches!(
            open_regular_inside(&root, "real"),
            Err(ReadError::NotRegular {
                kind: "a folder",
                ..
            })
        ));
        // A link as the last part, to a file inside or to a device: refused, never opened.
        std::os::unix::fs::symlink("real/a.md", root.join("link.md")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join("zero")).unwrap();
        for refused in ["link.md", "zero"] {
            assert!(
                matches!(
                    open_regular_inside(&root, refused),
                    Err(ReadError::Io { .. })
                ),
                "{refused}"
            );
        }
    }

    #[test]
    fn a_cap_is_a_clear_error_not_a_truncation() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"12345").unwrap();
        assert_eq!(read_capped(&p, 5).unwrap(), b"12345");
        assert!(matches!(
            read_capped(&p, 4),
            Err(ReadError::TooLarge { cap: 4, .. })
        ));
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_folders_are_refused_unread() {
        let err = read_capped(Path::new("/dev/zero"), 0).unwrap_err();
        assert!(
            matches!(
                err,
                ReadError::NotRegular {
                    kind: "a character device",
                    ..
                }
            ),
            "{err:?}"
        );
        let err = read_capped(Path::new("/"), 0).unwrap_err();
        assert!(matches!(
            err,
            ReadError::NotRegular {
                kind: "a folder",
                ..
            }
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&p).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo failed");
        let err = read_capped(&p, 0).unwrap_err();
        assert!(matches!(err, ReadError::NotRegular { kind: "a FIFO", .. }));
    }
}
