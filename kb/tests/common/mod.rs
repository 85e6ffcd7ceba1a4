//! Helpers shared by the end-to-end tests: running the built `kb` binary.

#![allow(dead_code, reason = "each test file uses a part of these helpers")]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The `kb` binary, with the colour variables of the calling environment removed.
pub fn kb() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kb"));
    command
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE");
    command
}

/// What one run of `kb` did.
#[derive(Debug)]
pub struct Run {
    /// The exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs a prepared command; a crash or a panic fails the test whatever the command.
pub fn finish(command: &mut Command) -> Run {
    let output = command.output().expect("run kb");
    let stdout = String::from_utf8(output.stdout).expect("stdout is UTF-8");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let code = output
        .status
        .code()
        .unwrap_or_else(|| panic!("kb was killed by a signal; stderr:\n{stderr}"));
    assert!(
        !stderr.contains("panicked"),
        "kb panicked (exit {code}):\n{stderr}"
    );
    Run {
        code,
        stdout,
        stderr,
    }
}

/// Runs `kb ARGS`.
pub fn run<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    finish(kb().args(args))
}

/// Runs `kb ARGS` with `stdin` piped in.
pub fn run_stdin<I, S>(args: I, stdin: impl Into<Vec<u8>>) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    finish(kb().args(args).write_stdin(stdin.into()))
}

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the kb crate is in a workspace")
        .to_path_buf()
}

/// `examples/NAME` of the workspace.
pub fn example(name: &str) -> PathBuf {
    workspace().join("examples").join(name)
}
