//! Rule sources and locations inside them.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One rule file: its name (a path, as the user would write it) and its text.
#[derive(Debug)]
pub struct Source {
    /// Where the text came from, used in every diagnostic; borrowed, as the
    /// text, when it is built into the program.
    pub name: Cow<'static, str>,
    /// The whole file; borrowed when it is built into the program.
    pub text: Cow<'static, str>,
    /// Where its lines start, found the first time a position is asked
    /// for: a file with many problems is not scanned once for each.
    lines: OnceLock<Lines>,
}

/// The lines of a source.
#[derive(Debug)]
struct Lines {
    /// The byte offset of each line's start: 0, then one past each `\n`.
    starts: Vec<usize>,
    /// For each start, the line breaks before it as miette counts them (a
    /// lone `\r` is one too).
    breaks: Vec<usize>,
}

impl Lines {
    fn of(text: &str) -> Self {
        let (mut starts, mut breaks) = (vec![0], vec![0]);
        let mut count = 0;
        let bytes = text.as_bytes();
        for (i, byte) in bytes.iter().enumerate() {
            match byte {
                b'\n' => {
                    count += 1;
                    starts.push(i + 1);
                    breaks.push(count);
                }
                b'\r' if bytes.get(i + 1) != Some(&b'\n') => count += 1,
                _ => {}
            }
        }
        Self { starts, breaks }
    }

    /// The index of the line holding a byte offset.
    fn index(&self, offset: usize) -> usize {
        self.starts
            .partition_point(|&start| start <= offset)
            .saturating_sub(1)
    }
}

impl Source {
    /// A source shared by every location that points into it.
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        text: impl Into<Cow<'static, str>>,
    ) -> Arc<Self> {
        Arc::new(Self {
            name: name.into(),
            text: text.into(),
            lines: OnceLock::new(),
        })
    }

    fn lines(&self) -> &Lines {
        self.lines.get_or_init(|| Lines::of(&self.text))
    }

    /// The 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        if !self.text.is_char_boundary(offset) {
            return (1, 1);
        }
        let lines = self.lines();
        let index = lines.index(offset);
        let line_start = lines.starts.get(index).copied().unwrap_or(0);
        let column = self
            .text
            .get(line_start..offset)
            .unwrap_or_default()
            .chars()
            .count()
            + 1;
        (index + 1, column)
    }
}

/// A span of a source: where an AST node was written.
///
/// Locations never take part in equality, so trees parsed from differently
/// laid-out text compare equal when they mean the same.
///
/// Offsets are kept in 32 bits, as a large knowledge base holds millions of
/// locations: the parser refuses a source longer than [`MAX_SOURCE_BYTES`].
#[derive(Clone)]
pub struct Loc {
    /// The file.
    pub src: Arc<Source>,
    start: u32,
    end: u32,
}

/// The longest source a location can point into.
pub const MAX_SOURCE_BYTES: usize = u32::MAX as usize;

impl Loc {
    /// The bytes `start..end` of `src`; offsets past [`MAX_SOURCE_BYTES`]
    /// are taken to be there.
    pub fn new(src: Arc<Source>, start: usize, end: usize) -> Self {
        let offset = |at: usize| u32::try_from(at).unwrap_or(u32::MAX);
        Self {
            src,
            start: offset(start),
            end: offset(end),
        }
    }

    /// The bytes `start..end` of the same source.
    pub fn with_offsets(&self, start: usize, end: usize) -> Self {
        Self::new(Arc::clone(&self.src), start, end)
    }

    /// Byte offset of the first character.
    pub fn start(&self) -> usize {
        self.start as usize
    }

    /// Byte offset one past the last character.
    pub fn end(&self) -> usize {
        self.end as usize
    }

    /// The text this location covers.
    pub fn text(&self) -> &str {
        self.src
            .text
            .get(self.start()..self.end())
            .unwrap_or_default()
    }

    /// The span in the form miette labels take.
    pub fn span(&self) -> miette::SourceSpan {
        (self.start(), self.end().saturating_sub(self.start())).into()
    }

    /// `file:line:column`, for messages that cannot show a snippet.
    pub fn position(&self) -> String {
        let (line, column) = self.src.line_col(self.start());
        format!("{}:{line}:{column}", self.src.name)
    }
}

thread_local! {
    /// The sources locations deserialized on this thread point into.
    static SOURCES: RefCell<Sources> = RefCell::new(Sources::default());
}

/// Sources by name, and the one last found: locations come file by file.
#[derive(Default)]
struct Sources {
    by_name: HashMap<Cow<'static, str>, Arc<Source>>,
    last: Option<Arc<Source>>,
}

impl Sources {
    /// The source named `name`; an empty one when it was not given.
    fn named(&mut self, name: &str) -> Arc<Source> {
        if let Some(last) = self.last.as_ref().filter(|last| last.name == name) {
            return Arc::clone(last);
        }
        let found = match self.by_name.get(name) {
            Some(source) => Arc::clone(source),
            None => Source::new(name.to_owned(), ""),
        };
        self.last = Some(Arc::clone(&found));
        found
    }
}

/// Runs `f` with locations deserialized in it pointing into `sources`, found
/// by file name. A location is stored as its file's name and offsets (the
/// text is not repeated in every one), so deserializing needs the texts back;
/// a location in a file not given gets an empty text.
pub fn with_sources<R>(sources: impl IntoIterator<Item = Arc<Source>>, f: impl FnOnce() -> R) -> R {
    let by_name = sources
        .into_iter()
        .map(|source| (source.name.clone(), source))
        .collect();
    let outer = SOURCES.replace(Sources {
        by_name,
        last: None,
    });
    let result = f();
    SOURCES.set(outer);
    result
}

/// The sources [`with_sources`] gives on this thread, for a part of what is
/// deserialized to be deserialized later with the same ones.
pub fn current_sources() -> Vec<Arc<Source>> {
    SOURCES.with_borrow(|sources| sources.by_name.values().cloned().collect())
}

impl Serialize for Loc {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (&*self.src.name, self.start, self.end).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Loc {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (BorrowedStr(name), start, end) = Deserialize::deserialize(deserializer)?;
        let src = SOURCES.with_borrow_mut(|sources| sources.named(&name));
        Ok(Self { src, start, end })
    }
}

/// A string deserialized borrowed from the input where the format allows
/// (no escapes to undo), owned otherwise; serde's own `Cow<str>` always
/// copies. Used for names that are looked up and mostly dropped.
pub struct BorrowedStr<'de>(pub Cow<'de, str>);

impl<'de> Deserialize<'de> for BorrowedStr<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text;
        impl<'de> serde::de::Visitor<'de> for Text {
            type Value = Cow<'de, str>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Cow::Borrowed(text))
            }
            fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Cow::Owned(text.to_owned()))
            }
            fn visit_string<E>(self, text: String) -> Result<Self::Value, E> {
                Ok(Cow::Owned(text))
            }
        }
        deserializer.deserialize_str(Text).map(BorrowedStr)
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

/// Lines longer than this, in bytes, are not shown whole in a snippet:
/// miette prints every line it is given, and panics on a column past
/// `u16::MAX`.
const LONG_LINE: usize = 1000;

/// How much of a long line is shown each side of a span, in bytes.
const MARGIN: usize = 80;

/// A source as miette reads it: named, and with columns counted in
/// characters, as `kb check --format json` counts them.
#[derive(Debug, Clone)]
pub(crate) struct SourceText(pub Arc<Source>);

impl SourceText {
    /// Where a snippet of a span is cut out of a long line: `Some` when the
    /// lines it would show (its own, with `before` and `after` lines around
    /// them) include one longer than [`LONG_LINE`]. The window lies on the
    /// span's first line, from [`MARGIN`] bytes before the span to as much
    /// after its start (or its end, when shorter).
    fn window(
        &self,
        span: &miette::SourceSpan,
        before: usize,
        after: usize,
    ) -> Option<(usize, usize)> {
        let text = self.0.text.as_ref();
        let lines = self.0.lines();
        let (start, end) = (span.offset(), span.offset() + span.len());
        if end > text.len() {
            return None;
        }
        let line = lines.index(start);
        let line_start = |i: usize| lines.starts.get(i).copied();
        // Where a line's text ends, before its `\n` or `\r\n`.
        let line_end = |i: usize| {
            line_start(i + 1).map_or(text.len(), |next| {
                next - 1 - usize::from(next >= 2 && text.as_bytes().get(next - 2) == Some(&b'\r'))
            })
        };
        let first = line.saturating_sub(before);
        let last = (lines.index(end) + after).min(lines.starts.len() - 1);
        let long = (first..=last).any(|i| line_end(i) - line_start(i).unwrap_or(0) > LONG_LINE);
        if !long {
            return None;
        }
        let (own_start, own_end) = (line_start(line).unwrap_or(0), line_end(line));
        let from = floor_char_boundary(text, start.saturating_sub(MARGIN).max(own_start));
        let to = start + span.len().min(MARGIN) + MARGIN;
        Some((from, ceil_char_boundary(text, to.min(own_end).max(start))))
    }

    /// A span cut to end within its [`Self::window`], if it has one: a label
    /// drawn under a window of a line must not reach past it.
    pub(crate) fn shown(&self, span: miette::SourceSpan) -> miette::SourceSpan {
        match self.window(&span, 1, 1) {
            Some((_, to)) => (
                span.offset(),
                (span.offset() + span.len()).min(to) - span.offset(),
            )
                .into(),
            None => span,
        }
    }
}

fn floor_char_boundary(text: &str, at: usize) -> usize {
    (0..=at.min(text.len()))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

fn ceil_char_boundary(text: &str, at: usize) -> usize {
    (at.min(text.len())..=text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len())
}

/// The lone `\r`s in `text[from..to]`: line breaks to miette, not to [`Lines`].
fn lone_returns(text: &str, from: usize, to: usize) -> usize {
    let bytes = text.as_bytes();
    (from..to)
        .filter(|&i| bytes.get(i) == Some(&b'\r') && bytes.get(i + 1) != Some(&b'\n'))
        .count()
}

impl miette::SourceCode for SourceText {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let text: &'a str = &self.0.text;
        if let Some((from, to)) = self.window(span, context_lines_before, context_lines_after) {
            // As miette does, a snippet without lines before starts at the span.
            let from = if context_lines_before == 0 {
                span.offset()
            } else {
                from
            };
            let lines = self.0.lines();
            let index = lines.index(from);
            let line_start = lines.starts.get(index).copied().unwrap_or(0);
            let line = lines.breaks.get(index).copied().unwrap_or(0)
                + lone_returns(text, line_start, from);
            let data = text.get(from..to).unwrap_or_default();
            let (_, column) = self.0.line_col(from);
            return Ok(Box::new(miette::MietteSpanContents::new_named(
                self.0.name.to_string(),
                data.as_bytes(),
                (from, data.len()).into(),
                line,
                column - 1,
                line + lone_returns(text, from, to),
            )));
        }
        // miette reads from the start of the text up to the span: read from
        // a line start enough lines before it instead, which gives the same
        // snippet, and shift what it says back to the whole text.
        let lines = self.0.lines();
        let first = lines
            .index(span.offset())
            .saturating_sub(context_lines_before + 1);
        let base = lines.starts.get(first).copied().unwrap_or(0);
        let base_line = lines.breaks.get(first).copied().unwrap_or(0);
        let rest = text.get(base..).unwrap_or_default();
        let local = (span.offset().saturating_sub(base), span.len()).into();
        let contents = rest.read_span(&local, context_lines_before, context_lines_after)?;
        let start = base + contents.span().offset();
        let (_, column) = self.0.line_col(start);
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.0.name.to_string(),
            contents.data(),
            (start, contents.span().len()).into(),
            base_line + contents.line(),
            column - 1,
            base_line + contents.line_count(),
        )))
    }
}

#[cfg(test)]
mod tests;
