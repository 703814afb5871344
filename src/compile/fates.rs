//! Each file's fate after the budget: kept whole, kept down the ladder (outline, index
//! line), or left out with the rule that cut it; and the list of what was not given.

use super::{
    Allocation, Candidate, Caps, CompileSettings, Compiled, Contracts, Degraded, Dropped, Entry,
    Error, Held, Kept, Ledger, Measured, Note, OverridesRead, RepoPath, Result, Role, Rule,
    Sections, Status, Step, Workflowed, Workspace, WriteBack, admit, consumer_bytes, degrade, lock,
    manifest, measure, quoted, reason_for, repo_path, rule_name, trace, without_lines_of,
};

/// Where an entry stands after the budget: dropped, named only, or read (as selected or
/// cut to its outline).
pub(super) enum Standing {
    Dropped(Rule),
    Indexed(Rule),
    Read {
        sections: Sections,
        lines: u64,
        tokens: Option<u64>,
        bytes: u64,
        degraded: Option<Degraded>,
    },
}

pub(super) fn standing(
    ws: &Workspace,
    caps: Caps,
    (c, m): &(Candidate, Measured),
    dropped: Option<Rule>,
    degraded: Option<(usize, Rule)>,
    lowered: Option<&degrade::Lowered>,
) -> Standing {
    if let Some(rule) = dropped {
        return Standing::Dropped(rule);
    }
    match degraded.zip(lowered) {
        Some(((k, rule), low)) => {
            let rung = low.rungs[k];
            match (rung.step, &low.outline) {
                (Step::Outline, Some(outline)) => Standing::Read {
                    sections: outline.clone(),
                    lines: rung.lines,
                    tokens: rung.tokens,
                    bytes: rung.bytes,
                    degraded: Some(Degraded {
                        to: Step::Outline,
                        from_lines: m.lines,
                        rule,
                    }),
                },
                _ => Standing::Indexed(rule),
            }
        }
        None => Standing::Read {
            sections: m.sections.clone(),
            lines: m.lines,
            tokens: m.tokens,
            bytes: consumer_bytes(ws, c, m, caps),
            degraded: None,
        },
    }
}

/// The survivors, with tokens counted for those not counted yet, in manifest order (high →
/// low, then position); the dropped and the named-only ones go to the ledger.
pub(super) fn keep(
    ws: &Workspace,
    s: &CompileSettings,
    reading: measure::Reading<'_>,
    measured: &[(Candidate, Measured)],
    allocation: &Allocation,
    lowered: &[degrade::Lowered],
    ledger: &mut Ledger,
) -> Result<Vec<Kept>> {
    let standings: Vec<Standing> = measured
        .iter()
        .enumerate()
        .map(|(i, cm)| {
            standing(
                ws,
                s.caps,
                cm,
                allocation.dropped[i],
                allocation.degraded[i],
                lowered.get(i),
            )
        })
        .collect();
    let to_count: Vec<(RepoPath, Sections, String)> = measured
        .iter()
        .zip(&standings)
        .filter_map(|((c, m), st)| match st {
            Standing::Read {
                sections,
                tokens: None,
                ..
            } => Some(repo_path(c).map(|p| (p, sections.clone(), m.sha256.clone()))),
            _ => None,
        })
        .collect::<Result<_>>()?;
    let mut counted = measure::count_tokens(reading, &to_count).into_iter();
    let mut kept: Vec<(usize, Kept)> = Vec::with_capacity(measured.len());
    ledger.traces.reserve(measured.len());
    for (position, ((c, m), st)) in measured.iter().zip(standings).enumerate() {
        let (sections, lines, tokens, bytes, degraded) = match st {
            Standing::Dropped(rule) => {
                ledger.cut(c, m, rule, false);
                continue;
            }
            Standing::Indexed(rule) => {
                ledger.cut(c, m, rule, true);
                continue;
            }
            Standing::Read {
                sections,
                lines,
                tokens,
                bytes,
                degraded,
            } => (sections, lines, tokens, bytes, degraded),
        };
        let tokens = match tokens {
            Some(t) => t,
            None => counted
                .next()
                .unwrap_or_else(|| Err("token count missing".to_owned()))
                .map_err(Error::Failed)?,
        };
        let mut reason = c
            .reason
            .clone()
            .unwrap_or_else(|| reason_for(&c.kind, &m.sections, &m.anchors));
        let mut t = trace(c, Some(m), "kept");
        if let Some(d) = degraded {
            let cut = format!(
                "cut {} ({}, {} lines) to its outline ({lines} line{}) by the {}",
                quoted(&c.path),
                c.priority,
                d.from_lines,
                if lines == 1 { "" } else { "s" },
                d.rule.describe()
            );
            ledger.notes.push(Note::info(cut));
            reason = format!(
                "{reason} [outline only: {lines} of {} lines, by the {}]",
                d.from_lines,
                d.rule.describe()
            );
            t.fate = format!("cut to its outline by the {}", d.rule.describe());
            t.lines = Some(lines);
        }
        let cut_at = (degraded.is_none() && m.injected < m.bytes).then_some(s.caps.file_bytes);
        if let Some(cap) = cut_at {
            t.fate = format!("kept, cut at {cap} bytes by its consumer");
            t.lines = Some(lines);
        }
        t.tokens = Some(tokens);
        ledger.traces.push(t);
        kept.push((
            position,
            Kept {
                entry: Entry {
                    file: c.path.clone(),
                    reason,
                    sections,
                    priority: c.priority,
                    kind: c.kind.clone(),
                },
                lines,
                tokens,
                bytes: (s.caps.max_bytes > 0 || s.caps.file_bytes > 0).then_some(bytes),
                // An outline replaces the anchored sections.
                anchors: if degraded.is_some() {
                    Vec::new()
                } else {
                    m.anchors.clone()
                },
                degraded,
                cut_at,
                sha256: m.sha256.clone(),
            },
        ));
    }
    kept.sort_by_key(|(position, k)| (k.entry.priority, *position));
    Ok(kept.into_iter().map(|(_, k)| k).collect())
}

/// An entry a cap removed (dropped, or named only), for the report.
pub(super) fn cut_entry(c: &Candidate, m: &Measured, rule: Rule, tokens: Option<u64>) -> Dropped {
    Dropped {
        file: c.path.clone(),
        priority: c.priority,
        kind: c.kind.clone(),
        lines: Some(m.lines),
        tokens,
        rule: rule_name(rule).to_owned(),
        by: rule.describe().to_owned(),
    }
}

/// The curation lines (the overrides file's, then this run's, once each), the manifest text
/// and its lock when READY, and the report's values.
#[allow(clippy::too_many_arguments)]
pub(super) fn finish(
    ws: &Workspace,
    s: &CompileSettings,
    contracts: &Contracts,
    role: Role,
    kept: Vec<Kept>,
    allocation: &Allocation,
    overrides: OverridesRead,
    mut ledger: Ledger,
    held: std::sync::Arc<Held>,
) -> Compiled {
    let OverridesRead {
        mut curation,
        file: overrides_file,
        write_back,
    } = overrides;
    let entries: Vec<Entry> = kept.iter().map(|k| k.entry.clone()).collect();
    if allocation.status == Status::Ready
        && let Some(back) = &write_back
    {
        left_out(ws, s, (&kept, &entries), back, &held, &mut ledger);
    }
    // Once each, in order; a set keeps this linear for a hundred thousand notes.
    let mut seen: std::collections::HashSet<String> = curation.iter().cloned().collect();
    let manifest_path = ws.manifest_path(&s.change, &s.role);
    for n in ledger.notes.iter().filter(|n| n.in_manifest) {
        // An author's list is written anew: a line of it as read points at nothing in it as
        // written, and would change the list on the next run.
        let text = match &write_back {
            Some(_) => without_lines_of(&n.text, &manifest_path),
            None => n.text.clone(),
        };
        if seen.insert(text.clone()) {
            curation.push(text);
        }
    }
    let status = allocation.status;
    let (manifest, lock) = if status == Status::Ready {
        let text = match &write_back {
            Some(back) => {
                let withheld = back.withheld(&ledger.excluded);
                let text = manifest::format_lines(
                    manifest::Form::Rows,
                    &contracts.hash12(),
                    &curation,
                    &back.lines(&entries, &withheld),
                );
                if back.crlf {
                    manifest::with_crlf(&text)
                } else {
                    text
                }
            }
            None => manifest::format(&contracts.hash12(), &curation, &entries),
        };
        let lock = lock(
            ws,
            s,
            contracts,
            &manifest_path,
            &text,
            &kept,
            &ledger.indexed,
            &curation,
            overrides_file.clone(),
        );
        (Some(text), Some(lock))
    } else {
        (None, None)
    };
    Compiled {
        status,
        role,
        change: s.change.clone(),
        contracts_source: contracts.source.describe(),
        manifest_path,
        kept,
        dropped: ledger.dropped,
        indexed: ledger.indexed,
        excluded: ledger.excluded,
        curation,
        notes: ledger.notes,
        caps: s.caps,
        overrun: allocation.overrun,
        candidates: ledger.traces,
        manifest,
        lock,
        overrides_file,
        changed_truth: ledger.changed_truth,
        role_name: s.role.clone(),
        workflow: Workflowed::of(ws),
        held,
    }
}

/// What the consumer's hook will name instead of inlining, once its byte total is reached
/// reading the list curate writes back (Trellis: the task's own files after the list, or
/// the list's last files), as a warning.
pub(super) fn left_out(
    ws: &Workspace,
    s: &CompileSettings,
    (kept, entries): (&[Kept], &[Entry]),
    back: &WriteBack,
    held: &Held,
    ledger: &mut Ledger,
) {
    let withheld = back.withheld(&ledger.excluded);
    let rows = manifest::body(manifest::Form::Rows, &[], &back.lines(entries, &withheld));
    let sha: std::collections::HashMap<&str, &str> = kept
        .iter()
        .map(|k| (k.entry.file.as_str(), k.sha256.as_str()))
        .collect();
    let read = |p: &str| {
        let path = RepoPath::new(p).ok()?;
        match sha.get(path.as_str()) {
            Some(sha256) => held.read(&ws.root, &path, s.max_file_size, sha256).ok(),
            None => admit::read_repo_file(&ws.root, &ws.root.join(path.as_str()))
                .ok()
                .flatten()
                .map(std::sync::Arc::new),
        }
    };
    let folder = format!("{}/{}", ws.changes_root, s.change);
    let out = ws.workflow().left_out(&ws.root, &folder, &rows, &read);
    if out.is_empty() {
        return;
    }
    let names: Vec<String> = out.iter().map(|p| quoted(p)).collect();
    let total = ws.workflow().byte_budget(&ws.root).map_or(0, |b| b.total);
    let (them, files) = if out.len() == 1 {
        ("it", "the file")
    } else {
        ("them", "the files")
    };
    ledger.notes.push(Note::warning(format!(
        "the {} hook will not inline {}: its {total}-byte total is reached before {them}, and it names {files} instead",
        ws.workflow().name(),
        names.join(", "),
    )));
}
