//! `extend` declarations, applied before compiling: a knowledge base adds to
//! symptoms and causes declared elsewhere (the bundled ones, say) without
//! copying them — a title or explanation replaced, checks appended to a
//! symptom, fixes appended to a cause.

use foldhash::HashMap;

use kb_dsl::ast::{ExtensionKind, Item, RuleSet, Text};
use kb_dsl::{Code, Loc, Problem};

use super::suggest;

/// The rules with every extension applied; `None` when there is none.
pub(super) fn apply(rules: &RuleSet, problems: &mut Vec<Problem>) -> Option<RuleSet> {
    rules.extensions().next()?;
    let mut merged = RuleSet {
        items: rules
            .items
            .iter()
            .filter(|item| !matches!(item, Item::Extend(_)))
            .cloned()
            .collect(),
    };
    // Who replaced what, to report two replacements of the same text.
    let mut replaced: HashMap<(String, &str), Loc> = HashMap::default();
    for extension in rules.extensions() {
        let id = &extension.id.name;
        let target = merged
            .items
            .iter_mut()
            .find_map(|item| match (item, extension.kind) {
                (Item::Symptom(symptom), ExtensionKind::Symptom) if &symptom.id.name == id => {
                    Some((
                        &mut symptom.title,
                        &mut symptom.explain,
                        Some(&mut symptom.checks),
                        None,
                    ))
                }
                (Item::Cause(cause), ExtensionKind::Cause) if &cause.id.name == id => Some((
                    &mut cause.title,
                    &mut cause.explain,
                    None,
                    Some(&mut cause.fixes),
                )),
                _ => None,
            });
        let Some((title, explain, checks, fixes)) = target else {
            let what = match extension.kind {
                ExtensionKind::Symptom => "symptom",
                ExtensionKind::Cause => "cause",
            };
            let candidates = rules
                .items
                .iter()
                .filter_map(|item| match (item, extension.kind) {
                    (Item::Symptom(s), ExtensionKind::Symptom) => Some(s.id.name.as_str()),
                    (Item::Cause(c), ExtensionKind::Cause) => Some(c.id.name.as_str()),
                    _ => None,
                });
            let mut problem = Problem::error(
                Code::UnknownExtended,
                &extension.id.loc,
                format!("`extend` names {what} `{id}`, which is not declared"),
            )
            .with_label(format!("no {what} has this id"));
            if let Some(similar) = suggest(id, candidates) {
                problem = problem.with_help(format!("did you mean `{similar}`?"));
            }
            problems.push(problem);
            continue;
        };
        let mut replace = |slot: &mut Text, new: &Text, what: &'static str| {
            if let Some(first) = replaced.get(&(id.clone(), what)) {
                problems.push(
                    Problem::error(
                        Code::ConflictingExtensions,
                        &new.en.loc,
                        format!("the {what} of `{id}` is replaced twice"),
                    )
                    .with_label("replaced again here")
                    .with_related(first, "first replaced here")
                    .with_help("keep one of the two `extend`s"),
                );
            } else {
                replaced.insert((id.clone(), what), new.en.loc.clone());
                *slot = new.clone();
            }
        };
        if let Some(new) = &extension.title {
            replace(title, new, "title");
        }
        if let Some(new) = &extension.explain {
            match explain {
                Some(slot) => replace(slot, new, "explanation"),
                None => {
                    replaced.insert((id.clone(), "explanation"), new.en.loc.clone());
                    *explain = Some(new.clone());
                }
            }
        }
        if let Some(checks) = checks {
            checks.extend(extension.checks.iter().cloned());
        }
        if let Some(fixes) = fixes {
            fixes.extend(extension.fixes.iter().cloned());
        }
    }
    Some(merged)
}
