//! Folder listings kept between runs, for `--related`'s walk of the whole repository
//! (docs/budgets.md#related-files): a folder whose stamp did not change is not listed again.
//!
//! One file a repository in the cache folder, `listing-v2-<12 hex digits of the root's
//! sha256>.bin`. Per folder: its repository-relative path; its stamp (size, modification and
//! change times to the nanosecond, inode, device, from `lstat`); its entries (name and type:
//! file, folder, link or other) in the order the folder listed them. Adding, removing or
//! renaming an entry, or making one a link, moves the folder's modification and change times,
//! and a change time cannot be set back; a folder mounted over, or replaced, has another inode
//! or device. A stamp taken less than [`RACY`](crate::util::stamp::RACY) before the run started is not kept, as the
//! index does not keep such a file: the folder may still change within that tick.
//!
//! A listing only says which names to look at: every file is still stamped, read and
//! admitted as before, so a listing that is wrong (a damaged or forged cache) can hide a
//! file from the ranking but never lets a link or a secret in. The file is checksummed; one
//! that does not decode, or is another repository's or another version's, is ignored and
//! written anew. Never a panic.

use std::collections::HashMap;
use std::ffi::OsStr;
#[cfg(not(unix))]
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use super::codec::{Reader, checksum, put_bytes, put_len, put_stamp};
use super::index::{Base, Stamp};
use crate::util::cache::{repo_file, written_repo_file};

/// The format, in the file name and the header.
const VERSION: u8 = 2;
const MAGIC: &[u8] = b"curate folder listings\n";
/// At most this many bytes a file (a larger one is neither read nor written).
const MAX_BYTES: usize = 256 * 1024 * 1024;
/// The file name's start, for the sweep of the cache folder.
const PREFIX: &str = "listing-v";

/// What a folder's entry is, as its listing says (never followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    File,
    Folder,
    Link,
    Other,
}

impl Kind {
    #[cfg(not(target_os = "linux"))]
    fn of(t: std::fs::FileType) -> Kind {
        if t.is_symlink() {
            Kind::Link
        } else if t.is_dir() {
            Kind::Folder
        } else if t.is_file() {
            Kind::File
        } else {
            Kind::Other
        }
    }

    fn byte(self) -> u8 {
        match self {
            Kind::File => 0,
            Kind::Folder => 1,
            Kind::Link => 2,
            Kind::Other => 3,
        }
    }

    fn from_byte(b: u8) -> Option<Kind> {
        Some(match b {
            0 => Kind::File,
            1 => Kind::Folder,
            2 => Kind::Link,
            3 => Kind::Other,
            _ => return None,
        })
    }
}

/// A folder's entries, in the order it listed them: their names in one buffer, so that a
/// listing costs no allocation a name, and a kept folder's are a view of the loaded file.
#[derive(Debug, Clone)]
pub enum Entries<'a> {
    /// A kept folder's, in the loaded file.
    Kept { names: &'a [u8], items: &'a [Item] },
    /// Listed in this run.
    Listed(Arc<Listed>),
}

/// Entries listed in this run.
#[derive(Debug)]
pub struct Listed {
    names: Vec<u8>,
    items: Vec<Item>,
    /// Where a name is not bytes, each as listed (`names` holds their lossy UTF-8, for the
    /// file, which is never kept there).
    #[cfg(not(unix))]
    os: Vec<OsString>,
}

/// An entry: where its name lies in its entries' names, and its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    start: u32,
    end: u32,
    kind: Kind,
}

impl Entries<'_> {
    /// Entries from names and kinds (`None` past 4 GiB of names).
    #[cfg(any(test, not(target_os = "linux")))]
    fn new<'n>(listed: impl IntoIterator<Item = (&'n [u8], Kind)>) -> Option<Entries<'static>> {
        let mut b = Builder::default();
        for (name, kind) in listed {
            b.push(name, kind)?;
        }
        Some(b.finish())
    }

    fn parts(&self) -> (&[u8], &[Item]) {
        match self {
            Entries::Kept { names, items } => (names, items),
            Entries::Listed(l) => (&l.names, &l.items),
        }
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.parts().1.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `k`th entry: its name and kind.
    #[must_use]
    pub fn get(&self, k: usize) -> Option<(&OsStr, Kind)> {
        let (names, items) = self.parts();
        let item = items.get(k)?;
        #[cfg(not(unix))]
        if let Entries::Listed(l) = self {
            return Some((l.os.get(k)?.as_os_str(), item.kind));
        }
        let name = names.get(item.start as usize..item.end as usize)?;
        Some((os_str(name), item.kind))
    }

    pub fn iter(&self) -> impl Iterator<Item = (&OsStr, Kind)> {
        (0..self.len()).filter_map(|k| self.get(k))
    }
}

impl PartialEq for Entries<'_> {
    fn eq(&self, other: &Entries<'_>) -> bool {
        self.iter().eq(other.iter())
    }
}

/// [`Entries`] being listed.
#[derive(Default)]
struct Builder {
    names: Vec<u8>,
    items: Vec<Item>,
    #[cfg(not(unix))]
    os: Vec<OsString>,
}

impl Builder {
    /// Adds an entry (`None` past 4 GiB of names).
    fn push(&mut self, name: &[u8], kind: Kind) -> Option<()> {
        #[cfg(not(unix))]
        self.os
            .push(OsString::from(String::from_utf8_lossy(name).into_owned()));
        let start = u32::try_from(self.names.len()).ok()?;
        self.names.extend_from_slice(name);
        let end = u32::try_from(self.names.len()).ok()?;
        self.items.push(Item { start, end, kind });
        Some(())
    }

    /// Adds an entry by its name as listed (where a name is not bytes).
    #[cfg(not(unix))]
    fn push_os(&mut self, name: OsString, kind: Kind) -> Option<()> {
        self.push(name.to_string_lossy().as_bytes(), kind)?;
        *self.os.last_mut()? = name;
        Some(())
    }

    fn finish(self) -> Entries<'static> {
        Entries::Listed(Arc::new(Listed {
            names: self.names,
            items: self.items,
            #[cfg(not(unix))]
            os: self.os,
        }))
    }
}

/// A name's bytes as the `OsStr` they were listed as.
fn os_str(bytes: &[u8]) -> &OsStr {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        OsStr::from_bytes(bytes)
    }
    #[cfg(not(unix))]
    {
        // Only UTF-8 names are kept in the file where names are not bytes ([`name_ok`]).
        OsStr::new(std::str::from_utf8(bytes).unwrap_or_default())
    }
}

/// A folder as listed in this run, or kept.
#[derive(Debug, Clone, PartialEq)]
struct Folder<'a> {
    rel: String,
    stamp: Stamp,
    entries: Entries<'a>,
}

/// A folder as loaded: its path and entries in the loaded file.
#[derive(Debug, Clone)]
struct Spot {
    rel: std::ops::Range<usize>,
    stamp: Stamp,
    entries: std::ops::Range<usize>,
}

/// The loaded file: its bytes, the entries of all its folders, its folders sorted by path.
#[derive(Debug, Default)]
struct Loaded {
    body: Vec<u8>,
    items: Vec<Item>,
    folders: Vec<Spot>,
}

impl Loaded {
    fn rel(&self, f: &Spot) -> &[u8] {
        self.body.get(f.rel.clone()).unwrap_or_default()
    }

    fn entries(&self, f: &Spot) -> Entries<'_> {
        Entries::Kept {
            names: &self.body,
            items: self.items.get(f.entries.clone()).unwrap_or_default(),
        }
    }
}

/// The listings of one repository: those kept by the last run, and this run's.
#[derive(Debug)]
pub struct Listings {
    file: Option<PathBuf>,
    /// The root, for the folders' stamps (when listings are kept).
    base: Option<Base>,
    root: Vec<u8>,
    loaded: Loaded,
    /// A loaded folder's place by its path's hash (one of two paths with the same hash is
    /// not found, and listed again).
    by_path: HashMap<u64, u32>,
    /// The loaded folders this run found as they were (by place): marked without a lock.
    kept: Vec<AtomicBool>,
    /// The folders this run listed anew.
    fresh: Mutex<Vec<Folder<'static>>>,
    started: SystemTime,
    /// What a process that stays knows has not changed (`curate watch`).
    watch: Option<Arc<dyn super::Unchanged>>,
    /// Folders read from the system in this run (the others came from `loaded`).
    #[cfg(test)]
    read: std::sync::atomic::AtomicUsize,
}

fn path_hash(rel: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    foldhash::quality::FixedState::with_seed(0).hash_one(rel)
}

impl Listings {
    /// No listing kept: every folder is read.
    #[must_use]
    pub fn none() -> Listings {
        Listings::at(None, Path::new(""), SystemTime::now())
    }

    /// The listings of the repository at `root` (canonical) in the cache folder `dir`
    /// (`None`: none kept), loaded.
    #[must_use]
    pub fn open(dir: Option<PathBuf>, root: &Path) -> Listings {
        Listings::at(dir, root, SystemTime::now())
    }

    /// Ends a run of a process that stays: nothing is vouched for until the next
    /// [`Listings::begin`].
    pub fn end(&mut self) {
        self.watch = None;
    }

    /// [`Listings::open`] for a run that started at `started`.
    fn at(dir: Option<PathBuf>, root_path: &Path, started: SystemTime) -> Listings {
        let root = root_path.to_string_lossy().into_owned().into_bytes();
        let (file, bytes) = repo_file(dir, PREFIX, VERSION, &root, MAX_BYTES);
        let loaded = bytes
            .and_then(|bytes| decode(bytes, &root))
            .unwrap_or_default();
        Listings::of(file, root_path, loaded, started)
    }

    /// The listings `loaded` of the repository at `root_path`, kept in `file`.
    fn of(
        file: Option<PathBuf>,
        root_path: &Path,
        loaded: Loaded,
        started: SystemTime,
    ) -> Listings {
        let root = root_path.to_string_lossy().into_owned().into_bytes();
        let by_path = loaded
            .folders
            .iter()
            .enumerate()
            .filter_map(|(k, f)| Some((path_hash(loaded.rel(f)), u32::try_from(k).ok()?)))
            .collect();
        let loaded_flags = (0..loaded.folders.len())
            .map(|_| AtomicBool::new(false))
            .collect();
        Listings {
            base: file.as_ref().map(|_| Base::open(root_path)),
            file,
            root,
            loaded,
            by_path,
            kept: loaded_flags,
            fresh: Mutex::new(Vec::new()),
            started,
            watch: None,
            #[cfg(test)]
            read: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Starts a run of a process that stays (`curate watch`): a folder `watch` vouches for
    /// is taken as kept without its stamp; the run's marks start anew.
    pub fn begin(&mut self, watch: Arc<dyn super::Unchanged>) {
        self.watch = Some(watch);
        self.started = SystemTime::now();
        for k in &self.kept {
            k.store(false, Ordering::Relaxed);
        }
    }

    /// The entries of the folder `rel` (relative to `root`): as kept when its stamp is
    /// the one kept, else as the system lists them now (an entry whose type cannot be read
    /// left out); `None` when it cannot be listed, or, listings kept, when `lstat` says it is
    /// no folder (a link a forged listing called one is not followed).
    pub fn list(&self, root: &Path, rel: &str) -> Option<Entries<'_>> {
        let abs = || {
            if rel.is_empty() {
                root.to_owned()
            } else {
                root.join(rel)
            }
        };
        let Some(base) = &self.base else {
            return self.read(&abs());
        };
        let loaded = self
            .by_path
            .get(&path_hash(rel.as_bytes()))
            .and_then(|&k| Some((k as usize, self.loaded.folders.get(k as usize)?)))
            .filter(|(_, f)| self.loaded.rel(f) == rel.as_bytes());
        let keep = |k: usize, f: &Spot| {
            self.kept.get(k)?.store(true, Ordering::Relaxed);
            Some(self.loaded.entries(f))
        };
        if let Some(w) = &self.watch {
            w.before_listing(rel);
            if let Some((k, f)) = loaded
                && w.folder(rel)
            {
                return keep(k, f);
            }
        }
        // Taken before the listing: a change after it moves the stamp, and is listed again.
        let stamp = base.folder(rel)?;
        if let Some((k, f)) = loaded
            && f.stamp == stamp
        {
            return keep(k, f);
        }
        let entries = self.read(&abs())?;
        self.fresh
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(Folder {
                rel: rel.to_owned(),
                stamp,
                entries: Entries::clone(&entries),
            });
        Some(entries)
    }

    // `self` counts the reads in tests only.
    #[cfg_attr(not(test), allow(clippy::unused_self))]
    fn read(&self, abs: &Path) -> Option<Entries<'static>> {
        #[cfg(test)]
        self.read.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        #[cfg(target_os = "linux")]
        {
            read_raw(abs)
        }
        #[cfg(not(target_os = "linux"))]
        read_std(abs)
    }

    /// This run's listings, encoded, when they differ from those loaded (those whose stamp
    /// is racy left out); `None`: every folder as loaded, or over the size cap.
    fn changed(&self) -> Option<Vec<u8>> {
        let fresh = std::mem::take(
            &mut *self
                .fresh
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        let kept: Vec<usize> = (0..self.kept.len())
            .filter(|&k| self.kept[k].load(Ordering::Relaxed))
            .collect();
        let fresh: Vec<&Folder<'_>> = without_tokens(
            fresh
                .iter()
                .filter(|f| !f.stamp.is_racy(self.started))
                .collect(),
        );
        if fresh.is_empty() && kept.len() == self.loaded.folders.len() {
            // Every folder as loaded.
            return None;
        }
        let kept: Vec<Folder<'_>> = kept
            .iter()
            .filter_map(|&k| self.loaded.folders.get(k))
            .map(|f| Folder {
                rel: String::from_utf8_lossy(self.loaded.rel(f)).into_owned(),
                stamp: f.stamp,
                entries: self.loaded.entries(f),
            })
            .collect();
        let mut next: Vec<&Folder<'_>> = kept.iter().chain(fresh).collect();
        next.sort_by(|a, b| a.rel.cmp(&b.rel));
        next.dedup_by(|a, b| a.rel == b.rel);
        let bytes = encode(&self.root, &next);
        (bytes.len() <= MAX_BYTES).then_some(bytes)
    }

    /// Writes `bytes` to `file`, atomically, and keeps at most 16 such files in the folder.
    fn write(&self, file: &Path, bytes: &[u8]) -> crate::error::Result<()> {
        crate::util::atomic::write_unsynced(file, bytes)?;
        if let Some(dir) = file.parent() {
            written_repo_file(dir, PREFIX, VERSION, &self.root);
        }
        Ok(())
    }

    /// Writes this run's listings, atomically, when they differ from those loaded (those
    /// whose stamp is racy left out), and keeps at most 16 such files in the folder. A cache:
    /// callers may ignore the error.
    pub fn save(&self) -> crate::error::Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        match self.changed() {
            Some(bytes) => self.write(file, &bytes),
            None => Ok(()),
        }
    }

    /// [`Listings::save`] for a process that stays (`curate watch`): this run's listings,
    /// written as `save` writes them (a failed write changes nothing else), and decoded from
    /// the same bytes into the listings its next run starts from, which no other process's
    /// file can replace. `None`: nothing changed, these stand.
    #[must_use]
    pub fn save_next(&self) -> Option<Listings> {
        let file = self.file.as_ref()?;
        let bytes = self.changed()?;
        let _ = self.write(file, &bytes);
        let loaded = decode(bytes, &self.root).unwrap_or_default();
        let root = PathBuf::from(String::from_utf8_lossy(&self.root).into_owned());
        Some(Listings::of(
            Some(file.clone()),
            &root,
            loaded,
            SystemTime::now(),
        ))
    }
}

/// `folders` but those whose path or an entry's name holds a token (a secret by content):
/// such a folder is not kept, so the cache holds no secret's value; it is listed anew at
/// each run. One scan of all the names, and one a folder only when it finds something.
fn without_tokens<'a, 'b>(folders: Vec<&'a Folder<'b>>) -> Vec<&'a Folder<'b>> {
    let Ok(rules) = crate::trust::secrets::ContentRules::shared() else {
        return Vec::new();
    };
    let text = |f: &Folder<'_>| {
        let mut text = f.rel.replace('/', "\n");
        for (name, _) in f.entries.iter() {
            text.push('\n');
            text.push_str(&name.to_string_lossy());
        }
        text.push('\n');
        text
    };
    let all: String = folders.iter().map(|f| text(f)).collect();
    if rules.scan(all.as_bytes()).is_none() {
        return folders;
    }
    folders
        .into_iter()
        .filter(|f| rules.scan(text(f).as_bytes()).is_none())
        .collect()
}

/// A folder's entries by `getdents64` into a buffer on the stack: what [`read_std`] gives,
/// without its `fstat` of the folder and its buffer allocated a folder (50,000 folders in a
/// cold walk of a large tree). An entry whose type the listing does not say is looked at
/// (`lstat`, as `DirEntry::file_type` does), and left out when that fails; an error
/// reading the listing ends it there, as `read_dir`'s iterator does.
#[cfg(target_os = "linux")]
fn read_raw(abs: &Path) -> Option<Entries<'static>> {
    use rustix::fs::{AtFlags, CWD, FileType, Mode, OFlags, RawDir, openat, statat};
    let fd = openat(
        CWD,
        abs,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 16 * 1024];
    let mut listing = RawDir::new(&fd, &mut buf);
    let mut out = Builder::default();
    while let Some(Ok(entry)) = listing.next() {
        let name = entry.file_name();
        if matches!(name.to_bytes(), b"." | b"..") {
            continue;
        }
        let kind = match entry.file_type() {
            FileType::Unknown => match statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(stat) => FileType::from_raw_mode(stat.st_mode),
                Err(_) => continue,
            },
            known => known,
        };
        let kind = match kind {
            FileType::Symlink => Kind::Link,
            FileType::Directory => Kind::Folder,
            FileType::RegularFile => Kind::File,
            _ => Kind::Other,
        };
        out.push(name.to_bytes(), kind)?;
    }
    Some(out.finish())
}

/// A folder's entries as `std::fs::read_dir` lists them (an entry whose type cannot be read
/// left out).
#[cfg(not(target_os = "linux"))]
fn read_std(abs: &Path) -> Option<Entries<'static>> {
    let mut out = Builder::default();
    for e in std::fs::read_dir(abs).ok()?.flatten() {
        let Ok(kind) = e.file_type() else { continue };
        #[cfg(unix)]
        out.push(e.file_name().as_encoded_bytes(), Kind::of(kind))?;
        #[cfg(not(unix))]
        out.push_os(e.file_name(), Kind::of(kind))?;
    }
    Some(out.finish())
}

/// The file's bytes: header, root, folders (sorted by path), checksum.
fn encode(root: &[u8], folders: &[&Folder<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    put_bytes(&mut out, root);
    put_len(&mut out, folders.len());
    for f in folders {
        put_bytes(&mut out, f.rel.as_bytes());
        put_stamp(&mut out, &f.stamp);
        put_len(&mut out, f.entries.len());
        for (name, kind) in f.entries.iter() {
            out.push(kind.byte());
            put_bytes(&mut out, name.as_encoded_bytes());
        }
    }
    let sum = checksum(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// The listings in `bytes`, when they decode whole, are this version's and `root`'s: the
/// folders' places in the file, and every entry's, checked (names as [`name_ok`] wants).
fn decode(mut bytes: Vec<u8>, root: &[u8]) -> Option<Loaded> {
    let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(8)?)?;
    if checksum(body).to_le_bytes() != sum {
        return None;
    }
    let mut r = Reader { bytes: body, at: 0 };
    if r.take(MAGIC.len())? != MAGIC || r.take(1)? != [VERSION] || r.bytes_()? != root {
        return None;
    }
    let n = r.len()?;
    let mut folders: Vec<Spot> = Vec::with_capacity(n.min(1 << 16));
    let mut items: Vec<Item> = Vec::new();
    let mut last: &[u8] = &[];
    for k in 0..n {
        let rel = r.bytes_()?;
        std::str::from_utf8(rel).ok()?;
        if k > 0 && last >= rel {
            return None;
        }
        last = rel;
        let rel_end = r.at;
        let rel = rel_end - rel.len()..rel_end;
        let stamp = r.stamp()?;
        let count = r.len()?;
        let first = items.len();
        for _ in 0..count {
            let kind = Kind::from_byte(*r.take(1)?.first()?)?;
            let name = r.bytes_()?;
            if !name_ok(name) {
                return None;
            }
            let end = u32::try_from(r.at).ok()?;
            let start = end - u32::try_from(name.len()).ok()?;
            items.push(Item { start, end, kind });
        }
        folders.push(Spot {
            rel,
            stamp,
            entries: first..items.len(),
        });
    }
    if r.at != body.len() {
        return None;
    }
    bytes.truncate(body.len());
    Some(Loaded {
        body: bytes,
        items,
        folders,
    })
}

/// A name as [`encode`] wrote it: one path segment, never empty, `.` or `..` (and UTF-8
/// where names are not bytes).
fn name_ok(bytes: &[u8]) -> bool {
    !(bytes.is_empty() || bytes == b"." || bytes == b".." || bytes.contains(&b'/'))
        && (cfg!(unix) || std::str::from_utf8(bytes).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;
    use std::time::Duration;

    /// Listings of a run that started well after every stamp the test makes (none racy).
    fn later(cache: &Path, root: &Path) -> Listings {
        Listings::at(
            Some(cache.to_owned()),
            root,
            SystemTime::now() + Duration::from_secs(3600),
        )
    }

    fn names(e: &Entries<'_>) -> Vec<(String, Kind)> {
        e.iter()
            .map(|(n, k)| (n.to_string_lossy().into_owned(), k))
            .collect()
    }

    fn sorted(mut v: Vec<(String, Kind)>) -> Vec<(String, Kind)> {
        v.sort();
        v
    }

    /// A folder to walk: `a.ts`, `sub/`, and a link `up` to the parent; each folder last
    /// modified a minute ago, so that a change the test makes moves its stamp.
    fn tree() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("repo");
        std::fs::create_dir_all(root.join("src/sub")).unwrap();
        std::fs::write(root.join("src/a.ts"), "a").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("..", root.join("src/up")).unwrap();
        for dir in [&root, &root.join("src"), &root.join("src/sub")] {
            std::fs::File::open(dir)
                .unwrap()
                .set_modified(SystemTime::now() - Duration::from_secs(60))
                .unwrap();
        }
        let cache = t.path().join("cache");
        (t, root, cache)
    }

    #[cfg(unix)]
    #[test]
    fn a_folder_whose_stamp_is_kept_is_not_listed_again() {
        let (_t, root, cache) = tree();
        let src = root.join("src");
        let first = later(&cache, &root);
        let listed = first.list(&root, "src").unwrap();
        assert_eq!(
            sorted(names(&listed)),
            [
                ("a.ts".to_owned(), Kind::File),
                ("sub".to_owned(), Kind::Folder),
                ("up".to_owned(), Kind::Link)
            ]
        );
        first.save().unwrap();
        let second = later(&cache, &root);
        assert_eq!(names(&second.list(&root, "src").unwrap()), names(&listed));
        assert_eq!(second.read.load(Ordering::Relaxed), 0, "kept, not read");
        // A file added moves the folder's stamp: listed again, with it.
        std::fs::write(src.join("b.ts"), "b").unwrap();
        let third = later(&cache, &root);
        let again = third.list(&root, "src").unwrap();
        assert_eq!(third.read.load(Ordering::Relaxed), 1);
        assert!(names(&again).contains(&("b.ts".to_owned(), Kind::File)));
    }

    #[cfg(unix)]
    #[test]
    fn a_folder_replaced_by_a_link_is_listed_as_what_it_is_now() {
        let (t, root, cache) = tree();
        let first = later(&cache, &root);
        first.list(&root, "src").unwrap();
        first.list(&root, "src/sub").unwrap();
        first.save().unwrap();
        std::fs::remove_dir(root.join("src/sub")).unwrap();
        std::fs::create_dir(t.path().join("outside")).unwrap();
        std::os::unix::fs::symlink(t.path().join("outside"), root.join("src/sub")).unwrap();
        let second = later(&cache, &root);
        let src = second.list(&root, "src").unwrap();
        assert!(names(&src).contains(&("sub".to_owned(), Kind::Link)));
        assert_eq!(second.read.load(Ordering::Relaxed), 1);
        assert_eq!(
            Stamp::of_folder(&root.join("src/sub")),
            None,
            "a link has no stamp"
        );
        // Asked to list it (a forged listing calling it a folder), it lists nothing.
        assert_eq!(second.list(&root, "src/sub"), None);
        assert_eq!(second.list(&root, "src/up"), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_racy_stamp_is_not_kept() {
        let (_t, root, cache) = tree();
        let now = Listings::open(Some(cache.clone()), &root);
        now.list(&root, "src").unwrap();
        now.save().unwrap();
        let next = later(&cache, &root);
        next.list(&root, "src").unwrap();
        assert_eq!(next.read.load(Ordering::Relaxed), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_damaged_foreign_or_other_repositorys_file_is_not_read() {
        let (_t, root, cache) = tree();
        let first = later(&cache, &root);
        first.list(&root, "src").unwrap();
        first.save().unwrap();
        let file = first.file.clone().unwrap();
        let good = std::fs::read(&file).unwrap();
        assert!(decode(good.clone(), &first.root).is_some());
        assert!(decode(good.clone(), b"/elsewhere").is_none());
        for cut in 0..good.len() {
            assert!(decode(good[..cut].to_vec(), &first.root).is_none());
        }
        for at in 0..good.len() {
            let mut bad = good.clone();
            bad[at] ^= 0x20;
            assert!(decode(bad, &first.root).is_none(), "byte {at}");
        }
        // A forged listing that checksums names no path out of its folder.
        let forged = encode(
            &first.root,
            &[&Folder {
                rel: "src".to_owned(),
                stamp: Stamp::of_folder(&root.join("src")).unwrap(),
                entries: Entries::new([(&b"../x"[..], Kind::File)]).unwrap(),
            }],
        );
        assert!(decode(forged, &first.root).is_none());
        std::fs::write(&file, b"not a listing").unwrap();
        let second = later(&cache, &root);
        second.list(&root, "src").unwrap();
        assert_eq!(second.read.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn with_no_cache_folder_every_folder_is_read_and_nothing_written() {
        let (_t, root, cache) = tree();
        let none = Listings::none();
        assert!(none.list(&root, "src").is_some());
        assert!(none.list(&root, "missing").is_none());
        none.save().unwrap();
        assert!(!cache.exists());
    }
}
