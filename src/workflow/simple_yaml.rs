//! Trellis' `parse_simple_yaml` (`.trellis/scripts/common/config.py`), ported line for line:
//! `key: value`, `key:` followed by `- item` lines, and `key:` followed by a deeper block.
//! A YAML crate would read `.trellis/config.yaml` differently from Trellis itself (flow
//! collections, anchors, types, errors where Trellis reads on), and curate must see the
//! settings Trellis sees.

/// A value: a string (quotes and an inline ` # comment` taken off), a list of strings, or a
/// mapping in the order its keys first appear (a later key replaces an earlier one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Str(String),
    List(Vec<String>),
    Map(Map),
}

/// A mapping's entries, in order.
pub type Map = Vec<(String, Value)>;

/// The value at `key` of `map`.
#[must_use]
pub fn get<'a>(map: &'a Map, key: &str) -> Option<&'a Value> {
    map.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// Parses `text` as Trellis does; never fails.
#[must_use]
pub fn parse(text: &str) -> Map {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Map::new();
    block(&lines, 0, 0, &mut out);
    out
}

fn set(target: &mut Map, key: String, value: Value) -> usize {
    match target.iter().position(|(k, _)| *k == key) {
        Some(i) => {
            target[i].1 = value;
            i
        }
        None => {
            target.push((key, value));
            target.len() - 1
        }
    }
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// `_parse_yaml_block`: the lines from `start` indented at least `min_indent` into `target`;
/// returns the next line's index.
fn block(lines: &[&str], start: usize, min_indent: usize, target: &mut Map) -> usize {
    let mut i = start;
    // The entry of `target` whose list `- item` lines extend.
    let mut list: Option<usize> = None;
    while i < lines.len() {
        let line = lines[i];
        let stripped = line.trim();
        if stripped.is_empty() || stripped.starts_with('#') {
            i += 1;
            continue;
        }
        let here = indent(line);
        if here < min_indent {
            break;
        }
        if let Some(item) = stripped.strip_prefix("- ") {
            if let Some((_, Value::List(items))) = list.and_then(|at| target.get_mut(at)) {
                items.push(unquote(item.trim()).to_owned());
            }
            i += 1;
        } else if let Some((key, value)) = stripped.split_once(':') {
            let key = key.trim().to_owned();
            let value = strip_inline_comment(value).trim();
            let was_quoted = is_quoted(value);
            let value = unquote(value);
            list = None;
            if !value.is_empty() || was_quoted {
                set(target, key, Value::Str(value.to_owned()));
                i += 1;
                continue;
            }
            let next = (i + 1..lines.len()).find(|&n| {
                let s = lines[n].trim();
                !s.is_empty() && !s.starts_with('#')
            });
            match next {
                None => {
                    set(target, key, Value::Map(Map::new()));
                    i = lines.len();
                }
                Some(n) if lines[n].trim().starts_with("- ") => {
                    list = Some(set(target, key, Value::List(Vec::new())));
                    i += 1;
                }
                Some(n) if indent(lines[n]) > here => {
                    let mut nested = Map::new();
                    i = block(lines, i + 1, indent(lines[n]), &mut nested);
                    set(target, key, Value::Map(nested));
                }
                Some(_) => {
                    set(target, key, Value::Map(Map::new()));
                    i += 1;
                }
            }
        } else {
            i += 1;
        }
    }
    i
}

fn is_quoted(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0] == b[b.len() - 1] && matches!(b[0], b'"' | b'\'')
}

/// `_unquote`: one layer of matching surrounding quotes off.
fn unquote(s: &str) -> &str {
    if is_quoted(s) { &s[1..s.len() - 1] } else { s }
}

/// `_strip_inline_comment`: the value before a `#` that starts the text or follows a space,
/// outside quotes.
fn strip_inline_comment(value: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut prev: Option<char> = None;
    for (at, c) in value.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' && prev.is_none_or(char::is_whitespace) => return &value[..at],
            // Inside quotes, or any other character outside them.
            _ => {}
        }
        prev = Some(c);
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_trellis_reads() {
        let text = "# settings\nmax_journal_lines: 1500\nname: \"a # b\" # note\npackages:\n  frontend:\n    path: packages/frontend\n  docs: docs-site\n  backend:\n    path: packages/backend\n    type: submodule\nhooks:\n  - one\n  - 'two'\nempty:\ndefault_package: backend\n";
        let map = parse(text);
        assert_eq!(
            get(&map, "max_journal_lines"),
            Some(&Value::Str("1500".into()))
        );
        assert_eq!(get(&map, "name"), Some(&Value::Str("a # b".into())));
        assert_eq!(
            get(&map, "hooks"),
            Some(&Value::List(vec!["one".into(), "two".into()]))
        );
        assert_eq!(get(&map, "empty"), Some(&Value::Map(Map::new())));
        assert_eq!(
            get(&map, "default_package"),
            Some(&Value::Str("backend".into()))
        );
        let Some(Value::Map(packages)) = get(&map, "packages") else {
            panic!("{map:?}")
        };
        let names: Vec<&str> = packages.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["frontend", "docs", "backend"]);
        assert_eq!(get(packages, "docs"), Some(&Value::Str("docs-site".into())));
        assert_eq!(
            get(packages, "backend"),
            Some(&Value::Map(vec![
                ("path".into(), Value::Str("packages/backend".into())),
                ("type".into(), Value::Str("submodule".into())),
            ]))
        );
    }
}
