//! The regular expressions of rules (`matches`, `capture`).
//!
//! Compiled from source, a knowledge base compiles each one at once, so that
//! a mistake is reported where it was written. Loaded from its compiled form
//! ([`crate::KnowledgeBase::from_bytes`]), it compiles each on first use: an
//! evaluation uses few of them, and compiling them all is most of what
//! loading would otherwise cost.

use std::fmt;
use std::sync::OnceLock;

use regex::{Regex, RegexBuilder};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The most memory a compiled regular expression may take.
const SIZE_LIMIT: usize = 1 << 20;

/// A regular expression, compiled once.
#[derive(Clone)]
pub(crate) struct Pattern {
    source: Box<str>,
    /// `None` when it does not compile, which compiling from source reports.
    regex: OnceLock<Option<Regex>>,
}

impl Pattern {
    /// Compiles a regular expression now.
    pub fn compile(source: &str) -> Result<Self, regex::Error> {
        let regex = build(source)?;
        Ok(Self {
            source: source.into(),
            regex: OnceLock::from(Some(regex)),
        })
    }

    /// The compiled expression, compiled now if it was not yet.
    pub fn regex(&self) -> Option<&Regex> {
        self.regex.get_or_init(|| build(&self.source).ok()).as_ref()
    }
}

fn build(source: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(source).size_limit(SIZE_LIMIT).build()
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.source)
    }
}

impl Serialize for Pattern {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.source.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Self {
            source: Box::<str>::deserialize(deserializer)?,
            regex: OnceLock::new(),
        })
    }
}
