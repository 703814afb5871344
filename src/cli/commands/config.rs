//! `curate config show`: every resolved setting, its value and where it came from.

use serde_json::json;

use crate::cli::args::GlobalArgs;
use crate::cli::exit::ExitCode;
use crate::cli::printer::Printer;
use crate::cli::resolve;
use crate::error::Result;

/// Runs `curate config [show]`.
pub fn show(g: &GlobalArgs) -> Result<ExitCode> {
    let ws = resolve::workspace(g)?;
    // An alias to a role the contracts do not have is a mistake of the file shown.
    for alias in ws.config.role_places.keys() {
        crate::settings::check_alias(&ws, alias)?;
    }
    let p = Printer::new(g);
    let mut rows = ws.config.rows();
    // What the repository shows, and the budget its workflow's consumer sets.
    let detected: Vec<String> = ws
        .present
        .iter()
        .map(|(w, e)| format!("{} ({e})", w.name()))
        .collect();
    rows.insert(
        1,
        (
            "detected".to_owned(),
            if detected.is_empty() {
                "(no workflow's folders: the plain layout)".to_owned()
            } else {
                detected.join(", ")
            },
            crate::config::Origin::Detected,
        ),
    );
    let caps = ws.caps();
    if caps.max_bytes > 0 || caps.file_bytes > 0 {
        if let Some(row) = rows
            .iter_mut()
            .find(|(k, _, o)| k == "budget.max_lines" && *o == crate::config::Origin::Default)
        {
            row.1 = caps.max_lines.to_string();
            row.2 = crate::config::Origin::Profile;
        }
        for (key, value) in [
            ("budget.max_bytes", caps.max_bytes),
            ("budget.file_bytes", caps.file_bytes),
        ] {
            rows.push((
                key.to_owned(),
                value.to_string(),
                crate::config::Origin::Profile,
            ));
        }
    }
    let file = ws
        .root
        .join(crate::config::PATH)
        .is_file()
        .then_some(crate::config::PATH);
    if p.json() {
        p.out_json(&json!({
            "file": file,
            "settings": rows
                .iter()
                .map(|(k, v, o)| json!({"key": k, "value": v, "source": o.to_string()}))
                .collect::<Vec<_>>(),
        }))?;
    } else {
        let width = rows.iter().map(|(k, _, _)| k.len()).max().unwrap_or(0);
        let mut text = format!(
            "config: {}\n",
            file.unwrap_or("(no .curate/config.toml: defaults)")
        );
        for (k, v, o) in &rows {
            text.push_str(&format!("{k:<width$}  {v}  ({o})\n"));
        }
        p.out(&text)?;
    }
    Ok(ExitCode::Ready)
}
