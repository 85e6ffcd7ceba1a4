//! The regular expressions of rules (`matches`, `capture`).
//!
//! Compiling rules checks each one as regex-automata would build it (its
//! syntax, and the size of its compiled program), and evaluation compiles
//! it the first time it meets a string to match: an evaluation uses few of
//! a knowledge base's expressions, and keeping every one compiled would
//! cost far more time and memory than checking it. A knowledge base written
//! as bytes carries a DFA of each, built then, so that a program loading it
//! (`kb` its bundled one) answers at once, and strings one of which every
//! match contains: a text without any of them is answered without even
//! loading that DFA.

use std::fmt;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use regex_automata::dfa::{Automaton, StartKind, dense, sparse};
use regex_automata::hybrid;
use regex_automata::nfa::thompson::{self, NFA, pikevm, pikevm::PikeVM};
use regex_automata::util::pool::Pool;
use regex_automata::util::prefilter::Prefilter;
use regex_automata::{Input, MatchKind};
use regex_syntax::hir::literal::{ExtractKind, Extractor, Seq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::snapshot::SharedBytes;
use crate::text::Text;

mod size;

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
    source: Text,
    /// In a knowledge base loaded from bytes, a DFA built when they were
    /// written ([`ahead`]), serialized: it answers without compiling.
    ahead: Option<Bytes>,
    /// That DFA, ready to search; boxed, as most are never read, and a
    /// knowledge base's expressions are decoded into one vector.
    dfa: OnceLock<Option<Box<sparse::DFA<Vec<u8>>>>>,
    /// Strings one of which every match contains ([`needles`]): found when
    /// the knowledge base was written as bytes, or when first searched for.
    /// Finding them is a small part of compiling the expression, which a
    /// text without any of them does not need.
    needles: OnceLock<Option<Box<[Bytes]>>>,
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
        let hir = parse(source)?;
        // Building the program only to learn its size costs more than
        // parsing; most expressions are known to fit without it.
        if size::program_bound(&hir) > SIZE_LIMIT {
            build_program(&hir)?;
        }
        Ok(Self::new(source.into()))
    }

    /// A regular expression checked apart ([`Pattern::check`]).
    pub fn unchecked(source: &str) -> Self {
        Self::new(source.into())
    }

    fn new(source: Text) -> Self {
        Self {
            source,
            ahead: None,
            dfa: OnceLock::new(),
            needles: OnceLock::new(),
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
            let len = u32::try_from(text.len()).unwrap_or(u32::MAX);
            let found = if self.lacks_needles(text) {
                Some(false)
            } else {
                match self.dfa().map(|dfa| dfa.try_search_fwd(&input)) {
                    Some(Ok(found)) => Some(found.is_some()),
                    _ => None,
                }
            };
            if found.is_some() {
                self.scanned
                    .store(scanned.saturating_add(len), Ordering::Relaxed);
                return found;
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
        if self.lacks_needles(text) {
            return Some(None);
        }
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

    /// Whether `text` contains none of the strings one of which every match
    /// contains, so that it cannot match; `false` when there are none.
    fn lacks_needles(&self, text: &str) -> bool {
        self.needles().is_some_and(|needles| {
            !needles
                .iter()
                .any(|needle| memchr::memmem::find(text.as_bytes(), needle).is_some())
        })
    }

    /// The strings one of which every match contains, found now if they
    /// were not yet.
    fn needles(&self) -> Option<&[Bytes]> {
        self.needles
            .get_or_init(|| needles(&self.source))
            .as_deref()
    }

    /// The DFA built ahead of time, if there is one.
    fn dfa(&self) -> Option<&sparse::DFA<Vec<u8>>> {
        self.dfa
            .get_or_init(|| {
                let bytes = self.ahead.as_ref()?;
                let (dfa, _) = sparse::DFA::from_bytes(bytes).ok()?;
                Some(Box::new(dfa.to_owned()))
            })
            .as_deref()
    }

    /// The compiled expression, compiled now if it was not yet.
    fn regex(&self) -> Option<&Compiled> {
        self.regex
            .get_or_init(|| build(&self.source).map(Arc::new))
            .as_deref()
    }
}

/// The syntax tree of an expression; the message says what is wrong.
fn parse(source: &str) -> Result<regex_syntax::hir::Hir, String> {
    regex_syntax::Parser::new()
        .parse(source)
        .map_err(|error| error.to_string())
}

/// The program of a parsed expression, with its size checked.
fn build_program(hir: &regex_syntax::hir::Hir) -> Result<NFA, String> {
    NFA_COMPILER.with(|compiler| {
        compiler
            .build_from_hir(hir)
            .map_err(|error| match error.size_limit() {
                Some(limit) => format!("compiled, it would exceed the size limit of {limit} bytes"),
                None => error.to_string(),
            })
    })
}

fn build(source: &str) -> Option<Compiled> {
    let hir = parse(source).ok()?;
    let nfa = build_program(&hir).ok()?;
    // As the regex crate does: where every match starts with one of a few
    // literals, a quick search for them (SIMD) skips the text no match can
    // start in, which the lazy DFA would read a byte at a time.
    let prefilter =
        Prefilter::from_hir_prefix(MatchKind::LeftmostFirst, &hir).filter(Prefilter::is_fast);
    let dfa = hybrid::dfa::DFA::builder()
        .configure(
            hybrid::dfa::Config::new()
                .unicode_word_boundary(true)
                .prefilter(prefilter),
        )
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

/// Strings one of which every match of the expression contains: the
/// literals every match starts with, or those every match ends with,
/// whichever are fewer and longer. None when there is no such finite set of
/// at most [`MAX_NEEDLES`], or when a match may be empty. Look-around
/// assertions (`^`, `\b`) count as matching anywhere, so a text with a
/// needle may still not match; one without any cannot.
fn needles(source: &str) -> Option<Box<[Bytes]>> {
    let hir = regex_syntax::Parser::new().parse(source).ok()?;
    let candidate = |kind| {
        let mut seq = Extractor::new().kind(kind).extract(&hir);
        seq.dedup();
        let len = seq.len()?;
        (len <= MAX_NEEDLES && seq.min_literal_len()? > 0).then_some(seq)
    };
    // Longer needles are rarer; fewer are quicker to look for.
    let best = |seq: &Seq| (seq.min_literal_len(), std::cmp::Reverse(seq.len()));
    let seq = match (
        candidate(ExtractKind::Prefix),
        candidate(ExtractKind::Suffix),
    ) {
        (Some(prefix), Some(suffix)) if best(&suffix) > best(&prefix) => suffix,
        (Some(prefix), _) => prefix,
        (None, suffix) => suffix?,
    };
    let literals = seq.literals()?;
    Some(
        literals
            .iter()
            .map(|literal| Bytes::copy_from_slice(literal.as_bytes()))
            .collect(),
    )
}

/// The most needles looked for before a DFA searches: case-insensitive
/// expressions spell each letter both ways, and the DFA is quicker there.
const MAX_NEEDLES: usize = 32;

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
            needles: self.needles.clone(),
            scanned: AtomicU32::new(self.scanned.load(Ordering::Relaxed)),
            regex: self.regex.clone(),
        }
    }
}

impl Serialize for Pattern {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Without DFAs, the needles are left out too: finding them takes
        // most of the time of writing the rest, and a loaded expression
        // finds them when it first searches.
        let (ahead, needles) = match crate::snapshot::with_dfas() {
            true => (
                self.ahead.clone().or_else(|| ahead(&self.source)),
                self.needles(),
            ),
            false => (None, None),
        };
        let needles =
            needles.map(|needles| needles.iter().cloned().map(SharedBytes).collect::<Vec<_>>());
        (&self.source, ahead.map(SharedBytes), needles).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (source, ahead, needles) =
            <(Text, Option<SharedBytes>, Option<Vec<SharedBytes>>)>::deserialize(deserializer)?;
        Ok(Self {
            ahead: ahead.map(|SharedBytes(bytes)| bytes),
            // Written without them, they are found when first searched for.
            needles: match needles {
                Some(needles) => {
                    OnceLock::from(Some(needles.into_iter().map(|SharedBytes(b)| b).collect()))
                }
                None => OnceLock::new(),
            },
            ..Self::new(source)
        })
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use std::collections::HashMap;
    use std::sync::LazyLock;

    use proptest::prelude::*;

    use super::{Pattern, WARM_BYTES, needles};

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

    /// A pattern as a program loading a knowledge base has it.
    fn loaded(source: &str) -> Pattern {
        let bytes = postcard::to_allocvec(&Pattern::check(source).unwrap()).unwrap();
        postcard::from_bytes(&bytes).unwrap()
    }

    #[test]
    fn a_text_without_what_every_match_contains_is_answered_without_a_dfa() {
        let source = r"^(Failed to pull image|Back-off pulling image) |\bErrImagePull\b";
        let pattern = loaded(source);
        assert!(pattern.needles.get().is_some_and(Option::is_some));
        assert_eq!(pattern.is_match("0/3 nodes are available"), Some(false));
        assert_eq!(pattern.capture("0/3 nodes are available"), Some(None));
        assert!(pattern.dfa.get().is_none(), "nothing loaded");
        assert!(pattern.regex.get().is_none(), "nothing compiled");
        // A needle is not a match: the anchor and the word boundary decide.
        for text in [
            "x Failed to pull image a",
            "ErrImagePullX",
            "ErrImagePull: x",
        ] {
            let expected = regex::Regex::new(source).unwrap().is_match(text);
            assert_eq!(pattern.is_match(text), Some(expected), "{text}");
        }
        assert!(pattern.dfa.get().is_some());
    }

    #[test]
    fn a_text_without_what_every_match_contains_is_answered_without_compiling() {
        let source = r"^(Failed to pull image|Back-off pulling image) |\bErrImagePull\b";
        // As compiling rules leaves it: no DFA built ahead, no needles yet.
        let pattern = Pattern::check(source).unwrap();
        assert!(pattern.needles.get().is_none());
        assert_eq!(pattern.is_match("0/3 nodes are available"), Some(false));
        assert_eq!(pattern.capture("0/3 nodes are available"), Some(None));
        assert!(pattern.needles.get().is_some_and(Option::is_some));
        assert!(pattern.regex.get().is_none(), "nothing compiled");
        assert_eq!(pattern.is_match("x ErrImagePull"), Some(true));
        assert!(pattern.regex.get().is_some());
    }

    #[test]
    fn needles_are_looked_for_only_when_few_and_never_empty() {
        let count = |source| needles(source).map(|needles| needles.len());
        assert_eq!(
            count(r"Insufficient (cpu|memory)"),
            Some(2),
            "the prefixes, longer than the suffixes"
        );
        assert_eq!(count(r"toomanyrequests|429 Too Many Requests"), Some(2));
        assert_eq!(count(r"\S+ not found$"), Some(1), "the suffix");
        assert_eq!(
            count(r"(?i)no command specified"),
            None,
            "too many spellings"
        );
        assert_eq!(count(r"a*|b"), None, "may match the empty text");
        assert_eq!(count(r"\S\s+\S"), None, "no literal");
    }

    #[test]
    fn the_lazy_dfa_skips_to_where_a_match_can_start_when_every_match_starts_with_a_literal() {
        let prefiltered = |source| {
            let pattern = Pattern::check(source).unwrap();
            let regex = pattern.regex().unwrap();
            regex.dfa.get_config().get_prefilter().is_some()
        };
        assert!(prefiltered(
            r"^(Failed to pull image|Back-off pulling image) "
        ));
        assert!(prefiltered(
            r"toomanyrequests|429 Too Many Requests|pull rate limit"
        ));
        assert!(!prefiltered(r"\S\s+\S"), "no literal");
        assert!(!prefiltered(r"[a-z]+ failed"), "too many ways to start");
    }

    const SOURCES: [&str; 7] = [
        r"^(Failed to pull image|Back-off pulling image) ",
        r"\bErrImagePull\b|(?i:unauthorized)",
        r"code = NotFound|manifest for \S+ not found|: not found\b",
        r"(?i)k8s|ſ",
        r"Insufficient (cpu|memory)|Too many pods$",
        r"exec: .*permission denied",
        r"(maximum|minimum) [\w./-]+ usage per (Container|Pod) is ",
    ];

    /// Each of [`SOURCES`] written as bytes, once: building a DFA is slow.
    static WRITTEN: LazyLock<HashMap<&str, Vec<u8>>> = LazyLock::new(|| {
        SOURCES
            .iter()
            .map(|source| {
                let pattern = Pattern::check(source).unwrap();
                (*source, postcard::to_allocvec(&pattern).unwrap())
            })
            .collect()
    });

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// Built from pieces of the expressions, texts often hold a needle
        /// in the wrong place, or half of one.
        #[test]
        fn an_expression_loaded_or_compiled_matches_and_captures_as_the_regex_crate_does(
            source in prop::sample::select(&SOURCES[..]),
            pieces in prop::collection::vec(
                prop::sample::select(vec![
                    "Failed to pull image ", "Back-off pulling image", "ErrImagePull", "x",
                    "UNAUTHORIZED", "unauth", "code = NotFound", "manifest for ", " not found",
                    ": not found", "K8S", "\u{212A}8s", "\u{17F}", "s", "Insufficient cpu",
                    "Insufficient ", "Too many pods", "exec: ", "permission denied", "maximum ",
                    "cpu/x", " usage per Pod is ", " ", "\n", "中文",
                ]),
                0..6,
            ),
        ) {
            let text = pieces.concat();
            // Loaded afresh: the needles are looked for until it has searched enough.
            let pattern: Pattern = postcard::from_bytes(WRITTEN.get(source).unwrap()).unwrap();
            let regex = regex::Regex::new(source).unwrap();
            let captured = regex
                .captures(&text)
                .and_then(|found| found.get(1).or_else(|| found.get(0)))
                .map(|m| m.as_str());
            prop_assert_eq!(pattern.is_match(&text), Some(regex.is_match(&text)));
            prop_assert_eq!(pattern.capture(&text), Some(captured));
            // Checked from its source, it finds its needles as it first
            // searches, and has no DFA built ahead.
            let compiled = Pattern::check(source).unwrap();
            prop_assert_eq!(compiled.is_match(&text), Some(regex.is_match(&text)));
        }
    }
}
