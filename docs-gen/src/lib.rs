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
pub use templates::Templates;
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
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Template(message) => write!(f, "template error: {message}"),
            Self::Io(path, error) => write!(f, "cannot write `{}`: {error}", path.display()),
            Self::Path(path) => write!(f, "refusing to write `{path}` outside the output folder"),
        }
    }
}

impl std::error::Error for Error {}

/// Writes pages into `out`, all or nothing: they go to a fresh folder beside
/// `out`, which then replaces it. A failed run leaves `out` as it was.
pub fn write_site(out: &Path, pages: &[Page]) -> Result<(), Error> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |e| Error::Io(path, e)
    };
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(io(&parent))?;
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| String::from("site"));
    let staging = parent.join(format!(".{name}.kb-docs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let result = (|| {
        for page in pages {
            let relative = safe_relative(&page.path)?;
            let path = staging.join(relative);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(io(dir))?;
            }
            std::fs::write(&path, &page.content).map_err(io(&path))?;
        }
        if out.exists() {
            std::fs::remove_dir_all(out).map_err(io(out))?;
        }
        std::fs::rename(&staging, out).map_err(io(out))
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    result
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
