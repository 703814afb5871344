//! sha256 helpers: full hex digests and the 12-digit short form of the manifest header.

use sha2::{Digest, Sha256};

/// The sha256 of `bytes` as 64 lower-case hex digits.
#[must_use]
pub fn hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The first 12 hex digits of the sha256 of `bytes`.
#[must_use]
pub fn hex12(bytes: &[u8]) -> String {
    let mut h = hex(bytes);
    h.truncate(12);
    h
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_digest() {
        assert_eq!(super::hex12(b""), "e3b0c44298fc");
    }
}
