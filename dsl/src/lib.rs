//! The kb rule language: text in, a syntax tree with source spans out.
//!
//! ```
//! let rules = kb_dsl::parse(r#"
//! fact phase: string "The pod's lifecycle phase" {
//!   from pod.status.phase
//! }
//! "#, "phase.kb").map_err(|e| e.problems).unwrap();
//! assert_eq!(rules.facts().next().unwrap().name.name, "phase");
//! ```
//!
//! [`parse`] is the whole entry point. Problems come back all at once, each a
//! located, coded [`Problem`] that renders with miette.

// pest is used without its `std` feature, which would probe the stack on
// every rule it enters: the parser bounds nesting itself. The code
// pest_derive generates then names `alloc`.
extern crate alloc;

pub mod ast;
pub mod format;
mod parse;
pub mod problem;
pub mod source;

pub use format::format;
pub use parse::{Broken, MAX_EXPR_DEPTH, MAX_NESTING, ParseErrors, parse, parse_source};
pub use problem::{Code, Problem, Severity};
pub use source::{Loc, MAX_SOURCE_BYTES, Source};
