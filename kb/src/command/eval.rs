//! `kb eval`: diagnose what kubectl printed.

use std::io::{self, BufWriter, IsTerminal, Write};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::thread;
use std::time::Duration;

use anstyle::{AnsiColor, Style};
use kb_engine::diagnosis::{Evidence, Status};
use kb_engine::kb::{CauseId, Id, WhyNot};
use kb_engine::value::Truth;
use kb_engine::{KnowledgeBase, Lang};
use serde::Serialize;

use kb_engine::json::Json;
use kb_engine::needs::Pruner;
use rayon::prelude::*;

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
    /// of bundles, or a facts document, in JSON or as `kubectl get … -o yaml`
    /// prints them; `-` (or nothing) reads stdin.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<String>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Where the runbooks (`kb docs --html`) are published: each cause links
    /// to `URL/LANG/causes/ID.html` [default: `runbook_url` of the `[docs]` table of kb.toml].
    #[arg(long, value_name = "URL")]
    pub runbook_url: Option<String>,
    /// Instead of the diagnosis, explain why this cause was not confirmed:
    /// every way to it from a symptom, evaluated up to the condition where it
    /// stops, with the fact values it read (one report per subject).
    #[arg(long, value_name = "CAUSE")]
    pub why_not: Option<String>,
    /// Diagnose each document on its own as soon as it has come, for a
    /// stream that stays open: what `kubectl get pod NAME -w -o json` (or
    /// `-o yaml`) prints, with `--output-watch-events` too, or a snapshot of a
    /// namespace taken again and again. One input only.
    #[arg(long, short)]
    pub watch: bool,
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

/// What every diagnosis of one run shares; read by every worker thread.
struct Context<'a> {
    kb: &'a KnowledgeBase,
    lang: Lang,
    format: Format,
    /// Where this language's runbooks are published.
    runbooks: Option<String>,
    /// The cause `--why-not` asks about.
    why_not: Option<CauseId>,
}

/// A run: the shared context, and where results go, in input order.
struct Run<'a> {
    context: Context<'a>,
    out: &'a mut dyn Write,
    tally: Tally,
}

/// A subject's output, and whether a symptom matched.
type Rendered = (Vec<u8>, bool);

/// The most NDJSON lines diagnosed in parallel and written at a time: memory
/// stays bounded by a few times this many bundles whatever the stream's length.
const BATCH: usize = 64;

/// The largest line buffer handed back to the reader for the next lines; a
/// buffer that once held a huge line is freed, not kept for small ones.
const MAX_REUSED_BUFFER: usize = 1 << 20;

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
        .or_else(|| {
            loaded
                .manifest
                .as_ref()
                .and_then(|m| m.docs.runbook_url.clone())
        })
        .map(|url| format!("{}/{}", url.trim_end_matches('/'), lang_code(lang)));
    let why_not = match args.why_not.as_deref().map(|id| cause_id(&loaded.kb, id)) {
        None => None,
        Some(Ok(cause)) => Some(cause),
        Some(Err(message)) => {
            report::input_error(&message);
            return Exit::BadInput;
        }
    };
    // Only text has colour to strip off a terminal; the others go straight out.
    let stdout: Box<dyn Write> = match args.format {
        Format::Text => Box::new(output::text_stdout()),
        Format::Json | Format::Markdown => Box::new(io::stdout().lock()),
    };
    let mut out = BufWriter::with_capacity(1 << 16, stdout);
    let context = Context {
        kb: &loaded.kb,
        lang,
        format: args.format,
        runbooks,
        why_not,
    };
    let mut run = Run {
        context,
        out: &mut out,
        tally: Tally::default(),
    };
    let result = run
        .inputs(&inputs, args.watch)
        .and_then(|()| run.out.flush());
    output::written(result, run.tally.exit())
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

    fn inputs(&mut self, inputs: &[String], watch: bool) -> io::Result<()> {
        if watch {
            let [name] = inputs else {
                self.bad_input("`--watch` reads one input; give the others separately");
                return Ok(());
            };
            let shown = if name == "-" { "<stdin>" } else { name };
            return match read::open(name).and_then(|reader| read::documents(shown, reader)) {
                Ok(documents) => self.stream(|_| documents, shown, Unit::Document),
                Err(message) => {
                    self.bad_input(&message);
                    Ok(())
                }
            };
        }
        let mut documents = Vec::new();
        let pruner = || adapter::pruner(self.context.kb);
        for name in inputs {
            let shown = if name == "-" { "<stdin>" } else { name };
            // Its thread costs a small `kb eval` about 5 %: spared for a file.
            let reading = (name == "-" && read::stdin_may_stay_open()).then(still_reading_hint);
            let content =
                read::open(name).and_then(|reader| read::content(shown, reader, Some(&pruner)));
            drop(reading);
            let content = match content {
                Ok(content) => content,
                Err(message) => {
                    self.bad_input(&message);
                    return Ok(());
                }
            };
            match content {
                Content::Documents(found) => documents.extend(found),
                Content::Lines(lines) if inputs.len() == 1 => {
                    return self.stream(|spare| lines.reusing(spare), shown, Unit::Line);
                }
                Content::Lines(_) => {
                    self.bad_input(&format!(
                        "{shown}: NDJSON (one document per line) must be the only input; give the other files separately"
                    ));
                    return Ok(());
                }
            }
        }
        match adapter::split(documents) {
            Ok(split) => self.subjects(&split.subjects())?,
            Err(message) => self.bad_input(&message),
        }
        Ok(())
    }

    /// Diagnoses a whole input's subjects (a cluster's dump holds thousands)
    /// and writes them in order.
    fn subjects(&mut self, subjects: &adapter::Subjects<'_, '_>) -> io::Result<()> {
        if subjects.is_empty() {
            self.bad_input("the input holds no pod, owner, namespace or facts to diagnose");
            return Ok(());
        }
        let several = subjects.len() > 1;
        let context = &self.context;
        subjects.render_in_order(
            |subject| context.render(subject, None, several),
            |result| {
                let (output, matched) = result?;
                self.tally.matched |= matched;
                self.out.write_all(&output)
            },
        )
    }

    /// Evaluates a stream: NDJSON, one result per line, or documents one
    /// after another (`--watch`), each document's results together; all in
    /// input order. A bad line is reported where its result would be, and
    /// the others go on. Lines are read on a thread of their own (`read`
    /// makes them there, given where to take buffers to reuse from), and
    /// parsed and diagnosed in parallel, up to a batch at a time: as many as
    /// have arrived, so that reading overlaps diagnosing, and a line of a
    /// live stream is answered when it comes rather than when a batch
    /// fills. Results are flushed whenever the input has nothing more yet.
    fn stream<I>(
        &mut self,
        read: impl FnOnce(Receiver<Vec<u8>>) -> I + Send + 'static,
        name: &str,
        unit: Unit,
    ) -> io::Result<()>
    where
        I: Iterator<Item = (usize, Result<Vec<u8>, String>)>,
    {
        let flush_each = io::stdout().is_terminal();
        // Worth working out for a stream or a large document only: it costs
        // more than parsing a small one.
        let pruner = adapter::pruner(self.context.kb);
        let (send, arrived) = mpsc::sync_channel(BATCH);
        let (give_back, spare) = mpsc::channel();
        // Not joined: when the output fails, the command ends without
        // waiting for more input.
        thread::Builder::new()
            .name(String::from("kb-read"))
            .spawn(move || {
                for line in read(spare) {
                    if send.send(line).is_err() {
                        return;
                    }
                }
            })?;
        let mut any = false;
        loop {
            let first = match arrived.try_recv() {
                Ok(line) => line,
                Err(TryRecvError::Disconnected) => break,
                Err(TryRecvError::Empty) => {
                    self.out.flush()?;
                    match arrived.recv() {
                        Ok(line) => line,
                        Err(_) => break,
                    }
                }
            };
            any = true;
            let mut batch: Vec<(usize, Result<Vec<u8>, String>)> = vec![first];
            batch.extend(arrived.try_iter().take(BATCH - 1));
            let context = &self.context;
            let results: Vec<_> = batch
                .into_par_iter()
                .map(|(line, raw)| {
                    let result = match &raw {
                        Ok(raw) => context.line(raw, line, &pruner, unit),
                        Err(message) => Err((line, message.clone())),
                    };
                    (result, raw.ok())
                })
                .collect();
            for (result, raw) in results {
                if let Some(raw) = raw.filter(|raw| raw.capacity() <= MAX_REUSED_BUFFER) {
                    // The reader may have stopped; the buffer is then dropped.
                    let _ = give_back.send(raw);
                }
                match result {
                    Ok((output, matched)) => {
                        self.tally.matched |= matched;
                        self.out.write_all(&output)?;
                    }
                    Err((line, message)) => {
                        self.bad_input(&format!("{name}:{line}: {message}"));
                        if self.context.format == Format::Json {
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
        }
        if !any {
            self.bad_input(&format!("{name}: the input is empty"));
        }
        Ok(())
    }
}

/// How long standard input may stay open, its documents read as one case,
/// before kb says why nothing comes out yet.
const STILL_READING_AFTER: Duration = Duration::from_secs(3);

/// Says once on stderr, unless dropped before [`STILL_READING_AFTER`], that
/// documents read whole are diagnosed when the input ends: piped from
/// `kubectl get -w`, which never ends, they want `--watch`.
fn still_reading_hint() -> mpsc::Sender<()> {
    let (reading, done) = mpsc::channel();
    // Without a thread for it, there is no note; nothing else changes.
    let _ = thread::Builder::new().spawn(move || {
        if done.recv_timeout(STILL_READING_AFTER) == Err(RecvTimeoutError::Timeout) {
            report::note(
                "still reading <stdin>, which has not ended: a document is diagnosed when the \
                 input ends (NDJSON line by line from its second line); for documents that keep \
                 coming, as `kubectl get -w -o json` prints them, use `kb eval --watch`",
            );
        }
    });
    reading
}

/// What one item of a stream is.
#[derive(Clone, Copy)]
enum Unit {
    /// A line of NDJSON: one subject.
    Line,
    /// A whole document (`--watch`): any number of subjects, as a file.
    Document,
}

impl Context<'_> {
    /// One item of a stream: parsed keeping what the rules read, diagnosed,
    /// written out.
    fn line(
        &self,
        raw: &[u8],
        line: usize,
        pruner: &Pruner,
        unit: Unit,
    ) -> Result<Rendered, (usize, String)> {
        // A line's newline may count as the start of one more.
        let document = read::parse_line(raw, pruner).map_err(|(at, e)| match unit {
            Unit::Line => (line, e),
            Unit::Document => (line + at - 1, e),
        })?;
        self.diagnose(document, line, unit).map_err(|e| (line, e))
    }

    /// The subjects of one item of a stream, diagnosed.
    fn diagnose(&self, document: Json<'_>, line: usize, unit: Unit) -> Result<Rendered, String> {
        let subjects = adapter::subjects(vec![document])?;
        match (unit, subjects.len()) {
            (Unit::Line, 0) => return Err(String::from("nothing to diagnose on this line")),
            (Unit::Document, 0) => {
                return Err(String::from(
                    "the document holds no pod, owner, namespace or facts to diagnose",
                ));
            }
            (Unit::Line, n @ 2..) => {
                return Err(format!(
                    "{n} subjects on one line; give one bundle per line"
                ));
            }
            _ => {}
        }
        let mut rendered = (Vec::new(), false);
        for subject in &subjects {
            let (output, matched) = self
                .render(subject, Some(line), true)
                .map_err(|e| e.to_string())?;
            rendered.0.extend(output);
            rendered.1 |= matched;
        }
        Ok(rendered)
    }

    /// A subject's diagnosis (or `--why-not` report) as output bytes, and
    /// whether a symptom matched.
    fn render(
        &self,
        subject: &Subject,
        line: Option<usize>,
        compact: bool,
    ) -> io::Result<Rendered> {
        let mut out = Vec::new();
        let input = self.kb.bind(&subject.document);
        let mut diagnosis = self.kb.evaluate(&input, self.lang);
        diagnosis
            .warnings
            .splice(0..0, subject.warnings.iter().cloned());
        let matched = !diagnosis.symptoms.is_empty();
        if let Some(cause) = self.why_not {
            let ways = self.kb.why_not(&input, cause, self.lang);
            let id = self.kb.causes.get(cause.0).map_or("", |c| c.id.as_str());
            let report = WhyNotReport {
                subject: subject.label.as_deref(),
                line,
                why_not: id,
                status: match diagnosis.causes.iter().find(|c| c.id == id) {
                    Some(found) if found.status == Status::Confirmed => "confirmed",
                    Some(_) => "possible",
                    None => "unreached",
                },
                ways: &ways,
                warnings: &diagnosis.warnings,
            };
            write_why_not(&mut out, self.format, &report, compact, self.kb, self.lang)?;
            return Ok((out, matched));
        }
        if let Some(base) = &self.runbooks {
            for cause in &mut diagnosis.causes {
                let page = kb_docs_gen::paths::cause(&cause.id).replace(".md", ".html");
                cause.runbook = Some(format!("{base}/{page}"));
            }
        }
        let report = Report {
            subject: subject.label.as_deref(),
            line,
            diagnosis: &diagnosis,
        };
        output::write(&mut out, self.format, &report, compact, self.lang)?;
        Ok((out, matched))
    }
}

/// The cause a `--why-not` id names; an error with a did-you-mean otherwise.
pub fn cause_id(kb: &KnowledgeBase, id: &str) -> Result<CauseId, String> {
    match kb.lookup(id) {
        Some(Id::Cause(cause)) => Ok(cause),
        found => {
            let what = match found {
                Some(Id::Symptom(_)) => " (it is a symptom)",
                Some(Id::Check(_)) => " (it is a check)",
                _ => "",
            };
            let names: Vec<&str> = kb.causes.iter().map(|c| c.id.as_str()).collect();
            Err(format!(
                "`{id}` is not a cause of this knowledge base{what}{}",
                report::did_you_mean(id, &names)
            ))
        }
    }
}

/// What `kb eval --why-not CAUSE --format json` writes for one subject
/// (docs/json-schema.md).
#[derive(Debug, Serialize)]
pub struct WhyNotReport<'a> {
    /// The object diagnosed: `pod default/web-1`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<&'a str>,
    /// The input line, for NDJSON; where the document starts, for `--watch`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The cause asked about.
    pub why_not: &'a str,
    /// `confirmed`, `possible` or `unreached`, as `kb eval` reports it.
    pub status: &'static str,
    /// Every way from a symptom to the cause, evaluated.
    pub ways: &'a [WhyNot],
    /// What was found amiss in the input, as the diagnosis says it: a way
    /// may stop for what was left out or misread.
    pub warnings: &'a [String],
}

const BOLD: Style = Style::new().bold();
const DIM: Style = Style::new().dimmed();
const GREEN: Style = AnsiColor::Green.on_default().bold();
const YELLOW: Style = AnsiColor::Yellow.on_default().bold();
const RED: Style = AnsiColor::Red.on_default().bold();

fn write_why_not(
    out: &mut dyn Write,
    format: Format,
    report: &WhyNotReport<'_>,
    compact: bool,
    kb: &KnowledgeBase,
    lang: Lang,
) -> io::Result<()> {
    match format {
        Format::Json if compact => {
            serde_json::to_writer(&mut *out, report)?;
            writeln!(out)
        }
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, report)?;
            writeln!(out)
        }
        Format::Markdown => {
            // Markdown gets no colour, whatever the stream does with it.
            let mut text = Vec::new();
            why_not_text(&mut text, report, kb, lang)?;
            writeln!(out, "```text")?;
            out.write_all(&anstream::adapter::strip_bytes(&text).into_vec())?;
            writeln!(out, "```")?;
            writeln!(out)
        }
        Format::Text => why_not_text(out, report, kb, lang),
    }
}

/// The why-not report for people: each way, each condition with ✓, ✗ or ?,
/// the fact values it read, and where the way stops.
fn why_not_text(
    out: &mut dyn Write,
    report: &WhyNotReport<'_>,
    kb: &KnowledgeBase,
    lang: Lang,
) -> io::Result<()> {
    let subject = report.subject.unwrap_or("input");
    match report.line {
        Some(line) => writeln!(out, "{BOLD}{subject}{BOLD:#} {DIM}(line {line}){DIM:#}")?,
        None => writeln!(out, "{BOLD}{subject}{BOLD:#}")?,
    }
    for warning in report.warnings {
        writeln!(out, "  {YELLOW}warning{YELLOW:#}: {warning}")?;
    }
    let title = kb
        .lookup(report.why_not)
        .and_then(|id| match id {
            Id::Cause(cause) => kb.causes.get(cause.0),
            _ => None,
        })
        .map_or("", |c| c.title.get(lang));
    writeln!(out, "  why not {BOLD}{}{BOLD:#}: {title}", report.why_not)?;
    let holding: Vec<&WhyNot> = report
        .ways
        .iter()
        .filter(|w| w.stopped_at.is_none())
        .collect();
    let (verdict, shown): (String, Vec<&WhyNot>) = match report.status {
        "confirmed" => (
            format!("{GREEN}confirmed{GREEN:#} on this input: every condition on the way holds"),
            holding,
        ),
        "possible" => (
            format!("{YELLOW}possible{YELLOW:#} on this input: a condition on the way is unknown"),
            report.ways.iter().collect(),
        ),
        _ if report.ways.is_empty() => (
            String::from("not reached: no symptom leads to this cause"),
            Vec::new(),
        ),
        _ => (
            format!(
                "{RED}not reached{RED:#}: every way to it stops at a condition that does not hold"
            ),
            report.ways.iter().collect(),
        ),
    };
    writeln!(out, "  {verdict}")?;
    for (i, way) in shown.iter().enumerate() {
        writeln!(out)?;
        let symptom = kb
            .symptoms
            .iter()
            .find(|s| s.id == way.symptom)
            .map_or("", |s| s.title.get(lang));
        writeln!(
            out,
            "  way {} of {}, from symptom {BOLD}{}{BOLD:#} ({symptom}):",
            i + 1,
            shown.len(),
            way.symptom
        )?;
        for (j, item) in way.evidence.iter().enumerate() {
            let colour = match item.result {
                Truth::True => GREEN,
                Truth::Unknown => YELLOW,
                Truth::False => RED,
            };
            writeln!(
                out,
                "    {colour}{}{colour:#} {}",
                mark(item.result),
                condition_text(item)
            )?;
            let facts = crate::output::text::facts_text(&item.facts);
            if !facts.is_empty() {
                writeln!(out, "      {DIM}{facts}{DIM:#}")?;
            }
            if way.stopped_at == Some(j) {
                writeln!(
                    out,
                    "      {colour}↑ stops here{colour:#}: {}",
                    stop_reason(item)
                )?;
            }
        }
    }
    writeln!(out)
}

/// The mark of a condition's truth: `✓`, `✗` or `?`.
pub fn mark(truth: Truth) -> &'static str {
    match truth {
        Truth::True => "✓",
        Truth::False => "✗",
        Truth::Unknown => "?",
    }
}

/// A condition as a trace shows it: `question → condition`, or the
/// condition alone for a symptom's `when`.
pub fn condition_text(item: &Evidence) -> String {
    let condition = item
        .condition
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    match &item.check {
        Some(check) => format!("{check} → {condition}"),
        None => condition,
    }
}

/// Why a way stops at a condition, in words.
pub fn stop_reason(item: &Evidence) -> &'static str {
    match item.result {
        Truth::Unknown => "unknown: a fact it reads is missing",
        _ if item.condition == "otherwise" => "false: a branch of this check holds",
        _ => "false",
    }
}
