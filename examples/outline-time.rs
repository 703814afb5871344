//! Times the outline of each file named on the command line, on one core: the median of
//! 21 runs a file, with its lines and whether it has an outline (SPEC §11's target: 3 ms
//! for a 2,000-line file). `cargo run --release --example outline-time -- FILE…`; with
//! `--ranges` first, prints each file's outline (and its tags' definitions) instead, to
//! compare two builds.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::time::Instant;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let ranges_only = args.first().is_some_and(|a| a == "--ranges");
    if ranges_only {
        args.remove(0);
    }
    for path in args {
        let Ok(text) = std::fs::read_to_string(&path) else {
            eprintln!("{path}: not readable as UTF-8");
            continue;
        };
        let Some(lang) = curate::outline::lang_for(&path) else {
            eprintln!("{path}: no outline for this kind of file");
            continue;
        };
        if ranges_only {
            let defs = curate::outline::tags(lang, &text).map(|t| {
                t.defs
                    .iter()
                    .map(|d| format!("{}:{}:{}", d.name, d.kind, d.line))
                    .collect::<Vec<_>>()
            });
            // The lines of each definition as a symbol anchor finds it (first match).
            let symbols = curate::outline::tags(lang, &text).map(|t| {
                let mut names: Vec<&str> = t.defs.iter().map(|d| d.name.as_str()).collect();
                names.sort_unstable();
                names.dedup();
                names
                    .into_iter()
                    .map(|n| format!("{n}={:?}", curate::outline::symbol(lang, &text, n)))
                    .collect::<Vec<_>>()
            });
            // What `--related` keeps of the file: the skimming parse's tags and outline.
            let related = curate::outline::tags_and_outline(lang, &text).map(|(t, outline)| {
                let defs: Vec<String> = t
                    .defs
                    .iter()
                    .map(|d| format!("{}:{}", d.name, d.line))
                    .collect();
                (defs, t.refs, t.ref_counts, outline)
            });
            println!(
                "{path} {:?} {defs:?} {symbols:?} {related:?}",
                curate::outline::outline(lang, &text)
            );
            continue;
        }
        let mut times: Vec<f64> = (0..21)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(curate::outline::outline(lang, std::hint::black_box(&text)));
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let ranges = curate::outline::outline(lang, &text).map_or(0, |r| r.len());
        println!(
            "{:7.2} ms  {:5} lines  {:4} ranges  {path}",
            times[times.len() / 2],
            text.lines().count(),
            ranges
        );
    }
}
