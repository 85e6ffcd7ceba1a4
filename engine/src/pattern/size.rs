//! An upper bound of what building an expression's program takes, read off
//! its syntax tree.
//!
//! Checking an expression builds its program (a Thompson NFA) to learn
//! whether it fits the size limit, and building costs more than parsing.
//! Most expressions are far below the limit: when this bound says so, the
//! program need not be built to know. The bound follows how regex-automata's
//! compiler turns each kind of node into states, with room to spare; a
//! property test builds programs under a limit equal to the bound, which
//! they must fit.

use regex_syntax::hir::{Class, Hir, HirKind};

/// What one state of the program under construction may take, with the
/// targets a union state gains as it is patched (four bytes each): a
/// builder state is an enum of at most 32 bytes on 64-bit targets.
const STATE: usize = 64;

/// What one byte-range transition of a sparse state takes.
const TRANSITION: usize = 8;

/// How many UTF-8 sequences one range of Unicode scalar values splits into
/// at most: one of one byte, three of two, ten of three (split again around
/// the surrogates) and seven of four.
const SEQUENCES_PER_RANGE: usize = 24;

/// An upper bound, in bytes, of the memory the program of `hir` takes while
/// it is built, as regex-automata counts it against its size limit.
pub(super) fn program_bound(hir: &Hir) -> usize {
    // The unanchored prefix `(?s-u:.)*?`, the implicit group around the
    // whole expression, its match state, and the start.
    let frame = 16 * STATE;
    node(hir).saturating_add(frame)
}

fn node(hir: &Hir) -> usize {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => STATE,
        // One state per byte; a trie of literals takes no more, with one
        // transition per byte.
        HirKind::Literal(literal) => literal.0.len().saturating_mul(STATE + TRANSITION) + STATE,
        // Each UTF-8 sequence adds at most one state and one transition
        // per byte, four bytes at most.
        HirKind::Class(Class::Unicode(class)) if !class.is_ascii() => {
            let per_range = SEQUENCES_PER_RANGE * 4 * (STATE + TRANSITION);
            class.ranges().len().saturating_mul(per_range) + STATE
        }
        // Bytes, or ASCII: one sparse state, a transition per range.
        HirKind::Class(class) => {
            let ranges = match class {
                Class::Unicode(class) => class.ranges().len(),
                Class::Bytes(class) => class.ranges().len(),
            };
            2 * STATE + ranges * TRANSITION
        }
        HirKind::Capture(capture) => node(&capture.sub).saturating_add(2 * STATE),
        HirKind::Concat(children) => children.iter().map(node).fold(STATE, usize::saturating_add),
        HirKind::Alternation(children) => children
            .iter()
            .map(|child| node(child).saturating_add(STATE))
            .fold(2 * STATE, usize::saturating_add),
        HirKind::Repetition(repetition) => {
            // Each copy of the repeated expression comes with at most two
            // states of its own (a union and an empty state); `{n,}` makes
            // n copies, `{n,m}` m, and `*`, `+` and `?` make one.
            let copies = match repetition.max {
                Some(max) => max.max(1),
                None => repetition.min.saturating_add(1),
            };
            let copy = node(&repetition.sub).saturating_add(2 * STATE);
            usize::try_from(copies)
                .unwrap_or(usize::MAX)
                .saturating_mul(copy)
                .saturating_add(2 * STATE)
        }
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use proptest::prelude::*;
    use regex_automata::nfa::thompson;

    use super::program_bound;

    fn hir(source: &str) -> regex_syntax::hir::Hir {
        regex_syntax::Parser::new().parse(source).unwrap()
    }

    /// Whether the program of `source` builds within `limit` bytes, built
    /// as checking builds it.
    fn fits(source: &str, limit: usize) -> bool {
        thompson::Compiler::new()
            .configure(thompson::Config::new().nfa_size_limit(Some(limit)))
            .build_from_hir(&hir(source))
            .is_ok()
    }

    #[test]
    fn expressions_of_the_bundled_rules_fit_without_building() {
        for source in [
            r"^(0/[0-9]+ nodes are available|No nodes are available that match)",
            r"(?m)^\s*[0-9]+\s+D",
            r"(?i)exceeded quota: |failed quota: ",
            r"low on resource: memory|had condition: \[[^\]]*MemoryPressure",
            r"unknown blob|blob unknown|file integrity checksum failed|failed size validation|unexpected commit digest|filesystem layer verification failed|readlink \S+: invalid argument|blobs/sha256:[0-9a-f]+ not found",
        ] {
            let bound = program_bound(&hir(source));
            assert!(bound <= super::super::SIZE_LIMIT, "{source}: {bound}");
            assert!(fits(source, bound), "{source}");
        }
    }

    #[test]
    fn large_programs_are_left_to_building() {
        // Unicode word characters, repeated: the bound exceeds the limit,
        // so the program is built to tell. So it is for 3 of the bundled
        // rules' 67 expressions, such as the last one here.
        for source in [
            r"\w{50}",
            r"(?i)\w+\s+\w+",
            r"[\p{L}\p{N}]{20,30}",
            r"(maximum|minimum) [\w./-]+ usage per (Container|Pod|PersistentVolumeClaim) is ",
        ] {
            assert!(
                program_bound(&hir(source)) > super::super::SIZE_LIMIT,
                "{source}"
            );
        }
    }

    /// Pieces of expressions of every kind of node: literals, ASCII,
    /// Unicode and byte classes, look-around, groups, case folding.
    fn atom() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-zA-Z0-9 ]{1,12}",
            Just(String::from(".")),
            Just(String::from(r"\d")),
            Just(String::from(r"\w")),
            Just(String::from(r"\s")),
            Just(String::from("[a-z.]")),
            Just(String::from("[^a-z]")),
            Just(String::from(r"\p{Greek}")),
            Just(String::from(r"(?-u:[\x00-\x7F])")),
            Just(String::from(r"(?-u:\w)")),
            Just(String::from("(?i)k")),
            Just(String::from("(?i)straße")),
            Just(String::from("日本")),
            Just(String::from(r"\b")),
            Just(String::from("^")),
            Just(String::from("")),
        ]
    }

    fn expression() -> impl Strategy<Value = String> {
        atom().prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 2..4).prop_map(|parts| parts.concat()),
                prop::collection::vec(inner.clone(), 2..4)
                    .prop_map(|parts| format!("(?:{})", parts.join("|"))),
                inner.clone().prop_map(|part| format!("({part})")),
                (inner, 0..6u32, prop::option::of(0..6u32), any::<bool>()).prop_map(
                    |(part, min, extra, lazy)| {
                        let repeat = match extra {
                            Some(extra) => format!("{{{min},{}}}", min + extra),
                            None if min == 0 => String::from("*"),
                            None => format!("{{{min},}}"),
                        };
                        format!("(?:{part}){repeat}{}", if lazy { "?" } else { "" })
                    }
                ),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The program fits a limit equal to the bound: an expression the
        /// bound passes cannot exceed the real limit.
        #[test]
        fn the_program_fits_within_its_bound(source in expression()) {
            let bound = program_bound(&hir(&source));
            prop_assert!(fits(&source, bound), "{source}: {bound}");
        }
    }
}
