//! The diagnosis as a Markdown incident note, rendered from a template.
//!
//! Every value that comes from the input is put in a code span or block
//! whose fence is longer than any backtick run inside it, so nothing from a
//! cluster can turn into Markdown or HTML.

use std::io::{self, Write};
use std::sync::LazyLock;

use minijinja::Environment;

use super::Report;

static ENV: LazyLock<Environment<'static>> = LazyLock::new(|| {
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.add_filter("code", code_span);
    env.add_filter("fence", code_block);
    env.add_filter("cell", |s: String| s.replace('|', "\\|").replace('\n', " "));
    env.add_filter("inline", |s: String| s.replace('\n', " "));
    // The template is part of the binary; a broken one fails the test suite.
    let _ = env.add_template(
        "incident.md",
        include_str!("../../templates/incident.md.j2"),
    );
    env
});

/// Writes one incident note.
pub fn write(out: &mut dyn Write, report: &Report<'_>) -> io::Result<()> {
    let rendered = ENV
        .get_template("incident.md")
        .and_then(|template| template.render(report))
        .map_err(|error| io::Error::other(format!("cannot render the incident note: {error}")))?;
    out.write_all(rendered.trim_end().as_bytes())?;
    writeln!(out)
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

fn code_span(text: String) -> String {
    let fence = "`".repeat(longest_backtick_run(&text) + 1);
    if text.starts_with('`') || text.ends_with('`') {
        format!("{fence} {text} {fence}")
    } else {
        format!("{fence}{text}{fence}")
    }
}

fn code_block(text: String) -> String {
    let fence = "`".repeat(longest_backtick_run(&text).max(2) + 1);
    format!("{fence}sh\n{text}\n{fence}")
}
