//! A file's stamp (its size, times, inode and device): what says, without reading it, that a
//! file still has the bytes it had when they were last read, as git's index does. A stamp
//! taken less than [`RACY`] before a run started is never trusted: the file may change again
//! within the same tick of the file system's clock, its stamp unchanged.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A file modified less than this before the run started may change again within the same
/// tick of the file system's clock, its stamp unchanged: it is read again next time.
pub const RACY: Duration = Duration::from_secs(1);

/// A file's metadata, as `lstat` gives it: a file whose stamp is the same is taken to have
/// the same bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub size: u64,
    pub mtime: (i64, u32),
    pub ctime: (i64, u32),
    pub ino: u64,
    pub dev: u64,
}

impl Stamp {
    /// The stamp of an opened file (`fstat`); `None` for anything but a regular file.
    #[must_use]
    pub fn of_file(file: &std::fs::File) -> Option<Stamp> {
        #[cfg(unix)]
        {
            Stamp::of_stat(&rustix::fs::fstat(file).ok()?, false)
        }
        #[cfg(not(unix))]
        {
            let _ = file;
            None
        }
    }

    /// A stamp of `size` bytes with fixed times and numbers, for tests.
    #[cfg(test)]
    #[must_use]
    pub fn sample(size: u64) -> Stamp {
        Stamp {
            size,
            mtime: (1_600_000_000, 5),
            ctime: (-3, 999_999_999),
            ino: 42,
            dev: 7,
        }
    }

    /// The stamp of the regular file at `path` (not followed if a link); `None` for anything
    /// else, or where the platform has no inode. (A run stamps through [`Base`].)
    #[cfg(test)]
    #[must_use]
    pub fn of(path: &Path) -> Option<Stamp> {
        Stamp::of_kind(path, false)
    }

    /// The stamp of the folder at `path` (not followed if a link); `None` for anything else.
    #[cfg(test)]
    #[must_use]
    pub fn of_folder(path: &Path) -> Option<Stamp> {
        Stamp::of_kind(path, true)
    }

    fn of_kind(path: &Path, folder: bool) -> Option<Stamp> {
        #[cfg(unix)]
        {
            Stamp::of_stat(&rustix::fs::lstat(path).ok()?, folder)
        }
        #[cfg(not(unix))]
        {
            let _ = (path, folder);
            None
        }
    }

    /// The stamp `lstat` gives of what `rel` names under the folder `fd`, when it is a
    /// folder (`folder`) or a regular file.
    #[cfg(unix)]
    fn at(fd: &rustix::fd::OwnedFd, rel: &str, folder: bool) -> Option<Stamp> {
        use rustix::fs::{AtFlags, statat};
        let st = statat(
            fd,
            if rel.is_empty() { "." } else { rel },
            AtFlags::SYMLINK_NOFOLLOW,
        )
        .ok()?;
        Stamp::of_stat(&st, folder)
    }

    /// The stamp in `st`, when it is a folder's (`folder`) or a regular file's.
    #[cfg(unix)]
    // The fields' types differ between platforms (`st_dev` is signed on macOS).
    #[allow(clippy::useless_conversion)]
    fn of_stat(st: &rustix::fs::Stat, folder: bool) -> Option<Stamp> {
        use rustix::fs::FileType;
        let want = if folder {
            FileType::Directory
        } else {
            FileType::RegularFile
        };
        if FileType::from_raw_mode(st.st_mode) != want {
            return None;
        }
        Some(Stamp {
            size: u64::try_from(st.st_size).ok()?,
            mtime: (
                i64::try_from(st.st_mtime).ok()?,
                u32::try_from(st.st_mtime_nsec).ok()?,
            ),
            ctime: (
                i64::try_from(st.st_ctime).ok()?,
                u32::try_from(st.st_ctime_nsec).ok()?,
            ),
            ino: u64::try_from(st.st_ino).ok()?,
            dev: u64::try_from(st.st_dev).ok()?,
        })
    }

    /// True when the file may still change within the stamp's tick (see [`RACY`]).
    pub fn is_racy(&self, started: SystemTime) -> bool {
        let Ok(since) = started.duration_since(SystemTime::UNIX_EPOCH) else {
            return true;
        };
        let cut = since.saturating_sub(RACY);
        let at = |(s, ns): (i64, u32)| {
            u64::try_from(s).map_or(Duration::ZERO, |s| Duration::new(s, ns.min(999_999_999)))
        };
        at(self.mtime) >= cut || at(self.ctime) >= cut
    }
}

/// The repository's folder, held open: a stamp is taken by the path relative to it, so the
/// kernel walks that path's own components, not the root's again for every file (100,000
/// stamps in a warm `--related` run of a large tree).
#[derive(Debug)]
pub struct Base {
    root: PathBuf,
    #[cfg(unix)]
    fd: Option<rustix::fd::OwnedFd>,
}

impl Base {
    /// The folder at `root`; its stamps are taken by full path if it cannot be opened.
    #[must_use]
    pub fn open(root: &Path) -> Base {
        #[cfg(unix)]
        {
            use rustix::fs::{CWD, Mode, OFlags, openat};
            #[cfg(target_os = "linux")]
            let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
            #[cfg(not(target_os = "linux"))]
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
            Base {
                root: root.to_owned(),
                fd: openat(CWD, root, flags, Mode::empty()).ok(),
            }
        }
        #[cfg(not(unix))]
        Base {
            root: root.to_owned(),
        }
    }

    /// The stamp of the regular file at the repository-relative `rel` (not followed if a
    /// link); `None` for anything else, or where the platform has no inode.
    #[must_use]
    pub fn file(&self, rel: &str) -> Option<Stamp> {
        self.stamp(rel, false)
    }

    /// The stamp of the folder at the repository-relative `rel` (`""`: the root; not
    /// followed if a link); `None` for anything else.
    #[must_use]
    pub fn folder(&self, rel: &str) -> Option<Stamp> {
        self.stamp(rel, true)
    }

    /// The stamp of the regular file at `rel`, reached beneath the root with no link on the
    /// way, not even a folder's (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, as a
    /// read opens it); `None` for anything else, and where the platform cannot say so.
    #[must_use]
    pub fn regular_beneath(&self, rel: &str) -> Option<Stamp> {
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::{Mode, OFlags, ResolveFlags, openat2};
            let fd = self.fd.as_ref()?;
            let resolve =
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            // `O_PATH`: nothing is opened for reading (a FIFO never blocks), a link at the end
            // is opened as itself and refused as no regular file below.
            let opened = openat2(
                fd,
                rel,
                OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
                resolve,
            )
            .ok()?;
            Stamp::of_file(&std::fs::File::from(opened))
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = rel;
            None
        }
    }

    fn stamp(&self, rel: &str, folder: bool) -> Option<Stamp> {
        #[cfg(unix)]
        if let Some(fd) = &self.fd {
            return Stamp::at(fd, rel, folder);
        }
        Stamp::of_kind(&self.root.join(rel), folder)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_stamp_taken_from_the_open_root_is_the_stamp_taken_by_path() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/sub")).unwrap();
        std::fs::write(root.join("src/sub/a.ts"), "export const a = 1;\n").unwrap();
        std::os::unix::fs::symlink("sub/a.ts", root.join("src/link.ts")).unwrap();
        std::os::unix::fs::symlink("sub", root.join("src/linked")).unwrap();
        let base = Base::open(root);
        let file = base.file("src/sub/a.ts");
        assert!(file.is_some());
        assert_eq!(file, Stamp::of(&root.join("src/sub/a.ts")));
        assert_eq!(base.folder(""), Stamp::of_folder(root));
        assert_eq!(
            base.folder("src/sub"),
            Stamp::of_folder(&root.join("src/sub"))
        );
        // Links are not followed; a folder is no file, a file no folder; missing is none.
        assert_eq!(base.file("src/link.ts"), None);
        assert_eq!(base.folder("src/linked"), None);
        assert_eq!(base.file("src/sub"), None);
        assert_eq!(base.folder("src/sub/a.ts"), None);
        assert_eq!(base.file("src/missing.ts"), None);
        // The file changed: its stamp did.
        std::fs::write(root.join("src/sub/a.ts"), "export const a = 22;\n").unwrap();
        assert_ne!(base.file("src/sub/a.ts"), file);
    }

    #[test]
    fn a_file_modified_within_the_racy_window_is_not_kept() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000);
        let mut s = Stamp::sample(1);
        s.ctime = (1_500_000_000, 0);
        s.mtime = (1_600_000_000, 0);
        assert!(s.is_racy(now));
        s.mtime = (1_599_999_998, 0);
        assert!(!s.is_racy(now));
        s.ctime = (1_599_999_999, 500);
        assert!(s.is_racy(now));
    }
}
