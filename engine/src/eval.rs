//! Facts → diagnosis: walks the decision graph once, in topological order.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::diagnosis::*;
use crate::expr::{CExpr, Eval, ExprId, Scope};
use crate::json::{Json, same_key};
use crate::kb::*;
use crate::misread::{Misread, Misreads};
use crate::template::command_text;
use crate::types::Ty;
use crate::value::{Truth, Value};

/// An input document bound to the names of a knowledge base.
#[derive(Debug)]
pub struct Input<'a> {
    roots: Vec<Option<&'a Json<'a>>>,
    given: Vec<Option<&'a Json<'a>>>,
    warnings: Vec<String>,
}

/// How many keys a knowledge base does not know a document's warnings name,
/// each with the name it may be a misspelling of; the rest are counted in one
/// more warning. So a document of a million unknown keys is bound as quickly
/// as one of twenty, and its warnings stay readable.
const NAMED_UNKNOWN_KEYS: usize = 20;

impl KnowledgeBase {
    /// Binds a document: its keys are inputs (`pod`, `events`, …), facts given
    /// directly (`"phase": "Pending"`), or `facts`, an object of such facts.
    /// Keys that are none of these are reported as warnings, not dropped
    /// silently: the first twenty one by one, the rest counted.
    pub fn bind<'a>(&self, document: &'a Json<'a>) -> Input<'a> {
        let mut input = Input {
            roots: vec![None; self.inputs.len()],
            given: vec![None; self.facts.len()],
            warnings: Vec::new(),
        };
        let Json::Object(map) = document else {
            input.warnings.push(String::from(
                "the input is not a JSON object, so no fact could be read from it",
            ));
            return input;
        };
        let mut unknown = 0;
        let mut ignore = |warnings: &mut Vec<String>, key: &str, prefix: &str| {
            unknown += 1;
            if unknown <= NAMED_UNKNOWN_KEYS {
                warnings.push(self.unknown_key(key, prefix));
            }
        };
        for (key, value) in map.iter() {
            match self.key_name(key) {
                Some(Name::Input(id)) => set(&mut input.roots, id.0, value),
                Some(Name::Fact(id)) => set(&mut input.given, id.0, value),
                None if key == "facts" => match value {
                    Json::Object(facts) => {
                        for (name, value) in facts.iter() {
                            match self.names.get(name) {
                                Some(Name::Fact(id)) => set(&mut input.given, id.0, value),
                                _ => ignore(&mut input.warnings, name, "facts."),
                            }
                        }
                    }
                    _ => input
                        .warnings
                        .push(String::from("`facts` is not an object; it was ignored")),
                },
                None => ignore(&mut input.warnings, key, ""),
            }
        }
        if let Some(more) = unknown.checked_sub(NAMED_UNKNOWN_KEYS).filter(|&n| n > 0) {
            input.warnings.push(format!(
                "ignored {more} more keys that are not inputs or facts of this knowledge base"
            ));
        }
        input
    }

    /// What a document's key names. Most keys are inputs, a handful, told
    /// apart by length and end bytes; the search by halves over every name
    /// compares bytes at each step.
    fn key_name(&self, key: &str) -> Option<Name> {
        match self
            .inputs
            .iter()
            .position(|input| same_key(&input.name, key))
        {
            Some(index) => Some(Name::Input(InputId(index))),
            None => self.names.get(key).copied(),
        }
    }

    fn unknown_key(&self, key: &str, prefix: &str) -> String {
        let names = self.names.keys().map(|name| name.as_str());
        let shown = kb_dsl::problem::quoted(&format!("{prefix}{key}"), "key");
        match crate::compile::suggest(key, names) {
            Some(similar) => format!(
                "ignored {shown}: not an input or fact of this knowledge base (did you mean `{similar}`?)"
            ),
            None => format!("ignored {shown}: not an input or fact of this knowledge base"),
        }
    }

    /// Diagnoses one input.
    pub fn evaluate(&self, input: &Input<'_>, lang: Lang) -> Diagnosis {
        self.evaluate_traced(input, lang).0
    }

    /// Diagnoses one input and tells which checks it reached, for coverage.
    pub fn evaluate_traced(&self, input: &Input<'_>, lang: Lang) -> (Diagnosis, Trace) {
        let mut run = Run::new(self, input);
        let mut trace = Trace::default();
        let diagnosis = run.walk(lang, &mut trace);
        (diagnosis, trace)
    }

    /// Why a cause was, or was not, reached on this input: for every way from
    /// a symptom to it (see [`WhyNot`]), the symptom's `when`, then each
    /// condition on the way, evaluated as [`KnowledgeBase::evaluate`] does,
    /// up to and including the first that is false or unknown. A way whose
    /// every condition holds confirms the cause. No ways: no symptom leads there.
    pub fn why_not(&self, input: &Input<'_>, cause: CauseId, lang: Lang) -> Vec<WhyNot> {
        let mut run = Run::new(self, input);
        self.steps_to(cause)
            .into_iter()
            .filter_map(|(symptom, steps)| run.way(symptom, &steps, lang))
            .collect()
    }

    /// Every fact of the knowledge base, as this input gives or derives it,
    /// and what computing them found amiss in the input.
    pub fn facts_of(&self, input: &Input<'_>) -> FactsOf {
        let mut run = Run::new(self, input);
        let facts = (0..self.facts.len()).map(|i| run.seen(FactId(i))).collect();
        FactsOf {
            facts,
            warnings: run.take_warnings(),
        }
    }
}

fn set<'a>(slots: &mut [Option<&'a Json<'a>>], index: usize, value: &'a Json<'a>) {
    if let Some(slot) = slots.get_mut(index) {
        *slot = Some(value);
    }
}

/// What an evaluation went through, beyond its findings.
#[derive(Debug, Default)]
pub struct Trace {
    /// Every check reached, with the truth of the strongest path to it.
    pub checks: Vec<(CheckId, Truth)>,
}

/// How a node was reached: the strongest truth of any path to it, and that path.
#[derive(Clone)]
struct Reach {
    truth: Truth,
    path: Rc<PathStep>,
    symptom: usize,
    /// The rank of the branch that led here: a cause ranks there among those
    /// alike.
    rank: usize,
}

/// One condition on a path, linked to the ones before it.
struct PathStep {
    evidence: Evidence,
    before: Option<Rc<PathStep>>,
}

impl PathStep {
    fn to_vec(&self) -> Vec<Evidence> {
        let mut out = vec![self.evidence.clone()];
        let mut at = self.before.as_deref();
        while let Some(step) = at {
            out.push(step.evidence.clone());
            at = step.before.as_deref();
        }
        out.reverse();
        out
    }
}

/// How far a fact's value is computed.
#[derive(Clone)]
enum Slot<'a> {
    Untouched,
    /// What it reads is being computed first.
    Preparing,
    /// Its derivation is being evaluated: reading it now is a loop.
    Computing,
    Done(Value<'a>),
}

struct Run<'a> {
    kb: &'a KnowledgeBase,
    input: &'a Input<'a>,
    /// Every fact's value, as far as it is computed.
    memo: Vec<Slot<'a>>,
    /// Facts the condition being evaluated has read.
    reading: Vec<FactId>,
    warnings: Vec<String>,
    /// Values the rules read in another shape than the input gives them.
    misreads: Misreads<'a>,
    /// How many derivations are being evaluated, one inside another.
    depth: usize,
    /// Checks where the rules end without a cause.
    dead_ends: Vec<DeadEnd>,
}

/// How many derivations are evaluated one inside another as they read
/// facts; deeper, a fact's reads are computed before it, in a loop. Each
/// may be [`kb_dsl::MAX_EXPR_DEPTH`] deep, and a test evaluates a chain of
/// such derivations on a 2 MiB stack in a debug build, which a bound of 4
/// overflows.
const LAZY_DEPTH: usize = 2;

impl<'a> Scope<'a> for Run<'a> {
    fn fact(&mut self, id: FactId) -> Value<'a> {
        if !self.reading.contains(&id) {
            self.reading.push(id);
        }
        self.value(id)
    }

    fn input(&mut self, id: InputId) -> Option<&'a Json<'a>> {
        self.input.roots.get(id.0).copied().flatten()
    }

    fn misread(&mut self, misread: Misread<'a>) {
        self.misreads.add(misread);
    }
}

/// How far a possible cause is from confirmed, as its causes are sorted: the fewest
/// unknown conditions first, then the most that hold. Confirmed causes are all at zero,
/// left in rank order.
type Closeness = (usize, Reverse<usize>);

impl<'a> Run<'a> {
    fn new(kb: &'a KnowledgeBase, input: &'a Input<'a>) -> Self {
        Self {
            kb,
            input,
            memo: vec![Slot::Untouched; kb.facts.len()],
            reading: Vec::new(),
            warnings: input.warnings.clone(),
            misreads: Misreads::default(),
            depth: 0,
            dead_ends: Vec::new(),
        }
    }

    /// Whether a fact comes from the document: given in it, or derived from
    /// an input it holds, directly or through the facts its derivation reads.
    fn comes_from_document(&self, id: FactId) -> bool {
        let (kb, input) = (self.kb, self.input);
        let given = |fact: FactId| matches!(input.given.get(fact.0), Some(Some(_)));
        let held = |root: InputId| matches!(input.roots.get(root.0), Some(Some(_)));
        let mut seen = vec![false; kb.facts.len()];
        let (mut facts, mut exprs) = (vec![id], Vec::new());
        while let Some(fact) = facts.pop() {
            match seen.get_mut(fact.0) {
                Some(seen @ false) => *seen = true,
                _ => continue,
            }
            if given(fact) {
                return true;
            }
            exprs.extend(kb.facts.get(fact.0).and_then(|info| info.from));
            while let Some(expr) = exprs.pop() {
                match kb.exprs.get(expr) {
                    Some(&CExpr::Input(root)) if held(root) => return true,
                    Some(&CExpr::Fact(read)) => facts.push(read),
                    _ => kb.exprs.each_child(expr, |child| exprs.push(child)),
                }
            }
        }
        false
    }

    /// A fact's value, computed once, when a derivation reads it: what a
    /// derivation does not reach (the other side of an `and` that is false)
    /// is not computed. Deeper than [`LAZY_DEPTH`], the facts a derivation
    /// reads are all computed first, and theirs before them, in a loop: a
    /// long chain of facts, each derived from the one before, does not
    /// recurse as deep as it is long. A fact read while its own derivation
    /// is evaluated (a loop, which compiling refuses) is unknown.
    fn value(&mut self, id: FactId) -> Value<'a> {
        match self.memo.get(id.0) {
            Some(Slot::Done(value)) => return value.clone(),
            Some(Slot::Computing) | None => return Value::Unknown,
            Some(Slot::Untouched | Slot::Preparing) => {}
        }
        let done = |read: &FactId| matches!(self.memo.get(read.0), Some(Slot::Done(_)));
        if self.depth < LAZY_DEPTH
            || self
                .kb
                .facts
                .get(id.0)
                .is_none_or(|fact| fact.reads.iter().all(done))
        {
            self.depth += 1;
            let value = self.compute(id);
            self.depth -= 1;
            return value;
        }
        let mut stack = vec![(id, false)];
        while let Some((fact, prepared)) = stack.pop() {
            if prepared {
                if !matches!(self.memo.get(fact.0), Some(Slot::Done(_))) {
                    self.compute(fact);
                }
                continue;
            }
            let Some(slot @ Slot::Untouched) = self.memo.get_mut(fact.0) else {
                continue;
            };
            *slot = Slot::Preparing;
            stack.push((fact, true));
            let given = matches!(self.input.given.get(fact.0), Some(Some(_)));
            if let (false, Some(info)) = (given, self.kb.facts.get(fact.0)) {
                stack.extend(info.reads.iter().map(|&read| (read, false)));
            }
        }
        match self.memo.get(id.0) {
            Some(Slot::Done(value)) => value.clone(),
            _ => self.compute(id),
        }
    }

    /// Computes a fact whose reads are computed.
    fn compute(&mut self, id: FactId) -> Value<'a> {
        let Some(fact) = self.kb.facts.get(id.0) else {
            return Value::Unknown;
        };
        if let Some(slot) = self.memo.get_mut(id.0) {
            *slot = Slot::Computing;
        }
        let raw = match (self.input.given.get(id.0), fact.from) {
            (Some(Some(json)), _) => Value::from_json(json),
            (_, Some(from)) => {
                let outer = std::mem::take(&mut self.reading);
                let value = self.eval(from);
                self.reading = outer;
                value
            }
            _ => Value::Unknown,
        };
        let value = match conform(raw, &fact.ty) {
            Ok(value) => value,
            Err(found) => {
                self.warnings.push(format!(
                    "fact `{}` should be {}, but the input has {found}; it is treated as unknown",
                    fact.name, fact.ty
                ));
                Value::Unknown
            }
        };
        if let Some(slot) = self.memo.get_mut(id.0) {
            *slot = Slot::Done(value.clone());
        }
        value
    }

    fn eval(&mut self, expr: ExprId) -> Value<'a> {
        Eval {
            exprs: &self.kb.exprs,
            scope: self,
            elements: Vec::new(),
        }
        .eval(expr)
    }

    /// Evaluates a condition and records what it saw.
    fn condition(&mut self, expr: ExprId, check: Option<&str>, text: &str) -> Evidence {
        let (result, reading) = self.test(expr);
        self.evidence(check, text, result, &reading)
    }

    /// A condition's truth and the facts it read, in the order it read them.
    /// Cheaper than [`Run::condition`]: most conditions do not hold, and
    /// their evidence is never shown.
    fn test(&mut self, expr: ExprId) -> (Truth, Vec<FactId>) {
        self.reading.clear();
        let result = self.eval(expr).truth();
        (result, std::mem::take(&mut self.reading))
    }

    /// What a condition saw, to show.
    fn evidence(
        &mut self,
        check: Option<&str>,
        text: &str,
        result: Truth,
        reading: &[FactId],
    ) -> Evidence {
        Evidence {
            check: check.map(str::to_owned),
            condition: text.to_owned(),
            result,
            facts: self.seen_all(reading),
        }
    }

    /// That no `if` of a check holds (`else`, or on to the next check).
    fn otherwise(&mut self, check: &str, truth: Truth, facts: &[FactId]) -> Evidence {
        Evidence {
            check: Some(check.to_owned()),
            condition: String::from("otherwise"),
            result: truth,
            facts: self.seen_all(facts),
        }
    }

    fn seen_all(&mut self, facts: &[FactId]) -> Vec<FactSeen> {
        facts.iter().map(|&id| self.seen(id)).collect()
    }

    /// Evaluates one way, stopping at the first condition that does not hold.
    fn way(&mut self, symptom: SymptomId, steps: &[Step], lang: Lang) -> Option<WhyNot> {
        let kb = self.kb;
        let info = kb.symptoms.get(symptom.0)?;
        let when = self.condition(info.when, None, &info.when_text);
        let mut stopped_at = (when.result != Truth::True).then_some(0);
        let mut evidence = vec![when];
        for step in steps {
            if stopped_at.is_some() {
                break;
            }
            let (check, branch) = match *step {
                Step::Branch(check, index) => (check, Some(index)),
                Step::Otherwise(check) => (check, None),
            };
            let check = kb.checks.get(check.0)?;
            let title = check.title.get(lang);
            let condition = branch
                .and_then(|index| check.branches.get(index))
                .and_then(|b| b.condition.as_ref().zip(b.condition_text.as_ref()));
            let item = match condition {
                Some((condition, text)) => self.condition(*condition, Some(title), text),
                // `else`, or past the check to the next one.
                None => self.none_holds(check, title),
            };
            if item.result != Truth::True {
                stopped_at = Some(evidence.len());
            }
            evidence.push(item);
        }
        Some(WhyNot {
            symptom: info.id.to_string(),
            evidence,
            stopped_at,
        })
    }

    /// That none of a check's `if` branches holds, as [`Run::follow`] sees it.
    fn none_holds(&mut self, check: &'a CheckInfo, title: &str) -> Evidence {
        let mut any_if = Truth::False;
        let mut facts_read = Vec::new();
        for branch in &check.branches {
            if let Some(condition) = &branch.condition {
                let (result, reading) = self.test(*condition);
                any_if = any_if.or(result);
                add_new(&mut facts_read, &reading);
            }
        }
        self.otherwise(title, !any_if, &facts_read)
    }

    fn seen(&mut self, id: FactId) -> FactSeen {
        let value = self.value(id);
        let name = self
            .kb
            .facts
            .get(id.0)
            .map(|f| f.name.to_string())
            .unwrap_or_default();
        let (state, value) = match value {
            Value::Unknown => (FactState::Unknown, None),
            Value::Absent => (FactState::Absent, None),
            known => (FactState::Known, known.to_json()),
        };
        FactSeen { name, state, value }
    }

    fn walk(&mut self, lang: Lang, trace: &mut Trace) -> Diagnosis {
        let kb = self.kb;
        let mut reach: Vec<Option<Reach>> = vec![None; kb.graph.node_count()];
        let mut symptoms = Vec::new();
        for &node in &kb.topo {
            match kb.graph[node] {
                Node::Symptom(s) => {
                    let Some(symptom) = kb.symptoms.get(s.0) else {
                        continue;
                    };
                    let (truth, reading) = self.test(symptom.when);
                    // A symptom none of whose facts is known from what the
                    // document holds has nothing in it speaking for it (a pod
                    // symptom on a Namespace, or on `{}`, where a fact that
                    // is false without its input is still known).
                    if truth == Truth::False
                        || (truth == Truth::Unknown
                            && !reading.iter().any(|&id| {
                                !self.value(id).is_unknown() && self.comes_from_document(id)
                            }))
                    {
                        continue;
                    }
                    let evidence = self.evidence(None, &symptom.when_text, truth, &reading);
                    symptoms.push(SymptomFinding {
                        id: symptom.id.to_string(),
                        title: symptom.title.get(lang).to_owned(),
                        status: if truth == Truth::True {
                            SymptomStatus::Matched
                        } else {
                            SymptomStatus::Possible
                        },
                        evidence: evidence.clone(),
                    });
                    let path = Rc::new(PathStep {
                        evidence,
                        before: None,
                    });
                    if let Some(first) = symptom.checks.first().and_then(|c| kb.checks.get(c.0)) {
                        offer(
                            &mut reach,
                            first.node.index(),
                            Reach {
                                truth,
                                path,
                                symptom: s.0,
                                rank: 0,
                            },
                        );
                    }
                }
                Node::Check(c) => {
                    let Some(Some(here)) = reach.get(node.index()).cloned() else {
                        continue;
                    };
                    trace.checks.push((c, here.truth));
                    let Some(check) = kb.checks.get(c.0) else {
                        continue;
                    };
                    self.follow(check, &here, &mut reach, lang);
                }
                Node::Cause(_) => {}
            }
        }
        // Matched symptoms first, each group in the order the rules declare them.
        let order = |id: &str| kb.symptoms.iter().position(|s| s.id == id);
        symptoms.sort_by_key(|s| (s.status != SymptomStatus::Matched, order(&s.id)));
        let causes = self.causes(&reach, lang);
        let missing = self.missing(&causes, lang);
        Diagnosis {
            symptoms,
            causes,
            missing,
            warnings: self.take_warnings(),
            dead_ends: std::mem::take(&mut self.dead_ends),
        }
    }

    /// What the input's binding and the evaluation found amiss in it.
    fn take_warnings(&mut self) -> Vec<String> {
        let roots = self.kb.inputs.iter().zip(&self.input.roots);
        let roots = roots.filter_map(|(info, root)| Some((info.name.as_str(), (*root)?)));
        let mut warnings = std::mem::take(&mut self.warnings);
        warnings.extend(self.misreads.warnings(roots));
        warnings
    }

    /// Evaluates a check's branches and passes the path on along those that hold.
    fn follow(
        &mut self,
        check: &'a CheckInfo,
        here: &Reach,
        reach: &mut [Option<Reach>],
        lang: Lang,
    ) {
        let kb = self.kb;
        let title = check.title.get(lang);
        let mut any_if = Truth::False;
        let mut facts_read = Vec::new();
        let mut leads = false;
        for branch in &check.branches {
            let (result, reading) = match &branch.condition {
                Some(condition) => {
                    let (result, reading) = self.test(*condition);
                    any_if = any_if.or(result);
                    add_new(&mut facts_read, &reading);
                    (result, Some(reading))
                }
                None => (!any_if, None),
            };
            let truth = here.truth.and(result);
            if truth == Truth::False {
                continue;
            }
            leads = true;
            let evidence = match (reading, &branch.condition_text) {
                (Some(reading), Some(text)) => self.evidence(Some(title), text, result, &reading),
                _ => self.otherwise(title, result, &facts_read),
            };
            let node = match branch.target {
                Target::Cause(cause) => kb.causes.get(cause.0).map(|c| c.node),
                Target::Check(next) => kb.checks.get(next.0).map(|c| c.node),
            };
            if let Some(node) = node {
                let path = Rc::new(PathStep {
                    evidence,
                    before: Some(Rc::clone(&here.path)),
                });
                offer(
                    reach,
                    node.index(),
                    Reach {
                        truth,
                        path,
                        symptom: here.symptom,
                        rank: branch.rank,
                    },
                );
            }
        }
        if !leads && check.next.is_none() && here.truth == Truth::True {
            let dead_end = DeadEnd {
                id: check.id.to_string(),
                check: title.to_owned(),
                symptom: kb
                    .symptoms
                    .get(here.symptom)
                    .map(|s| s.id.to_string())
                    .unwrap_or_default(),
                facts: self.seen_all(&facts_read),
                gather: check.gather.as_ref().map(|t| self.render(t)),
            };
            self.dead_ends.push(dead_end);
        }
        if let Some(next) = check.next.and_then(|n| kb.checks.get(n.0)) {
            let truth = here.truth.and(!any_if);
            if truth != Truth::False {
                let evidence = self.otherwise(title, !any_if, &facts_read);
                let path = Rc::new(PathStep {
                    evidence,
                    before: Some(Rc::clone(&here.path)),
                });
                offer(
                    reach,
                    next.node.index(),
                    Reach {
                        truth,
                        path,
                        symptom: here.symptom,
                        rank: here.rank,
                    },
                );
            }
        }
    }

    fn causes(&mut self, reach: &[Option<Reach>], lang: Lang) -> Vec<CauseFinding> {
        let kb = self.kb;
        let mut found: Vec<(Status, Closeness, usize, CauseFinding)> = Vec::new();
        for cause in &kb.causes {
            let Some(Some(reached)) = reach.get(cause.node.index()) else {
                continue;
            };
            let status = if reached.truth == Truth::True {
                Status::Confirmed
            } else {
                Status::Possible
            };
            let evidence = reached.path.to_vec();
            let needs = self.needs(&evidence);
            let unknowns = evidence
                .iter()
                .filter(|e| e.result == Truth::Unknown)
                .count();
            let closeness = if status == Status::Confirmed {
                (0, Reverse(0))
            } else {
                (unknowns, Reverse(evidence.len() - unknowns))
            };
            let rank = reached.rank;
            let fixes = kb.fixes_with(cause, lang, |template| self.render(template));
            let symptom = kb
                .symptoms
                .get(reached.symptom)
                .map(|s| s.id.to_string())
                .unwrap_or_default();
            found.push((
                status,
                closeness,
                rank,
                CauseFinding {
                    id: cause.id.to_string(),
                    status,
                    title: cause.title.get(lang).to_owned(),
                    symptom,
                    explanation: cause.explain.as_ref().map(|e| e.get(lang).to_owned()),
                    evidence,
                    needs,
                    fixes,
                    runbook: None,
                },
            ));
        }
        found.sort_by_key(|(status, closeness, rank, _)| (*status, *closeness, *rank));
        found.into_iter().map(|(.., finding)| finding).collect()
    }

    /// The facts that would decide the unknown conditions of a path: for a
    /// derived fact that is unknown because facts it reads are, those facts.
    fn needs(&mut self, evidence: &[Evidence]) -> Vec<String> {
        let mut roots = Vec::new();
        for item in evidence.iter().filter(|e| e.result == Truth::Unknown) {
            for fact in item.facts.iter().filter(|f| f.state == FactState::Unknown) {
                if let Some(index) = self.kb.facts.iter().position(|f| f.name == fact.name) {
                    self.unknown_roots(FactId(index), &mut roots);
                }
            }
        }
        roots
            .into_iter()
            .filter_map(|id| self.kb.facts.get(id.0).map(|f| f.name.to_string()))
            .collect()
    }

    fn unknown_roots(&mut self, id: FactId, roots: &mut Vec<FactId>) {
        let Some(fact) = self.kb.facts.get(id.0) else {
            return;
        };
        let unknown: Vec<FactId> = fact
            .reads
            .iter()
            .copied()
            .filter(|&r| self.value(r).is_unknown())
            .collect();
        if unknown.is_empty() {
            if !roots.contains(&id) {
                roots.push(id);
            }
        } else {
            for read in unknown {
                self.unknown_roots(read, roots);
            }
        }
    }

    /// Facts that would decide possible causes, by how many they decide.
    fn missing(&mut self, causes: &[CauseFinding], lang: Lang) -> Vec<MissingFact> {
        let mut decides: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        for cause in causes {
            for name in &cause.needs {
                let Some(index) = self.kb.facts.iter().position(|f| &f.name == name) else {
                    continue;
                };
                let entry = decides.entry(index).or_default();
                if !entry.contains(&cause.id) {
                    entry.push(cause.id.clone());
                }
            }
        }
        let mut missing: Vec<(usize, MissingFact)> = decides
            .into_iter()
            .filter_map(|(index, decides)| {
                let fact = self.kb.facts.get(index)?;
                Some((
                    index,
                    MissingFact {
                        fact: fact.name.to_string(),
                        title: fact.title.get(lang).to_owned(),
                        gather: fact.gather.as_ref().map(|t| self.render(t)),
                        decides,
                    },
                ))
            })
            .collect();
        missing.sort_by(|(a_index, a), (b_index, b)| {
            b.decides
                .len()
                .cmp(&a.decides.len())
                .then(a_index.cmp(b_index))
        });
        missing.into_iter().map(|(_, fact)| fact).collect()
    }

    fn render(&mut self, template: &Template) -> String {
        let kb = self.kb;
        let mut values = BTreeMap::new();
        for &id in &template.facts {
            let Some(fact) = kb.facts.get(id.0) else {
                continue;
            };
            let value = self.value(id);
            values.insert(fact.name.as_str(), command_text(&fact.name, &value));
        }
        kb.templates.render(template.index, &values)
    }
}

/// Offers a path to a node; the node keeps the strongest, the first among equals.
fn offer(reach: &mut [Option<Reach>], node: usize, candidate: Reach) {
    if let Some(slot) = reach.get_mut(node) {
        match slot {
            Some(existing) if existing.truth >= candidate.truth => {}
            _ => *slot = Some(candidate),
        }
    }
}

/// Adds the facts not already there, keeping the order they were read in.
fn add_new(facts: &mut Vec<FactId>, read: &[FactId]) {
    for id in read {
        if !facts.contains(id) {
            facts.push(*id);
        }
    }
}

/// Checks a value against a fact's declared type; `Err` names what was found.
fn conform<'a>(value: Value<'a>, ty: &Ty) -> Result<Value<'a>, &'static str> {
    let ok = match (&value, ty) {
        (Value::Unknown | Value::Absent, _) | (_, Ty::Any) => true,
        (_, Ty::String) => value.as_str().is_some(),
        (_, Ty::Number) => value.as_number().is_some(),
        (_, Ty::Bool) => matches!(value, Value::Bool(_)),
        (_, Ty::Object) => matches!(value, Value::Json(Json::Object(_))),
        (_, Ty::List(element)) => {
            let Some(items) = value.elements() else {
                return Err(value.kind());
            };
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                match conform(item, element)? {
                    Value::Absent => {}
                    item => out.push(item),
                }
            }
            return Ok(Value::List(out.into()));
        }
    };
    if ok { Ok(value) } else { Err(value.kind()) }
}
