//! `.curate/config.toml`: a repository's settings, and the profiles that preset them for the
//! tools that read what curate writes (aiws, Trellis).
//!
//! Each setting is resolved from, in order: a command-line flag, a `CURATE_*` environment
//! variable, the config file, the profile, the default; [`Config`] keeps where each value
//! came from, for `curate config show`. Unknown keys and bad values are errors naming the
//! key and the line. Pure but for reading the one file (bounded, inside the repository).

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::model::Encoding;
use crate::model::Lang;
use crate::model::Pos;
use crate::workflow::Workflow;

/// Where the config file lives, relative to the repository root.
pub const PATH: &str = ".curate/config.toml";

/// The default manifest path template.
pub const DEFAULT_MANIFEST: &str = crate::workflow::DEFAULT_MANIFEST;

/// The file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    #[serde(default, deserialize_with = "workflow_name")]
    pub profile: Option<Wf>,
    pub contracts: Option<toml::Spanned<String>>,
    pub changes: Option<toml::Spanned<String>>,
    pub manifest: Option<toml::Spanned<String>>,
    pub sections: Option<bool>,
    pub budget: Option<Budget>,
    pub render: Option<Render>,
    pub roles: Option<BTreeMap<String, toml::Spanned<String>>>,
    /// `[hook]` (also read as `[hooks]`).
    #[serde(alias = "hooks")]
    pub hook: Option<Hook>,
    /// Where each `[roles]` alias's value is written (filled by [`parse`]).
    #[serde(skip)]
    pub role_places: BTreeMap<String, Pos>,
    /// Where `contracts` is written (filled by [`parse`]).
    #[serde(skip)]
    pub contracts_place: Option<Pos>,
    pub select: Option<Select>,
}

/// A TOML error of the config file said for a person (`line` is the text of the line it is
/// at, `spanned` what its span covers): the setting whose value is wrong, named by the toml
/// crate's own key path (`budget.max_lines`, inline tables and dotted keys alike); the key
/// a duplicate is; what a number setting or a table takes (serde says `u64`, `struct
/// Budget`).
fn toml_message(e: &toml::de::Error, line: &str, spanned: &str) -> String {
    let message = e.message().trim();
    if message == "duplicate key" && !spanned.trim().is_empty() {
        return format!("duplicate key `{}`", spanned.trim());
    }
    // `[[budget]]`: serde reads the list's first table as the table's first field.
    let header = line.trim().trim_start_matches('\u{feff}');
    if let Some(name) = header.strip_prefix("[[").and_then(|h| h.strip_suffix("]]"))
        && message.starts_with("invalid type")
    {
        let name = name.trim();
        return format!("[[{name}]] makes a list of tables; {name} is one table: write [{name}]");
    }
    // The key path is in the error's text only when it has no input to show.
    let mut plain = e.clone();
    plain.set_input(None);
    let text = plain.to_string();
    let keys = text
        .lines()
        .filter_map(|l| l.strip_prefix("in `")?.strip_suffix('`'))
        .next_back()
        .map(|k| k.trim_start_matches('\u{feff}'));
    let mut message = message
        .replace("expected u64", "expected a whole number, 0 or more")
        .replace("expected usize", "expected a whole number, 0 or more")
        .replace(" as i128", "");
    if let Some(i) = message.find("expected struct ") {
        message.replace_range(i.., "expected a table");
    }
    match keys {
        Some(k) if !k.is_empty() => format!("{k}: {message}"),
        _ => message,
    }
}

/// The tokens the files a task names or talks about may take, unless set.
pub const DEFAULT_TASK_TOKENS: u64 = 8_000;

/// `[select]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Select {
    /// Tokens for related files' outlines (`--related`).
    pub related_tokens: Option<u64>,
    /// Select from the task's own words (`--no-task`: false).
    pub task: Option<bool>,
    /// Tokens the files the task names or talks about may take (`--task-tokens`).
    pub task_tokens: Option<u64>,
}

/// `[budget]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    pub max_files: Option<u64>,
    pub max_lines: Option<u64>,
    pub max_tokens: Option<u64>,
    pub encoding: Option<Encoding>,
    /// Move entries down the ladder (outline, index line) before dropping them.
    pub degrade: Option<bool>,
}

/// `[render]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Render {
    pub lang: Option<Lang>,
    pub max_file_bytes: Option<u64>,
    pub max_total_bytes: Option<u64>,
}

/// `[hook]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hook {
    pub on_not_ready: Option<OnNotReady>,
    /// A dispatch that names no change, in a repository with no workflow, is compiled
    /// from its prompt (default: true).
    pub ad_hoc: Option<bool>,
    /// Tokens an ad-hoc dispatch's files may take (default 8,000).
    pub ad_hoc_tokens: Option<u64>,
}

/// What a hook does when the compile is not READY.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnNotReady {
    #[default]
    Warn,
    Deny,
}

/// A workflow, as the config names it.
pub type Wf = &'static dyn Workflow;

/// `profile = "…"`: a workflow's name.
fn workflow_name<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<Wf>, D::Error> {
    let name = String::deserialize(d)?;
    crate::workflow::parse(&name)
        .map(Some)
        .map_err(serde::de::Error::custom)
}

/// Where a resolved value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Flag,
    Env,
    File,
    Profile,
    /// Found in the repository (the workflow's folders).
    Detected,
    Default,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Origin::Flag => "flag",
            Origin::Env => "env",
            Origin::File => "file",
            Origin::Profile => "profile",
            Origin::Detected => "detected",
            Origin::Default => "default",
        })
    }
}

/// Reads `.curate/config.toml` under `root`, when there is one.
pub fn load(root: &Path) -> Result<Option<File>> {
    let path = root.join(PATH);
    let Some(bytes) = crate::trust::admit::read_repo_file(root, &path)? else {
        return Ok(None);
    };
    let text = String::from_utf8(bytes).map_err(|_| Error::Invalid {
        path: PATH.into(),
        message: "the config file is not UTF-8".to_owned(),
    })?;
    parse(&text).map(Some)
}

/// Parses config text; errors name the key and the line:column in [`PATH`].
pub fn parse(text: &str) -> Result<File> {
    let at = |offset: usize, message: String| Error::Syntax {
        path: PATH.into(),
        pos: crate::util::jsonpos::position_of(text, offset).into(),
        message,
    };
    let file: File = toml::from_str(text).map_err(|e| {
        let start = e.span().map_or(0, |s| s.start);
        let spanned = e.span().and_then(|s| text.get(s)).unwrap_or_default();
        let line_start = text[..start.min(text.len())]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let line = text[line_start..].lines().next().unwrap_or_default();
        at(start, toml_message(&e, line, spanned))
    })?;
    // The paths are checked here, where their line and column are known.
    for (key, value) in [("contracts", &file.contracts), ("changes", &file.changes)] {
        if let Some(v) = value
            && let Err(e) = crate::model::paths::normalize(v.get_ref())
        {
            // The config does not know the root: an absolute path is refused as such, inside
            // the repository or not.
            let problem = if std::path::Path::new(v.get_ref()).is_absolute() {
                "is an absolute path: the config names files relative to the repository root"
            } else {
                e.problem()
            };
            return Err(at(
                v.span().start,
                format!("{key} = {:?} {problem}", v.get_ref()),
            ));
        }
    }
    if let Some(m) = &file.manifest {
        check_template(m.get_ref()).map_err(|message| {
            at(
                m.span().start,
                format!("manifest = {:?}: {message}", m.get_ref()),
            )
        })?;
    }
    // An alias is a role name as `--role` takes it: `--role <alias>` must be able to name it.
    if let Some((alias, v)) = file
        .roles
        .iter()
        .flatten()
        .find(|(k, _)| !crate::model::paths::is_name(k))
    {
        return Err(at(
            v.span().start,
            format!(
                "roles: the alias {alias:?} is not a role name (it must match ^[A-Za-z0-9][A-Za-z0-9._-]{{0,127}}$)"
            ),
        ));
    }
    let mut file = file;
    file.contracts_place = file
        .contracts
        .as_ref()
        .map(|v| crate::util::jsonpos::position_of(text, v.span().start).into());
    file.role_places = file
        .roles
        .iter()
        .flatten()
        .map(|(k, v)| {
            (
                k.clone(),
                crate::util::jsonpos::position_of(text, v.span().start).into(),
            )
        })
        .collect();
    Ok(file)
}

/// A manifest path template: only `{changes}`, `{change}` and `{role}`, a `.jsonl` name,
/// and a path that stays inside the repository whatever the values.
pub fn check_template(template: &str) -> std::result::Result<(), String> {
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        let Some(j) = rest[i..].find('}') else {
            return Err("a `{` without its `}`".to_owned());
        };
        let name = &rest[i + 1..i + j];
        if !matches!(name, "changes" | "change" | "role") {
            return Err(format!(
                "unknown placeholder {{{name}}}: use {{changes}}, {{change}} and {{role}}"
            ));
        }
        rest = &rest[i + j + 1..];
    }
    if !template.contains("{change}") || !template.contains("{role}") {
        return Err(
            "it must hold {change} and {role}, so each manifest has its own path".to_owned(),
        );
    }
    // Exactly `.jsonl`: the lock and overrides paths are built by replacing it.
    #[allow(clippy::case_sensitive_file_extension_comparisons)]
    if !template.ends_with(".jsonl") {
        return Err("it must end in .jsonl".to_owned());
    }
    let sample = crate::model::paths::fill(template, "changes", "c", "r");
    crate::model::paths::normalize(&sample)
        .map(|_| ())
        .map_err(|e| format!("the path {}", e.problem()))
}

/// The text `curate init --profile` writes: the profile, and what it sets, as comments.
#[must_use]
pub fn template(profile: Wf, root: &crate::trust::tree::Tree) -> String {
    let mut text = format!(
        "# curate settings. Flags and CURATE_* environment variables override them;\n\
         # `curate config show` prints the result and where each value came from.\n\
         profile = \"{}\"\n\n\
         # What the profile sets (uncomment a line to change it):\n",
        profile.name()
    );
    match profile.changes_root() {
        Some(c) => text.push_str(&format!("# changes = \"{c}\"\n")),
        None => text.push_str(
            "# changes = \"changes\"   # default: chosen per change (changes or .aiws/changes)\n",
        ),
    }
    text.push_str(&format!(
        "# manifest = \"{}\"   # the lock and overrides sit beside it\n# sections = {}\n",
        profile.manifest(),
        profile.sections()
    ));
    let lines = match profile.byte_budget(root) {
        Some(b) => format!(
            "# max_lines = 0   # off: the consumer cuts in bytes ({} a file, {} in all)",
            b.per_file, b.total
        ),
        None => "# max_lines = 4000".to_owned(),
    };
    text.push_str(&format!(
        "\n[budget]\n# max_files = 5\n{lines}\n# max_tokens = 0\n# degrade = true   # false: a cap drops entries instead of outlining them\n# encoding = \"o200k_base\"\n\n\
         [render]\n# lang = \"en\"\n# max_file_bytes = 0\n# max_total_bytes = 0\n\n\
         [roles]\n"
    ));
    for (k, v) in profile.roles() {
        text.push_str(&format!("# \"{k}\" = \"{v}\"   (set by the profile)\n"));
    }
    text.push_str("# \"general-purpose\" = \"worker\"\n\n[hook]\n# on_not_ready = \"warn\"\n");
    text
}

/// Values given on the command line, which win over everything else.
#[derive(Debug, Clone, Default)]
pub struct Given {
    pub changes: Option<String>,
    pub encoding: Option<Encoding>,
    /// `--profile`.
    pub profile: Option<Wf>,
    /// The workflow the repository shows, when no profile names one.
    pub detected: Option<Wf>,
}

/// The resolved settings of a repository, with where each came from.
#[derive(Debug, Clone)]
pub struct Config {
    /// The workflow (named by `profile`, else detected, else the plain layout).
    pub profile: Wf,
    /// A contracts file named by the config file (repository-relative).
    pub contracts: Option<String>,
    /// The changes root, when set (else chosen per change).
    pub changes: Option<String>,
    pub manifest: String,
    pub sections: bool,
    pub max_files: u64,
    pub max_lines: u64,
    pub max_tokens: u64,
    pub degrade: bool,
    pub related_tokens: u64,
    /// Tokens for the files the task's text names or talks about (0: off).
    pub task_tokens: u64,
    pub encoding: Encoding,
    pub lang: Lang,
    pub max_file_bytes: u64,
    pub max_total_bytes: u64,
    pub roles: BTreeMap<String, String>,
    /// Where the config file writes each of its `[roles]` aliases.
    pub role_places: BTreeMap<String, Pos>,
    /// Where the config file writes `contracts`.
    pub contracts_place: Option<Pos>,
    pub on_not_ready: OnNotReady,
    /// `[hook] ad_hoc`.
    pub ad_hoc: bool,
    /// `[hook] ad_hoc_tokens`.
    pub ad_hoc_tokens: u64,
    /// Setting name → where its value came from.
    pub origins: BTreeMap<&'static str, Origin>,
}

/// The error for an environment variable whose value is not what it takes.
fn bad(name: &str, value: &str, want: &str) -> Error {
    Error::Usage(format!(
        "environment variable {name}={value:?} is not {want}"
    ))
}

/// The environment a [`Config`] is resolved with: `CURATE_*` values, read and checked.
struct Env<'a>(&'a dyn Fn(&str) -> Option<String>);

impl Env<'_> {
    /// The variable's value, unless unset or empty.
    fn value(&self, name: &str) -> Option<String> {
        (self.0)(name).filter(|v| !v.is_empty())
    }

    /// A whole number.
    fn u64(&self, name: &str) -> Result<Option<u64>> {
        self.value(name)
            .map(|v| {
                v.trim()
                    .parse::<u64>()
                    .map_err(|_| bad(name, &v, "a number"))
            })
            .transpose()
    }

    /// `true`, `false`, `1` or `0`.
    fn bool(&self, name: &str) -> Result<Option<bool>> {
        self.value(name)
            .map(|v| match v.trim() {
                "true" | "1" => Ok(true),
                "false" | "0" => Ok(false),
                _ => Err(bad(name, &v, "true or false")),
            })
            .transpose()
    }
}

impl Config {
    /// Resolves every setting: `given` (flags), then `env` (`CURATE_*`), then the `file`,
    /// then its profile, then the defaults. A bad environment value is an error naming it.
    pub fn resolve(
        file: Option<&File>,
        given: &Given,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config> {
        let mut origins = BTreeMap::new();
        let e = Env(env);
        let profile_env = e
            .value("CURATE_PROFILE")
            .map(|v| {
                crate::workflow::parse(&v).map_err(|_| {
                    bad(
                        "CURATE_PROFILE",
                        &v,
                        &format!("a workflow ({})", crate::workflow::names().join(", ")),
                    )
                })
            })
            .transpose()?;
        let (profile, mut o) = pick(
            given.profile,
            profile_env,
            file.and_then(|f| f.profile),
            given.detected,
            crate::workflow::plain(),
        );
        if o == Origin::Profile {
            o = Origin::Detected;
        }
        origins.insert("profile", o);

        let (contracts, o) = pick_opt(
            None,
            None,
            file.and_then(|f| f.contracts.as_ref().map(|v| v.get_ref().clone())),
            None,
        );
        origins.insert("contracts", o);

        let changes_env = e.value("CURATE_CHANGES");
        if let Some(c) = &changes_env
            && let Err(problem) = crate::model::paths::normalize(c)
        {
            return Err(bad(
                "CURATE_CHANGES",
                c,
                &format!("a folder inside the repository (it {})", problem.problem()),
            ));
        }
        let (changes, o) = pick_opt(
            given.changes.clone(),
            changes_env,
            file.and_then(|f| f.changes.as_ref().map(|v| v.get_ref().clone())),
            profile.changes_root().map(str::to_owned),
        );
        origins.insert("changes", o);

        let manifest_env = e.value("CURATE_MANIFEST");
        if let Some(m) = &manifest_env {
            check_template(m).map_err(|why| {
                bad(
                    "CURATE_MANIFEST",
                    m,
                    &format!("a manifest template ({why})"),
                )
            })?;
        }
        let (manifest, o) = pick(
            None,
            manifest_env,
            file.and_then(|f| f.manifest.as_ref().map(|v| v.get_ref().clone())),
            Some(profile.manifest().to_owned()),
            DEFAULT_MANIFEST.to_owned(),
        );
        origins.insert("manifest", o);

        let sections_env = e
            .value("CURATE_SECTIONS")
            .map(|v| match v.trim() {
                "true" | "1" => Ok(true),
                "false" | "0" => Ok(false),
                _ => Err(bad("CURATE_SECTIONS", &v, "true or false")),
            })
            .transpose()?;
        let (sections, o) = pick(
            None,
            sections_env,
            file.and_then(|f| f.sections),
            Some(profile.sections()),
            true,
        );
        origins.insert("sections", o);

        let (max_files, max_lines, max_tokens, degrade) = budget_settings(file, &e, &mut origins)?;
        let (related_tokens, o) = pick(
            None,
            e.u64("CURATE_RELATED_TOKENS")?,
            file.and_then(|f| f.select.as_ref())
                .and_then(|s| s.related_tokens),
            None,
            0,
        );
        origins.insert("select.related_tokens", o);
        let (task_tokens, o) = task_tokens(
            file.and_then(|f| f.select.as_ref()),
            e.bool("CURATE_TASK")?,
            e.u64("CURATE_TASK_TOKENS")?,
        );
        origins.insert("select.task_tokens", o);
        let encoding = encoding_setting(file, given, &e, &mut origins)?;

        let (lang, max_file_bytes, max_total_bytes) = render_settings(file, &e, &mut origins)?;

        let roles = roles_of(profile, file, &mut origins);

        let (on_not_ready, ad_hoc, ad_hoc_tokens) = hook_settings(file, &e, &mut origins)?;

        Ok(Config {
            profile,
            contracts,
            changes,
            manifest,
            sections,
            max_files,
            max_lines,
            max_tokens,
            degrade,
            related_tokens,
            task_tokens,
            encoding,
            lang,
            max_file_bytes,
            max_total_bytes,
            roles,
            role_places: file.map(|f| f.role_places.clone()).unwrap_or_default(),
            contracts_place: file.and_then(|f| f.contracts_place),
            on_not_ready,
            ad_hoc,
            ad_hoc_tokens,
            origins,
        })
    }

    /// The contract role a caller's role name stands for (`[roles]` aliases; else itself).
    #[must_use]
    pub fn contract_role<'a>(&'a self, name: &'a str) -> &'a str {
        self.roles.get(name).map_or(name, String::as_str)
    }

    /// Every setting as `(key, value, origin)`, for `curate config show`.
    #[must_use]
    pub fn rows(&self) -> Vec<(String, String, Origin)> {
        let o = |k: &'static str| self.origins.get(k).copied().unwrap_or(Origin::Default);
        let mut rows = vec![
            (
                "profile".to_owned(),
                self.profile.name().to_owned(),
                o("profile"),
            ),
            (
                "contracts".to_owned(),
                self.contracts
                    .clone()
                    .unwrap_or_else(|| "(discovered)".to_owned()),
                o("contracts"),
            ),
            (
                "changes".to_owned(),
                self.changes
                    .clone()
                    .unwrap_or_else(|| "(chosen per change: changes or .aiws/changes)".to_owned()),
                o("changes"),
            ),
            ("manifest".to_owned(), self.manifest.clone(), o("manifest")),
            (
                "sections".to_owned(),
                self.sections.to_string(),
                o("sections"),
            ),
            (
                "budget.max_files".to_owned(),
                self.max_files.to_string(),
                o("budget.max_files"),
            ),
            (
                "budget.max_lines".to_owned(),
                self.max_lines.to_string(),
                o("budget.max_lines"),
            ),
            (
                "budget.max_tokens".to_owned(),
                self.max_tokens.to_string(),
                o("budget.max_tokens"),
            ),
            (
                "budget.degrade".to_owned(),
                self.degrade.to_string(),
                o("budget.degrade"),
            ),
            (
                "select.related_tokens".to_owned(),
                self.related_tokens.to_string(),
                o("select.related_tokens"),
            ),
            (
                "select.task_tokens".to_owned(),
                self.task_tokens.to_string(),
                o("select.task_tokens"),
            ),
            (
                "budget.encoding".to_owned(),
                self.encoding.name().to_owned(),
                o("budget.encoding"),
            ),
            (
                "render.lang".to_owned(),
                self.lang.code().to_owned(),
                o("render.lang"),
            ),
            (
                "render.max_file_bytes".to_owned(),
                self.max_file_bytes.to_string(),
                o("render.max_file_bytes"),
            ),
            (
                "render.max_total_bytes".to_owned(),
                self.max_total_bytes.to_string(),
                o("render.max_total_bytes"),
            ),
            (
                "hook.on_not_ready".to_owned(),
                match self.on_not_ready {
                    OnNotReady::Warn => "warn",
                    OnNotReady::Deny => "deny",
                }
                .to_owned(),
                o("hook.on_not_ready"),
            ),
            (
                "hook.ad_hoc".to_owned(),
                self.ad_hoc.to_string(),
                o("hook.ad_hoc"),
            ),
            (
                "hook.ad_hoc_tokens".to_owned(),
                self.ad_hoc_tokens.to_string(),
                o("hook.ad_hoc_tokens"),
            ),
        ];
        for (k, v) in &self.roles {
            rows.push((format!("roles.{k:?}"), v.clone(), o("roles")));
        }
        rows
    }
}

/// `[budget]`'s caps: files, lines, tokens, and whether the ladder lowers files.
fn budget_settings(
    file: Option<&File>,
    e: &Env<'_>,
    origins: &mut BTreeMap<&'static str, Origin>,
) -> Result<(u64, u64, u64, bool)> {
    let budget = file.and_then(|f| f.budget.as_ref());
    let defaults = crate::model::Caps::default();
    let (max_files, o) = pick(
        None,
        e.u64("CURATE_MAX_FILES")?,
        budget.and_then(|b| b.max_files),
        None,
        defaults.max_files,
    );
    origins.insert("budget.max_files", o);
    let (max_lines, o) = pick(
        None,
        e.u64("CURATE_MAX_LINES")?,
        budget.and_then(|b| b.max_lines),
        None,
        defaults.max_lines,
    );
    origins.insert("budget.max_lines", o);
    let (max_tokens, o) = pick(
        None,
        e.u64("CURATE_MAX_TOKENS")?,
        budget.and_then(|b| b.max_tokens),
        None,
        0,
    );
    origins.insert("budget.max_tokens", o);
    let degrade_env = e.bool("CURATE_DEGRADE")?;
    let (degrade, o) = pick(
        None,
        degrade_env,
        budget.and_then(|b| b.degrade),
        None,
        true,
    );
    origins.insert("budget.degrade", o);
    Ok((max_files, max_lines, max_tokens, degrade))
}

/// The encoding tokens are counted in (`--encoding`, `CURATE_ENCODING`, `[budget]`).
fn encoding_setting(
    file: Option<&File>,
    given: &Given,
    e: &Env<'_>,
    origins: &mut BTreeMap<&'static str, Origin>,
) -> Result<Encoding> {
    let budget = file.and_then(|f| f.budget.as_ref());
    let encoding_env = e
        .value("CURATE_ENCODING")
        .map(|v| match v.trim() {
            "o200k_base" => Ok(Encoding::O200kBase),
            "cl100k_base" => Ok(Encoding::Cl100kBase),
            _ => Err(bad("CURATE_ENCODING", &v, "o200k_base or cl100k_base")),
        })
        .transpose()?;
    let (encoding, o) = pick(
        given.encoding,
        encoding_env,
        budget.and_then(|b| b.encoding),
        None,
        Encoding::O200kBase,
    );
    origins.insert("budget.encoding", o);
    Ok(encoding)
}

/// `[render]`: the language of the templates, the byte caps of a file and of the whole.
fn render_settings(
    file: Option<&File>,
    e: &Env<'_>,
    origins: &mut BTreeMap<&'static str, Origin>,
) -> Result<(Lang, u64, u64)> {
    let render = file.and_then(|f| f.render.as_ref());
    let lang_env = e
        .value("CURATE_LANG")
        .map(|v| match v.trim() {
            "en" => Ok(Lang::En),
            "zh" => Ok(Lang::Zh),
            _ => Err(bad("CURATE_LANG", &v, "en or zh")),
        })
        .transpose()?;
    let (lang, o) = pick(None, lang_env, render.and_then(|r| r.lang), None, Lang::En);
    origins.insert("render.lang", o);
    let (max_file_bytes, o) = pick(
        None,
        e.u64("CURATE_MAX_FILE_BYTES")?,
        render.and_then(|r| r.max_file_bytes),
        None,
        0,
    );
    origins.insert("render.max_file_bytes", o);
    let (max_total_bytes, o) = pick(
        None,
        e.u64("CURATE_MAX_TOTAL_BYTES")?,
        render.and_then(|r| r.max_total_bytes),
        None,
        0,
    );
    origins.insert("render.max_total_bytes", o);
    Ok((lang, max_file_bytes, max_total_bytes))
}

/// The role aliases: the profile's, then `[roles]` over them.
fn roles_of(
    profile: Wf,
    file: Option<&File>,
    origins: &mut BTreeMap<&'static str, Origin>,
) -> BTreeMap<String, String> {
    let mut roles: BTreeMap<String, String> = profile
        .roles()
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
    let mut roles_origin = if roles.is_empty() {
        Origin::Default
    } else {
        Origin::Profile
    };
    if let Some(own) = file
        .and_then(|f| f.roles.as_ref())
        .filter(|r| !r.is_empty())
    {
        roles.extend(own.iter().map(|(k, v)| (k.clone(), v.get_ref().clone())));
        roles_origin = Origin::File;
    }
    origins.insert("roles", roles_origin);
    roles
}

/// `[hook]`: what a hook does when not READY (`CURATE_ON_NOT_READY`), and the ad-hoc
/// dispatch's switch and budget.
fn hook_settings(
    file: Option<&File>,
    e: &Env<'_>,
    origins: &mut BTreeMap<&'static str, Origin>,
) -> Result<(OnNotReady, bool, u64)> {
    let on_not_ready_env = e
        .value("CURATE_ON_NOT_READY")
        .map(|v| match v.trim() {
            "warn" => Ok(OnNotReady::Warn),
            "deny" => Ok(OnNotReady::Deny),
            _ => Err(bad("CURATE_ON_NOT_READY", &v, "warn or deny")),
        })
        .transpose()?;
    let (on_not_ready, o) = pick(
        None,
        on_not_ready_env,
        file.and_then(|f| f.hook.as_ref())
            .and_then(|h| h.on_not_ready),
        None,
        OnNotReady::Warn,
    );
    origins.insert("hook.on_not_ready", o);
    let hook = file.and_then(|f| f.hook.as_ref());
    let (ad_hoc, o) = pick(None, None, hook.and_then(|h| h.ad_hoc), None, true);
    origins.insert("hook.ad_hoc", o);
    let (ad_hoc_tokens, o) = pick(
        None,
        None,
        hook.and_then(|h| h.ad_hoc_tokens),
        None,
        DEFAULT_TASK_TOKENS,
    );
    origins.insert("hook.ad_hoc_tokens", o);
    Ok((on_not_ready, ad_hoc, ad_hoc_tokens))
}

/// `[select] task` and `task_tokens` (or `CURATE_TASK`, `CURATE_TASK_TOKENS`): off unless
/// asked for (`task = true`, or a number of tokens), for the selection is new and measured
/// before it is everyone's default (docs/selection.md).
fn task_tokens(select: Option<&Select>, task: Option<bool>, tokens: Option<u64>) -> (u64, Origin) {
    let (task, o_task) = pick_opt(None, task, select.and_then(|s| s.task), None);
    let (tokens, o_tokens) = pick_opt(None, tokens, select.and_then(|s| s.task_tokens), None);
    match (task, tokens) {
        (Some(false), _) => (0, o_task),
        (Some(true), None) => (DEFAULT_TASK_TOKENS, o_task),
        (_, Some(n)) => (n, o_tokens),
        (None, None) => (0, Origin::Default),
    }
}

/// The first value present, in precedence order, and where it came from.
fn pick<T>(
    flag: Option<T>,
    env: Option<T>,
    file: Option<T>,
    profile: Option<T>,
    default: T,
) -> (T, Origin) {
    match pick_opt(flag, env, file, profile) {
        (Some(v), origin) => (v, origin),
        (None, _) => (default, Origin::Default),
    }
}

/// [`pick`] for a setting that may stay unset.
fn pick_opt<T>(
    flag: Option<T>,
    env: Option<T>,
    file: Option<T>,
    profile: Option<T>,
) -> (Option<T>, Origin) {
    if flag.is_some() {
        (flag, Origin::Flag)
    } else if env.is_some() {
        (env, Origin::Env)
    } else if file.is_some() {
        (file, Origin::File)
    } else if profile.is_some() {
        (profile, Origin::Profile)
    } else {
        (None, Origin::Default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_parses() {
        let f = parse(
            r#"
profile = "trellis"
contracts = "contracts/workflow-delegation-contracts.json"
changes = "changes"
manifest = "{changes}/{change}/analysis/{role}-context.jsonl"
sections = true
[budget]
max_files = 5
max_lines = 4000
max_tokens = 0
degrade = false
encoding = "o200k_base"
[render]
lang = "zh"
max_file_bytes = 0
max_total_bytes = 0
[roles]
"general-purpose" = "worker"
[hook]
on_not_ready = "deny"
"#,
        )
        .unwrap();
        assert_eq!(
            f.profile.map(crate::workflow::Workflow::name),
            Some("trellis")
        );
        assert_eq!(f.render.unwrap().lang, Some(Lang::Zh));
        assert_eq!(f.hook.unwrap().on_not_ready, Some(OnNotReady::Deny));
        assert_eq!(f.roles.unwrap()["general-purpose"].get_ref(), "worker");
    }

    #[test]
    fn unknown_keys_and_bad_values_name_the_key_and_line() {
        let e = parse("profile = \"curate\"\n[budget]\nmax_filez = 3\n").unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with(".curate/config.toml:3:1: "), "{text}");
        assert!(text.contains("max_filez"), "{text}");
        let e = parse("profile = \"nope\"\n").unwrap_err().to_string();
        assert!(e.starts_with(".curate/config.toml:1:11: "), "{e}");
        assert!(e.contains("nope"), "{e}");
        let e = parse("[budget]\nmax_lines = -1\n").unwrap_err().to_string();
        assert!(e.starts_with(".curate/config.toml:2:"), "{e}");
    }

    #[test]
    fn a_wrong_value_names_its_setting_and_a_duplicate_its_key() {
        for (text, expected) in [
            (
                "[budget]\nmax_lines = \"many\"\n",
                ".curate/config.toml:2:13: budget.max_lines: invalid type: string \"many\", expected a whole number, 0 or more",
            ),
            (
                "[select]\nrelated_tokens = 1.5\n",
                ".curate/config.toml:2:18: select.related_tokens: invalid type: floating point `1.5`, expected a whole number, 0 or more",
            ),
            (
                "sections = \"yes\"\n",
                ".curate/config.toml:1:12: sections: invalid type: string \"yes\", expected a boolean",
            ),
            (
                "[hook]\non_not_ready = 3\n",
                ".curate/config.toml:2:16: hook.on_not_ready: ",
            ),
            (
                "[budget]\nmax_lines = 10\nmax_lines = 20\n",
                ".curate/config.toml:3:1: duplicate key `max_lines`",
            ),
            (
                "[roles]\n\"../x\" = \"worker\"\n",
                ".curate/config.toml:2:10: roles: the alias \"../x\" is not a role name",
            ),
            (
                "budget = { max_files = 1, max_lines = \"x\" }\n",
                ".curate/config.toml:1:39: budget.max_lines: invalid type: string \"x\"",
            ),
            (
                "\u{feff}[budget]\nmax_lines = \"x\"\n",
                ".curate/config.toml:2:13: budget.max_lines: ",
            ),
            (
                "[[budget]]\nmax_lines = 3\n",
                ".curate/config.toml:1:1: [[budget]] makes a list of tables; budget is one table: write [budget]",
            ),
            (
                "select = 3\n",
                ".curate/config.toml:1:10: select: invalid type: integer `3`, expected a table",
            ),
            (
                "[budget]\nmax_lines = 99999999999999999999999\n",
                ".curate/config.toml:2:13: budget.max_lines: invalid type: integer `99999999999999999999999`, expected a whole number",
            ),
            (
                "changes = \"/abs/changes\"\n",
                ".curate/config.toml:1:11: changes = \"/abs/changes\" is an absolute path: the config names files relative to the repository root",
            ),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.starts_with(expected), "{text:?}: {e}");
        }
        let f = parse("\ncontracts = \"c.json\"\n").unwrap();
        assert_eq!(f.contracts_place.map(|p| (p.line, p.column)), Some((2, 13)));
    }

    #[test]
    fn a_bad_path_or_template_is_named_at_its_value() {
        for (text, expected) in [
            (
                "# paths\nchanges = \"../x\"\n",
                ".curate/config.toml:2:11: changes = \"../x\" climbs out of the repository",
            ),
            (
                "changes = \"\"\n",
                ".curate/config.toml:1:11: changes = \"\" is empty",
            ),
            (
                "\n\ncontracts  =  \"/etc/x.json\"\n",
                ".curate/config.toml:3:15: contracts = \"/etc/x.json\" is an absolute path",
            ),
            (
                "manifest = \"{changes}/{nope}/{change}-{role}.jsonl\"\n",
                ".curate/config.toml:1:12: manifest = \"{changes}/{nope}/{change}-{role}.jsonl\": unknown placeholder {nope}",
            ),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.starts_with(expected), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_template_stays_inside_and_names_every_manifest() {
        assert!(check_template(DEFAULT_MANIFEST).is_ok());
        for w in crate::workflow::ALL {
            assert!(check_template(w.manifest()).is_ok(), "{}", w.name());
        }
        assert!(check_template("../{change}/{role}.jsonl").is_err());
        assert!(check_template("/tmp/{change}/{role}.jsonl").is_err());
        assert!(check_template("{changes}/{role}.jsonl").is_err());
        assert!(check_template("{changes}/{change}/{role}.txt").is_err());
        assert!(check_template("{changes}/{chnage}/{role}.jsonl").is_err());
    }
}
