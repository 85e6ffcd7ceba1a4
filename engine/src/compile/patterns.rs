//! The regular expressions of the rules, checked all at once on every core
//! while the rest compiles: checking one (its syntax, and the size of the
//! program it compiles to) costs as much as compiling all the rest of a
//! condition, and each is independent of the others.

use foldhash::HashMap;

use kb_dsl::ast::{BinOp, Check, Expr, ExprKind, RuleSet, Target};
use rayon::prelude::*;

use crate::pattern::Pattern;

/// Each regular expression written as a literal where one is expected, by
/// the address of its literal in the rules, with what checking it found.
#[derive(Default)]
pub(super) struct Checked(HashMap<usize, Result<Pattern, String>>);

impl Checked {
    /// Checks the regular expressions `literals` gives, each distinct one
    /// once: rules repeat the messages they look for, and the literals
    /// written alike share what checking found.
    pub fn of(literals: &[(&Expr, &str)]) -> Self {
        let (mut index, mut sources) = (HashMap::default(), Vec::new());
        for (_, source) in literals {
            index.entry(*source).or_insert_with(|| {
                sources.push(*source);
                sources.len() - 1
            });
        }
        let results: Vec<_> = sources
            .par_iter()
            .map(|source| Pattern::check(source))
            .collect();
        Self(
            literals
                .iter()
                .filter_map(|(expr, source)| {
                    let result = results.get(*index.get(source)?)?;
                    Some((address(expr), result.clone()))
                })
                .collect(),
        )
    }

    /// The regular expressions `literals` gives, each taken to be valid
    /// while they are checked apart.
    pub fn assumed(literals: &[(&Expr, &str)]) -> Self {
        Self(
            literals
                .iter()
                .map(|(expr, source)| (address(expr), Ok(Pattern::unchecked(source))))
                .collect(),
        )
    }

    /// Whether every one is valid.
    pub fn all_valid(&self) -> bool {
        self.0.values().all(Result::is_ok)
    }

    /// What checking the literal `expr` found, if it was checked.
    pub fn get(&self, expr: &Expr) -> Option<&Result<Pattern, String>> {
        self.0.get(&address(expr))
    }
}

/// Where a literal is in the rules: it names the literal, and unlike a
/// pointer, may be sent to the thread that checks it.
fn address(expr: &Expr) -> usize {
    std::ptr::from_ref(expr).addr()
}

/// The regular expressions written as literals in the derivations of
/// facts, the conditions of symptoms and every condition of their checks.
pub(super) fn literals(rules: &RuleSet) -> Vec<(&Expr, &str)> {
    fn in_check<'r>(check: &'r Check, found: &mut Vec<(&'r Expr, &'r str)>) {
        for branch in &check.branches {
            if let Some(condition) = &branch.condition {
                literals_in(condition, found);
            }
            if let Target::Check(nested) = &branch.target {
                in_check(nested, found);
            }
        }
    }
    let mut found = Vec::new();
    for derivation in rules.facts().filter_map(|fact| fact.from.as_ref()) {
        literals_in(derivation, &mut found);
    }
    for symptom in rules.symptoms() {
        if let Some(when) = &symptom.when {
            literals_in(when, &mut found);
        }
        for check in &symptom.checks {
            in_check(check, &mut found);
        }
    }
    for check in rules.checks() {
        in_check(check, &mut found);
    }
    found
}

/// The string literals that `matches` and `capture` take as regular
/// expressions, in `expr`.
fn literals_in<'r>(expr: &'r Expr, found: &mut Vec<(&'r Expr, &'r str)>) {
    let regex = match &expr.kind {
        ExprKind::Binary(BinOp::Matches, _, pattern) => Some(&**pattern),
        ExprKind::Call(name, args) if name.name == "capture" => args.get(1),
        _ => None,
    };
    if let Some(
        pattern @ Expr {
            kind: ExprKind::String(source),
            ..
        },
    ) = regex
    {
        found.push((pattern, source));
    }
    match &expr.kind {
        ExprKind::List(items) | ExprKind::Call(_, items) => {
            for item in items {
                literals_in(item, found);
            }
        }
        ExprKind::Field(of, _) | ExprKind::Not(of) => literals_in(of, found),
        ExprKind::Bracket(a, b) | ExprKind::Binary(_, a, b) => {
            literals_in(a, found);
            literals_in(b, found);
        }
        ExprKind::Bool(_)
        | ExprKind::Number(_)
        | ExprKind::String(_)
        | ExprKind::Name(_)
        | ExprKind::Relative(_) => {}
    }
}
