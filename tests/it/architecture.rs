//! The shape of `src/`, as docs/development.md draws it: every top-level part (a folder or a
//! loose file) has a rank in [`LAYERS`] and imports only parts of lower ranks, so there is no
//! cycle between parts; no import cycle between source files either; no function over
//! [`MAX_FN_LINES`] lines and no file over [`MAX_FILE_LINES`] (outside tests), but for the
//! few in [`LONG`], each held to the length it has. A failure names the files.
//!
//! References are read from the text, comments included (a doc link upwards is an arrow
//! upwards too): `use crate::…` trees and inline `crate::…` / `super::…` paths, outside
//! `#[cfg(test)]` modules and test files. Each resolves to the file of the longest module
//! path it names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers, lowest first: each top-level part of `src/` and its rank. A part imports only
/// parts of lower ranks (docs/development.md says what each is for).
const LAYERS: &[(&str, &[&str])] = &[
    ("vocabulary", &["model"]),
    ("leaves", &["util", "outline", "criteria", "receipt"]),
    ("trust boundary", &["trust"]),
    ("errors", &["error"]),
    ("inputs and stages", &["stages", "task", "hosts", "verify"]),
    ("workflows", &["workflow"]),
    ("configuration", &["config"]),
    ("the request", &["settings"]),
    ("the pipeline", &["compile", "state"]),
    ("reports", &["report"]),
    ("rendering", &["render"]),
    ("operations", &["ops", "warm"]),
    ("front-ends", &["hook", "lsp", "mcp"]),
    ("the command line", &["cli"]),
];

/// The most lines a function may take, from its signature to its closing brace.
const MAX_FN_LINES: usize = 150;

/// The most lines a source file may take, its test module left out.
const MAX_FILE_LINES: usize = 1000;

/// The functions and files over those limits today, each with the most lines it may keep
/// (its length now, so it can only shrink) and why (docs/development.md#limits).
const LONG: &[(&str, usize, &str)] = &[
    // Lexers: one state machine a language, whose states read best as one `match`.
    ("outline/skip.rs:python_lexed", 185, "a lexer"),
    ("outline/skip.rs", 1467, "one lexer a language"),
    (
        "outline/syntax.rs",
        1194,
        "tree-sitter queries, one a language",
    ),
    // A table: one validator a secret family.
    ("trust/secrets/validate.rs", 1429, "one validator a family"),
];

/// Every source file of `src/` but tests, by its path there (`/`-separated), with its text.
fn source_files() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(&src).sort_by_file_name() {
        let e = e.unwrap();
        let rel = e
            .path()
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if e.path().extension().is_some_and(|x| x == "rs") && !is_test_file(&rel) {
            out.push((rel, std::fs::read_to_string(e.path()).unwrap()));
        }
    }
    out
}

/// Every source file of the library and binary, by module path (`""` for lib.rs).
fn modules() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (rel, text) in source_files() {
        if rel == "main.rs" {
            continue;
        }
        let module = rel
            .trim_end_matches(".rs")
            .trim_end_matches("/mod")
            .trim_end_matches("lib")
            .replace('/', "::");
        out.insert(module, text);
    }
    out
}

/// A file that holds only tests (`tests.rs`, `*_tests.rs`), declared under `#[cfg(test)]`.
fn is_test_file(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name == "tests.rs" || name.ends_with("_tests.rs")
}

/// The text without its test modules (they may `use super::*` freely).
fn without_tests(text: &str) -> &str {
    text.find("#[cfg(test)]\nmod ").map_or(text, |i| &text[..i])
}

/// Every module path a file names: `use` trees expanded, plus inline paths.
fn references(module: &str, text: &str) -> BTreeSet<String> {
    let text = without_tests(text);
    let mut out = BTreeSet::new();
    let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
    let mut rest = text;
    // Inline paths (this also catches the first segments of every `use` tree).
    while let Some(i) = [rest.find("crate::"), rest.find("super::")]
        .into_iter()
        .flatten()
        .min()
    {
        let (prefix, base) = if rest[i..].starts_with("crate::") {
            (7, String::new())
        } else {
            (7, parent.to_owned())
        };
        let tail = &rest[i + prefix..];
        let path: String = tail
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let path = path.trim_end_matches(':');
        let full = if base.is_empty() {
            path.to_owned()
        } else {
            format!("{base}::{path}")
        };
        out.insert(full.clone());
        // A `use` tree: `crate::a::{b, c::d}` names `a::b` and `a::c::d` too.
        if tail[path.len()..].starts_with("::{") {
            let inner = &tail[path.len() + 3..];
            let mut depth = 1;
            let end = inner
                .char_indices()
                .find(|&(_, c)| {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                })
                .map_or(inner.len(), |(j, _)| j);
            for item in inner[..end].split([',', '{', '}']) {
                let item = item.trim();
                if !item.is_empty() && item != "self" {
                    out.insert(format!(
                        "{full}::{}",
                        item.split_whitespace().next().unwrap()
                    ));
                }
            }
        }
        rest = &rest[i + prefix..];
    }
    out
}

/// The file (module path) a reference lands in: its longest prefix that is a module.
fn target(reference: &str, modules: &BTreeMap<String, String>) -> String {
    let segments: Vec<&str> = reference.split("::").collect();
    (0..=segments.len())
        .rev()
        .map(|n| segments[..n].join("::"))
        .find(|m| modules.contains_key(m))
        .unwrap_or_default()
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules();
    modules
        .iter()
        .map(|(m, text)| {
            let deps = references(m, text)
                .iter()
                .map(|r| target(r, &modules))
                .filter(|t| t != m && !t.is_empty())
                .collect();
            (m.clone(), deps)
        })
        .collect()
}

/// The top-level part a module belongs to: its first segment (`""` for lib.rs).
fn part(module: &str) -> &str {
    module.split("::").next().unwrap_or_default()
}

/// The rank of a part in [`LAYERS`].
fn rank(part: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, parts)| parts.contains(&part))
}

#[test]
fn every_part_has_a_rank_and_imports_only_lower_ranks() {
    let mut bad = Vec::new();
    let mut unranked = BTreeSet::new();
    for (m, deps) in graph() {
        let from = part(&m);
        if from.is_empty() {
            continue;
        }
        let Some(r) = rank(from) else {
            unranked.insert(from.to_owned());
            continue;
        };
        for d in deps
            .iter()
            .filter(|d| part(d) != from && !part(d).is_empty())
        {
            match rank(part(d)) {
                Some(to) if to < r => {}
                Some(to) => bad.push(format!("{m} ({}) -> {d} ({})", LAYERS[r].0, LAYERS[to].0)),
                None => {
                    unranked.insert(part(d).to_owned());
                }
            }
        }
    }
    assert!(
        unranked.is_empty(),
        "parts of src/ with no rank in LAYERS (add them, and to docs/development.md): {unranked:?}"
    );
    assert!(
        bad.is_empty(),
        "imports of a part of the same or a higher rank: {bad:#?}"
    );
}

/// Every function of `text` (its test module left out) with its length in lines, from the
/// signature to the closing brace at the signature's indentation (rustfmt's layout).
fn functions(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = without_tests(text).lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let body = line.trim_start();
        let indent = &line[..line.len() - body.len()];
        let rest = ["pub ", "pub(crate) ", "const ", "async ", "unsafe "]
            .iter()
            .fold(body, |b, p| b.strip_prefix(p).unwrap_or(b));
        let Some(name) = rest.strip_prefix("fn ") else {
            continue;
        };
        let name: String = name
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let close = format!("{indent}}}");
        if let Some(end) = lines[i..].iter().position(|l| *l == close) {
            out.push((name, end + 1));
        }
    }
    out
}

#[test]
fn no_function_or_file_is_longer_than_the_limits() {
    let mut over = Vec::new();
    let mut seen = BTreeMap::new();
    let allowed = |key: &str| LONG.iter().find(|(k, _, _)| *k == key).map(|l| l.1);
    for (rel, text) in source_files() {
        let mut check = |key: String, len: usize, max: usize| {
            let limit = allowed(&key);
            if limit.is_some() && len > max {
                seen.insert(key.clone(), len);
            }
            if len > limit.unwrap_or(max) {
                over.push(format!(
                    "{key}: {len} lines (at most {})",
                    limit.unwrap_or(max)
                ));
            }
        };
        check(
            rel.clone(),
            without_tests(&text).lines().count(),
            MAX_FILE_LINES,
        );
        for (name, len) in functions(&text) {
            check(format!("{rel}:{name}"), len, MAX_FN_LINES);
        }
    }
    assert!(over.is_empty(), "over the limits: {over:#?}");
    // A ratchet: an entry goes when its place is within the limits, and is lowered as it
    // shrinks.
    let stale: Vec<String> = LONG
        .iter()
        .filter_map(|&(k, max, _)| match seen.get(k) {
            None => Some(format!("{k}: within the limits or gone: take it out")),
            Some(&len) if len < max => Some(format!("{k}: {len} lines now: lower it to {len}")),
            Some(_) => None,
        })
        .collect();
    assert!(stale.is_empty(), "LONG is out of date: {stale:#?}");
}

/// The first cycle a depth-first search meets, as the list of modules around it.
fn find_cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(m.to_owned(), 1);
        stack.push(m.to_owned());
        for d in g.get(m).into_iter().flatten() {
            match state.get(d.as_str()).copied().unwrap_or(0) {
                1 => {
                    let from = stack.iter().position(|s| s == d).unwrap();
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(d.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(d, g, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(m.to_owned(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in g.keys() {
        if state.get(m.as_str()).copied().unwrap_or(0) == 0
            && let Some(cycle) = visit(m, g, &mut state, &mut Vec::new())
        {
            return Some(cycle);
        }
    }
    None
}

#[test]
fn no_import_cycle_between_source_files() {
    if let Some(cycle) = find_cycle(&graph()) {
        panic!("import cycle: {}", cycle.join(" -> "));
    }
}

#[test]
fn the_checker_sees_imports_cycles_and_lengths() {
    // The reader must find what the tests above rely on, or they could never fail.
    let refs = references(
        "compile::measure",
        "use crate::compile::{self, budget::Status, tokens};\nuse super::expand;\nfn f() { crate::cli::printer::stderr(\"\"); }\n",
    );
    for want in [
        "compile",
        "compile::budget::Status",
        "compile::tokens",
        "compile::expand",
        "cli::printer::stderr",
    ] {
        assert!(refs.contains(want), "{want} missing from {refs:?}");
    }
    let g = graph();
    let compile_cmd = &g["cli::commands::compile"];
    assert!(compile_cmd.contains("compile"), "{compile_cmd:?}");
    assert!(compile_cmd.contains("cli::printer"), "{compile_cmd:?}");
    let edges = |pairs: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in pairs {
            g.entry((*a).to_owned())
                .or_default()
                .insert((*b).to_owned());
            g.entry((*b).to_owned()).or_default();
        }
        g
    };
    assert_eq!(
        find_cycle(&edges(&[("a", "b"), ("b", "c"), ("c", "a")])),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    assert_eq!(
        find_cycle(&edges(&[("a", "b"), ("a", "c"), ("b", "c")])),
        None
    );
    let text = "fn a() {\n    one();\n}\n\nimpl X {\n    pub fn b(&self) {\n        if x {\n        }\n    }\n}\n";
    assert_eq!(functions(text), vec![("a".into(), 3), ("b".into(), 4)]);
    assert_eq!(rank("model"), Some(0));
    assert!(rank("cli") > rank("compile") && rank("compile") > rank("stages"));
    assert!(rank("stages") > rank("trust") && rank("error") > rank("trust"));
}
