//! Word relevance: the repository's documents, and every file by the words of its path,
//! ranked against the task's text by BM25 (k1 1.2, b 0.75). A word is a run of letters
//! and digits, split where its case turns (`SessionStore`: `session`, `store`) and at `_`,
//! lower-cased, of two characters or more, common English words left out; a run of CJK
//! characters gives its pairs of neighbours (`上下文` gives `上下`, `下文`), which is how a
//! text without spaces is searched. Words of a path count three times.
//!
//! A file's words are read from the word index ([`Terms`], kept beside the `--related`
//! index) where it holds the file as it is, so a warm run reads no text it read before.
//!
//! Deterministic: the terms are summed in their sorted order, ties go by path.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use rayon::prelude::*;

use crate::model::paths::RepoPath;
use crate::stages::related::{Counted, Kept, Terms};
use crate::trust::admit::{Refusal, admit, judge_name};
use crate::trust::secrets::ContentRules;

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

/// True for a word in [`STOP`].
fn is_stop(w: &str) -> bool {
    /// The words sorted, and the longest one's length.
    static SORTED: std::sync::OnceLock<(Vec<&'static str>, usize)> = std::sync::OnceLock::new();
    let (sorted, longest) = SORTED.get_or_init(|| {
        let mut v = STOP.to_vec();
        v.sort_unstable();
        let longest = v.iter().map(|w| w.len()).max().unwrap_or(0);
        (v, longest)
    });
    w.len() <= *longest && sorted.binary_search(&w).is_ok()
}

/// The words of `text`, in order (see the module's doc).
#[must_use]
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    each_word(text, |w| out.push(w.to_owned()));
    out
}

/// Calls `f` with each of [`words`] of `text`, in order, with no string made for each.
pub fn each_word(text: &str, mut f: impl FnMut(&str)) {
    let mut split = Splitter::default();
    let mut cjk: Vec<char> = Vec::new();
    // Where the run of letters and digits being read starts.
    let mut run: Option<usize> = None;
    for (at, c) in text.char_indices() {
        if is_cjk(c) {
            if let Some(from) = run.take() {
                split.split(&text[from..at], &mut f);
            }
            cjk.push(c);
        } else if c.is_alphanumeric() {
            flush_cjk(&mut cjk, &mut split.part, &mut f);
            run.get_or_insert(at);
        } else {
            if let Some(from) = run.take() {
                split.split(&text[from..at], &mut f);
            }
            flush_cjk(&mut cjk, &mut split.part, &mut f);
        }
    }
    if let Some(from) = run {
        split.split(&text[from..], &mut f);
    }
    flush_cjk(&mut cjk, &mut split.part, &mut f);
}

/// A run of CJK characters' words: its pairs of neighbours (a lone character is its own).
fn flush_cjk(cjk: &mut Vec<char>, buf: &mut String, f: &mut impl FnMut(&str)) {
    if cjk.len() == 1 {
        buf.clear();
        buf.push(cjk[0]);
        f(buf);
    }
    for pair in cjk.windows(2) {
        buf.clear();
        buf.extend(pair);
        f(buf);
    }
    cjk.clear();
}

/// Splits identifiers into their parts, lower-cased, in buffers kept from one to the next.
#[derive(Default)]
struct Splitter {
    chars: Vec<char>,
    part: String,
}

impl Splitter {
    /// An identifier's parts, lower-cased, those of two characters or more that are not in
    /// [`STOP`]: split where the case turns from lower to upper, and before the last capital
    /// of a run of capitals (`HTTPServer`: `http`, `server`).
    fn split(&mut self, id: &str, f: &mut impl FnMut(&str)) {
        self.chars.clear();
        self.chars.extend(id.chars());
        let mut start = 0;
        for i in 1..self.chars.len() {
            let (prev, cur) = (self.chars[i - 1], self.chars[i]);
            let next_lower = self.chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            let turn = (prev.is_lowercase() && cur.is_uppercase())
                || (prev.is_uppercase() && cur.is_uppercase() && next_lower);
            if turn {
                self.emit(start, i, f);
                start = i;
            }
        }
        if start < self.chars.len() {
            self.emit(start, self.chars.len(), f);
        }
    }

    /// The part `chars[from..to]`, lower-cased as a string is (`Σ` at a word's end is `ς`).
    fn emit(&mut self, from: usize, to: usize, f: &mut impl FnMut(&str)) {
        let part = &self.chars[from..to];
        self.part.clear();
        if part.iter().all(char::is_ascii) {
            self.part.extend(part.iter().map(char::to_ascii_lowercase));
        } else {
            self.part = part.iter().collect::<String>().to_lowercase();
        }
        if self.part.chars().count() >= 2 && !is_stop(&self.part) {
            f(&self.part);
        }
    }
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

/// The task's text as the ranking reads it: its distinct words, sorted, each counted at most
/// [`MAX_QUERY_COUNT`] times. A word's place in it is its slot.
#[derive(Debug)]
pub struct Query {
    terms: Vec<(String, u32)>,
}

impl Query {
    #[must_use]
    pub fn new(text: &str) -> Query {
        let mut q: BTreeMap<String, u32> = BTreeMap::new();
        for w in words(text) {
            let n = q.entry(w).or_default();
            *n = (*n + 1).min(MAX_QUERY_COUNT);
        }
        Query {
            terms: q.into_iter().collect(),
        }
    }

    /// The slot of `word`, if the text has it.
    fn slot(&self, word: &str) -> Option<u32> {
        let k = self
            .terms
            .binary_search_by(|(t, _)| t.as_str().cmp(word))
            .ok()?;
        u32::try_from(k).ok()
    }
}

/// A file as scored against a [`Query`]: its length in words (its path's counted
/// [`PATH_WEIGHT`] times) and each query word it holds, by slot, with its count.
#[derive(Debug, Default)]
pub struct Scored {
    len: u32,
    tf: Vec<(u32, u32)>,
}

/// Every path's words, made once a walk ([`super::Prepared`]): each distinct word an id,
/// each path the ids of its words in order.
#[derive(Debug, Default)]
pub struct PathWords {
    ids_of: HashMap<String, u32>,
    /// Path `k`'s words are `ids[starts[k]..starts[k + 1]]`.
    starts: Vec<u32>,
    ids: Vec<u32>,
}

impl PathWords {
    /// Of `universe`.
    #[must_use]
    pub fn new(universe: &[String]) -> PathWords {
        let mut w = PathWords {
            starts: Vec::with_capacity(universe.len() + 1),
            ..PathWords::default()
        };
        w.starts.push(0);
        for path in universe {
            each_word(path, |word| {
                let next = u32::try_from(w.ids_of.len()).unwrap_or(u32::MAX);
                let id = *w.ids_of.entry(word.to_owned()).or_insert(next);
                w.ids.push(id);
            });
            w.starts
                .push(u32::try_from(w.ids.len()).unwrap_or(u32::MAX));
        }
        w
    }

    /// Each word id's slot in `q` (`u32::MAX`: the text does not have it).
    fn slots(&self, q: &Query) -> Vec<u32> {
        let mut slots = vec![u32::MAX; self.ids_of.len()];
        for (k, (word, _)) in q.terms.iter().enumerate() {
            if let Some(&id) = self.ids_of.get(word) {
                slots[id as usize] = k as u32;
            }
        }
        slots
    }

    /// Path `k`'s words as scored against the query whose [`PathWords::slots`] are `slots`.
    fn scored(&self, k: usize, slots: &[u32]) -> Scored {
        let mut d = Scored::default();
        let (Some(&from), Some(&to)) = (self.starts.get(k), self.starts.get(k + 1)) else {
            return d;
        };
        for &id in &self.ids[from as usize..to as usize] {
            d.len += PATH_WEIGHT;
            if let Some(&slot) = slots.get(id as usize)
                && slot != u32::MAX
            {
                d.tf.push((slot, PATH_WEIGHT));
            }
        }
        d
    }
}

impl Scored {
    /// Each slot once, in order, its counts summed.
    fn finish(mut self) -> Scored {
        self.tf.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(self.tf.len());
        for (slot, n) in self.tf {
            match merged.last_mut() {
                Some(last) if last.0 == slot => last.1 += n,
                _ => merged.push((slot, n)),
            }
        }
        self.tf = merged;
        self
    }
}

/// `docs` ranked against `query` (the task's text), best first, ties by path; files that
/// match no word are left out.
#[must_use]
pub fn rank(query: &str, docs: &[(String, Doc)]) -> Vec<Ranked> {
    let q = Query::new(query);
    let scored: Vec<(String, Scored)> = docs
        .iter()
        .map(|(path, d)| {
            let mut s = Scored {
                len: d.len,
                tf: Vec::new(),
            };
            for (w, &n) in &d.counts {
                if let Some(slot) = q.slot(w) {
                    s.tf.push((slot, n));
                }
            }
            (path.clone(), s.finish())
        })
        .collect();
    score(&q, &scored)
}

/// BM25 of each of `docs` against `q`, best first, ties by path; files that match no word
/// are left out. Each file's parts are summed in the order of the words (their slots).
#[must_use]
pub fn score<P: AsRef<str>>(q: &Query, docs: &[(P, Scored)]) -> Vec<Ranked> {
    if q.terms.is_empty() || docs.is_empty() {
        return Vec::new();
    }
    let n = docs.len() as f64;
    let avg = docs.iter().map(|(_, d)| f64::from(d.len)).sum::<f64>() / n;
    let mut df = vec![0u64; q.terms.len()];
    for (_, d) in docs {
        for &(slot, _) in &d.tf {
            df[slot as usize] += 1;
        }
    }
    let idf: Vec<f64> = df
        .iter()
        .map(|&df| {
            let df = df as f64;
            ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
        })
        .collect();
    let mut out: Vec<Ranked> = docs
        .iter()
        .filter(|(_, d)| !d.tf.is_empty())
        .map(|(path, d)| {
            let mut score = 0.0;
            let mut matched: Vec<(f64, &str)> = Vec::with_capacity(d.tf.len());
            let norm = K1 * (1.0 - B + B * f64::from(d.len) / avg.max(1.0));
            for &(slot, tf) in &d.tf {
                let (t, qn) = &q.terms[slot as usize];
                let tf = f64::from(tf);
                let part = f64::from(*qn) * idf[slot as usize] * tf * (K1 + 1.0) / (tf + norm);
                score += part;
                matched.push((part, t));
            }
            matched.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
            Ranked {
                path: path.as_ref().to_owned(),
                score,
                matched: matched.iter().map(|(_, t)| (*t).to_owned()).collect(),
            }
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.path.cmp(&b.path)));
    out
}

/// What the tokeniser is, for the word index ([`Terms`]): an index made by another is not
/// read. Change the number with [`words`] or [`STOP`].
#[must_use]
pub fn words_of() -> Vec<u8> {
    // 3: the keys of code files' string literals and the names they may define kept among
    // the words.
    format!("task words 3: {}", STOP.join(",")).into_bytes()
}

/// Where the files' words come from: their text read through admission, or the word index
/// ([`Terms`]) where a file is as it was read.
pub struct Texts<'a> {
    pub root: &'a Path,
    pub max_file_size: u64,
    pub rules: &'a ContentRules,
    pub terms: &'a Terms,
}

/// The files of `universe` at the places `open` ranked against `query` as [`rank`] ranks
/// them: the first `max_read` by their path and their text (when admission lets it in),
/// the others by their path alone (`paths`: the universe's [`PathWords`]). A file's text
/// is read only when the word index does not hold it as it is.
#[must_use]
pub fn rank_files(
    query: &str,
    universe: &[String],
    paths: &PathWords,
    open: &[usize],
    max_read: usize,
    t: &Texts<'_>,
) -> Vec<Ranked> {
    let q = Query::new(query);
    if q.terms.is_empty() || open.is_empty() {
        return Vec::new();
    }
    // Each vocabulary id's slot (`u32::MAX`: the text does not have it).
    let mut slots = vec![u32::MAX; t.terms.words()];
    for (k, (w, _)) in q.terms.iter().enumerate() {
        if let Some(id) = t.terms.id_of(w) {
            slots[id as usize] = k as u32;
        }
    }
    let path_slots = paths.slots(&q);
    let docs: Vec<(&str, Scored)> = open
        .par_iter()
        .enumerate()
        .map(|(n, &k)| {
            let p = universe[k].as_str();
            let mut d = paths.scored(k, &path_slots);
            if n < max_read {
                text_of(t, &q, &slots, p, &mut d);
            }
            (p, d.finish())
        })
        .collect();
    score(&q, &docs)
}

/// What the word index keeps of `path`, when it holds the file as it is and admission would
/// still judge it by its content (its name and size pass).
pub(super) fn kept<'t>(terms: &'t Terms, path: &str, max_file_size: u64) -> Option<Kept<'t>> {
    terms
        .still(path)
        .filter(|k| judge_name(path).is_ok() && (max_file_size == 0 || k.size() <= max_file_size))
}

/// A string literal's key as the word index keeps it among a file's words: after a byte no
/// word holds, so no query word matches it.
pub(super) const LITERAL: char = '\u{1}';
/// A name that may be defined in the file ([`super::idents::maybe_defined`]), the same way.
pub(super) const DEFINED: char = '\u{2}';

/// Adds the words of `path`'s text to `d`: from the word index when it holds the file as it
/// is, else read through admission (and kept for the next run).
fn text_of(t: &Texts<'_>, q: &Query, slots: &[u32], path: &str, d: &mut Scored) {
    if let Some(kept) = kept(t.terms, path, t.max_file_size) {
        if kept.refused() {
            return;
        }
        let mut tf = Vec::new();
        let len = t.terms.each(kept, |id, n| {
            if let Some(&slot) = slots.get(id as usize)
                && slot != u32::MAX
            {
                tf.push((slot, n));
            }
        });
        // Words that do not decode: the file is read.
        if let Some(len) = len {
            d.len += len;
            d.tf.extend(tf);
            return;
        }
    }
    let Ok(rp) = RepoPath::new(path) else {
        return;
    };
    let read = admit(t.root, &rp, t.max_file_size, t.rules);
    // Taken after the read: a change since moves it, and a change in this run makes it
    // racy, never kept.
    let stamp = t.terms.stamp(path);
    let bytes = match read {
        Ok(bytes) => bytes,
        Err(Refusal::Binary | Refusal::SecretContent { .. }) => {
            if let Some(stamp) = stamp {
                t.terms.learn(path, stamp, Counted::Refused);
            }
            return;
        }
        Err(_) => return,
    };
    let text = String::from_utf8_lossy(&bytes);
    let mut counts: HashMap<String, u32> = HashMap::new();
    let mut len = 0u32;
    each_word(&text, |w| {
        match counts.get_mut(w) {
            Some(n) => *n += 1,
            None => {
                counts.insert(w.to_owned(), 1);
            }
        }
        len += 1;
    });
    d.len += len;
    for (w, &n) in &counts {
        if let Some(slot) = q.slot(w) {
            d.tf.push((slot, n));
        }
    }
    if let Some(stamp) = stamp {
        let mut counts: Vec<(String, u32)> = counts.into_iter().collect();
        // The keys of a code file's string literals, for the edges they make (kept, not
        // counted among its words).
        if super::is_code(path) {
            counts.extend(
                crate::stages::related::literals::keys(&text)
                    .into_iter()
                    .map(|k| (format!("{LITERAL}{k}"), 0)),
            );
        }
        // The names it may define, so that a warm run parses only the files that may define
        // a name the text gives.
        if let Some(lang) = crate::outline::lang_for(path) {
            counts.extend(
                super::idents::maybe_defined(lang, &text)
                    .into_iter()
                    .map(|n| (format!("{DEFINED}{n}"), 0)),
            );
        }
        counts.sort_unstable();
        t.terms.learn(path, stamp, Counted::Words { len, counts });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words as the first version split them, a string for each: what the index's
    /// words must stay.
    fn words_as_first_split(text: &str) -> Vec<String> {
        fn split_identifier(id: &str) -> Vec<String> {
            let chars: Vec<char> = id.chars().collect();
            let mut parts = Vec::new();
            let mut start = 0;
            for i in 1..chars.len() {
                let (prev, cur) = (chars[i - 1], chars[i]);
                let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
                if (prev.is_lowercase() && cur.is_uppercase())
                    || (prev.is_uppercase() && cur.is_uppercase() && next_lower)
                {
                    parts.push(chars[start..i].iter().collect::<String>().to_lowercase());
                    start = i;
                }
            }
            if start < chars.len() {
                parts.push(chars[start..].iter().collect::<String>().to_lowercase());
            }
            parts
        }
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

    #[test]
    fn words_are_split_as_they_first_were() {
        let pieces = [
            "Session",
            "HTTPServer",
            "_",
            " ",
            "上下文",
            "注",
            "ΣΑΣ",
            "ΟΔΟΣ",
            "İstanbul",
            "x",
            "v2",
            "the",
            "ab",
            "é",
            "/",
            ".",
            "ǅungla",
            "ﬁle",
            "ß",
            "9",
            "中",
            "Ab",
        ];
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    let text = format!("{a}{b}{c}");
                    assert_eq!(words(&text), words_as_first_split(&text), "{text:?}");
                }
            }
        }
    }

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
