//! Count the tokens of every file under some folders, on one core, and compare with tiktoken.
//!
//! `cargo run --release --example token-count -- [--encoding cl100k_base] [--check] DIR...`
//!
//! Reads every regular file first, then counts them all with curate's counter and prints
//! files, MB, tokens, seconds and MB/s. `--check` also counts each file with `tiktoken-rs`
//! (the reference implementation) and names every file whose counts differ (exit 1).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::time::Instant;

use curate::model::Encoding;
use curate::stages::tokens::{Fast, TokenCounter};

fn main() {
    let mut encoding = Encoding::O200kBase;
    let mut check = false;
    let mut roots = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--check" => check = true,
            "--encoding" => match args.next().as_deref() {
                Some("o200k_base") => encoding = Encoding::O200kBase,
                Some("cl100k_base") => encoding = Encoding::Cl100kBase,
                other => {
                    eprintln!("token-count: unknown encoding {other:?}");
                    std::process::exit(2);
                }
            },
            _ => roots.push(arg),
        }
    }
    if roots.is_empty() {
        eprintln!("usage: token-count [--encoding o200k_base|cl100k_base] [--check] DIR...");
        std::process::exit(2);
    }
    let mut files = Vec::new();
    for root in &roots {
        for entry in walkdir::WalkDir::new(root).into_iter().flatten() {
            if entry.file_type().is_file()
                && let Ok(bytes) = std::fs::read(entry.path())
            {
                files.push((entry.path().display().to_string(), bytes));
            }
        }
    }
    let bytes: usize = files.iter().map(|(_, b)| b.len()).sum();
    let counter = Fast(encoding);
    let start = Instant::now();
    let counts: Vec<u64> = files.iter().map(|(_, b)| counter.count(b)).collect();
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "{} files, {:.1} MB, {} tokens ({}): {seconds:.3} s = {:.1} MB/s on one core",
        files.len(),
        bytes as f64 / 1e6,
        counts.iter().sum::<u64>(),
        encoding.name(),
        bytes as f64 / 1e6 / seconds,
    );
    if !check {
        return;
    }
    let reference = match encoding {
        Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
        Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
    };
    let mut differ = 0;
    for ((path, bytes), ours) in files.iter().zip(&counts) {
        let theirs = reference
            .encode_ordinary(&String::from_utf8_lossy(bytes))
            .len() as u64;
        if theirs != *ours {
            differ += 1;
            println!("differs: {path}: curate {ours}, tiktoken {theirs}");
        }
    }
    println!("checked against tiktoken-rs: {differ} files differ");
    if differ > 0 {
        std::process::exit(1);
    }
}
