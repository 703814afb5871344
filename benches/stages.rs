//! In-process stages of a compile, on deterministic generated text: token counting (the
//! fast backend against the reference), the token cache's hit path, line counting and the
//! content secret scan. `cargo bench --bench stages`; whole-process figures come from
//! `bench/run.sh`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use curate::model::Encoding;
use curate::stages::tokens::{Cached, Fast, TokenCounter};
use curate::util::cache::DigestCache;

/// The reference counter (tiktoken-rs, a dev-dependency), to compare the fast one with.
struct Reference(Encoding);

impl TokenCounter for Reference {
    fn count(&self, bytes: &[u8]) -> u64 {
        let bpe = match self.0 {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        };
        bpe.encode_ordinary(String::from_utf8_lossy(bytes).as_ref())
            .len() as u64
    }
}

/// A small deterministic generator (64-bit LCG), so every run counts the same text.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() as usize) % items.len()]
    }
}

const WORDS: &[&str] = &[
    "the",
    "context",
    "manifest",
    "budget",
    "worker",
    "reads",
    "files",
    "before",
    "it",
    "writes",
    "a",
    "change",
    "secret",
    "token",
    "count",
    "line",
    "section",
    "priority",
    "review",
    "handoff",
    "naïve",
    "café",
    "über",
    "résumé",
    "上下文",
    "文件",
    "必需",
    "テスト",
    "данные",
    "🦀",
    "—",
    "…",
    "λ",
];
const IDENTS: &[&str] = &[
    "config",
    "session",
    "user_id",
    "handle_request",
    "parse",
    "buffer",
    "state",
    "TokenCounter",
    "read_all",
    "items",
    "result",
    "err",
    "ctx",
    "manifestPath",
];
const KEYWORDS: &[&str] = &[
    "fn", "let", "if", "for", "match", "return", "const", "function", "def", "class", "import",
    "pub", "async", "await",
];

/// About `size` bytes of mixed code (Rust/TypeScript/Python-like) and prose with unicode.
fn corpus(size: usize, seed: u64) -> Vec<u8> {
    let mut r = Lcg(seed);
    let mut out = String::with_capacity(size + 256);
    while out.len() < size {
        if r.next().is_multiple_of(3) {
            // A prose paragraph.
            for _ in 0..(3 + r.next() % 5) {
                let n = 6 + r.next() % 18;
                for i in 0..n {
                    let w = r.pick(WORDS);
                    if i == 0 {
                        let mut c = w.chars();
                        if let Some(f) = c.next() {
                            out.extend(f.to_uppercase());
                            out.push_str(c.as_str());
                        }
                    } else {
                        out.push(' ');
                        out.push_str(w);
                    }
                }
                out.push_str(". ");
            }
            out.push_str("\n\n");
        } else {
            // A block of code.
            let name = r.pick(IDENTS);
            out.push_str(&format!("{} {name}_{}(", r.pick(KEYWORDS), r.next() % 1000));
            out.push_str(&format!("{}: &str) {{\n", r.pick(IDENTS)));
            for _ in 0..(2 + r.next() % 10) {
                let indent = "    ".repeat(1 + (r.next() % 3) as usize);
                out.push_str(&format!(
                    "{indent}{} {} = {}.{}({}, {:#x}); // {}\n",
                    r.pick(KEYWORDS),
                    r.pick(IDENTS),
                    r.pick(IDENTS),
                    r.pick(IDENTS),
                    r.next() % 10_000,
                    r.next(),
                    r.pick(WORDS)
                ));
            }
            out.push_str("}\n\n");
        }
    }
    out.into_bytes()
}

fn tokens(c: &mut Criterion) {
    let text = corpus(1 << 20, 1);
    let mut g = c.benchmark_group("tokens_o200k_1MiB");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.sample_size(10);
    let fast = Fast(Encoding::O200kBase);
    let reference = Reference(Encoding::O200kBase);
    assert_eq!(fast.count(&text), reference.count(&text));
    g.bench_function("fast", |b| {
        b.iter(|| fast.count(black_box(&text)));
    });
    g.bench_function("reference_tiktoken", |b| {
        b.iter(|| reference.count(black_box(&text)));
    });
    let dir = tempfile::tempdir().expect("a temporary folder");
    let cache = DigestCache::open(Some(dir.path().to_owned()), Encoding::O200kBase);
    let cached = Cached::new(&cache, &fast);
    cached.count(&text);
    g.bench_function("cached_hit", |b| b.iter(|| cached.count(black_box(&text))));
    g.finish();

    let small = corpus(4 << 10, 2);
    let mut g = c.benchmark_group("tokens_o200k_4KiB");
    g.throughput(Throughput::Bytes(small.len() as u64));
    g.bench_function("fast", |b| {
        b.iter(|| fast.count(black_box(&small)));
    });
    g.bench_function("reference_tiktoken", |b| {
        b.iter(|| reference.count(black_box(&small)));
    });
    g.finish();
}

/// Many files at once, as `measure` counts them: serial against rayon on every core.
fn tokens_parallel(c: &mut Criterion) {
    use rayon::prelude::*;
    let files: Vec<Vec<u8>> = (0..512).map(|i| corpus(16 << 10, 100 + i)).collect();
    let bytes: usize = files.iter().map(Vec::len).sum();
    let fast = Fast(Encoding::O200kBase);
    let mut g = c.benchmark_group("tokens_o200k_512_files_of_16KiB");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.sample_size(10);
    g.bench_function("serial", |b| {
        b.iter(|| files.iter().map(|f| fast.count(f)).sum::<u64>());
    });
    g.bench_function(
        format!("rayon_{}_threads", rayon::current_num_threads()),
        |b| {
            b.iter(|| files.par_iter().map(|f| fast.count(f)).sum::<u64>());
        },
    );
    g.finish();
}

fn lines(c: &mut Criterion) {
    let text = corpus(8 << 20, 3);
    let mut g = c.benchmark_group("lines_8MiB");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("count_lines", |b| {
        b.iter(|| curate::stages::measure::count_lines(black_box(&text)));
    });
    g.finish();
}

fn secrets(c: &mut Criterion) {
    let text = corpus(8 << 20, 4);
    let rules = curate::trust::secrets::ContentRules::shared().expect("the content rules build");
    assert!(
        rules.scan(&text).is_none(),
        "the generated text holds no secret"
    );
    let mut g = c.benchmark_group("secrets_8MiB");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.sample_size(20);
    g.bench_function("scan_clean", |b| b.iter(|| rules.scan(black_box(&text))));
    g.finish();
    // One line of 1 MiB that repeats a keyword: the lines around each keyword are found once
    // a line (they were found once a keyword: seconds, growing with the square of the line).
    let line = "password=".repeat((1 << 20) / 9).into_bytes();
    let mut g = c.benchmark_group("secrets_one_line_1MiB");
    g.throughput(Throughput::Bytes(line.len() as u64));
    g.sample_size(10);
    g.bench_function("scan_keywords", |b| b.iter(|| rules.scan(black_box(&line))));
    g.finish();
}

fn digest(c: &mut Criterion) {
    let text = corpus(8 << 20, 5);
    let mut g = c.benchmark_group("sha256_8MiB");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("cache_key", |b| {
        b.iter(|| curate::util::cache::key_of(black_box(&text)));
    });
    g.finish();
}

/// The token cache at its bound: reading and validating a full file (the first lookup of a
/// run), and a save that merges one new count into it.
fn cache_file(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let open = || DigestCache::open(Some(dir.path().to_owned()), Encoding::O200kBase);
    let full = open();
    for i in 0..curate::util::cache::MAX_ENTRIES as u64 {
        full.put_key(curate::util::cache::key_of(&i.to_le_bytes()), i);
    }
    full.save().expect("the cache saves");
    let probe = curate::util::cache::key_of(&7u64.to_le_bytes());
    let mut g = c.benchmark_group("token_cache_65536_entries");
    g.sample_size(20);
    g.bench_function("open_and_first_lookup", |b| {
        b.iter(|| open().get_key(black_box(&probe)));
    });
    let mut n = u64::MAX;
    g.bench_function("save_one_new_entry", |b| {
        b.iter(|| {
            let cache = open();
            n -= 1;
            cache.put_key(curate::util::cache::key_of(&n.to_le_bytes()), n);
            cache.save().expect("the cache saves");
        });
    });
    g.finish();
}

/// An excerpt as the bundle inlines it (numbered lines in a fence), whole and in sections:
/// the render's own work per file once the bytes are read.
fn excerpt(c: &mut Criterion) {
    let text = corpus(8 << 20, 6);
    let whole = curate::model::Sections::Whole;
    let lines = curate::stages::measure::count_lines(&text);
    let ranges =
        curate::model::Sections::ranges((1..lines).step_by(40).map(|s| [s, s + 19]).collect());
    let mut g = c.benchmark_group("excerpt_8MiB");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("whole", |b| {
        b.iter(|| curate::render::excerpt_text("a.rs", black_box(&text), &whole, 0));
    });
    g.bench_function("sections", |b| {
        b.iter(|| curate::render::excerpt_text("a.rs", black_box(&text), &ranges, 0));
    });
    g.finish();
}

criterion_group!(
    benches,
    excerpt,
    tokens,
    tokens_parallel,
    lines,
    secrets,
    digest,
    cache_file
);
criterion_main!(benches);
