//! The kb engine: compiles rules into a decision graph and evaluates it.
//!
//! ```
//! let rules = kb_dsl::parse(r#"
//! input pod "The Pod"
//! fact phase: string "The pod's phase" { from pod.status.phase }
//! symptom pod-pending "Pod stuck in Pending" {
//!   when phase == "Pending"
//!   check "Is it really pending?" { if phase == "Pending" => pending.any }
//! }
//! cause pending.any "The pod is pending" {
//!   fix "Look at it" { step "Describe it" run "kubectl describe pod" }
//! }
//! "#, "example.kb").unwrap();
//! let kb = kb_engine::compile(&rules).unwrap();
//! let document = serde_json::json!({"pod": {"status": {"phase": "Pending"}}});
//! let diagnosis = kb.evaluate(&kb.bind(&document.into()), kb_engine::Lang::En);
//! assert_eq!(diagnosis.causes[0].id, "pending.any");
//! ```
//!
//! Data flows one way: [`compile`] turns a [`kb_dsl::ast::RuleSet`] into a
//! [`KnowledgeBase`]; [`KnowledgeBase::bind`] reads an input document (a
//! [`json::Json`], borrowed from the text it was parsed from where it can be);
//! [`KnowledgeBase::evaluate`] returns a [`Diagnosis`].

mod compile;
mod consistency;
pub mod diagnosis;
mod eval;
mod expr;
pub mod json;
pub mod kb;
mod lazy;
mod misread;
pub mod needs;
mod pattern;
mod snapshot;
mod sorted;
mod template;
pub mod text;
pub mod types;
pub mod value;

pub use compile::compile;
pub use diagnosis::Diagnosis;
pub use eval::{Input, Trace};
pub use kb::{KnowledgeBase, Lang};
pub use lazy::Lazy;
pub use snapshot::{Parts, SnapshotError};

#[cfg(test)]
mod tests;
