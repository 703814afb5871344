//! The related-files index (docs/budgets.md#related-files): per source file of one
//! repository, what the search for related files needs of it, so that a file whose metadata
//! did not change is not read again.
//!
//! One file a repository in the cache folder, `related-v12-<12 hex digits of the root's
//! sha256>.bin`. Per file: its path; its stamp (size, modification and change times to the
//! nanosecond, inode, device, from `lstat`); and what admission said of its text: refused
//! (binary, or a secret by content: nothing else is kept of it), or admitted with its
//! distinct words and, once it was parsed, the sha256 of the bytes parsed, their tags and
//! their outline. Words and the tags' names are ids into one sorted vocabulary, so a
//! loaded index holds each name once and the ranking reads ids. Words are kept only of a
//! file whose text passed the content scan, so the index holds no secret's value.
//!
//! A file whose stamp differs (or who is no regular file, or over the size cap) is read
//! again; a stamp the file's change may not have moved yet (modified less than [`RACY`](crate::util::stamp::RACY) before
//! the run started) is not kept. The index is a binary file with a checksum, streamed to a
//! temporary file as it is encoded and renamed over the last when anything changed; one that does not decode, or was written by another
//! version of curate or its secret rules, is ignored and written anew. Never a panic.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use super::codec::{Checksum, Reader, head, put, put_bytes, put_len, put_stamp};
use crate::model::Range;
use crate::outline::{Def, Named, Symbols, Tags, Vocab};
use crate::util::cache::{repo_file, written_repo_file};
pub use crate::util::stamp::{Base, Stamp};

/// The format, in the file name and the header.
const VERSION: u8 = 12;
const MAGIC: &[u8] = b"curate related index\n";
/// At most this many files an index, this many bytes.
const MAX_ENTRIES: usize = 2_000_000;
const MAX_BYTES: usize = 512 * 1024 * 1024;

/// What the index keeps of one file.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub path: String,
    pub stamp: Stamp,
    pub seen: Seen,
}

/// What admission said of a file's text, and what the search needs of it.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    /// Binary, or a secret by content: never searched.
    Refused,
    Admitted {
        words: Words,
        parsed: Parsed,
    },
}

/// A file's distinct words: ids into the index's vocabulary as the loaded file holds them
/// (`len` bytes at `at`: their count, then each id's difference from the one before; read
/// only when asked, [`Index::word_ids`]), or as read (each after its length in one byte, see
/// [`Words::read`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Words {
    Packed { at: u32, len: u32 },
    Read(Vec<u8>),
}

impl Words {
    /// The words as read, in one buffer (words are at most [`super::words::MAX_WORD`]
    /// bytes).
    #[must_use]
    pub fn read(words: &[&[u8]]) -> Words {
        let mut out = Vec::with_capacity(words.iter().map(|w| w.len() + 1).sum());
        for w in words {
            out.push(w.len().min(255) as u8);
            out.extend_from_slice(&w[..w.len().min(255)]);
        }
        Words::Read(out)
    }
}

/// The words of a [`Words::Read`] buffer.
fn each_read(mut buf: &[u8]) -> impl Iterator<Item = &[u8]> {
    std::iter::from_fn(move || {
        let (&n, rest) = buf.split_first()?;
        let (w, rest) = rest.split_at_checked(usize::from(n))?;
        buf = rest;
        Some(w)
    })
}

/// A file's tags, once it was parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    Not,
    /// Parsed, no tags (an empty file, mostly syntax errors).
    Nothing,
    /// The sha256 (hex) of the bytes parsed, their tags and outline encoded.
    Tags {
        sha: String,
        tags: Encoded,
    },
}

/// A file's tags and outline, encoded: definitions (name, line), references (name, count)
/// and the outline's line ranges (none for no outline).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Encoded {
    /// As loaded: each name an id into the index's vocabulary.
    Ids(Vec<u8>),
    /// As parsed in this run ([`encode_tags`]): each name its text.
    Text(Vec<u8>),
}

/// An index as loaded, for lookups.
#[derive(Debug, Default)]
struct Loaded {
    /// The file's bytes (its checksum off), where the entries' words lie.
    body: Vec<u8>,
    /// The words and names the entries use.
    vocab: Vocab,
    /// Sorted by path, paths distinct.
    entries: Vec<Entry>,
}

/// The index of one repository.
#[derive(Debug)]
pub struct Index {
    file: Option<PathBuf>,
    root: Vec<u8>,
    loaded: Loaded,
    next: Mutex<Option<Vec<Keep>>>,
}

/// What a run keeps of one file for the next: an entry as loaded (its place), or a new one.
#[derive(Debug)]
pub enum Keep {
    Loaded(u32),
    Fresh(Box<Entry>),
}

impl From<Entry> for Keep {
    fn from(e: Entry) -> Keep {
        Keep::Fresh(Box::new(e))
    }
}

impl Index {
    /// The index of the repository at `root` (canonical) in the cache folder `dir`, loaded
    /// (`None`: no index, nothing kept).
    #[must_use]
    pub fn open(dir: Option<PathBuf>, root: &Path) -> Index {
        let root = root.to_string_lossy().into_owned().into_bytes();
        let (file, bytes) = repo_file(dir, "related-v", VERSION, &root, MAX_BYTES);
        let loaded = bytes
            .and_then(|bytes| decode(bytes, &root))
            .unwrap_or_default();
        Index {
            file,
            root,
            loaded,
            next: Mutex::new(None),
        }
    }

    /// True when files are looked up and kept.
    #[must_use]
    pub fn is_enabled(&self) -> bool {
        self.file.is_some()
    }

    /// The entry kept for `path`.
    #[must_use]
    pub fn get(&self, path: &str) -> Option<&Entry> {
        self.loaded.entries.get(self.place(path)?)
    }

    /// Where the entry kept for `path` is among the loaded ones.
    fn place(&self, path: &str) -> Option<usize> {
        self.loaded
            .entries
            .binary_search_by(|x| x.path.as_str().cmp(path))
            .ok()
    }

    /// [`Index::get`] of each of `paths`, with the entry's place (for [`Keep::Loaded`]),
    /// found in one pass when they are sorted (as a walk gives them), else each by search.
    #[must_use]
    pub fn get_each<S: AsRef<str>>(&self, paths: &[S]) -> Vec<Option<(u32, &Entry)>> {
        let e = &self.loaded.entries;
        let placed = |k: usize| Some((u32::try_from(k).ok()?, e.get(k)?));
        let mut at = 0;
        let mut last: Option<&str> = None;
        paths
            .iter()
            .map(|p| {
                let p = p.as_ref();
                if last.is_some_and(|l| l >= p) {
                    return self.place(p).and_then(placed);
                }
                last = Some(p);
                while e.get(at).is_some_and(|x| x.path.as_str() < p) {
                    at += 1;
                }
                placed(at).filter(|(_, x)| x.path == p)
            })
            .collect()
    }

    /// The vocabulary id of `word`, if any file kept holds it.
    #[must_use]
    pub fn id_of(&self, word: &[u8]) -> Option<u32> {
        self.loaded.vocab.find(word)
    }

    /// The loaded vocabulary: the ids of [`Index::named`]'s names.
    #[must_use]
    pub fn vocab(&self) -> &Vocab {
        &self.loaded.vocab
    }

    /// The ids of a loaded file's words, ascending, into `out` (cleared first); `None` when
    /// they are not a file's words as loaded (or do not decode).
    pub fn word_ids(&self, words: &Words, out: &mut Vec<u32>) -> Option<()> {
        let Words::Packed { at, len } = *words else {
            return None;
        };
        unpack_in(&self.loaded.body, (at, len), self.loaded.vocab.len(), out)
    }

    /// Loaded tags with their names as ids of [`Index::vocab`], and their outline; `None`
    /// when they do not decode (or were parsed in this run).
    #[must_use]
    pub fn named(&self, tags: &Encoded) -> Option<(Named, Option<Vec<Range>>)> {
        let Encoded::Ids(bytes) = tags else {
            return None;
        };
        let d = decode_ids(bytes, self.loaded.vocab.len())?;
        // Written from names sorted and distinct, through an order-keeping vocabulary.
        if !d.refs.windows(2).all(|w| w[0].0 < w[1].0) {
            return None;
        }
        let outline = (!d.outline.is_empty()).then_some(d.outline);
        Some((
            Named {
                defs: d.defs,
                refs: d.refs,
            },
            outline,
        ))
    }

    /// Tags with their names as text; `None` when they do not decode.
    #[must_use]
    pub fn tags(&self, tags: &Encoded) -> Option<Tags> {
        let vocab = &self.loaded.vocab;
        let d = match tags {
            Encoded::Ids(bytes) => {
                let d = decode_ids(bytes, vocab.len())?;
                let name = |k: u32| vocab.get(k as usize);
                Decoded {
                    defs: names_of(&d.defs, name)?,
                    refs: names_of(&d.refs, name)?,
                    outline: d.outline,
                }
            }
            Encoded::Text(bytes) => decode_text(bytes)?,
        };
        let text = |w: &[u8]| std::str::from_utf8(w).ok().map(str::to_owned);
        let defs = d
            .defs
            .iter()
            .map(|&(w, line)| {
                Some(Def {
                    name: text(w)?,
                    kind: "definition",
                    line,
                })
            })
            .collect::<Option<Vec<Def>>>()?;
        let refs = d
            .refs
            .iter()
            .map(|&(w, _)| text(w))
            .collect::<Option<Vec<String>>>()?;
        let ref_counts = d.refs.iter().map(|&(_, c)| c).collect();
        Some(Tags {
            defs,
            refs,
            ref_counts,
        })
    }

    /// Sets what [`Index::save`] writes: the entries of this run (any order), new ones
    /// whose stamp is racy left out.
    pub fn keep(&self, entries: impl IntoIterator<Item = Keep>, started: SystemTime) {
        fn path<'a>(loaded: &'a [Entry], k: &'a Keep) -> &'a str {
            match k {
                Keep::Loaded(at) => loaded[*at as usize].path.as_str(),
                Keep::Fresh(e) => e.path.as_str(),
            }
        }
        let loaded = &self.loaded.entries;
        let mut entries: Vec<Keep> = entries
            .into_iter()
            .filter(|k| match k {
                Keep::Loaded(at) => (*at as usize) < loaded.len(),
                Keep::Fresh(e) => !e.stamp.is_racy(started) || self.get(&e.path) == Some(&**e),
            })
            .collect();
        // By path; two loaded entries by their places, which sort as their paths do (the
        // loaded ones are sorted by path, paths distinct), with no text compared.
        let order = |a: &Keep, b: &Keep| match (a, b) {
            (Keep::Loaded(x), Keep::Loaded(y)) => x.cmp(y),
            _ => path(loaded, a).cmp(path(loaded, b)),
        };
        entries.sort_by(order);
        entries.dedup_by(|a, b| order(a, b).is_eq());
        entries.truncate(MAX_ENTRIES);
        *self
            .next
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(entries);
    }

    /// The entries [`Index::keep`] set, when they differ from those loaded (`None`: every
    /// entry as loaded, or nothing set).
    fn take_changed(&self) -> Option<Vec<Keep>> {
        let next = self
            .next
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()?;
        let loaded = &self.loaded.entries;
        // Every entry as loaded (distinct places: the paths are).
        let same = next.len() == loaded.len() && next.iter().all(|k| matches!(k, Keep::Loaded(_)));
        (!same).then_some(next)
    }

    /// The entries of `next`, those loaded taken from their places.
    fn entries_of<'a>(&'a self, next: &'a [Keep]) -> Vec<&'a Entry> {
        let loaded = &self.loaded.entries;
        next.iter()
            .map(|k| match k {
                Keep::Loaded(at) => &loaded[*at as usize],
                Keep::Fresh(e) => &**e,
            })
            .collect()
    }

    /// Writes the entries kept, atomically, when they differ from those loaded, and keeps at
    /// most 16 indexes in the folder. An index is an optimisation: callers may
    /// ignore the error.
    pub fn save(&self) -> crate::error::Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let Some(next) = self.take_changed() else {
            return Ok(());
        };
        let next = self.entries_of(&next);
        // Streamed to the file as it is encoded: an index is never whole in memory.
        let mut too_large = false;
        let written = crate::util::atomic::write_with_unsynced(file, |w| {
            let loaded = (&self.loaded.vocab, self.loaded.body.as_slice());
            encode_to(&self.root, loaded, &next, w).map_err(|e| {
                too_large = matches!(e, Spill::TooLarge);
                let source = match e {
                    Spill::TooLarge => std::io::Error::other("over the index's size cap"),
                    Spill::Io(e) => e,
                };
                crate::error::Error::Write {
                    path: file.clone(),
                    source,
                }
            })
        });
        match written {
            // Not kept: the next run reads the files again.
            Err(_) if too_large => return Ok(()),
            r => r?,
        }
        if let Some(dir) = file.parent() {
            written_repo_file(dir, "related-v", VERSION, &self.root);
        }
        Ok(())
    }

    /// [`Index::save`] for a process that stays (`curate watch`): the entries kept, encoded
    /// in memory, written as `save` writes them (a failed write changes nothing else), and
    /// decoded from the same bytes into the index its next run starts from, which no other
    /// process's file can replace. `None`: nothing changed, this index stands. An index over
    /// the size cap is followed by an empty one (every file read again).
    #[must_use]
    pub fn save_next(&self) -> Option<Index> {
        let file = self.file.as_ref()?;
        let next = self.take_changed()?;
        let entries = self.entries_of(&next);
        let mut bytes = Vec::new();
        let loaded = (&self.loaded.vocab, self.loaded.body.as_slice());
        let encoded = encode_to(&self.root, loaded, &entries, &mut bytes).is_ok();
        let loaded = if encoded {
            if crate::util::atomic::write_unsynced(file, &bytes).is_ok()
                && let Some(dir) = file.parent()
            {
                written_repo_file(dir, "related-v", VERSION, &self.root);
            }
            decode(bytes, &self.root).unwrap_or_default()
        } else {
            Loaded::default()
        };
        Some(Index {
            file: Some(file.clone()),
            root: self.root.clone(),
            loaded,
            next: Mutex::new(None),
        })
    }
}

/// What the index's words depend on: this build's version, its secret rules (a file refused
/// or admitted by other rules is judged again) and the word lengths kept.
fn fingerprint() -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update([0]);
    h.update(crate::trust::secrets::RULES_TOML.as_bytes());
    h.update([0]);
    h.update(format!("{}-{}", super::words::MIN_WORD, super::words::MAX_WORD).as_bytes());
    h.finalize().into()
}

/// Tags and the outline of the same parse, encoded with their names as text (a decoded
/// definition's kind reads `definition`: the ranking reads names only).
#[must_use]
pub fn encode_tags(t: &Tags, outline: Option<&[Range]>) -> Encoded {
    let defs: Vec<(&[u8], u64)> = t.defs.iter().map(|d| (d.name.as_bytes(), d.line)).collect();
    let refs: Vec<(&[u8], u32)> = t
        .refs
        .iter()
        .enumerate()
        .map(|(k, r)| (r.as_bytes(), t.ref_counts.get(k).copied().unwrap_or(1)))
        .collect();
    let d = Decoded {
        defs,
        refs,
        outline: outline.unwrap_or_default().to_vec(),
    };
    Encoded::Text(put_tags(&d, put_bytes))
}

/// Tags encoded with their names as text ([`encode_tags`]), their names numbered in
/// `symbols`, and their outline; `None` when they do not decode or are not text.
#[must_use]
pub fn number(tags: &Encoded, symbols: &mut Symbols<'_>) -> Option<(Named, Option<Vec<Range>>)> {
    let Encoded::Text(bytes) = tags else {
        return None;
    };
    let d = decode_text(bytes)?;
    let named = symbols.numbered(d.defs.iter().copied(), d.refs.iter().copied());
    Some((named, (!d.outline.is_empty()).then_some(d.outline)))
}

/// Tags and an outline as laid out in an [`Encoded`], names of type `N`.
struct Decoded<N> {
    defs: Vec<(N, u64)>,
    refs: Vec<(N, u32)>,
    outline: Vec<Range>,
}

/// The bytes of `d`, each name written by `name`.
fn put_tags<N: Copy>(d: &Decoded<N>, mut name: impl FnMut(&mut Vec<u8>, N)) -> Vec<u8> {
    let mut out = Vec::new();
    put_len(&mut out, d.defs.len());
    for &(n, line) in &d.defs {
        name(&mut out, n);
        put(&mut out, line);
    }
    put_len(&mut out, d.refs.len());
    for &(n, count) in &d.refs {
        name(&mut out, n);
        put(&mut out, u64::from(count));
    }
    put_len(&mut out, d.outline.len());
    for [a, b] in &d.outline {
        put(&mut out, *a);
        put(&mut out, *b);
    }
    out
}

/// At most this many items are made room for before they are read: a count is bounded by
/// the bytes left, not by what its items take in memory.
const PREALLOCATED: usize = 4096;

/// What [`put_tags`] wrote, each name read by `name`; `None` unless all of `bytes` decodes.
fn read_tags<'a, N>(
    bytes: &'a [u8],
    mut name: impl FnMut(&mut Reader<'a>) -> Option<N>,
) -> Option<Decoded<N>> {
    let mut r = Reader { bytes, at: 0 };
    let n = r.len()?;
    let mut defs = Vec::with_capacity(n.min(PREALLOCATED));
    for _ in 0..n {
        defs.push((name(&mut r)?, r.int()?));
    }
    let n = r.len()?;
    let mut refs = Vec::with_capacity(n.min(PREALLOCATED));
    for _ in 0..n {
        refs.push((name(&mut r)?, u32::try_from(r.int()?).ok()?));
    }
    let n = r.len()?;
    let mut outline = Vec::with_capacity(n.min(PREALLOCATED));
    for _ in 0..n {
        outline.push([r.int()?, r.int()?]);
    }
    (r.at == bytes.len()).then_some(Decoded {
        defs,
        refs,
        outline,
    })
}

/// Tags whose names are ids below `words`.
fn decode_ids(bytes: &[u8], words: usize) -> Option<Decoded<u32>> {
    read_tags(bytes, |r| {
        let k = usize::try_from(r.int()?).ok()?;
        if k < words {
            u32::try_from(k).ok()
        } else {
            None
        }
    })
}

/// Tags whose names are text.
fn decode_text(bytes: &[u8]) -> Option<Decoded<&[u8]>> {
    read_tags(bytes, Reader::bytes_)
}

/// `items` with each name looked up by `name`; `None` when one is not found.
fn names_of<'v, T: Copy>(
    items: &[(u32, T)],
    name: impl Fn(u32) -> Option<&'v [u8]>,
) -> Option<Vec<(&'v [u8], T)>> {
    items.iter().map(|&(k, t)| Some((name(k)?, t))).collect()
}

/// The index file's bytes ([`encode_to`] into memory).
#[cfg(test)]
fn encode(root: &[u8], vocab: &Vocab, entries: &[Entry]) -> Vec<u8> {
    encode_loaded(root, (vocab, &[]), entries)
}

/// [`encode`] of entries loaded from `body` ([`Words::Packed`]).
#[cfg(test)]
fn encode_loaded(root: &[u8], loaded: (&Vocab, &[u8]), entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::new();
    let entries: Vec<&Entry> = entries.iter().collect();
    encode_to(root, loaded, &entries, &mut out).expect("an index in memory");
    out
}

/// Why [`encode_to`] stopped.
#[derive(Debug)]
enum Spill {
    /// Over [`MAX_BYTES`].
    TooLarge,
    Io(std::io::Error),
}

/// Where [`encode_to`] writes: pieces built in `buf`, passed on to `out` as it fills, summed
/// and counted on the way.
struct Sink<'w> {
    out: &'w mut dyn std::io::Write,
    buf: Vec<u8>,
    sum: Checksum,
}

impl Sink<'_> {
    const PIECE: usize = 64 * 1024;

    /// Passes `buf` on once it holds a piece (`force`: whatever it holds).
    fn spill(&mut self, force: bool) -> Result<(), Spill> {
        if self.buf.len() < Self::PIECE && !force {
            return Ok(());
        }
        self.sum.feed(&self.buf);
        if self.sum.len > MAX_BYTES as u64 {
            return Err(Spill::TooLarge);
        }
        self.out.write_all(&self.buf).map_err(Spill::Io)?;
        self.buf.clear();
        Ok(())
    }
}

/// Writes the index file to `out`: header, vocabulary (the words and names the entries
/// use, sorted), entries, checksum. `vocab` is the one the entries' ids are of. What an
/// entry's tags are is decoded twice, once for its names, once to write it, so that no more
/// than one entry's is in memory at once.
fn encode_to(
    root: &[u8],
    (vocab, body): (&Vocab, &[u8]),
    entries: &[&Entry],
    out: &mut dyn std::io::Write,
) -> Result<(), Spill> {
    // A loaded entry's word ids (none when they do not decode: the file is searched by its
    // other words no more, until it changes).
    let packed = |at: u32, len: u32, out: &mut Vec<u32>| {
        if unpack_in(body, (at, len), vocab.len(), out).is_none() {
            out.clear();
        }
    };
    let mut scratch: Vec<u32> = Vec::new();
    // The words and names in use, by hash first (most recur in many files), then sorted.
    let mut old_used = vec![false; vocab.len()];
    let mut read: HashSet<&[u8]> = HashSet::new();
    let mut mark = |k: u32| {
        if let Some(u) = old_used.get_mut(k as usize) {
            *u = true;
        }
    };
    for e in entries {
        let Seen::Admitted { words, parsed } = &e.seen else {
            continue;
        };
        match words {
            Words::Packed { at, len } => {
                packed(*at, *len, &mut scratch);
                scratch.iter().copied().for_each(&mut mark);
            }
            Words::Read(buf) => read.extend(each_read(buf)),
        }
        match tagged(parsed, vocab) {
            Some(Tagged::Ids(d)) => {
                d.defs.iter().map(|&(k, _)| k).for_each(&mut mark);
                d.refs.iter().map(|&(k, _)| k).for_each(&mut mark);
            }
            Some(Tagged::Text(d)) => {
                read.extend(d.defs.iter().map(|&(w, _)| w));
                read.extend(d.refs.iter().map(|&(w, _)| w));
            }
            None => {}
        }
    }
    read.extend(
        vocab
            .iter()
            .zip(&old_used)
            .filter(|(_, u)| **u)
            .map(|(w, _)| w),
    );
    let mut words: Vec<&[u8]> = read.into_iter().collect();
    words.sort_unstable();
    let new_id: HashMap<&[u8], u64> = words
        .iter()
        .enumerate()
        .map(|(k, w)| (*w, k as u64))
        .collect();
    let id = |w: &[u8]| new_id.get(w).copied().unwrap_or(0);
    // An old id's new one (unused ones are never asked).
    let remap: Vec<u64> = vocab
        .iter()
        .zip(&old_used)
        .map(|(w, u)| if *u { id(w) } else { 0 })
        .collect();
    let old = |k: u32| remap.get(k as usize).copied().unwrap_or(0);
    let mut s = Sink {
        out,
        buf: Vec::with_capacity(Sink::PIECE + 4096),
        sum: Checksum::new(),
    };
    s.buf.extend_from_slice(MAGIC);
    s.buf.push(VERSION);
    s.buf.extend_from_slice(&fingerprint());
    put_bytes(&mut s.buf, root);
    put_len(&mut s.buf, words.len());
    for w in &words {
        put_bytes(&mut s.buf, w);
        s.spill(false)?;
    }
    put_len(&mut s.buf, entries.len());
    let mut ids: Vec<u64> = Vec::new();
    let mut block: Vec<u8> = Vec::new();
    for e in entries {
        let out = &mut s.buf;
        put_bytes(out, e.path.as_bytes());
        put_stamp(out, &e.stamp);
        match &e.seen {
            Seen::Refused => out.push(0),
            Seen::Admitted { words: w, parsed } => {
                out.push(1);
                ids.clear();
                match w {
                    Words::Packed { at, len } => {
                        packed(*at, *len, &mut scratch);
                        ids.extend(scratch.iter().map(|&k| old(k)));
                    }
                    Words::Read(read) => ids.extend(each_read(read).map(id)),
                }
                ids.sort_unstable();
                ids.dedup();
                block.clear();
                put_len(&mut block, ids.len());
                let mut last = 0;
                for &k in &ids {
                    put(&mut block, k - last);
                    last = k;
                }
                put_bytes(out, &block);
                match (parsed, tagged(parsed, vocab)) {
                    (Parsed::Nothing, _) => out.push(1),
                    (Parsed::Tags { sha, .. }, Some(t)) => {
                        let tags = match t {
                            Tagged::Ids(d) => put_tags(&d, |out, k| put(out, old(k))),
                            Tagged::Text(d) => put_tags(&d, |out, w| put(out, id(w))),
                        };
                        out.push(2);
                        put_bytes(out, sha.as_bytes());
                        put_bytes(out, &tags);
                    }
                    // Not parsed, or tags that do not decode: parsed again when needed.
                    _ => out.push(0),
                }
            }
        }
        s.spill(false)?;
    }
    s.spill(true)?;
    let sum = std::mem::take(&mut s.sum).finish();
    s.out.write_all(&sum.to_le_bytes()).map_err(Spill::Io)
}

/// What an entry's tags are, decoded (a loaded entry's names by id).
fn tagged<'a>(parsed: &'a Parsed, vocab: &Vocab) -> Option<Tagged<'a>> {
    match parsed {
        Parsed::Tags { tags, .. } => match tags {
            Encoded::Ids(b) => decode_ids(b, vocab.len()).map(Tagged::Ids),
            Encoded::Text(b) => decode_text(b).map(Tagged::Text),
        },
        _ => None,
    }
}

/// An entry's tags, decoded for [`encode_to`].
enum Tagged<'a> {
    Ids(Decoded<u32>),
    Text(Decoded<&'a [u8]>),
}

/// [`unpack`] of the `len` bytes at `at` of `body` (a [`Words::Packed`]'s).
fn unpack_in(body: &[u8], (at, len): (u32, u32), words: usize, out: &mut Vec<u32>) -> Option<()> {
    let block = body.get(at as usize..(at as usize).checked_add(len as usize)?)?;
    unpack(block, words, out)
}

/// The ids a packed words block holds ([`Words::Packed`]): a count, then differences, each
/// id below `words` and above the one before; into `out` (cleared first).
fn unpack(block: &[u8], words: usize, out: &mut Vec<u32>) -> Option<()> {
    out.clear();
    let mut r = Reader {
        bytes: block,
        at: 0,
    };
    let count = r.len()?;
    out.reserve(count);
    let mut last: u64 = 0;
    for k in 0..count {
        let delta = r.int()?;
        if k > 0 && delta == 0 {
            return None;
        }
        last = last.checked_add(delta)?;
        if last >= words as u64 {
            return None;
        }
        out.push(u32::try_from(last).ok()?);
    }
    (r.at == block.len()).then_some(())
}

/// The index in `bytes`, when it decodes whole, is this version's and is `root`'s (each
/// file's words are checked when read, [`Index::word_ids`]).
fn decode(mut bytes: Vec<u8>, root: &[u8]) -> Option<Loaded> {
    let (mut r, vocab) = head(&bytes, MAGIC, VERSION, &fingerprint(), root)?;
    let n = r.len()?;
    let mut entries: Vec<Entry> = Vec::with_capacity(n.min(PREALLOCATED));
    for _ in 0..n {
        let path = r.text()?;
        if entries.last().is_some_and(|last| last.path >= path) {
            return None;
        }
        let stamp = r.stamp()?;
        let seen = match r.take(1)? {
            [0] => Seen::Refused,
            [1] => {
                let len = r.len()?;
                let at = r.at;
                r.take(len)?;
                let words = Words::Packed {
                    at: u32::try_from(at).ok()?,
                    len: u32::try_from(len).ok()?,
                };
                let parsed = match r.take(1)? {
                    [0] => Parsed::Not,
                    [1] => Parsed::Nothing,
                    [2] => Parsed::Tags {
                        sha: r.text()?,
                        tags: Encoded::Ids(r.bytes_()?.to_vec()),
                    },
                    _ => return None,
                };
                Seen::Admitted { words, parsed }
            }
            _ => return None,
        };
        entries.push(Entry { path, stamp, seen });
    }
    if r.at != r.bytes.len() {
        return None;
    }
    let end = r.bytes.len();
    bytes.truncate(end);
    Some(Loaded {
        body: bytes,
        vocab,
        entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::related::codec::{checksum, unzigzag, zigzag};

    fn entries() -> Vec<Entry> {
        let tags = Tags {
            defs: vec![Def {
                name: "login".into(),
                kind: "definition",
                line: 3,
            }],
            refs: vec!["Session".into(), "hash".into()],
            ref_counts: vec![2, 1],
        };
        vec![
            Entry {
                path: "a.ts".into(),
                stamp: Stamp::sample(1),
                seen: Seen::Refused,
            },
            Entry {
                path: "b.ts".into(),
                stamp: Stamp::sample(2),
                seen: Seen::Admitted {
                    words: Words::read(&[b"Session", b"login"]),
                    parsed: Parsed::Tags {
                        sha: "ab".repeat(32),
                        tags: encode_tags(&tags, Some(&[[1, 4], [9, 9]])),
                    },
                },
            },
            Entry {
                path: "c.ts".into(),
                stamp: Stamp::sample(3),
                seen: Seen::Admitted {
                    words: Words::read(&[b"login", b"zeta"]),
                    parsed: Parsed::Nothing,
                },
            },
        ]
    }

    #[test]
    fn an_index_reads_back_as_written_its_words_in_one_vocabulary() {
        let bytes = encode(b"/repo", &Vocab::default(), &entries());
        let loaded = decode(bytes.clone(), b"/repo").unwrap();
        // The words and the tags' names, once each.
        assert_eq!(
            loaded.vocab.iter().collect::<Vec<_>>(),
            [&b"Session"[..], b"hash", b"login", b"zeta"]
        );
        assert_eq!(loaded.entries[0], entries()[0]);
        let Seen::Admitted {
            words,
            parsed: Parsed::Nothing,
        } = &loaded.entries[2].seen
        else {
            panic!("{:?}", loaded.entries[2]);
        };
        let words = words.clone();
        let index = Index {
            file: None,
            root: b"/repo".to_vec(),
            loaded,
            next: Mutex::new(None),
        };
        let Seen::Admitted {
            parsed: Parsed::Tags { tags, .. },
            ..
        } = &index.loaded.entries[1].seen
        else {
            panic!("{:?}", index.loaded.entries[1]);
        };
        let mut ids = Vec::new();
        assert_eq!(index.word_ids(&words, &mut ids), Some(()));
        assert_eq!(ids, [2, 3]);
        let (named, outline) = index.named(tags).unwrap();
        assert_eq!(named.defs, [(2, 3)]);
        assert_eq!(named.refs, [(0, 2), (1, 1)]);
        assert_eq!(outline, Some(vec![[1, 4], [9, 9]]));
        let text = index.tags(tags).unwrap();
        assert_eq!(text.defs[0].name, "login");
        assert_eq!(text.ref_count("Session"), 2);
        assert_eq!(text.ref_count("hash"), 1);
        // Written again from the ids, the same bytes.
        let loaded = &index.loaded;
        assert_eq!(
            encode_loaded(b"/repo", (&loaded.vocab, &loaded.body), &loaded.entries),
            bytes
        );
    }

    #[test]
    fn names_that_are_no_word_are_kept_and_ids_past_the_vocabulary_are_refused() {
        // A name longer than any word kept, and one with a byte no identifier has.
        let long = "x".repeat(super::super::words::MAX_WORD + 6);
        let tags = Tags {
            defs: vec![Def {
                name: long.clone(),
                kind: "function",
                line: 2,
            }],
            refs: vec!["save!".into()],
            ref_counts: vec![4],
        };
        let entry = Entry {
            path: "a.rb".into(),
            stamp: Stamp::sample(9),
            seen: Seen::Admitted {
                words: Words::read(&[b"save"]),
                parsed: Parsed::Tags {
                    sha: "cd".repeat(32),
                    tags: encode_tags(&tags, None),
                },
            },
        };
        let bytes = encode(b"/repo", &Vocab::default(), std::slice::from_ref(&entry));
        let index = Index {
            file: None,
            root: b"/repo".to_vec(),
            loaded: decode(bytes.clone(), b"/repo").unwrap(),
            next: Mutex::new(None),
        };
        let Seen::Admitted {
            parsed: Parsed::Tags { tags: kept, .. },
            ..
        } = &index.loaded.entries[0].seen
        else {
            panic!("{:?}", index.loaded.entries[0]);
        };
        let back = index.tags(kept).unwrap();
        assert_eq!(back.defs[0].name, long);
        assert_eq!(back.defs[0].line, 2);
        assert_eq!(back.ref_count("save!"), 4);
        let (named, outline) = index.named(kept).unwrap();
        assert_eq!(outline, None);
        assert_eq!(
            index.vocab().get(named.defs[0].0 as usize),
            Some(long.as_bytes())
        );
        // Tags naming an id the vocabulary does not have do not decode.
        let vocab = index.vocab().len() as u64;
        let d = Decoded {
            defs: vec![(vocab, 1)],
            refs: vec![],
            outline: vec![],
        };
        let past = Encoded::Ids(put_tags(&d, put));
        assert!(index.named(&past).is_none());
        assert!(index.tags(&past).is_none());
        // Nor do references out of order (ids sort as the names they stand for).
        let d = Decoded {
            defs: vec![],
            refs: vec![(1, 1), (0, 1)],
            outline: vec![],
        };
        assert!(index.named(&Encoded::Ids(put_tags(&d, put))).is_none());
    }

    #[test]
    fn a_damaged_foreign_or_other_repositorys_index_is_not_read() {
        let bytes = encode(b"/repo", &Vocab::default(), &entries());
        assert!(decode(bytes.clone(), b"/other").is_none());
        for cut in [0, 1, 8, bytes.len() / 2, bytes.len() - 1] {
            assert!(
                decode(bytes[..cut].to_vec(), b"/repo").is_none(),
                "cut at {cut}"
            );
        }
        for at in [
            0,
            MAGIC.len(),
            MAGIC.len() + 1,
            bytes.len() / 2,
            bytes.len() - 9,
        ] {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x40;
            assert!(decode(flipped, b"/repo").is_none(), "flipped at {at}");
        }
        // A well-formed index of another version (checksum right, fingerprint not).
        let mut other = bytes[..bytes.len() - 8].to_vec();
        other[MAGIC.len() + 1] ^= 1;
        let sum = checksum(&other);
        other.extend_from_slice(&sum.to_le_bytes());
        assert!(decode(other, b"/repo").is_none());
    }

    #[test]
    fn saving_removes_this_repositorys_index_of_an_older_version_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = Path::new("/repo");
        let name = crate::util::digest::hex12(b"/repo");
        let old = dir
            .path()
            .join(format!("related-v{}-{name}.bin", VERSION - 1));
        let other = dir
            .path()
            .join(format!("related-v{}-0123456789ab.bin", VERSION - 1));
        std::fs::write(&old, b"old").unwrap();
        std::fs::write(&other, b"other").unwrap();
        let index = Index::open(Some(dir.path().to_path_buf()), root);
        index.keep(entries().into_iter().map(Keep::from), SystemTime::now());
        index.save().unwrap();
        assert!(!old.exists());
        assert!(other.exists());
        let kept = dir.path().join(format!("related-v{VERSION}-{name}.bin"));
        assert!(decode(std::fs::read(kept).unwrap(), b"/repo").is_some());
    }

    #[test]
    fn each_path_finds_its_entry_sorted_or_not() {
        let bytes = encode(b"/repo", &Vocab::default(), &entries());
        let index = Index {
            file: None,
            root: b"/repo".to_vec(),
            loaded: decode(bytes.clone(), b"/repo").unwrap(),
            next: Mutex::new(None),
        };
        let found = |paths: &[&str]| -> Vec<Option<String>> {
            index
                .get_each(paths)
                .into_iter()
                .map(|e| e.map(|(_, e)| e.path.clone()))
                .collect()
        };
        let some = |p: &str| Some(p.to_owned());
        assert_eq!(
            found(&["a.ts", "a.tsx", "c.ts", "d.ts"]),
            [some("a.ts"), None, some("c.ts"), None]
        );
        assert_eq!(
            found(&["c.ts", "a.ts", "b.ts", "b.ts", "0"]),
            [some("c.ts"), some("a.ts"), some("b.ts"), some("b.ts"), None]
        );
        for p in ["a.ts", "b.ts", "c.ts", "x"] {
            assert_eq!(found(&[p])[0], index.get(p).map(|e| e.path.clone()));
        }
    }

    #[test]
    fn a_checksum_fed_in_pieces_is_the_checksum_of_the_whole() {
        let bytes: Vec<u8> = (0..1000u32).map(|k| (k * 7 + k / 13) as u8).collect();
        let whole = checksum(&bytes);
        for cuts in [
            vec![1, 2, 3],
            vec![7, 8, 9, 500],
            vec![0, 0, 999],
            vec![13; 70],
        ] {
            let mut sum = Checksum::new();
            let mut rest = &bytes[..];
            for n in cuts {
                let (piece, after) = rest.split_at(n.min(rest.len()));
                sum.feed(piece);
                rest = after;
            }
            sum.feed(rest);
            assert_eq!(sum.finish(), whole);
        }
        // Its length counts: the same words, one byte more, sum differently.
        assert_ne!(checksum(&bytes[..999]), checksum(&bytes));
        assert_ne!(checksum(&[]), checksum(&[0]));
    }

    #[test]
    fn an_index_larger_than_a_piece_is_streamed_to_the_file_as_encoded() {
        let dir = tempfile::tempdir().unwrap();
        let root = Path::new("/repo");
        let words: Vec<Vec<u8>> = (0..40)
            .map(|k| format!("word{k:02}").into_bytes())
            .collect();
        let many: Vec<Entry> = (0..3000)
            .map(|k| {
                let of: Vec<&[u8]> = words.iter().skip(k % 7).map(Vec::as_slice).collect();
                Entry {
                    path: format!("src/file{k:05}.rs"),
                    stamp: Stamp::sample(k as u64),
                    seen: Seen::Admitted {
                        words: Words::read(&of),
                        parsed: Parsed::Not,
                    },
                }
            })
            .collect();
        let index = Index::open(Some(dir.path().to_path_buf()), root);
        index.keep(many.iter().cloned().map(Keep::from), SystemTime::now());
        index.save().unwrap();
        let name = crate::util::digest::hex12(b"/repo");
        let file = dir.path().join(format!("related-v{VERSION}-{name}.bin"));
        let written = std::fs::read(file).unwrap();
        assert!(written.len() > 2 * Sink::PIECE, "{} bytes", written.len());
        assert_eq!(written, encode(b"/repo", &Vocab::default(), &many));
        let loaded = decode(written.clone(), b"/repo").unwrap();
        assert_eq!(loaded.entries.len(), 3000);
        assert_eq!(loaded.vocab.len(), 40);
        // Nothing but the index is left in the folder.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// An index of `/repo` in a new folder, the three [`entries`] kept (not yet saved), and
    /// its file's path.
    fn filled_index() -> (tempfile::TempDir, std::path::PathBuf, Index) {
        let dir = tempfile::tempdir().unwrap();
        let name = crate::util::digest::hex12(b"/repo");
        let file = dir.path().join(format!("related-v{VERSION}-{name}.bin"));
        let index = Index::open(Some(dir.path().to_path_buf()), Path::new("/repo"));
        index.keep(entries().into_iter().map(Keep::from), SystemTime::now());
        (dir, file, index)
    }

    #[test]
    fn entries_kept_as_loaded_are_not_written_again_and_a_new_one_joins_them() {
        let (dir, file, first) = filled_index();
        let root = Path::new("/repo");
        first.save().unwrap();
        let written = std::fs::read(&file).unwrap();
        // Every entry kept as loaded, in any order: nothing to write.
        std::fs::remove_file(&file).unwrap();
        std::fs::write(&file, &written).unwrap();
        let again = Index::open(Some(dir.path().to_path_buf()), root);
        assert_eq!(again.loaded.entries.len(), 3);
        again.keep([2, 0, 1].map(Keep::Loaded), SystemTime::now());
        std::fs::write(&file, b"left alone").unwrap();
        again.save().unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"left alone");
        // One dropped, one new: the file holds the two kept and the new, sorted by path.
        let again = Index::open(Some(dir.path().to_path_buf()), root);
        assert!(again.loaded.entries.is_empty());
        std::fs::write(&file, &written).unwrap();
        let again = Index::open(Some(dir.path().to_path_buf()), root);
        let new = Entry {
            path: "b2.ts".into(),
            stamp: Stamp::sample(9),
            seen: Seen::Refused,
        };
        again.keep(
            [Keep::Loaded(2), Keep::from(new.clone()), Keep::Loaded(0)],
            SystemTime::now(),
        );
        again.save().unwrap();
        let paths: Vec<String> = decode(std::fs::read(&file).unwrap(), b"/repo")
            .unwrap()
            .entries
            .into_iter()
            .map(|e| e.path)
            .collect();
        assert_eq!(paths, ["a.ts", "b2.ts", "c.ts"]);
    }

    #[test]
    fn the_index_a_watcher_goes_on_with_is_the_one_it_wrote_whatever_the_file_holds_later() {
        let (_dir, file, first) = filled_index();
        let next = first.save_next().expect("three new entries: a new index");
        let written = std::fs::read(&file).unwrap();
        // Another process writes the file: the watcher's index is still the one it wrote.
        std::fs::write(&file, b"another run's index").unwrap();
        assert_eq!(
            next.loaded.entries,
            decode(written, b"/repo").unwrap().entries
        );
        assert_eq!(
            next.loaded
                .entries
                .iter()
                .map(|e| e.path.as_str())
                .collect::<Vec<_>>(),
            ["a.ts", "b.ts", "c.ts"]
        );
        // Every entry kept as loaded: nothing new, the same index goes on.
        next.keep([0, 1, 2].map(Keep::Loaded), SystemTime::now());
        assert!(next.save_next().is_none());
        // One dropped: the next index has the two kept.
        next.keep([2, 0].map(Keep::Loaded), SystemTime::now());
        let after = next.save_next().expect("one dropped");
        assert_eq!(after.loaded.entries.len(), 2);
    }

    #[test]
    fn a_files_words_are_read_when_asked_and_a_block_that_is_no_words_gives_none() {
        let block = |values: &[u64]| {
            let mut b = Vec::new();
            for &v in values {
                put(&mut b, v);
            }
            b
        };
        let mut out = vec![99];
        // Three ids, 1, 4 and 5, as their count and differences.
        assert_eq!(unpack(&block(&[3, 1, 3, 1]), 6, &mut out), Some(()));
        assert_eq!(out, [1, 4, 5]);
        assert_eq!(unpack(&block(&[0]), 0, &mut out), Some(()));
        assert!(out.is_empty());
        for bad in [
            block(&[3, 1, 3, 1]).as_slice()[..3].to_vec(), // cut short
            block(&[2, 1, 0]),                             // the same id twice
            block(&[2, 1, 5]),                             // past the vocabulary
            block(&[1, 1, 7]),                             // a byte after the ids
            block(&[200, 1]),                              // more ids than bytes
            vec![0x80],                                    // a count that does not end
        ] {
            assert_eq!(unpack(&bad, 6, &mut out), None, "{bad:?}");
        }
        // Read from an index: words as read, or past the file, are none of its ids.
        let index = Index::open(None, Path::new("/repo"));
        assert_eq!(index.word_ids(&Words::read(&[b"abc"]), &mut out), None);
        assert_eq!(
            index.word_ids(&Words::Packed { at: 10, len: 5 }, &mut out),
            None
        );
    }

    #[test]
    fn integers_round_trip() {
        for v in [0, 1, 127, 128, 300, u64::MAX] {
            let mut out = Vec::new();
            put(&mut out, v);
            assert_eq!(Reader { bytes: &out, at: 0 }.int(), Some(v));
        }
        for v in [0, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
    }
}
