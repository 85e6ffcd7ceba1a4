//! The causes, compiled apart from the rest: their texts, fixes and
//! commands read nothing but the names the rules declare, so they compile
//! on another core while the facts and symptoms do.

use kb_dsl::ast::RuleSet;
use kb_dsl::{Code, Problem};
use petgraph::graph::NodeIndex;

use super::{Names, template};
use crate::kb::{CauseInfo, FactId, FixInfo, LocalText, StepInfo};
use crate::template::Templates;

/// Compiled causes, with what they add to the rest of the knowledge base.
pub(super) struct Causes {
    pub infos: Vec<CauseInfo>,
    /// Their command templates, numbered from 0.
    pub templates: Templates,
    /// The facts those templates use.
    pub used: Vec<FactId>,
    pub problems: Vec<Problem>,
}

impl Causes {
    /// Compiles the causes of `rules`, the first of which is the graph's
    /// node `first_node`.
    pub fn compile(rules: &RuleSet, names: &Names, first_node: usize) -> Self {
        let mut compiled = Self {
            infos: Vec::with_capacity(rules.causes().count()),
            templates: Templates::default(),
            used: Vec::new(),
            problems: Vec::new(),
        };
        for (i, cause) in rules.causes().enumerate() {
            if cause.fixes.is_empty() {
                compiled.problems.push(
                    Problem::error(
                        Code::CauseWithoutFix,
                        &cause.id.loc,
                        format!("cause `{}` has no fix", cause.id.name),
                    )
                    .with_help("add `fix \"…\" { step \"…\" run \"…\" }`"),
                );
            }
            let mut fixes = Vec::with_capacity(cause.fixes.len());
            for fix in &cause.fixes {
                let mut steps = Vec::with_capacity(fix.steps.len());
                for step in &fix.steps {
                    let run = step.run.as_ref().and_then(|run| {
                        template(
                            run,
                            names,
                            &mut compiled.templates,
                            &mut compiled.used,
                            &mut compiled.problems,
                        )
                    });
                    steps.push(StepInfo {
                        text: LocalText::of(&step.text),
                        run,
                        risk: step.risk.as_ref().map(LocalText::of),
                    });
                }
                fixes.push(FixInfo {
                    title: LocalText::of(&fix.title),
                    steps,
                });
            }
            compiled.infos.push(CauseInfo {
                id: cause.id.name.as_str().into(),
                title: LocalText::of(&cause.title),
                explain: cause.explain.as_ref().map(LocalText::of),
                fixes: fixes.into(),
                node: NodeIndex::new(first_node + i),
                loc: cause.loc.clone(),
            });
        }
        compiled
    }
}
