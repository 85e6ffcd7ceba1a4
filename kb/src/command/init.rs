//! `kb init`: create a knowledge base project.
//!
//! The files are templates embedded in the binary (`kb/templates/init/`),
//! filled in with the folder's name. An existing folder is fine (a
//! repository with its README and `.git`, say), unless it holds a
//! `kb.toml` already; a user's files are never overwritten, and one in the
//! place of a template (a README) is kept.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::exit::Exit;
use crate::report;

/// Arguments of `kb init`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The folder to create, or to add the project to: files already there
    /// are kept. Its name names the knowledge base.
    pub dir: PathBuf,
}

/// The files of a new project: where each goes, and its template.
const FILES: &[(&str, &str)] = &[
    ("kb.toml", include_str!("../../templates/init/kb.toml")),
    (
        "rules/example.kb",
        include_str!("../../templates/init/rules/example.kb"),
    ),
    ("README.md", include_str!("../../templates/init/README.md")),
    (
        ".github/workflows/kb.yml",
        include_str!("../../templates/init/github-workflow.yml"),
    ),
];

/// Runs `kb init`.
pub fn run(args: &Args) -> Exit {
    let dir = &args.dir;
    if let Err(message) = prepare(dir) {
        report::input_error(&message);
        return Exit::BadInput;
    }
    let name = project_name(dir);
    let mut out = std::io::stdout().lock();
    let mut said = writeln!(out, "created knowledge base `{name}` in {}:", dir.display());
    for (path, template) in FILES {
        let target = dir.join(path);
        if target.symlink_metadata().is_ok() {
            said =
                said.and_then(|()| writeln!(out, "  {} (there already, kept)", target.display()));
            continue;
        }
        if let Err(error) = write_new(&target, &render(path, template, &name)) {
            report::input_error(&format!("cannot write `{}`: {error}", target.display()));
            return Exit::BadInput;
        }
        said = said.and_then(|()| writeln!(out, "  {}", target.display()));
    }
    let shown = dir.display();
    let said = said.and_then(|()| {
        writeln!(
            out,
            "\nnext:\n  kb check {shown}\n  kb test {shown} --coverage\n  kb --kb {shown} explain container-exited"
        )
    });
    crate::output::written(said, Exit::Ok)
}

/// Makes sure the folder exists and is not a knowledge base already.
fn prepare(dir: &Path) -> Result<(), String> {
    if dir.exists() {
        if !dir.is_dir() {
            return Err(format!("`{}` exists and is not a folder", dir.display()));
        }
        let manifest = dir.join("kb.toml");
        if manifest.symlink_metadata().is_ok() {
            return Err(format!(
                "`{}` is a knowledge base already (it has `kb.toml`); kb init never overwrites files",
                dir.display()
            ));
        }
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))
}

/// The knowledge base's name: the folder's name.
fn project_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .or_else(|| {
            std::fs::canonicalize(dir)
                .ok()
                .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        })
        .unwrap_or_else(|| String::from("my-knowledge-base"))
}

/// A template filled in: `{{NAME}}`, `{{TITLE}}` (TOML strings in kb.toml)
/// and `{{KB_VERSION}}`. Rule files are copied as they are: their `{{ … }}`
/// are command templates over facts.
fn render(path: &str, template: &str, name: &str) -> String {
    if path.ends_with(".kb") {
        return template.to_owned();
    }
    let title = format!("{name} runbooks");
    let (name, title) = if path == "kb.toml" {
        (toml_string(name), toml_string(&title))
    } else {
        (name.to_owned(), title)
    };
    template
        .replace("{{NAME}}", &name)
        .replace("{{TITLE}}", &title)
        .replace("{{KB_VERSION}}", env!("CARGO_PKG_VERSION"))
}

/// A TOML basic string holding `text`.
fn toml_string(text: &str) -> String {
    let mut quoted = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            c if c.is_control() => quoted.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

/// Writes a file that must not exist yet, creating its folders.
fn write_new(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?
        .write_all(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_for_toml() {
        assert_eq!(toml_string("demo"), "\"demo\"");
        assert_eq!(toml_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
        let template = FILES
            .iter()
            .find(|(path, _)| *path == "kb.toml")
            .map_or("", |(_, text)| text);
        let manifest = crate::knowledge::parse_manifest(
            &render("kb.toml", template, "we \"quote\""),
            "kb.toml",
        );
        assert!(
            manifest.is_ok_and(|m| m.name == "we \"quote\"" && m.docs.title.is_some()),
            "the rendered kb.toml is not a valid manifest"
        );
    }
}
