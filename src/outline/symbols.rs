//! Names as numbers: the ranking compares and looks names up as `u32` ids, and tags kept on
//! disk hold an id per name instead of its text, so a large repository's millions of
//! references are neither allocated one by one nor hashed.

use std::cmp::Ordering;
use std::collections::HashMap;

use super::types::Tags;

type FastMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

/// Byte strings in increasing order, distinct, in one buffer: word `k`'s id is `k`, so ids
/// compare as the words do.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Vocab {
    bytes: Vec<u8>,
    /// Where each word ends in `bytes` (it starts where the one before it ends).
    ends: Vec<u32>,
}

impl Vocab {
    /// Appends `word`; false (and nothing added) unless it sorts after the last one, or when
    /// the buffer would pass 4 GiB.
    pub fn push(&mut self, word: &[u8]) -> bool {
        if !self.is_empty() && self.word(self.len() - 1) >= word {
            return false;
        }
        let Ok(end) = u32::try_from(self.bytes.len() + word.len()) else {
            return false;
        };
        self.bytes.extend_from_slice(word);
        self.ends.push(end);
        true
    }

    /// The words of `sorted` (increasing, distinct); `None` when they are not.
    #[must_use]
    pub fn of_sorted<'w>(sorted: impl IntoIterator<Item = &'w [u8]>) -> Option<Vocab> {
        let mut v = Vocab::default();
        for w in sorted {
            if !v.push(w) {
                return None;
            }
        }
        Some(v)
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Word `k`, if there is one.
    #[must_use]
    pub fn get(&self, k: usize) -> Option<&[u8]> {
        (k < self.ends.len()).then(|| self.word(k))
    }

    /// The id of `word`, if it is one.
    #[must_use]
    pub fn find(&self, word: &[u8]) -> Option<u32> {
        let (mut lo, mut hi) = (0, self.ends.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.word(mid).cmp(word) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return u32::try_from(mid).ok(),
            }
        }
        None
    }

    /// The words, in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.ends.len()).map(|k| self.word(k))
    }

    fn word(&self, k: usize) -> &[u8] {
        let start = if k == 0 { 0 } else { self.ends[k - 1] as usize };
        &self.bytes[start..self.ends[k] as usize]
    }
}

/// A file's tags with names as ids of a [`Symbols`] table: what the ranking reads.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Named {
    /// Each definition's name and 1-based line, in document order.
    pub defs: Vec<(u32, u64)>,
    /// Each referenced name (distinct, by increasing id) and how often it occurs (≥ 1).
    pub refs: Vec<(u32, u32)>,
}

impl Named {
    /// How often name `id` is referenced (0 when it is not).
    #[must_use]
    pub fn ref_count(&self, id: u32) -> u32 {
        self.refs
            .binary_search_by_key(&id, |&(r, _)| r)
            .map_or(0, |k| self.refs[k].1)
    }
}

/// The names of one run: a base vocabulary (a loaded index's, whose ids keep the words'
/// order) and the names met beyond it, numbered after it.
pub struct Symbols<'v> {
    base: &'v Vocab,
    extra: Vec<Box<[u8]>>,
    ids: FastMap<Box<[u8]>, u32>,
}

impl<'v> Symbols<'v> {
    #[must_use]
    pub fn new(base: &'v Vocab) -> Symbols<'v> {
        Symbols {
            base,
            extra: Vec::new(),
            ids: FastMap::default(),
        }
    }

    /// How many ids there are: every id is below.
    #[must_use]
    pub fn len(&self) -> usize {
        self.base.len() + self.extra.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The id of `name`, numbered now if it has none yet (saturating at `u32::MAX`, past what
    /// an index can hold).
    pub fn id(&mut self, name: &[u8]) -> u32 {
        if let Some(k) = self.base.find(name) {
            return k;
        }
        if let Some(&k) = self.ids.get(name) {
            return k;
        }
        let k = u32::try_from(self.len()).unwrap_or(u32::MAX);
        self.extra.push(name.into());
        self.ids.insert(name.into(), k);
        k
    }

    /// The name of `id` (empty for an id no call gave).
    #[must_use]
    pub fn name(&self, id: u32) -> &[u8] {
        let k = id as usize;
        match self.base.get(k) {
            Some(w) => w,
            None => self
                .extra
                .get(k - self.base.len())
                .map_or(&[][..], |w| &w[..]),
        }
    }

    /// The characters of `id`'s name.
    #[must_use]
    pub fn chars(&self, id: u32) -> usize {
        chars(self.name(id))
    }

    /// How two ids' names compare (by id within the base, sorted already).
    #[must_use]
    pub fn cmp(&self, a: u32, b: u32) -> Ordering {
        let base = self.base.len();
        if (a as usize) < base && (b as usize) < base {
            a.cmp(&b)
        } else {
            self.name(a).cmp(self.name(b))
        }
    }

    /// `tags` with its names numbered.
    pub fn number(&mut self, tags: &Tags) -> Named {
        self.numbered(
            tags.defs.iter().map(|d| (d.name.as_bytes(), d.line)),
            tags.refs
                .iter()
                .enumerate()
                .map(|(k, r)| (r.as_bytes(), tags.ref_counts.get(k).copied().unwrap_or(1))),
        )
    }

    /// Definitions (name, line) and references (name, count) with their names numbered;
    /// a name referenced twice counts once, its first count.
    pub fn numbered<'n>(
        &mut self,
        defs: impl IntoIterator<Item = (&'n [u8], u64)>,
        refs: impl IntoIterator<Item = (&'n [u8], u32)>,
    ) -> Named {
        let defs = defs
            .into_iter()
            .map(|(n, line)| (self.id(n), line))
            .collect();
        let mut refs: Vec<(u32, u32)> = refs
            .into_iter()
            .map(|(n, count)| (self.id(n), count.max(1)))
            .collect();
        refs.sort_by_key(|&(r, _)| r);
        refs.dedup_by_key(|&mut (r, _)| r);
        Named { defs, refs }
    }
}

/// The characters of `name` (UTF-8: the bytes that start one).
#[must_use]
pub fn chars(name: &[u8]) -> usize {
    name.iter().filter(|&&b| b.cast_signed() >= -0x40).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outline::Def;

    #[test]
    fn a_vocabulary_keeps_its_words_in_order_and_refuses_any_other() {
        let v = Vocab::of_sorted([&b"alpha"[..], b"beta", b"gamma"]).unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(v.find(b"beta"), Some(1));
        assert_eq!(v.find(b"delta"), None);
        assert_eq!(v.find(b""), None);
        assert_eq!(v.get(2), Some(&b"gamma"[..]));
        assert_eq!(v.get(3), None);
        assert_eq!(
            v.iter().collect::<Vec<_>>(),
            [&b"alpha"[..], b"beta", b"gamma"]
        );
        assert!(Vocab::of_sorted([&b"beta"[..], b"alpha"]).is_none());
        assert!(Vocab::of_sorted([&b"beta"[..], b"beta"]).is_none());
        // The empty word sorts first, once.
        let e = Vocab::of_sorted([&b""[..], b"a"]).unwrap();
        assert_eq!(e.find(b""), Some(0));
        assert!(Vocab::of_sorted([&b""[..], b""]).is_none());
    }

    #[test]
    fn names_beyond_the_base_are_numbered_after_it_and_compare_by_their_text() {
        let base = Vocab::of_sorted([&b"login"[..], b"session"]).unwrap();
        let mut s = Symbols::new(&base);
        assert_eq!(s.id(b"session"), 1);
        let hash = s.id(b"hash");
        let zeta = s.id(b"zeta");
        assert_eq!((hash, zeta), (2, 3));
        assert_eq!(s.id(b"hash"), 2);
        assert_eq!(s.len(), 4);
        assert_eq!(s.name(3), b"zeta");
        assert_eq!(s.name(9), b"");
        let mut ids = [zeta, 1, hash, 0];
        ids.sort_by(|&a, &b| s.cmp(a, b));
        let names: Vec<&[u8]> = ids.iter().map(|&k| s.name(k)).collect();
        assert_eq!(names, [&b"hash"[..], b"login", b"session", b"zeta"]);
    }

    #[test]
    fn numbered_tags_keep_lines_and_counts() {
        let base = Vocab::of_sorted([&b"zeta"[..]]).unwrap();
        let mut s = Symbols::new(&base);
        let tags = Tags {
            defs: vec![Def {
                name: "login".into(),
                kind: "function",
                line: 7,
            }],
            refs: vec!["alpha".into(), "zeta".into()],
            ref_counts: vec![3, 2],
        };
        let named = s.number(&tags);
        assert_eq!(named.defs, [(s.id(b"login"), 7)]);
        assert_eq!(named.ref_count(0), 2);
        assert_eq!(named.ref_count(s.id(b"alpha")), 3);
        assert_eq!(named.ref_count(s.id(b"nothing")), 0);
        assert!(named.refs.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn characters_are_counted_not_bytes() {
        assert_eq!(chars(b"abc"), 3);
        assert_eq!(chars("λμ".as_bytes()), 2);
        assert_eq!(chars("日本語".as_bytes()), 3);
        assert_eq!(chars(b""), 0);
    }
}
