//! The crate's error type: what went wrong, and what a person needs to act on it.
//!
//! Every variant carries what a person needs to act: the file, the line and column, the
//! role, the glob. `main` prints the error as `error: …`, one `caused by: …` line per
//! source, and the optional `hint: …`. Nothing here touches the disk.

use std::path::PathBuf;

use crate::model::Pos;

/// Everything that can stop a command.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid {what} {value:?}: it must match ^[A-Za-z0-9][A-Za-z0-9._-]{{0,127}}$")]
    InvalidName { what: &'static str, value: String },

    #[error("{0}")]
    Usage(String),

    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{}:{pos}: {message}", path.display())]
    Syntax {
        path: PathBuf,
        pos: Pos,
        message: String,
    },

    #[error("{}: {count} schema error{s}", path.display(), s = if *count == 1 { "" } else { "s" })]
    Schema {
        path: PathBuf,
        count: usize,
        #[source]
        details: SchemaDetails,
    },

    #[error("unknown role {role:?} in {source_name}")]
    UnknownRole {
        role: String,
        source_name: String,
        known: Vec<String>,
    },

    #[error("{}:{line}: {message}", path.display())]
    Overrides {
        path: PathBuf,
        line: usize,
        message: String,
    },

    #[error("{}: {} {problem}", shortened(origin, false), shortened(path, true))]
    Escape {
        origin: String,
        path: String,
        problem: &'static str,
    },

    #[error("invalid glob {glob:?} ({origin})")]
    Glob {
        glob: String,
        origin: String,
        #[source]
        source: globset::Error,
    },

    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },

    #[error("{} was edited by hand (its digest does not match its content)", path.display())]
    HandEdited { path: PathBuf },

    #[error("{} was not written by curate, or was edited since: it is left as it is, and nothing is written", path.display())]
    NotOurs { path: PathBuf },

    #[error("{}:{pos}: cannot adopt this line: {message}", path.display())]
    Unadoptable {
        path: PathBuf,
        pos: Pos,
        message: String,
    },

    #[error("the secret rules did not compile")]
    SecretRules(#[source] Box<dyn std::error::Error + Send + Sync>),

    #[error("template {name:?} failed to render{}", line.map_or(String::new(), |l| format!(" (line {l})")))]
    Template {
        name: String,
        /// The line of the template, when it can be told.
        line: Option<usize>,
        #[source]
        source: tera::Error,
    },

    #[error(transparent)]
    Input(#[from] crate::util::read::ReadError),

    #[error("{0}")]
    Failed(String),
}

impl From<crate::util::fault::Fault> for Error {
    fn from(fault: crate::util::fault::Fault) -> Error {
        use crate::util::fault::Fault;
        match fault {
            Fault::Read { path, source } => Error::Read { path, source },
            Fault::Write { path, source } => Error::Write { path, source },
            Fault::Escape {
                origin,
                path,
                problem,
            } => Error::Escape {
                origin,
                path,
                problem,
            },
            Fault::Invalid { path, message } => Error::Invalid { path, message },
            Fault::Input(e) => Error::Input(e),
            Fault::SecretRules(e) => Error::SecretRules(e),
            Fault::Failed(message) => Error::Failed(message),
        }
    }
}

/// The schema violations of one file, shown as the `caused by:` lines of [`Error::Schema`].
#[derive(Debug)]
pub struct SchemaDetails {
    pub path: PathBuf,
    /// Each problem's position and text (`<pointer>: <message>`), sorted by position.
    pub problems: Vec<(Pos, String)>,
}

impl SchemaDetails {
    /// One `file:line:column: pointer: message` line per problem.
    #[must_use]
    pub fn lines(&self) -> Vec<String> {
        self.problems
            .iter()
            .map(|(pos, text)| format!("{}:{pos}: {text}", self.path.display()))
            .collect()
    }
}

impl std::fmt::Display for SchemaDetails {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.lines().join("; "))
    }
}

impl std::error::Error for SchemaDetails {}

impl Error {
    /// True for a usage error (the command line itself is wrong; exit 2).
    #[must_use]
    pub fn is_usage(&self) -> bool {
        matches!(self, Error::InvalidName { .. } | Error::Usage(_))
    }

    /// A line of advice for the person reading the error, when there is one.
    #[must_use]
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::UnknownRole { role, known, .. } => {
                let roles = match known.len() {
                    0 => "the contracts file defines no role".to_owned(),
                    n if n <= MAX_ROLES_SHOWN => format!("the roles are: {}", known.join(", ")),
                    n => format!(
                        "the roles are: {} and {} more",
                        known[..MAX_ROLES_SHOWN].join(", "),
                        n - MAX_ROLES_SHOWN
                    ),
                };
                Some(match crate::model::similar::similar(role, known).first() {
                    Some(meant) => format!("did you mean {meant:?}? {roles}"),
                    None => roles,
                })
            }
            Error::HandEdited { .. } => Some(
                "run again with --adopt to keep the edits (they become overrides-file lines), or --force to overwrite them"
                    .to_owned(),
            ),
            Error::NotOurs { .. } => Some(
                "move it aside to keep it, or run again with --force to replace it (its text is lost)"
                    .to_owned(),
            ),
            Error::Unadoptable { .. } => Some(
                "nothing was adopted or written: mend the line and run again with --adopt, or --force to overwrite the manifest and lose the edits"
                    .to_owned(),
            ),
            Error::Escape { .. } => {
                Some("paths are relative to the repository root and must stay inside it".to_owned())
            }
            _ => None,
        }
    }
}

/// A text shown whole up to this many bytes; past it, its head and its length.
const WHOLE: usize = 256;
/// The bytes of a long text shown.
const HEAD: usize = 200;

/// The error as curate prints it: `error: …`, one `caused by: …` line per source (one per
/// schema problem, one per line of a source of several), then the optional `hint: …`. Control characters in a message (a newline
/// inside a user's key or glob) are escaped, so no input can forge a line of its own.
/// `label` is the styled `error:` prefix.
#[must_use]
pub fn render(e: &Error, label: &str) -> String {
    use std::error::Error as _;
    let mut text = format!("{}\n", crate::model::one_line(&e.to_string()));
    let mut source = e.source();
    while let Some(s) = source {
        if let Some(details) = s.downcast_ref::<SchemaDetails>() {
            for line in details.lines() {
                text.push_str(&format!("caused by: {}\n", crate::model::one_line(&line)));
            }
        } else {
            // A cause of several lines (tera's diagram of a template's syntax error) keeps
            // them, each its own `caused by:` line.
            for line in s.to_string().lines().filter(|l| !l.trim().is_empty()) {
                text.push_str(&format!(
                    "caused by: {}\n",
                    crate::model::one_line(line.trim_end())
                ));
            }
        }
        source = s.source();
    }
    if let Some(hint) = e.hint() {
        text.push_str(&format!("hint: {}\n", crate::model::one_line(&hint)));
    }
    // A message may echo what a caller gave (a path, a glob): a token in it is never shown.
    format!("{label} {}", crate::trust::redact::redact(&text))
}

/// `text` whole up to [`WHOLE`] bytes; past it, redacted first (half a token is still a
/// secret), then its first [`HEAD`] bytes (at a character's boundary) and its length, so an
/// argument of megabytes is not echoed back whole (a path someone gave, `quote`d, and the
/// origin naming it, which may quote it too).
fn shortened(text: &str, quote: bool) -> String {
    let show = |t: &str| {
        if quote {
            format!("{t:?}")
        } else {
            t.to_owned()
        }
    };
    if text.len() <= WHOLE {
        return show(text);
    }
    let redacted = crate::trust::redact::redact(text);
    let at = (0..=HEAD.min(redacted.len()))
        .rev()
        .find(|&i| redacted.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}… ({} bytes)", show(&redacted[..at]), text.len())
}

/// The most role names a hint lists (a contracts file may define thousands).
const MAX_ROLES_SHOWN: usize = 20;

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_path_is_shown_by_its_head_and_length_and_a_token_cut_in_two_not_at_all() {
        let escape = |path: String| Error::Escape {
            origin: "paths".to_owned(),
            path,
            problem: "climbs out of the repository with `..`",
        };
        assert_eq!(
            escape("../x".to_owned()).to_string(),
            "paths: \"../x\" climbs out of the repository with `..`"
        );
        let long = format!("../{}", "x".repeat(100_000));
        let said = escape(long).to_string();
        assert!(said.len() < 300, "{said}");
        assert!(
            said.ends_with("… (100003 bytes) climbs out of the repository with `..`"),
            "{said}"
        );
        // A token across the cut: redacted before the cut, so no half of it is shown.
        let token = "ghp_R7mK2pQ9xV4nL8wT3yH6jB1cF5dG0sZeAa9u";
        let at_the_cut = format!("../{}{token}/{}", "a/".repeat(95), "x".repeat(300));
        let said = escape(at_the_cut).to_string();
        assert!(!said.contains("ghp_R7"), "{said}");
        assert!(!said.contains("R7mK2"), "{said}");
    }
}
