//! Benchmarks of the whole pipeline on the bundled knowledge base:
//! `cargo bench -p kb`. Read `eval` against `parse_json`, the floor of
//! merely parsing the same documents.

#![expect(clippy::unwrap_used, reason = "benchmarks")]

use std::path::Path;

use divan::Bencher;
use kb::knowledge::Loaded;
use serde_json::Value;

fn main() {
    divan::main();
}

/// Every fixture bundle of the bundled knowledge base, as text.
fn fixtures() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/fixtures");
    let mut texts = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.unwrap();
        if entry.path().extension().is_some_and(|e| e == "json") {
            texts.push(std::fs::read_to_string(entry.path()).unwrap());
        }
    }
    texts
}

/// Load the bundled knowledge base from the compiled form built into `kb`,
/// as every `kb` run does.
#[divan::bench]
fn load_bundled() -> Loaded {
    Loaded::bundled()
        .map_err(|_| "the bundled knowledge base loads")
        .unwrap()
}

/// Parse and compile the bundled knowledge base's rule files.
#[divan::bench]
fn compile_bundled() -> Loaded {
    Loaded::bundled_from_source()
        .map_err(|_| "the bundled knowledge base compiles")
        .unwrap()
}

/// The floor: parse every fixture into `serde_json::Value`, nothing else.
#[divan::bench]
fn parse_json(bencher: Bencher<'_, '_>) {
    let texts = fixtures();
    bencher
        .counter(divan::counter::ItemsCount::new(texts.len()))
        .bench(|| {
            texts
                .iter()
                .map(|t| serde_json::from_str::<Value>(t).unwrap())
                .collect::<Vec<_>>()
        });
}

/// Parse, bind and diagnose every fixture.
#[divan::bench]
fn eval(bencher: Bencher<'_, '_>) {
    let loaded = load_bundled();
    let texts = fixtures();
    bencher
        .counter(divan::counter::ItemsCount::new(texts.len()))
        .bench(|| {
            texts
                .iter()
                .map(|t| {
                    let document: Value = serde_json::from_str(t).unwrap();
                    let subject = kb::adapter::subjects(vec![document]).unwrap().remove(0);
                    loaded
                        .kb
                        .evaluate(&loaded.kb.bind(&subject.document), kb_engine::Lang::En)
                        .causes
                        .len()
                })
                .sum::<usize>()
        });
}

/// The whole runbook site, both languages, in memory: Markdown, then HTML.
#[divan::bench(args = [false, true])]
fn docs(bencher: Bencher<'_, '_>, html: bool) {
    let loaded = load_bundled();
    let args = kb::command::docs::Args {
        out: "unused".into(),
        html,
        templates: None,
    };
    bencher.bench(|| {
        kb::command::docs::generate(&args, &loaded, None)
            .unwrap()
            .len()
    });
}

/// A synthetic knowledge base about the size of the bundled one per unit (17
/// symptoms, 170 checks, 170 causes, 187 facts, with regexes and command
/// templates), `scale` units of it, with distinct names.
fn synthetic(scale: usize) -> String {
    use std::fmt::Write as _;
    let mut text = String::from("input pod \"The Pod\"\ninput events \"Events\"\n");
    for unit in 0..scale {
        for s in 0..17 {
            let p = format!("u{unit}s{s}");
            let facts = 11;
            for f in 0..facts {
                let _ = writeln!(
                    text,
                    "fact {p}_f{f}: string \"Fact {f}\" zh \"事实 {f}\" {{\n  from last(events[.reason == \"R{f}\"]).message\n  gather \"kubectl get events -n {{{{ {p}_f0 }}}} --field-selector reason=R{f}\"\n}}"
                );
            }
            let _ = writeln!(
                text,
                "symptom {p} \"Symptom {p}\" zh \"症状 {p}\" {{\n  when exists({p}_f0)"
            );
            for c in 0..5 {
                let _ = writeln!(text, "  check \"Check {c}?\" zh \"检查 {c}？\" {{");
                let _ = writeln!(
                    text,
                    "    if {p}_f{c} matches r\"(?i)insufficient (cpu|memory|[a-z.]+/gpu)\" => {p}.c{c}"
                );
                let _ = writeln!(
                    text,
                    "    if {p}_f{} contains \"taint\" and not ({p}_f{} starts_with \"0/\") => check \"Nested {c}?\" {{ if exists({p}_f10) => {p}.d{c} }}",
                    c + 5,
                    c + 1
                );
                let _ = writeln!(text, "  }}");
            }
            let _ = writeln!(text, "}}");
            for c in 0..5 {
                for kind in ["c", "d"] {
                    let _ = writeln!(
                        text,
                        "cause {p}.{kind}{c} \"Cause {kind}{c}\" zh \"原因 {kind}{c}\" {{\n  explain \"Why it happens.\" zh \"原因说明。\"\n  fix \"Fix it\" zh \"修复\" {{\n    step \"Look\" zh \"查看\" run \"kubectl describe pod {{{{ {p}_f1 }}}} -n {{{{ {p}_f0 }}}}\"\n    step \"Act\" zh \"处理\" run \"kubectl delete pod {{{{ {p}_f1 }}}} --force\" risk \"Careful\" zh \"小心\"\n  }}\n}}"
                    );
                }
            }
        }
    }
    text
}

/// Compiling knowledge bases 1×, 10× and 100× the size of the bundled one
/// (parse and compile), to show how the cost grows with size.
#[divan::bench(args = [1, 10, 100], sample_count = 5)]
fn compile_scaled(bencher: Bencher<'_, '_>, scale: usize) {
    let text = synthetic(scale);
    bencher.bench(|| {
        let rules = kb_dsl::parse(&text, "synthetic.kb")
            .map_err(|e| e.problems.len())
            .unwrap();
        kb_engine::compile(&rules)
            .map_err(|p| p.len())
            .unwrap()
            .causes
            .len()
    });
}
