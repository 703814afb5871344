//! Rust function bodies, found by a small lexer so an outline's parse can leave them out
//! (most of a file's bytes; parsing only the rest makes an outline several times faster).
//!
//! Leaving out the inside of a balanced `{ … }` keeps a Rust file well formed, so a wrong
//! guess costs detail (a body's contents, never needed by an outline) and not the parse.

/// Byte ranges of the insides of Rust function bodies (after each body's `{`, up to its
/// matching `}`), sorted and disjoint; empty when the braces do not balance.
pub(crate) fn rust_bodies(text: &str) -> Vec<std::ops::Range<usize>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    // Brace depth; the depth of the body being skipped, when in one.
    let mut depth = 0usize;
    let mut body: Option<(usize, usize)> = None;
    // After `fn`: waiting for its body's `{` at bracket depth 0.
    let mut pending = false;
    let mut brackets = 0usize;
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
    while i < b.len() {
        let c = b[i];
        match c {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |j| i + j);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
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
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
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
            _ if ident(c) => {
                let start = i;
                while i < b.len() && ident(b[i]) {
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
                } else if word == b"fn" && body.is_none() {
                    pending = true;
                    brackets = 0;
                }
                continue;
            }
            b'(' | b'[' => brackets += 1,
            b')' | b']' => brackets = brackets.saturating_sub(1),
            b';' if brackets == 0 => pending = false,
            b'{' => {
                depth += 1;
                if pending && brackets == 0 && body.is_none() {
                    body = Some((i + 1, depth));
                }
                pending = false;
            }
            b'}' => {
                if depth == 0 {
                    return Vec::new();
                }
                if let Some((start, d)) = body
                    && d == depth
                {
                    if start < i {
                        out.push(start..i);
                    }
                    body = None;
                }
                depth -= 1;
                pending = false;
            }
            _ => {}
        }
        i += 1;
    }
    if depth != 0 || body.is_some() {
        return Vec::new();
    }
    out
}

/// `text` with the insides of `skip` (sorted, disjoint, on character boundaries) emptied
/// but for their line ends, so that every line outside them is where it was in `text`
/// (byte offsets after a body move). `None` when there is nothing to skip.
///
/// tree-sitter's included ranges would leave the bodies out as well, but its lexer looks
/// a position up among the ranges by a linear search at every token: on a file of a
/// thousand bodies that was a tenth of the parse. Blanking them with spaces instead cost
/// more on long bodies than it saved (the lexer skips whitespace a character at a time).
pub(crate) fn compacted(text: &str, skip: &[std::ops::Range<usize>]) -> Option<String> {
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
