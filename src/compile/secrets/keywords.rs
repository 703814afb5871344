//! The keyword pass: every occurrence of every rule keyword (ASCII
//! case-insensitive, overlapping), found with Aho-Corasick behind a prefilter.
//!
//! A plain Aho-Corasick DFA walk costs one dependent table load a byte, which
//! holds it near 350 MiB/s on this project's 2 GHz test machine whatever the
//! text. The prefilter has no chain between bytes: the keywords' first four
//! bytes (any fourth byte for a three-byte keyword) are put in 64 buckets, and
//! four tables of 256 bucket masks (one per offset, both cases of a letter
//! set) say which buckets a byte may start or continue. A position is a
//! candidate when one bucket accepts all four bytes from it; only there does
//! the Aho-Corasick DFA run, anchored, until it dies. Eight bytes are stepped
//! at a time and looked at again only when one of them ended a candidate. The
//! tables have no false negatives (every keyword sets its bits), so the finds
//! are exactly those of an unanchored overlapping search; the equivalence is
//! tested against `AhoCorasick::find_overlapping_iter`.
//!
//! Buckets are chosen when the rules build (under a millisecond): keywords
//! sharing their first two bytes start in one bucket (exact: `sk0` … `skf` is
//! one set of first bytes, one of second bytes and sixteen of third), then the
//! two buckets whose union admits the fewest extra four-byte strings merge
//! until 64 are left, letters weighing more than digits and punctuation (they
//! are what text is made of). On Rust sources that leaves about one candidate
//! in 100 bytes, against one in 150 if every head had its own bucket.

use aho_corasick::automaton::Automaton;
use aho_corasick::dfa::DFA;
use aho_corasick::{Anchored, MatchKind, StartKind};

/// Number of buckets: the bits of a mask.
const BUCKETS: usize = 64;
/// Bytes of a keyword's head the buckets look at (three-byte keywords admit any
/// fourth byte).
const WINDOW: usize = 4;

/// The keyword finder.
#[derive(Debug)]
pub(super) struct Keywords {
    /// Bucket masks by the byte at a keyword's offset 0, 1, 2 and 3.
    tables: [[u64; 256]; WINDOW],
    /// The keywords, anchored at a candidate position.
    dfa: DFA,
}

/// The buckets the last bytes may be the head of: `one`, those the last byte
/// may start; `two`, those the last two bytes may start and continue; `three`,
/// the last three.
#[derive(Debug, Clone, Copy, Default)]
struct Heads {
    one: u64,
    two: u64,
    three: u64,
}

impl Heads {
    /// Take one more byte; the buckets whose four-byte heads end with it.
    #[inline]
    fn step(&mut self, tables: &[[u64; 256]; WINDOW], byte: u8) -> u64 {
        let [first, second, third, fourth] = tables;
        let byte = usize::from(byte);
        let hit = self.three & fourth[byte];
        self.three = self.two & third[byte];
        self.two = self.one & second[byte];
        self.one = first[byte];
        hit
    }
}

/// A set of bytes (lower-case folded), one bit a byte.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct ByteSet([u64; 4]);

impl ByteSet {
    const ALL: Self = Self([u64::MAX; 4]);

    fn insert(&mut self, byte: u8) {
        let byte = byte.to_ascii_lowercase();
        if let Some(word) = self.0.get_mut(usize::from(byte / 64)) {
            *word |= 1 << (byte % 64);
        }
    }

    fn union(self, other: Self) -> Self {
        Self(std::array::from_fn(|i| self.0[i] | other.0[i]))
    }

    fn bytes(self) -> impl Iterator<Item = u8> {
        (0..=u8::MAX).filter(move |&byte| {
            self.0
                .get(usize::from(byte / 64))
                .is_some_and(|word| word & (1 << (byte % 64)) != 0)
        })
    }

    /// How much text the set admits: a letter weighs 4, any other byte 1.
    fn weight(self) -> u64 {
        // The lower-case letters, bytes 97 to 122, are bits 33 to 58 of the second word.
        const LETTERS: u64 = ((1 << 26) - 1) << 33;
        let [from_0, from_64, from_128, from_192] = self.0;
        let high = if from_128 | from_192 == 0 {
            0
        } else {
            from_128.count_ones() + from_192.count_ones()
        };
        u64::from(
            from_0.count_ones()
                + from_64.count_ones()
                + 3 * (from_64 & LETTERS).count_ones()
                + high,
        )
    }
}

/// One bucket: the bytes it admits at offsets 0 to 3.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Bucket([ByteSet; WINDOW]);

impl Bucket {
    /// Admit a keyword's head (a shorter keyword admits any byte after its end).
    fn add(&mut self, keyword: &[u8]) {
        for (index, set) in self.0.iter_mut().enumerate() {
            match keyword.get(index) {
                Some(&byte) => set.insert(byte),
                None => *set = ByteSet::ALL,
            }
        }
    }

    fn union(self, other: Self) -> Self {
        Self(std::array::from_fn(|i| self.0[i].union(other.0[i])))
    }

    /// The weighted number of four-byte strings the bucket admits.
    fn cost(self) -> u64 {
        self.0.iter().map(|set| set.weight()).product()
    }
}

impl Keywords {
    /// Build the finder over the keywords (an empty one is never found; the rules
    /// table asks for three bytes at least).
    ///
    /// # Errors
    /// The Aho-Corasick build error.
    pub(super) fn new(keywords: &[String]) -> Result<Self, aho_corasick::BuildError> {
        let dfa = aho_corasick::dfa::Builder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .start_kind(StartKind::Anchored)
            .prefilter(false)
            .build(keywords)?;
        let mut tables = [[0; 256]; WINDOW];
        for (bit, bucket) in buckets(keywords).into_iter().enumerate() {
            let mask = 1u64 << bit;
            for (table, set) in tables.iter_mut().zip(bucket.0) {
                for byte in set.bytes() {
                    for byte in [byte, byte.to_ascii_uppercase()] {
                        if let Some(slot) = table.get_mut(usize::from(byte)) {
                            *slot |= mask;
                        }
                    }
                }
            }
        }
        Ok(Self { tables, dfa })
    }

    /// Call `found(keyword, start, end)` for every occurrence of every
    /// keyword, ordered by start (and, at one start, by end).
    pub(super) fn each(&self, bytes: &[u8], mut found: impl FnMut(usize, usize, usize)) {
        let mut heads = Heads::default();
        // Eight bytes at a time, asking only once whether any of them ended a candidate:
        // most blocks end none, and the block is walked again only when one did.
        let mut blocks = bytes.chunks_exact(8);
        for (index, block) in (&mut blocks).enumerate() {
            let before = heads;
            let mut any = 0;
            for &byte in block {
                any |= heads.step(&self.tables, byte);
            }
            if any != 0 {
                heads = before;
                for (offset, &byte) in block.iter().enumerate() {
                    if heads.step(&self.tables, byte) != 0 {
                        // A candidate's four bytes end at `index * 8 + offset`.
                        if let Some(start) = (index * 8 + offset).checked_sub(3) {
                            self.anchored(bytes, start, &mut found);
                        }
                    }
                }
            }
        }
        let rest = blocks.remainder();
        let at = bytes.len() - rest.len();
        for (offset, &byte) in rest.iter().enumerate() {
            if heads.step(&self.tables, byte) != 0
                && let Some(start) = (at + offset).checked_sub(3)
            {
                self.anchored(bytes, start, &mut found);
            }
        }
        // A keyword shorter than four bytes may end the text, with no fourth byte to
        // look at: the last three starts are tried if a bucket accepts what is left.
        for (left, heads) in [(3, heads.three), (2, heads.two), (1, heads.one)] {
            if heads != 0
                && let Some(start) = bytes.len().checked_sub(left)
            {
                self.anchored(bytes, start, &mut found);
            }
        }
    }

    /// Every keyword starting at `start`, ordered by end.
    fn anchored(&self, bytes: &[u8], start: usize, found: &mut impl FnMut(usize, usize, usize)) {
        let Ok(mut state) = self.dfa.start_state(Anchored::Yes) else {
            return;
        };
        for (end, &byte) in bytes.iter().enumerate().skip(start) {
            state = self.dfa.next_state(Anchored::Yes, state, byte);
            if self.dfa.is_special(state) {
                if self.dfa.is_dead(state) {
                    return;
                }
                // A match state also holds the keywords ending here that start later
                // (suffixes, inherited along failure links): those are found from
                // their own start.
                for index in 0..self.dfa.match_len(state) {
                    let keyword = self.dfa.match_pattern(state, index);
                    if (end + 1).checked_sub(self.dfa.pattern_len(keyword)) == Some(start) {
                        found(keyword.as_usize(), start, end + 1);
                    }
                }
            }
        }
    }
}

/// The keywords' first four bytes in at most [`BUCKETS`] buckets.
fn buckets(keywords: &[String]) -> Vec<Bucket> {
    // Keywords sharing their first two bytes share a bucket.
    let mut heads: Vec<Bucket> = Vec::new();
    for keyword in keywords.iter().map(String::as_bytes) {
        if keyword.is_empty() {
            continue;
        }
        let mut alone = Bucket::default();
        alone.add(keyword);
        match heads
            .iter_mut()
            .find(|bucket| bucket.0[..2] == alone.0[..2])
        {
            Some(bucket) => bucket.add(keyword),
            None => heads.push(alone),
        }
    }
    merge(heads, BUCKETS)
}

/// Merge the two buckets whose union admits the least extra text, again and
/// again, until at most `limit` are left.
fn merge(buckets: Vec<Bucket>, limit: usize) -> Vec<Bucket> {
    let count = buckets.len();
    // A live bucket and its cost; a merge keeps the lower slot and empties the other.
    let mut slots: Vec<Option<(Bucket, u64)>> = buckets
        .into_iter()
        .map(|bucket| Some((bucket, bucket.cost())))
        .collect();
    let extra = |slots: &[Option<(Bucket, u64)>], i: usize, j: usize| match (slots[i], slots[j]) {
        (Some((one, paid)), Some((other, paid_too))) if i != j => {
            one.union(other).cost().saturating_sub(paid + paid_too)
        }
        _ => u64::MAX,
    };
    // `extra[i * count + j]`, for i < j: what merging i and j adds; only the merged
    // bucket's pairs change after a merge. `nearest[i]`: the cheapest live partner
    // above i, and what it adds.
    let mut extras = vec![u64::MAX; count * count];
    for i in 0..count {
        for j in i + 1..count {
            extras[i * count + j] = extra(&slots, i, j);
        }
    }
    let nearest_of = |extras: &[u64], slots: &[Option<(Bucket, u64)>], i: usize| {
        (i + 1..count)
            .filter(|&j| slots[j].is_some())
            .map(|j| (extras[i * count + j], j))
            .min()
    };
    let mut nearest: Vec<Option<(u64, usize)>> =
        (0..count).map(|i| nearest_of(&extras, &slots, i)).collect();
    for _ in limit..count {
        let Some((_, i, j)) = (0..count)
            .filter(|&i| slots[i].is_some())
            .filter_map(|i| nearest[i].map(|(cost, j)| (cost, i, j)))
            .min()
        else {
            break;
        };
        if let (Some((one, _)), Some((other, _))) = (slots[i], slots[j]) {
            let merged = one.union(other);
            slots[i] = Some((merged, merged.cost()));
            slots[j] = None;
        }
        for k in (0..count).filter(|&k| k != i) {
            extras[i.min(k) * count + i.max(k)] = extra(&slots, i, k);
        }
        // The rows that pointed at either bucket, or that the merged one may serve
        // better, look again.
        for k in (0..count).filter(|&k| slots[k].is_some()) {
            let stale = match nearest[k] {
                Some((cost, partner)) => {
                    k == i
                        || partner == i
                        || partner == j
                        || (k < i && extras[k * count + i] < cost)
                }
                None => k < i,
            };
            if stale {
                nearest[k] = nearest_of(&extras, &slots, k);
            }
        }
    }
    slots
        .into_iter()
        .flatten()
        .map(|(bucket, _)| bucket)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overlapping(keywords: &[String], text: &[u8]) -> Vec<(usize, usize, usize)> {
        let ac = aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(keywords)
            .expect("builds");
        let mut finds: Vec<_> = ac
            .find_overlapping_iter(text)
            .map(|m| (m.pattern().as_usize(), m.start(), m.end()))
            .collect();
        finds.sort_by_key(|&(pattern, start, end)| (start, end, pattern));
        finds
    }

    fn ours(keywords: &Keywords, text: &[u8]) -> Vec<(usize, usize, usize)> {
        let mut finds = Vec::new();
        keywords.each(text, |pattern, start, end| {
            finds.push((pattern, start, end));
        });
        finds.sort_by_key(|&(pattern, start, end)| (start, end, pattern));
        finds
    }

    #[test]
    fn finds_exactly_what_an_overlapping_search_finds() {
        let list = super::super::content::keyword_list();
        let keywords = Keywords::new(&list).expect("builds");
        // Texts made of keyword pieces (upper, lower and mixed case), their prefixes,
        // separators and noise, so that keywords overlap, nest and are cut short.
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            usize::try_from(seed >> 33).unwrap_or(0)
        };
        for round in 0..300 {
            let mut text = Vec::new();
            while text.len() < 2_000 {
                let word = list[next() % list.len()].as_bytes();
                let word = match next() % 4 {
                    0 => &word[..word.len().min(1 + next() % word.len())],
                    _ => word,
                };
                for &byte in word {
                    text.push(match next() % 3 {
                        0 => byte.to_ascii_uppercase(),
                        _ => byte,
                    });
                }
                match next() % 5 {
                    0 => text.push(b' '),
                    1 => text.push(u8::try_from(next() % 256).unwrap_or(0)),
                    _ => {}
                }
            }
            assert_eq!(
                ours(&keywords, &text),
                overlapping(&list, &text),
                "round {round}"
            );
        }
    }

    proptest::proptest! {
        /// Any keyword set (a few bytes from a small alphabet, so that keywords share
        /// heads, nest and overlap, in both cases; often more two-byte heads than
        /// buckets, so that they merge) over any text from the same alphabet: the same
        /// finds as the overlapping search.
        #[test]
        fn any_keywords_any_text(
            list in proptest::collection::vec("[a-eA-E0-3_.\\-]{1,6}", 1..160),
            text in proptest::collection::vec(
                proptest::sample::select(b"abcdeABCDE0123_.-x\n".to_vec()),
                0..400,
            ),
        ) {
            let list: Vec<String> = list.into_iter().map(|k| k.to_ascii_lowercase()).collect();
            let keywords = Keywords::new(&list).expect("builds");
            proptest::prop_assert_eq!(ours(&keywords, &text), overlapping(&list, &text));
        }
    }

    #[test]
    fn short_keywords_are_found_anywhere_too() {
        let list: Vec<String> = ["a", "bc", "xyz", "bcd", "q"].map(str::to_owned).to_vec();
        let keywords = Keywords::new(&list).expect("builds");
        for text in [
            &b"a"[..],
            b"bc",
            b"xBc",
            b"zzbcdQ",
            b"xyz",
            b"abcabcxyzq",
            b"........bc",
            b"........xYz.q",
            b"",
        ] {
            assert_eq!(ours(&keywords, text), overlapping(&list, text), "{text:?}");
        }
    }

    #[test]
    fn every_keyword_is_found_at_the_start_and_the_end_of_the_text() {
        let list = super::super::content::keyword_list();
        let keywords = Keywords::new(&list).expect("builds");
        for (index, keyword) in list.iter().enumerate() {
            for text in [
                keyword.clone(),
                keyword.to_ascii_uppercase(),
                format!("x {keyword}"),
            ] {
                let finds = ours(&keywords, text.as_bytes());
                assert!(
                    finds
                        .iter()
                        .any(|&(pattern, _, end)| pattern == index && end == text.len()),
                    "{keyword:?} in {text:?}"
                );
            }
        }
    }

    #[test]
    fn at_most_sixty_four_buckets_and_exact_heads_stay_together() {
        let list = super::super::content::keyword_list();
        let buckets = buckets(&list);
        assert!(buckets.len() <= BUCKETS);
        // `sk0` … `sk9` start one bucket: some bucket admits `s`,`k`,`0` and `s`,`k`,`9`.
        let admits = |bucket: &Bucket, text: &[u8; 3]| {
            bucket
                .0
                .iter()
                .zip(text)
                .all(|(set, byte)| set.bytes().any(|b| b == *byte))
        };
        assert!(
            buckets
                .iter()
                .any(|bucket| admits(bucket, b"sk0") && admits(bucket, b"sk9"))
        );
    }
}
