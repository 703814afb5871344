//! The tags of a file: what it defines and which identifiers it names.

/// One definition: its name, its kind and the 1-based line of its name.
///
/// Kinds: `function`, `method`, `struct`, `enum`, `union`, `trait`, `impl`, `module`,
/// `constant`, `static`, `variable`, `type`, `macro`, `class`, `interface`, `namespace`,
/// `property`, `prototype`, `typedef`, `extern`, `heading` (Markdown).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Def {
    pub name: String,
    pub kind: &'static str,
    pub line: u64,
}

/// A file's definitions (in document order) and the identifiers it references.
///
/// `refs` is sorted and deduplicated; `ref_counts[i]` is how often `refs[i]` occurs (at
/// least 1), so both have the same length. An identifier is referenced wherever it occurs
/// other than as a definition's name (calls, type uses, field accesses, local names), never
/// in a comment or a string literal; in Rust, Go, Python, JavaScript and TypeScript
/// keywords and primitive types are not references.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tags {
    pub defs: Vec<Def>,
    pub refs: Vec<String>,
    pub ref_counts: Vec<u32>,
}

impl Tags {
    /// How often `name` is referenced (0 when it is not).
    #[must_use]
    pub fn ref_count(&self, name: &str) -> u32 {
        self.refs
            .binary_search_by(|r| r.as_str().cmp(name))
            .map_or(0, |i| self.ref_counts.get(i).copied().unwrap_or(1))
    }
}
