//! Text for people in a knowledge base: titles, explanations, fix steps.

use std::fmt;
use std::ops::Deref;

use bytes::Bytes;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::snapshot;

/// A text as written in the rules, or, in a knowledge base loaded from
/// bytes, a slice of those bytes: loading then neither allocates nor copies
/// it. Loaded text is checked as UTF-8 when it is loaded.
#[derive(Clone)]
pub struct Text(Repr);

#[derive(Clone)]
enum Repr {
    Owned(Box<str>),
    Loaded(Bytes),
}

impl Text {
    /// The text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Owned(text) => text,
            // Checked when loaded, so never empty by this.
            Repr::Loaded(bytes) => simdutf8::basic::from_utf8(bytes).unwrap_or_default(),
        }
    }
}

impl Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        Self(Repr::Owned(text.into_boxed_str()))
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Self(Repr::Owned(text.into()))
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Text {}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_bytes(TextVisitor)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UTF-8 text")
    }

    /// Most of the bundled text is Chinese, on which SIMD instructions
    /// check UTF-8 many times faster than the standard library.
    fn visit_borrowed_bytes<E: de::Error>(self, bytes: &'de [u8]) -> Result<Text, E> {
        simdutf8::basic::from_utf8(bytes).map_err(|_| E::custom("text is not UTF-8"))?;
        Ok(Text(Repr::Loaded(snapshot::shared(bytes))))
    }

    fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Text, E> {
        simdutf8::basic::from_utf8(bytes)
            .map(Text::from)
            .map_err(|_| E::custom("text is not UTF-8"))
    }

    fn visit_str<E>(self, text: &str) -> Result<Text, E> {
        Ok(Text::from(text))
    }

    fn visit_string<E>(self, text: String) -> Result<Text, E> {
        Ok(Text::from(text))
    }
}
