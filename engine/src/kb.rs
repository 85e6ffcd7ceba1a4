//! A compiled knowledge base: the decision graph and what its nodes say.

use kb_dsl::{Loc, Problem, ast};
use petgraph::graph::{DiGraph, NodeIndex};
use serde::{Deserialize, Serialize};

use crate::diagnosis::Evidence;
use crate::diagnosis::{FixFinding, StepFinding};
use crate::expr::{ExprId, Exprs};
use crate::lazy::Lazy;
use crate::needs::Needs;
use crate::snapshot::Tests;
use crate::sorted::SortedMap;
use crate::template::Templates;
use crate::text::Text;
use crate::types::Ty;

/// Index of a fact in [`KnowledgeBase::facts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FactId(pub usize);
/// Index of an input in [`KnowledgeBase::inputs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct InputId(pub usize);
/// Index of a symptom in [`KnowledgeBase::symptoms`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SymptomId(pub usize);
/// Index of a check in [`KnowledgeBase::checks`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CheckId(pub usize);
/// Index of a cause in [`KnowledgeBase::causes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CauseId(pub usize);

/// A language for text meant for people.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    /// English.
    #[default]
    En,
    /// Chinese.
    Zh,
}

/// Text in English and, where written, Chinese.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalText {
    /// English.
    pub en: Text,
    /// Chinese.
    pub zh: Option<Text>,
}

impl LocalText {
    pub(crate) fn of(text: &ast::Text) -> Self {
        Self {
            en: reflow(&text.en.value).into(),
            zh: text.zh.as_ref().map(|s| reflow(&s.value).into()),
        }
    }

    /// The text in `lang`, English where no translation was written.
    pub fn get(&self, lang: Lang) -> &str {
        match (lang, &self.zh) {
            (Lang::Zh, Some(zh)) => zh,
            _ => &self.en,
        }
    }
}

/// Joins the lines of each paragraph, as Markdown would: wrapped source text
/// becomes one line per paragraph.
fn reflow(text: &str) -> String {
    if !text.contains('\n') {
        // One line, as most titles are: what joining its lines gives.
        return text.trim().to_owned();
    }
    join_lines(text)
}

/// [`reflow`] of any text.
fn join_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, paragraph) in text.split("\n\n").enumerate() {
        if i > 0 {
            out.push_str("\n\n");
        }
        let mut previous: Option<char> = None;
        for line in paragraph.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if let Some(last) = previous {
                let next = line.chars().next().unwrap_or(' ');
                if joins_with_space(last, next) {
                    out.push(' ');
                }
            }
            out.push_str(line);
            previous = line.chars().last();
        }
    }
    out
}

/// Whether two wrapped lines join with a space: not between two Chinese
/// characters, nor next to full-width punctuation; between Chinese and Latin
/// text, yes, as Chinese technical writing spaces them.
fn joins_with_space(last: char, next: char) -> bool {
    let full_width_punctuation =
        |c: char| matches!(c, '\u{3000}'..='\u{303F}' | '\u{FF00}'..='\u{FFEF}');
    let chinese = |c: char| matches!(c, '\u{2E80}'..='\u{2FFF}' | '\u{3040}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}');
    !(full_width_punctuation(last)
        || full_width_punctuation(next)
        || (chinese(last) && chinese(next)))
}

/// A node of the decision graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Node {
    /// An entry point.
    Symptom(SymptomId),
    /// A question.
    Check(CheckId),
    /// An answer.
    Cause(CauseId),
}

/// An edge of the decision graph: the condition under which it is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Edge {
    /// From a symptom to its first check: taken when the symptom shows.
    Enter,
    /// A branch of a check, by its index in [`CheckInfo::branches`].
    Branch(usize),
    /// From a check with no `else` to the next check of its symptom: taken
    /// when no branch holds.
    Otherwise,
}

/// A compiled knowledge base, ready to evaluate inputs and to describe itself.
#[derive(Debug, Serialize, Deserialize)]
pub struct KnowledgeBase {
    #[serde(with = "crate::snapshot::graph")]
    pub(crate) graph: DiGraph<Node, Edge>,
    /// Nodes in an order where every edge goes forward.
    #[serde(deserialize_with = "crate::snapshot::sized_vec")]
    pub(crate) topo: Vec<NodeIndex>,
    /// Ordered, as every map here, so that the same knowledge base always
    /// gives the same bytes ([`KnowledgeBase::to_bytes`]).
    pub(crate) names: SortedMap<Text, Name>,
    pub(crate) ids: SortedMap<Text, Id>,
    pub(crate) templates: Templates,
    /// What the facts read of each input, by `InputId`.
    pub(crate) input_needs: Vec<Needs>,
    /// The derivations of facts and the conditions, compiled.
    pub(crate) exprs: Exprs,
    /// The documents an input may hold.
    pub inputs: Vec<InputInfo>,
    /// The facts, in declaration order.
    #[serde(deserialize_with = "crate::snapshot::sized_vec")]
    pub facts: Vec<FactInfo>,
    /// The symptoms, in declaration order.
    #[serde(deserialize_with = "crate::snapshot::sized_vec")]
    pub symptoms: Vec<SymptomInfo>,
    /// Every check: shared ones and those written inside symptoms and branches.
    #[serde(deserialize_with = "crate::snapshot::sized_vec")]
    pub checks: Vec<CheckInfo>,
    /// The causes, in declaration order.
    #[serde(deserialize_with = "crate::snapshot::sized_vec")]
    pub causes: Vec<CauseInfo>,
    /// The rule tests ([`KnowledgeBase::tests`]).
    pub(crate) tests: Tests,
    /// Problems that do not stop the knowledge base from working.
    #[serde(skip)]
    pub warnings: Vec<Problem>,
}

/// What a fact or input name stands for.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) enum Name {
    Input(InputId),
    Fact(FactId),
}

/// What a symptom, check or cause id stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Id {
    /// A symptom.
    Symptom(SymptomId),
    /// A check.
    Check(CheckId),
    /// A cause.
    Cause(CauseId),
}

/// A document of the input.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InputInfo {
    /// Its key.
    pub name: Text,
    /// What it is.
    pub title: Option<LocalText>,
}

/// A fact.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FactInfo {
    /// Its name.
    pub name: Text,
    /// Its type.
    pub ty: Ty,
    /// What it means.
    pub title: LocalText,
    /// More about it.
    pub explain: Option<LocalText>,
    /// How it is derived from the input, as written.
    pub derivation: Option<Text>,
    /// The command that shows it.
    pub gather: Option<Template>,
    /// The facts its derivation reads.
    pub reads: Vec<FactId>,
    pub(crate) from: Option<ExprId>,
    /// Where it is declared.
    pub loc: Loc,
}

/// A symptom.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SymptomInfo {
    /// Its id.
    pub id: Text,
    /// Its name.
    pub title: LocalText,
    /// What it means.
    pub explain: Option<LocalText>,
    /// When it shows, as written.
    pub when_text: Text,
    pub(crate) when: ExprId,
    /// The facts its `when` reads.
    pub when_facts: Vec<FactId>,
    /// Its checks, in order.
    pub checks: Vec<CheckId>,
    pub(crate) node: NodeIndex,
    /// Where it is declared.
    pub loc: Loc,
}

/// A check.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckInfo {
    /// Its id: as written, or derived from where it stands (`pod-pending#2`).
    pub id: Text,
    /// The question.
    pub title: LocalText,
    /// How to answer it by hand.
    pub explain: Option<LocalText>,
    /// A command that shows what it looks at.
    pub gather: Option<Template>,
    /// Its branches, in order; an `else` comes last.
    pub branches: Vec<BranchInfo>,
    /// The check reached when no branch holds, for checks without `else`.
    pub next: Option<CheckId>,
    pub(crate) node: NodeIndex,
    /// Where it is written.
    pub loc: Loc,
}

/// A branch of a check.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BranchInfo {
    /// The condition as written; `None` for `else`.
    pub condition_text: Option<Text>,
    pub(crate) condition: Option<ExprId>,
    /// The facts the condition reads.
    pub facts: Vec<FactId>,
    /// Where it leads.
    pub target: Target,
    /// Its position among all branches, depth first from the symptoms in the
    /// order the rules are written: a cause reached through it ranks there.
    pub(crate) rank: usize,
}

/// Where a branch leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Target {
    /// A cause.
    Cause(CauseId),
    /// A further check.
    Check(CheckId),
}

/// A cause.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CauseInfo {
    /// Its id.
    pub id: Text,
    /// What is wrong.
    pub title: LocalText,
    /// Why it happens.
    pub explain: Option<LocalText>,
    /// How to fix it: decoded when first read, as one diagnosis shows the
    /// fixes of a few causes.
    pub fixes: Lazy<Vec<FixInfo>>,
    pub(crate) node: NodeIndex,
    /// Where it is declared.
    pub loc: Loc,
}

/// A fix.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FixInfo {
    /// What it does.
    pub title: LocalText,
    /// Its steps.
    pub steps: Vec<StepInfo>,
}

/// A step of a fix.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepInfo {
    /// What to do.
    pub text: LocalText,
    /// The command to run.
    pub run: Option<Template>,
    /// Why it is dangerous.
    pub risk: Option<LocalText>,
}

/// A way from a symptom to a cause.
#[derive(Debug, Clone)]
pub struct Way {
    /// The symptom.
    pub symptom: SymptomId,
    /// Its `when`, then each condition on the way, as written.
    pub conditions: Vec<String>,
}

/// One way from a symptom to a cause, evaluated on an input: why the cause
/// was, or was not, reached that way ([`KnowledgeBase::why_not`]).
#[derive(Debug, Clone, Serialize)]
pub struct WhyNot {
    /// The id of the symptom the way starts from.
    pub symptom: String,
    /// The symptom's `when`, then each condition on the way (`otherwise` where
    /// the way passes a check none of whose branches holds), evaluated, up to
    /// and including the first that does not hold.
    pub evidence: Vec<Evidence>,
    /// The index in `evidence` of the condition that is false or unknown;
    /// `None` when every condition on the way holds.
    pub stopped_at: Option<usize>,
}

/// A step of a way through the decision graph, after the symptom's `when`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// A branch of a check, by its index in [`CheckInfo::branches`].
    Branch(CheckId, usize),
    /// From a check none of whose branches holds to the next check.
    Otherwise(CheckId),
}

/// The most ways to one cause [`KnowledgeBase::why_not`] walks.
pub(crate) const MAX_WAYS: usize = 64;

/// A command template over facts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Template {
    /// The template as written.
    pub source: Text,
    /// The facts it uses.
    pub facts: Vec<FactId>,
    pub(crate) index: usize,
}

impl KnowledgeBase {
    /// What the facts read of an input (`pod`, `events`, …), so a document
    /// can be parsed keeping only that ([`crate::needs::Pruner::parse`]).
    pub fn needs_of(&self, input: &str) -> Option<&Needs> {
        let index = self.inputs.iter().position(|i| i.name == input)?;
        self.input_needs.get(index)
    }

    /// The fact with this name.
    pub fn fact(&self, name: &str) -> Option<&FactInfo> {
        match self.names.get(name)? {
            Name::Fact(id) => self.facts.get(id.0),
            Name::Input(_) => None,
        }
    }

    /// The symptom, check or cause with this id.
    pub fn lookup(&self, id: &str) -> Option<Id> {
        self.ids.get(id).copied()
    }

    /// A cause's fixes in a language, each command rendered by `command`.
    pub(crate) fn fixes_with(
        &self,
        cause: &CauseInfo,
        lang: Lang,
        mut command: impl FnMut(&Template) -> String,
    ) -> Vec<FixFinding> {
        cause
            .fixes
            .iter()
            .map(|fix| FixFinding {
                title: fix.title.get(lang).to_owned(),
                steps: fix
                    .steps
                    .iter()
                    .map(|step| StepFinding {
                        text: step.text.get(lang).to_owned(),
                        command: step.run.as_ref().map(&mut command),
                        risk: step.risk.as_ref().map(|r| r.get(lang).to_owned()),
                    })
                    .collect(),
            })
            .collect()
    }

    /// A cause's fixes with `<fact_name>` placeholders in their commands, as
    /// runbooks print them.
    pub fn placeholder_fixes(&self, cause: &CauseInfo, lang: Lang) -> Vec<FixFinding> {
        self.fixes_with(cause, lang, |template| self.placeholder_command(template))
    }

    /// A command template with every fact shown as `<fact_name>`: the
    /// command as a runbook prints it, for the reader to fill in.
    pub fn placeholder_command(&self, template: &Template) -> String {
        let values = template
            .facts
            .iter()
            .filter_map(|id| self.facts.get(id.0))
            .map(|fact| (fact.name.as_str(), format!("<{}>", fact.name)))
            .collect();
        self.templates.render(template.index, &values)
    }

    /// For each symptom that leads to a cause, the first way there: its
    /// `when`, then every condition on the way (`otherwise` where the way
    /// passes a check none of whose branches holds), as written.
    pub fn ways_to(&self, cause: CauseId) -> Vec<Way> {
        let mut ways = Vec::new();
        for (index, symptom) in self.symptoms.iter().enumerate() {
            let mut prefix = vec![symptom.when_text.to_string()];
            for (i, first) in symptom.checks.iter().enumerate() {
                if i > 0 {
                    prefix.push(String::from("otherwise"));
                }
                let mut conditions = prefix.clone();
                if self.way_through(*first, cause, &mut conditions, &mut Vec::new()) {
                    ways.push(Way {
                        symptom: SymptomId(index),
                        conditions,
                    });
                    break;
                }
            }
        }
        ways
    }

    fn way_through(
        &self,
        check: CheckId,
        cause: CauseId,
        conditions: &mut Vec<String>,
        seen: &mut Vec<CheckId>,
    ) -> bool {
        if seen.contains(&check) {
            return false;
        }
        seen.push(check);
        let Some(info) = self.checks.get(check.0) else {
            return false;
        };
        for branch in &info.branches {
            conditions.push(
                branch
                    .condition_text
                    .as_deref()
                    .unwrap_or("else")
                    .to_owned(),
            );
            let found = match branch.target {
                Target::Cause(c) => c == cause,
                Target::Check(next) => self.way_through(next, cause, conditions, seen),
            };
            if found {
                return true;
            }
            conditions.pop();
        }
        false
    }

    /// Every way from a symptom to a cause along the edges of the graph
    /// (symptoms in declaration order, branches in the order written, then
    /// `otherwise`), at most [`MAX_WAYS`].
    pub(crate) fn steps_to(&self, cause: CauseId) -> Vec<(SymptomId, Vec<Step>)> {
        let mut ways = Vec::new();
        let Some(target) = self.causes.get(cause.0).map(|c| c.node) else {
            return ways;
        };
        // The nodes from which the cause can be reached: only those are walked.
        let mut leads = vec![false; self.graph.node_count()];
        let reversed = petgraph::visit::Reversed(&self.graph);
        let mut dfs = petgraph::visit::Dfs::new(reversed, target);
        while let Some(node) = dfs.next(reversed) {
            if let Some(slot) = leads.get_mut(node.index()) {
                *slot = true;
            }
        }
        let leads_here = |node: NodeIndex| leads.get(node.index()).copied().unwrap_or(false);
        for (index, symptom) in self.symptoms.iter().enumerate() {
            let Some(first) = symptom.checks.first() else {
                continue;
            };
            if !self.checks.get(first.0).is_some_and(|c| leads_here(c.node)) {
                continue;
            }
            let mut out = Vec::new();
            self.steps_through(*first, cause, &leads_here, &mut Vec::new(), &mut out);
            for steps in out {
                if ways.len() == MAX_WAYS {
                    return ways;
                }
                ways.push((SymptomId(index), steps));
            }
        }
        ways
    }

    fn steps_through(
        &self,
        check: CheckId,
        cause: CauseId,
        leads_here: &dyn Fn(NodeIndex) -> bool,
        steps: &mut Vec<Step>,
        out: &mut Vec<Vec<Step>>,
    ) {
        let on_way =
            |step: &Step| matches!(step, Step::Branch(c, _) | Step::Otherwise(c) if *c == check);
        if out.len() >= MAX_WAYS || steps.iter().any(on_way) {
            return;
        }
        let Some(info) = self.checks.get(check.0) else {
            return;
        };
        for (i, branch) in info.branches.iter().enumerate() {
            steps.push(Step::Branch(check, i));
            match branch.target {
                Target::Cause(c) if c == cause => out.push(steps.clone()),
                Target::Cause(_) => {}
                Target::Check(next) => {
                    if self.checks.get(next.0).is_some_and(|n| leads_here(n.node)) {
                        self.steps_through(next, cause, leads_here, steps, out);
                    }
                }
            }
            steps.pop();
        }
        if let Some(next) = info.next
            && self.checks.get(next.0).is_some_and(|n| leads_here(n.node))
        {
            steps.push(Step::Otherwise(check));
            self.steps_through(next, cause, leads_here, steps, out);
            steps.pop();
        }
    }

    /// The symptoms whose checks lead, directly or not, to this cause.
    pub fn symptoms_of(&self, cause: CauseId) -> Vec<SymptomId> {
        let Some(info) = self.causes.get(cause.0) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for (i, symptom) in self.symptoms.iter().enumerate() {
            if petgraph::algo::has_path_connecting(&self.graph, symptom.node, info.node, None) {
                found.push(SymptomId(i));
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn one_line_reflows_as_lines_are_joined(line in "[^\n]*") {
            prop_assert_eq!(super::reflow(&line), super::join_lines(&line));
        }
    }
}
