// The keys and the hash of the embedded vocabulary tables, shared by `build.rs` (which lays
// the tables out) and `vocab.rs` (which looks pieces up in them): both must agree bit for
// bit. Not a defence against chosen keys: the tables are fixed, and what a caller caches
// with them is bounded.

/// The longest piece that is its own key.
pub const SHORT_MAX: usize = 12;

/// A piece of at most [`SHORT_MAX`] bytes as two words: its bytes, zero-padded, with its
/// length in the second word's fifth byte (so `"a"` and `"a\0"` differ).
#[inline]
#[must_use]
pub fn short_key(bytes: &[u8]) -> Option<[u64; 2]> {
    let len = bytes.len();
    if len > SHORT_MAX {
        return None;
    }
    let tag = (len as u64) << 32;
    Some(if len <= 8 {
        [le_word(bytes), tag]
    } else {
        let (head, tail) = bytes.split_at(8);
        [le_word(head), le_word(tail) | tag]
    })
}

/// At most eight bytes as a little-endian word, zero-extended: loads that overlap instead
/// of a copy into a buffer (which the hot path paid for in a store it then read back).
#[inline]
fn le_word(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    let four = |at: usize| {
        bytes
            .get(at..at + 4)
            .and_then(|w| <[u8; 4]>::try_from(w).ok())
            .map_or(0, |w| u64::from(u32::from_le_bytes(w)))
    };
    match n {
        0 => 0,
        1..=3 => {
            let byte = |at: usize| u64::from(bytes[at]) << (8 * at);
            byte(0) | byte(n / 2) | byte(n - 1)
        }
        _ => four(0) | four(n - 4) << (8 * (n - 4)),
    }
}

/// The hash of a short key.
#[inline]
#[must_use]
pub fn key_hash(key: [u64; 2]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let h = (key[0] ^ key[1].rotate_left(29)).wrapping_mul(K);
    h ^ (h >> 32)
}

/// The hash of any piece: a short one's key hash, else eight bytes at a time.
#[must_use]
pub fn vocab_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    if let Some(key) = short_key(bytes) {
        return key_hash(key);
    }
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    for chunk in bytes.chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    h ^ (h >> 29) ^ (h >> 47)
}
