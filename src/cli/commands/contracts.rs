//! `curate contracts validate` (the contracts file loads and validates) and `curate
//! contracts show` (the roles with their expanded baselines).

use serde_json::json;

use crate::cli::args::{ContractsCommand, Format, GlobalArgs};
use crate::cli::exit::ExitCode;
use crate::cli::printer::Printer;
use crate::cli::resolve;
use crate::error::Result;
use crate::settings::{Workspace, check_name};
use crate::stages::contract::Contracts;
use crate::stages::expand::{self, Request, Scope};

/// Runs `curate contracts [validate|show]`.
pub fn run(g: &GlobalArgs, action: Option<ContractsCommand>) -> Result<ExitCode> {
    let printer = Printer::new(g);
    let ws = resolve::workspace(g)?;
    let contracts = ws.load_contracts()?;
    match action {
        None | Some(ContractsCommand::Validate) => {
            printer.report(&format!(
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

            Ok(ExitCode::Ready)
        }
        Some(ContractsCommand::Show { role, change }) => {
            show(&ws, printer, &contracts, role.as_deref(), change.as_deref())
        }
    }
}

/// Runs `curate contracts show`.
pub fn show(
    ws: &Workspace,
    printer: Printer,
    contracts: &Contracts,
    role: Option<&str>,
    change: Option<&str>,
) -> Result<ExitCode> {
    if let Some(r) = role {
        check_name("role", r)?;
        contracts.role(r)?;
    }
    if let Some(c) = change {
        check_name("change id", c)?;
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
            crate::model::one_line_cow(&r.id),
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
                        own: crate::stages::expand::OwnFiles::new(
                            &ws.config.manifest,
                            &ws.changes_root,
                            c,
                        ),
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
                crate::model::one_line_cow(&cf.kind),
                crate::model::one_line_cow(&cf.glob),
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
    if printer.format == Format::Json {
        printer.out_json(&json!({
            "contracts_source": contracts.source.describe(),
            "roles": roles_json
        }))?;
    } else {
        printer.out(&text)?;
    }
    Ok(ExitCode::Ready)
}
