//! Numbers kept on disk by the sha256 of the exact bytes they are about, so a warm re-run
//! does not do the work again: token counts (one file per encoding, [`DigestCache::open`])
//! and the content scan's clean verdicts (one file per build of the scanner,
//! [`DigestCache::verdicts`]).
//!
//! One plain-text file each in the user cache folder ([`DigestCache::default_dir`]): a
//! header line `curate-token-cache 1 <encoding>` (or `curate-token-cache 1 scan-<scanner>`),
//! then one record a line, `<64 lower-case hex digits of sha256> <count>`, oldest first. A
//! file whose header or any record does not validate (a foreign encoding or scanner, another
//! format version, a truncated or edited file) is ignored as a whole, never trusted, and
//! rebuilt by the next save.
//!
//! The verdicts file records only texts in which no content rule found anything (their
//! count is 0); a text with a secret is scanned again every time, so the file never names
//! which texts hold one. It trusts what the user's own cache folder says, as the token
//! counts do: a record is the sha256 of the whole text, so it vouches for those bytes only,
//! and a scanner built from other rules or code has another file.
//!
//! Lookups are `&self` and thread-safe (rayon workers share one cache). The file is read
//! lazily, on the first lookup, so a run that counts nothing never reads it. [`save`]
//! writes only when this run added counts: under an exclusive advisory lock
//! (`File::lock` on `<file>.lock`, released by the system whatever happens) it re-reads the
//! file, merges it with this run's entries (those used or added now become the newest),
//! keeps the newest [`MAX_ENTRIES`], and replaces the file atomically through
//! [`crate::util::atomic::write_unsynced`] (a temporary file in the same folder, renamed over
//! it), so a concurrent reader sees the old file or the new one, and concurrent writers both
//! keep their entries. It is not `fsync`ed: a file a power cut left empty or damaged fails
//! the checks above and is read as no cache (the `fsync` of a full cache, 4.5 MB, took
//! 50 ms of a hook's dispatch).
//!
//! [`save`]: DigestCache::save

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::compile::tokens::Encoding;
use crate::compile::tokens::TokenCounter;

/// The first word of a cache file.
pub const MAGIC: &str = "curate-token-cache";
/// The format version in the header; another version is ignored.
pub const VERSION: u32 = 1;
/// The most records a cache file keeps (about 5.6 MiB at most: a record is at most 86 bytes).
pub const MAX_ENTRIES: usize = 65_536;

/// The longest record line, without its newline: 64 hex digits, a space, a `u64`.
const MAX_RECORD: usize = 64 + 1 + 20;
/// How long a save waits for another run's lock before giving up (it never writes unlocked).
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// A sha256 digest, the key of a record.
pub type Key = [u8; 32];

#[derive(Debug, Clone, Copy)]
struct Slot {
    count: u64,
    /// Recency: records are written in this order, oldest first.
    seq: u64,
    /// Used or added by this run (written as newest by `save`).
    touched: bool,
}

#[derive(Debug, Default)]
struct State {
    loaded: bool,
    slots: KeyMap<Slot>,
    next_seq: u64,
    /// This run added a count that the file may not have.
    dirty: bool,
}

/// Counts cached on disk for one encoding, or the scanner's verdicts. See the module
/// documentation.
#[derive(Debug)]
pub struct DigestCache {
    /// The cache file; `None` when the cache is disabled.
    file: Option<PathBuf>,
    /// The file's first line.
    header: String,
    capacity: usize,
    state: Mutex<State>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl DigestCache {
    /// The cache for `encoding` in `dir` (`None` = disabled: every lookup misses and
    /// nothing is written). Nothing is read until the first lookup; a missing, unreadable
    /// or invalid file gives an empty cache.
    #[must_use]
    pub fn open(dir: Option<PathBuf>, encoding: Encoding) -> DigestCache {
        DigestCache::with_capacity(dir, encoding, MAX_ENTRIES)
    }

    /// Like [`open`](Self::open) with a bound other than [`MAX_ENTRIES`] (at least 1).
    #[must_use]
    pub fn with_capacity(dir: Option<PathBuf>, encoding: Encoding, capacity: usize) -> DigestCache {
        DigestCache::named(
            dir,
            &format!("tokens-{}", encoding.name()),
            encoding.name(),
            capacity,
        )
    }

    /// The content scan's clean verdicts in `dir` (`None` = disabled), for this build's
    /// scanner ([`crate::compile::secrets::SCANNER`]): a count of 0 is "no rule matched".
    #[must_use]
    pub fn verdicts(dir: Option<PathBuf>) -> DigestCache {
        let tag = format!("scan-{}", crate::compile::secrets::SCANNER);
        DigestCache::named(dir, &tag, &tag, MAX_ENTRIES)
    }

    /// The cache in `dir/<stem>.txt` whose header ends in `tag`.
    fn named(dir: Option<PathBuf>, stem: &str, tag: &str, capacity: usize) -> DigestCache {
        DigestCache {
            file: dir.map(|d| d.join(format!("{stem}.txt"))),
            header: format!("{MAGIC} {VERSION} {tag}\n"),
            capacity: capacity.max(1),
            state: Mutex::new(State::default()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// A cache that never hits and never writes (`--no-cache`).
    #[must_use]
    pub fn disabled(encoding: Encoding) -> DigestCache {
        DigestCache::open(None, encoding)
    }

    /// The user cache folder: `$CURATE_CACHE_DIR`, else `$XDG_CACHE_HOME/curate` (an
    /// absolute path), else the platform's (`$HOME/.cache/curate` on Linux and other Unix,
    /// `$HOME/Library/Caches/curate` on macOS, `%LOCALAPPDATA%\curate\cache` on Windows).
    /// `None` when none of these is set. Empty variables count as unset.
    #[must_use]
    pub fn default_dir() -> Option<PathBuf> {
        dir_from_env(|k| std::env::var_os(k))
    }

    /// True unless the cache is disabled.
    #[must_use]
    pub fn is_enabled(&self) -> bool {
        self.file.is_some()
    }

    /// The cache file, when enabled.
    #[must_use]
    pub fn path(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// The count cached for `key` (64 hex digits of the sha256 of the text), if any.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<u64> {
        self.get_key(&parse_key(key.as_bytes())?)
    }

    /// Records `count` for `key` (64 hex digits); an invalid key is ignored.
    pub fn put(&self, key: &str, count: u64) {
        if let Some(k) = parse_key(key.as_bytes()) {
            self.put_key(k, count);
        }
    }

    /// [`get`](Self::get) with a binary key.
    #[must_use]
    pub fn get_key(&self, key: &Key) -> Option<u64> {
        self.file.as_ref()?;
        let mut state = self.lock_loaded();
        let seq = state.next_seq;
        let found = state.slots.get_mut(key).map(|slot| {
            slot.seq = seq;
            slot.touched = true;
            slot.count
        });
        if found.is_some() {
            state.next_seq += 1;
            self.hits.fetch_add(1, Ordering::Relaxed);
        } else {
            self.misses.fetch_add(1, Ordering::Relaxed);
        }
        found
    }

    /// [`put`](Self::put) with a binary key.
    pub fn put_key(&self, key: Key, count: u64) {
        if self.file.is_none() {
            return;
        }
        let mut state = self.lock_loaded();
        let seq = state.next_seq;
        state.next_seq += 1;
        let old = state.slots.insert(
            key,
            Slot {
                count,
                seq,
                touched: true,
            },
        );
        if old.is_none_or(|o| o.count != count) {
            state.dirty = true;
        }
    }

    /// Lookups that hit and missed so far.
    #[must_use]
    pub fn stats(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }

    /// The number of entries known to this cache now (read from disk or added).
    #[must_use]
    pub fn len(&self) -> usize {
        if self.file.is_none() {
            return 0;
        }
        self.lock_loaded().slots.len()
    }

    /// True when [`len`](Self::len) is 0.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes this run's new counts back: merged with the file as it is on disk now, the
    /// entries this run used or added as the newest, at most the bound (oldest dropped),
    /// atomically. Does nothing when disabled or when nothing was added. Callers may ignore
    /// the error: a cache is an optimisation.
    pub fn save(&self) -> std::io::Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !state.dirty {
            return Ok(());
        }
        let dir = file.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let Some(_lock) = FileLock::acquire(&lock_path(file))? else {
            return Err(std::io::Error::other(
                "the token cache is locked by another run: not saved",
            ));
        };
        let on_disk = read_file(file, &self.header, self.capacity).unwrap_or_default();
        let mut ours: Vec<(Key, Slot)> = state
            .slots
            .iter()
            .filter(|(_, s)| s.touched)
            .map(|(k, s)| (*k, *s))
            .collect();
        ours.sort_by_key(|(_, s)| s.seq);
        let mut theirs: Vec<(Key, Slot)> = on_disk
            .into_iter()
            .filter(|(k, _)| !state.slots.get(k).is_some_and(|s| s.touched))
            .collect();
        theirs.sort_unstable_by_key(|(_, s)| s.seq);
        let records: Vec<(Key, u64)> = theirs
            .iter()
            .chain(&ours)
            .map(|(k, s)| (*k, s.count))
            .collect();
        let skip = records.len().saturating_sub(self.capacity);
        let text = format_file(&self.header, &records[skip..]);
        crate::util::atomic::write_unsynced(file, &text).map_err(|e| match e {
            crate::error::Error::Write { source, .. } => source,
            other => std::io::Error::other(other.to_string()),
        })?;
        state.dirty = false;
        Ok(())
    }

    fn lock_loaded(&self) -> std::sync::MutexGuard<'_, State> {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !state.loaded {
            state.loaded = true;
            if let Some(file) = &self.file {
                state.slots = read_file(file, &self.header, self.capacity).unwrap_or_default();
                state.next_seq = state.slots.len() as u64;
            }
        }
        state
    }
}

/// A [`TokenCounter`] that looks the count up in a [`DigestCache`] first and records what it
/// had to count, keyed by the sha256 of the exact bytes counted. The inner counter (and so
/// its BPE) is touched only on a miss; empty text is 0 tokens without either.
pub struct Cached<'a, C: ?Sized> {
    cache: &'a DigestCache,
    inner: &'a C,
}

impl<'a, C: TokenCounter + ?Sized> Cached<'a, C> {
    /// `inner`, with `cache` in front of it.
    pub fn new(cache: &'a DigestCache, inner: &'a C) -> Self {
        Cached { cache, inner }
    }

    /// Counts `bytes` whose sha256 is already known (`sha256_hex`, 64 hex digits), saving
    /// a second hash; the caller guarantees the digest is of exactly `bytes`.
    pub fn count_known(&self, sha256_hex: &str, bytes: &[u8]) -> u64 {
        match parse_key(sha256_hex.as_bytes()) {
            Some(key) => self.count_key(key, bytes),
            None => self.count(bytes),
        }
    }

    fn count_key(&self, key: Key, bytes: &[u8]) -> u64 {
        if let Some(n) = self.cache.get_key(&key) {
            return n;
        }
        let n = self.inner.count(bytes);
        self.cache.put_key(key, n);
        n
    }
}

impl<C: TokenCounter + ?Sized> TokenCounter for Cached<'_, C> {
    fn count(&self, bytes: &[u8]) -> u64 {
        if bytes.is_empty() {
            return 0;
        }
        if !self.cache.is_enabled() {
            return self.inner.count(bytes);
        }
        self.count_key(key_of(bytes), bytes)
    }

    fn count_hashed(&self, bytes: &[u8], sha256: Option<&str>) -> u64 {
        match sha256 {
            Some(sha) if self.cache.is_enabled() && !bytes.is_empty() => {
                self.count_known(sha, bytes)
            }
            _ => self.count(bytes),
        }
    }

    fn known(&self, bytes: &[u8], sha256: Option<&str>) -> Option<u64> {
        if bytes.is_empty() {
            return Some(0);
        }
        if !self.cache.is_enabled() {
            return None;
        }
        let key = sha256
            .and_then(|s| parse_key(s.as_bytes()))
            .unwrap_or_else(|| key_of(bytes));
        self.cache.get_key(&key)
    }
}

/// The cache key of `bytes`: their sha256.
#[must_use]
pub fn key_of(bytes: &[u8]) -> Key {
    Sha256::digest(bytes).into()
}

fn lock_path(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_owned();
    name.push(".lock");
    file.with_file_name(name)
}

fn dir_from_env(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let get = |k: &str| var(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(d) = get("CURATE_CACHE_DIR") {
        return Some(d);
    }
    if let Some(d) = get("XDG_CACHE_HOME").filter(|d| d.is_absolute()) {
        return Some(d.join("curate"));
    }
    if cfg!(windows) {
        return get("LOCALAPPDATA").map(|d| d.join("curate").join("cache"));
    }
    let home = get("HOME")?;
    if cfg!(target_os = "macos") {
        Some(home.join("Library").join("Caches").join("curate"))
    } else {
        Some(home.join(".cache").join("curate"))
    }
}

fn format_file(header: &str, records: &[(Key, u64)]) -> Vec<u8> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = Vec::with_capacity(64 + records.len() * 80);
    out.extend_from_slice(header.as_bytes());
    for (k, n) in records {
        for b in k {
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0x0f)]);
        }
        out.push(b' ');
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        let mut v = *n;
        loop {
            i -= 1;
            digits[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        out.extend_from_slice(&digits[i..]);
        out.push(b'\n');
    }
    out
}

/// The records of a cache file, each with its line number as `seq` (oldest first); `None`
/// when it is missing, unreadable, too large, of another format, version, encoding or scanner, or
/// any record is invalid or repeated.
fn read_file(file: &Path, header: &str, capacity: usize) -> Option<KeyMap<Slot>> {
    let max_bytes = 64 + capacity.saturating_mul(MAX_RECORD + 1);
    // Bounded, and never a FIFO or device planted as the cache file.
    let bytes = crate::util::read::read_capped(file, max_bytes as u64).ok()?;
    parse_file(&bytes, header)
}

fn parse_file(bytes: &[u8], header: &str) -> Option<KeyMap<Slot>> {
    let body = bytes.strip_prefix(header.as_bytes())?;
    if !body.is_empty() && body.last() != Some(&b'\n') {
        return None;
    }
    let records = memchr::memchr_iter(b'\n', body).count();
    let mut slots = KeyMap::with_capacity_and_hasher(records, KeyBuild::default());
    let mut rest = body;
    let mut seq = 0;
    while !rest.is_empty() {
        let end = memchr::memchr(b'\n', rest)?;
        let (key, count) = parse_record(&rest[..end])?;
        let slot = Slot {
            count,
            seq,
            touched: false,
        };
        if slots.insert(key, slot).is_some() {
            return None;
        }
        seq += 1;
        rest = &rest[end + 1..];
    }
    Some(slots)
}

fn parse_record(line: &[u8]) -> Option<(Key, u64)> {
    if line.len() < 66 || line.len() > MAX_RECORD || line[64] != b' ' {
        return None;
    }
    let key = parse_key(&line[..64])?;
    let digits = &line[65..];
    if digits.len() > 1 && digits[0] == b'0' {
        return None;
    }
    let mut count: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        count = count.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some((key, count))
}

/// 64 lower-case hex digits → a key.
fn parse_key(hex: &[u8]) -> Option<Key> {
    let hex: &[u8; 64] = hex.try_into().ok()?;
    if !hex.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    // '0'..='9' → 0..=9, 'a'..='f' → 10..=15, without branches.
    let nibble = |b: u8| (b & 0x0f) + 9 * (b >> 6);
    let mut key = [0u8; 32];
    for (k, pair) in key.iter_mut().zip(hex.chunks_exact(2)) {
        *k = (nibble(pair[0]) << 4) | nibble(pair[1]);
    }
    Some(key)
}

/// Hashes a [`Key`] by its first 8 bytes: keys are sha256 digests, already uniform.
#[derive(Default)]
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for (i, b) in bytes.iter().take(8).enumerate() {
            self.0 ^= u64::from(*b) << (8 * i);
        }
    }
}

type KeyBuild = std::hash::BuildHasherDefault<KeyHasher>;
type KeyMap<V> = HashMap<Key, V, KeyBuild>;

/// An exclusive advisory lock ([`std::fs::File::lock`]) on the lock file beside the cache,
/// held while a save merges and writes. The operating system releases it when its holder
/// exits, however it exits, so no lock is ever stale; the lock file itself stays.
struct FileLock {
    _file: std::fs::File,
}

impl FileLock {
    /// Waits up to [`LOCK_WAIT`] for the lock; `None` when another run holds it that long
    /// (the save is then skipped: never written unlocked).
    fn acquire(path: &Path) -> std::io::Result<Option<FileLock>> {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // A FIFO planted as the lock file must not block the open.
            options.custom_flags(libc::O_NONBLOCK);
        }
        let file = options.open(path)?;
        if !file.metadata()?.is_file() {
            return Err(std::io::Error::other(
                "the cache lock is not a regular file",
            ));
        }
        let start = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Some(FileLock { _file: file })),
                Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < LOCK_WAIT => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
                Err(std::fs::TryLockError::Error(e)) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::tokens::Fast;
    use std::sync::atomic::AtomicUsize;

    const O200K: Encoding = Encoding::O200kBase;
    const CL100K: Encoding = Encoding::Cl100kBase;

    fn key(n: u64) -> String {
        crate::util::digest::hex(&n.to_le_bytes())
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let c = DigestCache::open(Some(dir.path().to_owned()), O200K);
        assert!(c.is_empty());
        assert_eq!(c.get(&key(1)), None);
        c.put(&key(1), 11);
        c.put(&key(2), 0);
        c.put(&key(3), u64::MAX);
        assert_eq!(c.get(&key(1)), Some(11));
        c.save().unwrap();
        let text = std::fs::read_to_string(dir.path().join("tokens-o200k_base.txt")).unwrap();
        assert!(
            text.starts_with("curate-token-cache 1 o200k_base\n"),
            "{text}"
        );
        let d = DigestCache::open(Some(dir.path().to_owned()), O200K);
        assert_eq!(d.get(&key(1)), Some(11));
        assert_eq!(d.get(&key(2)), Some(0));
        assert_eq!(d.get(&key(3)), Some(u64::MAX));
        assert_eq!(d.get(&key(4)), None);
        assert_eq!(d.stats(), (3, 1));
        assert_eq!(d.len(), 3);
    }

    #[test]
    fn invalid_keys_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let c = DigestCache::open(Some(dir.path().to_owned()), O200K);
        c.put("nothex", 3);
        c.put(&key(1).to_uppercase(), 3);
        assert!(c.is_empty());
        assert_eq!(c.get("nothex"), None);
    }

    #[test]
    fn disabled_cache_never_hits_nor_writes() {
        let c = DigestCache::disabled(O200K);
        c.put(&key(1), 5);
        assert_eq!(c.get(&key(1)), None);
        c.save().unwrap();
        assert!(!c.is_enabled());
        assert_eq!(c.path(), None);
    }

    #[test]
    fn nothing_is_written_without_new_entries() {
        let dir = tempfile::tempdir().unwrap();
        let c = DigestCache::open(Some(dir.path().join("sub")), O200K);
        assert_eq!(c.get(&key(1)), None);
        c.save().unwrap();
        assert!(!dir.path().join("sub").exists());
    }

    fn valid_file(dir: &Path) -> PathBuf {
        let c = DigestCache::open(Some(dir.to_owned()), O200K);
        c.put(&key(1), 1);
        c.put(&key(2), 2);
        c.save().unwrap();
        dir.join("tokens-o200k_base.txt")
    }

    #[test]
    fn a_corrupt_file_is_ignored_and_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let file = valid_file(dir.path());
        let good = std::fs::read_to_string(&file).unwrap();
        let k1 = key(1);
        let corruptions = [
            String::new(),
            "garbage\n".to_owned(),
            good.replace("curate-token-cache", "curate-token-cachX"),
            good.replace(" 1 o200k", " 2 o200k"),
            good.replace(&format!("{k1} 1"), &format!("{k1} x")),
            good.replace(&format!("{k1} 1"), &format!("{k1} 01")),
            good.replace(&format!("{k1} 1"), &format!("{k1} -1")),
            good.replace(&format!("{k1} 1"), &format!("{k1} 99999999999999999999")),
            good.replace(&format!("{k1} 1"), &format!("{k1}  1")),
            good.replace(&format!("{k1} 1"), &format!("{} 1", k1.to_uppercase())),
            good.replace(&format!("{k1} 1"), &format!("{} 1", &k1[1..])),
            good.replace(&format!("{k1} 1"), &format!("{k1} 1\n{k1} 1")),
            good.replace(&format!("{k1} 1\n"), &format!("{k1} 1\n\n")),
            good.trim_end().to_owned(),
            good.replace(&format!("{k1} 1"), &format!("{k1} 1\r")),
        ];
        for bad in corruptions {
            std::fs::write(&file, &bad).unwrap();
            let c = DigestCache::open(Some(dir.path().to_owned()), O200K);
            assert_eq!(c.get(&key(2)), None, "trusted {bad:?}");
            assert!(c.is_empty(), "trusted {bad:?}");
            c.put(&key(3), 3);
            c.save().unwrap();
            let d = DigestCache::open(Some(dir.path().to_owned()), O200K);
            assert_eq!(d.get(&key(3)), Some(3), "not rebuilt after {bad:?}");
            assert_eq!(d.len(), 1);
        }
        std::fs::write(&file, [0xff, 0xfe, 0, 1, 2]).unwrap();
        assert!(DigestCache::open(Some(dir.path().to_owned()), O200K).is_empty());
    }

    #[test]
    fn a_foreign_encoding_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let file = valid_file(dir.path());
        // A cl100k file where the o200k one belongs is never trusted.
        let good = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, good.replace("o200k_base", "cl100k_base")).unwrap();
        assert!(DigestCache::open(Some(dir.path().to_owned()), O200K).is_empty());
        // Encodings live in separate files.
        let c = DigestCache::open(Some(dir.path().to_owned()), CL100K);
        assert_eq!(c.get(&key(1)), None);
        c.put(&key(1), 7);
        c.save().unwrap();
        assert!(dir.path().join("tokens-cl100k_base.txt").exists());
        let again = DigestCache::open(Some(dir.path().to_owned()), CL100K);
        assert_eq!(again.get(&key(1)), Some(7));
    }

    #[test]
    fn an_oversized_file_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let file = valid_file(dir.path());
        let mut big = std::fs::read_to_string(&file).unwrap();
        for i in 10..40 {
            big.push_str(&format!("{} {i}\n", key(i)));
        }
        std::fs::write(&file, big).unwrap();
        assert!(DigestCache::with_capacity(Some(dir.path().to_owned()), O200K, 4).is_empty());
        assert_eq!(
            DigestCache::open(Some(dir.path().to_owned()), O200K).len(),
            32
        );
    }

    #[test]
    fn the_bound_is_enforced_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        let open = || DigestCache::with_capacity(Some(dir.path().to_owned()), O200K, 5);
        let c = open();
        for i in 0..4 {
            c.put(&key(i), i);
        }
        c.save().unwrap();
        // A later run uses entry 0 (it becomes the newest) and adds 3 more.
        let c = open();
        assert_eq!(c.get(&key(0)), Some(0));
        for i in 4..7 {
            c.put(&key(i), i);
        }
        c.save().unwrap();
        let d = open();
        assert_eq!(d.len(), 5);
        for i in [1, 2] {
            assert_eq!(d.get(&key(i)), None, "entry {i} should be evicted");
        }
        for i in [0, 3, 4, 5, 6] {
            assert_eq!(d.get(&key(i)), Some(i), "entry {i} should be kept");
        }
        // One run adding more than the bound keeps its newest.
        let e = open();
        for i in 100..120 {
            e.put(&key(i), i);
        }
        e.save().unwrap();
        let f = open();
        assert_eq!(f.len(), 5);
        assert_eq!(f.get(&key(119)), Some(119));
        assert_eq!(f.get(&key(114)), None);
        let size = std::fs::metadata(dir.path().join("tokens-o200k_base.txt"))
            .unwrap()
            .len();
        assert!(size <= 64 + 5 * 86, "{size} bytes");
    }

    #[test]
    fn two_caches_saving_both_survive() {
        let dir = tempfile::tempdir().unwrap();
        let a = DigestCache::open(Some(dir.path().to_owned()), O200K);
        let b = DigestCache::open(Some(dir.path().to_owned()), O200K);
        assert_eq!(a.get(&key(0)), None);
        assert_eq!(b.get(&key(0)), None);
        a.put(&key(1), 1);
        b.put(&key(2), 2);
        a.save().unwrap();
        b.save().unwrap();
        let c = DigestCache::open(Some(dir.path().to_owned()), O200K);
        assert_eq!(c.get(&key(1)), Some(1));
        assert_eq!(c.get(&key(2)), Some(2));
    }

    #[test]
    fn concurrent_saves_from_many_threads_merge_and_leave_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let next = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for t in 0..8u64 {
                let dir = dir.path().to_owned();
                let next = &next;
                s.spawn(move || {
                    for round in 0..5u64 {
                        let c = DigestCache::open(Some(dir.clone()), O200K);
                        let n = t * 100 + round;
                        c.put(&key(n), n);
                        c.save().unwrap();
                        next.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        });
        assert_eq!(next.load(Ordering::Relaxed), 40);
        let c = DigestCache::open(Some(dir.path().to_owned()), O200K);
        assert_eq!(c.len(), 40);
        for t in 0..8u64 {
            for round in 0..5u64 {
                let n = t * 100 + round;
                assert_eq!(c.get(&key(n)), Some(n));
            }
        }
        assert_eq!(
            names(dir.path()),
            vec![
                "tokens-o200k_base.txt".to_owned(),
                "tokens-o200k_base.txt.lock".to_owned()
            ]
        );
    }

    #[test]
    fn a_lock_file_left_behind_does_not_block_and_a_held_lock_is_never_bypassed() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tokens-o200k_base.txt");
        // A lock file left by a process that died: the system holds no lock on it.
        std::fs::write(lock_path(&file), "999999999\n").unwrap();
        let c = DigestCache::open(Some(dir.path().to_owned()), O200K);
        c.put(&key(1), 1);
        c.save().unwrap();
        assert_eq!(
            DigestCache::open(Some(dir.path().to_owned()), O200K).get(&key(1)),
            Some(1)
        );
        // Another run holds the lock for longer than a save waits: the save gives up and
        // leaves the file as it was, rather than writing unlocked.
        let holder = std::fs::OpenOptions::new()
            .write(true)
            .open(lock_path(&file))
            .unwrap();
        holder.lock().unwrap();
        let c = DigestCache::open(Some(dir.path().to_owned()), O200K);
        c.put(&key(2), 2);
        assert!(c.save().is_err());
        let on_disk = DigestCache::open(Some(dir.path().to_owned()), O200K);
        assert_eq!(on_disk.get(&key(2)), None);
        assert_eq!(on_disk.get(&key(1)), Some(1));
        holder.unlock().unwrap();
        c.save().unwrap();
        assert_eq!(
            DigestCache::open(Some(dir.path().to_owned()), O200K).get(&key(2)),
            Some(2)
        );
    }

    #[test]
    fn shared_between_threads() {
        let dir = tempfile::tempdir().unwrap();
        let c = DigestCache::open(Some(dir.path().to_owned()), O200K);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let c = &c;
                s.spawn(move || {
                    for i in 0..100 {
                        c.put(&key(t * 1000 + i), i);
                        assert_eq!(c.get(&key(t * 1000 + i)), Some(i));
                    }
                });
            }
        });
        assert_eq!(c.len(), 400);
    }

    /// Counts calls, to show which lookups reached the counter.
    struct Counting(AtomicUsize);

    impl TokenCounter for Counting {
        fn count(&self, bytes: &[u8]) -> u64 {
            self.0.fetch_add(1, Ordering::Relaxed);
            bytes.len() as u64
        }
    }

    #[test]
    fn the_cached_counter_counts_each_text_once() {
        let dir = tempfile::tempdir().unwrap();
        let inner = Counting(AtomicUsize::new(0));
        let cache = DigestCache::open(Some(dir.path().to_owned()), O200K);
        let counter = Cached::new(&cache, &inner);
        assert_eq!(counter.count(b"hello"), 5);
        assert_eq!(counter.count(b"hello"), 5);
        assert_eq!(counter.count(b"world!"), 6);
        assert_eq!(counter.count(b""), 0);
        assert_eq!(inner.0.load(Ordering::Relaxed), 2);
        cache.save().unwrap();
        // A warm run never reaches the counter.
        let inner = Counting(AtomicUsize::new(0));
        let cache = DigestCache::open(Some(dir.path().to_owned()), O200K);
        let counter = Cached::new(&cache, &inner);
        assert_eq!(counter.count(b"hello"), 5);
        assert_eq!(
            counter.count_known(&crate::util::digest::hex(b"world!"), b"world!"),
            6
        );
        assert_eq!(inner.0.load(Ordering::Relaxed), 0);
        // Disabled: always counts.
        let off = DigestCache::disabled(O200K);
        let counter = Cached::new(&off, &inner);
        assert_eq!(counter.count(b"hello"), 5);
        assert_eq!(inner.0.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn cached_counts_equal_the_fast_counter() {
        let dir = tempfile::tempdir().unwrap();
        let fast = Fast(O200K);
        let text = "fn main() { println!(\"上下文 🦀\"); }\n".repeat(20);
        for _ in 0..2 {
            let cache = DigestCache::open(Some(dir.path().to_owned()), O200K);
            let cached = Cached::new(&cache, &fast);
            assert_eq!(cached.count(text.as_bytes()), fast.count(text.as_bytes()));
            cache.save().unwrap();
        }
    }

    #[test]
    fn the_default_folder_follows_the_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(name, _)| *name == k)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            }
        };
        assert_eq!(
            dir_from_env(env(&[
                ("CURATE_CACHE_DIR", "/c"),
                ("XDG_CACHE_HOME", "/x"),
                ("HOME", "/h")
            ])),
            Some(PathBuf::from("/c"))
        );
        assert_eq!(
            dir_from_env(env(&[
                ("CURATE_CACHE_DIR", ""),
                ("XDG_CACHE_HOME", "/x"),
                ("HOME", "/h")
            ])),
            Some(PathBuf::from("/x/curate"))
        );
        assert_eq!(dir_from_env(env(&[])), None);
        if cfg!(target_os = "linux") {
            assert_eq!(
                dir_from_env(env(&[("XDG_CACHE_HOME", "relative"), ("HOME", "/h")])),
                Some(PathBuf::from("/h/.cache/curate"))
            );
        }
    }
}
