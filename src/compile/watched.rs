//! Asking the `curate watch` of the repository (docs/budgets.md#related-files): `--related`
//! and the task's words send the same question, with what each asks for, and take its
//! answer in the place of their own ranking.

use super::{Ledger, Note, Scope, Workspace, cache_dir, related};

/// The answer of the `curate watch` of this repository to `asking`, when one answers (`-v`
/// says so); `None`: rank here (a watcher that gave no answer is a warning naming `what`).
pub(super) fn ask_watcher(
    ws: &Workspace,
    scope: &Scope<'_>,
    max_file_size: u64,
    asking: related::ask::Asking,
    what: &str,
    ledger: &mut Ledger,
) -> Option<related::ask::Answer> {
    use related::ask::{Asked, Question, VERSION, ask};
    let dir = cache_dir(ws)?;
    let question = Question {
        version: VERSION.to_owned(),
        root: ws.root.to_string_lossy().into_owned(),
        changes_root: scope.changes_root.to_owned(),
        change: scope.change.to_owned(),
        ignore: scope.ignore,
        manifest: ws.config.manifest.clone(),
        max_file_size,
        encoding: ws.encoding,
        asking,
    };
    match ask(&dir, &question) {
        Asked::Answered(answer) => {
            ledger.notes.push(
                Note::info(format!(
                    "{what}: answered by `curate watch` (files not stamped)"
                ))
                .report_only(),
            );
            Some(answer)
        }
        Asked::Failed(why) => {
            ledger.notes.push(
                Note::warning(format!(
                    "{what}: `curate watch` gave no answer ({why}): ranked without it"
                ))
                .report_only(),
            );
            None
        }
        Asked::Nobody => None,
    }
}
