//! The runs of token bytes a rule without keywords searches (`runs = true` in
//! `rules.toml`): a pass with no branch and no load marks every eight-byte block of letters
//! and digits only (eight bytes tested at once, [`alnum_blocks`]), and each run of token bytes that holds such a block, is
//! [`MIN_RUN`] to [`MAX_RUN`] bytes long and holds [`STRETCH`] letters and digits in a row
//! (a digit and a letter among them) becomes a region: the run and the byte on either side.
//! Such a stretch always holds a marked block, wherever it lies, so what a run rule finds
//! does not depend on a token's offset in the file; most runs of code (`snake_case_2`,
//! `a.b.c`, paths) hold none and cost nothing.

/// Whether a byte may be part of a token: `A-Z a-z 0-9 _ - . + / =`.
pub const fn is_run_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.' | b'+' | b'/' | b'=')
}

/// One bit for every eight-byte block of `bytes` (bit `i % 64` of word `i / 64` for the
/// block at `8 * i`), set when the block is ASCII letters and digits only. Every sixteen
/// letters and digits in a row hold such a block, wherever they lie.
pub fn alnum_blocks(bytes: &[u8]) -> Vec<u64> {
    let mut blocks = vec![0u64; bytes.len() / 512 + 1];
    // 64 bytes at a time: a flag a byte, in a loop the compiler turns into vector
    // instructions (no branch, no table), then one compare a block of eight.
    for (index, chunk) in bytes.chunks(64).enumerate() {
        let mut flags = [0u8; 64];
        for (flag, &byte) in flags.iter_mut().zip(chunk) {
            *flag = u8::from(byte.wrapping_sub(b'0') < 10)
                | u8::from((byte | 0x20).wrapping_sub(b'a') < 26);
        }
        let mut word = 0u64;
        for (block, eight) in flags.chunks_exact(8).enumerate() {
            let all = u64::from_le_bytes(eight.try_into().unwrap_or_default());
            word |= u64::from(all == 0x0101_0101_0101_0101) << block;
        }
        if let Some(slot) = blocks.get_mut(index / 8) {
            *slot |= word << (8 * (index % 8));
        }
    }
    blocks
}

/// The regions to search in `bytes`.
pub fn regions(bytes: &[u8]) -> Vec<(usize, usize)> {
    let blocks = alnum_blocks(bytes);
    let mut runs = Runs::default();
    for (index, &word) in blocks.iter().enumerate() {
        let mut word = word;
        while word != 0 {
            let bit = word.trailing_zeros() as usize;
            word &= word - 1;
            runs.block(bytes, (index * 64 + bit) * 8);
        }
    }
    runs.regions
}

/// The shortest run searched: a run rule's matches are token bytes only, this many at least.
pub const MIN_RUN: usize = 20;
/// The longest: a longer run (a base64 blob, a minified line without quotes) is data, not a
/// credential, and is not searched.
pub const MAX_RUN: usize = 1024;

/// The regions found so far, in order, merged where they touch.
#[derive(Debug, Default)]
struct Runs {
    regions: Vec<(usize, usize)>,
    /// The end of the last run measured: the blocks inside it are skipped.
    covered: usize,
}

impl Runs {
    /// The block of letters and digits at `offset` (eight of them) of `bytes`.
    fn block(&mut self, bytes: &[u8], offset: usize) {
        if offset < self.covered {
            return;
        }
        // First the letters and digits around the block (a few bytes in code): too few, or
        // no digit among them, and the run is not measured at all.
        let (from, to) = extend(bytes, offset, u8::is_ascii_alphanumeric);
        let stretch = bytes.get(from..to).unwrap_or_default();
        if to - from < STRETCH
            || !stretch.iter().any(u8::is_ascii_digit)
            || !stretch.iter().any(u8::is_ascii_alphabetic)
        {
            self.covered = to;
            return;
        }
        let (start, end) = extend(bytes, offset, |&byte| is_run_byte(byte));
        self.covered = end;
        if !(MIN_RUN..=MAX_RUN).contains(&(end - start)) {
            return;
        }
        let region = (start.saturating_sub(1), (end + 1).min(bytes.len()));
        match self.regions.last_mut() {
            Some(last) if region.0 <= last.1 => last.1 = last.1.max(region.1),
            _ => self.regions.push(region),
        }
    }
}

/// The bytes around `offset` that `keep` takes, up to `MAX_RUN + 1` of them back (a run that
/// starts further back is too long anyway).
fn extend(bytes: &[u8], offset: usize, keep: impl Fn(&u8) -> bool) -> (usize, usize) {
    let head = bytes
        .get(offset.saturating_sub(MAX_RUN + 1)..offset)
        .unwrap_or_default();
    let start = offset - head.iter().rev().take_while(|&byte| keep(byte)).count();
    let end = bytes
        .get(offset..)
        .unwrap_or_default()
        .iter()
        .position(|byte| !keep(byte))
        .map_or(bytes.len(), |length| offset + length);
    (start, end)
}

/// The letters and digits in a row a run rule's token holds (`prefixed.rs` asks the same of
/// a body), a digit and a letter among them: most runs of code (`snake_case_names_2`,
/// `a.b.c`, paths) have none, and are not searched.
pub const STRETCH: usize = 16;

/// Whether `bytes` holds [`STRETCH`] letters and digits in a row, a digit and a letter among
/// them.
pub fn has_random_stretch(bytes: &[u8]) -> bool {
    let (mut length, mut last_digit, mut last_letter) = (0usize, None, None);
    for (index, &byte) in bytes.iter().enumerate() {
        if byte.is_ascii_digit() {
            last_digit = Some(index);
        } else if byte.is_ascii_alphabetic() {
            last_letter = Some(index);
        } else {
            length = 0;
            continue;
        }
        length += 1;
        let from = index + 1 - length.min(index + 1);
        if length >= STRETCH
            && last_digit.is_some_and(|d| d >= from)
            && last_letter.is_some_and(|l| l >= from)
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regions(text: &str) -> Vec<(usize, usize)> {
        super::regions(text.as_bytes())
    }

    #[test]
    fn a_block_is_marked_when_its_eight_bytes_are_letters_and_digits() {
        for byte in 0..=u8::MAX {
            for at in 0..8 {
                let mut text = *b"aZ09mQ7x";
                text[at] = byte;
                let marked = alnum_blocks(&text)[0] & 1 == 1;
                assert_eq!(marked, byte.is_ascii_alphanumeric(), "{byte} at {at}");
            }
        }
        let text = b"........abcdefgh.......";
        assert_eq!(alnum_blocks(text), vec![0b10]);
    }

    #[test]
    fn a_stretch_of_letters_and_digits_is_what_a_token_holds() {
        assert!(has_random_stretch(b"glpat-9xdGDFEOz4SpHbBVZ5fk"));
        assert!(has_random_stretch(b"a.b/0123456789abcdef"));
        assert!(!has_random_stretch(b"snake_case_names_with_words_2"));
        assert!(!has_random_stretch(b"abcdefghijklmnopqrstuvwxyz"));
        assert!(!has_random_stretch(b"1234567890123456789"));
        assert!(!has_random_stretch(b"0123456789abcde-f"));
    }

    #[test]
    fn a_run_is_found_at_any_offset_and_only_if_long_enough() {
        let token = "tok_Ab3dEf6hIj9kLm2nOp5q";
        for pad in 0..17 {
            let text = format!("{}{token} x", " ".repeat(pad));
            assert_eq!(
                regions(&text),
                vec![(pad.saturating_sub(1), pad + token.len() + 1)],
                "{pad}"
            );
            let short = format!("{}{} x", " ".repeat(pad), &token[..MIN_RUN - 1]);
            assert!(regions(&short).is_empty(), "{pad}");
        }
        let blob = "A1".repeat(MAX_RUN / 2 + 1);
        assert!(regions(&format!("x {blob} y")).is_empty());
        assert_eq!(
            regions("a = \"k_Xb3dEf6hIj9kLm2nOp5q\"; b = \"j_Yc4eFg7iJk0lMn3oPq6r\"").len(),
            2
        );
        assert!(
            regions("a = \"one_two_three_four_five\"; b = \"six_seven_eight_nine_10\"").is_empty()
        );
    }
}
