//! The Markdown pages as a static HTML site that opens from the file system:
//! relative links, navigation, styles inline, decision trees as inline SVG.

use minijinja::context;
use pulldown_cmark::{CodeBlockKind, CowStr, Event, Options, Parser, Tag, TagEnd};
use serde::Serialize;

use crate::templates::Templates;
use crate::view::Book;
use crate::{Error, Page};

#[derive(Serialize)]
struct NavItem {
    title: String,
    path: String,
}

/// Renders the Markdown pages of `books` (as [`Templates::markdown`] made
/// them) into HTML pages, with an `index.html` at the root for the first book.
pub fn html(templates: &Templates, books: &[Book], markdown: &[Page]) -> Result<Vec<Page>, Error> {
    let mut pages = Vec::new();
    for page in markdown {
        let Some((lang, relative)) = page.path.split_once('/') else {
            continue;
        };
        let Some(book) = books.iter().find(|b| b.lang == lang) else {
            continue;
        };
        if !relative.ends_with(".md") || relative == "SUMMARY.md" {
            continue;
        }
        let depth = relative.matches('/').count();
        let root = "../".repeat(depth);
        let here = to_html_path(relative);
        let flow = book
            .symptoms
            .iter()
            .find(|s| s.path == relative)
            .map(|s| s.flow.to_svg(&root));
        let title = page_title(book, relative);
        let nav = |items: Vec<(&String, &String)>| -> Vec<NavItem> {
            items
                .into_iter()
                .map(|(title, path)| NavItem {
                    title: title.clone(),
                    path: to_html_path(path),
                })
                .collect()
        };
        let context = context! {
            lang,
            title,
            book_title => book.title,
            words => book.words,
            root,
            here,
            other => format!("{root}../{}/{here}", book.other_lang),
            symptoms => nav(book.symptoms.iter().map(|s| (&s.title, &s.path)).collect()),
            causes => nav(book.causes.iter().map(|c| (&c.title, &c.path)).collect()),
            body => minijinja::Value::from_safe_string(body(&page.content, flow.as_deref())),
        };
        pages.push(Page {
            path: format!("{lang}/{here}"),
            content: templates.layout(context)?,
        });
    }
    if let Some(first) = books.first() {
        pages.push(Page {
            path: String::from("index.html"),
            content: format!(
                "<!DOCTYPE html>\n<meta charset=\"utf-8\">\n<meta http-equiv=\"refresh\" content=\"0; url={0}/index.html\">\n<a href=\"{0}/index.html\">{0}/index.html</a>\n",
                first.lang
            ),
        });
    }
    Ok(pages)
}

fn page_title(book: &Book, relative: &str) -> String {
    if let Some(symptom) = book.symptoms.iter().find(|s| s.path == relative) {
        return symptom.title.clone();
    }
    if let Some(cause) = book.causes.iter().find(|c| c.path == relative) {
        return cause.title.clone();
    }
    if relative == "facts.md" {
        return book.words.facts.to_owned();
    }
    book.words.index.to_owned()
}

/// `causes/x.md#a` → `causes/x.html#a`; other links unchanged.
fn to_html_path(link: &str) -> String {
    let (path, fragment) = match link.split_once('#') {
        Some((path, fragment)) => (path, Some(fragment)),
        None => (link, None),
    };
    let external = path.contains("://") || path.starts_with('/') || path.starts_with("mailto:");
    let path = match path.strip_suffix(".md") {
        Some(stem) if !external => format!("{stem}.html"),
        _ => path.to_owned(),
    };
    match fragment {
        Some(fragment) => format!("{path}#{fragment}"),
        None => path,
    }
}

/// One page's Markdown as HTML; a `mermaid` block becomes the page's SVG tree.
fn body(markdown: &str, flow: Option<&str>) -> String {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let mut in_mermaid = false;
    let events = Parser::new_ext(markdown, options).filter_map(|event| match event {
        Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(lang))) if &*lang == "mermaid" => {
            in_mermaid = true;
            Some(Event::Html(CowStr::from(format!(
                "<div class=\"diagram\">{}</div>",
                flow.unwrap_or_default()
            ))))
        }
        Event::End(TagEnd::CodeBlock) if in_mermaid => {
            in_mermaid = false;
            None
        }
        _ if in_mermaid => None,
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Some(Event::Start(Tag::Link {
            link_type,
            dest_url: CowStr::from(to_html_path(&dest_url)),
            title,
            id,
        })),
        other => Some(other),
    });
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events);
    out
}
