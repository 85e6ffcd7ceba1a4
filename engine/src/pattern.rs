//! The regular expressions of rules (`matches`, `capture`).
//!
//! Compiling rules checks each one as the `regex` crate would build it (its
//! syntax, and the size of its compiled program), and evaluation compiles
//! it the first time it meets a string to match: an evaluation uses few of
//! a knowledge base's expressions, and keeping every one compiled would
//! cost far more time and memory than checking it.

use std::fmt;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use regex_automata::meta::{self, Regex};
use regex_automata::nfa::thompson;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The most memory a compiled regular expression may take.
const SIZE_LIMIT: usize = 1 << 20;

/// How many times an expression runs on the engine that is quick to build
/// before it is built again on the one that is fast to run. One diagnosis
/// uses each expression a few times; a stream, millions of times.
const QUICK_USES: u32 = 64;

thread_local! {
    /// Builds the program a regular expression compiles to, to check its
    /// size; one for all, as it allocates much to start.
    static NFA_COMPILER: thompson::Compiler = {
        let mut compiler = thompson::Compiler::new();
        compiler.configure(thompson::Config::new().nfa_size_limit(Some(SIZE_LIMIT)));
        compiler
    };
}

/// A regular expression, compiled when first used. It first runs on an
/// engine that builds in a fraction of the time (no literal prefilters, no
/// lazy DFAs, only the Pike VM and the bounded backtracker), and once used
/// often, on the one the `regex` crate would build. Both run in linear time.
pub(crate) struct Pattern {
    source: Box<str>,
    quick: OnceLock<Option<Regex>>,
    fast: OnceLock<Option<Regex>>,
    uses: AtomicU32,
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
        Ok(Self::new(source.into()))
    }

    fn new(source: Box<str>) -> Self {
        Self {
            source,
            quick: OnceLock::new(),
            fast: OnceLock::new(),
            uses: AtomicU32::new(0),
        }
    }

    /// Whether the expression matches somewhere in `text`; `None` when it
    /// does not compile, which checking it reports.
    pub fn is_match(&self, text: &str) -> Option<bool> {
        Some(self.regex()?.is_match(text))
    }

    /// The first group the expression captures in `text`, or the whole
    /// match when it has no group; `None` when it does not compile.
    pub fn capture<'t>(&self, text: &'t str) -> Option<Option<&'t str>> {
        let regex = self.regex()?;
        let mut captures = regex.create_captures();
        regex.captures(text, &mut captures);
        let span = captures.get_group(1).or_else(|| captures.get_group(0));
        Some(span.and_then(|span| text.get(span.range())))
    }

    /// The engine to run now, built now if it was not yet.
    fn regex(&self) -> Option<&Regex> {
        if let Some(fast) = self.fast.get() {
            return fast.as_ref();
        }
        if self.uses.fetch_add(1, Ordering::Relaxed) < QUICK_USES {
            return self
                .quick
                .get_or_init(|| build(&self.source, quick()))
                .as_ref();
        }
        self.fast
            .get_or_init(|| build(&self.source, meta::Config::new()))
            .as_ref()
    }
}

/// The configuration that builds quickest.
fn quick() -> meta::Config {
    meta::Config::new()
        .auto_prefilter(false)
        .hybrid(false)
        .dfa(false)
        .onepass(false)
}

fn build(source: &str, config: meta::Config) -> Option<Regex> {
    Regex::builder()
        .configure(config.nfa_size_limit(Some(SIZE_LIMIT)))
        .build(source)
        .ok()
}

impl Clone for Pattern {
    fn clone(&self) -> Self {
        Self::new(self.source.clone())
    }
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
        Ok(Self::new(Box::<str>::deserialize(deserializer)?))
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use super::{Pattern, QUICK_USES};

    #[test]
    fn the_quick_engine_comes_first_and_both_answer_the_same() {
        let pattern = Pattern::check(r"(?i)exit code:? (\d+)|\bOOMKilled\b").unwrap();
        let texts = [
            "Back-off restarting failed container app: Exit Code: 137",
            "Last State: Terminated, Reason: OOMKilled",
            "OOMKilledX is not a word boundary",
            "容器退出 exit code 1",
            "",
        ];
        let answers = |pattern: &Pattern| -> Vec<_> {
            texts
                .iter()
                .map(|text| (pattern.is_match(text), pattern.capture(text)))
                .collect()
        };
        let quick = answers(&pattern);
        assert!(pattern.quick.get().is_some() && pattern.fast.get().is_none());
        assert_eq!(
            quick,
            [
                (Some(true), Some(Some("137"))),
                (Some(true), Some(Some("OOMKilled"))),
                (Some(false), Some(None)),
                (Some(true), Some(Some("1"))),
                (Some(false), Some(None)),
            ]
        );
        while pattern.fast.get().is_none() {
            assert_eq!(answers(&pattern), quick);
        }
        assert!(pattern.uses.load(std::sync::atomic::Ordering::Relaxed) > QUICK_USES);
        assert_eq!(answers(&pattern), quick, "the fast engine agrees");
    }
}
