//! Finding, parsing and compiling a knowledge base: the bundled one, or a
//! folder of `.kb` files with an optional `kb.toml` manifest.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cache::Entry;
use kb_dsl::{Broken, Code, Loc, Problem, Source, ast::RuleSet};
use kb_engine::KnowledgeBase;
use rayon::prelude::*;
use serde::Deserialize;

mod bundled {
    include!(concat!(env!("OUT_DIR"), "/bundled.rs"));
    /// The bundled rules, compiled and checked when `kb` was built, in
    /// parts: the texts, and the rest; empty when they did not compile.
    pub static TEXTS: &str = include_str!(concat!(env!("OUT_DIR"), "/bundled.texts"));
    pub static REST: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/bundled.kbc"));
}

/// The manifest of a knowledge base, `kb.toml`.
#[derive(Debug, Clone, Deserialize)]
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
    pub languages: Vec<Language>,
    /// Globs, relative to the folder, selecting the `.kb` files to read
    /// [default: `**/*.kb`]; `*` stops at `/`, `**` crosses folders.
    #[serde(default = "default_include", deserialize_with = "globs")]
    pub include: Vec<String>,
    /// Globs of `.kb` files to leave out even when `include` selects them.
    #[serde(default, deserialize_with = "globs")]
    pub exclude: Vec<String>,
    /// What the folder's rules are compiled together with.
    #[serde(default)]
    pub extends: Option<Extends>,
    /// How its runbooks are titled and published.
    #[serde(default)]
    pub docs: DocsSettings,
}

impl Default for Manifest {
    fn default() -> Self {
        Self {
            name: String::new(),
            version: None,
            description: None,
            languages: Vec::new(),
            include: default_include(),
            exclude: Vec::new(),
            extends: None,
            docs: DocsSettings::default(),
        }
    }
}

/// The `[docs]` table of `kb.toml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocsSettings {
    /// The title of its runbook site [default: the name].
    #[serde(default)]
    pub title: Option<String>,
    /// Where its runbook site is published: `kb eval` links each cause to
    /// `RUNBOOK_URL/LANG/causes/ID.html`.
    #[serde(default)]
    pub runbook_url: Option<String>,
}

/// A language of `languages` in `kb.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// English, `en`.
    En,
    /// Chinese, `zh`.
    Zh,
}

impl<'de> Deserialize<'de> for Language {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match String::deserialize(deserializer)?.as_str() {
            "en" => Ok(Self::En),
            "zh" => Ok(Self::Zh),
            other => Err(serde::de::Error::custom(format!(
                "unknown language `{other}`, expected `en` or `zh`"
            ))),
        }
    }
}

/// The value of `extends` in `kb.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extends {
    /// `"bundled"`: the folder's rules are compiled together with the bundled
    /// Kubernetes Pod knowledge base, which they may add symptoms, checks,
    /// causes and facts to.
    Bundled,
}

impl<'de> Deserialize<'de> for Extends {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match String::deserialize(deserializer)?.as_str() {
            "bundled" => Ok(Self::Bundled),
            other => Err(serde::de::Error::custom(format!(
                "`extends = \"{other}\"` is not supported, expected `\"bundled\"`"
            ))),
        }
    }
}

fn default_include() -> Vec<String> {
    vec![String::from("**/*.kb")]
}

/// A glob of `include` or `exclude`: `*` stops at `/`.
fn glob(pattern: &str) -> Result<globset::Glob, globset::Error> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
}

/// A list of globs, each checked where it is written.
fn globs<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    struct Pattern(String);
    impl<'de> Deserialize<'de> for Pattern {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let text = String::deserialize(deserializer)?;
            match glob(&text) {
                Ok(_) => Ok(Self(text)),
                Err(error) => Err(serde::de::Error::custom(format!(
                    "invalid glob `{text}`: {}",
                    error.kind()
                ))),
            }
        }
    }
    let patterns = Vec::<Pattern>::deserialize(deserializer)?;
    Ok(patterns.into_iter().map(|p| p.0).collect())
}

/// The rule files `include` and `exclude` select.
struct Selection {
    include: globset::GlobSet,
    exclude: globset::GlobSet,
}

impl Selection {
    fn new(manifest: Option<&Manifest>) -> Result<Self, LoadError> {
        let default = Manifest::default();
        let manifest = manifest.unwrap_or(&default);
        let set = |patterns: &[String]| {
            let mut builder = globset::GlobSetBuilder::new();
            for pattern in patterns {
                builder.add(glob(pattern).map_err(|e| LoadError::Other(e.to_string()))?);
            }
            builder.build().map_err(|e| LoadError::Other(e.to_string()))
        };
        Ok(Self {
            include: set(&manifest.include)?,
            exclude: set(&manifest.exclude)?,
        })
    }

    /// Whether a `.kb` file, by its path relative to the folder with `/`
    /// between folders, is part of the knowledge base.
    fn selects(&self, relative: &str) -> bool {
        self.include.is_match(relative) && !self.exclude.is_match(relative)
    }
}

/// A compiled knowledge base and where it came from.
pub struct Loaded {
    /// The compiled rules.
    pub kb: KnowledgeBase,
    /// The manifest, if there is one.
    pub manifest: Option<Manifest>,
    /// Whether it holds the bundled rules, whose tests read the bundled
    /// fixtures; those of a folder are read from it.
    with_bundled: bool,
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

impl From<kb_engine::SnapshotError> for LoadError {
    fn from(error: kb_engine::SnapshotError) -> Self {
        Self::Other(error.to_string())
    }
}

/// The name under which bundled files appear in diagnostics.
pub const BUNDLED_PREFIX: &str = bundled::PREFIX;

/// The bundled rules as compiled and checked when `kb` was built, in
/// [`kb_engine::Parts`]: their texts, and the rest. Empty when they did not
/// compile.
pub const BUNDLED_PARTS: (&str, &[u8]) = (bundled::TEXTS, bundled::REST);

impl Loaded {
    /// The bundled Kubernetes Pod knowledge base, as compiled when `kb` was
    /// built.
    pub fn bundled() -> Result<Self, LoadError> {
        Self::bundled_with(|| {
            let (texts, rest) = BUNDLED_PARTS;
            match KnowledgeBase::from_checked_parts(texts, rest, bundled_rules()) {
                Ok(kb) => Ok(kb),
                // The rules did not compile when `kb` was built: compiling
                // them now reports why.
                Err(_) => compile_sources(bundled_rules(), false),
            }
        })
    }

    /// The bundled knowledge base compiled from its rule files now, as
    /// [`Loaded::bundled`] was when `kb` was built.
    pub fn bundled_from_source() -> Result<Self, LoadError> {
        Self::bundled_with(|| compile_sources(bundled_rules(), false))
    }

    /// The bundled manifest, with the knowledge base `kb_of` makes of the
    /// bundled rules.
    fn bundled_with(
        kb_of: impl FnOnce() -> Result<KnowledgeBase, LoadError>,
    ) -> Result<Self, LoadError> {
        let manifest = bundled::MANIFEST
            .map(|(name, text)| parse_manifest(text, name))
            .transpose()?;
        Ok(Self {
            kb: kb_of()?,
            manifest,
            with_bundled: true,
            root: None,
        })
    }

    /// A knowledge base in a folder: the `.kb` files below it that `include`
    /// and `exclude` of its `kb.toml` select (every one by default),
    /// compiled with the bundled ones when it `extends = "bundled"`. Or one
    /// `.kb` file, on its own.
    pub fn from_dir(dir: &Path) -> Result<Self, LoadError> {
        Self::open_dir(dir, false).map(|(loaded, _)| loaded)
    }

    /// [`Loaded::from_dir`], loading what an earlier run compiled of the
    /// same files when it was kept ([`crate::cache`]). When the rules were
    /// compiled now, the entry to keep them under is returned with them:
    /// keeping them takes a while, better spent once the command is done.
    pub fn from_dir_cached(dir: &Path) -> Result<(Self, Option<Entry>), LoadError> {
        Self::open_dir(dir, true)
    }

    fn open_dir(dir: &Path, cached: bool) -> Result<(Self, Option<Entry>), LoadError> {
        let Files {
            manifest_text,
            manifest,
            sources: rule_sources,
        } = match dir.is_dir() {
            true => read_folder(dir)?,
            // One rule file is a knowledge base of its own, without a manifest.
            false if dir.is_file() && dir.extension().is_some_and(|ext| ext == "kb") => {
                let text = crate::read::text_file(dir).map_err(LoadError::Other)?;
                Files {
                    manifest_text: None,
                    manifest: None,
                    sources: vec![Source::new(dir.display().to_string(), text)],
                }
            }
            false => {
                return Err(LoadError::Other(format!(
                    "`{}` is neither a folder of rules nor a `.kb` file",
                    dir.display()
                )));
            }
        };
        let with_bundled = manifest.as_ref().and_then(|m| m.extends) == Some(Extends::Bundled);
        let sources: Vec<Arc<Source>> = match with_bundled {
            true => bundled_rules().chain(rule_sources).collect(),
            false => rule_sources,
        };
        let mut entry = cached
            .then(|| Entry::new(dir, manifest_text.as_deref(), with_bundled, &sources))
            .flatten();
        let kept = entry.as_mut().and_then(|entry| entry.load(&sources));
        let (kb, entry) = match kept {
            Some(kb) => (kb, None),
            None => (compile_sources(sources.into_iter(), with_bundled)?, entry),
        };
        let loaded = Self {
            kb,
            manifest,
            with_bundled,
            root: Some(dir.to_path_buf()),
        };
        Ok((loaded, entry))
    }

    /// Reads a file a test refers to, relative to the rule file that names it.
    pub fn read_relative(&self, rule_file: &str, path: &str) -> Result<String, String> {
        let base = Path::new(rule_file).parent().unwrap_or(Path::new(""));
        let joined = normalize(&base.join(path));
        if self.with_bundled
            && let Some(text) = bundled_file(&joined)
        {
            return Ok(text.to_owned());
        }
        if self.root.is_none() {
            return Err(format!(
                "`{path}` is not part of the bundled knowledge base"
            ));
        }
        crate::read::text_file(Path::new(&joined))
    }
}

/// What a knowledge base is read from: its `kb.toml`, as text and read,
/// and its rule files in the order they are compiled in.
struct Files {
    manifest_text: Option<String>,
    manifest: Option<Manifest>,
    sources: Vec<Arc<Source>>,
}

/// The files of a folder of rules: its `kb.toml`, and the rule files below
/// it that the manifest selects, by path.
fn read_folder(dir: &Path) -> Result<Files, LoadError> {
    let manifest_path = dir.join("kb.toml");
    let manifest_text = match manifest_path.exists() {
        true => Some(crate::read::text_file(&manifest_path).map_err(LoadError::Other)?),
        false => None,
    };
    let manifest = manifest_text
        .as_deref()
        .map(|text| parse_manifest(text, &manifest_path.display().to_string()))
        .transpose()?;
    let selection = Selection::new(manifest.as_ref())?;
    let mut rule_sources = BTreeMap::new();
    for path in rule_files_below(dir).map_err(LoadError::Other)? {
        let relative = path
            .strip_prefix(dir)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        if !selection.selects(&relative) {
            continue;
        }
        let text = crate::read::text_file(&path).map_err(LoadError::Other)?;
        let name = path.display().to_string();
        rule_sources.insert(name.clone(), Source::new(name, text));
    }
    if rule_sources.is_empty() {
        let selected = match &manifest {
            Some(m) if m.include != default_include() || !m.exclude.is_empty() => {
                " selected by `include` and `exclude` of kb.toml"
            }
            _ => "",
        };
        return Err(LoadError::Other(format!(
            "no `.kb` file{selected} in `{}`",
            dir.display()
        )));
    }
    Ok(Files {
        manifest_text,
        manifest,
        sources: rule_sources.into_values().collect(),
    })
}

/// The `.kb` files below a folder, by path. Links are followed, as a shared
/// rule file or folder is often linked in; one back to a folder above is an
/// error, not an endless walk. A link to nothing (a build's `result`, say)
/// is passed over, unless it is named as a rule file.
pub fn rule_files_below(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let is_rule_file = |path: &Path| path.extension().is_some_and(|ext| ext == "kb");
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(dir)
        .follow_links(true)
        .sort_by_file_name()
    {
        match entry {
            Ok(entry) if entry.file_type().is_file() && is_rule_file(entry.path()) => {
                files.push(entry.into_path());
            }
            Ok(_) => {}
            Err(error)
                if error.loop_ancestor().is_none()
                    && error.path().is_some_and(|path| {
                        !is_rule_file(path) && path.is_symlink() && !path.exists()
                    }) => {}
            Err(error) => return Err(format!("cannot read `{}`: {error}", dir.display())),
        }
    }
    Ok(files)
}

/// Every file of the bundled knowledge base, named `<bundled>/PATH`, with
/// its text, by name.
fn bundled_files() -> impl Iterator<Item = (&'static str, &'static str)> {
    // Each line break found by one search, where `lines` reads the names
    // character by character: every start finds the rule files among them.
    let names = bundled::NAMES;
    let mut start = 0;
    memchr::memchr_iter(b'\n', names.as_bytes())
        .map(move |end| {
            let name = names.get(start..end).unwrap_or_default();
            start = end + 1;
            name
        })
        .zip(bundled::CONTENTS.iter().copied())
}

/// The bundled file named `name` (`<bundled>/PATH`).
fn bundled_file(name: &str) -> Option<&'static str> {
    bundled_files().find_map(|(file, text)| (file == name).then_some(text))
}

/// The bundled rule files, in order, as sources borrowing their names and
/// texts from the binary.
fn bundled_rules() -> impl Iterator<Item = Arc<Source>> {
    bundled_files()
        .filter(|(name, _)| name.ends_with(".kb"))
        .map(|(name, text)| Source::new(name, text))
}

/// Reads `kb.toml`; a mistake is a located problem, like those of rule files.
pub fn parse_manifest(text: &str, name: &str) -> Result<Manifest, LoadError> {
    toml::from_str(text).map_err(|error| {
        let span = error.span().unwrap_or(0..0);
        let span = narrow(text, span, error.message());
        let loc = Loc::new(
            Source::new(name.to_owned(), text.to_owned()),
            span.start,
            span.end,
        );
        LoadError::Rules(vec![manifest_problem(error.message(), &loc)])
    })
}

/// The span of the element of an array a message names in backticks (a
/// language, a glob), rather than of the whole array.
fn narrow(text: &str, span: std::ops::Range<usize>, message: &str) -> std::ops::Range<usize> {
    let Some(value) = message.split('`').nth(1) else {
        return span;
    };
    let Some(array) = text.get(span.clone()).filter(|t| t.starts_with('[')) else {
        return span;
    };
    [format!("\"{value}\""), format!("'{value}'")]
        .iter()
        .find_map(|quoted| {
            array
                .find(quoted.as_str())
                .map(|at| span.start + at..span.start + at + quoted.len())
        })
        .unwrap_or(span)
}

/// A TOML or serde message made a problem: `unknown key `x``, with the keys
/// that are known and the closest one.
fn manifest_problem(message: &str, loc: &Loc) -> Problem {
    let message = message.trim();
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let (key, expected) = rest.split_once('`').unwrap_or((rest, ""));
        let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
        let mut problem = Problem::error(
            Code::ManifestInvalid,
            loc,
            format!(
                "unknown key {} in kb.toml",
                kb_dsl::problem::quoted(key, "key")
            ),
        )
        .with_label("unknown key");
        let closest = known
            .iter()
            .map(|k| (strsim::jaro_winkler(key, k), *k))
            .filter(|(score, _)| *score > 0.8)
            .max_by(|a, b| a.0.total_cmp(&b.0));
        let list = known
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        problem = match closest {
            Some((_, k)) => {
                problem.with_help(format!("did you mean `{k}`? The keys here are {list}"))
            }
            None if !known.is_empty() => problem.with_help(format!("the keys here are {list}")),
            None => problem,
        };
        return problem;
    }
    if let Some(rest) = message.strip_prefix("missing field `") {
        let key = rest.split('`').next().unwrap_or(rest);
        return Problem::error(
            Code::ManifestInvalid,
            loc,
            format!("missing key `{key}` in kb.toml"),
        )
        .with_help(format!("add `{key} = \"…\"`"));
    }
    Problem::error(Code::ManifestInvalid, loc, message.to_owned())
}

/// Parses every file, then compiles them together; problems of all files at
/// once. Declarations that parsed are checked even when others did not, but
/// problems that only follow from a broken declaration are left out.
pub fn compile<'a>(
    files: impl Iterator<Item = (&'a str, &'a str)>,
) -> Result<KnowledgeBase, LoadError> {
    let sources = files.map(|(name, text)| Source::new(name.to_owned(), text.to_owned()));
    compile_sources(sources, false)
}

/// [`compile`], leaving out the tests of bundled files when asked: a folder
/// that extends the bundled knowledge base runs its own tests, since a cause
/// it adds may rightly be confirmed on the bundled tests' inputs too.
fn compile_sources(
    sources: impl Iterator<Item = Arc<Source>>,
    without_bundled_tests: bool,
) -> Result<KnowledgeBase, LoadError> {
    let mut rules = RuleSet::default();
    let mut problems = Vec::new();
    let mut broken = Vec::new();
    // Files parse independently: in parallel, then in their order.
    let sources: Vec<Arc<Source>> = sources.collect();
    let parsed: Vec<_> = sources
        .into_par_iter()
        .map(|src| {
            (
                src.name.starts_with(BUNDLED_PREFIX),
                kb_dsl::parse_source(src),
            )
        })
        .collect();
    // One allocation for every declaration, not a copy each time it doubles.
    let declarations = parsed.iter().map(|(_, result)| match result {
        Ok(parsed) => parsed.items.len(),
        Err(errors) => errors.recovered.items.len(),
    });
    rules.items.reserve(declarations.sum());
    for (bundled, result) in parsed {
        match result {
            Ok(mut parsed) => {
                if without_bundled_tests && bundled {
                    parsed
                        .items
                        .retain(|item| !matches!(item, kb_dsl::ast::Item::Test(_)));
                }
                rules.extend(parsed);
            }
            Err(errors) => {
                problems.extend(errors.problems);
                rules.extend(errors.recovered);
                broken.extend(errors.broken);
            }
        }
    }
    let compiled = kb_engine::compile(&rules);
    // Freeing the syntax tree of a large knowledge base takes a while (0.3 s
    // for 110 MB of rules): it is left to another core.
    rayon::spawn(move || drop(rules));
    match compiled {
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
