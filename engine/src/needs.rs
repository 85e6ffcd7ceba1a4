//! What of an input the rules read, so that a document can be parsed keeping
//! only that: kubectl's JSON is mostly fields no rule looks at (managed
//! fields, images, annotations), and building them is most of the cost of
//! reading it.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use crate::json::{Json, Object};
use kb_dsl::source::BorrowedStr;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::error::Category;
use serde_json::value::RawValue;

/// A tree of field names: the parts of a JSON document something reads.
/// Lists are looked through: the fields of a list are those of its elements.
/// A scalar under a named field is always kept whole.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct Needs {
    whole: bool,
    fields: BTreeMap<String, Needs>,
}

impl Serialize for Needs {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Needs::serialize(self, serializer)
    }
}

/// Bounded in depth when read from bytes (`snapshot::nested`).
impl<'de> Deserialize<'de> for Needs {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::snapshot::nested(deserializer, Needs::deserialize)
    }
}

impl Needs {
    /// Needs every part of a document.
    pub fn everything() -> Self {
        Self {
            whole: true,
            fields: BTreeMap::new(),
        }
    }

    /// Whether every part is needed.
    pub fn is_whole(&self) -> bool {
        self.whole
    }

    /// The needs of a field, made if new.
    pub fn field(&mut self, name: &str) -> &mut Needs {
        self.fields.entry(name.to_owned()).or_default()
    }

    /// Needs a path, whole below it.
    pub fn add_whole(&mut self, path: &[impl AsRef<str>]) {
        let mut at = self;
        for name in path {
            if at.whole {
                return;
            }
            at = at.field(name.as_ref());
        }
        at.whole = true;
        at.fields.clear();
    }

    /// Needs a path to be there (a list's length, whether a field exists),
    /// not what is below it.
    pub fn add_present(&mut self, path: &[impl AsRef<str>]) {
        let mut at = self;
        for name in path {
            if at.whole {
                return;
            }
            at = at.field(name.as_ref());
        }
    }

    /// Needs under the field `alias` what is needed under the field `name`:
    /// for documents that give the same value under either.
    pub fn alias(&mut self, name: &str, alias: &str) {
        if let Some(needs) = self.fields.get(name).cloned() {
            self.field(alias).merge(&needs);
        }
    }

    /// Adds what `other` needs.
    pub fn merge(&mut self, other: &Needs) {
        if self.whole {
            return;
        }
        if other.whole {
            *self = Needs::everything();
            return;
        }
        for (name, needs) in &other.fields {
            self.field(name).merge(needs);
        }
    }

    /// Compiles these needs for parsing documents.
    pub fn pruner(&self) -> Pruner {
        let mut fields: Vec<(Box<str>, Pruner)> = self
            .fields
            .iter()
            .map(|(name, needs)| (name.as_str().into(), needs.pruner()))
            .collect();
        fields.sort_by_key(|(name, _)| name.len());
        let longest = fields.last().map_or(0, |(name, _)| name.len());
        Pruner {
            whole: self.whole,
            every_key: false,
            filter: fields
                .iter()
                .fold(0, |filter, (name, _)| filter | class(name)),
            by_length: (0..=longest + 1)
                .map(|length| fields.partition_point(|(name, _)| name.len() < length))
                .collect(),
            fields: fields.into(),
        }
    }
}

/// [`Needs`] compiled for parsing: a document's keys are mostly names no
/// rule reads, and a filter on their length and first and last bytes passes
/// over most of them without comparing strings.
#[derive(Debug, Clone)]
pub struct Pruner {
    whole: bool,
    /// Whether an object here keeps the keys no rule reads, with `null` for
    /// their values.
    every_key: bool,
    /// The union of the fields' [`class`]es.
    filter: u128,
    /// Sorted by length, so that only names as long as a key are compared with it.
    fields: Box<[(Box<str>, Pruner)]>,
    /// Where the fields of each length start in `fields`, and, last, their
    /// number: those as long as a key are found without a search.
    by_length: Box<[usize]>,
}

/// One bit of 128 standing for a name's length, first and last bytes.
fn class(name: &str) -> u128 {
    let bytes = name.as_bytes();
    let (first, last) = match bytes {
        [] => (0, 0),
        [first, .., last] => (*first, *last),
        [only] => (*only, *only),
    };
    let mixed = bytes
        .len()
        .wrapping_mul(37)
        .wrapping_add(usize::from(first).wrapping_mul(11))
        .wrapping_add(usize::from(last));
    1 << (mixed % 128)
}

impl Pruner {
    /// Keeps every key of the top-level object, those no rule reads with
    /// `null` for their values: a key the knowledge base does not know is
    /// reported when the document is bound, and must not vanish unseen.
    #[must_use]
    pub fn keeping_every_key(self) -> Self {
        Self {
            every_key: true,
            ..self
        }
    }

    /// Parses one JSON document keeping what the needs name, with
    /// serde_json's errors and nesting limit.
    pub fn parse<'t>(&self, text: &'t [u8]) -> serde_json::Result<Json<'t>> {
        // Checking UTF-8 once for the whole text, with SIMD, is much faster
        // than string by string; on invalid UTF-8, reading bytes says where
        // it is.
        match simdutf8::basic::from_utf8(text) {
            Ok(text) => self.parse_from(serde_json::Deserializer::from_str(text)),
            Err(_) => self.parse_from(serde_json::Deserializer::from_slice(text)),
        }
    }

    fn parse_from<'de, R: serde_json::de::Read<'de>>(
        &self,
        mut deserializer: serde_json::Deserializer<R>,
    ) -> serde_json::Result<Json<'de>> {
        let value = Prune(self).deserialize(&mut deserializer)?;
        deserializer.end()?;
        Ok(value)
    }

    /// Parses one or more JSON documents one after the other, as
    /// [`Pruner::parse`] does each.
    pub fn parse_many<'t>(&self, text: &'t [u8]) -> serde_json::Result<Vec<Json<'t>>> {
        let Ok(text) = simdutf8::basic::from_utf8(text) else {
            // Reading bytes says where it stops being UTF-8.
            return self.parse(text).map(|document| vec![document]);
        };
        match self.parse_from(serde_json::Deserializer::from_str(text)) {
            Ok(document) => Ok(vec![document]),
            // Where each of several ends is found first, by the parser: asked
            // whether more follows, it would count the lines before it.
            Err(error) if error.classify() == Category::Syntax => {
                serde_json::Deserializer::from_str(text)
                    .into_iter::<&RawValue>()
                    .map(|raw| {
                        raw.and_then(|raw| {
                            self.parse_from(serde_json::Deserializer::from_str(raw.get()))
                        })
                    })
                    .collect()
            }
            Err(error) => Err(error),
        }
    }

    /// What is needed of a field, if anything.
    fn field(&self, name: &str) -> Option<&Pruner> {
        if self.filter & class(name) == 0 {
            return None;
        }
        let (&start, &end) = (
            self.by_length.get(name.len())?,
            self.by_length.get(name.len() + 1)?,
        );
        self.fields
            .get(start..end)?
            .iter()
            .find(|(field, _)| crate::json::same_key(field, name))
            .map(|(_, needs)| needs)
    }
}

/// Deserializes a JSON value keeping only what the needs name.
struct Prune<'n>(&'n Pruner);

impl<'de> DeserializeSeed<'de> for Prune<'_> {
    type Value = Json<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Json<'de>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Prune<'_> {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Json<'de>, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Json<'de>, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Json<'de>, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Json::Null, Json::Number))
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(v)))
    }

    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_none<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Prune(self.0))? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
        let mut kept = Vec::with_capacity(if self.0.whole {
            8
        } else {
            self.0.fields.len().min(8)
        });
        // Keys are borrowed from the text where they have no escapes.
        while let Some(BorrowedStr(key)) = map.next_key()? {
            let needs = if self.0.whole {
                Some(self.0)
            } else {
                self.0.field(&key)
            };
            match needs {
                Some(needs) => {
                    let value = map.next_value_seed(Prune(needs))?;
                    kept.push((key, value));
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                    if self.0.every_key {
                        kept.push((key, Json::Null));
                    }
                }
            }
        }
        Ok(Json::Object(Object::from_entries(kept)))
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use std::borrow::Cow;

    use serde_json::json;

    use super::Needs;
    use crate::json::Json;

    #[test]
    fn only_what_is_needed_is_kept_and_lists_are_looked_through() {
        let mut needs = Needs::default();
        needs.add_whole(&["pod", "status", "phase"]);
        needs.add_whole(&["events", "message"]);
        needs.add_whole(&["pod", "status", "containerStatuses"]);
        let text = br#"{"pod": {"metadata": {"managedFields": [{"a": 1}]}, "status": {"phase": "Pending",
            "containerStatuses": [{"name": "x", "state": {"waiting": {}}}], "qosClass": "Burstable"}},
            "events": [{"message": "m", "metadata": {"uid": "u"}}, {"reason": "r"}], "node": {"x": 1}}"#;
        let value = needs.pruner().parse(text).unwrap().to_value();
        assert_eq!(
            value,
            json!({"pod": {"status": {"phase": "Pending", "containerStatuses": [{"name": "x", "state": {"waiting": {}}}]}},
                   "events": [{"message": "m"}, {}]})
        );
        assert_eq!(
            needs
                .pruner()
                .parse(br#"{"pod": {"st\u0061tus": {"ph\u0061se": "Pending"}, "\u0078": 1}}"#)
                .unwrap()
                .to_value(),
            json!({"pod": {"status": {"phase": "Pending"}}}),
            "escaped keys are read as what they say"
        );
        assert_eq!(
            Needs::everything().pruner().parse(text).unwrap().to_value(),
            serde_json::from_slice::<serde_json::Value>(text).unwrap()
        );
        let repeated =
            br#"{"pod": {"status": {"phase": "Running", "phase": "Pending"}}, "events": [],
            "events": [{"message": "later", "message": "last"}]}"#;
        assert_eq!(
            needs.pruner().parse(repeated).unwrap().to_value(),
            json!({"pod": {"status": {"phase": "Pending"}}, "events": [{"message": "last"}]}),
            "a repeated key keeps its last value, as serde_json does"
        );
        assert_eq!(
            Needs::everything()
                .pruner()
                .parse(repeated)
                .unwrap()
                .to_value(),
            serde_json::from_slice::<serde_json::Value>(repeated).unwrap()
        );
    }

    #[test]
    fn kept_strings_are_borrowed_from_the_text_unless_escaped() {
        let mut needs = Needs::default();
        needs.add_whole(&["pod", "status"]);
        let text = br#"{"pod": {"status": {"phase": "Pending", "message": "a \"quoted\" word"}}}"#;
        let document = needs.pruner().parse(text).unwrap();
        let status = document
            .get("pod")
            .and_then(|pod| pod.get("status"))
            .unwrap();
        assert!(matches!(
            status.get("phase"),
            Some(Json::String(Cow::Borrowed("Pending")))
        ));
        assert!(matches!(
            status.get("message"),
            Some(Json::String(Cow::Owned(message))) if message == "a \"quoted\" word"
        ));
    }

    #[test]
    fn every_top_level_key_can_be_kept_without_its_value() {
        let mut needs = Needs::default();
        needs.add_whole(&["pod", "status", "phase"]);
        let pruner = needs.pruner().keeping_every_key();
        let text = br#"{"pod": {"status": {"phase": "Pending", "qosClass": "Burstable"}, "spec": {}}, "evnets": [{"reason": "x"}]}"#;
        assert_eq!(
            pruner.parse(text).unwrap().to_value(),
            json!({"pod": {"status": {"phase": "Pending"}}, "evnets": null})
        );
    }

    #[test]
    fn names_of_one_length_are_told_apart() {
        let mut needs = Needs::default();
        for name in ["ab", "ba", "abc", "", "é"] {
            needs.add_whole(&[name]);
        }
        let text = r#"{"ab": 1, "ba": 2, "bb": 3, "aa": 4, "abc": 5, "acb": 6, "": 7, "a": 8, "é": 9, "è": 10,
            "abcd": 11, "abcabc": 12}"#;
        assert_eq!(
            needs.pruner().parse(text.as_bytes()).unwrap().to_value(),
            json!({"ab": 1, "ba": 2, "abc": 5, "": 7, "é": 9})
        );
    }

    #[test]
    fn documents_one_after_the_other_are_read_as_serde_json_streams_them() {
        let everything = Needs::everything().pruner();
        for text in [
            "{\"a\": 1}",
            "{\"a\": 1} {\"b\": [2]}\n\n{}{\"c\": \"x\"}\n",
            "[1, 2] 3 \"s\" null",
        ] {
            let streamed: Vec<serde_json::Value> = serde_json::Deserializer::from_str(text)
                .into_iter()
                .collect::<Result<_, _>>()
                .unwrap();
            let parsed = everything.parse_many(text.as_bytes()).unwrap();
            let parsed: Vec<serde_json::Value> = parsed.iter().map(Json::to_value).collect();
            assert_eq!(parsed, streamed, "{text}");
        }
        for broken in ["", "  ", "{\"a\": 1} {", "{} x", "{}]"] {
            assert!(
                everything.parse_many(broken.as_bytes()).is_err(),
                "{broken:?}"
            );
        }
    }

    #[test]
    fn errors_and_limits_are_serde_json_s() {
        let needs = Needs::default();
        assert!(needs.pruner().parse(b"{\"a\": ").unwrap_err().is_eof());
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(
            needs
                .pruner()
                .parse(deep.as_bytes())
                .unwrap_err()
                .to_string()
                .contains("recursion limit")
        );
        assert!(
            needs.pruner().parse(b"{} x").is_err(),
            "trailing characters are an error"
        );
        let mut message = Needs::default();
        message.add_whole(&["message"]);
        let error = message
            .pruner()
            .parse(b"{\"message\": \"bad \xff byte\"}")
            .unwrap_err();
        assert_eq!((error.line(), error.column()), (1, 18), "{error}");
    }
}
