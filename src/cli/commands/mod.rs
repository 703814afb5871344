//! One module per command; each is a short function from parsed arguments to an exit code.

pub mod check;
pub mod compile;
pub mod completions;
pub mod config;
pub mod contracts;
pub mod doctor;
pub mod hook;
pub mod init;
pub mod lsp;
pub mod mcp;
pub mod receipt;
pub mod render;
pub mod use_change;
pub mod verify;
pub mod watch;

/// Sets the worker threads of the parallel stages (`-j`), once per process, clamped to
/// four per CPU (more only costs: each thread has a stack and a tokenizer memo).
pub fn threads(n: Option<usize>) {
    if let Some(asked) = n {
        let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let n = asked.min(cpus * 4);
        if n < asked {
            crate::cli::printer::stderr(&format!(
                "warning: -j {asked} clamped to {n} (four threads per CPU)\n"
            ));
        }
        // A second initialisation (in tests) is harmless: the first one stands.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global();
    }
}
