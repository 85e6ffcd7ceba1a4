//! The regular expressions of rules (`matches`, `capture`).
//!
//! Compiling rules checks each one as regex-automata would build it (its
//! syntax, and the size of its compiled program), and evaluation compiles
//! it the first time it meets a string to match: an evaluation uses few of
//! a knowledge base's expressions, and keeping every one compiled would
//! cost far more time and memory than checking it.

use std::fmt;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::{Arc, OnceLock};

use regex_automata::Input;
use regex_automata::hybrid;
use regex_automata::nfa::thompson::{self, NFA, pikevm, pikevm::PikeVM};
use regex_automata::util::pool::Pool;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The most memory a compiled regular expression may take.
const SIZE_LIMIT: usize = 1 << 20;

thread_local! {
    /// Builds the program a regular expression compiles to; one for all, as
    /// it allocates much to start.
    static NFA_COMPILER: thompson::Compiler = {
        let mut compiler = thompson::Compiler::new();
        compiler.configure(thompson::Config::new().nfa_size_limit(Some(SIZE_LIMIT)));
        compiler
    };
}

/// A regular expression, compiled when first used. A diagnosis uses each
/// expression a few times, so building is most of its cost: it takes only
/// what answering needs from regex-automata, built from one program
/// compiled by a reused compiler (the meta engine builds a compiler and a
/// reverse program for each). It runs in linear time.
#[derive(Clone)]
pub(crate) struct Pattern {
    source: Box<str>,
    /// `None` when it does not compile, which checking it reports.
    regex: OnceLock<Option<Arc<Compiled>>>,
}

/// A compiled expression: a lazy DFA says whether it matches, the Pike VM
/// what it captures (rules capture rarely) and answers when the lazy DFA
/// gives up (its cache thrashing, or a Unicode word boundary before
/// non-ASCII text).
struct Compiled {
    dfa: hybrid::dfa::DFA,
    pikevm: PikeVM,
    caches: Pool<Caches, NewCaches>,
}

type NewCaches = Box<dyn Fn() -> Caches + Send + Sync + UnwindSafe + RefUnwindSafe>;

/// What searching mutates, one per thread searching at once; the Pike
/// VM's, only once it is needed.
struct Caches {
    dfa: hybrid::dfa::Cache,
    pikevm: Option<pikevm::Cache>,
}

impl Pattern {
    /// Checks a regular expression; the message says what is wrong.
    pub fn check(source: &str) -> Result<Self, String> {
        compile(source)?;
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
        let regex = self.regex()?;
        let mut caches = regex.caches.get();
        let input = Input::new(text).earliest(true);
        Some(match regex.dfa.try_search_fwd(&mut caches.dfa, &input) {
            Ok(found) => found.is_some(),
            Err(_) => {
                let cache = caches
                    .pikevm
                    .get_or_insert_with(|| regex.pikevm.create_cache());
                regex.pikevm.is_match(cache, input)
            }
        })
    }

    /// The first group the expression captures in `text`, or the whole
    /// match when it has no group; `None` when it does not compile.
    pub fn capture<'t>(&self, text: &'t str) -> Option<Option<&'t str>> {
        let regex = self.regex()?;
        let mut caches = regex.caches.get();
        let cache = caches
            .pikevm
            .get_or_insert_with(|| regex.pikevm.create_cache());
        let mut captures = regex.pikevm.create_captures();
        regex.pikevm.captures(cache, text, &mut captures);
        let span = captures.get_group(1).or_else(|| captures.get_group(0));
        Some(span.and_then(|span| text.get(span.range())))
    }

    /// The compiled expression, compiled now if it was not yet.
    fn regex(&self) -> Option<&Compiled> {
        self.regex
            .get_or_init(|| build(&self.source).map(Arc::new))
            .as_deref()
    }
}

/// The program an expression compiles to, with its syntax and size
/// checked; the message says what is wrong.
fn compile(source: &str) -> Result<NFA, String> {
    let hir = regex_syntax::Parser::new()
        .parse(source)
        .map_err(|error| error.to_string())?;
    NFA_COMPILER.with(|compiler| {
        compiler
            .build_from_hir(&hir)
            .map_err(|error| match error.size_limit() {
                Some(limit) => format!("compiled, it would exceed the size limit of {limit} bytes"),
                None => error.to_string(),
            })
    })
}

fn build(source: &str) -> Option<Compiled> {
    let nfa = compile(source).ok()?;
    let dfa = hybrid::dfa::DFA::builder()
        .configure(hybrid::dfa::Config::new().unicode_word_boundary(true))
        .build_from_nfa(nfa.clone())
        .ok()?;
    let pikevm = PikeVM::new_from_nfa(nfa).ok()?;
    let for_caches = dfa.clone();
    let caches = Pool::new(Box::new(move || Caches {
        dfa: for_caches.create_cache(),
        pikevm: None,
    })
        as Box<dyn Fn() -> Caches + Send + Sync + UnwindSafe + RefUnwindSafe>);
    Some(Compiled {
        dfa,
        pikevm,
        caches,
    })
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
