//! A [`TokenCounter`] with the on-disk [`DigestCache`] in front of it.

use crate::util::cache::{DigestCache, Key, key_of, parse_key};

use super::TokenCounter;

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

    fn known_key(&self, len: u64, sha256: &[u8; 32]) -> Option<u64> {
        if len == 0 {
            return Some(0);
        }
        self.cache.get_key(sha256)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::model::Encoding;
    use crate::stages::tokens::Fast;

    const O200K: Encoding = Encoding::O200kBase;

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
}
