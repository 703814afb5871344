//! The keyword pass: every occurrence of every rule keyword (ASCII
//! case-insensitive, overlapping), found by a trie walk behind a prefilter.
//!
//! A plain Aho-Corasick DFA walk costs one dependent table load a byte, which
//! holds it near 350 MiB/s on this project's 2 GHz test machine whatever the
//! text. The prefilter has no chain between bytes: the keywords' first four
//! bytes (any fourth byte for a three-byte keyword) are put in 64 buckets, and
//! four tables of 256 bucket masks (one per offset, both cases of a letter
//! set) say which buckets a byte may start or continue. A position is a
//! candidate when one bucket accepts all four bytes from it; only there is the
//! keywords' trie walked from it, until it has no edge for the next byte. Eight
//! bytes are stepped at a time and looked at again only when one of them ended
//! a candidate. The tables have no false negatives (every keyword sets its
//! bits), so the finds are exactly those of an unanchored overlapping search;
//! the equivalence is tested against `AhoCorasick::find_overlapping_iter`. The
//! tables and the trie are laid out in `layout.rs`, for the embedded rules at
//! build time.

use super::layout::{Layout, WINDOW};

/// The keyword finder.
#[derive(Debug)]
pub(super) struct Keywords {
    layout: Layout,
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

impl Keywords {
    /// Build the finder over the keywords (an empty one is never found; the rules
    /// table asks for three bytes at least).
    ///
    /// # Errors
    /// More keyword bytes than the trie holds.
    pub(super) fn new(keywords: &[String]) -> Result<Self, String> {
        super::layout::layout(keywords).map(Self::laid_out)
    }

    /// The finder over tables laid out already (the embedded rules', at build time).
    pub(super) fn laid_out(layout: Layout) -> Self {
        Self { layout }
    }

    /// Call `found(keyword, start, end)` for every occurrence of every
    /// keyword, ordered by start (and, at one start, by end).
    pub(super) fn each(&self, bytes: &[u8], mut found: impl FnMut(usize, usize, usize)) {
        let tables = &*self.layout.tables;
        let mut heads = Heads::default();
        // Eight bytes at a time, asking only once whether any of them ended a candidate:
        // most blocks end none, and the block is walked again only when one did.
        let mut blocks = bytes.chunks_exact(8);
        for (index, block) in (&mut blocks).enumerate() {
            let before = heads;
            let mut any = 0;
            for &byte in block {
                any |= heads.step(tables, byte);
            }
            if any != 0 {
                heads = before;
                for (offset, &byte) in block.iter().enumerate() {
                    if heads.step(tables, byte) != 0 {
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
            if heads.step(tables, byte) != 0
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
        let Layout {
            root,
            first_edge,
            edges,
            ends,
            ..
        } = &self.layout;
        let Some(mut node) = bytes
            .get(start)
            .and_then(|&byte| root.get(usize::from(byte)))
            .and_then(|&next| next.checked_sub(1))
        else {
            return;
        };
        let mut end = start + 1;
        loop {
            let node_index = node as usize;
            if let Some(keyword) = ends.get(node_index).and_then(|k| k.checked_sub(1)) {
                found(keyword as usize, start, end);
            }
            let (Some(&byte), Some(&from), Some(&to)) = (
                bytes.get(end),
                first_edge.get(node_index),
                first_edge.get(node_index + 1),
            ) else {
                return;
            };
            let byte = u32::from(byte.to_ascii_lowercase());
            let Some(edge) = edges
                .get(from as usize..to as usize)
                .and_then(|edges| edges.iter().find(|&&edge| edge >> 24 == byte))
            else {
                return;
            };
            node = edge & 0x00ff_ffff;
            end += 1;
        }
    }
}

/// Whether every match of a `token` pattern (the rule's pattern is `\b(?P<secret>TOKEN)`
/// and a tail of one character) lies on the line of one of its keywords, so that searching
/// the lines around the keywords finds exactly what searching the whole text finds: the
/// token cannot match a line break, and every match starts with a literal that holds a
/// keyword (regex-syntax's prefix literals, ASCII case folded as the keyword finder folds
/// it). Anything the proof cannot show (a class with `\n`, a prefix set too large or with
/// an empty literal) keeps the rule on the whole text.
pub(super) fn token_near_keywords(token: &str, keywords: &[String]) -> bool {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    let Ok(hir) = regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .build()
        .parse(token)
    else {
        return false;
    };
    if can_match_a_line_break(&hir) {
        return false;
    }
    // A class of up to 64 bytes is spelled out (`[A-Za-z0-9]` after `s.`), and the prefixes
    // stop growing at 256 (a rule compiles on the hook's path: this costs microseconds).
    let mut extractor = Extractor::new();
    extractor
        .kind(ExtractKind::Prefix)
        .limit_class(64)
        .limit_total(256);
    let prefixes = extractor.extract(&hir);
    prefixes.literals().is_some_and(|literals| {
        !literals.is_empty()
            && literals.iter().all(|literal| {
                let bytes = literal.as_bytes();
                keywords.iter().any(|keyword| {
                    bytes
                        .windows(keyword.len())
                        .any(|w| w.eq_ignore_ascii_case(keyword.as_bytes()))
                })
            })
    })
}

/// Whether some match of `hir` can hold a `\n`.
fn can_match_a_line_break(hir: &regex_syntax::hir::Hir) -> bool {
    use regex_syntax::hir::{Class, HirKind};
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => false,
        HirKind::Literal(literal) => literal.0.contains(&b'\n'),
        HirKind::Class(Class::Bytes(class)) => class
            .ranges()
            .iter()
            .any(|r| (r.start()..=r.end()).contains(&b'\n')),
        HirKind::Class(Class::Unicode(class)) => class
            .ranges()
            .iter()
            .any(|r| (r.start()..=r.end()).contains(&'\n')),
        HirKind::Repetition(repetition) => can_match_a_line_break(&repetition.sub),
        HirKind::Capture(capture) => can_match_a_line_break(&capture.sub),
        HirKind::Concat(subs) | HirKind::Alternation(subs) => {
            subs.iter().any(can_match_a_line_break)
        }
    }
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
            let mut list: Vec<String> = list.into_iter().map(|k| k.to_ascii_lowercase()).collect();
            // Distinct, as the rules' keyword index gives them.
            let mut seen = std::collections::HashSet::new();
            list.retain(|k| seen.insert(k.clone()));
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
        use super::super::layout::{BUCKETS, Bucket, buckets};
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
