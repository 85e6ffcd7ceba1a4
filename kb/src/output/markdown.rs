//! The diagnosis as a Markdown incident note, from the same templates as the
//! runbook pages, so the two look alike.
//!
//! Every value that comes from the input is put in a code span or block
//! whose fence is longer than any backtick run inside it, so nothing from a
//! cluster can turn into Markdown or HTML.

use std::io::{self, Write};
use std::sync::LazyLock;

use kb_docs_gen::Templates;

use super::Report;

static TEMPLATES: LazyLock<Templates> = LazyLock::new(Templates::builtin);

/// Writes one incident note.
pub fn write(out: &mut dyn Write, report: &Report<'_>, lang: kb_engine::Lang) -> io::Result<()> {
    let rendered = TEMPLATES
        .incident(report, lang)
        .map_err(|error| io::Error::other(format!("cannot render the incident note: {error}")))?;
    out.write_all(rendered.as_bytes())
}
