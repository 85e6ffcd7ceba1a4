//! A synthetic knowledge base, to measure how compiling grows with size:
//! each unit is about the size of the bundled knowledge base (17 symptoms,
//! 170 checks, 170 causes, 187 facts, with regular expressions, command
//! templates and texts in both languages), with names of its own.
//!
//! Used by `cargo bench -p kb --bench kb` and by
//! `cargo run --release -p kb --example synthetic_kb -- SCALE DIR`.

use std::fmt::Write as _;

/// The rule files of a knowledge base `scale` units large, by name: the
/// inputs, then one file per unit.
pub fn files(scale: usize) -> Vec<(String, String)> {
    let mut files = vec![(
        String::from("inputs.kb"),
        String::from("input pod \"The Pod\"\ninput events \"Events\"\n"),
    )];
    files.extend((0..scale).map(|u| (format!("unit-{u:04}.kb"), unit(u))));
    files
}

/// One unit: 17 symptoms with their facts, checks and causes.
fn unit(unit: usize) -> String {
    let mut text = String::new();
    for s in 0..17 {
        let p = format!("u{unit}s{s}");
        for f in 0..11 {
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
                "    if {p}_f{c} matches r\"(?i)insufficient (cpu|memory|[a-z.]+/gpu{s}{c})\" => {p}.c{c}"
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
    text
}
