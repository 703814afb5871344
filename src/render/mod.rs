//! Rendering through tera templates: the sticky first instruction, the context bundle and
//! the WorkerHandoff envelope (`render`, `preview`).
//!
//! Receives a finished compile (or an existing manifest) and writes the prompt to stdout or,
//! atomically, to a file. File text is data: it comes from the `excerpt` template function,
//! one entry at a time, so `{{` inside a file is printed as it is; the output is streamed.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use rayon::prelude::*;
use serde::Serialize;
use serde_json::{Value, json};

mod excerpt;
mod manifest;
mod templates;

pub use crate::model::Lang;
pub use excerpt::{ReadAhead, excerpt_text};
pub use manifest::from_manifest;
pub use templates::{TEMPLATES, Template, warm};

use excerpt::{Excerpt, ExcerptFn, ExcerptText, Source};
use templates::{NoEnv, add_found, lookup, refuse_include_cycle, undefined_variable_line};

use crate::compile::{self, Compiled, Kept};
use crate::error::{Error, Result};
use crate::model::{Entry, Priority, Sections, quoted};
use crate::settings::{CompileSettings, Workspace};
use crate::stages::budget::Status;
use crate::stages::measure;
use crate::task::Task;
use crate::trust::admit::{Held, admit};
use crate::trust::secrets::ContentRules;

/// Byte caps of the bundle (0 = off).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ByteCaps {
    pub per_file: u64,
    pub total: u64,
}

impl ByteCaps {
    /// The caps `[render]` of the config sets (or their defaults).
    #[must_use]
    pub fn of(config: &crate::config::Config) -> ByteCaps {
        ByteCaps {
            per_file: config.max_file_bytes,
            total: config.max_total_bytes,
        }
    }
}

/// A reason as a prompt shows it, on its entry's line: a control character escaped (`\n`,
/// `\u{1b}`: no line of its own, no terminal sequence), and `</` as `<\/`, so that no
/// reason closes the bundle's block (`</aiws-context-injection>`) or any other tag early.
/// Borrowed when there is nothing to escape (nearly always).
fn shown_reason(reason: &str) -> std::borrow::Cow<'_, str> {
    if !reason.chars().any(char::is_control) && !reason.contains("</") {
        return std::borrow::Cow::Borrowed(reason);
    }
    std::borrow::Cow::Owned(crate::model::one_line(reason).replace("</", "<\\/"))
}

/// What a template sees of an entry (borrowed: serialised once, into the context).
#[derive(Debug, Serialize)]
struct EntryView<'a> {
    file: &'a str,
    /// As [`shown_reason`] makes it.
    reason: std::borrow::Cow<'a, str>,
    sections: &'a Sections,
    priority: crate::model::Priority,
    /// As [`shown_reason`] makes it.
    kind: std::borrow::Cow<'a, str>,
    lines: u64,
    tokens: u64,
}

/// Everything a render needs.
pub struct Job<'a> {
    pub ws: &'a Workspace,
    pub role: &'a crate::stages::contract::Role,
    /// The role's name as the caller gave it.
    pub role_name: &'a str,
    pub change: &'a str,
    pub manifest_path: &'a str,
    pub kept: &'a [Kept],
    pub status: Status,
    pub task: Option<&'a Task>,
    pub owned: Vec<String>,
    pub readonly: Vec<String>,
    pub lang: Lang,
    pub caps: ByteCaps,
    /// Truth files that changed since the change began: the sub-agent reads them whole.
    pub changed_truth: &'a [String],
    /// The size cap of a file read for an excerpt (`--max-file-size`).
    pub max_file_size: u64,
    /// What the sub-agent is not given, and why (dropped by a cap, excluded).
    pub not_given: Vec<NotGiven>,
    /// The bytes the compile admitted: an excerpt is taken from them, not read again.
    pub held: std::sync::Arc<Held>,
}

/// A file the sub-agent is not given, for the end of the bundle's context part.
#[derive(Debug, Clone, Serialize)]
pub struct NotGiven {
    pub file: String,
    pub why: String,
}

/// At most this many not-given files are named; the rest are counted.
pub const NOT_GIVEN_SHOWN: usize = 50;

/// The files a compile left out: each excluded one with its reason (a secret by its rule
/// only, never a value) first, then each dropped, named-only and outlined one with its rule,
/// high priority first (within one, dropped before named before outlined): past
/// [`NOT_GIVEN_SHOWN`] lines, what is counted and not named is the least of it.
#[must_use]
pub fn not_given(compiled: &Compiled) -> Vec<NotGiven> {
    // A name that holds a control character is written as a JSON string: it cannot break a line.
    let name = |f: &str| {
        if f.chars().any(char::is_control) {
            quoted(f)
        } else {
            f.to_owned()
        }
    };
    let dropped = compiled.dropped.iter().map(|d| {
        let given = NotGiven {
            file: name(&d.file),
            why: match d.lines {
                Some(lines) => format!("dropped by the {} ({}, {lines} lines)", d.by, d.priority),
                None => format!("dropped by {}", d.by),
            },
        };
        ((d.priority, 0), given)
    });
    let indexed = compiled.indexed.iter().map(|d| {
        let given = NotGiven {
            file: name(&d.file),
            why: format!(
                "named only, not read: cut by the {} ({}, {} lines)",
                d.by,
                d.priority,
                d.lines.unwrap_or(0)
            ),
        };
        ((d.priority, 1), given)
    });
    let outlined = compiled.kept.iter().filter_map(|k| {
        let d = k.degraded?;
        let given = NotGiven {
            file: name(&k.entry.file),
            why: format!(
                "outline only: {} of its {} lines, cut by the {}",
                k.lines,
                d.from_lines,
                d.rule.describe()
            ),
        };
        Some(((k.entry.priority, 2), given))
    });
    let mut cut: Vec<((Priority, u8), NotGiven)> = dropped.chain(indexed).chain(outlined).collect();
    // Stable: each rule's own order within a priority and a rung.
    cut.sort_by_key(|(rank, _)| *rank);
    compiled
        .excluded
        .iter()
        .map(|e| NotGiven {
            file: name(&e.file),
            why: format!("excluded: {}", e.reason),
        })
        .chain(cut.into_iter().map(|(_, given)| given))
        .collect()
}

impl<'a> Job<'a> {
    /// The render of `compiled`, compiled with `s` in `ws`.
    #[must_use]
    pub fn new(
        ws: &'a Workspace,
        s: &'a CompileSettings,
        compiled: &'a Compiled,
        lang: Lang,
        caps: ByteCaps,
    ) -> Job<'a> {
        let (owned, readonly) = scopes(s);
        Job {
            ws,
            role: &compiled.role,
            role_name: &s.role,
            change: &compiled.change,
            manifest_path: &compiled.manifest_path,
            kept: &compiled.kept,
            status: compiled.status,
            task: s.task.as_ref().map(|(_, t)| t),
            owned,
            readonly,
            lang,
            caps,
            changed_truth: &compiled.changed_truth,
            max_file_size: s.max_file_size,
            not_given: not_given(compiled),
            held: compiled.held.clone(),
        }
    }
}

/// Renders template `name` into a string (for JSON answers and the hooks).
pub fn render_string(job: &Job<'_>, name: &str) -> Result<String> {
    render_template_string(job, &Template::resolve(job.ws, name, job.lang)?, None)
}

/// Renders `template` into a string, with the excerpts `ahead` read while the compile
/// finished, when there are.
pub fn render_template_string(
    job: &Job<'_>,
    template: &Template,
    ahead: Option<ReadAhead>,
) -> Result<String> {
    let mut buf = Vec::new();
    render_to_with(job, template, &mut buf, ahead)?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// Warnings for a READY compile whose manifest on disk is missing or differs (the prompt
/// names that file, so the sub-agent would read something else); `again` says what writes
/// it (``run `curate …` `` with this render's options, or, to an MCP client, the tool to call).
#[must_use]
pub fn manifest_warnings(ws: &Workspace, compiled: &Compiled, again: &str) -> Vec<String> {
    if compiled.status != Status::Ready {
        return Vec::new();
    }
    let on_disk =
        crate::trust::admit::read_repo_file(&ws.root, &ws.root.join(&compiled.manifest_path))
            .ok()
            .flatten();
    match on_disk {
        None => vec![format!(
            "the instruction names {}, which does not exist: {again} first",
            compiled.manifest_path
        )],
        Some(b) if Some(b.as_slice()) != compiled.manifest.as_deref().map(str::as_bytes) => {
            vec![format!(
                "{} differs from this compile: {again} to update it",
                compiled.manifest_path
            )]
        }
        Some(_) => Vec::new(),
    }
}

/// The preview answer `{status, prompt, report, warnings}` (`prompt` null unless READY).
#[must_use]
pub fn preview_json(compiled: &Compiled, prompt: Option<&str>, warnings: &[String]) -> Value {
    json!({
        "status": compiled.status.name(),
        "prompt": prompt,
        "report": crate::report::json(compiled, false, false),
        "warnings": warnings,
    })
}

/// Renders `template` into `out`, taking the excerpts from `ahead` when it was started for
/// this job's entries (else reading them during the render).
pub fn render_to_with(
    job: &Job<'_>,
    template: &Template,
    out: &mut dyn Write,
    ahead: Option<ReadAhead>,
) -> Result<()> {
    let mut tera = tera::Tera::default();
    tera.autoescape_on(vec![]);
    let Template(found) = template;
    let main_name = found.shown.as_str();
    let main_text = &found.text;
    add_found(&mut tera, main_name, found)?;
    let mut sources: Vec<(String, String)> = vec![(main_name.to_owned(), main_text.to_string())];
    // `sticky` is available to every template by that name (the bundle includes it).
    if let Some(found) = lookup(&job.ws.root, "sticky", job.lang)? {
        add_found(&mut tera, "sticky", &found)?;
        sources.push(("sticky".to_owned(), found.text.to_string()));
    }
    refuse_include_cycle(&sources)?;
    // The environment may hold secrets, and nothing the template prints from it would pass
    // the scan of the context: tera's `get_env` is not offered.
    tera.register_function("get_env", NoEnv);
    let rules = crate::trust::admit::rules()?;
    let excerpt = match ahead.filter(|a| a.serves(job)) {
        Some(ahead) => ahead.excerpt,
        None => {
            let from = Source {
                root: &job.ws.root,
                kept: job.kept,
                held: &job.held,
                max_file_size: job.max_file_size,
                caps: job.caps,
            };
            let excerpt = Excerpt::new(&from, rules);
            if template.names_excerpt() {
                // Read ahead while the context is made and checked.
                excerpt.start_producers();
            }
            std::sync::Arc::new(excerpt)
        }
    };
    let views: Vec<EntryView> = job
        .kept
        .iter()
        .map(|k| EntryView {
            file: &k.entry.file,
            reason: shown_reason(&k.entry.reason),
            sections: &k.entry.sections,
            priority: k.entry.priority,
            kind: shown_reason(&k.entry.kind),
            lines: k.lines,
            tokens: k.tokens,
        })
        .collect();
    let mut ctx = tera::Context::new();
    // The role's name as the caller gave it (a `[roles]` alias stays an alias): the name
    // the manifest was written under, and the one a plugin reading the prompt looks for.
    ctx.insert("role", job.role_name);
    ctx.insert("change", job.change);
    ctx.insert("manifest_path", job.manifest_path);
    // A hook's ad-hoc dispatch: no change, so no role's artifact targets to keep to.
    ctx.insert(
        "ad_hoc",
        &job.manifest_path
            .starts_with(&format!("{}/", crate::state::DISPATCHES)),
    );
    ctx.insert("lang", job.lang.code());
    ctx.insert("owned", &job.owned);
    ctx.insert("readonly", &job.readonly);
    let sub =
        |v: &[String]| -> Vec<String> { v.iter().map(|s| s.replace("<id>", job.change)).collect() };
    ctx.insert(
        "role_scopes",
        &json!({
            "read_scope": sub(&job.role.read_scope),
            "write_scope": sub(&job.role.write_scope),
            "artifact_targets": sub(&job.role.artifact_targets),
        }),
    );
    if let Some(task) = job.task {
        ctx.insert("task", task);
        ctx.insert("envelope", &envelope(task));
    }
    ctx.insert("entries", &views);
    drop(views);
    ctx.insert(
        "totals",
        &json!({
            "files": job.kept.len(),
            "lines": job.kept.iter().map(|k| k.lines).sum::<u64>(),
            "tokens": job.kept.iter().map(|k| k.tokens).sum::<u64>(),
        }),
    );
    ctx.insert("status", job.status.name());
    ctx.insert("changed_truth", job.changed_truth);
    let shown = job.not_given.len().min(NOT_GIVEN_SHOWN);
    ctx.insert("not_given", &job.not_given[..shown]);
    ctx.insert("not_given_more", &(job.not_given.len() - shown));
    let workflow = job.ws.workflow();
    let located = crate::workflow::Located {
        changes_root: job.ws.changes_root.clone(),
        folder: job.change.to_owned(),
    };
    ctx.insert(
        "workflow",
        &json!({
            "name": workflow.name(),
            "describes": workflow.describes(job.lang),
            "values": workflow.template_values(&job.ws.root, &located),
        }),
    );
    let ctx = refuse_secrets(rules, main_name, main_text, ctx)?;
    tera.register_function("excerpt_text", ExcerptText(excerpt.clone()));
    tera.register_function("excerpt", ExcerptFn(excerpt));
    tera.render_to(main_name, &ctx, out)
        .map_err(|source| Error::Template {
            line: undefined_variable_line(&source, main_text),
            name: main_name.to_owned(),
            source,
        })
}

/// The last scan of what curate adds to a prompt (SPEC: every byte that leaves): the
/// template's own text and every variable it is given (reasons, the task's fields, the
/// workflow's values, what was not given). The files' excerpts were admitted, content rules
/// included, when they were read. A hit refuses the whole output, naming the template and
/// the variable or line, and the rule, never the value. The context is handed back as it
/// came (moved through JSON, not copied: a bulk bundle's entries are megabytes).
fn refuse_secrets(
    rules: &ContentRules,
    template: &str,
    text: &str,
    ctx: tera::Context,
) -> Result<tera::Context> {
    let refuse = |what: String, rule: &str| {
        Err(Error::Failed(format!(
            "render: {what} holds a secret ({rule}); the {template:?} output is refused, nothing written"
        )))
    };
    if let Some(hit) = rules.scan(text.as_bytes()) {
        return refuse(format!("line {} of the template", hit.line), hit.rule);
    }
    let vars = ctx.into_json();
    if let Value::Object(vars) = &vars {
        for (name, value) in vars {
            // The text as a template shows it: each string as it is, one a line.
            let shown = crate::trust::secrets::json_text(value);
            if let Some(hit) = rules.scan(shown.as_bytes()) {
                return refuse(format!("the variable `{name}`"), hit.rule);
            }
        }
    }
    tera::Context::from_value(vars).map_err(|e| Error::Failed(format!("render: {e}")))
}

/// The WorkerHandoff envelope of a task (seed 000).
#[must_use]
pub fn envelope(task: &Task) -> Value {
    let your_role = if task.your_role.is_empty() {
        task.title.clone()
    } else {
        task.your_role.clone()
    };
    json!({
        "contract": {
            "task_id": task.task_id,
            "files_owned": task.files_owned,
            "files_readonly": task.files_readonly,
            "dependencies_completed": task.dependencies_completed,
            "success_criteria": task.success_criteria,
        },
        "context": {
            "epic_summary": task.epic_summary,
            "your_role": your_role,
            "what_others_did": task.what_others_did,
            "what_comes_next": task.what_comes_next,
        },
        "escalation": {
            "blocked_contact": task.blocked_contact,
            "scope_change_protocol": task.scope_change_protocol,
        },
    })
}

/// The owned and read-only globs of a compile: flags, files-from, task file, as a prompt
/// shows them (a control character escaped: a glob starts no line of the prompt).
pub fn scopes(s: &CompileSettings) -> (Vec<String>, Vec<String>) {
    let mut owned = s.owns.clone();
    owned.extend(s.files_from.iter().cloned());
    let mut readonly = s.reads.clone();
    if let Some((_, t)) = &s.task {
        owned.extend(t.files_owned.iter().cloned());
        readonly.extend(t.files_readonly.iter().cloned());
    }
    let sub = |v: Vec<String>| {
        v.into_iter()
            .map(|g| crate::model::one_line(&g.replace("<id>", &s.change)))
            .collect()
    };
    (sub(owned), sub(readonly))
}

#[cfg(test)]
mod tests {
    use super::excerpt::{Numbering, excerpt_text};
    use super::*;

    #[test]
    fn a_line_label_counted_up_is_the_number_formatted() {
        for (first, last) in [
            (1, 1),
            (1, 9),
            (1, 10),
            (7, 1_234),
            (95, 106),
            (9_990, 100_001),
        ] {
            let width = last.to_string().len();
            let mut number = Numbering::new(first, width);
            for n in first..=last {
                let mut label = String::new();
                number.write(&mut label);
                assert_eq!(label, format!("{n:>width$} |"));
                number.advance();
            }
        }
    }

    #[test]
    fn excerpts_number_lines_mark_gaps_and_widen_fences() {
        let text = b"a\n\nc ```x```\nd\ne\n";
        let out = excerpt_text("x.md", text, &Sections::ranges(vec![[1, 3], [5, 9]]), 0);
        assert_eq!(
            out,
            "````markdown\n1 | a\n2 |\n3 | c ```x```\n...\n5 | e\n````"
        );
    }

    #[test]
    fn width_follows_the_largest_line_number_shown() {
        let text: String = (1..=12).map(|i| format!("l{i}\n")).collect();
        let out = excerpt_text("x.rs", text.as_bytes(), &Sections::ranges(vec![[9, 10]]), 0);
        assert_eq!(out, "```rust\n 9 | l9\n10 | l10\n```");
    }

    #[test]
    fn invalid_utf8_is_replaced_and_crlf_lines_lose_their_cr() {
        let out = excerpt_text("x.txt", b"caf\xe9\r\nok\r\nlast", &Sections::Whole, 0);
        assert_eq!(out, "```text\n1 | caf\u{fffd}\n2 | ok\n3 | last\n```");
        // A backtick after invalid bytes still widens the fence.
        let out = excerpt_text("x.txt", b"\xff ```", &Sections::Whole, 0);
        assert_eq!(out, "````text\n1 | \u{fffd} ```\n````");
    }

    #[test]
    fn the_last_line_number_is_the_measured_line_count() {
        for text in [
            &b""[..],
            b"\n",
            b"a",
            b"a\n",
            b"a\n\nb",
            b"a\r\nb\r\n",
            b"\xff\n\xfe",
        ] {
            let out = excerpt_text("x.txt", text, &Sections::Whole, 0);
            let last = out
                .lines()
                .filter_map(|line| line.split(" |").next()?.trim().parse::<u64>().ok())
                .next_back()
                .unwrap_or(0);
            assert_eq!(last, measure::count_lines(text), "{text:?}: {out}");
        }
    }

    #[test]
    fn an_excerpt_is_allocated_once_at_its_size() {
        // A large file's excerpt is held whole (and a batch of them): no doubling, no growth.
        let text: String = (1..=500).map(|i| format!("line {i}\n\n")).collect();
        for sections in [Sections::Whole, Sections::ranges(vec![[1, 3], [9, 700]])] {
            let out = excerpt_text("x.rs", text.as_bytes(), &sections, 0);
            assert_eq!(out.capacity(), out.len(), "{sections:?}");
        }
        let out = excerpt_text("x.txt", b"``` a\r\nb", &Sections::Whole, 0);
        assert_eq!(out.capacity(), out.len());
    }

    #[test]
    fn a_whole_file_counted_over_its_bytes_is_written_as_its_lines_are() {
        // The whole-file excerpt counts its size over the bytes (empty lines in blocks of
        // 255); a range over every line counts line by line: the same text, at its size.
        let mut seed: u64 = 7;
        for n in 0..300 {
            let len = (n * 37) % 900;
            let text: String = (0..len)
                .map(|_| {
                    seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    ['a', 'b', '\n', '\n', ' ', 'é'][((seed >> 33) % 6) as usize]
                })
                .collect();
            let lines = measure::count_lines(text.as_bytes());
            let whole = excerpt_text("x.md", text.as_bytes(), &Sections::Whole, 0);
            let ranged = if lines == 0 {
                Sections::Ranges(vec![])
            } else {
                Sections::ranges(vec![[1, lines]])
            };
            assert_eq!(
                whole,
                excerpt_text("x.md", text.as_bytes(), &ranged, 0),
                "{text:?}"
            );
            assert_eq!(whole.capacity(), whole.len(), "{text:?}");
        }
    }

    #[test]
    fn producers_held_back_by_a_full_window_give_every_excerpt_in_any_order() {
        // A window of one excerpt: the producers wait for room and the template for
        // excerpts being made, on both conditions, in every order it asks in.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let files: Vec<(String, String)> = (0..40)
            .map(|i| {
                let body: String = (0..200).map(|l| format!("file {i} line {l}\n")).collect();
                (format!("f{i:02}.txt"), body)
            })
            .collect();
        let kept: Vec<Kept> = files
            .iter()
            .map(|(file, body)| {
                std::fs::write(root.join(file), body).unwrap();
                Kept {
                    entry: Entry {
                        file: file.clone(),
                        reason: String::new(),
                        sections: Sections::Whole,
                        priority: crate::model::Priority::High,
                        kind: "k".to_owned(),
                    },
                    lines: 200,
                    tokens: 0,
                    bytes: None,
                    anchors: Vec::new(),
                    degraded: None,
                    cut_at: None,
                    sha256: String::new(),
                }
            })
            .collect();
        let held = std::sync::Arc::new(Held::default());
        let from = Source {
            root: &root,
            kept: &kept,
            held: &held,
            max_file_size: 1 << 20,
            caps: ByteCaps::default(),
        };
        let rules = crate::trust::admit::rules().unwrap();
        let forward: Vec<usize> = (0..40).collect();
        let backward: Vec<usize> = (0..40).rev().collect();
        let apart: Vec<usize> = (0..40).map(|i| (i * 7) % 40).collect();
        for order in [forward, backward, apart] {
            let mut excerpt = Excerpt::new(&from, rules);
            std::sync::Arc::get_mut(&mut excerpt.shared)
                .unwrap()
                .window_bytes = 1;
            excerpt.start_producers();
            let (done, finished) = std::sync::mpsc::channel();
            let files = files.clone();
            let asked = order.clone();
            std::thread::spawn(move || {
                for i in asked {
                    let (file, body) = &files[i];
                    let (_, text) = excerpt.take(file).unwrap();
                    assert_eq!(
                        text,
                        excerpt_text(file, body.as_bytes(), &Sections::Whole, 0)
                    );
                }
                drop(excerpt);
                done.send(()).unwrap();
            });
            // A lost wake-up would hang the render: here it fails the test.
            finished
                .recv_timeout(std::time::Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("the excerpts in order {order:?} never came"));
        }
    }

    #[test]
    fn a_file_over_its_byte_cap_is_cut_at_a_whole_line() {
        let out = excerpt_text("x.txt", b"aaaa\nbbbb\ncccc\n", &Sections::Whole, 11);
        assert!(
            out.starts_with("```text\n1 | aaaa\n2 | bbbb\n```\n[curate: cut before line 3"),
            "{out}"
        );
    }
}
