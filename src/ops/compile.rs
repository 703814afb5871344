//! Compile and write: one compile at a time per manifest folder (from reading its inputs to
//! writing), the lock first and the manifest last, and a hand-edited manifest never
//! overwritten unless the caller adopts or forces.
//!
//! Every front-end that writes a manifest (`curate compile`, the hooks, the MCP server)
//! goes through [`commit`].

use std::path::Path;

use crate::compile::{Compiled, compile};
use crate::error::{Error, Result};
use crate::settings::{CompileOptions, CompileSettings, Workspace};
use crate::stages::budget::Status;
use crate::stages::{adopt, manifest};
use crate::trust::admit::read_repo_file;
use crate::util::atomic::{self, Bound};
use crate::util::lock;

/// What [`commit`] may do.
#[derive(Debug, Clone, Copy, Default)]
pub struct Mode {
    /// Write the manifest and lock when READY (false: compile only, nothing written).
    pub write: bool,
    /// Turn a hand edit into overrides lines, then compile again.
    pub adopt: bool,
    /// Overwrite a hand edit.
    pub force: bool,
    /// A render of the admitted text follows ([`CompileSettings::renders`]).
    pub renders: bool,
    /// A hand edit is the person's curation, taken as it stands (the hooks): the result is
    /// the manifest on disk read back, each file measured again; nothing is written.
    pub take_hand_edit: bool,
}

/// The result of [`commit`].
#[derive(Debug)]
pub struct Committed {
    pub compiled: Compiled,
    /// The settings the compile used (resolved once, before it).
    pub settings: CompileSettings,
    /// True when the manifest and lock were written.
    pub written: bool,
    /// What happened to the files, for the report (empty when nothing is to be said).
    pub outcome: String,
}

/// Compiles `o`, then writes the manifest and its lock when READY and `mode.write`.
///
/// # Errors
/// [`Error::HandEdited`] when the manifest on disk was edited by hand and neither `adopt`
/// nor `force` is set; every compile and write error.
pub fn commit(ws: &Workspace, o: &CompileOptions, mode: Mode) -> Result<Committed> {
    // Resolved once: a list read from standard input is read once, and an adoption below
    // compiles again with the same request (the compile reads the overrides file anew).
    let s = CompileSettings {
        renders: mode.renders,
        ..CompileSettings::resolve(ws, o)?
    };
    let _lock = if mode.write {
        let manifest = ws.root.join(ws.manifest_path(&s.change, &s.role));
        let folder = manifest.parent().unwrap_or(&ws.root);
        Some(lock::lock_folder(&ws.root, folder, lock::WAIT)?)
    } else {
        None
    };
    let mut compiled = compile(ws, &s)?;
    let mut outcome = String::new();
    let path = ws.root.join(&compiled.manifest_path);
    if compiled.status != Status::Ready {
        outcome = if path.exists() {
            format!(
                "nothing written; the existing {} and its lock are left as they are",
                compiled.manifest_path
            )
        } else {
            "nothing written".to_owned()
        };
    }
    let mut written = false;
    if mode.write && compiled.status == Status::Ready {
        // A file that is also the author's list is never a hand edit: the compile read
        // the author's rows as layer 2 and writes every one of them back.
        if !ws.workflow().authored()
            && let Some(existing) = read_text(ws, &path)?
            && !manifest::is_intact(&existing)
        {
            if mode.adopt {
                let adopted = adopt_edits(ws, &s, &compiled.manifest_path, &existing)?;
                // The overrides file now holds the edits: compile again with it. A compile
                // that fails, or writes nothing, puts the file back as it was: the edits
                // stay in the manifest, and the next compile does not fail on a line the
                // person never wrote.
                match compile(ws, &s) {
                    Ok(c) if c.status == Status::Ready => {
                        outcome.push_str(&adopted.said);
                        compiled = c;
                    }
                    Ok(c) => {
                        adopted.undo(ws, &s)?;
                        outcome = format!(
                            "nothing adopted, nothing written: with the edits the compile is {}",
                            c.status.name()
                        );
                        compiled = c;
                    }
                    Err(e) => {
                        adopted.undo(ws, &s)?;
                        return Err(Error::Failed(format!(
                            "{e} (a line --adopt would add for the manifest's edits); nothing adopted, {} left as it was",
                            s.overrides.shown
                        )));
                    }
                }
            } else if mode.take_hand_edit && !mode.force {
                return Ok(Committed {
                    compiled: crate::render::from_manifest(ws, &s, &path)?,
                    settings: s,
                    written: false,
                    outcome: format!(
                        "{} was edited by hand: taken as it stands",
                        compiled.manifest_path
                    ),
                });
            } else if !mode.force {
                return Err(Error::HandEdited {
                    path: compiled.manifest_path.clone().into(),
                });
            }
        }
        if compiled.status == Status::Ready {
            write_outputs(ws, &s, &compiled, mode.force)?;
            written = true;
            outcome.push_str(&format!("wrote {}", compiled.manifest_path));
        }
    }
    Ok(Committed {
        compiled,
        settings: s,
        written,
        outcome,
    })
}

fn read_text(ws: &Workspace, path: &Path) -> Result<Option<String>> {
    Ok(read_repo_file(&ws.root, path)?.map(|b| String::from_utf8_lossy(&b).into_owned()))
}

fn write_outputs(ws: &Workspace, s: &CompileSettings, c: &Compiled, force: bool) -> Result<()> {
    let (Some(text), Some(lock)) = (&c.manifest, &c.lock) else {
        return Ok(());
    };
    // The workflow's second file (Guild's lane bundle) is rendered before anything is
    // written: a render that fails writes nothing.
    let located = crate::workflow::Located {
        changes_root: ws.changes_root.clone(),
        folder: c.change.clone(),
    };
    let companion = match ws.workflow().companion(&located, &s.role) {
        Some((path, template)) => {
            let job = crate::render::Job::new(
                ws,
                s,
                c,
                ws.config.lang,
                crate::render::ByteCaps::of(&ws.config),
            );
            Some((path, crate::render::render_string(&job, template)?))
        }
        None => None,
    };
    let mut lock = lock.clone();
    if let Some((path, text)) = &companion {
        let previous = manifest::read_lock(&ws.root, &c.manifest_path);
        if !force && !companion_is_ours(ws, path, text, previous.as_ref())? {
            return Err(Error::NotOurs { path: path.into() });
        }
        lock.companion = Some(crate::model::FileRef {
            path: path.clone(),
            sha256: crate::util::digest::hex(text.as_bytes()),
            outside: false,
        });
    }
    // The lock first, the manifest last: the manifest is the commit point.
    write_unless_same(
        ws,
        &ws.root.join(manifest::lock_path(&c.manifest_path)),
        lock.to_text().as_bytes(),
    )?;
    let mut written = vec![ws.root.join(manifest::lock_path(&c.manifest_path))];
    if let Some((path, text)) = companion {
        let path = ws.root.join(path);
        write_unless_same(ws, &path, text.as_bytes())?;
        written.push(path);
    }
    let path = ws.root.join(&c.manifest_path);
    write_unless_same(ws, &path, text.as_bytes())?;
    written.push(path);
    if ws.workflow().dates_changes_by_files() {
        let folder = ws.root.join(&ws.changes_root).join(&c.change);
        keep_change_time(&folder, &written);
    }
    Ok(())
}

/// Gives the files curate wrote into the change `folder` the newest modification time of
/// the change's own files (when older), so that a tool dating a change by its newest file
/// dates it as before. Best effort: the files are written; a time not set changes nothing
/// else.
fn keep_change_time(folder: &Path, written: &[std::path::PathBuf]) {
    /// A change folder holds a few files; past this many, its time is left alone.
    const MAX_ENTRIES: usize = 10_000;
    let mut newest: Option<std::time::SystemTime> = None;
    // Links are not followed: a link is not the change's own file.
    for (seen, e) in walkdir::WalkDir::new(folder).into_iter().enumerate() {
        if seen > MAX_ENTRIES {
            return;
        }
        let Ok(e) = e else { continue };
        if e.file_type().is_file()
            && !written.iter().any(|w| w == e.path())
            && let Some(t) = e.metadata().ok().and_then(|m| m.modified().ok())
        {
            newest = newest.max(Some(t));
        }
    }
    let Some(newest) = newest else { return };
    for path in written {
        let newer = std::fs::symlink_metadata(path)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .and_then(|m| m.modified().ok())
            .is_some_and(|t| t > newest);
        let mut options = std::fs::File::options();
        options.write(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            options.custom_flags(libc::O_NOFOLLOW);
        }
        if newer && let Ok(f) = options.open(path) {
            let _ = f.set_modified(newest);
        }
    }
}

/// Whether the workflow's second file at `path` may be written with `text`: it is absent,
/// already `text`, or what curate wrote last (the previous lock's digest of it). A file
/// the workflow's own tools wrote, or one edited by hand, is never silently replaced.
fn companion_is_ours(
    ws: &Workspace,
    path: &str,
    text: &str,
    previous: Option<&manifest::Lock>,
) -> Result<bool> {
    let Some(existing) = read_repo_file(&ws.root, &ws.root.join(path))? else {
        return Ok(true);
    };
    if existing == text.as_bytes() {
        return Ok(true);
    }
    let digest = crate::util::digest::hex(&existing);
    Ok(previous
        .and_then(|l| l.companion.as_ref())
        .is_some_and(|c| c.path == path && c.sha256 == digest))
}

/// Writes `bytes` to `path` inside the repository, unless it is a regular file that holds
/// exactly them already: a compile again with the same inputs renames and flushes nothing.
fn write_unless_same(ws: &Workspace, path: &Path, bytes: &[u8]) -> Result<()> {
    let regular = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file());
    if regular && read_repo_file(&ws.root, path).ok().flatten().as_deref() == Some(bytes) {
        return Ok(());
    }
    Ok(atomic::write_bounded(path, Bound::Inside(&ws.root), bytes)?)
}

/// Appends the hand edits of `edited` to the overrides file; says what it did.
/// An adoption written into the overrides file: what to say, and the file as it was.
struct Adopted {
    said: String,
    /// The overrides file's bytes before (`None`: there was none); unchanged when nothing
    /// was adopted.
    before: Option<Option<Vec<u8>>>,
}

impl Adopted {
    /// Puts the overrides file back as it was before the adoption.
    fn undo(self, ws: &Workspace, s: &CompileSettings) -> Result<()> {
        let path = &s.overrides.path;
        match self.before {
            None => Ok(()),
            Some(None) => std::fs::remove_file(path).map_err(|source| Error::Write {
                path: path.clone(),
                source,
            }),
            Some(Some(bytes)) => Ok(atomic::write_bounded(path, overrides_bound(ws, s), &bytes)?),
        }
    }
}

/// Where the overrides file may be written: a named one where named, the default inside
/// the repository.
fn overrides_bound<'a>(ws: &'a Workspace, s: &CompileSettings) -> Bound<'a> {
    if s.overrides.explicit {
        Bound::Named(&ws.root)
    } else {
        Bound::Inside(&ws.root)
    }
}

/// Appends `lines` (overrides-file lines, checked by the caller) to the overrides file of
/// `s`, made when missing, in one atomic write: what `--adopt` and the editor's "add to
/// context" / "drop from it" write. Returns the file's bytes before (`None`: there was none).
///
/// # Errors
/// An overrides file outside the repository, or one that cannot be read or written.
pub fn append_overrides(
    ws: &Workspace,
    s: &CompileSettings,
    lines: &[String],
) -> Result<Option<Vec<u8>>> {
    let path = &s.overrides.path;
    let before = read_repo_file(&ws.root, path)?;
    let mut text = before
        .as_deref()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    atomic::write_bounded(path, overrides_bound(ws, s), text.as_bytes())?;
    Ok(before)
}

fn adopt_edits(
    ws: &Workspace,
    s: &CompileSettings,
    manifest_path: &str,
    edited: &str,
) -> Result<Adopted> {
    let lock = manifest::read_lock(&ws.root, manifest_path);
    let lines = adopt::diff(
        edited,
        lock.as_ref()
            .map(|l| (l.curation.as_slice(), l.written.as_slice())),
    )
    .map_err(|e| Error::Unadoptable {
        path: manifest_path.into(),
        pos: e.pos,
        message: e.message,
    })?;
    if lines.is_empty() {
        return Ok(Adopted {
            said: String::new(),
            before: None,
        });
    }
    // What would be adopted is copied into the overrides file, a manifest and a prompt: a
    // secret in the edited manifest is refused at its line, before anything is written.
    crate::compile::refuse_copied_secrets(edited, Path::new(manifest_path))?;
    if s.overrides.outside {
        // Written only inside the repository: said plainly, not as a read through a link.
        return Err(Error::Failed(format!(
            "--adopt writes the overrides file, and {} is outside the repository: name one inside it, or leave out --overrides to adopt into {}",
            crate::model::quoted(&s.overrides.shown),
            ws.overrides_path(&s.change, &s.role)
        )));
    }
    let before = append_overrides(ws, s, &lines)?;
    Ok(Adopted {
        said: format!(
            "adopted {} hand edit{} into {}\n",
            lines.len(),
            if lines.len() == 1 { "" } else { "s" },
            s.overrides.shown
        ),
        before: Some(before),
    })
}
