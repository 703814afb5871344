//! `curate doctor`: prints what [`crate::ops::doctor::diagnose`] found, as text or JSON;
//! exit 1 when a dispatch would go uncurated.

use serde_json::{Value, json};

use crate::cli::args::GlobalArgs;
use crate::cli::exit::ExitCode;
use crate::cli::printer::Printer;
use crate::cli::resolve;
use crate::error::Result;
use crate::stages::related::ask::Watching;

/// Runs `curate doctor`.
pub fn run(g: &GlobalArgs) -> Result<ExitCode> {
    let printer = Printer::new(g);
    let ws = resolve::workspace_without_config(g)?;
    let d = crate::ops::doctor::diagnose(&ws);
    // A path is shown with a token among its folders' names redacted, the rest kept.
    let shown = |p: &std::path::Path| crate::trust::redact::redact_path(&p.display().to_string());
    if printer.json() {
        let hosts: Vec<Value> = d
            .wired
            .iter()
            .map(|w| {
                json!({
                    "host": w.host,
                    "file": w.file,
                    "wired": !w.entries.is_empty(),
                    "entries": w.entries,
                    "program": w.program,
                    "found": w.found.as_deref().map(shown),
                    "problems": w.problems,
                })
            })
            .collect();
        printer.out_json_redacted(&json!({
            "ok": d.problems.is_empty(),
            "root": shown(&d.root),
            "workflow": d.workflow,
            "binary": {"path": d.binary.0, "warning": d.binary.1},
            "hosts": hosts,
            "other_injectors": d.injectors,
            "last_hook_runs": d.runs,
            "watch": d.watching.as_ref().map(|w| {
                match w {
                    Watching::No => json!({"answering": false, "socket": null}),
                    Watching::Answering(p) => json!({"answering": true, "socket": shown(p)}),
                    Watching::Stale(p) => json!({"answering": false, "socket": shown(p)}),
                    Watching::Stopped(p, pid) => json!({"answering": false, "stopped": pid, "socket": shown(p)}),
                }
            }),
            "problems": d.problems,
        }))?;
    } else {
        let mut text = format!(
            "curate doctor · {} · workflow {}\n",
            shown(&d.root),
            d.workflow
        );
        text.push_str(&format!("this binary: {}\n", d.binary.0));
        for w in &d.wired {
            if w.entries.is_empty() {
                text.push_str(&format!("{:<12} not wired ({})\n", w.host, w.file));
                continue;
            }
            text.push_str(&format!(
                "{:<12} {}: {}{}\n",
                w.host,
                w.file,
                w.entries.join(", "),
                match (&w.program, &w.found) {
                    (Some(p), Some(f)) if p == &f.display().to_string() =>
                        format!(" → {} (found)", crate::trust::redact::redact_path(p)),
                    (Some(p), Some(f)) => format!(
                        " → {} (found: {})",
                        crate::trust::redact::redact_path(p),
                        shown(f)
                    ),
                    (Some(p), None) => format!(" → {p} (NOT FOUND)"),
                    (None, _) => String::new(),
                }
            ));
        }
        if d.injectors.is_empty() {
            text.push_str("other injectors: none\n");
        } else {
            text.push_str(&format!("other injectors: {}\n", d.injectors.join(", ")));
        }
        if d.runs.is_empty() {
            text.push_str("last hook runs: none logged (.curate/state/hooks.jsonl)\n");
        } else {
            text.push_str("last hook runs:\n");
            for r in &d.runs {
                text.push_str(&format!(
                    "  {} {} {} {} {} {} {} ms{}\n",
                    r.time,
                    r.host,
                    r.event,
                    r.role.as_deref().unwrap_or("-"),
                    r.change.as_deref().unwrap_or("-"),
                    r.status,
                    r.ms,
                    r.reason
                        .as_deref()
                        .map(|x| format!(" ({x})"))
                        .unwrap_or_default()
                ));
            }
        }
        {
            text.push_str(&match &d.watching {
                Some(Watching::Answering(p)) => format!(
                    "curate watch: answering at {} (--related runs stamp only what changed)\n",
                    shown(p)
                ),
                Some(Watching::Stopped(p, pid)) => format!(
                    "curate watch: stopped (pid {pid}, at {}): compiles rank alone; `kill -CONT {pid}` or end it\n",
                    shown(p)
                ),
                Some(Watching::Stale(p)) => format!(
                    "curate watch: not running; {} is a socket left by one that ended (the next curate watch replaces it)\n",
                    shown(p)
                ),
                Some(Watching::No) => {
                    "curate watch: not running (--related runs stamp every file)\n".to_owned()
                }
                None => "curate watch: no cache folder\n".to_owned(),
            });
        }
        for p in &d.problems {
            text.push_str(&format!("problem: {p}\n"));
        }
        text.push_str(if d.problems.is_empty() {
            "ok: dispatches through the wired hosts are curated\n"
        } else {
            "not ok: a dispatch would go uncurated\n"
        });
        // Paths (the repository's, a binary's) may hold a token: shown redacted, as on stderr.
        printer.out(&crate::trust::redact::redact(&text))?;
    }
    Ok(ExitCode::of_check(d.problems.is_empty()))
}
