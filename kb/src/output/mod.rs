//! Writing diagnoses: text for people, JSON for programs, Markdown for tickets.

pub mod markdown;
pub mod text;

use std::io::{self, Write};

use kb_engine::Diagnosis;
use serde::Serialize;

use crate::exit::Exit;

/// The formats `kb eval` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For people at a terminal.
    Text,
    /// The documented JSON schema (docs/json-schema.md).
    Json,
    /// An incident note for a ticket.
    Markdown,
}

/// How a command ends once its output is written (and flushed): a reader
/// gone (`kb test | head`) ends it quietly, as no more was wanted; any
/// other failure to write, a full disk say, is reported and exits 2 at
/// least, since output lost is no success.
pub fn written(result: io::Result<()>, exit: Exit) -> Exit {
    match result {
        Err(error) if error.kind() != io::ErrorKind::BrokenPipe => {
            crate::report::input_error(&format!("cannot write the output: {error}"));
            exit.max(Exit::BadInput)
        }
        _ => exit,
    }
}

/// The standard output for text with colours, which are stripped off a
/// terminal. It is buffered: the standard output alone, buffered by line,
/// would be written once for each piece of text between two colours.
pub fn text_stdout() -> anstream::AutoStream<Box<dyn Write>> {
    let choice = anstream::AutoStream::choice(&io::stdout());
    anstream::AutoStream::new(Box::new(io::BufWriter::new(io::stdout().lock())), choice)
}

/// One diagnosis and what it is about: the top-level object of JSON output.
#[derive(Debug, Serialize)]
pub struct Report<'a> {
    /// The object diagnosed: `pod default/web-1`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<&'a str>,
    /// The input line, for NDJSON; where the document starts, for `--watch`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// What the knowledge base found.
    #[serde(flatten)]
    pub diagnosis: &'a Diagnosis,
}

/// Writes a report in a format. JSON is pretty for a single document and
/// one line per report for a stream.
pub fn write(
    out: &mut dyn Write,
    format: Format,
    report: &Report<'_>,
    compact: bool,
    lang: kb_engine::Lang,
) -> io::Result<()> {
    match format {
        Format::Text => text::write(out, report),
        Format::Markdown => markdown::write(out, report, lang),
        Format::Json => {
            // Serialized into bytes of its own, where each of the report's
            // thousand tokens is a copy, not a call through `dyn Write`.
            let mut json = if compact {
                serde_json::to_vec(report)?
            } else {
                serde_json::to_vec_pretty(report)?
            };
            json.push(b'\n');
            out.write_all(&json)
        }
    }
}

/// A line of NDJSON or a document of `--watch` that could not be
/// diagnosed, in the output stream where its result would be.
#[derive(Debug, Serialize)]
pub struct LineError<'a> {
    /// The input line; for `--watch`, where the error or the document is.
    pub line: usize,
    /// What was wrong with it.
    pub error: &'a str,
}
