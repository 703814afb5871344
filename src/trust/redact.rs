//! Redaction: what curate prints of a text it did not write (an error message quoting the
//! input, a path) passes through here, so no secret's value is ever shown.

use crate::trust::secrets::ContentRules;

/// A path with each of its segments redacted ([`redact`]): a token that is a folder's name
/// goes, the segments around it stay, so two paths under it are still told apart (a
/// segment holds no `/`, so no token runs past it).
#[must_use]
pub fn redact_path(path: &str) -> String {
    path.split('/').map(redact).collect::<Vec<_>>().join("/")
}

/// `text` with every secret by content in it replaced by `<secret: RULE>` (see
/// [`ContentRules::redact`]); without the rules, the whole text is withheld.
#[must_use]
pub fn redact(text: &str) -> String {
    match ContentRules::shared() {
        Ok(rules) => rules.redact(text),
        Err(_) => "<not shown: the secret rules did not build>".to_owned(),
    }
}
