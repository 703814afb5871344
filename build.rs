#![allow(clippy::print_stdout)]
//! Lays out the BPE vocabularies of `o200k_base` and `cl100k_base` as hash tables embedded in
//! the binary (`src/stages/tokens/vocab.rs` reads them), taken at build time from
//! `tiktoken-rs`, the reference implementation the counts are tested against. Embedded as
//! laid out, a table costs nothing to load: a cold process counts its first token at once,
//! and touches only the pages it looks up.
//!
//! A table, little-endian: `[ranks] [slots]` and `offsets[ranks + 1]` as `u32`s, then
//! `slots` slots of two `u64`s, then the token bytes, where token `r`'s bytes are
//! `bytes[offsets[r]..offsets[r + 1]]`. A slot, placed by `vocab_hash` with linear probing,
//! holds a token's first twelve bytes (zero-padded), its length and `rank + 1` (0: empty):
//! `[bytes 0..8] [bytes 8..12 | len << 32 | (rank + 1) << 40]`, so a token of twelve bytes
//! or fewer is found in one place of memory.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::PathBuf;

include!("src/stages/tokens/vocab_hash.rs");

#[path = "src/trust/secrets/layout.rs"]
mod layout;
#[path = "src/trust/secrets/spec.rs"]
mod spec;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/stages/tokens/vocab_hash.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for file in ["rules.toml", "spec.rs", "layout.rs"] {
        println!("cargo::rerun-if-changed=src/trust/secrets/{file}");
    }
    std::fs::write(out.join("secret_rules.rs"), secret_rules())
        .expect("the build folder is writable");
    std::fs::write(
        out.join("scanner.rs"),
        format!(
            "/// The content scanner of this build: the first 16 hex digits of the sha256 of its\n\
             /// sources (`src/trust/secrets/`), so its cached verdicts are its own.\n\
             pub const SCANNER: &str = \"{}\";\n",
            scanner_fingerprint()
        ),
    )
    .expect("the build folder is writable");
    let encodings = [
        ("o200k_base", tiktoken_rs::o200k_base()),
        ("cl100k_base", tiktoken_rs::cl100k_base()),
    ];
    for (name, bpe) in encodings {
        let bpe = bpe.expect("tiktoken-rs builds its own encodings");
        let table = layout(&ordinary_tokens(&bpe));
        std::fs::write(out.join(format!("{name}.vocab")), table)
            .expect("the build folder is writable");
    }
}

/// The sha256 of the content scanner's sources (every file of `src/trust/secrets/`, by
/// name, each as its name, length and bytes), as 16 hex digits.
fn scanner_fingerprint() -> String {
    use sha2::{Digest, Sha256};
    let dir = std::path::Path::new("src/trust/secrets");
    println!("cargo::rerun-if-changed={}", dir.display());
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("src/trust/secrets is readable")
        .map(|e| e.expect("src/trust/secrets is readable").path())
        .collect();
    names.sort();
    let mut hash = Sha256::new();
    for path in names {
        let bytes = std::fs::read(&path).expect("the scanner's sources are readable");
        println!("cargo::rerun-if-changed={}", path.display());
        hash.update(path.file_name().expect("a file").as_encoded_bytes());
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(&bytes);
    }
    hash.finalize()[..8].iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Every ordinary token's bytes, by rank (an unused rank: empty). Special tokens
/// (`<|endoftext|>` …) are left out: curate counts their text as plain text.
fn ordinary_tokens(bpe: &tiktoken_rs::CoreBPE) -> Vec<Vec<u8>> {
    let special: HashSet<u32> = bpe
        .special_tokens()
        .iter()
        .flat_map(|text| bpe.encode_with_special_tokens(text))
        .collect();
    let mut tokens = Vec::new();
    // Both vocabularies hold fewer than 300,000 ranks.
    for rank in 0..300_000u32 {
        if special.contains(&rank) {
            continue;
        }
        if let Ok(bytes) = bpe.decode_bytes(&[rank]) {
            tokens.resize(rank as usize + 1, Vec::new());
            tokens[rank as usize] = bytes;
        }
    }
    for byte in 0..=255u8 {
        assert!(
            tokens.iter().any(|t| t.as_slice() == [byte]),
            "every byte is a token"
        );
    }
    tokens
}

fn layout(tokens: &[Vec<u8>]) -> Vec<u8> {
    let ranks = tokens.len();
    // At most 40 % full: a piece that is no token (most pairs a merge tries) is told so
    // within a probe or two.
    let slots = (ranks * 5 / 2).next_power_of_two();
    let mut slot = vec![[0u64; 2]; slots];
    for (rank, token) in tokens.iter().enumerate() {
        if token.is_empty() {
            continue;
        }
        assert!(token.len() <= 255, "a token's length fits a byte");
        let mut i = vocab_hash(token) as usize & (slots - 1);
        while slot[i][1] >> 40 != 0 {
            i = (i + 1) & (slots - 1);
        }
        // The first twelve bytes and the length, as a short piece's key has them.
        let head = &token[..token.len().min(SHORT_MAX)];
        let mut key = short_key(head).expect("twelve bytes at most");
        key[1] = (key[1] & 0xffff_ffff) | ((token.len() as u64) << 32) | ((rank as u64 + 1) << 40);
        slot[i] = key;
    }
    let mut out = Vec::new();
    let mut push = |v: usize| {
        out.extend_from_slice(&u32::try_from(v).expect("tables under 4 GiB").to_le_bytes());
    };
    push(ranks);
    push(slots);
    let mut offset = 0;
    for token in tokens {
        push(offset);
        offset += token.len();
    }
    push(offset);
    for [a, b] in slot {
        out.extend_from_slice(&a.to_le_bytes());
        out.extend_from_slice(&b.to_le_bytes());
    }
    for token in tokens {
        out.extend_from_slice(token);
    }
    out
}

/// The embedded secret rules as code (`src/trust/secrets/content.rs` includes it): the
/// table of `rules.toml` as `RuleSpec` values and the keyword finder's layout, so that a
/// process neither parses the TOML nor lays out the finder. A table that does not parse
/// fails the build, naming the problem.
fn secret_rules() -> String {
    let text =
        std::fs::read_to_string("src/trust/secrets/rules.toml").expect("rules.toml is readable");
    let table: spec::Table = toml::from_str(&text).unwrap_or_else(|e| panic!("rules.toml: {e}"));
    let (keywords, _) = spec::index_keywords(&table.rule);
    let layout = layout::layout(&keywords).unwrap_or_else(|e| panic!("rules.toml: {e}"));
    let strings = |list: &[String]| {
        let items: Vec<String> = list.iter().map(|s| format!("{s:?}.to_owned()")).collect();
        format!("vec![{}]", items.join(", "))
    };
    let string = |value: &Option<String>| match value {
        Some(s) => format!("Some({s:?}.to_owned())"),
        None => "None".to_owned(),
    };
    let mut out = String::from("// Generated by build.rs from src/trust/secrets/rules.toml.\n\n");
    out.push_str("/// The rules of `rules.toml`, in table order.\n");
    out.push_str("fn embedded_specs() -> Vec<RuleSpec> {\n    vec![\n");
    for rule in &table.rule {
        let _ = writeln!(
            out,
            "        RuleSpec {{ id: {:?}.to_owned(), description: {:?}.to_owned(), keywords: {}, \
             runs: {}, regex: {}, token: {}, names: {}, secret: {}, secret_group: {:?}, entropy: {:?}, \
             check: {}, allowlist: AllowSpec {{ values: {}, stopwords: {}, regexes: {} }} }},",
            rule.id,
            rule.description,
            strings(&rule.keywords),
            rule.runs,
            string(&rule.regex),
            string(&rule.token),
            string(&rule.names),
            string(&rule.secret),
            rule.secret_group,
            rule.entropy,
            string(&rule.check),
            strings(&rule.allowlist.values),
            strings(&rule.allowlist.stopwords),
            strings(&rule.allowlist.regexes),
        );
    }
    out.push_str("    ]\n}\n\n");
    let numbers = |list: &[u32]| {
        let items: Vec<String> = list.iter().map(u32::to_string).collect();
        format!("&[{}]", items.join(", "))
    };
    let tables: Vec<String> = layout
        .tables
        .iter()
        .map(|table| {
            let items: Vec<String> = table.iter().map(|m| format!("{m:#x}")).collect();
            format!("[{}]", items.join(", "))
        })
        .collect();
    out.push_str(
        "/// The keyword finder laid out for the keywords of `embedded_specs`, in the order\n",
    );
    out.push_str("/// `index_keywords` gives them.\n");
    let _ = writeln!(
        out,
        "#[allow(clippy::unreadable_literal)]\nconst EMBEDDED_LAYOUT: Layout = Layout {{\n    tables: Cow::Borrowed(&[{}]),\n    \
         root: Cow::Borrowed({}),\n    first_edge: Cow::Borrowed({}),\n    \
         edges: Cow::Borrowed({}),\n    ends: Cow::Borrowed({}),\n}};",
        tables.join(", "),
        numbers(&layout.root),
        numbers(&layout.first_edge),
        numbers(&layout.edges),
        numbers(&layout.ends),
    );
    out
}
