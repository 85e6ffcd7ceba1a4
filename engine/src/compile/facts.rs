//! The facts, compiled apart from the symptoms: a derivation reads nothing
//! of the rest but the names and types the rules declare, so the facts
//! compile on another core while the symptoms and checks do.

use kb_dsl::ast::RuleSet;
use kb_dsl::{Code, Problem};
use petgraph::graph::{DiGraph, NodeIndex};

use super::expr::ExprCompiler;
use super::patterns::Checked;
use super::{Names, loop_problem, loops, one_line, template};
use crate::expr::Exprs;
use crate::kb::{FactId, FactInfo, LocalText};
use crate::template::Templates;
use crate::types::Ty;

/// Compiled facts, with what they add to the rest of the knowledge base.
pub(super) struct Facts {
    pub infos: Vec<FactInfo>,
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
        let mut compiled = Self {
            infos: Vec::with_capacity(types.len()),
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
        for (from, fact) in self.infos.iter().enumerate() {
            for read in &fact.reads {
                if let (Some(&a), Some(&b)) = (nodes.get(from), nodes.get(read.0)) {
                    graph.add_edge(a, b, ());
                }
            }
        }
        for component in loops(&graph) {
            let members = component
                .iter()
                .filter_map(|&n| self.infos.get(graph[n].0))
                .map(|fact| (&fact.loc, fact.name.as_str()));
            let says = "facts derive from each other in a loop";
            let help = "a fact must be derivable from the input without reading itself";
            self.problems
                .extend(loop_problem(members.collect(), says, help));
        }
    }
}
