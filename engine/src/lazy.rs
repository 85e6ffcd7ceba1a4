//! Parts of a compiled knowledge base left encoded until first read.

use std::fmt;
use std::ops::Deref;
use std::sync::OnceLock;

use serde::de::{self, DeserializeOwned, Deserializer};
use serde::ser::{self, Serializer};
use serde::{Deserialize, Serialize};

use crate::snapshot::{self, Loaded, SharedBytes};

/// A part of a knowledge base that only some commands read (a cause's
/// fixes): loaded from [`Parts`](crate::Parts) checked when the program
/// was built, it stays encoded until first read, and one diagnosis decodes
/// the few it shows rather than all of them. Loaded from any other bytes
/// it is decoded, and checked, with the rest. It reads as the value.
///
/// A lazy part holds no locations in rule files: it is decoded without
/// them.
pub struct Lazy<T> {
    value: OnceLock<T>,
    encoded: Option<Box<Encoded>>,
}

/// The part's bytes, and its texts among those of the knowledge base.
#[derive(Clone)]
struct Encoded {
    bytes: bytes::Bytes,
    texts: Loaded,
}

impl<T> Lazy<T> {
    /// The value, decoded now if it was not yet. Parts are checked when the
    /// program is built, so decoding them gives what it gave then; should
    /// it fail all the same, the value is the type's default.
    pub fn get(&self) -> &T
    where
        T: DeserializeOwned + Default,
    {
        self.value.get_or_init(|| {
            self.encoded
                .as_ref()
                .and_then(|encoded| snapshot::decode(encoded.texts.clone(), &encoded.bytes).ok())
                .unwrap_or_default()
        })
    }
}

#[cfg(test)]
impl<T> Lazy<T> {
    pub(crate) fn is_decoded(&self) -> bool {
        self.value.get().is_some()
    }
}

impl<T> From<T> for Lazy<T> {
    fn from(value: T) -> Self {
        Self {
            value: OnceLock::from(value),
            encoded: None,
        }
    }
}

impl<T: DeserializeOwned + Default> Deref for Lazy<T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.get()
    }
}

impl<T: Clone> Clone for Lazy<T> {
    fn clone(&self) -> Self {
        Self {
            value: self.value.clone(),
            encoded: self.encoded.clone(),
        }
    }
}

impl<T: fmt::Debug + DeserializeOwned + Default> fmt::Debug for Lazy<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.get(), f)
    }
}

/// In a knowledge base written as bytes, the length of the part's texts
/// (written with the others) and the part encoded on its own; elsewhere
/// the value itself.
impl<T: Serialize + DeserializeOwned + Default> Serialize for Lazy<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Some(before) = snapshot::written_texts() else {
            return self.get().serialize(serializer);
        };
        let bytes = postcard::to_allocvec(self.get()).map_err(ser::Error::custom)?;
        let texts = snapshot::written_texts().unwrap_or(before) - before;
        (texts, SharedBytes(bytes.into())).serialize(serializer)
    }
}

impl<'de, T: DeserializeOwned + Default> Deserialize<'de> for Lazy<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if !snapshot::loading_texts() {
            return T::deserialize(deserializer).map(Self::from);
        }
        let (texts, SharedBytes(bytes)) = <(usize, SharedBytes)>::deserialize(deserializer)?;
        let (texts, lazy) = snapshot::take_texts(texts)
            .and_then(Result::ok)
            .ok_or_else(|| de::Error::custom("a part's texts out of the knowledge base's texts"))?;
        if lazy {
            return Ok(Self {
                value: OnceLock::new(),
                encoded: Some(Box::new(Encoded { bytes, texts })),
            });
        }
        snapshot::decode::<T>(texts, &bytes)
            .map(Self::from)
            .map_err(de::Error::custom)
    }
}
