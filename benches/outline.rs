//! The outline of source files: a generated 2,000-line Rust file's outline, tags and one
//! symbol (beside tree-sitter's whole parse of it), generated Go and Python files'
//! outlines, and a Markdown file's outline. The target: a 2,000-line Rust
//! outline in at most 3 ms on one core. `cargo bench --bench outline`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use curate::outline::{Lang, outline, symbol, tags};

/// `head`, then `item(0)`, `item(1)` … until the text has `lines` lines.
fn repeated(head: &str, lines: usize, item: impl Fn(usize) -> String) -> String {
    let mut out = head.to_owned();
    let mut i = 0;
    while out.lines().count() < lines {
        out.push_str(&item(i));
        i += 1;
    }
    out
}

/// A deterministic Rust file of about `lines` lines: items with doc comments, attributes,
/// impls with methods, bodies with statements.
fn rust_file(lines: usize) -> String {
    repeated(
        "//! A generated module.\n\nuse std::collections::BTreeMap;\nuse std::fmt;\n\n",
        lines,
        |i| {
            format!(
                "/// Item {i}.\n#[derive(Debug, Clone)]\npub struct Item{i} {{\n    name: String,\n    \
             values: BTreeMap<String, u64>,\n}}\n\nimpl Item{i} {{\n    /// Makes one.\n    pub fn \
             new(name: &str) -> Self {{\n        Self {{\n            name: name.to_owned(),\n            \
             values: BTreeMap::new(),\n        }}\n    }}\n\n    /// Adds a value.\n    pub fn add(\n        \
             &mut self,\n        key: &str,\n        value: u64,\n    ) -> Option<u64> {{\n        let old \
             = self.values.insert(key.to_owned(), value);\n        if old.is_some() {{\n            \
             return old;\n        }}\n        None\n    }}\n}}\n\nimpl fmt::Display for Item{i} {{\n    fn \
             fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {{\n        write!(f, \"{{}}\", \
             self.name)\n    }}\n}}\n\nfn helper{i}(x: u64) -> u64 {{\n    x * 2 + {i}\n}}\n\n"
            )
        },
    )
}

/// A deterministic Go file of about `lines` lines: types with doc comments, methods and
/// functions with bodies.
fn go_file(lines: usize) -> String {
    repeated(
        "// Package gen is generated.\npackage gen\n\nimport (\n\t\"fmt\"\n\t\"sort\"\n)\n\n",
        lines,
        |i| {
            format!(
                "// Item{i} is one item.\ntype Item{i} struct {{\n\tName   string\n\tValues map[string]int\n}}\n\n\
             // Add adds a value.\nfunc (it *Item{i}) Add(key string, value int) (int, bool) {{\n\t\
             old, ok := it.Values[key]\n\tit.Values[key] = value\n\tif ok {{\n\t\treturn old, true\n\t}}\n\t\
             return 0, false\n}}\n\n// Keys lists the keys.\nfunc (it *Item{i}) Keys() []string {{\n\t\
             keys := make([]string, 0, len(it.Values))\n\tfor k := range it.Values {{\n\t\tkeys = append(keys, k)\n\t}}\n\t\
             sort.Strings(keys)\n\treturn keys\n}}\n\nfunc helper{i}(x int) string {{\n\treturn fmt.Sprint(x*2 + {i})\n}}\n\n"
            )
        },
    )
}

/// A deterministic Python file of about `lines` lines: classes with docstrings and
/// methods, functions with bodies.
fn python_file(lines: usize) -> String {
    repeated(
        "\"\"\"A generated module.\"\"\"\n\nimport os\nfrom typing import Optional\n\n\n",
        lines,
        |i| {
            format!(
                "class Item{i}:\n    \"\"\"Item {i}.\"\"\"\n\n    def __init__(self, name: str) -> None:\n        \
             self.name = name\n        self.values: dict[str, int] = {{}}\n\n    def add(\n        self,\n        \
             key: str,\n        value: int,\n    ) -> Optional[int]:\n        \"\"\"Adds a value.\"\"\"\n        \
             old = self.values.get(key)\n        self.values[key] = value\n        if old is not None:\n            \
             return old\n        return None\n\n\ndef helper{i}(x: int) -> str:\n    return os.fspath(str(x * 2 + {i}))\n\n\n"
            )
        },
    )
}

fn markdown_file(lines: usize) -> String {
    repeated("", lines, |i| {
        format!(
            "## Section {i}\n\nSome prose about `Item{i}` and more.\n\n```rust\n# not a heading\nfn f() {{}}\n```\n\n"
        )
    })
}

fn bench(c: &mut Criterion) {
    let rust = rust_file(2000);
    let n = rust.lines().count();
    let mut g = c.benchmark_group("outline");
    g.throughput(Throughput::Bytes(rust.len() as u64));
    g.bench_function(format!("rust_{n}_lines"), |b| {
        b.iter(|| outline(Lang::Rust, black_box(&rust)));
    });
    g.bench_function(format!("rust_{n}_lines_tags"), |b| {
        b.iter(|| tags(Lang::Rust, black_box(&rust)));
    });
    g.bench_function(format!("rust_{n}_lines_symbol"), |b| {
        b.iter(|| symbol(Lang::Rust, black_box(&rust), "Item40::add"));
    });
    // For comparison: tree-sitter's parse of the whole file (an outline leaves bodies out).
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_rust::LANGUAGE.into())
        .unwrap();
    g.bench_function("tree_sitter_whole_parse", |b| {
        b.iter(|| parser.parse(black_box(&rust), None));
    });
    for (lang, name, text) in [
        (Lang::Go, "go", go_file(2000)),
        (Lang::Python, "python", python_file(2000)),
    ] {
        let n = text.lines().count();
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(format!("{name}_{n}_lines"), |b| {
            b.iter(|| outline(lang, black_box(&text)));
        });
    }
    let md = markdown_file(2000);
    g.throughput(Throughput::Bytes(md.len() as u64));
    g.bench_function("markdown_2000_lines", |b| {
        b.iter(|| outline(Lang::Markdown, black_box(&md)));
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
