//! Token counting behind one trait: a fast exact backend (GitHub's `bpe-openai`) by default,
//! `tiktoken-rs` as the reference it is tested against.
//!
//! Text is counted as ordinary text (special-token text such as `<|endoftext|>` is plain
//! text); invalid UTF-8 is decoded lossily first. Each BPE is built lazily, once per process,
//! and only when a count is actually needed.

use std::borrow::Cow;

/// Something that counts tokens of text.
pub trait TokenCounter: Sync {
    /// The number of tokens of `bytes` (lossily decoded when not UTF-8).
    fn count(&self, bytes: &[u8]) -> u64;

    /// Counts `bytes` whose sha256 (64 hex digits) the caller already has, which a caching
    /// counter uses as its key instead of hashing again.
    fn count_hashed(&self, bytes: &[u8], sha256: Option<&str>) -> u64 {
        let _ = sha256;
        self.count(bytes)
    }

    /// The count when it is known without tokenizing (a cache hit), else `None`.
    fn known(&self, bytes: &[u8], sha256: Option<&str>) -> Option<u64> {
        let _ = (bytes, sha256);
        None
    }
}

/// The default, fast, exact counter.
#[derive(Debug, Clone, Copy)]
pub struct Fast(pub Encoding);

fn text(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

impl TokenCounter for Fast {
    fn count(&self, bytes: &[u8]) -> u64 {
        let text = text(bytes);
        match Pretokenizer::get(self.0) {
            Some(pre) => pre.count(self.0, &text),
            // Our copy of the pre-tokenizer did not build (it always does): the library's own.
            None => tokenizer(self.0).count(text.as_ref()) as u64,
        }
    }
}

fn tokenizer(encoding: Encoding) -> &'static bpe_openai::Tokenizer {
    match encoding {
        Encoding::O200kBase => bpe_openai::o200k_base(),
        Encoding::Cl100kBase => bpe_openai::cl100k_base(),
    }
}

/// The pre-tokenizer of `bpe-openai` (the same patterns, with its pseudo look-ahead), run
/// with a regex cache per thread instead of the shared pool, and with a per-thread memo of
/// piece counts: source text repeats its pieces (keywords, indentation, names) all the time.
/// Counts are exactly `bpe-openai`'s (and tiktoken's): the tests compare them.
struct Pretokenizer {
    regex: regex_automata::meta::Regex,
    lookahead: [bool; 3],
}

/// The most pieces a thread remembers counts of.
const MEMO_LIMIT: usize = 65_536;
/// The longest piece (in bytes) a thread remembers the count of.
const MEMO_PIECE_MAX: usize = 32;

thread_local! {
    static CACHES: std::cell::RefCell<[Option<regex_automata::meta::Cache>; 2]> =
        const { std::cell::RefCell::new([None, None]) };
    static MEMO: std::cell::RefCell<[std::collections::HashMap<Box<[u8]>, u32>; 2]> =
        std::cell::RefCell::new([std::collections::HashMap::new(), std::collections::HashMap::new()]);
}

impl Pretokenizer {
    fn get(encoding: Encoding) -> Option<&'static Pretokenizer> {
        static O200K: std::sync::OnceLock<Option<Pretokenizer>> = std::sync::OnceLock::new();
        static CL100K: std::sync::OnceLock<Option<Pretokenizer>> = std::sync::OnceLock::new();
        let (cell, first) = match encoding {
            Encoding::O200kBase => (
                &O200K,
                [
                    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                    "\\p{N}{1,3}",
                    " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*",
                    "\\s*[\\r\\n]+",
                    "\\s+$",
                ]
                .join("|"),
            ),
            Encoding::Cl100kBase => (
                &CL100K,
                "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+$"
                    .to_owned(),
            ),
        };
        cell.get_or_init(|| {
            regex_automata::meta::Regex::new_many(&[first.as_str(), "\\s+\\s", "\\s+"])
                .ok()
                .map(|regex| Pretokenizer {
                    regex,
                    lookahead: [false, true, false],
                })
        })
        .as_ref()
    }

    fn count(&self, encoding: Encoding, text: &str) -> u64 {
        use regex_automata::{Anchored, Input};
        let slot = usize::from(encoding == Encoding::Cl100kBase);
        let bpe = &tokenizer(encoding).bpe;
        CACHES.with_borrow_mut(|caches| {
            MEMO.with_borrow_mut(|memos| {
                let cache = caches[slot].get_or_insert_with(|| self.regex.create_cache());
                let memo = &mut memos[slot];
                let mut total: u64 = 0;
                let mut last = 0;
                while last < text.len() {
                    let input = Input::new(&text[last..]).anchored(Anchored::Yes);
                    let Some(m) = self.regex.search_with(cache, &input) else {
                        break;
                    };
                    let start = last;
                    let mut end = last + m.range().end;
                    if self.lookahead[m.pattern().as_usize()] {
                        // The pseudo look-ahead: give the last character back.
                        end -= text[start..end]
                            .chars()
                            .next_back()
                            .map_or(0, char::len_utf8);
                    }
                    if end <= start {
                        // Never loop without progress (the patterns always consume).
                        break;
                    }
                    last = end;
                    let piece = &text.as_bytes()[start..end];
                    let n = if let Some(&n) = memo.get(piece) {
                        n
                    } else {
                        let n = u32::try_from(bpe.count(piece)).unwrap_or(u32::MAX);
                        // Long pieces rarely repeat: only short ones are worth their memory.
                        if piece.len() <= MEMO_PIECE_MAX && memo.len() < MEMO_LIMIT {
                            memo.insert(piece.into(), n);
                        }
                        n
                    };
                    total += u64::from(n);
                }
                total
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference counter (tiktoken-rs), slower to build and to run.
    #[derive(Debug, Clone, Copy)]
    struct Reference(Encoding);

    impl TokenCounter for Reference {
        fn count(&self, bytes: &[u8]) -> u64 {
            let bpe = match self.0 {
                Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
                Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            };
            bpe.encode_ordinary(text(bytes).as_ref()).len() as u64
        }
    }

    fn samples() -> Vec<Vec<u8>> {
        let mut v: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"fn main() {\n    println!(\"hello\");\n}\n".to_vec(),
            "Unicode: 上下文文件（必需）— naïve café 🦀🦀 \u{200d}\r\n"
                .as_bytes()
                .to_vec(),
            b"special <|endoftext|> text <|im_start|>".to_vec(),
            vec![0x66, 0x6f, 0xe9, 0x80, 0x20, 0x62, 0x61, 0x72],
            "    indented\n\n\n\t\ttabs   and   spaces   \n"
                .as_bytes()
                .to_vec(),
        ];
        let long: String = (0..2000).map(|i| format!("x{i}")).collect();
        v.push(long.into_bytes());
        let mut seed: u32 = 7;
        let alphabet: Vec<char> = "abc XYZ 0123 _-+=(){}[];:'\",.<>/?\n\té中😀"
            .chars()
            .collect();
        for _ in 0..20 {
            let mut s = String::new();
            for _ in 0..400 {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                s.push(alphabet[(seed >> 16) as usize % alphabet.len()]);
            }
            v.push(s.into_bytes());
        }
        v
    }

    #[test]
    fn fast_counts_equal_the_reference_on_both_encodings() {
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            for s in samples() {
                assert_eq!(
                    Fast(enc).count(&s),
                    Reference(enc).count(&s),
                    "{enc:?} on {:?}",
                    String::from_utf8_lossy(&s)
                );
            }
        }
    }

    #[test]
    fn fast_counts_equal_the_reference_on_the_fixtures_and_edge_cases() {
        let mut texts: Vec<Vec<u8>> = vec![
            b"it's  don't I'M 'S they'LL 12345 1234567 \n\n  \t \r\n   ".to_vec(),
            b"trailing spaces   ".to_vec(),
            b"\n\n\n".to_vec(),
            b"   leading".to_vec(),
            "CamelCaseWords\u{301}e\u{301} M\u{e9}LANGE \u{417}\u{434}\u{440}\u{430}\u{432}\u{441}\u{442}\u{432}\u{443}\u{439}"
                .as_bytes()
                .to_vec(),
            b"a/b//c\\d ...!!! ?? @@@\r\r\n".to_vec(),
        ];
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/repos");
        for e in walkdir::WalkDir::new(root).into_iter().flatten() {
            if e.file_type().is_file() {
                texts.push(std::fs::read(e.path()).unwrap());
            }
        }
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            for t in &texts {
                assert_eq!(Fast(enc).count(t), Reference(enc).count(t), "{enc:?}");
            }
        }
    }

    #[test]
    fn special_token_text_is_plain_text() {
        assert!(Fast(Encoding::O200kBase).count(b"<|endoftext|>") > 1);
    }
}

/// The BPE encodings tokens can be counted with.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    clap::ValueEnum,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub enum Encoding {
    #[default]
    #[value(name = "o200k_base")]
    #[serde(rename = "o200k_base")]
    O200kBase,
    #[value(name = "cl100k_base")]
    #[serde(rename = "cl100k_base")]
    Cl100kBase,
}

impl Encoding {
    /// The encoding's name as OpenAI spells it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }
}
