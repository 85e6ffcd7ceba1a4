//! Rule sources and locations inside them.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One rule file: its name (a path, as the user would write it) and its text.
#[derive(Debug)]
pub struct Source {
    /// Where the text came from, used in every diagnostic.
    pub name: String,
    /// The whole file; borrowed when it is built into the program.
    pub text: Cow<'static, str>,
}

impl Source {
    /// A source shared by every location that points into it.
    pub fn new(name: impl Into<String>, text: impl Into<Cow<'static, str>>) -> Arc<Self> {
        Arc::new(Self {
            name: name.into(),
            text: text.into(),
        })
    }

    /// The 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = self.text.get(..offset).unwrap_or_default();
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before.get(line_start..).unwrap_or_default().chars().count() + 1;
        (line, column)
    }
}

/// A span of a source: where an AST node was written.
///
/// Locations never take part in equality, so trees parsed from differently
/// laid-out text compare equal when they mean the same.
#[derive(Clone)]
pub struct Loc {
    /// The file.
    pub src: Arc<Source>,
    /// Byte offset of the first character.
    pub start: usize,
    /// Byte offset one past the last character.
    pub end: usize,
}

impl Loc {
    /// The text this location covers.
    pub fn text(&self) -> &str {
        self.src.text.get(self.start..self.end).unwrap_or_default()
    }

    /// The span in the form miette labels take.
    pub fn span(&self) -> miette::SourceSpan {
        (self.start, self.end.saturating_sub(self.start)).into()
    }

    /// `file:line:column`, for messages that cannot show a snippet.
    pub fn position(&self) -> String {
        let (line, column) = self.src.line_col(self.start);
        format!("{}:{line}:{column}", self.src.name)
    }
}

thread_local! {
    /// The sources locations deserialized on this thread point into, by name.
    static SOURCES: RefCell<HashMap<String, Arc<Source>>> = RefCell::new(HashMap::new());
}

/// Runs `f` with locations deserialized in it pointing into `sources`, found
/// by file name. A location is stored as its file's name and offsets (the
/// text is not repeated in every one), so deserializing needs the texts back;
/// a location in a file not given gets an empty text.
pub fn with_sources<R>(sources: impl IntoIterator<Item = Arc<Source>>, f: impl FnOnce() -> R) -> R {
    let table = sources
        .into_iter()
        .map(|source| (source.name.clone(), source))
        .collect();
    let outer = SOURCES.replace(table);
    let result = f();
    SOURCES.set(outer);
    result
}

impl Serialize for Loc {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (self.src.name.as_str(), self.start, self.end).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Loc {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (FileName(name), start, end) = Deserialize::deserialize(deserializer)?;
        let src = SOURCES.with_borrow(|sources| match sources.get(name.as_ref()) {
            Some(source) => Arc::clone(source),
            None => Source::new(name.as_ref(), ""),
        });
        Ok(Self { src, start, end })
    }
}

/// A file name, borrowed from the serialized bytes where the format allows.
struct FileName<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for FileName<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl<'de> serde::de::Visitor<'de> for Name {
            type Value = Cow<'de, str>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a file name")
            }
            fn visit_borrowed_str<E>(self, name: &'de str) -> Result<Self::Value, E> {
                Ok(Cow::Borrowed(name))
            }
            fn visit_str<E>(self, name: &str) -> Result<Self::Value, E> {
                Ok(Cow::Owned(name.to_owned()))
            }
        }
        deserializer.deserialize_str(Name).map(FileName)
    }
}

impl PartialEq for Loc {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl fmt::Debug for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// A source as miette reads it: named, and with columns counted in
/// characters, as `kb check --format json` counts them.
#[derive(Debug, Clone)]
pub(crate) struct SourceText(pub Arc<Source>);

impl miette::SourceCode for SourceText {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let text: &'a str = &self.0.text;
        let contents = text.read_span(span, context_lines_before, context_lines_after)?;
        let start = contents.span().offset();
        let (_, column) = self.0.line_col(start);
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.0.name.clone(),
            contents.data(),
            *contents.span(),
            contents.line(),
            column - 1,
            contents.line_count(),
        )))
    }
}
