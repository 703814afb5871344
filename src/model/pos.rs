//! A position in a text file.

/// A position in a text file, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

impl Pos {
    /// `bytes` as UTF-8, or the position of the first byte that is not (its column
    /// counted in bytes, as the JSON errors' are).
    pub fn utf8(bytes: &[u8]) -> std::result::Result<&str, Pos> {
        std::str::from_utf8(bytes).map_err(|e| {
            let before = &bytes[..e.valid_up_to()];
            let line_start = before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            Pos {
                line: memchr::memchr_iter(b'\n', before).count() + 1,
                column: before.len() - line_start + 1,
            }
        })
    }
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}
