//! One module per command; each is a short function from parsed arguments to an exit code.

pub mod check;
pub mod compile;
pub mod completions;
pub mod contracts;
pub mod init;
pub mod receipt;
pub mod render;
pub mod verify;

/// Sets the worker threads of the parallel stages (`-j`), once per process.
pub fn threads(n: Option<usize>) {
    if let Some(n) = n {
        // A second initialisation (in tests) is harmless: the first one stands.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global();
    }
}
