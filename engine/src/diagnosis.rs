//! What an evaluation finds: the schema of `kb eval --format json`.
//!
//! Field names and values here are a public contract (see docs/json-schema.md).

use serde::Serialize;

use crate::value::Truth;

/// The diagnosis of one input.
#[derive(Debug, Clone, Serialize)]
pub struct Diagnosis {
    /// The symptoms whose `when` holds, then those whose `when` may hold,
    /// each in declaration order.
    pub symptoms: Vec<SymptomFinding>,
    /// Every cause reached: confirmed ones first, then possible ones, closest first.
    pub causes: Vec<CauseFinding>,
    /// Facts that would decide possible causes, most decisive first.
    pub missing: Vec<MissingFact>,
    /// Problems with the input that did not stop the evaluation.
    pub warnings: Vec<String>,
    /// Checks reached for sure where no branch holds and none follows: the
    /// rules end there without a cause, which is where to look further.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dead_ends: Vec<DeadEnd>,
}

impl Diagnosis {
    /// Whether any symptom matched for sure.
    pub fn matched(&self) -> bool {
        self.symptoms
            .iter()
            .any(|s| s.status == SymptomStatus::Matched)
    }

    /// The confirmed causes.
    pub fn confirmed(&self) -> impl Iterator<Item = &CauseFinding> {
        self.causes.iter().filter(|c| c.status == Status::Confirmed)
    }
}

/// Whether a symptom shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SymptomStatus {
    /// Its `when` holds.
    Matched,
    /// Its `when` is unknown: some fact it reads is missing.
    Possible,
}

/// A symptom the input shows.
#[derive(Debug, Clone, Serialize)]
pub struct SymptomFinding {
    /// Its id.
    pub id: String,
    /// Its name.
    pub title: String,
    /// Matched or possible.
    pub status: SymptomStatus,
    /// Its `when` condition, evaluated.
    pub evidence: Evidence,
}

/// A check reached for sure where no branch holds and no check follows.
#[derive(Debug, Clone, Serialize)]
pub struct DeadEnd {
    /// The check's id.
    pub id: String,
    /// Its question.
    pub check: String,
    /// The symptom whose checks lead here.
    pub symptom: String,
    /// The facts its conditions read, as they saw them.
    pub facts: Vec<FactSeen>,
    /// Its command to look further, filled in from the facts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gather: Option<String>,
}

/// Whether a cause is proven.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Every condition on the way to it holds.
    Confirmed,
    /// Some condition on the way is unknown.
    Possible,
}

/// A cause reached.
#[derive(Debug, Clone, Serialize)]
pub struct CauseFinding {
    /// Its id, as in the catalog.
    pub id: String,
    /// Confirmed or possible.
    pub status: Status,
    /// What is wrong.
    pub title: String,
    /// The symptom whose checks lead here.
    pub symptom: String,
    /// Why it happens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    /// Every condition on the way, in order.
    pub evidence: Vec<Evidence>,
    /// For a possible cause, the unknown facts that would decide it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub needs: Vec<String>,
    /// How to fix it, commands filled in from the facts.
    pub fixes: Vec<FixFinding>,
    /// Its runbook page; set by whoever knows where runbooks are published.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runbook: Option<String>,
}

/// A condition on the way to a finding, with what it saw.
#[derive(Debug, Clone, Serialize)]
pub struct Evidence {
    /// The check it belongs to; none for a symptom's `when`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// The condition as written, or `otherwise` for a check's fallthrough.
    pub condition: String,
    /// `true` or `unknown` (a false condition leads nowhere).
    pub result: Truth,
    /// The facts the condition read.
    pub facts: Vec<FactSeen>,
}

/// Every fact of a knowledge base as an input gives or derives it
/// ([`crate::KnowledgeBase::facts_of`]).
#[derive(Debug, Clone, Serialize)]
pub struct FactsOf {
    /// In declaration order.
    pub facts: Vec<FactSeen>,
    /// What was found amiss in the input, as in [`Diagnosis::warnings`].
    pub warnings: Vec<String>,
}

/// A fact as a condition saw it.
#[derive(Debug, Clone, Serialize)]
pub struct FactSeen {
    /// Its name.
    pub name: String,
    /// Known, absent or unknown.
    pub state: FactState,
    /// The value, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<serde_json::Value>,
}

/// How much is known of a fact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FactState {
    /// It has a value.
    Known,
    /// The input was given and does not hold it.
    Absent,
    /// The input that would hold it was not given.
    Unknown,
}

/// A fix with its commands rendered.
#[derive(Debug, Clone, Serialize)]
pub struct FixFinding {
    /// What it does.
    pub title: String,
    /// Its steps in order.
    pub steps: Vec<StepFinding>,
}

/// A step of a fix.
#[derive(Debug, Clone, Serialize)]
pub struct StepFinding {
    /// What to do.
    pub text: String,
    /// The command, facts filled in; `<fact>` where a fact is not known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Why the step is dangerous.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub risk: Option<String>,
}

/// A fact that would decide possible causes.
#[derive(Debug, Clone, Serialize)]
pub struct MissingFact {
    /// Its name.
    pub fact: String,
    /// What it means.
    pub title: String,
    /// The command that shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gather: Option<String>,
    /// The possible causes it decides.
    pub decides: Vec<String>,
}
