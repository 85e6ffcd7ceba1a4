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
    /// Also list the causes no test confirms and the checks no test reaches.
    #[arg(long, conflicts_with = "filter")]
    pub coverage: bool,
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
    if args.coverage {
        write_coverage(&mut out, &rule_tests::Coverage::of(&loaded.kb, &outcomes));
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

fn write_coverage(out: &mut dyn Write, coverage: &rule_tests::Coverage) {
    let percent = |untested: usize, total: usize| {
        (100 * total.saturating_sub(untested))
            .checked_div(total)
            .unwrap_or(100)
    };
    let _ = writeln!(
        out,
        "\ncoverage: causes {}/{} ({}%), checks {}/{} ({}%)",
        coverage.causes - coverage.untested_causes.len(),
        coverage.causes,
        percent(coverage.untested_causes.len(), coverage.causes),
        coverage.checks - coverage.untested_checks.len(),
        coverage.checks,
        percent(coverage.untested_checks.len(), coverage.checks),
    );
    for cause in &coverage.untested_causes {
        let _ = writeln!(out, "  no test confirms cause {cause}");
    }
    for (id, title) in &coverage.untested_checks {
        let _ = writeln!(out, "  no test reaches check {id} ({title})");
    }
}
