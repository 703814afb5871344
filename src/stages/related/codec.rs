//! The byte format the kept indexes share (the `--related` index, the task's word index):
//! LEB128 integers, length-prefixed bytes, stamps, a checksum over the whole, and a head of
//! magic, version, fingerprint, root and vocabulary that [`head`] checks.

use crate::outline::Vocab;
use crate::util::stamp::Stamp;

/// An index file's checked head: the checksum over the rest, the magic and version, the
/// fingerprint of what made it, the root it is of; then its vocabulary. The reader is left
/// at the entries, over the bytes the checksum covers. `None`: not such a file.
pub(super) fn head<'a>(
    bytes: &'a [u8],
    magic: &[u8],
    version: u8,
    fingerprint: &[u8],
    root: &[u8],
) -> Option<(Reader<'a>, Vocab)> {
    let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(8)?)?;
    if checksum(body).to_le_bytes() != sum {
        return None;
    }
    let mut r = Reader { bytes: body, at: 0 };
    if r.take(magic.len())? != magic || r.take(1)? != [version] {
        return None;
    }
    if r.take(32)? != fingerprint || r.bytes_()? != root {
        return None;
    }
    let n = r.len()?;
    let mut vocab = Vocab::default();
    for _ in 0..n {
        if !vocab.push(r.bytes_()?) {
            return None;
        }
    }
    Some((r, vocab))
}

/// A 64-bit checksum of `bytes` ([`Checksum`]).
pub(super) fn checksum(bytes: &[u8]) -> u64 {
    let mut sum = Checksum::new();
    sum.feed(bytes);
    sum.finish()
}

/// A 64-bit checksum (FNV-1a over 8-byte words, then the length) fed in pieces of any
/// size: a damaged index is not read.
#[derive(Debug, Default)]
pub(super) struct Checksum {
    h: u64,
    /// The bytes fed so far.
    pub(super) len: u64,
    /// The bytes of a word not whole yet.
    carry: [u8; 8],
    held: usize,
}

impl Checksum {
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    pub(super) fn new() -> Checksum {
        Checksum {
            h: 0xcbf2_9ce4_8422_2325,
            ..Checksum::default()
        }
    }

    pub(super) fn feed(&mut self, mut bytes: &[u8]) {
        self.len += bytes.len() as u64;
        if self.held > 0 {
            let take = (8 - self.held).min(bytes.len());
            self.carry[self.held..self.held + take].copy_from_slice(&bytes[..take]);
            self.held += take;
            bytes = &bytes[take..];
            if self.held < 8 {
                return;
            }
            self.word(self.carry);
            self.held = 0;
        }
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.word(w);
        }
        let rest = chunks.remainder();
        self.carry[..rest.len()].copy_from_slice(rest);
        self.held = rest.len();
    }

    fn word(&mut self, w: [u8; 8]) {
        self.h = (self.h ^ u64::from_le_bytes(w))
            .wrapping_mul(Self::PRIME)
            .rotate_left(29);
    }

    pub(super) fn finish(self) -> u64 {
        let mut h = self.h;
        for &b in &self.carry[..self.held] {
            h = (h ^ u64::from(b)).wrapping_mul(Self::PRIME);
        }
        (h ^ self.len).wrapping_mul(Self::PRIME)
    }
}

pub(super) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

pub(super) fn unzigzag(v: u64) -> i64 {
    (v >> 1).cast_signed() ^ -(v & 1).cast_signed()
}

/// An unsigned LEB128 integer.
pub(super) fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(super) fn put_len(out: &mut Vec<u8>, n: usize) {
    put(out, n as u64);
}

pub(super) fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_len(out, b.len());
    out.extend_from_slice(b);
}

pub(super) fn put_stamp(out: &mut Vec<u8>, st: &Stamp) {
    put(out, st.size);
    put(out, zigzag(st.mtime.0));
    put(out, u64::from(st.mtime.1));
    put(out, zigzag(st.ctime.0));
    put(out, u64::from(st.ctime.1));
    put(out, st.ino);
    put(out, st.dev);
}

/// Reads what `put*` wrote; `None` past the end or on a malformed value.
pub(super) struct Reader<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) at: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(out)
    }

    pub(super) fn int(&mut self) -> Option<u64> {
        // Most values take one byte.
        if let Some(&b) = self.bytes.get(self.at)
            && b < 0x80
        {
            self.at += 1;
            return Some(u64::from(b));
        }
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = *self.take(1)?.first()?;
            v |= u64::from(b & 0x7f).checked_shl(shift)?;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    /// A count, never more than the bytes left (each item takes at least one).
    pub(super) fn len(&mut self) -> Option<usize> {
        let n = usize::try_from(self.int()?).ok()?;
        (n <= self.bytes.len() - self.at).then_some(n)
    }

    pub(super) fn bytes_(&mut self) -> Option<&'a [u8]> {
        let n = self.len()?;
        self.take(n)
    }

    /// What [`put_stamp`] wrote.
    pub(super) fn stamp(&mut self) -> Option<Stamp> {
        Some(Stamp {
            size: self.int()?,
            mtime: (unzigzag(self.int()?), u32::try_from(self.int()?).ok()?),
            ctime: (unzigzag(self.int()?), u32::try_from(self.int()?).ok()?),
            ino: self.int()?,
            dev: self.int()?,
        })
    }

    pub(super) fn text(&mut self) -> Option<String> {
        std::str::from_utf8(self.bytes_()?).ok().map(str::to_owned)
    }
}
