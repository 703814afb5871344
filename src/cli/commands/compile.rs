//! `curate` / `curate compile`: compile, then write the manifest and its lock (lock first,
//! manifest last), unless the status, `--dry-run`, `--stdout` or a hand edit says otherwise.

use std::path::Path;

use crate::cli::args::{CompileArgs, Format, GlobalArgs};
use crate::cli::exit::ExitCode;
use crate::cli::printer::{Printer, stderr, stdout};
use crate::cli::resolve;
use crate::compile::admit::read_repo_file;
use crate::compile::budget::Status;
use crate::compile::manifest;
use crate::compile::{self, Compiled};
use crate::error::{Error, Result};
use crate::report;
use crate::settings::{self, Workspace};
use crate::util::atomic::{self, Bound};

/// Runs `curate` / `curate compile`.
pub fn run(g: &GlobalArgs, a: &CompileArgs) -> Result<ExitCode> {
    let (_, change) = resolve::names(a)?;
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
    let ws = resolve::workspace(g)?.for_change(&change)?;
    let mut s = resolve::compile_settings(&ws, a)?;
    // One compile at a time per manifest folder, from reading its inputs to writing.
    let _lock = if a.dry_run || a.stdout {
        None
    } else {
        let manifest = ws.root.join(ws.manifest_path(&s.change, &s.role));
        let folder = manifest.parent().unwrap_or(&ws.root);
        Some(crate::util::lock::lock_folder(
            &ws.root,
            folder,
            crate::util::lock::WAIT,
        )?)
    };
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
        if let Some(existing) = read_existing(&ws, &path)?
            && !manifest::is_intact(&existing)
        {
            if a.adopt {
                let adopted = adopt(&ws, &s, &compiled.manifest_path, &existing)?;
                outcome.push_str(&adopted);
                // The overrides file now holds the edits: compile again with it.
                s = resolve::compile_settings(&ws, a)?;
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
    Ok(ExitCode::of_status(compiled.status))
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
        stderr(&report::human(
            c,
            Printer::new(g).style,
            g.verbose,
            explain,
            outcome,
        ));
    }
    Ok(())
}

fn read_existing(ws: &Workspace, path: &Path) -> Result<Option<String>> {
    Ok(read_repo_file(&ws.root, path)?.map(|b| String::from_utf8_lossy(&b).into_owned()))
}

fn write_outputs(ws: &Workspace, c: &Compiled) -> Result<()> {
    let (Some(text), Some(lock)) = (&c.manifest, &c.lock) else {
        return Ok(());
    };
    // The lock first, the manifest last: the manifest is the commit point.
    let inside = Bound::Inside(&ws.root);
    atomic::write_bounded(
        &ws.root.join(manifest::lock_path(&c.manifest_path)),
        inside,
        lock.to_text().as_bytes(),
    )?;
    atomic::write_bounded(&ws.root.join(&c.manifest_path), inside, text.as_bytes())
}

fn adopt(
    ws: &Workspace,
    s: &settings::CompileSettings,
    manifest_path: &str,
    edited: &str,
) -> Result<String> {
    let lock = manifest::read_lock(&ws.root, manifest_path);
    let lines = crate::compile::adopt::diff(
        edited,
        lock.as_ref()
            .map(|l| (l.curation.as_slice(), l.written.as_slice())),
    );
    if lines.is_empty() {
        return Ok(String::new());
    }
    let path = &s.overrides.path;
    let mut text = read_existing(ws, path)?.unwrap_or_default();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    for l in &lines {
        text.push_str(l);
        text.push('\n');
    }
    let bound = if s.overrides.explicit {
        Bound::Named(&ws.root)
    } else {
        Bound::Inside(&ws.root)
    };
    atomic::write_bounded(path, bound, text.as_bytes())?;
    Ok(format!(
        "adopted {} hand edit{} into {}\n",
        lines.len(),
        if lines.len() == 1 { "" } else { "s" },
        s.overrides.shown
    ))
}
