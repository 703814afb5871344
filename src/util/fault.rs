//! What can go wrong below the crate's error type: the leaves (here) and the trust boundary
//! report a [`Fault`], and the error type takes each one over as its variant of the same
//! name (`From`), so a `?` above carries it up unchanged. A fault is never printed as it
//! is: the error above says it, redacted.

use std::path::PathBuf;

/// A failure of a leaf or of the trust boundary, by the error variant that reports it.
#[derive(Debug)]
pub enum Fault {
    /// A file or folder that could not be read.
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file or folder that could not be written.
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A path that leaves (or would write outside) the repository.
    Escape {
        origin: String,
        path: String,
        problem: &'static str,
    },
    /// A file that is there but may not be used.
    Invalid { path: PathBuf, message: String },
    /// A bounded read refused the file (too large, not a regular file, gone).
    Input(crate::util::read::ReadError),
    /// The secret rules did not build.
    SecretRules(Box<dyn std::error::Error + Send + Sync>),
    /// Anything else, said whole.
    Failed(String),
}

/// A result whose error is a [`Fault`].
pub type Result<T> = std::result::Result<T, Fault>;

impl From<crate::util::read::ReadError> for Fault {
    fn from(e: crate::util::read::ReadError) -> Fault {
        Fault::Input(e)
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Shown only in a leaf's own tests and debug output: a user sees it through the
        // error type above, whose messages are the ones kept.
        write!(f, "{self:?}")
    }
}

impl std::error::Error for Fault {}
