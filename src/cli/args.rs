//! The command line, as clap derive structs and nothing else.
//!
//! The `resolve` module beside this one turns these raw values into the library's
//! validated settings; nothing here reads a file or builds a path.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::model::Encoding;
use crate::render::Lang;

const EXAMPLES: &str = "\
Examples:
  pre-dispatch script   curate --role worker --change add-auth --task-file task.json -q && \\
                          curate render --role worker --change add-auth --task-file task.json
  at a shell            curate --role worker --change add-auth --owns 'src/auth/**'
  editor preview        curate preview --role worker --change add-auth --format json
  CI budget check       curate check --stale --format github";

/// Compile exactly which files a sub-agent must read first, under budgets, with secrets
/// kept out; render its first instruction, context bundle and handoff envelope.
#[derive(Debug, Parser)]
#[command(
    name = "curate",
    version = concat!(env!("CARGO_PKG_VERSION"), " (default encoding o200k_base)"),
    about,
    after_help = EXAMPLES,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub compile: CompileArgs,
}

impl CompileArgs {
    /// True when a compile flag was given (they belong after a subcommand, not before it).
    #[must_use]
    pub fn any_given(&self) -> bool {
        self.role.is_some()
            || self.change.is_some()
            || !self.owns.is_empty()
            || !self.reads.is_empty()
            || self.files_from.is_some()
            || self.task_file.is_some()
            || self.overrides.is_some()
            || !self.add.is_empty()
            || !self.drop.is_empty()
            || self.explain
            || self.dry_run
            || self.stdout
            || self.adopt
            || self.force
            || self.no_ignore
    }
}

fn parse_workflow(name: &str) -> Result<crate::config::Wf, String> {
    crate::workflow::parse(name)
}

/// Options every command takes.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Run as if curate was started in DIR (like `git -C`).
    #[arg(short = 'C', value_name = "DIR", global = true)]
    pub dir: Option<PathBuf>,

    /// The delegation-contracts file (default: env CURATE_CONTRACTS, the repository's, else the embedded one).
    #[arg(long, value_name = "FILE", global = true)]
    pub contracts: Option<PathBuf>,

    /// The changes root (default: `changes`, or `.aiws/changes` where only that exists).
    #[arg(long, value_name = "DIR", global = true)]
    pub changes_dir: Option<PathBuf>,

    /// The workflow (curate, aiws, aiws-legacy, trellis, guild, openspec, spec-kit, kiro,
    /// bmad) instead of the one detected from the repository's folders.
    #[arg(long, value_name = "WORKFLOW", global = true, value_parser = parse_workflow)]
    pub profile: Option<crate::config::Wf>,

    /// The run a Guild lane is looked for in (default: the one run that holds the task).
    #[arg(long, value_name = "RUN", global = true)]
    pub run: Option<String>,

    /// The BPE encoding tokens are counted with [default: the config's, else o200k_base].
    #[arg(long, value_enum, global = true)]
    pub encoding: Option<Encoding>,

    /// Worker threads for reading and counting (default: one per core).
    #[arg(short = 'j', long = "threads", value_name = "N", global = true)]
    pub threads: Option<usize>,

    /// Output format of the report.
    #[arg(long, value_enum, default_value_t = Format::Human, global = true)]
    pub format: Format,

    /// When to colour the report (NO_COLOR is honoured).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true)]
    pub color: ColorChoice,

    /// Do not read or write the on-disk token cache.
    #[arg(long, global = true)]
    pub no_cache: bool,

    /// Print only errors.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Print more detail.
    #[arg(short, long, global = true)]
    pub verbose: bool,
}

/// The inputs and caps of a compile (also used by `render` and `preview`).
#[derive(Debug, Clone, Args, Default)]
pub struct CompileArgs {
    /// The role of the sub-agent (a `roleTypes[].id` of the contracts).
    #[arg(long, value_name = "ROLE", required = true, help_heading = "Selection")]
    pub role: Option<String>,

    /// The change id; `<id>` in every glob becomes this.
    #[arg(long, value_name = "ID", required = true, help_heading = "Selection")]
    pub change: Option<String>,

    /// A glob of the assigned module the sub-agent may write (kind `assigned`, priority high).
    #[arg(long, value_name = "GLOB", help_heading = "Selection")]
    pub owns: Vec<String>,

    /// A glob the sub-agent must read but not write (kind `assigned`, priority medium).
    #[arg(long, value_name = "GLOB", help_heading = "Selection")]
    pub reads: Vec<String>,

    /// Repository-relative paths, newline- or NUL-separated, taken like --owns (`-` for stdin).
    #[arg(long, value_name = "FILE", help_heading = "Selection")]
    pub files_from: Option<PathBuf>,

    /// A task file (JSON): its files_owned / files_readonly become assigned entries.
    #[arg(long, value_name = "FILE", help_heading = "Selection")]
    pub task_file: Option<PathBuf>,

    /// Add the files most related to the owned ones (by the definitions they share) as
    /// low-priority outlines, within TOKENS tokens (0 = none). [default: the config's
    /// `[select] related_tokens`, else 0]
    #[arg(long, value_name = "TOKENS", help_heading = "Selection")]
    pub related: Option<u64>,

    /// Text that describes the task (`-` for stdin), read with the change's own documents
    /// and the task file: the files it names or talks about are selected.
    #[arg(long, value_name = "FILE", help_heading = "Selection")]
    pub task_text: Option<PathBuf>,

    /// Tokens the files the task names or talks about may take (0 = none). [default: the
    /// config's `[select] task_tokens`; else 8000 with --task-text, 0 without]
    #[arg(long, value_name = "TOKENS", help_heading = "Selection")]
    pub task_tokens: Option<u64>,

    /// Select nothing from the task's words (as `[select] task = false`).
    #[arg(long, help_heading = "Selection", conflicts_with = "task_tokens")]
    pub no_task: bool,

    /// Turn off .gitignore / .ignore / .git/info/exclude for glob matches.
    #[arg(long, help_heading = "Selection")]
    pub no_ignore: bool,

    /// The overrides file (default: changes/<id>/analysis/<role>-context.overrides.jsonl).
    #[arg(long, value_name = "FILE", help_heading = "Overrides")]
    pub overrides: Option<PathBuf>,

    /// Add FILE:PRIORITY:KIND[:REASON] after the overrides file (a JSON object is an overrides
    /// line, with "sections": heading anchors, line pairs).
    #[arg(
        long,
        value_name = "FILE:PRIORITY:KIND[:REASON]",
        help_heading = "Overrides"
    )]
    pub add: Vec<String>,

    /// Remove every entry matching GLOB.
    #[arg(long, value_name = "GLOB", help_heading = "Overrides")]
    pub drop: Vec<String>,

    /// Soft cap on high+medium files; over it every low entry is named only, not read
    /// (dropped with --no-degrade; 0 = no cap).
    /// [default: the config's, else 5]
    #[arg(long, value_name = "N", help_heading = "Budgets")]
    pub max_files: Option<u64>,

    /// Hard cap on lines; over it low, then medium entries are cut to their outline, then
    /// named only, largest first (dropped with --no-degrade; 0 = no cap).
    /// [default: the config's, else 4000]
    #[arg(long, value_name = "N", help_heading = "Budgets")]
    pub max_lines: Option<u64>,

    /// Optional cap on tokens, applied like the line cap (0 = no cap).
    #[arg(long, value_name = "N", help_heading = "Budgets")]
    pub max_tokens: Option<u64>,

    /// Over a cap, drop entries instead of cutting them to their outline or an index line
    /// first (as `[budget] degrade = false`).
    #[arg(long, help_heading = "Budgets")]
    pub no_degrade: bool,

    /// Files larger than this many bytes are excluded.
    #[arg(long, value_name = "BYTES", default_value_t = crate::stages::measure::DEFAULT_MAX_FILE_SIZE, help_heading = "Budgets")]
    pub max_file_size: u64,

    /// List every candidate with its source and fate.
    #[arg(long, help_heading = "Output")]
    pub explain: bool,

    /// Write nothing in the repository.
    #[arg(long, help_heading = "Output")]
    pub dry_run: bool,

    /// Print the manifest on stdout instead of writing it.
    #[arg(long, help_heading = "Output")]
    pub stdout: bool,

    /// Turn hand edits of the manifest into overrides-file lines, then compile.
    #[arg(long, conflicts_with = "force", help_heading = "Output")]
    pub adopt: bool,

    /// Overwrite a hand-edited manifest.
    #[arg(long, help_heading = "Output")]
    pub force: bool,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compile the context manifest and its lock (the default command).
    #[command(
        after_help = "Examples:\n  curate compile --role worker --change add-auth --owns 'src/auth/**'\n  curate compile --role reviewer --change add-auth --explain --dry-run\n  git diff --name-only -z main | curate compile --role worker --change add-auth --files-from -"
    )]
    Compile(CompileArgs),
    /// Compile in memory and render a template (sticky, bundle, handoff) to stdout or a file.
    #[command(
        after_help = "Examples:\n  curate render --role worker --change add-auth > prompt.md\n  curate render --role worker --change add-auth --template sticky --lang zh\n  curate render --role worker --change add-auth --template handoff --task-file task.json\n  curate render --role worker --change add-auth -o .guild/context/run-7/worker-t1.md"
    )]
    Render(RenderArgs),
    /// Like render, but never writes anything; `--format json` gives {status, prompt, report}.
    #[command(
        after_help = "Examples:\n  curate preview --role worker --change add-auth --format json\n  curate preview --role worker --change add-auth --template sticky"
    )]
    Preview(RenderArgs),
    /// Check committed manifests: valid, in budget, and (with --stale) current.
    #[command(
        after_help = "Examples:\n  curate check\n  curate check --stale --format github\n  curate check changes/add-auth/analysis/worker-context.jsonl --format json"
    )]
    Check(CheckArgs),
    /// Check that a worker's touched files stay inside its owned globs.
    #[command(
        after_help = "Examples:\n  curate verify --change add-auth --task-file task.json --git-diff origin/main\n  curate verify --change add-auth --owns 'src/auth/**' --reads src/api/routes.ts --touched src/auth/login.ts\n  git diff --name-only -z | curate verify --change add-auth --owns 'src/auth/**' --touched-from -"
    )]
    Verify(VerifyArgs),
    /// Validate guild.handoff_receipt.v1 receipts.
    #[command(subcommand)]
    Receipt(ReceiptCommand),
    /// Validate or show the delegation contracts.
    Contracts {
        #[command(subcommand)]
        action: Option<ContractsCommand>,
    },
    /// Write the embedded default contracts (and templates), or with --profile the config.
    #[command(
        after_help = "Examples:\n  curate init\n  curate init --profile aiws\n  curate init --profile trellis --force\n  curate init --host claude-code"
    )]
    Init(InitArgs),
    /// Show the resolved settings and where each came from (flag, env, file, profile, default).
    Config {
        #[command(subcommand)]
        action: Option<ConfigCommand>,
    },
    /// Answer a host's hook (JSON on stdin; always exits 0).
    ///
    /// Prints one JSON object or nothing; `CURATE_HOOKS=0` turns it off. A host this curate
    /// does not know, or a flag it cannot read, gets nothing and a warning on stderr (exit 0).
    #[command(
        after_help = "Registered by `curate init --host claude-code` / `--host opencode`; see docs/hosts.md."
    )]
    Hook {
        /// The host whose protocol to answer: claude-code, opencode, codex, copilot or gemini.
        host: String,
    },
    /// Bind the change the hooks use (for one session, or for the repository).
    #[command(
        after_help = "Examples:\n  curate use add-auth\n  curate use add-auth --session \"$CLAUDE_SESSION_ID\"\n  curate use --clear"
    )]
    Use(UseArgs),
    /// Serve preview, compile, check and verify as MCP tools on stdin/stdout.
    ///
    /// The tools are preview, compile, check and verify (hosts prefix the server's name);
    /// the server stops (exit 0) when stdin ends.
    #[command(
        after_help = "Registered by `claude mcp add --transport stdio curate -- curate mcp` or `curate init --host mcp`; see docs/mcp.md."
    )]
    Mcp,
    /// Serve diagnostics, hover and the prompt preview to an editor (LSP on stdio).
    ///
    /// Any editor with an LSP client starts it; it stops (exit 0) at `exit` or when stdin
    /// ends.
    #[command(after_help = "Set-up for VS Code, Neovim, Helix and Zed: see docs/editors.md.")]
    Lsp,
    /// Keep the `--related` index in memory and follow changes: runs stamp only what changed.
    ///
    /// Linux (inotify). Stays in the foreground; Ctrl-C or SIGTERM ends it.
    #[command(
        after_help = "Examples:\n  curate watch &\n  curate compile --role worker --change add-auth --owns src/auth/login.ts --related 8000\n\nSee docs/budgets.md#related-files."
    )]
    Watch,
    /// Check the hosts' wiring: the binary each runs, other injectors, the workflow, the last
    /// hook runs; exit 1 when a dispatch would go uncurated.
    #[command(
        after_help = "Examples:\n  curate doctor\n  curate doctor --format json\n\nSee docs/hosts.md."
    )]
    Doctor,
    /// Print shell completions.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page.
    Man,
}

/// `curate use`.
#[derive(Debug, Clone, Args)]
pub struct UseArgs {
    /// The change id the hooks compile for.
    #[arg(required_unless_present = "clear")]
    pub change: Option<String>,
    /// Bind it for this host session only (its `session_id`).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Remove the binding instead.
    #[arg(long, conflicts_with = "change")]
    pub clear: bool,
}

/// `render` and `preview`.
#[derive(Debug, Clone, Args)]
pub struct RenderArgs {
    #[command(flatten)]
    pub compile: CompileArgs,

    /// Template name (sticky, bundle, handoff) or a path (holding `/` or ending in `.tera`).
    #[arg(
        long,
        value_name = "NAME|PATH",
        default_value = "bundle",
        help_heading = "Rendering"
    )]
    pub template: String,

    /// Language of the built-in texts.
    /// [default: the config's, else en]
    #[arg(long, value_enum, help_heading = "Rendering")]
    pub lang: Option<Lang>,

    /// Render an existing manifest instead of compiling.
    #[arg(long, value_name = "FILE", help_heading = "Rendering")]
    pub manifest: Option<PathBuf>,

    /// Write the output atomically to FILE instead of stdout.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        help_heading = "Rendering"
    )]
    pub output: Option<PathBuf>,

    /// Cut a file's selected text past this many bytes (0 = off).
    #[arg(long, value_name = "BYTES", help_heading = "Rendering")]
    pub max_file_bytes: Option<u64>,

    /// Past this many bytes in all, entries become one-line index entries (0 = off).
    #[arg(long, value_name = "BYTES", help_heading = "Rendering")]
    pub max_total_bytes: Option<u64>,
}

/// `check`.
#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Manifests to check (default: every `*-context.jsonl` under the changes root).
    pub paths: Vec<PathBuf>,

    /// Also flag entries whose content changed and manifests a compile would now change.
    #[arg(long)]
    pub stale: bool,
}

/// `verify`.
#[derive(Debug, Clone, Args)]
#[command(group = clap::ArgGroup::new("touched_src").required(true))]
pub struct VerifyArgs {
    /// The change id (`<id>` in globs).
    #[arg(long, value_name = "ID")]
    pub change: String,
    /// A task file whose files_owned / files_readonly are the scope.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["owns", "reads"], required_unless_present = "owns")]
    pub task_file: Option<PathBuf>,
    /// An owned glob.
    #[arg(long, value_name = "GLOB")]
    pub owns: Vec<String>,
    /// A read-only glob.
    #[arg(long, value_name = "GLOB")]
    pub reads: Vec<String>,
    /// The touched files.
    #[arg(long, value_name = "FILE", num_args = 1.., group = "touched_src")]
    pub touched: Vec<String>,
    /// Read the touched files from FILE (`-` for stdin), newline- or NUL-separated.
    #[arg(long, value_name = "FILE", group = "touched_src")]
    pub touched_from: Option<PathBuf>,
    /// Take the touched files from git: changed since REV, plus untracked-not-ignored.
    #[arg(long, value_name = "REV", group = "touched_src")]
    pub git_diff: Option<String>,
    /// Also run the task file's checkable success criteria (`Tests pass: <cmd>`, `Type
    /// check passes: <cmd>`, `Lint passes: <cmd>`) in the repository; a failure is a
    /// violation.
    #[arg(long, requires = "task_file")]
    pub run_criteria: bool,
    /// Seconds each criterion may run before it is stopped (and fails).
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 600,
        requires = "run_criteria"
    )]
    pub criteria_timeout: u64,
}

/// `receipt …`.
#[derive(Debug, Subcommand)]
pub enum ReceiptCommand {
    /// Check receipts: exactly one fenced guild.handoff.v2 block that follows the rules.
    Check {
        /// The receipt files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

/// `contracts …`.
#[derive(Debug, Subcommand)]
pub enum ContractsCommand {
    /// Validate the contracts file.
    Validate,
    /// Show the roles and their expanded baselines.
    Show {
        /// Only this role.
        #[arg(long)]
        role: Option<String>,
        /// Expand the baselines for this change.
        #[arg(long)]
        change: Option<String>,
    },
}

/// `config …`.
#[derive(Debug, Clone, Copy, Subcommand)]
pub enum ConfigCommand {
    /// Print every setting, its value and its source.
    Show,
}

/// `init`.
#[derive(Debug, Clone, Args)]
pub struct InitArgs {
    /// Also write the default templates into .curate/templates/.
    #[arg(long)]
    pub templates: bool,
    /// Write or merge a host's wiring instead: `.claude/settings.json` (claude-code),
    /// `.codex/hooks.json` (codex), `.github/hooks/curate.json` (copilot),
    /// `.gemini/settings.json` (gemini), `.opencode/plugins/curate.js` (opencode) or
    /// `.mcp.json` and `.codex/config.toml` (mcp).
    #[arg(long, value_enum, value_name = "HOST", conflicts_with = "templates")]
    pub host: Option<crate::hosts::HostKind>,
    /// Overwrite existing files.
    #[arg(long)]
    pub force: bool,
}

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
    Github,
}

/// Colour choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}
