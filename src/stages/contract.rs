//! Load, discover and schema-validate the delegation-contracts file (layer 0).
//!
//! Receives where to look (flag, environment, repository root); returns the parsed
//! [`Contracts`] with the bytes they came from (their sha256 goes into the manifest header).
//! Every error names the file, the JSON pointer and the line:column. Never falls back to
//! the embedded default when a repository's own file is broken.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Deserialize;

use crate::error::{Error, Result, SchemaDetails};
use crate::model::Pos;
use crate::model::{Priority, Range, Sections};
use crate::util::jsonpos;

/// The embedded default contracts.
pub const EMBEDDED: &str = include_str!("../../contracts/workflow-delegation-contracts.json");
/// The schema the contracts are validated against.
pub const SCHEMA: &str = include_str!("../../contracts/workflow-delegation-contracts.schema.json");

/// The repository-relative places a contracts file is looked for, in order.
pub const REPO_PATHS: [&str; 2] = [
    "contracts/workflow-delegation-contracts.json",
    "packages/spec/docs/workflow-delegation-contracts.json",
];

/// A workflow's embedded contracts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Baseline {
    /// The workflow's name.
    pub workflow: &'static str,
    pub text: &'static str,
}

/// The embedded default, as the plain layout uses it.
pub const DEFAULT: Baseline = Baseline {
    workflow: "curate",
    text: EMBEDDED,
};

/// Where the contracts came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `--contracts FILE`.
    Flag(PathBuf),
    /// `CURATE_CONTRACTS`.
    Env(PathBuf),
    /// Found in the repository (repository-relative path).
    Repo(String),
    /// The embedded baseline of a workflow (`curate`, `aiws` and `aiws-legacy` share the
    /// embedded default).
    Embedded(Baseline),
}

impl Source {
    /// How the report names the source.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Source::Flag(p) => format!("{} (--contracts)", p.display()),
            Source::Env(p) => format!("{} (CURATE_CONTRACTS)", p.display()),
            Source::Repo(p) => p.clone(),
            Source::Embedded(b) => {
                if b.text == EMBEDDED {
                    "embedded default".to_owned()
                } else {
                    format!("embedded {} baseline", b.workflow)
                }
            }
        }
    }

    /// The name used in error messages.
    fn file_name(&self) -> PathBuf {
        match self {
            Source::Flag(p) | Source::Env(p) => p.clone(),
            Source::Repo(p) => PathBuf::from(p),
            Source::Embedded(_) => PathBuf::from("<embedded contracts>"),
        }
    }
}

/// A `contextFiles[]` item.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextFile {
    pub glob: String,
    #[serde(default)]
    pub sections: Option<Vec<Section>>,
    pub priority: Priority,
    pub kind: String,
}

/// One `sections` item: a line pair, a Markdown heading anchor (`"## Security"`), or a code
/// symbol (`{"symbol": "LoginService.login"}`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(untagged)]
pub enum Section {
    Lines(Range),
    Heading(String),
    Symbol(SymbolAnchor),
}

/// `{"symbol": "LoginService.login"}`: the lines of that definition.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SymbolAnchor {
    pub symbol: String,
}

impl ContextFile {
    /// The item's sections as a [`Sections`] value (anchors resolved when the file is read).
    #[must_use]
    pub fn sections(&self) -> Sections {
        let Some(items) = &self.sections else {
            return Sections::Whole;
        };
        let mut ranges = Vec::new();
        let mut anchors = Vec::new();
        for item in items {
            match item {
                Section::Lines(r) => ranges.push(*r),
                Section::Heading(h) => anchors.push(h.clone()),
                Section::Symbol(s) => {
                    anchors.push(crate::stages::anchors::symbol_anchor(&s.symbol));
                }
            }
        }
        Sections::anchored(ranges, anchors)
    }
}

/// A `roleTypes[]` item (unknown keys are allowed and ignored).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Role {
    pub id: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub read_scope: Vec<String>,
    #[serde(default)]
    pub write_scope: Vec<String>,
    #[serde(default)]
    pub artifact_targets: Vec<String>,
    #[serde(default)]
    pub handoff_requirements: Vec<String>,
    #[serde(default)]
    pub context_files: Vec<ContextFile>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Document {
    role_types: Vec<Role>,
}

/// A loaded, validated contracts file.
#[derive(Debug, Clone)]
pub struct Contracts {
    pub source: Source,
    /// The file's bytes (the embedded default's when it was used).
    pub bytes: Vec<u8>,
    pub roles: Vec<Role>,
}

impl Contracts {
    /// The role named `id`, or an error listing the roles that exist.
    pub fn role(&self, id: &str) -> Result<&Role> {
        self.roles
            .iter()
            .find(|r| r.id == id)
            .ok_or_else(|| Error::UnknownRole {
                role: id.to_owned(),
                source_name: self.source.describe(),
                known: self.roles.iter().map(|r| r.id.clone()).collect(),
            })
    }

    /// An error about the value at JSON `pointer` of this file, with its line:column.
    #[must_use]
    pub fn error_at(&self, pointer: &str, message: &str) -> Error {
        let text = String::from_utf8_lossy(&self.bytes);
        Error::Syntax {
            path: self.source.file_name(),
            pos: jsonpos::place(&text, pointer),
            message: format!("{pointer}: {message}"),
        }
    }

    /// The first 12 hex digits of the sha256 of the file's bytes.
    #[must_use]
    pub fn hash12(&self) -> String {
        crate::util::digest::hex12(&self.bytes)
    }
}

/// Picks the contracts file: `--contracts`, `CURATE_CONTRACTS`, the repository's, else embedded.
/// `flag` and `env` are already resolved against the working folder.
#[must_use]
pub fn discover(flag: Option<PathBuf>, env: Option<PathBuf>, root: &Path) -> Source {
    if let Some(p) = flag {
        return Source::Flag(p);
    }
    if let Some(p) = env {
        return Source::Env(p);
    }
    for rel in REPO_PATHS {
        if root.join(rel).is_file() {
            return Source::Repo(rel.to_owned());
        }
    }
    Source::Embedded(DEFAULT)
}

/// Reads and validates the contracts from `source` (`root` resolves a repository path).
pub fn load(source: Source, root: &Path) -> Result<Contracts> {
    let bytes = match &source {
        Source::Embedded(b) => b.text.as_bytes().to_vec(),
        Source::Flag(p) | Source::Env(p) => {
            crate::util::read::read_capped(p, crate::util::read::INPUT_CAP)?
        }
        // The repository's own file: never through a link that leaves the repository.
        Source::Repo(rel) => crate::trust::admit::read_repo_file(root, &root.join(rel))?
            .ok_or_else(|| Error::Failed(format!("{rel} does not exist")))?,
    };
    if !matches!(source, Source::Embedded(_)) {
        refuse_secrets(&bytes, &source.file_name())?;
    }
    let roles = parse(&bytes, &source.file_name())?;
    Ok(Contracts {
        source,
        bytes,
        roles,
    })
}

/// A contracts file's globs, kinds, anchors and descriptions are copied into manifests,
/// locks, reports and prompts (and quoted by its errors): one that holds a secret, as
/// written or in a JSON string decoded, is refused before anything of it is shown.
fn refuse_secrets(bytes: &[u8], path: &Path) -> Result<()> {
    let rules = crate::trust::admit::rules()?;
    let refused = |found: String| Error::Invalid {
        path: path.to_path_buf(),
        message: format!(
            "holds a secret ({found}); curate copies its text into manifests, reports and \
             prompts: remove the value"
        ),
    };
    if let Some(hit) = rules.scan(bytes) {
        return Err(refused(format!("{} on line {}", hit.rule, hit.line)));
    }
    let decoded = serde_json::from_slice::<serde_json::Value>(bytes)
        .ok()
        .and_then(|v| rules.scan(crate::trust::secrets::json_text(&v).as_bytes()));
    match decoded {
        Some(hit) => Err(refused(format!("{}, in a string", hit.rule))),
        None => Ok(()),
    }
}

/// Builds the schema's validator now, on the thread that warms the process up.
pub fn warm() {
    let _ = schema_validator();
}

fn schema_validator() -> Result<&'static jsonschema::Validator> {
    static VALIDATOR: OnceLock<std::result::Result<jsonschema::Validator, String>> =
        OnceLock::new();
    VALIDATOR
        .get_or_init(|| {
            let schema: serde_json::Value =
                serde_json::from_str(SCHEMA).map_err(|e| e.to_string())?;
            jsonschema::validator_for(&schema).map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| Error::Failed(format!("the embedded contracts schema is invalid: {e}")))
}

/// Parses and validates contracts text; `path` names the file in errors.
pub fn parse(bytes: &[u8], path: &Path) -> Result<Vec<Role>> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let pos = jsonpos::position_of(&String::from_utf8_lossy(bytes), e.valid_up_to());
        Error::Syntax {
            path: path.to_owned(),
            pos: pos.into(),
            message: "the file is not UTF-8".to_owned(),
        }
    })?;
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| Error::Syntax {
        path: path.to_owned(),
        pos: jsonpos::json_pos(&e),
        message: if text.starts_with('\u{feff}') && e.line() == 1 && e.column() <= 1 {
            "invalid JSON: the file starts with a byte-order mark (U+FEFF); save it as UTF-8 without one".to_owned()
        } else {
            format!("invalid JSON: {}", jsonpos::json_message(&e))
        },
    })?;
    if let Some((at, key)) = jsonpos::duplicate_key(text) {
        return Err(Error::Syntax {
            path: path.to_owned(),
            pos: at.into(),
            message: format!(
                "the key {key:?} is written twice in one object; JSON keeps only the last, so the first would be lost without a word: remove one"
            ),
        });
    }
    let validator = schema_validator()?;
    let mut problems: Vec<(Pos, String)> = validator
        .iter_errors(&value)
        .map(|err| {
            let pointer = err.instance_path().to_string();
            let shown = if pointer.is_empty() {
                "(document)"
            } else {
                &pointer
            };
            (jsonpos::place(text, &pointer), format!("{shown}: {err}"))
        })
        .collect();
    if problems.is_empty() {
        problems.extend(unreadable_sections(text, &value));
    }
    let doc: Document = if problems.is_empty() {
        serde_json::from_value(value).map_err(|e| Error::Invalid {
            path: path.to_owned(),
            message: e.to_string(),
        })?
    } else {
        Document { role_types: vec![] }
    };
    // Checked after the schema, which cannot express them: role ids are unique, a glob
    // compiles, and a section ends at or after its start.
    for (r, role) in doc.role_types.iter().enumerate() {
        if let Some(first) = doc.role_types[..r].iter().position(|o| o.id == role.id) {
            let pointer = format!("/roleTypes/{r}/id");
            problems.push((
                jsonpos::place(text, &pointer),
                format!(
                    "{pointer}: the role {:?} is already defined at /roleTypes/{first}; one role, one entry",
                    role.id
                ),
            ));
        }
        for (c, cf) in role.context_files.iter().enumerate() {
            if let Err(e) = crate::util::glob::compile(&cf.glob) {
                let pointer = format!("/roleTypes/{r}/contextFiles/{c}/glob");
                problems.push((
                    jsonpos::place(text, &pointer),
                    format!("{pointer}: invalid glob {:?}: {}", cf.glob, e.kind()),
                ));
            }
            for (s, item) in cf.sections.iter().flatten().enumerate() {
                let Section::Lines([start, end]) = item else {
                    continue;
                };
                if end < start {
                    let pointer = format!("/roleTypes/{r}/contextFiles/{c}/sections/{s}");
                    problems.push((
                        jsonpos::place(text, &pointer),
                        format!("{pointer}: section [{start}, {end}] ends before it starts"),
                    ));
                }
            }
        }
    }
    if problems.is_empty() {
        return Ok(doc.role_types);
    }
    problems.sort_by_key(|(pos, _)| (pos.line, pos.column));
    Err(Error::Schema {
        path: path.to_owned(),
        count: problems.len(),
        details: SchemaDetails {
            path: path.to_owned(),
            problems,
        },
    })
}

/// The `sections` items the schema lets through but no [`Section`] reads (`[1e3, 2e3]`, a
/// line number past `u64`), or whose symbol is no name (`"Session."`), each at its place.
fn unreadable_sections(text: &str, value: &serde_json::Value) -> Vec<(Pos, String)> {
    let mut out = Vec::new();
    let roles = value.get("roleTypes").and_then(serde_json::Value::as_array);
    for (r, role) in roles.into_iter().flatten().enumerate() {
        let files = role
            .get("contextFiles")
            .and_then(serde_json::Value::as_array);
        for (c, cf) in files.into_iter().flatten().enumerate() {
            let items = cf.get("sections").and_then(serde_json::Value::as_array);
            for (s, item) in items.into_iter().flatten().enumerate() {
                let pointer = format!("/roleTypes/{r}/contextFiles/{c}/sections/{s}");
                match serde_json::from_value::<Section>(item.clone()) {
                    Err(_) => out.push((
                        jsonpos::place(text, &pointer),
                        format!(
                            "{pointer}: not a section: write a pair of whole line numbers ([25, 50]), a heading (\"## Security\") or {{\"symbol\": \"Name\"}}"
                        ),
                    )),
                    // As in an overrides file: a symbol is a name.
                    Ok(Section::Symbol(a)) if !crate::stages::anchors::is_symbol_name(&a.symbol) => {
                        out.push((
                            jsonpos::place(text, &format!("{pointer}/symbol")),
                            format!(
                                "{pointer}: symbol {:?} is not a name such as \"LoginService.login\"",
                                a.symbol
                            ),
                        ));
                    }
                    Ok(_) => {}
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_default_validates_and_has_the_five_roles() {
        let roles = parse(EMBEDDED.as_bytes(), Path::new("embedded")).unwrap();
        let ids: Vec<&str> = roles.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(
            ids,
            ["planner", "explorer", "worker", "reviewer", "integrator"]
        );
        let worker = roles.iter().find(|r| r.id == "worker").unwrap();
        let globs: Vec<&str> = worker
            .context_files
            .iter()
            .map(|c| c.glob.as_str())
            .collect();
        // The seed's baseline and aiws' real change template, in one list.
        assert_eq!(
            globs,
            [
                "AI_PROJECT.md",
                "REQUIREMENTS.md",
                "AI_WORKSPACE.md",
                "packages/spec/docs/workflow-delegation-contracts.md",
                "packages/spec/docs/workflow-delegation-context-injection.md",
                "changes/<id>/proposal.md",
                "changes/<id>/design.md",
                "changes/<id>/tasks.md",
                "<plan-file>",
                "changes/<id>/plan/*.md",
                "changes/<id>/STATE.md",
                "changes/<id>/analysis/*.md",
                "changes/<id>/evidence/*.md",
            ]
        );
        assert_eq!(
            worker.context_files[0].sections(),
            Sections::anchored(
                vec![],
                vec![
                    "## Security|安全与边界".to_owned(),
                    "## Artifacts|产物与证据".to_owned()
                ]
            )
        );
    }

    #[test]
    fn a_byte_order_mark_is_named_as_the_cause() {
        let text = format!("\u{feff}{EMBEDDED}");
        let err = parse(text.as_bytes(), Path::new("c.json")).unwrap_err();
        let Error::Syntax { pos, message, .. } = err else {
            panic!("expected a syntax error, got {err:?}")
        };
        assert_eq!((pos.line, pos.column), (1, 1));
        assert!(message.contains("byte-order mark (U+FEFF)"), "{message}");
        // Other syntax errors keep serde's words.
        let err = parse(b"{\n  \"roleTypes\": [,]\n}\n", Path::new("c.json")).unwrap_err();
        let Error::Syntax { message, .. } = err else {
            panic!("expected a syntax error, got {err:?}")
        };
        assert!(!message.contains("byte-order"), "{message}");
    }

    #[test]
    fn a_bad_glob_or_an_unreadable_section_is_named_at_its_place() {
        let doc = |file: &str| {
            format!(
                "{{\n  \"roleTypes\": [\n    {{\"id\": \"w\", \"contextFiles\": [\n      {file}\n    ]}}\n  ]\n}}\n"
            )
        };
        for (file, column, said) in [
            (
                r#"{"glob": "src/[a-", "priority": "high", "kind": "k"}"#,
                8,
                "/roleTypes/0/contextFiles/0/glob: invalid glob \"src/[a-\": unclosed character class; missing ']'",
            ),
            (
                r#"{"glob": "a.md", "sections": [[1e3, 2e3]], "priority": "high", "kind": "k"}"#,
                37,
                "/roleTypes/0/contextFiles/0/sections/0: not a section: write a pair of whole line numbers",
            ),
            (
                r#"{"glob": "a.md", "sections": [[1, 99999999999999999999999]], "priority": "high", "kind": "k"}"#,
                37,
                "/roleTypes/0/contextFiles/0/sections/0: not a section",
            ),
        ] {
            let err = parse(doc(file).as_bytes(), Path::new("c.json")).unwrap_err();
            let Error::Schema { details, count, .. } = err else {
                panic!("{file}: expected a schema error, got {err:?}")
            };
            assert_eq!(count, 1, "{details}");
            let shown = details.to_string();
            assert!(
                shown.starts_with(&format!("c.json:4:{column}: {said}")),
                "{shown}"
            );
        }
    }

    #[test]
    fn schema_errors_name_pointer_and_position() {
        let text = "{\n  \"roleTypes\": [\n    {\"id\": \"w\", \"contextFiles\": [\n      {\"glob\": \"a\", \"priority\": \"urgent\", \"kind\": \"k\"}\n    ]}\n  ]\n}\n";
        let err = parse(text.as_bytes(), Path::new("c.json")).unwrap_err();
        let Error::Schema { details, count, .. } = err else {
            panic!("expected a schema error, got {err:?}")
        };
        assert_eq!(count, 1);
        assert_eq!(details.problems[0].0.line, 4, "{details}");
        assert!(details.to_string().starts_with("c.json:4:"), "{details}");
        assert!(
            details.problems[0]
                .1
                .contains("/roleTypes/0/contextFiles/0/priority")
        );
    }

    #[test]
    fn reversed_sections_are_rejected_after_the_schema() {
        let text = r#"{"roleTypes":[{"id":"w","contextFiles":[{"glob":"a","sections":[[10,5]],"priority":"high","kind":"k"}]}]}"#;
        let err = parse(text.as_bytes(), Path::new("c.json")).unwrap_err();
        assert!(matches!(err, Error::Schema { .. }), "{err:?}");
    }

    #[test]
    fn malformed_json_gives_line_and_column() {
        let err = parse(b"{\n  \"roleTypes\": [,]\n}", Path::new("c.json")).unwrap_err();
        let Error::Syntax { pos, .. } = err else {
            panic!("{err:?}")
        };
        assert_eq!(pos.line, 2);
    }
}
