//! Function bodies of Rust and Go files, found by a small lexer for each so an outline's
//! parse can leave them out (most of a file's bytes; parsing only the rest makes an outline
//! several times faster).
//!
//! Leaving out the inside of a balanced `{ … }` keeps such a file well formed, so a wrong
//! guess costs detail (a body's contents, never needed by an outline) and not the parse.

use std::ops::Range;

/// The braces the lexers see, outside comments and literals: which of them open and close
/// the bodies of functions.
#[derive(Default)]
struct Bodies {
    out: Vec<Range<usize>>,
    /// Brace depth; the start and depth of the body being skipped, when in one.
    depth: usize,
    body: Option<(usize, usize)>,
    /// After the function keyword: waiting for its body's `{` outside brackets.
    pending: bool,
    brackets: usize,
}

impl Bodies {
    /// The function keyword (outside a body: a function literal's body is inside one).
    fn keyword(&mut self) {
        if self.body.is_none() {
            self.pending = true;
            self.brackets = 0;
        }
    }

    /// A statement ends (`;`, or a Go line end) outside brackets: no body follows.
    fn end_statement(&mut self) {
        if self.brackets == 0 {
            self.pending = false;
        }
    }

    fn bracket(&mut self, open: bool) {
        if open {
            self.brackets += 1;
        } else {
            self.brackets = self.brackets.saturating_sub(1);
        }
    }

    /// A `{` at byte `i`.
    fn open(&mut self, i: usize) {
        self.depth += 1;
        if self.brackets == 0 {
            if self.pending && self.body.is_none() {
                self.body = Some((i + 1, self.depth));
            }
            self.pending = false;
        }
    }

    /// A `}` at byte `i`; `None` when it closes nothing.
    fn close(&mut self, i: usize) -> Option<()> {
        if self.depth == 0 {
            return None;
        }
        if let Some((start, d)) = self.body
            && d == self.depth
        {
            if start < i {
                self.out.push(start..i);
            }
            self.body = None;
        }
        self.depth -= 1;
        if self.brackets == 0 {
            self.pending = false;
        }
        Some(())
    }

    /// The bodies, sorted and disjoint; empty when the braces did not balance.
    fn finish(self) -> Vec<Range<usize>> {
        if self.depth != 0 || self.body.is_some() {
            return Vec::new();
        }
        self.out
    }
}

/// The end of a `//` comment starting at `i` (its line end, or the end of the text).
fn line_comment_end(b: &[u8], i: usize) -> usize {
    memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |j| i + j)
}

/// The end of a quoted literal (a string, a char or rune) whose quote `q` is at `i`: past
/// its closing quote; `None` when a line or the text ends first (`multiline`: a line end
/// does not end it, as in Rust's strings).
fn quoted_end(b: &[u8], i: usize, q: u8, multiline: bool) -> Option<usize> {
    let mut j = i + 1;
    while j < b.len() && b[j] != q {
        if b[j] == b'\n' && !multiline {
            return None;
        }
        j += if b[j] == b'\\' { 2 } else { 1 };
    }
    (j < b.len()).then_some(j + 1)
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

/// Byte ranges of the insides of Rust function bodies (after each body's `{`, up to its
/// matching `}`), sorted and disjoint; empty when the braces do not balance.
pub(crate) fn rust_bodies(text: &str) -> Vec<Range<usize>> {
    let b = text.as_bytes();
    let mut bodies = Bodies::default();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = line_comment_end(b, i);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                // Rust's block comments nest.
                let mut nest = 1;
                i += 2;
                while i < b.len() && nest > 0 {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        nest += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        nest -= 1;
                        i += 2;
                    } else {
                        i += 1;
                    }
                }
                continue;
            }
            b'"' => {
                let Some(end) = quoted_end(b, i, b'"', true) else {
                    return Vec::new();
                };
                i = end;
                continue;
            }
            b'\'' => {
                // A char literal ('a', '\n', '字') or a lifetime ('a).
                if b.get(i + 1) == Some(&b'\\') {
                    i += 2;
                    while i < b.len() && b[i] != b'\'' && b[i] != b'\n' {
                        i += 1;
                    }
                    i += 1;
                } else {
                    let next = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                    if b.get(i + 1 + next) == Some(&b'\'') {
                        i += next + 2;
                    } else {
                        i += 1;
                    }
                }
                continue;
            }
            c if is_ident(c) => {
                let start = i;
                while i < b.len() && is_ident(b[i]) {
                    i += 1;
                }
                let word = &b[start..i];
                // A raw string: r"…", r#"…"#, br"…", cr"…".
                if matches!(word, b"r" | b"br" | b"cr") && matches!(b.get(i), Some(b'#' | b'"')) {
                    let hashes = b[i..].iter().take_while(|&&x| x == b'#').count();
                    if b.get(i + hashes) == Some(&b'"') {
                        i += hashes + 1;
                        loop {
                            match memchr::memchr(b'"', &b[i.min(b.len())..]) {
                                Some(j) => {
                                    i += j + 1;
                                    if b[i..].iter().take(hashes).filter(|&&x| x == b'#').count()
                                        == hashes
                                    {
                                        i += hashes;
                                        break;
                                    }
                                }
                                None => return Vec::new(),
                            }
                        }
                    }
                } else if word == b"fn" {
                    bodies.keyword();
                }
                continue;
            }
            b'(' | b'[' => bodies.bracket(true),
            b')' | b']' => bodies.bracket(false),
            b';' => bodies.end_statement(),
            b'{' => bodies.open(i),
            // The guard closes the brace; it fails the text when the brace closes nothing.
            b'}' if bodies.close(i).is_none() => return Vec::new(),
            _ => {}
        }
        i += 1;
    }
    bodies.finish()
}

/// Byte ranges of the insides of Go function and method bodies, as [`rust_bodies`]. A
/// body's `{` is on the line its signature ends (Go's semicolon rule), so a line end
/// outside brackets ends the wait for one (`type F func(int)` has no body).
pub(crate) fn go_bodies(text: &str) -> Vec<Range<usize>> {
    let b = text.as_bytes();
    let mut bodies = Bodies::default();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = line_comment_end(b, i);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let Some(j) = memchr::memmem::find(&b[i + 2..], b"*/") else {
                    return Vec::new();
                };
                // A comment holding a line end is one, for the semicolon rule.
                if memchr::memchr(b'\n', &b[i + 2..i + 2 + j]).is_some() {
                    bodies.end_statement();
                }
                i += j + 4;
                continue;
            }
            q @ (b'"' | b'\'') => {
                let Some(end) = quoted_end(b, i, q, false) else {
                    return Vec::new();
                };
                i = end;
                continue;
            }
            b'`' => {
                let Some(j) = memchr::memchr(b'`', &b[i + 1..]) else {
                    return Vec::new();
                };
                i += j + 2;
                continue;
            }
            c if is_ident(c) => {
                let start = i;
                while i < b.len() && is_ident(b[i]) {
                    i += 1;
                }
                if &b[start..i] == b"func" {
                    bodies.keyword();
                }
                continue;
            }
            b'(' | b'[' => bodies.bracket(true),
            b')' | b']' => bodies.bracket(false),
            b';' | b'\n' => bodies.end_statement(),
            b'{' => bodies.open(i),
            // The guard closes the brace; it fails the text when the brace closes nothing.
            b'}' if bodies.close(i).is_none() => return Vec::new(),
            _ => {}
        }
        i += 1;
    }
    bodies.finish()
}

/// `text` with the insides of `skip` (sorted, disjoint, on character boundaries) emptied
/// but for their line ends, so that every line outside them is where it was in `text`
/// (byte offsets after a body move). `None` when there is nothing to skip.
///
/// tree-sitter's included ranges would leave the bodies out as well, but its lexer looks
/// a position up among the ranges by a linear search at every token: on a file of a
/// thousand bodies that was a tenth of the parse. Blanking them with spaces instead cost
/// more on long bodies than it saved (the lexer skips whitespace a character at a time).
pub(crate) fn compacted(text: &str, skip: &[Range<usize>]) -> Option<String> {
    if skip.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for r in skip {
        out.push_str(&text[from..r.start]);
        let newlines = memchr::memchr_iter(b'\n', &text.as_bytes()[r.clone()]).count();
        out.extend(std::iter::repeat_n('\n', newlines));
        from = r.end;
    }
    out.push_str(&text[from..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_found_past_strings_comments_and_lifetimes() {
        let text = "fn a<'x>(s: &'x str) -> char { let c = '}'; \"}\"; r#\"}\"#; /* } */ c }\n\
                    trait T { fn t(&self); fn u() { {} } }\n\
                    struct S { f: fn(u32) -> u32 }\n";
        let bodies: Vec<&str> = rust_bodies(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(
            bodies,
            [" let c = '}'; \"}\"; r#\"}\"#; /* } */ c ", " {} ",]
        );
        assert!(rust_bodies("fn a() { ").is_empty());
        assert!(rust_bodies("} fn a() {}").is_empty());
    }

    #[test]
    fn go_bodies_are_found_past_literals_comments_and_bodiless_funcs() {
        let text = "type F func(int) error\n\
                    type S struct { f func() }\n\
                    func (s *S) M(x struct{ a int }) (int, error) { r := '}'; t := \"}\"; u := `\n}`; /* } */ return 0, nil }\n\
                    func G[T any](v T) T {\n\tfn := func() { _ = v }\n\tfn()\n\treturn v\n}\n";
        let bodies: Vec<&str> = go_bodies(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(
            bodies,
            [
                " r := '}'; t := \"}\"; u := `\n}`; /* } */ return 0, nil ",
                "\n\tfn := func() { _ = v }\n\tfn()\n\treturn v\n",
            ]
        );
        assert!(go_bodies("func a() { ").is_empty());
        assert!(go_bodies("} func a() {}").is_empty());
        assert!(go_bodies("func a() { s := \"unterminated\n }").is_empty());
    }

    #[test]
    fn a_compacted_text_keeps_every_line_outside_the_bodies() {
        let text = "fn a() {\n  x = \"é\";\n}\nfn b() { y }\n";
        let skip = rust_bodies(text);
        assert_eq!(
            compacted(text, &skip).unwrap(),
            "fn a() {\n\n}\nfn b() {}\n"
        );
        assert!(compacted(text, &[]).is_none());
    }
}
