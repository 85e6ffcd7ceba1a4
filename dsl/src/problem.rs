//! Problems found in rule files: located, coded, with a hint.
//!
//! Parsing and compiling both report [`Problem`]s, every one at once, so an
//! author fixes a file in one pass. Each problem implements
//! [`miette::Diagnostic`]; rendering is left to the caller.

use std::fmt;

use crate::source::{Loc, SourceText};

/// How many characters of a word a message quotes.
const QUOTED_CHARS: usize = 100;

/// `word` in backticks, as a message quotes it: whole, or, when it is
/// enormous (a word can be as long as a file), its start and its length,
/// `what` naming what it is.
pub fn quoted(word: &str, what: &str) -> String {
    match word.char_indices().nth(QUOTED_CHARS) {
        None => format!("`{word}`"),
        Some((end, _)) => format!(
            "`{}…` (a {what} of {} characters)",
            word.get(..end).unwrap_or_default(),
            word.chars().count()
        ),
    }
}

/// The candidates at most `most` edits from `word` (Damerau–Levenshtein),
/// each with its distance, to suggest one for a misspelling. A candidate
/// whose length differs by more is that many edits apart at least, and is
/// not compared: a word of any length (a key of a document, as long as it
/// may be) costs no more than a short one.
pub fn within_edits<'c>(
    word: &str,
    candidates: impl IntoIterator<Item = &'c str>,
    most: usize,
) -> impl Iterator<Item = (usize, &'c str)> {
    let length = word.chars().count();
    candidates
        .into_iter()
        .filter(move |candidate| candidate.chars().count().abs_diff(length) <= most)
        .map(move |candidate| (strsim::damerau_levenshtein(word, candidate), candidate))
        .filter(move |(distance, _)| *distance <= most)
}

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The knowledge base still works, but something is likely a mistake.
    Warning,
    /// The knowledge base cannot be used.
    Error,
}

impl Severity {
    /// `error` or `warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

macro_rules! codes {
    ($($variant:ident = $code:literal: $summary:literal,)*) => {
        /// The kind of a problem, with a stable code users can look up.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code {
            $(#[doc = $summary] $variant,)*
        }

        impl Code {
            /// Every code, in order.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The stable code, such as `E0101`.
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $code,)* }
            }

            /// One line on what the problem is.
            pub fn summary(self) -> &'static str {
                match self { $(Self::$variant => $summary,)* }
            }

            /// The code for its text, such as `E0101`.
            pub fn parse(code: &str) -> Option<Code> {
                Self::ALL.iter().copied().find(|c| c.as_str().eq_ignore_ascii_case(code))
            }
        }
    };
}

codes! {
    Internal = "E0000": "kb itself went wrong; please report it with the rule file",
    Syntax = "E0001": "the text does not follow the grammar of the rule language",
    TooDeep = "E0002": "brackets, `not`s, types or an expression are nested deeper than the language allows",
    BadString = "E0003": "a string literal holds an invalid escape",
    TooLarge = "E0005": "a rule file is larger than 4 GiB, the most its locations can point into",
    BadJson = "E0004": "JSON written in a test is not valid",
    DuplicateId = "E0101": "two declarations use the same id or name",
    UnknownCause = "E0102": "a branch leads to a cause that is not declared",
    UnknownCheck = "E0103": "a branch leads to a check that is not declared",
    UnknownName = "E0104": "an expression uses a name that is neither a fact nor an input",
    UnknownFunction = "E0105": "an expression calls a function the language does not have",
    UnknownTemplateFact = "E0106": "a command template uses a name that is not a fact",
    UnknownTestId = "E0107": "a test expects an id that is neither a symptom nor a cause",
    UnknownExtended = "E0108": "an `extend` names a symptom or cause that is not declared",
    ConflictingExtensions = "E0109": "two `extend`s replace the same title or explanation",
    Cycle = "E0201": "checks or facts refer to each other in a loop",
    UnreachableCheck = "E0202": "a check is never reached from any symptom",
    UnreachableCause = "E0203": "a cause is never reached from any symptom",
    CauseWithoutFix = "E0204": "a cause has no fix",
    SymptomWithoutWhen = "E0205": "a symptom has no `when` condition",
    MisplacedElse = "E0206": "`else` is not the last branch of its check, or is repeated",
    EmptyCheck = "E0207": "a check has no branch",
    CheckWithoutId = "E0208": "a check declared at the top level has no id",
    TypeMismatch = "E0301": "a value of one type is used where another is needed",
    BadArguments = "E0302": "a function is called with the wrong number or kind of arguments",
    BadRegex = "E0303": "a regular expression is invalid or too large",
    BadTemplate = "E0304": "a command template is not a valid template",
    RelativeOutsideElement = "E0305": "`.field` is used outside a filter or predicate",
    ManifestInvalid = "E0401": "the manifest `kb.toml` is not valid: bad TOML, an unknown key or a wrong value",
    UnusedFact = "W0001": "a fact is declared but no rule uses it",
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A problem in a rule file.
#[derive(Debug, Clone)]
pub struct Problem {
    /// What kind of problem.
    pub code: Code,
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong, in lowercase, user input in backticks.
    pub message: String,
    /// Where, and a word on what is there.
    pub loc: Loc,
    /// The label under the marked text.
    pub label: String,
    /// Advice on how to fix it.
    pub help: Option<String>,
    /// Other places that take part (the first of two duplicates, …).
    pub related: Vec<Note>,
    source: SourceText,
}

impl Problem {
    /// An error at `loc`.
    pub fn error(code: Code, loc: &Loc, message: impl Into<String>) -> Self {
        Self {
            code,
            severity: Severity::Error,
            message: message.into(),
            loc: loc.clone(),
            label: String::from("here"),
            help: None,
            related: Vec::new(),
            source: SourceText(std::sync::Arc::clone(&loc.src)),
        }
    }

    /// A warning at `loc`.
    pub fn warning(code: Code, loc: &Loc, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warning,
            ..Self::error(code, loc, message)
        }
    }

    /// Sets the label under the marked text.
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// Adds advice.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Points at another place that takes part in the problem.
    pub fn with_related(mut self, loc: &Loc, label: impl Into<String>) -> Self {
        self.related.push(Note {
            loc: loc.clone(),
            label: label.into(),
            source: SourceText(std::sync::Arc::clone(&loc.src)),
        });
        self
    }

    /// Whether this problem stops the knowledge base from being used.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Problem {}

impl miette::Diagnostic for Problem {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.code))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|help| Box::new(help) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        let primary = miette::LabeledSpan::new_primary_with_span(
            Some(self.label.clone()),
            self.source.shown(self.loc.span()),
        );
        Some(Box::new(std::iter::once(primary)))
    }

    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn miette::Diagnostic> + 'a>> {
        if self.related.is_empty() {
            return None;
        }
        Some(Box::new(
            self.related
                .iter()
                .map(|note| note as &dyn miette::Diagnostic),
        ))
    }
}

/// Another place that takes part in a problem.
#[derive(Debug, Clone)]
pub struct Note {
    /// Where.
    pub loc: Loc,
    /// What is there.
    pub label: String,
    source: SourceText,
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label)
    }
}

impl std::error::Error for Note {}

impl miette::Diagnostic for Note {
    fn severity(&self) -> Option<miette::Severity> {
        Some(miette::Severity::Advice)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        let span =
            miette::LabeledSpan::new_primary_with_span(None, self.source.shown(self.loc.span()));
        Some(Box::new(std::iter::once(span)))
    }
}
