//! Whether a knowledge base decoded from bytes holds together. Compiling
//! guarantees it; bytes from elsewhere (damaged, or made by hand) may name
//! checks, causes or facts that do not exist, or lead in circles, and
//! evaluating them must not index out of bounds or loop.

use petgraph::graph::NodeIndex;

use crate::expr::{CExpr, ExprId};
use crate::kb::{
    CauseId, CheckId, FactId, Id, KnowledgeBase, Name, Node, SymptomId, Target, Template,
};

/// The first inconsistency found, in words.
pub(crate) fn check(kb: &KnowledgeBase) -> Result<(), String> {
    // Expressions inside others are taken; each condition and derivation
    // takes one more, so that no expression is walked twice.
    let mut taken = kb
        .exprs
        .check(crate::snapshot::MAX_DEPTH, kb.facts.len(), kb.inputs.len())?;
    let nodes = kb.graph.node_count();
    // Where each node stands in `topo`: every edge and every way from a
    // check to the next must go forward, so that nothing leads in circles.
    let mut position = vec![usize::MAX; nodes];
    for (at, node) in kb.topo.iter().enumerate() {
        match position.get_mut(node.index()) {
            Some(slot) if *slot == usize::MAX => *slot = at,
            _ => {
                return Err(format!(
                    "the order of nodes lists node {} wrongly",
                    node.index()
                ));
            }
        }
    }
    ensure(kb.topo.len() == nodes, "the order of nodes is incomplete")?;
    for (index, node) in kb.graph.node_indices().zip(kb.graph.node_weights()) {
        let back = match *node {
            Node::Symptom(id) => kb.symptoms.get(id.0).map(|s| s.node),
            Node::Check(id) => kb.checks.get(id.0).map(|c| c.node),
            Node::Cause(id) => kb.causes.get(id.0).map(|c| c.node),
        };
        ensure(
            back == Some(index),
            "a node of the graph names the wrong declaration",
        )?;
    }
    let before = |from: usize, to: usize| matches!((position.get(from), position.get(to)), (Some(from), Some(to)) if from < to);
    for edge in kb.graph.raw_edges() {
        ensure(
            before(edge.source().index(), edge.target().index()),
            "an edge of the graph leads backwards",
        )?;
    }
    let node_of = |target: Target| match target {
        Target::Check(id) => kb.checks.get(id.0).map(|c| c.node),
        Target::Cause(id) => kb.causes.get(id.0).map(|c| c.node),
    };
    let forward =
        |from: usize, to: Option<NodeIndex>| to.is_some_and(|to| before(from, to.index()));
    let facts = |ids: &[FactId]| ids.iter().all(|id| id.0 < kb.facts.len());
    for (i, symptom) in kb.symptoms.iter().enumerate() {
        ensure(
            kb.graph.node_weight(symptom.node) == Some(&Node::Symptom(SymptomId(i))),
            "a symptom names the wrong node",
        )?;
        ensure(
            symptom.checks.iter().all(|c| c.0 < kb.checks.len()),
            "a symptom names a check that does not exist",
        )?;
        ensure(
            facts(&symptom.when_facts),
            "a symptom names a fact that does not exist",
        )?;
        expression(kb, symptom.when, None, &mut taken)?;
    }
    for (i, check) in kb.checks.iter().enumerate() {
        ensure(
            kb.graph.node_weight(check.node) == Some(&Node::Check(CheckId(i))),
            "a check names the wrong node",
        )?;
        let here = check.node.index();
        for branch in &check.branches {
            ensure(
                forward(here, node_of(branch.target)),
                "a branch leads backwards or nowhere",
            )?;
            ensure(
                facts(&branch.facts),
                "a branch names a fact that does not exist",
            )?;
            if let Some(condition) = &branch.condition {
                expression(kb, *condition, None, &mut taken)?;
            }
        }
        if let Some(next) = check.next {
            ensure(
                forward(here, node_of(Target::Check(next))),
                "a check leads backwards or nowhere",
            )?;
        }
        template(kb, check.gather.as_ref())?;
    }
    for (i, cause) in kb.causes.iter().enumerate() {
        ensure(
            kb.graph.node_weight(cause.node) == Some(&Node::Cause(CauseId(i))),
            "a cause names the wrong node",
        )?;
        for step in cause.fixes.iter().flat_map(|fix| &fix.steps) {
            template(kb, step.run.as_ref())?;
        }
    }
    for fact in &kb.facts {
        ensure(
            facts(&fact.reads),
            "a fact reads a fact that does not exist",
        )?;
        if let Some(from) = fact.from {
            expression(kb, from, Some(&fact.reads), &mut taken)?;
        }
        template(kb, fact.gather.as_ref())?;
    }
    for name in kb.names.values() {
        let exists = match *name {
            Name::Input(id) => id.0 < kb.inputs.len(),
            Name::Fact(id) => id.0 < kb.facts.len(),
        };
        ensure(exists, "a name stands for nothing")?;
    }
    for id in kb.ids.values() {
        let exists = match *id {
            Id::Symptom(id) => id.0 < kb.symptoms.len(),
            Id::Check(id) => id.0 < kb.checks.len(),
            Id::Cause(id) => id.0 < kb.causes.len(),
        };
        ensure(exists, "an id stands for nothing")?;
    }
    Ok(())
}

/// An expression exists ([`crate::expr::Exprs::check`] checked what it
/// reads) and is no other's; a fact's derivation reads only the facts it
/// lists as read (they are computed first).
fn expression(
    kb: &KnowledgeBase,
    expr: ExprId,
    reads: Option<&[FactId]>,
    taken: &mut [bool],
) -> Result<(), String> {
    let slot = taken.get_mut(expr.index());
    ensure(
        slot.as_ref().is_some_and(|taken| !**taken),
        "a condition or derivation does not exist, or is another's",
    )?;
    if let Some(slot) = slot {
        *slot = true;
    }
    let Some(reads) = reads else {
        return Ok(());
    };
    let mut stack = vec![expr];
    while let Some(expr) = stack.pop() {
        if let Some(CExpr::Fact(id)) = kb.exprs.get(expr) {
            ensure(
                reads.contains(id),
                "a derivation reads a fact it does not list",
            )?;
        }
        kb.exprs.each_child(expr, |child| stack.push(child));
    }
    Ok(())
}

fn template(kb: &KnowledgeBase, template: Option<&Template>) -> Result<(), String> {
    template.map_or(Ok(()), |template| {
        ensure(
            template.index < kb.templates.len()
                && template.facts.iter().all(|f| f.0 < kb.facts.len()),
            "a command template does not exist or uses a fact that does not exist",
        )
    })
}

fn ensure(holds: bool, otherwise: &str) -> Result<(), String> {
    if holds {
        Ok(())
    } else {
        Err(otherwise.to_owned())
    }
}
