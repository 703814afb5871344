//! Throughput of the content secret scan: clean text (prose and code with
//! no secret-rule keyword), ordinary code (some keywords), and text dense
//! with keywords (every generic rule runs).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Deterministic word stream.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as usize
    }
}

/// Words with no rule keyword in them.
const CLEAN_WORDS: &[&str] = &[
    "the", "of", "and", "to", "in", "is", "for", "that", "with", "on", "as", "it", "be", "this",
    "by", "from", "or", "are", "an", "which", "fn", "let", "mut", "impl", "struct", "enum", "case",
    "return", "self", "use", "mod", "where", "type", "value", "result", "error", "option", "some",
    "none", "vec", "string", "len", "iter", "map", "filter", "collect", "into", "from", "new",
    "default", "write", "read", "buffer", "bytes", "count", "index", "line", "file", "route",
    "name", "data", "list", "item", "node", "tree", "graph", "query", "table", "row", "column",
    "render", "layout", "width", "height", "offset", "length", "number", "parse", "format",
    "display", "debug", "check", "assert", "equal", "true", "false", "loop", "while", "break",
    "continue", "if", "else", "then", "when", "must", "should", "could", "would", "every", "other",
    "first", "last", "then", "before", "after", "between", "under",
];

/// Code-ish lines that mention keywords but hold no secret.
const KEYWORD_LINES: &[&str] = &[
    "let api_key = config.get(\"api_key\")?;",
    "const token = auth.token();",
    "password: String,",
    "pub fn secret_ref(&self) -> &SecretString { &self.secret }",
    "access_token = request.headers.get(\"Authorization\")",
    "client_secret = os.environ[\"CLIENT_SECRET\"]",
    "key: Key::new(42),",
    "if let Some(credentials) = load_credentials(path) {",
    "// see https://docs.example.com/auth for the token format",
    "url = \"https://user@host.internal/path\"",
    "-----BEGIN CERTIFICATE-----",
    "curl -s https://example.com/health",
];

fn clean(size: usize, seed: u64) -> Vec<u8> {
    let mut r = Lcg(seed);
    let mut out = String::with_capacity(size + 64);
    while out.len() < size {
        for _ in 0..(4 + r.next() % 12) {
            out.push_str(CLEAN_WORDS[r.next() % CLEAN_WORDS.len()]);
            out.push(if r.next().is_multiple_of(7) { '_' } else { ' ' });
        }
        out.push_str(if r.next().is_multiple_of(3) {
            ";\n"
        } else {
            ".\n"
        });
    }
    out.into_bytes()
}

fn dense(size: usize, seed: u64) -> Vec<u8> {
    let mut r = Lcg(seed);
    let mut out = String::with_capacity(size + 64);
    while out.len() < size {
        out.push_str(KEYWORD_LINES[r.next() % KEYWORD_LINES.len()]);
        out.push('\n');
    }
    out.into_bytes()
}

fn mixed(size: usize, seed: u64) -> Vec<u8> {
    let text = clean(size, seed);
    let keywords = dense(size / 20, seed + 1);
    let mut out = Vec::with_capacity(size + keywords.len());
    for (chunk, line) in text
        .chunks(4096)
        .zip(keywords.split(|&b| b == b'\n').cycle())
    {
        out.extend_from_slice(chunk);
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out
}

fn scan(c: &mut Criterion) {
    let rules = curate::trust::secrets::ContentRules::shared().expect("the content rules build");
    for (name, text) in [
        ("clean", clean(8 << 20, 1)),
        ("code_with_keywords", mixed(8 << 20, 2)),
        ("keyword_dense", dense(8 << 20, 3)),
    ] {
        assert!(rules.scan(&text).is_none(), "{name} holds no secret");
        let mut g = c.benchmark_group(format!("secrets_scan_{name}"));
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.sample_size(10);
        g.bench_function("8MiB", |b| b.iter(|| rules.scan(black_box(&text))));
        g.finish();
    }
}

criterion_group!(benches, scan);
criterion_main!(benches);
