//! The hooks: curate inside a host's sub-agent dispatch, a front-end beside the command line.
//!
//! `curate hook claude-code` answers Claude Code's `PreToolUse` (on `Agent`/`Task`) and
//! `SubagentStart`; `curate hook opencode` answers the OpenCode shim's `tool.execute.before`
//! for `task`. Both read one JSON object from stdin and print one JSON object or nothing,
//! and the process always exits 0: a hook never breaks a dispatch because curate failed.
//!
//! The work runs on a thread under a deadline ([`deadline`]); past it, the temporary files
//! are removed and nothing is printed. Everything the hook writes (manifest, lock,
//! breadcrumb) goes through the library like `curate compile` does. Every run, whatever
//! its outcome (the kill switch, a deadline, a crash included), appends one line to
//! `.curate/state/hooks.jsonl` ([`crate::state::log_hook_run`]) when its repository is
//! known, so that a dispatch curate did not curate is visible (`curate doctor`).

pub mod ad_hoc;
pub mod claude_code;
pub mod codex;
pub mod copilot;
pub mod edit;
pub mod gemini;
pub mod opencode;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::ops::compile::{Mode, commit};
use crate::render::{self, ByteCaps, Job};
use crate::settings::{CompileOptions, CompileSettings, Workspace, WorkspaceOptions, check_name};
use crate::stages::budget::Status;

/// The most stdin a hook reads; more and it answers nothing.
pub const STDIN_CAP: u64 = 8 * 1024 * 1024;

/// The default deadline of a hook call.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(10);

/// The host a hook answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    ClaudeCode,
    OpenCode,
    Codex,
    Copilot,
    Gemini,
}

/// The names `curate hook` answers, as `init --host` writes them.
pub const HOST_NAMES: [&str; 5] = ["claude-code", "opencode", "codex", "copilot", "gemini"];

/// The deadline: `CURATE_HOOK_DEADLINE_MS`, else [`DEFAULT_DEADLINE`].
#[must_use]
pub fn deadline() -> Duration {
    std::env::var("CURATE_HOOK_DEADLINE_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(DEFAULT_DEADLINE, Duration::from_millis)
}

/// True when `CURATE_HOOKS=0` (or `false`, `off`, `no`) turns the hooks off.
#[must_use]
pub fn disabled() -> bool {
    std::env::var("CURATE_HOOKS").is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "0" | "false" | "off" | "no"
        )
    })
}

impl Host {
    /// The host's name in the hook log.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude-code",
            Host::OpenCode => "opencode",
            Host::Codex => "codex",
            Host::Copilot => "copilot",
            Host::Gemini => "gemini",
        }
    }

    /// The host called `name` (as the command line spells it), if this binary knows it.
    #[must_use]
    pub fn parse(name: &str) -> Option<Host> {
        match name {
            "claude-code" => Some(Host::ClaudeCode),
            "opencode" => Some(Host::OpenCode),
            "codex" => Some(Host::Codex),
            "copilot" => Some(Host::Copilot),
            "gemini" => Some(Host::Gemini),
            _ => None,
        }
    }
}

/// A hook this binary cannot answer (a host it does not know, a command line it cannot
/// read): the input is read (bounded, within the deadline; not from a terminal) only to
/// find the repository it names, where one `skipped` line with `why` goes to the hook log.
/// The caller prints nothing on stdout and exits 0, so that the host goes on with the
/// dispatch uncurated (Codex and Claude Code read exit 2 as "block the tool call").
pub fn refuse(host: &str, why: &str, options: &WorkspaceOptions) {
    use std::io::IsTerminal as _;
    let started = Instant::now();
    let input = if std::io::stdin().is_terminal() {
        None
    } else {
        let (tx, rx) = mpsc::channel();
        let reader = std::thread::Builder::new()
            .name("curate-hook".to_owned())
            .spawn(move || {
                let _ = tx.send(crate::util::read::read_stdin(STDIN_CAP).ok());
            });
        reader
            .ok()
            .and_then(|_| rx.recv_timeout(deadline()).ok().flatten())
    };
    let field = |keys: &[&str]| {
        let input = input.as_deref()?;
        keys.iter().find_map(|k| first_field(input, k))
    };
    let cwd = field(&["cwd", "directory"]);
    let event = field(&["hook_event_name", "hookEventName", "event"]);
    let trace = Trace::default();
    trace.note(|o| {
        o.root = workspace(cwd.as_deref().map(Path::new), options).map(|w| w.root.to_path_buf());
        o.event = event;
        o.reason = Some(why.to_owned());
    });
    // A name from the command line, shown short.
    let host: String = host.chars().take(64).collect();
    log_as(&host, &trace, "skipped", started);
}

/// What a hook run found out, as far as it got: the line [`run`] logs.
#[derive(Debug, Default, Clone)]
pub struct Outcome {
    /// The repository root, once known.
    pub root: Option<PathBuf>,
    pub event: Option<String>,
    pub role: Option<String>,
    pub change: Option<String>,
    /// `READY`, `BLOCKED`, `OVER_BUDGET`; none: skipped.
    pub status: Option<&'static str>,
    /// Why nothing was injected.
    pub reason: Option<String>,
}

/// The [`Outcome`] of a run, shared with its worker thread (so that a deadline still logs
/// what was known).
#[derive(Debug, Default, Clone)]
pub struct Trace(Arc<Mutex<Outcome>>);

impl Trace {
    /// Records something about the run.
    pub fn note(&self, f: impl FnOnce(&mut Outcome)) {
        if let Ok(mut o) = self.0.lock() {
            f(&mut o);
        }
    }

    /// Records why nothing was injected; returns `None` for `?`.
    pub fn skip<T>(&self, reason: &str) -> Option<T> {
        self.note(|o| o.reason = Some(reason.to_owned()));
        None
    }

    fn get(&self) -> Outcome {
        self.0.lock().map(|o| o.clone()).unwrap_or_default()
    }
}

/// Runs the hook for `host`: reads stdin, answers within the deadline. Returns the one
/// line to print (a JSON object), or `None` to print nothing. Never fails. `options` are
/// the command line's (`-C` counts when the input names no folder).
#[must_use]
pub fn run(host: Host, options: WorkspaceOptions) -> Option<String> {
    let started = Instant::now();
    let trace = Trace::default();
    // Off, the input is still read (within the deadline), for the log's event and folder.
    let off = disabled();
    if off {
        trace.note(|o| o.root = workspace(None, &options).map(|w| w.root.to_path_buf()));
    }
    let (tx, rx) = mpsc::channel();
    let worker_trace = trace.clone();
    let worker = std::thread::Builder::new()
        .name("curate-hook".to_owned())
        .spawn(move || {
            let t = &worker_trace;
            let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let input = crate::util::read::read_stdin(STDIN_CAP).ok()?;
                if off {
                    note_off(host, &input, &options, t);
                    return None;
                }
                // A call that is no dispatch (VS Code runs the Claude Code entry on every
                // tool call) costs this glance at the input and nothing else.
                if let Some(why) = glance(host, &input) {
                    return t.skip(&why);
                }
                crate::warm::ahead(crate::warm::Then::Render);
                match host {
                    Host::ClaudeCode => claude_code::answer(&input, &options, t),
                    Host::OpenCode => opencode::answer(&input, &options, t),
                    Host::Codex => codex::answer(&input, &options, t),
                    Host::Copilot => copilot::answer(&input, &options, t),
                    Host::Gemini => gemini::answer(&input, &options, t),
                }
            }));
            let _ = tx.send(answer.map_err(|_| ()));
        });
    if worker.is_err() {
        return quiet(host);
    }
    match rx.recv_timeout(deadline()) {
        Ok(Ok(answer)) => {
            let status = if off {
                "off"
            } else {
                trace.get().status.unwrap_or("skipped")
            };
            log(host, &trace, status, started);
            answer.map_or_else(|| quiet(host), |v| Some(v.to_string()))
        }
        Ok(Err(())) => {
            log(host, &trace, "crashed", started);
            quiet(host)
        }
        Err(_) => {
            // Past the deadline (or the worker died): leave no temporary file behind.
            crate::util::atomic::abandon();
            log(host, &trace, if off { "off" } else { "deadline" }, started);
            quiet(host)
        }
    }
}

/// Why `input` needs no more than a glance (see [`claude_code::glance`]); `None`: go on.
fn glance(host: Host, input: &[u8]) -> Option<String> {
    match host {
        Host::ClaudeCode => claude_code::glance(&serde_json::from_slice(input).ok()?),
        Host::Codex => codex::glance(&serde_json::from_slice(input).ok()?),
        Host::Copilot => copilot::glance(&serde_json::from_slice(input).ok()?),
        Host::Gemini => gemini::glance(&serde_json::from_slice(input).ok()?),
        Host::OpenCode => None,
    }
}

/// With the hooks off: the event and the folder the input names, for the log only.
fn note_off(host: Host, input: &[u8], options: &WorkspaceOptions, trace: &Trace) {
    let v: Option<serde_json::Value> = serde_json::from_slice(input).ok();
    let v = v.as_ref();
    let (event, cwd) = match host {
        Host::ClaudeCode | Host::Codex | Host::Gemini => (
            v.and_then(claude_code::event),
            v.and_then(claude_code::folder),
        ),
        Host::OpenCode => (
            Some(v.map_or("task", opencode::event)),
            v.and_then(opencode::folder),
        ),
        Host::Copilot => (
            v.and_then(copilot::event),
            v.and_then(|v| v.get("cwd")?.as_str()),
        ),
    };
    let root = cwd.and_then(|c| workspace(Some(Path::new(c)), options));
    trace.note(|o| {
        o.event = event.map(str::to_owned);
        if let Some(ws) = root {
            o.root = Some(ws.root.to_path_buf());
        }
    });
}

/// An input the host never sends (no JSON object, a field of another type, a folder that
/// is a file): nothing is injected, and the run is logged, `skipped` with `what`, in the
/// repository its folder `cwd` (a file's folder) or the command line names.
pub fn malformed<T>(
    cwd: Option<&str>,
    options: &WorkspaceOptions,
    trace: &Trace,
    what: &str,
) -> Option<T> {
    let cwd = cwd.map(|c| {
        let p = Path::new(c);
        if p.is_file() {
            p.parent().unwrap_or(p).to_path_buf()
        } else {
            p.to_path_buf()
        }
    });
    if trace.get().root.is_none() {
        let root = workspace(cwd.as_deref(), options).map(|w| w.root.to_path_buf());
        trace.note(|o| o.root = root);
    }
    trace.skip(&format!("malformed input: {what}"))
}

/// The prompt and the agent type (`subagent_type`, absent or null: none) of the dispatch
/// arguments at `key` of a host's input, or what is wrong with them (for
/// [`malformed`]).
pub fn prompt_and_agent<'a>(
    v: &'a serde_json::Value,
    key: &str,
) -> Result<(&'a str, Option<&'a str>), String> {
    prompt_and_agent_at(v, key, "prompt", "subagent_type")
}

/// [`prompt_and_agent`] with the host's names of the prompt and the agent type.
pub fn prompt_and_agent_at<'a>(
    v: &'a serde_json::Value,
    key: &str,
    prompt_key: &str,
    agent_key: &str,
) -> Result<(&'a str, Option<&'a str>), String> {
    use serde_json::Value;
    let args = v
        .get(key)
        .and_then(Value::as_object)
        .ok_or_else(|| format!("\"{key}\" is no object"))?;
    let prompt = args
        .get(prompt_key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("\"{key}.{prompt_key}\" is no string"))?;
    let agent = match args.get(agent_key) {
        None | Some(Value::Null) => None,
        Some(Value::String(t)) => Some(t.as_str()),
        Some(_) => return Err(format!("\"{key}.{agent_key}\" is no string")),
    };
    Ok((prompt, agent))
}

/// The string at `key` of the first JSON value of `input`, whatever follows it (for the log
/// of an input that is not one JSON object).
#[must_use]
pub fn first_field(input: &[u8], key: &str) -> Option<String> {
    serde_json::Deserializer::from_slice(input)
        .into_iter::<serde_json::Value>()
        .next()?
        .ok()?
        .get(key)?
        .as_str()
        .map(str::to_owned)
}

/// Appends the run's line to the repository's hook log; a failure is ignored (the log
/// never breaks a dispatch), and without a known repository there is nowhere to log.
fn log(host: Host, trace: &Trace, status: &str, started: Instant) {
    log_as(host.name(), trace, status, started);
}

/// [`log`] for a host known by its name only.
fn log_as(host: &str, trace: &Trace, status: &str, started: Instant) {
    let o = trace.get();
    let Some(root) = o.root else { return };
    // What the input named (a role, a change, a path in a reason) may hold a token: the
    // log, and `doctor` after it, show the rule, never the value.
    let shown = |t: Option<String>| t.map(|t| crate::trust::redact::redact(&t));
    let run = crate::state::HookRun {
        time: crate::state::now_rfc3339(),
        host: crate::trust::redact::redact(host),
        event: shown(o.event).unwrap_or_else(|| "?".to_owned()),
        role: shown(o.role),
        change: shown(o.change),
        status: status.to_owned(),
        reason: if status == "READY" {
            None
        } else {
            shown(o.reason)
        },
        ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    };
    let _ = crate::state::log_hook_run(&root, &run);
}

/// What a host receives when curate has nothing to say: nothing for Claude Code, `{}` for
/// the OpenCode shim.
fn quiet(host: Host) -> Option<String> {
    match host {
        Host::ClaudeCode | Host::Codex | Host::Copilot | Host::Gemini => None,
        Host::OpenCode => Some("{}".to_owned()),
    }
}

/// A dispatch as the hosts describe it.
#[derive(Debug, Default)]
pub struct Dispatch<'a> {
    /// The folder the host runs in (`cwd`, OpenCode's `directory`).
    pub cwd: Option<PathBuf>,
    pub session: Option<&'a str>,
    /// The dispatched agent type (`subagent_type`), as given.
    pub agent_type: Option<&'a str>,
    /// The dispatch prompt, as given.
    pub prompt: &'a str,
}

/// What curate makes of a dispatch.
#[derive(Debug)]
pub enum Prepared {
    /// READY: the new prompt, and the breadcrumb for `SubagentStart`.
    Ready {
        prompt: String,
        /// The repository root.
        root: PathBuf,
        crumb: crate::state::Breadcrumb,
    },
    /// BLOCKED / OVER_BUDGET: the status and the report for the lead.
    NotReady {
        status: Status,
        report: String,
        deny: bool,
    },
}

/// `subagent_type` normalised: lower-case, `_` and spaces → `-`, a leading `curate-`,
/// `aiws-` or `trellis-` removed.
#[must_use]
pub fn normalize_role(name: &str) -> String {
    let mut s: String = name
        .trim()
        .chars()
        .map(|c| match c {
            '_' | ' ' => '-',
            c => c.to_ascii_lowercase(),
        })
        .collect();
    for prefix in ["curate-", "aiws-", "trellis-"] {
        if let Some(rest) = s.strip_prefix(prefix) {
            s = rest.to_owned();
            break;
        }
    }
    s
}

/// The value of the first prompt line `key: <value>` (one word), if any. The key is matched
/// without regard to case, after an optional list bullet (`- `, `* `); the value may be
/// quoted in backticks or quotes (`change: \`add-auth\``).
#[must_use]
pub fn prompt_line<'a>(prompt: &'a str, key: &str) -> Option<&'a str> {
    prompt.lines().find_map(|line| {
        let line = line.trim();
        let line = line
            .strip_prefix("- ")
            .or_else(|| line.strip_prefix("* "))
            .unwrap_or(line)
            .trim_start();
        let head = line.get(..key.len())?;
        if !head.eq_ignore_ascii_case(key) {
            return None;
        }
        let rest = line[key.len()..].strip_prefix(':')?.trim();
        let rest = rest.trim_matches(|c| matches!(c, '`' | '"' | '\''));
        (!rest.is_empty() && !rest.contains(char::is_whitespace)).then_some(rest)
    })
}

/// The marker Trellis' hooks and plugin put before what they inject.
const TRELLIS_MARKER: &str = "<!-- trellis-hook-injected";

/// The marker of another injector's (or curate's own) context in a prompt, if any. The
/// aiws plugin's `<aiws-context-fallback>` (its scaffold when no manifest exists) is no
/// injection of context: see [`without_fallback`].
#[must_use]
pub fn injected_by(prompt: &str) -> Option<&'static str> {
    [
        "<!-- curate:begin",
        "<!-- curate:end",
        "<aiws-context-meta>",
        "<aiws-context>",
        "<aiws-context-injection",
        TRELLIS_MARKER,
    ]
    .into_iter()
    .find(|m| prompt.contains(m))
}

/// True when another injector (or curate itself) already put context into the prompt.
#[must_use]
pub fn already_injected(prompt: &str) -> bool {
    injected_by(prompt).is_some()
}

/// The prompt without the aiws plugin's fallback scaffold in front of it (that plugin
/// writes `<aiws-context-fallback>…</aiws-context-instruction>`, a line `---`, then the
/// lead's prompt), so that curate's bundle replaces it: a sub-agent told "no curated
/// context, use Glob and Grep" next to its curated context would get two contradicting
/// instructions, and its `Change:` line is the plugin's guess, never a `change:` line.
#[must_use]
pub fn without_fallback(prompt: &str) -> &str {
    const HEAD: &str = "<aiws-context-fallback>";
    const ENDS: [&str; 2] = ["</aiws-context-instruction>", "</aiws-context-fallback>"];
    if !prompt.trim_start().starts_with(HEAD) {
        return prompt;
    }
    // After its last block (the instruction, else the fallback itself), the line `---`
    // between blank lines; its lines may end in `\r\n`.
    let Some(end) = ENDS
        .iter()
        .find_map(|e| prompt.find(e).map(|i| i + e.len()))
    else {
        return prompt;
    };
    let mut rest = &prompt[end..];
    while let Some(nl) = rest.find('\n') {
        let line = rest[..nl].trim_end_matches('\r');
        rest = &rest[nl + 1..];
        if line == "---" {
            // The blank line after the separator, when there is one.
            let blank = rest
                .strip_prefix("\r\n")
                .or_else(|| rest.strip_prefix('\n'));
            return blank.unwrap_or(rest);
        }
        if !line.trim().is_empty() {
            return prompt;
        }
    }
    prompt
}

/// The workspace of a dispatch: the host's folder, else `-C`, else `CLAUDE_PROJECT_DIR`,
/// else the process's; then the usual discovery of the repository root.
pub(crate) fn workspace(cwd: Option<&Path>, o: &WorkspaceOptions) -> Option<Workspace> {
    let dir = cwd
        .map(Path::to_path_buf)
        .or_else(|| o.dir.clone())
        .or_else(|| std::env::var_os("CLAUDE_PROJECT_DIR").map(PathBuf::from));
    Workspace::resolve(&WorkspaceOptions {
        dir,
        progress: false,
        ..o.clone()
    })
    .ok()
}

/// The role name of a dispatch: the normalised agent type when the contracts or `[roles]`
/// know it, else a `role:` prompt line that they know; never a default.
fn role_of(ws: &Workspace, d: &Dispatch<'_>) -> Option<String> {
    let known = known_roles(ws)?;
    d.agent_type
        .map(normalize_role)
        .filter(|r| known(r))
        .or_else(|| {
            prompt_line(d.prompt, "role")
                .map(normalize_role)
                .filter(|r| known(r))
        })
}

/// Whether a name is a role of the repository: a contract role or a `[roles]` alias.
fn known_roles(ws: &Workspace) -> Option<impl Fn(&str) -> bool + '_> {
    let contracts = ws.load_contracts().ok()?;
    Some(move |name: &str| {
        check_name("role", name).is_ok()
            && (ws.config.roles.contains_key(name)
                || contracts.role(ws.config.contract_role(name)).is_ok())
    })
}

/// A hook input as one JSON object with its event (by `event`), the event noted in
/// `trace`; `cwd`, when there, a folder (by `folder`). `Err`: the answer to give — nothing,
/// the malformed input logged (`missing`: what is said when the event is not found).
pub fn read_input(
    input: &[u8],
    o: &WorkspaceOptions,
    trace: &Trace,
    event: fn(&serde_json::Value) -> Option<&str>,
    missing: &str,
    folder: fn(&serde_json::Value) -> Option<&str>,
) -> std::result::Result<(serde_json::Value, String), Option<serde_json::Value>> {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(input) else {
        let cwd = first_field(input, "cwd");
        return Err(malformed(cwd.as_deref(), o, trace, "not one JSON object"));
    };
    let bad = |what: &str| Err(malformed(folder(&v), o, trace, what));
    let Some(found) = event(&v).map(str::to_owned) else {
        return bad(missing);
    };
    trace.note(|t| t.event = Some(found.clone()));
    if v.get("cwd").is_some_and(|c| !c.is_string())
        || folder(&v).is_some_and(|c| Path::new(c).is_file())
    {
        return bad("\"cwd\" is no folder");
    }
    Ok((v, found))
}

/// The change of a dispatch: a `change:` prompt line, the workflow's own line (Trellis'
/// `Active task: <path>`), `CURATE_CHANGE`, the session's binding, the repository's
/// binding, the change the workflow's own tools work on (spec-kit's current feature);
/// never guessed. A path to the change is reduced to its id. `Some(Err)`: the id
/// named is no valid id.
fn change_of(ws: &Workspace, d: &Dispatch<'_>) -> Option<crate::error::Result<String>> {
    let change = prompt_line(d.prompt, "change")
        .map(str::to_owned)
        .or_else(|| task_line(ws, d.prompt))
        .or_else(|| {
            std::env::var("CURATE_CHANGE")
                .ok()
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        })
        .or_else(|| crate::state::bound_change(&ws.root, d.session))
        .or_else(|| ws.workflow().current(&ws.root))?;
    // As written: a path may name where the change is (Trellis' archive months).
    Some(check_name("change id", ws.workflow().normalize_id(&change)).map(|()| change))
}

/// The change the workflow's own prompt line names, repository-relative (an absolute path
/// inside the repository is made relative; one outside names nothing).
fn task_line(ws: &Workspace, prompt: &str) -> Option<String> {
    let value = prompt_line(prompt, ws.workflow().task_line()?)?;
    let path = Path::new(value);
    if !path.is_absolute() {
        return Some(value.to_owned());
    }
    // The root is canonical: so is the path compared with it.
    let real = path.canonicalize().ok()?;
    real.strip_prefix(&ws.root)
        .ok()?
        .to_str()
        .map(str::to_owned)
}

/// Compiles (writing the manifest and lock, as `curate compile` does) and renders the
/// dispatch's prompt; `None` when curate has nothing to say (no role, no change, an error),
/// the reason noted in `trace`.
#[must_use]
pub fn prepare(d: &Dispatch<'_>, o: &WorkspaceOptions, trace: &Trace) -> Option<Prepared> {
    let original = without_fallback(d.prompt);
    let d = &Dispatch {
        cwd: d.cwd.clone(),
        prompt: original,
        ..*d
    };
    let Some(ws) = workspace(d.cwd.as_deref(), o) else {
        return trace.skip("no repository found");
    };
    trace.note(|t| t.root = Some(ws.root.to_path_buf()));
    crate::warm::lang(ws.config.lang);
    // The workflow's own injector put the list in already (OpenCode runs curate after it):
    // the list is still written, for the dispatches after this one and the workflow's own
    // validator, and nothing is injected.
    let marker = injected_by(d.prompt);
    let theirs =
        marker.filter(|m| *m == TRELLIS_MARKER && ws.workflow().injector(&ws.root).is_some());
    if let Some(marker) = marker
        && theirs.is_none()
    {
        return trace.skip(&format!("already injected ({marker} in the prompt)"));
    }
    let change = change_of(&ws, d);
    let ad_hoc = change.is_none() && ad_hoc::allowed(&ws);
    let role = role_of(&ws, d).or_else(|| ad_hoc.then(|| ad_hoc::role(&ws, d)).flatten());
    let Some(role) = role else {
        return trace.skip(&format!(
            "no role: agent type {:?} is no contract role or [roles] alias, and no `role:` line names one",
            d.agent_type.unwrap_or_default()
        ));
    };
    trace.note(|t| t.role = Some(role.clone()));
    let change = match change {
        Some(Ok(change)) => change,
        Some(Err(e)) => return trace.skip(&first_line(&e)),
        None if ad_hoc => return ad_hoc::prepare(&ws, &role, d, trace),
        None => {
            return trace.skip(
                "no change: no `change:` line, no CURATE_CHANGE, no binding (`curate use <id>`)",
            );
        }
    };
    trace.note(|t| t.change = Some(change.clone()));
    let (ws, change) = match ws.for_change(&change) {
        Ok(w) => w,
        Err(e) => return trace.skip(&first_line(&e)),
    };
    if let Some(warning) = &ws.changes_warning {
        // A change the lead named that is not there (a typo, most often): the lead is told,
        // with the ids that look like it, and no folder is made for it.
        trace.note(|t| t.status = Some(Status::Blocked.name()));
        let looked = if ws.looked.is_empty() {
            String::new()
        } else {
            format!("looked for the change in: {}\n", ws.looked.join(", "))
        };
        return Some(Prepared::NotReady {
            status: Status::Blocked,
            report: format!(
                "BLOCKED: {warning}\n{looked}nothing written: a hook makes no folder for a change; name an existing change in the prompt's `change:` line, or create the change first\n"
            ),
            deny: ws.config.on_not_ready == crate::config::OnNotReady::Deny,
        });
    }
    let task_file = match prompt_line(d.prompt, "task") {
        Some(t) => match crate::trust::admit::contained(&ws.root, "task", t) {
            Ok(p) => Some(p),
            Err(e) => return trace.skip(&first_line(&e.into())),
        },
        None => None,
    };
    let options = CompileOptions {
        task_file,
        task_text: prompt_as_text(&ws, d.prompt, trace),
        ..CompileOptions::defaults(&ws, &role, &change)
    };
    finish(&ws, &options, d, trace, theirs)
}

/// The lead's prompt as the task's text, when the task's words are on (`[select] task`):
/// recorded in the lock, so a prompt that holds a secret is left out (and the log says so).
fn prompt_as_text(
    ws: &Workspace,
    prompt: &str,
    trace: &Trace,
) -> Option<crate::settings::TextSource> {
    if ws.config.task_tokens == 0 || prompt.trim().is_empty() {
        return None;
    }
    match crate::trust::admit::rules().map(|r| r.scan(prompt.as_bytes())) {
        Ok(None) => Some(crate::settings::TextSource::Prompt(prompt.to_owned())),
        Ok(Some(hit)) => {
            trace.note(|t| {
                t.reason = Some(format!(
                    "the prompt is not read as the task's text: it holds a secret ({} on line {})",
                    hit.rule, hit.line
                ));
            });
            None
        }
        Err(_) => None,
    }
}

/// Compiles `o` (writing the manifest and lock) and renders the dispatch's prompt: READY,
/// else the report for the lead; `None` when the workflow's own injector takes the list.
fn finish(
    ws: &Workspace,
    o: &CompileOptions,
    d: &Dispatch<'_>,
    trace: &Trace,
    theirs: Option<&'static str>,
) -> Option<Prepared> {
    let (role, change) = (o.role.clone(), o.change.clone());
    let (compiled, settings) = match compile_list(ws, o) {
        Ok(c) => c,
        Err(reason) => return trace.skip(&reason),
    };
    trace.note(|t| t.status = Some(compiled.status.name()));
    if let Some(marker) = theirs {
        trace.note(|t| t.status = None);
        return trace.skip(&format!(
            "the list is written; {marker} was injected already, from the list as it stood"
        ));
    }
    if compiled.status == Status::Ready
        && let Some(injector) = ws.workflow().injector(&ws.root)
    {
        // The workflow's own hook injects the file curate just wrote: one injection only.
        trace.note(|t| t.status = None);
        return trace.skip(&format!(
            "written for {injector}, which injects it (one injection only)"
        ));
    }
    if compiled.status != Status::Ready {
        let style = crate::report::Style { color: false };
        let report = truncate(
            crate::report::human(&compiled, style, false, false, "nothing written", None),
            3_000,
        );
        return Some(Prepared::NotReady {
            status: compiled.status,
            report,
            deny: ws.config.on_not_ready == crate::config::OnNotReady::Deny,
        });
    }
    let job = Job::new(
        ws,
        &settings,
        &compiled,
        ws.config.lang,
        ByteCaps::of(&ws.config),
    );
    let bundle = match render::render_string(&job, "bundle") {
        Ok(b) => b,
        Err(e) => {
            trace.note(|t| t.status = None);
            return trace.skip(&first_line(&e));
        }
    };
    let (files, lines, tokens) = compiled.totals();
    let prompt = compose(&role, &change, &bundle, d.prompt, (files, lines, tokens));
    Some(Prepared::Ready {
        prompt,
        root: ws.root.to_path_buf(),
        crumb: crate::state::Breadcrumb {
            session: d.session.unwrap_or_default().to_owned(),
            role,
            agent_type: d.agent_type.map(normalize_role).unwrap_or_default(),
            change,
            manifest: compiled.manifest_path.clone(),
            files,
            lines,
            tokens,
            at_ms: 0,
            context: None,
        },
    })
}

/// Compiles `role` on `change` and writes the manifest and lock, as `curate compile` does.
/// A manifest the lead edited by hand is the lead's curation: it is read as it stands.
/// `Err`: why nothing was compiled, in one line.
fn compile_list(
    ws: &Workspace,
    options: &CompileOptions,
) -> Result<(crate::compile::Compiled, CompileSettings), String> {
    // Its bundle renders the files' text.
    let mode = Mode {
        write: true,
        renders: true,
        take_hand_edit: true,
        ..Mode::default()
    };
    commit(ws, options, mode)
        .map(|c| (c.compiled, c.settings))
        .map_err(|e| first_line(&e))
}

/// The first line of an error's message, for the hook log.
fn first_line(e: &Error) -> String {
    e.to_string().lines().next().unwrap_or_default().to_owned()
}

/// The dispatch prompt: `role:` line, begin marker, the bundle without its end marker,
/// `---`, the original prompt unchanged, and the end marker as the very last line.
#[must_use]
pub fn compose(
    role: &str,
    change: &str,
    bundle: &str,
    original: &str,
    (files, lines, tokens): (usize, u64, u64),
) -> String {
    let mut body: Vec<&str> = bundle.lines().collect();
    if let Some(i) = body
        .iter()
        .rposition(|l| l.trim_start().starts_with("<!-- curate:end"))
    {
        body.remove(i);
    }
    while body.last().is_some_and(|l| l.trim().is_empty()) {
        body.pop();
    }
    let role_line = format!("role: {role}");
    let begin = format!("<!-- curate:begin role=\"{role}\" change=\"{change}\" -->");
    let mut out = String::with_capacity(bundle.len() + original.len() + 256);
    // A repository template may leave out the head lines: they are the hosts' contract.
    let mut rest = body.as_slice();
    if rest.first() == Some(&role_line.as_str()) {
        rest = &rest[1..];
    }
    if rest
        .first()
        .is_some_and(|l| l.starts_with("<!-- curate:begin"))
    {
        rest = &rest[1..];
    }
    out.push_str(&role_line);
    out.push('\n');
    out.push_str(&begin);
    out.push('\n');
    for l in rest {
        out.push_str(l);
        out.push('\n');
    }
    out.push_str("---\n");
    out.push_str(original.trim_end_matches(['\n', '\r']));
    out.push('\n');
    out.push_str(&format!(
        "<!-- curate:end files={files} lines={lines} tokens={tokens} -->"
    ));
    out
}

/// `text` cut to at most `max` characters (on a character boundary), ending in `[…cut]`
/// when it was cut.
fn truncate(text: String, max: usize) -> String {
    const CUT: &str = "\n[…cut]";
    if text.chars().count() <= max {
        return text;
    }
    let keep = max.saturating_sub(CUT.chars().count());
    let mut out: String = text.chars().take(keep).collect();
    out.push_str(CUT);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_types_are_normalised_as_hosts_spell_them() {
        assert_eq!(normalize_role("Code Reviewer"), "code-reviewer");
        assert_eq!(normalize_role("curate_worker"), "worker");
        assert_eq!(normalize_role("aiws-Explorer"), "explorer");
        assert_eq!(normalize_role("trellis-implement"), "implement");
        assert_eq!(normalize_role("general-purpose"), "general-purpose");
    }

    #[test]
    fn prompt_lines_take_one_word() {
        let p = "Do it.\n  change: add-auth \nrole: worker and more\ntask: t.json";
        assert_eq!(prompt_line(p, "change"), Some("add-auth"));
        assert_eq!(prompt_line(p, "role"), None);
        assert_eq!(prompt_line(p, "task"), Some("t.json"));
        assert_eq!(prompt_line("changes: x", "change"), None);
        assert_eq!(
            prompt_line("- Change: `add-auth`", "change"),
            Some("add-auth")
        );
        assert_eq!(
            prompt_line("* ROLE: \"reviewer\"\r\n", "role"),
            Some("reviewer")
        );
        assert_eq!(prompt_line("change:", "change"), None);
        assert_eq!(prompt_line("é: x\nchange: c", "change"), Some("c"));
    }

    #[test]
    fn the_composed_prompt_ends_with_its_only_end_marker() {
        let bundle = "role: worker\n<!-- curate:begin role=\"worker\" change=\"c\" -->\nbody\n<!-- curate:end files=1 lines=2 tokens=3 -->\n";
        let p = compose("worker", "c", bundle, "the task\n", (1, 2, 3));
        assert_eq!(
            p,
            "role: worker\n<!-- curate:begin role=\"worker\" change=\"c\" -->\nbody\n---\nthe task\n<!-- curate:end files=1 lines=2 tokens=3 -->"
        );
        // A template without the head lines still gives them.
        let p = compose("worker", "c", "just body\n", "t", (0, 0, 0));
        assert!(p.starts_with("role: worker\n<!-- curate:begin"));
        assert_eq!(p.matches("curate:end").count(), 1);
    }

    #[test]
    fn the_aiws_fallback_is_no_injection_and_is_taken_off_the_prompt() {
        let fallback = "<aiws-context-fallback>\nNo curated context JSONL for role \"worker\" in change \"x\".\n</aiws-context-fallback>\n\n<change-context>\nChange: x\n</change-context>\n\n<aiws-context-instruction>\nUse Glob.\n</aiws-context-instruction>\n\n---\n\nDo it.\nchange: demo";
        assert!(!already_injected(fallback));
        assert_eq!(without_fallback(fallback), "Do it.\nchange: demo");
        // Its lines ending in `\r\n`, or without the instruction block.
        let crlf = fallback.replace('\n', "\r\n");
        assert_eq!(without_fallback(&crlf), "Do it.\r\nchange: demo");
        let short = "<aiws-context-fallback>\r\nNo.\r\n</aiws-context-fallback>\r\n\r\n---\r\n\r\nchange: add-auth\r\nDo";
        assert_eq!(without_fallback(short), "change: add-auth\r\nDo");
        // No separator: left as it is.
        let open = "<aiws-context-fallback>\nNo.\n</aiws-context-fallback>\n\nDo it.";
        assert_eq!(without_fallback(open), open);
        assert_eq!(without_fallback("Do it."), "Do it.");
        let injected = "<aiws-context-meta>\nrole: worker\n</aiws-context-meta>\n\n---\n\nDo it.";
        assert_eq!(injected_by(injected), Some("<aiws-context-meta>"));
        assert_eq!(without_fallback(injected), injected);
    }

    #[test]
    fn a_cut_text_keeps_within_its_limit_and_says_so() {
        assert_eq!(truncate("short".to_owned(), 10), "short");
        let cut = truncate("é".repeat(50), 20);
        assert_eq!(cut.chars().count(), 20);
        assert!(cut.ends_with("[…cut]"));
    }
}
