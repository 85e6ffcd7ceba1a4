//! Static types of expressions, checked when a knowledge base compiles.

use std::fmt;

use kb_dsl::ast;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The type of an expression.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub enum Ty {
    /// Whatever the input holds there: checked when evaluated.
    Any,
    /// `true` or `false`.
    Bool,
    /// A number.
    Number,
    /// Text.
    String,
    /// A JSON object.
    Object,
    /// A list of elements of one type.
    List(Box<Ty>),
}

impl Serialize for Ty {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Ty::serialize(self, serializer)
    }
}

/// Bounded in depth when read from bytes (`snapshot::nested`).
impl<'de> Deserialize<'de> for Ty {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::snapshot::nested(deserializer, Ty::deserialize)
    }
}

impl Ty {
    /// The type a fact declares.
    pub fn of(ty: &ast::Type) -> Self {
        match ty {
            ast::Type::String => Self::String,
            ast::Type::Number => Self::Number,
            ast::Type::Bool => Self::Bool,
            ast::Type::Object => Self::Object,
            ast::Type::List(element) => Self::List(Box::new(Self::of(element))),
        }
    }

    /// Whether a value of type `other` can stand where `self` is expected.
    pub fn accepts(&self, other: &Ty) -> bool {
        match (self, other) {
            (Self::Any, _) | (_, Self::Any) => true,
            (Self::List(a), Self::List(b)) => a.accepts(b),
            (a, b) => a == b,
        }
    }

    /// The element type, for lists and values of unknown shape.
    pub fn element(&self) -> Option<Ty> {
        match self {
            Self::List(element) => Some((**element).clone()),
            Self::Any => Some(Self::Any),
            _ => None,
        }
    }

    /// Whether values of this type may be lists.
    pub fn may_be_list(&self) -> bool {
        matches!(self, Self::List(_) | Self::Any)
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Any => f.write_str("any"),
            Self::Bool => f.write_str("bool"),
            Self::Number => f.write_str("number"),
            Self::String => f.write_str("string"),
            Self::Object => f.write_str("object"),
            Self::List(element) => write!(f, "list<{element}>"),
        }
    }
}
