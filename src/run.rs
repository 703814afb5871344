//! Command dispatch: each subcommand as one short function over the library's stages.
//!
//! Owns the process's outputs: the report goes to stderr (or JSON to stdout), results to
//! stdout; a broken pipe on stdout is not an error.

use std::io::{IsTerminal, Write};
use std::path::Path;

use crate::atomic;
use crate::budget::Status;
use crate::cli::{Cli, ColorChoice, Command, CompileArgs, ContractsCommand, Format, GlobalArgs};
use crate::compile::{self, Compiled};
use crate::error::{Error, ExitCode, Result};
use crate::manifest::{self, Lock};
use crate::report::{self, Style};
use crate::settings::{self, Workspace};

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

/// Writes to stderr, ignoring failures (there is nowhere left to report them).
pub fn stderr(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Whether stderr gets colour.
#[must_use]
pub fn style(g: &GlobalArgs) -> Style {
    let color = match g.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stderr().is_terminal()
        }
    };
    Style { color }
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    if let Some(n) = cli.global.threads {
        // A second initialisation (in tests) is harmless: the first one stands.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global();
    }
    let g = cli.global;
    if cli.command.is_some() && cli.compile.any_given() {
        return Err(Error::Usage(
            "compile options go after the subcommand (for example `curate render --role R --change ID`)"
                .to_owned(),
        ));
    }
    match cli.command {
        None => compile_cmd(&g, &cli.compile),
        Some(Command::Compile(a)) => compile_cmd(&g, &a),
        Some(Command::Render(a)) => crate::render::render_cmd(&g, &a, false),
        Some(Command::Preview(a)) => crate::render::render_cmd(&g, &a, true),
        Some(Command::Check(a)) => crate::check::check_cmd(&g, &a),
        Some(Command::Verify(a)) => crate::verify_cmd::verify_cmd(&g, &a),
        Some(Command::Receipt(crate::cli::ReceiptCommand::Check { files })) => {
            crate::verify_cmd::receipt_cmd(&g, &files)
        }
        Some(Command::Contracts { action }) => contracts_cmd(&g, action),
        Some(Command::Init(a)) => crate::init::init_cmd(&g, &a),
        Some(Command::Completions { shell }) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut cmd, "curate", &mut buf);
            stdout(&String::from_utf8_lossy(&buf))?;
            Ok(ExitCode::Ready)
        }
        Some(Command::Man) => {
            let cmd = <Cli as clap::CommandFactory>::command();
            let mut buf = Vec::new();
            clap_mangen::Man::new(cmd)
                .render(&mut buf)
                .map_err(|source| Error::Write {
                    path: "<stdout>".into(),
                    source,
                })?;
            stdout(&String::from_utf8_lossy(&buf))?;
            Ok(ExitCode::Ready)
        }
    }
}

/// The exit code of a compile status.
#[must_use]
pub fn status_code(status: Status) -> ExitCode {
    match status {
        Status::Ready => ExitCode::Ready,
        Status::Blocked => ExitCode::Blocked,
        Status::OverBudget => ExitCode::OverBudget,
    }
}

fn compile_cmd(g: &GlobalArgs, a: &CompileArgs) -> Result<ExitCode> {
    settings::names(a)?;
    if a.stdout && g.format == Format::Json {
        return Err(Error::Usage(
            "--stdout prints the manifest and cannot be combined with --format json".to_owned(),
        ));
    }
    if g.format == Format::Github {
        return Err(Error::Usage(
            "--format github is for `curate check`".to_owned(),
        ));
    }
    let ws = settings::workspace(g)?;
    let mut s = settings::compile_settings(&ws, a)?;
    let mut compiled = compile::compile(&ws, &s)?;
    let writes = compiled.status == Status::Ready && !a.dry_run && !a.stdout;
    let mut outcome = String::new();
    if compiled.status != Status::Ready {
        let path = ws.root.join(&compiled.manifest_path);
        outcome = if path.exists() {
            format!(
                "nothing written; the existing {} and its lock are left as they are",
                compiled.manifest_path
            )
        } else {
            "nothing written".to_owned()
        };
    } else if a.stdout {
        stdout(compiled.manifest.as_deref().unwrap_or_default())?;
    } else if a.dry_run {
        outcome = format!("dry run: {} not written", compiled.manifest_path);
    }
    if writes {
        let path = ws.root.join(&compiled.manifest_path);
        if let Some(existing) = read_existing(&path)?
            && !manifest::is_intact(&existing)
        {
            if a.adopt {
                let adopted = adopt(&ws, &s, &compiled.manifest_path, &existing)?;
                outcome.push_str(&adopted);
                // The overrides file now holds the edits: compile again with it.
                s = settings::compile_settings(&ws, a)?;
                compiled = compile::compile(&ws, &s)?;
            } else if !a.force {
                return Err(Error::HandEdited {
                    path: compiled.manifest_path.clone().into(),
                });
            }
        }
        if compiled.status == Status::Ready {
            write_outputs(&ws, &compiled)?;
            outcome.push_str(&format!("wrote {}", compiled.manifest_path));
        }
    }
    emit_report(g, &compiled, a.explain, writes, &outcome)?;
    Ok(status_code(compiled.status))
}

fn emit_report(
    g: &GlobalArgs,
    c: &Compiled,
    explain: bool,
    written: bool,
    outcome: &str,
) -> Result<()> {
    if g.format == Format::Json {
        let v = report::json(c, written, explain);
        stdout(&format!(
            "{}\n",
            serde_json::to_string_pretty(&v).unwrap_or_default()
        ))?;
    } else if !g.quiet || c.status != Status::Ready {
        stderr(&report::human(c, style(g), g.verbose, explain, outcome));
    }
    Ok(())
}

fn read_existing(path: &Path) -> Result<Option<String>> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(String::from_utf8_lossy(&b).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::Read {
            path: path.to_owned(),
            source,
        }),
    }
}

/// The lock's path beside a manifest path.
#[must_use]
pub fn lock_path(manifest_path: &str) -> String {
    let stem = manifest_path
        .strip_suffix(".jsonl")
        .unwrap_or(manifest_path);
    format!("{stem}.lock.json")
}

/// Reads a lock, when there is a readable one.
#[must_use]
pub fn read_lock(root: &Path, manifest_path: &str) -> Option<Lock> {
    let text = std::fs::read(root.join(lock_path(manifest_path))).ok()?;
    serde_json::from_slice(&text).ok()
}

fn write_outputs(ws: &Workspace, c: &Compiled) -> Result<()> {
    let (Some(text), Some(lock)) = (&c.manifest, &c.lock) else {
        return Ok(());
    };
    // The lock first, the manifest last: the manifest is the commit point.
    atomic::write(
        &ws.root.join(lock_path(&c.manifest_path)),
        lock.to_text().as_bytes(),
    )?;
    atomic::write(&ws.root.join(&c.manifest_path), text.as_bytes())
}

fn adopt(
    ws: &Workspace,
    s: &settings::CompileSettings,
    manifest_path: &str,
    edited: &str,
) -> Result<String> {
    let lock = read_lock(&ws.root, manifest_path);
    let lines = crate::adopt::diff(
        edited,
        lock.as_ref()
            .map(|l| (l.curation.as_slice(), l.written.as_slice())),
    );
    if lines.is_empty() {
        return Ok(String::new());
    }
    let path = &s.overrides.path;
    let mut text = read_existing(path)?.unwrap_or_default();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    for l in &lines {
        text.push_str(l);
        text.push('\n');
    }
    atomic::write(path, text.as_bytes())?;
    Ok(format!(
        "adopted {} hand edit{} into {}\n",
        lines.len(),
        if lines.len() == 1 { "" } else { "s" },
        s.overrides.shown
    ))
}

fn contracts_cmd(g: &GlobalArgs, action: Option<ContractsCommand>) -> Result<ExitCode> {
    let ws = settings::workspace(g)?;
    let contracts = crate::contract::load(ws.contracts.clone(), &ws.root)?;
    match action {
        None | Some(ContractsCommand::Validate) => {
            if !g.quiet {
                stderr(&format!(
                    "{}: valid ({} roles: {})\n",
                    contracts.source.describe(),
                    contracts.roles.len(),
                    contracts
                        .roles
                        .iter()
                        .map(|r| r.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            Ok(ExitCode::Ready)
        }
        Some(ContractsCommand::Show { role, change }) => {
            crate::init::show(&ws, g, &contracts, role.as_deref(), change.as_deref())
        }
    }
}
