//! `kb`: diagnose Kubernetes Pod failures from what kubectl prints, with a
//! knowledge base of decision-tree rules.
//!
//! The binary is a thin layer over [`kb_dsl`] and [`kb_engine`]: it finds the
//! knowledge base ([`knowledge`]), turns kubectl output into documents
//! ([`adapter`], [`read`]), and writes results ([`output`]).

pub mod adapter;
pub mod cache;
pub mod command;
pub mod deferred;
pub mod exit;
pub mod knowledge;
pub mod output;
pub mod read;
pub mod report;
pub mod rule_tests;
pub mod yaml;

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use deferred::Deferred;
use exit::Exit;
use knowledge::Loaded;

/// Diagnose Kubernetes Pod failures from kubectl output.
///
/// kb reads what `kubectl get … -o json` (or `-o yaml`) prints (a pod, its
/// events, its node), says which symptom this is, the confirmed cause with its
/// evidence, the fix with commands filled in, and the next check to run when
/// facts are missing.
#[derive(Debug, Parser)]
#[command(name = "kb", version, about, long_about, after_help = EXIT_CODES)]
pub struct Cli {
    /// Use the knowledge base in this folder (`.kb` files and an optional
    /// `kb.toml`), or this one `.kb` file, instead of the bundled Kubernetes
    /// Pod one. Compiled, it is kept for the next run on the same files (in
    /// `KB_CACHE_DIR`, by default the user's cache folder; set empty, nothing
    /// is kept).
    #[arg(long, global = true, value_name = "DIR")]
    pub kb: Option<PathBuf>,
    /// Language of titles, explanations and fixes [default: en; for `docs`, both].
    #[arg(long, global = true, value_enum)]
    pub lang: Option<LangArg>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

const EXIT_CODES: &str = "Exit codes: 0 success, 1 no symptom matched, 2 bad input or usage, or \
output that could not be written, 3 the knowledge base has errors, 4 a rule test failed.";

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Diagnose an input: which symptom, the confirmed cause, the fix, the next check.
    Eval(Deferred<command::eval::Args>),
    /// Validate a knowledge base and report every problem with its location.
    Check(Deferred<command::check::Args>),
    /// Run the rule tests of a knowledge base.
    Test(Deferred<command::test::Args>),
    /// Show the facts the rules see in an input.
    Facts(Deferred<command::facts::Args>),
    /// Show what the knowledge base says about a symptom, check, cause, fact or problem code.
    Explain(Deferred<command::explain::Args>),
    /// Write the knowledge base as runbooks: an mdBook per language, or an HTML site.
    Docs(Deferred<command::docs::Args>),
    /// Format rule files the one canonical way.
    Fmt(Deferred<command::fmt::Args>),
    /// Show the compiled decision graph, for review.
    Graph(Deferred<command::graph::Args>),
    /// Create a knowledge base project: kb.toml, an example rule file with a test, a CI snippet.
    Init(Deferred<command::init::Args>),
}

/// The languages of `--lang`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LangArg {
    /// English.
    En,
    /// Chinese.
    Zh,
}

impl From<LangArg> for kb_engine::Lang {
    fn from(lang: LangArg) -> Self {
        match lang {
            LangArg::En => Self::En,
            LangArg::Zh => Self::Zh,
        }
    }
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Exit {
    let lang = cli.lang.map_or(kb_engine::Lang::En, Into::into);
    // Commands that work on files, not on a compiled knowledge base.
    match &cli.command {
        Command::Fmt(args) => return command::fmt::run(args),
        Command::Init(args) => return command::init::run(args),
        _ => {}
    }
    let dir = match &cli.command {
        Command::Check(args) => args.dir.clone().or(cli.kb.clone()),
        Command::Test(args) => args.dir.clone().or(cli.kb.clone()),
        _ => cli.kb.clone(),
    };
    // Checking compiles, whatever was kept: it reports the warnings.
    let checking = matches!(cli.command, Command::Check(_));
    let loaded = match &dir {
        Some(dir) if !checking => Loaded::from_dir_cached(dir),
        Some(dir) => Loaded::from_dir(dir).map(|loaded| (loaded, None)),
        None => Loaded::bundled().map(|loaded| (loaded, None)),
    };
    if let Command::Check(args) = &cli.command {
        return command::check::run(args, loaded.map(|(loaded, _)| loaded));
    }
    let (loaded, to_keep) = match loaded {
        Ok(loaded) => loaded,
        Err(error) => {
            report::load_error(&error);
            return Exit::BadRules;
        }
    };
    let exit = match &cli.command {
        Command::Eval(args) => command::eval::run(args, &loaded, lang),
        Command::Test(args) => command::test::run(args, &loaded),
        Command::Facts(args) => command::facts::run(args, &loaded.kb),
        Command::Explain(args) => command::explain::run(args, &loaded.kb, lang),
        Command::Docs(args) => command::docs::run(args, &loaded, cli.lang.map(Into::into)),
        Command::Graph(args) => command::graph::run(args, &loaded.kb, lang),
        Command::Fmt(args) => command::fmt::run(args),
        Command::Init(args) => command::init::run(args),
        Command::Check(args) => return command::check::run(args, Ok(loaded)),
    };
    if let Some(entry) = to_keep {
        entry.store(&loaded.kb);
    }
    // The process ends next: freeing the knowledge base piece by piece
    // would only make a short `kb eval` slower.
    std::mem::forget(loaded);
    exit
}

#[cfg(test)]
mod tests;
