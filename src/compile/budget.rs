//! The budget rules, in order (docs/budgets.md): the 5-file soft cap, the 4000-line hard cap, the
//! optional token cap, then BLOCKED / OVER_BUDGET.
//!
//! Pure: receives each surviving entry's priority, lines and tokens; returns which entries a
//! rule dropped and the status. A high entry is never dropped while a lower one stays.

use serde::Serialize;

use crate::model::Priority;

/// The caps; `0` means no cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Caps {
    pub max_files: u64,
    pub max_lines: u64,
    pub max_tokens: u64,
    /// Bytes of the whole selection, as the consumer counts them (Trellis' total).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub max_bytes: u64,
    /// Bytes past which the consumer cuts a file (Trellis' per-file cap): a file counts at
    /// most this much against `max_bytes`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub file_bytes: u64,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Caps {
    /// These caps with the ones a caller gave (flags, tool arguments) put over them.
    #[must_use]
    pub fn overridden(self, files: Option<u64>, lines: Option<u64>, tokens: Option<u64>) -> Caps {
        Caps {
            max_files: files.unwrap_or(self.max_files),
            max_lines: lines.unwrap_or(self.max_lines),
            max_tokens: tokens.unwrap_or(self.max_tokens),
            max_bytes: self.max_bytes,
            file_bytes: self.file_bytes,
        }
    }
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            max_files: 5,
            max_lines: 4000,
            max_tokens: 0,
            max_bytes: 0,
            file_bytes: 0,
        }
    }
}

/// What the budget sees of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    pub priority: Priority,
    pub lines: u64,
    /// Needed only when a token cap is set.
    pub tokens: Option<u64>,
    /// Bytes as the consumer injects them (after its per-file cut).
    pub bytes: u64,
}

/// The rule that dropped an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    SoftCap,
    HardCap,
    TokenCap,
    ByteCap,
}

impl Rule {
    /// The rule in words.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Rule::SoftCap => "soft cap",
            Rule::HardCap => "hard cap",
            Rule::TokenCap => "token cap",
            Rule::ByteCap => "byte cap",
        }
    }
}

/// The outcome of a compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    Ready,
    Blocked,
    OverBudget,
}

impl Status {
    /// The status as the report names it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Status::Ready => "READY",
            Status::Blocked => "BLOCKED",
            Status::OverBudget => "OVER_BUDGET",
        }
    }
}

/// A cap that even the high entries alone exceed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Overrun {
    /// `lines` or `tokens`.
    pub measure: &'static str,
    pub total: u64,
    pub cap: u64,
}

/// The decisions of [`allocate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    pub status: Status,
    /// Per item, the rule that dropped it.
    pub dropped: Vec<Option<Rule>>,
    /// Messages for the report and the curation lines, with the numbers.
    pub decisions: Vec<String>,
    pub overrun: Option<Overrun>,
}

/// Applies the caps in order: soft cap, hard cap, token cap.
#[must_use]
pub fn allocate(items: &[Item], caps: Caps) -> Allocation {
    let mut dropped: Vec<Option<Rule>> = vec![None; items.len()];
    let mut decisions = Vec::new();
    let mut overrun = None;

    // 1. Soft cap: more high+medium files than the cap drops every low entry.
    let high_medium = items.iter().filter(|i| i.priority != Priority::Low).count() as u64;
    let lows = items.iter().filter(|i| i.priority == Priority::Low).count();
    if caps.max_files > 0 && high_medium > caps.max_files && lows > 0 {
        drop_below(items, &mut dropped, Priority::Medium, Rule::SoftCap);
        decisions.push(format!(
            "soft cap: {high_medium} high+medium files exceed --max-files {}; dropped {lows} low entr{}",
            caps.max_files,
            if lows == 1 { "y" } else { "ies" }
        ));
    }

    // 2 and 3. Hard caps on lines, then tokens: drop medium and low; high alone over = OVER_BUDGET.
    for (measure, cap, rule) in [
        ("lines", caps.max_lines, Rule::HardCap),
        ("tokens", caps.max_tokens, Rule::TokenCap),
        ("bytes", caps.max_bytes, Rule::ByteCap),
    ] {
        if cap == 0 || overrun.is_some() {
            continue;
        }
        let value = |i: &Item| match measure {
            "lines" => i.lines,
            "bytes" => i.bytes,
            _ => i.tokens.unwrap_or(0),
        };
        let total: u64 = kept(items, &dropped).map(value).sum();
        if total <= cap {
            continue;
        }
        let lower = kept(items, &dropped)
            .filter(|i| i.priority != Priority::High)
            .count();
        drop_below(items, &mut dropped, Priority::High, rule);
        let high_total: u64 = kept(items, &dropped).map(value).sum();
        if lower > 0 {
            decisions.push(format!(
                "{}: {total} {measure} exceed {} {cap}; dropped {lower} medium and low entr{}",
                rule.describe(),
                match measure {
                    "lines" => "--max-lines",
                    // Not a flag: the consumer's own cap (Trellis' `.trellis/config.yaml`).
                    "bytes" => "the consumer's byte cap of",
                    _ => "--max-tokens",
                },
                if lower == 1 { "y" } else { "ies" }
            ));
        }
        if high_total > cap {
            overrun = Some(Overrun {
                measure,
                total: high_total,
                cap,
            });
        }
    }

    let survivors = dropped.iter().filter(|d| d.is_none()).count();
    let status = if overrun.is_some() {
        Status::OverBudget
    } else if survivors == 0 {
        if dropped.iter().any(Option::is_some) {
            Status::OverBudget
        } else {
            Status::Blocked
        }
    } else {
        Status::Ready
    };
    Allocation {
        status,
        dropped,
        decisions,
        overrun,
    }
}

fn kept<'a>(items: &'a [Item], dropped: &'a [Option<Rule>]) -> impl Iterator<Item = &'a Item> {
    items
        .iter()
        .zip(dropped)
        .filter(|(_, d)| d.is_none())
        .map(|(i, _)| i)
}

/// Drops every kept item of a priority lower than `keep_at_least`.
fn drop_below(items: &[Item], dropped: &mut [Option<Rule>], keep_at_least: Priority, rule: Rule) {
    for (item, slot) in items.iter().zip(dropped.iter_mut()) {
        if slot.is_none() && item.priority > keep_at_least {
            *slot = Some(rule);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Priority::{High, Low, Medium};

    fn items(spec: &[(Priority, u64)]) -> Vec<Item> {
        spec.iter()
            .map(|&(priority, lines)| Item {
                priority,
                lines,
                tokens: Some(lines * 10),
                bytes: lines * 40,
            })
            .collect()
    }

    #[test]
    fn exactly_five_high_medium_files_keep_the_low_ones() {
        let a = allocate(
            &items(&[
                (High, 1),
                (High, 1),
                (Medium, 1),
                (Medium, 1),
                (Medium, 1),
                (Low, 1),
            ]),
            Caps::default(),
        );
        assert_eq!(a.status, Status::Ready);
        assert!(a.dropped.iter().all(Option::is_none));
    }

    #[test]
    fn six_high_medium_files_drop_every_low() {
        let a = allocate(
            &items(&[
                (High, 1),
                (Low, 1),
                (High, 1),
                (Medium, 1),
                (Medium, 1),
                (Medium, 1),
                (Medium, 1),
                (Low, 2),
            ]),
            Caps::default(),
        );
        assert_eq!(a.dropped[1], Some(Rule::SoftCap));
        assert_eq!(a.dropped[7], Some(Rule::SoftCap));
        assert_eq!(a.dropped.iter().filter(|d| d.is_some()).count(), 2);
        assert!(
            a.decisions[0].contains("6 high+medium"),
            "{:?}",
            a.decisions
        );
    }

    #[test]
    fn exactly_4000_lines_is_within_the_cap() {
        let a = allocate(&items(&[(High, 3000), (Medium, 1000)]), Caps::default());
        assert_eq!(a.status, Status::Ready);
        assert!(a.dropped.iter().all(Option::is_none));
    }

    #[test]
    fn one_line_over_drops_medium_and_low() {
        let a = allocate(
            &items(&[(High, 3000), (Medium, 1000), (Low, 1)]),
            Caps::default(),
        );
        assert_eq!(a.status, Status::Ready);
        assert_eq!(
            a.dropped,
            vec![None, Some(Rule::HardCap), Some(Rule::HardCap)]
        );
    }

    #[test]
    fn one_huge_high_file_is_over_budget() {
        let a = allocate(&items(&[(High, 4001), (Medium, 10)]), Caps::default());
        assert_eq!(a.status, Status::OverBudget);
        assert_eq!(
            a.overrun,
            Some(Overrun {
                measure: "lines",
                total: 4001,
                cap: 4000
            })
        );
    }

    #[test]
    fn all_low_entries_survive_without_pressure() {
        let a = allocate(&items(&[(Low, 10), (Low, 20)]), Caps::default());
        assert_eq!(a.status, Status::Ready);
    }

    #[test]
    fn all_low_entries_over_the_line_cap_become_over_budget_not_blocked() {
        let a = allocate(&items(&[(Low, 3000), (Low, 2000)]), Caps::default());
        assert_eq!(a.status, Status::OverBudget);
        assert_eq!(a.overrun, None);
        assert!(a.dropped.iter().all(|d| *d == Some(Rule::HardCap)));
    }

    #[test]
    fn nothing_at_all_is_blocked() {
        assert_eq!(allocate(&[], Caps::default()).status, Status::Blocked);
    }

    #[test]
    fn the_byte_cap_drops_below_high_then_overruns() {
        let caps = Caps {
            max_lines: 0,
            max_bytes: 5_000,
            ..Caps::default()
        };
        // 40 bytes a line (see `items`): 4000 + 2000 bytes.
        let a = allocate(&items(&[(High, 100), (Medium, 50)]), caps);
        assert_eq!(a.status, Status::Ready);
        assert_eq!(a.dropped, vec![None, Some(Rule::ByteCap)]);
        assert!(
            a.decisions[0].contains("exceed the consumer's byte cap of 5000"),
            "{:?}",
            a.decisions
        );
        let a = allocate(&items(&[(High, 200)]), caps);
        assert_eq!(a.status, Status::OverBudget);
        assert_eq!(a.overrun.unwrap().measure, "bytes");
    }

    #[test]
    fn zero_means_no_cap() {
        let caps = Caps {
            max_files: 0,
            max_lines: 0,
            max_tokens: 0,
            max_bytes: 0,
            file_bytes: 0,
        };
        let a = allocate(&items(&[(High, 90_000), (Low, 90_000)]), caps);
        assert_eq!(a.status, Status::Ready);
        assert!(a.dropped.iter().all(Option::is_none));
    }

    #[test]
    fn token_cap_drops_like_the_line_cap() {
        let caps = Caps {
            max_tokens: 150,
            ..Caps::default()
        };
        let a = allocate(&items(&[(High, 10), (Medium, 10)]), caps);
        assert_eq!(a.dropped, vec![None, Some(Rule::TokenCap)]);
        let a = allocate(&items(&[(High, 20)]), caps);
        assert_eq!(a.status, Status::OverBudget);
    }

    #[test]
    fn ties_keep_every_entry_of_the_same_priority() {
        let a = allocate(&items(&[(High, 2000), (High, 2000)]), Caps::default());
        assert_eq!(a.status, Status::Ready);
    }
}
