//! Problems in rule files and input, rendered for people on stderr.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{IsTerminal, Write};

use kb_dsl::Problem;
use miette::{GraphicalReportHandler, GraphicalTheme};

use crate::knowledge::LoadError;

/// Whether stderr gets colour: a terminal, and `NO_COLOR` unset.
fn color() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Renders problems with the source line and a marker under the culprit,
/// in colour when stderr is a terminal.
pub fn problems(problems: &[Problem]) -> String {
    render(problems, color())
}

/// Renders problems, with or without colour.
pub fn render(problems: &[Problem], color: bool) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme).with_width(100);
    let mut out = String::new();
    for problem in problems {
        if handler.render_report(&mut out, problem).is_err() {
            out.push_str(&format!(
                "{}: {}\n",
                problem.loc.position(),
                problem.message
            ));
        }
    }
    out
}

/// Writes why a knowledge base could not be loaded, with a count.
pub fn load_error(error: &LoadError) {
    let mut stderr = std::io::stderr().lock();
    match error {
        LoadError::Rules(found) => {
            let _ = stderr.write_all(problems(found).as_bytes());
            let errors = found.iter().filter(|p| p.is_error()).count();
            let _ = writeln!(
                stderr,
                "error: the knowledge base has {}",
                counted(errors, "error")
            );
        }
        LoadError::Other(message) => {
            let _ = writeln!(stderr, "error: {message}");
        }
    }
}

/// Writes an error about the input.
pub fn input_error(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "error: {message}");
}

/// Writes a note: not an error, something worth knowing while kb works.
pub fn note(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "note: {message}");
}

/// `1 error`, `2 errors`: a count and the noun it counts.
pub fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// What to suggest for a name that is none of `candidates`: `; did you mean
/// `x`?` for the closest, when one is close and no other shares more of its
/// words; else those holding `name` (a word of an id, as `pending`), a few
/// of them; else those sharing most words with it (an id remembered in
/// other words, as `crash-loop.liveness-probe-failing` for
/// `crash.liveness-probe`); else nothing.
pub fn did_you_mean(name: &str, candidates: &[&str]) -> String {
    const SHOWN: usize = 5;
    let limit = (name.chars().count() / 3).max(2);
    let close = kb_dsl::problem::within_edits(name, candidates.iter().copied(), limit).min();
    let sharing = sharing_most_words(name, candidates);
    if let Some((_, c)) = close
        && (sharing.is_empty() || sharing.contains(&c))
    {
        return format!("; did you mean `{c}`?");
    }
    // A word of fewer than three letters is in too many ids to say anything.
    let word = name.to_lowercase();
    let holding: Vec<&str> = match word.chars().count() {
        0..3 => Vec::new(),
        _ => candidates
            .iter()
            .copied()
            .filter(|c| c.to_lowercase().contains(&word))
            .collect(),
    };
    let (found, which) = match holding.is_empty() {
        true => (sharing, "sharing its words".to_owned()),
        false => (holding, format!("holding `{name}`")),
    };
    let quoted = |ids: &[&str]| ids.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>();
    let (shown, more) = found.split_at(found.len().min(SHOWN));
    match (shown.split_last(), more.len()) {
        (None, _) => String::new(),
        (Some((only, [])), 0) => format!("; did you mean `{only}`?"),
        (Some((last, rest)), 0) => {
            format!("; did you mean {} or `{last}`?", quoted(rest).join(", "))
        }
        (Some(_), more) => format!(
            "; did you mean {} or one of {more} more {which}?",
            quoted(shown).join(", ")
        ),
    }
}

/// The candidates sharing the most words with `name` (runs of letters and
/// digits, in lower case), two at least; of those, the ones whose shared
/// words the fewest candidates hold (among image-pull causes, `auth` says
/// more than `image`).
fn sharing_most_words<'c>(name: &str, candidates: &[&'c str]) -> Vec<&'c str> {
    fn words(id: &str) -> impl Iterator<Item = String> + '_ {
        id.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
    }
    let named: BTreeSet<String> = words(name).collect();
    let shared: Vec<BTreeSet<String>> = candidates
        .iter()
        .map(|c| words(c).filter(|w| named.contains(w)).collect())
        .collect();
    let mut holders: BTreeMap<&str, usize> = BTreeMap::new();
    for word in shared.iter().flatten() {
        *holders.entry(word).or_default() += 1;
    }
    // More words first, then the rarest.
    let rank = |words: &BTreeSet<String>| {
        let mut held: Vec<usize> = words
            .iter()
            .map(|w| holders.get(w.as_str()).copied().unwrap_or(0))
            .collect();
        held.sort_unstable();
        (Reverse(words.len()), held)
    };
    let Some(best) = shared.iter().filter(|w| w.len() >= 2).map(rank).min() else {
        return Vec::new();
    };
    candidates
        .iter()
        .zip(&shared)
        .filter(|(_, words)| words.len() >= 2 && rank(words) == best)
        .map(|(c, _)| *c)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    #[test]
    fn did_you_mean_names_a_close_candidate_or_those_holding_the_name() {
        let ids = [
            "pod-pending",
            "pending.insufficient-resources",
            "pending.taint",
            "crash-loop",
        ];
        assert_eq!(
            did_you_mean("pod-pendng", &ids),
            "; did you mean `pod-pending`?"
        );
        assert_eq!(
            did_you_mean("Pending", &ids),
            "; did you mean `pod-pending`, `pending.insufficient-resources` or `pending.taint`?"
        );
        assert_eq!(did_you_mean("crash", &ids), "; did you mean `crash-loop`?");
        let many: Vec<String> = (0..8).map(|i| format!("pending.c{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(
            did_you_mean("pending", &many),
            "; did you mean `pending.c0`, `pending.c1`, `pending.c2`, `pending.c3`, `pending.c4` \
             or one of 3 more holding `pending`?"
        );
        assert_eq!(did_you_mean("zzz", &ids), "");
        assert_eq!(did_you_mean("po", &ids), "");
    }

    #[test]
    fn did_you_mean_names_the_ids_sharing_the_most_words_with_the_name() {
        let ids = [
            "crash.liveness-probe",
            "crash.oom-limit",
            "not-ready.readiness-probe",
            "pending.insufficient-resources",
        ];
        assert_eq!(
            did_you_mean("crash-loop.liveness-probe-failing", &ids),
            "; did you mean `crash.liveness-probe`?"
        );
        assert_eq!(
            did_you_mean("Pending.Insufficient-CPU", &ids),
            "; did you mean `pending.insufficient-resources`?"
        );
        assert_eq!(
            did_you_mean("crash.probe-failed", &ids),
            "; did you mean `crash.liveness-probe`?"
        );
        let images = [
            "image.registry-auth",
            "image.pull-timeout",
            "image.pull-throttled",
            "image.never-pull",
            "pod-image-pull",
        ];
        assert_eq!(
            did_you_mean("image-pull-auth-failed", &images),
            "; did you mean `image.registry-auth`?",
            "the rarer word shared outweighs a closer spelling"
        );
        assert_eq!(
            did_you_mean("image-pull", &images),
            "; did you mean `pod-image-pull`?"
        );
        assert_eq!(
            did_you_mean("liveness.timeout", &ids),
            "",
            "one word in common says too little"
        );
    }
}
