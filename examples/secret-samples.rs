//! Recall and false flags of curate's content secret rules on labelled samples.
//!
//! `cargo run --release --example secret-samples -- FILE.jsonl... [--misses FILE.jsonl...]`
//!
//! Each line of a file is a JSON object: `text` (the sample), `expect` (`true`: a secret
//! the rules must flag; `false`: a text they must leave alone), `set` (what the figures are
//! grouped by; a sample may name several, separated by `,`) and `family` (what a miss is
//! reported by). Prints, per set, the share of true samples flagged (recall) and of false
//! samples flagged; for the files after `--misses`, the family and rule of every miss and
//! false flag too, never a sample's text (files before it are measured, not looked into: a
//! held-out part).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;

#[derive(Default)]
struct Tally {
    positives: usize,
    found: usize,
    negatives: usize,
    flagged: usize,
}

fn main() {
    let mut misses = false;
    let mut files = Vec::new();
    for arg in std::env::args().skip(1) {
        if arg == "--misses" {
            misses = true;
        } else {
            files.push((arg, misses));
        }
    }
    if files.is_empty() {
        eprintln!("usage: secret-samples FILE.jsonl... [--misses FILE.jsonl...]");
        std::process::exit(2);
    }
    let rules = match curate::trust::secrets::ContentRules::shared() {
        Ok(rules) => rules,
        Err(error) => {
            eprintln!("rules do not build: {error}");
            std::process::exit(1);
        }
    };
    let mut sets: BTreeMap<String, Tally> = BTreeMap::new();
    let mut notes: Vec<String> = Vec::new();
    for (file, misses) in &files {
        let text = match std::fs::read_to_string(file) {
            Ok(text) => text,
            Err(error) => {
                eprintln!("{file}: {error}");
                std::process::exit(1);
            }
        };
        for (number, line) in text.lines().enumerate() {
            if line.trim().is_empty() || line.starts_with("//") {
                continue;
            }
            let sample: serde_json::Value = match serde_json::from_str(line) {
                Ok(sample) => sample,
                Err(error) => {
                    eprintln!("{file}:{}: {error}", number + 1);
                    std::process::exit(1);
                }
            };
            let (Some(body), Some(expect)) = (sample["text"].as_str(), sample["expect"].as_bool())
            else {
                continue;
            };
            let hit = rules.scan(body.as_bytes());
            let family = sample["family"].as_str().unwrap_or("?");
            for set in sample["set"].as_str().unwrap_or("all").split(',') {
                let tally = sets.entry(set.to_owned()).or_default();
                if expect {
                    tally.positives += 1;
                    tally.found += usize::from(hit.is_some());
                } else {
                    tally.negatives += 1;
                    tally.flagged += usize::from(hit.is_some());
                }
            }
            if *misses {
                match (expect, hit) {
                    (true, None) => {
                        notes.push(format!("missed   {family} ({file}:{})", number + 1));
                    }
                    (false, Some(hit)) => notes.push(format!(
                        "flagged  {family} by {} ({file}:{})",
                        hit.rule,
                        number + 1
                    )),
                    _ => {}
                }
            }
        }
    }
    let share = |part: usize, whole: usize| {
        if whole == 0 {
            "-".to_owned()
        } else {
            format!(
                "{:.1} % ({part}/{whole})",
                part as f64 * 100.0 / whole as f64
            )
        }
    };
    println!("| set | recall | false flags |");
    println!("| --- | --- | --- |");
    for (set, tally) in &sets {
        println!(
            "| {set} | {} | {} |",
            share(tally.found, tally.positives),
            share(tally.flagged, tally.negatives)
        );
    }
    for note in notes {
        println!("{note}");
    }
}
