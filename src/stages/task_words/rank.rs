//! Word relevance: the repository's documents, and every file by the words of its path,
//! ranked against the task's text by BM25 (k1 1.2, b 0.75). A word is a run of letters
//! and digits, split where its case turns (`SessionStore`: `session`, `store`) and at `_`,
//! lower-cased, of two characters or more, common English words left out; a run of CJK
//! characters gives its pairs of neighbours (`上下文` gives `上下`, `下文`), which is how a
//! text without spaces is searched. Words of a path count three times.
//!
//! Deterministic: the terms are summed in their sorted order, ties go by path.

use std::collections::{BTreeMap, HashMap};

/// BM25's saturation and length normalisation.
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// A word of a file's path counts this many times.
const PATH_WEIGHT: u32 = 3;
/// A query word counts at most this many times, however often the text says it.
const MAX_QUERY_COUNT: u32 = 3;

/// Words too common to tell files apart.
const STOP: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from",
    "has", "have", "if", "in", "into", "is", "it", "its", "may", "must", "no", "not", "of", "on",
    "one", "or", "our", "shall", "should", "so", "such", "than", "that", "the", "their", "then",
    "there", "these", "they", "this", "to", "up", "use", "was", "we", "were", "what", "when",
    "which", "while", "who", "will", "with", "would", "you", "your", "all", "any", "each", "also",
    "after", "before", "about", "only", "more", "some", "other", "been", "being", "how", "new",
    // A path's most common parts: a folder every tree has, the extensions.
    "src", "lib", "md", "txt", "json", "yaml", "yml", "toml", "rs", "go", "py", "js", "ts", "tsx",
    "jsx", "rb", "java", "kt", "cpp", "cc", "hpp", "cs", "php", "sh",
];

/// True for a CJK ideograph or kana (searched by pairs).
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xf900..=0xfaff | 0xac00..=0xd7af)
}

/// The words of `text`, in order (see the module's doc).
#[must_use]
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut run = String::new();
    let mut cjk: Vec<char> = Vec::new();
    let flush_run = |run: &mut String, out: &mut Vec<String>| {
        for w in split_identifier(run) {
            if w.chars().count() >= 2 && !STOP.contains(&w.as_str()) {
                out.push(w);
            }
        }
        run.clear();
    };
    let flush_cjk = |cjk: &mut Vec<char>, out: &mut Vec<String>| {
        if cjk.len() == 1 {
            out.push(cjk[0].to_string());
        }
        for pair in cjk.windows(2) {
            out.push(pair.iter().collect());
        }
        cjk.clear();
    };
    for c in text.chars() {
        if is_cjk(c) {
            flush_run(&mut run, &mut out);
            cjk.push(c);
        } else if c.is_alphanumeric() {
            flush_cjk(&mut cjk, &mut out);
            run.push(c);
        } else {
            flush_run(&mut run, &mut out);
            flush_cjk(&mut cjk, &mut out);
        }
    }
    flush_run(&mut run, &mut out);
    flush_cjk(&mut cjk, &mut out);
    out
}

/// An identifier's parts, lower-cased: split where the case turns from lower to upper, and
/// before the last capital of a run of capitals (`HTTPServer`: `http`, `server`).
fn split_identifier(id: &str) -> Vec<String> {
    let chars: Vec<char> = id.chars().collect();
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let (prev, cur) = (chars[i - 1], chars[i]);
        let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
        let turn = (prev.is_lowercase() && cur.is_uppercase())
            || (prev.is_uppercase() && cur.is_uppercase() && next_lower);
        if turn {
            parts.push(chars[start..i].iter().collect::<String>().to_lowercase());
            start = i;
        }
    }
    if start < chars.len() {
        parts.push(chars[start..].iter().collect::<String>().to_lowercase());
    }
    parts
}

/// A file as the ranking sees it: the counts of its words (its path's counted
/// [`PATH_WEIGHT`] times) and how many words it has.
#[derive(Debug, Default)]
pub struct Doc {
    counts: HashMap<String, u32>,
    len: u32,
}

impl Doc {
    /// `path`'s words, and `text`'s when there is one (a document's content).
    #[must_use]
    pub fn new(path: &str, text: Option<&str>) -> Doc {
        let mut doc = Doc::default();
        for w in words(path) {
            *doc.counts.entry(w).or_default() += PATH_WEIGHT;
            doc.len += PATH_WEIGHT;
        }
        for w in text.map(words).unwrap_or_default() {
            *doc.counts.entry(w).or_default() += 1;
            doc.len += 1;
        }
        doc
    }
}

/// A ranked file: its score and the query words it matched, best first.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    pub path: String,
    pub score: f64,
    pub matched: Vec<String>,
}

/// `docs` ranked against `query` (the task's text), best first, ties by path; files that
/// match no word are left out.
#[must_use]
pub fn rank(query: &str, docs: &[(String, Doc)]) -> Vec<Ranked> {
    let mut q: BTreeMap<String, u32> = BTreeMap::new();
    for w in words(query) {
        let n = q.entry(w).or_default();
        *n = (*n + 1).min(MAX_QUERY_COUNT);
    }
    if q.is_empty() || docs.is_empty() {
        return Vec::new();
    }
    let n = docs.len() as f64;
    let avg = docs.iter().map(|(_, d)| f64::from(d.len)).sum::<f64>() / n;
    let idf: BTreeMap<&str, f64> = q
        .keys()
        .map(|t| {
            let df = docs
                .iter()
                .filter(|(_, d)| d.counts.contains_key(t))
                .count() as f64;
            (t.as_str(), ((n - df + 0.5) / (df + 0.5) + 1.0).ln())
        })
        .collect();
    let mut out: Vec<Ranked> = docs
        .iter()
        .filter_map(|(path, d)| {
            let mut score = 0.0;
            let mut matched: Vec<(f64, &str)> = Vec::new();
            for (t, &qn) in &q {
                let Some(&tf) = d.counts.get(t) else {
                    continue;
                };
                let tf = f64::from(tf);
                let norm = K1 * (1.0 - B + B * f64::from(d.len) / avg.max(1.0));
                let part = f64::from(qn) * idf[t.as_str()] * tf * (K1 + 1.0) / (tf + norm);
                score += part;
                matched.push((part, t));
            }
            if matched.is_empty() {
                return None;
            }
            matched.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
            Some(Ranked {
                path: path.clone(),
                score,
                matched: matched.iter().map(|(_, t)| (*t).to_owned()).collect(),
            })
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.path.cmp(&b.path)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_identifiers_and_pair_cjk_characters() {
        assert_eq!(
            words("The SessionStore's HTTPServer rotates session_id; 上下文注入 v2"),
            [
                "session", "store", "http", "server", "rotates", "session", "id", "上下", "下文",
                "文注", "注入", "v2"
            ]
        );
    }

    #[test]
    fn the_file_that_uses_the_tasks_words_ranks_first() {
        let docs = vec![
            (
                "docs/auth.md".to_owned(),
                Doc::new(
                    "docs/auth.md",
                    Some("# Login\nlock the account after failed logins"),
                ),
            ),
            (
                "docs/deploy.md".to_owned(),
                Doc::new("docs/deploy.md", Some("# Deploy\nship the container")),
            ),
            (
                "src/auth/lockout.ts".to_owned(),
                Doc::new("src/auth/lockout.ts", None),
            ),
            ("src/util.ts".to_owned(), Doc::new("src/util.ts", None)),
        ];
        let ranked = rank("Lock accounts after repeated failed logins (auth)", &docs);
        let order: Vec<&str> = ranked.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(order, ["docs/auth.md", "src/auth/lockout.ts"]);
        assert_eq!(ranked[0].matched[..2], ["failed", "lock"]);
        // A CJK text finds a CJK document.
        let zh = vec![
            (
                "a.md".to_owned(),
                Doc::new("a.md", Some("上下文注入的规则")),
            ),
            ("b.md".to_owned(), Doc::new("b.md", Some("发布流程"))),
        ];
        assert_eq!(rank("修改上下文注入", &zh)[0].path, "a.md");
    }
}
