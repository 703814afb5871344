//! Integration tests: each copies a `fixtures/repos/<name>` tree into a temporary folder,
//! runs the real `curate` binary there, and looks at its exit code, output and files.

#![allow(
    clippy::return_self_not_must_use,
    clippy::missing_panics_doc,
    clippy::print_stdout,
    clippy::print_stderr
)]
mod ad_hoc;
mod adopt;
mod aiws_real;
mod anchors;
mod architecture;
mod bmad;
mod cache;
mod central;
mod check;
mod cli;
mod compile;
mod consumers;
mod errors;
mod hook_hosts;
mod hooks;
mod kiro;
mod lsp;
mod lsp_live;
mod lsp_nvim;
#[cfg(feature = "mcp")]
mod mcp;
mod openspec_cli;
mod overrides;
mod props;
mod receipt;
mod related_index;
mod render;
mod robust;
mod run_twice;
mod spec_kit;
mod task_index;
mod task_words;
mod trust;
mod verify;
mod watch;
mod workflows;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `text` with curate's version replaced by `[VERSION]`, so a snapshot survives a release.
pub fn versionless(text: &str) -> String {
    text.replace(
        &format!("// curate: {} ", env!("CARGO_PKG_VERSION")),
        "// curate: [VERSION] ",
    )
}

/// A temporary repository.
pub struct Repo {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
}

impl Repo {
    /// A copy of `fixtures/repos/<name>` (symlinks copied as symlinks).
    pub fn fixture(name: &str) -> Repo {
        let repo = Repo::empty();
        let from = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/repos")
            .join(name);
        copy_tree(&from, &repo.root);
        repo
    }

    /// An empty folder (not a git repository).
    pub fn empty() -> Repo {
        let dir = tempfile::tempdir().expect("temp dir");
        // The repository is a folder of the temporary one, so that the token cache can sit
        // beside it (`cache/`) and go away with it.
        let root = dir
            .path()
            .canonicalize()
            .expect("canonical temp dir")
            .join("repo");
        std::fs::create_dir(&root).expect("repo folder");
        Repo { _dir: dir, root }
    }

    /// Writes a file (creating folders).
    pub fn write(&self, rel: &str, content: &str) -> &Repo {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
        self
    }

    /// Reads a file as text.
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel))
            .unwrap_or_else(|e| panic!("cannot read {rel}: {e}"))
    }

    /// True when the file exists.
    pub fn exists(&self, rel: &str) -> bool {
        self.root.join(rel).exists()
    }

    /// Every file below the root with its bytes, sorted (to prove nothing changed).
    pub fn snapshot_tree(&self) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        for e in walkdir::WalkDir::new(&self.root).sort_by_file_name() {
            let e = e.unwrap();
            if e.file_type().is_file() {
                let rel = e.path().strip_prefix(&self.root).unwrap();
                out.push((
                    rel.to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                ));
            }
        }
        out
    }

    /// The token cache folder the commands use.
    pub fn cache_dir(&self) -> PathBuf {
        self.root.with_file_name("cache")
    }

    /// Runs `curate --role worker --change add-auth` with `extra` flags.
    pub fn compile_worker(&self, extra: &[&str]) -> Output {
        self.curate()
            .args(["--role", "worker", "--change", "add-auth"])
            .args(extra)
            .run()
    }

    /// A `curate` command run in this repository.
    pub fn curate(&self) -> Cmd {
        Cmd {
            root: self.root.clone(),
            args: Vec::new(),
            stdin: None,
            env: Vec::new(),
            cwd: self.root.clone(),
        }
    }
}

fn copy_tree(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from).follow_links(false) {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(from).unwrap();
        let dest = to.join(rel);
        let ft = e.file_type();
        if ft.is_symlink() {
            let target = std::fs::read_link(e.path()).unwrap();
            #[cfg(unix)]
            std::os::unix::fs::symlink(target, &dest).unwrap();
        } else if ft.is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// Variables of the developer's shell that would change what curate does in a test.
pub const DEVELOPER_ENV: [&str; 5] = [
    "CURATE_CONTRACTS",
    "CURATE_CHANGE",
    "CURATE_HOOKS",
    "CURATE_HOOK_DEADLINE_MS",
    "CURATE_ON_NOT_READY",
];

/// A command to run.
pub struct Cmd {
    root: PathBuf,
    cwd: PathBuf,
    args: Vec<String>,
    stdin: Option<Vec<u8>>,
    env: Vec<(String, String)>,
}

impl Cmd {
    pub fn args<I, S>(mut self, args: I) -> Cmd
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.args
            .extend(args.into_iter().map(|s| s.as_ref().to_owned()));
        self
    }

    pub fn stdin(mut self, bytes: &[u8]) -> Cmd {
        self.stdin = Some(bytes.to_vec());
        self
    }

    pub fn env(mut self, key: &str, value: &str) -> Cmd {
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    /// Runs in a sub-folder of the repository instead of its root.
    pub fn cwd(mut self, rel: &str) -> Cmd {
        self.cwd = self.root.join(rel);
        self
    }

    /// The process to start: the binary, its arguments, the folder, and an environment
    /// that nothing of the developer's own leaks into (contracts, change, hook switches),
    /// with the token cache beside the repository. Every test that starts curate uses it.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_curate"));
        cmd.args(&self.args)
            .current_dir(&self.cwd)
            .env("NO_COLOR", "1")
            .env("CURATE_CACHE_DIR", self.root.with_file_name("cache"));
        for inherited in DEVELOPER_ENV {
            cmd.env_remove(inherited);
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    /// Starts the command with stdin, stdout and stderr piped, for a test that talks to it.
    pub fn spawn(&self) -> std::process::Child {
        self.command()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start curate")
    }

    pub fn run(self) -> Output {
        let mut child = self
            .command()
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run curate");
        if let Some(input) = &self.stdin {
            // A command may stop reading early (a cap): that is its answer, not a failure.
            if let Err(e) = child.stdin.take().unwrap().write_all(input) {
                assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
            }
        }
        let out = child.wait_with_output().unwrap();
        let root = self.root.to_string_lossy().into_owned();
        let clean = |b: &[u8]| String::from_utf8_lossy(b).replace(&root, "[ROOT]");
        let output = Output {
            code: out.status.code().unwrap_or(-1),
            stdout: clean(&out.stdout),
            stderr: clean(&out.stderr),
        };
        assert!(
            !output.stderr.contains("panicked at") && !output.stdout.contains("panicked at"),
            "curate panicked:\n{}",
            output.stderr
        );
        output
    }
}

/// What a run printed, with the temporary root replaced by `[ROOT]`.
#[derive(Debug)]
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// Exit code, stdout and stderr as one text, for snapshots.
    pub fn all(&self) -> String {
        format!(
            "exit: {}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
}

/// The worker manifest of change `add-auth`.
pub const WORKER_MANIFEST: &str = "changes/add-auth/analysis/worker-context.jsonl";
/// Its lock.
pub const WORKER_LOCK: &str = "changes/add-auth/analysis/worker-context.lock.json";

/// A compile's report (`--format json`, no file cap) and its entries as (file, `field`) pairs;
/// the compile must exit 0.
pub fn listed(
    repo: &Repo,
    args: &[&str],
    field: &str,
) -> (Vec<(String, String)>, serde_json::Value) {
    let out = repo
        .curate()
        .args(args)
        .args(["--format", "json", "--max-files", "0"])
        .run();
    assert_eq!(out.code, 0, "{args:?}: {}", out.all());
    let report = out.json();
    let list = report["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["file"].as_str().unwrap().to_owned(),
                e[field].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    (list, report)
}

/// `(file, value)` pairs as owned strings, to compare with [`listed`]'s.
pub fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(f, v)| ((*f).to_owned(), (*v).to_owned()))
        .collect()
}

/// The prompt Claude Code's sub-agent gets when the lead dispatches `agent` with `prompt`
/// (`curate hook claude-code` on a `PreToolUse` of `Agent`); the hook must exit 0 and
/// rewrite it.
pub fn dispatched(repo: &Repo, prompt: &str, agent: &str) -> String {
    let input = serde_json::json!({
        "session_id": "s",
        "hook_event_name": "PreToolUse",
        "tool_name": "Agent",
        "cwd": repo.root,
        "tool_input": {"prompt": prompt, "subagent_type": agent},
    });
    let out = repo
        .curate()
        .args(["hook", "claude-code"])
        .stdin(input.to_string().as_bytes())
        .run();
    assert_eq!(out.code, 0, "{}", out.all());
    let v = out.json();
    v["hookSpecificOutput"]["updatedInput"]["prompt"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"))
        .to_owned()
}

/// A compile's report (`--format json`); the compile must exit 0.
pub fn report(repo: &Repo, args: &[&str]) -> serde_json::Value {
    let out = repo.curate().args(args).args(["--format", "json"]).run();
    assert_eq!(out.code, 0, "{args:?}: {}", out.all());
    out.json()
}

/// The files of a report's entries, in order.
pub fn report_files(report: &serde_json::Value) -> Vec<String> {
    report["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["file"].as_str().unwrap().to_owned())
        .collect()
}
