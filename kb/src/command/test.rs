//! `kb test`: run a knowledge base's rule tests.

use std::io::Write;

use crate::exit::Exit;
use crate::knowledge::Loaded;
use crate::rule_tests;

/// Arguments of `kb test`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The knowledge base: a folder, or one `.kb` file; the bundled one when not given.
    pub dir: Option<std::path::PathBuf>,
    /// Run only the tests whose name contains this text.
    #[arg(long)]
    pub filter: Option<String>,
    /// Also list the causes no test confirms and the checks no test reaches.
    #[arg(long, conflicts_with = "filter")]
    pub coverage: bool,
    /// Also write the results as JUnit XML to this file, for CI: one
    /// testsuite per rule file, one testcase per test.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<std::path::PathBuf>,
}

/// Runs `kb test`.
pub fn run(args: &Args, loaded: &Loaded) -> Exit {
    if args
        .junit
        .as_ref()
        .is_some_and(|path| path.as_os_str() == "-")
    {
        // Not a file named `-`, and not the standard output, which the report takes.
        crate::report::input_error(
            "`--junit` writes a file, and standard output carries the report: give a path",
        );
        return Exit::BadInput;
    }
    let outcomes = match rule_tests::run(loaded, args.filter.as_deref()) {
        Ok(outcomes) => outcomes,
        Err(error) => {
            crate::report::load_error(&error.into());
            return Exit::BadRules;
        }
    };
    let all = loaded.kb.tests().map_or(0, <[_]>::len);
    if let Some(filter) = &args.filter
        && outcomes.is_empty()
    {
        // A filter mistyped in CI would otherwise pass with nothing run.
        crate::report::input_error(&format!(
            "no test name contains `{filter}`, of {}",
            crate::report::counted(all, "test")
        ));
        return Exit::BadInput;
    }
    let failed = outcomes.iter().filter(|o| !o.passed()).count();
    let mut exit = match failed {
        0 => Exit::Ok,
        _ => Exit::TestsFailed,
    };
    if let Some(path) = &args.junit {
        let name = loaded
            .manifest
            .as_ref()
            .map_or_else(|| String::from("kb"), |m| m.name.clone());
        let written = junit(&name, &outcomes)
            .to_string()
            .map_err(|e| e.to_string())
            .and_then(|xml| std::fs::write(path, xml).map_err(|e| e.to_string()));
        if let Err(error) = written {
            crate::report::input_error(&format!("cannot write {}: {error}", path.display()));
            exit = Exit::BadInput;
        }
    }
    let coverage = args
        .coverage
        .then(|| rule_tests::Coverage::of(&loaded.kb, &outcomes));
    let mut out = std::io::stdout().lock();
    let filtered_out = all - outcomes.len();
    let shown =
        show(&mut out, &outcomes, filtered_out, coverage.as_ref()).and_then(|()| out.flush());
    crate::output::written(shown, exit)
}

/// Writes each test's verdict, the failures' reports, the coverage when
/// asked for, and the count of those that passed, failed, and were left
/// out by `--filter`.
fn show(
    out: &mut impl Write,
    outcomes: &[rule_tests::Outcome],
    filtered_out: usize,
    coverage: Option<&rule_tests::Coverage>,
) -> std::io::Result<()> {
    for outcome in outcomes {
        let verdict = if outcome.passed() { "ok" } else { "FAILED" };
        writeln!(out, "test {} ... {verdict}", outcome.name)?;
    }
    let failed: Vec<_> = outcomes.iter().filter(|o| !o.passed()).collect();
    if !failed.is_empty() {
        writeln!(out, "\nfailures:")?;
        for outcome in &failed {
            writeln!(out, "\n---- {} ({}) ----", outcome.name, outcome.position)?;
            for line in outcome.report_lines() {
                writeln!(out, "  {line}")?;
            }
        }
    }
    if let Some(coverage) = coverage {
        write_coverage(out, coverage)?;
    }
    let filtered_out = match filtered_out {
        0 => String::new(),
        n => format!(", {n} filtered out"),
    };
    writeln!(
        out,
        "\n{} passed, {} failed{filtered_out}",
        outcomes.len() - failed.len(),
        failed.len()
    )
}

fn write_coverage(out: &mut impl Write, coverage: &rule_tests::Coverage) -> std::io::Result<()> {
    let percent = |untested: usize, total: usize| {
        (100 * total.saturating_sub(untested))
            .checked_div(total)
            .unwrap_or(100)
    };
    writeln!(
        out,
        "\ncoverage: causes {}/{} ({}%), checks {}/{} ({}%)",
        coverage.causes - coverage.untested_causes.len(),
        coverage.causes,
        percent(coverage.untested_causes.len(), coverage.causes),
        coverage.checks - coverage.untested_checks.len(),
        coverage.checks,
        percent(coverage.untested_checks.len(), coverage.checks),
    )?;
    for cause in &coverage.untested_causes {
        writeln!(out, "  no test confirms cause {cause}")?;
    }
    for (id, title) in &coverage.untested_checks {
        writeln!(out, "  no test reaches check {id} ({title})")?;
    }
    Ok(())
}

/// The results as a JUnit report: one testsuite per rule file, in the order
/// the files come, one testcase per test, a failure with every line of
/// [`rule_tests::Outcome::report_lines`].
pub fn junit(name: &str, outcomes: &[rule_tests::Outcome]) -> quick_junit::Report {
    use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};
    let mut suites: Vec<TestSuite> = Vec::new();
    for outcome in outcomes {
        let status = if outcome.passed() {
            TestCaseStatus::success()
        } else {
            let lines = outcome.report_lines();
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status
                .set_message(lines.first().map_or("failed", String::as_str))
                .set_type("kb test")
                .set_description(format!("{}\n{}", outcome.position, lines.join("\n")));
            status
        };
        let mut case = TestCase::new(outcome.name.as_str(), status);
        case.set_classname(outcome.file.as_str());
        match suites.iter_mut().find(|s| s.name.as_str() == outcome.file) {
            Some(suite) => {
                suite.add_test_case(case);
            }
            None => {
                let mut suite = TestSuite::new(outcome.file.as_str());
                suite.add_test_case(case);
                suites.push(suite);
            }
        }
    }
    let mut report = quick_junit::Report::new(name);
    report.add_test_suites(suites);
    report
}
