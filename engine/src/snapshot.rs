//! A compiled knowledge base as bytes: a program embeds one and loads it
//! without parsing or compiling rules (`kb` does so with its bundled one).

use std::cell::{Cell, RefCell};
use std::fmt;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use kb_dsl::{Source, ast};
use serde::de::{self, Deserializer, Visitor};
use serde::ser::Error as _;
use serde::{Deserialize, Serialize, Serializer};

use crate::KnowledgeBase;

/// What the bytes start with: the format changes with the engine, so bytes
/// of another version are refused rather than misread.
const HEADER: &str = concat!("kb-engine ", env!("CARGO_PKG_VERSION"), "\n");

/// Why bytes are not a compiled knowledge base.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// Made by another version of the engine, or not by the engine at all.
    #[error("not a knowledge base compiled by {}", HEADER.trim_end())]
    Version,
    /// Truncated or altered.
    #[error("damaged compiled knowledge base: {0}")]
    Format(#[from] postcard::Error),
    /// Decodes, but does not hold together: altered, or not made by
    /// [`KnowledgeBase::to_bytes`].
    #[error("inconsistent compiled knowledge base: {0}")]
    Inconsistent(String),
}

/// A compiled knowledge base in two parts, for a program to embed: its
/// texts for people, one after the other, which embedded as a `&'static str`
/// (`include_str!`) are checked as UTF-8 when the program is compiled; and
/// the rest, which gives the length of each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parts {
    /// The texts.
    pub texts: String,
    /// The rest.
    pub rest: Vec<u8>,
}

impl Parts {
    /// The same knowledge base as bytes for [`KnowledgeBase::from_bytes`].
    pub fn to_bytes(&self) -> Vec<u8> {
        let Some(body) = self.rest.strip_prefix(HEADER.as_bytes()) else {
            // Not parts of a knowledge base: refused as such.
            return self.rest.clone();
        };
        let mut bytes = HEADER.as_bytes().to_vec();
        bytes.extend(postcard::to_allocvec(self.texts.as_str()).unwrap_or_default());
        bytes.extend(body);
        bytes
    }

    /// Loads the parts with every check [`KnowledgeBase::from_bytes`] makes,
    /// for a program's build to check those it embeds.
    pub fn check(&self) -> Result<(), SnapshotError> {
        KnowledgeBase::from_bytes(self.to_bytes(), []).map(drop)
    }
}

impl KnowledgeBase {
    /// The knowledge base as bytes for [`KnowledgeBase::from_bytes`]. The
    /// same knowledge base always gives the same bytes.
    ///
    /// Its texts for people come first, one after the other in the order
    /// they are read, and the rest gives the length of each: loading checks
    /// them as UTF-8 all at once, many times faster than text by text.
    pub fn to_bytes(&self) -> Result<Vec<u8>, SnapshotError> {
        Ok(self.to_parts()?.to_bytes())
    }

    /// [`KnowledgeBase::to_bytes`] without the DFAs of its regular
    /// expressions and the literals every match contains, which take nearly
    /// all the time of writing (a hundred times the rest for the bundled
    /// rules) and most of the bytes: for bytes written as a program runs, a
    /// cache of what it compiled. Loaded, the expressions are compiled when
    /// first used, as compiled rules' are.
    pub fn to_bytes_without_dfas(&self) -> Result<Vec<u8>, SnapshotError> {
        let previous = WITHOUT_DFAS.replace(true);
        let bytes = self.to_bytes();
        WITHOUT_DFAS.set(previous);
        bytes
    }

    /// The knowledge base as [`Parts`], for a program to embed and load
    /// with [`KnowledgeBase::from_checked_parts`].
    pub fn to_parts(&self) -> Result<Parts, SnapshotError> {
        let previous = TEXTS.replace(Some(String::new()));
        let body = postcard::to_allocvec(self);
        let texts = TEXTS.replace(previous).unwrap_or_default();
        let mut rest = HEADER.as_bytes().to_vec();
        rest.extend(body?);
        Ok(Parts { texts, rest })
    }

    /// A knowledge base from [`KnowledgeBase::to_bytes`], with its locations
    /// pointing into `sources`, the rule files it was compiled from. Regular
    /// expressions and command templates compile when first used, and the
    /// rule tests are decoded when first asked for
    /// ([`KnowledgeBase::tests`]); the warnings compiling found are not kept.
    ///
    /// Loading checks that the knowledge base holds together (every id it
    /// uses exists, nothing leads in circles, nothing is nested too deep),
    /// so that bytes from elsewhere give an error, never a panic later.
    /// Texts and encoded parts stay slices of `bytes`, not copies.
    pub fn from_bytes(
        bytes: impl Into<Bytes>,
        sources: impl IntoIterator<Item = Arc<Source>>,
    ) -> Result<Self, SnapshotError> {
        let bytes = bytes.into();
        let body = bytes
            .strip_prefix(HEADER.as_bytes())
            .ok_or(SnapshotError::Version)?;
        let (texts, rest) = postcard::take_from_bytes::<&[u8]>(body)?;
        simdutf8::basic::from_utf8(texts)
            .map_err(|_| SnapshotError::Format(postcard::Error::DeserializeBadUtf8))?;
        let end = bytes.len() - rest.len();
        let loaded = Loaded {
            bytes: bytes.clone(),
            next: end - texts.len(),
            texts_start: end - texts.len(),
            texts_end: end,
            static_texts: None,
            lazy: false,
        };
        let kb = Self::load(loaded, rest, sources)?;
        crate::consistency::check(&kb).map_err(SnapshotError::Inconsistent)?;
        Ok(kb)
    }

    /// A knowledge base from [`Parts`] compiled into the program, checked
    /// when it was built ([`Parts::check`]): loading then checks neither
    /// its texts, which `include_str!` checked as UTF-8, nor that it holds
    /// together, and copies nothing. The parts must have been checked:
    /// evaluating parts that were not may panic, or nest deep enough to
    /// exhaust the stack.
    pub fn from_checked_parts(
        texts: &'static str,
        rest: &'static [u8],
        sources: impl IntoIterator<Item = Arc<Source>>,
    ) -> Result<Self, SnapshotError> {
        let body = rest
            .strip_prefix(HEADER.as_bytes())
            .ok_or(SnapshotError::Version)?;
        let loaded = Loaded {
            bytes: Bytes::from_static(rest),
            next: 0,
            texts_start: 0,
            texts_end: texts.len(),
            static_texts: Some(texts),
            lazy: true,
        };
        Self::load(loaded, body, sources)
    }

    /// Decodes `body`, its texts read from `loaded`.
    fn load(
        loaded: Loaded,
        body: &[u8],
        sources: impl IntoIterator<Item = Arc<Source>>,
    ) -> Result<Self, SnapshotError> {
        kb_dsl::source::with_sources(sources, || decode(loaded, body))
    }

    /// The rule tests. Decoding them, for a knowledge base loaded from
    /// bytes, fails if those bytes were damaged.
    pub fn tests(&self) -> Result<&[ast::Test], SnapshotError> {
        self.tests.get()
    }
}

/// The rule tests of a knowledge base. Loaded from bytes, they stay encoded
/// until asked for: a diagnosis never reads them, and decoding them was
/// nearly a third of loading the bundled knowledge base.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tests {
    decoded: OnceLock<Vec<ast::Test>>,
    encoded: Option<Arc<Encoded>>,
}

/// Tests as bytes, with the rule files their locations point into.
struct Encoded {
    bytes: Bytes,
    sources: Vec<Arc<Source>>,
}

impl fmt::Debug for Encoded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bytes", self.bytes.len())
    }
}

impl Tests {
    pub fn new(tests: Vec<ast::Test>) -> Self {
        Self {
            decoded: OnceLock::from(tests),
            encoded: None,
        }
    }

    /// The tests, decoded now if they were not yet.
    pub fn get(&self) -> Result<&[ast::Test], SnapshotError> {
        if let Some(tests) = self.decoded.get() {
            return Ok(tests);
        }
        let Some(encoded) = &self.encoded else {
            return Ok(&[]);
        };
        let tests = kb_dsl::source::with_sources(encoded.sources.iter().cloned(), || {
            postcard::from_bytes(&encoded.bytes)
        })?;
        Ok(self.decoded.get_or_init(|| tests))
    }
}

impl Serialize for Tests {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match (&self.encoded, self.decoded.get()) {
            (Some(encoded), _) => serializer.serialize_bytes(&encoded.bytes),
            (None, tests) => {
                let tests = tests.map_or(&[][..], Vec::as_slice);
                let bytes = postcard::to_allocvec(tests).map_err(S::Error::custom)?;
                serializer.serialize_bytes(&bytes)
            }
        }
    }
}

impl<'de> Deserialize<'de> for Tests {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let SharedBytes(bytes) = SharedBytes::deserialize(deserializer)?;
        Ok(Self {
            decoded: OnceLock::new(),
            encoded: Some(Arc::new(Encoded {
                bytes,
                sources: kb_dsl::source::current_sources(),
            })),
        })
    }
}

/// The decision graph as its nodes and its edges, in the order of their
/// indices: decoded into vectors of the right size, then built at once
/// (petgraph's own decoding grows them edge by edge).
pub(crate) mod graph {
    use petgraph::graph::{DiGraph, NodeIndex};
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::kb::{Edge, Node};

    pub(crate) fn serialize<S: Serializer>(
        graph: &DiGraph<Node, Edge>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let nodes: Vec<&Node> = graph.node_weights().collect();
        let edges: Vec<(usize, usize, &Edge)> = graph
            .raw_edges()
            .iter()
            .map(|e| (e.source().index(), e.target().index(), &e.weight))
            .collect();
        (nodes, edges).serialize(serializer)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<DiGraph<Node, Edge>, D::Error> {
        let (nodes, edges) = <(Vec<Node>, Vec<(usize, usize, Edge)>)>::deserialize(deserializer)?;
        let mut graph = DiGraph::with_capacity(nodes.len(), edges.len());
        for node in nodes {
            graph.add_node(node);
        }
        for (source, target, edge) in edges {
            let count = graph.node_count();
            if source >= count || target >= count {
                return Err(D::Error::custom("an edge between nodes that do not exist"));
            }
            graph.add_edge(NodeIndex::new(source), NodeIndex::new(target), edge);
        }
        Ok(graph)
    }
}

/// How deep the nested parts of a knowledge base (types and what an input
/// needs, decoded with [`nested`]; expressions, checked once decoded) may
/// be: what compiling makes of the deepest expressions rules may hold, with
/// room to spare.
pub(crate) const MAX_DEPTH: usize = kb_dsl::MAX_EXPR_DEPTH + 8;

/// The most a vector decoded with [`sized_vec`] reserves before it has its
/// elements. postcard claims no more elements than bytes are left, but an
/// element may take hundreds of bytes decoded for each one encoded: bytes
/// from elsewhere cost no more than this before they are refused.
const MAX_RESERVED: usize = 64 << 20;

/// Decodes a vector with room for all of its elements from the start, up
/// to [`MAX_RESERVED`] bytes; serde reserves at most 1 MiB, and the large
/// vectors of a large knowledge base, grown by doubling, were copied again
/// and again.
pub(crate) fn sized_vec<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Sized<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Sized<T> {
        type Value = Vec<T>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a sequence")
        }

        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let most = MAX_RESERVED / std::mem::size_of::<T>().max(1);
            let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(most));
            while let Some(item) = seq.next_element()? {
                items.push(item);
            }
            Ok(items)
        }
    }
    deserializer.deserialize_seq(Sized(std::marker::PhantomData))
}

thread_local! {
    /// How deep the recursive part being decoded on this thread is.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Decodes one level of a recursive type with `inner`, its derived
/// decoding; bytes nested deeper than [`MAX_DEPTH`] are refused: decoding
/// them, evaluating or even dropping them would exhaust the stack.
pub(crate) fn nested<'de, D: Deserializer<'de>, T>(
    deserializer: D,
    inner: fn(D) -> Result<T, D::Error>,
) -> Result<T, D::Error> {
    let depth = DEPTH.get();
    if depth >= MAX_DEPTH {
        return Err(de::Error::custom("nested too deeply"));
    }
    DEPTH.set(depth + 1);
    let decoded = inner(deserializer);
    DEPTH.set(depth);
    decoded
}

thread_local! {
    /// What a knowledge base is being loaded from, on this thread.
    static LOADING: RefCell<Option<Loaded>> = const { RefCell::new(None) };
    /// The texts of a knowledge base being written as bytes on this thread.
    static TEXTS: RefCell<Option<String>> = const { RefCell::new(None) };
    /// Whether a knowledge base is being written without its regular
    /// expressions' DFAs ([`KnowledgeBase::to_bytes_without_dfas`]).
    static WITHOUT_DFAS: Cell<bool> = const { Cell::new(false) };
}

/// Whether the knowledge base being written on this thread gets its
/// regular expressions' DFAs, built if need be.
pub(crate) fn with_dfas() -> bool {
    !WITHOUT_DFAS.get()
}

/// The bytes a knowledge base is loaded from, and where the texts not yet
/// read are in them, checked as UTF-8.
#[derive(Clone)]
pub(crate) struct Loaded {
    bytes: Bytes,
    next: usize,
    texts_start: usize,
    texts_end: usize,
    /// The texts, when the bytes are static.
    static_texts: Option<&'static str>,
    /// Whether [`Lazy`](crate::Lazy) parts stay encoded until read: the
    /// bytes were checked before (from [`Parts`] checked when built).
    lazy: bool,
}

/// Marks what a knowledge base is loaded from while it lasts.
struct Loading(Option<Loaded>);

impl From<Loaded> for Loading {
    fn from(loaded: Loaded) -> Self {
        Self(LOADING.replace(Some(loaded)))
    }
}

impl Drop for Loading {
    fn drop(&mut self) {
        LOADING.set(self.0.take());
    }
}

/// `bytes` as a slice of the bytes being loaded when it is part of them,
/// else copied.
pub(crate) fn shared(bytes: &[u8]) -> Bytes {
    LOADING.with_borrow(|loading| match loading {
        Some(Loaded { bytes: whole, .. }) if contains(whole, bytes) => whole.slice_ref(bytes),
        _ => Bytes::copy_from_slice(bytes),
    })
}

/// Adds a text to those of the knowledge base being written as bytes, if
/// one is; `false` when none is.
pub(crate) fn write_text(text: &str) -> bool {
    TEXTS.with_borrow_mut(|texts| texts.as_mut().map(|texts| texts.push_str(text)).is_some())
}

/// Whether a knowledge base is being loaded on this thread, its texts
/// apart from the rest.
pub(crate) fn loading_texts() -> bool {
    LOADING.with_borrow(Option::is_some)
}

/// Decodes `body`, its texts read from `loaded`.
pub(crate) fn decode<T: de::DeserializeOwned>(
    loaded: Loaded,
    body: &[u8],
) -> Result<T, SnapshotError> {
    let _loading = Loading::from(loaded);
    let decoded = postcard::from_bytes(body)?;
    // Texts are read one after the other: one left over means each was
    // read where another one is.
    let left = LOADING.with_borrow(|loading| {
        loading
            .as_ref()
            .map_or(0, |loaded| loaded.texts_end - loaded.next)
    });
    if left != 0 {
        return Err(SnapshotError::Format(
            postcard::Error::DeserializeBadEncoding,
        ));
    }
    Ok(decoded)
}

/// How many bytes of texts the knowledge base being written has so far,
/// if one is being written.
pub(crate) fn written_texts() -> Option<usize> {
    TEXTS.with_borrow(|texts| texts.as_ref().map(String::len))
}

/// Takes the next `len` bytes of texts of the knowledge base being loaded,
/// for a part decoded apart: what to decode it with, and whether it may be
/// decoded later. `None` when no knowledge base is being loaded; an error
/// when those bytes are not whole texts.
pub(crate) fn take_texts(len: usize) -> Option<Result<(Loaded, bool), ()>> {
    LOADING.with_borrow_mut(|loading| {
        let loaded = loading.as_mut()?;
        let Some(range) = loaded.take(len) else {
            return Some(Err(()));
        };
        let part = Loaded {
            next: range.start,
            texts_end: range.end,
            ..loaded.clone()
        };
        Some(Ok((part, loaded.lazy)))
    })
}

/// A text of a knowledge base being loaded ([`next_text`]).
pub(crate) enum LoadedText {
    /// A slice of the bytes, checked as UTF-8.
    Shared(Bytes),
    /// A slice of static bytes.
    Static(&'static str),
}

/// The next text, `len` bytes long, of the knowledge base being loaded;
/// `None` when that is not a whole text: past the last, or cutting a
/// character.
pub(crate) fn next_text(len: usize) -> Option<LoadedText> {
    LOADING.with_borrow_mut(|loading| {
        let loaded = loading.as_mut()?;
        let range = loaded.take(len)?;
        Some(match loaded.static_texts {
            Some(texts) => {
                let start = loaded.texts_start;
                LoadedText::Static(texts.get(range.start - start..range.end - start)?)
            }
            None => LoadedText::Shared(loaded.bytes.slice(range)),
        })
    })
}

impl Loaded {
    /// Moves past the next `len` bytes of texts when they are whole texts:
    /// where they are in the bytes. `None` when they run past the last text
    /// or cut a character.
    fn take(&mut self, len: usize) -> Option<std::ops::Range<usize>> {
        let end = self
            .next
            .checked_add(len)
            .filter(|end| *end <= self.texts_end)?;
        let whole = match self.static_texts {
            Some(texts) => texts.is_char_boundary(end - self.texts_start),
            // Valid UTF-8 cut where no character continues is valid UTF-8;
            // a text starts where the one before ended.
            None => {
                end == self.texts_end || self.bytes.get(end).is_some_and(|b| (*b as i8) >= -0x40)
            }
        };
        whole.then(|| std::mem::replace(&mut self.next, end)..end)
    }
}

fn contains(whole: &[u8], part: &[u8]) -> bool {
    let (whole, part) = (whole.as_ptr_range(), part.as_ptr_range());
    whole.start <= part.start && part.end <= whole.end
}

/// Bytes that stay a slice of the bytes being loaded ([`shared`]).
pub(crate) struct SharedBytes(pub Bytes);

impl Serialize for SharedBytes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for SharedBytes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_bytes(Shared).map(SharedBytes)
    }
}

/// Bytes read as [`shared`] ones.
struct Shared;

impl<'de> Visitor<'de> for Shared {
    type Value = Bytes;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("bytes")
    }

    fn visit_borrowed_bytes<E>(self, bytes: &'de [u8]) -> Result<Bytes, E> {
        Ok(shared(bytes))
    }

    fn visit_bytes<E>(self, bytes: &[u8]) -> Result<Bytes, E> {
        Ok(Bytes::copy_from_slice(bytes))
    }

    fn visit_byte_buf<E>(self, bytes: Vec<u8>) -> Result<Bytes, E> {
        Ok(Bytes::from(bytes))
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use bytes::Bytes;

    use super::{Loaded, LoadedText, Loading, next_text};

    #[test]
    fn a_loaded_text_is_the_next_whole_text() {
        const WHOLE: &str = "head中文ab中tail";
        for static_texts in [None, WHOLE.get(4..15)] {
            let _loading = Loading::from(Loaded {
                bytes: Bytes::from_static(WHOLE.as_bytes()),
                next: 4,
                texts_start: 4,
                texts_end: 15,
                static_texts,
                lazy: false,
            });
            next_texts_are_whole();
        }
    }

    #[test]
    fn a_graph_is_decoded_as_written_and_its_edges_must_join_its_nodes() {
        use petgraph::graph::DiGraph;
        use serde::{Deserialize, Serialize};

        use crate::kb::{CauseId, CheckId, Edge, Node, SymptomId};

        #[derive(Serialize, Deserialize)]
        struct Graph(#[serde(with = "super::graph")] DiGraph<Node, Edge>);

        let mut graph = DiGraph::new();
        let symptom = graph.add_node(Node::Symptom(SymptomId(0)));
        let check = graph.add_node(Node::Check(CheckId(0)));
        let cause = graph.add_node(Node::Cause(CauseId(0)));
        graph.add_edge(symptom, check, Edge::Enter);
        graph.add_edge(check, cause, Edge::Branch(0));
        graph.add_edge(check, cause, Edge::Otherwise);
        let bytes = postcard::to_allocvec(&Graph(graph.clone())).unwrap();
        let Graph(decoded) = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(format!("{decoded:?}"), format!("{graph:?}"));

        let dangling = (
            vec![Node::Symptom(SymptomId(0))],
            vec![(0_usize, 1_usize, Edge::Enter)],
        );
        let bytes = postcard::to_allocvec(&dangling).unwrap();
        assert!(postcard::from_bytes::<Graph>(&bytes).is_err());
    }

    fn next_texts_are_whole() {
        let text = |len| {
            next_text(len).map(|text| match text {
                LoadedText::Shared(bytes) => String::from_utf8(bytes.to_vec()).unwrap(),
                LoadedText::Static(text) => text.to_owned(),
            })
        };
        assert_eq!(text(2), None, "cuts a character");
        assert_eq!(text(6).as_deref(), Some("中文"));
        assert_eq!(text(0).as_deref(), Some(""));
        assert_eq!(text(1).as_deref(), Some("a"));
        assert_eq!(text(5), None, "runs past the texts");
        assert_eq!(text(usize::MAX), None);
        assert_eq!(
            text(4).as_deref(),
            Some("b中"),
            "the last, to the end of the texts"
        );
        assert_eq!(text(1), None);
    }
}
