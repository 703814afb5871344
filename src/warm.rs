//! Start-up work done ahead, on a second thread, while the first reads the input, finds the
//! repository and loads its settings: the contracts schema's validator, the content rules
//! (and the regexes of those nearly every compile runs) and the embedded templates a bundle
//! uses, in the order a compile needs them. Each is built once a process behind a
//! `OnceLock`, so whichever thread gets there first builds it and the other waits for that
//! value: the result is the same as without warming, only sooner (about 10 ms of a short
//! command's CPU moved off its critical path on a 2-core machine).

use std::sync::OnceLock;

use crate::model::Lang;

/// The language of the bundle, once the settings name it.
static LANG: OnceLock<Lang> = OnceLock::new();

/// What the command goes on to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Then {
    /// Compile only: the templates are not needed.
    Compile,
    /// Compile and render a bundle.
    Render,
}

/// Starts warming on a thread of its own; a thread that cannot be started costs nothing
/// but the time saved.
pub fn ahead(then: Then) {
    let _ = std::thread::Builder::new()
        .name("curate-warm".to_owned())
        .spawn(move || {
            crate::stages::contract::warm();
            if let Ok(rules) = crate::trust::admit::rules() {
                rules.compile_common();
            }
            if then == Then::Render {
                crate::render::warm(LANG.get().copied());
            }
        });
}

/// The bundle's language is known: only its `sticky` is parsed ahead.
pub fn lang(lang: Lang) {
    let _ = LANG.set(lang);
}
