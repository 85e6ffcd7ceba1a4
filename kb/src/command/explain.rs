//! `kb explain`: what the knowledge base says about a symptom, check, cause,
//! fact or problem code.

use std::io::{self, Write};

use kb_docs_gen::view::Words;
use kb_dsl::Code;
use kb_engine::Lang;
use kb_engine::kb::{CheckId, Id, KnowledgeBase, LocalText, Target};

use crate::exit::Exit;
use crate::report;

/// Arguments of `kb explain`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A symptom, check or cause id, a fact name, or a problem code (`E0102`).
    pub id: String,
}

/// Runs `kb explain`.
pub fn run(args: &Args, kb: &KnowledgeBase, lang: Lang) -> Exit {
    let mut out = crate::output::text_stdout();
    let result = match kb.lookup(&args.id) {
        Some(Id::Symptom(id)) => kb
            .symptoms
            .get(id.0)
            .map(|s| symptom(&mut out, kb, s, lang)),
        Some(Id::Check(id)) => kb.checks.get(id.0).map(|c| {
            writeln!(out, "check {}: {}", c.id, c.title.get(lang))?;
            check(&mut out, kb, id, lang, 1, &mut Vec::new())
        }),
        Some(Id::Cause(id)) => kb
            .causes
            .get(id.0)
            .map(|c| cause(&mut out, kb, id.0, c, lang)),
        None => {
            if let Some(fact) = kb.fact(&args.id) {
                Some(fact_text(&mut out, fact, lang))
            } else {
                Code::parse(&args.id).map(|code| writeln!(out, "{code}: {}", code.summary()))
            }
        }
    };
    match result {
        Some(shown) => crate::output::written(shown.and_then(|()| out.flush()), Exit::Ok),
        None => {
            let mut names: Vec<&str> = kb.symptoms.iter().map(|s| s.id.as_str()).collect();
            names.extend(kb.causes.iter().map(|c| c.id.as_str()));
            names.extend(kb.facts.iter().map(|f| f.name.as_str()));
            let hint = report::did_you_mean(&args.id, &names);
            report::input_error(&format!(
                "`{}` is not a symptom, check, cause, fact or problem code{hint}",
                args.id
            ));
            Exit::BadInput
        }
    }
}

fn paragraph(
    out: &mut dyn Write,
    text: Option<&LocalText>,
    lang: Lang,
    indent: &str,
) -> io::Result<()> {
    if let Some(text) = text {
        for line in text.get(lang).lines() {
            writeln!(out, "{indent}{line}")?;
        }
    }
    Ok(())
}

fn symptom(
    out: &mut dyn Write,
    kb: &KnowledgeBase,
    s: &kb_engine::kb::SymptomInfo,
    lang: Lang,
) -> io::Result<()> {
    writeln!(out, "symptom {}: {}", s.id, s.title.get(lang))?;
    paragraph(out, s.explain.as_ref(), lang, "  ")?;
    writeln!(out, "  when {}", s.when_text)?;
    let mut seen = Vec::new();
    for (i, id) in s.checks.iter().enumerate() {
        let Some(c) = kb.checks.get(id.0) else {
            continue;
        };
        let prefix = if i == 0 {
            "first"
        } else {
            "then, when nothing above holds"
        };
        writeln!(out, "  {prefix}: check {}", c.title.get(lang))?;
        check(out, kb, *id, lang, 2, &mut seen)?;
    }
    Ok(())
}

/// A check's branches, with nested checks written out once.
fn check(
    out: &mut dyn Write,
    kb: &KnowledgeBase,
    id: CheckId,
    lang: Lang,
    depth: usize,
    seen: &mut Vec<CheckId>,
) -> io::Result<()> {
    let indent = "  ".repeat(depth);
    let Some(c) = kb.checks.get(id.0) else {
        return Ok(());
    };
    seen.push(id);
    paragraph(out, c.explain.as_ref(), lang, &indent)?;
    if let Some(gather) = &c.gather {
        writeln!(out, "{indent}$ {}", gather.source)?;
    }
    for branch in &c.branches {
        let condition = branch
            .condition_text
            .as_deref()
            .map_or_else(|| String::from("else"), |t| format!("if {t}"));
        match branch.target {
            Target::Cause(cause) => {
                let Some(target) = kb.causes.get(cause.0) else {
                    continue;
                };
                writeln!(
                    out,
                    "{indent}{condition} => {}: {}",
                    target.id,
                    target.title.get(lang)
                )?;
            }
            Target::Check(next) => {
                let Some(target) = kb.checks.get(next.0) else {
                    continue;
                };
                writeln!(
                    out,
                    "{indent}{condition} => check {}",
                    target.title.get(lang)
                )?;
                if !seen.contains(&next) {
                    check(out, kb, next, lang, depth + 1, seen)?;
                }
            }
        }
    }
    Ok(())
}

fn cause(
    out: &mut dyn Write,
    kb: &KnowledgeBase,
    index: usize,
    c: &kb_engine::kb::CauseInfo,
    lang: Lang,
) -> io::Result<()> {
    writeln!(out, "cause {}: {}", c.id, c.title.get(lang))?;
    paragraph(out, c.explain.as_ref(), lang, "  ")?;
    let symptoms: Vec<String> = kb
        .symptoms_of(kb_engine::kb::CauseId(index))
        .into_iter()
        .filter_map(|s| kb.symptoms.get(s.0))
        .map(|s| format!("{} ({})", s.id, s.title.get(lang)))
        .collect();
    if !symptoms.is_empty() {
        writeln!(
            out,
            "  {}: {}",
            Words::of(lang).leads_here,
            symptoms.join(", ")
        )?;
    }
    for way in kb.ways_to(kb_engine::kb::CauseId(index)) {
        let Some(symptom) = kb.symptoms.get(way.symptom.0) else {
            continue;
        };
        writeln!(out, "  {} ({}):", Words::of(lang).confirm, symptom.id)?;
        for (i, condition) in way.conditions.iter().enumerate() {
            writeln!(out, "    {}. {condition}", i + 1)?;
        }
    }
    for (i, fix) in c.fixes.iter().enumerate() {
        writeln!(
            out,
            "  {} {}: {}",
            Words::of(lang).fix,
            i + 1,
            fix.title.get(lang)
        )?;
        for (j, step) in fix.steps.iter().enumerate() {
            writeln!(out, "    {}. {}", j + 1, step.text.get(lang))?;
            if let Some(run) = &step.run {
                writeln!(out, "       $ {}", run.source)?;
            }
            if let Some(risk) = &step.risk {
                writeln!(out, "       {}: {}", Words::of(lang).risk, risk.get(lang))?;
            }
        }
    }
    Ok(())
}

fn fact_text(out: &mut dyn Write, fact: &kb_engine::kb::FactInfo, lang: Lang) -> io::Result<()> {
    writeln!(
        out,
        "fact {}: {} — {}",
        fact.name,
        fact.ty,
        fact.title.get(lang)
    )?;
    paragraph(out, fact.explain.as_ref(), lang, "  ")?;
    match &fact.derivation {
        Some(from) => writeln!(out, "  from {from}")?,
        None => writeln!(out, "  given directly in the input (`facts`)")?,
    }
    if let Some(gather) = &fact.gather {
        writeln!(out, "  $ {}", gather.source)?;
    }
    Ok(())
}
