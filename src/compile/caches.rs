//! The on-disk caches a compile uses, set up from the workspace: token counts, the content
//! scan's clean verdicts and the files known by their stamps (none with `--no-cache`).

use super::{DigestCache, Known, Workspace};

/// The on-disk token cache of this run (disabled by `--no-cache`).
#[must_use]
pub fn token_cache(ws: &Workspace) -> DigestCache {
    DigestCache::open(cache_dir(ws), ws.encoding)
}

/// The content scan's clean verdicts kept on disk, for a compile of `files` files
/// (disabled by `--no-cache`, and below [`VERDICTS_FROM`] files: a few small files are
/// scanned sooner than a large verdicts file is loaded, which a hook would pay at every
/// dispatch once a bulk run has filled it).
#[must_use]
pub fn verdict_cache(ws: &Workspace, files: usize) -> DigestCache {
    DigestCache::verdicts(
        cache_dir(ws).filter(|_| files >= VERDICTS_FROM),
        crate::trust::secrets::SCANNER,
    )
}

/// What is known of the repository's files by their stamps ([`crate::stages::known`]), for a compile of
/// `files` files (disabled by `--no-cache`, and below [`VERDICTS_FROM`] files, as the
/// verdicts it relies on: a stamp is still taken, to check a file read again).
#[must_use]
pub fn known_files(ws: &Workspace, files: usize) -> Known {
    Known::open(cache_dir(ws).filter(|_| files >= VERDICTS_FROM), &ws.root)
}

/// The fewest files a compile reads for it to use the kept verdicts.
pub const VERDICTS_FROM: usize = 64;

/// The user cache folder, unless `--no-cache`.
pub(super) fn cache_dir(ws: &Workspace) -> Option<std::path::PathBuf> {
    if ws.no_cache {
        None
    } else {
        DigestCache::default_dir()
    }
}
