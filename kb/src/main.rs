//! The `kb` command.

use clap::Parser;

fn main() -> std::process::ExitCode {
    kb::run(kb::Cli::parse()).into()
}
