//! Secret detection: decides whether a candidate file is a secret and must be
//! kept out of the output.
//!
//! What the stage does: every candidate file is checked twice. First by its
//! repository-relative path ([`by_path`], in `names.rs`): well-known secret
//! file names (`.env`, `*.pem`, `id_rsa*`, `credentials.json`,
//! `.docker/config.json`, `*.tfstate`, ...) and any file under a `secret/`,
//! `secrets/` or `.git/` folder. Then by its content
//! ([`ContentRules::scan`], in `content.rs`): the rules of `rules.toml`, a
//! data table covering the provider families of gitleaks' default rule set
//! (cloud, CI, registries, payment, chat, AI providers, private keys, JWTs,
//! URLs with passwords, `curl` credentials and generic high-entropy
//! assignments), read and laid out at build time (`spec.rs`, `layout.rs`,
//! `build.rs`). One ASCII case-insensitive keyword pass (a trie walked behind a
//! prefilter on the keywords' first four bytes, in `keywords.rs`) finds which
//! rule keywords occur; only those rules run their byte regexes, and every
//! candidate passes the rule's validator (placeholder and example filtering,
//! entropy, URL-password and assignment checks, in `validate.rs`). UTF-16
//! text inside a file is scanned through a de-interleaved view
//! (`utf16.rs`). A file that matches either check is excluded, and the caller
//! notes only the *name* of the rule that fired (plus, for content, the line
//! number).
//!
//! What it gets: a path string, or the raw bytes of a file (which need not be
//! valid UTF-8). It is pure: it never touches the disk, the network or the
//! environment, and it depends on no other curate module.
//!
//! What it must never do: return, log, print or otherwise carry the matched
//! secret value. [`ContentHit`] holds a rule id and a line number, nothing
//! more; errors name the rule, never a haystack. The rules fail closed: a rule
//! that does not parse or compile is an error, never a silently skipped rule.

mod content;
mod decoded;
mod keywords;
mod layout;
mod names;
mod prefixed;
mod runs;
mod shapes;
mod spec;
mod utf16;
mod validate;

#[cfg(test)]
mod corpus_tests;
#[cfg(test)]
mod gitleaks_tests;
#[cfg(test)]
mod tests;

pub use content::{ContentHit, ContentRules, RULES_TOML, SecretsError};
pub use names::by_path;

include!(concat!(env!("OUT_DIR"), "/scanner.rs"));

/// The rule a short text someone else chose (a path, a line of a command's output) holds a
/// secret by, as [`ContentRules::scan_path`] finds it; without the rules, every text is
/// suspect.
#[must_use]
pub fn rule_of_text(text: &str) -> Option<&'static str> {
    match ContentRules::shared() {
        Ok(rules) => rules.scan_path(text),
        Err(_) => Some("the secret rules did not build"),
    }
}

/// The text of a JSON value as a reader sees it, escapes decoded: every key and string (and
/// other value) a line each. What to scan of JSON curate copies: a `\"` inside a string
/// hides `key="…"` from a rule that reads the raw line.
#[must_use]
pub fn json_text(v: &serde_json::Value) -> String {
    fn walk(v: &serde_json::Value, out: &mut String) {
        match v {
            serde_json::Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    out.push_str(k);
                    out.push_str(": ");
                    walk(x, out);
                }
            }
            other => {
                out.push_str(&other.to_string());
                out.push('\n');
            }
        }
    }
    let mut out = String::new();
    walk(v, &mut out);
    out
}
