//! The lock: the resolved inputs of a compile and each entry's hash, enough to run it
//! again (`check --stale`, `render --manifest`).

use super::{
    CompileSettings, Contracts, Dropped, FileRef, Inputs, Kept, Lock, LockContracts, LockEntry,
    Workspace, contract, manifest,
};

#[allow(clippy::too_many_arguments)]
pub(super) fn lock(
    ws: &Workspace,
    s: &CompileSettings,
    contracts: &Contracts,
    manifest_path: &str,
    text: &str,
    kept: &[Kept],
    indexed: &[Dropped],
    curation: &[String],
    overrides_file: Option<FileRef>,
) -> Lock {
    let (_, body) = manifest::split_header(text);
    Lock {
        curate: env!("CARGO_PKG_VERSION").to_owned(),
        manifest: manifest_path.to_owned(),
        digest: crate::util::digest::hex(body.as_bytes()),
        contracts: {
            let named = match &contracts.source {
                contract::Source::Flag(p) | contract::Source::Env(p) => Some(ws.relative(p)),
                contract::Source::Repo(_) | contract::Source::Embedded(_) => None,
            };
            LockContracts {
                // By its repository path, or its name alone outside (not this machine's
                // folders, as an overrides file from outside).
                source: match &contracts.source {
                    contract::Source::Flag(p) | contract::Source::Env(p) => {
                        let how = if matches!(contracts.source, contract::Source::Flag(_)) {
                            "--contracts"
                        } else {
                            "CURATE_CONTRACTS"
                        };
                        let shown = named.clone().flatten().unwrap_or_else(|| {
                            p.file_name()
                                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
                        });
                        format!("{shown} ({how})")
                    }
                    _ => contracts.source.describe(),
                },
                sha256: crate::util::digest::hex(&contracts.bytes),
                outside: matches!(named, Some(None)),
                file: named.flatten(),
            }
        },
        inputs: Inputs {
            role: s.role.clone(),
            change: s.change.clone(),
            changes_root: ws.changes_root.clone(),
            encoding: ws.encoding,
            caps: s.caps,
            max_file_size: s.max_file_size,
            no_ignore: s.no_ignore,
            related: s.related,
            owns: s.owns.clone(),
            reads: s.reads.clone(),
            files_from: s.files_from.clone(),
            overrides: overrides_file,
            add: s.add_raw.clone(),
            drop: s.drop.clone(),
            task_file: s.task.as_ref().map(|(f, _)| f.clone()),
            task_text: s.task_text.clone(),
            task_text_from: s.task_text_from.clone(),
            task_tokens: s.task_tokens,
        },
        entries: kept
            .iter()
            .map(|k| LockEntry {
                file: k.entry.file.clone(),
                sha256: k.sha256.clone(),
                lines: k.lines,
                tokens: k.tokens,
                bytes: k.bytes,
                anchors: k.anchors.clone(),
                degraded: k.degraded,
                encoding: ws.encoding,
            })
            .collect(),
        indexed: indexed
            .iter()
            .map(|d| manifest::LockNamed {
                file: d.file.clone(),
                lines: d.lines.unwrap_or(0),
                rule: d.rule.clone(),
                priority: Some(d.priority),
            })
            .collect(),
        curation: curation.to_vec(),
        written: kept.iter().map(|k| k.entry.clone()).collect(),
        companion: None,
    }
}
