//! The runbooks of the bundled knowledge base: every page exists in both
//! languages, every relative link resolves, and the published copy in
//! docs/runbooks is what the rules generate today.

#![expect(clippy::unwrap_used, reason = "tests")]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use kb::command::docs::{Args, generate};
use kb::knowledge::Loaded;
use kb_docs_gen::Page;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn site(html: bool) -> (Loaded, Vec<Page>) {
    let loaded = Loaded::from_dir(&repo().join("kb/rules"))
        .map_err(|e| format!("{e:?}"))
        .unwrap();
    let args = Args {
        out: PathBuf::from("unused"),
        html,
        templates: None,
    };
    let pages = generate(&args, &loaded, None).unwrap();
    (loaded, pages)
}

/// `dir/page` + `../x#a` → (`x`, `a`), `/`-separated, relative to the site.
fn resolve(page: &str, link: &str) -> (String, Option<String>) {
    let (path, fragment) = match link.split_once('#') {
        Some((path, fragment)) => (path, Some(fragment.to_owned())),
        None => (link, None),
    };
    if path.is_empty() {
        return (page.to_owned(), fragment);
    }
    let mut parts: Vec<&str> = page.split('/').collect();
    parts.pop();
    for part in path.split('/') {
        match part {
            ".." => {
                assert!(
                    parts.pop().is_some(),
                    "`{link}` in `{page}` leaves the site"
                );
            }
            "." => {}
            part => parts.push(part),
        }
    }
    (parts.join("/"), fragment)
}

/// Every link target of a page: Markdown `](…)` and HTML `href="…"`.
fn links(content: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (open, close) in [("](", ')'), ("href=\"", '"')] {
        let mut rest = content;
        while let Some(start) = rest.find(open) {
            let after = rest.get(start + open.len()..).unwrap_or_default();
            let end = after.find(close).unwrap_or(after.len());
            found.push(after.get(..end).unwrap_or_default().to_owned());
            rest = after.get(end..).unwrap_or_default();
        }
    }
    found
        .into_iter()
        .map(|l| {
            l.replace("&#x2f;", "/")
                .replace("&#x27;", "'")
                .replace("&quot;", "\"")
                .replace("&amp;", "&")
        })
        .filter(|l| !l.starts_with("http://") && !l.starts_with("https://") && !l.contains(' '))
        .collect()
}

fn check_links(pages: &[Page]) {
    let by_path: BTreeMap<&str, &str> = pages
        .iter()
        .map(|p| (p.path.as_str(), p.content.as_str()))
        .collect();
    let mut broken = Vec::new();
    for page in pages
        .iter()
        .filter(|p| p.path.ends_with(".md") || p.path.ends_with(".html"))
    {
        for link in links(&page.content) {
            let (target, fragment) = resolve(&page.path, &link);
            match by_path.get(target.as_str()) {
                None => broken.push(format!(
                    "{}: `{link}` → `{target}` does not exist",
                    page.path
                )),
                Some(content) => {
                    if let Some(fragment) = fragment
                        && !content.contains(&format!("id=\"{fragment}\""))
                    {
                        broken.push(format!(
                            "{}: `{link}` → no anchor `{fragment}` in `{target}`",
                            page.path
                        ));
                    }
                }
            }
        }
    }
    assert!(
        broken.is_empty(),
        "{} broken links:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn every_relative_link_of_the_markdown_resolves() {
    let (_, pages) = site(false);
    check_links(&pages);
}

#[test]
fn every_relative_link_of_the_html_site_resolves() {
    let (_, pages) = site(true);
    check_links(&pages);
}

#[test]
fn every_symptom_and_cause_has_its_page_in_both_languages() {
    let (loaded, pages) = site(false);
    let paths: BTreeSet<&str> = pages.iter().map(|p| p.path.as_str()).collect();
    for lang in ["en", "zh"] {
        for symptom in &loaded.kb.symptoms {
            let path = format!("{lang}/{}", kb_docs_gen::paths::symptom(&symptom.id));
            assert!(paths.contains(path.as_str()), "no page {path}");
        }
        for cause in &loaded.kb.causes {
            let path = format!("{lang}/{}", kb_docs_gen::paths::cause(&cause.id));
            assert!(paths.contains(path.as_str()), "no page {path}");
        }
        for page in ["SUMMARY.md", "index.md", "facts.md", "book.toml"] {
            assert!(
                paths.contains(format!("{lang}/{page}").as_str()),
                "no {lang}/{page}"
            );
        }
    }
}

#[test]
fn the_published_runbooks_are_up_to_date() {
    let (_, pages) = site(false);
    let published = repo().join("docs/runbooks");
    let mut stale = Vec::new();
    for page in &pages {
        match std::fs::read_to_string(published.join(&page.path)) {
            Ok(content) if content == page.content => {}
            Ok(_) => stale.push(format!("changed: {}", page.path)),
            Err(_) => stale.push(format!("missing: {}", page.path)),
        }
    }
    let mut expected: BTreeSet<PathBuf> = pages.iter().map(|p| published.join(&p.path)).collect();
    expected.insert(published.join(kb_docs_gen::MARKER));
    for entry in walk(&published) {
        if !expected.contains(&entry) {
            stale.push(format!("not generated any more: {}", entry.display()));
        }
    }
    assert!(
        stale.is_empty(),
        "docs/runbooks is stale; regenerate it with `cargo run -p kb -- docs --out docs/runbooks`:\n{}",
        stale.join("\n")
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return files;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "book") {
                continue;
            }
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn no_page_path_leaves_the_site() {
    let (_, pages) = site(true);
    for page in pages {
        assert!(
            Path::new(&page.path)
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_))),
            "{}",
            page.path
        );
    }
}
