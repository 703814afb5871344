//! The templates: the embedded ones (by name and language), a repository's own under
//! `.curate/templates/`, or one at a path; read once, parsed by tera, their includes
//! checked for cycles, and no environment offered to them.

use super::{Cow, Error, HashMap, Lang, OnceLock, Path, Result, Workspace, quoted};

/// The embedded templates, by file name.
pub const TEMPLATES: [(&str, &str); 5] = [
    (
        "sticky.en.tera",
        include_str!("../../templates/sticky.en.tera"),
    ),
    (
        "sticky.zh.tera",
        include_str!("../../templates/sticky.zh.tera"),
    ),
    ("bundle.tera", include_str!("../../templates/bundle.tera")),
    ("handoff.tera", include_str!("../../templates/handoff.tera")),
    (
        "guild-bundle.tera",
        include_str!("../../templates/guild-bundle.tera"),
    ),
];

/// Finds a template's text: the repository's `.curate/templates/<name>.<lang>.tera`, then
/// `<name>.tera`, then the embedded ones in the same order.
pub(super) fn lookup(root: &Path, name: &str, lang: Lang) -> Result<Option<Found>> {
    let candidates = [
        format!("{name}.{}.tera", lang.code()),
        format!("{name}.tera"),
    ];
    for file in &candidates {
        let path = root.join(".curate/templates").join(file);
        // A repository template is an input like any other: never through a link out of
        // the repository, never a FIFO or a device, never past the input cap.
        if let Some(bytes) = crate::trust::admit::read_repo_file(root, &path)? {
            let text = String::from_utf8(bytes).map_err(|_| Error::Invalid {
                path: path.clone(),
                message: "the template is not UTF-8".to_owned(),
            })?;
            return Ok(Some(Found {
                shown: format!(".curate/templates/{file}"),
                text: text.into(),
                embedded: None,
            }));
        }
    }
    for file in &candidates {
        if let Some(index) = TEMPLATES.iter().position(|(n, _)| n == file) {
            return Ok(Some(Found {
                shown: file.clone(),
                text: TEMPLATES[index].1.into(),
                embedded: Some(index),
            }));
        }
    }
    Ok(None)
}

/// A template [`lookup`] found: its name as shown, its text, and which embedded template it
/// is (`None`: the repository's own).
pub(super) struct Found {
    pub(super) shown: String,
    pub(super) text: Cow<'static, str>,
    pub(super) embedded: Option<usize>,
}

/// The embedded templates, each parsed at most once a process under each name a render adds
/// it as (its file name, or `sticky` for the bundle's include): tera's parser costs about a
/// millisecond a template, a copy of the parsed one some microseconds. `None`: it does not
/// parse (the tests rule that out), and the render parses it again for the error.
pub(super) fn parsed(index: usize, as_sticky: bool) -> Option<&'static tera::Tera> {
    static PARSED: [[OnceLock<Option<tera::Tera>>; 2]; TEMPLATES.len()] =
        [const { [const { OnceLock::new() }; 2] }; TEMPLATES.len()];
    let (file, text) = TEMPLATES.get(index)?;
    PARSED[index][usize::from(as_sticky)]
        .get_or_init(|| {
            let mut tera = tera::Tera::default();
            let name = if as_sticky { "sticky" } else { file };
            tera.add_raw_template(name, text).ok()?;
            Some(tera)
        })
        .as_ref()
}

/// Parses the embedded templates a bundle of `lang` uses (ahead of the render, on another
/// thread that warms the process up).
pub fn warm(lang: Option<Lang>) {
    let langs = lang.map_or_else(|| vec![Lang::En, Lang::Zh], |lang| vec![lang]);
    if let Some(bundle) = TEMPLATES.iter().position(|(n, _)| *n == "bundle.tera") {
        parsed(bundle, false);
    }
    for lang in langs {
        let sticky = format!("sticky.{}.tera", lang.code());
        if let Some(index) = TEMPLATES.iter().position(|(n, _)| *n == sticky) {
            parsed(index, true);
        }
    }
}

/// Adds a found template to `tera` as `name`: the embedded ones already parsed.
pub(super) fn add_found(tera: &mut tera::Tera, name: &str, found: &Found) -> Result<()> {
    let as_sticky = name == "sticky";
    if let Some(parsed) = found.embedded.and_then(|index| parsed(index, as_sticky))
        && (as_sticky || name == found.shown)
    {
        return tera.extend(parsed).map_err(|source| Error::Template {
            name: name.to_owned(),
            line: None,
            source,
        });
    }
    add(tera, name, &found.text)
}

/// A template named by its path (`a/b`, `x.tera`), not by its name.
pub(super) fn is_template_path(name: &str) -> bool {
    name.contains('/')
        || Path::new(name)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("tera"))
}

/// A template to render, read once: the one at a path, or found by name ([`lookup`]).
pub struct Template(pub(super) Found);

impl Template {
    /// The template `name` (a name or a path) names.
    pub fn resolve(ws: &Workspace, name: &str, lang: Lang) -> Result<Template> {
        if is_template_path(name) {
            let path = ws.arg_path(Path::new(name));
            let bytes = crate::util::read::read_capped(&path, crate::util::read::INPUT_CAP)?;
            let text = String::from_utf8(bytes).map_err(|_| Error::Invalid {
                path: path.clone(),
                message: "the template is not UTF-8".to_owned(),
            })?;
            return Ok(Template(Found {
                shown: name.to_owned(),
                text: text.into(),
                embedded: None,
            }));
        }
        match lookup(&ws.root, name, lang)? {
            Some(found) => Ok(Template(found)),
            None => Err(Error::Usage(format!(
                "unknown template {name:?}: use sticky, bundle, handoff or a path"
            ))),
        }
    }

    /// Whether it calls `excerpt`, and so reads files' text: a render then reads them
    /// ahead.
    #[must_use]
    pub fn names_excerpt(&self) -> bool {
        self.0.text.contains("excerpt")
    }
}

/// tera names an undefined variable but not its line: find the first tag that uses it.
pub(super) fn undefined_variable_line(e: &tera::Error, text: &str) -> Option<usize> {
    let mut source: Option<&dyn std::error::Error> = Some(e);
    while let Some(s) = source {
        let message = s.to_string();
        if let Some(rest) = message.strip_prefix("Variable `")
            && let Some((name, _)) = rest.split_once("` not found")
        {
            let root = name.split(['.', '[']).next().unwrap_or(name);
            return text
                .lines()
                .position(|line| {
                    line.split("{{")
                        .skip(1)
                        .chain(line.split("{%").skip(1))
                        .any(|tag| {
                            tag.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                                .any(|word| word == root)
                        })
                })
                .map(|i| i + 1);
        }
        source = s.source();
    }
    None
}

/// Tera's `get_env`, refused.
pub(super) struct NoEnv;

impl tera::Function for NoEnv {
    fn call(&self, _: &HashMap<String, serde_json::Value>) -> tera::Result<serde_json::Value> {
        Err(tera::Error::msg(
            "get_env is not available in curate's templates: the environment may hold secrets, and what a template prints goes to a sub-agent",
        ))
    }
}

/// The templates `text` includes by name (`{% include "x" %}`, `{% include ["a", "b"] %}`).
pub(super) fn includes(text: &str) -> Vec<String> {
    static INCLUDE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"\{%-?\s*include\s+(\[[^\]]*\]|"[^"]*"|'[^']*')"#)
            .expect("a valid regex")
    });
    static NAME: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#""([^"]*)"|'([^']*)'"#).expect("a valid regex")
    });
    INCLUDE
        .captures_iter(text)
        .flat_map(|c| {
            NAME.captures_iter(c.get(1).map_or("", |m| m.as_str()))
                .filter_map(|n| n.get(1).or_else(|| n.get(2)).map(|m| m.as_str().to_owned()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A template that includes itself, directly or through another, would recurse until the
/// stack overflows (tera has no guard): an error naming the loop.
pub(super) fn refuse_include_cycle(sources: &[(String, String)]) -> Result<()> {
    let edges: HashMap<&str, Vec<String>> = sources
        .iter()
        .map(|(name, text)| (name.as_str(), includes(text)))
        .collect();
    for (start, _) in sources {
        // Depth first from `start`, along the templates there are.
        let mut path = vec![start.clone()];
        let mut stack = vec![(start.as_str(), 0usize)];
        while let Some((at, i)) = stack.pop() {
            let next = edges.get(at).and_then(|e| e.get(i));
            let Some(next) = next else {
                path.pop();
                continue;
            };
            stack.push((at, i + 1));
            if next == start {
                path.push(next.clone());
                return Err(Error::Failed(format!(
                    "template {}: {} (a template may not include itself: it would never end)",
                    quoted(start),
                    path.join(" includes ")
                )));
            }
            if let Some((name, _)) = sources.iter().find(|(n, _)| n == next)
                && !path.contains(name)
            {
                path.push(name.clone());
                stack.push((name.as_str(), 0));
            }
        }
    }
    Ok(())
}

pub(super) fn add(tera: &mut tera::Tera, name: &str, text: &str) -> Result<()> {
    tera.add_raw_template(name, text)
        .map_err(|source| Error::Template {
            name: name.to_owned(),
            line: None,
            source,
        })
}
