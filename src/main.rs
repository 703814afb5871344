//! The `curate` binary: parse the command line, run it, print errors, exit.

#![allow(clippy::exit)] // the exit policy lives here, and only here

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
            let text = curate::error::render(&e, &style.error("error:"));
            curate::run::stderr(&text);
            std::process::exit(e.exit_code().code());
        }
    }
}
