//! The `kb` command.

use clap::Parser;

/// Reading a stream allocates every kept string and object of every
/// document, and frees them a moment later: with mimalloc, evaluating NDJSON
/// takes 30 % less CPU than with the system allocator (docs/performance.md).
/// Without transparent huge pages, one `kb eval` starts as fast as with it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    kb::run(kb::Cli::parse()).into()
}
