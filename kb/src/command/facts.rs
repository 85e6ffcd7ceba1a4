//! `kb facts`: the facts the rules see in an input.

use std::io::Write;

use kb_engine::KnowledgeBase;
use kb_engine::diagnosis::{FactSeen, FactState};
use serde::Serialize;

use crate::adapter::Subject;
use crate::exit::Exit;
use crate::read;
use crate::report;

/// Arguments of `kb facts`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Input files, as for `kb eval`; `-` reads stdin.
    #[arg(value_name = "INPUT", required = true)]
    pub inputs: Vec<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct SubjectFacts<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    subject: Option<&'a str>,
    facts: &'a [FactSeen],
    warnings: &'a [String],
}

/// Runs `kb facts`.
pub fn run(args: &Args, kb: &KnowledgeBase) -> Exit {
    let split = match read::split(&args.inputs) {
        Ok(split) => split,
        Err(message) => {
            report::input_error(&message);
            return Exit::BadInput;
        }
    };
    let mut out = crate::output::text_stdout();
    let shown = split
        .subjects()
        .render_in_order(
            |subject| {
                let mut text = Vec::new();
                show(&mut text, kb, subject, args.json).map(|()| text)
            },
            |text| out.write_all(&text?),
        )
        .and_then(|()| out.flush());
    crate::output::written(shown, Exit::Ok)
}

/// Writes the facts of one subject.
fn show(
    out: &mut impl Write,
    kb: &KnowledgeBase,
    subject: &Subject<'_>,
    json: bool,
) -> std::io::Result<()> {
    let input = kb.bind(&subject.document);
    let mut seen = kb.facts_of(&input);
    seen.warnings.splice(0..0, subject.warnings.iter().cloned());
    let facts = &seen.facts;
    if json {
        let record = SubjectFacts {
            subject: subject.label.as_deref(),
            facts,
            warnings: &seen.warnings,
        };
        serde_json::to_writer_pretty(&mut *out, &record)?;
        return writeln!(out);
    }
    writeln!(out, "{}", subject.label.as_deref().unwrap_or("input"))?;
    for warning in &seen.warnings {
        writeln!(out, "  warning: {warning}")?;
    }
    let width = facts.iter().map(|f| f.name.len()).max().unwrap_or(0);
    for fact in facts {
        let shown = match (&fact.state, &fact.value) {
            (FactState::Known, Some(value)) => kb_docs_gen::clip(&value.to_string()).into_owned(),
            (FactState::Absent, _) => String::from("(absent)"),
            _ => String::from("(unknown)"),
        };
        writeln!(out, "  {:width$}  {shown}", fact.name)?;
    }
    Ok(())
}
