//! The tree-sitter side: parse (one parser per language and thread), walk the scopes
//! that hold definitions (the file, and the bodies of classes, impls, traits, modules,
//! namespaces, interfaces) and collect, per definition, its header lines, its leading
//! doc comments and attributes, its whole extent and its name.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::{Node, Parser, Tree};

use super::lang::Lang;
use super::skip;
use crate::model::Range;

/// Texts longer than this are not parsed (tree-sitter offsets are 32-bit, and a file this
/// large is no outline's business).
const MAX_BYTES: usize = 16 << 20;

/// How deep scopes nest before the walk stops descending (a guard against stack overflow
/// on adversarial input; real code nests a handful of levels).
const MAX_DEPTH: usize = 48;

thread_local! {
    static PARSERS: RefCell<BTreeMap<Lang, Parser>> = const { RefCell::new(BTreeMap::new()) };
}

/// The syntax tree of `text`, by this thread's parser for `lang`; with `skim`, the function
/// bodies of Rust, Go, Python, JavaScript and TypeScript left out (their braces and line
/// ends kept; of Rust, also what [`skip::rust_lexed`] leaves out), and then the text the
/// tree is of (its lines are `text`'s, its byte offsets are not) and the identifiers the
/// skim's lexer found in `text` (when it read it whole).
fn parse(lang: Lang, text: &str, skim: bool) -> Option<Parsed> {
    if text.len() > MAX_BYTES {
        return None;
    }
    let grammar = lang.grammar()?;
    PARSERS.with(|cell| {
        let mut parsers = cell.try_borrow_mut().ok()?;
        let parser = match parsers.entry(lang) {
            std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::btree_map::Entry::Vacant(v) => {
                let mut p = Parser::new();
                p.set_language(&grammar).ok()?;
                v.insert(p)
            }
        };
        let plain = |l: skip::Lexed<Vec<std::ops::Range<usize>>>| skip::Lexed {
            bodies: l.bodies.into_iter().map(skip::Cut::plain).collect(),
            names: l.names,
        };
        let lexed: Option<skip::Lexed<Vec<skip::Cut>>> = match lang {
            Lang::Rust if skim => skip::rust_lexed(text),
            Lang::Go if skim => skip::go_lexed(text).map(plain),
            Lang::JavaScript if skim => skip::js_lexed(text, false).map(plain),
            Lang::TypeScript | Lang::Tsx if skim => skip::js_lexed(text, true).map(plain),
            Lang::Python if skim => skip::python_lexed(text),
            _ => None,
        };
        let (bodies, names) = match lexed {
            Some(l) => (l.bodies, Some(l.names)),
            None => (Vec::new(), None),
        };
        // The bodies emptied but for their line ends: every line where it was.
        let mut compact = skip::compacted(text, &bodies);
        let mut tree = parser.parse(compact.as_deref().unwrap_or(text), None);
        if compact.is_some() && tree.as_ref().is_some_and(|t| t.root_node().has_error()) {
            // A syntax error: perhaps the file's own, perhaps a cut the lexer got wrong
            // (never seen on the files compared); the whole text decides.
            compact = None;
            tree = parser.parse(text, None);
        }
        if tree.is_none() {
            parser.reset();
        }
        let shifts = if compact.is_some() {
            shifts(text, &bodies)
        } else {
            Vec::new()
        };
        Some(Parsed {
            tree: tree?,
            compact,
            shifts,
            names,
        })
    })
}

/// What [`parse`] gives.
struct Parsed {
    tree: Tree,
    compact: Option<String>,
    /// Per cut, where it ends in the compacted text and how far a byte after it is from
    /// its place in `text` (a Python body shorter than its `...` moves what follows on).
    shifts: Vec<(usize, isize)>,
    names: Option<Vec<std::ops::Range<usize>>>,
}

/// [`Parsed::shifts`] of `cuts` (sorted, disjoint) in `text`, as [`skip::compacted`] makes them.
fn shifts(text: &str, cuts: &[skip::Cut]) -> Vec<(usize, isize)> {
    let signed = |n: usize| isize::try_from(n).unwrap_or(isize::MAX);
    let mut out = Vec::with_capacity(cuts.len());
    let mut moved: isize = 0;
    for c in cuts {
        let r = c.range.clone();
        let newlines = memchr::memchr_iter(b'\n', &text.as_bytes()[r.clone()]).count();
        moved += signed(r.len()) - signed(newlines + c.lead.len() + c.filler.len());
        out.push((r.end.saturating_add_signed(-moved), moved));
    }
    out
}

/// Where byte `at` of the compacted text is in the text (`at` outside the cuts).
fn original(shifts: &[(usize, isize)], at: usize) -> usize {
    match shifts.partition_point(|&(end, _)| end <= at) {
        0 => at,
        k => at.saturating_add_signed(shifts[k - 1].1),
    }
}

/// The 1-based first line of a node.
fn first_line(n: Node) -> u64 {
    n.start_position().row as u64 + 1
}

/// The 1-based last line of a node (a node ending at a line's column 0 ends on the line
/// before).
fn last_line(n: Node) -> u64 {
    let (s, e) = (n.start_position(), n.end_position());
    if e.column == 0 && e.row > s.row {
        e.row as u64
    } else {
        e.row as u64 + 1
    }
}

/// What a node is to the walk.
#[derive(Debug, Clone, Copy)]
enum Role {
    /// Imports, includes, package clauses: every line; `docs` takes the comments above.
    Import { docs: bool },
    /// A definition.
    Def {
        kind: &'static str,
        shape: Shape,
        /// Its body holds member definitions, walked as a scope of its own.
        members: bool,
    },
    /// A declaration group (`const ( … )`, `let a = 1, b = 2`): its first line, then its
    /// children as definitions.
    Group,
    /// A wrapper whose start is its definition's start (`export …`, decorators,
    /// `template <…>`): the definition is the named field, or the last named child.
    Wrap(Option<&'static str>),
    /// A node walked through as part of the enclosing scope (`#ifdef`, `if TYPE_CHECKING`).
    Through,
    /// Module documentation (Rust `//!`, a Python module docstring): every line.
    ModuleDoc,
}

/// Which lines of a definition are its header.
#[derive(Debug, Clone, Copy)]
enum Shape {
    /// From its start through the line holding its body's opening `{` (or `:`).
    Header,
    /// All of it (a signature without body, a type alias).
    Whole,
    /// Its first line only.
    First,
}

const fn def(kind: &'static str) -> Role {
    Role::Def {
        kind,
        shape: Shape::Header,
        members: false,
    }
}

const fn container(kind: &'static str) -> Role {
    Role::Def {
        kind,
        shape: Shape::Header,
        members: true,
    }
}

const fn whole(kind: &'static str) -> Role {
    Role::Def {
        kind,
        shape: Shape::Whole,
        members: false,
    }
}

const fn first(kind: &'static str) -> Role {
    Role::Def {
        kind,
        shape: Shape::First,
        members: false,
    }
}

const IMPORT: Role = Role::Import { docs: false };

/// The text of a node (empty if its bytes are not a slice of `text`).
fn text_of<'t>(n: Node, text: &'t str) -> &'t str {
    text.get(n.byte_range()).unwrap_or("")
}

/// The role of a node in a scope, for a language.
/// `top`: in the file's scope; `first`: the first named child of its scope.
fn role(lang: Lang, n: Node, text: &str, top: bool, first: bool) -> Option<Role> {
    let kind = n.kind();
    match lang {
        Lang::Rust => rust_role(kind, n, text, top),
        Lang::Go => go_role(kind),
        Lang::Python => python_role(kind, n, top && first),
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => js_role(kind, n),
        Lang::Java => java_role(kind),
        Lang::C | Lang::Cpp => c_role(lang, kind, n),
        Lang::CSharp => csharp_role(kind),
        Lang::Ruby => ruby_role(kind, n, text),
        Lang::Markdown => None,
    }
}

fn rust_role(kind: &str, n: Node, text: &str, top: bool) -> Option<Role> {
    Some(match kind {
        "use_declaration" | "extern_crate_declaration" => IMPORT,
        "function_item" => def("function"),
        "function_signature_item" => whole("function"),
        "struct_item" => def("struct"),
        "enum_item" => def("enum"),
        "union_item" => def("union"),
        "trait_item" => container("trait"),
        "impl_item" => container("impl"),
        "mod_item" => container("module"),
        "foreign_mod_item" => container("extern"),
        "const_item" => def("constant"),
        "static_item" => def("static"),
        "type_item" => def("type"),
        "associated_type" => whole("type"),
        "macro_definition" => first("macro"),
        "line_comment" | "block_comment"
            if top && {
                let t = text_of(n, text);
                t.starts_with("//!") || t.starts_with("/*!")
            } =>
        {
            Role::ModuleDoc
        }
        _ => return None,
    })
}

fn go_role(kind: &str) -> Option<Role> {
    Some(match kind {
        "package_clause" => Role::Import { docs: true },
        "import_declaration" => IMPORT,
        "function_declaration" => def("function"),
        "method_declaration" => def("method"),
        "type_declaration" | "const_declaration" | "var_declaration" => Role::Group,
        "var_spec_list" => Role::Through,
        "type_spec" => container("type"),
        "type_alias" => def("type"),
        "const_spec" => def("constant"),
        "var_spec" => def("variable"),
        "method_elem" => whole("method"),
        _ => return None,
    })
}

/// `top_first`: the first statement of the file's scope (a module docstring's place).
fn python_role(kind: &str, n: Node, top_first: bool) -> Option<Role> {
    Some(match kind {
        "import_statement" | "import_from_statement" | "future_import_statement" => IMPORT,
        "function_definition" => def("function"),
        "class_definition" => container("class"),
        "decorated_definition" => Role::Wrap(Some("definition")),
        "if_statement" | "try_statement" | "block" | "else_clause" | "elif_clause"
        | "except_clause" | "finally_clause" => Role::Through,
        "expression_statement" => {
            let a = n.named_child(0)?;
            if top_first && a.kind() == "string" && n.named_child_count() == 1 {
                return Some(Role::ModuleDoc);
            }
            if a.kind() != "assignment" || a.child_by_field_name("left")?.kind() != "identifier" {
                return None;
            }
            def("variable")
        }
        _ => return None,
    })
}

/// Whether a JS/TS value is a function (an arrow function or a function expression).
fn is_function_value(n: Node) -> bool {
    n.child_by_field_name("value").is_some_and(|v| {
        matches!(
            v.kind(),
            "arrow_function" | "function_expression" | "function" | "generator_function"
        )
    })
}

fn js_role(kind: &str, n: Node) -> Option<Role> {
    Some(match kind {
        "import_statement" => IMPORT,
        "export_statement" => {
            if n.child_by_field_name("declaration").is_some() {
                Role::Wrap(Some("declaration"))
            } else if n.child_by_field_name("source").is_some()
                || n.named_child(0)
                    .is_some_and(|c| c.kind() == "export_clause")
            {
                IMPORT
            } else {
                return None;
            }
        }
        "function_declaration" | "generator_function_declaration" => def("function"),
        "function_signature" => whole("function"),
        "class_declaration" | "abstract_class_declaration" => container("class"),
        "method_definition" => def("method"),
        "method_signature" | "abstract_method_signature" => whole("method"),
        "public_field_definition" | "field_definition" if is_function_value(n) => def("method"),
        // A class's fields and an interface's properties are its members too (universal-
        // ctags lists them): a field's first line (its initializer may run on).
        "public_field_definition" | "field_definition" => first("property"),
        "property_signature" => whole("property"),
        "interface_declaration" => container("interface"),
        "type_alias_declaration" => def("type"),
        "enum_declaration" => def("enum"),
        "lexical_declaration" | "variable_declaration" => Role::Group,
        "variable_declarator" => {
            if is_function_value(n) {
                def("function")
            } else {
                def("variable")
            }
        }
        "internal_module" | "module" => container("namespace"),
        "ambient_declaration" | "expression_statement" => Role::Through,
        _ => return None,
    })
}

fn java_role(kind: &str) -> Option<Role> {
    Some(match kind {
        "package_declaration" => Role::Import { docs: true },
        "import_declaration" => IMPORT,
        "class_declaration" | "record_declaration" => container("class"),
        "enum_declaration" => container("enum"),
        "interface_declaration" | "annotation_type_declaration" => container("interface"),
        "method_declaration" | "constructor_declaration" | "compact_constructor_declaration" => {
            def("method")
        }
        "enum_body_declarations" => Role::Through,
        _ => return None,
    })
}

/// Whether a C/C++ declaration declares a function (a prototype).
fn declares_function(n: Node) -> bool {
    let mut d = n.child_by_field_name("declarator");
    while let Some(x) = d {
        if x.kind() == "function_declarator" {
            return true;
        }
        d = x.child_by_field_name("declarator");
    }
    false
}

fn c_role(lang: Lang, kind: &str, n: Node) -> Option<Role> {
    let cpp = lang == Lang::Cpp;
    Some(match kind {
        "preproc_include" => IMPORT,
        "function_definition" => def("function"),
        "declaration" if declares_function(n) => whole("prototype"),
        "declaration" => def("variable"),
        "struct_specifier" | "union_specifier" | "enum_specifier" | "class_specifier"
            if n.child_by_field_name("body").is_some() =>
        {
            let k = match kind {
                "struct_specifier" => "struct",
                "union_specifier" => "union",
                "enum_specifier" => "enum",
                _ => "class",
            };
            if cpp && kind != "enum_specifier" {
                container(k)
            } else {
                def(k)
            }
        }
        "type_definition" => def("typedef"),
        "preproc_def" | "preproc_function_def" => first("macro"),
        "preproc_ifdef"
        | "preproc_if"
        | "preproc_else"
        | "preproc_elif"
        | "preproc_elifdef"
        | "linkage_specification"
        | "declaration_list" => Role::Through,
        "namespace_definition" if cpp => container("namespace"),
        "template_declaration" if cpp => Role::Wrap(None),
        "field_declaration" if cpp && declares_function(n) => whole("method"),
        "using_declaration" | "alias_declaration" | "namespace_alias_definition" if cpp => IMPORT,
        _ => return None,
    })
}

fn csharp_role(kind: &str) -> Option<Role> {
    Some(match kind {
        "using_directive" => IMPORT,
        "namespace_declaration" => container("namespace"),
        "file_scoped_namespace_declaration" => Role::Def {
            kind: "namespace",
            shape: Shape::First,
            members: true,
        },
        "class_declaration" | "struct_declaration" | "record_declaration" => container("class"),
        "interface_declaration" => container("interface"),
        "enum_declaration" => def("enum"),
        "method_declaration"
        | "constructor_declaration"
        | "destructor_declaration"
        | "operator_declaration" => def("method"),
        "property_declaration" => def("property"),
        "delegate_declaration" => whole("type"),
        _ => return None,
    })
}

fn ruby_role(kind: &str, n: Node, text: &str) -> Option<Role> {
    Some(match kind {
        "assignment" if n.child_by_field_name("left")?.kind() == "constant" => def("constant"),
        "class" => container("class"),
        "module" => container("module"),
        "method" | "singleton_method" => def("method"),
        "call" => {
            let m = n.child_by_field_name("method")?;
            if n.child_by_field_name("receiver").is_none()
                && matches!(text_of(m, text), "require" | "require_relative" | "load")
            {
                IMPORT
            } else {
                return None;
            }
        }
        _ => return None,
    })
}

/// Whether a node is a comment, attribute or decorator that documents what follows.
fn is_leading(n: Node) -> bool {
    matches!(
        n.kind(),
        "comment" | "line_comment" | "block_comment" | "attribute_item" | "decorator"
    )
}

/// Where the comments, attributes and decorators documenting each child of a scope start,
/// found as its children are walked in order (walking back from each child by
/// `prev_sibling`, which starts over from the parent's first child, made an outline
/// quadratic in a scope's items and comments). The first line of those directly above a
/// child (no blank line between), or its own first line; a comment trailing the previous
/// item's last line is not taken. The walk back from a child takes its predecessor when it
/// is such a comment, and then goes on exactly as the walk back from that predecessor: so
/// each child's start is its predecessor's, or its own line.
#[derive(Default)]
struct Docs<'t> {
    /// The two children before the current one, and the start found for the last.
    before: Option<Node<'t>>,
    prev: Option<(Node<'t>, u64)>,
}

impl<'t> Docs<'t> {
    /// The start of the next child, `child`.
    fn next(&mut self, child: Node<'t>) -> u64 {
        let own = first_line(child);
        let start = match self.prev {
            Some((p, p_start))
                if is_leading(p)
                    && last_line(p) + 1 >= own
                    && !self
                        .before
                        .is_some_and(|pp| !is_leading(pp) && last_line(pp) >= first_line(p)) =>
            {
                p_start
            }
            _ => own,
        };
        self.before = self.prev.map(|(p, _)| p);
        self.prev = Some((child, start));
        start
    }
}

/// Each named child of `parent` (but `skip`) with where its documentation starts
/// ([`Docs`]), in order.
fn documented<'t>(parent: Node<'t>, skip: Option<Node<'t>>) -> Vec<(Node<'t>, u64)> {
    let mut out = Vec::with_capacity(parent.named_child_count());
    let mut docs = Docs::default();
    let mut cursor = parent.walk();
    if cursor.goto_first_child() {
        loop {
            let child = cursor.node();
            let start = docs.next(child);
            if child.is_named() && skip != Some(child) {
                out.push((child, start));
            }
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    out
}

/// Whether a node is a parameter list (never a body, never searched for one).
fn is_parameters(kind: &str) -> bool {
    kind.contains("parameter")
}

/// The last header line given a definition's body: the line of its opening `{` (or `(`
/// / `[`), else the end of whatever precedes it (Python's `:`, Ruby's parameters). A
/// Python body opens with no bracket: one that starts with `(a, b) = t` starts with its
/// first statement, which is not the header's.
/// `parent` is the body's parent: its children are walked once to find what precedes the
/// body (`Node::prev_sibling` starts over from the tree's root at every call).
fn header_end_at(lang: Lang, parent: Node, body: Node, text: &str, start: u64) -> u64 {
    let opens = lang != Lang::Python
        && text
            .as_bytes()
            .get(body.start_byte())
            .is_some_and(|b| matches!(b, b'{' | b'(' | b'['));
    if opens {
        first_line(body)
    } else {
        let mut cursor = parent.walk();
        let before = parent
            .children(&mut cursor)
            .take_while(|c| c.id() != body.id())
            .last();
        before
            .map_or(start, last_line)
            .min(first_line(body).max(start))
    }
}

/// The last header line of a definition: through its body's opening when it has a body
/// field; else through the opening of the first multi-line bracketed (or block) part
/// inside it; else all of it.
fn header_end(lang: Lang, n: Node, text: &str) -> u64 {
    let start = first_line(n);
    if let Some(body) = n.child_by_field_name("body") {
        return header_end_at(lang, n, body, text, start);
    }
    // Depth-first through multi-line named children, skipping parameter lists.
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        let mut cursor = x.walk();
        let kids: Vec<Node> = x
            .named_children(&mut cursor)
            .filter(|c| c.start_position().row != c.end_position().row)
            .filter(|c| !is_parameters(c.kind()))
            .collect();
        if let Some(&c) = kids.first() {
            if let Some(body) = c.child_by_field_name("body") {
                return header_end_at(lang, c, body, text, start);
            }
            let opens = text
                .as_bytes()
                .get(c.start_byte())
                .is_some_and(|b| matches!(b, b'{' | b'(' | b'['));
            if opens
                || matches!(
                    c.kind(),
                    "block" | "body_statement" | "interface_type" | "declaration_list"
                )
            {
                return first_line(c);
            }
            if stack.len() < MAX_DEPTH {
                stack.push(c);
            }
        }
    }
    last_line(n)
}

/// The base name of a type (`Foo` of `Foo<T>`, `a::Foo`, `*Foo`, `&mut Foo`).
fn type_name(n: Node, text: &str) -> Option<String> {
    let mut cur = n;
    for _ in 0..MAX_DEPTH {
        match cur.kind() {
            "type_identifier" | "identifier" | "primitive_type" | "constant"
            | "field_identifier" => {
                return Some(text_of(cur, text).to_owned());
            }
            "generic_type"
            | "reference_type"
            | "pointer_type"
            | "parameter_declaration"
            | "qualified_type"
            | "scoped_type_identifier"
            | "scoped_identifier" => {
                cur = cur
                    .child_by_field_name("name")
                    .or_else(|| cur.child_by_field_name("type"))
                    .or_else(|| {
                        let c = cur.named_child_count();
                        cur.named_child(u32::try_from(c.checked_sub(1)?).ok()?)
                    })?;
            }
            _ => {
                cur = cur.named_child(0)?;
            }
        }
    }
    None
}

/// A C/C++ declarator's name and the scope its qualifier names (`Foo::bar` → `bar`, `[Foo]`).
fn declarator_name(n: Node, text: &str) -> Option<(String, Vec<String>)> {
    let mut cur = n.child_by_field_name("declarator")?;
    let mut scope = Vec::new();
    for _ in 0..MAX_DEPTH {
        match cur.kind() {
            "identifier" | "field_identifier" | "type_identifier" | "destructor_name"
            | "operator_name" => return Some((text_of(cur, text).to_owned(), scope)),
            "qualified_identifier" => {
                if let Some(s) = cur.child_by_field_name("scope") {
                    scope.push(text_of(s, text).to_owned());
                }
                cur = cur.child_by_field_name("name")?;
            }
            _ => {
                cur = cur
                    .child_by_field_name("declarator")
                    .or_else(|| cur.named_child(0))?;
            }
        }
    }
    None
}

/// A definition's name node, name and any scope its own syntax adds (a Go method's
/// receiver, a C++ `Foo::bar`).
fn name_of<'a>(
    lang: Lang,
    n: Node<'a>,
    text: &str,
) -> Option<(Option<Node<'a>>, String, Vec<String>)> {
    match (lang, n.kind()) {
        (Lang::Rust, "impl_item") => {
            let t = n.child_by_field_name("type")?;
            Some((None, type_name(t, text)?, Vec::new()))
        }
        (Lang::Go, "method_declaration") => {
            let name = n.child_by_field_name("name")?;
            let scope = n
                .child_by_field_name("receiver")
                .and_then(|r| r.named_child(0))
                .and_then(|p| p.child_by_field_name("type"))
                .and_then(|t| type_name(t, text))
                .into_iter()
                .collect();
            Some((Some(name), text_of(name, text).to_owned(), scope))
        }
        (Lang::Python, "expression_statement") | (Lang::Ruby, "assignment") => {
            let n = if lang == Lang::Python {
                n.named_child(0)?
            } else {
                n
            };
            let left = n.child_by_field_name("left")?;
            Some((Some(left), text_of(left, text).to_owned(), Vec::new()))
        }
        (
            Lang::C | Lang::Cpp,
            "function_definition" | "declaration" | "field_declaration" | "type_definition",
        ) => {
            let (name, scope) = declarator_name(n, text)?;
            Some((None, name, scope))
        }
        _ => {
            let name = n.child_by_field_name("name")?;
            let s = text_of(name, text);
            let s = match name.kind() {
                // A qualified name (`a.b.c`, `A::B`): its last segment.
                "qualified_name" | "nested_identifier" | "scoped_identifier"
                | "scope_resolution" => s.rsplit(['.', ':']).next().unwrap_or(s),
                _ => s,
            };
            Some((Some(name), s.to_owned(), Vec::new()))
        }
    }
}

/// Whether a definition is public (its comments and attributes join the outline).
fn is_public(lang: Lang, n: Node, outer: Node, name: &str, ctx: Ctx, text: &str) -> bool {
    let mut cursor = n.walk();
    let mut kids = n.children(&mut cursor);
    match lang {
        Lang::Rust => ctx.public_members || kids.any(|c| c.kind() == "visibility_modifier"),
        Lang::Go => name.starts_with(char::is_uppercase),
        Lang::Python => !name.starts_with('_') || (name.starts_with("__") && name.ends_with("__")),
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => {
            if ctx.depth == 0 {
                outer.kind() == "export_statement" || ctx.exported
            } else {
                !name.starts_with('#')
                    && !kids.any(|c| {
                        c.kind() == "accessibility_modifier" && text_of(c, text) != "public"
                    })
            }
        }
        Lang::Java | Lang::CSharp => {
            ctx.public_members
                || kids.any(|c| {
                    matches!(c.kind(), "modifiers" | "modifier")
                        && (text_of(c, text).contains("public")
                            || text_of(c, text).contains("protected"))
                })
        }
        Lang::C | Lang::Cpp => {
            !kids.any(|c| c.kind() == "storage_class_specifier" && text_of(c, text) == "static")
        }
        Lang::Ruby | Lang::Markdown => true,
    }
}

/// Lines of a definition beyond its header that belong in the outline: a public Python
/// function's or class's docstring; a C typedef's name (after its struct body).
fn extra_lines(lang: Lang, n: Node, public: bool) -> Option<Range> {
    match (lang, n.kind()) {
        (Lang::Python, "function_definition" | "class_definition") if public => {
            let s = n.child_by_field_name("body")?.named_child(0)?;
            (s.kind() == "expression_statement"
                && s.named_child_count() == 1
                && s.named_child(0)?.kind() == "string")
                .then(|| [first_line(s), last_line(s)])
        }
        (Lang::C | Lang::Cpp, "type_definition") => {
            let d = n.child_by_field_name("declarator")?;
            Some([first_line(d), last_line(d)])
        }
        _ => None,
    }
}

/// Where the walk is.
#[derive(Debug, Clone, Copy, Default)]
struct Ctx {
    /// Scope nesting (0: the file).
    depth: usize,
    /// Members are public without saying so (a trait, a trait impl, an interface).
    public_members: bool,
    /// Inside an `export` (JS/TS).
    exported: bool,
    /// Inside a type's body (a class, impl, trait, interface): functions are methods.
    in_type: bool,
}

/// One definition as the walk found it.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub name: String,
    pub scope: Vec<String>,
    pub kind: &'static str,
    /// The line of its name.
    pub line: u64,
    /// From its doc comments and attributes through its end.
    pub full: Range,
}

/// What a walk of a file found.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// Outline ranges, unsorted and unmerged.
    pub ranges: Vec<Range>,
    pub items: Vec<Item>,
    /// Definitions seen (named or not).
    pub defs: usize,
    /// Start bytes of definition names (not references), in the text (mapped back from the
    /// compacted one when bodies were cut).
    pub name_bytes: BTreeSet<usize>,
    /// With a skim whose lexer read the text whole: every identifier's bytes in the text,
    /// outside comments and literals.
    pub names: Option<Vec<std::ops::Range<usize>>>,
}

struct Walk<'t> {
    lang: Lang,
    text: &'t str,
    found: Found,
}

impl Walk<'_> {
    fn scope(&mut self, parent: Node, scope: &mut Vec<String>, ctx: Ctx) {
        if ctx.depth > MAX_DEPTH {
            return;
        }
        for (i, (child, docs)) in documented(parent, None).into_iter().enumerate() {
            self.node(child, child, docs, scope, ctx, i == 0);
        }
    }

    /// `first`: `n` is the first named child of its scope; `docs`: where the comments and
    /// attributes documenting `outer` start.
    fn node(
        &mut self,
        n: Node,
        outer: Node,
        docs: u64,
        scope: &mut Vec<String>,
        ctx: Ctx,
        first: bool,
    ) {
        let Some(role) = role(self.lang, n, self.text, ctx.depth == 0, first) else {
            return;
        };
        match role {
            Role::Import { docs: with_docs } => {
                let start = if with_docs { docs } else { first_line(outer) };
                self.found.ranges.push([start, last_line(n)]);
            }
            Role::ModuleDoc => self.found.ranges.push([first_line(n), last_line(n)]),
            Role::Through => self.scope(n, scope, ctx),
            Role::Wrap(field) => {
                let inner = match field {
                    Some(f) => n.child_by_field_name(f),
                    None => {
                        let c = n.named_child_count();
                        c.checked_sub(1)
                            .and_then(|i| n.named_child(u32::try_from(i).ok()?))
                    }
                };
                if let Some(inner) = inner {
                    let exported = ctx.exported || n.kind() == "export_statement";
                    self.node(inner, outer, docs, scope, Ctx { exported, ..ctx }, false);
                }
            }
            Role::Group => {
                self.found
                    .ranges
                    .push([docs, first_line(n).max(first_line(outer))]);
                let exported = ctx.exported || outer.kind() == "export_statement";
                for (child, child_docs) in documented(n, None) {
                    // A spec's start is the group's own when it is the group's only line.
                    let (o, d) = if first_line(child) == first_line(n) {
                        (outer, docs)
                    } else {
                        (child, child_docs)
                    };
                    self.node(child, o, d, scope, Ctx { exported, ..ctx }, false);
                }
            }
            Role::Def {
                kind,
                shape,
                members,
            } => self.def(n, outer, docs, kind, shape, members, scope, ctx),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn def(
        &mut self,
        n: Node,
        outer: Node,
        docs: u64,
        kind: &'static str,
        shape: Shape,
        members: bool,
        scope: &mut Vec<String>,
        ctx: Ctx,
    ) {
        let text = self.text;
        let start = first_line(outer);
        let end = match shape {
            Shape::Header => header_end(self.lang, n, text),
            Shape::Whole => last_line(n),
            Shape::First => first_line(n),
        }
        .max(start);
        let named = name_of(self.lang, n, text);
        let name = named.as_ref().map_or("", |(_, s, _)| s.as_str());
        let public = is_public(self.lang, n, outer, name, ctx, text);
        self.found
            .ranges
            .push([if public { docs } else { start }, end]);
        if let Some(extra) = extra_lines(self.lang, n, public) {
            self.found.ranges.push(extra);
        }
        self.found.defs += 1;
        let kind = if kind == "function" && ctx.in_type {
            "method"
        } else {
            kind
        };
        if let Some((node, name, extra)) = named
            && !name.is_empty()
        {
            if let Some(node) = node {
                self.found.name_bytes.insert(node.start_byte());
            }
            let mut full_scope = scope.clone();
            full_scope.extend(extra);
            self.found.items.push(Item {
                line: node.map_or(first_line(n), first_line),
                name: name.clone(),
                scope: full_scope,
                kind,
                full: [docs.min(start), last_line(n)],
            });
            if members {
                self.members(n, Some(name), scope, ctx);
            }
        } else if members {
            self.members(n, None, scope, ctx);
        }
    }

    fn members(&mut self, n: Node, name: Option<String>, scope: &mut Vec<String>, ctx: Ctx) {
        let body = n
            .child_by_field_name("body")
            .or_else(|| {
                n.child_by_field_name("type")
                    .filter(|t| t.kind() == "interface_type")
            })
            .unwrap_or(n);
        if body.id() == n.id() && n.kind() != "file_scoped_namespace_declaration" {
            return;
        }
        let public_members = match n.kind() {
            "trait_item" | "interface_declaration" | "annotation_type_declaration" => true,
            "impl_item" => n.child_by_field_name("trait").is_some(),
            _ => false,
        };
        let pushed = name.is_some();
        if let Some(name) = name {
            scope.push(name);
        }
        let in_type = !matches!(
            n.kind(),
            "mod_item"
                | "foreign_mod_item"
                | "namespace_definition"
                | "namespace_declaration"
                | "file_scoped_namespace_declaration"
                | "internal_module"
                | "module"
        );
        let inner = Ctx {
            depth: ctx.depth + 1,
            public_members,
            exported: false,
            in_type,
        };
        if body.id() == n.id() {
            // A file-scoped namespace: its declarations follow it as its children.
            for (c, docs) in documented(n, n.child_by_field_name("name")) {
                self.node(c, c, docs, scope, inner, false);
            }
        } else {
            self.scope(body, scope, inner);
        }
        if pushed {
            scope.pop();
        }
    }
}

/// Lines of `text` (as `str::lines` counts them).
pub(crate) fn line_count(text: &str) -> u64 {
    let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    (newlines + usize::from(!text.is_empty() && !text.ends_with('\n'))) as u64
}

/// Whether errors cover more than a quarter of the file's lines.
fn mostly_errors(tree: &Tree, lines: u64) -> bool {
    let root = tree.root_node();
    if !root.has_error() {
        return false;
    }
    let mut bad: Vec<Range> = Vec::new();
    let mut cursor = root.walk();
    loop {
        let n = cursor.node();
        let descend = if n.is_error() || n.is_missing() {
            bad.push([first_line(n), last_line(n)]);
            false
        } else {
            n.has_error()
        };
        if descend && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                let covered: u64 = merge(bad).iter().map(|[a, b]| b - a + 1).sum();
                return covered.saturating_mul(4) > lines;
            }
        }
    }
}

/// Sorted, with overlapping and adjacent ranges merged.
pub(crate) fn merge(mut ranges: Vec<Range>) -> Vec<Range> {
    ranges.sort_unstable();
    let mut out: Vec<Range> = Vec::with_capacity(ranges.len());
    for [a, b] in ranges {
        match out.last_mut() {
            Some(last) if a <= last[1].saturating_add(1) => last[1] = last[1].max(b),
            _ => out.push([a, b]),
        }
    }
    out
}

/// The words one of which a Go or Rust text holds when it defines anything (`None`: another
/// language, where a definition may have no keyword: a Python assignment, a method of a
/// JavaScript object). Each node kind [`go_role`] and [`rust_role`] call a definition is made
/// by one of these keywords, or lies in what one opens (an interface's methods); tree-sitter
/// lexes a keyword only from its exact bytes, and never puts one in as missing (it inserts a
/// token only where a reduction follows, and after each of these the grammar wants more).
fn defining_words(lang: Lang) -> Option<&'static [&'static [u8]]> {
    match lang {
        Lang::Go => Some(&[b"func", b"type", b"const", b"var", b"interface"]),
        Lang::Rust => Some(&[
            b"fn",
            b"struct",
            b"enum",
            b"union",
            b"trait",
            b"impl",
            b"mod",
            b"extern",
            b"const",
            b"static",
            b"type",
            b"macro_rules",
        ]),
        _ => None,
    }
}

/// Whether `text` may define anything: false only for a Go or Rust text in which no word of
/// [`defining_words`] stands alone (no ASCII letter, digit or `_` on either side; anywhere,
/// comments and strings too), which the walk would find no definition in. A file of
/// statements or of comments only is not parsed.
pub(crate) fn may_define(lang: Lang, text: &str) -> bool {
    let Some(words) = defining_words(lang) else {
        return true;
    };
    text.as_bytes()
        .split(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
        .any(|run| words.contains(&run))
}

/// The parse and walk of a file; `None` when it cannot be parsed, errors cover much of it,
/// or it defines nothing. With `skim`, function bodies may be left out of the tree (an
/// outline and a symbol do not need them; references do).
pub(crate) fn walk(lang: Lang, text: &str, skim: bool) -> Option<(Tree, Found)> {
    if text.trim().is_empty() || !may_define(lang, text) {
        return None;
    }
    walk_parsed(lang, text, skim)
}

/// [`walk`] without looking for a definition's keyword first: the text is parsed.
pub(crate) fn walk_parsed(lang: Lang, text: &str, skim: bool) -> Option<(Tree, Found)> {
    let Parsed {
        tree,
        compact,
        shifts,
        names,
    } = parse(lang, text, skim)?;
    let lines = line_count(text);
    if mostly_errors(&tree, lines) {
        return None;
    }
    let mut w = Walk {
        lang,
        // The walk reads names and brackets at the tree's byte offsets.
        text: compact.as_deref().unwrap_or(text),
        found: Found::default(),
    };
    w.scope(tree.root_node(), &mut Vec::new(), Ctx::default());
    let mut found = w.found;
    if !shifts.is_empty() {
        found.name_bytes = found
            .name_bytes
            .iter()
            .map(|&at| original(&shifts, at))
            .collect();
    }
    found.names = names;
    if found.defs == 0 {
        return None;
    }
    found.ranges = merge(
        found
            .ranges
            .into_iter()
            .map(|[a, b]| [a.max(1), b.min(lines)])
            .filter(|[a, b]| a <= b)
            .collect(),
    );
    Some((tree, found))
}

/// Whether a leaf kind is an identifier.
fn is_identifier(lang: Lang, kind: &str) -> bool {
    kind == "identifier"
        || kind.ends_with("_identifier")
        || (lang == Lang::Ruby && kind == "constant")
}

thread_local! {
    /// Per language, which node kinds (by id) are identifiers ([`is_identifier`]).
    static IDENTIFIERS: RefCell<BTreeMap<Lang, Vec<bool>>> = const { RefCell::new(BTreeMap::new()) };
}

/// Every identifier the tree holds outside definition names, with its count.
pub(crate) fn references<'t>(
    lang: Lang,
    tree: &Tree,
    text: &'t str,
    names: &BTreeSet<usize>,
) -> std::collections::HashMap<&'t str, u32, foldhash::fast::FixedState> {
    IDENTIFIERS.with(|cell| {
        let mut tables = cell.borrow_mut();
        let identifiers = tables.entry(lang).or_insert_with(|| {
            let language = tree.language();
            (0..language.node_kind_count())
                .map(|id| {
                    u16::try_from(id)
                        .ok()
                        .and_then(|id| language.node_kind_for_id(id))
                        .is_some_and(|kind| is_identifier(lang, kind))
                })
                .collect()
        });
        identifiers_of(tree, text, names, identifiers)
    })
}

/// [`references`], with the identifier kinds' table.
fn identifiers_of<'t>(
    tree: &Tree,
    text: &'t str,
    names: &BTreeSet<usize>,
    identifiers: &[bool],
) -> std::collections::HashMap<&'t str, u32, foldhash::fast::FixedState> {
    let mut out = std::collections::HashMap::default();
    let mut cursor = tree.root_node().walk();
    loop {
        let n = cursor.node();
        if n.child_count() == 0 {
            if n.is_named()
                && identifiers
                    .get(usize::from(n.kind_id()))
                    .copied()
                    .unwrap_or(false)
                && !names.contains(&n.start_byte())
            {
                let t = text_of(n, text);
                if !t.is_empty() && t.len() <= skip::MAX_NAME {
                    let c = out.entry(t).or_insert(0u32);
                    *c = c.saturating_add(1);
                }
            }
        } else if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return out;
            }
        }
    }
}
