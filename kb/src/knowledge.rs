//! Finding, parsing and compiling a knowledge base: the bundled one, or a
//! folder of `.kb` files with an optional `kb.toml` manifest.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kb_dsl::{Broken, Code, Problem, ast::RuleSet};
use kb_engine::KnowledgeBase;
use serde::Deserialize;

mod bundled {
    include!(concat!(env!("OUT_DIR"), "/bundled.rs"));
}

/// The manifest of a knowledge base, `kb.toml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The knowledge base's name.
    pub name: String,
    /// Its version.
    #[serde(default)]
    pub version: Option<String>,
    /// What it covers.
    #[serde(default)]
    pub description: Option<String>,
    /// The languages its texts are written in.
    #[serde(default)]
    pub languages: Vec<String>,
    /// The title of its runbook site.
    #[serde(default)]
    pub title: Option<String>,
    /// Where its runbook site is published: `kb eval` links each cause to
    /// `RUNBOOK_URL/LANG/causes/ID.html`.
    #[serde(default)]
    pub runbook_url: Option<String>,
}

/// A compiled knowledge base and the files it came from.
pub struct Loaded {
    /// The compiled rules.
    pub kb: KnowledgeBase,
    /// The manifest, if there is one.
    pub manifest: Option<Manifest>,
    /// Every file of the knowledge base by path, for tests that read fixtures.
    files: BTreeMap<String, String>,
    /// Where it lives; `None` for the bundled one.
    pub root: Option<PathBuf>,
}

/// Why a knowledge base could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// The rules have errors (warnings are included, to show them all).
    Rules(Vec<Problem>),
    /// A file or the manifest could not be read.
    Other(String),
}

/// The name under which bundled files appear in diagnostics.
pub const BUNDLED_PREFIX: &str = "<bundled>/";

impl Loaded {
    /// The bundled Kubernetes Pod knowledge base.
    pub fn bundled() -> Result<Self, LoadError> {
        let files: BTreeMap<String, String> = bundled::BUNDLED
            .iter()
            .map(|(path, text)| (format!("{BUNDLED_PREFIX}{path}"), (*text).to_owned()))
            .collect();
        let manifest = files
            .get(&format!("{BUNDLED_PREFIX}kb.toml"))
            .map(|text| parse_manifest(text, "kb.toml"))
            .transpose()?;
        let kb = compile(files.iter().filter(|(name, _)| name.ends_with(".kb")))?;
        Ok(Self {
            kb,
            manifest,
            files,
            root: None,
        })
    }

    /// A knowledge base in a folder: every `.kb` file below it.
    pub fn from_dir(dir: &Path) -> Result<Self, LoadError> {
        if !dir.is_dir() {
            return Err(LoadError::Other(format!(
                "`{}` is not a directory",
                dir.display()
            )));
        }
        let manifest_path = dir.join("kb.toml");
        let manifest = if manifest_path.exists() {
            let text = std::fs::read_to_string(&manifest_path).map_err(|e| {
                LoadError::Other(format!("cannot read `{}`: {e}", manifest_path.display()))
            })?;
            Some(parse_manifest(&text, &manifest_path.display().to_string())?)
        } else {
            None
        };
        let mut files = BTreeMap::new();
        for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
            let entry = entry
                .map_err(|e| LoadError::Other(format!("cannot read `{}`: {e}", dir.display())))?;
            let path = entry.path();
            if entry.file_type().is_file() && path.extension().is_some_and(|ext| ext == "kb") {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    LoadError::Other(format!("cannot read `{}`: {e}", path.display()))
                })?;
                files.insert(path.display().to_string(), text);
            }
        }
        if files.is_empty() {
            return Err(LoadError::Other(format!(
                "no `.kb` file in `{}`",
                dir.display()
            )));
        }
        let kb = compile(files.iter())?;
        Ok(Self {
            kb,
            manifest,
            files,
            root: Some(dir.to_path_buf()),
        })
    }

    /// Reads a file a test refers to, relative to the rule file that names it.
    pub fn read_relative(&self, rule_file: &str, path: &str) -> Result<String, String> {
        let base = Path::new(rule_file).parent().unwrap_or(Path::new(""));
        let joined = normalize(&base.join(path));
        if let Some(text) = self.files.get(&joined) {
            return Ok(text.clone());
        }
        if self.root.is_none() {
            return Err(format!(
                "`{path}` is not part of the bundled knowledge base"
            ));
        }
        std::fs::read_to_string(&joined).map_err(|e| format!("cannot read `{joined}`: {e}"))
    }
}

fn parse_manifest(text: &str, name: &str) -> Result<Manifest, LoadError> {
    toml::from_str(text).map_err(|e| LoadError::Other(format!("invalid manifest `{name}`: {e}")))
}

/// Parses every file, then compiles them together; problems of all files at
/// once. Declarations that parsed are checked even when others did not, but
/// problems that only follow from a broken declaration are left out.
pub fn compile<'a>(
    files: impl Iterator<Item = (&'a String, &'a String)>,
) -> Result<KnowledgeBase, LoadError> {
    let mut rules = RuleSet::default();
    let mut problems = Vec::new();
    let mut broken = Vec::new();
    for (name, text) in files {
        match kb_dsl::parse(text, name) {
            Ok(parsed) => rules.extend(parsed),
            Err(errors) => {
                problems.extend(errors.problems);
                rules.extend(errors.recovered);
                broken.extend(errors.broken);
            }
        }
    }
    match kb_engine::compile(&rules) {
        Ok(kb) if problems.is_empty() => Ok(kb),
        Ok(_) => Err(LoadError::Rules(problems)),
        Err(found) => {
            problems.extend(found.into_iter().filter(|p| !follows_from(p, &broken)));
            Err(LoadError::Rules(problems))
        }
    }
}

/// Whether a compile problem may only be the echo of a syntax error.
fn follows_from(problem: &Problem, broken: &[Broken]) -> bool {
    if broken.is_empty() {
        return false;
    }
    let names_broken = |problem: &Problem| {
        broken.iter().any(|b| match b {
            Broken::Everything => true,
            Broken::Declaration { name, .. } => problem.message.contains(&format!("`{name}`")),
        })
    };
    match problem.code {
        Code::UnknownCause
        | Code::UnknownCheck
        | Code::UnknownName
        | Code::UnknownTemplateFact
        | Code::UnknownTestId => names_broken(problem),
        Code::UnreachableCause | Code::UnreachableCheck => broken.iter().any(|b| match b {
            Broken::Everything => true,
            Broken::Declaration { keyword, .. } => keyword == "symptom" || keyword == "check",
        }),
        Code::UnusedFact => true,
        _ => false,
    }
}

/// `a/./b/../c` → `a/c`, without touching the file system.
fn normalize(path: &Path) -> String {
    let text = path.to_string_lossy();
    let mut parts: Vec<&str> = Vec::new();
    for part in text.split('/') {
        match part {
            "." | "" if !parts.is_empty() => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    parts.join("/")
}
