//! The word index of the task's ranking (docs/selection.md): per file whose text the ranking
//! read, how many words it has and how often each occurs, so that a file whose stamp did not
//! change is not read and split again. Kept beside the `--related` index, the same way: one
//! file a repository in the cache folder, `task-words-v1-<12 hex digits of the root's
//! sha256>.bin`, built once and updated by each file's identity.
//!
//! Per file: its path, its stamp (taken after its bytes were read; a racy one is not kept),
//! and what admission said of its text: refused by content (binary, or a secret: nothing
//! else is kept of it) or its words, each an id into one sorted vocabulary with its count
//! (a code file's string literals' keys among them, after a mark no word holds: the edges
//! they make need no read either). In `curate watch` a file the process found as kept,
//! and the kernel told no change of since, is taken as kept without its stamp.
//! A file is served from the index only when it is still a regular file (not a link) and
//! its stamp is the one kept; anything else is read through admission again. The index only
//! ranks: what a selected file gives is read through admission, never from here. The words
//! depend on the tokeniser and the secret rules: the caller's fingerprint of the one, this
//! build's version and rules of the other are in the header, and an index made under others
//! is ignored. A refusal by name, link or size is never kept (judged again each run).
//!
//! Bounded: at most [`MAX_ENTRIES`] files and [`MAX_BYTES`] bytes; a file that does not
//! decode whole (its checksum, its version) is ignored and written anew. Never a panic.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use super::codec::{Reader, checksum, head, put, put_bytes, put_len, put_stamp};
use super::index::{Base, Stamp};
use crate::outline::Vocab;
use crate::util::cache::{repo_file, written_repo_file};

const PREFIX: &str = "task-words-v";
const VERSION: u8 = 1;
const MAGIC: &[u8] = b"curate task words index\n";
/// At most this many files an index, this many bytes.
const MAX_ENTRIES: usize = 200_000;
const MAX_BYTES: usize = 256 * 1024 * 1024;

/// What a file's text gave the ranking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Counted {
    /// Binary, or a secret by content: ranked by its path alone.
    Refused,
    /// How many words it has, and each distinct word with its count, sorted by word.
    Words {
        len: u32,
        counts: Vec<(String, u32)>,
    },
}

/// An entry as loaded: its words are decoded only when asked ([`Terms::each`]).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Loaded {
    path: String,
    stamp: Stamp,
    /// Where its words lie in the body (`None`: refused by content).
    words: Option<(u32, u32)>,
}

/// A loaded entry still valid for this run, to be read with [`Terms::each`].
#[derive(Debug, Clone, Copy)]
pub struct Kept<'a>(&'a Loaded);

impl Kept<'_> {
    /// True when its text was refused (binary, or a secret by content).
    #[must_use]
    pub fn refused(&self) -> bool {
        self.0.words.is_none()
    }

    /// The file's size as kept (its stamp's).
    #[must_use]
    pub fn size(&self) -> u64 {
        self.0.stamp.size
    }
}

/// The word index of one repository.
#[derive(Debug)]
pub struct Terms {
    file: Option<PathBuf>,
    root: Vec<u8>,
    /// The tokeniser's fingerprint, as the caller gave it.
    words_of: Vec<u8>,
    base: Option<Base>,
    started: SystemTime,
    /// The file's bytes (its checksum off), where the entries' words lie.
    body: Vec<u8>,
    vocab: Vocab,
    /// Sorted by path, paths distinct.
    entries: Vec<Loaded>,
    /// The files read in this run, with their stamp after the read.
    fresh: Mutex<Vec<(String, Stamp, Counted)>>,
    /// In a process that stays (`curate watch`): what it knows did not change.
    watch: Option<Watch>,
}

/// What `curate watch` vouches for ([`Terms::watched_by`]).
#[derive(Debug)]
struct Watch {
    unchanged: std::sync::Arc<dyn super::Unchanged>,
    /// Files whose kept entry was found to be the file's own (stamped, or read) by a run of
    /// this process, and not changed since, as far as the events told.
    trusted: foldhash::HashSet<String>,
    /// Files found so in this run.
    checked: Mutex<Vec<String>>,
}

impl Terms {
    /// The index of the repository at `root` (canonical) in the cache folder `dir`, loaded
    /// (`None`: no index, nothing served or kept). `words_of` names the tokeniser: an index
    /// written under another is not read.
    #[must_use]
    pub fn open(dir: Option<PathBuf>, root: &Path, words_of: &[u8]) -> Terms {
        let started = SystemTime::now();
        let root_bytes = root.to_string_lossy().into_owned().into_bytes();
        let (file, bytes) = repo_file(dir, PREFIX, VERSION, &root_bytes, MAX_BYTES);
        let (body, vocab, entries) = bytes
            .and_then(|b| decode(b, &root_bytes, words_of))
            .unwrap_or_default();
        Terms {
            base: file.as_ref().map(|_| Base::open(root)),
            file,
            root: root_bytes,
            words_of: words_of.to_vec(),
            started,
            body,
            vocab,
            entries,
            fresh: Mutex::new(Vec::new()),
            watch: None,
        }
    }

    /// Starts a run in a process that stays: a file this process found as kept, that
    /// `unchanged` still vouches for, is taken as kept without its stamp; the others are
    /// stamped as in any run.
    pub fn watched_by(&mut self, unchanged: std::sync::Arc<dyn super::Unchanged>) {
        self.started = SystemTime::now();
        let mut trusted = self.watch.take().map(|w| w.trusted).unwrap_or_default();
        trusted.retain(|p| unchanged.file(p));
        self.watch = Some(Watch {
            unchanged,
            trusted,
            checked: Mutex::new(Vec::new()),
        });
    }

    /// Trusts nothing a run of this process found (an overflow of the kernel's events).
    pub fn forget_watched(&mut self) {
        self.watch = None;
    }

    /// True when files are served and kept.
    #[must_use]
    pub fn is_enabled(&self) -> bool {
        self.file.is_some()
    }

    /// The vocabulary id of `word`, if a kept file holds it.
    #[must_use]
    pub fn id_of(&self, word: &str) -> Option<u32> {
        self.vocab.find(word.as_bytes())
    }

    /// How many words the vocabulary holds (ids are below it).
    #[must_use]
    pub fn words(&self) -> usize {
        self.vocab.len()
    }

    /// What is kept of `path` when it is still the file it was: a regular file (not a link),
    /// of the stamp kept, not racy, stamped as the `--related` index stamps its files.
    #[must_use]
    pub fn still(&self, path: &str) -> Option<Kept<'_>> {
        let at = self
            .entries
            .binary_search_by(|e| e.path.as_str().cmp(path))
            .ok()?;
        let e = &self.entries[at];
        if let Some(w) = &self.watch
            && w.trusted.contains(path)
            && w.unchanged.file(path)
        {
            return Some(Kept(e));
        }
        let now = self.base.as_ref()?.file(path)?;
        let still = now == e.stamp && !now.is_racy(self.started);
        if still && let Some(w) = &self.watch {
            lock(&w.checked).push(path.to_owned());
        }
        still.then_some(Kept(e))
    }

    /// Calls `f` with each word id and count of a kept file's words; its length in words,
    /// or `None` when they do not decode (or it was refused).
    pub fn each(&self, kept: Kept<'_>, mut f: impl FnMut(u32, u32)) -> Option<u32> {
        self.walk(kept, |id, n| {
            f(id, n);
            true
        })
    }

    /// The words of a kept file that begin with `mark`, `mark` cut off, in order (`None`:
    /// refused, or its words do not decode). Marked words sort before every word (a mark is
    /// a control character), so only the head of the file's words is read.
    #[must_use]
    pub fn marked(&self, kept: Kept<'_>, mark: char) -> Option<Vec<String>> {
        let mut out = Vec::new();
        let mut buf = [0u8; 4];
        let mark = mark.encode_utf8(&mut buf).as_bytes();
        let mut whole = true;
        self.walk(kept, |id, _| {
            let Some(word) = self.vocab.get(id as usize) else {
                return true;
            };
            if let Some(rest) = word.strip_prefix(mark) {
                out.push(String::from_utf8_lossy(rest).into_owned());
            } else if word > mark {
                // Past the marked words: the rest is not read.
                whole = false;
                return false;
            }
            true
        })
        .or((!whole).then_some(0))?;
        Some(out)
    }

    /// Calls `f` with a kept file's word ids and counts, in order, until it returns false;
    /// the file's length in words when every word was read and decoded (`None`: refused,
    /// stopped, or not decoding).
    fn walk(&self, kept: Kept<'_>, mut f: impl FnMut(u32, u32) -> bool) -> Option<u32> {
        let (at, len) = kept.0.words?;
        let block = self
            .body
            .get(at as usize..(at as usize).checked_add(len as usize)?)?;
        let mut r = Reader {
            bytes: block,
            at: 0,
        };
        let words = u32::try_from(r.int()?).ok()?;
        let n = r.len()?;
        let mut id: u64 = 0;
        for k in 0..n {
            let delta = r.int()?;
            if k > 0 && delta == 0 {
                return None;
            }
            id = id.checked_add(delta)?;
            if id >= self.vocab.len() as u64 {
                return None;
            }
            if !f(u32::try_from(id).ok()?, u32::try_from(r.int()?).ok()?) {
                return None;
            }
        }
        (r.at == block.len()).then_some(words)
    }

    /// The stamp of `path` now, as [`Terms::still`] takes it (`None`: disabled, or not a
    /// regular file).
    #[must_use]
    pub fn stamp(&self, path: &str) -> Option<Stamp> {
        self.base.as_ref()?.file(path)
    }

    /// Records what this run read of `path`, `stamp` taken after the bytes were read; a racy
    /// stamp is not kept.
    pub fn learn(&self, path: &str, stamp: Stamp, counted: Counted) {
        if self.file.is_none() || stamp.is_racy(self.started) {
            return;
        }
        lock(&self.fresh).push((path.to_owned(), stamp, counted));
    }

    /// Writes the index when this run read a file or one kept is gone: the files read, and
    /// those kept that are still in `universe` (sorted). Atomic; an optimisation, so callers
    /// may ignore the error.
    pub fn save(&self, universe: &[String]) -> crate::error::Result<()> {
        self.write(universe).map(|_| ())
    }

    /// In a process that stays, after a run: the index as [`Terms::save`] wrote it, loaded
    /// again for the next run, with what this run found as kept or read trusted from then on.
    /// `None`: nothing changed (the files found as kept are trusted all the same).
    pub fn save_next(&mut self, universe: &[String]) -> Option<Terms> {
        let read: Vec<String> = lock(&self.fresh).iter().map(|f| f.0.clone()).collect();
        let written = self.write(universe).ok().flatten();
        if let Some(w) = &mut self.watch {
            let checked = std::mem::take(&mut *lock(&w.checked));
            w.trusted.extend(checked);
            // A file read in this run is trusted once it is in the index as read.
            if written.is_some() {
                w.trusted.extend(read);
            }
        }
        let (body, vocab, entries) = decode(written?, &self.root, &self.words_of)?;
        Some(Terms {
            file: self.file.clone(),
            root: self.root.clone(),
            words_of: self.words_of.clone(),
            base: self.base.take(),
            started: self.started,
            body,
            vocab,
            entries,
            fresh: Mutex::new(Vec::new()),
            watch: self.watch.take(),
        })
    }

    /// [`Terms::save`]'s work: the bytes written (`None`: nothing to write).
    fn write(&self, universe: &[String]) -> crate::error::Result<Option<Vec<u8>>> {
        let Some(file) = &self.file else {
            return Ok(None);
        };
        let mut fresh = std::mem::take(&mut *lock(&self.fresh));
        fresh.sort_by(|a, b| a.0.cmp(&b.0));
        fresh.dedup_by(|a, b| a.0 == b.0);
        // The entries, the universe and the files read are sorted by path: one walk of each.
        let (mut u, mut f) = (universe.iter().peekable(), fresh.iter().peekable());
        let kept: Vec<&Loaded> = self
            .entries
            .iter()
            .filter(|e| {
                let p = e.path.as_str();
                while u.next_if(|x| x.as_str() < p).is_some() {}
                while f.next_if(|x| x.0.as_str() < p).is_some() {}
                u.peek().is_some_and(|x| x.as_str() == p)
                    && f.peek().is_none_or(|x| x.0.as_str() != p)
            })
            .collect();
        if fresh.is_empty() && kept.len() == self.entries.len() {
            return Ok(None);
        }
        let Some(bytes) = self.encode(&kept, &fresh) else {
            return Ok(None);
        };
        crate::util::atomic::write_unsynced(file, &bytes)?;
        if let Some(dir) = file.parent() {
            written_repo_file(dir, PREFIX, VERSION, &self.root);
        }
        Ok(Some(bytes))
    }

    /// The index file's bytes: the entries `kept` and `fresh` merged by path; `None` over
    /// [`MAX_BYTES`].
    fn encode(&self, kept: &[&Loaded], fresh: &[(String, Stamp, Counted)]) -> Option<Vec<u8>> {
        // One entry's words as (word, count), in either form.
        let mut entries: Vec<Encoding<'_>> = Vec::with_capacity(kept.len() + fresh.len());
        for e in kept {
            let words = match e.words {
                None => None,
                Some(_) => {
                    let mut w = Vec::new();
                    let vocab = &self.vocab;
                    let decoded = self.each(Kept(e), |id, n| {
                        if let Some(word) = vocab.get(id as usize) {
                            w.push((word, n));
                        }
                    });
                    // Words that do not decode: the file is read again next time.
                    let Some(len) = decoded else { continue };
                    w.push((&[][..], len));
                    Some(w)
                }
            };
            entries.push((e.path.as_str(), &e.stamp, words));
        }
        for (path, stamp, counted) in fresh {
            let words = match counted {
                Counted::Refused => None,
                Counted::Words { len, counts } => {
                    let mut w: Vec<(&[u8], u32)> =
                        counts.iter().map(|(s, n)| (s.as_bytes(), *n)).collect();
                    w.push((&[][..], *len));
                    Some(w)
                }
            };
            entries.push((path.as_str(), stamp, words));
        }
        entries.sort_by(|a, b| a.0.cmp(b.0));
        entries.truncate(MAX_ENTRIES);
        // The vocabulary: every word in use, sorted (the empty word, which holds each
        // entry's length, is not one).
        let mut all: Vec<&[u8]> = entries
            .iter()
            .filter_map(|e| e.2.as_ref())
            .flat_map(|w| w.iter().map(|(word, _)| *word))
            .filter(|w| !w.is_empty())
            .collect();
        all.sort_unstable();
        all.dedup();
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.push(VERSION);
        out.extend_from_slice(&fingerprint(&self.words_of));
        put_bytes(&mut out, &self.root);
        put_len(&mut out, all.len());
        for w in &all {
            put_bytes(&mut out, w);
        }
        put_len(&mut out, entries.len());
        let mut block = Vec::new();
        let mut ids: Vec<(u64, u32)> = Vec::new();
        for (path, stamp, words) in &entries {
            put_bytes(&mut out, path.as_bytes());
            put_stamp(&mut out, stamp);
            let Some(words) = words else {
                out.push(0);
                continue;
            };
            out.push(1);
            ids.clear();
            let mut len = 0;
            for &(w, n) in words {
                if w.is_empty() {
                    len = n;
                } else if let Ok(k) = all.binary_search(&w) {
                    ids.push((k as u64, n));
                }
            }
            ids.sort_unstable();
            block.clear();
            put(&mut block, u64::from(len));
            put_len(&mut block, ids.len());
            let mut last = 0;
            for &(k, n) in &ids {
                put(&mut block, k - last);
                put(&mut block, u64::from(n));
                last = k;
            }
            put_bytes(&mut out, &block);
            if out.len() > MAX_BYTES {
                return None;
            }
        }
        let sum = checksum(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        Some(out)
    }
}

/// An entry as [`Terms::encode`] writes it: its path, stamp and words (`None`: refused),
/// each word with its count, and its length as the count of the empty word.
type Encoding<'a> = (&'a str, &'a Stamp, Option<Vec<(&'a [u8], u32)>>);

/// What the index's words depend on: this build's version, its secret rules (a file refused
/// or admitted under other rules is judged again) and the tokeniser (`words_of`).
/// The mutex's value, even when a thread panicked holding it.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn fingerprint(words_of: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update([0]);
    h.update(crate::trust::secrets::RULES_TOML.as_bytes());
    h.update([0]);
    h.update(words_of);
    h.finalize().into()
}

/// The index in `bytes`, when it decodes whole and is this version's, `root`'s and made with
/// `words_of` (each file's words are checked when read, [`Terms::each`]).
fn decode(
    mut bytes: Vec<u8>,
    root: &[u8],
    words_of: &[u8],
) -> Option<(Vec<u8>, Vocab, Vec<Loaded>)> {
    let (mut r, vocab) = head(&bytes, MAGIC, VERSION, &fingerprint(words_of), root)?;
    let n = r.len()?;
    let mut entries: Vec<Loaded> = Vec::with_capacity(n.min(4096));
    for _ in 0..n {
        let path = r.text()?;
        if entries.last().is_some_and(|last| last.path >= path) {
            return None;
        }
        let stamp = r.stamp()?;
        let words = match r.take(1)? {
            [0] => None,
            [1] => {
                let len = r.len()?;
                let at = r.at;
                r.take(len)?;
                Some((u32::try_from(at).ok()?, u32::try_from(len).ok()?))
            }
            _ => return None,
        };
        entries.push(Loaded { path, stamp, words });
    }
    if r.at != r.bytes.len() {
        return None;
    }
    let end = r.bytes.len();
    bytes.truncate(end);
    Some((bytes, vocab, entries))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(words: &[(&str, u32)]) -> Counted {
        Counted::Words {
            len: words.iter().map(|(_, n)| n).sum(),
            counts: words.iter().map(|(w, n)| ((*w).to_owned(), *n)).collect(),
        }
    }

    /// Every entry's words as (word, count), and its length, as the index serves them.
    type Served = (String, Option<(u32, Vec<(String, u32)>)>);

    fn served(t: &Terms) -> Vec<Served> {
        t.entries
            .iter()
            .map(|e| {
                let mut words = Vec::new();
                let len = t.each(Kept(e), |id, n| {
                    let w = t.vocab.get(id as usize).unwrap();
                    words.push((String::from_utf8(w.to_vec()).unwrap(), n));
                });
                (e.path.clone(), len.map(|l| (l, words)))
            })
            .collect()
    }

    #[test]
    fn marked_words_are_read_back_by_their_mark_alone() {
        let dir = tempfile::tempdir().unwrap();
        let root = Path::new("/repo");
        let t = Terms::open(Some(dir.path().to_owned()), root, b"w1");
        let old = Stamp::sample(1);
        let fresh = vec![
            (
                "a.rs".to_owned(),
                old,
                counted(&[
                    ("\u{1}/api/runs", 0),
                    ("\u{1}run.started", 0),
                    ("\u{2}Rollout", 0),
                    ("\u{2}advance_stage", 0),
                    ("rollout", 3),
                    ("stage", 1),
                ]),
            ),
            (
                "b.rs".to_owned(),
                old,
                counted(&[("\u{2}Only", 0), ("x1", 1)]),
            ),
            ("c.md".to_owned(), old, counted(&[("plain", 2)])),
            ("d.bin".to_owned(), old, Counted::Refused),
        ];
        std::fs::write(t.file.clone().unwrap(), t.encode(&[], &fresh).unwrap()).unwrap();
        let t = Terms::open(Some(dir.path().to_owned()), root, b"w1");
        let marked = |path: &str, mark: char| {
            let e = t.entries.iter().find(|e| e.path == path).unwrap();
            t.marked(Kept(e), mark)
        };
        assert_eq!(
            marked("a.rs", '\u{1}').unwrap(),
            ["/api/runs", "run.started"]
        );
        assert_eq!(
            marked("a.rs", '\u{2}').unwrap(),
            ["Rollout", "advance_stage"]
        );
        assert!(marked("b.rs", '\u{1}').unwrap().is_empty());
        assert_eq!(marked("b.rs", '\u{2}').unwrap(), ["Only"]);
        assert!(marked("c.md", '\u{2}').unwrap().is_empty());
        assert_eq!(marked("d.bin", '\u{1}'), None);
        // The marked words count nothing among the words.
        let e = t.entries.iter().find(|e| e.path == "a.rs").unwrap();
        assert_eq!(t.each(Kept(e), |_, _| {}), Some(4));
    }

    #[test]
    fn an_index_reads_back_as_written_and_keeps_only_the_universes_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = Path::new("/repo");
        let t = Terms::open(Some(dir.path().to_owned()), root, b"w1");
        let old = Stamp::sample(1);
        let fresh = vec![
            (
                "b.md".to_owned(),
                old,
                counted(&[("login", 2), ("上下", 1)]),
            ),
            (
                "a.md".to_owned(),
                old,
                counted(&[("lock", 1), ("login", 1)]),
            ),
            ("secret.txt".to_owned(), old, Counted::Refused),
        ];
        let bytes = t.encode(&[], &fresh).unwrap();
        let file = t.file.clone().unwrap();
        std::fs::write(&file, &bytes).unwrap();
        let t = Terms::open(Some(dir.path().to_owned()), root, b"w1");
        assert_eq!(
            served(&t),
            [
                (
                    "a.md".to_owned(),
                    Some((2, vec![("lock".to_owned(), 1), ("login".to_owned(), 1)]))
                ),
                (
                    "b.md".to_owned(),
                    Some((3, vec![("login".to_owned(), 2), ("上下".to_owned(), 1)]))
                ),
                ("secret.txt".to_owned(), None),
            ]
        );
        assert!(t.id_of("login").is_some() && t.id_of("nothing").is_none());
        // Another tokeniser, another root: not read.
        assert!(
            Terms::open(Some(dir.path().to_owned()), root, b"w2")
                .entries
                .is_empty()
        );
        assert!(
            Terms::open(Some(dir.path().to_owned()), Path::new("/other"), b"w1")
                .entries
                .is_empty()
        );
        // A file gone from the universe is dropped; one read again replaces its entry.
        t.learn("a.md", Stamp::sample(9), counted(&[("zeta", 4)]));
        t.save(&["a.md".to_owned(), "secret.txt".to_owned()])
            .unwrap();
        let t = Terms::open(Some(dir.path().to_owned()), root, b"w1");
        // Sample stamps are old: not racy.
        assert_eq!(
            served(&t),
            [
                ("a.md".to_owned(), Some((4, vec![("zeta".to_owned(), 4)]))),
                ("secret.txt".to_owned(), None),
            ]
        );
        assert_eq!(t.entries[0].stamp, Stamp::sample(9));
    }

    #[test]
    fn a_damaged_index_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let root = Path::new("/repo");
        let t = Terms::open(Some(dir.path().to_owned()), root, b"w1");
        let fresh = vec![("a.md".to_owned(), Stamp::sample(1), counted(&[("x1", 1)]))];
        let mut bytes = t.encode(&[], &fresh).unwrap();
        let file = t.file.clone().unwrap();
        for k in [0, bytes.len() / 2, bytes.len() - 1] {
            bytes[k] ^= 0x5a;
            std::fs::write(&file, &bytes).unwrap();
            assert!(
                Terms::open(Some(dir.path().to_owned()), root, b"w1")
                    .entries
                    .is_empty()
            );
            bytes[k] ^= 0x5a;
        }
        std::fs::write(&file, &bytes[..bytes.len() - 3]).unwrap();
        assert!(
            Terms::open(Some(dir.path().to_owned()), root, b"w1")
                .entries
                .is_empty()
        );
        // Disabled: nothing served, nothing written.
        let off = Terms::open(None, root, b"w1");
        assert!(!off.is_enabled() && off.still("a.md").is_none());
    }
}
