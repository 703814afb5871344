//! Read each candidate once, in parallel: size and binary checks, the content secret rules,
//! line counts, section clamping, the content hash; later, tokens of the selected text.
//!
//! Receives candidates in their final order and returns one [`Fate`] per candidate in the
//! same order (rayon's indexed `collect` keeps it), so the result does not depend on the
//! thread count. Workers return values; nothing here writes.

use std::borrow::Cow;
use std::path::Path;

use rayon::prelude::*;

use crate::model::Note;
use crate::model::paths::RepoPath;
use crate::model::{Range, Sections, quoted};
use crate::stages::known::Known;
use crate::stages::tokens::TokenCounter;
use crate::trust::admit::{Admitted, Held, admit_hashed, is_clean, judge_name};
use crate::trust::secrets::ContentRules;
use crate::util::cache::DigestCache;

/// The default size cap of a file (`--max-file-size`): 10 MiB.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 10 * 1024 * 1024;

/// Limits of the reading stage.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Files larger than this are excluded unread.
    pub max_file_size: u64,
    /// The consumer's per-file cut in bytes (Trellis' `max_file_bytes`; 0: none).
    pub cut_bytes: u64,
}

/// A candidate that passed the content checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Measured {
    /// Lines of the whole file.
    pub file_lines: u64,
    /// The sections, clamped to the file.
    pub sections: Sections,
    /// Lines selected.
    pub lines: u64,
    /// Bytes selected.
    pub bytes: u64,
    /// Bytes of them the consumer injects after its per-file cut ([`cut_len`]).
    pub injected: u64,
    /// sha256 of the whole file's bytes.
    pub sha256: String,
    /// Tokens of the selected text, once counted.
    pub tokens: Option<u64>,
    /// Decisions worth a curation line (clamped sections …).
    pub notes: Vec<Note>,
    /// Each heading anchor of the selection, with the lines it resolved to.
    pub anchors: Vec<(String, crate::model::Range)>,
}

/// What reading a candidate decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    Measured(Measured),
    /// Excluded, with the reason in words (never a secret's value).
    Excluded(String),
}

/// Lines as an editor shows them: a last line without `\n` counts, an empty file has 0
/// lines, `\r\n` ends one line.
#[must_use]
pub fn count_lines(bytes: &[u8]) -> u64 {
    let newlines = memchr::memchr_iter(b'\n', bytes).count() as u64;
    match bytes.last() {
        None | Some(b'\n') => newlines,
        Some(_) => newlines + 1,
    }
}

/// Byte offsets where each line starts (line `n` starts at `starts[n - 1]`), plus the end.
fn line_starts(bytes: &[u8]) -> Vec<usize> {
    let mut starts = Vec::with_capacity(bytes.len() / 32 + 2);
    starts.push(0);
    starts.extend(memchr::memchr_iter(b'\n', bytes).map(|i| i + 1));
    if starts.last() != Some(&bytes.len()) {
        starts.push(bytes.len());
    }
    starts
}

/// The selected bytes of a file: the whole file, or its ranges joined in order.
#[must_use]
pub fn selected<'a>(bytes: &'a [u8], sections: &Sections) -> Cow<'a, [u8]> {
    match sections.as_ranges() {
        None => Cow::Borrowed(bytes),
        Some(ranges) => {
            let starts = line_starts(bytes);
            let last_line = starts.len() as u64 - 1;
            let mut out = Vec::new();
            for &[s, e] in ranges {
                if s > last_line {
                    continue;
                }
                let from = starts[usize::try_from(s - 1)
                    .unwrap_or(usize::MAX)
                    .min(starts.len() - 1)];
                let to = starts[usize::try_from(e.min(last_line))
                    .unwrap_or(usize::MAX)
                    .min(starts.len() - 1)];
                out.extend_from_slice(&bytes[from..to]);
            }
            Cow::Owned(out)
        }
    }
}

/// The length of `text` once a consumer cuts it at `cap` bytes (0: no cut) on a UTF-8
/// character boundary, as Trellis' hook does: never inside a character.
#[must_use]
pub fn cut_len(text: &[u8], cap: u64) -> u64 {
    let cap = usize::try_from(cap).unwrap_or(usize::MAX);
    if cap == 0 || text.len() <= cap {
        return text.len() as u64;
    }
    let mut end = cap;
    while end > 0 && (text[end] & 0b1100_0000) == 0b1000_0000 {
        end -= 1;
    }
    end as u64
}

/// The part of `text` a consumer that cuts at `cap` bytes (0: no cut) reads: what its lines
/// and tokens are counted on.
#[must_use]
pub fn consumed(text: &[u8], cap: u64) -> &[u8] {
    // `cut_len` is at most the length, so the conversion and the slice cannot fail.
    &text[..usize::try_from(cut_len(text, cap)).unwrap_or(text.len())]
}

/// Files and bytes above which a progress bar is worth showing.
const PROGRESS_FILES: usize = 200;
const PROGRESS_BYTES: u64 = 20 * 1024 * 1024;

/// A progress bar on stderr for a large read, or a hidden one. `allowed` says whether the
/// caller may draw at all (a terminal, a human report, not `-q`).
#[must_use]
pub fn progress(
    root: &Path,
    paths: &[(RepoPath, Sections)],
    allowed: bool,
) -> indicatif::ProgressBar {
    if !allowed {
        return indicatif::ProgressBar::hidden();
    }
    let large = paths.len() > PROGRESS_FILES || {
        let mut bytes = 0;
        paths.iter().any(|(p, _)| {
            bytes += root.join(p).metadata().map_or(0, |m| m.len());
            bytes > PROGRESS_BYTES
        })
    };
    if !large {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(paths.len() as u64),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} files, {msg}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix("reading");
    bar
}

/// How candidates are read: where, under which limits and rules, counted how, and held
/// where for the later steps.
#[derive(Clone, Copy)]
pub struct Reading<'a> {
    pub root: &'a Path,
    pub limits: Limits,
    pub rules: &'a ContentRules,
    /// The content scan's clean verdicts, by the text's sha256.
    pub verdicts: &'a DigestCache,
    pub counter: &'a dyn TokenCounter,
    /// Count every file's tokens now (else only the counts the cache knows).
    pub count_all: bool,
    pub held: &'a Held,
    /// What is known of files by their stamp (facts are learned here too).
    pub known: &'a Known,
}

/// Reads and checks every candidate (`(path, sections)`), in parallel, in order.
#[must_use]
pub fn read_all(
    reading: Reading<'_>,
    candidates: &[(RepoPath, Sections)],
    bar: &indicatif::ProgressBar,
) -> Vec<Fate> {
    let bytes = std::sync::atomic::AtomicU64::new(0);
    let fates = candidates
        .par_iter()
        .map(|(path, sections)| {
            let fate = read_one(reading, path, sections);
            if !bar.is_hidden() {
                let size = match &fate {
                    Fate::Measured(m) => m.bytes,
                    Fate::Excluded(_) => 0,
                };
                let total = bytes.fetch_add(size, std::sync::atomic::Ordering::Relaxed) + size;
                bar.set_message(format!("{:.1} MB", total as f64 / 1e6));
                bar.inc(1);
            }
            fate
        })
        .collect();
    bar.finish_and_clear();
    fates
}

/// A whole file known by its stamp ([`Known`]), measured without reading it: its name
/// admitted, its hash passed by the content scan before, its tokens known when they must
/// be. `None`: read it.
fn by_stamp(r: Reading<'_>, path: &RepoPath, sections: &Sections) -> Option<Measured> {
    if !matches!(sections, Sections::Whole) || r.limits.cut_bytes > 0 {
        return None;
    }
    judge_name(path.as_str()).ok()?;
    let fact = r.known.still(path.as_str())?;
    let size = fact.stamp.size;
    if (r.limits.max_file_size > 0 && size > r.limits.max_file_size)
        || !is_clean(r.verdicts, &fact.sha256)
    {
        return None;
    }
    let tokens = r.counter.known_key(size, &fact.sha256);
    if tokens.is_none() && r.count_all {
        return None;
    }
    let sha256 = hex::encode(fact.sha256);
    r.held.vouch(path, &sha256, fact.stamp);
    Some(Measured {
        file_lines: fact.lines,
        sections: Sections::Whole,
        lines: fact.lines,
        bytes: size,
        injected: size,
        sha256,
        tokens,
        notes: Vec::new(),
        anchors: Vec::new(),
    })
}

fn read_one(r: Reading<'_>, path: &RepoPath, sections: &Sections) -> Fate {
    if r.known.is_enabled()
        && let Some(measured) = by_stamp(r, path, sections)
    {
        return Fate::Measured(measured);
    }
    let Reading {
        root,
        limits,
        rules,
        verdicts,
        counter,
        count_all,
        held,
        known,
    } = r;
    let admitted = admit_hashed(root, path, limits.max_file_size, rules, verdicts);
    let Admitted { bytes, key, stamp } = match admitted {
        Ok(admitted) => admitted,
        Err(refusal) => return Fate::Excluded(refusal.to_string()),
    };
    let sha256 = hex::encode(key);
    let file_lines = count_lines(&bytes);
    // A trusted stamp checks the file when it is read again (past what is held), with or
    // without a cache to keep it in.
    let stamp = stamp.filter(|s| known.trusts(s));
    if let Some(stamp) = stamp {
        known.learn(path.as_str(), stamp, key, file_lines);
    }
    let mut notes = Vec::new();
    let resolved = crate::stages::anchors::resolve(sections, path.as_str(), &bytes);
    for anchor in &resolved.missing {
        let what = match crate::stages::anchors::symbol_of(anchor) {
            Some(name) => format!("no definition matches the symbol {name:?}"),
            None => format!("no heading matches the anchor {anchor:?}"),
        };
        notes.push(Note::warning(format!(
            "{}: {what}: the whole file is taken",
            quoted(path.as_str())
        )));
    }
    let clamped = resolved.sections.clamp(file_lines);
    if !clamped.cut.is_empty() {
        notes.push(Note::info(format!(
            "{}: section{} {} clamped to the file's {file_lines} lines",
            quoted(path.as_str()),
            plural(clamped.cut.len()),
            ranges_text(&clamped.cut)
        )));
    }
    if !clamped.removed.is_empty() {
        notes.push(Note::warning(format!(
            "{}: section{} {} removed: past the end of the file ({file_lines} lines)",
            quoted(path.as_str()),
            plural(clamped.removed.len()),
            ranges_text(&clamped.removed)
        )));
    }
    if clamped.sections.is_empty_list() {
        return Fate::Excluded(format!(
            "every section lies past the end of the file ({file_lines} lines); not widened to the whole file"
        ));
    }
    let chosen = selected(&bytes, &clamped.sections);
    // A consumer that cuts files (Trellis) gives the sub-agent the cut part: its lines and
    // tokens are what counts.
    let read = consumed(&chosen, limits.cut_bytes);
    let (size, injected) = (chosen.len() as u64, read.len() as u64);
    let lines = if injected < size {
        count_lines(read)
    } else {
        clamped.sections.line_count(file_lines)
    };
    // For a whole file the counted text is the file: its hash is the cache key as it is.
    let whole = matches!(clamped.sections, Sections::Whole) && injected == size;
    let key = whole.then_some(sha256.as_str());
    let tokens = if count_all {
        Some(counter.count_hashed(read, key))
    } else {
        // Counting waits for the budgets; a count already in the cache costs nothing now.
        counter.known(read, key)
    };
    drop(chosen);
    held.hold(path, &sha256, bytes, stamp);
    Fate::Measured(Measured {
        file_lines,
        lines,
        bytes: size,
        injected,
        sha256,
        tokens,
        sections: clamped.sections,
        notes,
        anchors: resolved.found,
    })
}

/// Counts tokens of the selected text of each `(path, sections, sha256)`, in parallel, in
/// order. A file not held whose content changed since it was first read is an error for
/// that file.
#[must_use]
pub fn count_tokens(
    reading: Reading<'_>,
    items: &[(RepoPath, Sections, String)],
) -> Vec<Result<u64, String>> {
    let Reading {
        root,
        limits,
        counter,
        held,
        ..
    } = reading;
    items
        .par_iter()
        .map(|(path, sections, sha)| {
            // The bytes admitted (held, or read again through admission's checks and
            // their hash compared), or an error.
            let bytes = held
                .read(root, path, limits.max_file_size, sha)
                .map_err(|r| format!("{} {r}", quoted(path.as_str())))?;
            let chosen = selected(&bytes, sections);
            let read = consumed(&chosen, limits.cut_bytes);
            let whole = matches!(sections, Sections::Whole) && read.len() == chosen.len();
            Ok(counter.count_hashed(read, whole.then_some(sha.as_str())))
        })
        .collect()
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn ranges_text(ranges: &[Range]) -> String {
    let parts: Vec<String> = ranges.iter().map(|[s, e]| format!("[{s}, {e}]")).collect();
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_counted_as_an_editor_shows_them() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"a"), 1);
        assert_eq!(count_lines(b"a\n"), 1);
        assert_eq!(count_lines(b"a\nb"), 2);
        assert_eq!(count_lines(b"a\r\nb\r\n"), 2);
        assert_eq!(count_lines(b"\n\n"), 2);
    }

    #[test]
    fn selected_text_follows_the_sections() {
        let text = b"1\n2\n3\n4\n5";
        assert_eq!(
            selected(text, &Sections::ranges(vec![[2, 3], [5, 9]])).as_ref(),
            b"2\n3\n5"
        );
        assert_eq!(selected(text, &Sections::Whole).as_ref(), text);
        assert_eq!(
            selected(text, &Sections::ranges(vec![[7, 9]])).as_ref(),
            b""
        );
    }
}
