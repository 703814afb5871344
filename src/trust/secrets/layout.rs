//! The keyword finder's tables, laid out from the keywords: the prefilter's bucket masks
//! and a trie of the keywords for the anchored walk at a candidate (see `keywords.rs`).
//! `build.rs` includes this file too and writes the embedded rules' layout into the binary,
//! so a process builds nothing (laying out the 361 embedded keywords, and the Aho-Corasick
//! automaton this replaced, cost a short command about 3 ms); a table given as text is
//! laid out at run time by the same code.
//!
//! Buckets are chosen thus (under a millisecond): keywords sharing their first two bytes
//! start in one bucket (exact: `sk0` … `skf` is one set of first bytes, one of second bytes
//! and sixteen of third), then the two buckets whose union admits the fewest extra four-byte
//! strings merge until 64 are left, letters weighing more than digits and punctuation (they
//! are what text is made of). On Rust sources that leaves about one candidate in 100 bytes,
//! against one in 150 if every head had its own bucket.

use std::borrow::Cow;
use std::collections::BTreeMap;

/// Number of buckets: the bits of a mask.
pub const BUCKETS: usize = 64;
/// Bytes of a keyword's head the buckets look at (three-byte keywords admit any
/// fourth byte).
pub const WINDOW: usize = 4;
/// Bits of an edge that name its child node (the byte takes the top eight).
const CHILD_BITS: u32 = 24;

/// The finder's tables. Keywords are matched ASCII case-insensitively: the trie holds
/// them lower-cased, and a byte is lower-cased before it is looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Bucket masks by the byte at a keyword's offset 0, 1, 2 and 3.
    pub tables: Cow<'static, [[u64; 256]; WINDOW]>,
    /// The trie node after the root by a keyword's first byte (either case), plus one;
    /// 0: no keyword starts with the byte.
    pub root: Cow<'static, [u32]>,
    /// Where node `n`'s edges are in `edges`: `first_edge[n]..first_edge[n + 1]`.
    pub first_edge: Cow<'static, [u32]>,
    /// The edges, each node's sorted by byte: `byte << 24 | child`.
    pub edges: Cow<'static, [u32]>,
    /// The keyword that ends at node `n`, plus one; 0: none.
    pub ends: Cow<'static, [u32]>,
}

/// Lays out the finder for `keywords` (distinct, lower-case, at least one byte each).
///
/// # Errors
/// More keyword bytes than an edge can number.
pub fn layout(keywords: &[String]) -> Result<Layout, String> {
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
    // The trie: children by byte, in a map while it is built.
    let mut children: Vec<BTreeMap<u8, u32>> = vec![BTreeMap::new()];
    let mut ends = vec![0u32];
    for (index, keyword) in keywords.iter().enumerate() {
        let mut node = 0usize;
        for &byte in keyword.as_bytes() {
            let byte = byte.to_ascii_lowercase();
            let next = children.len();
            let child = *children[node].entry(byte).or_insert(next as u32);
            if child as usize == next {
                children.push(BTreeMap::new());
                ends.push(0);
            }
            node = child as usize;
        }
        if node != 0 {
            ends[node] = index as u32 + 1;
        }
    }
    if children.len() >= 1 << CHILD_BITS {
        return Err(format!(
            "{} keyword bytes are more than the finder holds",
            children.len()
        ));
    }
    let mut root = vec![0u32; 256];
    for (&byte, &child) in &children[0] {
        root[usize::from(byte)] = child + 1;
        root[usize::from(byte.to_ascii_uppercase())] = child + 1;
    }
    let mut first_edge = Vec::with_capacity(children.len() + 1);
    let mut edges = Vec::new();
    for node in &children {
        first_edge.push(edges.len() as u32);
        edges.extend(
            node.iter()
                .map(|(&byte, &child)| u32::from(byte) << CHILD_BITS | child),
        );
    }
    first_edge.push(edges.len() as u32);
    Ok(Layout {
        tables: Cow::Owned(tables),
        root: Cow::Owned(root),
        first_edge: Cow::Owned(first_edge),
        edges: Cow::Owned(edges),
        ends: Cow::Owned(ends),
    })
}

/// A set of bytes (lower-case folded), one bit a byte.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ByteSet([u64; 4]);

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

    pub fn bytes(self) -> impl Iterator<Item = u8> {
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
pub struct Bucket(pub [ByteSet; WINDOW]);

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

/// The keywords' first four bytes in at most [`BUCKETS`] buckets.
pub fn buckets(keywords: &[String]) -> Vec<Bucket> {
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
