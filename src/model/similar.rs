//! "Did you mean": the known names that look like one that is not known.

/// The names among `ids` that look like `given` (a typo, a part of it), best first, at most
/// three: what a "did you mean" offers.
#[must_use]
pub fn similar(given: &str, ids: &[String]) -> Vec<String> {
    let given_lower = given.to_lowercase();
    let mut scored: Vec<(f64, &String)> = ids
        .iter()
        .filter(|id| id.as_str() != given)
        .filter_map(|id| {
            let lower = id.to_lowercase();
            let score = if aligned(&lower, &given_lower) || aligned(&given_lower, &lower) {
                1.0
            } else {
                strsim::jaro_winkler(&given_lower, &lower)
            };
            (score >= 0.85).then_some((score, id))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored
        .into_iter()
        .take(3)
        .map(|(_, id)| id.clone())
        .collect()
}

/// `needle` stands in `hay` as whole words: at its start or after a `-`, `_`, `.` or `/`,
/// and at its end or before one (`t1` in `t1-backend`, not `er` in `worker`).
fn aligned(hay: &str, needle: &str) -> bool {
    let separator = |c: Option<char>| c.is_none_or(|c| matches!(c, '-' | '_' | '.' | '/'));
    !needle.is_empty()
        && hay.match_indices(needle).any(|(i, _)| {
            separator(hay[..i].chars().next_back())
                && separator(hay[i + needle.len()..].chars().next())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similar_ids_are_typos_and_parts_best_first() {
        let ids: Vec<String> = [
            "11-28-login-rate-limit",
            "11-30-fix-health",
            "add-2fa",
            "T1-backend",
            "T2-frontend",
        ]
        .map(str::to_owned)
        .to_vec();
        assert_eq!(similar("11-28-login", &ids), ["11-28-login-rate-limit"]);
        assert_eq!(similar("add-2af", &ids), ["add-2fa"]);
        assert_eq!(similar("t1", &ids), ["T1-backend"]);
        assert_eq!(similar("2fa", &ids), ["add-2fa"]);
        assert!(similar("payments", &ids).is_empty());
        assert!(similar("end", &ids).is_empty(), "not a word of theirs");
        assert_eq!(similar("add-2fa-v2", &ids), ["add-2fa"]);
        assert!(
            similar("add-2fa", &ids).is_empty(),
            "the id itself is no suggestion"
        );
    }
}
