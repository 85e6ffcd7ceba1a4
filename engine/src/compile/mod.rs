//! [`RuleSet`] → [`KnowledgeBase`]: names resolved, types checked, the
//! decision graph built and validated. Every problem is reported at once.

mod causes;
mod expr;
mod extend;
mod facts;
mod patterns;
mod reads;

use std::sync::Arc;

use foldhash::HashMap;

use kb_dsl::ast::{self, RuleSet, Target as AstTarget};
use kb_dsl::{Code, Loc, Problem};
use petgraph::algo::{tarjan_scc, toposort};
use petgraph::graph::{DiGraph, NodeIndex};

use crate::expr::{CExpr, Exprs};
use crate::kb::*;
use crate::snapshot::Tests;
use crate::sorted::SortedMap;
use crate::template::Templates;
use crate::text::Text;
use crate::types::Ty;
use causes::Causes;
use expr::ExprCompiler;
use facts::Facts;
use patterns::Checked;

/// Compiles rules into a knowledge base, or reports every problem found.
/// Warnings of a successful compilation are kept in [`KnowledgeBase::warnings`].
pub fn compile(rules: &RuleSet) -> Result<KnowledgeBase, Vec<Problem>> {
    let mut problems = Vec::new();
    let extended = extend::apply(rules, &mut problems);
    let rules = extended.as_ref().unwrap_or(rules);
    // Checking the regular expressions (their syntax, the size of what each
    // compiles to) is done on another core while the rest is compiled as if
    // each were valid. When one is not, the rules are compiled again with
    // what checking found, for the same problems as if it had been known
    // from the start. Their literals are found while the names and ids are
    // declared.
    let (literals, declared) = rayon::join(
        || patterns::literals(rules),
        || Compiler::declared(rules, problems.clone()),
    );
    let (checked, assumed) = rayon::join(
        || Checked::of(&literals),
        || declared.compile(rules, Checked::assumed(&literals)),
    );
    if checked.all_valid() {
        assumed
    } else {
        Compiler::declared(rules, problems).compile(rules, checked)
    }
}

/// The loops of `graph`: its strongly connected components of more than
/// one node, or of one with an edge to itself.
fn loops<N, E>(graph: &DiGraph<N, E>) -> impl Iterator<Item = Vec<NodeIndex>> + '_ {
    tarjan_scc(graph).into_iter().filter(|component| {
        component.len() > 1
            || component
                .first()
                .is_some_and(|&n| graph.find_edge(n, n).is_some())
    })
}

/// A loop through `members` (where each is declared, and its name),
/// reported where the first of them is written: what it `says`, the loop,
/// and the `help`.
fn loop_problem(mut members: Vec<(&Loc, &str)>, says: &str, help: &str) -> Option<Problem> {
    members.sort_by_key(|(loc, _)| (loc.src.name.clone(), loc.start()));
    let ((first, _), rest) = members.split_first()?;
    let names: Vec<String> = members
        .iter()
        .map(|(_, name)| format!("`{name}`"))
        .collect();
    let mut problem = Problem::error(Code::Cycle, first, format!("{says}: {}", names.join(" → ")))
        .with_label("part of the loop")
        .with_help(help);
    for (loc, name) in rest {
        problem = problem.with_related(loc, format!("`{name}` is part of the loop"));
    }
    Some(problem)
}

/// An expression as written, on one line: the author's line breaks and
/// indentation become single spaces, or nothing just inside brackets (no
/// string literal spans lines).
fn one_line(text: &str) -> String {
    let mut joined = String::with_capacity(text.len());
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let inside = joined.ends_with(['(', '[']) || line.starts_with([')', ']']);
        if !joined.is_empty() && !inside {
            joined.push(' ');
        }
        joined.push_str(line);
    }
    joined
}

/// Inputs and facts by name, with where each is declared.
type Names = HashMap<String, (Name, Loc)>;

/// A map of declared names as the knowledge base keeps it.
fn ordered<V>(declared: HashMap<String, (V, Loc)>) -> SortedMap<Text, V> {
    SortedMap::from_distinct(
        declared
            .into_iter()
            .map(|(k, (v, _))| (k.into(), v))
            .collect(),
    )
}

/// The closest of `candidates` to `name`, if it is close enough to be a typo.
pub(crate) fn suggest<'a>(
    name: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    kb_dsl::problem::within_edits(name, candidates, limit)
        .min()
        .map(|(_, candidate)| candidate)
}

/// Compiles a command template into `templates` and checks that it uses
/// facts only, adding those to `used`.
fn template(
    source: &ast::Str,
    names: &Names,
    templates: &mut Templates,
    used: &mut Vec<FactId>,
    problems: &mut Vec<Problem>,
) -> Option<Template> {
    let (index, uses) = match templates.add(source.value.clone()) {
        Ok(added) => added,
        Err(error) => {
            problems.push(
                Problem::error(
                    Code::BadTemplate,
                    &source.loc,
                    format!("invalid command template: {error}"),
                )
                .with_help("templates insert facts with `{{ fact_name }}`"),
            );
            return None;
        }
    };
    let mut facts = Vec::new();
    for name in uses {
        match names.get(&name) {
            Some((Name::Fact(id), _)) => {
                facts.push(*id);
                used.push(*id);
            }
            _ => {
                let candidates = names
                    .iter()
                    .filter(|(_, (k, _))| matches!(k, Name::Fact(_)));
                let mut problem = Problem::error(
                    Code::UnknownTemplateFact,
                    &source.loc,
                    format!("command template uses `{name}`, which is not a fact"),
                );
                if let Some(similar) = suggest(&name, candidates.map(|(n, _)| n.as_str())) {
                    problem = problem.with_help(format!("did you mean `{similar}`?"));
                }
                problems.push(problem);
            }
        }
    }
    Some(Template {
        source: source.value.as_str().into(),
        facts,
        index,
    })
}

/// The rank of a node no symptom leads to.
const UNREACHED: usize = usize::MAX;

#[derive(Default)]
struct Compiler<'r> {
    problems: Vec<Problem>,
    /// Shared, once declared, with the compiling of causes and facts.
    names: Arc<Names>,
    ids: HashMap<String, (Id, Loc)>,
    inputs: Vec<InputInfo>,
    facts: Vec<FactInfo>,
    /// Shared, once declared, with the compiling of facts.
    fact_types: Arc<Vec<Ty>>,
    symptoms: Vec<SymptomInfo>,
    /// Every check in the AST, by `CheckId`, with its id.
    check_asts: Vec<(&'r ast::Check, String)>,
    /// The index in `check_asts` of each check, by address: a nested check
    /// is found by the branch that holds it. An address rather than a
    /// pointer, so that the compiler may run on another thread.
    check_index: HashMap<usize, CheckId>,
    /// The checks written directly in each symptom.
    symptom_checks: Vec<Vec<CheckId>>,
    checks: Vec<CheckInfo>,
    causes: Vec<CauseInfo>,
    /// The graph's nodes are the symptoms, the checks, then the causes:
    /// the index of the first cause.
    first_cause: usize,
    graph: DiGraph<Node, Edge>,
    templates: Templates,
    /// The regular expressions of the rules, checked or assumed valid.
    patterns: Arc<Checked>,
    /// The compiled derivations and conditions.
    exprs: Exprs,
    /// Facts read by conditions and templates.
    used: Vec<FactId>,
    /// Ids a misspelled reference probably meant: their being unreachable
    /// is the same mistake, not another one.
    meant: Vec<String>,
}

impl<'r> Compiler<'r> {
    /// A compiler with every name and id of `rules` declared, after the
    /// `problems` extending them found.
    fn declared(rules: &'r RuleSet, problems: Vec<Problem>) -> Self {
        let mut compiler = Compiler {
            problems,
            ..Compiler::default()
        };
        compiler.declare(rules);
        compiler
    }

    /// Compiles the declared rules, whose regular expressions are `patterns`.
    fn compile(
        mut self,
        rules: &'r RuleSet,
        patterns: Checked,
    ) -> Result<KnowledgeBase, Vec<Problem>> {
        self.patterns = Arc::new(patterns);
        // Causes and facts read nothing of the rest but what is declared: they
        // compile on another core while the symptoms and checks do, which take
        // about as long as both.
        let names = Arc::clone(&self.names);
        let (types, patterns) = (Arc::clone(&self.fact_types), Arc::clone(&self.patterns));
        let first_cause = self.first_cause;
        let ((causes, facts), ()) = rayon::join(
            || {
                let causes = Causes::compile(rules, &names, first_cause);
                (causes, Facts::compile(rules, &names, &types, &patterns))
            },
            || self.compile_symptoms(rules),
        );
        // The last other reference: `finish` then takes the names without a copy.
        drop(names);
        self.add_facts(facts);
        self.add_causes(causes);
        self.validate_graph();
        self.validate_tests(rules);
        self.finish(rules)
    }

    fn declare_name(&mut self, name: &ast::Ident, what: Name) {
        if let Some((_, first)) = self.names.get(&name.name) {
            let problem = Problem::error(
                Code::DuplicateId,
                &name.loc,
                format!("`{}` is declared twice", name.name),
            )
            .with_label("declared again here")
            .with_related(first, "first declared here");
            self.problems.push(problem);
        } else {
            Arc::make_mut(&mut self.names).insert(name.name.clone(), (what, name.loc.clone()));
        }
    }

    fn declare_id(&mut self, id: &str, loc: &Loc, what: Id) {
        if let Some((_, first)) = self.ids.get(id) {
            let problem =
                Problem::error(Code::DuplicateId, loc, format!("id `{id}` is used twice"))
                    .with_label("used again here")
                    .with_related(first, "first used here")
                    .with_help("symptoms, checks and causes share one namespace of ids");
            self.problems.push(problem);
        } else {
            self.ids.insert(id.to_owned(), (what, loc.clone()));
        }
    }

    /// Sizes the lists, maps and graph the rules fill: grown by doubling,
    /// each would be copied several times over, and a large knowledge base
    /// has hundreds of thousands of declarations.
    fn reserve(&mut self, rules: &RuleSet) {
        fn walk(check: &ast::Check, checks: &mut usize, branches: &mut usize) {
            *checks += 1;
            *branches += check.branches.len();
            for branch in &check.branches {
                if let AstTarget::Check(nested) = &branch.target {
                    walk(nested, checks, branches);
                }
            }
        }
        let (mut inputs, mut facts, mut symptoms, mut causes) = (0, 0, 0, 0);
        let (mut checks, mut branches) = (0, 0);
        for item in &rules.items {
            match item {
                ast::Item::Input(_) => inputs += 1,
                ast::Item::Fact(_) => facts += 1,
                ast::Item::Symptom(symptom) => {
                    symptoms += 1;
                    for check in &symptom.checks {
                        walk(check, &mut checks, &mut branches);
                    }
                }
                ast::Item::Check(check) => walk(check, &mut checks, &mut branches),
                ast::Item::Cause(_) => causes += 1,
                ast::Item::Test(_) | ast::Item::Extend(_) => {}
            }
        }
        Arc::make_mut(&mut self.names).reserve(inputs + facts);
        self.ids.reserve(symptoms + causes + checks);
        self.inputs.reserve_exact(inputs);
        Arc::make_mut(&mut self.fact_types).reserve_exact(facts);
        self.symptoms.reserve_exact(symptoms);
        self.symptom_checks.reserve_exact(symptoms);
        self.check_asts.reserve_exact(checks);
        self.check_index.reserve(checks);
        self.checks.reserve_exact(checks);
        self.graph.reserve_exact_nodes(symptoms + checks + causes);
        // A branch each, a symptom's first check, and a check's next.
        self.graph.reserve_exact_edges(branches + symptoms + checks);
    }

    /// Registers every name and id, so references resolve in any order.
    fn declare(&mut self, rules: &'r RuleSet) {
        self.reserve(rules);
        for input in rules.inputs() {
            let id = InputId(self.inputs.len());
            self.declare_name(&input.name, Name::Input(id));
            self.inputs.push(InputInfo {
                name: input.name.name.as_str().into(),
                title: input.title.as_ref().map(LocalText::of),
            });
        }
        for fact in rules.facts() {
            let id = FactId(self.fact_types.len());
            self.declare_name(&fact.name, Name::Fact(id));
            Arc::make_mut(&mut self.fact_types).push(Ty::of(&fact.ty));
        }
        for (i, symptom) in rules.symptoms().enumerate() {
            self.declare_id(&symptom.id.name, &symptom.id.loc, Id::Symptom(SymptomId(i)));
            let mut counter = 0;
            let mut top = Vec::with_capacity(symptom.checks.len());
            for check in &symptom.checks {
                top.push(CheckId(self.check_asts.len()));
                self.declare_check(check, &symptom.id.name, &mut counter);
            }
            self.symptom_checks.push(top);
        }
        for check in rules.checks() {
            self.declare_check(check, "", &mut 0);
        }
        for (i, cause) in rules.causes().enumerate() {
            self.declare_id(&cause.id.name, &cause.id.loc, Id::Cause(CauseId(i)));
        }
        self.first_cause = self.symptom_checks.len() + self.check_asts.len();
    }

    fn declare_check(&mut self, check: &'r ast::Check, symptom: &str, counter: &mut usize) {
        *counter += 1;
        let id = match &check.id {
            Some(id) => {
                self.declare_id(&id.name, &id.loc, Id::Check(CheckId(self.check_asts.len())));
                id.name.clone()
            }
            None => format!("{symptom}#{counter}"),
        };
        self.check_index.insert(
            std::ptr::from_ref(check).addr(),
            CheckId(self.check_asts.len()),
        );
        self.check_asts.push((check, id));
        for branch in &check.branches {
            if let AstTarget::Check(nested) = &branch.target {
                self.declare_check(nested, symptom, counter);
            }
        }
    }

    /// A compiler of conditions, which read facts, not inputs (derivations
    /// are compiled with the facts).
    fn condition_compiler(&mut self) -> ExprCompiler<'_> {
        ExprCompiler::new(
            &self.names,
            &self.fact_types,
            &self.patterns,
            false,
            &mut self.problems,
            &mut self.exprs,
        )
    }

    /// [`template`], into the compiler's lists.
    fn template(&mut self, source: &ast::Str) -> Option<Template> {
        template(
            source,
            &self.names,
            &mut self.templates,
            &mut self.used,
            &mut self.problems,
        )
    }

    fn compile_symptoms(&mut self, rules: &'r RuleSet) {
        for symptom in rules.symptoms() {
            let node = self
                .graph
                .add_node(Node::Symptom(SymptomId(self.symptoms.len())));
            let (when, when_facts) = match &symptom.when {
                Some(expr) => {
                    let mut compiler = self.condition_compiler();
                    let compiled = compiler.condition(expr);
                    let reads = std::mem::take(&mut compiler.reads);
                    self.used.extend(&reads);
                    let never = || self.exprs.push(CExpr::Bool(false));
                    (compiled.unwrap_or_else(never), reads)
                }
                None => {
                    self.problems.push(
                        Problem::error(
                            Code::SymptomWithoutWhen,
                            &symptom.id.loc,
                            format!("symptom `{}` has no `when` condition", symptom.id.name),
                        )
                        .with_help("say when an input shows it: `when phase == \"Pending\"`"),
                    );
                    (self.exprs.push(CExpr::Bool(false)), Vec::new())
                }
            };
            self.symptoms.push(SymptomInfo {
                id: symptom.id.name.as_str().into(),
                title: LocalText::of(&symptom.title),
                explain: symptom.explain.as_ref().map(LocalText::of),
                when_text: symptom
                    .when
                    .as_ref()
                    .map(|e| one_line(e.loc.text()))
                    .unwrap_or_default()
                    .into(),
                when,
                when_facts,
                checks: Vec::new(),
                node,
                loc: symptom.loc.clone(),
            });
        }
        // Every node exists before any branch is resolved.
        for i in 0..self.check_asts.len() {
            self.graph.add_node(Node::Check(CheckId(i)));
        }
        for i in 0..rules.causes().count() {
            self.graph.add_node(Node::Cause(CauseId(i)));
        }
        let asts: Vec<(&'r ast::Check, String)> = self.check_asts.clone();
        for (i, (check, id)) in asts.iter().enumerate() {
            let info = self.compile_check(check, id, NodeIndex::new(self.symptoms.len() + i));
            self.checks.push(info);
        }
        // Chain each symptom's top-level checks.
        let symptom_checks = std::mem::take(&mut self.symptom_checks);
        for (s, top) in symptom_checks.into_iter().enumerate() {
            let Some(symptom) = self.symptoms.get_mut(s) else {
                continue;
            };
            if let Some(first) = top.first().and_then(|c| self.checks.get(c.0)) {
                self.graph.add_edge(symptom.node, first.node, Edge::Enter);
            }
            for pair in top.windows(2) {
                let &[from, to] = pair else { continue };
                let Some(to_node) = self.checks.get(to.0).map(|c| c.node) else {
                    continue;
                };
                if let Some(from_info) = self.checks.get_mut(from.0)
                    && from_info.branches.iter().all(|b| b.condition.is_some())
                {
                    from_info.next = Some(to);
                    let from_node = from_info.node;
                    self.graph.add_edge(from_node, to_node, Edge::Otherwise);
                }
            }
            symptom.checks = top;
        }
    }

    fn compile_check(&mut self, check: &'r ast::Check, id: &str, node: NodeIndex) -> CheckInfo {
        if check.branches.is_empty() {
            self.problems.push(
                Problem::error(
                    Code::EmptyCheck,
                    &check.loc,
                    format!("check `{id}` has no branch"),
                )
                .with_label("no `if` or `else` inside")
                .with_help("add `if CONDITION => CAUSE`"),
            );
        }
        let else_count = check
            .branches
            .iter()
            .filter(|b| b.condition.is_none())
            .count();
        for (i, branch) in check.branches.iter().enumerate() {
            if branch.condition.is_none() && (i + 1 != check.branches.len() || else_count > 1) {
                self.problems.push(
                    Problem::error(
                        Code::MisplacedElse,
                        &branch.loc,
                        "`else` must be the last branch, and the only one",
                    )
                    .with_label("misplaced `else`"),
                );
            }
        }
        // Sized up front, as the other lists a knowledge base keeps for
        // each declaration: grown by pushes, they hold up to twice as much.
        let mut branches = Vec::with_capacity(check.branches.len());
        for branch in &check.branches {
            let (condition, facts) = match &branch.condition {
                Some(expr) => {
                    let mut compiler = self.condition_compiler();
                    let compiled = compiler.condition(expr);
                    let reads = std::mem::take(&mut compiler.reads);
                    self.used.extend(&reads);
                    let never = || self.exprs.push(CExpr::Bool(false));
                    (Some(compiled.unwrap_or_else(never)), reads)
                }
                None => (None, Vec::new()),
            };
            let Some(target) = self.resolve_target(&branch.target) else {
                continue;
            };
            let target_node = match target {
                Target::Cause(cause) => self.cause_node(cause),
                Target::Check(check) => NodeIndex::new(self.symptoms.len() + check.0),
            };
            self.graph
                .add_edge(node, target_node, Edge::Branch(branches.len()));
            branches.push(BranchInfo {
                condition_text: branch
                    .condition
                    .as_ref()
                    .map(|e| one_line(e.loc.text()).into()),
                condition,
                facts,
                target,
                rank: UNREACHED,
            });
        }
        let gather = check.gather.as_ref().and_then(|s| self.template(s));
        CheckInfo {
            id: id.into(),
            title: LocalText::of(&check.title),
            explain: check.explain.as_ref().map(LocalText::of),
            gather,
            branches,
            next: None,
            node,
            loc: check.loc.clone(),
        }
    }

    /// Cause nodes come after every symptom and check node.
    fn cause_node(&self, cause: CauseId) -> NodeIndex {
        NodeIndex::new(self.first_cause + cause.0)
    }

    fn resolve_target(&mut self, target: &'r AstTarget) -> Option<Target> {
        match target {
            AstTarget::Check(nested) => self
                .check_index
                .get(&std::ptr::from_ref(&**nested).addr())
                .map(|&id| Target::Check(id)),
            AstTarget::CheckRef(id) => match self.ids.get(&id.name) {
                Some((Id::Check(check), _)) => Some(Target::Check(*check)),
                other => {
                    let kind = match other {
                        Some((Id::Cause(_), _)) => " (it is a cause: drop `check`)",
                        Some((Id::Symptom(_), _)) => " (it is a symptom)",
                        _ => "",
                    };
                    self.unknown_id(Code::UnknownCheck, id, "check", kind, |i| {
                        matches!(i, Id::Check(_))
                    });
                    None
                }
            },
            AstTarget::Cause(id) => match self.ids.get(&id.name) {
                Some((Id::Cause(cause), _)) => Some(Target::Cause(*cause)),
                other => {
                    let kind = match other {
                        Some((Id::Check(_), _)) => " (it is a check: write `check` before it)",
                        Some((Id::Symptom(_), _)) => " (it is a symptom)",
                        _ => "",
                    };
                    self.unknown_id(Code::UnknownCause, id, "cause", kind, |i| {
                        matches!(i, Id::Cause(_))
                    });
                    None
                }
            },
        }
    }

    fn unknown_id(
        &mut self,
        code: Code,
        id: &ast::Ident,
        what: &str,
        note: &str,
        same_kind: impl Fn(&Id) -> bool,
    ) {
        let candidates = self
            .ids
            .iter()
            .filter(|(_, (kind, _))| same_kind(kind))
            .map(|(n, _)| n.as_str());
        let mut problem =
            Problem::error(code, &id.loc, format!("unknown {what} `{}`{note}", id.name))
                .with_label(format!("no {what} has this id"));
        if let Some(similar) = suggest(&id.name, candidates) {
            problem = problem.with_help(format!("did you mean `{similar}`?"));
            self.meant.push(similar.to_owned());
        }
        self.problems.push(problem);
    }

    /// Takes in the facts compiled apart: their templates and expressions
    /// after the symptoms' and checks'.
    fn add_facts(&mut self, mut facts: Facts) {
        let (templates, shift) = (self.templates.len(), self.exprs.append(facts.exprs));
        for fact in &mut facts.infos {
            fact.from = fact.from.map(|id| shift.expr(id));
            if let Some(gather) = &mut fact.gather {
                gather.index += templates;
            }
        }
        self.templates.append(facts.templates);
        self.facts = facts.infos;
        self.used.extend(facts.used);
        self.problems.extend(facts.problems);
    }

    /// Takes in the causes compiled apart. Their templates come first: the
    /// others' move past them.
    fn add_causes(&mut self, causes: Causes) {
        let moved = causes.templates.len();
        let facts = self.facts.iter_mut().filter_map(|f| f.gather.as_mut());
        let checks = self.checks.iter_mut().filter_map(|c| c.gather.as_mut());
        for template in facts.chain(checks) {
            template.index += moved;
        }
        let mut templates = causes.templates;
        templates.append(std::mem::take(&mut self.templates));
        self.templates = templates;
        self.causes = causes.infos;
        self.used.extend(causes.used);
        self.problems.extend(causes.problems);
    }

    /// Rejects loops between checks and anything no symptom reaches.
    fn validate_graph(&mut self) {
        for component in loops(&self.graph) {
            let members = component.iter().filter_map(|&n| match self.graph[n] {
                Node::Check(c) => self.checks.get(c.0).map(|c| (&c.loc, c.id.as_str())),
                _ => None,
            });
            let says = "checks lead back to themselves";
            let help = "a decision tree never returns to a check it has passed";
            self.problems
                .extend(loop_problem(members.collect(), says, help));
        }
        let rank = self.preorder();
        let reached = |node: NodeIndex| rank.get(node.index()).is_some_and(|&r| r != UNREACHED);
        // A declaration whose id is taken is already reported as a duplicate.
        let owns = |id: &str, what: Id| {
            self.ids.get(id).is_some_and(|(owner, _)| *owner == what)
                && !self.meant.iter().any(|m| m == id)
        };
        for (i, check) in self.checks.iter().enumerate() {
            if !reached(check.node)
                && (owns(&check.id, Id::Check(CheckId(i)))
                    || !self.ids.contains_key(check.id.as_str()))
            {
                self.problems.push(
                    Problem::error(
                        Code::UnreachableCheck,
                        &check.loc,
                        format!("check `{}` is never reached", check.id),
                    )
                    .with_label("no symptom leads here")
                    .with_help(format!("lead a branch to it: `if … => check {}`", check.id)),
                );
            }
        }
        for (i, cause) in self.causes.iter().enumerate() {
            if !reached(cause.node) && owns(&cause.id, Id::Cause(CauseId(i))) {
                self.problems.push(
                    Problem::error(
                        Code::UnreachableCause,
                        &cause.loc,
                        format!("cause `{}` is never reached", cause.id),
                    )
                    .with_label("no check leads here")
                    .with_help(format!("lead a branch to it: `if … => {}`", cause.id)),
                );
            }
        }
    }

    /// The position of every node reached from the symptoms, depth first, in
    /// the order the rules are written, by node index ([`UNREACHED`] for the
    /// others); each branch is given its own position as it is taken, so that
    /// a cause reached by several branches ranks where the one reaching it
    /// stands.
    fn preorder(&mut self) -> Vec<usize> {
        /// A node to visit, or a branch (check, index) leading to one.
        enum Visit {
            Node(NodeIndex),
            Branch(usize, usize, NodeIndex),
        }
        let mut rank = vec![UNREACHED; self.graph.node_count()];
        let mut reached = 0;
        let mut stack: Vec<Visit> = self
            .symptoms
            .iter()
            .rev()
            .map(|s| Visit::Node(s.node))
            .collect();
        while let Some(visit) = stack.pop() {
            let node = match visit {
                Visit::Node(node) => node,
                Visit::Branch(check, branch, node) => {
                    if let Some(b) = self
                        .checks
                        .get_mut(check)
                        .and_then(|c| c.branches.get_mut(branch))
                    {
                        b.rank = reached;
                    }
                    reached += 1;
                    node
                }
            };
            match rank.get_mut(node.index()) {
                Some(slot) if *slot == UNREACHED => *slot = reached,
                _ => continue,
            }
            reached += 1;
            match self.graph.node_weight(node) {
                Some(Node::Symptom(s)) => {
                    if let Some(first) = self.symptoms.get(s.0).and_then(|s| s.checks.first()) {
                        stack.extend(self.checks.get(first.0).map(|c| Visit::Node(c.node)));
                    }
                }
                Some(&Node::Check(c)) => {
                    let Some(check) = self.checks.get(c.0) else {
                        continue;
                    };
                    stack.extend(
                        check
                            .next
                            .and_then(|n| self.checks.get(n.0))
                            .map(|c| Visit::Node(c.node)),
                    );
                    let symptoms = self.symptoms.len();
                    stack.extend(check.branches.iter().enumerate().rev().map(|(i, b)| {
                        let target = match b.target {
                            Target::Cause(cause) => self.cause_node(cause),
                            Target::Check(check) => NodeIndex::new(symptoms + check.0),
                        };
                        Visit::Branch(c.0, i, target)
                    }));
                }
                _ => {}
            }
        }
        rank
    }

    fn validate_tests(&mut self, rules: &RuleSet) {
        for test in rules.tests() {
            for expect in &test.expects {
                let id = match expect {
                    ast::Expect::Reported { id, .. } | ast::Expect::Absent(id) => id,
                    ast::Expect::NoneConfirmed(_) => continue,
                };
                match self.ids.get(&id.name) {
                    Some((Id::Cause(_) | Id::Symptom(_), _)) => {}
                    _ => {
                        let candidates = self
                            .ids
                            .iter()
                            .filter(|(_, (k, _))| !matches!(k, Id::Check(_)))
                            .map(|(n, _)| n.as_str());
                        let mut problem = Problem::error(
                            Code::UnknownTestId,
                            &id.loc,
                            format!(
                                "test expects `{}`, which is neither a symptom nor a cause",
                                id.name
                            ),
                        );
                        if let Some(similar) = suggest(&id.name, candidates) {
                            problem = problem.with_help(format!("did you mean `{similar}`?"));
                        }
                        self.problems.push(problem);
                    }
                }
            }
        }
    }

    fn finish(mut self, rules: &RuleSet) -> Result<KnowledgeBase, Vec<Problem>> {
        // Read by a condition or a template: its value may be shown.
        let mut shown = vec![false; self.facts.len()];
        for id in &self.used {
            if let Some(slot) = shown.get_mut(id.0) {
                *slot = true;
            }
        }
        let mut used = shown.clone();
        for id in self.facts.iter().flat_map(|fact| &fact.reads) {
            if let Some(slot) = used.get_mut(id.0) {
                *slot = true;
            }
        }
        for fact in &self.facts {
            if let Some((Name::Fact(id), _)) = self.names.get(fact.name.as_str())
                && !used.get(id.0).copied().unwrap_or(true)
            {
                self.problems.push(
                    Problem::warning(
                        Code::UnusedFact,
                        &fact.loc,
                        format!("fact `{}` is never used", fact.name),
                    )
                    .with_label("declared here")
                    .with_help("use it in a condition or a command, or remove it"),
                );
            }
        }
        self.problems.sort_by(|a, b| {
            (&a.loc.src.name, a.loc.start()).cmp(&(&b.loc.src.name, b.loc.start()))
        });
        if self.problems.iter().any(Problem::is_error) {
            return Err(self.problems);
        }
        let topo = match toposort(&self.graph, None) {
            Ok(order) => order,
            Err(cycle) => {
                let loc = self.symptoms.first().map(|s| s.loc.clone());
                let message = format!("internal error: cycle through node {:?}", cycle.node_id());
                return Err(loc
                    .map(|loc| vec![Problem::error(Code::Internal, &loc, message)])
                    .unwrap_or_default());
            }
        };
        // Ordering the names and ids sorts hundreds of thousands of strings
        // in a large knowledge base: done on other cores meanwhile.
        let (names, ids) = (
            Arc::unwrap_or_clone(std::mem::take(&mut self.names)),
            std::mem::take(&mut self.ids),
        );
        let (input_needs, (names, ids)) = rayon::join(
            || reads::input_needs(&self.facts, &self.exprs, self.inputs.len(), &shown),
            || rayon::join(|| ordered(names), || ordered(ids)),
        );
        Ok(KnowledgeBase {
            graph: self.graph,
            topo,
            names,
            ids,
            templates: self.templates,
            input_needs,
            exprs: self.exprs,
            inputs: self.inputs,
            facts: self.facts,
            symptoms: self.symptoms,
            checks: self.checks,
            causes: self.causes,
            tests: Tests::new(rules.tests().cloned().collect()),
            warnings: self.problems,
        })
    }
}
