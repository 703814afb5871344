//! `curate init` (write the embedded contracts and templates into a repository) and
//! `curate contracts show` (the roles with their expanded baselines).

use serde_json::json;

use crate::cli::{Format, GlobalArgs, InitArgs};
use crate::contract::{self, Contracts};
use crate::error::{Error, ExitCode, Result};
use crate::expand::{self, Request, Scope};
use crate::run::{stderr, stdout};
use crate::settings::{self, Workspace};

/// Runs `curate init`.
pub fn init_cmd(g: &GlobalArgs, a: &InitArgs) -> Result<ExitCode> {
    let ws = settings::workspace(g)?;
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
        crate::atomic::write(&ws.root.join(path), text.as_bytes())?;
        if !g.quiet {
            stderr(&format!("wrote {path}\n"));
        }
    }
    Ok(ExitCode::Ready)
}

/// Runs `curate contracts show`.
pub fn show(
    ws: &Workspace,
    g: &GlobalArgs,
    contracts: &Contracts,
    role: Option<&str>,
    change: Option<&str>,
) -> Result<ExitCode> {
    if let Some(r) = role {
        settings::check_name("role", r)?;
        contracts.role(r)?;
    }
    if let Some(c) = change {
        settings::check_name("change id", c)?;
    }
    let mut roles_json = Vec::new();
    let mut text = format!("contracts: {}\n", contracts.source.describe());
    for r in contracts
        .roles
        .iter()
        .filter(|r| role.is_none_or(|want| r.id == want))
    {
        text.push_str(&format!(
            "{} ({} baseline entries)\n",
            r.id,
            r.context_files.len()
        ));
        let mut items = Vec::new();
        for (index, cf) in r.context_files.iter().enumerate() {
            let matched = match change {
                Some(c) => {
                    let scope = Scope {
                        root: &ws.root,
                        changes_root: &ws.changes_root,
                        change: c,
                        ignore: true,
                    };
                    let req = Request::from_contract(index, cf);
                    let found = expand::expand(&scope, std::slice::from_ref(&req))?;
                    Some(found.picks.into_iter().map(|p| p.path).collect::<Vec<_>>())
                }
                None => None,
            };
            text.push_str(&format!(
                "  {:<6} {:<9} {}{}\n",
                cf.priority.name(),
                cf.kind,
                cf.glob,
                matched.as_ref().map_or(String::new(), |m| format!(
                    "  → {} file{}",
                    m.len(),
                    if m.len() == 1 { "" } else { "s" }
                ))
            ));
            for m in matched.iter().flatten() {
                text.push_str(&format!("      {m}\n"));
            }
            items.push(json!({
                "glob": cf.glob, "sections": cf.sections, "priority": cf.priority,
                "kind": cf.kind, "matches": matched,
            }));
        }
        roles_json.push(json!({
            "id": r.id, "readScope": r.read_scope, "writeScope": r.write_scope,
            "artifactTargets": r.artifact_targets, "contextFiles": items,
        }));
    }
    if g.format == Format::Json {
        stdout(&format!(
            "{}\n",
            serde_json::to_string_pretty(&json!({
                "contracts_source": contracts.source.describe(),
                "roles": roles_json
            }))
            .unwrap_or_default()
        ))?;
    } else {
        stdout(&text)?;
    }
    Ok(ExitCode::Ready)
}
