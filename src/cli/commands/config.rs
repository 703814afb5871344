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
    let p = Printer::new(g);
    let rows = ws.config.rows();
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
