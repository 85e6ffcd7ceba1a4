//! Compiled expressions and their three-valued evaluation.

use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::json::Json;
use crate::kb::{FactId, InputId};
use crate::misread::{Misread, Read};
use crate::pattern::Pattern;
use crate::value::{Elements, Truth, Value};

/// Where an expression is in its knowledge base's [`Exprs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ExprId(u32);

impl ExprId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A run of [`Exprs::operands`] (the items of a list, the arguments of
/// `coalesce`), of [`Exprs::names`] or of [`Exprs::strings`].
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct Span {
    start: u32,
    end: u32,
}

impl Span {
    fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    fn shifted(self, by: u32) -> Self {
        Self {
            start: self.start.saturating_add(by),
            end: self.end.saturating_add(by),
        }
    }
}

/// A regular expression of [`Exprs::patterns`].
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct PatternId(u32);

/// Every expression of a knowledge base, in one arena where an expression's
/// operands come before it: loading a knowledge base decodes a few vectors
/// rather than allocating each operand on its own, and checking it needs no
/// recursion.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Exprs {
    #[serde(deserialize_with = "crate::snapshot::sized_vec")]
    nodes: Vec<CExpr>,
    #[serde(deserialize_with = "crate::snapshot::sized_vec")]
    operands: Vec<ExprId>,
    /// The fields of paths, in [`Exprs::strings`].
    #[serde(deserialize_with = "crate::snapshot::sized_vec")]
    names: Vec<Span>,
    /// The strings of literals and field names, one after the other.
    strings: String,
    #[serde(deserialize_with = "crate::snapshot::sized_vec")]
    patterns: Vec<Pattern>,
}

/// An expression with every name resolved and every type checked; its
/// operands are in the same [`Exprs`]. Its tag is a byte of its own: left
/// to the compiler, it went into the niche of `Bool`'s `bool`, and every
/// dispatch on it subtracted and compared first.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[repr(u8)]
pub(crate) enum CExpr {
    Bool(bool),
    Number(f64),
    Text(Span),
    List(Span),
    Fact(FactId),
    Input(InputId),
    /// The list element a filter or predicate is looking at.
    Element,
    /// `of.a.b`: a run of [`Exprs::names`], read in turn.
    Path(ExprId, Span),
    Index(ExprId, ExprId),
    Filter(ExprId, ExprId),
    Not(ExprId),
    And(ExprId, ExprId),
    Or(ExprId, ExprId),
    Compare(Cmp, ExprId, ExprId),
    Contains(ExprId, ExprId),
    StartsWith(ExprId, ExprId),
    EndsWith(ExprId, ExprId),
    In(ExprId, ExprId),
    Matches(ExprId, PatternId),
    Exists(ExprId),
    Any(ExprId, ExprId),
    All(ExprId, ExprId),
    Count(ExprId, Option<ExprId>),
    First(ExprId),
    Last(ExprId),
    Len(ExprId),
    Lower(ExprId),
    /// The first argument that holds a value.
    Coalesce(Span),
    /// The lists one after the other.
    Concat(Span),
    /// The first group a regular expression captures in a string.
    Capture(ExprId, PatternId),
    /// A string read as a number (`"250"` → 250).
    ToNumber(ExprId),
    /// The seconds from one RFC 3339 time to another.
    SecondsBetween(ExprId, ExprId),
}

/// How far the ids of an arena moved when it was appended to another.
#[derive(Clone, Copy)]
pub(crate) struct Shift {
    nodes: u32,
    operands: u32,
    names: u32,
    strings: u32,
    patterns: u32,
}

impl Shift {
    /// Where an expression of the appended arena now is.
    pub fn expr(self, id: ExprId) -> ExprId {
        ExprId(id.0.saturating_add(self.nodes))
    }

    fn node(self, expr: CExpr) -> CExpr {
        let e = |id| self.expr(id);
        let p = |id: PatternId| PatternId(id.0.saturating_add(self.patterns));
        match expr {
            CExpr::Bool(_)
            | CExpr::Number(_)
            | CExpr::Fact(_)
            | CExpr::Input(_)
            | CExpr::Element => expr,
            CExpr::Text(text) => CExpr::Text(text.shifted(self.strings)),
            CExpr::List(items) => CExpr::List(items.shifted(self.operands)),
            CExpr::Coalesce(items) => CExpr::Coalesce(items.shifted(self.operands)),
            CExpr::Concat(items) => CExpr::Concat(items.shifted(self.operands)),
            CExpr::Path(of, names) => CExpr::Path(e(of), names.shifted(self.names)),
            CExpr::Index(a, b) => CExpr::Index(e(a), e(b)),
            CExpr::Filter(a, b) => CExpr::Filter(e(a), e(b)),
            CExpr::Not(a) => CExpr::Not(e(a)),
            CExpr::And(a, b) => CExpr::And(e(a), e(b)),
            CExpr::Or(a, b) => CExpr::Or(e(a), e(b)),
            CExpr::Compare(cmp, a, b) => CExpr::Compare(cmp, e(a), e(b)),
            CExpr::Contains(a, b) => CExpr::Contains(e(a), e(b)),
            CExpr::StartsWith(a, b) => CExpr::StartsWith(e(a), e(b)),
            CExpr::EndsWith(a, b) => CExpr::EndsWith(e(a), e(b)),
            CExpr::In(a, b) => CExpr::In(e(a), e(b)),
            CExpr::Matches(a, pattern) => CExpr::Matches(e(a), p(pattern)),
            CExpr::Exists(a) => CExpr::Exists(e(a)),
            CExpr::Any(a, b) => CExpr::Any(e(a), e(b)),
            CExpr::All(a, b) => CExpr::All(e(a), e(b)),
            CExpr::Count(a, b) => CExpr::Count(e(a), b.map(e)),
            CExpr::First(a) => CExpr::First(e(a)),
            CExpr::Last(a) => CExpr::Last(e(a)),
            CExpr::Len(a) => CExpr::Len(e(a)),
            CExpr::Lower(a) => CExpr::Lower(e(a)),
            CExpr::Capture(a, pattern) => CExpr::Capture(e(a), p(pattern)),
            CExpr::ToNumber(a) => CExpr::ToNumber(e(a)),
            CExpr::SecondsBetween(a, b) => CExpr::SecondsBetween(e(a), e(b)),
        }
    }
}

impl Exprs {
    /// Moves the expressions of `other`, compiled apart, after these; what
    /// refers to one of them finds it through the shift returned.
    pub fn append(&mut self, other: Exprs) -> Shift {
        let shift = Shift {
            nodes: index_u32(self.nodes.len()),
            operands: index_u32(self.operands.len()),
            names: index_u32(self.names.len()),
            strings: index_u32(self.strings.len()),
            patterns: index_u32(self.patterns.len()),
        };
        let nodes = other.nodes.into_iter().map(|expr| shift.node(expr));
        self.nodes.extend(nodes);
        let operands = other.operands.into_iter().map(|id| shift.expr(id));
        self.operands.extend(operands);
        let names = other
            .names
            .into_iter()
            .map(|name| name.shifted(shift.strings));
        self.names.extend(names);
        self.strings.push_str(&other.strings);
        self.patterns.extend(other.patterns);
        shift
    }

    /// Adds an expression whose operands are already in.
    pub fn push(&mut self, expr: CExpr) -> ExprId {
        self.nodes.push(expr);
        ExprId(index_u32(self.nodes.len() - 1))
    }

    pub fn push_operands(&mut self, operands: impl IntoIterator<Item = ExprId>) -> Span {
        let start = index_u32(self.operands.len());
        self.operands.extend(operands);
        Span {
            start,
            end: index_u32(self.operands.len()),
        }
    }

    /// `of.name`, `name` in [`Exprs::strings`]: the path `of` one field
    /// longer when `of` is a path just added (nothing refers to it yet),
    /// so that a chain of fields is one expression to evaluate.
    pub fn push_field(&mut self, of: ExprId, name: Span) -> ExprId {
        let names_end = index_u32(self.names.len());
        let last = self.nodes.len().checked_sub(1);
        self.names.push(name);
        if let Some(CExpr::Path(_, names)) = self.nodes.last_mut()
            && last == Some(of.index())
            && names.end == names_end
        {
            names.end += 1;
            return of;
        }
        self.push(CExpr::Path(
            of,
            Span {
                start: names_end,
                end: names_end + 1,
            },
        ))
    }

    pub fn push_str(&mut self, text: &str) -> Span {
        let start = index_u32(self.strings.len());
        self.strings.push_str(text);
        Span {
            start,
            end: index_u32(self.strings.len()),
        }
    }

    pub fn push_pattern(&mut self, pattern: Pattern) -> PatternId {
        self.patterns.push(pattern);
        PatternId(index_u32(self.patterns.len() - 1))
    }

    /// The expression; `None` only for ids of another knowledge base.
    pub fn get(&self, id: ExprId) -> Option<&CExpr> {
        self.nodes.get(id.index())
    }

    pub fn operands(&self, span: Span) -> &[ExprId] {
        self.operands.get(span.range()).unwrap_or_default()
    }

    pub fn names(&self, span: Span) -> &[Span] {
        self.names.get(span.range()).unwrap_or_default()
    }

    pub fn str(&self, span: Span) -> &str {
        self.strings.get(span.range()).unwrap_or_default()
    }

    fn pattern(&self, id: PatternId) -> Option<&Pattern> {
        self.patterns.get(id.0 as usize)
    }

    /// Calls `f` with each expression directly inside `id`.
    pub fn each_child(&self, id: ExprId, f: impl FnMut(ExprId)) {
        if let Some(expr) = self.get(id) {
            self.children(expr, f);
        }
    }

    /// Calls `f` with each expression directly inside `expr`.
    fn children(&self, expr: &CExpr, mut f: impl FnMut(ExprId)) {
        match *expr {
            CExpr::Bool(_)
            | CExpr::Number(_)
            | CExpr::Text(_)
            | CExpr::Fact(_)
            | CExpr::Input(_)
            | CExpr::Element => {}
            CExpr::List(items) | CExpr::Coalesce(items) | CExpr::Concat(items) => {
                self.operands(items).iter().copied().for_each(f);
            }
            CExpr::Path(of, _)
            | CExpr::Not(of)
            | CExpr::Matches(of, _)
            | CExpr::Exists(of)
            | CExpr::First(of)
            | CExpr::Last(of)
            | CExpr::Len(of)
            | CExpr::Lower(of)
            | CExpr::Capture(of, _)
            | CExpr::ToNumber(of)
            | CExpr::Count(of, None) => f(of),
            CExpr::Index(a, b)
            | CExpr::Filter(a, b)
            | CExpr::And(a, b)
            | CExpr::Or(a, b)
            | CExpr::Compare(_, a, b)
            | CExpr::Contains(a, b)
            | CExpr::StartsWith(a, b)
            | CExpr::EndsWith(a, b)
            | CExpr::In(a, b)
            | CExpr::Any(a, b)
            | CExpr::All(a, b)
            | CExpr::SecondsBetween(a, b)
            | CExpr::Count(a, Some(b)) => {
                f(a);
                f(b);
            }
        }
    }

    /// Whether `of[predicate]` is the idiom for "the items of the list `of`
    /// when `predicate` holds": `of` is a list written out and `predicate`
    /// is not about its elements.
    fn is_guard(&self, of: ExprId, predicate: ExprId) -> bool {
        matches!(self.get(of), Some(CExpr::List(_))) && !self.reads_element(predicate)
    }

    /// Whether `id` reads the element of a filter or predicate (`.`).
    fn reads_element(&self, id: ExprId) -> bool {
        let mut reads = matches!(self.get(id), Some(CExpr::Element));
        self.each_child(id, |child| reads = reads || self.reads_element(child));
        reads
    }

    /// Whether the arena holds together, for one decoded from bytes: every
    /// operand comes before the expression it is in and is in only one,
    /// every run and regular expression exists, and nothing is nested
    /// deeper than `max_depth` (evaluating recurses as deep as that). Facts
    /// and inputs are checked against how many there are. Tells, by id,
    /// which expressions are inside another.
    pub fn check(
        &self,
        max_depth: usize,
        facts: usize,
        inputs: usize,
    ) -> Result<Vec<bool>, String> {
        // Each expression's depth, and whether it is inside another.
        const INSIDE: u16 = 1 << 15;
        let max_depth = u16::try_from(max_depth)
            .unwrap_or(INSIDE - 1)
            .min(INSIDE - 1);
        let mut seen = vec![0u16; self.nodes.len()];
        for (at, expr) in self.nodes.iter().enumerate() {
            let mut deepest = 0;
            let mut fine = true;
            self.children(expr, |child| match seen.get_mut(child.index()) {
                Some(slot) if child.index() < at && *slot & INSIDE == 0 => {
                    deepest = deepest.max(*slot);
                    *slot |= INSIDE;
                }
                _ => fine = false,
            });
            let runs = match *expr {
                CExpr::List(items) | CExpr::Coalesce(items) | CExpr::Concat(items) => {
                    self.operands.get(items.range()).is_some()
                }
                CExpr::Text(text) => self.strings.get(text.range()).is_some(),
                CExpr::Path(_, names) => self.names.get(names.range()).is_some_and(|names| {
                    names
                        .iter()
                        .all(|name| self.strings.get(name.range()).is_some())
                }),
                CExpr::Matches(_, pattern) | CExpr::Capture(_, pattern) => {
                    self.pattern(pattern).is_some()
                }
                CExpr::Fact(fact) => fact.0 < facts,
                CExpr::Input(input) => input.0 < inputs,
                _ => true,
            };
            if !(fine && runs) {
                return Err(format!("expression {at} names what it cannot"));
            }
            if deepest >= max_depth {
                return Err(String::from("an expression is nested too deeply"));
            }
            if let Some(slot) = seen.get_mut(at) {
                *slot = deepest + 1;
            }
        }
        Ok(seen.iter().map(|slot| slot & INSIDE != 0).collect())
    }
}

/// Arenas hold far fewer than 2^32 of anything: a knowledge base that large
/// could not be loaded.
fn index_u32(index: usize) -> u32 {
    u32::try_from(index).unwrap_or(u32::MAX)
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
    /// A top-level document of the input, if it was given.
    fn input(&mut self, id: InputId) -> Option<&'a Json<'a>>;
    /// The rules read a value of the input in another shape than it has: a
    /// field of a string, the elements of an object. Worth a warning.
    fn misread(&mut self, misread: Misread<'a>);
}

pub(crate) struct Eval<'s, 'a, S: Scope<'a>> {
    pub exprs: &'a Exprs,
    pub scope: &'s mut S,
    pub elements: Vec<Value<'a>>,
}

impl<'a, S: Scope<'a>> Eval<'_, 'a, S> {
    pub fn eval(&mut self, id: ExprId) -> Value<'a> {
        let exprs = self.exprs;
        let Some(expr) = exprs.get(id) else {
            return Value::Unknown;
        };
        match *expr {
            CExpr::Bool(b) => Value::Bool(b),
            CExpr::Number(n) => Value::Number(n),
            CExpr::Text(s) => Value::Text(exprs.str(s)),
            CExpr::List(items) => Value::List(
                exprs
                    .operands(items)
                    .iter()
                    .map(|&e| self.eval(e))
                    .collect(),
            ),
            CExpr::Fact(id) => self.scope.fact(id),
            CExpr::Input(id) => self
                .scope
                .input(id)
                .map_or(Value::Unknown, Value::from_json),
            CExpr::Element => self.elements.last().cloned().unwrap_or(Value::Unknown),
            CExpr::Path(of, names) => {
                // The piece of the input the value was read from, if any: a
                // number or bool read there is no longer JSON, and this
                // names its place should the rules read a field of it.
                let mut node = match exprs.get(of) {
                    Some(&CExpr::Input(id)) => self.scope.input(id),
                    _ => None,
                };
                let mut value = node.map_or_else(|| self.eval(of), Value::from_json);
                for &name in exprs.names(names) {
                    let name = exprs.str(name);
                    if let Value::Json(Json::Object(object)) = value {
                        node = object.get(name);
                        value = node.map_or(Value::Absent, Value::from_json);
                        continue;
                    }
                    let mut scalar = None;
                    let next = field(&value, name, &mut scalar);
                    if let Some((found, at)) = scalar {
                        let whole = value.elements().is_none();
                        self.scope.misread(Misread {
                            found,
                            node: at.or(node.filter(|_| whole)),
                            read: Read::Field(name),
                        });
                    }
                    node = None;
                    value = next;
                }
                value
            }
            CExpr::Index(of, index) => {
                let of = self.eval(of);
                let index = self.eval(index);
                match (of.elements(), index.as_number()) {
                    (Some(items), Some(i)) => nth(items, i),
                    _ if of.is_unknown() || index.is_unknown() => Value::Unknown,
                    (None, Some(_)) => {
                        self.not_a_list(&of);
                        Value::Absent
                    }
                    _ => Value::Absent,
                }
            }
            // `[a, b][p]` is the idiom for "a and b when p": when `p` is not
            // about the element, it is tested first, and the list is made
            // only when it holds.
            CExpr::Filter(of, predicate) if exprs.is_guard(of, predicate) => {
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
                    None => {
                        self.not_a_list(&of);
                        of
                    }
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
            // `x in ["A", "B"]`: the items of a list written out are compared
            // as they come, every one evaluated as the list would have been,
            // and no list is made.
            CExpr::In(a, b) => match exprs.get(b) {
                Some(&CExpr::List(items)) => {
                    let needle = self.eval(a);
                    let items = exprs.operands(items).iter().map(|&item| self.eval(item));
                    let member = member(&needle, items);
                    if needle.is_unknown() {
                        Value::Unknown
                    } else {
                        member
                    }
                }
                _ => {
                    let (a, b) = (self.eval(a), self.eval(b));
                    contains(&b, &a)
                }
            },
            CExpr::StartsWith(a, b) => self.strings(a, b, |a, b| a.starts_with(b)),
            CExpr::EndsWith(a, b) => self.strings(a, b, |a, b| a.ends_with(b)),
            CExpr::Matches(a, regex) => match self.eval(a) {
                Value::Unknown => Value::Unknown,
                value => match value
                    .as_str()
                    .map(|s| exprs.pattern(regex).and_then(|regex| regex.is_match(s)))
                {
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
                    self.not_a_list(&list);
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
            CExpr::First(list) => self.end(list, End::First),
            CExpr::Last(list) => self.end(list, End::Last),
            CExpr::Len(e) => match self.eval(e) {
                Value::Unknown => Value::Unknown,
                Value::Absent => Value::Number(0.0),
                Value::Json(Json::Object(fields)) => Value::Number(fields.len() as f64),
                value => match (value.as_str(), value.elements()) {
                    (Some(s), _) => Value::Number(s.chars().count() as f64),
                    (_, Some(items)) => Value::Number(items.len() as f64),
                    _ => Value::Unknown,
                },
            },
            CExpr::Coalesce(options) => {
                let mut unknown = false;
                for &option in exprs.operands(options) {
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
                for &list in exprs.operands(lists) {
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
                value => match value
                    .as_str()
                    .map(|s| exprs.pattern(regex).and_then(|regex| regex.capture(s)))
                {
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
            CExpr::SecondsBetween(from, to) => {
                let (from, to) = (self.eval(from), self.eval(to));
                if from.is_unknown() || to.is_unknown() {
                    return Value::Unknown;
                }
                match (
                    from.as_str().and_then(instant),
                    to.as_str().and_then(instant),
                ) {
                    (Some(from), Some(to)) => Value::Number(to - from),
                    _ => Value::Absent,
                }
            }
            CExpr::Lower(e) => match self.eval(e) {
                value @ (Value::Unknown | Value::Absent) => value,
                value => value
                    .as_str()
                    .map_or(Value::Unknown, |s| Value::Str(Rc::from(s.to_lowercase()))),
            },
        }
    }

    /// Tells the scope of a value read as a list that is none.
    fn not_a_list(&mut self, value: &Value<'a>) {
        if !matches!(value, Value::Unknown | Value::Absent) {
            self.scope.misread(Misread {
                found: value.clone(),
                node: match value {
                    Value::Json(node) => Some(node),
                    _ => None,
                },
                read: Read::List,
            });
        }
    }

    fn with_element(&mut self, element: Value<'a>, expr: ExprId) -> Value<'a> {
        self.elements.push(element);
        let value = self.eval(expr);
        self.elements.pop();
        value
    }

    fn strings(&mut self, a: ExprId, b: ExprId, test: impl Fn(&str, &str) -> bool) -> Value<'a> {
        let (a, b) = (self.eval(a), self.eval(b));
        if a.is_unknown() || b.is_unknown() {
            return Value::Unknown;
        }
        Value::Bool(matches!((a.as_str(), b.as_str()), (Some(a), Some(b)) if test(a, b)))
    }

    /// `any` (decisive: true) or `all` (decisive: false).
    fn quantify(&mut self, list: ExprId, predicate: ExprId, decisive: Truth) -> Value<'a> {
        let list = self.eval(list);
        let mut result = !decisive;
        if matches!(list, Value::Absent) {
            return truth(result);
        }
        let Some(items) = list.elements() else {
            self.not_a_list(&list);
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

    /// `first` or `last` of a list. Of a filtered list (`first(events[.reason
    /// == "Failed"])`), elements are tested from that end only until one is
    /// kept, and the list is never made.
    fn end(&mut self, list: ExprId, end: End) -> Value<'a> {
        let (of, predicate) = match self.exprs.get(list) {
            Some(&CExpr::Filter(of, predicate)) if !self.exprs.is_guard(of, predicate) => {
                (of, Some(predicate))
            }
            _ => (list, None),
        };
        let of = self.eval(of);
        let Some(mut items) = of.elements() else {
            // Only a list has ends; what a filter of something else gives,
            // `of` itself, has none.
            self.not_a_list(&of);
            return if of.is_unknown() {
                Value::Unknown
            } else {
                Value::Absent
            };
        };
        let Some(predicate) = predicate else {
            return end.take(&mut items).unwrap_or(Value::Absent);
        };
        while let Some(item) = end.take(&mut items) {
            if self.with_element(item.clone(), predicate).truth() == Truth::True {
                return item;
            }
        }
        Value::Absent
    }
}

/// Which end of a list `first` and `last` take.
#[derive(Clone, Copy)]
enum End {
    First,
    Last,
}

impl End {
    fn take<'a>(self, items: &mut Elements<'_, 'a>) -> Option<Value<'a>> {
        match self {
            Self::First => items.next(),
            Self::Last => items.next_back(),
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
/// Sets `scalar` to the first string, number or bool it is read of, and
/// where it is in the input when that is known.
fn field<'a>(
    value: &Value<'a>,
    name: &str,
    scalar: &mut Option<(Value<'a>, Option<&'a Json<'a>>)>,
) -> Value<'a> {
    match value {
        Value::Json(Json::Object(map)) => map.get(name).map_or(Value::Absent, Value::from_json),
        Value::Unknown => Value::Unknown,
        _ => match value.elements() {
            Some(items) => {
                let mut out = Vec::new();
                for (i, item) in items.enumerate() {
                    let first = scalar.is_none();
                    let found = field(&item, name, scalar);
                    // A number or bool of a list in the input is found there.
                    if let (true, Some((_, at @ None)), Value::Json(Json::Array(list))) =
                        (first, scalar.as_mut(), value)
                    {
                        *at = list.get(i);
                    }
                    match found {
                        Value::Absent => {}
                        found => match found.elements() {
                            Some(inner) => out.extend(inner),
                            None => out.push(found),
                        },
                    }
                }
                Value::List(out.into())
            }
            None => {
                if !matches!(value, Value::Absent) && scalar.is_none() {
                    let at = match value {
                        Value::Json(json) => Some(*json),
                        _ => None,
                    };
                    *scalar = Some((value.clone(), at));
                }
                Value::Absent
            }
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
            Some(items) => member(needle, items),
            None => Value::Bool(false),
        },
    }
}

/// Whether `needle` is one of `items`: true when it equals one, else
/// unknown when one is unknown. Every item is taken, so that items
/// evaluated as they come are all evaluated, as a list made of them is.
fn member<'a>(needle: &Value<'a>, items: impl Iterator<Item = Value<'a>>) -> Value<'a> {
    let (found, unknown) = items.fold((false, false), |(found, unknown), item| {
        (found || item.equals(needle), unknown || item.is_unknown())
    });
    match (found, unknown) {
        (true, _) => Value::Bool(true),
        (false, true) => Value::Unknown,
        (false, false) => Value::Bool(false),
    }
}

/// An RFC 3339 time (`2026-04-14T09:20:31Z`, as Kubernetes writes them) in
/// seconds since the Unix epoch, its fraction kept.
fn instant(text: &str) -> Option<f64> {
    let time = chrono::DateTime::parse_from_rfc3339(text.trim()).ok()?;
    #[expect(
        clippy::cast_precision_loss,
        reason = "seconds since 1970 fit in f64's 53 bits"
    )]
    let seconds = time.timestamp() as f64;
    Some(seconds + f64::from(time.timestamp_subsec_nanos()) / 1e9)
}
