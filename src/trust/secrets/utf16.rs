//! De-interleaved views of UTF-16 text inside a byte buffer.
//!
//! A file may start as ASCII and carry UTF-16LE or UTF-16BE text later (a
//! resource blob, a Windows export). Byte patterns never see through the NUL
//! bytes of such text, so every run of at least [`MIN_RUN`] NUL-interleaved
//! ASCII characters is copied out into a plain view that is scanned too.

/// Shortest run of UTF-16 ASCII characters worth a view.
const MIN_RUN: usize = 8;

/// A plain-ASCII copy of the UTF-16 runs of a buffer, one run per line.
#[derive(Debug, Default)]
pub struct View {
    /// The de-interleaved characters, runs separated by `\n`.
    pub text: Vec<u8>,
    /// `(offset in text, offset in the original)` of each run's start.
    runs: Vec<(usize, usize)>,
}

impl View {
    /// The original offset of a byte of [`View::text`].
    pub fn original_offset(&self, offset: usize) -> usize {
        let index = self.runs.partition_point(|&(start, _)| start <= offset);
        match index.checked_sub(1).and_then(|i| self.runs.get(i)) {
            Some(&(start, original)) => original + 2 * (offset - start),
            None => 0,
        }
    }
}

/// Whether a byte is ASCII text (printable or common whitespace).
fn is_text(byte: u8) -> bool {
    matches!(byte, b'\t' | b'\n' | b'\r' | b' '..=b'~')
}

/// The little- and big-endian views of `bytes` (only those that hold runs).
pub fn views(bytes: &[u8]) -> Vec<View> {
    [false, true]
        .into_iter()
        .map(|big_endian| view(bytes, big_endian))
        .filter(|view| !view.runs.is_empty())
        .collect()
}

fn view(bytes: &[u8], big_endian: bool) -> View {
    // The character of the unit at `i`, if it is an ASCII one.
    let unit = |i: usize| -> Option<u8> {
        let (first, second) = (*bytes.get(i)?, *bytes.get(i + 1)?);
        let (text, zero) = if big_endian {
            (second, first)
        } else {
            (first, second)
        };
        (zero == 0 && is_text(text)).then_some(text)
    };
    let mut out = View::default();
    let mut i = 0;
    while i + 1 < bytes.len() {
        let mut end = i;
        while unit(end).is_some() {
            end += 2;
        }
        let count = (end - i) / 2;
        if count >= MIN_RUN {
            let original = if big_endian { i + 1 } else { i };
            out.runs.push((out.text.len(), original));
            out.text.extend((0..count).filter_map(|k| unit(i + 2 * k)));
            out.text.push(b'\n');
            i = end;
        } else {
            i += 1;
        }
    }
    out
}
