//! Command templates: `kubectl describe pod {{ pod_name }} -n {{ namespace }}`.
//!
//! Templates come from rule files only. Fact values are data: they are
//! inserted as text, shell-quoted where needed, and never parsed as templates.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use minijinja::{Environment, UndefinedBehavior};
use serde::{Deserialize, Serialize};

use crate::value::Value;

/// Every template of a knowledge base, by the index [`Templates::add`]
/// gives it. Each is checked when added, and compiled again the first time
/// it is rendered: a diagnosis renders few of them.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Templates {
    sources: Arc<Vec<String>>,
    #[serde(skip)]
    env: OnceLock<Environment<'static>>,
}

impl Templates {
    /// Checks a template and returns its index and the names it uses.
    pub fn add(&mut self, source: String) -> Result<(usize, Vec<String>), String> {
        let env = environment();
        let template = env
            .template_from_str(&source)
            .map_err(|error| error.detail().unwrap_or("invalid template").to_owned())?;
        let mut names: Vec<String> = template.undeclared_variables(false).into_iter().collect();
        names.sort();
        let sources = Arc::make_mut(&mut self.sources);
        sources.push(source);
        self.env = OnceLock::new();
        Ok((sources.len() - 1, names))
    }

    /// How many templates there are.
    pub fn len(&self) -> usize {
        self.sources.len()
    }

    /// Renders a template with the given (already formatted) values.
    pub fn render(&self, index: usize, values: &BTreeMap<&str, String>) -> String {
        let env = self.env.get_or_init(|| {
            let mut env = environment();
            let sources = Arc::clone(&self.sources);
            env.set_loader(move |name| {
                Ok(name
                    .parse::<usize>()
                    .ok()
                    .and_then(|index| sources.get(index).cloned()))
            });
            env
        });
        env.get_template(&index.to_string())
            .and_then(|template| template.render(values))
            .unwrap_or_else(|error| format!("<template error: {error}>"))
    }
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
