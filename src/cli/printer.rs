//! Where a command's words go: results to stdout, the report and errors to stderr, or JSON
//! to stdout; `-q`, `--format` and colour decided once. A closed pipe on stdout ends the
//! output quietly (it is not an error).

use std::io::{IsTerminal, Write};

use crate::cli::args::{ColorChoice, Format, GlobalArgs};
use crate::error::{Error, Result};
use crate::report::Style;

/// A command's outputs.
#[derive(Debug, Clone, Copy)]
pub struct Printer {
    pub format: Format,
    pub style: Style,
    /// `-q`: only errors (and results) are printed.
    pub quiet: bool,
    /// `-v`: more detail in the report.
    pub verbose: bool,
    /// A progress bar may be drawn: stderr is a terminal, the report is human, not `-q`.
    pub progress: bool,
}

impl Printer {
    /// The printer the global options ask for.
    #[must_use]
    pub fn new(g: &GlobalArgs) -> Printer {
        let color = match g.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stderr().is_terminal()
            }
        };
        Printer {
            format: g.format,
            style: Style { color },
            quiet: g.quiet,
            verbose: g.verbose,
            progress: g.format == Format::Human && !g.quiet && std::io::stderr().is_terminal(),
        }
    }

    /// True for `--format json`.
    #[must_use]
    pub fn json(&self) -> bool {
        self.format == Format::Json
    }

    /// Writes a result to stdout.
    pub fn out(&self, text: &str) -> Result<()> {
        stdout(text)
    }

    /// Writes a value as pretty JSON and a newline to stdout.
    pub fn out_json(&self, value: &impl serde::Serialize) -> Result<()> {
        stdout(&format!(
            "{}\n",
            serde_json::to_string_pretty(value).unwrap_or_default()
        ))
    }

    /// [`Printer::out_json`] with every string's secret redacted (`<secret: RULE>` holds no
    /// character JSON escapes, so the text stays the same JSON).
    pub fn out_json_redacted(&self, value: &impl serde::Serialize) -> Result<()> {
        let text = serde_json::to_string_pretty(value).unwrap_or_default();
        stdout(&format!("{}\n", crate::trust::redact::redact(&text)))
    }

    /// Writes the human report (or a diagnostic that must be seen) to stderr.
    pub fn err(&self, text: &str) {
        stderr(text);
    }

    /// Writes what a command did to stderr, unless `-q`.
    pub fn report(&self, text: &str) {
        if !self.quiet {
            stderr(text);
        }
    }
}

/// Writes to stdout; a closed pipe ends the output quietly.
pub fn stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Write {
            path: "<stdout>".into(),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// Writes to stderr, ignoring failures (there is nowhere left to report them): every
/// report, diagnostic and error passes here, and a token in it (a value the user typed, a
/// path) shows as `<secret: RULE>`.
pub fn stderr(text: &str) {
    let shown = crate::trust::redact::redact(text);
    let _ = std::io::stderr().lock().write_all(shown.as_bytes());
}
