//! JSON as the engine reads it: strings borrowed from the text they were
//! parsed from, objects as vectors of entries. A stream parses thousands of
//! documents a second and drops each a moment later; allocating every string
//! and building a search tree for every object was most of that cost.
//!
//! The API follows `serde_json::Value`'s, which converts to it by moving
//! (`From<serde_json::Value>`, strings are not copied) and back
//! ([`Json::to_value`]).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

/// A JSON value whose strings may borrow from `'t`.
#[derive(Debug, Clone, PartialEq)]
pub enum Json<'t> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as serde_json reads it.
    Number(Number),
    /// A string.
    String(Cow<'t, str>),
    /// A list.
    Array(Vec<Json<'t>>),
    /// An object.
    Object(Object<'t>),
}

/// A JSON object: its entries sorted by key, each key once. Entries are
/// iterated in key order, as `serde_json::Map`'s are.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Object<'t> {
    entries: Vec<(Cow<'t, str>, Json<'t>)>,
}

impl<'t> Json<'t> {
    /// The value of a field, when this is an object that has it.
    pub fn get(&self, key: &str) -> Option<&Json<'t>> {
        self.as_object()?.get(key)
    }

    /// The value of a field, to change, when this is an object that has it.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json<'t>> {
        match self {
            Self::Object(object) => object.get_mut(key),
            _ => None,
        }
    }

    /// The string, when this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, when this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Self::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The elements, when this is a list.
    pub fn as_array(&self) -> Option<&Vec<Json<'t>>> {
        match self {
            Self::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The object, when this is one.
    pub fn as_object(&self) -> Option<&Object<'t>> {
        match self {
            Self::Object(object) => Some(object),
            _ => None,
        }
    }

    /// Whether this is a string.
    pub fn is_string(&self) -> bool {
        matches!(self, Self::String(_))
    }

    /// Whether this is a list.
    pub fn is_array(&self) -> bool {
        matches!(self, Self::Array(_))
    }

    /// Whether this is an object.
    pub fn is_object(&self) -> bool {
        matches!(self, Self::Object(_))
    }

    /// A copy as a `serde_json::Value`.
    pub fn to_value(&self) -> Value {
        match self {
            Self::Null => Value::Null,
            Self::Bool(b) => Value::Bool(*b),
            Self::Number(n) => Value::Number(n.clone()),
            Self::String(s) => Value::String(s.as_ref().to_owned()),
            Self::Array(items) => Value::Array(items.iter().map(Json::to_value).collect()),
            Self::Object(object) => Value::Object(
                object
                    .iter()
                    .map(|(key, value)| (key.to_owned(), value.to_value()))
                    .collect(),
            ),
        }
    }

    /// The same value owning its strings, to outlive the text it was read from.
    pub fn into_owned(self) -> Json<'static> {
        match self {
            Self::Null => Json::Null,
            Self::Bool(b) => Json::Bool(b),
            Self::Number(n) => Json::Number(n),
            Self::String(s) => Json::String(Cow::Owned(s.into_owned())),
            Self::Array(items) => Json::Array(items.into_iter().map(Json::into_owned).collect()),
            Self::Object(object) => Json::Object(Object {
                entries: object
                    .into_iter()
                    .map(|(key, value)| (Cow::Owned(key.into_owned()), value.into_owned()))
                    .collect(),
            }),
        }
    }
}

/// Up to how many entries an object is searched from first to last: the
/// objects rules read most have up to a dozen keys (an event as kept, a
/// container's status), and comparing lengths first, and bytes only of keys
/// as long, beats a search by halves, whose every step is a branch the
/// processor cannot foresee.
const FEW: usize = 16;

/// Whether two keys are the same, telling most different keys apart by
/// their length and end bytes, without a call to compare their bytes.
pub(crate) fn same_key(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.first() == b.first() && a.last() == b.last() && a == b
}

/// The order of keys, that of their bytes, told by the first byte without a
/// call to compare bytes when the first bytes differ, as most keys' do.
fn key_order(a: &str, b: &str) -> Ordering {
    match (a.as_bytes().first(), b.as_bytes().first()) {
        (Some(x), Some(y)) if x != y => x.cmp(y),
        _ => a.cmp(b),
    }
}

impl<'t> Object<'t> {
    /// An empty object.
    pub fn new() -> Self {
        Self::default()
    }

    /// An object of the entries given; of a key given more than once, the
    /// last value is kept, as serde_json keeps it.
    pub fn from_entries(mut entries: Vec<(Cow<'t, str>, Json<'t>)>) -> Self {
        if !entries.is_sorted_by(|(a, _), (b, _)| key_order(a, b).is_lt()) {
            entries.reverse();
            // Stable: of equal keys, the last given now comes first, and stays.
            entries.sort_by(|(a, _), (b, _)| key_order(a, b));
            entries.dedup_by(|(later, _), (kept, _)| later == kept);
        }
        Self { entries }
    }

    /// Where a key is, or where it would go.
    fn find(&self, key: &str) -> Result<usize, usize> {
        self.entries.binary_search_by(|(k, _)| key_order(k, key))
    }

    /// The value of a key.
    pub fn get(&self, key: &str) -> Option<&Json<'t>> {
        if self.entries.len() <= FEW {
            return self
                .entries
                .iter()
                .find(|(k, _)| same_key(k, key))
                .map(|(_, value)| value);
        }
        let index = self.find(key).ok()?;
        self.entries.get(index).map(|(_, value)| value)
    }

    /// The value of a key, to change.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json<'t>> {
        let index = self.find(key).ok()?;
        self.entries.get_mut(index).map(|(_, value)| value)
    }

    /// Whether it has a key.
    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    /// Sets a key's value; returns the value it replaced.
    pub fn insert(&mut self, key: impl Into<Cow<'t, str>>, value: Json<'t>) -> Option<Json<'t>> {
        let key = key.into();
        match self.find(&key) {
            Ok(index) => self
                .entries
                .get_mut(index)
                .map(|(_, old)| std::mem::replace(old, value)),
            Err(index) => {
                self.entries.insert(index, (key, value));
                None
            }
        }
    }

    /// Removes a key; returns its value.
    pub fn remove(&mut self, key: &str) -> Option<Json<'t>> {
        let index = self.find(key).ok()?;
        Some(self.entries.remove(index).1)
    }

    /// The entries, in key order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Json<'t>)> {
        self.entries
            .iter()
            .map(|(key, value)| (key.as_ref(), value))
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> {
        self.entries.iter().map(|(key, _)| key.as_ref())
    }

    /// How many entries it has.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it has none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl<'t> IntoIterator for Object<'t> {
    type Item = (Cow<'t, str>, Json<'t>);
    type IntoIter = std::vec::IntoIter<Self::Item>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

/// Moves a `serde_json::Value` in; its strings are not copied.
impl From<Value> for Json<'static> {
    fn from(value: Value) -> Self {
        match value {
            Value::Null => Self::Null,
            Value::Bool(b) => Self::Bool(b),
            Value::Number(n) => Self::Number(n),
            Value::String(s) => Self::String(Cow::Owned(s)),
            Value::Array(items) => Self::Array(items.into_iter().map(Json::from).collect()),
            // serde_json's map is sorted and has each key once.
            Value::Object(map) => Self::Object(Object {
                entries: map
                    .into_iter()
                    .map(|(key, value)| (Cow::Owned(key), Json::from(value)))
                    .collect(),
            }),
        }
    }
}

/// Reads a whole document into owned values, as files are read: without a
/// `serde_json::Value` in between, with serde_json's numbers, nesting limit
/// and, of a key given twice, the last value.
impl<'de> Deserialize<'de> for Json<'static> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Owned)
    }
}

struct Owned;

impl<'de> Visitor<'de> for Owned {
    type Value = Json<'static>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Number::from_f64(v).map_or(Json::Null, Json::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Json::String(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Json::String(Cow::Owned(v)))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Json::Null)
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Json::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Json<'static>>()? {
            entries.push((Cow::Owned(key), value));
        }
        Ok(Json::Object(Object::from_entries(entries)))
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use serde_json::json;

    use super::*;

    proptest::proptest! {
        #[test]
        fn keys_are_ordered_as_their_bytes(a in "[a-c\\x00é]{0,4}", b in "[a-c\\x00é]{0,4}") {
            proptest::prop_assert_eq!(key_order(&a, &b), a.as_bytes().cmp(b.as_bytes()));
        }
    }

    fn object(entries: &[(&'static str, i64)]) -> Object<'static> {
        Object::from_entries(
            entries
                .iter()
                .map(|(k, v)| (Cow::Borrowed(*k), Json::Number((*v).into())))
                .collect(),
        )
    }

    /// `{"k0": 0, "k1": 1, …}` with `n` keys, as serde_json reads it.
    fn numbered(n: usize) -> Value {
        Value::Object((0..n).map(|i| (format!("k{i}"), Value::from(i))).collect())
    }

    #[test]
    fn a_key_given_twice_keeps_its_last_value_as_serde_json_does() {
        for n in [2, FEW, FEW + 1, 40] {
            // Every key twice, the second time with another value, in an order
            // neither sorted nor reversed.
            let mut entries: Vec<_> = (0..n)
                .map(|i| {
                    (
                        Cow::Owned(format!("k{}", (i * 7) % n)),
                        Json::Number(0.into()),
                    )
                })
                .collect();
            entries.extend((0..n).map(|i| (Cow::Owned(format!("k{i}")), Json::Number(i.into()))));
            let object = Object::from_entries(entries);
            assert_eq!(object.len(), n);
            assert_eq!(
                Json::Object(object.clone()).to_value(),
                numbered(n),
                "{n} keys"
            );
            for i in 0..n {
                assert_eq!(object.get(&format!("k{i}")), Some(&Json::Number(i.into())));
            }
            assert_eq!(object.get("k"), None);
        }
        let given = object(&[("b", 1), ("a", 2), ("b", 3), ("c", 4), ("a", 5)]);
        let text = r#"{"b":1,"a":2,"b":3,"c":4,"a":5}"#;
        let parsed: Value = serde_json::from_str(text).unwrap();
        assert_eq!(
            serde_json::from_str::<Json>(text).unwrap().to_value(),
            parsed
        );
        assert_eq!(
            given.keys().collect::<Vec<_>>(),
            ["a", "b", "c"],
            "keys come in order, as serde_json's do, whatever the order given"
        );
        assert_eq!(Json::Object(given).to_value(), parsed);
    }

    #[test]
    fn objects_are_looked_up_and_changed_by_key_whatever_their_size() {
        let mut given = object(&[("metadata", 1), ("kind", 2)]);
        assert!(given.contains_key("kind") && !given.contains_key("spec"));
        assert_eq!(given.insert("spec", Json::Null), None);
        assert_eq!(
            given.insert("kind", Json::Bool(true)),
            Some(Json::Number(2.into()))
        );
        assert_eq!(given.insert("status", Json::Null), None);
        assert_eq!(given.remove("metadata"), Some(Json::Number(1.into())));
        assert_eq!(
            Json::Object(given).to_value(),
            json!({"kind": true, "spec": null, "status": null})
        );
        // Growing past a few keys, one at a time, in no order.
        let mut growing = Object::new();
        for i in (0..30).rev().step_by(2).chain((0..30).step_by(2)) {
            assert_eq!(
                growing.insert(format!("k{i}"), Json::Number(i.into())),
                None
            );
            assert!(growing.contains_key(&format!("k{i}")));
        }
        assert_eq!(Json::Object(growing.clone()).to_value(), numbered(30));
        assert_eq!(Some(&growing), Json::from(numbered(30)).as_object());
        for i in 0..30 {
            assert_eq!(
                growing.remove(&format!("k{i}")),
                Some(Json::Number(i.into()))
            );
            assert_eq!(growing.get(&format!("k{i}")), None);
            assert_eq!(growing.contains_key(&format!("k{}", i + 1)), i < 29);
        }
        assert!(growing.is_empty());
    }

    #[test]
    fn converting_from_and_to_serde_json_keeps_every_value() {
        let value = json!({
            "pod": {"metadata": {"name": "web-1", "labels": {"app": "web"}}},
            "events": [{"reason": "BackOff", "count": 12}, {"reason": "Pulled"}],
            "ratio": 0.5, "negative": -3, "big": u64::MAX, "none": null, "ok": false,
        });
        assert_eq!(Json::from(value.clone()).to_value(), value);
        let text = serde_json::to_string(&value).unwrap();
        assert_eq!(
            serde_json::from_str::<Json>(&text).unwrap(),
            Json::from(value)
        );
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let error = serde_json::from_str::<Json>(&deep).unwrap_err();
        assert!(error.to_string().contains("recursion limit"), "{error}");
    }
}
