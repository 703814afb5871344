//! Token counting behind one trait: an exact counter of curate's own by default, `tiktoken-rs`
//! (the reference implementation) as what the tests compare it with.
//!
//! Text is counted as ordinary text (special-token text such as `<|endoftext|>` is plain
//! text); invalid UTF-8 is decoded lossily first. The count is tiktoken's: the same pieces
//! (`pieces`, tiktoken's patterns written out by hand) and the same merge of each piece
//! (`vocab`, over the vocabulary embedded at build time), without making the tokens.

use crate::model::Encoding;
use crate::util::read::text_of;

mod cached;

pub use cached::Cached;
mod pieces;
mod vocab;
mod vocab_hash;

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

    /// The count of a text not at hand, known by its length and sha256 (a cache hit), else
    /// `None`.
    fn known_key(&self, len: u64, sha256: &[u8; 32]) -> Option<u64> {
        let _ = (len, sha256);
        None
    }
}

/// The default, fast, exact counter.
#[derive(Debug, Clone, Copy)]
pub struct Fast(pub Encoding);

impl TokenCounter for Fast {
    fn count(&self, bytes: &[u8]) -> u64 {
        // The text tiktoken sees: invalid UTF-8 replaced.
        let text = text_of(bytes);
        vocab::with_counter(self.0, |counter| {
            let mut total = 0;
            pieces::split(self.0, &text, |piece| {
                total += u64::from(counter.count(piece));
            });
            total
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
            bpe.encode_ordinary(text_of(bytes).as_ref()).len() as u64
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
        // The repository's own text (code, docs, fixtures, the secret scanner's samples),
        // and a folder of one's own (`CURATE_TOKENS_CORPUS=/path/to/a/checkout`).
        let root = env!("CARGO_MANIFEST_DIR");
        let mut folders: Vec<std::path::PathBuf> =
            ["src", "docs", "fixtures", "tests/data", "templates"]
                .iter()
                .map(|f| std::path::Path::new(root).join(f))
                .collect();
        folders.extend(std::env::var_os("CURATE_TOKENS_CORPUS").map(Into::into));
        for folder in folders {
            for e in walkdir::WalkDir::new(folder).into_iter().flatten() {
                if e.file_type().is_file() {
                    texts.push(std::fs::read(e.path()).unwrap());
                }
            }
        }
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            for t in &texts {
                assert_eq!(Fast(enc).count(t), Reference(enc).count(t), "{enc:?}");
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 300, ..Default::default() })]
        /// Adversarial text: any bytes (invalid UTF-8 included), and long runs of one class.
        #[test]
        fn fast_counts_equal_the_reference_on_any_bytes(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
            run in proptest::sample::select(vec!["a", "Z", "7", " ", "\n", "!", "\u{301}", "日", "'s", "\r\n "]),
            times in 0usize..400,
        ) {
            let mut text = bytes.clone();
            text.extend(run.repeat(times).bytes());
            text.extend(&bytes);
            for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
                proptest::prop_assert_eq!(Fast(enc).count(&text), Reference(enc).count(&text), "{:?}", enc);
            }
        }
    }

    #[test]
    fn special_token_text_is_plain_text() {
        assert!(Fast(Encoding::O200kBase).count(b"<|endoftext|>") > 1);
    }
}
