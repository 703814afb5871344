//! Related files, aider-style: a graph where file A points at file B for each identifier A
//! references and B defines, ranked by PageRank personalized to the owned files.

use std::collections::BTreeMap;

use super::symbols::{Named, Symbols, Vocab};
use super::types::Tags;

/// The weight of an edge back from a definition to a file that uses it (a file that calls
/// the owned code is related too, less than what the owned code calls).
const REVERSE: f64 = 0.5;
/// Identifiers shorter than this (in characters) carry no edge.
const MIN_NAME: usize = 3;
/// PageRank's damping factor.
const DAMPING: f64 = 0.85;
/// Iterations at most, and the L1 change that ends them earlier.
const ITERATIONS: usize = 100;
const TOLERANCE: f64 = 1e-12;

/// The files related to the owned ones, best first.
///
/// Gets every candidate file with its tags (owned files among them; a path listed twice
/// counts once, its first tags) and the owned paths. Builds edges A → B, one per
/// identifier of at least three characters that A references and B (≠ A) defines, weighted
/// `sqrt(references in A) / (files defining it)`, so a name many files define weighs less,
/// and the same edge back B → A at half that weight (what uses a file is related to it);
/// runs PageRank (damping 0.85) restarting at the owned files, dangling files feeding the
/// owned ones.
///
/// Returns at most `limit` files other than the owned ones, with a score above zero (a
/// file no owned file reaches is not related), by descending score, ties by path. Empty
/// when no owned path is among `files`. Pure and deterministic: the same input gives the
/// same output, order included.
#[must_use]
pub fn rank(files: &[(String, Tags)], owned: &[String], limit: usize) -> Vec<(String, f64)> {
    let base = Vocab::default();
    let mut symbols = Symbols::new(&base);
    let named: Vec<(String, Named)> = files
        .iter()
        .map(|(p, t)| (p.clone(), symbols.number(t)))
        .collect();
    rank_named(&named, &symbols, owned, limit)
}

/// [`rank`] of tags whose names are ids of `symbols`.
#[must_use]
pub fn rank_named(
    files: &[(String, Named)],
    symbols: &Symbols<'_>,
    owned: &[String],
    limit: usize,
) -> Vec<(String, f64)> {
    let graph = Graph::of(files, symbols);
    let n = graph.paths.len();
    let mut seed = vec![0.0; n];
    for o in owned {
        if let Ok(i) = graph.paths.binary_search(&o.as_str()) {
            seed[i] = 1.0;
        }
    }
    let seeds = seed.iter().filter(|&&s| s > 0.0).count();
    if seeds == 0 || limit == 0 {
        return Vec::new();
    }
    for s in &mut seed {
        *s /= seeds as f64;
    }
    let score = graph.pagerank(&seed);
    best(&graph.paths, &seed, &score, limit)
}

/// The files other than the seeds with a score above zero, best first, ties by path, at
/// most `limit`.
fn best(paths: &[&str], seed: &[f64], score: &[f64], limit: usize) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = paths
        .iter()
        .enumerate()
        .filter(|&(i, _)| seed[i] == 0.0 && score[i] > 0.0)
        .map(|(i, p)| ((*p).to_owned(), score[i]))
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out.truncate(limit);
    out
}

/// The reference graph, kept per name rather than per pair of files: the edges A → B of a
/// name are every referencing A against every defining B, so a name that a thousand files
/// use and a hundred define stands for 100,000 edges. Kept per name, memory and each
/// iteration are linear in the references and definitions, and the sums are the same as
/// over the pairs.
///
/// The names' definers and referrers are laid out one name after another in two flat
/// vectors (each name holds its spans), so an iteration reads memory in order.
struct Graph<'f> {
    /// The nodes: distinct paths, sorted.
    paths: Vec<&'f str>,
    /// Per name (of at least [`MIN_NAME`] characters, defined by a file and referenced by
    /// one), by name: where its definers and referrers are.
    names: Vec<Name>,
    /// Every name's definers, in node order within a name.
    definers: Vec<Definer>,
    /// Every name's referrers, in node order within a name.
    referrers: Vec<Referrer>,
    /// Per node, the total weight of its out-edges.
    totals: Vec<f64>,
}

/// A name's spans in [`Graph::definers`] and [`Graph::referrers`].
struct Name {
    definers: (u32, u32),
    referrers: (u32, u32),
    /// `1 / (files defining it)`: what one of its references weighs toward each definer.
    share: f64,
}

/// A file defining a name.
#[derive(Clone, Copy)]
struct Definer {
    file: u32,
    /// `sqrt(references)` of its own references to the name (0 when none): no edge goes
    /// from a file to itself.
    own: f64,
}

/// A file referencing a name.
#[derive(Clone, Copy)]
struct Referrer {
    file: u32,
    /// Whether the file defines the name too.
    defines: bool,
    /// `sqrt(references)`.
    weight: f64,
}

/// A defined name of at least [`MIN_NAME`] characters, as [`Graph::of`] first counts it.
struct Counted {
    id: u32,
    /// Files defining it, and the last of them (files come in node order).
    definers: u32,
    last: u32,
    referrers: u32,
    /// Whether a file other than its last definer references it.
    foreign: bool,
}

/// In [`Graph::of`]'s table from a name's id to its count: not met yet, too short.
const UNSEEN: u32 = u32::MAX;
const SHORT: u32 = u32::MAX - 1;
/// In its table from a count to a kept name: a name left out.
const DROPPED: u32 = u32::MAX;

impl<'f> Graph<'f> {
    /// The graph of `files`, built in two passes over their tags: the first counts each
    /// name's definers and referrers, the second puts them in place, so no name holds a
    /// vector of its own.
    fn of(files: &'f [(String, Named)], symbols: &Symbols<'_>) -> Graph<'f> {
        let mut index: BTreeMap<&str, &Named> = BTreeMap::new();
        for (path, tags) in files {
            index.entry(path.as_str()).or_insert(tags);
        }
        let paths: Vec<&str> = index.keys().copied().collect();
        let nodes: Vec<&Named> = index.into_values().collect();
        // Who defines each name (each node once) and who references it, counted; a name's
        // count is found by its id.
        let mut counted: Vec<Counted> = Vec::new();
        let mut at: Vec<u32> = vec![UNSEEN; symbols.len()];
        for (i, tags) in (0u32..).zip(&nodes) {
            for &(id, _) in &tags.defs {
                let Some(k) = at.get_mut(id as usize) else {
                    continue;
                };
                if *k == UNSEEN {
                    *k = if symbols.chars(id) < MIN_NAME {
                        SHORT
                    } else {
                        counted.push(Counted {
                            id,
                            definers: 0,
                            last: u32::MAX,
                            referrers: 0,
                            foreign: false,
                        });
                        u32::try_from(counted.len() - 1).unwrap_or(SHORT)
                    };
                }
                if let Some(c) = counted.get_mut(*k as usize)
                    && c.last != i
                {
                    c.definers += 1;
                    c.last = i;
                }
            }
        }
        for (a, tags) in (0u32..).zip(&nodes) {
            for &(id, _) in &tags.refs {
                if let Some(&k) = at.get(id as usize)
                    && let Some(c) = counted.get_mut(k as usize)
                {
                    c.referrers += 1;
                    c.foreign |= c.last != a;
                }
            }
        }
        // A name only its one definer references adds nothing; the rest by name, as the
        // sums were first made, each given its spans.
        let mut kept: Vec<u32> = (0u32..)
            .zip(&counted)
            .filter(|(_, c)| c.definers > 1 || c.foreign)
            .map(|(k, _)| k)
            .collect();
        kept.sort_unstable_by(|&x, &y| symbols.cmp(counted[x as usize].id, counted[y as usize].id));
        let mut name_of = vec![DROPPED; counted.len()];
        let mut names = Vec::with_capacity(kept.len());
        let (mut d, mut r) = (0u32, 0u32);
        for (n, &k) in (0u32..).zip(&kept) {
            let c = &counted[k as usize];
            name_of[k as usize] = n;
            names.push(Name {
                definers: (d, d + c.definers),
                referrers: (r, r + c.referrers),
                share: 1.0 / f64::from(c.definers),
            });
            d += c.definers;
            r += c.referrers;
        }
        // Where each kept name's next definer and referrer go.
        let mut next_d: Vec<u32> = names.iter().map(|n| n.definers.0).collect();
        let mut next_r: Vec<u32> = names.iter().map(|n| n.referrers.0).collect();
        let name = |id: u32| {
            let k = *at.get(id as usize)?;
            let n = *name_of.get(k as usize)?;
            (n != DROPPED).then_some(n as usize)
        };
        let mut definers = vec![Definer { file: 0, own: 0.0 }; d as usize];
        for (i, tags) in (0u32..).zip(&nodes) {
            for &(id, _) in &tags.defs {
                if let Some(n) = name(id) {
                    let slot = next_d[n] as usize;
                    // Nodes come in order: a node already there is the last one.
                    if slot == names[n].definers.0 as usize || definers[slot - 1].file != i {
                        definers[slot] = Definer { file: i, own: 0.0 };
                        next_d[n] += 1;
                    }
                }
            }
        }
        let mut referrers = vec![
            Referrer {
                file: 0,
                defines: false,
                weight: 0.0,
            };
            r as usize
        ];
        for (a, tags) in (0u32..).zip(&nodes) {
            for &(id, count) in &tags.refs {
                if let Some(n) = name(id) {
                    let s = f64::from(count.max(1)).sqrt();
                    let (d0, d1) = names[n].definers;
                    let of_name = &mut definers[d0 as usize..d1 as usize];
                    let defines = match of_name.binary_search_by_key(&a, |d| d.file) {
                        Ok(j) => {
                            of_name[j].own += s;
                            true
                        }
                        Err(_) => false,
                    };
                    referrers[next_r[n] as usize] = Referrer {
                        file: a,
                        defines,
                        weight: s,
                    };
                    next_r[n] += 1;
                }
            }
        }
        let mut graph = Graph {
            paths,
            names,
            definers,
            referrers,
            totals: Vec::new(),
        };
        // A's out-edges: to every other definer of what it references, and back (at
        // REVERSE) to every other file referencing what it defines.
        let mut totals = vec![0.0; graph.paths.len()];
        for name in &graph.names {
            let (definers, referrers) = graph.of_name(name);
            let share = name.share;
            let referenced: f64 = referrers.iter().map(|r| r.weight).sum();
            for r in referrers {
                let others = definers.len() - usize::from(r.defines);
                totals[r.file as usize] += r.weight * share * others as f64;
            }
            for d in definers {
                totals[d.file as usize] += REVERSE * share * (referenced - d.own);
            }
        }
        graph.totals = totals;
        graph
    }

    /// A name's definers and referrers.
    fn of_name(&self, name: &Name) -> (&[Definer], &[Referrer]) {
        let (d0, d1) = name.definers;
        let (r0, r1) = name.referrers;
        (
            &self.definers[d0 as usize..d1 as usize],
            &self.referrers[r0 as usize..r1 as usize],
        )
    }

    /// PageRank restarting at `seed`, what dangling files hold going back to the seed.
    fn pagerank(&self, seed: &[f64]) -> Vec<f64> {
        let n = self.paths.len();
        let mut score = seed.to_vec();
        let mut pushed = vec![0.0; n];
        for _ in 0..ITERATIONS {
            // What each node hands on per unit of edge weight.
            let mut dangling = 0.0;
            for a in 0..n {
                if self.totals[a] > 0.0 {
                    pushed[a] = DAMPING * score[a] / self.totals[a];
                } else {
                    pushed[a] = 0.0;
                    dangling += score[a];
                }
            }
            let mut next: Vec<f64> = seed.iter().map(|s| (1.0 - DAMPING) * s).collect();
            for name in &self.names {
                let (definers, referrers) = self.of_name(name);
                let share = name.share;
                // Forward: each referrer's push to every definer but itself.
                let forward: f64 = referrers
                    .iter()
                    .map(|r| pushed[r.file as usize] * r.weight)
                    .sum();
                // Back: each definer's push to every referrer but itself.
                let back: f64 = definers.iter().map(|d| pushed[d.file as usize]).sum();
                for d in definers {
                    let b = d.file as usize;
                    next[b] += share * (forward - pushed[b] * d.own);
                }
                for r in referrers {
                    let a = r.file as usize;
                    let own = if r.defines { pushed[a] } else { 0.0 };
                    next[a] += REVERSE * share * r.weight * (back - own);
                }
            }
            for (x, s) in next.iter_mut().zip(seed) {
                *x += DAMPING * dangling * s;
            }
            let change: f64 = next.iter().zip(&score).map(|(x, y)| (x - y).abs()).sum();
            score = next;
            if change < TOLERANCE {
                break;
            }
        }
        score
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outline::types::Def;

    fn tags(defs: &[&str], refs: &[(&str, u32)]) -> Tags {
        let mut refs: Vec<(String, u32)> =
            refs.iter().map(|(r, c)| ((*r).to_owned(), *c)).collect();
        refs.sort();
        Tags {
            defs: defs
                .iter()
                .map(|d| Def {
                    name: (*d).to_owned(),
                    kind: "function",
                    line: 1,
                })
                .collect(),
            refs: refs.iter().map(|(r, _)| r.clone()).collect(),
            ref_counts: refs.iter().map(|(_, c)| *c).collect(),
        }
    }

    fn files() -> Vec<(String, Tags)> {
        vec![
            (
                "src/main.rs".into(),
                tags(&["main"], &[("login", 5), ("render", 1), ("new", 9)]),
            ),
            (
                "src/login.rs".into(),
                tags(&["login", "new"], &[("hash_password", 2)]),
            ),
            ("src/render.rs".into(), tags(&["render", "new"], &[])),
            ("src/crypto.rs".into(), tags(&["hash_password", "new"], &[])),
            ("src/unrelated.rs".into(), tags(&["other"], &[("other", 1)])),
            ("src/short.rs".into(), tags(&["id"], &[])),
        ]
    }

    #[test]
    fn references_lead_to_definitions_and_owned_files_are_excluded() {
        let r = rank(&files(), &["src/main.rs".to_owned()], usize::MAX);
        let paths: Vec<&str> = r.iter().map(|(p, _)| p.as_str()).collect();
        // login.rs is what main.rs calls most (`login` five times); crypto.rs is reached
        // directly (`new`) and through login.rs (`hash_password`).
        assert_eq!(paths, ["src/login.rs", "src/crypto.rs", "src/render.rs"]);
        assert!(r.windows(2).all(|w| w[0].1 >= w[1].1));
        assert!(r.iter().all(|(_, s)| *s > 0.0));
    }

    #[test]
    fn a_file_that_uses_the_owned_one_is_related_too() {
        let r = rank(&files(), &["src/crypto.rs".to_owned()], usize::MAX);
        let paths: Vec<&str> = r.iter().map(|(p, _)| p.as_str()).collect();
        // crypto.rs calls nothing; login.rs calls its `hash_password`, main.rs its `new`.
        let mut top: Vec<&str> = paths[..2].to_vec();
        top.sort_unstable();
        assert_eq!(top, ["src/login.rs", "src/main.rs"], "{r:?}");
        assert!(!paths.contains(&"src/unrelated.rs"), "{r:?}");
    }

    #[test]
    fn limit_empty_owned_and_determinism() {
        let f = files();
        let owned = ["src/main.rs".to_owned()];
        assert_eq!(rank(&f, &owned, 1).len(), 1);
        assert!(rank(&f, &[], 10).is_empty());
        assert!(rank(&f, &["nope.rs".to_owned()], 10).is_empty());
        let mut rev = f.clone();
        rev.reverse();
        assert_eq!(rank(&f, &owned, 10), rank(&rev, &owned, 10));
    }

    proptest::proptest! {
        /// The per-name graph ranks as the edge map did: the same files in the same
        /// order, scores equal to rounding, on graphs where names are defined and used by
        /// many files at once.
        #[test]
        fn the_graph_per_name_ranks_as_the_pairs_did(
            files in proptest::collection::vec(
                (
                    proptest::collection::btree_set(0usize..12, 0..4),
                    proptest::collection::btree_map(0usize..12, 1u32..9, 0..6),
                ),
                1..14,
            ),
            owned in proptest::collection::btree_set(0usize..14, 1..3),
        ) {
            let name = |k: usize| format!("name{k}");
            let files: Vec<(String, Tags)> = files
                .iter()
                .enumerate()
                .map(|(i, (defs, refs))| {
                    let defs: Vec<String> = defs.iter().map(|&k| name(k)).collect();
                    let defs: Vec<&str> = defs.iter().map(String::as_str).collect();
                    let refs: Vec<(String, u32)> = refs.iter().map(|(&k, &c)| (name(k), c)).collect();
                    let refs: Vec<(&str, u32)> = refs.iter().map(|(r, c)| (r.as_str(), *c)).collect();
                    (format!("f{i:02}"), tags(&defs, &refs))
                })
                .collect();
            let owned: Vec<String> = owned.iter().map(|i| format!("f{i:02}")).collect();
            let new = rank(&files, &owned, usize::MAX);
            let old = rank_by_pairs(&files, &owned, usize::MAX);
            proptest::prop_assert_eq!(new.len(), old.len());
            for ((p, s), (q, t)) in new.iter().zip(&old) {
                proptest::prop_assert!((s - t).abs() <= 1e-9 * t.abs().max(1e-300), "{new:?} {old:?}");
                if p != q {
                    // Only a tie within rounding may change places.
                    let other = old.iter().find(|(r, _)| r == p).map(|(_, x)| *x);
                    proptest::prop_assert!(other.is_some_and(|x| (x - t).abs() <= 1e-9 * t), "{new:?} {old:?}");
                }
            }
        }
    }

    #[test]
    fn ties_break_by_path() {
        let f = vec![
            ("a".into(), tags(&[], &[("alpha", 1), ("bravo", 1)])),
            ("z".into(), tags(&["alpha"], &[])),
            ("y".into(), tags(&["bravo"], &[])),
        ];
        let r = rank(&f, &["a".to_owned()], 10);
        assert_eq!(r[0].0, "y");
        assert_eq!(r[1].0, "z");
        assert!((r[0].1 - r[1].1).abs() < 1e-15);
    }

    /// The ranking as first written, over a map of (file, file) edges: the oracle the
    /// per-name graph must agree with.
    fn rank_by_pairs(
        files: &[(String, Tags)],
        owned: &[String],
        limit: usize,
    ) -> Vec<(String, f64)> {
        // Nodes: distinct paths, sorted.
        let mut index: BTreeMap<&str, &Tags> = BTreeMap::new();
        for (path, tags) in files {
            index.entry(path.as_str()).or_insert(tags);
        }
        let paths: Vec<&str> = index.keys().copied().collect();
        let id: BTreeMap<&str, usize> = paths.iter().enumerate().map(|(i, p)| (*p, i)).collect();
        let n = paths.len();
        let mut seed = vec![0.0; n];
        for o in owned {
            if let Some(&i) = id.get(o.as_str()) {
                seed[i] = 1.0;
            }
        }
        let seeds = seed.iter().filter(|&&s| s > 0.0).count();
        if seeds == 0 || limit == 0 {
            return Vec::new();
        }
        for s in &mut seed {
            *s /= seeds as f64;
        }

        // Who defines each name.
        let mut definers: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, tags) in index.values().enumerate() {
            for d in &tags.defs {
                if d.name.chars().count() >= MIN_NAME {
                    let v = definers.entry(d.name.as_str()).or_default();
                    if v.last() != Some(&i) && !v.contains(&i) {
                        v.push(i);
                    }
                }
            }
        }

        // Edges, as (from, to) → weight, then per node its out-edges and total.
        let mut edges: BTreeMap<(usize, usize), f64> = BTreeMap::new();
        for (a, tags) in index.values().enumerate() {
            for (k, name) in tags.refs.iter().enumerate() {
                let Some(defs) = definers.get(name.as_str()) else {
                    continue;
                };
                let count = f64::from(tags.ref_counts.get(k).copied().unwrap_or(1).max(1));
                let w = count.sqrt() / defs.len() as f64;
                for &b in defs {
                    if b != a {
                        *edges.entry((a, b)).or_insert(0.0) += w;
                        *edges.entry((b, a)).or_insert(0.0) += w * REVERSE;
                    }
                }
            }
        }
        let mut out_edges: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
        for (&(a, b), &w) in &edges {
            out_edges[a].push((b, w));
        }
        let totals: Vec<f64> = out_edges
            .iter()
            .map(|e| e.iter().map(|(_, w)| w).sum())
            .collect();

        let mut score = seed.clone();
        for _ in 0..ITERATIONS {
            let mut next: Vec<f64> = seed.iter().map(|s| (1.0 - DAMPING) * s).collect();
            let mut dangling = 0.0;
            for (a, edges) in out_edges.iter().enumerate() {
                if totals[a] > 0.0 {
                    for &(b, w) in edges {
                        next[b] += DAMPING * score[a] * w / totals[a];
                    }
                } else {
                    dangling += score[a];
                }
            }
            for (x, s) in next.iter_mut().zip(&seed) {
                *x += DAMPING * dangling * s;
            }
            let change: f64 = next.iter().zip(&score).map(|(x, y)| (x - y).abs()).sum();
            score = next;
            if change < TOLERANCE {
                break;
            }
        }

        best(&paths, &seed, &score, limit)
    }
}
