//! What of an input the rules read, so that a document can be parsed keeping
//! only that: kubectl's JSON is mostly fields no rule looks at (managed
//! fields, images, annotations), and building them is most of the cost of
//! reading it.

use std::collections::BTreeMap;
use std::fmt;

use kb_dsl::source::BorrowedStr;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value as Json};

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

/// Bounded in depth when read from bytes ([`crate::snapshot::nested`]).
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

    /// Parses one JSON document keeping what these needs name, with
    /// serde_json's errors and nesting limit.
    pub fn parse(&self, text: &[u8]) -> serde_json::Result<Json> {
        // Checking UTF-8 once for the whole text is much faster than string
        // by string; on invalid UTF-8, reading bytes says where it is.
        match std::str::from_utf8(text) {
            Ok(text) => self.parse_from(serde_json::Deserializer::from_str(text)),
            Err(_) => self.parse_from(serde_json::Deserializer::from_slice(text)),
        }
    }

    fn parse_from<'de, R: serde_json::de::Read<'de>>(
        &self,
        mut deserializer: serde_json::Deserializer<R>,
    ) -> serde_json::Result<Json> {
        let value = Prune(self).deserialize(&mut deserializer)?;
        deserializer.end()?;
        Ok(value)
    }
}

/// Deserializes a JSON value keeping only what the needs name.
struct Prune<'n>(&'n Needs);

impl<'de> DeserializeSeed<'de> for Prune<'_> {
    type Value = Json;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Json, D::Error> {
        if self.0.whole {
            return serde::Deserialize::deserialize(deserializer);
        }
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Prune<'_> {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Json::Null, Json::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Prune(self.0))? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut kept = Map::new();
        // Keys are borrowed from the text: most are skipped, and only those
        // kept are worth allocating.
        while let Some(BorrowedStr(key)) = map.next_key()? {
            match self.0.fields.get(key.as_ref()) {
                Some(needs) => {
                    let value = map.next_value_seed(Prune(needs))?;
                    kept.insert(key.into_owned(), value);
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Json::Object(kept))
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use serde_json::json;

    use super::Needs;

    #[test]
    fn only_what_is_needed_is_kept_and_lists_are_looked_through() {
        let mut needs = Needs::default();
        needs.add_whole(&["pod", "status", "phase"]);
        needs.add_whole(&["events", "message"]);
        needs.add_whole(&["pod", "status", "containerStatuses"]);
        let text = br#"{"pod": {"metadata": {"managedFields": [{"a": 1}]}, "status": {"phase": "Pending",
            "containerStatuses": [{"name": "x", "state": {"waiting": {}}}], "qosClass": "Burstable"}},
            "events": [{"message": "m", "metadata": {"uid": "u"}}, {"reason": "r"}], "node": {"x": 1}}"#;
        let value = needs.parse(text).unwrap();
        assert_eq!(
            value,
            json!({"pod": {"status": {"phase": "Pending", "containerStatuses": [{"name": "x", "state": {"waiting": {}}}]}},
                   "events": [{"message": "m"}, {}]})
        );
        assert_eq!(
            needs
                .parse(br#"{"pod": {"st\u0061tus": {"ph\u0061se": "Pending"}, "\u0078": 1}}"#)
                .unwrap(),
            json!({"pod": {"status": {"phase": "Pending"}}}),
            "escaped keys are read as what they say"
        );
        assert_eq!(
            Needs::everything().parse(text).unwrap(),
            serde_json::from_slice::<serde_json::Value>(text).unwrap()
        );
    }

    #[test]
    fn errors_and_limits_are_serde_json_s() {
        let needs = Needs::default();
        assert!(needs.parse(b"{\"a\": ").unwrap_err().is_eof());
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(
            needs
                .parse(deep.as_bytes())
                .unwrap_err()
                .to_string()
                .contains("recursion limit")
        );
        assert!(
            needs.parse(b"{} x").is_err(),
            "trailing characters are an error"
        );
        let mut message = Needs::default();
        message.add_whole(&["message"]);
        let error = message
            .parse(b"{\"message\": \"bad \xff byte\"}")
            .unwrap_err();
        assert_eq!((error.line(), error.column()), (1, 18), "{error}");
    }
}
