//! What a task's text names, resolved against the repository: paths and path suffixes
//! (`adapters/codex.ts:174`: that file, around that line), file names, Markdown links
//! (relative to the document that holds them) and numbered documents (`ADR 0007`,
//! `RFC-12`). Only what resolves to one file, or to a few ([`MAX_PLACES`]), is taken;
//! what resolves to nothing is left quietly.

use std::collections::{BTreeMap, HashMap};

use super::Text;

/// A name that resolves to more files than this is too vague to take.
pub const MAX_PLACES: usize = 3;

/// A file the text names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// Repository-relative.
    pub path: String,
    /// The lines the text points at in it (`file.rs:174`), in the order named.
    pub lines: Vec<u64>,
    /// Where it was first named: `<source>:<line>`.
    pub at: String,
}

/// The repository's file names (lower-cased), each with the files of that name (their
/// places in the universe): made once a walk ([`super::Prepared`]).
#[derive(Debug, Default)]
pub struct Names(HashMap<String, Vec<u32>>);

impl Names {
    /// Of `universe` (sorted).
    #[must_use]
    pub fn new(universe: &[String]) -> Names {
        let mut by_name: HashMap<String, Vec<u32>> = HashMap::new();
        for (k, p) in universe.iter().enumerate() {
            let name = p.rsplit('/').next().unwrap_or(p);
            if let Ok(k) = u32::try_from(k) {
                by_name.entry(name.to_lowercase()).or_default().push(k);
            }
        }
        Names(by_name)
    }
}

/// The repository's files, looked up by path, by path suffix and by file name.
pub struct Files<'a> {
    /// Every repository-relative path a selection may name, sorted.
    universe: &'a [String],
    names: &'a Names,
}

impl<'a> Files<'a> {
    /// `names`: [`Names::new`] of `universe`.
    #[must_use]
    pub fn new(universe: &'a [String], names: &'a Names) -> Files<'a> {
        Files { universe, names }
    }

    /// The files of the name `name` (lower-cased).
    fn of_name(&self, name: &str) -> Option<impl Iterator<Item = &'a str> + '_> {
        let places = self.names.0.get(name)?;
        Some(
            places
                .iter()
                .filter_map(|&k| self.universe.get(k as usize).map(String::as_str)),
        )
    }

    /// The files `token` names: itself, else the files it is a suffix of (on a `/`), else
    /// those of its file name; at most [`MAX_PLACES`], else none.
    fn resolve(&self, token: &str) -> Vec<&'a str> {
        let token = token.trim_start_matches("./");
        if let Ok(k) = self.universe.binary_search_by(|p| p.as_str().cmp(token)) {
            return vec![self.universe[k].as_str()];
        }
        let name = token.rsplit('/').next().unwrap_or(token);
        let Some(named) = self.of_name(&name.to_lowercase()) else {
            return Vec::new();
        };
        let found: Vec<&str> = if token.contains('/') {
            let suffix = format!("/{token}");
            named.filter(|p| p.ends_with(&suffix)).collect()
        } else {
            named.collect()
        };
        if found.len() <= MAX_PLACES {
            found
        } else {
            Vec::new()
        }
    }

    /// The files of a numbered document: `kind` (`adr`, `rfc`, …) in the path, the number
    /// at the start of the file's name (`0007-…`, `adr-0007-…`, `rfc12.md`).
    fn numbered(&self, kind: &str, number: u64) -> Vec<&'a str> {
        let mut found: Vec<&str> = self
            .names
            .0
            .iter()
            .filter(|(name, _)| leading_number(name, kind) == Some(number))
            .flat_map(|(_, places)| places.iter())
            .filter_map(|&k| self.universe.get(k as usize).map(String::as_str))
            .filter(|p| p.to_lowercase().contains(kind))
            .collect();
        found.sort_unstable();
        if found.len() <= MAX_PLACES {
            found
        } else {
            Vec::new()
        }
    }
}

/// The number a file's name starts with, after an optional `kind` prefix and separator.
fn leading_number(name: &str, kind: &str) -> Option<u64> {
    let rest = name.strip_prefix(kind).unwrap_or(name);
    let rest = rest.trim_start_matches(['-', '_', ' ']);
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    if digits.is_empty() || rest[digits.len()..].starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    digits.parse().ok()
}

/// Every file the texts name, in the order first named.
#[must_use]
pub fn named(texts: &[Text], files: &Files<'_>) -> Vec<Named> {
    let mut out: Vec<Named> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let mut add = |path: &str, line: Option<u64>, at: &dyn Fn() -> String| {
        let i = *index.entry(path.to_owned()).or_insert_with(|| {
            out.push(Named {
                path: path.to_owned(),
                lines: Vec::new(),
                at: at(),
            });
            out.len() - 1
        });
        if let Some(l) = line
            && !out[i].lines.contains(&l)
        {
            out[i].lines.push(l);
        }
    };
    for text in texts {
        for (n, line) in text.text.lines().enumerate() {
            let at = || format!("{}:{}", text.source, n + 1);
            for link in links(line) {
                let joined = match &text.dir {
                    Some(dir) if !link.starts_with('/') => join(dir, link),
                    _ => Some(link.trim_start_matches('/').to_owned()),
                };
                if let Some(path) = joined {
                    for p in files.resolve(&path) {
                        add(p, None, &at);
                    }
                }
            }
            for (token, number) in path_tokens(line) {
                for p in files.resolve(token) {
                    add(p, number, &at);
                }
            }
            for (kind, number) in numbered_documents(line) {
                for p in files.numbered(&kind, number) {
                    add(p, None, &at);
                }
            }
        }
    }
    out
}

/// `dir/link` with `.` and `..` folded (`None` when it climbs out of the repository);
/// a link's `#anchor` or `?query` left off.
fn join(dir: &str, link: &str) -> Option<String> {
    let link = link.split(['#', '?']).next().unwrap_or(link);
    let mut parts: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for seg in link.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// The targets of Markdown links `[text](target)` in a line (web addresses left out).
fn links(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        let end = after.find([')', ' ']).unwrap_or(after.len());
        let target = &after[..end];
        if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
            out.push(target);
        }
        rest = &after[end..];
    }
    out
}

/// The tokens of a line that look like a path or a file name (a `/`, or a name with an
/// extension), each with the line number after a `:` (`routes.ts:42`, `a.rs:42:7`).
fn path_tokens(line: &str) -> Vec<(&str, Option<u64>)> {
    let is_path_char = |c: char| c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | ':');
    let mut out = Vec::new();
    for raw in line.split(|c: char| !is_path_char(c)) {
        let raw = raw.trim_matches(['.', ':', '-']);
        let (token, number) = match raw.split_once(':') {
            Some((t, n)) => (
                t,
                n.split(['-', ':'])
                    .next()
                    .and_then(|n| n.parse::<u64>().ok())
                    .filter(|&n| n > 0),
            ),
            None => (raw, None),
        };
        let token = token.trim_end_matches(['.', '/']);
        let has_extension = token
            .rsplit('/')
            .next()
            .and_then(|name| name.rsplit_once('.'))
            .is_some_and(|(stem, ext)| {
                !stem.is_empty()
                    && (1..=10).contains(&ext.len())
                    && ext.chars().all(|c| c.is_ascii_alphanumeric())
                    && ext.chars().any(|c| c.is_ascii_alphabetic())
            });
        if token.len() >= 3 && (has_extension || token.contains('/')) && !token.contains("//") {
            out.push((token, number));
        }
    }
    out
}

/// The numbered documents a line names: `ADR 0007`, `ADR-7`, `RFC 12`, `rfc-0012`, as
/// (`adr`, 7).
fn numbered_documents(line: &str) -> Vec<(String, u64)> {
    const KINDS: [&str; 3] = ["adr", "rfc", "rfd"];
    let lower = line.to_lowercase();
    let mut out = Vec::new();
    for kind in KINDS {
        let mut from = 0;
        while let Some(i) = lower[from..].find(kind) {
            let start = from + i;
            from = start + kind.len();
            let before_ok = lower[..start]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric());
            let rest = lower[from..].trim_start_matches([' ', '-', '_', '#']);
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if before_ok
                && !digits.is_empty()
                && let Ok(n) = digits.parse()
            {
                out.push((kind.to_owned(), n));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(source: &str, dir: Option<&str>, body: &str) -> Text {
        Text {
            source: source.to_owned(),
            dir: dir.map(str::to_owned),
            text: body.to_owned(),
        }
    }

    fn universe() -> Vec<String> {
        [
            "README.md",
            "docs/adr/0007-dependency-and-compatibility-policy.md",
            "docs/adr/0017-other.md",
            "docs/guide.md",
            "src/adapters/codex.ts",
            "src/auth/login.ts",
            "src/auth/session.ts",
            "web/src/lib/session.ts",
            "x/a/mod.rs",
            "x/b/mod.rs",
            "x/c/mod.rs",
            "x/d/mod.rs",
        ]
        .map(str::to_owned)
        .to_vec()
    }

    #[test]
    fn paths_suffixes_lines_links_and_numbers_resolve() {
        let u = universe();
        let names = Names::new(&u);
        let files = Files::new(&u, &names);
        let t = [text(
            "changes/c/plan.md",
            Some("changes/c"),
            "Edit `adapters/codex.ts:174` and src/auth/login.ts.\n\
             See [the guide](../../docs/guide.md#setup) and T1 ADR 0007.\n\
             session.ts is two files; mod.rs is four; nothing.md is none.",
        )];
        let got: Vec<(String, Vec<u64>, String)> = named(&t, &files)
            .into_iter()
            .map(|n| (n.path, n.lines, n.at))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "src/adapters/codex.ts".to_owned(),
                    vec![174],
                    "changes/c/plan.md:1".to_owned()
                ),
                (
                    "src/auth/login.ts".to_owned(),
                    vec![],
                    "changes/c/plan.md:1".to_owned()
                ),
                (
                    "docs/guide.md".to_owned(),
                    vec![],
                    "changes/c/plan.md:2".to_owned()
                ),
                (
                    "docs/adr/0007-dependency-and-compatibility-policy.md".to_owned(),
                    vec![],
                    "changes/c/plan.md:2".to_owned()
                ),
                (
                    "src/auth/session.ts".to_owned(),
                    vec![],
                    "changes/c/plan.md:3".to_owned()
                ),
                (
                    "web/src/lib/session.ts".to_owned(),
                    vec![],
                    "changes/c/plan.md:3".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn what_is_not_a_path_is_not_taken() {
        assert_eq!(
            path_tokens("a v1.2 release, 3.14, http://x.io/a.md"),
            vec![]
        );
        assert_eq!(
            path_tokens("(see src/a.rs:12:3)."),
            vec![("src/a.rs", Some(12))]
        );
        assert_eq!(
            numbered_documents("draft-adr 12, ADR-0007, madrid 3"),
            vec![("adr".to_owned(), 12), ("adr".to_owned(), 7)]
        );
        assert_eq!(join("a/b", "../../../x.md"), None);
        assert_eq!(leading_number("0007-policy.md", "adr"), Some(7));
        assert_eq!(leading_number("adr-12.md", "adr"), Some(12));
        assert_eq!(leading_number("2024report.md", "adr"), None);
    }
}
