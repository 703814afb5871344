//! `curate hook claude-code|opencode`: the hook front-end's answer, printed as one line.
//! Always exit 0 (a hook never breaks a dispatch).

use crate::cli::args::{GlobalArgs, HookHost};
use crate::cli::exit::ExitCode;
use crate::error::Result;
use crate::hook::{self, Host};

/// Runs `curate hook`.
pub fn run(g: &GlobalArgs, host: HookHost) -> Result<ExitCode> {
    // A panic must not print its message among the host's protocol or its log.
    std::panic::set_hook(Box::new(|_| {}));
    let host = match host {
        HookHost::ClaudeCode => Host::ClaudeCode,
        HookHost::Opencode => Host::OpenCode,
    };
    if let Some(line) = hook::run(host, crate::cli::resolve::workspace_options(g)) {
        // A closed stdout is the host's business: still exit 0.
        let _ = crate::cli::printer::stdout(&format!("{line}\n"));
    }
    Ok(ExitCode::Ready)
}
