//! The regular expressions of the rules, checked all at once on every core
//! before expressions are compiled: checking one (its syntax, and the size
//! of the program it compiles to) costs as much as compiling all the rest of
//! a condition, and each is independent of the others.

use std::collections::HashMap;

use kb_dsl::ast::{BinOp, Expr, ExprKind};
use rayon::prelude::*;

use crate::pattern::Pattern;

/// Each regular expression written as a literal where one is expected, by
/// the address of its literal in the rules, with what checking it found.
#[derive(Default)]
pub(super) struct Checked(HashMap<*const Expr, Result<Pattern, String>>);

impl Checked {
    /// Checks the regular expressions of `exprs` and what they contain.
    pub fn of<'r>(exprs: impl Iterator<Item = &'r Expr>) -> Self {
        let mut literals = Vec::new();
        for expr in exprs {
            literals_in(expr, &mut literals);
        }
        let results: Vec<_> = literals
            .par_iter()
            .map(|(_, source)| Pattern::check(source))
            .collect();
        Self(
            literals
                .iter()
                .map(|(expr, _)| std::ptr::from_ref(*expr))
                .zip(results)
                .collect(),
        )
    }

    /// What checking the literal `expr` found, if it was checked.
    pub fn get(&self, expr: &Expr) -> Option<&Result<Pattern, String>> {
        self.0.get(&std::ptr::from_ref(expr))
    }
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
