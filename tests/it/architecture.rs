//! The shape of `src/`: no import cycle between source files, and no library module that
//! reaches up into a front-end (`cli`, `hook`, `mcp`). A failure names the files.
//!
//! References are read from the text: `use crate::…` trees and inline `crate::…` /
//! `super::…` paths, outside `#[cfg(test)]` modules. Each resolves to the file of the
//! longest module path it names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The front-ends: the only modules allowed to import each other's layer… and nobody below.
const FRONT_ENDS: [&str; 3] = ["cli", "hook", "mcp"];

/// Every source file of the library and binary, by module path (`""` for lib.rs).
fn modules() -> BTreeMap<String, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(&src).sort_by_file_name() {
        let e = e.unwrap();
        let rel = e
            .path()
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if e.path().extension().is_none_or(|x| x != "rs") || rel == "main.rs" {
            continue;
        }
        let text = std::fs::read_to_string(e.path()).unwrap();
        let module = rel
            .trim_end_matches(".rs")
            .trim_end_matches("/mod")
            .trim_end_matches("lib")
            .replace('/', "::");
        out.insert(module, text);
    }
    out
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

fn is_front_end(module: &str) -> bool {
    FRONT_ENDS
        .iter()
        .any(|f| module == *f || module.starts_with(&format!("{f}::")))
}

#[test]
fn no_library_module_imports_a_front_end() {
    let mut bad = Vec::new();
    for (m, deps) in graph() {
        if is_front_end(&m) {
            continue;
        }
        for d in deps.iter().filter(|d| is_front_end(d)) {
            bad.push(format!("{m} -> {d}"));
        }
    }
    assert!(
        bad.is_empty(),
        "library modules import a front-end: {bad:#?}"
    );
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
fn the_checker_sees_cycles_and_front_end_imports() {
    // The reader must find what the two tests above rely on, or they could never fail.
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
}
