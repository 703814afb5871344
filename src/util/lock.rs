//! An exclusive advisory lock on a folder (`File::lock` on the folder itself), so that two
//! compiles of one manifest never interleave their writes: the lock file beside a manifest
//! always describes that manifest. The system releases the lock when its holder exits,
//! however it exits.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::util::fault::{Fault, Result};

/// How long a compile waits for another one on the same manifest.
pub const WAIT: Duration = Duration::from_secs(30);

/// A held folder lock; released on drop.
#[derive(Debug)]
pub struct FolderLock {
    _file: File,
    pub path: PathBuf,
}

/// Locks the nearest existing folder at or above `dir` (not above `root`), waiting up to
/// `wait` for another holder.
pub fn lock_folder(root: &Path, dir: &Path, wait: Duration) -> Result<FolderLock> {
    let target = dir
        .ancestors()
        .find(|a| a.is_dir() || *a == root)
        .unwrap_or(root)
        .to_owned();
    let file = File::open(&target).map_err(|source| Fault::Read {
        path: target.clone(),
        source,
    })?;
    let start = Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => {
                return Ok(FolderLock {
                    _file: file,
                    path: target,
                });
            }
            Err(TryLockError::WouldBlock) if start.elapsed() < wait => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(TryLockError::WouldBlock) => {
                return Err(Fault::Failed(format!(
                    "another curate has been writing in {} for {} s: gave up waiting",
                    target.display(),
                    wait.as_secs()
                )));
            }
            Err(TryLockError::Error(source)) => {
                return Err(Fault::Read {
                    path: target,
                    source,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_waits_then_gives_up_and_a_released_lock_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let first = lock_folder(&root, &root.join("missing/below"), WAIT).unwrap();
        assert_eq!(first.path, root);
        let err = lock_folder(&root, &root, Duration::from_millis(50)).unwrap_err();
        assert!(err.to_string().contains("gave up waiting"), "{err}");
        drop(first);
        lock_folder(&root, &root, Duration::from_millis(50)).unwrap();
    }
}
