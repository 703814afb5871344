//! `curate init`: write the embedded contracts (and, with `--templates`, the templates)
//! into a repository; never over a file that exists unless `--force`.

use crate::cli::args::{GlobalArgs, InitArgs};
use crate::cli::exit::ExitCode;
use crate::cli::printer::stderr;
use crate::cli::resolve;
use crate::compile::contract;
use crate::error::{Error, Result};

/// Runs `curate init`.
pub fn run(g: &GlobalArgs, a: &InitArgs) -> Result<ExitCode> {
    let ws = resolve::workspace(g)?;
    let mut files: Vec<(String, &str)> = vec![
        (contract::REPO_PATHS[0].to_owned(), contract::EMBEDDED),
        (
            "contracts/workflow-delegation-contracts.schema.json".to_owned(),
            contract::SCHEMA,
        ),
    ];
    if a.templates {
        for (name, text) in crate::render::TEMPLATES {
            files.push((format!(".curate/templates/{name}"), text));
        }
    }
    let existing: Vec<&str> = files
        .iter()
        .filter(|(p, _)| ws.root.join(p).exists())
        .map(|(p, _)| p.as_str())
        .collect();
    if !existing.is_empty() && !a.force {
        return Err(Error::Failed(format!(
            "not overwriting {} (use --force to overwrite)",
            existing.join(", ")
        )));
    }
    for (path, text) in &files {
        crate::util::atomic::write_bounded(
            &ws.root.join(path),
            crate::util::atomic::Bound::Inside(&ws.root),
            text.as_bytes(),
        )?;
        if !g.quiet {
            stderr(&format!("wrote {path}\n"));
        }
    }
    Ok(ExitCode::Ready)
}
