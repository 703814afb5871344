//! The one glob dialect of curate, for contracts, overrides, scopes and manifest templates:
//! `*` and `?` stay inside one path segment, `**` crosses `/`, `\` escapes the next
//! character, `[…]` and `{a,b}` as globset reads them.

use globset::{Glob, GlobBuilder, GlobMatcher};

/// Compiles `pattern` in curate's dialect.
///
/// # Errors
/// globset's error for a malformed pattern (an unclosed `[`, a dangling `\` …).
pub fn compile(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
}

/// The matcher of `pattern` (see [`compile`]).
///
/// # Errors
/// As [`compile`].
pub fn matcher(pattern: &str) -> Result<GlobMatcher, globset::Error> {
    compile(pattern).map(|g| g.compile_matcher())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_star_stays_in_its_segment_and_a_double_star_crosses() {
        let one = matcher("src/*.rs").unwrap();
        assert!(one.is_match("src/a.rs"));
        assert!(!one.is_match("src/x/a.rs"));
        let any = matcher("src/**/*.rs").unwrap();
        assert!(any.is_match("src/x/y/a.rs"));
        assert!(matcher(r"a\*b").unwrap().is_match("a*b"));
        assert!(!matcher(r"a\*b").unwrap().is_match("axb"));
        assert!(compile("[").is_err());
    }
}
