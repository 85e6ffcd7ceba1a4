//! The diagnosis for people at a terminal. Colour is written as ANSI codes;
//! the stream strips them when it is not a terminal or `NO_COLOR` is set.

use std::io::{self, Write};

use anstyle::{AnsiColor, Style};
use kb_engine::diagnosis::{CauseFinding, Evidence, FactSeen, FactState, Status, SymptomStatus};
use kb_engine::value::Truth;

use super::Report;

const BOLD: Style = Style::new().bold();
const DIM: Style = Style::new().dimmed();
const GREEN: Style = AnsiColor::Green.on_default().bold();
const YELLOW: Style = AnsiColor::Yellow.on_default().bold();
const RED: Style = AnsiColor::Red.on_default().bold();
const CYAN: Style = AnsiColor::Cyan.on_default();

/// How many possible causes to list before summarising the rest.
const POSSIBLE_SHOWN: usize = 5;

/// Writes one diagnosis.
pub fn write(out: &mut dyn Write, report: &Report<'_>) -> io::Result<()> {
    let diagnosis = report.diagnosis;
    let subject = report.subject.unwrap_or("input");
    match report.line {
        Some(line) => writeln!(out, "{BOLD}{subject}{BOLD:#} {DIM}(line {line}){DIM:#}")?,
        None => writeln!(out, "{BOLD}{subject}{BOLD:#}")?,
    }
    for warning in &diagnosis.warnings {
        writeln!(out, "  {YELLOW}warning{YELLOW:#}: {warning}")?;
    }
    if diagnosis.symptoms.is_empty() {
        writeln!(
            out,
            "  no symptom matched: nothing in the knowledge base applies to this input"
        )?;
        return writeln!(out);
    }
    for symptom in &diagnosis.symptoms {
        let status = match symptom.status {
            SymptomStatus::Matched => "",
            SymptomStatus::Possible => " (possibly: some facts are missing)",
        };
        writeln!(
            out,
            "  symptom {CYAN}{}{CYAN:#}: {}{status}",
            symptom.id, symptom.title
        )?;
    }
    let confirmed: Vec<&CauseFinding> = diagnosis.confirmed().collect();
    let possible: Vec<&CauseFinding> = diagnosis
        .causes
        .iter()
        .filter(|c| c.status == Status::Possible)
        .collect();
    if confirmed.is_empty() && possible.is_empty() {
        let why = if diagnosis.dead_ends.is_empty() {
            "the checks of this symptom do not explain this input"
        } else {
            "the checks end where no branch holds:"
        };
        writeln!(out, "  no cause found: {why}")?;
        for end in &diagnosis.dead_ends {
            writeln!(out, "    {RED}✗{RED:#} {}", end.check)?;
            let facts = facts_text(&end.facts);
            if !facts.is_empty() {
                writeln!(out, "      {DIM}{facts}{DIM:#}")?;
            }
            if let Some(command) = &end.gather {
                writeln!(out, "      {CYAN}$ {command}{CYAN:#}")?;
            }
        }
        writeln!(
            out,
            "  (`kb eval --why-not CAUSE` shows every way to a cause and where it stops)"
        )?;
    }
    for cause in &confirmed {
        writeln!(out)?;
        writeln!(
            out,
            "  {GREEN}confirmed{GREEN:#} {BOLD}{}{BOLD:#}: {}",
            cause.id, cause.title
        )?;
        write_evidence(out, &cause.evidence)?;
        write_fixes(out, cause)?;
    }
    if !possible.is_empty() {
        writeln!(out)?;
        let heading = if confirmed.is_empty() {
            "possible causes"
        } else {
            "also possible"
        };
        writeln!(
            out,
            "  {YELLOW}{heading}{YELLOW:#} (some facts are unknown):"
        )?;
        for cause in possible.iter().take(POSSIBLE_SHOWN) {
            writeln!(out, "    - {BOLD}{}{BOLD:#}: {}", cause.id, cause.title)?;
            if !cause.needs.is_empty() {
                writeln!(out, "      {DIM}needs: {}{DIM:#}", cause.needs.join(", "))?;
            }
        }
        if possible.len() > POSSIBLE_SHOWN {
            writeln!(
                out,
                "    … and {} more (see --format json)",
                possible.len() - POSSIBLE_SHOWN
            )?;
        }
    }
    if !diagnosis.missing.is_empty() {
        writeln!(out)?;
        writeln!(out, "  {BOLD}next checks{BOLD:#}, most decisive first:")?;
        for (i, fact) in diagnosis.missing.iter().enumerate() {
            let n = fact.decides.len();
            let causes = if n == 1 { "cause" } else { "causes" };
            writeln!(
                out,
                "    {}. {} ({}; decides {n} {causes})",
                i + 1,
                fact.title,
                fact.fact
            )?;
            if let Some(gather) = &fact.gather {
                writeln!(out, "       {CYAN}$ {gather}{CYAN:#}")?;
            }
        }
    }
    writeln!(out)
}

fn write_evidence(out: &mut dyn Write, evidence: &[Evidence]) -> io::Result<()> {
    writeln!(out, "    evidence:")?;
    for item in evidence {
        let mark = match item.result {
            Truth::True => format!("{GREEN}✓{GREEN:#}"),
            Truth::Unknown => format!("{YELLOW}?{YELLOW:#}"),
            Truth::False => format!("{RED}✗{RED:#}"),
        };
        match &item.check {
            Some(check) => writeln!(out, "      {mark} {check} {DIM}→{DIM:#} {}", item.condition)?,
            None => writeln!(out, "      {mark} {}", item.condition)?,
        }
        let facts = facts_text(&item.facts);
        if !facts.is_empty() {
            writeln!(out, "        {DIM}{facts}{DIM:#}")?;
        }
    }
    Ok(())
}

fn write_fixes(out: &mut dyn Write, cause: &CauseFinding) -> io::Result<()> {
    for fix in &cause.fixes {
        writeln!(out, "    fix: {BOLD}{}{BOLD:#}", fix.title)?;
        for (i, step) in fix.steps.iter().enumerate() {
            writeln!(out, "      {}. {}", i + 1, step.text)?;
            if let Some(command) = &step.command {
                writeln!(out, "         {CYAN}$ {command}{CYAN:#}")?;
            }
            if let Some(risk) = &step.risk {
                writeln!(out, "         {RED}risk{RED:#}: {risk}")?;
            }
        }
    }
    Ok(())
}

/// The facts a condition read: `name = value; other: absent; third: unknown`.
pub fn facts_text(facts: &[FactSeen]) -> String {
    facts
        .iter()
        .map(|fact| match (&fact.state, &fact.value) {
            (FactState::Known, Some(value)) => {
                format!("{} = {}", fact.name, kb_docs_gen::clip(&value.to_string()))
            }
            (FactState::Absent, _) => format!("{}: absent", fact.name),
            _ => format!("{}: unknown", fact.name),
        })
        .collect::<Vec<_>>()
        .join("; ")
}
