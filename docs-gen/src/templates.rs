//! The Markdown templates: built in, each overridable by a file of the same name.

use std::collections::BTreeMap;

use minijinja::{Environment, context};
use serde::Serialize;

use crate::view::{Book, Words};
use crate::{Error, Page};

/// The built-in templates, by name.
pub const BUILTIN: &[(&str, &str)] = &[
    ("macros.md.j2", include_str!("../templates/macros.md.j2")),
    ("index.md.j2", include_str!("../templates/index.md.j2")),
    ("symptom.md.j2", include_str!("../templates/symptom.md.j2")),
    ("cause.md.j2", include_str!("../templates/cause.md.j2")),
    ("facts.md.j2", include_str!("../templates/facts.md.j2")),
    ("summary.md.j2", include_str!("../templates/summary.md.j2")),
    (
        "incident.md.j2",
        include_str!("../templates/incident.md.j2"),
    ),
    (
        "layout.html.j2",
        include_str!("../templates/layout.html.j2"),
    ),
];

/// A set of compiled templates.
#[derive(Debug)]
pub struct Templates {
    env: Environment<'static>,
}

impl Templates {
    /// The built-in templates (a test guarantees they compile).
    pub fn builtin() -> Self {
        Self::with_overrides(&BTreeMap::new()).unwrap_or_else(|_| Self { env: environment() })
    }

    /// The built-in templates, with some replaced: name → source.
    pub fn with_overrides(overrides: &BTreeMap<String, String>) -> Result<Self, Error> {
        let mut env = environment();
        for (name, source) in BUILTIN {
            let source = overrides
                .get(*name)
                .cloned()
                .unwrap_or_else(|| (*source).to_owned());
            env.add_template_owned(*name, source)
                .map_err(|e| Error::Template(format!("{name}: {e}")))?;
        }
        if let Some(unknown) = overrides
            .keys()
            .find(|k| !BUILTIN.iter().any(|(n, _)| n == k))
        {
            let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
            return Err(Error::Template(format!(
                "`{unknown}` overrides no template; the templates are {}",
                names.join(", ")
            )));
        }
        Ok(Self { env })
    }

    fn render(&self, name: &str, context: minijinja::Value) -> Result<String, Error> {
        let template = self
            .env
            .get_template(name)
            .map_err(|e| Error::Template(format!("{name}: {e}")))?;
        let text = template
            .render(context)
            .map_err(|e| Error::Template(format!("{name}: {e}")))?;
        Ok(format!("{}\n", text.trim_end()))
    }

    /// The Markdown pages of one language's book, under `LANG/`.
    pub fn markdown(&self, book: &Book) -> Result<Vec<Page>, Error> {
        let lang = book.lang;
        let page = |path: &str, content: String| Page {
            path: format!("{lang}/{path}"),
            content,
        };
        let other = |path: &str, root: &str| format!("{root}../{}/{path}", book.other_lang);
        let mut pages = vec![
            page("book.toml", book_toml(book)),
            page(
                "SUMMARY.md",
                self.render("summary.md.j2", context! { book })?,
            ),
            page(
                "index.md",
                self.render(
                    "index.md.j2",
                    context! { book, root => "", other => other("index.md", "") },
                )?,
            ),
            page(
                "facts.md",
                self.render(
                    "facts.md.j2",
                    context! { book, root => "", other => other("facts.md", "") },
                )?,
            ),
        ];
        for symptom in &book.symptoms {
            let context =
                context! { book, symptom, root => "../", other => other(&symptom.path, "../") };
            pages.push(page(&symptom.path, self.render("symptom.md.j2", context)?));
        }
        for cause in &book.causes {
            let context =
                context! { book, cause, root => "../", other => other(&cause.path, "../") };
            pages.push(page(&cause.path, self.render("cause.md.j2", context)?));
        }
        Ok(pages)
    }

    /// An incident note for one diagnosis (the JSON report of `kb eval`),
    /// styled like the runbook pages.
    pub fn incident(
        &self,
        report: &impl Serialize,
        lang: kb_engine::Lang,
    ) -> Result<String, Error> {
        let context =
            context! { words => Words::of(lang), ..minijinja::Value::from_serialize(report) };
        self.render("incident.md.j2", context)
    }

    /// Wraps an HTML page body in the site layout.
    pub(crate) fn layout(&self, context: minijinja::Value) -> Result<String, Error> {
        self.render("layout.html.j2", context)
    }
}

/// An mdBook configuration for one language's folder; books build into
/// `book/LANG` beside the folders, so links between languages keep working.
fn book_toml(book: &Book) -> String {
    let title = book.title.replace('\\', "\\\\").replace('"', "\\\"");
    format!(
        "[book]\ntitle = \"{title}\"\nlanguage = \"{lang}\"\nsrc = \".\"\n\n[build]\nbuild-dir = \"../book/{lang}\"\ncreate-missing = false\n",
        lang = book.lang
    )
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_auto_escape_callback(|name| {
        if name.ends_with(".html.j2") {
            minijinja::AutoEscape::Html
        } else {
            minijinja::AutoEscape::None
        }
    });
    env.add_filter("md", escape_markdown);
    env.add_filter("code", code_span);
    env.add_filter("fence", code_block);
    env.add_filter("clip", |s: String| clip(&s).into_owned());
    env.add_filter("cell", |s: String| s.replace('|', "\\|").replace('\n', " "));
    env.add_filter("inline", |s: String| s.replace('\n', " "));
    env.add_filter("anchor", |s: String| s.replace('.', "-"));
    env
}

/// Text from rule files as Markdown that shows it as written: HTML and the
/// characters Markdown would read as markup are escaped, except inside the
/// author's own `code spans`, which are kept as they are.
fn escape_markdown(text: String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(start) = rest.find('`') {
        let run = rest
            .get(start..)
            .unwrap_or_default()
            .chars()
            .take_while(|c| *c == '`')
            .count();
        let fence = "`".repeat(run);
        let after = rest.get(start + run..).unwrap_or_default();
        let Some(end) = after.find(&fence) else { break };
        escape_into(&mut out, rest.get(..start).unwrap_or_default());
        out.push_str(rest.get(start..start + run + end + run).unwrap_or_default());
        rest = after.get(end + run..).unwrap_or_default();
    }
    escape_into(&mut out, rest);
    out
}

fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '*' | '_' | '[' | ']' | '|' | '`' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// How many characters of a value from the input are shown to people.
const SHOWN_CHARS: usize = 200;

/// A value from the input as people are shown it: its first 200 characters
/// and `…`; a list of five thousand containers' states is for `--format json`.
pub fn clip(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((end, _)) => format!("{}…", text.get(..end).unwrap_or_default()).into(),
        None => text.into(),
    }
}

/// A code span whose fence is longer than any backtick run inside it.
fn code_span(text: String) -> String {
    let text = text.replace('\n', " ");
    let fence = "`".repeat(longest_backtick_run(&text) + 1);
    if text.starts_with('`') || text.ends_with('`') {
        format!("{fence} {text} {fence}")
    } else {
        format!("{fence}{text}{fence}")
    }
}

/// A shell code block whose fence is longer than any backtick run inside it.
fn code_block(text: String) -> String {
    let fence = "`".repeat(longest_backtick_run(&text).max(2) + 1);
    format!("{fence}sh\n{text}\n{fence}")
}
