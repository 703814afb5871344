//! Whether a file names one of the owned files' identifiers as a whole word: from its bytes
//! (one Aho-Corasick pass), or from its words as the index keeps them (no read).
//!
//! A word is a maximal run of identifier bytes (ASCII letters and digits, `_`, `$`, any byte
//! from 0x80). A name made of identifier bytes only occurs as a whole word exactly when it is
//! one of the file's words, so the index answers for it. A name with another byte in it
//! (Ruby's `save!`, a JavaScript `#field`) is held only if each of its runs is a word of the
//! file; when they all are, only the bytes decide.

use aho_corasick::AhoCorasick;

/// Words shorter or longer than this are not kept (a name of fewer bytes carries no edge;
/// a longer run is a blob more often than a name, and such a name is decided by the bytes).
pub const MIN_WORD: usize = 3;
pub const MAX_WORD: usize = 64;

/// True for a byte that continues an identifier.
#[must_use]
pub fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// The distinct words of `bytes` of [`MIN_WORD`] to [`MAX_WORD`] bytes, sorted.
#[must_use]
pub fn words(bytes: &[u8]) -> Vec<&[u8]> {
    let mut out: Vec<&[u8]> = runs(bytes)
        .filter(|w| (MIN_WORD..=MAX_WORD).contains(&w.len()))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The maximal runs of identifier bytes of `bytes`, in order.
fn runs(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes.split(|&b| !is_ident(b)).filter(|w| !w.is_empty())
}

/// The owned files' names, ready to look for.
pub struct Names<'a> {
    matcher: AhoCorasick,
    /// Names that are one word.
    words: Vec<&'a [u8]>,
    /// Every other name's runs that the index keeps (a name without any is held by any file
    /// the index cannot rule out).
    others: Vec<Vec<&'a [u8]>>,
}

/// What a file's words say about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    Yes,
    No,
    /// Only its bytes can tell.
    Maybe,
}

impl<'a> Names<'a> {
    /// `None` when the matcher does not build.
    #[must_use]
    pub fn new(names: &[&'a str]) -> Option<Names<'a>> {
        let matcher = AhoCorasick::new(names).ok()?;
        let mut words = Vec::new();
        let mut others = Vec::new();
        for name in names {
            let b = name.as_bytes();
            if b.iter().all(|&c| is_ident(c)) && (MIN_WORD..=MAX_WORD).contains(&b.len()) {
                words.push(b);
            } else {
                others.push(
                    runs(b)
                        .filter(|w| (MIN_WORD..=MAX_WORD).contains(&w.len()))
                        .collect(),
                );
            }
        }
        Some(Names {
            matcher,
            words,
            others,
        })
    }

    /// True when a name occurs in `bytes` with no identifier byte on either side.
    #[must_use]
    pub fn held_in(&self, bytes: &[u8]) -> bool {
        self.matcher.find_overlapping_iter(bytes).any(|hit| {
            let before = hit.start().checked_sub(1).map(|k| bytes[k]);
            let after = bytes.get(hit.end()).copied();
            !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
        })
    }

    /// The names as ids of a vocabulary (`id`: a word's id, `None` when no file holds it).
    pub fn query(&self, id: impl Fn(&[u8]) -> Option<u32>) -> Query {
        let mut words: Vec<u32> = self.words.iter().filter_map(|w| id(w)).collect();
        words.sort_unstable();
        Query {
            words,
            // A name one of whose runs no file holds is held by none.
            others: self
                .others
                .iter()
                .filter_map(|runs| runs.iter().map(|w| id(w)).collect())
                .collect(),
        }
    }
}

/// [`Names`] in a vocabulary's ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    words: Vec<u32>,
    others: Vec<Vec<u32>>,
}

impl Query {
    /// What a file's words (ids, sorted) say.
    #[must_use]
    pub fn held(&self, ids: &[u32]) -> Held {
        let has = |w: &u32| ids.binary_search(w).is_ok();
        if self.words.iter().any(has) {
            return Held::Yes;
        }
        if self.others.iter().any(|runs| runs.iter().all(has)) {
            return Held::Maybe;
        }
        Held::No
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the words of `text` say, as the index would answer: its vocabulary is `text`'s
    /// words.
    fn by_words(n: &Names<'_>, text: &[u8]) -> Held {
        let vocab = words(text);
        let q = n.query(|w| vocab.binary_search(&w).ok().map(|k| k as u32));
        let ids: Vec<u32> = (0..vocab.len() as u32).collect();
        q.held(&ids)
    }

    /// The index's answer, from the words alone, never contradicts the bytes'.
    fn agree(names: &[&str], text: &[u8]) {
        let n = Names::new(names).unwrap();
        let by_words = by_words(&n, text);
        let by_bytes = n.held_in(text);
        match by_words {
            Held::Yes => assert!(by_bytes, "{names:?} in {text:?}"),
            Held::No => assert!(!by_bytes, "{names:?} in {text:?}"),
            Held::Maybe => {}
        }
    }

    #[test]
    fn words_are_maximal_identifier_runs_of_kept_lengths() {
        assert_eq!(
            words(b"let login_x = $id.ab(loginService); login"),
            vec![&b"$id"[..], b"let", b"login", b"loginService", b"login_x"]
        );
        assert_eq!(
            words("café au lait".as_bytes()),
            vec!["café".as_bytes(), b"lait"]
        );
        assert!(words(&[b'a'; MAX_WORD + 1]).is_empty());
    }

    #[test]
    fn a_one_word_name_is_decided_by_the_words() {
        let n = Names::new(&["login", "Session"]).unwrap();
        assert_eq!(by_words(&n, b"x = login(1)"), Held::Yes);
        assert_eq!(by_words(&n, b"relogin(); loginService; Sessions"), Held::No);
        assert!(!n.held_in(b"relogin(); loginService; Sessions"));
    }

    #[test]
    fn a_name_with_other_bytes_leaves_it_to_the_bytes() {
        let n = Names::new(&["save!", "#count"]).unwrap();
        assert_eq!(by_words(&n, b"def save!; end"), Held::Maybe);
        assert!(n.held_in(b"def save!; end"));
        assert_eq!(by_words(&n, b"def store!; end"), Held::No);
        // No run long enough to look up: any file may hold it.
        let n = Names::new(&["<=>"]).unwrap();
        assert_eq!(by_words(&n, b"a <=> b"), Held::Maybe);
        assert_eq!(by_words(&n, b""), Held::Maybe);
    }

    #[test]
    fn words_and_bytes_agree_on_every_placement() {
        let names = ["login", "save!", "a_b", "$el", "#priv", "día"];
        let pieces: [&[u8]; 12] = [
            b"login",
            b"save",
            b"!",
            b"a_b",
            b"$el",
            b"#priv",
            b"d\xc3\xada",
            b" ",
            b"x",
            b".",
            b"_",
            b"\n",
        ];
        // Every text of up to three pieces.
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    agree(&names, &[a, b, c].concat());
                }
            }
        }
    }
}
