//! Token counting behind one trait: a fast exact backend (GitHub's `bpe-openai`) by default,
//! `tiktoken-rs` as the reference it is tested against.
//!
//! Text is counted as ordinary text (special-token text such as `<|endoftext|>` is plain
//! text); invalid UTF-8 is decoded lossily first. Each BPE is built lazily, once per process,
//! and only when a count is actually needed.

use std::borrow::Cow;

use crate::cli::Encoding;

/// Something that counts tokens of text.
pub trait TokenCounter: Sync {
    /// The number of tokens of `bytes` (lossily decoded when not UTF-8).
    fn count(&self, bytes: &[u8]) -> u64;
}

/// The default, fast, exact counter.
#[derive(Debug, Clone, Copy)]
pub struct Fast(pub Encoding);

/// The reference counter (tiktoken-rs), slower to build and to run.
#[derive(Debug, Clone, Copy)]
pub struct Reference(pub Encoding);

fn text(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

impl TokenCounter for Fast {
    fn count(&self, bytes: &[u8]) -> u64 {
        let tokenizer = match self.0 {
            Encoding::O200kBase => bpe_openai::o200k_base(),
            Encoding::Cl100kBase => bpe_openai::cl100k_base(),
        };
        tokenizer.count(text(bytes).as_ref()) as u64
    }
}

impl TokenCounter for Reference {
    fn count(&self, bytes: &[u8]) -> u64 {
        let bpe = match self.0 {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        };
        bpe.encode_ordinary(text(bytes).as_ref()).len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn special_token_text_is_plain_text() {
        assert!(Fast(Encoding::O200kBase).count(b"<|endoftext|>") > 1);
    }
}
