//! The budget rules, in order (docs/budgets.md): the 5-file soft cap, the 4000-line hard cap, the
//! optional token cap (and a consumer's byte cap), then BLOCKED / OVER_BUDGET.
//!
//! Pure: receives each surviving entry's priority, lines and tokens, and optionally the
//! lower rungs of its ladder (its outline, an index line); returns which entries a rule
//! moved down the ladder or dropped, and the status. A high entry is never cut while a lower
//! one stays whole.
//!
//! The ladder ([`allocate_ladder`]): where a rule would drop the entries of a priority, it
//! first moves them down one rung at a time (every entry of the priority to its outline,
//! largest first, then to its index line, largest first), stopping as soon as the cap holds;
//! then it raises again every entry that fits higher up (so nothing sits lower than the caps
//! need). The soft cap counts files to read: its lows go straight to their index line.

use serde::Serialize;

use crate::model::{Caps, Priority};

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
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

/// A rung below an entry as selected: what it would cost there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rung {
    pub step: Step,
    pub lines: u64,
    /// Needed only when a token cap is set.
    pub tokens: Option<u64>,
    pub bytes: u64,
}

/// A rung of the ladder below the entry as selected (whole, or its sections).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// The file's outline (signatures, headings), as sections of the original file.
    Outline,
    /// Named in the prompt, no lines.
    Index,
}

impl Step {
    /// The rung in words.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Step::Outline => "its outline",
            Step::Index => "an index line",
        }
    }
}

/// How far down the ladder an entry was moved: to which rung, from how many lines, by
/// which rule (in the report, the lock and the curation lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Degraded {
    pub to: Step,
    /// The entry's lines as selected, before the cut.
    pub from_lines: u64,
    pub rule: Rule,
}

/// The decisions of [`allocate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    pub status: Status,
    /// Per item, the rule that dropped it.
    pub dropped: Vec<Option<Rule>>,
    /// Per item, the rung it was moved down to (an index into its lower rungs) and the rule
    /// that moved it.
    pub degraded: Vec<Option<(usize, Rule)>>,
    /// Messages for the report and the curation lines, with the numbers.
    pub decisions: Vec<String>,
    pub overrun: Option<Overrun>,
}

/// Applies the caps in order: soft cap, hard cap, token cap, byte cap; each drops every
/// entry below the priority it protects (the first round's rules, `--no-degrade`).
#[must_use]
pub fn allocate(items: &[Item], caps: Caps) -> Allocation {
    allocate_ladder(items, &[], caps)
}

/// [`allocate`] with each item's lower rungs (`lower[i]`, in ladder order; missing or empty:
/// the item can only be dropped). See the module's documentation.
#[must_use]
pub fn allocate_ladder(items: &[Item], lower: &[Vec<Rung>], caps: Caps) -> Allocation {
    if lower.iter().all(Vec::is_empty) {
        return drop_only(items, caps);
    }
    Ladder::new(items, lower, caps).run()
}

/// The first round's rules: a cap drops whole priorities.
fn drop_only(items: &[Item], caps: Caps) -> Allocation {
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
        degraded: vec![None; items.len()],
        dropped,
        decisions,
        overrun,
    }
}

/// The measure a cap counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Measure {
    Lines,
    Tokens,
    Bytes,
}

impl Measure {
    fn name(self) -> &'static str {
        match self {
            Measure::Lines => "lines",
            Measure::Tokens => "tokens",
            Measure::Bytes => "bytes",
        }
    }

    fn rule(self) -> Rule {
        match self {
            Measure::Lines => Rule::HardCap,
            Measure::Tokens => Rule::TokenCap,
            Measure::Bytes => Rule::ByteCap,
        }
    }

    fn cap(self, caps: Caps) -> u64 {
        match self {
            Measure::Lines => caps.max_lines,
            Measure::Tokens => caps.max_tokens,
            Measure::Bytes => caps.max_bytes,
        }
    }

    /// The cap as the report names it.
    fn flag(self) -> &'static str {
        match self {
            Measure::Lines => "--max-lines",
            // Not a flag: the consumer's own cap (Trellis' `.trellis/config.yaml`).
            Measure::Bytes => "the consumer's byte cap of",
            Measure::Tokens => "--max-tokens",
        }
    }
}

const MEASURES: [Measure; 3] = [Measure::Lines, Measure::Tokens, Measure::Bytes];

/// The ladder's working state: where each item stands (0: as selected, `k`: its lower rung
/// `k - 1`), and which rule put it there.
struct Ladder<'a> {
    items: &'a [Item],
    lower: &'a [Vec<Rung>],
    caps: Caps,
    at: Vec<usize>,
    by: Vec<Option<Rule>>,
    dropped: Vec<Option<Rule>>,
    decisions: Vec<String>,
    /// The totals of what stands, by measure (kept up to date by [`Ladder::set`]).
    totals: [u64; 3],
}

impl<'a> Ladder<'a> {
    fn new(items: &'a [Item], lower: &'a [Vec<Rung>], caps: Caps) -> Ladder<'a> {
        let mut ladder = Ladder {
            items,
            lower,
            caps,
            at: vec![0; items.len()],
            by: vec![None; items.len()],
            dropped: vec![None; items.len()],
            decisions: Vec::new(),
            totals: [0; 3],
        };
        for (t, m) in ladder.totals.iter_mut().zip(MEASURES) {
            *t = items
                .iter()
                .map(|i| match m {
                    Measure::Lines => i.lines,
                    Measure::Tokens => i.tokens.unwrap_or(0),
                    Measure::Bytes => i.bytes,
                })
                .sum();
        }
        ladder
    }

    /// Moves item `i` to rung `k`, keeping the totals.
    fn set(&mut self, i: usize, k: usize) {
        for (j, m) in MEASURES.into_iter().enumerate() {
            self.totals[j] = self.totals[j] - self.cost(i, self.at[i], m) + self.cost(i, k, m);
        }
        self.at[i] = k;
    }

    /// Drops item `i` by `rule`, keeping the totals.
    fn drop_item(&mut self, i: usize, rule: Rule) {
        for (j, m) in MEASURES.into_iter().enumerate() {
            self.totals[j] -= self.cost(i, self.at[i], m);
        }
        self.dropped[i] = Some(rule);
    }

    fn rungs(&self, i: usize) -> &[Rung] {
        self.lower.get(i).map_or(&[], Vec::as_slice)
    }

    /// Item `i`'s cost in `m` at rung `at` (0: as selected).
    fn cost(&self, i: usize, at: usize, m: Measure) -> u64 {
        let item = &self.items[i];
        let (lines, tokens, bytes) = match at {
            0 => (item.lines, item.tokens, item.bytes),
            k => {
                let r = &self.rungs(i)[k - 1];
                (r.lines, r.tokens, r.bytes)
            }
        };
        match m {
            Measure::Lines => lines,
            Measure::Tokens => tokens.unwrap_or(0),
            Measure::Bytes => bytes,
        }
    }

    fn total(&self, m: Measure) -> u64 {
        self.totals[m as usize]
    }

    fn over(&self, m: Measure) -> bool {
        let cap = m.cap(self.caps);
        cap > 0 && self.total(m) > cap
    }

    fn fits(&self) -> bool {
        MEASURES.iter().all(|&m| !self.over(m))
    }

    /// The rung of `step` below where item `i` stands, if it has one.
    fn rung_of(&self, i: usize, step: Step) -> Option<usize> {
        self.rungs(i)
            .iter()
            .position(|r| r.step == step)
            .map(|k| k + 1)
            .filter(|&k| k > self.at[i])
    }

    fn run(mut self) -> Allocation {
        let n = self.items.len();
        // 1. Soft cap: the lows give way, to their index line where they have one.
        let high_medium = self
            .items
            .iter()
            .filter(|i| i.priority != Priority::Low)
            .count() as u64;
        let lows: Vec<usize> = (0..n)
            .filter(|&i| self.items[i].priority == Priority::Low)
            .collect();
        if self.caps.max_files > 0 && high_medium > self.caps.max_files && !lows.is_empty() {
            let mut indexed = 0;
            for &i in &lows {
                match self.rung_of(i, Step::Index) {
                    Some(k) => {
                        self.set(i, k);
                        self.by[i] = Some(Rule::SoftCap);
                        indexed += 1;
                    }
                    None => self.drop_item(i, Rule::SoftCap),
                }
            }
            self.decisions.push(format!(
                "soft cap: {high_medium} high+medium files exceed --max-files {}; {}",
                self.caps.max_files,
                moved_words("low ", indexed, 0, lows.len() - indexed)
            ));
        }
        // 2. The caps on lines, tokens and bytes: lows, then mediums, down the ladder.
        let mut overrun = None;
        let mut cuts = Vec::new();
        for m in MEASURES {
            if !self.over(m) {
                continue;
            }
            let total = self.total(m);
            let mut dropped = 0;
            'cut: for priority in [Priority::Low, Priority::Medium] {
                for step in [Step::Outline, Step::Index] {
                    let mut order: Vec<usize> = (0..n)
                        .filter(|&i| {
                            self.items[i].priority == priority
                                && self.dropped[i].is_none()
                                && self.rung_of(i, step).is_some()
                        })
                        .collect();
                    // Largest first; ties by position.
                    order.sort_by_key(|&i| (std::cmp::Reverse(self.cost(i, self.at[i], m)), i));
                    for i in order {
                        if let Some(k) = self.rung_of(i, step) {
                            self.set(i, k);
                            self.by[i] = Some(m.rule());
                        }
                        if !self.over(m) {
                            break 'cut;
                        }
                    }
                }
                // What has no rung left to go to is dropped, as the first round does.
                for i in 0..n {
                    if self.items[i].priority == priority
                        && self.dropped[i].is_none()
                        && self.at[i] == 0
                        && self.rungs(i).is_empty()
                    {
                        self.drop_item(i, m.rule());
                        dropped += 1;
                    }
                }
                if !self.over(m) {
                    break;
                }
            }
            cuts.push((m, total, dropped));
            if self.over(m) {
                overrun = Some(Overrun {
                    measure: m.name(),
                    total: self.total(m),
                    cap: m.cap(self.caps),
                });
                break;
            }
        }
        // 3. Raise again what fits higher up: in priority order, then position, each to the
        // highest rung that keeps every cap (the soft cap's lows stay named only).
        if overrun.is_none() {
            self.raise();
        }
        for (m, total, dropped) in cuts {
            // What stands where now (an entry outlined, then indexed, counts once).
            let (outlined, indexed) = self.standing(m.rule());
            if outlined + indexed + dropped > 0 {
                self.decisions.push(format!(
                    "{}: {total} {} exceed {} {}; {}",
                    m.rule().describe(),
                    m.name(),
                    m.flag(),
                    m.cap(self.caps),
                    moved_words("", indexed, outlined, dropped)
                ));
            }
        }
        let survivors = (0..n)
            .filter(|&i| self.dropped[i].is_none() && !self.is_index(i))
            .count();
        let cut = (0..n).any(|i| self.dropped[i].is_some() || self.by[i].is_some());
        let status = if overrun.is_some() {
            Status::OverBudget
        } else if survivors == 0 {
            if cut {
                Status::OverBudget
            } else {
                Status::Blocked
            }
        } else {
            Status::Ready
        };
        let degraded = (0..n)
            .map(|i| match (self.at[i], self.by[i]) {
                (k, Some(rule)) if k > 0 => Some((k - 1, rule)),
                _ => None,
            })
            .collect();
        Allocation {
            status,
            dropped: self.dropped,
            degraded,
            decisions: self.decisions,
            overrun,
        }
    }

    fn is_index(&self, i: usize) -> bool {
        self.at[i] > 0 && self.rungs(i)[self.at[i] - 1].step == Step::Index
    }

    /// How many entries `rule` left at an outline and at an index line.
    fn standing(&self, rule: Rule) -> (usize, usize) {
        let mut out = (0, 0);
        for i in 0..self.items.len() {
            if self.by[i] == Some(rule) && self.at[i] > 0 {
                if self.is_index(i) {
                    out.1 += 1;
                } else {
                    out.0 += 1;
                }
            }
        }
        out
    }

    /// How far down item `i` stands: 0 as selected, 1 at its outline, 2 at its index line.
    fn depth(&self, i: usize, at: usize) -> u8 {
        match at {
            0 => 0,
            k => match self.rungs(i)[k - 1].step {
                Step::Outline => 1,
                Step::Index => 2,
            },
        }
    }

    /// Raises every entry a cap moved down to the highest rung that keeps every cap, in
    /// priority order, then position; never above an entry of a higher priority that stays
    /// cut (a low is not whole while a medium is outlined). The soft cap's lows stay named
    /// only. One pass is enough: raising an entry only adds to the totals, so what did not
    /// fit once never fits later in the pass.
    fn raise(&mut self) {
        let mut order: Vec<usize> = (0..self.items.len())
            .filter(|&i| self.at[i] > 0 && self.by[i] != Some(Rule::SoftCap))
            .collect();
        order.sort_by_key(|&i| (self.items[i].priority, i));
        // The deepest cut among the higher priorities seen so far, and this priority's.
        let (mut floor, mut deepest, mut current) = (0u8, 0u8, None);
        for i in order {
            if current != Some(self.items[i].priority) {
                floor = floor.max(deepest);
                current = Some(self.items[i].priority);
            }
            let was = self.at[i];
            for k in 0..was {
                if self.depth(i, k) < floor {
                    continue;
                }
                self.set(i, k);
                if self.fits() {
                    break;
                }
                self.set(i, was);
            }
            if self.at[i] == 0 {
                self.by[i] = None;
            }
            deepest = deepest.max(self.depth(i, self.at[i]));
        }
    }
}

/// `2 entries cut to their outline, 1 named only (not read), dropped 3 entries` (`which`:
/// an adjective, `"low "`, or nothing).
fn moved_words(which: &str, indexed: usize, outlined: usize, dropped: usize) -> String {
    let entries = |n: usize| format!("{n} {which}entr{}", if n == 1 { "y" } else { "ies" });
    let mut parts = Vec::new();
    if outlined > 0 {
        let their = if outlined == 1 { "its" } else { "their" };
        parts.push(format!("{} cut to {their} outline", entries(outlined)));
    }
    if indexed > 0 {
        parts.push(format!("{} named only (not read)", entries(indexed)));
    }
    if dropped > 0 {
        parts.push(format!("dropped {}", entries(dropped)));
    }
    parts.join(", ")
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
            degrade: true,
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
    /// Each item with an outline of a tenth of its lines and an index line.
    fn ladder(items: &[Item]) -> Vec<Vec<Rung>> {
        items
            .iter()
            .map(|i| {
                if i.priority == High {
                    return Vec::new();
                }
                vec![
                    Rung {
                        step: Step::Outline,
                        lines: i.lines / 10,
                        tokens: i.tokens.map(|t| t / 10),
                        bytes: i.bytes / 10,
                    },
                    Rung {
                        step: Step::Index,
                        lines: 0,
                        tokens: Some(0),
                        bytes: 0,
                    },
                ]
            })
            .collect()
    }

    fn steps(a: &Allocation, lower: &[Vec<Rung>]) -> Vec<Option<Step>> {
        a.degraded
            .iter()
            .zip(lower)
            .map(|(d, l)| d.map(|(k, _)| l[k].step))
            .collect()
    }

    #[test]
    fn the_ladder_outlines_the_largest_low_first_and_stops_when_it_fits() {
        let it = items(&[(High, 3000), (Medium, 500), (Low, 600), (Low, 200)]);
        let lower = ladder(&it);
        let a = allocate_ladder(&it, &lower, Caps::default());
        assert_eq!(a.status, Status::Ready);
        assert!(a.dropped.iter().all(Option::is_none));
        // 4300 lines: the 600-line low to its outline (60) is enough.
        assert_eq!(
            steps(&a, &lower),
            vec![None, None, Some(Step::Outline), None]
        );
        assert_eq!(a.degraded[2].unwrap().1, Rule::HardCap);
        assert!(
            a.decisions[0].contains("1 entry cut to its outline"),
            "{:?}",
            a.decisions
        );
    }

    #[test]
    fn the_ladder_takes_every_low_down_before_any_medium() {
        let it = items(&[(High, 3500), (Medium, 800), (Low, 300), (Low, 100)]);
        let lower = ladder(&it);
        let a = allocate_ladder(&it, &lower, Caps::default());
        assert_eq!(a.status, Status::Ready);
        // 4700 lines: both lows to their index lines (4300) are not enough, the medium to its
        // outline (80) is; then the lows rise again, but no higher than the medium stands.
        assert_eq!(
            steps(&a, &lower),
            vec![
                None,
                Some(Step::Outline),
                Some(Step::Outline),
                Some(Step::Outline)
            ]
        );
        let lines: u64 = (0..it.len())
            .map(|i| match a.degraded[i] {
                None => it[i].lines,
                Some((k, _)) => lower[i][k].lines,
            })
            .sum();
        assert_eq!(lines, 3500 + 80 + 30 + 10);
    }

    #[test]
    fn highs_are_never_cut_and_alone_over_is_over_budget() {
        let it = items(&[(High, 4500), (Medium, 100)]);
        let lower = ladder(&it);
        let a = allocate_ladder(&it, &lower, Caps::default());
        assert_eq!(a.status, Status::OverBudget);
        assert_eq!(a.overrun.unwrap().total, 4500);
        assert_eq!(a.degraded[0], None);
    }

    #[test]
    fn the_soft_cap_names_the_lows_rather_than_dropping_them() {
        let it = items(&[
            (High, 1),
            (High, 1),
            (Medium, 1),
            (Medium, 1),
            (Medium, 1),
            (Medium, 1),
            (Low, 1),
        ]);
        let lower = ladder(&it);
        let a = allocate_ladder(&it, &lower, Caps::default());
        assert_eq!(a.status, Status::Ready);
        assert_eq!(steps(&a, &lower)[6], Some(Step::Index));
        assert_eq!(a.degraded[6].unwrap().1, Rule::SoftCap);
        assert!(a.dropped.iter().all(Option::is_none));
        assert!(
            a.decisions[0].contains("1 low entry named only (not read)"),
            "{:?}",
            a.decisions
        );
    }

    #[test]
    fn without_rungs_the_ladder_is_the_first_rounds_drop() {
        let it = items(&[(High, 3000), (Medium, 1000), (Low, 1)]);
        assert_eq!(
            allocate_ladder(&it, &[Vec::new(), Vec::new(), Vec::new()], Caps::default()),
            allocate(&it, Caps::default())
        );
    }

    #[test]
    fn everything_indexed_is_over_budget_not_ready() {
        let caps = Caps {
            max_lines: 5,
            ..Caps::default()
        };
        let it = items(&[(Low, 3000), (Medium, 2000)]);
        let lower = ladder(&it);
        let a = allocate_ladder(&it, &lower, caps);
        assert_eq!(a.status, Status::OverBudget);
        assert_eq!(
            steps(&a, &lower),
            vec![Some(Step::Index), Some(Step::Index)]
        );
    }
}
