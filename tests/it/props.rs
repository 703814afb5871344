//! Property tests over the pure library (no binary): the budget rules, section ranges,
//! line counting and path normalisation.

use std::collections::BTreeSet;

use curate::model::Caps;
use curate::model::paths::normalize;
use curate::model::{Priority, Range, Sections};
use curate::stages::budget::{Item, Rule, Rung, Status, Step, allocate, allocate_ladder};
use curate::stages::measure::{count_lines, selected};
use proptest::prelude::*;
use proptest::test_runner::Config;

/// The default 256 cases, without writing regression files into the source tree (known
/// failures are kept as explicit cases below instead).
fn config() -> Config {
    Config {
        failure_persistence: None,
        ..Config::default()
    }
}

// ---------------------------------------------------------------------------------------
// budget::allocate

fn priority() -> impl Strategy<Value = Priority> {
    prop_oneof![
        Just(Priority::High),
        Just(Priority::Medium),
        Just(Priority::Low)
    ]
}

fn item() -> impl Strategy<Value = Item> {
    (
        priority(),
        0u64..2500,
        proptest::option::weighted(0.9, 0u64..20_000),
        0u64..100_000,
    )
        .prop_map(|(priority, lines, tokens, bytes)| Item {
            priority,
            lines,
            tokens,
            bytes,
        })
}

/// A cap: often `0` (no cap), else small enough to bite.
fn cap(max: u64) -> impl Strategy<Value = u64> {
    prop_oneof![1 => Just(0u64), 3 => 1..max]
}

fn caps() -> impl Strategy<Value = Caps> {
    (cap(10), cap(10_000), cap(60_000), cap(200_000)).prop_map(
        |(max_files, max_lines, max_tokens, max_bytes)| Caps {
            max_files,
            max_lines,
            max_tokens,
            max_bytes,
            file_bytes: 0,
            degrade: true,
        },
    )
}

fn items() -> impl Strategy<Value = Vec<Item>> {
    proptest::collection::vec(item(), 0..14)
}

/// The kept items as a sorted multiset of (priority, lines, tokens).
fn kept_multiset(items: &[Item], dropped: &[Option<curate::stages::budget::Rule>]) -> Vec<Item> {
    let mut kept: Vec<Item> = items
        .iter()
        .zip(dropped)
        .filter(|(_, d)| d.is_none())
        .map(|(i, _)| *i)
        .collect();
    kept.sort_by_key(|i| (i.priority, i.lines, i.tokens));
    kept
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn budget_never_keeps_a_lower_priority_over_a_higher_one(items in items(), caps in caps()) {
        let a = allocate(&items, caps);
        prop_assert_eq!(a.dropped.len(), items.len());
        for (i, di) in items.iter().zip(&a.dropped) {
            for (j, dj) in items.iter().zip(&a.dropped) {
                if di.is_some() && dj.is_none() {
                    // `High < Medium < Low`: a kept item is never of a lower priority than a
                    // dropped one.
                    prop_assert!(
                        j.priority <= i.priority,
                        "kept {:?} while dropping {:?} ({:?})", j, i, a
                    );
                }
            }
        }
    }

    #[test]
    fn budget_ready_means_within_every_cap(items in items(), caps in caps()) {
        let a = allocate(&items, caps);
        if a.status == Status::Ready {
            let kept = kept_multiset(&items, &a.dropped);
            prop_assert!(!kept.is_empty());
            let lines: u64 = kept.iter().map(|i| i.lines).sum();
            let tokens: u64 = kept.iter().map(|i| i.tokens.unwrap_or(0)).sum();
            if caps.max_lines > 0 {
                prop_assert!(lines <= caps.max_lines, "{} lines > {}", lines, caps.max_lines);
            }
            if caps.max_tokens > 0 {
                prop_assert!(tokens <= caps.max_tokens, "{} tokens > {}", tokens, caps.max_tokens);
            }
            let bytes: u64 = kept.iter().map(|i| i.bytes).sum();
            if caps.max_bytes > 0 {
                prop_assert!(bytes <= caps.max_bytes, "{} bytes > {}", bytes, caps.max_bytes);
            }
        } else {
            // Not ready: either nothing came in (BLOCKED) or a cap could not be met.
            prop_assert_eq!(a.status == Status::Blocked, items.is_empty());
        }
    }

    #[test]
    fn budget_with_no_caps_drops_nothing(items in items()) {
        let none = Caps { max_files: 0, max_lines: 0, max_tokens: 0, max_bytes: 0, file_bytes: 0, degrade: true };
        let a = allocate(&items, none);
        prop_assert!(a.dropped.iter().all(Option::is_none), "{:?}", a);
        prop_assert!(a.overrun.is_none());
        let expected = if items.is_empty() { Status::Blocked } else { Status::Ready };
        prop_assert_eq!(a.status, expected);
    }

    #[test]
    fn budget_drops_nothing_when_everything_fits(items in items(), caps in caps()) {
        let high_medium = items.iter().filter(|i| i.priority != Priority::Low).count() as u64;
        let lines: u64 = items.iter().map(|i| i.lines).sum();
        let tokens: u64 = items.iter().map(|i| i.tokens.unwrap_or(0)).sum();
        let bytes: u64 = items.iter().map(|i| i.bytes).sum();
        let fits = (caps.max_files == 0 || high_medium <= caps.max_files)
            && (caps.max_lines == 0 || lines <= caps.max_lines)
            && (caps.max_tokens == 0 || tokens <= caps.max_tokens)
            && (caps.max_bytes == 0 || bytes <= caps.max_bytes);
        let a = allocate(&items, caps);
        if fits {
            prop_assert!(a.dropped.iter().all(Option::is_none), "{:?}", a);
        }
    }

    #[test]
    fn budget_result_does_not_depend_on_input_order(
        (items, shuffled) in items().prop_flat_map(|v| (Just(v.clone()), Just(v).prop_shuffle())),
        caps in caps(),
    ) {
        let a = allocate(&items, caps);
        let b = allocate(&shuffled, caps);
        prop_assert_eq!(a.status, b.status);
        prop_assert_eq!(a.overrun, b.overrun);
        prop_assert_eq!(kept_multiset(&items, &a.dropped), kept_multiset(&shuffled, &b.dropped));
    }

    #[test]
    fn budget_of_nothing_is_blocked(caps in caps()) {
        let a = allocate(&[], caps);
        prop_assert_eq!(a.status, Status::Blocked);
        prop_assert!(a.dropped.is_empty());
    }
}

// ---------------------------------------------------------------------------------------
// budget::allocate_ladder

/// Items with their ladders: a medium or low has an outline (often, at most as large as the
/// entry) and always an index line; a high has none.
fn laddered() -> impl Strategy<Value = (Vec<Item>, Vec<Vec<Rung>>)> {
    proptest::collection::vec((item(), proptest::option::weighted(0.8, 0u64..=100)), 0..14)
        .prop_map(|v| {
            let (items, lower): (Vec<Item>, Vec<Vec<Rung>>) = v
                .into_iter()
                .map(|(i, pct)| {
                    let mut lower = Vec::new();
                    if i.priority != Priority::High {
                        if let Some(p) = pct {
                            lower.push(Rung {
                                step: Step::Outline,
                                lines: i.lines * p / 100,
                                tokens: i.tokens.map(|t| t * p / 100),
                                bytes: i.bytes * p / 100,
                            });
                        }
                        lower.push(Rung {
                            step: Step::Index,
                            lines: 0,
                            tokens: Some(0),
                            bytes: 0,
                        });
                    }
                    (i, lower)
                })
                .unzip();
            (items, lower)
        })
}

/// An entry's cost `(lines, tokens, bytes)` and depth.
type Standing = Option<((u64, u64, u64), u8)>;

/// Where each entry stands: its cost `(lines, tokens, bytes)` and depth (0 as selected, 1
/// outline, 2 index), `None` when dropped.
fn standing(
    items: &[Item],
    lower: &[Vec<Rung>],
    a: &curate::stages::budget::Allocation,
    at: &[usize],
) -> Vec<Standing> {
    (0..items.len())
        .map(|i| {
            if a.dropped[i].is_some() {
                return None;
            }
            Some(match at[i] {
                0 => (
                    (items[i].lines, items[i].tokens.unwrap_or(0), items[i].bytes),
                    0,
                ),
                k => {
                    let r = lower[i][k - 1];
                    let depth = if r.step == Step::Outline { 1 } else { 2 };
                    ((r.lines, r.tokens.unwrap_or(0), r.bytes), depth)
                }
            })
        })
        .collect()
}

fn positions(a: &curate::stages::budget::Allocation) -> Vec<usize> {
    a.degraded
        .iter()
        .map(|d| d.map_or(0, |(k, _)| k + 1))
        .collect()
}

fn within(costs: impl Iterator<Item = (u64, u64, u64)>, caps: Caps) -> bool {
    let (mut l, mut t, mut b) = (0, 0, 0);
    for (x, y, z) in costs {
        l += x;
        t += y;
        b += z;
    }
    (caps.max_lines == 0 || l <= caps.max_lines)
        && (caps.max_tokens == 0 || t <= caps.max_tokens)
        && (caps.max_bytes == 0 || b <= caps.max_bytes)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_ladder_keeps_the_caps_and_cuts_no_more_than_it_must((items, lower) in laddered(), caps in caps()) {
        let a = allocate_ladder(&items, &lower, caps);
        let at = positions(&a);
        let stand = standing(&items, &lower, &a, &at);
        // Highs are never cut; every cut has its rule.
        for (i, item) in items.iter().enumerate() {
            if item.priority == Priority::High {
                prop_assert!(a.degraded[i].is_none() && a.dropped[i].is_none(), "{:?}", a);
            }
        }
        if a.status == Status::Ready {
            prop_assert!(within(stand.iter().flatten().map(|(c, _)| *c), caps), "{:?}", a);
            // Nothing stands lower than it must: each entry a cap moved down exceeds a cap
            // one rung higher, or would stand above an entry of a higher priority still cut.
            for i in 0..items.len() {
                let Some((_, rule)) = a.degraded[i] else { continue };
                if rule == Rule::SoftCap {
                    continue;
                }
                let floor = (0..items.len())
                    .filter(|&j| items[j].priority < items[i].priority)
                    .filter_map(|j| stand[j].map(|(_, d)| d))
                    .max()
                    .unwrap_or(0);
                let k = at[i] - 1;
                let (up_cost, up_depth) = if k == 0 {
                    ((items[i].lines, items[i].tokens.unwrap_or(0), items[i].bytes), 0u8)
                } else {
                    let r = lower[i][k - 1];
                    ((r.lines, r.tokens.unwrap_or(0), r.bytes), if r.step == Step::Outline { 1 } else { 2 })
                };
                if up_depth < floor {
                    continue;
                }
                let mut costs: Vec<(u64, u64, u64)> = stand.iter().flatten().map(|(c, _)| *c).collect();
                let mine = stand[i].unwrap().0;
                let pos = costs.iter().position(|c| *c == mine).unwrap();
                costs[pos] = up_cost;
                prop_assert!(!within(costs.into_iter(), caps), "entry {} could stand a rung higher: {:?}", i, a);
            }
            // Idempotent: what it kept, at the rungs it chose, is kept as it is.
            let (again, again_lower): (Vec<Item>, Vec<Vec<Rung>>) = (0..items.len())
                .filter(|&i| stand[i].is_some_and(|(_, d)| d < 2))
                .map(|i| {
                    let ((lines, _, bytes), _) = stand[i].unwrap();
                    let tokens = if at[i] == 0 { items[i].tokens } else { lower[i][at[i] - 1].tokens };
                    (
                        Item { priority: items[i].priority, lines, tokens, bytes },
                        lower[i][at[i]..].to_vec(),
                    )
                })
                .unzip();
            let b = allocate_ladder(&again, &again_lower, caps);
            prop_assert!(b.degraded.iter().all(Option::is_none) && b.dropped.iter().all(Option::is_none), "{:?} then {:?}", a, b);
        }
        // No priority inversion: an entry cut to a depth never has a lower-priority one
        // standing higher.
        for i in 0..items.len() {
            for j in 0..items.len() {
                if let (Some((_, di)), Some((_, dj))) = (stand[i], stand[j])
                    && items[i].priority < items[j].priority
                {
                    prop_assert!(dj >= di, "{:?} stands above {:?}: {:?}", items[j], items[i], a);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// model::Sections::ranges

/// Raw ranges with `1 <= start <= end`, small enough to enumerate their lines.
fn raw_ranges() -> impl Strategy<Value = Vec<Range>> {
    proptest::collection::vec(
        (1u64..300, 0u64..40).prop_map(|(s, len)| [s, s + len]),
        0..12,
    )
}

fn lines_of(ranges: &[Range]) -> BTreeSet<u64> {
    ranges.iter().flat_map(|&[s, e]| s..=e).collect()
}

fn assert_normalised(ranges: &[Range]) -> Result<(), TestCaseError> {
    for &[s, e] in ranges {
        prop_assert!(s <= e, "reversed range in {:?}", ranges);
    }
    for w in ranges.windows(2) {
        // Sorted, not overlapping, not adjacent: a gap of at least one line between ranges.
        prop_assert!(
            w[0][1].saturating_add(1) < w[1][0],
            "unsorted, overlapping or adjacent: {:?}",
            ranges
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn sections_are_sorted_merged_and_cover_exactly_the_input(raw in raw_ranges()) {
        let Sections::Ranges(out) = Sections::ranges(raw.clone()) else {
            return Err(TestCaseError::fail("a range list became a whole file"));
        };
        assert_normalised(&out)?;
        prop_assert_eq!(lines_of(&out), lines_of(&raw));
        // Normalising again changes nothing.
        prop_assert_eq!(Sections::ranges(out.clone()), Sections::Ranges(out));
    }

    #[test]
    fn sections_near_the_top_of_u64_do_not_overflow(
        raw in proptest::collection::vec(
            (0u64..50, 0u64..50).prop_map(|(a, b)| {
                let s = u64::MAX - a.max(b);
                [s, u64::MAX - a.min(b)]
            }),
            0..8,
        ),
        low in raw_ranges(),
    ) {
        let all: Vec<Range> = raw.iter().chain(&low).copied().collect();
        let Sections::Ranges(out) = Sections::ranges(all.clone()) else {
            return Err(TestCaseError::fail("a range list became a whole file"));
        };
        assert_normalised(&out)?;
        let covered: u128 = out.iter().map(|&[s, e]| u128::from(e - s) + 1).sum();
        let distinct_top: BTreeSet<u64> = raw.iter().flat_map(|&[s, e]| s..=e).collect();
        prop_assert_eq!(covered, (lines_of(&low).len() + distinct_top.len()) as u128);
    }

    #[test]
    fn union_covers_both_and_whole_wins(a in raw_ranges(), b in raw_ranges()) {
        let sa = Sections::ranges(a.clone());
        let sb = Sections::ranges(b.clone());
        let u = sa.union(&sb);
        let Sections::Ranges(out) = &u else {
            return Err(TestCaseError::fail("a union of lists became a whole file"));
        };
        assert_normalised(out)?;
        let mut expected = lines_of(&a);
        expected.extend(lines_of(&b));
        prop_assert_eq!(lines_of(out), expected);
        prop_assert_eq!(sa.union(&Sections::Whole), Sections::Whole);
        prop_assert_eq!(Sections::Whole.union(&sb), Sections::Whole);
    }

    #[test]
    fn clamp_and_line_count_agree_with_the_lines_selected(raw in raw_ranges(), file_lines in 0u64..400) {
        let s = Sections::ranges(raw.clone());
        let inside: BTreeSet<u64> = lines_of(&raw).into_iter().filter(|&n| n <= file_lines).collect();
        prop_assert_eq!(s.line_count(file_lines), inside.len() as u64);
        let c = s.clamp(file_lines);
        let Sections::Ranges(kept) = &c.sections else {
            return Err(TestCaseError::fail("clamping a list gave a whole file"));
        };
        assert_normalised(kept)?;
        prop_assert_eq!(lines_of(kept), inside);
        prop_assert!(c.removed.iter().all(|&[st, _]| st > file_lines));
        prop_assert!(c.cut.iter().all(|&[st, e]| st <= file_lines && e > file_lines));
    }
}

// ---------------------------------------------------------------------------------------
// measure::count_lines

/// Text made mostly of line ends, so the edge cases (empty lines, `\r\n`, a lone `\r`, no
/// final newline) come up often; sometimes invalid UTF-8.
fn text_bytes() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        prop_oneof![
            3 => Just(b"\n".to_vec()),
            2 => Just(b"\r\n".to_vec()),
            1 => Just(b"\r".to_vec()),
            3 => "[a-z ]{1,6}".prop_map(String::into_bytes),
            1 => Just(vec![0xff, 0xfe]),
            1 => Just("é中".as_bytes().to_vec()),
        ],
        0..30,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn count_lines_counts_as_an_editor_shows(bytes in text_bytes()) {
        // An independent reference: `str::lines` (ends at `\n`, a `\r\n` is one end, a final
        // line without `\n` counts, no line after a final `\n`), on the lossy text.
        let expected = String::from_utf8_lossy(&bytes).lines().count() as u64;
        prop_assert_eq!(count_lines(&bytes), expected);
    }

    #[test]
    fn count_lines_of_joined_text_adds_up(a in text_bytes(), b in text_bytes()) {
        // Joining after a complete last line adds the line counts.
        let mut a = a;
        if !a.is_empty() && a.last() != Some(&b'\n') {
            a.push(b'\n');
        }
        let joined = [a.clone(), b.clone()].concat();
        prop_assert_eq!(count_lines(&joined), count_lines(&a) + count_lines(&b));
    }

    #[test]
    fn selected_text_has_exactly_the_lines_the_sections_count(bytes in text_bytes(), raw in raw_ranges()) {
        let file_lines = count_lines(&bytes);
        let whole = selected(&bytes, &Sections::Whole);
        prop_assert_eq!(whole.as_ref(), bytes.as_slice());
        let s = Sections::ranges(raw.iter().map(|&[a, b]| [a.min(40), b.min(40)]).collect());
        let text = selected(&bytes, &s);
        prop_assert_eq!(count_lines(&text), s.line_count(file_lines));
    }
}

// ---------------------------------------------------------------------------------------
// paths::normalize

/// Paths built from the pieces that matter: names, `.`, `..`, separators of both kinds,
/// drive-like and colon-holding segments.
fn path_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            4 => "[a-zA-Z0-9_-]{1,4}",
            2 => Just("/".to_owned()),
            1 => Just("\\".to_owned()),
            2 => Just(".".to_owned()),
            2 => Just("..".to_owned()),
            1 => Just(":".to_owned()),
            1 => "[a-zA-Z]:",
            1 => Just("*".to_owned()),
            1 => Just("...".to_owned()),
        ],
        0..14,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn normalized_paths_stay_inside_and_have_no_odd_segments(p in path_text()) {
        if let Ok(n) = normalize(&p) {
            prop_assert!(!n.is_empty());
            prop_assert!(!n.starts_with('/'), "{:?} -> {:?}", p, n);
            prop_assert!(!n.contains('\\'), "{:?} -> {:?}", p, n);
            for segment in n.split('/') {
                prop_assert!(!segment.is_empty(), "{:?} -> {:?}: empty segment", p, n);
                prop_assert!(segment != "..", "{:?} -> {:?}: `..` segment", p, n);
                prop_assert!(segment != ".", "{:?} -> {:?}: `.` segment", p, n);
            }
        }
    }

    #[test]
    fn normalize_refuses_what_climbs_out(p in path_text()) {
        // Track the depth of the folder each segment lands in: going below 0 escapes.
        let unified = p.replace('\\', "/");
        let mut depth: i64 = 0;
        let mut climbs = false;
        for segment in unified.split('/') {
            match segment {
                "" | "." => {}
                ".." => {
                    depth -= 1;
                    climbs |= depth < 0;
                }
                _ => depth += 1,
            }
        }
        if climbs {
            prop_assert!(normalize(&p).is_err(), "{:?} climbs out but was accepted", p);
        }
        if unified.starts_with('/') {
            prop_assert!(normalize(&p).is_err(), "{:?} is absolute but was accepted", p);
        }
    }

    // Regression: the drive-letter check looked at the raw text only, so `./C:/x`,
    // `a/../C:/x` or `.\\C:\\x` normalised to `C:/x` (a drive path on Windows: an escape).
    #[test]
    fn normalize_is_idempotent(p in path_text()) {
        if let Ok(n) = normalize(&p) {
            prop_assert_eq!(normalize(&n), Ok(n.clone()), "{:?} -> {:?}", p, n);
        }
    }

    #[test]
    fn normalized_paths_never_name_a_drive(p in path_text()) {
        if let Ok(n) = normalize(&p) {
            let b = n.as_bytes();
            prop_assert!(
                !(b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'),
                "{:?} -> {:?}", p, n
            );
        }
    }

    #[test]
    fn normalize_is_idempotent_away_from_drive_letters(p in path_text()) {
        prop_assume!(!p.contains(':'));
        if let Ok(n) = normalize(&p) {
            prop_assert_eq!(normalize(&n), Ok(n.clone()), "{:?} -> {:?}", p, n);
        }
    }
}

#[test]
fn drive_letters_behind_a_dot_are_refused() {
    for p in ["./C:/x", "a/../C:/x", ".\\C:\\x", "./a:"] {
        assert_eq!(
            normalize(p),
            Err(curate::model::paths::Escape::DriveLetter),
            "{p:?} names a drive"
        );
    }
}
