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

/// The parts of `text` outside `skip` (sorted, disjoint), as tree-sitter ranges.
pub(crate) fn included(text: &str, skip: &[std::ops::Range<usize>]) -> Vec<tree_sitter::Range> {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(skip.len() + 1);
    let (mut row, mut line_start, mut at) = (0usize, 0usize, 0usize);
    let point = |to: usize, row: &mut usize, line_start: &mut usize, at: &mut usize| {
        for j in memchr::memchr_iter(b'\n', &b[*at..to]) {
            *row += 1;
            *line_start = *at + j + 1;
        }
        *at = to;
        tree_sitter::Point {
            row: *row,
            column: to - *line_start,
        }
    };
    let mut from = 0;
    for r in skip.iter().chain(std::iter::once(&(b.len()..b.len()))) {
        let start_point = point(from, &mut row, &mut line_start, &mut at);
        let end_point = point(r.start, &mut row, &mut line_start, &mut at);
        if r.start > from || out.is_empty() {
            out.push(tree_sitter::Range {
                start_byte: from,
                end_byte: r.start,
                start_point,
                end_point,
            });
        }
        // Move past the skipped part.
        point(r.end, &mut row, &mut line_start, &mut at);
        from = r.end;
    }
    out
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
    fn included_ranges_are_the_complement() {
        let text = "fn a() {\n  x\n}\nfn b() {}\n";
        let skip = rust_bodies(text);
        let inc = included(text, &skip);
        let kept: String = inc
            .iter()
            .map(|r| &text[r.start_byte..r.end_byte])
            .collect();
        assert_eq!(kept, "fn a() {}\nfn b() {}\n");
        assert_eq!(inc[1].start_point, tree_sitter::Point { row: 2, column: 0 });
    }
}
