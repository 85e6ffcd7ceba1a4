//! Exit codes: part of the command line contract (see README).

use std::process::ExitCode;

/// How a `kb` command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// Success: a symptom matched, the rules are valid, the tests passed.
    Ok = 0,
    /// `kb eval`: no symptom matched any input.
    NoMatch = 1,
    /// The input (or the command line) is invalid.
    BadInput = 2,
    /// The knowledge base has errors.
    BadRules = 3,
    /// `kb test`: a rule test failed.
    TestsFailed = 4,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit as u8)
    }
}
