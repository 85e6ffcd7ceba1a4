//! Text for people in a knowledge base: titles, explanations, fix steps.

use std::fmt;
use std::ops::Deref;

use bytes::Bytes;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::snapshot::{self, LoadedText};

/// A text as written in the rules, or, in a knowledge base loaded from
/// bytes, a slice of those bytes: loading then neither allocates nor copies
/// it. Loaded text is checked as UTF-8 when it is loaded; a slice of shared
/// bytes is checked again when read (a slice of static ones need not be).
#[derive(Clone)]
pub struct Text(Repr);

#[derive(Clone)]
enum Repr {
    Owned(Box<str>),
    /// Boxed, so that a text is three words rather than five: declarations
    /// hold many, and the bundled knowledge base's are static.
    Loaded(Box<Bytes>),
    Static(&'static str),
}

impl Text {
    /// The text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Owned(text) => text,
            // Checked when loaded, so never empty by this.
            Repr::Loaded(bytes) => simdutf8::basic::from_utf8(bytes).unwrap_or_default(),
            Repr::Static(text) => text,
        }
    }
}

impl Default for Text {
    fn default() -> Self {
        Self(Repr::Static(""))
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

impl PartialOrd for Text {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// As the text's: a map keyed by texts is looked up by `&str`.
impl Ord for Text {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl std::hash::Hash for Text {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl std::borrow::Borrow<str> for Text {
    fn borrow(&self) -> &str {
        self
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
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

/// In a knowledge base written as bytes, its length, the text being with
/// the others ([`KnowledgeBase::to_bytes`](crate::KnowledgeBase::to_bytes));
/// elsewhere the text itself.
impl Serialize for Text {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if snapshot::write_text(self) {
            return serializer.serialize_u64(self.len() as u64);
        }
        serializer.serialize_str(self)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if snapshot::loading_texts() {
            let len = u64::deserialize(deserializer)?;
            return usize::try_from(len)
                .ok()
                .and_then(snapshot::next_text)
                .map(|text| match text {
                    LoadedText::Shared(bytes) => Self(Repr::Loaded(Box::new(bytes))),
                    LoadedText::Static(text) => Self(Repr::Static(text)),
                })
                .ok_or_else(|| de::Error::custom("a text out of the knowledge base's texts"));
        }
        deserializer.deserialize_bytes(TextVisitor)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UTF-8 text")
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
