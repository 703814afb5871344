//! Outlines, symbol anchors and tags of source files, read with tree-sitter (Markdown by
//! a line scanner), and the ranking of related files by their tags, see docs/budgets.md#outlines.
//!
//! Pure: every function takes text and returns lines; nothing here touches the disk. A
//! leaf module: it depends on nothing in the crate but [`crate::model`].
//!
//! - [`lang_for`] maps a path to a [`Lang`];
//! - [`outline`] gives a file's skeleton: imports, declaration headers, signatures, and the
//!   doc comments and attributes of public items;
//! - [`symbol`] gives the lines of one named definition (`LoginService.login`);
//! - [`tags`] gives what a file defines and which identifiers it references;
//! - [`rank`] orders files by how the owned ones reach them through those references.
//!
//! Parsers are kept per thread and language, so repeated calls do not rebuild them.

mod lang;
mod markdown;
mod rank;
mod skip;
mod symbols;
mod syntax;
mod types;

pub use lang::{Lang, lang_for};
pub use rank::{rank, rank_named};
pub use symbols::{Named, Symbols, Vocab};
pub use types::{Def, Tags};

use crate::model::Range;

/// The outline of a file: a sorted list of non-overlapping, non-adjacent 1-based
/// inclusive line ranges, each within `1..=lines` (as `str::lines` counts them).
///
/// Holds: imports / uses / includes (whole); the header of every definition in the file's
/// scope and in the bodies of classes, impls, traits, interfaces, modules and namespaces
/// (nested ones too) — its lines from the item's start through the line holding its body's
/// opening `{` (Python's `:`), or the whole item when it has no body (a signature, an
/// alias); Python decorators and Rust attributes and doc comments above public items;
/// Rust `//!` and Python module docstrings. Function bodies are not walked. Markdown: the
/// heading lines (ATX and setext), outside fenced code and front matter.
///
/// `None` — never an empty outline — when the text is empty or blank, does not parse
/// (syntax errors cover more than a quarter of its lines), is larger than 16 MiB, or
/// defines nothing (a file of statements; a Markdown file without headings): the caller
/// falls back to another view.
#[must_use]
pub fn outline(lang: Lang, text: &str) -> Option<Vec<Range>> {
    if lang == Lang::Markdown {
        return markdown::outline(text).map(syntax::merge);
    }
    let (_, found) = syntax::walk(lang, text, true)?;
    (!found.ranges.is_empty()).then_some(found.ranges)
}

/// The text of a Markdown file's leading YAML front matter (between its `---` lines), or
/// `None`: the headings skip the same lines.
#[must_use]
pub fn markdown_front_matter(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let end = markdown::front_matter_end(&lines)?;
    Some(lines[1..end].join("\n"))
}

/// The headings of a Markdown text, in document order: (first line, level 1–6, text),
/// ATX (`## Title`) and setext (a line underlined by `===` or `---`), outside fenced code and
/// a leading YAML front matter. What a heading anchor is matched against.
#[must_use]
pub fn markdown_headings(text: &str) -> Vec<(u64, u8, String)> {
    markdown::headings(text)
        .into_iter()
        .map(|h| (h.lines[0], h.level, h.text))
        .collect()
}

/// The lines of one definition, named `name`: from its doc comments, attributes and
/// decorators through its last line.
///
/// A name is a path, its segments split by `.`, `::` or `#`: `login`,
/// `LoginService.login`, `LoginService::login`, `LoginService#login`; a segment that starts
/// with `#` is a private member's name (`Ky.#fetch`). The last segment is the definition's
/// name; those before it must end its enclosing scopes (classes, impls — `impl
/// LoginService` —, traits, modules, namespaces, a Go method's receiver type, a C++
/// `Foo::bar`'s qualifier). The first match in document order wins; an exact match is
/// preferred over an ASCII case-insensitive one (`LoginService.login` finds Go's `Login`).
/// Markdown: the section of the heading whose text is `name` (`## ` markers allowed),
/// through the line before the next heading of the same or a higher level.
///
/// `None` when nothing matches, the name is empty, or the file does not parse.
#[must_use]
pub fn symbol(lang: Lang, text: &str, name: &str) -> Option<Range> {
    if lang == Lang::Markdown {
        return markdown::symbol(text, name, syntax::line_count(text));
    }
    // `Class#method` (Ruby) splits at its `#`; a segment that starts with one is a
    // JavaScript or TypeScript private member's name (`Ky.#fetch`).
    let path: Vec<&str> = name
        .split("::")
        .flat_map(|s| s.split('.'))
        .flat_map(|s| {
            let private = s.starts_with('#');
            let mut parts: Vec<&str> = s[usize::from(private)..].split('#').collect();
            if private {
                // The first part keeps its `#`.
                parts[0] = &s[..=parts[0].len()];
            }
            parts
        })
        .map(str::trim)
        .collect();
    if path.iter().any(|s| s.is_empty()) {
        return None;
    }
    let (last, scope) = path.split_last()?;
    let (_, found) = syntax::walk(lang, text, true)?;
    let matches = |exact: bool| {
        let eq = |a: &str, b: &str| {
            if exact {
                a == b
            } else {
                a.eq_ignore_ascii_case(b)
            }
        };
        found.items.iter().find(|it| {
            eq(&it.name, last)
                && it.scope.len() >= scope.len()
                && it.scope[it.scope.len() - scope.len()..]
                    .iter()
                    .zip(scope)
                    .all(|(a, b)| eq(a, b))
        })
    };
    let item = matches(true).or_else(|| matches(false))?;
    let lines = syntax::line_count(text);
    let [a, b] = item.full;
    Some([a.max(1), b.min(lines).max(a.max(1))])
}

/// A file's tags and its outline, from one parse: what [`tags`] gives, and [`outline`]'s
/// outline (the same walk).
///
/// Rust, Go, Python, JavaScript and TypeScript are parsed as an outline parses them, their
/// function bodies left out, and a file's references are the identifiers its lexer met
/// outside comments and literals, but for the definitions' names: what tree-sitter's
/// identifiers give but for keywords (which no file defines), at a fraction of the parse.
/// Where the lexer cannot read the text whole, and in the other languages, the references
/// are the identifiers of the whole tree.
///
/// `None` on the same inputs as [`tags`]; the outline is `None` when it would be empty.
#[must_use]
pub fn tags_and_outline(lang: Lang, text: &str) -> Option<(Tags, Option<Vec<Range>>)> {
    if lang == Lang::Markdown {
        return Some((markdown_tags(text)?, outline(lang, text)));
    }
    let (tree, mut found) = syntax::walk(lang, text, true)?;
    let mut counts = match found.names.take() {
        Some(names) => lexed_references(text, &names, &found.name_bytes),
        None => syntax::references(lang, &tree, text, &found.name_bytes),
    };
    // The whole parse's too: no reference by a keyword or a predeclared type, as the lexer.
    let reserved = skip::reserved(lang);
    counts.retain(|name, _| !reserved(name.as_bytes()));
    let (refs, ref_counts) = sorted_counts(counts);
    let tags = Tags {
        defs: found
            .items
            .into_iter()
            .map(|it| Def {
                name: it.name,
                kind: it.kind,
                line: it.line,
            })
            .collect(),
        refs,
        ref_counts,
    };
    Some((tags, (!found.ranges.is_empty()).then_some(found.ranges)))
}

/// Names found in a text, counted.
type Counts<'t> = std::collections::HashMap<&'t str, u32, foldhash::fast::FixedState>;

/// The identifiers at `names` in `text` but those starting at a definition's name
/// (`defined`), counted.
fn lexed_references<'t>(
    text: &'t str,
    names: &[std::ops::Range<usize>],
    defined: &std::collections::BTreeSet<usize>,
) -> Counts<'t> {
    let mut counts = Counts::default();
    for r in names {
        if !defined.contains(&r.start)
            && let Some(name) = text.get(r.clone())
        {
            *counts.entry(name).or_default() += 1;
        }
    }
    counts
}

/// The names of `counts` sorted (by bytes, as [`Tags::refs`] are), and their counts in the
/// same order.
fn sorted_counts(counts: Counts<'_>) -> (Vec<String>, Vec<u32>) {
    let mut counted: Vec<(&str, u32)> = counts.into_iter().collect();
    counted.sort_unstable_by_key(|&(name, _)| name);
    counted
        .into_iter()
        .map(|(name, count)| (name.to_owned(), count))
        .unzip()
}

/// A file's tags: its named definitions in document order (name, kind, the line of the
/// name; see [`Def`] for the kinds), and every identifier it references outside
/// definition names, sorted and deduplicated, with counts. Markdown: its headings, and
/// the identifier-like words of its inline code spans.
///
/// Deterministic. `None` on the same inputs as [`outline`].
#[must_use]
pub fn tags(lang: Lang, text: &str) -> Option<Tags> {
    tags_and_outline(lang, text).map(|(tags, _)| tags)
}

/// A Markdown text's tags: its headings, the identifier-like words of its code spans.
fn markdown_tags(text: &str) -> Option<Tags> {
    let (defs, refs) = markdown::tags(text)?;
    Some(Tags {
        defs: defs
            .into_iter()
            .map(|(name, kind, line)| Def { name, kind, line })
            .collect(),
        refs: refs.keys().cloned().collect(),
        ref_counts: refs.values().copied().collect(),
    })
}
#[cfg(test)]
mod tests;
