//! The pre-tokenizers of `o200k_base` and `cl100k_base`: text cut into the pieces tiktoken's
//! patterns cut it into, by hand instead of by regex.
//!
//! A regex engine pays a search's setup for every piece (about four bytes of source each);
//! here one pass classifies each character once (a table for ASCII, Unicode's categories
//! from `regex-syntax`'s own tables otherwise) and follows each pattern's alternatives in
//! their order, with the backtracking of a Perl-style engine written out. The patterns
//! (`tiktoken-rs` 0.12's, which are tiktoken's) are quoted at each function; the tests
//! compare every cut with the patterns themselves run by `fancy-regex`.

use std::sync::OnceLock;

use crate::model::Encoding;

/// `\p{Lu}`, `\p{Lt}`.
const LU: u8 = 1;
/// `\p{Ll}`.
const LL: u8 = 1 << 1;
/// `\p{Lm}`, `\p{Lo}`.
const LO: u8 = 1 << 2;
/// `\p{M}`.
const MARK: u8 = 1 << 3;
/// `\p{N}`.
const NUM: u8 = 1 << 4;
/// `\s` (Unicode's White_Space).
const SPACE: u8 = 1 << 5;
/// `\r`, `\n`.
const BREAK: u8 = 1 << 6;

/// `\p{L}`.
const LETTER: u8 = LU | LL | LO;
/// o200k's `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
const UPPER: u8 = LU | LO | MARK;
/// o200k's `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
const LOWER: u8 = LL | LO | MARK;

/// `[^\r\n\p{L}\p{N}]`: what may stand before a word.
fn is_lead(class: u8) -> bool {
    class & (BREAK | LETTER | NUM) == 0
}

/// `[^\s\p{L}\p{N}]`: punctuation, symbols, marks.
fn is_other(class: u8) -> bool {
    class & (SPACE | LETTER | NUM) == 0
}

const ASCII: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        t[b] = if c.is_ascii_uppercase() {
            LU
        } else if c.is_ascii_lowercase() {
            LL
        } else if c.is_ascii_digit() {
            NUM
        } else if c == b'\r' || c == b'\n' {
            SPACE | BREAK
        } else if matches!(c, b'\t' | 0x0b | 0x0c | b' ') {
            SPACE
        } else {
            0
        };
        b += 1;
    }
    t
};

/// The ASCII fast path's byte classes: [`ASCII`]'s, with the bytes of other characters
/// (`WIDE`) told apart from punctuation (`OTHER`), so a run is one table lookup a byte.
mod byte {
    pub const UPPER: u8 = 1;
    pub const LOWER: u8 = 1 << 1;
    pub const DIGIT: u8 = 1 << 2;
    /// `\r`, `\n` (the other spaces have no bit: the fast path leaves them to
    /// [`super::Text::spaces`]).
    pub const BREAK: u8 = 1 << 3;
    /// `[^\s\p{L}\p{N}]` in ASCII.
    pub const OTHER: u8 = 1 << 4;
    /// A byte of a character beyond ASCII: the fast path hands the piece on.
    pub const WIDE: u8 = 1 << 5;
    pub const LETTER: u8 = UPPER | LOWER;
}

const BYTES: [u8; 256] = {
    let mut t = [byte::WIDE; 256];
    let mut b = 0;
    while b < 128 {
        let class = ASCII[b];
        t[b] = if class & LU != 0 {
            byte::UPPER
        } else if class & LL != 0 {
            byte::LOWER
        } else if class & NUM != 0 {
            byte::DIGIT
        } else if class & BREAK != 0 {
            byte::BREAK
        } else if class & SPACE != 0 {
            0
        } else {
            byte::OTHER
        };
        b += 1;
    }
    t
};

/// The classes of every code point, from `regex-syntax`'s Unicode tables: the ones the
/// patterns' `\p{…}` and `\s` stand for in every regex engine built on them.
fn unicode() -> &'static [u8] {
    static TABLE: OnceLock<Box<[u8]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = vec![0u8; 0x11_0000].into_boxed_slice();
        for (bits, pattern) in CLASSES {
            for (start, end) in ranges(pattern) {
                for c in &mut table[start as usize..=end as usize] {
                    *c |= bits;
                }
            }
        }
        table
    })
}

const CLASSES: [(u8, &str); 7] = [
    (LU, r"[\p{Lu}\p{Lt}]"),
    (LL, r"\p{Ll}"),
    (LO, r"[\p{Lm}\p{Lo}]"),
    (MARK, r"\p{M}"),
    (NUM, r"\p{N}"),
    (SPACE, r"\s"),
    (BREAK, r"[\r\n]"),
];

/// The code point ranges of a class pattern (none if it is not one, which the tests rule
/// out).
fn ranges(pattern: &str) -> Vec<(u32, u32)> {
    use regex_syntax::hir::{Class, HirKind};
    match regex_syntax::Parser::new()
        .parse(pattern)
        .map(regex_syntax::hir::Hir::into_kind)
    {
        Ok(HirKind::Class(Class::Unicode(class))) => class
            .iter()
            .map(|r| (u32::from(r.start()), u32::from(r.end())))
            .collect(),
        _ => Vec::new(),
    }
}

/// Text with its characters' classes.
struct Text<'a> {
    text: &'a str,
    bytes: &'a [u8],
}

impl Text<'_> {
    /// The class and UTF-8 length of the character at byte `i`, `None` at the end.
    #[allow(clippy::inline_always)] // the hot path: measured, not inlined without it
    #[inline(always)]
    fn at(&self, i: usize) -> Option<(u8, usize)> {
        let &b = self.bytes.get(i)?;
        if b < 0x80 {
            Some((ASCII[usize::from(b)], 1))
        } else {
            self.at_unicode(i)
        }
    }

    #[inline(never)]
    fn at_unicode(&self, i: usize) -> Option<(u8, usize)> {
        let c = self.text.get(i..)?.chars().next()?;
        Some((unicode()[c as usize], c.len_utf8()))
    }

    /// The end of the run of characters from `i` whose class `keep` accepts.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn run(&self, mut i: usize, keep: impl Fn(u8) -> bool) -> usize {
        while let Some(&b) = self.bytes.get(i) {
            if b < 0x80 {
                if !keep(ASCII[usize::from(b)]) {
                    break;
                }
                i += 1;
            } else {
                match self.at_unicode(i) {
                    Some((class, len)) if keep(class) => i += len,
                    _ => break,
                }
            }
        }
        i
    }

    fn byte(&self, i: usize) -> Option<u8> {
        self.bytes.get(i).copied()
    }

    /// `'(?i:s|t|re|ve|m|ll|d)` at `i`: its length. Case-insensitive as the regex engines
    /// fold it: `s` is also `ſ` (U+017F).
    fn contraction(&self, i: usize) -> Option<usize> {
        if self.byte(i)? != b'\'' {
            return None;
        }
        let is = |at: usize, letter: u8| {
            self.byte(i + at)
                .is_some_and(|b| b.eq_ignore_ascii_case(&letter))
        };
        if is(1, b's') || is(1, b't') || is(1, b'm') || is(1, b'd') {
            Some(2)
        } else if self.bytes.get(i + 1..i + 3) == Some("ſ".as_bytes())
            || (is(1, b'r') || is(1, b'v')) && is(2, b'e')
            || is(1, b'l') && is(2, b'l')
        {
            Some(3)
        } else {
            None
        }
    }

    /// `\s…` at `i` (a space): the end of the run, the end of its last line break, and
    /// the start of its last character.
    fn spaces(&self, i: usize) -> (usize, Option<usize>, usize) {
        let (mut end, mut broken, mut last) = (i, None, i);
        while let Some((class, len)) = self.at(end) {
            if class & SPACE == 0 {
                break;
            }
            last = end;
            end += len;
            if class & BREAK != 0 {
                broken = Some(end);
            }
        }
        (end, broken, last)
    }

    /// ` ?[^\s\p{L}\p{N}]+[\r\n…]*` at `i` (`also` the other bytes of the tail class).
    fn punctuation(&self, i: usize, class: u8, also: &[u8]) -> Option<usize> {
        let start =
            if self.byte(i) == Some(b' ') && self.at(i + 1).is_some_and(|(c, _)| is_other(c)) {
                i + 1
            } else if is_other(class) {
                i
            } else {
                return None;
            };
        let mut end = self.run(start, is_other);
        while let Some(b) = self.byte(end) {
            if b != b'\r' && b != b'\n' && !also.contains(&b) {
                break;
            }
            end += 1;
        }
        Some(end)
    }

    /// `\p{N}{1,3}` at `i`.
    fn digits(&self, i: usize) -> usize {
        let mut end = i;
        for _ in 0..3 {
            match self.at(end) {
                Some((class, len)) if class & NUM != 0 => end += len,
                _ => break,
            }
        }
        end
    }

    /// o200k's `[UPPER]*[LOWER]+(?i:'s|…)?` at `i`. The greedy `*` gives characters back
    /// until a `[LOWER]` can start: past the run of uppers when a lower follows it, else
    /// at the run's last character that is both (`\p{Lm}`, `\p{Lo}`, `\p{M}`).
    fn o200k_lower(&self, i: usize) -> Option<usize> {
        let (mut end, mut after_lower) = (i, None);
        while let Some((class, len)) = self.at(end) {
            if class & UPPER == 0 {
                break;
            }
            end += len;
            if class & LOWER != 0 {
                after_lower = Some(end);
            }
        }
        let end = match self.at(end) {
            Some((class, _)) if class & LOWER != 0 => self.run(end, |c| c & LOWER != 0),
            _ => after_lower?,
        };
        Some(end + self.contraction(end).unwrap_or(0))
    }

    /// o200k's `[UPPER]+[LOWER]*(?i:'s|…)?` at `i`.
    fn o200k_upper(&self, i: usize) -> Option<usize> {
        let uppers = self.run(i, |c| c & UPPER != 0);
        if uppers == i {
            return None;
        }
        let end = self.run(uppers, |c| c & LOWER != 0);
        Some(end + self.contraction(end).unwrap_or(0))
    }

    /// The end of the o200k piece at `i`:
    /// `[^\r\n\p{L}\p{N}]?[UPPER]*[LOWER]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
    /// `|[^\r\n\p{L}\p{N}]?[UPPER]+[LOWER]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
    /// `|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
    fn o200k(&self, i: usize) -> Option<usize> {
        let (class, len) = self.at(i)?;
        let lead = is_lead(class);
        // A word alternative starts with an `[UPPER]` or `[LOWER]` character, at `i` or right
        // after a lead: one that cannot (spaces, digits, most punctuation) is not tried.
        let lettered = |c: u8| c & (UPPER | LOWER) != 0;
        let here = lettered(class);
        let after = lead && self.at(i + len).is_some_and(|(next, _)| lettered(next));
        if here || after {
            let word = (after.then(|| self.o200k_lower(i + len)).flatten())
                .or_else(|| here.then(|| self.o200k_lower(i)).flatten())
                .or_else(|| after.then(|| self.o200k_upper(i + len)).flatten())
                .or_else(|| here.then(|| self.o200k_upper(i)).flatten());
            if word.is_some() {
                return word;
            }
        }
        if class & NUM != 0 {
            return Some(self.digits(i));
        }
        if let Some(end) = self.punctuation(i, class, b"/") {
            return Some(end);
        }
        Some(self.o200k_spaces(i, self.spaces(i)))
    }

    /// o200k's `\s*[\r\n]+|\s+(?!\S)|\s+` at `i`, from the run of spaces there (its end,
    /// the end of its last line break, the start of its last character): through the last
    /// line break; else the whole run at the end of the text or when it is one character;
    /// else all but its last character, which goes with what follows.
    fn o200k_spaces(&self, i: usize, (end, broken, last): (usize, Option<usize>, usize)) -> usize {
        if let Some(broken) = broken {
            broken
        } else if end == self.bytes.len() || last == i {
            end
        } else {
            last
        }
    }

    /// The fast path's class of the byte at `i`; `0` past the end.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn byte_class(&self, i: usize) -> u8 {
        self.bytes.get(i).map_or(0, |&b| BYTES[usize::from(b)])
    }

    /// The end of the run of bytes from `i` whose class is in `keep`, and the class that
    /// stopped it (`0` at the end of the text).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn byte_run(&self, mut i: usize, keep: u8) -> (usize, u8) {
        loop {
            let class = self.byte_class(i);
            if class & keep == 0 {
                return (i, class);
            }
            i += 1;
        }
    }

    /// Where a run of bytes of class `kind` starts for the piece at `i` (of class `class`):
    /// at `i` when it is one, else at `i + 1` when `lead` lets the byte at `i` stand before
    /// the run; `None` when that next byte is beyond ASCII (the general path decides).
    #[allow(clippy::inline_always, clippy::option_option)]
    #[inline(always)]
    fn ascii_start(&self, i: usize, class: u8, kind: u8, lead: bool) -> Option<Option<usize>> {
        if class & kind != 0 {
            return Some(Some(i));
        }
        if !lead {
            return Some(None);
        }
        let next = self.byte_class(i + 1);
        if next & byte::WIDE != 0 {
            return None;
        }
        Some((next & kind != 0).then_some(i + 1))
    }

    /// [`Self::o200k`] for a piece decided by ASCII bytes alone: `None` as soon as the
    /// decision would look at a byte of any other character, which the general path then
    /// takes. In ASCII no character is both an `[UPPER]` and a `[LOWER]`, so a word is a run
    /// of capitals then a run of small letters, with no giving back.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn o200k_ascii(&self, i: usize) -> Option<usize> {
        use byte::{BREAK, DIGIT, LETTER, LOWER, OTHER, UPPER, WIDE};
        let class = self.byte_class(i);
        if class & WIDE != 0 {
            return None;
        }
        // After a lead (`[^\r\n\p{L}\p{N}]`), a word when a letter follows it.
        let word = self.ascii_start(i, class, LETTER, class & (BREAK | DIGIT) == 0)?;
        if let Some(start) = word {
            let (mut end, mut stop) = self.byte_run(start, UPPER);
            if stop & LOWER != 0 {
                (end, stop) = self.byte_run(end, LOWER);
            }
            if stop & WIDE != 0 {
                return None;
            }
            return Some(end + self.contraction(end).unwrap_or(0));
        }
        if class & DIGIT != 0 {
            let mut end = i + 1;
            while end < i + 3 {
                let next = self.byte_class(end);
                if next & WIDE != 0 {
                    return None;
                }
                if next & DIGIT == 0 {
                    break;
                }
                end += 1;
            }
            return Some(end);
        }
        let punctuation = self.ascii_start(i, class, OTHER, self.bytes[i] == b' ')?;
        if let Some(start) = punctuation {
            let (mut end, stop) = self.byte_run(start, OTHER);
            if stop & WIDE != 0 {
                return None;
            }
            while matches!(self.byte(end), Some(b'\r' | b'\n' | b'/')) {
                end += 1;
            }
            return Some(end);
        }
        // Spaces: the general reading is exact whatever follows them (and is a table lookup
        // a character in ASCII too).
        Some(self.o200k_spaces(i, self.spaces(i)))
    }

    /// The end of the cl100k piece at `i`:
    /// `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+`
    /// `| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`
    fn cl100k(&self, i: usize) -> Option<usize> {
        let (class, len) = self.at(i)?;
        if let Some(n) = self.contraction(i) {
            return Some(i + n);
        }
        // `?+` keeps the lead once taken: without a letter after it, no word at all.
        let letters = if is_lead(class) { i + len } else { i };
        if self.at(letters).is_some_and(|(c, _)| c & LETTER != 0) {
            return Some(self.run(letters, |c| c & LETTER != 0));
        }
        if class & NUM != 0 {
            return Some(self.digits(i));
        }
        if let Some(end) = self.punctuation(i, class, b"") {
            return Some(end);
        }
        let (end, broken, last) = self.spaces(i);
        Some(if end == self.bytes.len() {
            end
        } else if let Some(broken) = broken {
            broken
        } else if last == i {
            end
        } else {
            last
        })
    }
}

/// Calls `piece` with each piece of `text`, in order; the pieces make up the text.
pub fn split(encoding: Encoding, text: &str, mut piece: impl FnMut(&[u8])) {
    let t = Text {
        text,
        bytes: text.as_bytes(),
    };
    let mut i = 0;
    while i < t.bytes.len() {
        let end = match encoding {
            Encoding::O200kBase => t.o200k_ascii(i).or_else(|| t.o200k(i)),
            Encoding::Cl100kBase => t.cl100k(i),
        };
        // Every character starts a piece of one pattern or another; never stall.
        let end = end
            .filter(|&e| e > i)
            .unwrap_or_else(|| i + t.at(i).map_or(1, |(_, len)| len));
        piece(&t.bytes[i..end]);
        i = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

    fn theirs(encoding: Encoding, text: &str) -> Vec<String> {
        static REGEXES: std::sync::LazyLock<[fancy_regex::Regex; 2]> =
            std::sync::LazyLock::new(|| {
                [tiktoken_rs::O200K_BASE_PAT_STR, CL100K_PATTERN]
                    .map(|p| fancy_regex::Regex::new(p).unwrap())
            });
        REGEXES[usize::from(encoding == Encoding::Cl100kBase)]
            .find_iter(text)
            .map(|m| m.unwrap().as_str().to_owned())
            .collect()
    }

    fn ours(encoding: Encoding, text: &str) -> Vec<String> {
        let mut v = Vec::new();
        split(encoding, text, |p| {
            v.push(String::from_utf8(p.to_vec()).unwrap());
        });
        v
    }

    #[test]
    fn the_ascii_table_is_regex_syntax_s_classes() {
        let table = unicode();
        for b in 0..128 {
            assert_eq!(ASCII[b], table[b], "byte {b:#x}");
        }
        for (bits, pattern) in CLASSES {
            assert!(!ranges(pattern).is_empty(), "{pattern} (bits {bits})");
        }
    }

    #[test]
    fn contractions_fold_as_the_regex_engines_fold_them() {
        // Every character `(?i)` matches for the contractions' letters.
        let folded = ranges(r"(?i)[stmdrvel]");
        let count: u32 = folded.iter().map(|(a, b)| b - a + 1).sum();
        // The ASCII letters twice, and ſ (U+017F) for s: nothing else to fold.
        assert_eq!(count, 8 * 2 + 1, "{folded:?}");
        assert!(folded.contains(&(0x17f, 0x17f)));
    }

    #[test]
    fn pieces_are_the_patterns_pieces_on_hand_picked_text() {
        let texts = [
            "it's  don't I'M 'S they'LL 12345 1234567 \n\n  \t \r\n   ",
            "DON'T Don'T dON'T o'ſ 'ſ 'Ll 'rE 've",
            "CamelCaseWords HTTPServer iOS ǅungla ǅ Ǆ\u{301}a a\u{301}\u{302}b \u{301}x \u{301}",
            "trailing   ",
            "  \n  ",
            "\n  x",
            "a /b //c\n//d !!\n\n// e",
            " !?\r\n\r\nnext \u{a0}\u{a0}word \u{3000}\u{2028}z",
            "١٢٣٤ ²³ ⅫⅩ 12\u{663}4",
            "日本語のテキスト、かな。Ελληνικά Русский текст עִבְרִית",
            "emoji 🦀🦀 x🦀y \u{200d}\u{fe0f}",
            "tabs\t\tand\t \tspaces \t",
            "x\u{b}\u{c}y\u{85}z\u{1c}w",
            "",
            " ",
            "'",
            "\u{fffd}\u{fffd}a",
        ];
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            for text in texts {
                assert_eq!(
                    ours(encoding, text),
                    theirs(encoding, text),
                    "{encoding:?} {text:?}"
                );
            }
        }
    }

    fn a_char() -> impl Strategy<Value = char> {
        prop::sample::select(vec![
            'a',
            'b',
            's',
            't',
            'l',
            'd',
            'e',
            'r',
            'v',
            'm',
            'A',
            'S',
            'T',
            'L',
            'D',
            'E',
            'R',
            'V',
            'M',
            'ſ',
            '\'',
            ' ',
            ' ',
            ' ',
            '\t',
            '\n',
            '\r',
            '\u{b}',
            '\u{a0}',
            '\u{3000}',
            '\u{2028}',
            '\u{85}',
            '0',
            '7',
            '٣',
            '²',
            'Ⅻ',
            '/',
            '!',
            '.',
            '-',
            '_',
            '(',
            '{',
            '\u{301}',
            '\u{94d}',
            'ǅ',
            'Ǆ',
            'ǆ',
            'ʰ',
            '日',
            'か',
            'é',
            'É',
            'ß',
            'Ω',
            'ж',
            '🦀',
            '\u{200d}',
            '\u{fffd}',
            '\u{1d400}',
            '\u{1d41a}',
        ])
    }

    /// Any ASCII character, and now and then one that is not: the fast path's text, and
    /// where it hands a piece on.
    fn an_ascii_char() -> impl Strategy<Value = char> {
        prop_oneof![
            20 => (0u8..128).prop_map(char::from),
            1 => a_char(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
        #[test]
        fn pieces_of_ascii_text_are_the_patterns_pieces(chars in prop::collection::vec(an_ascii_char(), 0..60)) {
            let text: String = chars.into_iter().collect();
            for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
                prop_assert_eq!(ours(encoding, &text), theirs(encoding, &text), "{:?} {:?}", encoding, text);
            }
        }

        #[test]
        fn pieces_are_the_patterns_pieces(chars in prop::collection::vec(a_char(), 0..40)) {
            let text: String = chars.into_iter().collect();
            for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
                prop_assert_eq!(ours(encoding, &text), theirs(encoding, &text), "{:?} {:?}", encoding, text);
            }
        }
    }
}
