//! `kb test`: run a knowledge base's rule tests.

use std::io::Write;

use crate::exit::Exit;
use crate::knowledge::Loaded;
use crate::rule_tests;

/// Arguments of `kb test`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The knowledge base folder; the bundled one when not given.
    pub dir: Option<std::path::PathBuf>,
    /// Run only the tests whose name contains this text.
    #[arg(long)]
    pub filter: Option<String>,
}

/// Runs `kb test`.
pub fn run(args: &Args, loaded: &Loaded) -> Exit {
    let outcomes = rule_tests::run(loaded, args.filter.as_deref());
    let mut out = std::io::stdout().lock();
    for outcome in &outcomes {
        let verdict = if outcome.passed() { "ok" } else { "FAILED" };
        let _ = writeln!(out, "test {} ... {verdict}", outcome.name);
    }
    let failed: Vec<_> = outcomes.iter().filter(|o| !o.passed()).collect();
    if !failed.is_empty() {
        let _ = writeln!(out, "\nfailures:");
        for outcome in &failed {
            let _ = writeln!(out, "\n---- {} ({}) ----", outcome.name, outcome.position);
            for failure in &outcome.failures {
                let _ = writeln!(out, "  {failure}");
            }
        }
    }
    let _ = writeln!(
        out,
        "\n{} passed, {} failed",
        outcomes.len() - failed.len(),
        failed.len()
    );
    if failed.is_empty() {
        Exit::Ok
    } else {
        Exit::TestsFailed
    }
}
