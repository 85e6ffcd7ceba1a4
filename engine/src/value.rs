//! Runtime values and three-valued truth.

use std::cmp::Ordering;
use std::rc::Rc;

use serde::Serialize;
use serde_json::Value as JsonValue;

use crate::json::Json;

/// The truth of a condition. A missing fact makes a condition `Unknown`,
/// never silently false.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Truth {
    /// Known not to hold.
    False,
    /// Cannot be decided from the facts at hand.
    Unknown,
    /// Known to hold.
    True,
}

impl std::ops::Not for Truth {
    type Output = Self;

    /// Kleene negation: unknown stays unknown.
    fn not(self) -> Self {
        match self {
            Self::False => Self::True,
            Self::Unknown => Self::Unknown,
            Self::True => Self::False,
        }
    }
}

impl Truth {
    /// Kleene conjunction: the weaker of the two.
    #[must_use]
    pub fn and(self, other: Self) -> Self {
        self.min(other)
    }

    /// Kleene disjunction: the stronger of the two.
    #[must_use]
    pub fn or(self, other: Self) -> Self {
        self.max(other)
    }
}

impl From<bool> for Truth {
    fn from(b: bool) -> Self {
        if b { Self::True } else { Self::False }
    }
}

/// A value during evaluation, borrowed from the input where it can be.
#[derive(Debug, Clone)]
pub enum Value<'a> {
    /// The data needed to know it was not given.
    Unknown,
    /// The data was given and does not hold it (a missing field, `null`).
    Absent,
    /// A boolean.
    Bool(bool),
    /// A number.
    Number(f64),
    /// A string from the rules.
    Text(&'a str),
    /// A string computed during evaluation.
    Str(Rc<str>),
    /// A list computed during evaluation.
    List(Rc<[Value<'a>]>),
    /// A piece of the input, as it is.
    Json(&'a Json<'a>),
}

impl<'a> Value<'a> {
    /// Wraps a JSON value, mapping `null` to [`Value::Absent`].
    pub fn from_json(json: &'a Json<'a>) -> Self {
        match json {
            Json::Null => Self::Absent,
            Json::Bool(b) => Self::Bool(*b),
            Json::Number(n) => n.as_f64().map_or(Self::Unknown, Self::Number),
            _ => Self::Json(json),
        }
    }

    /// Whether the value is known, absent or not.
    pub fn is_unknown(&self) -> bool {
        matches!(self, Self::Unknown)
    }

    /// The string it holds.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::Text(s) => Some(s),
            Self::Str(s) => Some(s),
            Self::Json(Json::String(s)) => Some(s),
            _ => None,
        }
    }

    /// The number it holds.
    pub fn as_number(&self) -> Option<f64> {
        match self {
            Self::Number(n) => Some(*n),
            Self::Json(Json::Number(n)) => n.as_f64(),
            _ => None,
        }
    }

    /// The elements, when it is a list.
    pub fn elements(&self) -> Option<Elements<'_, 'a>> {
        match self {
            Self::List(items) => Some(Elements::Values(items.iter())),
            Self::Json(Json::Array(items)) => Some(Elements::Json(items.iter())),
            _ => None,
        }
    }

    /// Whether it is a list.
    pub fn is_list(&self) -> bool {
        matches!(self, Self::List(_) | Self::Json(Json::Array(_)))
    }

    /// The value as a condition: `Absent` counts as false.
    pub fn truth(&self) -> Truth {
        match self {
            Self::Bool(b) => Truth::from(*b),
            Self::Absent => Truth::False,
            _ => Truth::Unknown,
        }
    }

    /// Equality of known values; lists and objects compare deeply.
    pub fn equals(&self, other: &Value<'_>) -> bool {
        use Value as V;
        match (self, other) {
            (V::Absent, V::Absent) => true,
            (V::Bool(a), V::Bool(b)) => a == b,
            _ => {
                if let (Some(a), Some(b)) = (self.as_number(), other.as_number()) {
                    return a == b;
                }
                if let (Some(a), Some(b)) = (self.as_str(), other.as_str()) {
                    return a == b;
                }
                match (self.to_json(), other.to_json()) {
                    (Some(a), Some(b)) if self.is_list() || matches!(self, V::Json(_)) => a == b,
                    _ => false,
                }
            }
        }
    }

    /// Ordering of two numbers or two strings.
    pub fn compare(&self, other: &Value<'_>) -> Option<Ordering> {
        if let (Some(a), Some(b)) = (self.as_number(), other.as_number()) {
            return a.partial_cmp(&b);
        }
        if let (Some(a), Some(b)) = (self.as_str(), other.as_str()) {
            return Some(a.cmp(b));
        }
        None
    }

    /// The value as JSON, for evidence and templates; `None` when unknown.
    pub fn to_json(&self) -> Option<JsonValue> {
        Some(match self {
            Self::Unknown => return None,
            Self::Absent => JsonValue::Null,
            Self::Bool(b) => JsonValue::Bool(*b),
            Self::Number(n) => number_json(*n),
            Self::Text(s) => JsonValue::String((*s).to_owned()),
            Self::Str(s) => JsonValue::String(s.to_string()),
            Self::List(items) => {
                JsonValue::Array(items.iter().filter_map(Value::to_json).collect())
            }
            Self::Json(json) => json.to_value(),
        })
    }

    /// A short name of its kind, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Unknown => "unknown",
            Self::Absent => "nothing",
            Self::Bool(_) | Self::Json(Json::Bool(_)) => "a bool",
            Self::Number(_) | Self::Json(Json::Number(_)) => "a number",
            Self::Text(_) | Self::Str(_) | Self::Json(Json::String(_)) => "a string",
            Self::List(_) | Self::Json(Json::Array(_)) => "a list",
            Self::Json(Json::Object(_)) => "an object",
            Self::Json(Json::Null) => "null",
        }
    }
}

/// The elements of a list, read in place: lists are walked far more often
/// than they are kept.
#[derive(Debug, Clone)]
pub enum Elements<'v, 'a> {
    /// A list computed during evaluation.
    Values(std::slice::Iter<'v, Value<'a>>),
    /// A list of the input.
    Json(std::slice::Iter<'a, Json<'a>>),
}

impl<'a> Iterator for Elements<'_, 'a> {
    type Item = Value<'a>;

    fn next(&mut self) -> Option<Value<'a>> {
        match self {
            Self::Values(items) => items.next().cloned(),
            Self::Json(items) => items.next().map(Value::from_json),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = self.len();
        (len, Some(len))
    }

    fn nth(&mut self, n: usize) -> Option<Value<'a>> {
        match self {
            Self::Values(items) => items.nth(n).cloned(),
            Self::Json(items) => items.nth(n).map(Value::from_json),
        }
    }
}

impl DoubleEndedIterator for Elements<'_, '_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            Self::Values(items) => items.next_back().cloned(),
            Self::Json(items) => items.next_back().map(Value::from_json),
        }
    }
}

impl ExactSizeIterator for Elements<'_, '_> {
    fn len(&self) -> usize {
        match self {
            Self::Values(items) => items.len(),
            Self::Json(items) => items.len(),
        }
    }
}

/// A number as JSON: integral values stay integers.
pub fn number_json(n: f64) -> JsonValue {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        #[expect(clippy::cast_possible_truncation, reason = "integral and in range")]
        return JsonValue::from(n as i64);
    }
    serde_json::Number::from_f64(n).map_or(JsonValue::Null, JsonValue::Number)
}
