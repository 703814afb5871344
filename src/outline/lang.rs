//! The languages the outline knows, how a path maps to one, and each grammar.

use std::path::Path;

/// A language the outline can read: a tree-sitter grammar, or Markdown (read by a small
/// line scanner of its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lang {
    Rust,
    Go,
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Java,
    C,
    Cpp,
    CSharp,
    Ruby,
    Markdown,
}

impl Lang {
    /// Every language, in declaration order.
    pub const ALL: [Lang; 12] = [
        Lang::Rust,
        Lang::Go,
        Lang::Python,
        Lang::JavaScript,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::Java,
        Lang::C,
        Lang::Cpp,
        Lang::CSharp,
        Lang::Ruby,
        Lang::Markdown,
    ];

    /// The lower-case name (`rust`, `typescript`, `tsx`, `cpp`, `csharp`, …).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Go => "go",
            Lang::Python => "python",
            Lang::JavaScript => "javascript",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::Java => "java",
            Lang::C => "c",
            Lang::Cpp => "cpp",
            Lang::CSharp => "csharp",
            Lang::Ruby => "ruby",
            Lang::Markdown => "markdown",
        }
    }

    /// The tree-sitter grammar; `None` for Markdown.
    pub(crate) fn grammar(self) -> Option<tree_sitter::Language> {
        let f = match self {
            Lang::Rust => tree_sitter_rust::LANGUAGE,
            Lang::Go => tree_sitter_go::LANGUAGE,
            Lang::Python => tree_sitter_python::LANGUAGE,
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE,
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT,
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX,
            Lang::Java => tree_sitter_java::LANGUAGE,
            Lang::C => tree_sitter_c::LANGUAGE,
            Lang::Cpp => tree_sitter_cpp::LANGUAGE,
            Lang::CSharp => tree_sitter_c_sharp::LANGUAGE,
            Lang::Ruby => tree_sitter_ruby::LANGUAGE,
            Lang::Markdown => return None,
        };
        Some(f.into())
    }
}

/// The language of a path, by its extension (ASCII case-insensitive), or by its whole file
/// name for a few extension-less ones (`Rakefile`, `Gemfile`).
///
/// `.rs` Rust; `.go` Go; `.py .pyi .pyw` Python; `.js .mjs .cjs .jsx` JavaScript; `.ts .mts
/// .cts` TypeScript; `.tsx` TSX; `.java` Java; `.c` C; `.h .cc .cpp .cxx .c++ .hh .hpp .hxx
/// .h++ .ipp` C++ (a `.h` is read as C++, which parses C headers too); `.cs` C#; `.rb .rake
/// .gemspec .ru` Ruby; `.md .markdown .mdown .mkd` Markdown. Anything else: `None`.
#[must_use]
pub fn lang_for(path: &str) -> Option<Lang> {
    let p = Path::new(path);
    let file = p.file_name()?.to_str()?;
    if matches!(file, "Rakefile" | "Gemfile" | "Guardfile" | "Vagrantfile") {
        return Some(Lang::Ruby);
    }
    let ext = p.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "rs" => Lang::Rust,
        "go" => Lang::Go,
        "py" | "pyi" | "pyw" => Lang::Python,
        "js" | "mjs" | "cjs" | "jsx" => Lang::JavaScript,
        "ts" | "mts" | "cts" => Lang::TypeScript,
        "tsx" => Lang::Tsx,
        "java" => Lang::Java,
        "c" => Lang::C,
        "h" | "cc" | "cpp" | "cxx" | "c++" | "hh" | "hpp" | "hxx" | "h++" | "ipp" => Lang::Cpp,
        "cs" => Lang::CSharp,
        "rb" | "rake" | "gemspec" | "ru" => Lang::Ruby,
        "md" | "markdown" | "mdown" | "mkd" => Lang::Markdown,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_map_to_languages() {
        assert_eq!(lang_for("src/lib.rs"), Some(Lang::Rust));
        assert_eq!(lang_for("a/b.GO"), Some(Lang::Go));
        assert_eq!(lang_for("x.mjs"), Some(Lang::JavaScript));
        assert_eq!(lang_for("x.cts"), Some(Lang::TypeScript));
        assert_eq!(lang_for("x.tsx"), Some(Lang::Tsx));
        assert_eq!(lang_for("README.markdown"), Some(Lang::Markdown));
        assert_eq!(lang_for("Rakefile"), Some(Lang::Ruby));
        assert_eq!(lang_for("Makefile"), None);
        assert_eq!(lang_for("x.txt"), None);
        assert_eq!(lang_for(""), None);
        assert_eq!(lang_for(".rs"), None);
    }

    #[test]
    fn every_grammar_loads() {
        for lang in Lang::ALL {
            if let Some(g) = lang.grammar() {
                let mut p = tree_sitter::Parser::new();
                assert!(p.set_language(&g).is_ok(), "{}", lang.name());
            }
        }
    }
}
