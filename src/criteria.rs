//! The checkable success criteria of a WorkerHandoff task (`Tests pass: <cmd>`, `Type check
//! passes: <cmd>`, `Lint passes: <cmd>`), run in the repository with a timeout, as the
//! seed's `swarm_complete` checks them before a worker's result is accepted.
//!
//! A command runs as `sh -c <cmd>` in its own process group (so a timeout stops everything
//! it started), its output read on two threads and bounded to the last [`TAIL_BYTES`].

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

/// Bytes of a command's output kept for the report (its end).
pub const TAIL_BYTES: usize = 4096;

/// The prefixes that make a criterion checkable, case-insensitively.
const CHECKABLE: [&str; 3] = ["tests pass:", "type check passes:", "lint passes:"];

/// The command of a checkable criterion (surrounding backticks removed), or `None`.
#[must_use]
pub fn command_of(criterion: &str) -> Option<String> {
    let text = criterion.trim();
    let lower = text.to_ascii_lowercase();
    let prefix = CHECKABLE.iter().find(|p| lower.starts_with(*p))?;
    let cmd = text[prefix.len()..].trim().trim_matches('`').trim();
    (!cmd.is_empty()).then(|| cmd.to_owned())
}

/// One criterion, run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    pub criterion: String,
    pub command: String,
    pub passed: bool,
    /// The exit code (`None` when killed by a signal or the timeout).
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// The end of its output (stdout then stderr), at most [`TAIL_BYTES`].
    pub output_tail: String,
}

/// Runs every checkable criterion of `criteria` in `root`, in order, each with `timeout`.
#[must_use]
pub fn run_all(root: &Path, criteria: &[String], timeout: Duration) -> Vec<Outcome> {
    criteria
        .iter()
        .filter_map(|c| command_of(c).map(|cmd| run(root, c, &cmd, timeout)))
        .collect()
}

fn run(root: &Path, criterion: &str, command: &str, timeout: Duration) -> Outcome {
    let outcome = |exit_code: Option<i32>, timed_out: bool, output_tail: String| Outcome {
        criterion: criterion.to_owned(),
        command: command.to_owned(),
        passed: exit_code == Some(0) && !timed_out,
        exit_code,
        timed_out,
        output_tail,
    };
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return outcome(None, false, format!("could not start sh: {e}")),
    };
    let readers: Vec<_> = [
        child
            .stdout
            .take()
            .map(|o| Box::new(o) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|e| Box::new(e) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .flatten()
    .map(|r| std::thread::spawn(move || tail_of(r)))
    .collect();
    let deadline = Instant::now() + timeout;
    let (status, timed_out) = loop {
        match child.try_wait() {
            Ok(Some(status)) => break (Some(status), false),
            Ok(None) if Instant::now() >= deadline => {
                stop_group(&mut child);
                break (child.wait().ok(), true);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break (None, false),
        }
    };
    let mut tail = Vec::new();
    for r in readers {
        tail.extend(r.join().unwrap_or_default());
    }
    let keep = tail.len().saturating_sub(TAIL_BYTES);
    let text = String::from_utf8_lossy(&tail[keep..]).into_owned();
    outcome(status.and_then(|s| s.code()), timed_out, text)
}

/// The last [`TAIL_BYTES`] of a stream, read to its end in bounded memory.
fn tail_of(mut r: Box<dyn Read + Send>) -> Vec<u8> {
    let mut kept: Vec<u8> = Vec::new();
    let mut buf = [0u8; 8192];
    while let Ok(n) = r.read(&mut buf) {
        if n == 0 {
            break;
        }
        kept.extend_from_slice(&buf[..n]);
        if kept.len() > 2 * TAIL_BYTES {
            kept.drain(..kept.len() - TAIL_BYTES);
        }
    }
    kept
}

/// Stops the command and everything it started (its process group).
fn stop_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        let group = format!("-{}", child.id());
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    let _ = child.kill();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_three_forms_are_checkable() {
        assert_eq!(
            command_of("Tests pass: `cargo test`").as_deref(),
            Some("cargo test")
        );
        assert_eq!(
            command_of("type check passes: tsc --noEmit").as_deref(),
            Some("tsc --noEmit")
        );
        assert_eq!(
            command_of("Lint passes:   npm run lint ").as_deref(),
            Some("npm run lint")
        );
        assert_eq!(command_of("Tests pass:"), None);
        assert_eq!(command_of("The login works"), None);
    }

    #[test]
    fn a_command_passes_fails_or_times_out() {
        let dir = tempfile::tempdir().unwrap();
        let criteria = [
            "Tests pass: echo ok".to_owned(),
            "Lint passes: echo bad >&2; exit 3".to_owned(),
            "Type check passes: sleep 30".to_owned(),
            "Docs are clear".to_owned(),
        ];
        let out = run_all(dir.path(), &criteria, Duration::from_millis(300));
        assert_eq!(out.len(), 3);
        assert!(out[0].passed && out[0].exit_code == Some(0) && out[0].output_tail == "ok\n");
        assert!(!out[1].passed && out[1].exit_code == Some(3) && out[1].output_tail == "bad\n");
        assert!(!out[2].passed && out[2].timed_out);
    }
}
