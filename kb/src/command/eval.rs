//! `kb eval`: diagnose what kubectl printed.

use std::io::{self, BufWriter, IsTerminal, Write};

use kb_engine::{KnowledgeBase, Lang};

use crate::adapter::{self, Subject};
use crate::exit::Exit;
use crate::output::{self, Format, LineError, Report};
use crate::read::{self, Content};
use crate::report;

/// Arguments of `kb eval`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Input files: a bundle, a Pod, a kubectl List, events and nodes, NDJSON
    /// of bundles, or a facts document; `-` (or nothing) reads stdin.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<String>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Counts what happened, to choose the exit code.
#[derive(Default)]
struct Tally {
    matched: bool,
    bad_input: bool,
}

impl Tally {
    fn exit(&self) -> Exit {
        if self.bad_input {
            Exit::BadInput
        } else if self.matched {
            Exit::Ok
        } else {
            Exit::NoMatch
        }
    }
}

/// Runs `kb eval`.
pub fn run(args: &Args, kb: &KnowledgeBase, lang: Lang) -> Exit {
    let mut inputs = args.inputs.clone();
    if inputs.is_empty() {
        if io::stdin().is_terminal() {
            report::input_error("no input: give a file, or pipe kubectl's JSON into `kb eval -`");
            return Exit::BadInput;
        }
        inputs.push(String::from("-"));
    }
    if inputs.iter().filter(|i| *i == "-").count() > 1 {
        report::input_error("stdin (`-`) is given more than once");
        return Exit::BadInput;
    }
    let stdout = anstream::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut tally = Tally::default();
    let result = evaluate_inputs(&inputs, kb, lang, args.format, &mut out, &mut tally)
        .and_then(|()| out.flush());
    match result {
        Ok(()) => tally.exit(),
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => tally.exit(),
        Err(error) => {
            report::input_error(&format!("cannot write the output: {error}"));
            Exit::BadInput
        }
    }
}

fn evaluate_inputs(
    inputs: &[String],
    kb: &KnowledgeBase,
    lang: Lang,
    format: Format,
    out: &mut dyn Write,
    tally: &mut Tally,
) -> io::Result<()> {
    let mut documents = Vec::new();
    for name in inputs {
        let shown = if name == "-" { "<stdin>" } else { name };
        let content = match read::open(name).and_then(|reader| read::content(shown, reader)) {
            Ok(content) => content,
            Err(message) => {
                report::input_error(&message);
                tally.bad_input = true;
                return Ok(());
            }
        };
        match content {
            Content::Documents(found) => documents.extend(found),
            Content::Lines(lines) if inputs.len() == 1 => {
                return stream(lines, shown, kb, lang, format, out, tally);
            }
            Content::Lines(_) => {
                report::input_error(&format!(
                    "{shown}: NDJSON (one document per line) must be the only input; give the other files separately"
                ));
                tally.bad_input = true;
                return Ok(());
            }
        }
    }
    match adapter::subjects(documents) {
        Ok(subjects) if subjects.is_empty() => {
            report::input_error("the input holds no pod, owner, namespace or facts to diagnose");
            tally.bad_input = true;
        }
        Ok(subjects) => {
            for subject in &subjects {
                diagnose(
                    subject,
                    None,
                    kb,
                    lang,
                    format,
                    subjects.len() > 1,
                    out,
                    tally,
                )?;
            }
        }
        Err(message) => {
            report::input_error(&message);
            tally.bad_input = true;
        }
    }
    Ok(())
}

/// Evaluates NDJSON line by line: one result per line, in order; a bad line
/// is reported where its result would be, and the others go on.
fn stream(
    lines: read::Lines,
    name: &str,
    kb: &KnowledgeBase,
    lang: Lang,
    format: Format,
    out: &mut dyn Write,
    tally: &mut Tally,
) -> io::Result<()> {
    let flush_each = io::stdout().is_terminal();
    for (line, parsed) in lines {
        let subject = parsed.and_then(|document| {
            let mut subjects = adapter::subjects(vec![document])?;
            match subjects.len() {
                1 => Ok(subjects.remove(0)),
                0 => Err(String::from("nothing to diagnose on this line")),
                n => Err(format!(
                    "{n} subjects on one line; give one bundle per line"
                )),
            }
        });
        match subject {
            Ok(subject) => diagnose(&subject, Some(line), kb, lang, format, true, out, tally)?,
            Err(message) => {
                tally.bad_input = true;
                report::input_error(&format!("{name}:{line}: {message}"));
                if format == Format::Json {
                    serde_json::to_writer(
                        &mut *out,
                        &LineError {
                            line,
                            error: &message,
                        },
                    )?;
                    writeln!(out)?;
                }
            }
        }
        if flush_each {
            out.flush()?;
        }
    }
    Ok(())
}

#[expect(clippy::too_many_arguments, reason = "the context of one diagnosis")]
fn diagnose(
    subject: &Subject,
    line: Option<usize>,
    kb: &KnowledgeBase,
    lang: Lang,
    format: Format,
    compact: bool,
    out: &mut dyn Write,
    tally: &mut Tally,
) -> io::Result<()> {
    let input = kb.bind(&subject.document);
    let diagnosis = kb.evaluate(&input, lang);
    tally.matched |= !diagnosis.symptoms.is_empty();
    let report = Report {
        subject: subject.label.as_deref(),
        line,
        diagnosis: &diagnosis,
    };
    output::write(out, format, &report, compact)
}
