//! Problems in rule files and input, rendered for people on stderr.

use std::io::{IsTerminal, Write};

use kb_dsl::Problem;
use miette::{GraphicalReportHandler, GraphicalTheme};

use crate::knowledge::LoadError;

/// Whether stderr gets colour: a terminal, and `NO_COLOR` unset.
fn color() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Renders problems with the source line and a marker under the culprit,
/// in colour when stderr is a terminal.
pub fn problems(problems: &[Problem]) -> String {
    render(problems, color())
}

/// Renders problems, with or without colour.
pub fn render(problems: &[Problem], color: bool) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme).with_width(100);
    let mut out = String::new();
    for problem in problems {
        if handler.render_report(&mut out, problem).is_err() {
            out.push_str(&format!(
                "{}: {}\n",
                problem.loc.position(),
                problem.message
            ));
        }
    }
    out
}

/// Writes why a knowledge base could not be loaded, with a count.
pub fn load_error(error: &LoadError) {
    let mut stderr = std::io::stderr().lock();
    match error {
        LoadError::Rules(found) => {
            let _ = stderr.write_all(problems(found).as_bytes());
            let errors = found.iter().filter(|p| p.is_error()).count();
            let plural = if errors == 1 { "" } else { "s" };
            let _ = writeln!(
                stderr,
                "error: the knowledge base has {errors} error{plural}"
            );
        }
        LoadError::Other(message) => {
            let _ = writeln!(stderr, "error: {message}");
        }
    }
}

/// Writes an error about the input.
pub fn input_error(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "error: {message}");
}
