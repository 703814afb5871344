//! `curate watch`: the repository's related-files index kept in memory, its changes told
//! by the kernel, `--related` questions answered over a socket ([`crate::ops::watch`]).

use crate::cli::args::GlobalArgs;
use crate::cli::exit::ExitCode;
use crate::cli::printer;
use crate::cli::resolve;
use crate::error::{Error, Result};

/// Runs `curate watch` until a signal ends it.
pub fn run(g: &GlobalArgs) -> Result<ExitCode> {
    let ws = resolve::workspace_without_config(g)?;
    let dir = crate::util::cache::DigestCache::default_dir()
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
    let quiet = g.quiet;
    let tell = |t: crate::ops::watch::Told<'_>| match t {
        crate::ops::watch::Told::Warning(w) => printer::stderr(w),
        crate::ops::watch::Told::Answered(line) if !quiet => printer::stderr(line),
        crate::ops::watch::Told::Answered(_) => {}
    };
    crate::ops::watch::run(&ws.root, &dir, ready, &tell)?;
    Ok(ExitCode::Ready)
}
