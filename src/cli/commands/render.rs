//! `curate render` (to stdout or, atomically, a file) and `curate preview` (never writes;
//! `--format json` gives `{status, prompt, report, warnings}`).

use std::io::Write;

use crate::cli::args::{Format, GlobalArgs, RenderArgs};
use crate::cli::exit::ExitCode;
use crate::cli::printer::Printer;
use crate::cli::resolve;
use crate::compile;
use crate::error::{Error, Result};
use crate::ops::preview;
use crate::render::{self, ByteCaps, Job};
use crate::report;
use crate::settings::CompileSettings;
use crate::stages::budget::Status;
use crate::util::atomic;

/// Runs `curate render` (`preview = false`) or `curate preview`.
pub fn run(g: &GlobalArgs, a: &RenderArgs, preview: bool) -> Result<ExitCode> {
    let printer = Printer::new(g);
    resolve::names(&a.compile)?;
    if !preview && printer.format != Format::Human {
        return Err(Error::Usage("render takes --format human only".to_owned()));
    }
    if printer.format == Format::Github {
        return Err(Error::Usage(
            "--format github is for `curate check`".to_owned(),
        ));
    }
    if a.compile.stdout {
        // `--stdout` prints a compile's manifest; a render prints the prompt (or writes -o).
        let name = if preview { "preview" } else { "render" };
        return Err(Error::Usage(format!(
            "--stdout prints a compile's manifest; {name} prints the prompt on stdout{}",
            if preview {
                ""
            } else {
                " unless -o names a file"
            }
        )));
    }
    if preview && a.output.is_some() {
        return Err(Error::Usage(
            "preview never writes: use render -o".to_owned(),
        ));
    }
    crate::warm::ahead(crate::warm::Then::Render);
    let (ws, options) = resolve::change_workspace(g, &a.compile)?;
    crate::warm::lang(a.lang.unwrap_or(ws.config.lang));
    let mut s = CompileSettings::resolve(&ws, &options)?;
    let template = a.template.as_str();
    let config = ByteCaps::of(&ws.config);
    let caps = ByteCaps {
        per_file: a.max_file_bytes.unwrap_or(config.per_file),
        total: a.max_total_bytes.unwrap_or(config.total),
    };
    let lang = a.lang.unwrap_or(ws.config.lang);
    // Read once; an error is the render's, said after the compile's report.
    let resolved = render::Template::resolve(&ws, template, lang);
    // A render that writes files' text reads them while the compile finishes and the
    // context is made (the excerpts of a bulk bundle are most of its work).
    s.renders = resolved.as_ref().is_ok_and(render::Template::names_excerpt);
    if preview && printer.format == Format::Json {
        return preview_json(&ws, &s, a, resolved, lang, caps, printer);
    }
    let manifest = a.manifest.as_ref().map(|m| ws.arg_path(m));
    let source = match &manifest {
        Some(m) => crate::ops::render::Source::Manifest(m),
        None => crate::ops::render::Source::Compile,
    };
    let crate::ops::render::Prepared {
        compiled,
        warnings,
        ahead,
    } = crate::ops::render::prepare(&ws, &s, source, caps, &again())?;
    if template == "handoff" && s.task.is_none() {
        return Err(Error::Usage(
            "the handoff template needs --task-file".to_owned(),
        ));
    }
    let job = Job::new(&ws, &s, &compiled, lang, caps);
    let mut report_text = report::human(
        &compiled,
        printer.style,
        printer.verbose,
        false,
        "",
        Some(&crate::cli::again::this_run_with_profile),
    );
    for w in &warnings {
        report_text.push_str(&format!("warning: {w}\n"));
    }
    if compiled.status != Status::Ready {
        printer.err(&report_text);
        return Ok(ExitCode::of_status(compiled.status));
    }
    let resolved = resolved?;
    if let Some(path) = &a.output {
        refuse_an_input(&ws, &s, &compiled, &ws.arg_path(path), path)?;
        // Streamed into the temporary file: memory stays near the largest entry.
        atomic::write_with_bounded_unsynced(
            &ws.arg_path(path),
            atomic::Bound::Named(&ws.root),
            |w| render::render_to_with(&job, &resolved, w, ahead),
        )?;
        if !printer.quiet {
            report_text.push_str(&format!("wrote {}\n", path.display()));
            printer.err(&report_text);
        }
    } else {
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        let result = render::render_to_with(&job, &resolved, &mut out, ahead);
        let flushed = out.flush();
        match result {
            Err(Error::Template { source, .. }) if is_broken_pipe(&source) => {}
            other => other?,
        }
        if let Err(e) = flushed
            && e.kind() != std::io::ErrorKind::BrokenPipe
        {
            return Err(Error::Write {
                path: "<stdout>".into(),
                source: e,
            });
        }
        printer.report(&report_text);
    }
    Ok(ExitCode::Ready)
}

/// What writes the manifest this render names: this command's options as a compile.
fn again() -> String {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    format!("run `{}`", crate::cli::again::compile_command(&args))
}

/// `curate preview --format json`: `{status, prompt, report, warnings}` on stdout.
fn preview_json(
    ws: &crate::settings::Workspace,
    s: &CompileSettings,
    a: &RenderArgs,
    template: Result<render::Template>,
    lang: render::Lang,
    caps: ByteCaps,
    printer: Printer,
) -> Result<ExitCode> {
    let manifest = a.manifest.as_ref().map(|m| ws.arg_path(m));
    let source = match &manifest {
        Some(path) => preview::Source::Manifest(path),
        None => preview::Source::Compile,
    };
    if a.template == "handoff" && s.task.is_none() {
        return Err(Error::Usage(
            "the handoff template needs --task-file".to_owned(),
        ));
    }
    let p = preview::preview(ws, s, source, || template, lang, caps, &again())?;
    let v = render::preview_json(&p.compiled, p.prompt.as_deref(), &p.warnings);
    printer.out_json(&v)?;
    Ok(ExitCode::of_status(p.compiled.status))
}

/// `-o` never names a file the render stands on: the manifest, its lock, the overrides
/// file (the delegator's source), or a file the bundle holds; writing there would replace
/// it with the prompt.
fn refuse_an_input(
    ws: &crate::settings::Workspace,
    s: &CompileSettings,
    compiled: &compile::Compiled,
    out: &std::path::Path,
    shown: &std::path::Path,
) -> Result<()> {
    // The same file whatever the spelling (`./a`, `dir/../a`, a folder reached through a
    // link): the folder resolved, joined to the name. Only a path of the same name can be
    // the same file, so the others' folders are never resolved (a bulk bundle has thousands).
    let key = |p: &std::path::Path| {
        let name = p.file_name()?;
        let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
        let parent = std::fs::canonicalize(parent.unwrap_or(std::path::Path::new("."))).ok()?;
        Some(parent.join(name))
    };
    let Some(out_key) = key(out) else {
        return Ok(());
    };
    let same =
        |p: &std::path::Path| p.file_name() == out.file_name() && key(p).as_ref() == Some(&out_key);
    let manifest = ws.root.join(&compiled.manifest_path);
    let lock = ws
        .root
        .join(crate::stages::manifest::lock_path(&compiled.manifest_path));
    let mut inputs: Vec<(std::path::PathBuf, String)> = vec![
        (manifest, "the manifest".to_owned()),
        (lock, "the manifest's lock".to_owned()),
        (s.overrides.path.clone(), "the overrides file".to_owned()),
    ];
    inputs.extend(compiled.kept.iter().map(|k| &k.entry).map(|e| {
        (
            ws.root.join(&e.file),
            format!("{}, an entry of the bundle", crate::model::quoted(&e.file)),
        )
    }));
    match inputs.iter().find(|(p, _)| same(p)) {
        Some((_, what)) => Err(Error::Usage(format!(
            "-o {}: is {what}; the render would replace it with the prompt: write it elsewhere",
            crate::model::one_line(&shown.display().to_string())
        ))),
        None => Ok(()),
    }
}

fn is_broken_pipe(e: &tera::Error) -> bool {
    let mut source: Option<&dyn std::error::Error> = Some(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::BrokenPipe
        {
            return true;
        }
        source = s.source();
    }
    false
}
