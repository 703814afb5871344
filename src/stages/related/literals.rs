//! Edges from shared string literals: an API route, an event's name, a storage key written
//! the same in two files ties them, whatever their languages (a Svelte front end that
//! fetches `/api/runs/${id}` and the Rust server that routes `"/api/runs/:id"`). A route
//! is kept up to its first parameter (`:id`, `{id}`, `<id>`, `${…}`), so both say
//! `/api/runs`.
//!
//! A literal is kept when it reads as such a name: no space, 4 to 80 characters, three
//! letters or more, and a `/`, `.`, `:`, `_` or `-` in it; not a web address, not a
//! relative import (`./x`, `../x`), not a file name with an extension.

/// The keys of the literals of `text`, each once, sorted.
#[must_use]
pub fn keys(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let mut rest = line;
        while let Some(start) = rest.find(['"', '\'', '`']) {
            let quote = rest.as_bytes()[start] as char;
            let after = &rest[start + 1..];
            let Some(end) = after.find(quote) else {
                break;
            };
            if let Some(key) = key(&after[..end]) {
                out.push(key);
            }
            rest = &after[end + 1..];
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// A literal's key, when it reads as a route, an event or a key.
fn key(literal: &str) -> Option<String> {
    let cut = literal
        .find(['{', '<', '$', '?', '#'])
        .map_or(literal, |i| &literal[..i]);
    // A route's `:param` segment.
    let cut = cut.find("/:").map_or(cut, |i| &cut[..i]);
    let cut = cut.trim_end_matches('/');
    let letters = cut.chars().filter(char::is_ascii_alphabetic).count();
    let name = cut.rsplit('/').next().unwrap_or(cut);
    let has_extension = name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_lowercase())
    }) && cut.contains('/');
    let ok = (4..=80).contains(&cut.len())
        && letters >= 3
        && !cut.chars().any(char::is_whitespace)
        && cut.contains(['/', '.', ':', '_', '-'])
        && !cut.contains("://")
        && !cut.starts_with('.')
        && !cut.starts_with('-')
        && !has_extension
        && cut
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/.:_-".contains(c));
    ok.then(|| cut.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_events_and_keys_are_kept_up_to_their_parameters() {
        let svelte = "const r = await fetch(`/api/runs/${id}/logs`);\nbus.on('run.started', f);\nlocalStorage.getItem(\"relay_token\");\nimport x from './lib/api';\nlet s = \"hello world\"; let u = 'https://x.io/a'; let f = \"src/app.ts\";\n";
        assert_eq!(keys(svelte), ["/api/runs", "relay_token", "run.started"]);
        let rust = ".route(\"/api/runs/:id/logs\", get(logs))\n.route(\"/api/runs/{id}\", x)\nemit(\"run.started\")\n";
        assert_eq!(keys(rust), ["/api/runs", "run.started"]);
    }
}
