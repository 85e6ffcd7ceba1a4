//! Values the rules read in another shape than the input gives them: a
//! field of a string, the elements of an object. What is read there is
//! absent or unknown, and a diagnosis resting on it must say why, naming
//! the place in the input.

use std::collections::HashSet;
use std::fmt::Write;

use crate::json::Json;
use crate::value::Value;

/// What the rules read of a value the input gives in another shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Read<'a> {
    /// A field, of a string, number or bool.
    Field(&'a str),
    /// Elements, of something not a list.
    List,
}

/// One value read in another shape.
#[derive(Debug, Clone)]
pub(crate) struct Misread<'a> {
    /// What the input gives.
    pub found: Value<'a>,
    /// The value in the input, when it is known: a number or a bool read
    /// out of a list is no longer tied to its place.
    pub node: Option<&'a Json<'a>>,
    pub read: Read<'a>,
}

/// How many misread values are told one by one; the rest are counted.
const TOLD: usize = 3;
/// How many of the fields read of a value are named.
const FIELDS_NAMED: usize = 3;

/// The values of one evaluation read in another shape, each told once with
/// all that was read of it.
#[derive(Debug, Default)]
pub(crate) struct Misreads<'a> {
    told: Vec<Told<'a>>,
    /// The others, each once: by address, or by kind when it has no place.
    more: HashSet<(usize, &'static str)>,
}

#[derive(Debug)]
struct Told<'a> {
    found: Value<'a>,
    node: Option<&'a Json<'a>>,
    fields: Vec<&'a str>,
    list: bool,
}

impl<'a> Misreads<'a> {
    pub fn add(&mut self, misread: Misread<'a>) {
        let kind = misread.found.kind();
        let same = |told: &Told<'a>| {
            told.found.kind() == kind
                && match (told.node, misread.node) {
                    (Some(a), Some(b)) => std::ptr::eq(a, b),
                    (None, None) => true,
                    _ => false,
                }
        };
        // A value read out of a list has no place; one of the same kind
        // with a place may well be it.
        let placed = |told: &Told<'a>| {
            told.found.kind() == kind
                && match misread.read {
                    Read::List => told.list,
                    Read::Field(name) => told.fields.contains(&name),
                }
        };
        if misread.node.is_none() && self.told.iter().any(placed) {
            return;
        }
        let told = match self.told.iter().position(same) {
            Some(at) => at,
            None if self.told.len() < TOLD => {
                self.told.push(Told {
                    found: misread.found,
                    node: misread.node,
                    fields: Vec::new(),
                    list: false,
                });
                self.told.len() - 1
            }
            None => {
                let address = misread
                    .node
                    .map_or(0, |node| std::ptr::from_ref(node).addr());
                self.more.insert((address, kind));
                return;
            }
        };
        let Some(told) = self.told.get_mut(told) else {
            return;
        };
        match misread.read {
            Read::List => told.list = true,
            Read::Field(name) if !told.fields.contains(&name) => told.fields.push(name),
            Read::Field(_) => {}
        }
    }

    /// The warnings, each naming its place in `roots` (the input's
    /// documents by name) where it can be found there.
    pub fn warnings<'r>(
        &self,
        roots: impl Iterator<Item = (&'r str, &'a Json<'a>)> + Clone,
    ) -> Vec<String>
    where
        'a: 'r,
    {
        let mut warnings: Vec<String> = self
            .told
            .iter()
            .map(|told| {
                let place = told.node.and_then(|node| {
                    roots.clone().find_map(|(name, root)| {
                        let mut path = String::from(name);
                        find(root, node, &mut path).then_some(path)
                    })
                });
                let mut read = Vec::new();
                if told.list {
                    read.push(String::from("a list"));
                }
                if !told.fields.is_empty() {
                    let mut fields: Vec<String> = told
                        .fields
                        .iter()
                        .take(FIELDS_NAMED)
                        .map(|name| format!("`{name}`"))
                        .collect();
                    if told.fields.len() > FIELDS_NAMED {
                        fields.push(String::from("…"));
                    }
                    let s = if told.fields.len() == 1 { "" } else { "s" };
                    read.push(format!("its field{s} {}", fields.join(", ")));
                }
                let (found, read) = (shown(&told.found), read.join(" and "));
                match place {
                    Some(path) => format!("`{path}` is {found}, where the rules read {read}"),
                    None => format!("the input has {found} where the rules read {read}"),
                }
            })
            .collect();
        let more = self.more.len();
        if more > 0 {
            let s = if more == 1 { "" } else { "s" };
            warnings.push(format!(
                "and in {more} more place{s}, the input is not shaped as the rules read it"
            ));
        }
        warnings
    }
}

/// How many characters of a string found are shown.
const SHOWN_CHARS: usize = 40;

/// What was found, with its value when it is short: the place named is
/// where kb reads it (a subject's events are those about it, oldest first),
/// and the value tells which it is in the input.
fn shown(found: &Value<'_>) -> String {
    let kind = found.kind();
    if let Some(text) = found.as_str() {
        let mut chars = text.chars();
        let mut head: String = chars.by_ref().take(SHOWN_CHARS).collect();
        if chars.next().is_some() {
            head.push('…');
        }
        return format!("{kind} ({})", serde_json::Value::from(head));
    }
    match found.to_json() {
        Some(value @ (serde_json::Value::Number(_) | serde_json::Value::Bool(_))) => {
            format!("{kind} ({value})")
        }
        _ => String::from(kind),
    }
}

/// Whether `node` is `json` or inside it, its path then appended to `path`.
fn find(json: &Json<'_>, node: &Json<'_>, path: &mut String) -> bool {
    if std::ptr::eq(json, node) {
        return true;
    }
    let len = path.len();
    let found = match json {
        Json::Object(object) => object.iter().any(|(key, value)| {
            path.truncate(len);
            push_key(path, key);
            find(value, node, path)
        }),
        Json::Array(items) => items.iter().enumerate().any(|(i, item)| {
            path.truncate(len);
            let _ = write!(path, "[{i}]");
            find(item, node, path)
        }),
        _ => false,
    };
    if !found {
        path.truncate(len);
    }
    found
}

/// `.key` after a path, or `["key"]` when it is not an identifier, as the
/// rules write it.
fn push_key(path: &mut String, key: &str) {
    let identifier = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if identifier {
        path.push('.');
        path.push_str(key);
    } else {
        let _ = write!(path, "[{}]", serde_json::Value::from(key));
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::indexing_slicing, reason = "tests")]

    use super::*;

    #[test]
    fn places_past_the_first_are_counted_once_each_however_often_read() {
        let input = Json::from(serde_json::json!({"pod": ["a", "b", "c", "d", "e"]}));
        let Json::Object(object) = &input else {
            unreachable!()
        };
        let Some(Json::Array(items)) = object.get("pod") else {
            unreachable!()
        };
        let mut misreads = Misreads::default();
        for name in ["name", "uid", "name"] {
            for item in items {
                misreads.add(Misread {
                    found: Value::Json(item),
                    node: Some(item),
                    read: Read::Field(name),
                });
            }
        }
        let warnings = misreads.warnings([("input", &input)].into_iter());
        assert_eq!(warnings.len(), 4, "{warnings:?}");
        assert_eq!(
            warnings[0],
            "`input.pod[0]` is a string (\"a\"), where the rules read its fields `name`, `uid`"
        );
        assert_eq!(
            warnings[3],
            "and in 2 more places, the input is not shaped as the rules read it"
        );
    }
}
