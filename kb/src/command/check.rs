//! `kb check`: validate a knowledge base.

use std::io::Write;

use kb_dsl::Problem;
use serde::Serialize;

use crate::exit::Exit;
use crate::knowledge::{LoadError, Loaded};
use crate::report;

/// Arguments of `kb check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The knowledge base: a folder, or one `.kb` file; the bundled one when not given.
    pub dir: Option<std::path::PathBuf>,
    /// Output format: text for people, JSON for editors and CI annotations.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    /// Treat warnings as errors: exit 3 when there is any, for CI.
    #[arg(long)]
    pub deny_warnings: bool,
}

/// Formats of `kb check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckFormat {
    /// Rendered diagnostics with the source line and a marker.
    Text,
    /// A JSON array of problems: file, line, column, severity, code, message.
    Json,
}

/// A problem as JSON.
#[derive(Debug, Serialize)]
struct JsonProblem<'a> {
    file: &'a str,
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    severity: &'static str,
    code: &'static str,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    help: Option<&'a str>,
}

fn to_json(problem: &Problem) -> JsonProblem<'_> {
    let (line, column) = problem.loc.src.line_col(problem.loc.start());
    let (end_line, end_column) = problem.loc.src.line_col(problem.loc.end());
    JsonProblem {
        file: &problem.loc.src.name,
        line,
        column,
        end_line,
        end_column,
        severity: problem.severity.as_str(),
        code: problem.code.as_str(),
        message: &problem.message,
        help: problem.help.as_deref(),
    }
}

/// Runs `kb check` on a loaded (or failed) knowledge base.
pub fn run(args: &Args, loaded: Result<Loaded, LoadError>) -> Exit {
    // Tests that cannot be read are a problem of the knowledge base too.
    let loaded = loaded.and_then(|loaded| match loaded.kb.tests() {
        Ok(_) => Ok(loaded),
        Err(error) => Err(LoadError::from(error)),
    });
    let exit = show(args, &loaded);
    // The process ends next: freeing a large knowledge base piece by piece
    // would only make it end later.
    std::mem::forget(loaded);
    exit
}

/// Shows the problems of a knowledge base, or that it has none.
fn show(args: &Args, loaded: &Result<Loaded, LoadError>) -> Exit {
    let (problems, exit) = match loaded {
        Ok(loaded) if args.deny_warnings && !loaded.kb.warnings.is_empty() => {
            (loaded.kb.warnings.clone(), Exit::BadRules)
        }
        Ok(loaded) => (loaded.kb.warnings.clone(), Exit::Ok),
        Err(LoadError::Rules(problems)) => (problems.clone(), Exit::BadRules),
        Err(error @ LoadError::Other(_)) => {
            report::load_error(error);
            return Exit::BadRules;
        }
    };
    let mut stdout = std::io::stdout().lock();
    if args.format == CheckFormat::Json {
        let json: Vec<JsonProblem<'_>> = problems.iter().map(to_json).collect();
        let shown = serde_json::to_writer_pretty(&mut stdout, &json)
            .map_err(std::io::Error::from)
            .and_then(|()| writeln!(stdout))
            .and_then(|()| stdout.flush());
        return crate::output::written(shown, exit);
    }
    match loaded {
        Ok(loaded) => {
            let _ = std::io::stderr().write_all(report::problems(&problems).as_bytes());
            if exit == Exit::BadRules {
                report::input_error(&format!(
                    "the knowledge base has {}, made errors by --deny-warnings",
                    report::counted(problems.len(), "warning")
                ));
                return exit;
            }
            let kb = &loaded.kb;
            let mut counts = [
                (kb.symptoms.len(), "symptom"),
                (kb.checks.len(), "check"),
                (kb.causes.len(), "cause"),
                (kb.facts.len(), "fact"),
                (kb.tests().map_or(0, <[_]>::len), "test"),
            ]
            .map(|(n, noun)| report::counted(n, noun))
            .join(", ");
            if !problems.is_empty() {
                counts += &format!(", {}", report::counted(problems.len(), "warning"));
            }
            crate::output::written(writeln!(stdout, "ok: {counts}"), exit)
        }
        Err(error) => {
            report::load_error(error);
            exit
        }
    }
}
