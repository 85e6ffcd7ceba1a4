//! docs/json-schema.md and the JSON `kb eval` writes agree: every field
//! written is documented, and every field documented as required is written.

#![expect(clippy::unwrap_used, clippy::panic, reason = "tests")]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use kb::knowledge::Loaded;
use kb::output::Report;
use serde_json::Value as Json;

/// The fields of each documented object: name → (field → required).
fn documented() -> BTreeMap<String, BTreeMap<String, bool>> {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/json-schema.md"),
    )
    .unwrap();
    let mut objects = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in doc.lines() {
        if let Some(name) = line.strip_prefix("### `") {
            current = name.split('`').next().map(str::to_owned);
            continue;
        }
        let Some(object) = &current else { continue };
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let [_, field, ty, ..] = cells.as_slice() else {
            continue;
        };
        if !field.starts_with('`') {
            continue;
        }
        for name in field.split(',') {
            let name = name.trim().trim_matches('`').to_owned();
            let required = !ty.contains("optional");
            objects
                .entry(object.clone())
                .or_insert_with(BTreeMap::new)
                .insert(name, required);
        }
    }
    objects
}

fn observe(kind: &str, value: &Json, seen: &mut Vec<(String, BTreeSet<String>)>) {
    let Json::Object(map) = value else {
        panic!("{kind} is not an object: {value}")
    };
    seen.push((kind.to_owned(), map.keys().cloned().collect()));
    let children: &[(&str, &str)] = match kind {
        "Report" => &[
            ("symptoms", "Symptom"),
            ("causes", "Cause"),
            ("missing", "Missing"),
            ("dead_ends", "DeadEnd"),
        ],
        "Symptom" => &[("evidence", "Evidence")],
        "Cause" => &[("evidence", "Evidence"), ("fixes", "Fix")],
        "Evidence" | "DeadEnd" => &[("facts", "Fact")],
        "Fix" => &[("steps", "Step")],
        _ => &[],
    };
    for (field, child) in children {
        match map.get(*field) {
            Some(Json::Array(items)) => items.iter().for_each(|item| observe(child, item, seen)),
            Some(object @ Json::Object(_)) => observe(child, object, seen),
            _ => {}
        }
    }
}

#[test]
fn the_documented_schema_is_the_one_written() {
    let documented = documented();
    let loaded = Loaded::bundled().map_err(|e| format!("{e:?}")).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kb/rules/fixtures");
    let mut seen = Vec::new();
    let read = |case: &str| std::fs::read_to_string(fixtures.join(case)).unwrap();
    // The scheduler names a node selector the pod does not set: the checks
    // end without a cause.
    let selector_not_set = read("pending/insufficient-resources.json").replace(
        "3 Insufficient cpu.",
        "3 node(s) didn't match Pod's node affinity/selector.",
    );
    for text in [
        read("pending/insufficient-resources.json"),
        read("pending/no-events.json"),
        read("crash-loop/app-error.json"),
        read("crash-loop/oom-limit.json"),
        selector_not_set,
    ] {
        let document: Json = serde_json::from_str(&text).unwrap();
        let subject = kb::adapter::subjects(vec![document.into()])
            .unwrap()
            .remove(0);
        let diagnosis = loaded
            .kb
            .evaluate(&loaded.kb.bind(&subject.document), kb_engine::Lang::En);
        let report = Report {
            subject: subject.label.as_deref(),
            line: Some(1),
            diagnosis: &diagnosis,
        };
        observe("Report", &serde_json::to_value(&report).unwrap(), &mut seen);
    }
    let mut kinds = BTreeSet::new();
    for (kind, keys) in &seen {
        kinds.insert(kind.clone());
        let fields = documented
            .get(kind)
            .unwrap_or_else(|| panic!("`{kind}` is not documented"));
        for key in keys {
            assert!(
                fields.contains_key(key),
                "`{kind}.{key}` is written but not documented"
            );
        }
        for (field, required) in fields {
            assert!(
                !required || keys.contains(field),
                "`{kind}.{field}` is documented as required but missing"
            );
        }
    }
    for kind in [
        "Report", "Symptom", "Cause", "Evidence", "Fact", "Fix", "Step", "Missing", "DeadEnd",
    ] {
        assert!(
            kinds.contains(kind),
            "no `{kind}` was observed; the cases should cover it"
        );
    }
}
