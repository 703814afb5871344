//! The inputs of the MCP tools: plain serde structs whose JSON Schema (field doc comments
//! become descriptions) is each tool's `inputSchema`. Names are the command line's long
//! options in snake_case. Nothing here reads a file.

use schemars::JsonSchema;
use serde::Deserialize;

/// A built-in template of `preview`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Template {
    // Plain names (no docs here), so that the schema is a plain `enum` of strings.
    #[default]
    Bundle,
    Sticky,
    Handoff,
}

impl Template {
    /// The template's name as the renderer knows it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Template::Bundle => "bundle",
            Template::Sticky => "sticky",
            Template::Handoff => "handoff",
        }
    }
}

/// The language of the built-in texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    En,
    Zh,
}

impl From<Lang> for crate::model::Lang {
    fn from(l: Lang) -> Self {
        match l {
            Lang::En => crate::model::Lang::En,
            Lang::Zh => crate::model::Lang::Zh,
        }
    }
}

/// What to compile: the inputs `preview` and `compile` share.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub role: String,
    pub change: String,
    pub owns: Vec<String>,
    pub reads: Vec<String>,
    pub task_file: Option<String>,
    pub add: Vec<String>,
    pub drop: Vec<String>,
    pub max_files: Option<u64>,
    pub max_lines: Option<u64>,
    pub max_tokens: Option<u64>,
}

/// A tool input struct holding the [`Selection`] fields (written out, not flattened, so
/// that an unknown field is refused) plus its own, and its conversion to a [`Selection`].
macro_rules! with_selection {
    ($(#[$m:meta])* pub struct $name:ident { $($extra:tt)* }) => {
        $(#[$m])*
        pub struct $name {
            /// The role of the sub-agent: a `roleTypes[].id` of the delegation contracts, or
            /// a `[roles]` alias of the config (for example `worker`, `reviewer`, `planner`).
            pub role: String,
            /// The change id (`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`); `<id>` in every glob
            /// becomes this.
            pub change: String,
            /// Globs of the assigned module the sub-agent may write (repository-relative;
            /// kind `assigned`, priority high).
            #[serde(default)]
            pub owns: Vec<String>,
            /// Globs the sub-agent must read but not write (repository-relative; kind
            /// `assigned`, priority medium).
            #[serde(default)]
            pub reads: Vec<String>,
            /// A task file (JSON, repository-relative): its files_owned / files_readonly
            /// become assigned entries and its texts the handoff envelope.
            pub task_file: Option<String>,
            /// Entries to add after the overrides file, each `FILE:PRIORITY:KIND[:REASON]` or
            /// one overrides line as a JSON object (`{"file": …, "sections": ["## Install"]}`).
            #[serde(default)]
            pub add: Vec<String>,
            /// Globs: every entry matching one is removed.
            #[serde(default)]
            pub drop: Vec<String>,
            /// Soft cap on high+medium files; over it every low entry is dropped (0 = no
            /// cap; default: the config's, else 5).
            pub max_files: Option<u64>,
            /// Hard cap on lines; over it medium and low entries are dropped (0 = no cap;
            /// default: the config's, else 4000).
            pub max_lines: Option<u64>,
            /// Optional cap on tokens, applied like the line cap (0 = no cap; default: the
            /// config's).
            pub max_tokens: Option<u64>,
            $($extra)*
        }

        impl $name {
            /// The shared inputs.
            #[must_use]
            pub fn selection(&self) -> Selection {
                Selection {
                    role: self.role.clone(),
                    change: self.change.clone(),
                    owns: self.owns.clone(),
                    reads: self.reads.clone(),
                    task_file: self.task_file.clone(),
                    add: self.add.clone(),
                    drop: self.drop.clone(),
                    max_files: self.max_files,
                    max_lines: self.max_lines,
                    max_tokens: self.max_tokens,
                }
            }
        }
    };
}

with_selection! {
    /// The inputs of `preview`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct PreviewArgs {
        /// The template to render: bundle (default), sticky or handoff (needs task_file).
        #[serde(default)]
        pub template: Template,
        /// The language of the built-in texts: en or zh (default: the config's, else en).
        pub lang: Option<Lang>,
        /// Also answer the whole report (entries, budget, exclusions) as structured
        /// content; by default a READY answer is the status and the prompt only.
        #[serde(default)]
        pub report: bool,
    }
}

with_selection! {
    /// The inputs of `compile`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct CompileArgs {
        /// Compile and report, but write nothing in the repository.
        #[serde(default)]
        pub dry_run: bool,
        /// Also list every candidate with its source and fate (`candidates` in the report).
        #[serde(default)]
        pub explain: bool,
    }
}

/// The inputs of `check`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckArgs {
    /// Manifests to check, repository-relative (default: every `*-context.jsonl` under the
    /// changes root).
    #[serde(default)]
    pub paths: Vec<String>,
    /// Also flag entries whose content changed and manifests a compile would now change.
    #[serde(default)]
    pub stale: bool,
}

/// The inputs of `verify`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyArgs {
    /// The change id (`<id>` in globs).
    pub change: String,
    /// Owned globs: the files the worker may write.
    #[serde(default)]
    pub owns: Vec<String>,
    /// Read-only globs: files the worker must not write.
    #[serde(default)]
    pub reads: Vec<String>,
    /// A task file (JSON, repository-relative) whose files_owned / files_readonly are the
    /// scope, instead of `owns` and `reads`.
    pub task_file: Option<String>,
    /// The touched files, repository-relative.
    pub touched: Option<Vec<String>>,
    /// Take the touched files from git instead: changed since this revision, plus
    /// untracked files that are not ignored.
    pub git_diff: Option<String>,
}
