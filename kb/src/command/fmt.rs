//! `kb fmt`: format rule files the one canonical way.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::exit::Exit;
use crate::report;

/// Arguments of `kb fmt`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Rule files or folders (every `.kb` file below); the current folder when none.
    /// `-` formats standard input to standard output, for editors and pipes.
    pub paths: Vec<PathBuf>,
    /// Change nothing; list the files that are not formatted and exit 1 if any.
    #[arg(long)]
    pub check: bool,
}

/// Runs `kb fmt`: rewrites (or, with `--check`, lists) every rule file whose
/// formatting differs from the canonical one.
///
/// Exits 3 when a file does not parse (the others are still formatted), else
/// 2 when a path is missing or unreadable, else 1 when `--check` found files
/// to format, else 0.
pub fn run(args: &Args) -> Exit {
    if args.paths.iter().any(|path| path.as_os_str() == "-") {
        if args.paths.len() > 1 {
            report::input_error(
                "`-` (standard input) is formatted on its own, without other paths",
            );
            return Exit::BadInput;
        }
        return format_stdin(args.check);
    }
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let mut exit = Exit::Ok;
    let mut files = Vec::new();
    for path in &paths {
        match rule_files(path) {
            Ok(found) => {
                for file in found {
                    if !files.contains(&file) {
                        files.push(file);
                    }
                }
            }
            Err(message) => {
                report::input_error(&message);
                exit = exit.max(Exit::BadInput);
            }
        }
    }
    let mut stdout = std::io::stdout().lock();
    let mut listed = Ok(());
    for file in &files {
        match format_file(file, args.check) {
            Ok(Outcome::Unchanged) => {}
            Ok(Outcome::Changed) => {
                listed = listed.and_then(|()| writeln!(stdout, "{}", file.display()));
                if args.check {
                    exit = exit.max(Exit::NoMatch);
                }
            }
            Err(Failure::Syntax(problems)) => {
                let _ = stdout.flush();
                let name = file.display();
                does_not_parse(
                    &problems,
                    &format!("`{name}` does not parse; it was left as it is"),
                );
                exit = exit.max(Exit::BadRules);
            }
            Err(Failure::Io(message)) => {
                let _ = stdout.flush();
                report::input_error(&message);
                exit = exit.max(Exit::BadInput);
            }
        }
    }
    crate::output::written(listed.and_then(|()| stdout.flush()), exit)
}

/// Formats standard input to standard output, or with `check` lists it as
/// `<stdin>` when it is not formatted. A text that does not parse is written
/// back as it came: an editor replacing its buffer with what `kb fmt -`
/// prints must not lose it.
fn format_stdin(check: bool) -> Exit {
    const NAME: &str = "<stdin>";
    let text = match crate::read::stdin_text() {
        Ok(text) => text,
        Err(message) => {
            report::input_error(&message);
            return Exit::BadInput;
        }
    };
    let (output, exit) = match kb_dsl::format(&text, NAME) {
        Ok(formatted) => {
            let formatted = with_line_endings_of(&text, formatted);
            match (check, formatted == text) {
                (true, true) => (String::new(), Exit::Ok),
                (true, false) => (format!("{NAME}\n"), Exit::NoMatch),
                (false, _) => (formatted, Exit::Ok),
            }
        }
        Err(error) => {
            let kept = match check {
                true => "",
                false => "; it is written back as it came",
            };
            does_not_parse(&error.problems, &format!("`{NAME}` does not parse{kept}"));
            (if check { String::new() } else { text }, Exit::BadRules)
        }
    };
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_all(output.as_bytes())
        .and_then(|()| stdout.flush());
    crate::output::written(written, exit)
}

/// Reports the problems of a text that does not parse, then `message`.
fn does_not_parse(problems: &[kb_dsl::Problem], message: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(report::problems(problems).as_bytes());
    let _ = writeln!(stderr, "error: {message}");
}

/// The rule files a path names: itself, or every `.kb` file below it, sorted.
fn rule_files(path: &Path) -> Result<Vec<PathBuf>, String> {
    let metadata =
        fs::metadata(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    if !metadata.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    // Found as when rules are read; a file is written where its link points.
    let mut files = crate::knowledge::rule_files_below(path)?;
    files.sort();
    Ok(files)
}

/// What formatting did to a file.
enum Outcome {
    /// It was formatted already.
    Unchanged,
    /// It was rewritten, or would be.
    Changed,
}

/// Why a file could not be formatted.
enum Failure {
    /// It does not parse.
    Syntax(Vec<kb_dsl::Problem>),
    /// It could not be read or written.
    Io(String),
}

fn format_file(path: &Path, check: bool) -> Result<Outcome, Failure> {
    let name = path.display().to_string();
    let text = crate::read::text_file(path).map_err(Failure::Io)?;
    let formatted = kb_dsl::format(&text, &name).map_err(|e| Failure::Syntax(e.problems))?;
    let formatted = with_line_endings_of(&text, formatted);
    if formatted == text {
        return Ok(Outcome::Unchanged);
    }
    if !check {
        write_atomically(path, &formatted)
            .map_err(|e| Failure::Io(format!("cannot write `{name}`: {e}")))?;
    }
    Ok(Outcome::Changed)
}

/// `formatted` with Windows line endings when `text`'s first line has one:
/// git checks rule files out so on Windows (`core.autocrlf`), and they must
/// not all count as unformatted there.
fn with_line_endings_of(text: &str, formatted: String) -> String {
    let first_line = text.split_inclusive('\n').next().unwrap_or_default();
    if first_line.ends_with("\r\n") {
        formatted.replace('\n', "\r\n")
    } else {
        formatted
    }
}

/// Writes a file through a temporary file in the same folder, renamed over
/// it, so the file is never half written. Its permissions are kept, and a
/// symbolic link stays one: the file it points to is written.
fn write_atomically(path: &Path, contents: &str) -> std::io::Result<()> {
    let real = fs::canonicalize(path);
    let path = real.as_deref().unwrap_or(path);
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = path.file_name().map_or_else(
        || String::from("rules.kb"),
        |n| n.to_string_lossy().into_owned(),
    );
    let temp = dir.join(format!(".{file_name}.{}.kb-fmt", std::process::id()));
    let written = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(contents.as_bytes())?;
        file.sync_all()?;
        if let Ok(metadata) = fs::metadata(path) {
            fs::set_permissions(&temp, metadata.permissions())?;
        }
        fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}
