//! Numbers kept on disk by the sha256 of the exact bytes they are about, so a warm re-run
//! does not do the work again: token counts (one file per encoding, [`DigestCache::open`])
//! and the content scan's clean verdicts (one file per build of the scanner,
//! [`DigestCache::verdicts`]).
//!
//! One text file each in the user cache folder ([`DigestCache::default_dir`]), made to be
//! searched where it lies rather than loaded: a run that looks up a few texts (a hook's) reads
//! the file and finds each key by binary search, whatever the file holds. A header line
//! `curate-token-cache 2 <tag> <sorted> <stamp>` (`<tag>` the encoding, or `scan-<scanner>`),
//! then records of one width ([`RECORD`] bytes): `<64 hex digits: the sha256> <16 hex digits:
//! the count> <8 hex digits: the stamp>` and a newline. The first `<sorted>` records are in key
//! order; the records after them are the log, appended by later saves and read whole (it is
//! short: at most an eighth of the bound). A stamp says how recently a record was used or
//! added (higher is newer); `<stamp>` is the newest among the sorted records.
//!
//! A record is checked when it is read. A header that does not validate (a foreign encoding
//! or scanner, another format version, more sorted records than the file holds), a damaged
//! record in the log, or a damaged sorted record met by a lookup: the file is not trusted for
//! the rest of the run, and the next save rebuilds it. A record cut short at the end (a save
//! interrupted, or one being appended while this run reads) is left out.
//!
//! The verdicts file records only texts in which no content rule found anything (their
//! count is 0); a text with a secret is scanned again every time, so the file never names
//! which texts hold one. It trusts what the user's own cache folder says, as the token
//! counts do: a record is the sha256 of the whole text, so it vouches for those bytes only,
//! and a scanner built from other rules or code has another file.
//!
//! Lookups are `&self` and thread-safe (rayon workers share one cache). The file is read
//! lazily, on the first lookup, so a run that counts nothing never reads it. [`save`]
//! writes only when this run added counts, under an exclusive advisory lock (`File::lock` on
//! `<file>.lock`, released by the system whatever happens), so concurrent writers both keep
//! their entries. It appends the records this run used or added, as the newest, in one
//! `write`; a concurrent reader sees them whole or leaves the cut record out. When the file
//! is missing or damaged, or the log would pass its bound, the save compacts instead: it
//! reads the whole file and checks every record, merges the log into the sorted records,
//! keeps the newest [`MAX_ENTRIES`] (the lowest stamps dropped, ties by key), numbers the
//! stamps again from 1, and replaces the file atomically through
//! [`crate::util::atomic::write_unsynced`] (a temporary file in the same folder, renamed over
//! it). Neither is `fsync`ed: a file a power cut left empty or damaged fails the checks above
//! and is read as no cache (the `fsync` of a full cache, 4.5 MB, took 50 ms of a hook's
//! dispatch).
//!
//! [`save`]: DigestCache::save

use std::cmp::Ordering as Order;
use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use sha2::{Digest, Sha256};

use crate::model::Encoding;

/// The first word of a cache file.
pub const MAGIC: &str = "curate-token-cache";
/// The format version in the header; another version is ignored.
pub const VERSION: u32 = 2;
/// The most records a compacted cache file keeps (about 5.7 MiB).
pub const MAX_ENTRIES: usize = 65_536;
/// The width of a record, its newline included: 64 hex digits, a space, 16 hex digits, a
/// space, 8 hex digits.
pub const RECORD: usize = 64 + 1 + 16 + 1 + 8 + 1;

/// The longest header line the reader looks for.
const MAX_HEADER: usize = 128;
/// How long a save waits for another run's lock before giving up (it never writes unlocked).
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// A sha256 digest, the key of a record.
pub type Key = [u8; 32];

/// An entry this run used or added.
#[derive(Debug, Clone, Copy)]
struct Slot {
    count: u64,
    /// The order of use in this run: a save writes them in this order, newest last.
    seq: u64,
}

/// What this run did with the cache.
#[derive(Debug, Default)]
struct State {
    /// The counts this run added (or counted again), by key.
    added: KeyMap<Slot>,
    /// The file's records this run used, in the order of use (a key may repeat).
    used: Vec<(Key, Slot)>,
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
    /// The header's first three words and their spaces: what a valid file starts with.
    prefix: String,
    capacity: usize,
    /// The file, opened at the first lookup; `None` when it is missing or not trusted.
    disk: OnceLock<Option<Disk>>,
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

    /// The content scan's clean verdicts in `dir` (`None` = disabled), for the scanner
    /// whose build is `scanner` (the secret rules' `SCANNER`): a count of 0 is "no rule
    /// matched".
    #[must_use]
    pub fn verdicts(dir: Option<PathBuf>, scanner: &str) -> DigestCache {
        let tag = format!("scan-{scanner}");
        DigestCache::named(dir, &tag, &tag, MAX_ENTRIES)
    }

    /// The cache in `dir/<stem>.txt` whose header names `tag`.
    fn named(dir: Option<PathBuf>, stem: &str, tag: &str, capacity: usize) -> DigestCache {
        DigestCache {
            file: dir.map(|d| d.join(format!("{stem}.txt"))),
            prefix: format!("{MAGIC} {VERSION} {tag} "),
            capacity: capacity.max(1),
            disk: OnceLock::new(),
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
        // The file is searched outside the lock: rayon's workers look up in parallel.
        let on_disk = self.on_disk(key);
        let mut state = self.lock();
        let seq = state.next_seq;
        let found = match on_disk {
            Some(count) => {
                state.used.push((*key, Slot { count, seq }));
                Some(count)
            }
            None => state.added.get_mut(key).map(|slot| {
                slot.seq = seq;
                slot.count
            }),
        };
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
        let on_disk = self.on_disk(&key);
        let mut state = self.lock();
        let known = state.added.get(&key).map(|slot| slot.count).or(on_disk);
        if known != Some(count) {
            state.dirty = true;
        }
        let seq = state.next_seq;
        state.next_seq += 1;
        state.added.insert(key, Slot { count, seq });
    }

    /// The count the file holds for `key`, opening it at the first lookup.
    fn on_disk(&self, key: &Key) -> Option<u64> {
        let file = self.file.as_ref()?;
        self.disk
            .get_or_init(|| Disk::open(file, &self.prefix, self.byte_bound()))
            .as_ref()?
            .find(key)
    }

    /// True when the file is missing or was not trusted, at its open or since.
    fn untrusted(&self) -> bool {
        self.disk
            .get()
            .is_none_or(|disk| disk.as_ref().is_none_or(Disk::is_damaged))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Lookups that hit and missed so far.
    #[must_use]
    pub fn stats(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }

    /// Writes this run's new counts back: appended to the file, or merged with it as it is
    /// on disk now (the entries this run used or added as the newest, at most the bound,
    /// oldest dropped) and replaced atomically. Does nothing when disabled or when nothing
    /// was added. Callers may ignore the error: a cache is an optimisation.
    pub fn save(&self) -> std::io::Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let mut state = self.lock();
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
        // What this run used or added, each key once at its last use, oldest first.
        let mut last: KeyMap<Slot> = KeyMap::default();
        let used = state.used.iter().map(|(k, s)| (k, s));
        for (key, slot) in used.chain(&state.added) {
            let kept = last.entry(*key).or_insert(*slot);
            if slot.seq >= kept.seq {
                *kept = *slot;
            }
        }
        let mut ours: Vec<(Key, Slot)> = last.into_iter().collect();
        ours.sort_unstable_by_key(|(_, s)| s.seq);
        let ours: Vec<(Key, u64)> = ours.into_iter().map(|(k, s)| (k, s.count)).collect();
        if self.untrusted() || !self.append(file, &ours)? {
            self.compact(file, &ours)?;
        }
        state.dirty = false;
        Ok(())
    }

    /// The most records the log may hold before a save compacts the file.
    fn log_bound(&self) -> usize {
        (self.capacity / 8).max(1)
    }

    /// The largest file read: the bound, a full log and a record cut short.
    fn byte_bound(&self) -> u64 {
        (MAX_HEADER + (self.capacity + self.log_bound() + 1) * RECORD) as u64
    }

    /// Appends `ours` to a valid file whose log has room for them, in one `write`; `false`
    /// (nothing written) when the file is missing, not a regular file, damaged at its end or
    /// header, or its log full: the caller compacts. Runs under the lock.
    fn append(&self, file: &Path, ours: &[(Key, u64)]) -> std::io::Result<bool> {
        let mut options = std::fs::OpenOptions::new();
        options.read(true).append(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            // Never through a link, never waiting on a FIFO planted as the cache file.
            options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
        }
        let Ok(mut f) = options.open(file) else {
            return Ok(false);
        };
        let meta = f.metadata()?;
        if !meta.is_file() || meta.len() > self.byte_bound() {
            return Ok(false);
        }
        let mut head = Vec::with_capacity(MAX_HEADER);
        (&f).take(MAX_HEADER as u64).read_to_end(&mut head)?;
        let Some(header) = parse_header(&head, &self.prefix) else {
            return Ok(false);
        };
        let body = usize::try_from(meta.len())
            .unwrap_or(usize::MAX)
            .saturating_sub(header.len);
        if body % RECORD != 0 || body / RECORD < header.sorted {
            return Ok(false);
        }
        let log = body / RECORD - header.sorted;
        if log + ours.len() > self.log_bound() {
            return Ok(false);
        }
        let first = u64::from(header.stamp) + 1 + log as u64;
        let mut out = Vec::with_capacity(ours.len() * RECORD);
        for (i, (key, count)) in ours.iter().enumerate() {
            let Ok(stamp) = u32::try_from(first + i as u64) else {
                return Ok(false);
            };
            push_record(&mut out, key, *count, stamp);
        }
        f.write_all(&out)?;
        Ok(true)
    }

    /// Rewrites the file: what it holds (when every record checks) merged with `ours` as the
    /// newest, the newest [`capacity`](Self::with_capacity) kept, sorted by key, stamps
    /// numbered from 1 by recency. Runs under the lock.
    fn compact(&self, file: &Path, ours: &[(Key, u64)]) -> std::io::Result<()> {
        let on_disk = Disk::open(file, &self.prefix, self.byte_bound())
            .and_then(|disk| disk.records())
            .unwrap_or_default();
        let mut merged: KeyMap<(u64, u64)> =
            KeyMap::with_capacity_and_hasher(on_disk.len() + ours.len(), KeyBuild::default());
        let mut newest = 0;
        for (key, count, stamp) in on_disk {
            let stamp = u64::from(stamp);
            newest = newest.max(stamp);
            let slot = merged.entry(key).or_insert((count, stamp));
            if stamp >= slot.1 {
                *slot = (count, stamp);
            }
        }
        for (i, (key, count)) in ours.iter().enumerate() {
            merged.insert(*key, (*count, newest + 1 + i as u64));
        }
        let mut records: Vec<(Key, u64, u64)> =
            merged.into_iter().map(|(k, (n, s))| (k, n, s)).collect();
        // Newest first, ties by key: the oldest are dropped, and the stamps numbered anew.
        records.sort_unstable_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
        records.truncate(self.capacity);
        let kept = records.len();
        for (i, r) in records.iter_mut().enumerate() {
            r.2 = (kept - i) as u64;
        }
        records.sort_unstable_by_key(|r| r.0);
        let mut text = Vec::with_capacity(MAX_HEADER + kept * RECORD);
        text.extend_from_slice(format!("{}{kept} {kept}\n", self.prefix).as_bytes());
        for (key, count, stamp) in &records {
            push_record(
                &mut text,
                key,
                *count,
                u32::try_from(*stamp).unwrap_or(u32::MAX),
            );
        }
        crate::util::atomic::write_unsynced(file, &text).map_err(|e| match e {
            crate::util::fault::Fault::Write { source, .. } => source,
            other => std::io::Error::other(format!("{other:?}")),
        })
    }

    /// The entries this run knows: the file's (every record checked) and its own. For tests.
    #[cfg(test)]
    fn len(&self) -> usize {
        let _ = self.on_disk(&[0; 32]);
        let mut keys: std::collections::HashSet<Key> = self
            .disk
            .get()
            .and_then(Option::as_ref)
            .filter(|disk| !disk.is_damaged())
            .and_then(Disk::records)
            .unwrap_or_default()
            .into_iter()
            .map(|(k, _, _)| k)
            .collect();
        keys.extend(self.lock().added.keys());
        keys.len()
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A record that does not read as one.
struct Damaged;

/// The header line's numbers.
#[derive(Debug, Clone, Copy)]
struct Header {
    /// The header line's length, its newline included.
    len: usize,
    /// How many records, after it, are sorted by key.
    sorted: usize,
    /// The newest stamp among them.
    stamp: u32,
}

/// A cache file as opened: its header and log read and checked, its sorted records read
/// where a lookup needs them. The open handle keeps this version of the file: a save that
/// replaces it meanwhile does not change what this run reads, and records appended since are
/// past the length read at the open.
#[derive(Debug)]
struct Disk {
    file: std::fs::File,
    header: Header,
    /// The length of the records read: every complete record at the open.
    records: usize,
    /// The log's records (each checked), the later of two for a key kept.
    log: KeyMap<u64>,
    /// Lookups that reached the sorted records.
    probed: AtomicUsize,
    /// The sorted records, read and checked whole once a run has looked up
    /// [`READ_WHOLE_AFTER`] keys (`None`: one was damaged).
    sorted: OnceLock<Option<Vec<(Key, u64, u32)>>>,
    /// A record read was damaged: the file is not trusted from then on.
    damaged: AtomicBool,
}

/// How many probes of a lookup guess from the key's value before the rest halve the range:
/// enough for evenly spread keys, few enough that a file of uneven ones costs little more.
const GUESSES: usize = 6;

/// After this many lookups a run reads the sorted records whole (≈ 17 reads a lookup in a
/// full file until then): a hook's few lookups read a few pages, a bulk render's thousands
/// read the file once.
const READ_WHOLE_AFTER: usize = 64;

impl Disk {
    /// The file opened (regular files only, at most `bound` bytes), its header checked and its
    /// log read; `None` when either does not validate or the file holds fewer records than
    /// its header sorts. A record cut short at the end is left out.
    fn open(path: &Path, prefix: &str, bound: u64) -> Option<Disk> {
        let (file, len) = crate::util::read::open_regular(path).ok()?;
        if len > bound {
            return None;
        }
        let len = usize::try_from(len).ok()?;
        let mut head = vec![0; len.min(MAX_HEADER)];
        read_at(&file, &mut head, 0).ok()?;
        let header = parse_header(&head, prefix)?;
        let records = (len - header.len) / RECORD;
        if records < header.sorted {
            return None;
        }
        let mut bytes = vec![0; (records - header.sorted) * RECORD];
        read_at(
            &file,
            &mut bytes,
            (header.len + header.sorted * RECORD) as u64,
        )
        .ok()?;
        let mut log =
            KeyMap::with_capacity_and_hasher(records - header.sorted, KeyBuild::default());
        for record in bytes.chunks_exact(RECORD) {
            let (key, count, _) = parse_record(record)?;
            log.insert(key, count);
        }
        Some(Disk {
            file,
            header,
            records,
            log,
            probed: AtomicUsize::new(0),
            sorted: OnceLock::new(),
            damaged: AtomicBool::new(false),
        })
    }

    /// The count for `key`: in the log, else by a search of the sorted records, each one
    /// compared checked whole; `None` from the first damaged record on.
    fn find(&self, key: &Key) -> Option<u64> {
        if self.is_damaged() {
            return None;
        }
        if let Some(count) = self.log.get(key) {
            return Some(*count);
        }
        let whole = match self.sorted.get() {
            Some(whole) => Some(whole),
            None if self.probed.fetch_add(1, Ordering::Relaxed) < READ_WHOLE_AFTER => None,
            None => Some(self.sorted.get_or_init(|| {
                let bytes = self.read_records(self.header.sorted).ok()?;
                parse_records(&bytes, self.header.sorted)
            })),
        };
        let found = match whole {
            Some(Some(sorted)) => search(sorted.len(), key, |i| Ok((sorted[i].0, sorted[i].1))),
            Some(None) => Err(Damaged),
            None => {
                let mut buffer = [0u8; RECORD];
                search(self.header.sorted, key, |i| {
                    let at = self.header.len + i * RECORD;
                    read_at(&self.file, &mut buffer, at as u64).map_err(|_| Damaged)?;
                    let (k, count, _) = parse_record(&buffer).ok_or(Damaged)?;
                    Ok((k, count))
                })
            }
        };
        found.unwrap_or_else(|Damaged| {
            self.damaged.store(true, Ordering::Relaxed);
            None
        })
    }

    fn is_damaged(&self) -> bool {
        self.damaged.load(Ordering::Relaxed)
    }

    /// The first `n` records' bytes.
    fn read_records(&self, n: usize) -> Result<Vec<u8>, Damaged> {
        let mut bytes = vec![0; n * RECORD];
        read_at(&self.file, &mut bytes, self.header.len as u64).map_err(|_| Damaged)?;
        Ok(bytes)
    }

    /// Every record, each checked, the sorted ones in strictly increasing key order; `None`
    /// when one is not.
    fn records(&self) -> Option<Vec<(Key, u64, u32)>> {
        parse_records(&self.read_records(self.records).ok()?, self.header.sorted)
    }
}

/// The records in `bytes`, each checked, the first `sorted` in strictly increasing key
/// order; `None` when one is not.
fn parse_records(bytes: &[u8], sorted: usize) -> Option<Vec<(Key, u64, u32)>> {
    let mut out: Vec<(Key, u64, u32)> = Vec::with_capacity(bytes.len() / RECORD);
    for (i, record) in bytes.chunks_exact(RECORD).enumerate() {
        let parsed = parse_record(record)?;
        if i > 0 && i < sorted && out.last().is_some_and(|p| p.0 >= parsed.0) {
            return None;
        }
        out.push(parsed);
    }
    Some(out)
}

/// The count of `key` among `n` records sorted by key, `at(i)` giving the `i`th. Keys are
/// sha256 digests, spread evenly: the first probes guess where the key lies from its value
/// between the bounds' (≈ 4 probes in a full file, where halving takes 17), the rest halve.
fn search(
    n: usize,
    key: &Key,
    mut at: impl FnMut(usize) -> Result<(Key, u64), Damaged>,
) -> Result<Option<u64>, Damaged> {
    let value = |k: &Key| u128::from(u64::from_be_bytes(k[..8].try_into().unwrap_or_default()));
    let target = value(key);
    let (mut low, mut high) = (0, n);
    let (mut low_value, mut high_value) = (0u128, u128::from(u64::MAX));
    let mut probes = 0;
    while low < high {
        let mid = if probes < GUESSES {
            let offset = target.saturating_sub(low_value) * (high - low) as u128
                / (high_value.saturating_sub(low_value) + 1);
            low + usize::try_from(offset)
                .unwrap_or(usize::MAX)
                .min(high - low - 1)
        } else {
            low + (high - low) / 2
        };
        probes += 1;
        let (k, count) = at(mid)?;
        match k.cmp(key) {
            Order::Less => (low, low_value) = (mid + 1, value(&k)),
            Order::Greater => (high, high_value) = (mid, value(&k)),
            Order::Equal => return Ok(Some(count)),
        }
    }
    Ok(None)
}

/// Reads exactly `buffer.len()` bytes of `file` at `offset`.
fn read_at(file: &std::fs::File, buffer: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buffer, offset)
    }
    #[cfg(not(unix))]
    {
        use std::io::Seek as _;
        let mut file = file;
        file.seek(std::io::SeekFrom::Start(offset))?;
        file.read_exact(buffer)
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

/// Appends one record.
fn push_record(out: &mut Vec<u8>, key: &Key, count: u64, stamp: u32) {
    push_hex(out, key);
    out.push(b' ');
    push_hex(out, &count.to_be_bytes());
    out.push(b' ');
    push_hex(out, &stamp.to_be_bytes());
    out.push(b'\n');
}

/// Appends `bytes` as lower-case hex digits.
fn push_hex(out: &mut Vec<u8>, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)]);
        out.push(HEX[usize::from(b & 0x0f)]);
    }
}

/// The header line at the start of `bytes` when it is `<prefix><sorted> <stamp>\n`, both
/// numbers decimal without a leading zero.
fn parse_header(bytes: &[u8], prefix: &str) -> Option<Header> {
    let rest = bytes.strip_prefix(prefix.as_bytes())?;
    let line = &rest[..memchr::memchr(b'\n', &rest[..rest.len().min(MAX_HEADER)])?];
    let (sorted, stamp) = std::str::from_utf8(line).ok()?.split_once(' ')?;
    let number = |s: &str| {
        (s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0')))
            .then(|| s.parse::<u64>().ok())
            .flatten()
    };
    Some(Header {
        len: prefix.len() + line.len() + 1,
        sorted: usize::try_from(number(sorted)?).ok()?,
        stamp: u32::try_from(number(stamp)?).ok()?,
    })
}

/// One record (exactly [`RECORD`] bytes): its key, count and stamp.
fn parse_record(record: &[u8]) -> Option<(Key, u64, u32)> {
    if record.len() != RECORD || record[64] != b' ' || record[81] != b' ' || record[90] != b'\n' {
        return None;
    }
    let key = parse_key(&record[..64])?;
    let mut number = [0u8; 8];
    parse_hex(&record[65..81], &mut number)?;
    let count = u64::from_be_bytes(number);
    let mut number = [0u8; 4];
    parse_hex(&record[82..90], &mut number)?;
    Some((key, count, u32::from_be_bytes(number)))
}

/// 64 lower-case hex digits → a key.
pub fn parse_key(hex: &[u8]) -> Option<Key> {
    let mut key = [0u8; 32];
    parse_hex(hex, &mut key)?;
    Some(key)
}

/// Exactly `2 * out.len()` lower-case hex digits into `out`.
fn parse_hex(hex: &[u8], out: &mut [u8]) -> Option<()> {
    if hex.len() != 2 * out.len() || !hex.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    // '0'..='9' → 0..=9, 'a'..='f' → 10..=15, without branches.
    let nibble = |b: u8| (b & 0x0f) + 9 * (b >> 6);
    for (o, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
        *o = (nibble(pair[0]) << 4) | nibble(pair[1]);
    }
    Some(())
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

/// At most this many files of one kind a repository (the related index, the folders'
/// listings, the known files) in the cache folder: the least recently written go first.
pub const MAX_REPO_FILES: usize = 16;

/// A repository's cache file in the folder `dir`, `<prefix><version>-<12 hex digits of the
/// root's sha256>.bin` (none but on unix), and its bytes when it can be read within `max`.
pub fn repo_file(
    dir: Option<PathBuf>,
    prefix: &str,
    version: u8,
    root: &[u8],
    max: usize,
) -> (Option<PathBuf>, Option<Vec<u8>>) {
    let file = dir.filter(|_| cfg!(unix)).map(|d| {
        let name = crate::util::digest::hex12(root);
        d.join(format!("{prefix}{version}-{name}.bin"))
    });
    let bytes = file
        .as_ref()
        .and_then(|f| crate::util::read::read_capped(f, max as u64).ok());
    (file, bytes)
}

/// After a repository's cache file of `version` was written in `dir`: the same repository's
/// files of older versions are removed (read no more), then the folder is swept
/// ([`sweep_repo_files`]).
pub fn written_repo_file(dir: &Path, prefix: &str, version: u8, root: &[u8]) {
    let name = crate::util::digest::hex12(root);
    for v in 1..version {
        let _ = std::fs::remove_file(dir.join(format!("{prefix}{v}-{name}.bin")));
    }
    sweep_repo_files(dir, prefix);
}

/// Removes the least recently written files named `<prefix>….bin` in `dir` beyond
/// [`MAX_REPO_FILES`] (of any version: an older curate's count too, and go first once no
/// run writes them).
pub fn sweep_repo_files(dir: &Path, prefix: &str) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let mut found: Vec<(SystemTime, PathBuf)> = read
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with(prefix) && name.ends_with(".bin")
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if found.len() <= MAX_REPO_FILES {
        return;
    }
    found.sort();
    for (_, path) in &found[..found.len() - MAX_REPO_FILES] {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let (header, records) = text.split_once('\n').unwrap();
        assert_eq!(header, "curate-token-cache 2 o200k_base 3 3");
        // Sorted by key, one width; the stamps say 1 was used last, 2 is the oldest.
        let lines: Vec<&str> = records.lines().collect();
        assert!(lines.is_sorted(), "{text}");
        assert!(lines.iter().all(|l| l.len() + 1 == RECORD), "{text}");
        assert!(text.contains(&format!("{} 000000000000000b 00000003\n", key(1))));
        assert!(text.contains(&format!("{} 0000000000000000 00000001\n", key(2))));
        assert!(text.contains(&format!("{} ffffffffffffffff 00000002\n", key(3))));
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

    /// `file` with `from` replaced by `to` once (it must be there).
    fn edit(file: &Path, from: &str, to: &str) {
        let text = std::fs::read_to_string(file).unwrap();
        assert!(text.contains(from), "{from:?} not in {text}");
        std::fs::write(file, text.replacen(from, to, 1)).unwrap();
    }

    /// The record of `key(n)` in a cache file's text.
    fn record_of(text: &str, n: u64) -> String {
        let k = key(n);
        text.lines().find(|l| l.starts_with(&k)).unwrap().to_owned()
    }

    #[test]
    fn a_damaged_header_or_a_short_file_is_never_trusted_and_is_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let file = valid_file(dir.path());
        let good = std::fs::read_to_string(&file).unwrap();
        let header = "curate-token-cache 2 o200k_base 2 2\n";
        assert!(good.starts_with(header), "{good}");
        let body = &good[header.len()..];
        let damaged = [
            String::new(),
            "garbage\n".to_owned(),
            good.replace("curate-token-cache", "curate-token-cachX"),
            good.replace("cache 2 o200k", "cache 1 o200k"),
            good.replace(" 2 2\n", " 3 2\n"),
            good.replace(" 2 2\n", " 02 2\n"),
            good.replace(" 2 2\n", " 2 x\n"),
            good.replace(" 2 2\n", " 2 2 \n"),
            good.replace(" 2 2\n", " 2\n"),
            // A record shorter by one byte: the file holds fewer records than it sorts.
            good.replacen(" 0000000000000001 ", " 000000000000001 ", 1),
            // What a power cut can leave: the size without the bytes.
            "\0".repeat(good.len()),
            format!("{header}{}", "\0".repeat(body.len())),
        ];
        for bad in damaged {
            std::fs::write(&file, &bad).unwrap();
            let c = DigestCache::open(Some(dir.path().to_owned()), O200K);
            assert_eq!(c.get(&key(1)), None, "trusted {bad:?}");
            assert_eq!(c.get(&key(2)), None, "trusted {bad:?}");
            c.put(&key(3), 3);
            c.save().unwrap();
            let text = std::fs::read_to_string(&file).unwrap();
            assert_eq!(
                text,
                format!(
                    "curate-token-cache 2 o200k_base 1 1\n{} 0000000000000003 00000001\n",
                    key(3)
                ),
                "not rebuilt after {bad:?}"
            );
        }
        std::fs::write(&file, [0xff, 0xfe, 0, 1, 2]).unwrap();
        assert!(DigestCache::open(Some(dir.path().to_owned()), O200K).is_empty());
    }

    #[test]
    fn a_damaged_record_is_never_trusted_and_the_next_save_rebuilds_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = valid_file(dir.path());
        let good = std::fs::read_to_string(&file).unwrap();
        let record = record_of(&good, 1);
        let (k, rest) = record.split_at(64);
        let damaged = [
            format!("{k} 000000000000000x 00000001"),
            format!("{k} 000000000000000A 00000001"),
            format!("{k}  000000000000001 00000001"),
            format!("{k} 0000000000000001 0000000g"),
            format!("{}{rest}", k.to_uppercase()),
            format!("{}x{rest}", &k[1..]),
            format!("{k}{}\r", &rest[..rest.len() - 1]),
        ];
        for bad in damaged {
            assert_eq!(bad.len(), record.len(), "{bad}");
            std::fs::write(&file, good.replace(&record, &bad)).unwrap();
            let c = DigestCache::open(Some(dir.path().to_owned()), O200K);
            assert_eq!(c.get(&key(1)), None, "trusted {bad:?}");
            // Not trusted for the rest of the run, sound records included.
            assert_eq!(c.get(&key(2)), None, "trusted the file after {bad:?}");
            c.put(&key(3), 3);
            c.save().unwrap();
            let text = std::fs::read_to_string(&file).unwrap();
            assert!(!text.contains(&bad), "the damaged record survived {bad:?}");
            let d = DigestCache::open(Some(dir.path().to_owned()), O200K);
            assert_eq!(d.get(&key(3)), Some(3), "not rebuilt after {bad:?}");
            assert_eq!(d.len(), 1, "{text}");
        }
        // Sorted records out of order: a lookup may miss, never gives another key's count,
        // and the compaction (which checks every record) rebuilds the file from this run's
        // entries alone.
        let (head, body) = good.split_once('\n').unwrap();
        let mut lines: Vec<&str> = body.lines().collect();
        lines.reverse();
        std::fs::write(&file, format!("{head}\n{}\n", lines.join("\n"))).unwrap();
        let c = DigestCache::with_capacity(Some(dir.path().to_owned()), O200K, 16);
        assert!(matches!(c.get(&key(1)), None | Some(1)));
        assert!(matches!(c.get(&key(2)), None | Some(2)));
        for i in 4..7 {
            c.put(&key(i), i);
        }
        c.save().unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        let d = DigestCache::open(Some(dir.path().to_owned()), O200K);
        for i in 4..7 {
            assert_eq!(d.get(&key(i)), Some(i), "{text}");
        }
        assert!(
            text.lines().skip(1).collect::<Vec<_>>().is_sorted(),
            "{text}"
        );
    }

    #[test]
    fn lookups_give_the_same_answers_read_one_record_at_a_time_or_whole() {
        let dir = tempfile::tempdir().unwrap();
        let c = DigestCache::open(Some(dir.path().to_owned()), O200K);
        for i in 0..300 {
            c.put(&key(i), i * 7);
        }
        c.save().unwrap();
        let d = DigestCache::open(Some(dir.path().to_owned()), O200K);
        // Past READ_WHOLE_AFTER lookups the sorted records are read whole.
        for i in (0..600).rev() {
            let expected = (i < 300).then_some(i * 7);
            assert_eq!(d.get(&key(i)), expected, "key {i}");
        }
        assert_eq!(d.stats(), (300, 300));
        // A damaged record met after the switch: the file is not trusted either.
        let file = dir.path().join("tokens-o200k_base.txt");
        let text = std::fs::read_to_string(&file).unwrap();
        let record = record_of(&text, 5);
        edit(&file, &record, &record.replace(' ', "x"));
        // Lookups are right until one meets the damaged record; from then on the file's
        // records are not trusted (a key this run already found stays known).
        let e = DigestCache::open(Some(dir.path().to_owned()), O200K);
        let mut trusted = true;
        for i in (0..300).filter(|i| *i != 5) {
            match e.get(&key(i)) {
                Some(n) => assert!(trusted && n == i * 7, "key {i}: {n}"),
                None => trusted = false,
            }
        }
        assert_eq!(e.get(&key(5)), None);
    }

    #[test]
    fn a_save_appends_its_records_until_the_log_is_full_then_compacts() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tokens-o200k_base.txt");
        // A bound of 16: the log holds 2 records.
        let open = || DigestCache::with_capacity(Some(dir.path().to_owned()), O200K, 16);
        let c = open();
        for i in 0..4 {
            c.put(&key(i), i);
        }
        c.save().unwrap();
        let first = std::fs::read_to_string(&file).unwrap();
        assert!(
            first.starts_with("curate-token-cache 2 o200k_base 4 4\n"),
            "{first}"
        );
        // A run that uses 0 and adds 10: both appended, as the newest, the rest untouched.
        let c = open();
        assert_eq!(c.get(&key(0)), Some(0));
        c.put(&key(10), 10);
        c.save().unwrap();
        let second = std::fs::read_to_string(&file).unwrap();
        assert_eq!(
            second,
            format!(
                "{first}{} 0000000000000000 00000005\n{} 000000000000000a 00000006\n",
                key(0),
                key(10)
            )
        );
        // A run that only looks up writes nothing.
        let c = open();
        assert_eq!(c.get(&key(10)), Some(10));
        assert_eq!(c.get(&key(3)), Some(3));
        assert_eq!(c.get(&key(99)), None);
        c.save().unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), second);
        // The log is full: the next save compacts: sorted, no log, stamps from 1.
        let c = open();
        assert_eq!(c.get(&key(1)), Some(1));
        c.put(&key(11), 11);
        c.save().unwrap();
        let third = std::fs::read_to_string(&file).unwrap();
        let (header, body) = third.split_once('\n').unwrap();
        assert_eq!(header, "curate-token-cache 2 o200k_base 6 6");
        let lines: Vec<&str> = body.lines().collect();
        assert!(lines.is_sorted(), "{third}");
        assert_eq!(lines.len(), 6);
        // 2 and 3 are the oldest, then 0 and 10 (the second run), then 1 and 11.
        let stamp = |n| record_of(&third, n)[82..].to_owned();
        assert_eq!(stamp(2), "00000001");
        assert_eq!(stamp(3), "00000002");
        assert_eq!(stamp(0), "00000003");
        assert_eq!(stamp(10), "00000004");
        assert_eq!(stamp(1), "00000005");
        assert_eq!(stamp(11), "00000006");
        let d = open();
        for i in [0, 1, 2, 3, 10, 11] {
            assert_eq!(d.get(&key(i)), Some(i));
        }
    }

    #[test]
    fn a_record_cut_short_at_the_end_is_left_out_and_the_next_save_compacts() {
        let dir = tempfile::tempdir().unwrap();
        let file = valid_file(dir.path());
        let good = std::fs::read_to_string(&file).unwrap();
        let c = DigestCache::open(Some(dir.path().to_owned()), O200K);
        c.put(&key(5), 5);
        c.save().unwrap();
        let appended = std::fs::read_to_string(&file).unwrap();
        assert_eq!(appended.len(), good.len() + RECORD);
        // An append cut by a power cut, or still being written while another run reads.
        std::fs::write(&file, &appended[..appended.len() - 10]).unwrap();
        let c = DigestCache::open(Some(dir.path().to_owned()), O200K);
        assert_eq!(c.get(&key(5)), None);
        assert_eq!(c.get(&key(1)), Some(1));
        assert_eq!(c.get(&key(2)), Some(2));
        c.put(&key(6), 6);
        c.save().unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.starts_with("curate-token-cache 2 o200k_base 3 3\n"),
            "{text}"
        );
        assert_eq!(
            text.len() % RECORD,
            "curate-token-cache 2 o200k_base 3 3\n".len() % RECORD
        );
        let d = DigestCache::open(Some(dir.path().to_owned()), O200K);
        assert_eq!(d.get(&key(5)), None);
        assert_eq!(d.get(&key(6)), Some(6));
        assert_eq!(d.len(), 3);
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
        let big = DigestCache::open(Some(dir.path().to_owned()), O200K);
        for i in 10..40 {
            big.put(&key(i), i);
        }
        big.save().unwrap();
        assert_eq!(
            std::fs::metadata(&file).unwrap().len() as usize,
            36 + 32 * RECORD
        );
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
        assert_eq!(size as usize, 36 + 5 * RECORD, "{size} bytes");
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
