//! Rule sources and locations inside them.

use std::fmt;
use std::sync::Arc;

/// One rule file: its name (a path, as the user would write it) and its text.
#[derive(Debug)]
pub struct Source {
    /// Where the text came from, used in every diagnostic.
    pub name: String,
    /// The whole file.
    pub text: Arc<str>,
}

impl Source {
    /// A source shared by every location that points into it.
    pub fn new(name: impl Into<String>, text: impl Into<Arc<str>>) -> Arc<Self> {
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
