//! The rules table's schema as `rules.toml` writes it, and the keyword index drawn from it.
//! `build.rs` includes this file too: it reads the embedded table at build time and writes
//! it into the binary as code (see `content.rs`), so a process never parses the TOML.

use serde::Deserialize;

/// The TOML schema of the rules table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    pub rule: Vec<RuleSpec>,
}

/// One rule as written in `rules.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    pub id: String,
    pub description: String,
    pub keywords: Vec<String>,
    /// No keywords: the rule searches every run of token bytes (see `runs.rs`).
    #[serde(default)]
    pub runs: bool,
    /// A complete pattern.
    pub regex: Option<String>,
    /// A stand-alone token pattern (wrapped in word-boundary guards).
    pub token: Option<String>,
    /// Secret-like names (case-insensitive alternation) for an assignment
    /// pattern; `secret` is then the value pattern.
    pub names: Option<String>,
    pub secret: Option<String>,
    /// Capture group holding the secret (default: the `secret` group, else
    /// the first group that took part, else the whole match).
    pub secret_group: Option<usize>,
    /// Minimum Shannon entropy (bits per byte) of the secret.
    pub entropy: Option<f64>,
    /// Validator (default `token`).
    pub check: Option<String>,
    #[serde(default)]
    pub allowlist: AllowSpec,
}

/// Values a rule ignores.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllowSpec {
    /// Exact secret values (documentation examples).
    #[serde(default)]
    pub values: Vec<String>,
    /// Lower-case fragments: a secret containing one is not a secret.
    #[serde(default)]
    pub stopwords: Vec<String>,
    /// Patterns over the secret: a match means not a secret.
    #[serde(default)]
    pub regexes: Vec<String>,
}

/// The distinct keywords of the rules, in first-seen order, and for each the
/// indexes of the rules it enables.
pub fn index_keywords(rules: &[RuleSpec]) -> (Vec<String>, Vec<Vec<usize>>) {
    let mut keywords: Vec<String> = Vec::new();
    let mut enables: Vec<Vec<usize>> = Vec::new();
    for (index, rule) in rules.iter().enumerate() {
        for keyword in &rule.keywords {
            let slot = keywords
                .iter()
                .position(|known| known == keyword)
                .unwrap_or_else(|| {
                    keywords.push(keyword.clone());
                    enables.push(Vec::new());
                    keywords.len() - 1
                });
            if let Some(list) = enables.get_mut(slot)
                && !list.contains(&index)
            {
                list.push(index);
            }
        }
    }
    (keywords, enables)
}
