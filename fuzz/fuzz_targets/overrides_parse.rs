//! `curate::stages::overrides::parse` on arbitrary text: never panics; what it accepts is
//! well-formed; what it refuses gives an error of the documented shape (docs/exit-codes.md).
#![no_main]

mod common;

use std::path::Path;

use curate::model::Sections;
use curate::stages::overrides::{self, Directive};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match overrides::parse(text, Path::new("worker-context.overrides.jsonl")) {
        Ok(o) => {
            for c in &o.curation {
                assert!(!c.contains('\n'), "curation line with a newline: {c:?}");
            }
            for d in &o.directives {
                match d {
                    Directive::Upsert(u) => {
                        assert!(!u.file.is_empty());
                        assert_ne!(u.kind.as_deref(), Some(""));
                        if let Some(Sections::Ranges(r)) = &u.sections {
                            assert!(!r.is_empty(), "empty sections accepted");
                            common::assert_normalised(r);
                        }
                    }
                    Directive::Drop { glob, .. } => assert!(!glob.is_empty()),
                }
            }
        }
        Err(e) => common::assert_error_shape(&e),
    }
});
