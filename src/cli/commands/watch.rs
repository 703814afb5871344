//! `curate watch`: the repository's related-files index kept in memory, its changes told
//! by the kernel, `--related` questions answered over a socket ([`crate::watch`]).

use crate::cli::args::GlobalArgs;
use crate::cli::exit::ExitCode;
use crate::cli::printer;
use crate::cli::resolve;
use crate::error::{Error, Result};

/// Runs `curate watch` until a signal ends it.
pub fn run(g: &GlobalArgs) -> Result<ExitCode> {
    let ws = resolve::workspace_without_config(g)?;
    let dir = crate::compile::cache::DigestCache::default_dir()
        .filter(|_| !ws.no_cache)
        .ok_or_else(|| {
            Error::Usage(
                "curate watch keeps the index in the cache folder: not with --no-cache (or without a cache folder: set CURATE_CACHE_DIR)"
                    .to_owned(),
            )
        })?;
    let root = ws.root.clone();
    let ready = |socket: &std::path::Path| {
        printer::stderr(&format!(
            "curate watch: watching {}, answering at {}; the first --related run stamps every file, the next ones are answered from memory. Ctrl-C stops it.\n",
            root.display(),
            socket.display()
        ));
    };
    let warn = |w: &str| printer::stderr(w);
    crate::watch::run(&ws.root, &dir, ready, &warn)?;
    Ok(ExitCode::Ready)
}
