//! The runs of token bytes a rule without keywords searches (`runs = true` in
//! `rules.toml`): the keyword pass reports every eight-byte block made of token bytes only
//! (`keywords.rs`), and each run holding such a block becomes a region, the run and the
//! byte on either side. A run of [`MIN_RUN`] bytes or more always holds one, wherever it
//! lies, so what a run rule finds does not depend on a token's offset in the file.

use super::layout::is_run_byte;

/// The shortest run searched: a run rule's matches are token bytes only, this many at least.
pub const MIN_RUN: usize = 20;
/// The longest: a longer run (a base64 blob, a minified line without quotes) is data, not a
/// credential, and is not searched.
pub const MAX_RUN: usize = 1024;

/// The regions found so far, in order, merged where they touch.
#[derive(Debug, Default)]
pub(super) struct Runs {
    pub regions: Vec<(usize, usize)>,
    /// The end of the last run measured: the blocks inside it are skipped.
    covered: usize,
}

impl Runs {
    /// The block of token bytes at `offset` (eight of them) of `bytes`.
    pub fn block(&mut self, bytes: &[u8], offset: usize) {
        if offset < self.covered {
            return;
        }
        // The run's first full block lies within its first fifteen bytes.
        let head = bytes
            .get(offset.saturating_sub(8)..offset)
            .unwrap_or_default();
        let start = offset
            - head
                .iter()
                .rev()
                .take_while(|&&byte| is_run_byte(byte))
                .count();
        let end = bytes
            .get(offset..)
            .unwrap_or_default()
            .iter()
            .position(|&byte| !is_run_byte(byte))
            .map_or(bytes.len(), |length| offset + length);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn regions(text: &str) -> Vec<(usize, usize)> {
        let bytes = text.as_bytes();
        let mut runs = Runs::default();
        for offset in (0..bytes.len() / 8).map(|block| block * 8) {
            if bytes[offset..offset + 8].iter().all(|&b| is_run_byte(b)) {
                runs.block(bytes, offset);
            }
        }
        runs.regions
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
        let blob = "A".repeat(MAX_RUN + 1);
        assert!(regions(&format!("x {blob} y")).is_empty());
        assert_eq!(
            regions("a = \"one_two_three_four_five\"; b = \"six_seven_eight_nine_ten\"").len(),
            2
        );
    }
}
