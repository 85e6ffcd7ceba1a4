//! The regular expressions of rules (`matches`, `capture`).
//!
//! Compiling rules checks each one as regex-automata would build it (its
//! syntax, and the size of its compiled program), and evaluation compiles
//! it the first time it meets a string to match: an evaluation uses few of
//! a knowledge base's expressions, and keeping every one compiled would
//! cost far more time and memory than checking it.

use std::fmt;
use std::sync::OnceLock;

use regex_automata::meta::{self, Regex};
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

/// A regular expression, compiled when first used, on regex-automata's
/// meta engine without literal prefilters, one-pass or full DFAs: what is
/// left (a lazy DFA, the bounded backtracker, the Pike VM) builds in half
/// the time the `regex` crate's full configuration takes and runs as fast
/// on what rules match, short messages. A diagnosis uses each expression a
/// few times, so building is most of its cost. It runs in linear time.
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
        Ok(Self::new(source.into()))
    }

    fn new(source: Box<str>) -> Self {
        Self {
            source,
            regex: OnceLock::new(),
        }
    }

    /// Whether the expression matches somewhere in `text`; `None` when it
    /// does not compile.
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

    /// The compiled expression, compiled now if it was not yet.
    fn regex(&self) -> Option<&Regex> {
        self.regex.get_or_init(|| build(&self.source)).as_ref()
    }
}

fn build(source: &str) -> Option<Regex> {
    let config = meta::Config::new()
        .nfa_size_limit(Some(SIZE_LIMIT))
        .auto_prefilter(false)
        .onepass(false)
        .dfa(false);
    Regex::builder().configure(config).build(source).ok()
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

    use super::Pattern;

    #[test]
    fn matches_and_captures_as_the_regex_crate_does() {
        let source = r"(?i)exit code:? (\d+)|\bOOMKilled\b";
        let pattern = Pattern::check(source).unwrap();
        let regex = regex::Regex::new(source).unwrap();
        for text in [
            "Back-off restarting failed container app: Exit Code: 137",
            "Last State: Terminated, Reason: OOMKilled",
            "OOMKilledX is not a word boundary",
            "容器退出 exit code 1",
            "",
        ] {
            let captured = regex
                .captures(text)
                .and_then(|found| found.get(1).or_else(|| found.get(0)))
                .map(|m| m.as_str());
            assert_eq!(pattern.is_match(text), Some(regex.is_match(text)), "{text}");
            assert_eq!(pattern.capture(text), Some(captured), "{text}");
        }
    }
}
