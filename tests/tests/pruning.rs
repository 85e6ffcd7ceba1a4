//! Parsing a document keeping only what the rules and the adapter read
//! gives the same diagnosis as parsing all of it.

#![expect(clippy::unwrap_used, reason = "tests")]

use std::path::Path;

use kb::knowledge::Loaded;
use kb_engine::json::Json;
use serde_json::Value;

fn documents() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for dir in ["kb/rules/fixtures", "tests/real-world/cases", "examples"] {
        let mut stack = vec![root.join(dir)];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "json") {
                    found.push((
                        path.display().to_string(),
                        std::fs::read_to_string(&path).unwrap(),
                    ));
                }
            }
        }
    }
    let generator = root.join("../shared/bench/gen-bundles.py");
    if let Ok(output) = std::process::Command::new("python3")
        .arg(&generator)
        .args(["300", "11"])
        .output()
        && output.status.success()
    {
        for (i, line) in String::from_utf8_lossy(&output.stdout).lines().enumerate() {
            found.push((format!("generated line {}", i + 1), line.to_owned()));
        }
    }
    found.sort();
    found
}

fn diagnose(loaded: &Loaded, document: Json<'_>) -> Vec<String> {
    kb::adapter::subjects(vec![document])
        .unwrap()
        .iter()
        .map(|subject| {
            let diagnosis = loaded
                .kb
                .evaluate(&loaded.kb.bind(&subject.document), kb_engine::Lang::En);
            serde_json::to_string(&diagnosis).unwrap()
        })
        .collect()
}

#[test]
fn a_pruned_document_is_diagnosed_like_a_whole_one() {
    let loaded = Loaded::bundled().map_err(|e| format!("{e:?}")).unwrap();
    let pruner = kb::adapter::pruner(&loaded.kb);
    let documents = documents();
    assert!(documents.len() > 100, "{} documents", documents.len());
    let mut smaller = 0;
    for (name, text) in &documents {
        let whole: Value = serde_json::from_str(text).unwrap();
        let pruned = pruner.parse(text.as_bytes()).unwrap();
        if pruned.to_value().to_string().len() < whole.to_string().len() {
            smaller += 1;
        }
        assert_eq!(
            diagnose(&loaded, pruned),
            diagnose(&loaded, whole.into()),
            "{name}"
        );
    }
    assert!(
        smaller * 2 > documents.len(),
        "pruning keeps everything of most documents"
    );
}
