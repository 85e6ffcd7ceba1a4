//! The syntax tree of a rule file. Every node keeps where it was written.

use serde::{Deserialize, Serialize};

use crate::source::Loc;

/// The declarations of one or more rule files, in source order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RuleSet {
    /// Everything declared, file after file.
    pub items: Vec<Item>,
}

impl RuleSet {
    /// Adds the declarations of another file.
    pub fn extend(&mut self, other: RuleSet) {
        self.items.extend(other.items);
    }

    /// The inputs declared.
    pub fn inputs(&self) -> impl Iterator<Item = &InputDecl> {
        self.items.iter().filter_map(|item| match item {
            Item::Input(input) => Some(input.as_ref()),
            _ => None,
        })
    }

    /// The facts declared.
    pub fn facts(&self) -> impl Iterator<Item = &FactDecl> {
        self.items.iter().filter_map(|item| match item {
            Item::Fact(fact) => Some(fact.as_ref()),
            _ => None,
        })
    }

    /// The symptoms declared.
    pub fn symptoms(&self) -> impl Iterator<Item = &Symptom> {
        self.items.iter().filter_map(|item| match item {
            Item::Symptom(symptom) => Some(symptom.as_ref()),
            _ => None,
        })
    }

    /// The checks declared at the top level, to be shared between symptoms.
    pub fn checks(&self) -> impl Iterator<Item = &Check> {
        self.items.iter().filter_map(|item| match item {
            Item::Check(check) => Some(check.as_ref()),
            _ => None,
        })
    }

    /// The causes declared.
    pub fn causes(&self) -> impl Iterator<Item = &Cause> {
        self.items.iter().filter_map(|item| match item {
            Item::Cause(cause) => Some(cause.as_ref()),
            _ => None,
        })
    }

    /// The extensions of symptoms and causes declared elsewhere.
    pub fn extensions(&self) -> impl Iterator<Item = &Extension> {
        self.items.iter().filter_map(|item| match item {
            Item::Extend(extension) => Some(extension.as_ref()),
            _ => None,
        })
    }

    /// The tests declared.
    pub fn tests(&self) -> impl Iterator<Item = &Test> {
        self.items.iter().filter_map(|item| match item {
            Item::Test(test) => Some(test.as_ref()),
            _ => None,
        })
    }
}

/// A top-level declaration. Each is boxed: declarations differ much in
/// size, and a large knowledge base moves hundreds of thousands of them
/// from each file's list into one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Item {
    /// `input pod "…"`
    Input(Box<InputDecl>),
    /// `fact phase: string "…" { … }`
    Fact(Box<FactDecl>),
    /// `symptom pod-pending "…" { … }`
    Symptom(Box<Symptom>),
    /// `check scheduler-running "…" { … }`
    Check(Box<Check>),
    /// `cause pending.insufficient-resources "…" { … }`
    Cause(Box<Cause>),
    /// `test "…" { … }`
    Test(Box<Test>),
    /// `extend symptom pod-pending { … }`
    Extend(Box<Extension>),
}

/// A name or id as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ident {
    /// The name itself.
    pub name: String,
    /// Where it was written.
    pub loc: Loc,
}

/// A string literal, unescaped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Str {
    /// The value, escapes resolved.
    pub value: String,
    /// Where it was written, quotes included.
    pub loc: Loc,
}

/// Text for people, in English and optionally in Chinese.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Text {
    /// The English text.
    pub en: Str,
    /// The Chinese text.
    pub zh: Option<Str>,
}

/// A top-level document of the input: `input pod "The Pod"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputDecl {
    /// Its key in the input document.
    pub name: Ident,
    /// What it is.
    pub title: Option<Text>,
    /// The whole declaration.
    pub loc: Loc,
}

/// A named, typed value that rules test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactDecl {
    /// The name conditions use.
    pub name: Ident,
    /// The type its value must have.
    pub ty: Type,
    /// What it means.
    pub title: Text,
    /// More about it.
    pub explain: Option<Text>,
    /// How to derive it from the input; a fact without one must be given.
    pub from: Option<Expr>,
    /// The command a person runs to see it, a template over facts.
    pub gather: Option<Str>,
    /// The whole declaration.
    pub loc: Loc,
}

/// The type of a fact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Type {
    /// Text.
    String,
    /// A number (integer or not).
    Number,
    /// `true` or `false`.
    Bool,
    /// A JSON object.
    Object,
    /// A list whose elements have one type.
    List(Box<Type>),
}

/// An entry point: a recognisable failure and the checks that explain it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Symptom {
    /// Its id.
    pub id: Ident,
    /// Its name.
    pub title: Text,
    /// What it means.
    pub explain: Option<Text>,
    /// When the input shows this symptom.
    pub when: Option<Expr>,
    /// The checks, tried in order: each is reached when no branch of the
    /// one before it applies.
    pub checks: Vec<Check>,
    /// The whole declaration.
    pub loc: Loc,
}

/// A question about facts, with branches for its answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// An id by which other branches can refer to it.
    pub id: Option<Ident>,
    /// The question.
    pub title: Text,
    /// How to answer it by hand.
    pub explain: Option<Text>,
    /// A command that shows what the check looks at, a template over facts.
    pub gather: Option<Str>,
    /// Every branch whose condition holds is followed.
    pub branches: Vec<Branch>,
    /// The whole check.
    pub loc: Loc,
}

/// `if CONDITION => TARGET`, or `else => TARGET`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Branch {
    /// The condition; `None` for `else`, which holds when no other branch does.
    pub condition: Option<Expr>,
    /// Where it leads.
    pub target: Target,
    /// The whole branch.
    pub loc: Loc,
}

/// Where a branch leads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Target {
    /// To a cause, by id.
    Cause(Ident),
    /// To a check declared elsewhere, by id.
    CheckRef(Ident),
    /// To a check written in place.
    Check(Box<Check>),
}

/// `extend symptom ID [TEXT] { … }` or `extend cause ID [TEXT] { … }`: adds
/// to a declaration of another file without copying it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Extension {
    /// What it extends.
    pub kind: ExtensionKind,
    /// The id of the symptom or cause it extends.
    pub id: Ident,
    /// A title replacing the original one.
    pub title: Option<Text>,
    /// An explanation replacing the original one.
    pub explain: Option<Text>,
    /// Checks appended to a symptom's checks.
    pub checks: Vec<Check>,
    /// Fixes appended to a cause's fixes.
    pub fixes: Vec<Fix>,
    /// The whole declaration.
    pub loc: Loc,
}

/// What an extension extends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExtensionKind {
    /// A symptom.
    Symptom,
    /// A cause.
    Cause,
}

/// An explanation of a symptom, with its fixes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cause {
    /// Its id: a public contract, never renamed.
    pub id: Ident,
    /// What is wrong, in a line.
    pub title: Text,
    /// Why it happens.
    pub explain: Option<Text>,
    /// Ways to fix it, best first.
    pub fixes: Vec<Fix>,
    /// The whole declaration.
    pub loc: Loc,
}

/// One way to fix a cause: ordered steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fix {
    /// What the fix does.
    pub title: Text,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// The whole fix.
    pub loc: Loc,
}

/// A step of a fix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// What to do.
    pub text: Text,
    /// The command to run, a template over facts.
    pub run: Option<Str>,
    /// Why the step is dangerous; set for steps that can do harm.
    pub risk: Option<Text>,
    /// The whole step.
    pub loc: Loc,
}

/// A rule test: an input and the causes it must yield.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Test {
    /// What the test shows.
    pub name: Str,
    /// The input document, a file or inline JSON.
    pub input: Option<TestInput>,
    /// Facts given directly, overriding derived ones.
    pub given: Option<Json>,
    /// What the diagnosis must say.
    pub expects: Vec<Expect>,
    /// The whole test.
    pub loc: Loc,
}

/// Where a test's input comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TestInput {
    /// A file, relative to the rule file.
    File(Str),
    /// Written in place.
    Inline(Json),
}

/// JSON written in a rule file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Json {
    /// The value.
    #[serde(with = "json_text")]
    pub value: serde_json::Value,
    /// Where it was written.
    pub loc: Loc,
}

/// A JSON value stored as its text, so that formats which do not describe
/// themselves (such as the compiled knowledge base's) can carry it.
mod json_text {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(value: &serde_json::Value, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&value.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<serde_json::Value, D::Error> {
        serde_json::from_str(&String::deserialize(d)?).map_err(D::Error::custom)
    }
}

/// `expect ID [confirmed|possible]`, `expect not ID` or `expect none`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Expect {
    /// The symptom or cause is reported, with this status.
    Reported {
        /// A symptom or cause id.
        id: Ident,
        /// The status it must have; `confirmed` when not written.
        status: ExpectedStatus,
    },
    /// The symptom or cause is not reported at all.
    Absent(Ident),
    /// No cause is confirmed.
    NoneConfirmed(Loc),
}

/// The status an `expect` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExpectedStatus {
    /// Every condition on the way holds.
    Confirmed,
    /// Some condition on the way is unknown.
    Possible,
}

/// An expression over facts and the input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where it was written: also the text shown as evidence.
    pub loc: Loc,
}

/// The forms an expression takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ExprKind {
    /// `true`, `false`
    Bool(bool),
    /// `137`, `0.5`
    Number(f64),
    /// `"Pending"`
    String(String),
    /// `["a", "b"]`
    List(Vec<Expr>),
    /// A fact or an input: `phase`, `pod`.
    Name(String),
    /// `.reason`: a field of the element a filter or predicate looks at;
    /// `.` (an empty field) is the element itself.
    Relative(String),
    /// `expr.field`
    Field(Box<Expr>, String),
    /// `expr["key"]`, `expr[0]` or `expr[condition]`.
    Bracket(Box<Expr>, Box<Expr>),
    /// `any(list, condition)`. The name is boxed, as calls are few and
    /// every other kind of expression would be as large as one.
    Call(Box<Ident>, Vec<Expr>),
    /// `not expr`
    Not(Box<Expr>),
    /// `a and b`, `a == b`, `a contains b`, …
    Binary(BinOp, Box<Expr>, Box<Expr>),
}

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum BinOp {
    /// `or`
    Or,
    /// `and`
    And,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `contains`: a substring, or an element of a list.
    Contains,
    /// `starts_with`
    StartsWith,
    /// `ends_with`
    EndsWith,
    /// `matches`: a regular expression (linear time).
    Matches,
    /// `in`: an element of a list.
    In,
    /// `not in`
    NotIn,
}

impl BinOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            Self::Or => "or",
            Self::And => "and",
            Self::Eq => "==",
            Self::Ne => "!=",
            Self::Lt => "<",
            Self::Le => "<=",
            Self::Gt => ">",
            Self::Ge => ">=",
            Self::Contains => "contains",
            Self::StartsWith => "starts_with",
            Self::EndsWith => "ends_with",
            Self::Matches => "matches",
            Self::In => "in",
            Self::NotIn => "not in",
        }
    }
}
