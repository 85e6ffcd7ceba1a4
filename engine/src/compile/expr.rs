//! AST expressions → [`CExpr`]s in the knowledge base's arena: names
//! resolved, types checked.

use foldhash::HashMap;

use kb_dsl::ast::{BinOp, Expr, ExprKind};
use kb_dsl::{Code, Loc, Problem};

use super::patterns::Checked;
use super::suggest;
use crate::expr::{CExpr, Cmp, ExprId, Exprs};
use crate::kb::{FactId, Name};
use crate::pattern::Pattern;
use crate::types::Ty;

/// Compiles expressions in one setting: a fact's derivation may read inputs,
/// a condition reads facts only.
pub(super) struct ExprCompiler<'c> {
    pub names: &'c HashMap<String, (Name, Loc)>,
    pub fact_types: &'c [Ty],
    patterns: &'c Checked,
    pub allow_inputs: bool,
    pub problems: &'c mut Vec<Problem>,
    exprs: &'c mut Exprs,
    /// The facts read, in order of first use.
    pub reads: Vec<FactId>,
    elements: Vec<Ty>,
}

type Typed = Option<(ExprId, Ty)>;

impl<'c> ExprCompiler<'c> {
    pub fn new(
        names: &'c HashMap<String, (Name, Loc)>,
        fact_types: &'c [Ty],
        patterns: &'c Checked,
        allow_inputs: bool,
        problems: &'c mut Vec<Problem>,
        exprs: &'c mut Exprs,
    ) -> Self {
        Self {
            names,
            fact_types,
            patterns,
            allow_inputs,
            problems,
            exprs,
            reads: Vec::new(),
            elements: Vec::new(),
        }
    }

    /// A condition: an expression of type `bool`.
    pub fn condition(&mut self, expr: &Expr) -> Option<ExprId> {
        let (compiled, ty) = self.expr(expr)?;
        self.expect(expr, &Ty::Bool, &ty, "a condition")?;
        Some(compiled)
    }

    /// An expression whose operands are compiled, with its type.
    fn typed(&mut self, expr: CExpr, ty: Ty) -> Typed {
        Some((self.exprs.push(expr), ty))
    }

    fn error<T>(&mut self, code: Code, loc: &Loc, message: String) -> Option<T> {
        self.problems.push(Problem::error(code, loc, message));
        None
    }

    fn expect(&mut self, expr: &Expr, want: &Ty, got: &Ty, role: &str) -> Option<()> {
        if want.accepts(got) {
            return Some(());
        }
        self.problems.push(
            Problem::error(
                Code::TypeMismatch,
                &expr.loc,
                format!(
                    "{role} must be {}, but `{}` is {got}",
                    article(want),
                    expr.loc.text()
                ),
            )
            .with_label(format!("this is {got}")),
        );
        None
    }

    /// An argument that must be a string, compiled.
    fn string(&mut self, arg: &Expr, role: &str) -> Option<ExprId> {
        let (compiled, ty) = self.expr(arg)?;
        self.expect(arg, &Ty::String, &ty, role)?;
        Some(compiled)
    }

    pub fn expr(&mut self, expr: &Expr) -> Typed {
        match &expr.kind {
            ExprKind::Bool(b) => self.typed(CExpr::Bool(*b), Ty::Bool),
            ExprKind::Number(n) => self.typed(CExpr::Number(*n), Ty::Number),
            ExprKind::String(s) => {
                let text = self.exprs.push_str(s);
                self.typed(CExpr::Text(text), Ty::String)
            }
            ExprKind::List(items) => {
                let mut compiled = Vec::with_capacity(items.len());
                let mut element: Option<Ty> = None;
                for item in items {
                    let (c, ty) = self.expr(item)?;
                    element = Some(match element {
                        Some(seen) if seen == ty => seen,
                        Some(_) => Ty::Any,
                        None => ty,
                    });
                    compiled.push(c);
                }
                let items = self.exprs.push_operands(compiled);
                self.typed(
                    CExpr::List(items),
                    Ty::List(Box::new(element.unwrap_or(Ty::Any))),
                )
            }
            ExprKind::Name(name) => self.name(expr, name),
            ExprKind::Relative(field) => {
                let Some(element) = self.elements.last().cloned() else {
                    self.problems.push(
                        Problem::error(
                            Code::RelativeOutsideElement,
                            &expr.loc,
                            format!("`{}` has no list element to refer to", expr.loc.text()),
                        )
                        .with_help("`.field` works inside a filter `list[.field == …]` or a predicate `any(list, .field == …)`"),
                    );
                    return None;
                };
                let of = self.exprs.push(CExpr::Element);
                if field.is_empty() {
                    Some((of, element))
                } else {
                    self.field(expr, of, &element, field)
                }
            }
            ExprKind::Field(of, field) => {
                let (compiled, ty) = self.expr(of)?;
                self.field(expr, compiled, &ty, field)
            }
            ExprKind::Bracket(of, inner) => self.bracket(expr, of, inner),
            ExprKind::Call(name, args) => self.call(expr, &name.name, &name.loc, args),
            ExprKind::Not(inner) => {
                let compiled = self.condition(inner)?;
                self.typed(CExpr::Not(compiled), Ty::Bool)
            }
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b),
        }
    }

    fn name(&mut self, expr: &Expr, name: &str) -> Typed {
        match self.names.get(name) {
            Some((Name::Fact(id), _)) => {
                if !self.reads.contains(id) {
                    self.reads.push(*id);
                }
                let ty = self.fact_types.get(id.0).cloned().unwrap_or(Ty::Any);
                self.typed(CExpr::Fact(*id), ty)
            }
            Some((Name::Input(id), _)) if self.allow_inputs => {
                self.typed(CExpr::Input(*id), Ty::Any)
            }
            Some((Name::Input(_), _)) => {
                self.problems.push(
                    Problem::error(
                        Code::UnknownName,
                        &expr.loc,
                        format!("`{name}` is an input; conditions test facts"),
                    )
                    .with_label("an input, not a fact")
                    .with_help(format!(
                        "declare a fact that reads it, e.g. `fact my_fact: string \"…\" {{ from {name}.… }}`, and test that"
                    )),
                );
                None
            }
            None => {
                let candidates = self
                    .names
                    .iter()
                    .filter(|(_, (kind, _))| self.allow_inputs || matches!(kind, Name::Fact(_)));
                // Where inputs are read, the name may be an input declared
                // in a file left out (`input pod` is in the bundled pod.kb).
                let (what, declare) = match self.allow_inputs {
                    true => (
                        "input or fact",
                        format!(
                            "declare it: `input {name} \"…\"` for a document kb is given, or `fact {name}: string \"…\" {{ from … }}`"
                        ),
                    ),
                    false => (
                        "fact",
                        format!("declare it: `fact {name}: string \"…\" {{ from … }}`"),
                    ),
                };
                let mut problem = Problem::error(
                    Code::UnknownName,
                    &expr.loc,
                    format!("unknown {what} `{name}`"),
                )
                .with_label("not declared");
                if let Some(similar) = suggest(name, candidates.map(|(n, _)| n.as_str())) {
                    problem = problem.with_help(format!("did you mean `{similar}`?"));
                } else {
                    problem = problem.with_help(declare);
                }
                self.problems.push(problem);
                None
            }
        }
    }

    fn field(&mut self, expr: &Expr, of: ExprId, ty: &Ty, field: &str) -> Typed {
        let result = match ty {
            Ty::Any => Ty::Any,
            Ty::Object => Ty::Any,
            Ty::List(_) => Ty::List(Box::new(Ty::Any)),
            other => {
                return self.error(
                    Code::TypeMismatch,
                    &expr.loc,
                    format!(
                        "`{}` reads field `{field}` of {}, which has no fields",
                        expr.loc.text(),
                        article(other)
                    ),
                );
            }
        };
        let name = self.exprs.push_str(field);
        Some((self.exprs.push_field(of, name), result))
    }

    fn bracket(&mut self, expr: &Expr, of: &Expr, inner: &Expr) -> Typed {
        let (compiled_of, of_ty) = self.expr(of)?;
        if let ExprKind::String(key) = &inner.kind {
            return self.field(expr, compiled_of, &of_ty, key);
        }
        let Some(element) = of_ty.element() else {
            return self.error(
                Code::TypeMismatch,
                &of.loc,
                format!(
                    "`{}` is {of_ty}, not a list to index or filter",
                    of.loc.text()
                ),
            );
        };
        self.elements.push(element.clone());
        let compiled_inner = self.expr(inner);
        self.elements.pop();
        let (compiled_inner, inner_ty) = compiled_inner?;
        match inner_ty {
            Ty::Number => self.typed(CExpr::Index(compiled_of, compiled_inner), element),
            Ty::Bool | Ty::Any => self.typed(CExpr::Filter(compiled_of, compiled_inner), of_ty),
            other => {
                self.error(
                    Code::TypeMismatch,
                    &inner.loc,
                    format!("a bracket holds a key (a string), an index (a number) or a condition, not {other}"),
                )
            }
        }
    }

    fn call(&mut self, expr: &Expr, name: &str, name_loc: &Loc, args: &[Expr]) -> Typed {
        let arity = |n: usize| args.len() == n;
        let ok_arity = match name {
            "exists" | "first" | "last" | "len" | "lower" | "number" => arity(1),
            "any" | "all" => arity(2),
            "count" => arity(1) || arity(2),
            "coalesce" | "concat" => !args.is_empty(),
            "capture" | "seconds_between" => arity(2),
            _ => {
                let mut problem = Problem::error(
                    Code::UnknownFunction,
                    name_loc,
                    format!("unknown function `{name}`"),
                )
                .with_label("no such function");
                if let Some(similar) = suggest(name, FUNCTIONS.iter().copied()) {
                    problem = problem.with_help(format!("did you mean `{similar}`?"));
                } else {
                    problem =
                        problem.with_help(format!("the functions are {}", FUNCTIONS.join(", ")));
                }
                self.problems.push(problem);
                return None;
            }
        };
        if !ok_arity {
            return self.error(
                Code::BadArguments,
                &expr.loc,
                format!("`{name}` takes {}, not {}", signature(name), args.len()),
            );
        }
        if name == "coalesce" {
            return self.coalesce(args);
        }
        if name == "concat" {
            return self.concat(args);
        }
        if let ("capture", [text, pattern]) = (name, args) {
            let compiled = self.string(text, "the first argument of `capture`")?;
            let regex = self.regex(pattern, "`capture`")?;
            let regex = self.exprs.push_pattern(regex);
            return self.typed(CExpr::Capture(compiled, regex), Ty::String);
        }
        if let ("seconds_between", [from, to]) = (name, args) {
            let from = self.string(from, "the first argument of `seconds_between`")?;
            let to = self.string(to, "the second argument of `seconds_between`")?;
            return self.typed(CExpr::SecondsBetween(from, to), Ty::Number);
        }
        let mut args = args.iter();
        let first = args.next()?;
        let (list, list_ty) = self.expr(first)?;
        match name {
            "exists" => self.typed(CExpr::Exists(list), Ty::Bool),
            "len" => self.typed(CExpr::Len(list), Ty::Number),
            "number" => self.typed(CExpr::ToNumber(list), Ty::Number),
            "lower" => {
                self.expect(first, &Ty::String, &list_ty, "the argument of `lower`")?;
                self.typed(CExpr::Lower(list), Ty::String)
            }
            "first" | "last" => {
                let element = self.list_element(first, &list_ty)?;
                let call = if name == "first" {
                    CExpr::First(list)
                } else {
                    CExpr::Last(list)
                };
                self.typed(call, element)
            }
            _ => {
                let element = self.list_element(first, &list_ty)?;
                let predicate = match args.next() {
                    Some(predicate) => {
                        self.elements.push(element);
                        let compiled = self.condition(predicate);
                        self.elements.pop();
                        Some(compiled?)
                    }
                    None => None,
                };
                match (name, predicate) {
                    ("count", predicate) => self.typed(CExpr::Count(list, predicate), Ty::Number),
                    ("any", Some(predicate)) => self.typed(CExpr::Any(list, predicate), Ty::Bool),
                    (_, Some(predicate)) => self.typed(CExpr::All(list, predicate), Ty::Bool),
                    (_, None) => None,
                }
            }
        }
    }

    /// `coalesce(a, b, …)`: every argument of one type, the first that holds a value.
    fn coalesce(&mut self, args: &[Expr]) -> Typed {
        let mut compiled = Vec::with_capacity(args.len());
        let mut result = Ty::Any;
        for arg in args {
            let (c, ty) = self.expr(arg)?;
            if !result.accepts(&ty) {
                return self.error(
                    Code::TypeMismatch,
                    &arg.loc,
                    format!("the arguments of `coalesce` must have one type, but `{}` is {ty}, not {result}", arg.loc.text()),
                );
            }
            if result == Ty::Any {
                result = ty;
            }
            compiled.push(c);
        }
        let options = self.exprs.push_operands(compiled);
        self.typed(CExpr::Coalesce(options), result)
    }

    /// `concat(a, b, …)`: lists of one element type, one after the other.
    fn concat(&mut self, args: &[Expr]) -> Typed {
        let mut compiled = Vec::with_capacity(args.len());
        let mut element = Ty::Any;
        for arg in args {
            let (c, ty) = self.expr(arg)?;
            let inner = self.list_element(arg, &ty)?;
            if !element.accepts(&inner) {
                return self.error(
                    Code::TypeMismatch,
                    &arg.loc,
                    format!("the lists of `concat` must hold one type, but `{}` holds {inner}, not {element}", arg.loc.text()),
                );
            }
            if element == Ty::Any {
                element = inner;
            }
            compiled.push(c);
        }
        let lists = self.exprs.push_operands(compiled);
        self.typed(CExpr::Concat(lists), Ty::List(Box::new(element)))
    }

    /// A regular expression written as a string literal.
    fn regex(&mut self, pattern: &Expr, role: &str) -> Option<Pattern> {
        let ExprKind::String(source) = &pattern.kind else {
            return self.error(
                Code::BadRegex,
                &pattern.loc,
                format!("{role} takes a regular expression written as a string literal"),
            );
        };
        let checked = match self.patterns.get(pattern) {
            Some(checked) => checked.clone(),
            None => Pattern::check(source),
        };
        match checked {
            Ok(regex) => Some(regex),
            Err(error) => {
                self.problems.push(
                    Problem::error(Code::BadRegex, &pattern.loc, String::from("invalid regular expression"))
                        .with_label(first_line(&error))
                        .with_help("the syntax is that of Rust's `regex` crate; it has no look-around or backreferences"),
                );
                None
            }
        }
    }

    fn list_element(&mut self, expr: &Expr, ty: &Ty) -> Option<Ty> {
        match ty.element() {
            Some(element) => Some(element),
            None => self.error(
                Code::TypeMismatch,
                &expr.loc,
                format!("`{}` is {ty}, not a list", expr.loc.text()),
            ),
        }
    }

    fn binary(&mut self, op: BinOp, a: &Expr, b: &Expr) -> Typed {
        if matches!(op, BinOp::And | BinOp::Or) {
            let left = self.condition(a);
            let right = self.condition(b);
            let (left, right) = (left?, right?);
            let compiled = if op == BinOp::And {
                CExpr::And(left, right)
            } else {
                CExpr::Or(left, right)
            };
            return self.typed(compiled, Ty::Bool);
        }
        if op == BinOp::Matches {
            let (left, left_ty) = self.expr(a)?;
            self.expect(a, &Ty::String, &left_ty, "the left side of `matches`")?;
            let regex = self.regex(b, "`matches`")?;
            let regex = self.exprs.push_pattern(regex);
            return self.typed(CExpr::Matches(left, regex), Ty::Bool);
        }
        let left = self.expr(a);
        let right = self.expr(b);
        let ((l, left_ty), (r, right_ty)) = (left?, right?);
        let ok = match op {
            BinOp::Eq | BinOp::Ne => left_ty.accepts(&right_ty),
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let ordered = |t: &Ty| matches!(t, Ty::Number | Ty::String | Ty::Any);
                ordered(&left_ty) && ordered(&right_ty) && left_ty.accepts(&right_ty)
            }
            BinOp::StartsWith | BinOp::EndsWith => {
                Ty::String.accepts(&left_ty) && Ty::String.accepts(&right_ty)
            }
            BinOp::Contains => contains_ok(&left_ty, &right_ty),
            BinOp::In | BinOp::NotIn => contains_ok(&right_ty, &left_ty),
            BinOp::And | BinOp::Or | BinOp::Matches => true,
        };
        if !ok {
            let whole = a.loc.with_offsets(a.loc.start(), b.loc.end());
            self.problems.push(
                Problem::error(
                    Code::TypeMismatch,
                    &whole,
                    format!("`{}` cannot apply to {left_ty} and {right_ty}", op.symbol()),
                )
                .with_label(format!("{left_ty} {} {right_ty}", op.symbol())),
            );
            return None;
        }
        let compiled = match op {
            BinOp::Eq => CExpr::Compare(Cmp::Eq, l, r),
            BinOp::Ne => CExpr::Compare(Cmp::Ne, l, r),
            BinOp::Lt => CExpr::Compare(Cmp::Lt, l, r),
            BinOp::Le => CExpr::Compare(Cmp::Le, l, r),
            BinOp::Gt => CExpr::Compare(Cmp::Gt, l, r),
            BinOp::Ge => CExpr::Compare(Cmp::Ge, l, r),
            BinOp::Contains => CExpr::Contains(l, r),
            BinOp::StartsWith => CExpr::StartsWith(l, r),
            BinOp::EndsWith => CExpr::EndsWith(l, r),
            BinOp::In => CExpr::In(l, r),
            BinOp::NotIn => CExpr::Not(self.exprs.push(CExpr::In(l, r))),
            BinOp::And | BinOp::Or | BinOp::Matches => return None,
        };
        self.typed(compiled, Ty::Bool)
    }
}

/// The functions expressions may call.
pub(super) const FUNCTIONS: &[&str] = &[
    "all",
    "any",
    "capture",
    "coalesce",
    "concat",
    "count",
    "exists",
    "first",
    "last",
    "len",
    "lower",
    "number",
    "seconds_between",
];

fn signature(name: &str) -> &'static str {
    match name {
        "any" | "all" => "a list and a condition",
        "count" => "a list, and optionally a condition",
        "coalesce" | "concat" => "one or more arguments",
        "capture" => "a string and a regular expression",
        "seconds_between" => "two times (strings)",
        _ => "one argument",
    }
}

fn contains_ok(haystack: &Ty, needle: &Ty) -> bool {
    match haystack {
        Ty::Any => true,
        Ty::String => Ty::String.accepts(needle),
        Ty::List(element) => element.accepts(needle),
        _ => false,
    }
}

fn article(ty: &Ty) -> String {
    match ty {
        Ty::Any => String::from("any value"),
        Ty::Object | Ty::List(_) => format!("an {ty}").replace("an list", "a list"),
        _ => format!("a {ty}"),
    }
}

fn first_line(text: &str) -> String {
    text.lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or(text)
        .trim()
        .to_owned()
}
