//! Admitted bytes a compile could not hold in memory, kept for its render in an unnamed
//! temporary file: a file of a large bundle is read from the repository once, and what the
//! render writes is the text that was admitted, even if the file changes in between.
//!
//! The file is made at the first byte that does not fit the compile's memory hold, by
//! `tempfile::tempfile` (`O_TMPFILE` in the system's temporary folder where the kernel has
//! it, else a name removed at once): it has no name a crash could leave behind, and only the
//! process reads it. What it cannot keep (past its
//! cap, or the file cannot be made or written) is read from the repository again, checked
//! as before by its stamp or its hash.

use std::collections::HashMap;
use std::fs::File;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// The most a spool keeps: a bundle larger than this (about 300 million tokens) reads the
/// rest again rather than fill the temporary folder, which may be memory (`tmpfs`).
pub const SPOOL_BYTES: u64 = 1 << 30;

/// Bytes by file, in one temporary file written at reserved places, from any thread.
pub struct Spool {
    cap: u64,
    file: OnceLock<Option<File>>,
    /// The end of what is reserved.
    end: AtomicU64,
    places: Mutex<HashMap<String, Place>>,
}

/// Where a file's admitted bytes lie in the spool, and their sha256 (hex).
struct Place {
    sha256: String,
    at: u64,
    len: usize,
}

impl Spool {
    /// A spool of at most `cap` bytes; no file is made until something is put.
    #[must_use]
    pub fn new(cap: u64) -> Spool {
        Spool {
            cap,
            file: OnceLock::new(),
            end: AtomicU64::new(0),
            places: Mutex::new(HashMap::new()),
        }
    }

    fn places(&self) -> std::sync::MutexGuard<'_, HashMap<String, Place>> {
        self.places
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps `bytes` as `path`'s, admitted with hash `sha256`; `false` when they are not
    /// kept (no room left under the cap, or no temporary file).
    pub fn put(&self, path: &str, sha256: &str, bytes: &[u8]) -> bool {
        let len = bytes.len() as u64;
        let Ok(at) = self
            .end
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |end| {
                end.checked_add(len).filter(|&next| next <= self.cap)
            })
        else {
            return false;
        };
        let Some(file) = self.file.get_or_init(|| tempfile::tempfile().ok()) else {
            return false;
        };
        if write_at(file, bytes, at).is_err() {
            return false;
        }
        self.places().insert(
            path.to_owned(),
            Place {
                sha256: sha256.to_owned(),
                at,
                len: bytes.len(),
            },
        );
        true
    }

    /// The bytes kept as `path`'s with hash `sha256`, if any (and readable).
    pub fn get(&self, path: &str, sha256: &str) -> Option<Vec<u8>> {
        let (at, len) = {
            let places = self.places();
            let place = places.get(path).filter(|p| p.sha256 == sha256)?;
            (place.at, place.len)
        };
        let file = self.file.get()?.as_ref()?;
        let mut bytes = vec![0; len];
        read_at(file, &mut bytes, at).ok()?;
        Some(bytes)
    }

    /// Forgets `path` (its last use is over); its bytes stay until the process ends.
    pub fn forget(&self, path: &str) {
        self.places().remove(path);
    }
}

#[cfg(unix)]
fn write_at(file: &File, bytes: &[u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, at)
}

#[cfg(unix)]
fn read_at(file: &File, bytes: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, bytes, at)
}

/// Elsewhere nothing is spooled: the file is read again.
#[cfg(not(unix))]
fn write_at(_: &File, _: &[u8], _: u64) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

#[cfg(not(unix))]
fn read_at(_: &File, _: &mut [u8], _: u64) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

impl std::fmt::Debug for Spool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spool")
            .field("cap", &self.cap)
            .field("files", &self.places().len())
            .field("bytes", &self.end.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn what_is_put_comes_back_by_its_hash_from_any_thread() {
        let spool = Spool::new(1 << 20);
        std::thread::scope(|s| {
            for i in 0..8 {
                let spool = &spool;
                s.spawn(move || {
                    let text = format!("file {i}\n").repeat(i + 1);
                    assert!(spool.put(&format!("f{i}"), &format!("h{i}"), text.as_bytes()));
                });
            }
        });
        for i in 0..8 {
            let text = format!("file {i}\n").repeat(i + 1);
            assert_eq!(
                spool.get(&format!("f{i}"), &format!("h{i}")).unwrap(),
                text.as_bytes()
            );
            // Asked under another hash: not these bytes.
            assert_eq!(spool.get(&format!("f{i}"), "other"), None);
        }
        spool.forget("f3");
        assert_eq!(spool.get("f3", "h3"), None);
        assert_eq!(spool.get("missing", "h0"), None);
    }

    #[cfg(unix)]
    #[test]
    fn past_its_cap_nothing_is_kept_but_what_still_fits_is() {
        let spool = Spool::new(10);
        assert!(spool.put("a", "ha", b"123456"));
        assert!(!spool.put("b", "hb", b"123456"));
        // A refusal reserves nothing: a smaller file still fits.
        assert!(spool.put("c", "hc", b"1234"));
        assert!(!spool.put("d", "hd", b"1"));
        assert_eq!(spool.get("a", "ha").unwrap(), b"123456");
        assert_eq!(spool.get("b", "hb"), None);
        assert_eq!(spool.get("c", "hc").unwrap(), b"1234");
        // Nothing put, nothing made.
        let empty = Spool::new(10);
        assert!(empty.file.get().is_none());
        assert!(empty.put("e", "he", b""));
        assert_eq!(empty.get("e", "he").unwrap(), b"");
    }
}
