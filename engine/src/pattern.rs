//! The regular expressions of rules (`matches`, `capture`).
//!
//! Compiling rules checks each one as regex-automata would build it (its
//! syntax, and the size of its compiled program), and evaluation compiles
//! it the first time it meets a string to match: an evaluation uses few of
//! a knowledge base's expressions, and keeping every one compiled would
//! cost far more time and memory than checking it. A knowledge base written
//! as bytes carries a DFA of each, built then, so that a program loading it
//! (`kb` its bundled one) answers at once.

use std::fmt;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use regex_automata::Input;
use regex_automata::dfa::{Automaton, StartKind, dense, sparse};
use regex_automata::hybrid;
use regex_automata::nfa::thompson::{self, NFA, pikevm, pikevm::PikeVM};
use regex_automata::util::pool::Pool;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::snapshot::SharedBytes;

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
pub(crate) struct Pattern {
    source: Box<str>,
    /// In a knowledge base loaded from bytes, a DFA built when they were
    /// written ([`ahead`]), serialized: it answers without compiling.
    ahead: Option<Bytes>,
    /// That DFA, ready to search.
    dfa: OnceLock<Option<sparse::DFA<Vec<u8>>>>,
    /// How many bytes that DFA searched, up to about [`WARM_BYTES`].
    scanned: AtomicU32,
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
            ahead: None,
            dfa: OnceLock::new(),
            scanned: AtomicU32::new(0),
            regex: OnceLock::new(),
        }
    }

    /// Whether the expression matches somewhere in `text`; `None` when it
    /// does not compile.
    pub fn is_match(&self, text: &str) -> Option<bool> {
        let input = Input::new(text).earliest(true);
        // Counted without a read-modify-write, so that threads searching at
        // once do not contend; a count lost now and then does not matter.
        let scanned = self.scanned.load(Ordering::Relaxed);
        if scanned < WARM_BYTES {
            if let Some(Ok(found)) = self.dfa().map(|dfa| dfa.try_search_fwd(&input)) {
                let len = u32::try_from(text.len()).unwrap_or(u32::MAX);
                self.scanned
                    .store(scanned.saturating_add(len), Ordering::Relaxed);
                return Some(found.is_some());
            }
        }
        let regex = self.regex()?;
        let mut caches = regex.caches.get();
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

    /// The DFA built ahead of time, if there is one.
    fn dfa(&self) -> Option<&sparse::DFA<Vec<u8>>> {
        self.dfa
            .get_or_init(|| {
                let bytes = self.ahead.as_ref()?;
                let (dfa, _) = sparse::DFA::from_bytes(bytes).ok()?;
                Some(dfa.to_owned())
            })
            .as_ref()
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

/// A DFA of the expression that says whether it matches, serialized; none
/// when it would be larger than [`AHEAD_LIMIT`]. Building one takes far
/// longer than compiling the expression, so it is built only when a
/// knowledge base is written as bytes (`kb` does so for its bundled one as
/// it is built), and it spares each run of the program compiling it.
fn ahead(source: &str) -> Option<Bytes> {
    let config = dense::Config::new()
        .minimize(true)
        .start_kind(StartKind::Unanchored)
        .unicode_word_boundary(true)
        .dfa_size_limit(Some(AHEAD_LIMIT))
        .determinize_size_limit(Some(AHEAD_LIMIT));
    let dfa = dense::Builder::new()
        .configure(config)
        .build(source)
        .ok()?
        .to_sparse()
        .ok()?;
    Some(Bytes::from(dfa.to_bytes_little_endian()))
}

/// The largest DFA built ahead of time.
const AHEAD_LIMIT: usize = 256 << 10;

/// How many bytes a DFA built ahead of time searches before the expression
/// is compiled to a lazy DFA. A sparse DFA finds each byte's transition by
/// scanning a list, and costs about 140 instructions a byte where the lazy
/// DFA costs a few; compiling costs about as much as the sparse DFA
/// searching this many bytes. Switching then never costs more than twice
/// the better choice made knowing the future: one diagnosis searches a few
/// short messages and compiles nothing, a stream compiles within its first
/// bundles.
const WARM_BYTES: u32 = 2048;

impl Clone for Pattern {
    fn clone(&self) -> Self {
        Self {
            source: self.source.clone(),
            ahead: self.ahead.clone(),
            dfa: self.dfa.clone(),
            scanned: AtomicU32::new(self.scanned.load(Ordering::Relaxed)),
            regex: self.regex.clone(),
        }
    }
}

impl Serialize for Pattern {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let ahead = self.ahead.clone().or_else(|| ahead(&self.source));
        (&self.source, ahead.map(SharedBytes)).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (source, ahead) = <(Box<str>, Option<SharedBytes>)>::deserialize(deserializer)?;
        Ok(Self {
            ahead: ahead.map(|SharedBytes(bytes)| bytes),
            ..Self::new(source)
        })
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use super::{Pattern, WARM_BYTES};

    const SOURCE: &str = r"(?i)exit code:? (\d+)|\bOOMKilled\b";

    const TEXTS: [&str; 5] = [
        "Back-off restarting failed container app: Exit Code: 137",
        "Last State: Terminated, Reason: OOMKilled",
        "OOMKilledX is not a word boundary",
        "容器退出 exit code 1",
        "",
    ];

    #[test]
    fn matches_and_captures_as_the_regex_crate_does() {
        let pattern = Pattern::check(SOURCE).unwrap();
        let regex = regex::Regex::new(SOURCE).unwrap();
        for text in TEXTS {
            let captured = regex
                .captures(text)
                .and_then(|found| found.get(1).or_else(|| found.get(0)))
                .map(|m| m.as_str());
            assert_eq!(pattern.is_match(text), Some(regex.is_match(text)), "{text}");
            assert_eq!(pattern.capture(text), Some(captured), "{text}");
        }
    }

    #[test]
    fn a_loaded_expression_matches_with_its_dfa_and_then_compiled() {
        let bytes = postcard::to_allocvec(&Pattern::check(SOURCE).unwrap()).unwrap();
        let loaded: Pattern = postcard::from_bytes(&bytes).unwrap();
        assert!(loaded.ahead.is_some());
        let regex = regex::Regex::new(SOURCE).unwrap();
        let check = |texts: &[&str]| {
            for text in texts {
                assert_eq!(loaded.is_match(text), Some(regex.is_match(text)), "{text}");
            }
        };
        // Short ASCII texts: the DFA answers, nothing is compiled.
        let ascii = &TEXTS[..3];
        check(ascii);
        assert!(loaded.dfa.get().is_some_and(Option::is_some));
        assert!(loaded.regex.get().is_none());
        // Once it has searched enough, the expression is compiled.
        let round: usize = ascii.iter().map(|text| text.len()).sum();
        for _ in 0..=WARM_BYTES as usize / round {
            check(ascii);
        }
        assert!(loaded.regex.get().is_some_and(Option::is_some));
        check(&TEXTS);
    }

    #[test]
    fn an_expression_whose_dfa_would_be_too_large_is_compiled_when_used() {
        // Counting back 20 bytes from the end needs 2^20 DFA states.
        let source = r"[ab]*a[ab]{20}$";
        let bytes = postcard::to_allocvec(&Pattern::check(source).unwrap()).unwrap();
        let loaded: Pattern = postcard::from_bytes(&bytes).unwrap();
        assert!(loaded.ahead.is_none());
        assert_eq!(loaded.is_match(&format!("a{}", "b".repeat(20))), Some(true));
        assert_eq!(loaded.is_match(&"b".repeat(21)), Some(false));
    }
}
