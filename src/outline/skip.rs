//! Function bodies of Rust, Go, Python, JavaScript and TypeScript files, found by a small
//! lexer for each so an outline's parse can leave them out (most of a file's bytes; parsing
//! only the rest makes an outline several times faster), and the identifiers the lexer meets
//! outside comments and literals: a file's references, without parsing its bodies.
//!
//! Leaving out the inside of a balanced `{ … }` keeps such a file well formed, so a wrong
//! guess costs detail (a body's contents, never needed by an outline) and not the parse. A
//! Python body is replaced by `...` on its last line, at its own indentation, and the inside
//! of a `def`'s parameter list and its return annotation (on one line) are left out. Of a Rust
//! file, more is left out the same way: functions' parameters, the fields of structs, enums
//! and unions, the arguments of macros and attributes, and the words of comments (a run of
//! line comments becomes one block comment over the same lines).

use std::ops::Range;

/// The braces the lexers see, outside comments and literals: which of them open and close
/// the bodies of functions.
#[derive(Default)]
struct Bodies {
    out: Vec<Range<usize>>,
    /// Every identifier's bytes, outside comments and literals.
    names: Vec<Range<usize>>,
    /// Brace depth; the start and depth of the body being skipped, when in one, and
    /// whether it is a Go struct's fields.
    depth: usize,
    body: Option<(usize, usize, bool)>,
    /// After the function keyword: waiting for its body's `{` outside brackets.
    pending: bool,
    brackets: usize,
    /// After Go's `struct` keyword: the next `{` opens its fields.
    fields: bool,
    /// Rust: the bracket at this byte opens a token tree or a list no outline reads (a
    /// macro's arguments, an attribute's, a function's parameters), left out as a body is.
    tt_at: Option<usize>,
    /// The token tree being left out: where its inside starts, and how deep its brackets
    /// (of any kind) are.
    tt: Option<(usize, usize)>,
}

impl Bodies {
    /// The function keyword (outside a body: a function literal's body is inside one).
    fn keyword(&mut self) {
        if self.outside() {
            self.pending = true;
            self.brackets = 0;
        }
    }

    /// A statement ends (`;`, or a Go line end) outside brackets: no body follows.
    /// Neither in a body nor in a token tree left out.
    fn outside(&self) -> bool {
        self.body.is_none() && self.tt.is_none()
    }

    /// An opening bracket of any kind at byte `i`: one deeper in the token tree being left
    /// out, or the start of the one [`Bodies::tt_at`] names.
    fn tt_open(&mut self, i: usize) {
        if let Some((_, level)) = &mut self.tt {
            *level += 1;
        } else if self.tt_at == Some(i) && self.body.is_none() {
            self.tt = Some((i + 1, 1));
        }
    }

    /// A closing bracket of any kind at byte `i`.
    fn tt_close(&mut self, i: usize) {
        if let Some((start, level)) = &mut self.tt {
            *level -= 1;
            if *level == 0 {
                if *start < i {
                    self.out.push(*start..i);
                }
                self.tt = None;
            }
        }
    }

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

    /// Go's `struct` keyword (outside a body): its fields, which hold no definition an
    /// outline shows, are left out too.
    fn fields(&mut self) {
        if self.body.is_none() {
            self.fields = true;
        }
    }

    /// A `{` at byte `i`.
    fn open(&mut self, i: usize) {
        self.depth += 1;
        if std::mem::take(&mut self.fields) && self.body.is_none() {
            // A struct's fields, wherever the type stands (a function waiting for its
            // body, `func f(s struct{ … }) {`, still waits).
            self.body = Some((i + 1, self.depth, true));
            return;
        }
        if self.brackets == 0 {
            if self.pending && self.outside() {
                self.body = Some((i + 1, self.depth, false));
            }
            self.pending = false;
        }
    }

    /// A `}` at byte `i`; `None` when it closes nothing.
    fn close(&mut self, i: usize) -> Option<()> {
        if self.depth == 0 {
            return None;
        }
        if let Some((start, d, fields)) = self.body
            && d == self.depth
        {
            if start < i {
                self.out.push(start..i);
            }
            self.body = None;
            if fields {
                self.depth -= 1;
                return Some(());
            }
        }
        self.depth -= 1;
        if self.brackets == 0 {
            self.pending = false;
        }
        Some(())
    }

    /// A byte outside comments and literals: a bracket, a brace, or one of `ends`, which
    /// end a statement; `None` when it is a `}` that closes nothing.
    fn byte(&mut self, c: u8, i: usize, ends: &[u8]) -> Option<()> {
        match c {
            b'(' | b'[' => {
                self.tt_open(i);
                self.bracket(true);
            }
            b')' | b']' => {
                self.tt_close(i);
                self.bracket(false);
            }
            b'{' => {
                self.tt_open(i);
                self.open(i);
            }
            b'}' => {
                self.tt_close(i);
                return self.close(i);
            }
            _ if ends.contains(&c) => self.end_statement(),
            _ => {}
        }
        Some(())
    }

    /// An identifier at `start..end` of `b`, unless a `reserved` word.
    fn name(&mut self, b: &[u8], start: usize, end: usize, reserved: fn(&[u8]) -> bool) {
        push_name(&mut self.names, b, start, end, reserved);
    }

    /// The bodies, sorted and disjoint, and the identifiers; `None` when the braces did not
    /// balance.
    fn finish(self) -> Option<Lexed<Vec<Range<usize>>>> {
        if self.depth != 0 || self.body.is_some() || self.tt.is_some() {
            return None;
        }
        Some(Lexed {
            bodies: self.out,
            names: self.names,
        })
    }
}

/// What a lexer found in a text it read whole: the bodies to leave out of an outline's
/// parse, and the byte ranges of every identifier outside comments and literals (what a
/// file references, tree-sitter's identifiers but for the keywords, without a parse).
pub(crate) struct Lexed<B> {
    pub bodies: B,
    pub names: Vec<Range<usize>>,
}

/// Identifiers longer than this (bytes) are not kept, as tree-sitter's references are not.
pub(crate) const MAX_NAME: usize = 128;

/// Keeps the identifier at `start..end` unless it is a number's digits, too long, or a
/// `reserved` word (a keyword no file can define: as a name searched for, every file of
/// the language would hold it).
fn push_name(
    names: &mut Vec<Range<usize>>,
    b: &[u8],
    start: usize,
    end: usize,
    reserved: fn(&[u8]) -> bool,
) {
    let word = &b[start..end];
    if word.len() <= MAX_NAME && !word[0].is_ascii_digit() && !reserved(word) {
        names.push(start..end);
    }
}

/// Rust's keywords (strict, and the reserved ones in use) and primitive types (a type
/// node to tree-sitter; in nearly every file, so a name that would draw every file in).
pub(crate) fn rust_reserved(w: &[u8]) -> bool {
    matches!(
        w,
        b"as"
            | b"async"
            | b"await"
            | b"break"
            | b"const"
            | b"continue"
            | b"crate"
            | b"dyn"
            | b"else"
            | b"enum"
            | b"extern"
            | b"false"
            | b"fn"
            | b"for"
            | b"if"
            | b"impl"
            | b"in"
            | b"let"
            | b"loop"
            | b"match"
            | b"mod"
            | b"move"
            | b"mut"
            | b"pub"
            | b"ref"
            | b"return"
            | b"self"
            | b"Self"
            | b"static"
            | b"struct"
            | b"super"
            | b"trait"
            | b"true"
            | b"type"
            | b"unsafe"
            | b"use"
            | b"where"
            | b"while"
            | b"bool"
            | b"char"
            | b"str"
            | b"u8"
            | b"u16"
            | b"u32"
            | b"u64"
            | b"u128"
            | b"usize"
            | b"i8"
            | b"i16"
            | b"i32"
            | b"i64"
            | b"i128"
            | b"isize"
            | b"f32"
            | b"f64"
    )
}

/// Go's keywords, predeclared types and constants.
pub(crate) fn go_reserved(w: &[u8]) -> bool {
    matches!(
        w,
        b"break"
            | b"case"
            | b"chan"
            | b"const"
            | b"continue"
            | b"default"
            | b"defer"
            | b"else"
            | b"fallthrough"
            | b"for"
            | b"func"
            | b"go"
            | b"goto"
            | b"if"
            | b"import"
            | b"interface"
            | b"map"
            | b"package"
            | b"range"
            | b"return"
            | b"select"
            | b"struct"
            | b"switch"
            | b"type"
            | b"var"
            // Predeclared types and constants (names to tree-sitter, in nearly every file:
            // a method named `string` is no reason to relate a file that uses the type).
            | b"any"
            | b"bool"
            | b"byte"
            | b"comparable"
            | b"complex64"
            | b"complex128"
            | b"error"
            | b"float32"
            | b"float64"
            | b"int"
            | b"int8"
            | b"int16"
            | b"int32"
            | b"int64"
            | b"rune"
            | b"string"
            | b"uint"
            | b"uint8"
            | b"uint16"
            | b"uint32"
            | b"uint64"
            | b"uintptr"
            | b"true"
            | b"false"
            | b"iota"
            | b"nil"
    )
}

/// The words of `lang` no file can be related by: its keywords and predeclared or primitive
/// types (what its lexer leaves out of a file's references).
pub(crate) fn reserved(lang: crate::outline::Lang) -> fn(&[u8]) -> bool {
    use crate::outline::Lang;
    match lang {
        Lang::Rust => rust_reserved,
        Lang::Go => go_reserved,
        Lang::Python => python_reserved,
        Lang::JavaScript => js_reserved,
        Lang::TypeScript | Lang::Tsx => ts_reserved,
        _ => |_| false,
    }
}

/// JavaScript's reserved words (strict mode's). An import's `from` is left out where it is
/// read.
pub(crate) fn js_reserved(w: &[u8]) -> bool {
    matches!(
        w,
        b"break"
            | b"case"
            | b"catch"
            | b"class"
            | b"const"
            | b"continue"
            | b"debugger"
            | b"default"
            | b"delete"
            | b"do"
            | b"else"
            | b"enum"
            | b"export"
            | b"extends"
            | b"false"
            | b"finally"
            | b"for"
            | b"function"
            | b"if"
            | b"implements"
            | b"import"
            | b"in"
            | b"instanceof"
            | b"interface"
            | b"let"
            | b"new"
            | b"null"
            | b"package"
            | b"private"
            | b"protected"
            | b"public"
            | b"return"
            | b"static"
            | b"super"
            | b"switch"
            | b"this"
            | b"throw"
            | b"true"
            | b"try"
            | b"typeof"
            | b"var"
            | b"void"
            | b"while"
            | b"with"
            | b"yield"
    )
}

/// JavaScript's reserved words and TypeScript's predefined types (type nodes to tree-sitter;
/// in JavaScript they are names: `const number = 1`).
pub(crate) fn ts_reserved(w: &[u8]) -> bool {
    js_reserved(w)
        || matches!(
            w,
            b"any"
                | b"boolean"
                | b"number"
                | b"string"
                | b"symbol"
                | b"unknown"
                | b"never"
                | b"object"
                | b"bigint"
        )
}

/// Python's keywords.
pub(crate) fn python_reserved(w: &[u8]) -> bool {
    matches!(
        w,
        b"False"
            | b"None"
            | b"True"
            | b"and"
            | b"as"
            | b"assert"
            | b"async"
            | b"await"
            | b"break"
            | b"class"
            | b"continue"
            | b"def"
            | b"del"
            | b"elif"
            | b"else"
            | b"except"
            | b"finally"
            | b"for"
            | b"from"
            | b"global"
            | b"if"
            | b"import"
            | b"in"
            | b"is"
            | b"lambda"
            | b"nonlocal"
            | b"not"
            | b"or"
            | b"pass"
            | b"raise"
            | b"return"
            | b"try"
            | b"while"
            | b"with"
            | b"yield"
    )
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

/// Whether the first byte after blanks starts a name (a definition's, after its keyword).
fn names_next(rest: &[u8]) -> bool {
    rest.get(skip_blanks(rest, 0))
        .is_some_and(|&c| is_ident(c) && !c.is_ascii_digit())
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

/// What of a Rust text an outline's parse can leave out, and the identifiers: the insides
/// of function bodies (after each body's `{`, up to its matching `}`) and of what else no
/// outline reads (their parameters, the fields of structs, enums and unions, the arguments
/// of macros and attributes, the words of comments), sorted and disjoint; `None` when the
/// braces do not balance or a literal does not end.
pub(crate) fn rust_lexed(text: &str) -> Option<Lexed<Vec<Cut>>> {
    let b = text.as_bytes();
    let mut bodies = Bodies::default();
    let mut comments = Comments::default();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = line_comment_end(b, i);
                if bodies.outside() {
                    comments.line(b, i, end);
                }
                i = end;
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                // Rust's block comments nest.
                let start = i;
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
                if nest == 0 && bodies.outside() {
                    comments.block(b, start, i);
                }
                continue;
            }
            b'"' => {
                let end = quoted_end(b, i, b'"', true)?;
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
            b'#' if bodies.outside() => {
                // An attribute's arguments: `#[derive(…)]`, `#![cfg_attr(…)]`.
                if let Some(at) = attribute_arguments(b, i) {
                    bodies.tt_at = Some(at);
                }
            }
            c if is_ident(c) => {
                let start = i;
                while i < b.len() && is_ident(b[i]) {
                    i += 1;
                }
                let word = &b[start..i];
                bodies.name(b, start, i, rust_reserved);
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
                                None => return None,
                            }
                        }
                    }
                } else if names_next(&b[i..])
                    && matches!(word, b"fn" | b"struct" | b"enum" | b"union")
                {
                    // `fn name`: an item; `fn(…) -> T` is a pointer type (`impl Tr for
                    // fn() -> T {` holds items, not a body). A struct's, enum's or union's
                    // `{ … }` is left out as a body is (a tuple struct's `;` ends the wait).
                    if word == b"fn" && bodies.outside() {
                        bodies.tt_at = parameters_at(b, i);
                    }
                    bodies.keyword();
                } else if b.get(i) == Some(&b'!')
                    && bodies.outside()
                    && let Some(at) = macro_arguments(b, i, word)
                {
                    bodies.tt_at = Some(at);
                }
                continue;
            }
            // The guard takes the byte; it fails the text when a `}` closes nothing.
            c if bodies.byte(c, i, b";").is_none() => return None,
            _ => {}
        }
        i += 1;
    }
    comments.flush();
    let lexed = bodies.finish()?;
    // Both sorted and disjoint (no comment is cut inside another cut): merged in order.
    let mut cuts: Vec<Cut> = Vec::with_capacity(lexed.bodies.len() + comments.cuts.len());
    let mut others = comments.cuts.into_iter().peekable();
    for r in lexed.bodies {
        while let Some(c) = others.next_if(|c| c.range.start < r.start) {
            cuts.push(c);
        }
        cuts.push(Cut::plain(r));
    }
    cuts.extend(others);
    Some(Lexed {
        bodies: cuts,
        names: lexed.names,
    })
}

/// The first byte from `i` on that is no blank.
fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// Where the parameter list of `fn name` opens, `i` just after the `fn` (past the
/// generics, `<…>`, whose `->` closes nothing); `None` when something else comes first.
fn parameters_at(b: &[u8], i: usize) -> Option<usize> {
    let mut i = skip_blanks(b, i);
    while i < b.len() && is_ident(b[i]) {
        i += 1;
    }
    i = skip_blanks(b, i);
    if b.get(i) == Some(&b'<') {
        let mut depth = 0usize;
        loop {
            match *b.get(i)? {
                b'<' => depth += 1,
                b'>' if b[i - 1] != b'-' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                b'{' | b'}' | b';' | b'"' | b'/' => return None,
                _ => {}
            }
            i += 1;
        }
        i = skip_blanks(b, i + 1);
    }
    (b.get(i) == Some(&b'(')).then_some(i)
}

/// Where a macro's arguments open, `i` at the `!` after the word `word`: `name!(…)`,
/// `name! […]`, `macro_rules! name { … }`; `None` for `!=` and after a keyword
/// (`if !(a)`, `return !x`).
fn macro_arguments(b: &[u8], i: usize, word: &[u8]) -> Option<usize> {
    if b.get(i + 1) == Some(&b'=')
        || rust_reserved(word)
        || matches!(word, b"yield" | b"become" | b"box" | b"do")
        || word[0].is_ascii_digit()
    {
        return None;
    }
    let mut j = skip_blanks(b, i + 1);
    if word == b"macro_rules" {
        while j < b.len() && is_ident(b[j]) {
            j += 1;
        }
        j = skip_blanks(b, j);
    }
    matches!(b.get(j), Some(b'(' | b'[' | b'{')).then_some(j)
}

/// Where an attribute's arguments open, `i` at its `#`: the bracket after the path of
/// `#[path(…)]` or `#![path(…)]`; `None` for `#[path]`, `#[path = value]` and what is no
/// attribute.
fn attribute_arguments(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    if b.get(j) == Some(&b'!') {
        j += 1;
    }
    j = skip_blanks(b, j);
    if b.get(j) != Some(&b'[') {
        return None;
    }
    j = skip_blanks(b, j + 1);
    let path = j;
    while j < b.len() && (is_ident(b[j]) || b[j] == b':') {
        j += 1;
    }
    if j == path {
        return None;
    }
    j = skip_blanks(b, j);
    matches!(b.get(j), Some(b'(' | b'[' | b'{')).then_some(j)
}

/// The comments of a Rust text outside what is left out: an outline's parse needs them as
/// nodes (the comments above an item start its lines, a `//!` is the module's
/// documentation), never their words. A comment is emptied but for its `//`, `//!`, `/*`
/// or `/*!`; the line comments alone on consecutive lines are one block comment,
/// `/*` … `*/` over the same lines (`/*!` for `//!` lines, which stay apart from the
/// others): a run of comments above an item is one node, starting and ending where the
/// run did. Every line stays where it was.
#[derive(Default)]
struct Comments {
    cuts: Vec<Cut>,
    /// The run of line comments alone on their lines being read: where it starts, where
    /// its last line ends, whether it is of `//!` comments, whether it has several.
    run: Option<(usize, usize, bool, bool)>,
}

impl Comments {
    /// A line comment from `start` to `end` (its line's end).
    fn line(&mut self, b: &[u8], start: usize, end: usize) {
        let inner = b[start..].starts_with(b"//!");
        let before = b[..start].iter().rposition(|&c| c != b' ' && c != b'\t');
        if before.is_none_or(|p| b[p] == b'\n') {
            if let Some(run) = &mut self.run
                && run.2 == inner
                && before == Some(run.1)
            {
                run.1 = end;
                run.3 = true;
                return;
            }
            self.flush();
            self.run = Some((start, end, inner, false));
        } else {
            self.flush();
            self.empty(start + if inner { 3 } else { 2 }, end);
        }
    }

    /// A block comment from `start` to `end` (past its `*/`).
    fn block(&mut self, b: &[u8], start: usize, end: usize) {
        self.flush();
        let from = start + if b[start..].starts_with(b"/*!") { 3 } else { 2 };
        if from + 2 < end {
            self.cuts.push(Cut {
                range: from..end - 2,
                lead: "",
                filler: " ".to_owned(),
            });
        }
    }

    fn empty(&mut self, from: usize, end: usize) {
        if from < end {
            self.cuts.push(Cut::plain(from..end));
        }
    }

    /// The run being read is done.
    fn flush(&mut self) {
        if let Some((start, end, inner, several)) = self.run.take() {
            if several {
                self.cuts.push(Cut {
                    range: start..end,
                    lead: if inner { "/*!" } else { "/*" },
                    filler: "*/".to_owned(),
                });
            } else {
                self.empty(start + if inner { 3 } else { 2 }, end);
            }
        }
    }
}

/// Byte ranges of the insides of Go function and method bodies, as [`rust_lexed`], and of
/// structs' field lists (no outline shows a field: a struct type's header ends at its `{`,
/// and its fields hold no definition). A body's `{` is on the line its signature ends
/// (Go's semicolon rule), so a line end outside brackets ends the wait for one
/// (`type F func(int)` has no body).
pub(crate) fn go_lexed(text: &str) -> Option<Lexed<Vec<Range<usize>>>> {
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
                let j = memchr::memmem::find(&b[i + 2..], b"*/")?;
                // A comment holding a line end is one, for the semicolon rule.
                if memchr::memchr(b'\n', &b[i + 2..i + 2 + j]).is_some() {
                    bodies.end_statement();
                }
                i += j + 4;
                continue;
            }
            q @ (b'"' | b'\'') => {
                let end = quoted_end(b, i, q, false)?;
                i = end;
                continue;
            }
            b'`' => {
                let j = memchr::memchr(b'`', &b[i + 1..])?;
                i += j + 2;
                continue;
            }
            c if is_ident(c) => {
                let start = i;
                while i < b.len() && is_ident(b[i]) {
                    i += 1;
                }
                bodies.name(b, start, i, go_reserved);
                match &b[start..i] {
                    b"func" => bodies.keyword(),
                    b"struct" => bodies.fields(),
                    _ => {}
                }
                continue;
            }
            // The guard takes the byte; it fails the text when a `}` closes nothing.
            c if bodies.byte(c, i, b";\n").is_none() => return None,
            _ => {}
        }
        i += 1;
    }
    bodies.finish()
}

/// Byte ranges of the insides of JavaScript and TypeScript function bodies, as
/// [`rust_lexed`]: the body after `function`, after `=>`, and every `{ … }` directly in
/// a class's body (a method's, an accessor's, a static block's; what else stands there
/// between braces, an object or a type, is never in an outline). The lexer knows
/// comments, strings, template literals (with `${ … }` inside, nested), and regular
/// expression literals, told from a division by what precedes the `/`. Empty when
/// something does not end or the braces do not balance (JSX text holding an apostrophe
/// ends the search that way). `typed`: TypeScript, whose predefined types are no names.
pub(crate) fn js_lexed(text: &str, typed: bool) -> Option<Lexed<Vec<Range<usize>>>> {
    let reserved = if typed { ts_reserved } else { js_reserved };
    let b = text.as_bytes();
    let mut bodies = Bodies::default();
    // The depths of the class bodies the lexer is in, and of the `${` it is in.
    let mut classes: Vec<usize> = Vec::new();
    let mut class_pending = false;
    let mut templates: Vec<usize> = Vec::new();
    // What precedes: an arrow (`=>`), and whether a `/` would start a regular expression.
    let mut arrow = false;
    let mut regex_may_start = true;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let was_arrow = std::mem::take(&mut arrow);
        match c {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = line_comment_end(b, i);
                arrow = was_arrow;
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let j = memchr::memmem::find(&b[i + 2..], b"*/")?;
                i += j + 4;
                arrow = was_arrow;
                continue;
            }
            b'/' if regex_may_start => {
                let end = regex_end(b, i)?;
                i = end;
                regex_may_start = false;
                continue;
            }
            b'"' | b'\'' => {
                let end = quoted_end(b, i, c, false)?;
                i = end;
                regex_may_start = false;
                continue;
            }
            b'`' => {
                let (next, regex) = template_text(b, i + 1, &mut bodies, &mut templates)?;
                (i, regex_may_start) = (next, regex);
                continue;
            }
            c if is_ident(c) || c == b'$' => {
                let start = i;
                while i < b.len() && (is_ident(b[i]) || b[i] == b'$') {
                    i += 1;
                }
                let word = &b[start..i];
                // `from` before a module's string is the import's keyword; anywhere else it
                // is a name (`Array.from`, a `static from()`).
                let import_from =
                    word == b"from" && matches!(b.get(skip_blanks(b, i)), Some(b'"' | b'\''));
                if !import_from {
                    bodies.name(b, start, i, reserved);
                }
                match word {
                    b"function" => bodies.keyword(),
                    b"class" if bodies.body.is_none() => class_pending = true,
                    _ => {}
                }
                regex_may_start = matches!(
                    word,
                    b"return"
                        | b"typeof"
                        | b"case"
                        | b"do"
                        | b"else"
                        | b"in"
                        | b"of"
                        | b"new"
                        | b"delete"
                        | b"void"
                        | b"throw"
                        | b"instanceof"
                        | b"yield"
                        | b"await"
                );
                continue;
            }
            b'=' if b.get(i + 1) == Some(&b'>') => {
                arrow = true;
                regex_may_start = true;
                i += 2;
                continue;
            }
            b'(' | b'[' => bodies.bracket(true),
            b')' | b']' => bodies.bracket(false),
            b';' => {
                bodies.end_statement();
                class_pending = false;
            }
            b'{' => {
                let in_class = classes.last() == Some(&bodies.depth);
                if bodies.brackets == 0 && bodies.body.is_none() && (was_arrow || in_class) {
                    bodies.pending = true;
                }
                if class_pending && bodies.brackets == 0 && bodies.body.is_none() {
                    class_pending = false;
                    bodies.pending = false;
                    bodies.open(i);
                    classes.push(bodies.depth);
                } else {
                    bodies.open(i);
                }
            }
            b'}' => {
                if templates.last() == Some(&bodies.depth) {
                    // The end of a `${ … }`: the template goes on.
                    templates.pop();
                    bodies.depth -= 1;
                    let (next, regex) = template_text(b, i + 1, &mut bodies, &mut templates)?;
                    (i, regex_may_start) = (next, regex);
                    continue;
                }
                if classes.last() == Some(&bodies.depth) {
                    classes.pop();
                }
                bodies.close(i)?;
                regex_may_start = true;
                i += 1;
                continue;
            }
            _ => {}
        }
        regex_may_start = !matches!(c, b')' | b']' | b'.' | b'0'..=b'9');
        i += 1;
    }
    if !templates.is_empty() {
        return None;
    }
    bodies.finish()
}

/// Where a template literal's text (from `i`, after its backtick or a `}`) stops.
enum Template {
    /// Past its closing backtick.
    End(usize),
    /// Past a `${`: an expression follows.
    Expression(usize),
}

/// Reads a template literal's text from `i` (after its backtick, or after the `}` of one
/// of its `${ … }`): where the lexer goes on, and whether a `/` may start a regular
/// expression there. At a `${` the expression's brace is counted and noted in `templates`.
fn template_text(
    b: &[u8],
    i: usize,
    bodies: &mut Bodies,
    templates: &mut Vec<usize>,
) -> Option<(usize, bool)> {
    Some(match template_end(b, i)? {
        Template::End(end) => (end, false),
        Template::Expression(at) => {
            bodies.depth += 1;
            templates.push(bodies.depth);
            (at, true)
        }
    })
}

fn template_end(b: &[u8], mut i: usize) -> Option<Template> {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'`' => return Some(Template::End(i + 1)),
            b'$' if b.get(i + 1) == Some(&b'{') => return Some(Template::Expression(i + 2)),
            _ => i += 1,
        }
    }
    None
}

/// The end of a regular expression literal whose `/` is at `i` (past its flags): a `/`
/// inside a class (`[…]`) or escaped does not end it; a line end before its end is an
/// error.
fn regex_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    let mut class = false;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 1,
            b'\n' => return None,
            b'[' => class = true,
            b']' => class = false,
            b'/' if !class => {
                j += 1;
                while j < b.len() && is_ident(b[j]) {
                    j += 1;
                }
                return Some(j);
            }
            _ => {}
        }
        j += 1;
    }
    None
}

/// A part of a text an outline's parse leaves out: its line ends are kept, `lead` (no
/// line end in it) is put on its first line and `filler` (no line end in it) on its last.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Cut {
    pub range: Range<usize>,
    pub lead: &'static str,
    pub filler: String,
}

impl Cut {
    /// A cut that leaves nothing in its place (the inside of a `{ … }`).
    pub(crate) fn plain(range: Range<usize>) -> Cut {
        Cut {
            range,
            lead: "",
            filler: String::new(),
        }
    }
}

/// `text` with each cut (sorted, disjoint, on character boundaries) emptied but for its
/// line ends and its filler, so that every line outside the cuts is where it was in `text`
/// (byte offsets after a cut move). `None` when there is nothing to cut.
///
/// tree-sitter's included ranges would leave the bodies out as well, but its lexer looks
/// a position up among the ranges by a linear search at every token: on a file of a
/// thousand bodies that was a tenth of the parse. Blanking them with spaces instead cost
/// more on long bodies than it saved (the lexer skips whitespace a character at a time).
pub(crate) fn compacted(text: &str, cuts: &[Cut]) -> Option<String> {
    if cuts.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for cut in cuts {
        let r = cut.range.clone();
        out.push_str(&text[from..r.start]);
        out.push_str(cut.lead);
        let newlines = memchr::memchr_iter(b'\n', &text.as_bytes()[r.clone()]).count();
        out.extend(std::iter::repeat_n('\n', newlines));
        out.push_str(&cut.filler);
        from = r.end;
    }
    out.push_str(&text[from..]);
    Some(out)
}

/// The bodies of Python functions (`def`, `async def`) that start on the line after their
/// header's `:`: each cut from the start of its first line of code (after it, when that
/// line starts with a string: a docstring stays) to the end of its last line of code
/// (comments and blank lines before and after are not in it), filled with `...` at the
/// indentation of its first line of code. Found by a lexer of Python's line structure:
/// strings (triple-quoted ones span lines), comments, brackets and `\` continuations;
/// a body ends at the first line of code indented no deeper than its `def` (tabs to the
/// next multiple of eight, as Python counts them). With the identifiers outside comments and
/// strings; `None` when a string does not end.
pub(crate) fn python_lexed(text: &str) -> Option<Lexed<Vec<Cut>>> {
    /// A body being cut: its def's indentation, where it starts, the end of its last line
    /// of code so far, the indentation of its first; whether its first line of code is
    /// being read and starts with a string (a docstring: kept, the outline shows it).
    struct Body {
        indent: usize,
        start: usize,
        end: Option<usize>,
        filler: Option<String>,
        doc: bool,
    }
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut names = Vec::new();
    let mut brackets = 0usize;
    // The indentation of the `def` whose header is being read.
    let mut header: Option<usize> = None;
    // The inside of the header's parameter list, while it is read (where it starts), and
    // whether it was read: an outline shows the header's lines, not the parameters' words
    // (the references are the lexer's, of the whole text), so the parse leaves them out.
    let mut params: Option<usize> = None;
    let mut params_read = false;
    // Where the header's return annotation (`-> T`) starts, while it is read.
    let mut returns: Option<usize> = None;
    let mut body: Option<Body> = None;
    // At the start of a logical line; whether the current one holds code.
    let mut line_start = true;
    let mut code = false;
    let mut i = 0;
    let close = |body: Body, out: &mut Vec<Cut>| {
        if let (Some(end), Some(filler)) = (body.end, body.filler)
            && end > body.start
        {
            out.push(Cut {
                range: body.start..end,
                lead: "",
                filler,
            });
        }
    };
    while i < b.len() {
        if line_start {
            line_start = false;
            let (width, j) = indentation(b, i);
            code = j < b.len() && !matches!(b[j], b'\n' | b'\r' | b'#');
            if code {
                if let Some(bd) = body.as_mut() {
                    if width <= bd.indent {
                        if let Some(done) = body.take() {
                            close(done, &mut out);
                        }
                    } else if bd.filler.is_none() {
                        // Comments above the first line of code stay: tree-sitter hangs
                        // them on the definition, before its body.
                        bd.start = i;
                        bd.filler = Some(format!("{}...", &text[i..j]));
                        bd.doc = starts_string(&b[j..]);
                    }
                }
                if body.is_none() && header.is_none() && starts_def(&b[j..]) {
                    header = Some(width);
                    params_read = false;
                    returns = None;
                }
            }
            i = j;
            continue;
        }
        match b[i] {
            b'#' => {
                i = line_comment_end(b, i);
                continue;
            }
            // A line continuation (or a stray escape): the line end after it (`\n` or
            // `\r\n`) does not end the logical line.
            b'\\' => {
                i += if b.get(i + 1) == Some(&b'\r') { 3 } else { 2 };
                continue;
            }
            b'\n' if brackets == 0 => {
                if code && let Some(bd) = body.as_mut() {
                    if bd.doc {
                        // The cut starts after the docstring's line.
                        bd.start = i + 1;
                        bd.doc = false;
                    } else {
                        bd.end = Some(if i > 0 && b[i - 1] == b'\r' { i - 1 } else { i });
                    }
                }
                line_start = true;
            }
            b'"' | b'\'' => {
                let end = python_string_end(b, i)?;
                // A long string outside a body (data, most often) is emptied but for its
                // quotes, its first character and its line ends: tree-sitter lexes strings
                // a piece at a time. (The first character stays because an outline reads
                // it: `"""{` opens a bracket.)
                let quotes = if end - i >= 6 && b[i + 1] == b[i] && b[i + 2] == b[i] {
                    3
                } else {
                    1
                };
                let formatted = is_formatted(b, i);
                if let Some(raw) = formatted {
                    formatted_names(b, i + quotes, end - quotes, raw, &mut names);
                }
                // (An f-string stays whole: what is cut could open an interpolation.)
                if body.is_none()
                    && params.is_none()
                    && end - i > LONG_STRING
                    && formatted.is_none()
                {
                    let first = b[i + quotes];
                    let kept = usize::from(first.is_ascii() && first != b'\\');
                    out.push(Cut::plain(i + quotes + kept..end - quotes));
                }
                i = end;
                continue;
            }
            c if is_ident(c) => {
                let start = i;
                while i < b.len() && is_ident(b[i]) {
                    i += 1;
                }
                push_name(&mut names, b, start, i, python_reserved);
                continue;
            }
            b'(' if brackets == 0 && header.is_some() && !params_read => {
                params = Some(i + 1);
                brackets = 1;
            }
            b')' if brackets == 1 && params.is_some() => {
                if let Some(start) = params.take()
                    && start < i
                {
                    out.push(Cut::plain(start..i));
                }
                params_read = true;
                brackets = 0;
            }
            b'-' if brackets == 0
                && params_read
                && header.is_some()
                && b.get(i + 1) == Some(&b'>') =>
            {
                returns = Some(i);
            }
            b'(' | b'[' | b'{' => brackets += 1,
            b')' | b']' | b'}' => brackets = brackets.saturating_sub(1),
            b':' if brackets == 0 => {
                // The return annotation, arrow and all, when it is on one line: `def f() :`.
                if let Some(start) = returns.take()
                    && header.is_some()
                    && memchr::memchr(b'\n', &b[start..i]).is_none()
                {
                    out.push(Cut::plain(start..i));
                }
                if let Some(indent) = header.take() {
                    // The body is cut only when it starts on the next line.
                    let rest = b[i + 1..]
                        .iter()
                        .position(|c| !matches!(c, b' ' | b'\t' | b'\x0c'))
                        .map_or(b.len(), |k| i + 1 + k);
                    if rest >= b.len() || matches!(b[rest], b'\n' | b'\r' | b'#') {
                        let next =
                            memchr::memchr(b'\n', &b[rest..]).map_or(b.len(), |k| rest + k + 1);
                        body = Some(Body {
                            indent,
                            start: next,
                            end: None,
                            filler: None,
                            doc: false,
                        });
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    if let Some(done) = body {
        close(done, &mut out);
    }
    Some(Lexed { bodies: out, names })
}

/// What is left out, as the tests read it (empty when the text does not lex): bodies,
/// parameters, fields, arguments and comments' words.
#[cfg(test)]
pub(crate) fn rust_bodies(text: &str) -> Vec<Range<usize>> {
    rust_lexed(text).map_or_else(Vec::new, |l| {
        l.bodies.into_iter().map(|c| c.range).collect()
    })
}

#[cfg(test)]
pub(crate) fn go_bodies(text: &str) -> Vec<Range<usize>> {
    go_lexed(text).map_or_else(Vec::new, |l| l.bodies)
}

#[cfg(test)]
pub(crate) fn js_bodies(text: &str) -> Vec<Range<usize>> {
    js_lexed(text, true).map_or_else(Vec::new, |l| l.bodies)
}

#[cfg(test)]
pub(crate) fn python_bodies(text: &str) -> Vec<Cut> {
    python_lexed(text).map_or_else(Vec::new, |l| l.bodies)
}

/// The width of the indentation at `i` (a tab to the next multiple of eight) and where it
/// ends.
fn indentation(b: &[u8], mut i: usize) -> (usize, usize) {
    let mut width = 0;
    while i < b.len() {
        match b[i] {
            b' ' => width += 1,
            b'\t' => width = (width / 8 + 1) * 8,
            b'\x0c' => width = 0,
            _ => break,
        }
        i += 1;
    }
    (width, i)
}

/// Whether a logical line starting at `b` starts with a string (`"`, `'`, `r"` …).
fn starts_string(b: &[u8]) -> bool {
    let prefix = b
        .iter()
        .take(3)
        .take_while(|c| matches!(c, b'r' | b'R' | b'u' | b'U' | b'b' | b'B' | b'f' | b'F'))
        .count();
    matches!(b.get(prefix), Some(b'"' | b'\''))
}

/// Whether a logical line starting at `b` is a `def` (or `async def`).
fn starts_def(b: &[u8]) -> bool {
    let keyword = |b: &[u8], k: &[u8]| {
        b.starts_with(k) && b.get(k.len()).is_some_and(|c| matches!(c, b' ' | b'\t'))
    };
    if keyword(b, b"def") {
        return true;
    }
    if keyword(b, b"async") {
        let rest = &b[5..];
        let k = rest
            .iter()
            .take_while(|c| matches!(c, b' ' | b'\t'))
            .count();
        return keyword(&rest[k..], b"def");
    }
    false
}

/// Whether the Python string whose quote is at `i` is formatted (`f"…"`, `rf'…'`, `t"…"`):
/// the identifier run just before the quote is a string prefix holding `f` or `t`. `Some`
/// with whether it is raw too (`r` in the prefix).
fn is_formatted(b: &[u8], i: usize) -> Option<bool> {
    let start = b[..i]
        .iter()
        .rposition(|&c| !is_ident(c))
        .map_or(0, |k| k + 1);
    let prefix = &b[start..i];
    let formatted = (1..=3).contains(&prefix.len())
        && prefix.iter().all(|c| b"rRbBuUfFtT".contains(c))
        && prefix.iter().any(|c| b"fFtT".contains(c));
    formatted.then(|| prefix.iter().any(|c| b"rR".contains(c)))
}

/// The identifiers of the interpolations (`{…}`, not `{{`) of an f-string's inside
/// `b[from..to]`, as tree-sitter's tree holds them: their expressions' names, nested
/// interpolations of a format spec's included, but not the strings inside them, the spec's
/// text, or the conversion after `!`. In a raw one a backslash is text: `\{x}` interpolates.
fn formatted_names(b: &[u8], from: usize, to: usize, raw: bool, names: &mut Vec<Range<usize>>) {
    let mut j = from;
    while j < to {
        match b[j] {
            b'\\' if !raw => j += 2,
            b'{' if b.get(j + 1) == Some(&b'{') => j += 2,
            b'{' => j = interpolation(b, j + 1, to, names, 0),
            _ => j += 1,
        }
    }
}

/// Reads the interpolation whose expression starts at `i`, noting its names; returns where
/// it ends (past its `}`, or `to`). `nesting`: how deep in format specs it is (bounded).
fn interpolation(
    b: &[u8],
    mut i: usize,
    to: usize,
    names: &mut Vec<Range<usize>>,
    nesting: usize,
) -> usize {
    let mut depth = 0usize;
    // In the format spec (after a top-level `:`) or the conversion (after `!`).
    let mut in_spec = false;
    while i < to {
        let c = b[i];
        match c {
            b'}' if depth == 0 => return i + 1,
            b'{' if in_spec => {
                if nesting >= 4 {
                    return to;
                }
                i = interpolation(b, i + 1, to, names, nesting + 1);
                continue;
            }
            _ if in_spec => {}
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b':' if depth == 0 => in_spec = true,
            b'!' if depth == 0 && b.get(i + 1) != Some(&b'=') => in_spec = true,
            b'"' | b'\'' => {
                // A string inside the expression: its text is no name.
                let end = b[i + 1..to].iter().position(|&x| x == c);
                i = end.map_or(to, |k| i + 1 + k + 1);
                continue;
            }
            c if is_ident(c) => {
                let start = i;
                while i < to && is_ident(b[i]) {
                    i += 1;
                }
                push_name(names, b, start, i, python_reserved);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    to
}

/// A string literal longer than this (quotes included) is cut when no body holds it.
const LONG_STRING: usize = 1024;

/// The end of a Python string whose quote is at `i` (past its closing quote or quotes), a
/// triple-quoted one across lines; any prefix (`r`, `b`, `f` …) was read as a name before
/// it, and a backslash keeps the next character in the string in every kind. `None` when
/// the text, or a single-quoted string's line, ends first.
fn python_string_end(b: &[u8], i: usize) -> Option<usize> {
    let q = b[i];
    if b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q) {
        let mut j = i + 3;
        while j < b.len() {
            if b[j] == b'\\' {
                j += 2;
            } else if b[j] == q && b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q) {
                return Some(j + 3);
            } else {
                j += 1;
            }
        }
        return None;
    }
    quoted_end(b, i, q, false)
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
        // A function's parameters and body, a struct's fields.
        assert_eq!(
            bodies,
            [
                "s: &'x str",
                " let c = '}'; \"}\"; r#\"}\"#; /* } */ c ",
                "&self",
                " {} ",
                " f: fn(u32) -> u32 ",
            ]
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
                " f func() ",
                " a int ",
                " r := '}'; t := \"}\"; u := `\n}`; /* } */ return 0, nil ",
                "\n\tfn := func() { _ = v }\n\tfn()\n\treturn v\n",
            ]
        );
        // A struct in a result still leaves the function's body to cut.
        let text = "func f() struct{ a int } { return struct{ a int }{} }\n";
        let bodies: Vec<&str> = go_bodies(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(bodies, [" a int ", " return struct{ a int }{} "]);
        assert!(go_bodies("func a() { ").is_empty());
        assert!(go_bodies("} func a() {}").is_empty());
        assert!(go_bodies("func a() { s := \"unterminated\n }").is_empty());
    }

    #[test]
    fn from_is_a_name_but_before_an_imports_module() {
        let text = "import { a } from \"./a.js\";\nexport * from\n  './b.js';\n\
                    class C { static from(x) { return Array.from(x); } }\nC.from(from);\n";
        let lexed = js_lexed(text, false).unwrap();
        let froms: Vec<usize> = lexed
            .names
            .iter()
            .filter(|r| &text[(*r).clone()] == "from")
            .map(|r| r.start)
            .collect();
        let at = |needle: &str| text.find(needle).unwrap();
        assert_eq!(
            froms,
            [
                at("from(x)"),
                at("from(x);"),
                at("from(from)"),
                at("from);")
            ]
        );
    }

    #[test]
    fn an_f_strings_interpolations_are_references_and_its_text_is_not() {
        let names = |text: &str| -> Vec<String> {
            let lexed = python_lexed(text).unwrap();
            lexed
                .names
                .iter()
                .map(|r| text[r.clone()].to_owned())
                .filter(|n| n.len() >= 3)
                .collect()
        };
        assert_eq!(
            names("x = f'{{skipped}} {alpha.beta!r:>{width}} {gamma[\"key\"]:,} text'\n"),
            ["alpha", "beta", "width", "gamma"]
        );
        assert_eq!(
            names("x = FR\"{path}\" + rb'{bytes}' + t'{tmpl}'\n"),
            ["path", "tmpl"]
        );
        // `if` before a quote is no prefix; a run longer than three is none either.
        assert_eq!(
            names("y = 1 if\"{one}\" else \"{two}\"\n"),
            Vec::<String>::new()
        );
        assert_eq!(names("z = elif_f'{three}'\n"), ["elif_f"]);
        // A dict, a call and a comparison in an interpolation; an unclosed one ends the text.
        assert_eq!(
            names("f'{ {key: val}[key] } {call(arg) != other} {open'\n"),
            ["key", "val", "key", "call", "arg", "other", "open"]
        );
    }

    #[test]
    fn long_python_strings_outside_bodies_are_cut_but_for_quotes_and_first_character() {
        let long = "x".repeat(LONG_STRING);
        let text = format!(
            "A = \"\"\"{{{long}\n}}\"\"\"\nB = '\\{long}'\nC = 'short'\n\
             def f():\n    return \"{long}\"\n"
        );
        let cuts: Vec<&str> = python_bodies(&text)
            .iter()
            .map(|c| &text[c.range.clone()])
            .collect();
        assert_eq!(
            cuts,
            [
                format!("{long}\n}}"),
                format!("\\{long}"),
                format!("    return \"{long}\""),
            ]
        );
        let shorter = "y".repeat(LONG_STRING - 2);
        assert!(python_bodies(&format!("A = '{shorter}'\n")).is_empty());
    }

    #[test]
    fn python_bodies_and_parameters_end_where_python_ends_them() {
        let text = "import os\n\n\
                    @decorator\n\
                    def f(a: int = (1,\n        2)) -> dict[str, int]:  # note\n\
                    \x20   x = \"\"\"\nnot code: def g():\n\"\"\"\n\
                    # a comment at column 0 is inside\n\
                    \x20   return {'a': 1,\n'b': 2}\n\
                    \n# after\n\
                    class C:\n\
                    \x20   async  def m(self): return 1\n\
                    \x20   def n(self):\r\n\
                    \t\tpass\r\n\
                    x = 'it\\'s'\n";
        let cuts = python_bodies(text);
        let cut: Vec<(&str, &str)> = cuts
            .iter()
            .map(|c| (&text[c.range.clone()], c.filler.as_str()))
            .collect();
        assert_eq!(
            cut,
            [
                // A header's parameters and return type, then its body.
                ("a: int = (1,\n        2)", ""),
                ("-> dict[str, int]", ""),
                (
                    "    x = \"\"\"\nnot code: def g():\n\"\"\"\n# a comment at column 0 is inside\n    return {'a': 1,\n'b': 2}",
                    "    ..."
                ),
                ("self", ""),
                ("self", ""),
                ("\t\tpass", "\t\t..."),
            ]
        );
        let compact = compacted(text, &cuts).unwrap();
        assert_eq!(compact.lines().count(), text.lines().count());
        assert!(compact.contains("# note\n\n\n\n\n\n    ...\n\n# after"));
        // A continuation's line end, `\n` or `\r\n`, is inside the logical line.
        for end in ["\n", "\r\n"] {
            let text = format!("def f():{end}    x = 1 + \\{end}2{end}    return x{end}y = 3{end}");
            let cuts = python_bodies(&text);
            assert_eq!(cuts.len(), 1);
            assert!(text[cuts[0].range.clone()].ends_with("return x"));
        }
        assert!(python_bodies("def f():\n    s = '''never closed\n").is_empty());
        // A docstring stays; a body that is only one is not cut.
        let doc = "def f():\n    # kept\n    r\"\"\"Doc\n    more.\"\"\"\n    return 1\n\ndef g():\n    'Only.'\n";
        let cuts = python_bodies(doc);
        assert_eq!(cuts.len(), 1);
        assert_eq!(&doc[cuts[0].range.clone()], "    return 1");
    }

    #[test]
    fn js_bodies_are_functions_arrows_and_class_members_past_literals() {
        let text = "export function f(a: { x: number }) { const r = /[}]/g; return `${a.x}}`; }\n\
                    const g = async (x) => { if (x / 2) { return '}'; } };\n\
                    const o = { k: 1 };\n\
                    class C extends B {\n  m(): void { n(); }\n  get p() { return 1; }\n  q = () => { /* } */ };\n}\n\
                    namespace N { export const v = 1; }\n";
        let bodies: Vec<&str> = js_bodies(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(
            bodies,
            [
                " const r = /[}]/g; return `${a.x}}`; ",
                " if (x / 2) { return '}'; } ",
                " n(); ",
                " return 1; ",
                " /* } */ ",
            ]
        );
        assert!(js_bodies("function f() { `${ }").is_empty());
        assert!(js_bodies("<p>it's {name}</p>\nfunction f() {}").is_empty());
    }

    #[test]
    fn rust_comments_arguments_and_fields_are_left_out() {
        let text = "//! a\n//! b\n// c\n#[derive(Debug)] // d\n/// e\n/// f\npub struct S<T: Fn(u8) -> u8> {\n    x: T,\n}\n\
                    /* g\n h */\nm!(1, 2);\nmacro_rules! n { () => {} }\nfn f<'a>(x: &'a u8) -> bool { !(x != 2) }\n";
        let cuts = rust_lexed(text).unwrap().bodies;
        assert_eq!(
            compacted(text, &cuts).unwrap(),
            "/*!\n*/\n//\n#[derive()] //\n/*\n*/\npub struct S<T: Fn(u8) -> u8> {\n\n}\n\
             /*\n */\nm!();\nmacro_rules! n {}\nfn f<'a>() -> bool {}\n"
        );
    }

    #[test]
    fn a_compacted_text_keeps_every_line_outside_the_bodies() {
        let text = "fn a() {\n  x = \"é\";\n}\nfn b() { y }\n";
        let skip: Vec<Cut> = rust_bodies(text).into_iter().map(Cut::plain).collect();
        assert_eq!(
            compacted(text, &skip).unwrap(),
            "fn a() {\n\n}\nfn b() {}\n"
        );
        assert!(compacted(text, &[]).is_none());
    }
}
