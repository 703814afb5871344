//! The identifiers a task's text names (code spans, `CamelCase`, `snake_case`, `a.b()`),
//! and where the repository defines them. A file is searched for the names (one
//! Aho-Corasick pass), and parsed ([`crate::outline::tags`]) only when a name stands where a
//! definition would (after `fn`, `def`, `class`, `type`, …, or first on its line in the
//! languages whose methods take no keyword); the parse says whether it is one, and at which
//! line.
//!
//! Deterministic: names in the order first named, definitions in the file's order.

use aho_corasick::{AhoCorasick, MatchKind};

use super::Text;
use crate::outline::Lang;

/// At most this many names are looked for (the first named).
pub const MAX_IDENTS: usize = 64;
/// A name shorter than this is not looked for.
const MIN_LEN: usize = 3;

/// A name the text gives, and where it was first given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    /// `<source>:<line>`.
    pub at: String,
}

/// Every identifier the texts name, each once, in the order first named; at most
/// [`MAX_IDENTS`].
#[must_use]
pub fn named(texts: &[Text]) -> Vec<Ident> {
    let mut out: Vec<Ident> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for text in texts {
        for (n, line) in text.text.lines().enumerate() {
            for name in of_line(line) {
                if out.len() >= MAX_IDENTS {
                    return out;
                }
                if seen.insert(name.to_owned()) {
                    out.push(Ident {
                        name: name.to_owned(),
                        at: format!("{}:{}", text.source, n + 1),
                    });
                }
            }
        }
    }
    out
}

/// True for a character of an identifier.
fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifiers of one line: every name of a code span that is a bare identifier
/// (`` `rollout` ``, `` `Store::open()` ``, `` `cfg.load` ``), and anywhere a name that
/// reads as code: `CamelCase` (a lower-case letter turning upper), `snake_case` (an inner
/// `_`), or called (`name(`).
fn of_line(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (n, span) in line.split('`').enumerate() {
        let in_code = n % 2 == 1;
        let bare = in_code && is_code(span.trim());
        let mut rest = span;
        while let Some(start) = rest.find(|c: char| is_ident_char(c)) {
            let after = &rest[start..];
            let len = after
                .find(|c: char| !is_ident_char(c))
                .unwrap_or(after.len());
            let token = &after[..len];
            let called = after[len..].starts_with('(');
            let before = &rest[..start];
            // Not a flag's word (`--glob`) nor a path's part.
            let flagged = before.ends_with('-') || before.ends_with('/');
            let path_part = after[len..].starts_with('/');
            let looks_like_code = is_camel(token) || is_snake(token) || called;
            if token.len() >= MIN_LEN
                && token.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && !flagged
                && !path_part
                && (bare || looks_like_code)
            {
                out.push(token);
            }
            rest = &after[len..];
        }
    }
    out
}

/// True when a code span is only a name or a path of names (`a.b`, `A::b`, `f()`).
fn is_code(span: &str) -> bool {
    let span = span.strip_suffix("()").unwrap_or(span);
    !span.is_empty()
        && span
            .split(['.', ':'])
            .filter(|s| !s.is_empty())
            .all(|s| s.chars().all(is_ident_char) && s.starts_with(|c: char| !c.is_ascii_digit()))
}

/// `SessionStore`, `getFoo`, `HTTPServer`: a lower-case letter followed by an upper-case one,
/// or two capitals followed by a lower-case letter after the first.
fn is_camel(token: &str) -> bool {
    let b = token.as_bytes();
    b.windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
        || b.windows(3).any(|w| {
            w[0].is_ascii_uppercase() && w[1].is_ascii_uppercase() && w[2].is_ascii_lowercase()
        }) && b.iter().skip(1).any(u8::is_ascii_lowercase)
}

/// `session_id`, `MAX_SIZE`: an `_` between two letters or digits.
fn is_snake(token: &str) -> bool {
    let b = token.as_bytes();
    b.windows(3)
        .any(|w| w[1] == b'_' && w[0].is_ascii_alphanumeric() && w[2].is_ascii_alphanumeric())
        && b.iter().any(u8::is_ascii_alphabetic)
}

/// The names to look for, searched in one pass.
pub struct Search {
    automaton: AhoCorasick,
}

impl Search {
    /// `None` when there is no name.
    #[must_use]
    pub fn new(idents: &[Ident]) -> Option<Search> {
        if idents.is_empty() {
            return None;
        }
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(idents.iter().map(|i| i.name.as_bytes()))
            .ok()?;
        Some(Search { automaton })
    }

    /// The definitions of the names in `text` (a file in `lang`): (the name's index in
    /// `idents`, the line of the definition, its kind), in the file's order.
    #[must_use]
    pub fn definitions(
        &self,
        idents: &[Ident],
        lang: Lang,
        text: &str,
    ) -> Vec<(usize, u64, &'static str)> {
        if lang == Lang::Markdown || !self.maybe_defines(lang, text) {
            return Vec::new();
        }
        let Some(tags) = crate::outline::tags(lang, text) else {
            return Vec::new();
        };
        tags.defs
            .iter()
            .filter_map(|d| {
                let i = idents.iter().position(|i| i.name == d.name)?;
                Some((i, d.line, d.kind))
            })
            .collect()
    }

    /// True when one of the names stands, as a whole word, where a definition would.
    fn maybe_defines(&self, lang: Lang, text: &str) -> bool {
        let bytes = text.as_bytes();
        let keyless = lang != Lang::Rust;
        self.automaton.find_iter(bytes).any(|m| {
            let whole = !bytes[..m.start()]
                .last()
                .is_some_and(|&c| is_ident_char(c as char))
                && !bytes
                    .get(m.end())
                    .is_some_and(|&c| is_ident_char(c as char));
            if !whole {
                return false;
            }
            let line_start = bytes[..m.start()]
                .iter()
                .rposition(|&c| c == b'\n')
                .map_or(0, |i| i + 1);
            let before = String::from_utf8_lossy(&bytes[line_start..m.start()]);
            defining(&before, keyless)
        })
    }
}

/// True when the text before a name on its line reads as the start of a definition: a
/// keyword that defines right before it, or (`keyless`: every language but Rust) nothing
/// but modifiers (a method, a field, a module's constant).
fn defining(before: &str, keyless: bool) -> bool {
    const DEFINE: &[&str] = &[
        "fn",
        "func",
        "def",
        "class",
        "struct",
        "enum",
        "trait",
        "type",
        "interface",
        "const",
        "var",
        "function",
        "impl",
        "mod",
        "macro_rules",
        "static",
        "module",
        "union",
        "typedef",
        "namespace",
        "record",
    ];
    const MODIFIERS: &[&str] = &[
        "pub",
        "public",
        "private",
        "protected",
        "internal",
        "static",
        "async",
        "export",
        "default",
        "readonly",
        "override",
        "abstract",
        "get",
        "set",
        "final",
        "virtual",
    ];
    let words: Vec<&str> = before
        .split(|c: char| !is_ident_char(c))
        .filter(|w| !w.is_empty())
        .collect();
    // `fn name`, `class name`; Go's `func (s *Server) name`.
    words.last().is_some_and(|w| DEFINE.contains(w))
        || (words.first() == Some(&"func") && before.trim_end().ends_with(')'))
        || (keyless && words.iter().all(|w| MODIFIERS.contains(w)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_reads_as_code_is_an_identifier() {
        assert_eq!(
            of_line(
                "Fix `Searcher::search_path()` and SessionStore; call cfg.load_all() with --max_count, see src/lib_x/a.rs"
            ),
            ["Searcher", "search_path", "SessionStore", "load_all"]
        );
        assert_eq!(
            of_line("Plain words, a Title, HTTP and v1.2."),
            Vec::<&str>::new()
        );
        assert_eq!(
            of_line("the `rollout` flag; `cargo test --all`"),
            ["rollout"]
        );
        assert_eq!(of_line("HTTPServer and getFoo"), ["HTTPServer", "getFoo"]);
    }

    #[test]
    fn a_definition_is_told_from_a_use() {
        let idents = [
            Ident {
                name: "open_store".to_owned(),
                at: "t:1".to_owned(),
            },
            Ident {
                name: "Rollout".to_owned(),
                at: "t:2".to_owned(),
            },
        ];
        let search = Search::new(&idents).unwrap();
        let defines = "use x;\n\npub struct Rollout {}\n\nfn open_store() {}\n";
        assert_eq!(
            search.definitions(&idents, Lang::Rust, defines),
            [(1, 3, "struct"), (0, 5, "function")]
        );
        let uses = "fn main() {\n    let r = Rollout {};\n    open_store();\n}\n";
        assert_eq!(search.definitions(&idents, Lang::Rust, uses), []);
        let ts = "export class Store {\n  async open_store(): Promise<void> {}\n}\n";
        assert_eq!(search.definitions(&idents, Lang::TypeScript, ts)[0].0, 0);
    }
}
