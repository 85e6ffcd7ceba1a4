//! The canonical layout of rule files, as `kb fmt` writes them.
//!
//! [`format()`] parses a file and prints its syntax tree the one canonical way,
//! keeping every comment; [`print()`] prints a tree that has no source. The
//! layout:
//!
//! - two spaces of indentation, one clause, branch or step per line, a blank
//!   line between declarations (consecutive `input`s keep the author's choice),
//!   and inside a block a single blank line where the author left one or more;
//! - clauses in a fixed order: `explain`, `from`/`when`, `gather`, then the
//!   checks, branches, fixes or steps in their order (and `input`, `given`,
//!   `expect` in a test);
//! - a `zh` text, and a step's `run` and `risk`, on the line before them when
//!   it fits in [`WIDTH`] columns (a CJK character takes two), else on the
//!   next line, indented two more;
//! - string literals exactly as written; the lines of a `"""` string
//!   re-indented two past the line that opens it, keeping their relative
//!   indentation;
//! - expressions with canonical spacing and only the parentheses precedence
//!   needs, on one line when they fit, else broken before the top-level `or`s
//!   (or `and`s) with a continuation indented two more, then inside brackets;
//! - inline JSON compact on one line when it fits, else pretty-printed, keys
//!   sorted;
//! - comments kept: a comment on a line of its own goes before the
//!   declaration, clause, branch or step that follows it (at its indentation),
//!   or at the end of its block; a comment after code stays at the end of the
//!   line that holds that code.

use std::collections::HashMap;

use crate::ast::*;
use crate::parse::dedent;
use crate::parse::{ParseErrors, parse};
use crate::problem::{Code, Problem};
use crate::source::{Loc, Source};

/// The widest a printed line should be, in columns.
pub const WIDTH: usize = 100;

/// The indentation of a block, and of a continuation line.
const INDENT: usize = 2;

/// Formats a rule file: parses it, and prints it the canonical way with its
/// comments. The result parses to the same syntax tree, and formatting it
/// again changes nothing.
///
/// # Errors
///
/// The file's syntax errors, as [`parse`] reports them.
pub fn format(text: &str, name: &str) -> Result<String, ParseErrors> {
    let rules = parse(text, name)?;
    let comments = scan_comments(text);
    let printed = Printer::new(text, &rules, &comments).file(&rules);
    // A safety net: what is written must mean what was read, comments included.
    let same = parse(&printed, name).is_ok_and(|again| again == rules)
        && comment_words(&scan_comments(&printed)) == comment_words(&comments);
    if same {
        Ok(printed)
    } else {
        let loc = Loc::new(Source::new(name.to_owned(), text.to_owned()), 0, 0);
        Err(ParseErrors {
            problems: vec![
                Problem::error(
                    Code::Internal,
                    &loc,
                    "internal error: formatting this file would change its meaning",
                )
                .with_help("the file is left as it is; please report it with the file"),
            ],
            recovered: rules,
            broken: Vec::new(),
        })
    }
}

/// Prints a syntax tree the canonical way. A tree has no comments: use
/// [`format()`] to format a file.
pub fn print(rules: &RuleSet) -> String {
    Printer::new("", rules, &[]).file(rules)
}

// ------------------------------------------------------------------ comments

/// A `#` comment of the source.
#[derive(Debug, Clone)]
struct Comment {
    /// The offset of its `#`.
    start: usize,
    /// Its text, from `#` to the end of the line, trailing blanks removed.
    text: String,
    /// Whether it has a line of its own (no code before it on its line).
    own_line: bool,
    /// Whether a blank line comes before it.
    blank_before: bool,
}

/// Every comment of a source, outside string literals.
fn scan_comments(text: &str) -> Vec<Comment> {
    let bytes = text.as_bytes();
    let mut comments = Vec::new();
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        let rest = text.get(i..).unwrap_or_default();
        let raw_allowed = !(i > 0
            && bytes
                .get(i - 1)
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_'));
        match byte {
            b'#' => {
                let end = rest.find('\n').map_or(text.len(), |n| i + n);
                let line_start = text
                    .get(..i)
                    .and_then(|before| before.rfind('\n'))
                    .map_or(0, |n| n + 1);
                let own_line = text
                    .get(line_start..i)
                    .is_some_and(|before| before.trim().is_empty());
                comments.push(Comment {
                    start: i,
                    text: text.get(i..end).unwrap_or_default().trim_end().to_owned(),
                    own_line,
                    blank_before: blank_before(text, i),
                });
                i = end;
            }
            b'"' if rest.starts_with("\"\"\"") => {
                i = rest
                    .get(3..)
                    .and_then(|inner| inner.find("\"\"\""))
                    .map_or(text.len(), |n| i + 3 + n + 3);
            }
            b'r' if raw_allowed && rest.starts_with("r#\"") => {
                i = end_of_line_or(rest, i, 3, "\"#");
            }
            b'r' if raw_allowed && rest.starts_with("r\"") => {
                i = end_of_line_or(rest, i, 2, "\"");
            }
            b'"' => {
                i += 1;
                while let Some(&b) = bytes.get(i) {
                    match b {
                        b'\\' => i += 2,
                        b'"' => {
                            i += 1;
                            break;
                        }
                        b'\n' => break,
                        _ => i += 1,
                    }
                }
            }
            _ => i += 1,
        }
    }
    comments
}

/// The offset past the `close` that ends a one-line literal opened at `at`
/// (its opening `skip` bytes long), or of the end of its line.
fn end_of_line_or(rest: &str, at: usize, skip: usize, close: &str) -> usize {
    let inner = rest.get(skip..).unwrap_or_default();
    let newline = inner.find('\n').unwrap_or(inner.len());
    match inner.find(close) {
        Some(n) if n < newline => at + skip + n + close.len(),
        _ => at + skip + newline,
    }
}

/// Whether a blank line comes just before `offset` (blanks and line breaks only).
fn blank_before(text: &str, offset: usize) -> bool {
    let before = text.get(..offset).unwrap_or_default();
    let gap = before.len() - before.trim_end().len();
    before
        .get(before.len() - gap..)
        .is_some_and(|gap| gap.matches('\n').count() >= 2)
}

/// The words of every comment, sorted: what must survive formatting.
fn comment_words(comments: &[Comment]) -> Vec<String> {
    let mut words: Vec<String> = comments
        .iter()
        .flat_map(|c| c.text.split('#'))
        .flat_map(str::split_whitespace)
        .map(str::to_owned)
        .collect();
    words.sort_unstable();
    words
}

/// Where the comments go in the printed file.
#[derive(Debug, Default)]
struct Placed {
    /// Own-line comments printed before a part, by the part's start offset.
    leading: HashMap<usize, Vec<Comment>>,
    /// Own-line comments printed at the end of a part's block, by the part's start.
    block_end: HashMap<usize, Vec<Comment>>,
    /// Own-line comments printed at the end of the file.
    file_end: Vec<Comment>,
    /// Comments printed at the end of the line holding the code before them.
    trailing: Vec<Comment>,
}

// ------------------------------------------------------------------ parts

/// Something printed on lines of its own: a declaration, a clause, a branch
/// or a step. Comments attach to parts.
#[derive(Debug, Clone, Copy)]
enum Part<'r> {
    Input(&'r InputDecl),
    Fact(&'r FactDecl),
    Symptom(&'r Symptom),
    Check(&'r Check),
    Cause(&'r Cause),
    Test(&'r Test),
    Extend(&'r Extension),
    Explain(&'r Text),
    From(&'r Expr),
    When(&'r Expr),
    Gather(&'r Str),
    Branch(&'r Branch),
    Fix(&'r Fix),
    Step(&'r Step),
    TestInput(&'r TestInput),
    Given(&'r Json),
    Expect(&'r Expect),
}

fn item_part(item: &Item) -> Part<'_> {
    match item {
        Item::Input(input) => Part::Input(input),
        Item::Fact(fact) => Part::Fact(fact),
        Item::Symptom(symptom) => Part::Symptom(symptom),
        Item::Check(check) => Part::Check(check),
        Item::Cause(cause) => Part::Cause(cause),
        Item::Test(test) => Part::Test(test),
        Item::Extend(extension) => Part::Extend(extension),
    }
}

/// The parts of a block, in the order they are printed.
fn children(part: Part<'_>) -> Vec<Part<'_>> {
    let mut parts = Vec::new();
    match part {
        Part::Fact(fact) => {
            parts.extend(fact.explain.as_ref().map(Part::Explain));
            parts.extend(fact.from.as_ref().map(Part::From));
            parts.extend(fact.gather.as_ref().map(Part::Gather));
        }
        Part::Symptom(symptom) => {
            parts.extend(symptom.explain.as_ref().map(Part::Explain));
            parts.extend(symptom.when.as_ref().map(Part::When));
            parts.extend(symptom.checks.iter().map(Part::Check));
        }
        Part::Check(check) => check_children(check, &mut parts),
        Part::Branch(branch) => {
            if let Target::Check(check) = &branch.target {
                check_children(check, &mut parts);
            }
        }
        Part::Cause(cause) => {
            parts.extend(cause.explain.as_ref().map(Part::Explain));
            parts.extend(cause.fixes.iter().map(Part::Fix));
        }
        Part::Fix(fix) => parts.extend(fix.steps.iter().map(Part::Step)),
        Part::Test(test) => {
            parts.extend(test.input.as_ref().map(Part::TestInput));
            parts.extend(test.given.as_ref().map(Part::Given));
            parts.extend(test.expects.iter().map(Part::Expect));
        }
        Part::Extend(extension) => {
            parts.extend(extension.explain.as_ref().map(Part::Explain));
            parts.extend(extension.checks.iter().map(Part::Check));
            parts.extend(extension.fixes.iter().map(Part::Fix));
        }
        Part::Input(_)
        | Part::Explain(_)
        | Part::From(_)
        | Part::When(_)
        | Part::Gather(_)
        | Part::Step(_)
        | Part::TestInput(_)
        | Part::Given(_)
        | Part::Expect(_) => {}
    }
    parts
}

fn check_children<'r>(check: &'r Check, parts: &mut Vec<Part<'r>>) {
    parts.extend(check.explain.as_ref().map(Part::Explain));
    parts.extend(check.gather.as_ref().map(Part::Gather));
    parts.extend(check.branches.iter().map(Part::Branch));
}

fn text_end(text: &Text) -> usize {
    text.zh
        .as_ref()
        .map_or(text.en.loc.end(), |zh| zh.loc.end())
}

fn test_input_loc(input: &TestInput) -> &Loc {
    match input {
        TestInput::File(file) => &file.loc,
        TestInput::Inline(json) => &json.loc,
    }
}

// ------------------------------------------------------------------ documents

/// A layout to render: text, places where a line may break, and groups that
/// break as a whole when they do not fit (after Wadler's "prettier printer").
#[derive(Debug, Clone)]
enum Doc {
    /// Text without line breaks.
    Text(String),
    /// A `"""` string: its value's lines, re-indented under the line opening
    /// it; or, when that would change the value, the literal as written.
    Long {
        /// The literal as written.
        written: String,
        /// The string's value.
        value: String,
    },
    /// Text kept as written, line breaks and all.
    Verbatim(String),
    /// Inline JSON: compact when it fits, else pretty.
    Json {
        /// On one line.
        compact: String,
        /// Over several lines.
        pretty: String,
    },
    /// A space, or a line break.
    Line,
    /// Nothing, or a line break.
    SoftLine,
    /// A line break.
    HardLine,
    /// A document whose line breaks indent this much more.
    Nest(usize, Box<Doc>),
    /// A document whose lines break all or none.
    Group(Box<Doc>),
    /// Items separated by spaces, breaking a line only before an item that
    /// does not fit.
    Fill(Vec<Doc>),
    /// Items on the line of the first while they fit; from the first that
    /// does not, each on a line of its own, indented.
    Cascade(Vec<Doc>),
    /// Documents one after the other.
    Concat(Vec<Doc>),
    /// Where the source text up to this offset ends: trailing comments go at
    /// the end of the line holding it.
    Mark(usize),
    /// Nothing; what comes before it fits or not regardless of what comes after.
    FitsEnd,
}

fn text(s: impl Into<String>) -> Doc {
    Doc::Text(s.into())
}

fn concat(docs: impl IntoIterator<Item = Doc>) -> Doc {
    Doc::Concat(docs.into_iter().collect())
}

fn nest(doc: Doc) -> Doc {
    Doc::Nest(INDENT, Box::new(doc))
}

fn group(doc: Doc) -> Doc {
    Doc::Group(Box::new(doc))
}

/// `open` + items + `close`, the items on lines of their own, indented, when
/// they do not fit on one.
fn bracketed(open: &str, items: Vec<Doc>, close: &str) -> Doc {
    group(concat([
        text(open),
        nest(concat([Doc::SoftLine, concat(items)])),
        Doc::SoftLine,
        text(close),
    ]))
}

// ------------------------------------------------------------------ printer

/// Builds the layout of a rule set, with the comments of its source.
struct Printer<'s> {
    /// The source text; empty for a tree that has none.
    text: &'s str,
    /// Offsets of the comments of the source, to skip them when searching it.
    comment_spans: Vec<(usize, usize)>,
    placed: Placed,
}

impl<'s> Printer<'s> {
    fn new(text: &'s str, rules: &RuleSet, comments: &[Comment]) -> Self {
        let mut printer = Self {
            text,
            comment_spans: comments
                .iter()
                .map(|c| (c.start, c.start + c.text.len()))
                .collect(),
            placed: Placed::default(),
        };
        let items: Vec<Part<'_>> = rules.items.iter().map(item_part).collect();
        for comment in comments {
            if !comment.own_line {
                printer.placed.trailing.push(comment.clone());
                continue;
            }
            match printer.place(comment.start, &items, None) {
                Place::Leading(key) => printer.placed.leading.entry(key),
                Place::BlockEnd(Some(key)) => printer.placed.block_end.entry(key),
                Place::BlockEnd(None) => {
                    printer.placed.file_end.push(comment.clone());
                    continue;
                }
            }
            .or_default()
            .push(comment.clone());
        }
        printer
    }

    fn in_comment(&self, offset: usize) -> bool {
        self.comment_spans
            .iter()
            .any(|&(start, end)| start <= offset && offset < end)
    }

    /// The offset of the keyword that starts a clause whose value starts at `at`.
    fn keyword_before(&self, keyword: &str, at: usize) -> usize {
        let mut before = self.text.get(..at).unwrap_or_default();
        while let Some(found) = before.rfind(keyword) {
            if !self.in_comment(found) {
                return found;
            }
            before = before.get(..found).unwrap_or_default();
        }
        at
    }

    /// The offset of the `{` after `from`, past blanks and comments.
    fn open_brace(&self, from: usize) -> Option<usize> {
        let mut at = from;
        loop {
            let rest = self.text.get(at..)?;
            let trimmed = rest.trim_start();
            at += rest.len() - trimmed.len();
            if trimmed.starts_with('{') {
                return Some(at);
            }
            if !trimmed.starts_with('#') {
                return None;
            }
            at += trimmed.find('\n')?;
        }
    }

    /// Where a part starts in the source: its keyword.
    fn start(&self, part: Part<'_>) -> usize {
        match part {
            Part::Input(input) => input.loc.start(),
            Part::Fact(fact) => fact.loc.start(),
            Part::Symptom(symptom) => symptom.loc.start(),
            Part::Check(check) => check.loc.start(),
            Part::Cause(cause) => cause.loc.start(),
            Part::Test(test) => test.loc.start(),
            Part::Extend(extension) => extension.loc.start(),
            Part::Branch(branch) => branch.loc.start(),
            Part::Fix(fix) => fix.loc.start(),
            Part::Step(step) => step.loc.start(),
            Part::Explain(text) => self.keyword_before("explain", text.en.loc.start()),
            Part::From(expr) => self.keyword_before("from", expr.loc.start()),
            Part::When(expr) => self.keyword_before("when", expr.loc.start()),
            Part::Gather(command) => self.keyword_before("gather", command.loc.start()),
            Part::TestInput(input) => self.keyword_before("input", test_input_loc(input).start()),
            Part::Given(json) => self.keyword_before("given", json.loc.start()),
            Part::Expect(Expect::NoneConfirmed(loc)) => loc.start(),
            Part::Expect(Expect::Reported { id, .. } | Expect::Absent(id)) => {
                self.keyword_before("expect", id.loc.start())
            }
        }
    }

    /// Where a part ends in the source. (The span pest gives a rule that
    /// ends with an optional part runs over the blanks and comments after it.)
    fn end(part: Part<'_>) -> usize {
        match part {
            Part::Input(input) => input.title.as_ref().map_or(input.name.loc.end(), text_end),
            Part::Fact(fact) => fact.loc.end(),
            Part::Symptom(symptom) => symptom.loc.end(),
            Part::Check(check) => check.loc.end(),
            Part::Cause(cause) => cause.loc.end(),
            Part::Test(test) => test.loc.end(),
            Part::Extend(extension) => extension.loc.end(),
            Part::Branch(branch) => branch.loc.end(),
            Part::Fix(fix) => fix.loc.end(),
            Part::Step(step) => step
                .risk
                .as_ref()
                .map(text_end)
                .or_else(|| step.run.as_ref().map(|run| run.loc.end()))
                .unwrap_or_else(|| text_end(&step.text)),
            Part::Explain(text) => text_end(text),
            Part::From(expr) | Part::When(expr) => expr.loc.end(),
            Part::Gather(command) => command.loc.end(),
            Part::TestInput(input) => test_input_loc(input).end(),
            Part::Given(json) => json.loc.end(),
            Part::Expect(Expect::NoneConfirmed(loc)) => loc.end(),
            Part::Expect(Expect::Reported { id, .. } | Expect::Absent(id)) => id.loc.end(),
        }
    }

    /// The offsets of the `{` and `}` of a part's block.
    fn body(&self, part: Part<'_>) -> Option<(usize, usize)> {
        let (header_end, end) = match part {
            Part::Fact(fact) => (text_end(&fact.title), fact.loc.end()),
            Part::Symptom(symptom) => (text_end(&symptom.title), symptom.loc.end()),
            Part::Check(check) => (text_end(&check.title), check.loc.end()),
            Part::Cause(cause) => (text_end(&cause.title), cause.loc.end()),
            Part::Test(test) => (test.name.loc.end(), test.loc.end()),
            Part::Extend(extension) => (
                extension
                    .title
                    .as_ref()
                    .map_or(extension.id.loc.end(), text_end),
                extension.loc.end(),
            ),
            Part::Fix(fix) => (text_end(&fix.title), fix.loc.end()),
            Part::Branch(Branch {
                target: Target::Check(check),
                ..
            }) => (text_end(&check.title), check.loc.end()),
            _ => return None,
        };
        let open = self.open_brace(header_end)?;
        let close = end.checked_sub(1)?;
        (open < close && self.text.get(close..end) == Some("}")).then_some((open, close))
    }

    /// Where an own-line comment at `at` goes, among the parts of a block.
    fn place(&self, at: usize, parts: &[Part<'_>], block: Option<usize>) -> Place {
        for &part in parts {
            let start = self.start(part);
            if start <= at && at < Self::end(part) {
                return match self.body(part) {
                    Some((open, close)) if open < at && at < close => {
                        self.place(at, &children(part), Some(start))
                    }
                    _ => Place::Leading(start),
                };
            }
        }
        parts
            .iter()
            .map(|&part| self.start(part))
            .filter(|&start| start > at)
            .min()
            .map_or(Place::BlockEnd(block), Place::Leading)
    }

    fn blank_before(&self, offset: usize) -> bool {
        blank_before(self.text, offset)
    }

    // -------------------------------------------------------------- the file

    fn file(&self, rules: &RuleSet) -> String {
        let mut docs = Vec::new();
        let mut previous: Option<&Item> = None;
        for item in &rules.items {
            let part = item_part(item);
            let start = self.start(part);
            let leading = self
                .placed
                .leading
                .get(&start)
                .map_or(&[][..], Vec::as_slice);
            if let Some(previous) = previous {
                let inputs = matches!((previous, item), (Item::Input(_), Item::Input(_)));
                let first_blank = leading
                    .first()
                    .map_or_else(|| self.blank_before(start), |c| c.blank_before);
                docs.push(Doc::HardLine);
                if !inputs || first_blank {
                    docs.push(Doc::HardLine);
                }
            }
            self.push_leading(&mut docs, leading, start);
            docs.push(self.part(part));
            previous = Some(item);
        }
        for (i, comment) in self.placed.file_end.iter().enumerate() {
            if i > 0 || previous.is_some() {
                docs.push(Doc::HardLine);
                if comment.blank_before {
                    docs.push(Doc::HardLine);
                }
            }
            docs.push(text(comment.text.clone()));
        }
        let rendered = render(&concat(docs));
        let mut out = rendered.place_trailing(&self.placed.trailing).join("\n");
        if !out.is_empty() {
            out.push('\n');
        }
        out
    }

    /// Own-line comments before a part, then the part's own blank line.
    fn push_leading(&self, docs: &mut Vec<Doc>, comments: &[Comment], start: usize) {
        for (i, comment) in comments.iter().enumerate() {
            if i > 0 && comment.blank_before {
                docs.push(Doc::HardLine);
            }
            docs.push(text(comment.text.clone()));
            docs.push(Doc::HardLine);
        }
        if !comments.is_empty() && self.blank_before(start) {
            docs.push(Doc::HardLine);
        }
    }

    /// ` { … }`: the parts of a block, indented, one per line.
    fn block(&self, part: Part<'_>) -> Doc {
        let key = self.start(part);
        let braces = self.body(part);
        let parts = children(part);
        let ends = self
            .placed
            .block_end
            .get(&key)
            .map_or(&[][..], Vec::as_slice);
        let open = concat([text(" {"), mark(braces.map(|(open, _)| open + 1))]);
        let close = concat([text("}"), mark(braces.map(|(_, close)| close + 1))]);
        if parts.is_empty() && ends.is_empty() {
            return concat([open, close]);
        }
        let mut inner = Vec::new();
        for (i, &child) in parts.iter().enumerate() {
            let start = self.start(child);
            let leading = self
                .placed
                .leading
                .get(&start)
                .map_or(&[][..], Vec::as_slice);
            let first_blank = leading
                .first()
                .map_or_else(|| self.blank_before(start), |c| c.blank_before);
            inner.push(Doc::HardLine);
            if i > 0 && first_blank {
                inner.push(Doc::HardLine);
            }
            self.push_leading(&mut inner, leading, start);
            inner.push(self.part(child));
        }
        for (i, comment) in ends.iter().enumerate() {
            inner.push(Doc::HardLine);
            if comment.blank_before && (i > 0 || !parts.is_empty()) {
                inner.push(Doc::HardLine);
            }
            inner.push(text(comment.text.clone()));
        }
        concat([open, nest(concat(inner)), Doc::HardLine, close])
    }

    fn part(&self, part: Part<'_>) -> Doc {
        match part {
            Part::Input(input) => {
                let mut docs = vec![text("input "), ident(&input.name)];
                if let Some(title) = &input.title {
                    docs.extend([text(" "), self.text_doc(title)]);
                }
                concat(docs)
            }
            Part::Fact(fact) => concat([
                text("fact "),
                ident(&fact.name),
                text(": "),
                text(type_name(&fact.ty)),
                text(" "),
                self.text_doc(&fact.title),
                self.block(part),
            ]),
            Part::Symptom(symptom) => concat([
                text("symptom "),
                ident(&symptom.id),
                text(" "),
                self.text_doc(&symptom.title),
                self.block(part),
            ]),
            Part::Check(check) => self.check(check, part),
            Part::Cause(cause) => concat([
                text("cause "),
                ident(&cause.id),
                text(" "),
                self.text_doc(&cause.title),
                self.block(part),
            ]),
            Part::Test(test) => concat([text("test "), self.string(&test.name), self.block(part)]),
            Part::Extend(extension) => {
                let kind = match extension.kind {
                    ExtensionKind::Symptom => "extend symptom ",
                    ExtensionKind::Cause => "extend cause ",
                };
                let mut docs = vec![text(kind), ident(&extension.id)];
                if let Some(title) = &extension.title {
                    docs.extend([text(" "), self.text_doc(title)]);
                }
                docs.push(self.block(part));
                concat(docs)
            }
            Part::Explain(explain) => concat([text("explain "), self.text_doc(explain)]),
            Part::From(expr) => concat([text("from "), self.expr(expr)]),
            Part::When(expr) => concat([text("when "), self.expr(expr)]),
            Part::Gather(command) => concat([text("gather "), self.string(command)]),
            Part::Branch(branch) => {
                let head = match &branch.condition {
                    Some(condition) => concat([text("if "), self.expr(condition), text(" => ")]),
                    None => text("else => "),
                };
                let target = match &branch.target {
                    Target::Cause(id) => ident(id),
                    Target::CheckRef(id) => concat([text("check "), ident(id)]),
                    // A check's title is long: the condition fits without it.
                    Target::Check(check) => concat([Doc::FitsEnd, self.check(check, part)]),
                };
                concat([head, target])
            }
            Part::Fix(fix) => concat([text("fix "), self.text_doc(&fix.title), self.block(part)]),
            Part::Step(step) => {
                let mut parts = self.text_parts(&step.text);
                if let Some(run) = &step.run {
                    parts.push(concat([text("run "), self.string(run)]));
                }
                if let Some(risk) = &step.risk {
                    parts.push(concat([text("risk "), self.text_doc(risk)]));
                }
                concat([text("step "), Doc::Cascade(parts)])
            }
            Part::TestInput(TestInput::File(file)) => concat([text("input "), self.string(file)]),
            Part::TestInput(TestInput::Inline(json)) => concat([text("input "), json_doc(json)]),
            Part::Given(json) => concat([text("given "), json_doc(json)]),
            Part::Expect(expect) => match expect {
                Expect::Reported { id, status } => {
                    let mut docs = vec![text("expect "), ident(id)];
                    if *status == ExpectedStatus::Possible {
                        docs.push(text(" possible"));
                    }
                    concat(docs)
                }
                Expect::Absent(id) => concat([text("expect not "), ident(id)]),
                Expect::NoneConfirmed(loc) => concat([text("expect none"), Doc::Mark(loc.end())]),
            },
        }
    }

    /// `check [ID] TEXT { … }`, whose block belongs to `part` (the check, or
    /// the branch it is written in).
    fn check(&self, check: &Check, part: Part<'_>) -> Doc {
        let mut docs = vec![text("check ")];
        let title = match &check.id {
            Some(id) => {
                docs.extend([ident(id), text(" ")]);
                self.text_doc(&check.title)
            }
            // `check r"…"` would read as the id `r` and a string (or a comment).
            None if check.title.en.loc.text().starts_with('r') => {
                let mut title = check.title.clone();
                let at = title.en.loc.start();
                title.en.loc = title.en.loc.with_offsets(at, at);
                self.text_doc(&title)
            }
            None => self.text_doc(&check.title),
        };
        docs.extend([title, self.block(part)]);
        concat(docs)
    }

    /// English, then ` zh "…"` on the same line when it fits.
    fn text_doc(&self, text_: &Text) -> Doc {
        match &text_.zh {
            None => self.string(&text_.en),
            Some(_) => Doc::Cascade(self.text_parts(text_)),
        }
    }

    /// English, and `zh "…"`.
    fn text_parts(&self, text_: &Text) -> Vec<Doc> {
        let mut parts = vec![self.string(&text_.en)];
        if let Some(zh) = &text_.zh {
            parts.push(concat([text("zh "), self.string(zh)]));
        }
        parts
    }

    /// A string literal as written, or written from its value.
    fn string(&self, string: &Str) -> Doc {
        concat([
            literal(string.loc.text(), &string.value),
            Doc::Mark(string.loc.end()),
        ])
    }

    // -------------------------------------------------------------- expressions

    fn expr(&self, expr: &Expr) -> Doc {
        let doc = match &expr.kind {
            ExprKind::Bool(value) => text(if *value { "true" } else { "false" }),
            ExprKind::Number(number) => text(number_text(expr.loc.text(), *number)),
            ExprKind::String(value) => literal(unparenthesised(expr.loc.text()), value),
            ExprKind::List(items) if items.is_empty() => text("[]"),
            ExprKind::List(items) => {
                let last = items.len() - 1;
                let items = items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        if i < last {
                            concat([self.expr(item), text(",")])
                        } else {
                            self.expr(item)
                        }
                    })
                    .collect();
                bracketed("[", vec![Doc::Fill(items)], "]")
            }
            ExprKind::Name(name) => text(name.clone()),
            ExprKind::Relative(field) => text(format!(".{field}")),
            ExprKind::Field(base, field) => concat([
                self.operand(base, level(base) < POSTFIX),
                text(format!(".{field}")),
            ]),
            ExprKind::Bracket(base, index) => concat([
                self.operand(base, level(base) < POSTFIX),
                bracketed("[", vec![self.expr(index)], "]"),
            ]),
            ExprKind::Call(name, args) => {
                let mut items = Vec::new();
                for (i, arg) in args.iter().enumerate() {
                    if i > 0 {
                        items.extend([text(","), Doc::Line]);
                    }
                    items.push(self.expr(arg));
                }
                let args = if args.is_empty() {
                    text("()")
                } else {
                    bracketed("(", items, ")")
                };
                concat([ident(name), args])
            }
            ExprKind::Not(operand) => {
                concat([text("not "), self.operand(operand, level(operand) < NOT)])
            }
            ExprKind::Binary(op @ (BinOp::Or | BinOp::And), _, _) => self.chain(*op, expr),
            ExprKind::Binary(op, left, right) => concat([
                self.operand(left, level(left) < COMPARISON),
                text(format!(" {} ", op.symbol())),
                self.operand(right, level(right) <= COMPARISON),
            ]),
        };
        concat([doc, Doc::Mark(expr.loc.end())])
    }

    fn operand(&self, expr: &Expr, parenthesise: bool) -> Doc {
        if parenthesise {
            concat([
                text("("),
                self.expr(expr),
                text(")"),
                Doc::Mark(expr.loc.end()),
            ])
        } else {
            self.expr(expr)
        }
    }

    /// `a or b or c`: broken before every `or` when it does not fit.
    fn chain(&self, op: BinOp, expr: &Expr) -> Doc {
        let precedence = binary_level(op);
        let mut operands = Vec::new();
        let mut left = expr;
        while let ExprKind::Binary(inner, l, r) = &left.kind {
            if *inner != op {
                break;
            }
            operands.push(r.as_ref());
            left = l;
        }
        operands.push(left);
        operands.reverse();
        let mut rest = Vec::new();
        let mut first = None;
        for (i, operand) in operands.iter().enumerate() {
            if i == 0 {
                let doc = self.operand(operand, level(operand) < precedence);
                // An operand that breaks itself is indented past the operators.
                let nested =
                    matches!(operand.kind, ExprKind::Binary(BinOp::And, _, _)) && op == BinOp::Or;
                first = Some(if nested { nest(doc) } else { doc });
            } else {
                rest.extend([
                    Doc::Line,
                    text(format!("{} ", op.symbol())),
                    self.operand(operand, level(operand) <= precedence),
                ]);
            }
        }
        group(concat([
            first.unwrap_or_else(|| text("")),
            nest(concat(rest)),
        ]))
    }
}

/// Where an own-line comment goes.
enum Place {
    /// Before the part starting at this offset.
    Leading(usize),
    /// At the end of the block of the part starting at this offset, or of
    /// the file.
    BlockEnd(Option<usize>),
}

fn mark(offset: Option<usize>) -> Doc {
    offset.map_or_else(|| concat([]), Doc::Mark)
}

fn ident(ident: &Ident) -> Doc {
    concat([text(ident.name.clone()), Doc::Mark(ident.loc.end())])
}

fn type_name(ty: &Type) -> String {
    match ty {
        Type::String => String::from("string"),
        Type::Number => String::from("number"),
        Type::Bool => String::from("bool"),
        Type::Object => String::from("object"),
        Type::List(element) => format!("list<{}>", type_name(element)),
    }
}

const OR: u8 = 1;
const AND: u8 = 2;
const NOT: u8 = 3;
const COMPARISON: u8 = 4;
const POSTFIX: u8 = 5;

/// How tightly an expression binds (see `PRATT` in the parser).
fn level(expr: &Expr) -> u8 {
    match &expr.kind {
        ExprKind::Binary(op, _, _) => binary_level(*op),
        ExprKind::Not(_) => NOT,
        _ => POSTFIX,
    }
}

fn binary_level(op: BinOp) -> u8 {
    match op {
        BinOp::Or => OR,
        BinOp::And => AND,
        _ => COMPARISON,
    }
}

/// The text of an expression, without the parentheses around it.
fn unparenthesised(mut written: &str) -> &str {
    written = written.trim();
    while let Some(inner) = written
        .strip_prefix('(')
        .and_then(|rest| rest.strip_suffix(')'))
    {
        written = inner.trim();
    }
    written
}

/// A number as written when that is what it is, else in the shortest form
/// that reads back the same.
fn number_text(written: &str, number: f64) -> String {
    let written = unparenthesised(written);
    let plain = !written.is_empty()
        && written
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'));
    if plain && written.parse::<f64>().is_ok_and(|n| n == number) {
        return written.to_owned();
    }
    let magnitude = number.abs();
    if magnitude == 0.0 || (1e-6..1e17).contains(&magnitude) {
        format!("{number}")
    } else {
        format!("{number:e}")
    }
}

/// A string literal: as written when it reads back as `value`, else `value`
/// with JSON's escapes.
fn literal(written: &str, value: &str) -> Doc {
    if decode(written).as_deref() == Some(value) {
        if written.starts_with("\"\"\"") {
            return Doc::Long {
                written: written.to_owned(),
                value: value.to_owned(),
            };
        }
        if !written.contains('\n') {
            return text(written);
        }
        return Doc::Verbatim(written.to_owned());
    }
    text(serde_json::to_string(value).unwrap_or_else(|_| String::from("\"\"")))
}

/// The value of a string literal, as the parser reads it.
fn decode(written: &str) -> Option<String> {
    if written.len() >= 6
        && let Some(inner) = written
            .strip_prefix("\"\"\"")
            .and_then(|rest| rest.strip_suffix("\"\"\""))
    {
        return Some(dedent(inner));
    }
    if let Some(inner) = written
        .strip_prefix("r#\"")
        .and_then(|rest| rest.strip_suffix("\"#"))
    {
        return Some(inner.to_owned());
    }
    if let Some(inner) = written
        .strip_prefix("r\"")
        .and_then(|rest| rest.strip_suffix('"'))
    {
        return Some(inner.to_owned());
    }
    let inner = written.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        serde_json::from_str(&written.replace('\t', "\\t")).ok()
    } else {
        Some(inner.to_owned())
    }
}

/// A `"""` string whose lines start two columns past `indent`, closed at
/// `indent`; `None` when that would not read back as `value`.
fn long_string(value: &str, indent: usize) -> Option<String> {
    if value.is_empty() {
        return None;
    }
    let mut out = String::from("\"\"\"\n");
    for line in value.split('\n') {
        if !line.is_empty() {
            out.push_str(&" ".repeat(indent + INDENT));
            out.push_str(line);
        }
        out.push('\n');
    }
    out.push_str(&" ".repeat(indent));
    out.push_str("\"\"\"");
    (decode(&out).as_deref() == Some(value)).then_some(out)
}

fn json_doc(json: &crate::ast::Json) -> Doc {
    concat([
        Doc::Json {
            compact: compact_json(&json.value),
            pretty: serde_json::to_string_pretty(&json.value)
                .unwrap_or_else(|_| compact_json(&json.value)),
        },
        Doc::Mark(json.loc.end()),
    ])
}

/// JSON on one line, with a space after each `:` and `,`.
fn compact_json(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Object(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(key, value)| format!("{}: {}", json_string(key), compact_json(value)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        serde_json::Value::Array(items) => {
            let items: Vec<String> = items.iter().map(compact_json).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

fn json_string(value: &str) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| String::from("\"\""))
}

// ------------------------------------------------------------------ rendering

/// The columns a text takes: two for East Asian wide characters.
fn width(s: &str) -> usize {
    s.chars().map(|c| if is_wide(c) { 2 } else { 1 }).sum()
}

fn is_wide(c: char) -> bool {
    matches!(u32::from(c),
        0x1100..=0x115F
        | 0x2E80..=0x303E
        | 0x3041..=0x33FF
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE10..=0xFE19
        | 0xFE30..=0xFE6F
        | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6
        | 0x1F300..=0x1F64F
        | 0x1F900..=0x1F9FF
        | 0x20000..=0x2FFFD
        | 0x30000..=0x3FFFD)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Flat,
    Break,
}

/// What is left to render.
#[derive(Debug, Clone, Copy)]
enum Cmd<'d> {
    Doc(&'d Doc),
    /// The rest of a fill: each item preceded by its separator.
    FillRest(&'d [Doc]),
    /// The rest of a cascade, and whether it has broken a line yet.
    CascadeRest(&'d [Doc], bool),
}

type Command<'d> = (usize, Mode, Cmd<'d>);

/// One printed line.
#[derive(Debug)]
struct Line {
    text: String,
    /// Whether it ends inside a string literal, where no comment may go.
    in_string: bool,
}

/// Rendered lines, and which line each [`Doc::Mark`] landed on.
#[derive(Debug)]
struct Rendered {
    lines: Vec<Line>,
    marks: Vec<(usize, usize)>,
}

impl Rendered {
    /// The lines, with each trailing comment at the end of the line holding
    /// the code before it.
    fn place_trailing(mut self, comments: &[Comment]) -> Vec<String> {
        let mut orphans = Vec::new();
        for comment in comments {
            let line = self
                .marks
                .iter()
                .filter(|(offset, _)| *offset <= comment.start)
                .max()
                .map(|&(_, line)| line);
            let Some(mut line) = line else {
                orphans.push(comment.text.clone());
                continue;
            };
            while self.lines.get(line).is_some_and(|l| l.in_string) {
                line += 1;
            }
            match self.lines.get_mut(line) {
                Some(target) => {
                    target.text.push_str("  ");
                    target.text.push_str(&comment.text);
                }
                None => orphans.push(comment.text.clone()),
            }
        }
        orphans
            .into_iter()
            .chain(self.lines.into_iter().map(|line| line.text))
            .collect()
    }
}

#[derive(Debug, Default)]
struct Renderer {
    lines: Vec<Line>,
    current: String,
    column: usize,
    /// The indentation of the current line.
    line_indent: usize,
    marks: Vec<(usize, usize)>,
}

impl Renderer {
    fn text(&mut self, s: &str) {
        self.current.push_str(s);
        self.column += width(s);
    }

    fn end_line(&mut self, in_string: bool) {
        let mut line = std::mem::take(&mut self.current);
        if !in_string {
            line.truncate(line.trim_end().len());
        }
        self.lines.push(Line {
            text: line,
            in_string,
        });
    }

    fn newline(&mut self, indent: usize) {
        self.end_line(false);
        self.current = " ".repeat(indent);
        self.column = indent;
        self.line_indent = indent;
    }

    /// Text holding line breaks inside a string literal.
    fn multiline(&mut self, s: &str) {
        let mut pieces = s.split('\n');
        if let Some(first) = pieces.next() {
            self.text(first);
        }
        for piece in pieces {
            self.end_line(true);
            self.current = piece.to_owned();
            self.column = width(piece);
        }
    }

    fn left(&self) -> isize {
        isize::try_from(WIDTH).unwrap_or(isize::MAX)
            - isize::try_from(self.column).unwrap_or(isize::MAX)
    }
}

fn render(doc: &Doc) -> Rendered {
    let mut out = Renderer::default();
    let mut stack: Vec<Command<'_>> = vec![(0, Mode::Break, Cmd::Doc(doc))];
    while let Some((indent, mode, cmd)) = stack.pop() {
        let doc = match cmd {
            Cmd::FillRest(items) => {
                let Some((item, rest)) = items.split_first() else {
                    continue;
                };
                let flat = fits(
                    &[(indent, Mode::Flat, Cmd::Doc(item))],
                    &[],
                    out.left() - 1,
                    out.line_indent,
                );
                if mode == Mode::Flat || flat {
                    out.text(" ");
                } else {
                    out.newline(indent);
                }
                stack.push((indent, mode, Cmd::FillRest(rest)));
                let item_mode = fill_item_mode(mode, item, indent, &out);
                stack.push((indent, item_mode, Cmd::Doc(item)));
                continue;
            }
            Cmd::CascadeRest(items, broken) => {
                let Some((item, rest)) = items.split_first() else {
                    continue;
                };
                let inner = indent + INDENT;
                // What follows the item is measured up to the next possible break.
                stack.push((indent, mode, Cmd::CascadeRest(rest, broken)));
                let same_line = mode == Mode::Flat
                    || !broken
                        && fits(
                            &[(inner, Mode::Flat, Cmd::Doc(item))],
                            &stack,
                            out.left() - 1,
                            out.line_indent,
                        );
                stack.pop();
                stack.push((indent, mode, Cmd::CascadeRest(rest, !same_line)));
                if same_line {
                    out.text(" ");
                    stack.push((inner, Mode::Flat, Cmd::Doc(item)));
                } else {
                    out.newline(inner);
                    stack.push((inner, Mode::Break, Cmd::Doc(item)));
                }
                continue;
            }
            Cmd::Doc(doc) => doc,
        };
        match doc {
            Doc::Text(s) => out.text(s),
            Doc::Long { written, value } => match long_string(value, out.line_indent) {
                Some(reindented) => out.multiline(&reindented),
                None => out.multiline(written),
            },
            Doc::Verbatim(s) => out.multiline(s),
            Doc::Json { compact, pretty } => {
                let flat = fits(
                    &[(indent, Mode::Flat, Cmd::Doc(doc))],
                    &stack,
                    out.left(),
                    out.line_indent,
                );
                if flat || !pretty.contains('\n') {
                    out.text(compact);
                } else {
                    let base = out.line_indent;
                    let mut lines = pretty.split('\n');
                    if let Some(first) = lines.next() {
                        out.text(first);
                    }
                    for line in lines {
                        out.newline(base);
                        out.text(line);
                    }
                }
            }
            Doc::Line => match mode {
                Mode::Flat => out.text(" "),
                Mode::Break => out.newline(indent),
            },
            Doc::SoftLine => {
                if mode == Mode::Break {
                    out.newline(indent);
                }
            }
            Doc::HardLine => out.newline(indent),
            Doc::Nest(more, inner) => stack.push((indent + more, mode, Cmd::Doc(inner))),
            Doc::Group(inner) => {
                let flat = mode == Mode::Flat
                    || fits(
                        &[(indent, Mode::Flat, Cmd::Doc(inner))],
                        &stack,
                        out.left(),
                        out.line_indent,
                    );
                let mode = if flat { Mode::Flat } else { Mode::Break };
                stack.push((indent, mode, Cmd::Doc(inner)));
            }
            Doc::Fill(items) => {
                let Some((item, rest)) = items.split_first() else {
                    continue;
                };
                stack.push((indent, mode, Cmd::FillRest(rest)));
                let item_mode = fill_item_mode(mode, item, indent, &out);
                stack.push((indent, item_mode, Cmd::Doc(item)));
            }
            Doc::Cascade(items) => {
                let Some((item, rest)) = items.split_first() else {
                    continue;
                };
                stack.push((indent, mode, Cmd::CascadeRest(rest, false)));
                stack.push((indent, mode, Cmd::Doc(item)));
            }
            Doc::Concat(docs) => {
                for doc in docs.iter().rev() {
                    stack.push((indent, mode, Cmd::Doc(doc)));
                }
            }
            Doc::Mark(offset) => out.marks.push((*offset, out.lines.len())),
            Doc::FitsEnd => {}
        }
    }
    out.end_line(false);
    Rendered {
        lines: out.lines,
        marks: out.marks,
    }
}

/// An item of a fill is flat when it fits after what is already on the line.
fn fill_item_mode(mode: Mode, item: &Doc, indent: usize, out: &Renderer) -> Mode {
    if mode == Mode::Flat
        || fits(
            &[(indent, Mode::Flat, Cmd::Doc(item))],
            &[],
            out.left(),
            out.line_indent,
        )
    {
        Mode::Flat
    } else {
        Mode::Break
    }
}

/// Whether `next`, then what follows it up to the next line break, fits in
/// `left` columns.
fn fits(next: &[Command<'_>], rest: &[Command<'_>], mut left: isize, line_indent: usize) -> bool {
    let width_of = |s: &str| isize::try_from(width(s)).unwrap_or(isize::MAX);
    let full = isize::try_from(WIDTH).unwrap_or(isize::MAX);
    let indent_of = |n: usize| isize::try_from(n).unwrap_or(isize::MAX);
    let mut stack: Vec<Command<'_>> = next.to_vec();
    let mut rest = rest.iter().rev();
    loop {
        if left < 0 {
            return false;
        }
        let Some((indent, mode, cmd)) = stack.pop().or_else(|| rest.next().copied()) else {
            return true;
        };
        let doc = match cmd {
            Cmd::FillRest(items) => {
                if mode == Mode::Break && !items.is_empty() {
                    return true;
                }
                left -= isize::try_from(items.len()).unwrap_or(isize::MAX);
                for item in items.iter().rev() {
                    stack.push((indent, mode, Cmd::Doc(item)));
                }
                continue;
            }
            Cmd::CascadeRest(items, _) => {
                if mode == Mode::Break && !items.is_empty() {
                    return true;
                }
                left -= isize::try_from(items.len()).unwrap_or(isize::MAX);
                for item in items.iter().rev() {
                    stack.push((indent + INDENT, mode, Cmd::Doc(item)));
                }
                continue;
            }
            Cmd::Doc(doc) => doc,
        };
        match doc {
            Doc::Text(s) => left -= width_of(s),
            Doc::Long { .. } => {
                left -= 3;
                if left < 0 {
                    return false;
                }
                left = full - indent_of(line_indent) - 3;
            }
            Doc::Verbatim(s) => match s.rsplit_once('\n') {
                Some((first, last)) => {
                    left -= width_of(first.split('\n').next().unwrap_or_default());
                    if left < 0 {
                        return false;
                    }
                    left = full - width_of(last);
                }
                None => left -= width_of(s),
            },
            Doc::Json { compact, .. } => {
                let compact = width_of(compact);
                if mode == Mode::Break && compact > left {
                    left -= 1;
                    return left >= 0;
                }
                left -= compact;
            }
            Doc::Line => match mode {
                Mode::Flat => left -= 1,
                Mode::Break => return true,
            },
            Doc::SoftLine => {
                if mode == Mode::Break {
                    return true;
                }
            }
            Doc::HardLine | Doc::FitsEnd => return true,
            Doc::Nest(more, inner) => stack.push((indent + more, mode, Cmd::Doc(inner))),
            Doc::Group(inner) => stack.push((indent, mode, Cmd::Doc(inner))),
            Doc::Fill(items) => {
                if let Some((item, others)) = items.split_first() {
                    stack.push((indent, mode, Cmd::FillRest(others)));
                    stack.push((indent, mode, Cmd::Doc(item)));
                }
            }
            Doc::Cascade(items) => {
                if let Some((item, others)) = items.split_first() {
                    stack.push((indent, mode, Cmd::CascadeRest(others, false)));
                    stack.push((indent, mode, Cmd::Doc(item)));
                }
            }
            Doc::Concat(docs) => {
                for doc in docs.iter().rev() {
                    stack.push((indent, mode, Cmd::Doc(doc)));
                }
            }
            Doc::Mark(_) => {}
        }
    }
}

#[cfg(test)]
mod tests;
