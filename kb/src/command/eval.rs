//! `kb eval`: diagnose what kubectl printed.

use std::io::{self, BufWriter, IsTerminal, Write};

use kb_engine::{KnowledgeBase, Lang};

use crate::adapter::{self, Subject};
use crate::exit::Exit;
use crate::knowledge::Loaded;
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
    /// Where the runbooks (`kb docs --html`) are published: each cause links
    /// to `URL/LANG/causes/ID.html` [default: `runbook_url` of kb.toml].
    #[arg(long, value_name = "URL")]
    pub runbook_url: Option<String>,
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

/// What every diagnosis of one run shares, and where it goes.
struct Run<'a> {
    kb: &'a KnowledgeBase,
    lang: Lang,
    format: Format,
    /// Where this language's runbooks are published.
    runbooks: Option<String>,
    out: &'a mut dyn Write,
    tally: Tally,
}

/// Runs `kb eval`.
pub fn run(args: &Args, loaded: &Loaded, lang: Lang) -> Exit {
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
    let runbooks = args
        .runbook_url
        .clone()
        .or_else(|| loaded.manifest.as_ref().and_then(|m| m.runbook_url.clone()))
        .map(|url| format!("{}/{}", url.trim_end_matches('/'), lang_code(lang)));
    let stdout = anstream::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut run = Run {
        kb: &loaded.kb,
        lang,
        format: args.format,
        runbooks,
        out: &mut out,
        tally: Tally::default(),
    };
    let result = run.inputs(&inputs).and_then(|()| run.out.flush());
    match result {
        Ok(()) => run.tally.exit(),
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => run.tally.exit(),
        Err(error) => {
            report::input_error(&format!("cannot write the output: {error}"));
            Exit::BadInput
        }
    }
}

fn lang_code(lang: Lang) -> &'static str {
    match lang {
        Lang::En => "en",
        Lang::Zh => "zh",
    }
}

impl Run<'_> {
    fn bad_input(&mut self, message: &str) {
        report::input_error(message);
        self.tally.bad_input = true;
    }

    fn inputs(&mut self, inputs: &[String]) -> io::Result<()> {
        let mut documents = Vec::new();
        for name in inputs {
            let shown = if name == "-" { "<stdin>" } else { name };
            let content = match read::open(name).and_then(|reader| read::content(shown, reader)) {
                Ok(content) => content,
                Err(message) => {
                    self.bad_input(&message);
                    return Ok(());
                }
            };
            match content {
                Content::Documents(found) => documents.extend(found),
                Content::Lines(lines) if inputs.len() == 1 => return self.stream(lines, shown),
                Content::Lines(_) => {
                    self.bad_input(&format!(
                        "{shown}: NDJSON (one document per line) must be the only input; give the other files separately"
                    ));
                    return Ok(());
                }
            }
        }
        match adapter::subjects(documents) {
            Ok(subjects) if subjects.is_empty() => {
                self.bad_input("the input holds no pod, owner, namespace or facts to diagnose");
            }
            Ok(subjects) => {
                let several = subjects.len() > 1;
                for subject in &subjects {
                    self.diagnose(subject, None, several)?;
                }
            }
            Err(message) => self.bad_input(&message),
        }
        Ok(())
    }

    /// Evaluates NDJSON line by line: one result per line, in order; a bad
    /// line is reported where its result would be, and the others go on.
    fn stream(&mut self, lines: read::Lines, name: &str) -> io::Result<()> {
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
                Ok(subject) => self.diagnose(&subject, Some(line), true)?,
                Err(message) => {
                    self.bad_input(&format!("{name}:{line}: {message}"));
                    if self.format == Format::Json {
                        serde_json::to_writer(
                            &mut *self.out,
                            &LineError {
                                line,
                                error: &message,
                            },
                        )?;
                        writeln!(self.out)?;
                    }
                }
            }
            if flush_each {
                self.out.flush()?;
            }
        }
        Ok(())
    }

    fn diagnose(
        &mut self,
        subject: &Subject,
        line: Option<usize>,
        compact: bool,
    ) -> io::Result<()> {
        let input = self.kb.bind(&subject.document);
        let mut diagnosis = self.kb.evaluate(&input, self.lang);
        if let Some(base) = &self.runbooks {
            for cause in &mut diagnosis.causes {
                let page = kb_docs_gen::paths::cause(&cause.id).replace(".md", ".html");
                cause.runbook = Some(format!("{base}/{page}"));
            }
        }
        self.tally.matched |= !diagnosis.symptoms.is_empty();
        let report = Report {
            subject: subject.label.as_deref(),
            line,
            diagnosis: &diagnosis,
        };
        output::write(self.out, self.format, &report, compact, self.lang)
    }
}
