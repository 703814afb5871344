//! The trust boundary (README, Security), tested as an attacker would: links judged by their
//! targets, only regular files read, every read bounded, `.git/` never read, writes kept
//! inside the repository, secrets kept out of everything curate prints or writes, bounded
//! work. Every run here has a time limit, so a run that blocks on a FIFO or reads
//! `/dev/zero` fails its test instead of hanging the suite.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::{Output, Repo};

/// The change every test here compiles.
const CHANGE: &str = "c1";
/// Its worker manifest, lock and overrides file.
const MANIFEST: &str = "changes/c1/analysis/worker-context.jsonl";
const LOCK: &str = "changes/c1/analysis/worker-context.lock.json";
const OVERRIDES: &str = "changes/c1/analysis/worker-context.overrides.jsonl";

/// No extra arguments.
const NONE: &[&str] = &[];

/// How long one run may take before it counts as hung.
const LIMIT: Duration = Duration::from_secs(20);

/// The address-space cap (KiB) for runs fed `/dev/zero`: enough for a normal run (which
/// needs far less), small enough that an unbounded read fails fast instead of taking the
/// machine's memory.
const MEM_CAP_KIB: u64 = 2 * 1024 * 1024;

// ---------------------------------------------------------------------------------------
// Harness: runs with a time limit

/// A `curate` run with a time limit.
struct Run {
    root: PathBuf,
    cwd: PathBuf,
    args: Vec<String>,
    mem_cap: bool,
}

/// A started run.
struct Running {
    child: Child,
    stdout: JoinHandle<Vec<u8>>,
    stderr: JoinHandle<Vec<u8>>,
    root: String,
    what: String,
}

fn curate(repo: &Repo) -> Run {
    Run {
        root: repo.root.clone(),
        cwd: repo.root.clone(),
        args: Vec::new(),
        mem_cap: false,
    }
}

/// `curate <sub> --role worker --change c1 <extra>` (`sub` empty for a compile).
fn worker<S: AsRef<str>>(repo: &Repo, sub: &str, extra: &[S]) -> Run {
    let mut run = curate(repo);
    if !sub.is_empty() {
        run = run.args(&[sub]);
    }
    run.args(&["--role", "worker", "--change", CHANGE])
        .args(extra)
}

impl Run {
    fn args<S: AsRef<str>>(mut self, args: &[S]) -> Run {
        self.args.extend(args.iter().map(|s| s.as_ref().to_owned()));
        self
    }

    /// Caps the address space (unix `ulimit -v`), for inputs such as `/dev/zero`.
    fn mem_cap(mut self) -> Run {
        self.mem_cap = true;
        self
    }

    fn start(self) -> Running {
        let bin = env!("CARGO_BIN_EXE_curate");
        let mut cmd = if self.mem_cap {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg(format!("ulimit -v {MEM_CAP_KIB} && exec \"$0\" \"$@\""))
                .arg(bin);
            c
        } else {
            Command::new(bin)
        };
        cmd.args(&self.args)
            .current_dir(&self.cwd)
            .env_remove("CURATE_CONTRACTS")
            .env("NO_COLOR", "1")
            .env("CURATE_CACHE_DIR", self.root.with_file_name("cache"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("run curate");
        let mut out = child.stdout.take().unwrap();
        let mut err = child.stderr.take().unwrap();
        Running {
            child,
            stdout: std::thread::spawn(move || {
                let mut b = Vec::new();
                let _ = out.read_to_end(&mut b);
                b
            }),
            stderr: std::thread::spawn(move || {
                let mut b = Vec::new();
                let _ = err.read_to_end(&mut b);
                b
            }),
            root: self.root.to_string_lossy().into_owned(),
            what: format!("curate {}", self.args.join(" ")),
        }
    }

    /// Runs to the end; `Err` when it did not end within [`LIMIT`] (it is killed) or
    /// panicked.
    fn run(self) -> Result<Output, String> {
        self.start().finish(LIMIT)
    }

    /// Runs to the end, failing the test when it hangs or panics.
    fn ok(self) -> Output {
        self.run().unwrap_or_else(|e| panic!("{e}"))
    }
}

impl Running {
    fn finish(mut self, limit: Duration) -> Result<Output, String> {
        let start = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break Some(status);
            }
            if start.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let stdout = self.stdout.join().unwrap_or_default();
        let stderr = self.stderr.join().unwrap_or_default();
        let clean = |b: &[u8]| String::from_utf8_lossy(b).replace(&self.root, "[ROOT]");
        let Some(status) = status else {
            return Err(format!(
                "`{}` did not end within {limit:?} (killed); stderr so far:\n{}",
                self.what,
                clean(&stderr)
            ));
        };
        let output = Output {
            code: status.code().unwrap_or(-1),
            stdout: clean(&stdout),
            stderr: clean(&stderr),
        };
        if output.stderr.contains("panicked at") || output.stdout.contains("panicked at") {
            return Err(format!("`{}` panicked:\n{}", self.what, output.stderr));
        }
        Ok(output)
    }
}

// ---------------------------------------------------------------------------------------
// Fixtures

/// A repository with a contracts file whose worker role reads `README.md` (high) and each
/// of `globs` (medium), a README, and the change folder.
fn repo_with(globs: &[&str]) -> Repo {
    let repo = Repo::empty();
    repo.write(
        "contracts/workflow-delegation-contracts.json",
        &contracts(globs),
    );
    repo.write("README.md", "# readme\n\nThe project.\n");
    repo.write("changes/c1/notes.md", "notes\n");
    repo
}

fn contracts(globs: &[&str]) -> String {
    let mut files = vec![r#"{"glob":"README.md","priority":"high","kind":"truth"}"#.to_owned()];
    for g in globs {
        files.push(format!(
            r#"{{"glob":{},"priority":"medium","kind":"truth"}}"#,
            serde_json::Value::from(*g)
        ));
    }
    format!(
        r#"{{"roleTypes":[{{"id":"worker","contextFiles":[{}]}}]}}"#,
        files.join(",")
    )
}

/// A folder outside the repository (beside it, in the same temporary folder).
fn outside(repo: &Repo, name: &str) -> PathBuf {
    let dir = repo.root.with_file_name(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[cfg(unix)]
fn symlink(target: impl AsRef<Path>, repo: &Repo, rel: &str) {
    let link = repo.root.join(rel);
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, link).unwrap();
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Every file below `dir` (none when it does not exist).
fn files_below(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| !e.file_type().is_dir())
        .map(|e| e.path().to_owned())
        .collect()
}

/// The text of every manifest and lock curate may have written, and of its temporaries
/// (the overrides files here are written by the tests, never by curate).
fn written_by_curate(repo: &Repo) -> Vec<(String, String)> {
    files_below(&repo.root)
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.ends_with("-context.jsonl")
                || name.ends_with("-context.lock.json")
                || name.contains(".tmp-")
        })
        .filter_map(|p| {
            let text = String::from_utf8_lossy(&std::fs::read(&p).ok()?).into_owned();
            Some((p.display().to_string(), text))
        })
        .collect()
}

/// Where `value` shows up: in any output, or in a file curate wrote.
fn leaks(repo: &Repo, value: &str, outs: &[(&str, &Output)]) -> Vec<String> {
    let mut found = Vec::new();
    for (what, out) in outs {
        if out.stdout.contains(value) {
            found.push(format!("stdout of {what}"));
        }
        if out.stderr.contains(value) {
            found.push(format!("stderr of {what}"));
        }
    }
    for (path, text) in written_by_curate(repo) {
        if text.contains(value) {
            found.push(format!("file {path}"));
        }
    }
    found
}

/// The `file` of every entry line of a manifest text.
fn entries(manifest: &str) -> Vec<String> {
    manifest
        .lines()
        .filter(|l| l.starts_with('{'))
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["file"].as_str().map(str::to_owned))
        .collect()
}

/// The `// curation:` lines of a manifest text.
fn notes(manifest: &str) -> Vec<&str> {
    manifest
        .lines()
        .filter(|l| l.starts_with("// curation:"))
        .collect()
}

/// Deterministic pseudo-random text (a fixed LCG), for fake token bodies: never a real key.
fn noise(len: usize, alphabet: &[u8], seed: u64) -> String {
    let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let index = usize::try_from(state >> 33).unwrap_or(0) % alphabet.len();
            char::from(alphabet[index])
        })
        .collect()
}

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER_ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const DIGITS: &[u8] = b"0123456789";
const HEX: &[u8] = b"0123456789abcdef";
const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn ghp(seed: u64) -> String {
    ["ghp_", &noise(36, ALNUM, seed)].concat()
}

/// Fails with every collected problem, one a line.
fn assert_none(problems: &[String], what: &str) {
    assert!(
        problems.is_empty(),
        "{what}: {} problem(s):\n- {}",
        problems.len(),
        problems.join("\n- ")
    );
}

// ---------------------------------------------------------------------------------------
// Fault 1: a link is judged by its name, not its target

/// The value of the `.env` the link points at: not caught by any content rule (unquoted),
/// so only the name rule applied to the link's target keeps it out.
const ENV_VALUE: &str = "hunter2hunter2x";
const ENV_TEXT: &str = "# local only\nDATABASE_PASSWORD=hunter2hunter2x\nSTRIPE_MODE=live\n";

/// One way a file is named: the contract globs, extra flags, and files to write first
/// (`{P}` in them is replaced by the path).
struct Route {
    name: &'static str,
    globs: Vec<String>,
    args: Vec<String>,
    files: Vec<(String, String)>,
}

/// Every route that names a repository file for a compile, for path `p`.
fn routes(p: &str) -> Vec<Route> {
    let glob = match p.rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/*"),
        None => "*".to_owned(),
    };
    let s = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let json = |v: &str| serde_json::Value::from(v).to_string();
    vec![
        Route {
            name: "contract glob",
            globs: vec![glob.clone()],
            args: vec![],
            files: vec![],
        },
        Route {
            name: "contract literal",
            globs: vec![p.to_owned()],
            args: vec![],
            files: vec![],
        },
        Route {
            name: "--owns glob",
            globs: vec![],
            args: s(&["--owns", &glob]),
            files: vec![],
        },
        Route {
            name: "--reads literal",
            globs: vec![],
            args: s(&["--reads", p]),
            files: vec![],
        },
        Route {
            name: "--files-from",
            globs: vec![],
            args: s(&["--files-from", "list.txt"]),
            files: vec![("list.txt".to_owned(), format!("{p}\n"))],
        },
        Route {
            name: "task file files_owned",
            globs: vec![],
            args: s(&["--task-file", "task.json"]),
            files: vec![(
                "task.json".to_owned(),
                format!(
                    r#"{{"task_id":"t1","success_criteria":["done"],"files_owned":[{}]}}"#,
                    json(p)
                ),
            )],
        },
        Route {
            name: "overrides file line",
            globs: vec![],
            args: vec![],
            files: vec![(
                OVERRIDES.to_owned(),
                format!(
                    "{{\"file\":{},\"priority\":\"high\",\"kind\":\"truth\"}}\n",
                    json(p)
                ),
            )],
        },
        Route {
            name: "--add",
            globs: vec![],
            args: s(&["--add", &format!("{p}:high:truth")]),
            files: vec![],
        },
    ]
}

impl Route {
    fn repo(&self) -> Repo {
        let globs: Vec<&str> = self.globs.iter().map(String::as_str).collect();
        let repo = repo_with(&globs);
        for (rel, text) in &self.files {
            repo.write(rel, text);
        }
        repo
    }

    fn args(&self) -> Vec<&str> {
        self.args.iter().map(String::as_str).collect()
    }
}

/// Runs compile (written, with `--explain`), compile `--format json --explain --dry-run`,
/// `render` and `preview --format json`; returns the problems found: `value` anywhere, or
/// `path` an entry of the written manifest.
fn every_output_of(repo: &Repo, extra: &[&str], path: &str, value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let runs = [
        (
            "compile --explain",
            worker(repo, "", &["--explain", "--max-files", "0"]),
        ),
        (
            "compile --format json --explain --dry-run",
            worker(
                repo,
                "",
                &[
                    "--format",
                    "json",
                    "--explain",
                    "--dry-run",
                    "--max-files",
                    "0",
                ],
            ),
        ),
        ("render", worker(repo, "render", &["--max-files", "0"])),
        (
            "preview --format json",
            worker(repo, "preview", &["--format", "json", "--max-files", "0"]),
        ),
    ];
    let mut outs = Vec::new();
    for (what, run) in runs {
        match run.args(extra).run() {
            Ok(out) => outs.push((what, out)),
            Err(e) => problems.push(e),
        }
    }
    let refs: Vec<(&str, &Output)> = outs.iter().map(|(w, o)| (*w, o)).collect();
    for place in leaks(repo, value, &refs) {
        problems.push(format!("the value shows in {place}"));
    }
    if repo.exists(MANIFEST) {
        let manifest = repo.read(MANIFEST);
        if entries(&manifest).iter().any(|f| f == path) {
            problems.push(format!("{path} is an entry of the manifest"));
        }
    }
    for (what, out) in &outs {
        if out.stdout.contains(&format!("=== {path} ===")) {
            problems.push(format!("{what} inlines {path}"));
        }
    }
    problems
}

// Fault 1: `docs/settings.md -> ../.env` is inlined; after, it is a secret by its target's
// name on every route, and its value appears nowhere.
#[cfg(unix)]
#[test]
fn a_link_to_a_dotenv_is_a_secret_on_every_route() {
    let link = "docs/settings.md";
    let mut problems = Vec::new();
    for route in routes(link) {
        let repo = route.repo();
        repo.write(".env", ENV_TEXT);
        symlink("../.env", &repo, link);
        for p in every_output_of(&repo, &route.args(), link, ENV_VALUE) {
            problems.push(format!("[{}] {p}", route.name));
        }
        // The written manifest says why the link is out.
        if repo.exists(MANIFEST) {
            let manifest = repo.read(MANIFEST);
            if !notes(&manifest)
                .iter()
                .any(|n| n.contains(&format!("\"{link}\"")))
            {
                problems.push(format!(
                    "[{}] no `// curation:` note names {link}:\n{manifest}",
                    route.name
                ));
            }
        }
    }

    // `render --manifest` and `check` with a manifest that lists the link.
    let repo = repo_with(&[]);
    repo.write(".env", ENV_TEXT);
    symlink("../.env", &repo, link);
    repo.write(
        "hand/worker.jsonl",
        concat!(
            "{\"file\":\"README.md\",\"reason\":\"r\",\"sections\":null,\"priority\":\"high\",\"kind\":\"truth\"}\n",
            "{\"file\":\"docs/settings.md\",\"reason\":\"r\",\"sections\":null,\"priority\":\"high\",\"kind\":\"truth\"}\n",
        ),
    );
    let rendered = worker(&repo, "render", &["--manifest", "hand/worker.jsonl"]).ok();
    if rendered.stdout.contains(ENV_VALUE) || rendered.stderr.contains(ENV_VALUE) {
        problems.push("[render --manifest] the value is printed".to_owned());
    }
    let checked = curate(&repo).args(&["check", "hand/worker.jsonl"]).ok();
    if checked.code != 1 {
        problems.push(format!(
            "[check] a manifest listing the link passes (exit {}):\n{}",
            checked.code, checked.stderr
        ));
    }
    if checked.stdout.contains(ENV_VALUE) || checked.stderr.contains(ENV_VALUE) {
        problems.push("[check] the value is printed".to_owned());
    }
    assert_none(&problems, "a link to .env");
}

// ---------------------------------------------------------------------------------------
// Fault 2: repository templates are read without containment

// Fault 2: `.curate/templates/<name>.tera` linked out of the repository (or to a secret)
// pastes that file into the prompt; after, it is refused (non-zero exit) and never printed.
#[cfg(unix)]
#[test]
fn a_repository_template_linked_outside_or_to_a_secret_is_refused() {
    let marker = "OUTSIDE-TEMPLATE-TEXT-7f3a";
    let mut problems = Vec::new();
    for (name, template, args) in [
        (
            "sticky.tera -> outside",
            "sticky.tera",
            vec!["--template", "sticky"],
        ),
        ("bundle.en.tera -> outside", "bundle.en.tera", vec![]),
        ("bundle.tera -> outside", "bundle.tera", vec![]),
    ] {
        let repo = repo_with(&[]);
        let out_dir = outside(&repo, "outside");
        std::fs::write(out_dir.join("passwd"), format!("root:x:0:0:{marker}\n")).unwrap();
        symlink(
            out_dir.join("passwd"),
            &repo,
            &format!(".curate/templates/{template}"),
        );
        let out = worker(&repo, "render", &args).ok();
        if out.code == 0 {
            problems.push(format!("[{name}] exit 0"));
        }
        if out.stdout.contains(marker) || out.stderr.contains(marker) {
            problems.push(format!("[{name}] the outside file is printed"));
        }
    }
    // A template that is a link to a secret inside the repository.
    let repo = repo_with(&[]);
    repo.write(".env", ENV_TEXT);
    symlink("../../.env", &repo, ".curate/templates/sticky.tera");
    let out = worker(&repo, "render", &["--template", "sticky"]).ok();
    if out.code == 0 {
        problems.push("[sticky.tera -> .env] exit 0".to_owned());
    }
    if out.stdout.contains(ENV_VALUE) || out.stderr.contains(ENV_VALUE) {
        problems.push("[sticky.tera -> .env] the secret is printed".to_owned());
    }
    // `.curate/` itself a link out of the repository: never read.
    let repo = repo_with(&[]);
    let out_dir = outside(&repo, "outside-curate");
    std::fs::create_dir_all(out_dir.join("templates")).unwrap();
    std::fs::write(out_dir.join("templates/sticky.tera"), marker).unwrap();
    symlink(&out_dir, &repo, ".curate");
    let out = worker(&repo, "render", &["--template", "sticky"]).ok();
    if out.stdout.contains(marker) || out.stderr.contains(marker) {
        problems.push("[.curate -> outside] the outside template is used".to_owned());
    }
    assert_none(&problems, "templates");
}

// ---------------------------------------------------------------------------------------
// Fault 3: writes leave the repository

// Fault 3: the manifest and lock are written through a linked `changes/`, `analysis/` or
// `--changes-dir`, and `-o` through a linked folder; the overrides file is read through it.
// After: an error (exit 1) and nothing written outside.
#[cfg(unix)]
#[test]
fn writes_never_go_through_a_link_out_of_the_repository() {
    type Setup = fn(&Repo, &Path) -> Vec<String>;
    let mut problems = Vec::new();
    let cases: [(&str, Setup); 4] = [
        ("changes -> outside", |repo: &Repo, out: &Path| {
            std::fs::create_dir_all(out.join("c1")).unwrap();
            std::fs::remove_dir_all(repo.root.join("changes")).unwrap();
            symlink(out, repo, "changes");
            vec![]
        }),
        (
            "changes/c1/analysis -> outside",
            |repo: &Repo, out: &Path| {
                symlink(out, repo, "changes/c1/analysis");
                vec![]
            },
        ),
        ("--changes-dir through a link", |repo: &Repo, out: &Path| {
            std::fs::create_dir_all(out.join("c1")).unwrap();
            symlink(out, repo, "elsewhere");
            vec!["--changes-dir".to_owned(), "elsewhere".to_owned()]
        }),
        (
            "--changes-dir through a linked parent",
            |repo: &Repo, out: &Path| {
                symlink(out, repo, "elsewhere");
                vec!["--changes-dir".to_owned(), "elsewhere/changes".to_owned()]
            },
        ),
    ];
    for (name, setup) in cases {
        let repo = repo_with(&[]);
        let out_dir = outside(&repo, "outside");
        let extra = setup(&repo, &out_dir);
        let before = files_below(&out_dir);
        let out = worker(&repo, "", &extra).ok();
        if out.code != 1 {
            problems.push(format!(
                "[{name}] exit {} (want 1):\n{}",
                out.code, out.stderr
            ));
        }
        let after = files_below(&out_dir);
        if after != before {
            problems.push(format!("[{name}] wrote outside the repository: {after:?}"));
        }
    }

    // `render -o` through a folder link that leaves the repository.
    let repo = repo_with(&[]);
    let out_dir = outside(&repo, "outside");
    symlink(&out_dir, &repo, "out");
    let out = worker(&repo, "render", &["-o", "out/prompt.md"]).ok();
    if out.code == 0 {
        problems.push("[render -o out/prompt.md, out -> outside] exit 0".to_owned());
    }
    let after = files_below(&out_dir);
    if !after.is_empty() {
        problems.push(format!(
            "[render -o through a link] wrote outside: {after:?}"
        ));
    }

    // The overrides file read through a linked `analysis/` (preview writes nothing, so it
    // may go on, but never with the outside overrides).
    let repo = repo_with(&[]);
    let out_dir = outside(&repo, "outside");
    std::fs::write(
        out_dir.join("worker-context.overrides.jsonl"),
        "{\"file\":\"README.md\",\"reason\":\"OUTSIDE-OVERRIDE-REASON-51c2\"}\n",
    )
    .unwrap();
    symlink(&out_dir, &repo, "changes/c1/analysis");
    let out = worker(&repo, "preview", NONE).ok();
    if out.stdout.contains("OUTSIDE-OVERRIDE-REASON-51c2")
        || out.stderr.contains("OUTSIDE-OVERRIDE-REASON-51c2")
    {
        problems.push("[preview] the overrides file outside the repository is used".to_owned());
    }
    assert_none(&problems, "writes outside");
}

// ---------------------------------------------------------------------------------------
// Fault 4: common secret files

/// The secret file names of the trust boundary, with harmless content no content rule catches.
const SECRET_NAMES: &[&str] = &[
    ".docker/config.json",
    ".kube/config",
    "kubeconfig",
    "kubeconfig-prod.yaml",
    "terraform.tfstate",
    "infra/terraform.tfstate.backup",
    "wp-config.php",
    ".htpasswd",
    ".pgpass",
    "x.ppk",
    ".vault-token",
    "passwords.kdbx",
    ".s3cfg",
    ".boto",
];

// Fault 4: `.docker/config.json`, `.kube/config`, `kubeconfig`, `*.tfstate`,
// `wp-config.php`, `.htpasswd`, `.pgpass`, `*.ppk`, … are kept; after, each is excluded with
// a note, by a glob and by `--add`, and never an entry.
#[test]
fn common_secret_files_are_excluded_by_name() {
    let mut problems = Vec::new();
    let mut adds = Vec::new();
    for name in SECRET_NAMES {
        adds.push("--add".to_owned());
        adds.push(format!("{name}:high:truth"));
    }
    let by_add: Vec<&str> = adds.iter().map(String::as_str).collect();
    for (route, extra) in [("--owns **", vec!["--owns", "**"]), ("--add", by_add)] {
        let repo = repo_with(&[]);
        for (i, name) in SECRET_NAMES.iter().enumerate() {
            repo.write(name, &format!("plain text {i}\n"));
        }
        let mut args = vec!["--max-files", "0", "--max-lines", "0"];
        args.extend(extra);
        let out = worker(&repo, "", &args).ok();
        if out.code != 0 {
            problems.push(format!("[{route}] exit {}:\n{}", out.code, out.stderr));
            continue;
        }
        let manifest = repo.read(MANIFEST);
        let kept = entries(&manifest);
        let notes = notes(&manifest);
        for name in SECRET_NAMES {
            if kept.iter().any(|f| f == name) {
                problems.push(format!("[{route}] {name} is an entry"));
            } else if !notes.iter().any(|n| n.contains(&format!("\"{name}\""))) {
                problems.push(format!("[{route}] no note names {name}"));
            }
        }
    }
    assert_none(&problems, "secret files by name");
}

// ---------------------------------------------------------------------------------------
// Fault 5: `.git/config` read when named

// Fault 5: `.git/config` named literally (`--add`, an override line, a contract literal,
// `--files-from`, `--reads`) is read and becomes an entry; after, it is never read.
#[test]
fn git_config_is_never_read_whoever_names_it() {
    let marker = "Z2l0LWV4dHJhaGVhZGVyLXRva2VuLTk5";
    let mut problems = Vec::new();
    for route in routes(".git/config") {
        let repo = route.repo();
        repo.write(
            ".git/config",
            &format!("[http]\n\textraheader = AUTHORIZATION: basic {marker}\n"),
        );
        for p in every_output_of(&repo, &route.args(), ".git/config", marker) {
            problems.push(format!("[{}] {p}", route.name));
        }
    }
    assert_none(&problems, ".git/config");
}

// ---------------------------------------------------------------------------------------
// Fault 6: content gaps

/// Files whose content holds a token the content rules miss today: (name, text, the value
/// that must never show, or "" when only the entry is checked).
fn content_gaps() -> Vec<(&'static str, Vec<u8>, String)> {
    let mut cases: Vec<(&'static str, Vec<u8>, String)> = Vec::new();
    let mut text = |name: &'static str, line: String, value: String| {
        cases.push((name, format!("# config\n{line}\n").into_bytes(), value));
    };
    let xapp = format!("xapp-1-A0123456789-1234567890123-{}", noise(64, HEX, 601));
    text(
        "slack-app-token",
        format!("SLACK_APP_TOKEN={xapp}"),
        xapp.clone(),
    );
    for (seed, (name, prefix, len, alphabet)) in [
        ("gitlab-runner-token", "glrt-", 20, ALNUM),
        ("gitlab-pipeline-trigger", "glptt-", 40, HEX),
        ("gitlab-deploy-token", "gldt-", 20, ALNUM),
        ("gitlab-feed-token", "glft-", 20, ALNUM),
        ("gitlab-agent-token", "glagent-", 50, ALNUM),
        ("gitlab-oauth-secret", "gloas-", 64, ALNUM),
        ("gitlab-scim-token", "glsoat-", 20, ALNUM),
        ("gitlab-incoming-mail", "glimt-", 25, ALNUM),
        ("gitlab-cicd-job-token", "glcbt-", 20, ALNUM),
        ("gitlab-runner-registration", "GR1348941", 20, ALNUM),
    ]
    .into_iter()
    .enumerate()
    {
        let token = [prefix, &noise(len, alphabet, 700 + seed as u64)].concat();
        text(name, format!("token: {token}"), token.clone());
    }
    // A PEM private key escaped twice inside JSON (a JSON string holding JSON).
    let body: Vec<String> = (0..4).map(|i| noise(64, BASE64, 800 + i)).collect();
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\\\\n{}\\\\n-----END PRIVATE KEY-----\\\\n",
        body.join("\\\\n")
    );
    cases.push((
        "pem-escaped-twice",
        format!("{{\"config\": \"{{\\\"private_key\\\": \\\"{pem}\\\"}}\"}}\n").into_bytes(),
        body[1].clone(),
    ));
    // UTF-16LE text after more than 8 KiB of ASCII (no NUL in the first 8 KiB).
    let mut bytes = Vec::new();
    while bytes.len() < 9000 {
        bytes.extend_from_slice(b"plain ascii filler line of a log export\n");
    }
    let token = ghp(900);
    for unit in format!("\nGITHUB_TOKEN={token}\n").encode_utf16() {
        bytes.extend_from_slice(&unit.to_le_bytes());
    }
    cases.push(("utf16-after-ascii", bytes, String::new()));
    // A token as the user of an https URL.
    let hex_token = noise(40, HEX, 950);
    cases.push((
        "oauth-basic-url",
        format!("url = https://{hex_token}:x-oauth-basic@github.com/owner/repo\n").into_bytes(),
        hex_token,
    ));
    // Written encoded, as gitleaks decodes by default: a private key in base64 (a Helm
    // value), base64 of base64, a token in `\u` escapes (JSON), a key behind comment marks.
    let b64 = |t: &str| base64::Engine::encode(&base64::engine::general_purpose::STANDARD, t);
    let key = format!(
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----\n",
        body.join("\n")
    );
    cases.push((
        "base64-private-key",
        format!("tls:\n  key: {}\n", b64(&key)).into_bytes(),
        body[0].clone(),
    ));
    let token = ghp(960);
    cases.push((
        "base64-twice",
        format!("blob: {}\n", b64(&b64(&format!("GITHUB_TOKEN={token}")))).into_bytes(),
        token.clone(),
    ));
    let escaped: String = ghp(970)
        .chars()
        .map(|c| format!("\\u{:04x}", c as u32))
        .collect();
    cases.push((
        "unicode-escaped-token",
        format!("{{\"t\": \"{escaped}\"}}\n").into_bytes(),
        String::new(),
    ));
    for (name, mark) in [("key-behind-hashes", "# "), ("key-behind-slashes", "// ")] {
        let commented: String = key.lines().map(|l| format!("{mark}{l}\n")).collect();
        cases.push((name, commented.into_bytes(), body[2].clone()));
    }
    cases
}

// Fault 6: Slack app tokens, GitLab token kinds, a PEM key escaped twice in JSON, UTF-16LE
// after an ASCII start, and `https://<token>:x-oauth-basic@github.com/…` are kept; after,
// each file is excluded by content and its token appears nowhere.
#[test]
fn more_token_families_are_caught_by_content() {
    let repo = repo_with(&[]);
    let cases = content_gaps();
    for (name, bytes, _) in &cases {
        let p = repo.root.join(format!("src/{name}.txt"));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    let args = ["--owns", "src/**", "--max-files", "0", "--max-lines", "0"];
    let compiled = worker(&repo, "", &args).ok();
    assert_eq!(compiled.code, 0, "{}", compiled.stderr);
    let previewed = worker(&repo, "preview", &args).ok();
    let manifest = repo.read(MANIFEST);
    let kept = entries(&manifest);
    let mut problems = Vec::new();
    for (name, _, value) in &cases {
        let file = format!("src/{name}.txt");
        if kept.contains(&file) {
            problems.push(format!("{file} is an entry"));
        }
        if !value.is_empty() {
            for place in leaks(
                &repo,
                value,
                &[("compile", &compiled), ("preview", &previewed)],
            ) {
                problems.push(format!("the {name} value shows in {place}"));
            }
        }
    }
    assert_none(&problems, "content gaps");
}

// ---------------------------------------------------------------------------------------
// Fault 7: non-regular files

// Fault 7: a FIFO met by a glob, by `--add`, through a link, at the overrides path, the
// manifest path, as the task file, contracts, template or `--files-from`, blocks the run;
// `/dev/zero` through a link is read. After: nothing blocks, the FIFO or device is never an
// entry.
#[cfg(unix)]
#[test]
fn fifos_and_devices_never_block_and_never_become_entries() {
    type Setup = fn(&Repo) -> Run;
    let cases: Vec<(&str, Setup)> = vec![
        ("FIFO met by a contract glob", |r| {
            mkfifo(&r.root.join("docs/pipe.md"));
            r.write(
                "contracts/workflow-delegation-contracts.json",
                &contracts(&["docs/*.md"]),
            );
            worker(r, "", &["--stdout"])
        }),
        ("FIFO met by --owns", |r| {
            mkfifo(&r.root.join("docs/pipe.md"));
            worker(r, "", &["--stdout", "--owns", "docs/**"])
        }),
        ("FIFO named by --add", |r| {
            mkfifo(&r.root.join("docs/pipe.md"));
            worker(r, "", &["--stdout", "--add", "docs/pipe.md:high:truth"])
        }),
        ("FIFO through a link", |r| {
            mkfifo(&r.root.join("data/pipe"));
            symlink("../data/pipe", r, "docs/pipe.md");
            worker(r, "", &["--stdout", "--add", "docs/pipe.md:high:truth"])
        }),
        ("FIFO at the overrides path", |r| {
            mkfifo(&r.root.join(OVERRIDES));
            worker(r, "", &["--stdout"])
        }),
        ("FIFO given as --overrides", |r| {
            mkfifo(&r.root.join("ov.jsonl"));
            worker(r, "", &["--stdout", "--overrides", "ov.jsonl"])
        }),
        ("FIFO at the manifest path (compile)", |r| {
            mkfifo(&r.root.join(MANIFEST));
            worker(r, "", NONE)
        }),
        ("FIFO given to render --manifest", |r| {
            mkfifo(&r.root.join(MANIFEST));
            worker(r, "render", &["--manifest", MANIFEST])
        }),
        ("FIFO given to check", |r| {
            mkfifo(&r.root.join(MANIFEST));
            curate(r).args(&["check", MANIFEST])
        }),
        ("FIFO found by check", |r| {
            mkfifo(&r.root.join(MANIFEST));
            curate(r).args(&["check"])
        }),
        ("FIFO as --task-file", |r| {
            mkfifo(&r.root.join("task.json"));
            worker(r, "", &["--stdout", "--task-file", "task.json"])
        }),
        ("FIFO as --files-from", |r| {
            mkfifo(&r.root.join("list.txt"));
            worker(r, "", &["--stdout", "--files-from", "list.txt"])
        }),
        ("FIFO as --contracts", |r| {
            mkfifo(&r.root.join("c.json"));
            worker(r, "", &["--stdout", "--contracts", "c.json"])
        }),
        ("FIFO as the repository contracts file", |r| {
            let p = r.root.join("contracts/workflow-delegation-contracts.json");
            std::fs::remove_file(&p).unwrap();
            mkfifo(&p);
            worker(r, "", &["--stdout"])
        }),
        ("FIFO as a repository template", |r| {
            mkfifo(&r.root.join(".curate/templates/bundle.tera"));
            worker(r, "render", NONE)
        }),
        ("/dev/zero through a link met by a glob", |r| {
            symlink("/dev/zero", r, "docs/zero.md");
            worker(r, "", &["--stdout", "--owns", "docs/*"]).mem_cap()
        }),
        ("/dev/zero through a link named by --add", |r| {
            symlink("/dev/zero", r, "docs/zero.md");
            worker(r, "", &["--stdout", "--add", "docs/zero.md:high:truth"]).mem_cap()
        }),
    ];
    // All at once: a blocked run costs no CPU, and each waits out its own limit.
    let problems: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = cases
            .into_iter()
            .map(|(name, setup)| {
                s.spawn(move || {
                    let repo = repo_with(&[]);
                    match setup(&repo).run() {
                        Err(e) => Some(format!("[{name}] {e}")),
                        Ok(out) => {
                            let listed = entries(&out.stdout);
                            listed
                                .iter()
                                .find(|f| f.contains("pipe") || f.contains("zero"))
                                .map(|f| format!("[{name}] {f} is an entry"))
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().unwrap())
            .collect()
    });
    assert_none(&problems, "non-regular files");
}

// ---------------------------------------------------------------------------------------
// Fault 8: concurrent compiles of one (change, role)

// Fault 8: two compiles of one (change, role) with different inputs at once can leave the
// lock of one beside the manifest of the other; after, an advisory lock keeps them apart and
// `check --stale` passes after every round.
#[test]
fn concurrent_compiles_leave_a_lock_that_describes_the_manifest() {
    let repo = repo_with(&["docs/*.md"]);
    for i in 0..30 {
        repo.write(
            &format!("docs/d{i:02}.md"),
            &"some text line\n".repeat(40 + i),
        );
    }
    repo.write("docs/a.txt", "file a\n");
    repo.write("docs/b.txt", "file b\n");
    for round in 0..20 {
        let a = worker(
            &repo,
            "",
            &["-q", "--max-files", "0", "--add", "docs/a.txt:high:truth"],
        )
        .start();
        let b = worker(
            &repo,
            "",
            &["-q", "--max-files", "0", "--add", "docs/b.txt:high:truth"],
        )
        .start();
        let a = a.finish(LIMIT).unwrap_or_else(|e| panic!("{e}"));
        let b = b.finish(LIMIT).unwrap_or_else(|e| panic!("{e}"));
        // A compile that waited and timed out, or refused, would be a clear error; both
        // here should simply succeed one after the other.
        assert_eq!(a.code, 0, "round {round}, run a:\n{}", a.stderr);
        assert_eq!(b.code, 0, "round {round}, run b:\n{}", b.stderr);
        let check = curate(&repo).args(&["check", "--stale"]).ok();
        assert_eq!(
            check.code,
            0,
            "round {round}: the lock does not describe the manifest beside it:\n{}\n--- manifest header\n{}\n--- lock\n{}",
            check.stderr,
            repo.read(MANIFEST).lines().next().unwrap_or_default(),
            repo.read(LOCK)
                .lines()
                .take(6)
                .collect::<Vec<_>>()
                .join("\n"),
        );
    }
}

// ---------------------------------------------------------------------------------------
// Fault 9: `check` reads listed files whole

// Fault 9: `check` reads a listed file whole, however large; after, a file over
// `--max-file-size` (the lock's, else the default 10 MiB) is reported (exit 1) as a compile
// would exclude it.
#[test]
fn check_reports_a_listed_file_over_the_size_cap() {
    let mut problems = Vec::new();

    // Over the cap recorded in the lock.
    let repo = repo_with(&["notes.txt"]);
    repo.write("notes.txt", "short notes\n");
    let out = worker(&repo, "", &["--max-file-size", "4096"]).ok();
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Same line count, now over 4096 bytes.
    repo.write("notes.txt", &format!("{}\n", "x".repeat(8192)));
    let checked = curate(&repo).args(&["check"]).ok();
    if checked.code != 1 || !checked.stderr.contains("notes.txt") {
        problems.push(format!(
            "[lock cap 4096] a listed 8 KiB file is not reported (exit {}):\n{}",
            checked.code, checked.stderr
        ));
    }

    // Over the default cap, a manifest with no lock: eleven lines of 1 MiB.
    let repo = repo_with(&[]);
    let line = format!("{}\n", "word ".repeat(1024 * 1024 / 5));
    repo.write("big.txt", &line.repeat(11));
    repo.write(
        MANIFEST,
        concat!(
            "{\"file\":\"README.md\",\"reason\":\"r\",\"sections\":null,\"priority\":\"high\",\"kind\":\"truth\"}\n",
            "{\"file\":\"big.txt\",\"reason\":\"r\",\"sections\":[[1,2]],\"priority\":\"high\",\"kind\":\"truth\"}\n",
        ),
    );
    let checked = curate(&repo).args(&["check", MANIFEST]).ok();
    if checked.code != 1 || !checked.stderr.contains("big.txt") {
        problems.push(format!(
            "[default cap] a listed 11 MiB file is not reported (exit {}):\n{}",
            checked.code, checked.stderr
        ));
    }
    assert_none(&problems, "check size cap");
}

// ---------------------------------------------------------------------------------------
// Fault 10: control characters in names

/// Every manifest line is a comment or one JSON object; no entry holds a control character.
fn manifest_shape_problems(manifest: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for line in manifest.lines() {
        if line.starts_with("//") {
            continue;
        }
        match serde_json::from_str::<serde_json::Value>(line) {
            Ok(v) => {
                let file = v["file"].as_str().unwrap_or_default();
                if file.chars().any(char::is_control) {
                    problems.push(format!("an entry holds a control character: {file:?}"));
                }
            }
            Err(e) => problems.push(format!("line {line:?} is not JSON ({e})")),
        }
    }
    problems
}

// Fault 10: a path with a newline given by `--add`, an override line, `--files-from` (NUL
// separated) or a task file becomes an entry; after, it is excluded with a note (or an
// error), never an entry, and no manifest line or bundle header is split. A DEL in a name
// gives a note that must hold the name as a valid JSON string.
#[cfg(unix)]
#[test]
fn control_characters_in_names_never_make_an_entry_and_notes_stay_json() {
    type Case<'a> = (&'a str, Vec<String>, Option<(&'a str, Vec<u8>)>);
    let name = "docs/a\nb.md";
    let marker = "NEWLINE-NAMED-FILE-4d1e";
    let json_name = serde_json::Value::from(name).to_string();
    let mut problems = Vec::new();
    let cases: Vec<Case> =
        vec![
        ("--add", vec!["--add".into(), format!("{name}:high:truth")], None),
        (
            "overrides file line",
            vec![],
            Some((
                OVERRIDES,
                format!("{{\"file\":{json_name},\"priority\":\"high\",\"kind\":\"truth\"}}\n")
                    .into_bytes(),
            )),
        ),
        (
            "--files-from (NUL separated)",
            vec!["--files-from".into(), "list.bin".into()],
            Some(("list.bin", format!("{name}\0README.md\0").into_bytes())),
        ),
        (
            "task file files_owned",
            vec!["--task-file".into(), "task.json".into()],
            Some((
                "task.json",
                format!(
                    r#"{{"task_id":"t1","success_criteria":["done"],"files_owned":[{json_name}]}}"#
                )
                .into_bytes(),
            )),
        ),
    ];
    for (route, args, file) in cases {
        let repo = repo_with(&[]);
        repo.write(name, &format!("{marker}\n"));
        if let Some((rel, bytes)) = file {
            let p = repo.root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).unwrap();
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let compiled = worker(&repo, "", &args).ok();
        if compiled.code == 0 {
            for p in manifest_shape_problems(&repo.read(MANIFEST)) {
                problems.push(format!("[{route}] {p}"));
            }
        }
        let rendered = worker(&repo, "render", &args).ok();
        if rendered.stdout.contains(marker) {
            problems.push(format!("[{route}] the file is inlined in the bundle"));
        }
        for line in rendered.stdout.lines() {
            if line.starts_with("=== ") && !line.ends_with(')') {
                problems.push(format!("[{route}] a bundle header is split: {line:?}"));
            }
        }
    }

    // DEL in a name met by a glob: the note holds the name as a valid JSON string.
    let del = "docs/del\u{7f}x.md";
    let repo = repo_with(&["docs/*.md"]);
    repo.write(del, "text\n");
    let out = worker(&repo, "", NONE).ok();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let manifest = repo.read(MANIFEST);
    for p in manifest_shape_problems(&manifest) {
        problems.push(format!("[DEL] {p}"));
    }
    let note = notes(&manifest)
        .into_iter()
        .find(|n| n.contains("docs/del"))
        .map(str::to_owned);
    match note {
        None => problems.push(format!("[DEL] no note names the file:\n{manifest}")),
        Some(note) => {
            let at = note.find("\"docs/del").unwrap_or(0);
            let parsed = serde_json::Deserializer::from_str(&note[at..])
                .into_iter::<String>()
                .next();
            match parsed {
                Some(Ok(s)) if s == del => {}
                other => problems.push(format!(
                    "[DEL] the name in {note:?} is not a valid JSON string of the path: {other:?}"
                )),
            }
        }
    }
    assert_none(&problems, "control characters in names");
}

/// No line of any of `outputs` starts with `forged` (a line a name someone chose made).
fn assert_no_line_starts(outputs: &[Output], forged: &str) {
    for out in outputs {
        for line in out.stdout.lines().chain(out.stderr.lines()) {
            assert!(
                !line.starts_with(forged),
                "a forged line: {line:?} in\n{}",
                out.all()
            );
        }
    }
}

/// A newline in a name someone else chose (a touched file, a manifest path, an argument a
/// hint repeats) starts no line of its own in what `verify`, `check` or a hint prints.
#[test]
fn a_newline_in_a_name_forges_no_line_of_output() {
    let forged = "x\nwarning: all inside the write scope";
    let repo = repo_with(&[]);
    let outputs = [
        repo.curate()
            .args(["verify", "--change", "add-auth", "--owns", "src/**"])
            .args(["--touched", forged])
            .run(),
        repo.curate().args(["check", forged]).run(),
        repo.curate()
            .args(["preview", "--role", "worker", "--change", "add-auth"])
            .args(["--owns", forged])
            .run(),
    ];
    assert_no_line_starts(&outputs, "warning: all inside");
    assert!(
        outputs[0]
            .stderr
            .contains("violation: x\\nwarning: all inside the write scope"),
        "{}",
        outputs[0].all()
    );
    assert!(
        outputs[2]
            .stderr
            .contains("--owns $'x\\nwarning: all inside the write scope'"),
        "{}",
        outputs[2].all()
    );
}

/// A kind is a label someone else chose (an overrides line, a contracts file): a newline or
/// a terminal escape in it starts no line in the report or in `contracts show`, and sends
/// no escape to whoever reads the prompt.
#[test]
fn a_newline_or_an_escape_in_a_kind_forges_no_line() {
    let repo = repo_with(&[]);
    let kind = r"a\u001b]0;pwn\u0007\nerror: forged";
    repo.write(
        "o.jsonl",
        &format!("{{\"file\":\"README.md\",\"kind\":\"{kind}\"}}\n"),
    );
    repo.write(
        "k.json",
        &format!(
            r#"{{"roleTypes":[{{"id":"worker","contextFiles":[{{"glob":"README.md","priority":"high","kind":"{kind}"}}]}}]}}"#
        ),
    );
    let outputs = [
        repo.curate()
            .args([
                "--role",
                "worker",
                "--change",
                CHANGE,
                "--overrides",
                "o.jsonl",
            ])
            .args(["--dry-run"])
            .run(),
        repo.curate()
            .args(["--contracts", "k.json", "contracts", "show"])
            .run(),
        repo.curate()
            .args(["render", "--role", "worker", "--change", CHANGE])
            .args(["--overrides", "o.jsonl"])
            .run(),
    ];
    assert_no_line_starts(&outputs, "error: forged");
    for out in &outputs {
        assert!(
            !out.all().contains('\u{1b}'),
            "an escape in:\n{}",
            out.all()
        );
        assert!(
            out.all().contains("a\\u{1b}]0;pwn\\u{7}\\nerror: forged"),
            "{}",
            out.all()
        );
    }
}

// ---------------------------------------------------------------------------------------
// Fault 11: a repository contracts file linked outside

// Fault 11: `contracts/workflow-delegation-contracts.json` (or the `packages/spec/docs/`
// one) as a link out of the repository is used; after, it is refused or ignored: a role
// only the outside file defines is unknown (exit 1).
#[cfg(unix)]
#[test]
fn a_repository_contracts_file_linked_outside_is_never_used() {
    let mut problems = Vec::new();
    for place in [
        "contracts/workflow-delegation-contracts.json",
        "packages/spec/docs/workflow-delegation-contracts.json",
    ] {
        let repo = Repo::empty();
        repo.write("README.md", "# readme\n");
        let out_dir = outside(&repo, "outside");
        std::fs::write(
            out_dir.join("c.json"),
            r#"{"roleTypes":[{"id":"outsider","description":"OUTSIDE-CONTRACT-3b9e","readScope":["OUTSIDE-CONTRACT-3b9e"],"contextFiles":[{"glob":"README.md","priority":"high","kind":"truth"}]}]}"#,
        )
        .unwrap();
        symlink(out_dir.join("c.json"), &repo, place);
        let out = curate(&repo)
            .args(&["--role", "outsider", "--change", CHANGE, "--stdout"])
            .ok();
        if out.code != 1 {
            problems.push(format!(
                "[{place}] exit {} (want 1):\n{}",
                out.code, out.stderr
            ));
        }
        let sticky = curate(&repo)
            .args(&[
                "render",
                "--role",
                "outsider",
                "--change",
                CHANGE,
                "--template",
                "sticky",
            ])
            .ok();
        if sticky.stdout.contains("OUTSIDE-CONTRACT-3b9e") {
            problems.push(format!("[{place}] the outside role's scope is rendered"));
        }
    }
    assert_none(&problems, "contracts linked outside");
}

// ---------------------------------------------------------------------------------------
// Fault 12: `-j` is not clamped

// Fault 12: `-j 100000` starts 100,000 threads (over a minute); after, it is clamped to the
// CPUs × 4 with a warning and finishes quickly.
#[test]
fn a_huge_thread_count_is_clamped_with_a_warning() {
    let repo = repo_with(&[]);
    let out = worker(&repo, "", &["-j", "100000", "--dry-run"]).ok();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let err = out.stderr.to_lowercase();
    assert!(
        err.contains("warning") && (err.contains("clamp") || err.contains("thread")),
        "no warning about the clamped thread count:\n{}",
        out.stderr
    );
}

// ---------------------------------------------------------------------------------------
// Fault 13: unbounded inputs

// Fault 13: `/dev/zero` as the task file, overrides, contracts or `--files-from` is read
// until memory runs out (here, under a 2 GiB address-space cap, "out of memory"); after,
// each is a size-cap error, exit 1. A FIFO as the token-cache file blocks; after, it does
// not.
#[cfg(unix)]
#[test]
fn unbounded_inputs_are_capped_errors_and_the_cache_file_never_blocks() {
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("--task-file /dev/zero", vec!["--task-file", "/dev/zero"]),
        ("--overrides /dev/zero", vec!["--overrides", "/dev/zero"]),
        ("--contracts /dev/zero", vec!["--contracts", "/dev/zero"]),
        ("--files-from /dev/zero", vec!["--files-from", "/dev/zero"]),
    ];
    let mut problems: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = cases
            .into_iter()
            .map(|(name, extra)| {
                s.spawn(move || {
                    let repo = repo_with(&[]);
                    match worker(&repo, "", &extra).arg_dry_run().mem_cap().run() {
                        Err(e) => Some(format!("[{name}] {e}")),
                        Ok(out) if out.code != 1 => Some(format!(
                            "[{name}] exit {} (want 1):\n{}",
                            out.code, out.stderr
                        )),
                        Ok(out) if out.stderr.to_lowercase().contains("out of memory") => {
                            Some(format!(
                                "[{name}] read until out of memory, not a size cap:\n{}",
                                out.stderr
                            ))
                        }
                        Ok(_) => None,
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().unwrap())
            .collect()
    });

    // The token-cache file is a FIFO.
    let repo = repo_with(&[]);
    let cache = repo.cache_dir();
    // `src/cache.rs`: `tokens-<encoding>.txt` in `CURATE_CACHE_DIR`.
    mkfifo(&cache.join("tokens-o200k_base.txt"));
    match worker(&repo, "", &["--dry-run"]).run() {
        Err(e) => problems.push(format!("[cache file FIFO] {e}")),
        Ok(out) if out.code > 1 => problems.push(format!(
            "[cache file FIFO] exit {}:\n{}",
            out.code, out.stderr
        )),
        Ok(_) => {}
    }
    assert_none(&problems, "unbounded inputs");
}

impl Run {
    fn arg_dry_run(self) -> Run {
        self.args(&["--dry-run"])
    }
}

// ---------------------------------------------------------------------------------------
// Fault 14: secrets in text curate writes

// Fault 14: a secret typed into an override `reason`, a `// curation:` line or an `--add`
// REASON is copied into manifest, lock and prompt; after, refused (exit 1), the error names
// the file and line, never the value.
#[test]
fn a_secret_in_text_curate_writes_is_refused_without_echoing_it() {
    let token = ghp(1401);
    let key = ["AKIA", &noise(16, UPPER_ALNUM, 1402)].concat();
    let mut problems = Vec::new();
    let cases: Vec<(&str, &str, Vec<String>, Option<String>)> = vec![
        (
            "override reason",
            token.as_str(),
            vec![],
            Some(format!(
                "// the delegator's notes\n{{\"file\":\"README.md\",\"reason\":\"use {token} to log in\"}}\n"
            )),
        ),
        (
            "curation line",
            key.as_str(),
            vec![],
            Some(format!(
                "// a plain comment\n// curation: deploy with {key}\n"
            )),
        ),
        (
            "--add REASON",
            token.as_str(),
            vec![
                "--add".into(),
                format!("README.md:high:truth:the token is {token}"),
            ],
            None,
        ),
    ];
    for (name, value, args, overrides) in cases {
        let repo = repo_with(&[]);
        if let Some(text) = &overrides {
            repo.write(OVERRIDES, text);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let compiled = worker(&repo, "", &args).ok();
        let previewed = worker(&repo, "preview", &args).ok();
        if compiled.code != 1 {
            problems.push(format!("[{name}] compile exit {} (want 1)", compiled.code));
        }
        if previewed.code != 1 {
            problems.push(format!("[{name}] preview exit {} (want 1)", previewed.code));
        }
        if overrides.is_some()
            && !(compiled.stderr.contains("worker-context.overrides.jsonl")
                && (compiled.stderr.contains(":2") || compiled.stderr.contains("line 2")))
        {
            problems.push(format!(
                "[{name}] the error does not name the file and line 2:\n{}",
                compiled.stderr
            ));
        }
        for place in leaks(
            &repo,
            value,
            &[("compile", &compiled), ("preview", &previewed)],
        ) {
            problems.push(format!("[{name}] the value shows in {place}"));
        }
    }
    assert_none(&problems, "secrets in written text");
}

// A secret in the contracts file (a kind, a glob, an anchor), in a manifest `check` reads,
// or in a touched path `verify` judges was copied into the manifest, the lock and the
// report, or echoed by a finding; after, the contracts are refused (exit 1, nothing written)
// and the findings name the rule only.
#[test]
fn a_secret_in_the_contracts_a_checked_manifest_or_a_touched_path_is_never_echoed() {
    let token = ghp(1407);
    let mut problems = Vec::new();
    for (name, item) in [
        (
            "kind",
            format!(r#"{{"glob":"README.md","priority":"high","kind":"{token}"}}"#),
        ),
        (
            "glob",
            format!(r#"{{"glob":"docs/{token}.md","priority":"high","kind":"truth"}}"#),
        ),
        (
            "anchor",
            format!(
                r###"{{"glob":"README.md","priority":"high","kind":"truth","sections":["## {token}"]}}"###
            ),
        ),
        (
            "escaped",
            format!(
                r#"{{"glob":"README.md","priority":"high","kind":"\u00{:x}{}"}}"#,
                token.as_bytes()[0],
                &token[1..]
            ),
        ),
    ] {
        let repo = repo_with(&[]);
        repo.write(
            "contracts/workflow-delegation-contracts.json",
            &format!(r#"{{"roleTypes":[{{"id":"worker","contextFiles":[{item}]}}]}}"#),
        );
        let compiled = worker(&repo, "", NONE).ok();
        let validated = curate(&repo).args(&["contracts", "validate"]).ok();
        for (what, out) in [("compile", &compiled), ("validate", &validated)] {
            if out.code != 1 || !out.stderr.contains("holds a secret (github-pat") {
                problems.push(format!(
                    "[{name}] {what}: exit {}:\n{}",
                    out.code, out.stderr
                ));
            }
        }
        if repo.exists(MANIFEST) {
            problems.push(format!("[{name}] a manifest was written"));
        }
        for place in leaks(
            &repo,
            &token,
            &[("compile", &compiled), ("validate", &validated)],
        ) {
            problems.push(format!("[{name}] the value shows in {place}"));
        }
    }
    let repo = repo_with(&[]);
    repo.write(
        "changes/c1/analysis/h-context.jsonl",
        &format!(
            "{{\"file\":\"README.md\",\"reason\":\"x\",\"priority\":\"{token}\"}}\n\
             {{\"file\":\"README.md\",\"reason\":\"x\",\"priority\":\"high\",\"{token}\":1}}\n"
        ),
    );
    let checked = curate(&repo)
        .args(&[
            "check",
            "changes/c1/analysis/h-context.jsonl",
            "--format",
            "github",
        ])
        .ok();
    if checked.code != 1
        || checked
            .stdout
            .matches("holds a secret (github-pat)")
            .count()
            != 2
    {
        problems.push(format!("check: exit {}:\n{}", checked.code, checked.all()));
    }
    let touched = format!("src/{token}/x.ts");
    let verified = curate(&repo)
        .args(&[
            "verify",
            "--change",
            CHANGE,
            "--owns",
            "docs/**",
            "--touched",
            &touched,
        ])
        .ok();
    let verified_json = curate(&repo)
        .args(&[
            "verify",
            "--change",
            CHANGE,
            "--owns",
            "docs/**",
            "--touched",
            &touched,
        ])
        .args(&["--format", "json"])
        .ok();
    for out in [&verified, &verified_json] {
        if out.code != 1
            || !out
                .all()
                .contains("a path that holds a secret (github-pat)")
        {
            problems.push(format!("verify: exit {}:\n{}", out.code, out.all()));
        }
    }
    // (The manifest checked holds the value: only the outputs are looked at.)
    for (what, out) in [
        ("check", &checked),
        ("verify", &verified),
        ("verify --format json", &verified_json),
    ] {
        if out.all().contains(&token) {
            problems.push(format!("the value shows in the output of {what}"));
        }
    }
    assert_none(&problems, "secrets echoed");
}

// ---------------------------------------------------------------------------------------
// Fault 15: overrides in quadratic time

// Fault 15: 100,000 `drop` lines took about 40 s (release), minutes in a debug build; after,
// linear (< 1 s release, ~8 s debug). The bound is a hang guard wide enough for a loaded
// machine, not a timing.
#[test]
fn a_hundred_thousand_drop_lines_finish_quickly() {
    let repo = repo_with(&["docs/*.md"]);
    for i in 0..20 {
        repo.write(&format!("docs/d{i}.md"), "text\n");
    }
    let mut text = String::with_capacity(4 << 20);
    for i in 0..100_000 {
        text.push_str(&format!("{{\"drop\":\"gone/n{i}.md\"}}\n"));
    }
    repo.write(OVERRIDES, &text);
    let out = worker(&repo, "", &["--dry-run", "-q", "--max-files", "0"])
        .start()
        .finish(Duration::from_secs(180))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.code, 0, "{}", out.stderr);
}

// ---------------------------------------------------------------------------------------
// Fault 16: a role hint without bound

// Fault 16: an unknown role among 10,000 roles prints every role (about 69 KB); after, the
// hint lists at most 20 roles and a count.
#[test]
fn an_unknown_role_hint_lists_at_most_twenty_roles() {
    let repo = Repo::empty();
    repo.write("README.md", "# readme\n");
    let roles: Vec<String> = (0..10_000)
        .map(|i| format!(r#"{{"id":"role-{i:05}"}}"#))
        .collect();
    repo.write(
        "contracts/workflow-delegation-contracts.json",
        &format!(r#"{{"roleTypes":[{}]}}"#, roles.join(",")),
    );
    let out = curate(&repo)
        .args(&["--role", "nope", "--change", CHANGE])
        .ok();
    assert_eq!(out.code, 1, "{}", out.stderr);
    let listed = out.stderr.matches("role-").count();
    assert!(
        out.stderr.len() < 4096 && listed <= 20,
        "the hint is {} bytes and lists {listed} roles",
        out.stderr.len()
    );
    assert!(
        ["10000", "10,000", "9980", "9,980"]
            .iter()
            .any(|n| out.stderr.contains(n)),
        "the hint gives no count of the roles:\n{}",
        out.stderr
    );
}

// ---------------------------------------------------------------------------------------
// Property: a planted secret never shows, whatever the family, route or link

mod props {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngSeed};

    use super::{ALNUM, BASE64, DIGITS, Route, UPPER_ALNUM, every_output_of, ghp, noise, routes};

    /// A secret family: the file it sits in (repository-relative), its text, and its value.
    fn plant(family: u8, seed: u64) -> (&'static str, String, String) {
        match family {
            0 => {
                let v = ["AKIA", &noise(16, UPPER_ALNUM, seed)].concat();
                ("notes/aws.txt", format!("aws_access_key_id = {v}\n"), v)
            }
            1 => {
                let v = ghp(seed);
                ("notes/gh.txt", format!("token: {v}\n"), v)
            }
            2 => {
                let v = format!(
                    "xoxb-{}-{}-{}",
                    noise(11, DIGITS, seed),
                    noise(12, DIGITS, seed + 1),
                    noise(24, ALNUM, seed + 2)
                );
                ("notes/slack.txt", format!("SLACK_BOT_TOKEN={v}\n"), v)
            }
            3 => {
                let v = ["sk_live_", &noise(24, ALNUM, seed)].concat();
                ("notes/stripe.txt", format!("stripe = {v}\n"), v)
            }
            4 => {
                let body: Vec<String> = (0..4).map(|i| noise(64, BASE64, seed + i)).collect();
                let v = body[1].clone();
                (
                    "notes/key.txt",
                    format!(
                        "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\n",
                        body.join("\n")
                    ),
                    v,
                )
            }
            _ => {
                let v = ["pw", &noise(18, ALNUM, seed)].concat();
                (".env", format!("DATABASE_PASSWORD={v}\n"), v)
            }
        }
    }

    fn config() -> Config {
        Config {
            cases: 16,
            failure_persistence: None,
            max_shrink_iters: 16,
            rng_seed: RngSeed::Fixed(0x7275_7374),
            ..Config::default()
        }
    }

    proptest! {
        #![proptest_config(config())]

        // Faults 1 and 6 (and the trust boundary as a whole): a secret of any family, reached by
        // any route, directly or through a link inside the repository, never shows in the
        // manifest, lock, report, `--explain`, `--format json`, `render` or `preview`.
        #[cfg(unix)]
        #[test]
        fn a_planted_secret_never_shows_anywhere(
            family in 0u8..6,
            route in 0usize..8,
            link in proptest::bool::weighted(0.6),
            seed in 1u64..1_000_000,
        ) {
            let (path, text, value) = plant(family, seed);
            let named = if link { "docs/lnk.md" } else { path };
            let route: Route = routes(named).swap_remove(route);
            let repo = route.repo();
            repo.write(path, &text);
            if link {
                super::symlink(format!("../{path}"), &repo, named);
            }
            let problems = every_output_of(&repo, &route.args(), named, &value);
            prop_assert!(
                problems.is_empty(),
                "family {family}, route {}, via link {link}:\n- {}",
                route.name,
                problems.join("\n- ")
            );
        }
    }

    proptest! {
        #![proptest_config(Config { cases: 12, ..config() })]

        // A secret of any family in text curate adds to a prompt (a template variable from
        // the contracts, a task file's field, an override's reason) never shows in any output
        // of render, preview or the hook, and the render is refused.
        #[test]
        fn a_secret_in_text_curate_adds_never_shows(
            family in 0u8..6,
            place in 0u8..3,
            seed in 1u64..1_000_000,
        ) {
            let (_, text, value) = plant(family, seed);
            let (repo, [render, preview, hook]) = super::planted_in_added_text(text.trim_end(), place);
            prop_assert_ne!(render.code, 0, "family {}, place {}: {}", family, place, render.all());
            prop_assert!(!repo.exists("out.md"));
            let problems = super::leaks(&repo, &value, &[("render", &render), ("preview", &preview), ("hook", &hook)]);
            prop_assert!(problems.is_empty(), "family {family}, place {place}:\n- {}", problems.join("\n- "));
        }
    }
}

// ---------------------------------------------------------------------------------------
// The last scan: what curate adds to a prompt passes the content rules once more

#[test]
fn a_secret_in_what_curate_adds_refuses_the_output_on_every_route() {
    let token = ghp(91);
    let aws = ["AKIA", &noise(16, UPPER_ALNUM, 92)].concat();
    // 1. A contracts file's write scope (the `role_scopes` variable of every template): the
    //    contracts file is refused as it is loaded, before any of its text is copied.
    let repo = Repo::empty();
    repo.write(
        "contracts/workflow-delegation-contracts.json",
        &format!(
            r#"{{"roleTypes":[{{"id":"worker","writeScope":["changes/<id>/{token}"],"contextFiles":[{{"glob":"README.md","priority":"high","kind":"truth"}}]}}]}}"#
        ),
    );
    repo.write("README.md", "# readme\n");
    repo.write("changes/c1/notes.md", "notes\n");
    let render = repo
        .curate()
        .args([
            "render", "--role", "worker", "--change", CHANGE, "-o", "out.md",
        ])
        .run();
    assert_eq!(render.code, 1, "{}", render.all());
    assert!(
        render
            .stderr
            .contains("workflow-delegation-contracts.json: holds a secret (github-pat"),
        "{}",
        render.stderr
    );
    assert!(!repo.exists("out.md"), "nothing written");
    let preview = repo
        .curate()
        .args([
            "preview", "--role", "worker", "--change", CHANGE, "--format", "json",
        ])
        .run();
    assert_eq!(preview.code, 1, "{}", preview.all());
    assert_eq!(preview.json()["status"], "ERROR");
    let hook = repo
        .curate()
        .args(["hook", "claude-code"])
        .stdin(br#"{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Agent","tool_input":{"prompt":"Do it.\nchange: c1","subagent_type":"worker"}}"#)
        .run();
    assert!(
        !hook.stdout.contains("updatedInput"),
        "the hook answers no prompt: {}",
        hook.stdout
    );
    assert_none(
        &leaks(
            &repo,
            &token,
            &[("render", &render), ("preview", &preview), ("hook", &hook)],
        ),
        "a token in the contracts",
    );

    // 2. A template's own text.
    let repo = repo_with(&[]);
    repo.write(
        "mine.tera",
        &format!("Use key {aws} for {{{{ change }}}}\n"),
    );
    let out = repo
        .curate()
        .args([
            "render",
            "--role",
            "worker",
            "--change",
            CHANGE,
            "--template",
            "mine.tera",
        ])
        .run();
    assert_eq!(out.code, 1, "{}", out.all());
    assert!(
        out.stderr
            .contains("line 1 of the template holds a secret (aws-access-key-id)"),
        "{}",
        out.stderr
    );
    assert_none(
        &leaks(&repo, &aws, &[("render", &out)]),
        "a key in a template",
    );
}

/// A repository with `text` where curate would add it to a prompt (`place` 0: a contracts
/// variable, the role's write scope; 1: a task file's field; 2: an override's reason; 3: a
/// file the contracts name), and the outputs of `render -o out.md`, `preview --format json`
/// and the Claude Code hook on it.
fn planted_in_added_text(text: &str, place: u8) -> (Repo, [Output; 3]) {
    let repo = Repo::empty();
    repo.write("README.md", "# readme\n");
    repo.write("changes/c1/notes.md", "notes\n");
    repo.write("notes/plain.txt", &format!("{text}\n"));
    let scope = if place == 0 { text } else { "src/**" };
    let named = if place == 3 {
        r#",{"glob":"notes/plain.txt","priority":"high","kind":"truth"}"#
    } else {
        ""
    };
    repo.write(
        "contracts/workflow-delegation-contracts.json",
        &format!(
            r#"{{"roleTypes":[{{"id":"worker","writeScope":[{}],"contextFiles":[{{"glob":"README.md","priority":"high","kind":"truth"}}{named}]}}]}}"#,
            serde_json::Value::from(scope)
        ),
    );
    let mut extra: Vec<&str> = Vec::new();
    if place == 1 {
        repo.write(
            "task.json",
            &serde_json::json!({"task_id": "t1", "title": "t", "files_owned": ["README.md"], "files_readonly": [], "success_criteria": ["x"], "what_comes_next": text}).to_string(),
        );
        extra.extend(["--task-file", "task.json"]);
    }
    if place == 2 {
        repo.write(
            "changes/c1/analysis/worker-context.overrides.jsonl",
            &format!(
                "{}\n",
                serde_json::json!({"file": "README.md", "reason": text, "priority": "high", "kind": "truth"})
            ),
        );
    }
    let run = |sub: &[&str]| {
        repo.curate()
            .args(sub)
            .args(["--role", "worker", "--change", CHANGE])
            .args(&extra)
            .run()
    };
    let render = run(&["render", "-o", "out.md"]);
    let preview = run(&["preview", "--format", "json"]);
    let hook = repo
        .curate()
        .args(["hook", "claude-code"])
        .stdin(br#"{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Agent","tool_input":{"prompt":"Do it.\nchange: c1","subagent_type":"worker"}}"#)
        .run();
    (repo, [render, preview, hook])
}

/// A secret whose rule needs `key="…"` hides behind JSON's `\"` in an override's reason or a
/// task file's field: the raw line passes, the decoded string (what curate copies into the
/// manifest and the envelope) does not.
#[test]
fn a_secret_behind_json_escapes_never_reaches_a_manifest() {
    let text = r#"<add key="Password" value="CleartextPassword1" />"#;
    for place in [1, 2] {
        let (repo, [render, preview, hook]) = planted_in_added_text(text, place);
        assert_ne!(render.code, 0, "place {place}: {}", render.stderr);
        assert!(render.stderr.contains("secret"), "{}", render.stderr);
        let problems = leaks(
            &repo,
            "CleartextPassword1",
            &[("render", &render), ("preview", &preview), ("hook", &hook)],
        );
        assert_none(&problems, &format!("place {place}"));
    }
}

/// A value matching `pattern`, the same for the same seed (proptest's regex generator;
/// `None` for a pattern it does not support).
fn generated(pattern: &str, seed: u64) -> Option<String> {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let strategy = proptest::string::string_regex(pattern).ok()?;
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    );
    Some(strategy.new_tree(&mut runner).ok()?.current())
}

/// One true sample of every gitleaks family the content rules catch (written out in
/// gitleaks' source, or generated from its regex parts), planted in turn in a contracts
/// variable, a task file's field, an override's reason or a file the contracts name: no
/// output of render, preview or the hook, and no file curate writes, shows its value; where
/// curate adds the text, the render is refused.
#[test]
fn a_secret_of_every_family_never_reaches_any_output() {
    let rules = curate::trust::secrets::ContentRules::shared().unwrap();
    let data = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/gitleaks/samples.jsonl"),
    )
    .unwrap();
    let mut families: Vec<(String, String)> = Vec::new();
    for (n, line) in data.lines().skip(1).enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["kind"] != "tp" {
            continue;
        }
        let family = v["family"].as_str().unwrap().to_owned();
        if families.iter().any(|(f, _)| *f == family) {
            continue;
        }
        let Some(text) =
            v["parts"]
                .as_array()
                .unwrap()
                .iter()
                .try_fold(String::new(), |mut t, p| {
                    match (p["lit"].as_str(), p["re"].as_str()) {
                        (Some(lit), _) => t.push_str(lit),
                        (None, Some(re)) => t.push_str(&generated(re, n as u64)?),
                        _ => return None,
                    }
                    Some(t)
                })
        else {
            continue;
        };
        // One line (a generated value may hold a newline), and one the rules catch.
        if !text.contains('\n') && rules.scan(text.as_bytes()).is_some() {
            families.push((family, text));
        }
    }
    assert!(families.len() >= 120, "{} families", families.len());
    // Every family in every place, two at a time.
    let work: Vec<(&(String, String), u8)> = families
        .iter()
        .flat_map(|f| (0..4u8).map(move |place| (f, place)))
        .collect();
    let problems: Vec<String> = std::thread::scope(|scope| {
        let halves: Vec<_> = work
            .chunks(work.len().div_ceil(2).max(1))
            .map(|chunk| {
                scope.spawn(move || {
                    let mut problems = Vec::new();
                    for &((family, text), place) in chunk {
                        // The value: the text's longest word.
                        let value = text
                            .split(|c: char| c.is_whitespace() || "\"'=:,;()<>[]{}`".contains(c))
                            .max_by_key(|w| w.len())
                            .unwrap()
                            .to_owned();
                        let (repo, [render, preview, hook]) = planted_in_added_text(text, place);
                        if place < 3 && render.code == 0 {
                            problems.push(format!("{family} (place {place}): render not refused"));
                        }
                        for leak in leaks(
                            &repo,
                            &value,
                            &[("render", &render), ("preview", &preview), ("hook", &hook)],
                        ) {
                            problems.push(format!("{family} (place {place}): {leak}"));
                        }
                    }
                    problems
                })
            })
            .collect();
        halves.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert_none(&problems, "a secret of every family");
}

/// A token pasted as the change, role or run id: curate names folders, manifests, locks,
/// reports and prompts by them, so the compile is refused, naming the id and the rule;
/// nothing written, the value printed nowhere (`--format json` neither).
#[test]
fn a_secret_as_an_id_is_refused_before_anything_is_written() {
    let token = ghp(94);
    for args in [
        vec!["--role", "worker", "--change", token.as_str()],
        vec!["--role", token.as_str(), "--change", CHANGE],
        vec![
            "--role",
            "worker",
            "--change",
            CHANGE,
            "--run",
            token.as_str(),
        ],
        vec![
            "--role",
            "worker",
            "--change",
            token.as_str(),
            "--format",
            "json",
        ],
    ] {
        let repo = Repo::empty();
        repo.write("README.md", "# readme\n");
        let out = repo.curate().args(&args).run();
        assert_eq!(out.code, 1, "{args:?}: {}", out.all());
        let what = match args.iter().position(|a| *a == token) {
            Some(1) => "role",
            Some(3) => "change id",
            _ => "run id",
        };
        assert!(
            out.all()
                .contains(&format!("the {what} holds a secret (github-pat)")),
            "{}",
            out.all()
        );
        assert_none(&leaks(&repo, &token, &[("compile", &out)]), what);
        assert!(!repo.exists("changes"), "{args:?}");
    }
}

/// A secret given as a path or glob on the command line (a note would name it, one that
/// matches nothing) refuses the compile, naming the flag and the rule: nothing written,
/// the value printed nowhere.
#[test]
fn a_secret_in_a_path_argument_is_refused_before_anything_is_written() {
    let token = ghp(93);
    for (flag, value) in [
        ("--owns", format!("src/{token}")),
        ("--reads", format!("docs/{token}/**")),
        ("--drop", token.clone()),
    ] {
        let repo = Repo::empty();
        repo.write("README.md", "# readme\n");
        let out = repo
            .curate()
            .args([
                "--role",
                "worker",
                "--change",
                CHANGE,
                "--owns",
                "README.md",
            ])
            .args([flag, value.as_str()])
            .run();
        assert_eq!(out.code, 1, "{flag}: {}", out.all());
        let n = if flag == "--owns" { 2 } else { 1 };
        assert!(
            out.stderr
                .contains(&format!("{flag} #{n}: holds a secret (github-pat)")),
            "{}",
            out.stderr
        );
        assert_none(&leaks(&repo, &token, &[("compile", &out)]), flag);
        assert!(!repo.exists(&format!("changes/{CHANGE}")), "{flag}");
    }
}
