//! Compiled expressions and their three-valued evaluation.

use std::rc::Rc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::json::Json;
use crate::kb::{FactId, InputId};
use crate::pattern::Pattern;
use crate::value::{Elements, Truth, Value};

/// An expression with every name resolved and every type checked.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub(crate) enum CExpr {
    Bool(bool),
    Number(f64),
    Text(Box<str>),
    List(Vec<CExpr>),
    Fact(FactId),
    Input(InputId),
    /// The list element a filter or predicate is looking at.
    Element,
    Field(Box<CExpr>, Box<str>),
    Index(Box<CExpr>, Box<CExpr>),
    Filter(Box<CExpr>, Box<CExpr>),
    Not(Box<CExpr>),
    And(Box<CExpr>, Box<CExpr>),
    Or(Box<CExpr>, Box<CExpr>),
    Compare(Cmp, Box<CExpr>, Box<CExpr>),
    Contains(Box<CExpr>, Box<CExpr>),
    StartsWith(Box<CExpr>, Box<CExpr>),
    EndsWith(Box<CExpr>, Box<CExpr>),
    In(Box<CExpr>, Box<CExpr>),
    Matches(Box<CExpr>, Box<Pattern>),
    Exists(Box<CExpr>),
    Any(Box<CExpr>, Box<CExpr>),
    All(Box<CExpr>, Box<CExpr>),
    Count(Box<CExpr>, Option<Box<CExpr>>),
    First(Box<CExpr>),
    Last(Box<CExpr>),
    Len(Box<CExpr>),
    Lower(Box<CExpr>),
    /// The first argument that holds a value.
    Coalesce(Vec<CExpr>),
    /// The lists one after the other.
    Concat(Vec<CExpr>),
    /// The first group a regular expression captures in a string.
    Capture(Box<CExpr>, Box<Pattern>),
    /// A string read as a number (`"250"` → 250).
    ToNumber(Box<CExpr>),
}

impl Serialize for CExpr {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        CExpr::serialize(self, serializer)
    }
}

/// Bounded in depth when read from bytes ([`crate::snapshot::nested`]).
impl<'de> Deserialize<'de> for CExpr {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::snapshot::nested(deserializer, CExpr::deserialize)
    }
}

impl CExpr {
    /// Calls `f` with each expression directly inside this one.
    pub(crate) fn each_child<'e>(&'e self, mut f: impl FnMut(&'e CExpr)) {
        match self {
            Self::Bool(_)
            | Self::Number(_)
            | Self::Text(_)
            | Self::Fact(_)
            | Self::Input(_)
            | Self::Element => {}
            Self::List(items) | Self::Coalesce(items) | Self::Concat(items) => {
                items.iter().for_each(f);
            }
            Self::Field(of, _)
            | Self::Not(of)
            | Self::Matches(of, _)
            | Self::Exists(of)
            | Self::First(of)
            | Self::Last(of)
            | Self::Len(of)
            | Self::Lower(of)
            | Self::Capture(of, _)
            | Self::ToNumber(of)
            | Self::Count(of, None) => f(of),
            Self::Index(a, b)
            | Self::Filter(a, b)
            | Self::And(a, b)
            | Self::Or(a, b)
            | Self::Compare(_, a, b)
            | Self::Contains(a, b)
            | Self::StartsWith(a, b)
            | Self::EndsWith(a, b)
            | Self::In(a, b)
            | Self::Any(a, b)
            | Self::All(a, b)
            | Self::Count(a, Some(b)) => {
                f(a);
                f(b);
            }
        }
    }

    /// Whether it reads the element of a filter or predicate (`.`).
    fn reads_element(&self) -> bool {
        let mut reads = matches!(self, Self::Element);
        self.each_child(|child| reads = reads || child.reads_element());
        reads
    }
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// What an expression needs while it is evaluated: the facts (computed on
/// demand, once) and the element stack of filters and predicates.
pub(crate) trait Scope<'a> {
    /// The value of a fact, recording that the current condition read it.
    fn fact(&mut self, id: FactId) -> Value<'a>;
    /// A top-level document of the input.
    fn input(&mut self, id: InputId) -> Value<'a>;
}

pub(crate) struct Eval<'s, 'a, S: Scope<'a>> {
    pub scope: &'s mut S,
    pub elements: Vec<Value<'a>>,
}

impl<'a, S: Scope<'a>> Eval<'_, 'a, S> {
    pub fn eval(&mut self, expr: &'a CExpr) -> Value<'a> {
        match expr {
            CExpr::Bool(b) => Value::Bool(*b),
            CExpr::Number(n) => Value::Number(*n),
            CExpr::Text(s) => Value::Text(s),
            CExpr::List(items) => Value::List(items.iter().map(|e| self.eval(e)).collect()),
            CExpr::Fact(id) => self.scope.fact(*id),
            CExpr::Input(id) => self.scope.input(*id),
            CExpr::Element => self.elements.last().cloned().unwrap_or(Value::Unknown),
            CExpr::Field(of, name) => {
                let of = self.eval(of);
                field(&of, name)
            }
            CExpr::Index(of, index) => {
                let of = self.eval(of);
                let index = self.eval(index);
                match (of.elements(), index.as_number()) {
                    (Some(items), Some(i)) => nth(items, i),
                    _ if of.is_unknown() || index.is_unknown() => Value::Unknown,
                    _ => Value::Absent,
                }
            }
            // `[a, b][p]` is the idiom for "a and b when p": when `p` is not
            // about the element, it is tested first, and the list is made
            // only when it holds.
            CExpr::Filter(of, predicate)
                if matches!(**of, CExpr::List(_)) && !predicate.reads_element() =>
            {
                match self.eval(predicate).truth() {
                    Truth::True => self.eval(of),
                    Truth::False | Truth::Unknown => Value::List(Rc::new([])),
                }
            }
            CExpr::Filter(of, predicate) => {
                let of = self.eval(of);
                match of.elements() {
                    Some(items) => {
                        let kept: Rc<[Value<'a>]> = items
                            .into_iter()
                            .filter(|item| {
                                self.with_element(item.clone(), predicate).truth() == Truth::True
                            })
                            .collect();
                        Value::List(kept)
                    }
                    None => of,
                }
            }
            CExpr::Not(e) => truth(!self.eval(e).truth()),
            CExpr::And(a, b) => match self.eval(a).truth() {
                Truth::False => Value::Bool(false),
                left => truth(left.and(self.eval(b).truth())),
            },
            CExpr::Or(a, b) => match self.eval(a).truth() {
                Truth::True => Value::Bool(true),
                left => truth(left.or(self.eval(b).truth())),
            },
            CExpr::Compare(op, a, b) => {
                let (a, b) = (self.eval(a), self.eval(b));
                if a.is_unknown() || b.is_unknown() {
                    return Value::Unknown;
                }
                Value::Bool(match op {
                    Cmp::Eq => a.equals(&b),
                    Cmp::Ne => !a.equals(&b),
                    Cmp::Lt => a.compare(&b).is_some_and(|o| o.is_lt()),
                    Cmp::Le => a.compare(&b).is_some_and(|o| o.is_le()),
                    Cmp::Gt => a.compare(&b).is_some_and(|o| o.is_gt()),
                    Cmp::Ge => a.compare(&b).is_some_and(|o| o.is_ge()),
                })
            }
            CExpr::Contains(a, b) => {
                let (a, b) = (self.eval(a), self.eval(b));
                contains(&a, &b)
            }
            CExpr::In(a, b) => {
                let (a, b) = (self.eval(a), self.eval(b));
                contains(&b, &a)
            }
            CExpr::StartsWith(a, b) => self.strings(a, b, |a, b| a.starts_with(b)),
            CExpr::EndsWith(a, b) => self.strings(a, b, |a, b| a.ends_with(b)),
            CExpr::Matches(a, regex) => match self.eval(a) {
                Value::Unknown => Value::Unknown,
                value => match value.as_str().map(|s| regex.is_match(s)) {
                    None => Value::Bool(false),
                    Some(Some(found)) => Value::Bool(found),
                    Some(None) => Value::Unknown,
                },
            },
            CExpr::Exists(e) => match self.eval(e) {
                Value::Unknown => Value::Unknown,
                Value::Absent => Value::Bool(false),
                _ => Value::Bool(true),
            },
            CExpr::Any(list, predicate) => self.quantify(list, predicate, Truth::True),
            CExpr::All(list, predicate) => self.quantify(list, predicate, Truth::False),
            CExpr::Count(list, predicate) => {
                let list = self.eval(list);
                let Some(items) = list.elements() else {
                    return if matches!(list, Value::Absent) {
                        Value::Number(0.0)
                    } else {
                        Value::Unknown
                    };
                };
                let Some(predicate) = predicate else {
                    return Value::Number(items.len() as f64);
                };
                let mut count = 0usize;
                for item in items {
                    match self.with_element(item, predicate).truth() {
                        Truth::True => count += 1,
                        Truth::Unknown => return Value::Unknown,
                        Truth::False => {}
                    }
                }
                Value::Number(count as f64)
            }
            CExpr::First(list) => self.end(list, |mut items| items.next()),
            CExpr::Last(list) => self.end(list, |mut items| items.next_back()),
            CExpr::Len(e) => match self.eval(e) {
                Value::Unknown => Value::Unknown,
                Value::Absent => Value::Number(0.0),
                value => match (value.as_str(), value.elements()) {
                    (Some(s), _) => Value::Number(s.chars().count() as f64),
                    (_, Some(items)) => Value::Number(items.len() as f64),
                    _ => Value::Unknown,
                },
            },
            CExpr::Coalesce(options) => {
                let mut unknown = false;
                for option in options {
                    match self.eval(option) {
                        Value::Absent => {}
                        Value::Unknown => unknown = true,
                        value => return value,
                    }
                }
                if unknown {
                    Value::Unknown
                } else {
                    Value::Absent
                }
            }
            CExpr::Concat(lists) => {
                let mut all = Vec::new();
                for list in lists {
                    match self.eval(list) {
                        Value::Absent => {}
                        Value::Unknown => return Value::Unknown,
                        value => match value.elements() {
                            Some(items) => all.extend(items),
                            None => all.push(value),
                        },
                    }
                }
                Value::List(all.into())
            }
            CExpr::Capture(text, regex) => match self.eval(text) {
                value @ (Value::Unknown | Value::Absent) => value,
                value => match value.as_str().map(|s| regex.capture(s)) {
                    None | Some(Some(None)) => Value::Absent,
                    Some(Some(Some(found))) => Value::Str(Rc::from(found)),
                    Some(None) => Value::Unknown,
                },
            },
            CExpr::ToNumber(e) => match self.eval(e) {
                value @ (Value::Unknown | Value::Absent) => value,
                value => match (value.as_number(), value.as_str()) {
                    (Some(n), _) => Value::Number(n),
                    (_, Some(s)) => s
                        .trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|n| n.is_finite())
                        .map_or(Value::Absent, Value::Number),
                    _ => Value::Absent,
                },
            },
            CExpr::Lower(e) => match self.eval(e) {
                value @ (Value::Unknown | Value::Absent) => value,
                value => value
                    .as_str()
                    .map_or(Value::Unknown, |s| Value::Str(Rc::from(s.to_lowercase()))),
            },
        }
    }

    fn with_element(&mut self, element: Value<'a>, expr: &'a CExpr) -> Value<'a> {
        self.elements.push(element);
        let value = self.eval(expr);
        self.elements.pop();
        value
    }

    fn strings(
        &mut self,
        a: &'a CExpr,
        b: &'a CExpr,
        test: impl Fn(&str, &str) -> bool,
    ) -> Value<'a> {
        let (a, b) = (self.eval(a), self.eval(b));
        if a.is_unknown() || b.is_unknown() {
            return Value::Unknown;
        }
        Value::Bool(matches!((a.as_str(), b.as_str()), (Some(a), Some(b)) if test(a, b)))
    }

    /// `any` (decisive: true) or `all` (decisive: false).
    fn quantify(&mut self, list: &'a CExpr, predicate: &'a CExpr, decisive: Truth) -> Value<'a> {
        let list = self.eval(list);
        let mut result = !decisive;
        if matches!(list, Value::Absent) {
            return truth(result);
        }
        let Some(items) = list.elements() else {
            return Value::Unknown;
        };
        for item in items {
            match self.with_element(item, predicate).truth() {
                t if t == decisive => return truth(decisive),
                Truth::Unknown => result = Truth::Unknown,
                _ => {}
            }
        }
        truth(result)
    }

    fn end(
        &mut self,
        list: &'a CExpr,
        pick: impl Fn(Elements<'_, 'a>) -> Option<Value<'a>>,
    ) -> Value<'a> {
        match self.eval(list) {
            Value::Unknown => Value::Unknown,
            value => value.elements().and_then(pick).unwrap_or(Value::Absent),
        }
    }
}

fn truth(t: Truth) -> Value<'static> {
    match t {
        Truth::True => Value::Bool(true),
        Truth::False => Value::Bool(false),
        Truth::Unknown => Value::Unknown,
    }
}

/// `value.name`; over a list, the field of every element that has it.
fn field<'a>(value: &Value<'a>, name: &str) -> Value<'a> {
    match value {
        Value::Json(Json::Object(map)) => map.get(name).map_or(Value::Absent, Value::from_json),
        Value::Unknown => Value::Unknown,
        _ => match value.elements() {
            Some(items) => {
                let mut out = Vec::new();
                for item in items {
                    match field(&item, name) {
                        Value::Absent => {}
                        found => match found.elements() {
                            Some(inner) => out.extend(inner),
                            None => out.push(found),
                        },
                    }
                }
                Value::List(out.into())
            }
            None => Value::Absent,
        },
    }
}

fn nth<'a>(mut items: Elements<'_, 'a>, index: f64) -> Value<'a> {
    if index.fract() != 0.0 {
        return Value::Absent;
    }
    #[expect(clippy::cast_possible_truncation, reason = "an index is integral")]
    let index = index as i64;
    let len = i64::try_from(items.len()).unwrap_or(i64::MAX);
    let at = if index < 0 { len + index } else { index };
    usize::try_from(at)
        .ok()
        .and_then(|at| items.nth(at))
        .unwrap_or(Value::Absent)
}

/// `haystack contains needle`: a substring, or an element of a list.
fn contains<'a>(haystack: &Value<'a>, needle: &Value<'a>) -> Value<'a> {
    if needle.is_unknown() {
        return Value::Unknown;
    }
    if let (Some(h), Some(n)) = (haystack.as_str(), needle.as_str()) {
        return Value::Bool(h.contains(n));
    }
    match haystack {
        Value::Unknown => Value::Unknown,
        Value::Absent => Value::Bool(false),
        _ => match haystack.elements() {
            Some(items) => {
                let mut unknown = false;
                for item in items {
                    if item.equals(needle) {
                        return Value::Bool(true);
                    }
                    unknown |= item.is_unknown();
                }
                if unknown {
                    Value::Unknown
                } else {
                    Value::Bool(false)
                }
            }
            None => Value::Bool(false),
        },
    }
}
