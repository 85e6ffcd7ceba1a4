//! Text → [`RuleSet`]. The only module that touches pest's pairs.

use std::sync::{Arc, LazyLock};

use pest::Parser as _;
use pest::iterators::{Pair, Pairs};
use pest::pratt_parser::{Assoc, Op, PrattParser};

use crate::ast::*;
use crate::problem::{Code, Problem};
use crate::source::{Loc, MAX_SOURCE_BYTES, Source};

#[derive(pest_derive::Parser)]
#[grammar = "grammar.pest"]
struct RuleParser;

/// How deeply brackets, `not`s and `list<…>` types may nest, so parsing
/// never exhausts the stack.
pub const MAX_NESTING: usize = 64;

/// How deep the tree of an expression may be. Checking, compiling and
/// evaluating an expression each recurse through it, and chains of
/// operators (`a and b and …`) or accessors (`x.a.b…`) deepen it without
/// brackets. Everything it allows works on a thread of 2 MiB in a debug
/// build (compiling needs the most, and failed at about 210).
pub const MAX_EXPR_DEPTH: usize = 128;

/// Parses one rule file. Every problem in it is reported, not only the first.
pub fn parse(text: &str, name: &str) -> std::result::Result<RuleSet, ParseErrors> {
    parse_source(Source::new(name.to_owned(), text.to_owned()))
}

/// [`parse`] of a source the caller already holds: the syntax tree's
/// locations share it rather than a copy of its text.
pub fn parse_source(src: Arc<Source>) -> std::result::Result<RuleSet, ParseErrors> {
    let text = &*src.text;
    let unread = if text.len() > MAX_SOURCE_BYTES {
        Some(too_large(&src))
    } else {
        too_deep_at(text).map(|(at, what)| too_deep(&src, at, what))
    };
    if let Some(problem) = unread {
        return Err(ParseErrors {
            problems: vec![problem],
            recovered: RuleSet::default(),
            broken: vec![Broken::Everything],
        });
    }
    let builder = Builder { src: &src, base: 0 };
    let mut errors = match RuleParser::parse(Rule::file, text) {
        Ok(pairs) => {
            let mut errors = ParseErrors {
                problems: Vec::new(),
                recovered: RuleSet::default(),
                broken: Vec::new(),
            };
            builder.file(pairs, &mut errors);
            if errors.problems.is_empty() {
                return Ok(errors.recovered);
            }
            errors
        }
        Err(_) => parse_in_chunks(&src),
    };
    errors.problems.sort_by_key(|p| p.loc.start());
    Err(errors)
}

/// The problems of a file that did not parse, and what could still be read.
#[derive(Debug)]
pub struct ParseErrors {
    /// Every problem found.
    pub problems: Vec<Problem>,
    /// The declarations that parsed, for checking them all the same.
    pub recovered: RuleSet,
    /// What the broken declarations would have declared.
    pub broken: Vec<Broken>,
}

/// A declaration that did not parse, so references to it prove nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Broken {
    /// The file could not be read at all.
    Everything,
    /// A declaration of this kind (`symptom`, `cause`, …) and this id or name.
    Declaration {
        /// `input`, `fact`, `symptom`, `check`, `cause` or `test`.
        keyword: String,
        /// Its id or name, when it could be read.
        name: String,
    },
}

impl Broken {
    /// What the broken declaration that `text` starts would have declared.
    fn declared_by(text: &str) -> Option<Self> {
        let mut words = text.split_whitespace();
        let (keyword, name) = (words.next()?, words.next()?);
        Some(Broken::Declaration {
            keyword: keyword.to_owned(),
            name: name.trim_end_matches(':').to_owned(),
        })
    }
}

/// Parses each top-level declaration on its own, so that one syntax error
/// does not hide the ones after it.
fn parse_in_chunks(src: &Arc<Source>) -> ParseErrors {
    let text = &*src.text;
    let mut starts: Vec<usize> = vec![0];
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if offset > 0 && starts_declaration(line) {
            starts.push(offset);
        }
        offset += line.len();
    }
    starts.push(text.len());
    let mut errors = ParseErrors {
        problems: Vec::new(),
        recovered: RuleSet::default(),
        broken: Vec::new(),
    };
    for window in starts.windows(2) {
        let &[start, end] = window else { continue };
        let chunk = text.get(start..end).unwrap_or_default();
        // A chunk may start inside a long string, where the file's count
        // did not look.
        if let Some((at, what)) = too_deep_at(chunk) {
            errors.problems.push(too_deep(src, start + at, what));
            errors.broken.extend(Broken::declared_by(chunk));
            continue;
        }
        let builder = Builder { src, base: start };
        match RuleParser::parse(Rule::file, chunk) {
            Ok(pairs) => builder.file(pairs, &mut errors),
            Err(error) => {
                errors.problems.push(builder.syntax_problem(&error));
                errors.broken.extend(Broken::declared_by(chunk));
            }
        }
    }
    errors
}

fn starts_declaration(line: &str) -> bool {
    [
        "input", "fact", "symptom", "check", "cause", "test", "extend",
    ]
    .iter()
    .any(|keyword| {
        line.strip_prefix(keyword)
            .is_some_and(|rest| rest.starts_with([' ', '\t']))
    })
}

/// Finds nesting too deep to parse with bounded stack: brackets, braces,
/// parentheses, chains of `not` and `list<…>` types, outside strings and
/// comments. Blanks are those of the grammar (a byte order mark and a
/// comment included), so that nothing pest skips between two tokens hides
/// one level from this count. Where it is too deep, and what.
fn too_deep_at(text: &str) -> Option<(usize, &'static str)> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut nots = 0usize;
    let mut lists = 0usize;
    let word_byte = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
    let word_before =
        |i: usize| i > 0 && bytes.get(i - 1).is_some_and(|b| word_byte(b) || *b == b'.');
    let keyword_at = |i: usize, keyword: &[u8]| {
        bytes.get(i..i + keyword.len()) == Some(keyword)
            && !bytes.get(i + keyword.len()).is_some_and(word_byte)
            && !word_before(i)
    };
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b' ' | b'\t' | b'\r' | b'\n' | b'#' | 0xEF => match blanks_end(bytes, i) {
                end if end > i => {
                    i = end;
                    continue;
                }
                // A byte 0xEF that does not start a byte order mark.
                _ => nots = 0,
            },
            // An `r` ending a word is not a raw string's.
            b'"' | b'r' if byte == b'"' || !word_before(i) => match string_end(bytes, i) {
                Some(end) => {
                    i = end;
                    continue;
                }
                None => nots = 0,
            },
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some((i, "brackets"));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'l' if keyword_at(i, b"list")
                && bytes.get(blanks_end(bytes, i + 4)) == Some(&b'<') =>
            {
                lists += 1;
                if lists > MAX_NESTING {
                    return Some((i, "`list<…>` types"));
                }
                i += 4;
                continue;
            }
            b'>' => {
                lists = lists.saturating_sub(1);
                nots = 0;
            }
            b'n' if keyword_at(i, b"not") => {
                nots += 1;
                if nots > MAX_NESTING {
                    return Some((i, "`not`s"));
                }
                i += 3;
                continue;
            }
            _ => nots = 0,
        }
        i += 1;
    }
    None
}

/// Where the blanks from `at` end, as the grammar skips them between
/// tokens: white space, byte order marks and comments; `at` when none.
fn blanks_end(bytes: &[u8], mut at: usize) -> usize {
    loop {
        match bytes.get(at..).unwrap_or_default() {
            [b' ' | b'\t' | b'\r' | b'\n', ..] => at += 1,
            [0xEF, 0xBB, 0xBF, ..] => at += 3,
            [b'#', rest @ ..] => {
                at += 1 + memchr::memchr(b'\n', rest).unwrap_or(rest.len());
            }
            _ => return at,
        }
    }
}

/// Where the string literal at `at` ends, past its closing quotes (or at
/// the end of its line, or of the text, when it is not closed); `None`
/// when no string starts there. Long strings may span lines, the others
/// not; only plain ones have escapes.
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let rest = bytes.get(at..)?;
    if rest.starts_with(b"\"\"\"") {
        let close = memchr::memmem::find(rest.get(3..)?, b"\"\"\"");
        return Some(close.map_or(bytes.len(), |n| at + 3 + n + 3));
    }
    let (mut i, close, escapes) = match rest {
        [b'r', b'#', b'"', ..] => (3, &b"\"#"[..], false),
        [b'r', b'"', ..] => (2, &b"\""[..], false),
        [b'"', ..] => (1, &b"\""[..], true),
        _ => return None,
    };
    loop {
        let Some(n) = rest
            .get(i..)
            .and_then(|tail| memchr::memchr3(b'"', b'\n', b'\\', tail))
        else {
            return Some(bytes.len());
        };
        i += n;
        match rest.get(i) {
            Some(b'"') if rest.get(i..i + close.len()) == Some(close) => {
                return Some(at + i + close.len());
            }
            Some(b'\n') => return Some(at + i),
            // An escape, but not of the line's end: the string ends there.
            Some(b'\\') if escapes && rest.get(i + 1) != Some(&b'\n') => i += 2,
            _ => i += 1,
        }
    }
}

/// Moves `items` into an allocation of their own size. A vector grown by
/// pushes holds up to twice what it needs, and shrinking it in place does
/// not help: mimalloc keeps a block asked to shrink by half or less. A
/// large knowledge base holds millions of these vectors.
fn exact<T>(items: &mut Vec<T>) {
    if items.len() < items.capacity() {
        let mut exact = Vec::with_capacity(items.len());
        exact.append(items);
        *items = exact;
    }
}

fn too_large(src: &Arc<Source>) -> Problem {
    Problem::error(
        Code::TooLarge,
        &Loc::new(Arc::clone(src), 0, 0),
        "the file is larger than 4 GiB",
    )
    .with_help("split it into several files")
}

fn too_deep(src: &Arc<Source>, at: usize, what: &str) -> Problem {
    let loc = Loc::new(Arc::clone(src), at, at + 1);
    Problem::error(
        Code::TooDeep,
        &loc,
        format!("{what} are nested more than {MAX_NESTING} deep"),
    )
    .with_label("too deep from here on")
    .with_help("split the condition into several facts or checks")
}

static PRATT: LazyLock<PrattParser<Rule>> = LazyLock::new(|| {
    PrattParser::new()
        .op(Op::infix(Rule::or_op, Assoc::Left))
        .op(Op::infix(Rule::and_op, Assoc::Left))
        .op(Op::prefix(Rule::not_op))
        .op(Op::infix(Rule::eq, Assoc::Left)
            | Op::infix(Rule::ne, Assoc::Left)
            | Op::infix(Rule::lt, Assoc::Left)
            | Op::infix(Rule::le, Assoc::Left)
            | Op::infix(Rule::gt, Assoc::Left)
            | Op::infix(Rule::ge, Assoc::Left)
            | Op::infix(Rule::contains, Assoc::Left)
            | Op::infix(Rule::starts_with, Assoc::Left)
            | Op::infix(Rule::ends_with, Assoc::Left)
            | Op::infix(Rule::matches, Assoc::Left)
            | Op::infix(Rule::in_op, Assoc::Left)
            | Op::infix(Rule::not_in, Assoc::Left))
});

type Result<T> = std::result::Result<T, Box<Problem>>;

/// Turns pairs into AST nodes; `base` is where the parsed text starts in the file.
struct Builder<'s> {
    src: &'s Arc<Source>,
    base: usize,
}

impl Builder<'_> {
    fn loc(&self, pair: &Pair<'_, Rule>) -> Loc {
        let span = pair.as_span();
        Loc::new(
            Arc::clone(self.src),
            self.base + span.start(),
            self.base + span.end(),
        )
    }

    fn internal(&self, pair: &Pair<'_, Rule>, what: &str) -> Box<Problem> {
        Box::new(Problem::error(
            Code::Internal,
            &self.loc(pair),
            format!(
                "internal error: unexpected {:?} while reading {what}",
                pair.as_rule()
            ),
        ))
    }

    /// The next child, which the grammar guarantees.
    fn child<'i>(
        &self,
        parent: &Pair<'i, Rule>,
        pairs: &mut Pairs<'i, Rule>,
    ) -> Result<Pair<'i, Rule>> {
        pairs.next().ok_or_else(|| {
            Box::new(Problem::error(
                Code::Internal,
                &self.loc(parent),
                format!("internal error: {:?} ended early", parent.as_rule()),
            ))
        })
    }

    /// The declarations of a file that parsed; those that cannot be built
    /// (an invalid string, an expression too deep) are reported and broken.
    fn file(&self, pairs: Pairs<'_, Rule>, errors: &mut ParseErrors) {
        // The declarations are the children of `file`, not every pair below.
        let children = pairs.flat_map(Pair::into_inner);
        for pair in children.filter(|p| is_item(p.as_rule())) {
            let text = pair.as_str();
            match self.item(pair) {
                Ok(item) => errors.recovered.items.push(item),
                Err(problem) => {
                    errors.problems.push(*problem);
                    errors.broken.extend(Broken::declared_by(text));
                }
            }
        }
    }

    fn item(&self, pair: Pair<'_, Rule>) -> Result<Item> {
        Ok(match pair.as_rule() {
            Rule::input_decl => Item::Input(Box::new(self.input(pair)?)),
            Rule::fact_decl => Item::Fact(Box::new(self.fact(pair)?)),
            Rule::symptom_decl => Item::Symptom(Box::new(self.symptom(pair)?)),
            Rule::check_decl => Item::Check(Box::new(self.check(pair)?)),
            Rule::cause_decl => Item::Cause(Box::new(self.cause(pair)?)),
            Rule::test_decl => Item::Test(Box::new(self.test(pair)?)),
            Rule::extend_decl => Item::Extend(Box::new(self.extension(pair)?)),
            _ => return Err(self.internal(&pair, "a declaration")),
        })
    }

    fn extension(&self, pair: Pair<'_, Rule>) -> Result<Extension> {
        let loc = self.loc(&pair);
        let body = self.only_child(pair)?;
        let kind = match body.as_rule() {
            Rule::extend_symptom => ExtensionKind::Symptom,
            _ => ExtensionKind::Cause,
        };
        let mut inner = body.clone().into_inner();
        let id = self.ident(self.child(&body, &mut inner)?);
        let mut extension = Extension {
            kind,
            id,
            title: None,
            explain: None,
            checks: Vec::new(),
            fixes: Vec::new(),
            loc,
        };
        for clause in inner {
            match clause.as_rule() {
                Rule::text => extension.title = Some(self.text(clause)?),
                Rule::explain_clause => {
                    extension.explain = Some(self.text(self.only_child(clause)?)?)
                }
                Rule::check_block => extension.checks.push(self.check(clause)?),
                Rule::fix_block => extension.fixes.push(self.fix(clause)?),
                _ => return Err(self.internal(&clause, "an extension")),
            }
        }
        exact(&mut extension.checks);
        exact(&mut extension.fixes);
        Ok(extension)
    }

    fn input(&self, pair: Pair<'_, Rule>) -> Result<InputDecl> {
        let loc = self.loc(&pair);
        let mut inner = pair.clone().into_inner();
        let name = self.ident(self.child(&pair, &mut inner)?);
        let title = inner.next().map(|p| self.text(p)).transpose()?;
        Ok(InputDecl { name, title, loc })
    }

    fn fact(&self, pair: Pair<'_, Rule>) -> Result<FactDecl> {
        let loc = self.loc(&pair);
        let mut inner = pair.clone().into_inner();
        let name = self.ident(self.child(&pair, &mut inner)?);
        let ty = self.ty(self.child(&pair, &mut inner)?)?;
        let title = self.text(self.child(&pair, &mut inner)?)?;
        let mut fact = FactDecl {
            name,
            ty,
            title,
            explain: None,
            from: None,
            gather: None,
            loc,
        };
        for clause in inner {
            match clause.as_rule() {
                Rule::from_clause => fact.from = Some(self.expr(self.only_child(clause)?)?),
                Rule::gather_clause => fact.gather = Some(self.string(self.only_child(clause)?)?),
                Rule::explain_clause => fact.explain = Some(self.text(self.only_child(clause)?)?),
                _ => return Err(self.internal(&clause, "a fact")),
            }
        }
        Ok(fact)
    }

    fn ty(&self, pair: Pair<'_, Rule>) -> Result<Type> {
        match pair.clone().into_inner().next() {
            Some(list) if list.as_rule() == Rule::list_ty => {
                let element = self.only_child(list)?;
                Ok(Type::List(Box::new(self.ty(element)?)))
            }
            _ => match pair.as_str() {
                "string" => Ok(Type::String),
                "number" => Ok(Type::Number),
                "bool" => Ok(Type::Bool),
                "object" => Ok(Type::Object),
                _ => Err(self.internal(&pair, "a type")),
            },
        }
    }

    fn symptom(&self, pair: Pair<'_, Rule>) -> Result<Symptom> {
        let loc = self.loc(&pair);
        let mut inner = pair.clone().into_inner();
        let id = self.ident(self.child(&pair, &mut inner)?);
        let title = self.text(self.child(&pair, &mut inner)?)?;
        let mut symptom = Symptom {
            id,
            title,
            explain: None,
            when: None,
            checks: Vec::new(),
            loc,
        };
        for clause in inner {
            match clause.as_rule() {
                Rule::explain_clause => {
                    symptom.explain = Some(self.text(self.only_child(clause)?)?)
                }
                Rule::when_clause => symptom.when = Some(self.expr(self.only_child(clause)?)?),
                Rule::check_block => symptom.checks.push(self.check(clause)?),
                _ => return Err(self.internal(&clause, "a symptom")),
            }
        }
        exact(&mut symptom.checks);
        Ok(symptom)
    }

    fn check(&self, pair: Pair<'_, Rule>) -> Result<Check> {
        let loc = self.loc(&pair);
        let mut inner = pair.clone().into_inner().peekable();
        let id = match inner.peek() {
            Some(p) if p.as_rule() == Rule::id => inner.next().map(|p| self.ident(p)),
            _ => None,
        };
        let title_pair = inner
            .next()
            .ok_or_else(|| self.internal(&pair, "a check's title"))?;
        let mut check = Check {
            id,
            title: self.text(title_pair)?,
            explain: None,
            gather: None,
            branches: Vec::new(),
            loc,
        };
        for clause in inner {
            match clause.as_rule() {
                Rule::explain_clause => check.explain = Some(self.text(self.only_child(clause)?)?),
                Rule::gather_clause => check.gather = Some(self.string(self.only_child(clause)?)?),
                Rule::if_branch | Rule::else_branch => check.branches.push(self.branch(clause)?),
                _ => return Err(self.internal(&clause, "a check")),
            }
        }
        exact(&mut check.branches);
        Ok(check)
    }

    fn branch(&self, pair: Pair<'_, Rule>) -> Result<Branch> {
        let loc = self.loc(&pair);
        let is_if = pair.as_rule() == Rule::if_branch;
        let mut inner = pair.clone().into_inner();
        let condition = if is_if {
            Some(self.expr(self.child(&pair, &mut inner)?)?)
        } else {
            None
        };
        let target = self.child(&pair, &mut inner)?;
        let target = match target.as_rule() {
            Rule::cause_ref => Target::Cause(self.ident(target)),
            Rule::check_ref => Target::CheckRef(self.ident(self.only_child(target)?)),
            Rule::check_block => Target::Check(Box::new(self.check(target)?)),
            _ => return Err(self.internal(&target, "a branch")),
        };
        Ok(Branch {
            condition,
            target,
            loc,
        })
    }

    fn cause(&self, pair: Pair<'_, Rule>) -> Result<Cause> {
        let loc = self.loc(&pair);
        let mut inner = pair.clone().into_inner();
        let id = self.ident(self.child(&pair, &mut inner)?);
        let title = self.text(self.child(&pair, &mut inner)?)?;
        let mut cause = Cause {
            id,
            title,
            explain: None,
            fixes: Vec::new(),
            loc,
        };
        for clause in inner {
            match clause.as_rule() {
                Rule::explain_clause => cause.explain = Some(self.text(self.only_child(clause)?)?),
                Rule::fix_block => cause.fixes.push(self.fix(clause)?),
                _ => return Err(self.internal(&clause, "a cause")),
            }
        }
        exact(&mut cause.fixes);
        Ok(cause)
    }

    fn fix(&self, pair: Pair<'_, Rule>) -> Result<Fix> {
        let loc = self.loc(&pair);
        let mut inner = pair.clone().into_inner();
        let title = self.text(self.child(&pair, &mut inner)?)?;
        let mut steps = inner.map(|step| self.step(step)).collect::<Result<_>>()?;
        exact(&mut steps);
        Ok(Fix { title, steps, loc })
    }

    fn step(&self, pair: Pair<'_, Rule>) -> Result<Step> {
        let loc = self.loc(&pair);
        let mut inner = pair.clone().into_inner();
        let text = self.text(self.child(&pair, &mut inner)?)?;
        let mut step = Step {
            text,
            run: None,
            risk: None,
            loc,
        };
        for clause in inner {
            match clause.as_rule() {
                Rule::run_clause => step.run = Some(self.string(self.only_child(clause)?)?),
                Rule::risk_clause => step.risk = Some(self.text(self.only_child(clause)?)?),
                _ => return Err(self.internal(&clause, "a step")),
            }
        }
        Ok(step)
    }

    fn test(&self, pair: Pair<'_, Rule>) -> Result<Test> {
        let loc = self.loc(&pair);
        let mut inner = pair.clone().into_inner();
        let name = self.string(self.child(&pair, &mut inner)?)?;
        let mut test = Test {
            name,
            input: None,
            given: None,
            expects: Vec::new(),
            loc,
        };
        for clause in inner {
            match clause.as_rule() {
                Rule::input_clause => {
                    let value = self.only_child(clause)?;
                    test.input = Some(match value.as_rule() {
                        Rule::json_object => TestInput::Inline(self.json(value)?),
                        _ => TestInput::File(self.string(value)?),
                    });
                }
                Rule::given_clause => test.given = Some(self.json(self.only_child(clause)?)?),
                Rule::expect_clause => test.expects.push(self.expect(clause)?),
                _ => return Err(self.internal(&clause, "a test")),
            }
        }
        exact(&mut test.expects);
        Ok(test)
    }

    fn expect(&self, pair: Pair<'_, Rule>) -> Result<Expect> {
        let loc = self.loc(&pair);
        let mut negated = false;
        let mut id = None;
        let mut status = ExpectedStatus::Confirmed;
        for part in pair.into_inner() {
            match part.as_rule() {
                Rule::expect_none => return Ok(Expect::NoneConfirmed(loc)),
                Rule::negation => negated = true,
                Rule::id => id = Some(self.ident(part)),
                Rule::status if part.as_str() == "possible" => status = ExpectedStatus::Possible,
                Rule::status => status = ExpectedStatus::Confirmed,
                _ => return Err(self.internal(&part, "an expectation")),
            }
        }
        let id = id.ok_or_else(|| {
            Box::new(Problem::error(
                Code::Internal,
                &loc,
                "internal error: expect without id",
            ))
        })?;
        Ok(if negated {
            Expect::Absent(id)
        } else {
            Expect::Reported { id, status }
        })
    }

    fn json(&self, pair: Pair<'_, Rule>) -> Result<Json> {
        let loc = self.loc(&pair);
        match serde_json::from_str(pair.as_str()) {
            Ok(value) => Ok(Json { value, loc }),
            Err(error) => Err(Box::new(
                Problem::error(Code::BadJson, &loc, format!("invalid JSON: {error}"))
                    .with_help("inline JSON follows JSON's rules: no comments, no trailing commas"),
            )),
        }
    }

    fn only_child<'i>(&self, pair: Pair<'i, Rule>) -> Result<Pair<'i, Rule>> {
        let mut inner = pair.clone().into_inner();
        self.child(&pair, &mut inner)
    }

    fn ident(&self, pair: Pair<'_, Rule>) -> Ident {
        Ident {
            name: pair.as_str().to_owned(),
            loc: self.loc(&pair),
        }
    }

    fn text(&self, pair: Pair<'_, Rule>) -> Result<Text> {
        let mut inner = pair.clone().into_inner();
        let en = self.string(self.child(&pair, &mut inner)?)?;
        let zh = inner.next().map(|p| self.string(p)).transpose()?;
        Ok(Text { en, zh })
    }

    fn string(&self, pair: Pair<'_, Rule>) -> Result<Str> {
        let loc = self.loc(&pair);
        let raw = pair.as_str();
        let value = if pair.as_rule() == Rule::long_string {
            dedent(raw.get(3..raw.len().saturating_sub(3)).unwrap_or_default())
        } else if pair.as_rule() == Rule::raw_string {
            let hashes = usize::from(raw.starts_with("r#"));
            raw.get(2 + hashes..raw.len().saturating_sub(1 + hashes))
                .unwrap_or_default()
                .to_owned()
        } else if !raw.contains('\\') {
            raw.get(1..raw.len().saturating_sub(1))
                .unwrap_or_default()
                .to_owned()
        } else {
            serde_json::from_str(&raw.replace('\t', "\\t")).map_err(|error| {
                Box::new(
                    Problem::error(Code::BadString, &loc, format!("invalid string: {error}"))
                        .with_help("escapes are those of JSON: \\\" \\\\ \\n \\t \\uXXXX"),
                )
            })?
        };
        Ok(Str { value, loc })
    }

    fn expr(&self, pair: Pair<'_, Rule>) -> Result<Expr> {
        self.deep_expr(pair).map(|(expr, _)| expr)
    }

    /// An expression and the depth of its tree, at most [`MAX_EXPR_DEPTH`].
    fn deep_expr(&self, pair: Pair<'_, Rule>) -> Result<(Expr, usize)> {
        PRATT
            .map_primary(|primary| self.postfix(primary))
            .map_prefix(|op, rhs| {
                let (rhs, below) = rhs?;
                let loc = self.join(&self.loc(&op), &rhs.loc);
                let depth = self.deeper(below, &loc)?;
                let kind = ExprKind::Not(Box::new(rhs));
                Ok((Expr { kind, loc }, depth))
            })
            .map_infix(|lhs, op, rhs| {
                let ((lhs, left), (rhs, right)) = (lhs?, rhs?);
                let op_loc = self.loc(&op);
                let op = match op.as_rule() {
                    Rule::or_op => BinOp::Or,
                    Rule::and_op => BinOp::And,
                    Rule::eq => BinOp::Eq,
                    Rule::ne => BinOp::Ne,
                    Rule::lt => BinOp::Lt,
                    Rule::le => BinOp::Le,
                    Rule::gt => BinOp::Gt,
                    Rule::ge => BinOp::Ge,
                    Rule::contains => BinOp::Contains,
                    Rule::starts_with => BinOp::StartsWith,
                    Rule::ends_with => BinOp::EndsWith,
                    Rule::matches => BinOp::Matches,
                    Rule::in_op => BinOp::In,
                    Rule::not_in => BinOp::NotIn,
                    _ => return Err(self.internal(&op, "an operator")),
                };
                let depth = self.deeper(left.max(right), &op_loc)?;
                let loc = self.join(&lhs.loc, &rhs.loc);
                let kind = ExprKind::Binary(op, Box::new(lhs), Box::new(rhs));
                Ok((Expr { kind, loc }, depth))
            })
            .parse(pair.into_inner())
    }

    /// The depth of a node above children as deep as `below`; an error
    /// at `loc` when that is too deep.
    fn deeper(&self, below: usize, loc: &Loc) -> Result<usize> {
        let depth = below + 1;
        if depth > MAX_EXPR_DEPTH {
            return Err(Box::new(
                Problem::error(
                    Code::TooDeep,
                    loc,
                    format!("the expression is nested more than {MAX_EXPR_DEPTH} deep"),
                )
                .with_label("too deep from here on")
                .with_help(
                    "split the condition into several facts or checks, or use `in [...]` \
                     for a long list of alternatives",
                ),
            ));
        }
        Ok(depth)
    }

    fn join(&self, first: &Loc, last: &Loc) -> Loc {
        Loc::new(Arc::clone(self.src), first.start(), last.end())
    }

    fn postfix(&self, pair: Pair<'_, Rule>) -> Result<(Expr, usize)> {
        let mut inner = pair.clone().into_inner();
        let primary = self.child(&pair, &mut inner)?;
        let parenthesised = primary.as_rule() == Rule::expr;
        let (mut expr, mut depth) = match inner.peek() {
            Some(arguments) if arguments.as_rule() == Rule::arguments => {
                inner.next();
                self.call(primary, arguments)?
            }
            _ => self.primary(primary)?,
        };
        if parenthesised {
            // The text of `(…)` includes its parentheses.
            let end = closing_paren(&self.src.text, expr.loc.end());
            expr.loc = expr.loc.with_offsets(self.loc(&pair).start(), end);
        }
        for accessor in inner {
            let loc = self.join(&expr.loc, &self.loc(&accessor));
            let kind = match accessor.as_rule() {
                Rule::field_access => {
                    depth = self.deeper(depth, &loc)?;
                    let field = self.only_child(accessor)?;
                    ExprKind::Field(Box::new(expr), field.as_str().to_owned())
                }
                Rule::bracket => {
                    let (index, below) = self.deep_expr(self.only_child(accessor)?)?;
                    depth = self.deeper(depth.max(below), &loc)?;
                    ExprKind::Bracket(Box::new(expr), Box::new(index))
                }
                _ => return Err(self.internal(&accessor, "an accessor")),
            };
            expr = Expr { kind, loc };
        }
        Ok((expr, depth))
    }

    fn primary(&self, pair: Pair<'_, Rule>) -> Result<(Expr, usize)> {
        let loc = self.loc(&pair);
        let kind = match pair.as_rule() {
            Rule::boolean => ExprKind::Bool(pair.as_str() == "true"),
            Rule::number => match pair.as_str().parse::<f64>() {
                Ok(n) if n.is_finite() => ExprKind::Number(n),
                _ => {
                    return Err(Box::new(
                        Problem::error(Code::Syntax, &loc, "number out of range")
                            .with_label("not a finite number"),
                    ));
                }
            },
            Rule::string | Rule::raw_string => ExprKind::String(self.string(pair)?.value),
            Rule::list => {
                let (items, below) = self.deep_exprs(pair.into_inner())?;
                let depth = self.deeper(below, &loc)?;
                return Ok((
                    Expr {
                        kind: ExprKind::List(items),
                        loc,
                    },
                    depth,
                ));
            }
            Rule::relative => ExprKind::Relative(pair.as_str().trim_start_matches('.').to_owned()),
            Rule::name => ExprKind::Name(pair.as_str().to_owned()),
            Rule::expr => return self.deep_expr(pair),
            _ => return Err(self.internal(&pair, "an expression")),
        };
        Ok((Expr { kind, loc }, 1))
    }

    /// A call of the function `name` with `arguments`.
    fn call(&self, name: Pair<'_, Rule>, arguments: Pair<'_, Rule>) -> Result<(Expr, usize)> {
        let loc = self.join(&self.loc(&name), &self.loc(&arguments));
        let (args, below) = self.deep_exprs(arguments.into_inner())?;
        let depth = self.deeper(below, &loc)?;
        let kind = ExprKind::Call(Box::new(self.ident(name)), args);
        Ok((Expr { kind, loc }, depth))
    }

    /// Expressions and the depth of the deepest.
    fn deep_exprs<'i>(
        &self,
        pairs: impl Iterator<Item = Pair<'i, Rule>>,
    ) -> Result<(Vec<Expr>, usize)> {
        let mut depth = 0;
        let mut exprs = Vec::new();
        for pair in pairs {
            let (expr, below) = self.deep_expr(pair)?;
            depth = depth.max(below);
            exprs.push(expr);
        }
        exact(&mut exprs);
        Ok((exprs, depth))
    }

    /// Turns pest's error into a problem worded for people.
    fn syntax_problem(&self, error: &pest::error::Error<Rule>) -> Problem {
        let at = match error.location {
            pest::error::InputLocation::Pos(p) => p,
            pest::error::InputLocation::Span((s, _)) => s,
        };
        let text = &self.src.text;
        let mut start = self.base + at;
        let found = found_at(text.get(start..).unwrap_or_default());
        if found.is_empty() {
            // At the end of the text: point at its last character instead.
            let before = text.get(..start).unwrap_or_default().trim_end();
            start = before.char_indices().next_back().map_or(0, |(i, _)| i);
        }
        let width = text
            .get(start..)
            .and_then(|rest| rest.chars().next())
            .map_or(0, char::len_utf8);
        let end = start + if found.is_empty() { width } else { found.len() };
        let loc = Loc::new(Arc::clone(self.src), start, end);
        let expected = match &error.variant {
            pest::error::ErrorVariant::ParsingError { positives, .. } => {
                // Any name may be followed by `(` to call it, but few names
                // are functions: saying so after each would only crowd
                // the message.
                let mut words: Vec<&str> = positives
                    .iter()
                    .filter(|r| **r != Rule::arguments)
                    .map(|r| describe(*r))
                    .collect();
                words.sort_unstable();
                words.dedup();
                words
            }
            pest::error::ErrorVariant::CustomError { .. } => Vec::new(),
        };
        let found_words = if found.is_empty() {
            String::from("end of file")
        } else {
            crate::problem::quoted(found, "word")
        };
        let message = if expected.is_empty() {
            format!("unexpected {found_words}")
        } else {
            format!("expected {}, found {found_words}", one_of(&expected))
        };
        let label = if found.is_empty() {
            String::from("the text ends here: is a `}` missing?")
        } else {
            format!("expected {}", one_of(&expected))
        };
        let mut problem = Problem::error(Code::Syntax, &loc, message).with_label(label);
        if let Some(hint) = suggest_keyword(found, &expected) {
            problem = problem.with_help(format!("did you mean `{hint}`?"));
        } else if expected.contains(&describe(Rule::id)) {
            // Ids name runbook pages and files: they are kept to what a path
            // and a URL take as they are.
            problem = problem.with_help(
                "an id is an ASCII letter, then letters, digits, `-` and `_`, \
                 with `.` between words: `pending.insufficient-resources`",
            );
        }
        problem
    }
}

/// The offset just past the `)` that follows `from`, skipping blanks and comments.
fn closing_paren(text: &str, from: usize) -> usize {
    let mut chars = text.get(from..).unwrap_or_default().char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            ')' => return from + i + 1,
            '#' => {
                for (_, c) in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            c if c.is_whitespace() => {}
            _ => break,
        }
    }
    from
}

fn is_item(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::input_decl
            | Rule::fact_decl
            | Rule::symptom_decl
            | Rule::check_decl
            | Rule::cause_decl
            | Rule::test_decl
            | Rule::extend_decl
    )
}

/// The word or symbol at the start of `rest`.
fn found_at(rest: &str) -> &str {
    let word_len: usize = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
        .map(char::len_utf8)
        .sum();
    if word_len > 0 {
        return rest.get(..word_len).unwrap_or_default();
    }
    rest.chars()
        .next()
        .map_or("", |c| rest.get(..c.len_utf8()).unwrap_or_default())
}

fn one_of(words: &[&str]) -> String {
    match words {
        [] => String::from("something else"),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// A keyword the author probably meant, for a misspelled one.
fn suggest_keyword(found: &str, expected: &[&str]) -> Option<String> {
    if found.len() < 2 {
        return None;
    }
    let keywords = expected
        .iter()
        .flat_map(|words| words.split('`').skip(1).step_by(2))
        .filter(|keyword| keyword.chars().all(|c| c.is_ascii_alphabetic() || c == '_'));
    crate::problem::within_edits(found, keywords, 2)
        .filter(|(distance, keyword)| *distance > 0 && *distance <= keyword.len() / 2)
        .min()
        .map(|(_, keyword)| keyword.to_owned())
}

/// Grammar rules in words.
fn describe(rule: Rule) -> &'static str {
    match rule {
        Rule::EOI => "end of file",
        Rule::input_decl => "`input`",
        Rule::fact_decl => "`fact`",
        Rule::symptom_decl => "`symptom`",
        Rule::check_decl | Rule::check_block | Rule::check_ref => "`check`",
        Rule::cause_decl => "`cause`",
        Rule::test_decl => "`test`",
        Rule::extend_decl => "`extend`",
        Rule::extend_symptom => "`symptom`",
        Rule::extend_cause => "`cause`",
        Rule::name => "a name",
        Rule::field => "a field name",
        Rule::id => "an id",
        Rule::string
        | Rule::long_string
        | Rule::raw_string
        | Rule::text
        | Rule::string_inner
        | Rule::raw_inner
        | Rule::raw_hash_inner => "a string",
        Rule::number => "a number",
        Rule::ty | Rule::list_ty => "a type (`string`, `number`, `bool`, `object` or `list<…>`)",
        Rule::from_clause => "`from`",
        Rule::gather_clause => "`gather`",
        Rule::explain_clause => "`explain`",
        Rule::when_clause => "`when`",
        Rule::if_branch => "`if`",
        Rule::else_branch => "`else`",
        Rule::cause_ref => "a cause id",
        Rule::fix_block => "`fix`",
        Rule::step => "`step`",
        Rule::run_clause => "`run`",
        Rule::risk_clause => "`risk`",
        Rule::input_clause => "`input`",
        Rule::given_clause => "`given`",
        Rule::expect_clause => "`expect`",
        Rule::expect_none => "`none`",
        Rule::negation => "`not`",
        Rule::status => "`confirmed` or `possible`",
        Rule::json_object => "a JSON object",
        Rule::json_array | Rule::json_literal => "a JSON value",
        Rule::expr | Rule::postfix => "an expression",
        Rule::not_op => "`not`",
        Rule::or_op
        | Rule::and_op
        | Rule::eq
        | Rule::ne
        | Rule::le
        | Rule::ge
        | Rule::lt
        | Rule::gt
        | Rule::contains
        | Rule::starts_with
        | Rule::ends_with
        | Rule::matches
        | Rule::in_op
        | Rule::not_in
        | Rule::operator_start => "an operator",
        Rule::field_access | Rule::bracket => "`.` or `[`",
        Rule::boolean => "`true` or `false`",
        Rule::list => "a list",
        Rule::relative => "`.field`",
        _ => "something else",
    }
}

/// Removes the indentation common to every non-blank line, and the blank
/// first and last lines of a `"""` string.
pub(crate) fn dedent(raw: &str) -> String {
    let raw = raw
        .strip_prefix('\n')
        .or_else(|| raw.strip_prefix("\r\n"))
        .unwrap_or(raw);
    let lines: Vec<&str> = raw.lines().collect();
    let indent = lines
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<&str> = lines
        .iter()
        .map(|line| line.get(indent..).unwrap_or_else(|| line.trim_start()))
        .collect();
    while out.last().is_some_and(|line| line.trim().is_empty()) {
        out.pop();
    }
    out.join("\n")
}

#[cfg(test)]
mod tests;
