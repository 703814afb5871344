//! The `curate` binary: parse the command line, run it, print errors, exit.

#![allow(clippy::exit)] // the exit policy lives here, and only here

use clap::Parser;

fn main() {
    curate::util::atomic::install_cleanup();
    let cli = match curate::cli::args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version on stdout (exit 0) and errors on stderr (exit 2),
            // where a value it quotes shows a token as `<secret: RULE>`.
            if !e.use_stderr() {
                let _ = e.print();
                std::process::exit(0);
            }
            // A hook exits 0 whatever it was given: a host reads exit 2 as "block the call".
            let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
            if let Some((host, dir)) = curate::cli::commands::hook::hook_call(&args) {
                let options = curate::settings::WorkspaceOptions {
                    dir,
                    ..curate::settings::WorkspaceOptions::default()
                };
                let rendered = e.render().to_string();
                let first = rendered.lines().next().unwrap_or_default();
                let why = if e.kind() == clap::error::ErrorKind::MissingRequiredArgument {
                    "no host named (`curate hook <host>`)".to_owned()
                } else {
                    format!(
                        "its command line is not this curate's: {}",
                        first.strip_prefix("error: ").unwrap_or(first)
                    )
                };
                curate::cli::commands::hook::refused(&host, &why, &options);
                std::process::exit(0);
            }
            let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::IsTerminal::is_terminal(&std::io::stderr());
            let rendered = e.render();
            let text = if color {
                rendered.ansi().to_string()
            } else {
                rendered.to_string()
            };
            curate::cli::printer::stderr(&text);
            std::process::exit(2);
        }
    };
    let printer = curate::cli::printer::Printer::new(&cli.global);
    let style = printer.style;
    let json = printer.json();
    match curate::cli::run(cli) {
        Ok(code) => std::process::exit(code.code()),
        Err(e) => {
            let text = curate::error::render(&e, &style.error("error:"));
            curate::cli::printer::stderr(&text);
            if json {
                // A caller that asked for JSON reads stdout: it gets an object there too.
                let first = text.lines().next().unwrap_or_default();
                let message = first
                    .strip_prefix(&style.error("error:"))
                    .unwrap_or(first)
                    .trim();
                let mut answer = serde_json::json!({"status": "ERROR", "error": message});
                if let Some(hint) = text.lines().find_map(|l| l.strip_prefix("hint: ")) {
                    answer["hint"] = serde_json::Value::from(hint.trim());
                }
                let _ = printer.out_json(&answer);
            }
            std::process::exit(curate::cli::exit::ExitCode::of_error(&e).code());
        }
    }
}
