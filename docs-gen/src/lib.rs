//! Runbooks from the same rules `kb eval` runs: Markdown pages that form an
//! mdBook as they stand, or a self-contained HTML site.
//!
//! ```no_run
//! # fn demo(kb: &kb_engine::KnowledgeBase) -> Result<(), kb_docs_gen::Error> {
//! use kb_docs_gen::{Book, Templates};
//! let book = Book::new(kb, "My runbooks", kb_engine::Lang::En, &Default::default());
//! let pages = Templates::builtin().markdown(&book)?;
//! kb_docs_gen::write_site(std::path::Path::new("site"), &pages)?;
//! # Ok(()) }
//! ```
//!
//! Templates see only the plain view structs of [`view`]; the built-in ones
//! live in `docs-gen/templates/` and each can be overridden by a file of the
//! same name.

/// A symptom's decision tree, drawn as a Mermaid flowchart or an SVG.
pub mod flow;
mod html;
pub mod paths;
mod templates;
pub mod view;

use std::fmt;
use std::path::{Component, Path, PathBuf};

pub use html::html;
pub use templates::{Templates, clip};
pub use view::{Book, Example};

/// A generated file, relative to the output folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// Where it goes, `/`-separated, relative.
    pub path: String,
    /// What it holds.
    pub content: String,
}

/// Why a site could not be generated.
#[derive(Debug)]
pub enum Error {
    /// A template failed to compile or render.
    Template(String),
    /// The site could not be written.
    Io(PathBuf, std::io::Error),
    /// A page's path would leave the output folder.
    Path(String),
    /// The output folder holds what `kb docs` did not write, so replacing it
    /// could lose the user's files: the path, and why.
    Occupied(PathBuf, &'static str),
    /// A file stands where the output folder or one of its parents would be.
    InsideFile(PathBuf),
}

/// A file in every site `kb docs` writes, so that writing the site again
/// may replace the folder: a folder without it is someone else's.
pub const MARKER: &str = ".kb-docs";

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Template(message) => write!(f, "template error: {message}"),
            Self::Io(path, error) => write!(f, "cannot write `{}`: {error}", path.display()),
            Self::Path(path) => write!(f, "refusing to write `{path}` outside the output folder"),
            Self::Occupied(path, why) => {
                write!(f, "refusing to replace `{}`: {why}", path.display())
            }
            Self::InsideFile(path) => write!(
                f,
                "cannot write the site inside `{}`: it is a file, not a folder",
                path.display()
            ),
        }
    }
}

impl std::error::Error for Error {}

/// Writes pages into `out`, all or nothing: they go to a fresh folder beside
/// `out`, which then takes its place. A failed run leaves `out` as it was.
/// Only a new or empty folder, or one written by this function before (it
/// holds [`MARKER`]), is replaced: never a folder of the user's.
pub fn write_site(out: &Path, pages: &[Page]) -> Result<(), Error> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |e| Error::Io(path, e)
    };
    // `.` and `..` named by what they are, so that the staging folder goes
    // beside the output and not inside it.
    let out = std::path::absolute(out).map_err(io(out))?;
    let out = out.canonicalize().unwrap_or(out);
    replaceable(&out)?;
    let (Some(parent), Some(name)) = (out.parent(), out.file_name()) else {
        return Err(Error::Occupied(out, "it has no folder to write beside"));
    };
    std::fs::create_dir_all(parent).map_err(io(parent))?;
    let name = name.to_string_lossy();
    let pid = std::process::id();
    let staging = parent.join(format!(".{name}.kb-docs-{pid}"));
    let previous = parent.join(format!(".{name}.kb-docs-previous-{pid}"));
    let _ = std::fs::remove_dir_all(&staging);
    let result = (|| {
        std::fs::create_dir_all(&staging).map_err(io(&staging))?;
        for page in pages {
            let relative = safe_relative(&page.path)?;
            let path = staging.join(relative);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(io(dir))?;
            }
            std::fs::write(&path, &page.content).map_err(io(&path))?;
        }
        let marker = staging.join(MARKER);
        std::fs::write(
            &marker,
            "Written by `kb docs`, which replaces this folder as a whole.\n",
        )
        .map_err(io(&marker))?;
        if !out.exists() {
            return std::fs::rename(&staging, &out).map_err(io(&out));
        }
        // The previous site is moved aside, and back if the new one cannot
        // take its place.
        std::fs::rename(&out, &previous).map_err(io(&out))?;
        if let Err(error) = std::fs::rename(&staging, &out) {
            let _ = std::fs::rename(&previous, &out);
            return Err(Error::Io(out.clone(), error));
        }
        let _ = std::fs::remove_dir_all(&previous);
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    result
}

/// Whether `out` (absolute, and real where it exists) may be replaced: it
/// does not exist, or is an empty folder, or one a site was written to.
fn replaceable(out: &Path) -> Result<(), Error> {
    let Ok(meta) = std::fs::symlink_metadata(out) else {
        // The nearest parent that exists must be a folder to write in.
        return match out.ancestors().skip(1).find(|a| a.exists()) {
            Some(file) if !file.is_dir() => Err(Error::InsideFile(file.to_path_buf())),
            _ => Ok(()),
        };
    };
    let occupied = |why| Err(Error::Occupied(out.to_path_buf(), why));
    if !meta.is_dir() {
        return occupied("it is not a folder");
    }
    let here = std::env::current_dir().and_then(|d| d.canonicalize());
    if here.is_ok_and(|here| here.starts_with(out)) {
        return occupied("it holds the current folder");
    }
    let empty = std::fs::read_dir(out)
        .map_err(|e| Error::Io(out.to_path_buf(), e))?
        .next()
        .is_none();
    if empty || out.join(MARKER).is_file() {
        Ok(())
    } else {
        occupied("it holds files `kb docs` did not write; give a new or empty folder")
    }
}

/// A page path that stays inside the output folder.
fn safe_relative(path: &str) -> Result<PathBuf, Error> {
    let relative = PathBuf::from(path);
    let inside = !path.is_empty()
        && relative
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
    if inside {
        Ok(relative)
    } else {
        Err(Error::Path(path.to_owned()))
    }
}

#[cfg(test)]
mod tests;
