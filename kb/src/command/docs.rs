//! `kb docs`: the knowledge base as runbooks.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use kb_docs_gen::{Book, Example, Page, Templates};
use kb_engine::Lang;
use kb_engine::diagnosis::FactState;

use crate::exit::Exit;
use crate::knowledge::Loaded;
use crate::report;
use crate::rule_tests;

/// Arguments of `kb docs`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The folder to write: a new or empty one, or a site `kb docs` wrote before, which is
    /// replaced as a whole once every page is ready.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Write a static HTML site instead of Markdown.
    #[arg(long)]
    pub html: bool,
    /// A folder of templates replacing the built-in ones of the same name
    /// (index.md.j2, symptom.md.j2, cause.md.j2, facts.md.j2, summary.md.j2,
    /// macros.md.j2, incident.md.j2, layout.html.j2).
    #[arg(long, value_name = "DIR")]
    pub templates: Option<PathBuf>,
}

/// Runs `kb docs`; `lang` is the one language asked for, or both.
pub fn run(args: &Args, loaded: &Loaded, lang: Option<Lang>) -> Exit {
    match generate(args, loaded, lang).and_then(|pages| {
        kb_docs_gen::write_site(&args.out, &pages).map_err(|e| e.to_string())?;
        Ok(pages.len())
    }) {
        Ok(count) => {
            let said = writeln!(
                std::io::stdout().lock(),
                "wrote {count} files to {}",
                args.out.display()
            );
            crate::output::written(said, Exit::Ok)
        }
        Err(message) => {
            report::input_error(&message);
            Exit::BadInput
        }
    }
}

/// Every page of the site, in memory.
pub fn generate(args: &Args, loaded: &Loaded, lang: Option<Lang>) -> Result<Vec<Page>, String> {
    let templates = match &args.templates {
        Some(dir) => Templates::with_overrides(&read_templates(dir)?).map_err(|e| e.to_string())?,
        None => Templates::builtin(),
    };
    let title = loaded
        .manifest
        .as_ref()
        .and_then(|m| m.docs.title.clone().or_else(|| Some(m.name.clone())))
        .unwrap_or_else(|| String::from("Runbooks"));
    let examples = examples(loaded)?;
    let langs = match lang {
        Some(lang) => vec![lang],
        None => vec![Lang::En, Lang::Zh],
    };
    let books: Vec<Book> = langs
        .iter()
        .map(|l| Book::new(&loaded.kb, &title, *l, &examples))
        .collect();
    let mut markdown = Vec::new();
    for book in &books {
        markdown.extend(templates.markdown(book).map_err(|e| e.to_string())?);
    }
    if args.html {
        return kb_docs_gen::html(&templates, &books, &markdown).map_err(|e| e.to_string());
    }
    let mut readme = format!("# {title}\n\n");
    for book in &books {
        readme.push_str(&format!(
            "- [{}]({}/index.md)\n",
            language_name(book.lang),
            book.lang
        ));
    }
    markdown.push(Page {
        path: String::from("README.md"),
        content: readme,
    });
    Ok(markdown)
}

fn language_name(code: &str) -> &'static str {
    if code == "zh" { "中文" } else { "English" }
}

/// Template files of a folder, by name.
fn read_templates(dir: &std::path::Path) -> Result<BTreeMap<String, String>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read `{}`: {e}", dir.display()))?;
    let mut found = BTreeMap::new();
    for entry in entries {
        let path = entry
            .map_err(|e| format!("cannot read `{}`: {e}", dir.display()))?
            .path();
        if path.is_file() {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = crate::read::text_file(&path)?;
            found.insert(name, text);
        }
    }
    Ok(found)
}

/// Values the knowledge base's own tests saw when confirming each cause:
/// the known facts of the conditions after the symptom's, up to three.
/// An object longer than people are shown (a container's whole status, say)
/// is left out: the values a condition compares in it say more.
fn examples(loaded: &Loaded) -> Result<BTreeMap<String, Vec<Example>>, String> {
    let mut examples: BTreeMap<String, Vec<Example>> = BTreeMap::new();
    for outcome in rule_tests::run(loaded, None).map_err(|e| e.to_string())? {
        let Some(diagnosis) = outcome.diagnosis else {
            continue;
        };
        for cause in diagnosis.confirmed() {
            let seen = examples.entry(cause.id.clone()).or_default();
            for evidence in cause.evidence.iter().skip(1) {
                for fact in evidence
                    .facts
                    .iter()
                    .filter(|f| f.state == FactState::Known)
                {
                    let Some(value) = &fact.value else { continue };
                    let text = value.to_string();
                    if value.is_object() && kb_docs_gen::clip(&text) != text {
                        continue;
                    }
                    let example = Example {
                        fact: fact.name.clone(),
                        value: text,
                    };
                    if seen.len() < 3 && !seen.contains(&example) {
                        seen.push(example);
                    }
                }
            }
        }
    }
    Ok(examples)
}
