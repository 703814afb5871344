//! The MCP server (`curate mcp`): curate as tools a lead agent calls over stdio, a front-end
//! beside the command line and the hooks.
//!
//! Four tools, each the library call of a command: `preview` (compile in memory and
//! render; writes nothing), `compile` (compile and write the manifest and lock), `check`
//! and `verify`. Hosts prefix them with the server's name (`curate_preview` in OpenCode,
//! `mcp__curate__preview` in Claude Code), so the names carry no prefix of their own.
//!
//! What the model reads is bounded: Claude Code hands it a result's `structuredContent`
//! whenever there is one (the text only otherwise), OpenCode the text. So a preview
//! answers its text only (a status header, then the prompt: at most the prompt + 2 KiB)
//! unless `report` asks for the whole report as `structuredContent`; `compile`, `check`
//! and `verify` answer the JSON the command line prints with `--format json` as
//! `structuredContent`, and a text. BLOCKED, OVER_BUDGET, a failing check and a verdict
//! with violations are normal results;
//! bad arguments and unreadable inputs are tool errors (`isError: true`, the message as
//! text), and the server goes on serving.
//!
//! Stdout carries the protocol only; nothing here prints. The server stops, exit 0, when
//! stdin ends. The root is `-C DIR` or the working folder, then the usual discovery, for
//! every call anew (an edited config or contracts file is read by the next call).

mod args;
mod frame;
mod tools;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, MetaObject, ServerCapabilities, ServerConfig,
};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};

use crate::error::{Error, Result};
use crate::settings::WorkspaceOptions;

pub use args::{CheckArgs, CompileArgs, Lang, PreviewArgs, Template, VerifyArgs};
pub use tools::Answer;

/// The server's advice to the lead agent, sent with its identity at `initialize`.
pub const INSTRUCTIONS: &str = "curate selects the files (and lines) a sub-agent must read first. Before dispatching a sub-agent: call compile with its role and change (it writes the context manifest the prompt names), then preview with the same inputs and paste the prompt its answer holds, whole, as the sub-agent's first message. preview alone writes nothing, so without compile its prompt names a manifest that does not exist. BLOCKED or OVER_BUDGET: do not dispatch; act on the advice. check and verify report on manifests and on a worker's write boundary.";

/// The largest result text Claude Code shows inline before it spills it to a file (its own
/// default is far below a normal bundle).
const MAX_RESULT_CHARS: u64 = 500_000;

/// Serves MCP on stdin and stdout until stdin ends. `root` names where the repository is
/// found (`dir` is `-C`); progress bars are never drawn.
pub fn serve(root: WorkspaceOptions) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Failed(format!("cannot start the MCP server: {e}")))?;
    let server = Curate::new(WorkspaceOptions {
        progress: false,
        ..root
    });
    let served = runtime.block_on(async move {
        // The client's lines pass a screen (`frame`) on their way to rmcp, and rmcp's
        // answers a mend on their way out; both ends meet on one writer.
        let (ours, rmcps) = tokio::io::duplex(1 << 20);
        let (from_rmcp, to_rmcp) = tokio::io::split(ours);
        let (answers, queue) = tokio::sync::mpsc::unbounded_channel();
        let writer = tokio::spawn(frame::write_out(tokio::io::stdout(), queue));
        // The calls rmcp has not answered: the input's end waits for them.
        let in_flight = std::sync::Arc::new(frame::InFlight::default());
        let out_flight = std::sync::Arc::clone(&in_flight);
        let outward = tokio::spawn({
            let answers = answers.clone();
            async move { frame::pump_out(from_rmcp, answers, &out_flight).await }
        });
        let inward = tokio::spawn(async move {
            frame::pump_in(tokio::io::stdin(), to_rmcp, &answers, &in_flight).await
        });
        let stopped = match server.serve(tokio::io::split(rmcps)).await {
            Ok(running) => running
                .waiting()
                .await
                .map(|_| ())
                .map_err(|e| Error::Failed(format!("the MCP server stopped: {e}"))),
            // The client's input ended before a session began: nothing to serve, and what
            // the screen answered meanwhile is still written below.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => Ok(()),
            // The screen passes nothing else before a session (`frame::Session`); said in
            // words if it ever did, not as rmcp's dump of the message.
            Err(rmcp::service::ServerInitializeError::ExpectedInitializeRequest(_)) => {
                return Err(Error::Failed(
                    "MCP initialisation failed: the client's first message was not `initialize`"
                        .to_owned(),
                ));
            }
            Err(e) => return Err(Error::Failed(format!("MCP initialisation failed: {e}"))),
        };
        let io = |e: std::io::Error| {
            Error::Failed(format!("the MCP server's input or output failed: {e}"))
        };
        let joined =
            |e: tokio::task::JoinError| Error::Failed(format!("the MCP server failed: {e}"));
        // rmcp may stop before stdin ends (a transport error): the client's lines have
        // nowhere to go, and the writer must not wait for a reader that waits for stdin.
        inward.abort();
        match inward.await {
            Ok(read) => read.map_err(io)?,
            Err(e) if e.is_cancelled() => {}
            Err(e) => return Err(joined(e)),
        }
        outward.await.map_err(joined)?.map_err(io)?;
        writer.await.map_err(joined)?.map_err(io)?;
        stopped?;
        Ok(())
    });
    // Everything was awaited but a read of stdin still blocked in its thread (rmcp stopped
    // first): it is not waited for.
    runtime.shutdown_background();
    served
}

/// The server: where the repository is, and the tools.
#[derive(Debug, Clone)]
pub struct Curate {
    root: WorkspaceOptions,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Curate {
    /// A server finding the repository from `root`.
    #[must_use]
    pub fn new(root: WorkspaceOptions) -> Curate {
        Curate {
            root,
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        name = "preview",
        description = "Render the prompt of a sub-agent: which files (and lines) it must read first, compiled in memory; writes nothing. READY: a one-line status header (and any warnings), then the prompt to paste whole as the sub-agent's first message. BLOCKED or OVER_BUDGET: do not dispatch; the text is the report with its advice. The prompt names the manifest compile writes: call compile with the same inputs first (a warning says when the manifest is missing or differs). report: true adds the whole report as structuredContent {status, prompt, report, warnings}.",
        annotations(
            read_only_hint = true,
            idempotent_hint = true,
            destructive_hint = false,
            open_world_hint = false
        ),
        meta = result_size_meta()
    )]
    async fn preview(&self, Parameters(a): Parameters<PreviewArgs>) -> CallToolResult {
        self.run(move |root| tools::preview(&root, &a)).await
    }

    #[tool(
        name = "compile",
        description = "Compile the context manifest of a sub-agent and write it with its lock (changes/<change>/analysis/<role>-context.jsonl) unless dry_run or not READY; then call preview with the same inputs for the prompt. structuredContent is the compile report {status, manifest, written, entries, dropped, excluded, totals, budget, warnings, notes}. A manifest edited by hand is an error.",
        annotations(
            read_only_hint = false,
            idempotent_hint = true,
            destructive_hint = false,
            open_world_hint = false
        ),
        meta = result_size_meta()
    )]
    async fn compile(&self, Parameters(a): Parameters<CompileArgs>) -> CallToolResult {
        self.run(move |root| tools::compile(&root, &a)).await
    }

    #[tool(
        name = "check",
        description = "Check the committed manifests (and the contracts): valid, in budget and, with stale, current. structuredContent is {valid, manifests, findings}; a failing check is a normal result.",
        annotations(
            read_only_hint = true,
            idempotent_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    async fn check(&self, Parameters(a): Parameters<CheckArgs>) -> CallToolResult {
        self.run(move |root| tools::check(&root, &a)).await
    }

    #[tool(
        name = "verify",
        description = "Check that a worker's touched files stay inside its owned globs (owns/reads or a task_file; touched or git_diff). structuredContent is {valid, violations}; violations are a normal result.",
        annotations(
            read_only_hint = true,
            idempotent_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    async fn verify(&self, Parameters(a): Parameters<VerifyArgs>) -> CallToolResult {
        self.run(move |root| tools::verify(&root, &a)).await
    }
}

impl Curate {
    /// Runs a tool off the protocol thread and turns its outcome into a result: an answer
    /// (JSON and text), or a tool error with curate's message. A panic is a tool error too.
    async fn run<F>(&self, work: F) -> CallToolResult
    where
        F: FnOnce(WorkspaceOptions) -> Result<Answer> + Send + 'static,
    {
        let root = self.root.clone();
        match tokio::task::spawn_blocking(move || work(root)).await {
            Ok(Ok(answer)) => {
                let mut result = CallToolResult::success(vec![ContentBlock::text(answer.text)]);
                result.structured_content = answer.structured;
                result
            }
            Ok(Err(e)) => tool_error(crate::error::render(&e, "error:").trim_end()),
            Err(_) => tool_error("error: internal error (the tool panicked)"),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Curate {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("curate", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS.to_owned())
    }
}

fn tool_error(text: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// `_meta` of the tools whose results hold a prompt: Claude Code's inline size limit.
fn result_size_meta() -> MetaObject {
    let mut meta = MetaObject::default();
    meta.0.insert(
        "anthropic/maxResultSizeChars".to_owned(),
        serde_json::Value::from(MAX_RESULT_CHARS),
    );
    meta
}
