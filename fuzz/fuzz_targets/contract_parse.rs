//! `curate::stages::contract::parse` on arbitrary bytes: never panics; an accepted file obeys the
//! schema's promises (sections `1 <= start <= end`, non-empty glob and kind); a refused one
//! gives an error of the documented shape (docs/exit-codes.md).
#![no_main]

mod common;

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match curate::stages::contract::parse(data, Path::new("contracts.json")) {
        Ok(roles) => {
            for role in &roles {
                for cf in &role.context_files {
                    assert!(!cf.glob.is_empty(), "empty glob accepted");
                    assert!(!cf.kind.is_empty(), "empty kind accepted");
                    if let Some(sections) = &cf.sections {
                        assert!(!sections.is_empty(), "empty sections list accepted");
                        for &[s, e] in sections {
                            assert!(s >= 1 && s <= e, "section [{s}, {e}] accepted");
                        }
                    }
                    if let Some(r) = cf.sections().as_ranges() {
                        common::assert_normalised(r);
                    }
                }
            }
        }
        Err(e) => common::assert_error_shape(&e),
    }
});
