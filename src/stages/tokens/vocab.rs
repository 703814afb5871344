//! The embedded BPE vocabularies (laid out by `build.rs`) and tiktoken's merge, counted.
//!
//! A piece (what the pre-tokenizer cuts) that is a token counts 1; else its bytes are merged
//! as tiktoken merges them: the adjacent pair whose joined bytes have the lowest rank first,
//! the leftmost on a tie, until no joined pair is a token. The merge keeps its pairs in a
//! heap, so a long piece (a megabyte of one letter) costs O(n log n), never tiktoken's
//! O(n²). The counts of short pieces are remembered per thread.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::vocab_hash::{SHORT_MAX, key_hash, short_key, vocab_hash};
use crate::model::Encoding;

static O200K: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.vocab"));
static CL100K: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.vocab"));

/// One vocabulary: ranks by bytes, and bytes by rank.
pub struct Vocab {
    offsets: &'static [u8],
    slots: &'static [u8],
    bytes: &'static [u8],
    mask: usize,
}

/// The `u32` at index `i` of a little-endian table (0 past its end, which the layout never
/// reaches).
#[inline]
fn word(table: &[u8], i: usize) -> u32 {
    table
        .get(4 * i..4 * i + 4)
        .and_then(|w| <[u8; 4]>::try_from(w).ok())
        .map_or(0, u32::from_le_bytes)
}

/// The slot at index `i`: its two words.
#[inline]
fn slot(table: &[u8], i: usize) -> [u64; 2] {
    let word = |at: usize| {
        table
            .get(at..at + 8)
            .and_then(|w| <[u8; 8]>::try_from(w).ok())
            .map_or(0, u64::from_le_bytes)
    };
    [word(16 * i), word(16 * i + 8)]
}

/// A slot's first word and the low 40 bits of its second: a short key's own bits.
const KEY_BITS: u64 = (1 << 40) - 1;

impl Vocab {
    /// The vocabulary of `encoding`.
    pub fn of(encoding: Encoding) -> &'static Vocab {
        static TABLES: std::sync::OnceLock<[Vocab; 2]> = std::sync::OnceLock::new();
        let tables = TABLES.get_or_init(|| [Vocab::parse(O200K), Vocab::parse(CL100K)]);
        &tables[usize::from(encoding == Encoding::Cl100kBase)]
    }

    fn parse(table: &'static [u8]) -> Vocab {
        let ranks = word(table, 0) as usize;
        let slots = word(table, 1) as usize;
        let (offsets, rest) = table[8..].split_at(4 * (ranks + 1));
        let (slot, bytes) = rest.split_at(16 * slots);
        Vocab {
            offsets,
            slots: slot,
            bytes,
            mask: slots.saturating_sub(1),
        }
    }

    #[cfg(test)]
    fn token(&self, rank: u32) -> &'static [u8] {
        let start = word(self.offsets, rank as usize) as usize;
        let end = word(self.offsets, rank as usize + 1) as usize;
        self.bytes.get(start..end).unwrap_or_default()
    }

    /// The rank of the token whose bytes are `bytes`, if one is.
    #[inline]
    pub fn rank(&self, bytes: &[u8]) -> Option<u32> {
        match short_key(bytes) {
            Some(key) => self.rank_of_key(key, key_hash(key)),
            None => self.rank_of_long(bytes),
        }
    }

    /// The rank of a short piece by its key (and the key's hash).
    #[inline]
    fn rank_of_key(&self, key: [u64; 2], hash: u64) -> Option<u32> {
        let mut i = hash as usize & self.mask;
        loop {
            let [a, b] = slot(self.slots, i);
            let rank = (b >> 40) as u32;
            if rank == 0 {
                return None;
            }
            if a == key[0] && b & KEY_BITS == key[1] {
                return Some(rank - 1);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The rank of a piece longer than a key: its head in the slot, its tail in the bytes.
    fn rank_of_long(&self, bytes: &[u8]) -> Option<u32> {
        let len = u8::try_from(bytes.len()).ok()?;
        let mut head = short_key(&bytes[..SHORT_MAX])?;
        head[1] = (head[1] & 0xffff_ffff) | (u64::from(len) << 32);
        let mut i = vocab_hash(bytes) as usize & self.mask;
        loop {
            let [a, b] = slot(self.slots, i);
            let rank = (b >> 40) as u32;
            if rank == 0 {
                return None;
            }
            if a == head[0] && b & KEY_BITS == head[1] {
                let start = word(self.offsets, rank as usize - 1) as usize;
                if self.bytes.get(start + SHORT_MAX..start + bytes.len())
                    == Some(&bytes[SHORT_MAX..])
                {
                    return Some(rank - 1);
                }
            }
            i = (i + 1) & self.mask;
        }
    }

    /// tiktoken's byte-pair merge of `piece` (two bytes or more), counting the parts left:
    /// for a short piece as tiktoken does it (the lowest rank, leftmost first, found by a
    /// scan of the parts), for a longer one with a heap (`n log n`, not `n²`).
    fn merged_count(&self, piece: &[u8], s: &mut Scratch) -> u32 {
        if piece.len() <= SCANNED {
            return self.merged_count_scanned(piece);
        }
        let n = piece.len();
        // Parts are named by the offset they start at; `next[a]` is where part `a` ends.
        s.next.clear();
        s.next.extend(1..=n as u32);
        s.prev.clear();
        s.prev.extend((0..n as u32).map(|i| i.wrapping_sub(1)));
        s.heap.clear();
        for a in 0..n - 1 {
            if let Some(rank) = self.rank(&piece[a..a + 2]) {
                s.heap.push(Reverse((rank, a as u32, a as u32 + 2)));
            }
        }
        let mut parts = n as u32;
        while let Some(Reverse((_, a, end))) = s.heap.pop() {
            let (a, end) = (a as usize, end as usize);
            // Still the pair it was pushed for: part `a` alive, and its neighbour ending
            // at `end` (a pair's rank follows from its bytes, so it is still right).
            let mid = s.next[a] as usize;
            if mid >= n || s.next[mid] as usize != end || s.prev[mid] as usize != a {
                continue;
            }
            s.next[a] = end as u32;
            s.prev[mid] = u32::MAX;
            if end < n {
                s.prev[end] = a as u32;
            }
            parts -= 1;
            let before = s.prev[a];
            if before != u32::MAX
                && let Some(rank) = self.rank(&piece[before as usize..end])
            {
                s.heap.push(Reverse((rank, before, end as u32)));
            }
            if end < n {
                let after = s.next[end] as usize;
                if let Some(rank) = self.rank(&piece[a..after]) {
                    s.heap.push(Reverse((rank, a as u32, after as u32)));
                }
            }
        }
        if s.next.capacity() > SCRATCH_KEPT {
            // A huge piece's working memory is not kept for the next, small ones.
            *s = Scratch::default();
        }
        parts
    }
}

/// The most parts of working memory a thread keeps between pieces.
const SCRATCH_KEPT: usize = 1 << 16;

/// Pieces of up to this many bytes are merged by scanning their parts.
const SCANNED: usize = 32;

impl Vocab {
    /// [`Vocab::merged_count`] of a piece of 2 to [`SCANNED`] bytes, in arrays on the stack:
    /// `start[i]` is where part `i` starts (`start[parts]` the end), `rank[i]` the rank of
    /// parts `i` and `i + 1` merged (`u32::MAX`: not a token), for `i` below `parts - 1`.
    fn merged_count_scanned(&self, piece: &[u8]) -> u32 {
        const NONE: u32 = u32::MAX;
        let n = piece.len();
        let mut start = [0usize; SCANNED + 1];
        let mut rank = [NONE; SCANNED];
        for (i, at) in start.iter_mut().enumerate().take(n + 1) {
            *at = i;
        }
        let pair =
            |start: &[usize], i: usize| self.rank(&piece[start[i]..start[i + 2]]).unwrap_or(NONE);
        for (i, r) in rank.iter_mut().enumerate().take(n - 1) {
            *r = pair(&start, i);
        }
        let mut parts = n;
        loop {
            let (mut best, mut at) = (NONE, 0);
            for (i, &r) in rank.iter().enumerate().take(parts - 1) {
                if r < best {
                    (best, at) = (r, i);
                }
            }
            if best == NONE {
                return parts as u32;
            }
            // Parts `at` and `at + 1` become one.
            start.copy_within(at + 2..=parts, at + 1);
            rank.copy_within(at + 2..parts, at + 1);
            parts -= 1;
            if at + 1 < parts {
                rank[at] = pair(&start, at);
            }
            if at > 0 {
                rank[at - 1] = pair(&start, at - 1);
            }
        }
    }
}

/// The merge's working memory, kept per thread between pieces.
#[derive(Default)]
struct Scratch {
    next: Vec<u32>,
    prev: Vec<u32>,
    heap: BinaryHeap<Reverse<(u32, u32, u32)>>,
}

/// Counts pieces of one encoding, remembering the short ones it met (per thread).
pub struct Counter<'a> {
    vocab: &'static Vocab,
    seen: &'a mut Seen,
    scratch: &'a mut Scratch,
}

/// Runs `f` with this thread's counter of `encoding`.
pub fn with_counter<R>(encoding: Encoding, f: impl FnOnce(&mut Counter<'_>) -> R) -> R {
    let vocab = Vocab::of(encoding);
    let slot = usize::from(encoding == Encoding::Cl100kBase);
    SEEN.with_borrow_mut(|seen| {
        SCRATCH.with_borrow_mut(|scratch| {
            f(&mut Counter {
                vocab,
                seen: seen[slot].get_or_insert_with(Seen::default),
                scratch,
            })
        })
    })
}

impl Counter<'_> {
    /// The number of tokens of one piece.
    #[inline]
    pub fn count(&mut self, piece: &[u8]) -> u32 {
        if piece.len() <= 1 {
            return piece.len() as u32;
        }
        let Some(key) = short_key(piece) else {
            return match self.vocab.rank_of_long(piece) {
                Some(_) => 1,
                None => self.vocab.merged_count(piece, self.scratch),
            };
        };
        let hash = key_hash(key);
        // The high bits place it here, the low bits in the vocabulary.
        let place = (hash >> (64 - SEEN_PLACES.trailing_zeros())) as usize;
        let [a, b] = self.seen.0[place];
        if a == key[0] && b & KEY_BITS == key[1] {
            return (b >> 40) as u32;
        }
        let n = match self.vocab.rank_of_key(key, hash) {
            Some(_) => 1,
            None => self.vocab.merged_count(piece, self.scratch),
        };
        self.seen.0[place] = [key[0], key[1] | u64::from(n) << 40];
        n
    }
}

/// Remembered pieces, a thread and an encoding (2 MiB): direct-mapped, so a lookup is one
/// place in memory, in one cache line. Sized on source text: 2^14 places missed one piece in
/// ten of the bench corpus (most of them merged again), 2^17 one in a hundred.
const SEEN_PLACES: usize = 1 << 17;

/// A remembered piece: its key's two words, with its count in the second word's top three
/// bytes, which a key leaves zero (a piece of twelve bytes has twelve tokens at most). All
/// zeros is empty (no key of a piece has length 0), so a table is allocated zeroed and the
/// pages a small count never touches are never mapped.
type Entry = [u64; 2];

struct Seen(Box<[Entry]>);

impl Default for Seen {
    fn default() -> Seen {
        Seen(vec![[0u64; 2]; SEEN_PLACES].into_boxed_slice())
    }
}

thread_local! {
    static SEEN: RefCell<[Option<Seen>; 2]> = const { RefCell::new([None, None]) };
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_token_is_found_at_its_own_rank() {
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let vocab = Vocab::of(encoding);
            let ranks = word(
                match encoding {
                    Encoding::O200kBase => O200K,
                    Encoding::Cl100kBase => CL100K,
                },
                0,
            );
            let mut found = 0;
            for rank in 0..ranks {
                let token = vocab.token(rank);
                if !token.is_empty() {
                    assert_eq!(vocab.rank(token), Some(rank), "{encoding:?} rank {rank}");
                    found += 1;
                }
            }
            let expected = match encoding {
                Encoding::O200kBase => 199_998,
                Encoding::Cl100kBase => 100_256,
            };
            assert_eq!(found, expected, "{encoding:?}");
            assert_eq!(vocab.rank(b"\xff\xfe\xfd not a token"), None);
        }
    }

    #[test]
    fn a_short_key_is_the_piece_zero_padded_with_its_length() {
        let bytes: Vec<u8> = (0..12u8).map(|i| i.wrapping_mul(37) ^ 0xa5).collect();
        for len in 0..=SHORT_MAX {
            let mut padded = [0u8; 16];
            padded[..len].copy_from_slice(&bytes[..len]);
            padded[12] = len as u8;
            let (lo, hi) = padded.split_at(8);
            let expected = [
                u64::from_le_bytes(lo.try_into().unwrap()),
                u64::from_le_bytes(hi.try_into().unwrap()),
            ];
            assert_eq!(short_key(&bytes[..len]), Some(expected), "length {len}");
        }
        assert_eq!(short_key(&[0; SHORT_MAX + 1]), None);
    }

    #[test]
    fn a_long_piece_is_merged_in_n_log_n_and_counted_like_tiktoken() {
        let bpe = tiktoken_rs::o200k_base_singleton();
        for piece in ["a".repeat(100_000), "ab".repeat(20_000), "xyz".repeat(333)] {
            let ours = with_counter(Encoding::O200kBase, |c| c.count(piece.as_bytes()));
            let theirs = bpe.encode_ordinary(&piece).len() as u32;
            assert_eq!(ours, theirs, "{} bytes", piece.len());
        }
    }
}
