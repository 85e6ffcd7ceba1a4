//! Helpers shared by the end-to-end tests: running the built `kb` binary.

#![allow(dead_code, reason = "each test file uses a part of these helpers")]

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The `kb` binary, with the colour variables of the calling environment
/// removed, keeping no compiled knowledge base (`cli_cache.rs` tests that).
pub fn kb() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kb"));
    command
        .env("KB_CACHE_DIR", "")
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

/// Writes a file, creating its folders, and returns its path.
pub fn write(dir: impl AsRef<Path>, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.as_ref().join(name);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).expect("create the folders");
    }
    fs::write(&path, contents).expect("write the file");
    path
}

/// Fails, showing `text`, unless it contains `fragment`.
#[track_caller]
pub fn assert_contains(text: &str, fragment: &str) {
    assert!(text.contains(fragment), "`{fragment}` not in:\n{text}");
}

/// The 1-based line and column (in characters, as kb reports them) where
/// `needle` starts in `text`.
pub fn line_col(text: &str, needle: &str) -> (usize, usize) {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("`{needle}` not in the text"));
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count()
        + 1;
    (line, column)
}
