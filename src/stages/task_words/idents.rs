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

/// Keywords a definition's name follows.
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
/// Words that may stand before a definition's name where no keyword does.
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

/// True when the text before a name on its line reads as the start of a definition: a
/// keyword that defines right before it, or (`keyless`: every language but Rust) nothing
/// but modifiers (a method, a field, a module's constant).
fn defining(before: &str, keyless: bool) -> bool {
    let words: Vec<&str> = before
        .split(|c: char| !is_ident_char(c))
        .filter(|w| !w.is_empty())
        .collect();
    // `fn name`, `class name`; Go's `func (s *Server) name`.
    words.last().is_some_and(|w| DEFINE.contains(w))
        || (words.first() == Some(&"func") && before.trim_end().ends_with(')'))
        || (keyless && words.iter().all(|w| MODIFIERS.contains(w)))
}

/// Every name of `text` (a file in `lang`) that stands where a definition would, as
/// [`Search`] judges one (each once, sorted; names as the text gives them: [`MIN_LEN`]
/// characters or more, not starting with a digit). What the word index keeps of a file, so
/// that a warm run reads only the files that may define a name the text gives.
#[must_use]
pub fn maybe_defined(lang: Lang, text: &str) -> Vec<String> {
    if lang == Lang::Markdown {
        return Vec::new();
    }
    let keyless = lang != Lang::Rust;
    let mut out: Vec<&str> = Vec::new();
    for line in text.split('\n') {
        // The words before the one read, as `defining` splits them, and the last character
        // before it that is not white space.
        let (mut first, mut last): (Option<&str>, Option<&str>) = (None, None);
        let (mut all_modifiers, mut last_mark) = (true, None::<char>);
        let mut at = 0;
        while at < line.len() {
            let rest = &line[at..];
            let Some(start) = rest.find(is_ident_char) else {
                break;
            };
            if let Some(c) = rest[..start].chars().rev().find(|c| !c.is_whitespace()) {
                last_mark = Some(c);
            }
            let after = &rest[start..];
            let len = after.find(|c| !is_ident_char(c)).unwrap_or(after.len());
            let token = &after[..len];
            let defines = last.is_some_and(|w| DEFINE.contains(&w))
                || (first == Some("func") && last_mark == Some(')'))
                || (keyless && all_modifiers);
            if defines
                && token.len() >= MIN_LEN
                && token.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            {
                out.push(token);
            }
            first.get_or_insert(token);
            last = Some(token);
            all_modifiers &= MODIFIERS.contains(&token);
            last_mark = token.chars().last();
            at += start + len;
        }
    }
    out.sort_unstable();
    out.dedup();
    out.into_iter().map(str::to_owned).collect()
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

    #[test]
    fn the_names_kept_as_maybe_defined_are_those_the_search_looks_at() {
        let texts = [
            (
                Lang::Rust,
                "pub struct Rollout {}\nfn open_store() {}\nimpl Store { pub fn get_all(&self) {} }\n    let x = Rollout {};\nmacro_rules! my_mac {}\n",
            ),
            (
                Lang::Go,
                "func (s *Server) HandleLogin(w Writer) {}\nfunc main() {}\ntype Store struct {}\n\tx := compute(y)\nvar counter_total = 1\n",
            ),
            (
                Lang::TypeScript,
                "export class Store {\n  async open_store(): Promise<void> {}\n  readonly max_size = 3;\n}\nconst routes = [];\nfoo.bar(baz);\n  return value;\n",
            ),
            (
                Lang::Python,
                "class Session:\n    def rotate_token(self):\n        return self._token\n    async def refresh(self): pass\nx = 1\nimport os.path\n",
            ),
            (
                Lang::Rust,
                "fn\u{e9}t\u{e9}_x() {}\n\u{3000}fn wide_space() {}\nfn 1abc() {}\n",
            ),
        ];
        for (lang, text) in texts {
            // Every token, judged as `Search::maybe_defines` judges it: by the text before
            // it on its line.
            let mut expected: Vec<String> = Vec::new();
            for line in text.split('\n') {
                let mut at = 0;
                while let Some(start) = line[at..].find(is_ident_char) {
                    let start = at + start;
                    let len = line[start..]
                        .find(|c| !is_ident_char(c))
                        .unwrap_or(line.len() - start);
                    let token = &line[start..start + len];
                    if defining(&line[..start], lang != Lang::Rust)
                        && token.len() >= MIN_LEN
                        && token.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    {
                        expected.push(token.to_owned());
                    }
                    at = start + len;
                }
            }
            expected.sort();
            expected.dedup();
            assert_eq!(maybe_defined(lang, text), expected, "{text}");
            assert!(!expected.is_empty());
        }
        assert!(maybe_defined(Lang::Rust, "fn open_store() {}").contains(&"open_store".to_owned()));
        assert!(
            !maybe_defined(Lang::Rust, "let x = open_store();").contains(&"open_store".to_owned())
        );
    }
}
