//! The headings of the repository's documents that the task's text names: a spec whose
//! section title the PRD says (`see "Error handling and retries"`) gives that document, its
//! section. A heading is named when its words, in order, stand on one line of a text
//! (case, punctuation and a leading section number aside); a heading of one word, or of
//! words too short to tell documents apart, is not looked for.
//!
//! Deterministic: phrases keyed by their words; the first line that says one is its place.

use std::collections::HashMap;

use super::Text;
use crate::model::Range;

/// A heading is looked for in at most this many words.
const MAX_WORDS: usize = 12;
/// A heading's words have at least this many letters in all (a CJK character counts 2).
const MIN_LETTERS: usize = 10;

/// True for a CJK ideograph or kana (a word of its own).
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xf900..=0xfaff | 0xac00..=0xd7af)
}

/// The words of a line, lower-cased: runs of letters and digits, each CJK character alone.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut run = String::new();
    for c in line.chars() {
        if is_cjk(c) {
            if !run.is_empty() {
                out.push(std::mem::take(&mut run));
            }
            out.push(c.to_string());
        } else if c.is_alphanumeric() {
            run.extend(c.to_lowercase());
        } else if !run.is_empty() {
            out.push(std::mem::take(&mut run));
        }
    }
    if !run.is_empty() {
        out.push(run);
    }
    out
}

/// Every run of up to [`MAX_WORDS`] words of the texts' lines, with where it was first said.
pub struct Phrases {
    said: HashMap<String, (usize, usize)>,
}

impl Phrases {
    #[must_use]
    pub fn new(texts: &[Text]) -> Phrases {
        let mut said = HashMap::new();
        for (t, text) in texts.iter().enumerate() {
            for (n, line) in text.text.lines().enumerate() {
                let w = words(line);
                for start in 0..w.len() {
                    let mut phrase = String::new();
                    for (k, word) in w[start..].iter().take(MAX_WORDS).enumerate() {
                        if k > 0 {
                            phrase.push(' ');
                        }
                        phrase.push_str(word);
                        if k > 0 {
                            said.entry(phrase.clone()).or_insert((t, n + 1));
                        }
                    }
                }
            }
        }
        Phrases { said }
    }

    /// Where the texts say `phrase` (text's index, line), if they do.
    #[must_use]
    pub fn said(&self, phrase: &str) -> Option<(usize, usize)> {
        self.said.get(phrase).copied()
    }
}

/// A heading of a document that the texts say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// As written (without its `#`s).
    pub title: String,
    /// Its words, joined (what the texts are searched for).
    pub key: String,
    /// Its section: the heading's line to the line before the next heading of the same or a
    /// higher level.
    pub section: Range,
    /// Where a text says it: (text's index, line).
    pub said: (usize, usize),
}

/// The headings of a Markdown `text` that `phrases` holds.
#[must_use]
pub fn named(text: &str, phrases: &Phrases) -> Vec<Heading> {
    let lines: Vec<&str> = text.lines().collect();
    let mut heads: Vec<(usize, usize, &str)> = Vec::new();
    let mut fenced = false;
    for (n, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced || line.starts_with("    ") {
            continue;
        }
        let level = trimmed.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&level) && trimmed[level..].starts_with([' ', '\t']) {
            heads.push((
                n,
                level,
                trimmed[level..].trim().trim_end_matches('#').trim(),
            ));
        }
    }
    let mut out = Vec::new();
    for (k, &(n, level, title)) in heads.iter().enumerate() {
        let mut w = words(title);
        // A section's number (`3.2`) is not what the text says of it.
        let numbered = w
            .iter()
            .take_while(|x| x.chars().all(|c| c.is_ascii_digit()))
            .count();
        w.drain(..numbered);
        let letters: usize = w
            .iter()
            .map(|x| {
                if x.chars().any(is_cjk) {
                    2
                } else {
                    x.chars().count()
                }
            })
            .sum();
        if w.len() < 2 || w.len() > MAX_WORDS || letters < MIN_LETTERS {
            continue;
        }
        let key = w.join(" ");
        let Some(said) = phrases.said(&key) else {
            continue;
        };
        let end = heads[k + 1..]
            .iter()
            .find(|&&(_, l, _)| l <= level)
            .map_or(lines.len(), |&(m, _, _)| m);
        out.push(Heading {
            title: title.to_owned(),
            key,
            section: [n as u64 + 1, end as u64],
            said,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heading_the_text_says_gives_its_section() {
        let texts = [Text {
            source: "prd.md".to_owned(),
            dir: None,
            text: "Goal\nFollow the Error Handling and Retries rules; the 上下文注入规则 too.\n"
                .to_owned(),
        }];
        let phrases = Phrases::new(&texts);
        let doc = "# Backend\n\n## 3.2 Error handling and retries\nretry\n\n### Detail\nx\n\n\
                   ## Logging\nlog\n\n## 上下文注入规则\n```\n# not a heading\n```\n";
        let got = named(doc, &phrases);
        let found: Vec<(&str, Range, (usize, usize))> = got
            .iter()
            .map(|h| (h.title.as_str(), h.section, h.said))
            .collect();
        assert_eq!(
            found,
            [
                ("3.2 Error handling and retries", [3, 8], (0, 2)),
                ("上下文注入规则", [12, 15], (0, 2))
            ]
        );
        // One word, or too few letters: not looked for.
        let short = Phrases::new(&[Text {
            source: "t".to_owned(),
            dir: None,
            text: "Logging. The API docs.".to_owned(),
        }]);
        assert!(named("## Logging\n## API docs\n", &short).is_empty());
    }
}
