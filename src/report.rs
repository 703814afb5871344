//! Notes, exclusions, and the compile report: a readable table on stderr, or JSON.
//!
//! Receives a finished [`Compiled`]; returns text. Never prints a secret's value: an
//! exclusion carries the rule's name only.

use std::fmt::Write as _;
use unicode_width::UnicodeWidthStr;

use serde_json::json;

use crate::compile::Compiled;
use crate::model::{Priority, quoted};

/// Terminal styling, on or off.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn paint(self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    /// Bold red, for errors.
    #[must_use]
    pub fn error(self, text: &str) -> String {
        self.paint("1;31", text)
    }

    /// Yellow, for warnings.
    #[must_use]
    pub fn warn(self, text: &str) -> String {
        self.paint("33", text)
    }

    /// Green, for success.
    #[must_use]
    pub fn good(self, text: &str) -> String {
        self.paint("32", text)
    }

    /// Dim, for secondary text.
    #[must_use]
    pub fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }
}

/// `text` followed by spaces up to `width` terminal columns (nothing added past it).
fn padded(text: &str, width: usize) -> String {
    let mut out = text.to_owned();
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(text.width())));
    out
}

fn num(n: Option<u64>) -> String {
    n.map_or_else(|| "-".to_owned(), |n| n.to_string())
}

/// The human report (for stderr).
#[must_use]
pub fn human(
    c: &Compiled,
    style: Style,
    verbose: bool,
    explain: bool,
    outcome: &str,
    again: Again<'_>,
) -> String {
    let mut out = String::new();
    // A `[roles]` alias is shown with the contract role it stands for.
    let role = if c.role_name == c.role.id || c.role_name.is_empty() {
        c.role.id.clone()
    } else {
        format!("{} (contract role {})", c.role_name, c.role.id)
    };
    let _ = writeln!(
        out,
        "curate: role {role} · change {} · contracts: {} · workflow: {}",
        c.change,
        c.contracts_source,
        c.workflow.describe()
    );
    files_table(c, style, &mut out);
    if explain {
        let _ = writeln!(out, "candidates:");
        for t in &c.candidates {
            let _ = writeln!(out, "  {} ← {}: {}", quoted(&t.file), t.source, t.fate);
        }
    }
    if verbose {
        for n in &c.notes {
            let _ = writeln!(out, "note: {}", n.text);
        }
    }
    let (files, lines, tokens) = c.totals();
    let status = match c.status {
        crate::stages::budget::Status::Ready => style.good(c.status.name()),
        _ => style.error(c.status.name()),
    };
    let cap = |n: u64| {
        if n == 0 {
            "no cap".to_owned()
        } else {
            n.to_string()
        }
    };
    let _ = writeln!(
        out,
        "totals: {files} files, {lines} lines, {tokens} tokens (caps: {} files, {} lines{}) · {status}",
        cap(c.caps.max_files),
        cap(c.caps.max_lines),
        if c.caps.max_tokens > 0 {
            format!(", {} tokens", c.caps.max_tokens)
        } else {
            String::new()
        } + &if c.caps.max_bytes > 0 {
            format!(", {} bytes", c.caps.max_bytes)
        } else {
            String::new()
        }
    );
    for w in c.warnings() {
        let _ = writeln!(out, "{} {}", style.warn("warning:"), w.text);
    }
    match c.status {
        crate::stages::budget::Status::Blocked => blocked_advice(c, again, &mut out),
        crate::stages::budget::Status::OverBudget => {
            let _ = write!(out, "{}", over_budget_advice(c));
        }
        crate::stages::budget::Status::Ready => {}
    }
    if !outcome.is_empty() {
        let _ = writeln!(out, "{outcome}");
    }
    let warnings = c.warnings().count();
    if warnings > 0 {
        let _ = writeln!(
            out,
            "{warnings} warning{}",
            if warnings == 1 { "" } else { "s" }
        );
    }
    out
}

/// One row a file: kept (and how), named only, dropped, excluded, in aligned columns.
fn files_table(c: &Compiled, style: Style, out: &mut String) {
    // Columns are counted as a terminal shows them (`é` one, `测` two), not in bytes.
    let width = c
        .kept
        .iter()
        .map(|k| k.entry.file.width())
        .chain(c.dropped.iter().chain(&c.indexed).map(|d| d.file.width()))
        .chain(
            c.excluded
                .iter()
                .map(|e| quoted(&e.file).trim_matches('"').width().min(48)),
        )
        .max()
        .unwrap_or(4)
        .clamp(4, 60);
    let file = |name: &str| padded(name, width);
    let _ = writeln!(
        out,
        "  {:<width$}  {:<6}  {:<9}  {:>6}  {:>7}  FATE",
        "FILE", "PRI", "KIND", "LINES", "TOKENS"
    );
    for k in &c.kept {
        let _ = writeln!(
            out,
            "  {}  {:<6}  {:<9}  {:>6}  {:>7}  {}",
            file(&k.entry.file),
            k.entry.priority.name(),
            crate::model::one_line_cow(&k.entry.kind),
            k.lines,
            k.tokens,
            match k.degraded {
                Some(d) => style.warn(&format!(
                    "outline (of {} lines), by the {}",
                    d.from_lines,
                    d.rule.describe()
                )),
                None => match k.cut_at {
                    Some(cap) => style.warn(&format!("kept, cut at {cap} bytes")),
                    None => style.good("kept"),
                },
            }
        );
    }
    for d in &c.indexed {
        let _ = writeln!(
            out,
            "  {}  {:<6}  {:<9}  {:>6}  {:>7}  {}",
            file(&d.file),
            d.priority.name(),
            crate::model::one_line_cow(&d.kind),
            num(d.lines),
            num(d.tokens),
            style.warn(&format!("named only, by the {}", d.by))
        );
    }
    for d in &c.dropped {
        let _ = writeln!(
            out,
            "  {}  {:<6}  {:<9}  {:>6}  {:>7}  {}",
            file(&d.file),
            if d.kind.is_empty() {
                "-"
            } else {
                d.priority.name()
            },
            if d.kind.is_empty() {
                "-".into()
            } else {
                crate::model::one_line_cow(&d.kind)
            },
            num(d.lines),
            num(d.tokens),
            style.warn(&format!("dropped by {}", d.by))
        );
    }
    for e in &c.excluded {
        let _ = writeln!(
            out,
            "  {}  {:<6}  {:<9}  {:>6}  {:>7}  {}",
            file(quoted(&e.file).trim_matches('"')),
            "-",
            "-",
            "-",
            "-",
            style.dim(&format!("excluded: {}", e.reason))
        );
    }
}

/// Why a BLOCKED compile is blocked, where the change was looked for, and what to do.
fn blocked_advice(c: &Compiled, again: Again<'_>, out: &mut String) {
    let _ = writeln!(
        out,
        "{}",
        if c.workflow.missing_blocks {
            "BLOCKED: the change does not exist where its workflow keeps changes; do not dispatch"
        } else {
            "BLOCKED: nothing survived selection and exclusion; do not dispatch"
        }
    );
    if !c.workflow.looked.is_empty() {
        let _ = writeln!(
            out,
            "looked for the change in: {} ({} layout)",
            c.workflow.looked.join(", "),
            c.workflow.name
        );
    }
    for other in &c.workflow.elsewhere {
        let _ = writeln!(
            out,
            "the change is also at {} ({})",
            other.folder, other.workflow
        );
    }
    if let Some(hint) = elsewhere_hint(c, again) {
        let _ = writeln!(out, "hint: {hint}");
    } else if nothing_matched(c) {
        let _ = writeln!(
            out,
            "hint: no glob of the {} role in the contracts ({}) names a file here: \
             name the files (--owns, --reads, --add, a task file's files_owned), \
             or write contracts of your own (`curate init` writes the default, to edit)",
            c.role.id, c.contracts_source
        );
    }
}

/// True when no file was even a candidate (none kept, cut, indexed or excluded), the
/// change's folder being where it was looked for.
fn nothing_matched(c: &Compiled) -> bool {
    !c.workflow.change_missing
        && c.kept.is_empty()
        && c.dropped.is_empty()
        && c.indexed.is_empty()
        && c.excluded.is_empty()
}

/// How a front end writes its run again in another workflow's profile, given the profile and
/// how a role given maps there (`None`: the run has no command line of its own, as a hook's
/// or an MCP call's).
pub type Again<'a> = Option<&'a dyn Fn(&str, &dyn Fn(&str) -> String) -> String>;

/// What uses another workflow's folder holding the change: the front end's command again
/// with `--profile <that workflow>` (so no option given is lost), else the setting to give.
fn elsewhere_hint(c: &Compiled, again: Again<'_>) -> Option<String> {
    let other = c.workflow.elsewhere.first()?;
    let workflow = crate::workflow::by_name(other.workflow)?;
    let profile = other.workflow;
    Some(match again {
        Some(again) => again(profile, &|role| role_in(workflow, role, &c.role.id)),
        None => format!(
            "run with --profile {profile} (or profile = \"{profile}\" in .curate/config.toml)"
        ),
    })
}

/// `role` when `w`'s hosts or embedded baseline know it, else `contract_role` when they
/// know that, else the baseline's first role.
fn role_in(w: &dyn crate::workflow::Workflow, role: &str, contract_role: &str) -> String {
    let roles: Vec<String> =
        crate::stages::contract::parse(w.contracts().as_bytes(), std::path::Path::new(w.name()))
            .map(|r| r.into_iter().map(|r| r.id).collect())
            .unwrap_or_default();
    let knows = |r: &str| {
        roles.iter().any(|x| x == r)
            || w.roles().iter().any(|(alias, _)| *alias == r)
            || w.normalize_role(r) != r
    };
    if knows(role) {
        role.to_owned()
    } else if knows(contract_role) {
        contract_role.to_owned()
    } else {
        roles.first().cloned().unwrap_or_else(|| role.to_owned())
    }
}

/// A word as a POSIX shell reads it back, on one line: a word with a control character is
/// written `$'…'` with escapes (POSIX.1-2024, bash, zsh), so that no argument can start a
/// line of its own in a hint.
pub(crate) fn shell_word(w: &str) -> String {
    if !w.is_empty()
        && w.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:@,+".contains(&b))
    {
        w.to_owned()
    } else if w.chars().any(char::is_control) {
        let mut out = String::from("$'");
        for c in w.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                c if c.is_control() && c.is_ascii() => {
                    out.push_str(&format!("\\x{:02x}", u32::from(c)));
                }
                // A C1 control (U+0080 to U+009F): its UTF-8 bytes.
                c if c.is_control() => {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        out.push_str(&format!("\\x{b:02x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('\'');
        out
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

fn over_budget_advice(c: &Compiled) -> String {
    let mut out = String::new();
    if let Some(o) = c.overrun {
        let _ = writeln!(
            out,
            "OVER_BUDGET: the high entries alone hold {} {}, over the cap of {}",
            o.total, o.measure, o.cap
        );
    } else {
        let _ = writeln!(out, "OVER_BUDGET: the caps removed every entry");
    }
    // When the high entries alone are over, they are what to cut: listed in the measure
    // that overran (the others are dropped or named before a high one is).
    let tokens = c.overrun.is_some_and(|o| o.measure == "tokens");
    let counts = |p: Priority| c.overrun.is_none() || p == Priority::High;
    let mut largest: Vec<(&str, u64)> = c
        .kept
        .iter()
        .filter(|k| counts(k.entry.priority))
        .map(|k| {
            (
                k.entry.file.as_str(),
                if tokens { k.tokens } else { k.lines },
            )
        })
        .chain(
            c.dropped
                .iter()
                .chain(&c.indexed)
                .filter(|d| counts(d.priority))
                .filter_map(|d| {
                    let n = if tokens { d.tokens } else { d.lines };
                    n.map(|n| (d.file.as_str(), n))
                }),
        )
        .collect();
    largest.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let _ = writeln!(
        out,
        "largest {}entries:",
        if c.overrun.is_some() { "high " } else { "" }
    );
    let unit = if tokens { "tokens" } else { "lines" };
    for (file, n) in largest.iter().take(5) {
        let _ = writeln!(out, "  {n:>7} {unit}  {}", quoted(file));
    }
    let _ = writeln!(
        out,
        "hint: add `sections` to the largest entries (in the overrides file), or split the task"
    );
    out
}

/// The JSON report.
#[must_use]
pub fn json(c: &Compiled, written: bool, explain: bool) -> serde_json::Value {
    let (files, lines, tokens) = c.totals();
    let warnings: std::collections::HashSet<&str> = c.warnings().map(|n| n.text.as_str()).collect();
    let mut v = json!({
        "status": c.status.name(),
        "manifest": c.manifest_path,
        "written": written,
        "contracts_source": c.contracts_source,
        "workflow": c.workflow,
        "entries": c.kept,
        "dropped": c.dropped,
        "indexed": c.indexed,
        "excluded": c.excluded,
        "totals": {"files": files, "lines": lines, "tokens": tokens},
        "budget": {
            "max_files": c.caps.max_files,
            "max_lines": c.caps.max_lines,
            "max_tokens": c.caps.max_tokens,
            "max_bytes": c.caps.max_bytes,
            "file_bytes": c.caps.file_bytes,
            "overrun": c.overrun,
        },
        "warnings": c.warnings().map(|n| n.text.clone()).collect::<Vec<_>>(),
        // Each line once: the warnings above are not repeated among the notes.
        "notes": c
            .curation
            .iter()
            .filter(|line| !warnings.contains(line.as_str()))
            .collect::<Vec<_>>(),
    });
    if explain {
        v["candidates"] = json!(c.candidates);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::shell_word;

    #[test]
    fn a_shell_word_reads_back_as_the_argument_and_stays_on_one_line() {
        let words = [
            "plain-word_1.go",
            "src/**",
            "it's",
            "",
            "a\nwarning: forged",
            "tab\there\\and 'quote'",
            "bell\u{7}del\u{7f}",
            "c1\u{85}next-line",
            "中文 名",
        ];
        assert_eq!(shell_word("src/**"), "'src/**'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word("a\nb"), r"$'a\nb'");
        assert_eq!(shell_word("c1\u{85}x"), r"$'c1\xc2\x85x'");
        for w in words {
            assert!(!shell_word(w).chars().any(char::is_control), "{w:?}");
        }
        // What bash (which reads `$'…'`) makes of each, where it is installed.
        let Ok(out) = std::process::Command::new("bash")
            .arg("-c")
            .arg(
                words
                    .iter()
                    .map(|w| format!("printf '%s\\0' {}", shell_word(w)))
                    .collect::<Vec<_>>()
                    .join("; "),
            )
            .output()
        else {
            return;
        };
        let read: Vec<&[u8]> = out.stdout.split(|&b| b == 0).collect();
        let want: Vec<&[u8]> = words
            .iter()
            .map(|w| w.as_bytes())
            .chain([&b""[..]])
            .collect();
        assert_eq!(read, want);
    }
}
