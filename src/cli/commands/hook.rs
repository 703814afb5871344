//! `curate hook <host>`: the hook front-end's answer, printed as one line. Always exit 0
//! (a hook never breaks a dispatch): a host this binary does not know, or a command line it
//! cannot read, gets nothing on stdout, one warning line on stderr and in the hook log.

use crate::cli::args::GlobalArgs;
use crate::cli::exit::ExitCode;
use crate::error::Result;
use crate::hook::{self, Host};
use crate::settings::WorkspaceOptions;

/// Runs `curate hook`.
pub fn run(g: &GlobalArgs, host: &str) -> Result<ExitCode> {
    // A panic must not print its message among the host's protocol or its log.
    std::panic::set_hook(Box::new(|_| {}));
    let options = crate::cli::resolve::workspace_options(g);
    let Some(known) = Host::parse(host) else {
        refused(
            host,
            &format!(
                "this curate ({}) answers no host {:?} (it knows {})",
                env!("CARGO_PKG_VERSION"),
                host.chars().take(64).collect::<String>(),
                hook::HOST_NAMES.join(", ")
            ),
            &options,
        );
        return Ok(ExitCode::Ready);
    };
    if let Some(line) = hook::run(known, options) {
        // A closed stdout is the host's business: still exit 0.
        let _ = crate::cli::printer::stdout(&format!("{line}\n"));
    }
    Ok(ExitCode::Ready)
}

/// A `curate hook` call this binary cannot answer: one warning line on stderr, one line in
/// the hook log of the repository the input names, nothing on stdout; the caller exits 0.
pub fn refused(host: &str, why: &str, options: &WorkspaceOptions) {
    // Names from the command line, shown short and without control characters.
    let plain = |s: &str| -> String {
        s.chars()
            .take(200)
            .map(|c| if c.is_control() { '?' } else { c })
            .collect()
    };
    let (host, why) = (
        &plain(host),
        &plain(why.lines().next().unwrap_or_default().trim()),
    );
    crate::cli::printer::stderr(&format!(
        "curate: warning: hook {host}: {why}; nothing injected, the dispatch goes on without curated context (exit 0)\n"
    ));
    hook::refuse(host, why, options);
}

/// When the command line is a `curate hook` call that clap refused (an unknown flag, a
/// missing host): the host named, if any, and the `-C` folder. `None`: not a hook call.
#[must_use]
pub fn hook_call(args: &[std::ffi::OsString]) -> Option<(String, Option<std::path::PathBuf>)> {
    use clap::CommandFactory as _;
    let matches = crate::cli::args::Cli::command()
        .ignore_errors(true)
        .try_get_matches_from(args)
        .ok()?;
    let (name, sub) = matches.subcommand()?;
    if name != "hook" {
        return None;
    }
    let host = sub
        .try_get_one::<String>("host")
        .ok()
        .flatten()
        .cloned()
        .unwrap_or_else(|| "?".to_owned());
    let dir = matches
        .try_get_one::<std::path::PathBuf>("dir")
        .ok()
        .flatten()
        .or_else(|| sub.try_get_one::<std::path::PathBuf>("dir").ok().flatten())
        .cloned();
    Some((host, dir))
}
