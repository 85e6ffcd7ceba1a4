//! `kb graph`: the compiled decision graph, for review.
//!
//! Nodes are symptoms, checks and causes, with their ids and titles; edges
//! carry the conditions as written: a symptom's `when` to its first check, a
//! branch's condition (`else` for an `else`) to where it leads, and
//! `otherwise` from a check none of whose branches holds to the next one.

use std::io::{self, BufWriter, Write};

use kb_docs_gen::flow::Flow;
use kb_engine::kb::{CheckId, SymptomId, Target};
use kb_engine::{KnowledgeBase, Lang};
use serde::Serialize;

use crate::exit::Exit;
use crate::report;

/// Arguments of `kb graph`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only the part of the graph under this symptom.
    #[arg(long, value_name = "ID")]
    pub symptom: Option<String>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = GraphFormat::Dot)]
    pub format: GraphFormat,
}

/// The formats `kb graph` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphFormat {
    /// Graphviz: `kb graph | dot -Tsvg > graph.svg`.
    Dot,
    /// One Mermaid flowchart per symptom, as the runbooks draw them.
    Mermaid,
    /// `{"nodes": [{"id", "kind", "title"}], "edges": [{"from", "to", "condition"}]}`.
    Json,
}

/// A node of the graph.
#[derive(Debug, Clone, Serialize)]
pub struct GraphNode {
    /// Unique and stable: `symptom:ID`, `check:ID` or `cause:ID`.
    pub id: String,
    /// `symptom`, `check` or `cause`.
    pub kind: &'static str,
    /// The symptom's or cause's title, or the check's question, in `--lang`.
    pub title: String,
}

/// An edge of the graph.
#[derive(Debug, Clone, Serialize)]
pub struct GraphEdge {
    /// The id of the node it leaves.
    pub from: String,
    /// The id of the node it reaches.
    pub to: String,
    /// The condition as written; `else`, or `otherwise` for a fall-through.
    pub condition: String,
}

/// The decision graph, or the part of it under some symptoms.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Graph {
    /// Symptoms, then checks, then causes, each in the knowledge base's order.
    pub nodes: Vec<GraphNode>,
    /// By the node they leave, in the order of `nodes`, then as written.
    pub edges: Vec<GraphEdge>,
}

/// Runs `kb graph`.
pub fn run(args: &Args, kb: &KnowledgeBase, lang: Lang) -> Exit {
    let symptoms: Vec<SymptomId> = match &args.symptom {
        None => (0..kb.symptoms.len()).map(SymptomId).collect(),
        Some(id) => match kb.symptoms.iter().position(|s| &s.id == id) {
            Some(index) => vec![SymptomId(index)],
            None => {
                let names: Vec<&str> = kb.symptoms.iter().map(|s| s.id.as_str()).collect();
                report::input_error(&format!(
                    "`{id}` is not a symptom of this knowledge base{}",
                    report::did_you_mean(id, &names)
                ));
                return Exit::BadInput;
            }
        },
    };
    let mut out = BufWriter::new(io::stdout().lock());
    let result = match args.format {
        GraphFormat::Dot => write_dot(&mut out, &Graph::of(kb, &symptoms, lang)),
        GraphFormat::Json => {
            serde_json::to_writer_pretty(&mut out, &Graph::of(kb, &symptoms, lang))
                .map_err(io::Error::from)
                .and_then(|()| writeln!(out))
        }
        GraphFormat::Mermaid => write_mermaid(&mut out, kb, &symptoms, lang),
    };
    crate::output::written(result.and_then(|()| out.flush()), Exit::Ok)
}

impl Graph {
    /// Everything reachable from these symptoms.
    pub fn of(kb: &KnowledgeBase, symptoms: &[SymptomId], lang: Lang) -> Self {
        let mut checks = vec![false; kb.checks.len()];
        let mut causes = vec![false; kb.causes.len()];
        let mut stack: Vec<CheckId> = symptoms
            .iter()
            .filter_map(|s| kb.symptoms.get(s.0))
            .filter_map(|s| s.checks.first().copied())
            .collect();
        while let Some(check) = stack.pop() {
            match checks.get_mut(check.0) {
                Some(seen) if !*seen => *seen = true,
                _ => continue,
            }
            let Some(info) = kb.checks.get(check.0) else {
                continue;
            };
            for branch in &info.branches {
                match branch.target {
                    Target::Cause(cause) => {
                        if let Some(seen) = causes.get_mut(cause.0) {
                            *seen = true;
                        }
                    }
                    Target::Check(next) => stack.push(next),
                }
            }
            stack.extend(info.next);
        }
        let mut graph = Self::default();
        for symptom in symptoms.iter().filter_map(|s| kb.symptoms.get(s.0)) {
            let id = format!("symptom:{}", symptom.id);
            graph.node(&id, "symptom", symptom.title.get(lang));
            if let Some(first) = symptom.checks.first().and_then(|c| kb.checks.get(c.0)) {
                graph.edge(&id, format!("check:{}", first.id), &symptom.when_text);
            }
        }
        let kept = kb
            .checks
            .iter()
            .zip(&checks)
            .filter_map(|(info, kept)| kept.then_some(info));
        for info in kept {
            let id = format!("check:{}", info.id);
            graph.node(&id, "check", info.title.get(lang));
            for branch in &info.branches {
                let to = match branch.target {
                    Target::Cause(cause) => {
                        kb.causes.get(cause.0).map(|c| format!("cause:{}", c.id))
                    }
                    Target::Check(next) => kb.checks.get(next.0).map(|c| format!("check:{}", c.id)),
                };
                if let Some(to) = to {
                    graph.edge(&id, to, branch.condition_text.as_deref().unwrap_or("else"));
                }
            }
            if let Some(next) = info.next.and_then(|n| kb.checks.get(n.0)) {
                graph.edge(&id, format!("check:{}", next.id), "otherwise");
            }
        }
        let kept = kb
            .causes
            .iter()
            .zip(&causes)
            .filter_map(|(info, kept)| kept.then_some(info));
        for info in kept {
            graph.node(&format!("cause:{}", info.id), "cause", info.title.get(lang));
        }
        graph
    }

    fn node(&mut self, id: &str, kind: &'static str, title: &str) {
        self.nodes.push(GraphNode {
            id: id.to_owned(),
            kind,
            title: title.to_owned(),
        });
    }

    fn edge(&mut self, from: &str, to: String, condition: &str) {
        self.edges.push(GraphEdge {
            from: from.to_owned(),
            to,
            condition: condition.to_owned(),
        });
    }
}

/// The graph in Graphviz's language.
fn write_dot(out: &mut dyn Write, graph: &Graph) -> io::Result<()> {
    writeln!(out, "digraph kb {{")?;
    writeln!(out, "  rankdir=LR;")?;
    writeln!(out, "  node [fontname=\"sans-serif\", fontsize=11];")?;
    writeln!(out, "  edge [fontname=\"sans-serif\", fontsize=9];")?;
    for node in &graph.nodes {
        let (_, bare) = node.id.split_once(':').unwrap_or(("", &node.id));
        let style = match node.kind {
            "symptom" => "shape=ellipse, style=filled, fillcolor=\"#e8f0fe\"",
            "check" => "shape=diamond, style=filled, fillcolor=\"#fff7e0\"",
            _ => "shape=box, style=\"rounded,filled\", fillcolor=\"#e9f7ef\"",
        };
        writeln!(
            out,
            "  \"{}\" [label=\"{}\\n{}\", {style}];",
            dot_text(&node.id),
            dot_text(bare),
            dot_text(&node.title)
        )?;
    }
    for edge in &graph.edges {
        let style = if edge.condition == "otherwise" {
            ", style=dashed"
        } else {
            ""
        };
        writeln!(
            out,
            "  \"{}\" -> \"{}\" [label=\"{}\"{style}];",
            dot_text(&edge.from),
            dot_text(&edge.to),
            dot_text(&edge.condition)
        )?;
    }
    writeln!(out, "}}")
}

/// Text inside a quoted DOT string: on one line, with `\` and `"` escaped
/// (a backslash would otherwise start one of Graphviz's label escapes).
fn dot_text(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
}

/// One Mermaid flowchart per symptom, as the runbooks draw them, each after a
/// `%%` comment naming it.
fn write_mermaid(
    out: &mut dyn Write,
    kb: &KnowledgeBase,
    symptoms: &[SymptomId],
    lang: Lang,
) -> io::Result<()> {
    for (i, symptom) in symptoms
        .iter()
        .filter_map(|s| kb.symptoms.get(s.0))
        .enumerate()
    {
        if i > 0 {
            writeln!(out)?;
        }
        let title = symptom
            .title
            .get(lang)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        writeln!(out, "%% symptom {}: {title}", symptom.id)?;
        out.write_all(Flow::of(kb, symptom, lang).to_mermaid().as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_text_escapes_quotes_and_backslashes_and_flattens_lines() {
        assert_eq!(
            dot_text("msg matches r\"a\\d+\"\n   and x"),
            "msg matches r\\\"a\\\\d+\\\" and x"
        );
    }
}
