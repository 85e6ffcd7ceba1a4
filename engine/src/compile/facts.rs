//! The facts, compiled apart from the symptoms: a derivation reads nothing
//! of the rest but the names and types the rules declare, so the facts
//! compile on another core while the symptoms and checks do.

use kb_dsl::ast::RuleSet;
use kb_dsl::{Code, Problem};
use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use super::expr::ExprCompiler;
use super::patterns::Checked;
use super::{Names, one_line, template};
use crate::expr::Exprs;
use crate::kb::{FactId, FactInfo, LocalText};
use crate::template::Templates;
use crate::types::Ty;

/// Compiled facts, with what they add to the rest of the knowledge base.
pub(super) struct Facts {
    pub infos: Vec<FactInfo>,
    /// For each fact, the facts its derivation reads.
    pub reads: Vec<Vec<FactId>>,
    /// Their derivations, in an arena of their own.
    pub exprs: Exprs,
    /// Their commands to gather them, numbered from 0.
    pub templates: Templates,
    /// The facts those commands use.
    pub used: Vec<FactId>,
    pub problems: Vec<Problem>,
}

impl Facts {
    /// Compiles the facts of `rules`, declared with the types `types`.
    pub fn compile(rules: &RuleSet, names: &Names, types: &[Ty], patterns: &Checked) -> Self {
        let count = types.len();
        let mut compiled = Self {
            infos: Vec::with_capacity(count),
            reads: Vec::with_capacity(count),
            exprs: Exprs::default(),
            templates: Templates::default(),
            used: Vec::new(),
            problems: Vec::new(),
        };
        for (fact, ty) in rules.facts().zip(types) {
            let (from, reads) = match &fact.from {
                Some(expr) => {
                    let mut compiler = ExprCompiler::new(
                        names,
                        types,
                        patterns,
                        true,
                        &mut compiled.problems,
                        &mut compiled.exprs,
                    );
                    let derived = compiler.expr(expr);
                    let reads = std::mem::take(&mut compiler.reads);
                    if let Some((_, got)) = &derived
                        && !ty.accepts(got)
                    {
                        compiled.problems.push(
                            Problem::error(
                                Code::TypeMismatch,
                                &expr.loc,
                                format!(
                                    "fact `{}` is declared {ty}, but its derivation is {got}",
                                    fact.name.name
                                ),
                            )
                            .with_label(format!("this is {got}")),
                        );
                    }
                    (derived.map(|(c, _)| c), reads)
                }
                None => (None, Vec::new()),
            };
            let gather = fact.gather.as_ref().and_then(|source| {
                template(
                    source,
                    names,
                    &mut compiled.templates,
                    &mut compiled.used,
                    &mut compiled.problems,
                )
            });
            compiled.reads.push(reads.clone());
            compiled.infos.push(FactInfo {
                name: fact.name.name.as_str().into(),
                ty: ty.clone(),
                title: LocalText::of(&fact.title),
                explain: fact.explain.as_ref().map(LocalText::of),
                derivation: fact.from.as_ref().map(|e| one_line(e.loc.text()).into()),
                gather,
                reads,
                from,
                loc: fact.loc.clone(),
            });
        }
        compiled.check_cycles();
        compiled
    }

    /// Rejects facts whose derivations read each other in a loop.
    fn check_cycles(&mut self) {
        let mut graph = DiGraph::<FactId, ()>::new();
        let nodes: Vec<NodeIndex> = (0..self.infos.len())
            .map(|i| graph.add_node(FactId(i)))
            .collect();
        for (from, reads) in self.reads.iter().enumerate() {
            for read in reads {
                if let (Some(&a), Some(&b)) = (nodes.get(from), nodes.get(read.0)) {
                    graph.add_edge(a, b, ());
                }
            }
        }
        for component in tarjan_scc(&graph) {
            let is_cycle = component.len() > 1
                || component
                    .first()
                    .is_some_and(|&n| graph.find_edge(n, n).is_some());
            if !is_cycle {
                continue;
            }
            let mut members: Vec<&FactInfo> = component
                .iter()
                .filter_map(|&n| self.infos.get(graph[n].0))
                .collect();
            members.sort_by_key(|f| (f.loc.src.name.clone(), f.loc.start()));
            let Some((first, rest)) = members.split_first() else {
                continue;
            };
            let names: Vec<String> = members.iter().map(|f| format!("`{}`", f.name)).collect();
            let mut problem = Problem::error(
                Code::Cycle,
                &first.loc,
                format!(
                    "facts derive from each other in a loop: {}",
                    names.join(" → ")
                ),
            )
            .with_label("part of the loop")
            .with_help("a fact must be derivable from the input without reading itself");
            for other in rest {
                problem = problem
                    .with_related(&other.loc, format!("`{}` is part of the loop", other.name));
            }
            self.problems.push(problem);
        }
    }
}
