//! Command templates: `kubectl describe pod {{ pod_name }} -n {{ namespace }}`.
//!
//! Templates come from rule files only. Fact values are data: they are
//! inserted as text, shell-quoted where needed, and never parsed as templates.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use minijinja::{Environment, UndefinedBehavior};
use serde::{Deserialize, Serialize};

use crate::text::Text;
use crate::value::Value;

/// Every template of a knowledge base, by the index [`Templates::add`]
/// gives it. Each is checked when added, and compiled again the first time
/// it is rendered: a diagnosis renders few of them.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Templates {
    sources: Arc<Vec<Text>>,
    #[serde(skip)]
    env: OnceLock<Environment<'static>>,
    /// Each template's [`Plain`] form, worked out when first rendered.
    #[serde(skip)]
    plain: OnceLock<Box<[OnceLock<Option<Plain>>]>>,
}

/// Names minijinja reads as something else than a value (`not` is an
/// operator, `self` the template).
const RESERVED: [&str; 8] = [
    "true", "false", "none", "True", "False", "None", "not", "self",
];

/// A template that only puts values into text, as nearly every command
/// does (`kubectl get pod {{ pod_name }} -n {{ pod_namespace }}`): its
/// parts, as ranges of its source. Rendering it joins them, which gives
/// what minijinja gives for a fraction of the cost.
#[derive(Debug)]
struct Plain(Vec<Part>);

#[derive(Debug)]
enum Part {
    Text(Range<usize>),
    Value(Range<usize>),
}

impl Plain {
    /// The parts of a template made of text and `{{ name }}` only; `None`
    /// for anything else (statements, filters, literals, white-space
    /// control, a trailing newline, which minijinja drops). One pass over
    /// its braces: each is text, or opens or closes a value; `{%` and `{#`
    /// open statements and comments, and a `}}` outside a value is left to
    /// minijinja.
    fn of(source: &str) -> Option<Self> {
        if source.ends_with('\n') {
            return None;
        }
        let bytes = source.as_bytes();
        let mut parts = Vec::new();
        let mut text = 0;
        let mut at = 0;
        while let Some(brace) = memchr::memchr2(b'{', b'}', bytes.get(at..)?).map(|i| at + i) {
            match (bytes.get(brace), bytes.get(brace + 1)) {
                (Some(b'{'), Some(b'{')) => {
                    let close = memchr::memchr_iter(b'}', bytes.get(brace + 2..)?)
                        .map(|i| brace + 2 + i)
                        .find(|&i| bytes.get(i + 1) == Some(&b'}'))?;
                    let inner = source.get(brace + 2..close)?;
                    let start = brace + 2 + (inner.len() - inner.trim_start().len());
                    let name = inner.trim();
                    let is_name = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                        && !RESERVED.contains(&name);
                    if !is_name {
                        return None;
                    }
                    parts.push(Part::Text(text..brace));
                    parts.push(Part::Value(start..start + name.len()));
                    text = close + 2;
                    at = close + 2;
                }
                (Some(b'{'), Some(b'%' | b'#')) | (Some(b'}'), Some(b'}')) => return None,
                _ => at = brace + 1,
            }
        }
        parts.push(Part::Text(text..source.len()));
        Some(Self(parts))
    }

    /// The names of its values, sorted, each once.
    fn names(&self, source: &str) -> Vec<String> {
        let mut names: Vec<String> = self
            .0
            .iter()
            .filter_map(|part| match part {
                Part::Value(range) => source.get(range.clone()).map(str::to_owned),
                Part::Text(_) => None,
            })
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// The text with the values put in; `None` when one is missing.
    fn render(&self, source: &str, values: &BTreeMap<&str, String>) -> Option<String> {
        let mut out = String::with_capacity(source.len() + 64);
        for part in &self.0 {
            match part {
                Part::Text(range) => out.push_str(source.get(range.clone())?),
                Part::Value(range) => out.push_str(values.get(source.get(range.clone())?)?),
            }
        }
        Some(out)
    }
}

impl Templates {
    /// Checks a template and returns its index and the names it uses. A
    /// [`Plain`] one is valid as it is, and uses the names of its values:
    /// minijinja compiling it, as it does the others, was most of the cost
    /// of compiling the commands of a knowledge base.
    pub fn add(&mut self, source: String) -> Result<(usize, Vec<String>), String> {
        let names = match Plain::of(&source) {
            Some(plain) => plain.names(&source),
            None => names_in(&source)?,
        };
        let sources = Arc::make_mut(&mut self.sources);
        sources.push(source.into());
        self.env = OnceLock::new();
        self.plain = OnceLock::new();
        Ok((sources.len() - 1, names))
    }

    /// Adds the templates of `other` after these: each of its indices
    /// moves by as many as there were.
    pub fn append(&mut self, other: Self) {
        let sources = Arc::make_mut(&mut self.sources);
        sources.extend(Arc::unwrap_or_clone(other.sources));
        self.env = OnceLock::new();
        self.plain = OnceLock::new();
    }

    /// How many templates there are.
    pub fn len(&self) -> usize {
        self.sources.len()
    }

    /// Renders a template with the given (already formatted) values.
    pub fn render(&self, index: usize, values: &BTreeMap<&str, String>) -> String {
        if let Some(text) = self.render_plain(index, values) {
            return text;
        }
        let env = self.env.get_or_init(|| {
            let mut env = environment();
            let sources = Arc::clone(&self.sources);
            env.set_loader(move |name| {
                Ok(name
                    .parse::<usize>()
                    .ok()
                    .and_then(|index| sources.get(index).map(Text::to_string)))
            });
            env
        });
        env.get_template(&index.to_string())
            .and_then(|template| template.render(values))
            .unwrap_or_else(|error| format!("<template error: {error}>"))
    }

    /// Renders a [`Plain`] template; `None` for the others, and when a value
    /// is missing (minijinja says what is wrong then).
    fn render_plain(&self, index: usize, values: &BTreeMap<&str, String>) -> Option<String> {
        let source = self.sources.get(index)?;
        let plain = self
            .plain
            .get_or_init(|| (0..self.sources.len()).map(|_| OnceLock::new()).collect());
        plain
            .get(index)?
            .get_or_init(|| Plain::of(source))
            .as_ref()?
            .render(source, values)
    }
}

/// The names a template uses, sorted, as minijinja compiles it; the
/// message says what is wrong with it.
fn names_in(source: &str) -> Result<Vec<String>, String> {
    let env = environment();
    let template = env
        .template_from_str(source)
        .map_err(|error| error.detail().unwrap_or("invalid template").to_owned())?;
    let mut names: Vec<String> = template.undeclared_variables(false).into_iter().collect();
    names.sort();
    Ok(names)
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env
}

/// A fact value as it goes into a command: shell-quoted when it holds
/// anything but plain word characters; `<name>` when it is not known.
pub(crate) fn command_text(name: &str, value: &Value<'_>) -> String {
    let text = match value {
        Value::Unknown | Value::Absent => return format!("<{name}>"),
        Value::Bool(b) => b.to_string(),
        Value::Number(_) | Value::Json(crate::json::Json::Number(_)) => match value.to_json() {
            Some(json) => json.to_string(),
            None => return format!("<{name}>"),
        },
        _ => match (value.as_str(), value.elements()) {
            (Some(s), _) => s.to_owned(),
            (None, Some(items)) => items
                .filter_map(|item| {
                    item.as_str()
                        .map(str::to_owned)
                        .or_else(|| item.to_json().map(|j| j.to_string()))
                })
                .collect::<Vec<_>>()
                .join(","),
            _ => value.to_json().map(|j| j.to_string()).unwrap_or_default(),
        },
    };
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        text
    } else {
        shlex::try_quote(&text).map_or_else(|_| format!("<{name}>"), |q| q.into_owned())
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use proptest::prelude::*;

    use super::*;

    /// A template added to a set of its own, with a value for each name it
    /// uses, and what minijinja renders of it.
    fn rendered(source: &str) -> Option<(Templates, usize, BTreeMap<String, String>, String)> {
        let mut templates = Templates::default();
        let (index, names) = templates.add(source.to_owned()).ok()?;
        let values: BTreeMap<String, String> = names
            .into_iter()
            .map(|name| (name.clone(), format!("'{name} {{{{ x }}}}'")))
            .collect();
        let expected = environment().render_str(source, &values).ok()?;
        Some((templates, index, values, expected))
    }

    fn borrowed(values: &BTreeMap<String, String>) -> BTreeMap<&str, String> {
        values
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect()
    }

    #[test]
    fn commands_that_only_put_values_in_are_joined_as_minijinja_renders_them() {
        // Whether each is joined from its parts, or left to minijinja.
        for (source, plain) in [
            (
                "kubectl describe pod {{ pod_name }} -n {{pod_namespace}}",
                true,
            ),
            ("{{ node_name }}", true),
            (
                "ssh {{ node_name }} \"crictl ps -a | grep {{ container_name }}\"",
                true,
            ),
            (
                "kubectl get events --field-selector involvedObject.name={{ pod_name }}",
                true,
            ),
            ("no values at all, { and } alone", true),
            ("{{ term_container_id | replace('docker://', '') }}", false),
            ("{% if x %}{{ x }}{% endif %}", false),
            ("{{ true }} {{ none }}", false),
            ("{{- pod_name }}", false),
            ("a line\n", false),
            ("{# a comment #}{{ x }}", false),
        ] {
            let (templates, index, values, expected) = rendered(source).unwrap();
            let values = borrowed(&values);
            let joined = templates.render_plain(index, &values);
            assert_eq!(joined, plain.then(|| expected.clone()), "{source:?}");
            assert_eq!(templates.render(index, &values), expected);
        }
        assert!(
            Templates::default().add("{{ not }}".into()).is_err(),
            "an operator, not a value"
        );
        let (templates, index, _, _) = rendered("kubectl get pod {{ pod_name }}").unwrap();
        assert_eq!(
            templates.render_plain(index, &BTreeMap::new()),
            None,
            "a missing value is minijinja's to report"
        );
        assert!(
            templates
                .render(index, &BTreeMap::new())
                .starts_with("<template error: ")
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn a_template_renders_as_minijinja_renders_it(
            pieces in prop::collection::vec(
                prop::sample::select(vec![
                    "{{ ", " }}", "{{", "}}", "{", "}", "pod_name", "ns", "_x1", "1a", "true",
                    "None", " ", "\n", "{%", "%}", "{#", "#}", "|", "upper", "-", "'", "\"", "é",
                    "kubectl get pod ", "{{-", "-}}", "\\", "{{ pod_name }}", "{{ ns }}",
                    "{{ not }}", "{{ self }}", "{{ if }}", "{{ loop }}", "{{ range }}",
                ]),
                0..12,
            )
        ) {
            let source = pieces.concat();
            if let Some(plain) = Plain::of(&source) {
                prop_assert_eq!(Ok(plain.names(&source)), names_in(&source));
            }
            if let Some((templates, index, values, expected)) = rendered(&source) {
                prop_assert_eq!(templates.render(index, &borrowed(&values)), expected);
            }
        }
    }
}
