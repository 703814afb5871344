//! `curate::stages::manifest::parse` and `is_intact` on arbitrary text: never panic, and the digest
//! header means what it says.
#![no_main]

use curate::stages::manifest;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let text = text.as_ref();

    let parsed = manifest::parse(text);
    let intact = manifest::is_intact(text);
    let (first, body) = manifest::split_header(text);
    if intact {
        assert!(manifest::parse_header(first).is_some());
        assert!(parsed.header.is_some(), "intact manifest without a header");
    }
    let lines = text.lines().count();
    for (n, v) in &parsed.entries {
        assert!(*n >= 1 && *n <= lines);
        assert!(v.is_object());
    }
    for (n, col, msg) in &parsed.errors {
        assert!(*n >= 1 && *n <= lines && *col >= 1 && !msg.is_empty());
    }

    // The same body under a header carrying its digest is intact; any change to the body is
    // seen (appending a byte changes the digest).
    let rebuilt = format!(
        "// curate: 0.0.0 contracts=0123456789ab digest={}\n{body}",
        curate::util::digest::hex12(body.as_bytes())
    );
    assert!(manifest::is_intact(&rebuilt), "rebuilt manifest not intact");
    assert!(!manifest::is_intact(&format!("{rebuilt}x")));
    assert!(manifest::parse(&rebuilt).header.is_some());

    // Curation notes written by `format` come back as one line each, whatever they hold.
    let notes: Vec<String> = text.split('\u{0}').map(str::to_owned).collect();
    let written = manifest::format("0123456789ab", &notes, &[]);
    assert!(manifest::is_intact(&written));
    let back = manifest::parse(&written);
    assert!(back.errors.is_empty(), "{:?}", back.errors);
    assert!(back.entries.is_empty());
    assert_eq!(
        back.curation.len(),
        notes.len(),
        "a note broke a line: {written:?}"
    );
});
