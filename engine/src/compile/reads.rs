//! Which parts of each input the facts read: the paths of every derivation,
//! followed through facts, filters and predicates.

use crate::expr::{CExpr, ExprId, Exprs};
use crate::kb::{FactId, FactInfo, InputId};
use crate::needs::Needs;

/// Where a value comes from: an input and the fields below it.
type Origin = (InputId, Vec<Box<str>>);

/// The needs of every input, by `InputId`. `shown` tells, by `FactId`,
/// the facts whose values a diagnosis may show: those read by a condition
/// or a template.
pub(super) fn input_needs(
    facts: &[FactInfo],
    exprs: &Exprs,
    inputs: usize,
    shown: &[bool],
) -> Vec<Needs> {
    let mut walker = Walker {
        facts,
        exprs,
        shown,
        origins: vec![None; facts.len()],
        needs: vec![Needs::default(); inputs],
        elements: Vec::new(),
    };
    for id in 0..facts.len() {
        walker.fact(FactId(id));
    }
    walker.needs
}

struct Walker<'a> {
    facts: &'a [FactInfo],
    exprs: &'a Exprs,
    shown: &'a [bool],
    /// Where each fact's value comes from, once walked, by `FactId`.
    origins: Vec<Option<Vec<Origin>>>,
    needs: Vec<Needs>,
    /// The origins of the list elements filters and predicates look at.
    elements: Vec<Vec<Origin>>,
}

impl Walker<'_> {
    /// A fact's origins. A value that may be shown (as evidence, in a
    /// command) is shown whole, so what it comes from is needed whole (a
    /// scalar is whole anyway); a fact read only by other facts' derivations
    /// needs no more than they read of it.
    fn fact(&mut self, id: FactId) -> Vec<Origin> {
        let Some(slot) = self.origins.get_mut(id.0) else {
            return Vec::new();
        };
        if let Some(known) = slot {
            return known.clone();
        }
        // Compiled facts do not loop; the entry guards against it all the same.
        *slot = Some(Vec::new());
        let Some(fact) = self.facts.get(id.0) else {
            return Vec::new();
        };
        let origins = match fact.from {
            Some(from) => {
                let outer = std::mem::take(&mut self.elements);
                let origins = self.origins(from);
                self.elements = outer;
                origins
            }
            None => Vec::new(),
        };
        if self.shown.get(id.0).copied().unwrap_or(true) {
            self.whole(&origins);
        }
        if let Some(slot) = self.origins.get_mut(id.0) {
            *slot = Some(origins.clone());
        }
        origins
    }

    fn whole(&mut self, origins: &[Origin]) {
        for (input, path) in origins {
            if let Some(needs) = self.needs.get_mut(input.0) {
                needs.add_whole(path);
            }
        }
    }

    /// Walks an expression of which only the presence or the length counts.
    fn presence(&mut self, expr: ExprId) {
        for (input, path) in self.origins(expr) {
            if let Some(needs) = self.needs.get_mut(input.0) {
                needs.add_present(&path);
            }
        }
    }

    /// Walks an expression whose value is used as it is.
    fn consume(&mut self, expr: ExprId) {
        let origins = self.origins(expr);
        self.whole(&origins);
    }

    /// Walks a predicate over the elements of a list.
    fn predicate(&mut self, list: Vec<Origin>, predicate: ExprId) {
        self.elements.push(list);
        self.consume(predicate);
        self.elements.pop();
    }

    /// Where an expression's value comes from; its operands are consumed.
    fn origins(&mut self, expr: ExprId) -> Vec<Origin> {
        let exprs = self.exprs;
        let Some(&expr) = exprs.get(expr) else {
            return Vec::new();
        };
        match expr {
            CExpr::Input(id) => vec![(id, Vec::new())],
            CExpr::Fact(id) => self.fact(id),
            CExpr::Element => self.elements.last().cloned().unwrap_or_default(),
            CExpr::Path(of, names) => self
                .origins(of)
                .into_iter()
                .map(|(input, mut path)| {
                    path.extend(
                        exprs
                            .names(names)
                            .iter()
                            .map(|&name| exprs.str(name).into()),
                    );
                    (input, path)
                })
                .collect(),
            CExpr::Index(of, index) => {
                self.consume(index);
                self.origins(of)
            }
            CExpr::Filter(of, predicate) => {
                let list = self.origins(of);
                self.predicate(list.clone(), predicate);
                list
            }
            CExpr::First(list) | CExpr::Last(list) => self.origins(list),
            CExpr::Coalesce(options) | CExpr::Concat(options) => exprs
                .operands(options)
                .iter()
                .flat_map(|&option| self.origins(option))
                .collect(),
            CExpr::Any(list, predicate)
            | CExpr::All(list, predicate)
            | CExpr::Count(list, Some(predicate)) => {
                let list = self.origins(list);
                self.predicate(list, predicate);
                Vec::new()
            }
            CExpr::List(items) => {
                for &item in exprs.operands(items) {
                    self.consume(item);
                }
                Vec::new()
            }
            CExpr::Count(e, None) | CExpr::Exists(e) => {
                self.presence(e);
                Vec::new()
            }
            CExpr::Not(e)
            | CExpr::Matches(e, _)
            | CExpr::Capture(e, _)
            | CExpr::Len(e)
            | CExpr::Lower(e)
            | CExpr::ToNumber(e) => {
                self.consume(e);
                Vec::new()
            }
            CExpr::And(a, b)
            | CExpr::Or(a, b)
            | CExpr::Compare(_, a, b)
            | CExpr::Contains(a, b)
            | CExpr::StartsWith(a, b)
            | CExpr::EndsWith(a, b)
            | CExpr::In(a, b)
            | CExpr::SecondsBetween(a, b) => {
                self.consume(a);
                self.consume(b);
                Vec::new()
            }
            CExpr::Bool(_) | CExpr::Number(_) | CExpr::Text(_) => Vec::new(),
        }
    }
}
