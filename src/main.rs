//! The `curate` binary: parse the command line, run it, print errors, exit.

#![allow(clippy::exit)] // the exit policy lives here, and only here

use std::error::Error as _;

use clap::Parser;

fn main() {
    curate::atomic::install_cleanup();
    let cli = match curate::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version on stdout (exit 0) and errors on stderr (exit 2).
            let _ = e.print();
            std::process::exit(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let style = curate::run::style(&cli.global);
    match curate::run::run(cli) {
        Ok(code) => std::process::exit(code.code()),
        Err(e) => {
            let mut text = format!("{} {e}\n", style.error("error:"));
            let mut source = e.source();
            while let Some(s) = source {
                text.push_str(&format!("caused by: {s}\n"));
                source = s.source();
            }
            if let Some(hint) = e.hint() {
                text.push_str(&format!("hint: {hint}\n"));
            }
            curate::run::stderr(&text);
            std::process::exit(e.exit_code().code());
        }
    }
}
