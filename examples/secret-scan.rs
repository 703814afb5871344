//! Walk folders and report what curate's content secret rules flag.
//!
//! `cargo run --release --example secret-scan -- DIR...`
//!
//! Scans every regular file of at most 10 MiB that is not binary (no NUL in
//! its first 8 KiB) and prints: files scanned, MB, files flagged, rate,
//! MB/s and per-rule counts with the flagged paths (rule id, line and path,
//! never the matched value).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

fn main() {
    let roots: Vec<String> = std::env::args().skip(1).collect();
    if roots.is_empty() {
        eprintln!("usage: secret-scan DIR...");
        std::process::exit(2);
    }
    let rules = match curate::trust::secrets::ContentRules::shared() {
        Ok(rules) => rules,
        Err(error) => {
            eprintln!("rules do not build: {error}");
            std::process::exit(1);
        }
    };
    let mut files = 0u64;
    let mut bytes = 0u64;
    let mut flagged: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    let mut flagged_files = 0u64;
    let mut busy = Duration::ZERO;
    for root in &roots {
        for entry in walkdir::WalkDir::new(root)
            .into_iter()
            .filter_map(Result::ok)
        {
            if !entry.file_type().is_file() {
                continue;
            }
            // The compile's own rules: a regular file within the size cap, not binary.
            let Ok(data) = curate::util::read::read_capped(
                entry.path(),
                curate::stages::measure::DEFAULT_MAX_FILE_SIZE,
            ) else {
                continue;
            };
            if curate::trust::admit::is_binary(&data) {
                continue;
            }
            files += 1;
            bytes += data.len() as u64;
            let start = Instant::now();
            let hit = rules.scan(&data);
            busy += start.elapsed();
            if let Some(hit) = hit {
                flagged_files += 1;
                flagged.entry(hit.rule).or_default().push(format!(
                    "{}:{}",
                    entry.path().display(),
                    hit.line
                ));
            }
        }
    }
    let mb = bytes as f64 / 1e6;
    println!("files scanned: {files}");
    println!("MB scanned:    {mb:.1}");
    println!("files flagged: {flagged_files}");
    println!(
        "flagged rate:  {:.4} %",
        if files == 0 {
            0.0
        } else {
            flagged_files as f64 * 100.0 / files as f64
        }
    );
    println!("scan MB/s:     {:.0}", mb / busy.as_secs_f64().max(1e-9));
    println!("per rule:");
    for (rule, paths) in &flagged {
        println!("  {rule}: {}", paths.len());
        for path in paths {
            println!("    {path}");
        }
    }
}
