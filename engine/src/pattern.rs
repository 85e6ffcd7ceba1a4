//! The regular expressions of rules (`matches`, `capture`).
//!
//! Compiling rules checks each one as the `regex` crate would build it (its
//! syntax, and the size of its compiled program), and evaluation compiles
//! it the first time it meets a string to match: an evaluation uses few of
//! a knowledge base's expressions, and keeping every one compiled would
//! cost far more time and memory than checking it.

use std::fmt;
use std::sync::OnceLock;

use regex::{Regex, RegexBuilder};
use regex_automata::nfa::thompson;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The most memory a compiled regular expression may take.
const SIZE_LIMIT: usize = 1 << 20;

thread_local! {
    /// Builds the program a regular expression compiles to, to check its
    /// size; one for all, as it allocates much to start.
    static NFA_COMPILER: thompson::Compiler = {
        let mut compiler = thompson::Compiler::new();
        compiler.configure(thompson::Config::new().nfa_size_limit(Some(SIZE_LIMIT)));
        compiler
    };
}

/// A regular expression, compiled once.
#[derive(Clone)]
pub(crate) struct Pattern {
    source: Box<str>,
    /// `None` when it does not compile, which checking it reports.
    regex: OnceLock<Option<Regex>>,
}

impl Pattern {
    /// Checks a regular expression; the message says what is wrong.
    pub fn check(source: &str) -> Result<Self, String> {
        let hir = regex_syntax::Parser::new()
            .parse(source)
            .map_err(|error| error.to_string())?;
        NFA_COMPILER.with(|compiler| match compiler.build_from_hir(&hir) {
            Ok(_) => Ok(()),
            Err(error) => Err(match error.size_limit() {
                Some(limit) => format!("compiled, it would exceed the size limit of {limit} bytes"),
                None => error.to_string(),
            }),
        })?;
        Ok(Self {
            source: source.into(),
            regex: OnceLock::new(),
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
