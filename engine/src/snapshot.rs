//! A compiled knowledge base as bytes: a program embeds one and loads it
//! without parsing or compiling rules (`kb` does so with its bundled one).

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use kb_dsl::{Source, ast};
use serde::de::{self, Deserializer, MapAccess, Visitor};
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

impl KnowledgeBase {
    /// The knowledge base as bytes for [`KnowledgeBase::from_bytes`]. The
    /// same knowledge base always gives the same bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, SnapshotError> {
        let mut bytes = HEADER.as_bytes().to_vec();
        postcard::to_io(self, &mut bytes)?;
        Ok(bytes)
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
    /// Texts and encoded parts stay slices of `bytes`: loading from
    /// `&'static [u8]` (bytes compiled into the program) copies none of them.
    pub fn from_bytes(
        bytes: impl Into<Bytes>,
        sources: impl IntoIterator<Item = Arc<Source>>,
    ) -> Result<Self, SnapshotError> {
        let bytes = bytes.into();
        let body = bytes
            .strip_prefix(HEADER.as_bytes())
            .ok_or(SnapshotError::Version)?;
        let _loading = Loading::from(&bytes);
        let kb: Self = kb_dsl::source::with_sources(sources, || postcard::from_bytes(body))?;
        crate::consistency::check(&kb).map_err(SnapshotError::Inconsistent)?;
        Ok(kb)
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

/// Reads a map, written in key order, by building its tree at once:
/// inserting entry by entry compares each key with a dozen others.
pub(crate) fn sorted_map<'de, D, K, V>(deserializer: D) -> Result<BTreeMap<K, V>, D::Error>
where
    D: Deserializer<'de>,
    K: Deserialize<'de> + Ord,
    V: Deserialize<'de>,
{
    struct Entries<K, V>(PhantomData<(K, V)>);

    impl<'de, K: Deserialize<'de>, V: Deserialize<'de>> Visitor<'de> for Entries<K, V> {
        type Value = Vec<(K, V)>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a map")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(4096));
            while let Some(entry) = map.next_entry()? {
                entries.push(entry);
            }
            Ok(entries)
        }
    }

    let entries = deserializer.deserialize_map(Entries(PhantomData))?;
    Ok(entries.into_iter().collect())
}

/// How deep the recursive parts of a knowledge base (expressions, types,
/// what an input needs) may be nested in bytes: what compiling makes of
/// the deepest expressions rules may hold, with room to spare.
const MAX_DEPTH: usize = kb_dsl::MAX_EXPR_DEPTH + 8;

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
    /// The bytes a knowledge base is being loaded from, on this thread.
    static LOADING: RefCell<Option<Bytes>> = const { RefCell::new(None) };
}

/// Marks the bytes a knowledge base is loaded from while it lasts.
struct Loading(Option<Bytes>);

impl From<&Bytes> for Loading {
    fn from(bytes: &Bytes) -> Self {
        Self(LOADING.replace(Some(bytes.clone())))
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
        Some(whole) if contains(whole, bytes) => whole.slice_ref(bytes),
        _ => Bytes::copy_from_slice(bytes),
    })
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
