//! Tests against the real hosts: the `claude` (npm `@anthropic-ai/claude-code`),
//! `opencode` (npm `opencode-ai`), `codex` (npm `@openai/codex`), `copilot` (npm
//! `@github/copilot`) and `gemini` (npm `@google/gemini-cli`) binaries run a lead agent on a copy of `fixtures/repos/aiws-basic` wired with `curate init --host …`, their model being a fake
//! server on 127.0.0.1 (`fake_model`) that plays a scripted lead and sub-agent and records
//! every request. The tests assert what the sub-agent received, what the lead resends after
//! the dispatch, and what the model read of curate's MCP tool.
//!
//! The binaries come from `CURATE_CLAUDE_BIN` / `CURATE_OPENCODE_BIN` /
//! `CURATE_CODEX_BIN` / `CURATE_COPILOT_BIN` / `CURATE_GEMINI_BIN`, else from `target/hosts/node_modules/.bin/` (where `.ci/run` installs the pinned versions). A
//! missing binary skips its tests, unless `CURATE_REQUIRE_HOSTS=1`: then it fails them.

#![allow(clippy::missing_panics_doc, clippy::print_stdout, clippy::print_stderr)]

mod claude_code;
mod codex;
mod copilot;
mod fake_model;
mod gemini;
mod opencode;

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::fake_model::{Exchange, FakeModel};

/// A stand-in for Trellis' injector (node, where Trellis' is Python): at a dispatch it reads
/// the task's `implement.jsonl` as it stands and puts it, behind Trellis' marker, before the
/// prompt, as Trellis' `inject-subagent-context` does with the files the list names. Claude
/// Code: a `PreToolUse` command reading the hook input on stdin; OpenCode: a plugin.
pub const TRELLIS_TASK: &str = ".trellis/tasks/11-28-login-rate-limit";
/// What the stand-in injector puts first.
pub const TRELLIS_MARKER: &str = "<!-- trellis-hook-injected -->";
/// The lead's dispatch prompt in the Trellis tests.
pub const TRELLIS_PROMPT: &str =
    "Active task: .trellis/tasks/11-28-login-rate-limit\nImplement the rate limit.";

/// What the sub-agent received through the stand-in Trellis injector, after the lead added
/// a `.env` row to the list: the list curate compiled (its header first), the row withheld
/// (Trellis skips a row without `file`) and curate's note, never the `.env` row as written.
pub fn trellis_read_the_compiled_list(received: &str) {
    assert!(received.starts_with(crate::TRELLIS_MARKER), "{received}");
    assert!(
        received.contains("=== implement.jsonl ===\n{\"_curate\":"),
        "Trellis read the list as the lead wrote it:\n{received}"
    );
    assert!(!received.contains("\"file\": \".env\""), "{received}");
    // The author's row, withheld (Trellis skips a row without `file`), and curate's note.
    assert!(
        received.contains(
            "{\"withheld\":\".env\",\"reason\":\"The settings\",\"why\":\"secret: `.env` file\"}"
        ),
        "{received}"
    );
    assert!(
        received.contains("{\"_curation\":\"excluded \\\".env\\\": secret: `.env` file\"}"),
        "{received}"
    );
}

/// What the user asks the lead: dispatch the worker.
pub const LEAD: &str = "Dispatch the worker for the login.";
/// The id of the lead's dispatch call.
pub const DISPATCH: &str = "toolu_dispatch";
/// The prompt the lead dispatches.
pub const TASK: &str = "change: add-auth\nImplement the login.";
/// What the user asks the lead in the MCP tests, and the id of its preview call.
pub const PREVIEW_LEAD: &str = "Preview the worker's context for add-auth.";
pub const PREVIEW: &str = "toolu_preview";

/// The longest one host run may take before it is killed.
pub const HOST_TIMEOUT: Duration = Duration::from_secs(90);

/// The binary of a host: `var`, else `target/hosts/node_modules/.bin/<name>`. `None` (the
/// test is skipped, and says so) when there is none, unless `CURATE_REQUIRE_HOSTS` is set.
pub fn host_binary(var: &str, name: &str) -> Option<PathBuf> {
    let path = std::env::var_os(var).map_or_else(
        || {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("target/hosts/node_modules/.bin")
                .join(name)
        },
        PathBuf::from,
    );
    if path.is_file() {
        return Some(path);
    }
    let required = std::env::var("CURATE_REQUIRE_HOSTS").is_ok_and(|v| !v.is_empty() && v != "0");
    assert!(
        !required,
        "CURATE_REQUIRE_HOSTS is set but {name} is not found at {} (set {var})",
        path.display()
    );
    eprintln!(
        "skipped: {name} not found at {} (set {var}, or run .ci/run)",
        path.display()
    );
    None
}

/// A temporary folder with the repository (`repo/`), the host's home (`home/`) and a
/// folder for `PATH` (`bin/`, where `curate` is).
pub struct Sandbox {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub bin: PathBuf,
}

impl Sandbox {
    /// A copy of `fixtures/repos/aiws-basic`.
    pub fn fixture() -> Sandbox {
        Sandbox::of("aiws-basic")
    }

    /// A copy of `fixtures/repos/<name>`.
    pub fn of(name: &str) -> Sandbox {
        let dir = tempfile::tempdir().expect("temp dir");
        let base = dir.path().canonicalize().expect("canonical temp dir");
        let (root, home, bin) = (base.join("repo"), base.join("home"), base.join("bin"));
        copy_tree(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/repos")
                .join(name),
            &root,
        );
        std::fs::create_dir_all(&home).expect("home");
        std::fs::create_dir_all(&bin).expect("bin");
        std::os::unix::fs::symlink(curate_bin(), bin.join("curate")).expect("curate link");
        Sandbox {
            _dir: dir,
            root,
            home,
            bin,
        }
    }

    /// Writes a file of the repository (creating folders).
    pub fn write(&self, rel: &str, content: &str) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("folders");
        std::fs::write(p, content).expect("write");
    }

    /// Reads a file of the repository.
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel))
            .unwrap_or_else(|e| panic!("cannot read {rel}: {e}"))
    }

    /// `PATH` for the host: `bin/` (curate) first, then the system's.
    pub fn path(&self) -> String {
        format!("{}:/usr/local/bin:/usr/bin:/bin", self.bin.display())
    }

    /// A command with an empty environment but `PATH` and `HOME`, in the repository.
    pub fn command(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        c.env_clear()
            .env("PATH", self.path())
            .env("HOME", &self.home)
            .env("LANG", "C.UTF-8")
            .current_dir(&self.root);
        c
    }

    /// Runs curate here (as the host would, with the host's home); its stdout.
    pub fn curate(&self, args: &[&str]) -> String {
        let out = run(
            self.command(Path::new(curate_bin())).args(args),
            HOST_TIMEOUT,
        );
        assert_eq!(out.code, Some(0), "curate {args:?}: {}", out.stderr);
        out.stdout
    }

    /// What the sub-agent must receive for `task`: `curate preview`'s prompt with `---`,
    /// the task and the end marker at its end, as the hook composes it.
    pub fn expected_dispatch(&self, task: &str) -> String {
        let preview = self.curate(&["preview", "--role", "worker", "--change", "add-auth"]);
        let (bundle, end) = preview
            .trim_end_matches('\n')
            .rsplit_once('\n')
            .expect("a bundle of more than one line");
        assert!(end.starts_with("<!-- curate:end files="), "{end}");
        format!("{bundle}\n---\n{task}\n{end}")
    }

    /// The status of every hook run logged in `.curate/state/hooks.jsonl`.
    pub fn hook_runs(&self) -> Vec<String> {
        let log = std::fs::read_to_string(self.root.join(".curate/state/hooks.jsonl"))
            .unwrap_or_default();
        log.lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
                format!(
                    "{} {}",
                    v["event"].as_str().unwrap_or_default(),
                    v["status"].as_str().unwrap_or_default()
                )
            })
            .collect()
    }
}

pub fn curate_bin() -> &'static str {
    env!("CARGO_BIN_EXE_curate")
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("folder");
    for entry in std::fs::read_dir(from).expect("fixture folder") {
        let entry = entry.expect("entry");
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().expect("file type");
        if kind.is_symlink() {
            let target = std::fs::read_link(&src).expect("link");
            std::os::unix::fs::symlink(target, &dst).expect("copy link");
        } else if kind.is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).expect("copy file");
        }
    }
}

/// A finished process.
pub struct Finished {
    /// `None` when it was killed.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

/// Runs `cmd` (stdin closed) in its own process group; past `limit` the whole group is
/// killed. Whatever it left running is killed too when it exits.
pub fn run(cmd: &mut Command, limit: Duration) -> Finished {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let group = child.id().to_string();
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut r) = r {
                let mut bytes = Vec::new();
                let _ = r.read_to_end(&mut bytes);
                text = String::from_utf8_lossy(&bytes).into_owned();
            }
            text
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let code = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status.code();
        }
        if started.elapsed() > limit {
            kill_group(&group);
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    kill_group(&group);
    Finished {
        code,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
        elapsed: started.elapsed(),
    }
}

fn kill_group(group: &str) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{group}")])
        .stderr(Stdio::null())
        .status();
}

/// A dispatch's three requests: the lead's first, the sub-agent's, the lead's next.
pub struct Dispatch {
    pub lead: Exchange,
    pub sub: Exchange,
    pub next: Exchange,
}

impl Dispatch {
    pub fn of(model: &FakeModel, task: &str) -> Dispatch {
        let all = model.requests();
        let find = |what: &str, f: &dyn Fn(&Exchange) -> bool| {
            // A request that offers no tool is a side request (a title, a summary).
            let found: Vec<&Exchange> = all
                .iter()
                .filter(|x| !x.tools().is_empty() && f(x))
                .collect();
            assert_eq!(found.len(), 1, "{what}: {} requests", found.len());
            found[0].clone()
        };
        Dispatch {
            lead: find("the lead's first", &|x| {
                x.user_says(LEAD) && x.result_of(DISPATCH).is_none()
            }),
            sub: find("the sub-agent's", &|x| {
                !x.user_says(LEAD) && x.user_says(task)
            }),
            next: find("the lead's next", &|x| x.result_of(DISPATCH).is_some()),
        }
    }

    /// The text of the sub-agent's first user message that holds its task.
    pub fn received(&self, task: &str) -> String {
        let first = self.sub.first_user_message().expect("a user message");
        let last_line = task.lines().last().expect("a task");
        first
            .texts
            .into_iter()
            .find(|t| t.contains(last_line))
            .expect("the task in the sub-agent's first message")
    }

    /// The lead's next request: its dispatch call went out as the lead wrote it, with the
    /// sub-agent's answer as its result, and holds no bundle.
    pub fn assert_lead_kept_its_call(&self, task: &str) {
        let (tool, input) = self
            .next
            .call(DISPATCH)
            .expect("the dispatch in the history");
        assert!(["Agent", "Task", "task"].contains(&tool.as_str()), "{tool}");
        assert_eq!(input["prompt"], task);
        let result = self
            .next
            .result_of(DISPATCH)
            .expect("the dispatch's result");
        assert!(result.contains("done"), "{result}");
        assert!(!self.next.body.to_string().contains("curate:begin"));
    }
}

/// The MCP preview's tool result, as the model read it: the status line, a blank line, then
/// exactly `curate preview`'s prompt, at most 2 KiB more than the prompt.
pub fn assert_preview_result(model: &FakeModel, sandbox: &Sandbox, host: &str) {
    let read = model
        .requests()
        .iter()
        .find_map(|x| x.result_of(PREVIEW))
        .expect("the preview's result");
    let prompt = sandbox.curate(&["preview", "--role", "worker", "--change", "add-auth"]);
    let (header, pasted) = read.split_once("\n\n").expect("a header and the prompt");
    assert!(
        header.starts_with("READY · role worker · change add-auth · 8 files"),
        "{header}"
    );
    assert_eq!(pasted, prompt);
    eprintln!(
        "{host}: the preview's tool result {} bytes, its prompt {} bytes",
        read.len(),
        prompt.len()
    );
    assert!(read.len() <= prompt.len() + 2048, "{} bytes", read.len());
}

/// Runs a host with `env` added, to its end (killed past [`HOST_TIMEOUT`]), failing the test
/// unless it exited 0; `what` names it in the messages.
pub fn run_host(cmd: &mut Command, env: &[(&str, &str)], what: &str) -> Finished {
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run(cmd, HOST_TIMEOUT);
    eprintln!("{what} took {:.1} s", out.elapsed.as_secs_f64());
    assert_eq!(
        out.code,
        Some(0),
        "{what} failed or was killed\nstdout: {}\nstderr: {}",
        out.stdout,
        out.stderr
    );
    out
}

/// What a dispatched worker received: the `role:` line and the begin marker first, the one
/// end marker last, and byte for byte what curate composes for the task.
pub fn assert_one_bundle(received: &str, sandbox: &Sandbox) {
    assert!(
        received.starts_with(
            "role: worker\n<!-- curate:begin role=\"worker\" change=\"add-auth\" -->\n"
        ),
        "{received}"
    );
    let last = received.lines().last().unwrap_or_default();
    assert!(last.starts_with("<!-- curate:end files="), "{last}");
    assert_eq!(received.matches("<!-- curate:end").count(), 1);
    assert_eq!(received, sandbox.expected_dispatch(TASK));
}
