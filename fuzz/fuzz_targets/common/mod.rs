//! Checks shared by the fuzz targets.

/// The error exactly as `curate`'s `main` prints it.
pub fn report(e: &curate::error::Error) -> String {
    curate::error::render(e, "error:")
}

/// The error shape (docs/exit-codes.md): one first line `error: …`, then only `caused by: …` and `hint: …` lines,
/// whatever the input held (a raw newline in a key or a glob must not break the shape).
pub fn assert_error_shape(e: &curate::error::Error) {
    let text = report(e);
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    assert!(first.starts_with("error: "), "bad first line in {text:?}");
    assert!(first.len() > "error: ".len(), "empty message in {text:?}");
    for line in lines {
        assert!(
            line.starts_with("caused by: ") || line.starts_with("hint: "),
            "line {line:?} is neither `caused by:` nor `hint:` in {text:?}"
        );
    }
}

/// A well-formed, normalised range list: sorted, each `1 <= start <= end`, and no two ranges
/// overlapping or adjacent.
pub fn assert_normalised(ranges: &[[u64; 2]]) {
    for &[s, e] in ranges {
        assert!(s >= 1 && s <= e, "bad range [{s}, {e}] in {ranges:?}");
    }
    for w in ranges.windows(2) {
        assert!(
            w[0][1].saturating_add(1) < w[1][0],
            "ranges not merged: {ranges:?}"
        );
    }
}
