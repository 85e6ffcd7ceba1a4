//! Running the `test` blocks of a knowledge base.
//!
//! A test's input goes through the same adapter as `kb eval`. When a test
//! names causes it expects confirmed, those must be exactly the confirmed
//! causes: a knowledge base that also confirms a wrong cause fails.

use kb_dsl::ast::{Expect, ExpectedStatus, Test, TestInput};
use kb_engine::diagnosis::{Diagnosis, Status, SymptomStatus};
use kb_engine::json::{Json, Object};
use kb_engine::kb::{CheckId, Id, WhyNot};
use kb_engine::value::Truth;
use kb_engine::{Lang, SnapshotError};

use crate::command::eval;
use crate::knowledge::Loaded;
use crate::{adapter, read};

/// The result of one test.
#[derive(Debug)]
pub struct Outcome {
    /// The test's name.
    pub name: String,
    /// Where it is written: `file:line:column`.
    pub position: String,
    /// The rule file it is written in.
    pub file: String,
    /// What went wrong; empty when it passed.
    pub failures: Vec<String>,
    /// The causes the test's input confirmed.
    pub confirmed: Vec<String>,
    /// The checks its input reached for sure.
    pub checks: Vec<CheckId>,
    /// What the knowledge base said; none when the input could not be read.
    pub diagnosis: Option<Diagnosis>,
    /// For each cause the test expects and its input did not yield, why not.
    pub why_not: Vec<WhyNotTrace>,
}

/// Why a cause a test expects was not confirmed (or, expected possible, not
/// reached): every way to it, evaluated up to where it stops.
#[derive(Debug)]
pub struct WhyNotTrace {
    /// The cause's id.
    pub cause: String,
    /// The ways from symptoms to it ([`kb_engine::KnowledgeBase::why_not`]).
    pub ways: Vec<WhyNot>,
}

impl Outcome {
    /// Whether the test passed.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }

    /// What went wrong, for people: each failure, then the why-not trace of
    /// each expected cause: for every way to it, the condition where it stops,
    /// with the fact values that condition read.
    pub fn report_lines(&self) -> Vec<String> {
        let mut lines = self.failures.clone();
        for trace in &self.why_not {
            lines.push(format!("why not `{}`:", trace.cause));
            if trace.ways.is_empty() {
                lines.push(String::from("  no symptom leads to it"));
            }
            for way in &trace.ways {
                let Some((index, stop)) = way
                    .stopped_at
                    .and_then(|i| way.evidence.get(i).map(|e| (i, e)))
                else {
                    lines.push(format!("  from {}: every condition holds", way.symptom));
                    continue;
                };
                let step = if index == 0 {
                    String::from("its `when`")
                } else {
                    format!("condition {index} on the way")
                };
                lines.push(format!(
                    "  from {}, stops at {step}: {} {} ({})",
                    way.symptom,
                    eval::mark(stop.result),
                    eval::condition_text(stop),
                    eval::stop_reason(stop)
                ));
                let facts = crate::output::text::facts_text(&stop.facts);
                if !facts.is_empty() {
                    lines.push(format!("    {facts}"));
                }
            }
        }
        lines
    }
}

/// Runs the tests whose name contains `filter`.
pub fn run(loaded: &Loaded, filter: Option<&str>) -> Result<Vec<Outcome>, SnapshotError> {
    Ok(loaded
        .kb
        .tests()?
        .iter()
        .filter(|test| filter.is_none_or(|f| test.name.value.contains(f)))
        .map(|test| {
            let mut outcome = Outcome {
                name: test.name.value.clone(),
                position: test.loc.position(),
                file: test.loc.src.name.to_string(),
                failures: Vec::new(),
                confirmed: Vec::new(),
                checks: Vec::new(),
                diagnosis: None,
                why_not: Vec::new(),
            };
            match document(loaded, test) {
                Ok(document) => {
                    let input = loaded.kb.bind(&document);
                    let (diagnosis, trace) = loaded.kb.evaluate_traced(&input, Lang::En);
                    outcome.failures = check(test, &diagnosis);
                    if !outcome.failures.is_empty() {
                        outcome.why_not = missed(test, &diagnosis)
                            .into_iter()
                            .filter_map(|id| match loaded.kb.lookup(id) {
                                Some(Id::Cause(cause)) => Some(WhyNotTrace {
                                    cause: id.to_owned(),
                                    ways: loaded.kb.why_not(&input, cause, Lang::En),
                                }),
                                _ => None,
                            })
                            .collect();
                    }
                    outcome.confirmed = diagnosis.confirmed().map(|c| c.id.clone()).collect();
                    outcome.checks = trace
                        .checks
                        .into_iter()
                        .filter(|(_, truth)| *truth == Truth::True)
                        .map(|(id, _)| id)
                        .collect();
                    outcome.diagnosis = Some(diagnosis);
                }
                Err(message) => outcome.failures.push(message),
            }
            outcome
        })
        .collect())
}

/// What the tests exercise: causes some test confirms, checks some test reaches.
#[derive(Debug)]
pub struct Coverage {
    /// How many causes the knowledge base has.
    pub causes: usize,
    /// The causes no test confirms.
    pub untested_causes: Vec<String>,
    /// How many checks it has.
    pub checks: usize,
    /// The checks no test reaches for sure: (id, question).
    pub untested_checks: Vec<(String, String)>,
}

impl Coverage {
    /// Measures coverage of a whole test run (not a filtered one).
    pub fn of(kb: &kb_engine::KnowledgeBase, outcomes: &[Outcome]) -> Self {
        let untested_causes = kb
            .causes
            .iter()
            .filter(|cause| {
                !outcomes
                    .iter()
                    .any(|o| o.confirmed.iter().any(|id| cause.id == *id))
            })
            .map(|cause| cause.id.to_string())
            .collect();
        let untested_checks = kb
            .checks
            .iter()
            .enumerate()
            .filter(|(i, _)| !outcomes.iter().any(|o| o.checks.contains(&CheckId(*i))))
            .map(|(_, check)| (check.id.to_string(), check.title.en.to_string()))
            .collect();
        Self {
            causes: kb.causes.len(),
            untested_causes,
            checks: kb.checks.len(),
            untested_checks,
        }
    }
}

/// The input document of a test, with its `given` facts merged in.
fn document(loaded: &Loaded, test: &Test) -> Result<Json<'static>, String> {
    let documents = match &test.input {
        Some(TestInput::File(path)) => {
            let text = loaded.read_relative(&test.loc.src.name, &path.value)?;
            read::text_documents(&text, &format!("`{}`", path.value))?
        }
        Some(TestInput::Inline(json)) => vec![Json::from(json.value.clone())],
        None => Vec::new(),
    };
    let mut document = if documents.is_empty() {
        Json::Object(Object::new())
    } else {
        let mut subjects = adapter::subjects(documents)?;
        if subjects.len() != 1 {
            return Err(format!(
                "the input holds {} subjects; a test needs exactly one",
                subjects.len()
            ));
        }
        subjects.remove(0).document
    };
    if let Some(given) = &test.given {
        let serde_json::Value::Object(given) = &given.value else {
            return Err(String::from("`given` must be an object of facts"));
        };
        let Json::Object(map) = &mut document else {
            return Err(String::from("the input is not an object"));
        };
        if !map.contains_key("facts") {
            map.insert("facts", Json::Object(Object::new()));
        }
        if let Some(Json::Object(facts)) = map.get_mut("facts") {
            for (name, value) in given {
                facts.insert(name.clone(), Json::from(value.clone()));
            }
        }
    }
    Ok(document)
}

/// The causes a test expects confirmed that are not, and those it expects
/// possible that are not reported at all.
fn missed<'t>(test: &'t Test, diagnosis: &Diagnosis) -> Vec<&'t str> {
    let mut missed = Vec::new();
    for expect in &test.expects {
        let Expect::Reported { id, status } = expect else {
            continue;
        };
        let found = diagnosis.causes.iter().find(|c| c.id == id.name);
        let hit = match (status, found) {
            (ExpectedStatus::Confirmed, Some(cause)) => cause.status == Status::Confirmed,
            (ExpectedStatus::Possible, found) => found.is_some(),
            (ExpectedStatus::Confirmed, None) => false,
        };
        if !hit && !missed.contains(&id.name.as_str()) {
            missed.push(id.name.as_str());
        }
    }
    missed
}

fn check(test: &Test, diagnosis: &Diagnosis) -> Vec<String> {
    let mut failures = Vec::new();
    let mut expected_confirmed: Vec<&str> = Vec::new();
    let mut exact = false;
    for expect in &test.expects {
        match expect {
            Expect::Reported { id, status } => {
                let want = match status {
                    ExpectedStatus::Confirmed => Status::Confirmed,
                    ExpectedStatus::Possible => Status::Possible,
                };
                if let Some(symptom) = diagnosis.symptoms.iter().find(|s| s.id == id.name) {
                    let got = match symptom.status {
                        SymptomStatus::Matched => Status::Confirmed,
                        SymptomStatus::Possible => Status::Possible,
                    };
                    if got != want {
                        failures.push(format!(
                            "symptom `{}` is {}, expected {}",
                            id.name,
                            word(got),
                            word(want)
                        ));
                    }
                    continue;
                }
                if want == Status::Confirmed {
                    exact = true;
                    expected_confirmed.push(&id.name);
                }
                match diagnosis.causes.iter().find(|c| c.id == id.name) {
                    Some(cause) if cause.status == want => {}
                    Some(cause) => failures.push(format!(
                        "`{}` is {}, expected {}{}",
                        id.name,
                        word(cause.status),
                        word(want),
                        unknown_conditions(cause)
                    )),
                    None => failures.push(format!(
                        "`{}` was not reached, expected {}",
                        id.name,
                        word(want)
                    )),
                }
            }
            Expect::Absent(id) => {
                if let Some(cause) = diagnosis.causes.iter().find(|c| c.id == id.name) {
                    failures.push(format!(
                        "`{}` is {}, expected it not to be reported",
                        id.name,
                        word(cause.status)
                    ));
                }
                if diagnosis.symptoms.iter().any(|s| s.id == id.name) {
                    failures.push(format!("symptom `{}` matched, expected it not to", id.name));
                }
            }
            Expect::NoneConfirmed(_) => {
                exact = true;
            }
        }
    }
    if exact {
        let extra: Vec<&str> = diagnosis
            .confirmed()
            .map(|c| c.id.as_str())
            .filter(|id| !expected_confirmed.contains(id))
            .collect();
        if !extra.is_empty() {
            failures.push(format!(
                "also confirmed, not expected: {}",
                extra.join(", ")
            ));
        }
    }
    if !failures.is_empty() {
        let confirmed: Vec<&str> = diagnosis.confirmed().map(|c| c.id.as_str()).collect();
        let symptoms: Vec<&str> = diagnosis.symptoms.iter().map(|s| s.id.as_str()).collect();
        failures.push(format!(
            "actual: symptoms [{}], confirmed [{}]",
            symptoms.join(", "),
            confirmed.join(", ")
        ));
    }
    failures
}

fn word(status: Status) -> &'static str {
    match status {
        Status::Confirmed => "confirmed",
        Status::Possible => "possible",
    }
}

fn unknown_conditions(cause: &kb_engine::diagnosis::CauseFinding) -> String {
    let unknown: Vec<&str> = cause
        .evidence
        .iter()
        .filter(|e| e.result == kb_engine::value::Truth::Unknown)
        .map(|e| e.condition.as_str())
        .collect();
    if unknown.is_empty() {
        String::new()
    } else {
        format!(" (unknown: {})", unknown.join("; "))
    }
}
