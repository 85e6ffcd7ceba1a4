//! Command templates: `kubectl describe pod {{ pod_name }} -n {{ namespace }}`.
//!
//! Templates come from rule files only. Fact values are data: they are
//! inserted as text, shell-quoted where needed, and never parsed as templates.

use std::collections::BTreeMap;

use minijinja::{Environment, UndefinedBehavior};

use crate::value::Value;

/// Every template of a knowledge base, compiled once.
#[derive(Debug)]
pub(crate) struct Templates {
    env: Environment<'static>,
}

impl Templates {
    pub fn new() -> Self {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
        Self { env }
    }

    /// Compiles a template and returns the names it uses.
    pub fn add(&mut self, key: String, source: String) -> Result<Vec<String>, String> {
        self.env
            .add_template_owned(key.clone(), source)
            .map_err(|error| error.detail().unwrap_or("invalid template").to_owned())?;
        let template = self
            .env
            .get_template(&key)
            .map_err(|error| error.to_string())?;
        let mut names: Vec<String> = template.undeclared_variables(false).into_iter().collect();
        names.sort();
        Ok(names)
    }

    /// Renders a template with the given (already formatted) values.
    pub fn render(&self, key: &str, values: &BTreeMap<&str, String>) -> String {
        self.env
            .get_template(key)
            .and_then(|template| template.render(values))
            .unwrap_or_else(|error| format!("<template error: {error}>"))
    }
}

/// A fact value as it goes into a command: shell-quoted when it holds
/// anything but plain word characters; `<name>` when it is not known.
pub(crate) fn command_text(name: &str, value: &Value<'_>) -> String {
    let text = match value {
        Value::Unknown | Value::Absent => return format!("<{name}>"),
        Value::Bool(b) => b.to_string(),
        Value::Number(_) | Value::Json(serde_json::Value::Number(_)) => match value.to_json() {
            Some(json) => json.to_string(),
            None => return format!("<{name}>"),
        },
        _ => match (value.as_str(), value.elements()) {
            (Some(s), _) => s.to_owned(),
            (None, Some(items)) => items
                .iter()
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
