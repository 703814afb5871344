//! The parses of a cold `--related` run, on one core: the files under ROOT (but `.git` and
//! the folders its `.gitignore` names with a trailing `/`) that name an identifier of three
//! characters or more, as a whole word, that the owned file defines or references, read
//! first, then each given to `tags_and_outline`; prints, per language and outcome, how many
//! files and how long they took (the mean of `ROUNDS` rounds, 1 unless set; `ONLY=go`: that
//! language's files only; `RAW=1`: also tree-sitter's parse of every whole text, as a
//! floor). `--list` prints the candidates' paths instead (for `outline-time --ranges`).
//! `cargo run --release --example related-parse -- ROOT OWNED [--list]`

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The files under `dir`, but in `.git` and the folders named in `skipped` (the root's
/// `.gitignore` lines that end with `/`).
fn files(dir: &Path, skipped: &[String], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let Ok(t) = e.file_type() else { continue };
        if t.is_dir() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name != ".git" && !skipped.contains(&name) {
                files(&p, skipped, out);
            }
        } else if t.is_file() {
            out.push(p);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(root), Some(owned)) = (args.first(), args.get(1)) else {
        eprintln!("usage: related-parse ROOT OWNED [--list]");
        return;
    };
    let list = args.get(2).is_some_and(|a| a == "--list");
    let root = Path::new(root);
    let owned_text = std::fs::read_to_string(root.join(owned)).expect("owned file");
    let lang = curate::outline::lang_for(owned).expect("owned language");
    let tags = curate::outline::tags(lang, &owned_text).expect("owned tags");
    let names: BTreeSet<&str> = tags
        .defs
        .iter()
        .map(|d| d.name.as_str())
        .chain(tags.refs.iter().map(String::as_str))
        .filter(|n| n.chars().count() >= 3)
        .collect();
    let mut all = Vec::new();
    let skipped: Vec<String> = std::fs::read_to_string(root.join(".gitignore"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_suffix('/'))
        .map(str::to_owned)
        .collect();
    files(root, &skipped, &mut all);
    all.sort();
    let only = std::env::var("ONLY").unwrap_or_default();
    let mut candidates = Vec::new();
    for p in all {
        let rel = p
            .strip_prefix(root)
            .unwrap_or(&p)
            .to_string_lossy()
            .into_owned();
        if rel == *owned {
            continue;
        }
        let Some(lang) = curate::outline::lang_for(&rel) else {
            continue;
        };
        if lang == curate::outline::Lang::Markdown {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        let named = text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$' || !c.is_ascii()))
            .any(|w| names.contains(w));
        if !named {
            continue;
        }
        if list {
            println!("{}", p.display());
            continue;
        }
        let category = lang.name().to_owned();
        if only.is_empty() || only == category {
            candidates.push((lang, text, category));
        }
    }
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1);
    let mut stats: BTreeMap<(String, &str), (usize, f64)> = BTreeMap::new();
    for round in 0..rounds {
        for (lang, text, category) in &candidates {
            let t = Instant::now();
            let found = std::hint::black_box(curate::outline::tags_and_outline(*lang, text));
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let outcome = match &found {
                None => "none",
                Some((_, None)) => "tags",
                Some((_, Some(_))) => "tags+outline",
            };
            let s = stats.entry((category.clone(), outcome)).or_default();
            s.0 += usize::from(round == 0);
            s.1 += ms / rounds as f64;
        }
    }
    if std::env::var("RAW").is_ok() {
        let mut parsers: BTreeMap<&str, tree_sitter::Parser> = BTreeMap::new();
        let t = Instant::now();
        for _ in 0..rounds {
            for (lang, text, _) in &candidates {
                let p = parsers.entry(lang.name()).or_insert_with(|| {
                    let g: tree_sitter::Language = match lang.name() {
                        "go" => tree_sitter_go::LANGUAGE.into(),
                        "rust" => tree_sitter_rust::LANGUAGE.into(),
                        "python" => tree_sitter_python::LANGUAGE.into(),
                        "javascript" => tree_sitter_javascript::LANGUAGE.into(),
                        _ => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
                    };
                    let mut p = tree_sitter::Parser::new();
                    p.set_language(&g).unwrap();
                    p
                });
                std::hint::black_box(p.parse(text, None));
            }
        }
        println!(
            "tree-sitter alone, whole texts: {:.1} ms a round",
            t.elapsed().as_secs_f64() * 1e3 / rounds as f64
        );
    }
    let mut total = (0, 0.0);
    for ((lang, outcome), (n, ms)) in &stats {
        println!("{lang:20} {outcome:13} {n:6} files {ms:9.1} ms");
        total.0 += n;
        total.1 += ms;
    }
    println!("{:34} {:6} files {:9.1} ms", "all", total.0, total.1);
}
