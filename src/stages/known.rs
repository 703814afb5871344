//! Files known by their stamp: per file of one repository that a compile admitted, its stamp
//! (size, modification and change times to the nanosecond, inode, device), the sha256 of its
//! bytes and their line count, so that a warm compile of many files does not read them again
//! (the render reads each once, and checks it by its stamp, not by a second hash).
//!
//! One file a repository in the cache folder, `known-v1-<12 hex digits of the root's
//! sha256>.bin`. A fact is learned only of a file that was admitted (a regular text file, no
//! secret by name or content) and whose stamp was taken after its bytes were read and is not
//! racy: modified or changed at least [`RACY`] before the run started, so no write can have
//! come between the bytes and the stamp, and any later write moves the stamp (the change
//! time cannot be set back). A fact vouches for a file only while `openat2` beneath the root,
//! with no link on the way, finds the same stamp; the hash it gives is still checked against
//! the content scan's clean verdicts and the token counts, which are kept by hash.
//!
//! The file: a header (magic, version, the root's path), the facts sorted by path, then the
//! sha256 of all the bytes before it. One that does not decode in full, or whose checksum or
//! root differs, is ignored and written anew. It is written only when this run learned a fact
//! it did not hold, atomically and not `fsync`ed (a damaged file is read as no file). Never a
//! panic.
//!
//! [`RACY`]: crate::util::stamp::RACY

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::util::stamp::{Base, Stamp};

/// The format, in the file name and the header.
const VERSION: u8 = 1;
const MAGIC: &[u8] = b"curate known files\n";
const PREFIX: &str = "known-v";
/// At most this many facts a file (about 25 MB), and this many bytes read of it.
const MAX_ENTRIES: usize = 250_000;
const MAX_BYTES: usize = 64 * 1024 * 1024;

/// What is known of a file's bytes while its stamp stays as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fact {
    pub stamp: Stamp,
    /// The sha256 of the whole file.
    pub sha256: [u8; 32],
    /// Its lines, counted as an editor shows them (`measure::count_lines`).
    pub lines: u64,
}

/// The facts of one repository: those loaded, and those this run learned.
#[derive(Debug)]
pub struct Known {
    /// The file; `None` when disabled.
    file: Option<PathBuf>,
    root: Vec<u8>,
    base: Option<Base>,
    started: SystemTime,
    loaded: HashMap<String, Fact>,
    learned: Mutex<HashMap<String, Fact>>,
}

impl Known {
    /// The facts of the repository at `root` (canonical) kept in `dir` (`None`: disabled,
    /// nothing is vouched for or written). The run is taken to start now.
    #[must_use]
    pub fn open(dir: Option<PathBuf>, root: &Path) -> Known {
        let started = SystemTime::now();
        let root_bytes = root.to_string_lossy().into_owned().into_bytes();
        let (file, bytes) =
            crate::util::cache::repo_file(dir, PREFIX, VERSION, &root_bytes, MAX_BYTES);
        let loaded = bytes
            .and_then(|b| decode(&b, &root_bytes))
            .unwrap_or_default();
        Known {
            base: file.as_ref().map(|_| Base::open(root)),
            file,
            root: root_bytes,
            started,
            loaded,
            learned: Mutex::new(HashMap::new()),
        }
    }

    /// True unless disabled.
    #[must_use]
    pub fn is_enabled(&self) -> bool {
        self.file.is_some()
    }

    /// True when `stamp` may be trusted later in this run: taken after the bytes it stands
    /// for were read, and not racy.
    #[must_use]
    pub fn trusts(&self, stamp: &Stamp) -> bool {
        !stamp.is_racy(self.started)
    }

    /// What is known of the file at `path` (repository-relative, judged by name by the
    /// caller) when it is still the file it was: a regular file reached beneath the root with
    /// no link on the way, with the stamp recorded.
    #[must_use]
    pub fn still(&self, path: &str) -> Option<Fact> {
        let fact = self.loaded.get(path)?;
        let now = self.base.as_ref()?.regular_beneath(path)?;
        (now == fact.stamp && self.trusts(&now)).then_some(*fact)
    }

    /// Records what this run read of `path`: `stamp` taken after the bytes were read, their
    /// sha256 and lines. A racy stamp is not recorded.
    pub fn learn(&self, path: &str, stamp: Stamp, sha256: [u8; 32], lines: u64) {
        if self.file.is_none() || !self.trusts(&stamp) {
            return;
        }
        let fact = Fact {
            stamp,
            sha256,
            lines,
        };
        if self.loaded.get(path) == Some(&fact) {
            return;
        }
        self.learned
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(path.to_owned(), fact);
    }

    /// Writes the facts when this run learned any, atomically (an optimisation: callers may
    /// ignore the error). The facts learned go first when there are too many to keep.
    pub fn save(&self) -> crate::error::Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let learned = std::mem::take(
            &mut *self
                .learned
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        if learned.is_empty() {
            return Ok(());
        }
        let room = MAX_ENTRIES.saturating_sub(learned.len());
        let mut others: Vec<(&String, &Fact)> = self
            .loaded
            .iter()
            .filter(|(path, _)| !learned.contains_key(*path))
            .collect();
        others.sort_unstable_by(|a, b| a.0.cmp(b.0));
        others.truncate(room);
        let mut all: Vec<(&String, &Fact)> = learned.iter().take(MAX_ENTRIES).collect();
        all.extend(others);
        all.sort_unstable_by(|a, b| a.0.cmp(b.0));
        crate::util::atomic::write_unsynced(file, &encode(&self.root, &all))?;
        if let Some(dir) = file.parent() {
            crate::util::cache::sweep_repo_files(dir, PREFIX);
        }
        Ok(())
    }
}

/// The bytes of a file holding `facts` (sorted by path) of the repository at `root`.
fn encode(root: &[u8], facts: &[(&String, &Fact)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + root.len() + facts.len() * 128);
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    put_bytes(&mut out, root);
    out.extend_from_slice(&(facts.len() as u64).to_le_bytes());
    for (path, fact) in facts {
        put_bytes(&mut out, path.as_bytes());
        let s = &fact.stamp;
        for v in [s.size, s.mtime.0.cast_unsigned(), u64::from(s.mtime.1)] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [
            s.ctime.0.cast_unsigned(),
            u64::from(s.ctime.1),
            s.ino,
            s.dev,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&fact.sha256);
        out.extend_from_slice(&fact.lines.to_le_bytes());
    }
    let sum = Sha256::digest(&out);
    out.extend_from_slice(&sum);
    out
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// The facts of a file written by [`encode`] for `root`, or `None` when anything is amiss.
fn decode(bytes: &[u8], root: &[u8]) -> Option<HashMap<String, Fact>> {
    let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(32)?)?;
    if Sha256::digest(body).as_slice() != sum {
        return None;
    }
    let mut r = Reader { bytes: body, at: 0 };
    if r.take(MAGIC.len())? != MAGIC || r.take(1)? != [VERSION] || r.bytes()? != root {
        return None;
    }
    let count = usize::try_from(r.u64()?).ok()?;
    if count > MAX_ENTRIES {
        return None;
    }
    let mut facts = HashMap::with_capacity(count);
    for _ in 0..count {
        let path = std::str::from_utf8(r.bytes()?).ok()?.to_owned();
        let stamp = Stamp {
            size: r.u64()?,
            mtime: (r.u64()?.cast_signed(), u32::try_from(r.u64()?).ok()?),
            ctime: (r.u64()?.cast_signed(), u32::try_from(r.u64()?).ok()?),
            ino: r.u64()?,
            dev: r.u64()?,
        };
        let sha256 = r.take(32)?.try_into().ok()?;
        let lines = r.u64()?;
        facts.insert(
            path,
            Fact {
                stamp,
                sha256,
                lines,
            },
        );
    }
    (r.at == body.len()).then_some(facts)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let out = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(out)
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.u64()?).ok()?;
        self.take(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A file written, then its times set `age` in the past (its change time stays now).
    fn aged(path: &Path, text: &str, age: Duration) {
        std::fs::write(path, text).unwrap();
        let then = SystemTime::now() - age;
        let f = std::fs::File::options().write(true).open(path).unwrap();
        f.set_modified(then).unwrap();
    }

    fn stamp_of(root: &Path, rel: &str) -> Stamp {
        Base::open(root).regular_beneath(rel).unwrap()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_fact_learned_is_known_next_run_while_the_stamp_holds() {
        let cache = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        aged(&root.join("a.md"), "one\ntwo\n", Duration::from_secs(60));
        let stamp = stamp_of(root, "a.md");
        let known = Known::open(Some(cache.path().to_owned()), root);
        assert_eq!(known.still("a.md"), None);
        // The change time is now: racy for a run that started now, never recorded.
        known.learn("a.md", stamp, [7; 32], 2);
        known.save().unwrap();
        assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);
        // A run that started two seconds later trusts it.
        let mut known = Known::open(Some(cache.path().to_owned()), root);
        known.started += Duration::from_secs(2);
        known.learn("a.md", stamp, [7; 32], 2);
        known.save().unwrap();
        let mut next = Known::open(Some(cache.path().to_owned()), root);
        next.started += Duration::from_secs(2);
        let fact = next.still("a.md").unwrap();
        assert_eq!((fact.sha256, fact.lines), ([7; 32], 2));
        // Rewritten with the same size and its modification time set back: the change
        // time moved, so nothing is vouched for.
        aged(&root.join("a.md"), "une\ndos\n", Duration::from_secs(60));
        next.started += Duration::from_secs(2);
        assert_eq!(next.still("a.md"), None);
        // Another repository's file is not this one's.
        let other = tempfile::tempdir().unwrap();
        assert!(
            Known::open(Some(cache.path().to_owned()), other.path())
                .loaded
                .is_empty()
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_link_or_a_folder_on_the_way_is_never_vouched_for() {
        let cache = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        std::fs::create_dir(root.join("real")).unwrap();
        aged(&root.join("real/a.md"), "x\n", Duration::from_secs(60));
        let stamp = stamp_of(root, "real/a.md");
        let mut known = Known::open(Some(cache.path().to_owned()), root);
        known.started += Duration::from_secs(2);
        known.learn("via/a.md", stamp, [1; 32], 1);
        known.learn("real/a.md", stamp, [1; 32], 1);
        known.save().unwrap();
        std::os::unix::fs::symlink("real", root.join("via")).unwrap();
        let mut next = Known::open(Some(cache.path().to_owned()), root);
        next.started += Duration::from_secs(2);
        assert!(next.still("real/a.md").is_some());
        // The same file, by a path through a link: never (as a read would refuse it).
        assert_eq!(next.still("via/a.md"), None);
        assert_eq!(next.still("real"), None);
        assert_eq!(next.still("../a.md"), None);
    }

    #[test]
    fn a_damaged_or_foreign_file_is_no_file() {
        let stamp = Stamp {
            size: 3,
            mtime: (-5, 7),
            ctime: (1_700_000_000, 999_999_999),
            ino: 9,
            dev: 1,
        };
        let fact = Fact {
            stamp,
            sha256: [3; 32],
            lines: 1,
        };
        let path = "docs/a.md".to_owned();
        let bytes = encode(b"/repo", &[(&path, &fact)]);
        assert_eq!(decode(&bytes, b"/repo").unwrap()[&path], fact);
        assert_eq!(decode(&bytes, b"/other"), None);
        for cut in 0..bytes.len() {
            assert_eq!(decode(&bytes[..cut], b"/repo"), None);
        }
        let mut flipped = bytes.clone();
        flipped[40] ^= 1;
        assert_eq!(decode(&flipped, b"/repo"), None);
    }
}
