//! A symptom's decision tree, drawn: as a Mermaid flowchart for Markdown
//! pages, and as a self-contained SVG for the HTML site (no script needed).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use kb_engine::Lang;
use kb_engine::kb::{KnowledgeBase, SymptomInfo, Target};

use crate::paths;

/// What a node of the tree is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// The symptom, where the tree starts.
    Start,
    /// A check.
    Question,
    /// A cause.
    Answer,
}

/// A node: its label, and the page it links to.
#[derive(Debug, Clone)]
pub struct FlowNode {
    /// A short id, unique in the tree.
    pub key: String,
    /// What it says.
    pub label: String,
    /// What it is.
    pub shape: Shape,
    /// The page it links to, relative to the site's root.
    pub link: Option<String>,
}

/// An edge: the condition under which the tree goes on.
#[derive(Debug, Clone)]
pub struct FlowEdge {
    /// Index of the node it leaves.
    pub from: usize,
    /// Index of the node it reaches.
    pub to: usize,
    /// The condition, shortened.
    pub label: String,
}

/// A decision tree.
#[derive(Debug, Clone, Default)]
pub struct Flow {
    /// Nodes, the symptom first.
    pub nodes: Vec<FlowNode>,
    /// Edges, in the order the rules are written.
    pub edges: Vec<FlowEdge>,
}

/// The longest edge label; conditions longer than this are cut with `…`.
const LABEL_CHARS: usize = 38;

fn shorten(text: &str, limit: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= limit {
        return flat;
    }
    let cut: String = flat.chars().take(limit.saturating_sub(1)).collect();
    format!("{cut}…")
}

impl Flow {
    /// The tree of a symptom.
    pub fn of(kb: &KnowledgeBase, symptom: &SymptomInfo, lang: Lang) -> Self {
        let mut flow = Flow::default();
        let mut keys: BTreeMap<String, usize> = BTreeMap::new();
        let root = flow.node(
            &mut keys,
            "s".into(),
            symptom.title.get(lang).to_owned(),
            Shape::Start,
            None,
        );
        let mut pending: Vec<(usize, usize, String)> = Vec::new();
        if let Some(first) = symptom.checks.first() {
            pending.push((root, first.0, shorten(&symptom.when_text, LABEL_CHARS)));
        }
        let mut done: Vec<usize> = Vec::new();
        while let Some((from, check_index, label)) = pending.pop() {
            let Some(check) = kb.checks.get(check_index) else {
                continue;
            };
            let key = format!("c{check_index}");
            let known = keys.contains_key(&key);
            let node = flow.node(
                &mut keys,
                key,
                check.title.get(lang).to_owned(),
                Shape::Question,
                None,
            );
            flow.edges.push(FlowEdge {
                from,
                to: node,
                label,
            });
            if known || done.contains(&check_index) {
                continue;
            }
            done.push(check_index);
            let mut later = Vec::new();
            for branch in &check.branches {
                let label = shorten(
                    branch.condition_text.as_deref().unwrap_or("else"),
                    LABEL_CHARS,
                );
                match branch.target {
                    Target::Cause(cause) => {
                        let Some(info) = kb.causes.get(cause.0) else {
                            continue;
                        };
                        let to = flow.node(
                            &mut keys,
                            format!("x{}", cause.0),
                            info.id.to_string(),
                            Shape::Answer,
                            Some(paths::cause(&info.id)),
                        );
                        flow.edges.push(FlowEdge {
                            from: node,
                            to,
                            label,
                        });
                    }
                    Target::Check(next) => later.push((node, next.0, label)),
                }
            }
            if let Some(next) = check.next {
                later.push((node, next.0, String::from("otherwise")));
            }
            // Depth first, in the order written.
            pending.extend(later.into_iter().rev());
        }
        flow
    }

    fn node(
        &mut self,
        keys: &mut BTreeMap<String, usize>,
        key: String,
        label: String,
        shape: Shape,
        link: Option<String>,
    ) -> usize {
        if let Some(&index) = keys.get(&key) {
            return index;
        }
        self.nodes.push(FlowNode {
            key: key.clone(),
            label,
            shape,
            link,
        });
        keys.insert(key, self.nodes.len() - 1);
        self.nodes.len() - 1
    }

    /// The tree as a Mermaid flowchart (left to right).
    pub fn to_mermaid(&self) -> String {
        let mut out = String::from("flowchart LR\n");
        for node in &self.nodes {
            let label = mermaid_text(&node.label);
            let _ = match node.shape {
                Shape::Start => writeln!(out, "  {}([\"{label}\"])", node.key),
                Shape::Question => writeln!(out, "  {}{{\"{label}\"}}", node.key),
                Shape::Answer => writeln!(out, "  {}[\"{label}\"]", node.key),
            };
        }
        for edge in &self.edges {
            let (Some(from), Some(to)) = (self.nodes.get(edge.from), self.nodes.get(edge.to))
            else {
                continue;
            };
            let _ = writeln!(
                out,
                "  {} -->|\"{}\"| {}",
                from.key,
                mermaid_text(&edge.label),
                to.key
            );
        }
        out
    }

    /// The tree as an SVG drawing; cause nodes link to `prefix` + their page (as `.html`).
    pub fn to_svg(&self, prefix: &str) -> String {
        let layout = Layout::of(self);
        let mut out = String::new();
        let _ = write!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="flow" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img"><style>.flow text{{font:13px sans-serif}} .flow .edge{{fill:none;stroke:#8a8f98;stroke-width:1.2}} .flow .label{{font-size:11px;fill:#555}}</style>"#,
            w = layout.width,
            h = layout.height
        );
        let mut arrivals = vec![0.0_f64; self.nodes.len()];
        for edge in &self.edges {
            let (Some(a), Some(b)) = (layout.boxes.get(edge.from), layout.boxes.get(edge.to))
            else {
                continue;
            };
            // Labels of edges that end at the same node stack upwards.
            let stacked = arrivals.get(edge.to).copied().unwrap_or(0.0);
            if let Some(count) = arrivals.get_mut(edge.to) {
                *count += 1.0;
            }
            let (x1, y1) = (a.x + a.w, a.y + a.h / 2.0);
            let (x2, y2) = (b.x, b.y + b.h / 2.0);
            let mid = (x1 + x2) / 2.0;
            let _ = write!(
                out,
                r##"<path class="edge" d="M{x1:.1},{y1:.1} C{mid:.1},{y1:.1} {mid:.1},{y2:.1} {x2:.1},{y2:.1}"/><polygon points="{x2:.1},{y2:.1} {ax:.1},{ay1:.1} {ax:.1},{ay2:.1}" fill="#8a8f98"/><text class="label" x="{lx:.1}" y="{ly:.1}" text-anchor="end">{label}</text>"##,
                ax = x2 - 7.0,
                ay1 = y2 - 4.0,
                ay2 = y2 + 4.0,
                lx = x2 - 10.0,
                ly = y2 - 6.0 - 13.0 * stacked,
                label = xml(&edge.label),
            );
        }
        for (node, bx) in self.nodes.iter().zip(&layout.boxes) {
            let (fill, stroke, rx) = match node.shape {
                Shape::Start => ("#e8f0fe", "#4a6fb5", 18.0),
                Shape::Question => ("#fff7e0", "#c59a2b", 4.0),
                Shape::Answer => ("#e9f7ef", "#3c8d5a", 10.0),
            };
            let mut shape = format!(
                r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" rx="{rx}" fill="{fill}" stroke="{stroke}"/>"#,
                bx.x, bx.y, bx.w, bx.h
            );
            for (i, line) in bx.lines.iter().enumerate() {
                let _ = write!(
                    shape,
                    r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
                    bx.x + PAD,
                    bx.y + PAD + LINE * (i as f64 + 0.8),
                    xml(line)
                );
            }
            match &node.link {
                Some(link) => {
                    let href = format!("{prefix}{}", link.replace(".md", ".html"));
                    let _ = write!(out, r#"<a href="{}">{shape}</a>"#, xml(&href));
                }
                None => out.push_str(&shape),
            }
        }
        out.push_str("</svg>");
        out
    }
}

fn mermaid_text(text: &str) -> String {
    text.replace('#', "#35;")
        .replace('&', "#38;")
        .replace('"', "#quot;")
        .replace('<', "#lt;")
        .replace('>', "#gt;")
        .replace('`', "#96;")
        .replace('|', "#124;")
}

fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

const PAD: f64 = 8.0;
const LINE: f64 = 16.0;
const GAP_X: f64 = 250.0;
const GAP_Y: f64 = 18.0;
/// Characters per line in a node (a Chinese character counts as two).
const NODE_CHARS: usize = 30;

struct Box2 {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
    lines: Vec<String>,
}

struct Layout {
    boxes: Vec<Box2>,
    width: f64,
    height: f64,
}

fn width_of(text: &str) -> usize {
    text.chars().map(|c| if c.is_ascii() { 1 } else { 2 }).sum()
}

/// Splits a label into lines of at most `NODE_CHARS` columns, between
/// words, or between any two Chinese characters.
fn wrap(text: &str) -> Vec<String> {
    let mut tokens: Vec<String> = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if c == ' ' || !c.is_ascii() {
            if !word.is_empty() {
                tokens.push(std::mem::take(&mut word));
            }
            if c != ' ' {
                tokens.push(c.to_string());
            }
        } else {
            word.push(c);
        }
    }
    if !word.is_empty() {
        tokens.push(word);
    }
    let mut lines = Vec::new();
    let mut line = String::new();
    for token in tokens {
        let spaced = line.chars().last().is_some_and(|c| c.is_ascii()) && token.is_ascii();
        let extra = width_of(&token) + usize::from(spaced);
        if !line.is_empty() && width_of(&line) + extra > NODE_CHARS {
            lines.push(std::mem::take(&mut line));
        } else if spaced {
            line.push(' ');
        }
        line.push_str(&token);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

impl Layout {
    /// Left to right: depth gives the column; the first visit of a node, depth
    /// first, gives its row among the leaves; inner nodes sit beside their children.
    fn of(flow: &Flow) -> Self {
        let count = flow.nodes.len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); count];
        for edge in &flow.edges {
            if let Some(list) = children.get_mut(edge.from)
                && !list.contains(&edge.to)
            {
                list.push(edge.to);
            }
        }
        let mut row = vec![0.0_f64; count];
        let mut placed = vec![false; count];
        let mut next_row = 0.0;
        place(0, &children, &mut placed, &mut row, &mut next_row);
        // Columns by the longest way from the symptom, so every edge goes right.
        let mut depth = vec![0_usize; count];
        for _ in 0..count {
            for edge in &flow.edges {
                let from = depth.get(edge.from).copied().unwrap_or(0);
                if let Some(to) = depth.get_mut(edge.to) {
                    *to = (*to).max(from + 1);
                }
            }
        }
        let lines: Vec<Vec<String>> = flow.nodes.iter().map(|n| wrap(&n.label)).collect();
        let size = |l: &Vec<String>| {
            let w = l.iter().map(|s| width_of(s)).max().unwrap_or(1) as f64 * 7.2 + 2.0 * PAD;
            let h = l.len().max(1) as f64 * LINE + 2.0 * PAD;
            (w, h)
        };
        let max_depth = depth.iter().max().copied().unwrap_or(0);
        let mut column_width = vec![0.0_f64; max_depth + 1];
        let mut row_height: f64 = 0.0;
        for (i, l) in lines.iter().enumerate() {
            let (w, h) = size(l);
            if let Some(c) = depth.get(i).and_then(|d| column_width.get_mut(*d)) {
                *c = c.max(w);
            }
            row_height = row_height.max(h);
        }
        let mut column_x = vec![20.0_f64; max_depth + 1];
        for d in 1..=max_depth {
            let previous = column_x.get(d - 1).copied().unwrap_or(0.0)
                + column_width.get(d - 1).copied().unwrap_or(0.0);
            if let Some(x) = column_x.get_mut(d) {
                *x = previous + GAP_X;
            }
        }
        let boxes: Vec<Box2> = lines
            .into_iter()
            .enumerate()
            .map(|(i, lines)| {
                let (w, h) = size(&lines);
                let d = depth.get(i).copied().unwrap_or(0);
                let r = row.get(i).copied().unwrap_or(0.0);
                Box2 {
                    x: column_x.get(d).copied().unwrap_or(20.0),
                    y: 20.0 + r * (row_height + GAP_Y) + (row_height - h) / 2.0,
                    w,
                    h,
                    lines,
                }
            })
            .collect();
        let width = boxes.iter().map(|b| b.x + b.w).fold(0.0, f64::max) + 20.0;
        let height = boxes.iter().map(|b| b.y + b.h).fold(0.0, f64::max) + 20.0;
        Self {
            boxes,
            width,
            height,
        }
    }
}

/// Rows: leaves take the next row in the order the tree is walked; an inner
/// node sits at the middle of the children it was first to reach.
fn place(
    node: usize,
    children: &[Vec<usize>],
    placed: &mut [bool],
    row: &mut [f64],
    next_row: &mut f64,
) {
    if let Some(slot) = placed.get_mut(node) {
        *slot = true;
    }
    let mut own: Vec<f64> = Vec::new();
    for &child in children.get(node).map(Vec::as_slice).unwrap_or_default() {
        if placed.get(child).is_some_and(|p| !p) {
            place(child, children, placed, row, next_row);
            own.push(row.get(child).copied().unwrap_or(0.0));
        }
    }
    let r = if own.is_empty() {
        let r = *next_row;
        *next_row += 1.0;
        r
    } else {
        own.iter().sum::<f64>() / own.len() as f64
    };
    if let Some(slot) = row.get_mut(node) {
        *slot = r;
    }
}
