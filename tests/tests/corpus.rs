//! Rule files good and bad: good ones compile clean, bad ones yield the
//! diagnostics snapshotted here (rendered without colour).

#![expect(clippy::unwrap_used, clippy::panic, reason = "tests")]

use std::path::Path;

use kb::knowledge::{self, LoadError};

fn corpus() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "kb"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect();
    files.sort();
    files
}

fn load(name: &str, text: &str) -> Result<kb_engine::KnowledgeBase, LoadError> {
    knowledge::compile(std::iter::once((name, text)))
}

#[test]
fn good_rule_files_compile_without_warnings() {
    for (name, text) in corpus().iter().filter(|(name, _)| name.starts_with("ok_")) {
        match load(name, text) {
            Ok(kb) => assert!(kb.warnings.is_empty(), "{name}: {:?}", kb.warnings),
            Err(LoadError::Rules(problems)) => {
                panic!("{name}:\n{}", kb::report::render(&problems, false))
            }
            Err(LoadError::Other(message)) => panic!("{name}: {message}"),
        }
    }
}

#[test]
fn bad_rule_files_report_every_problem_with_its_location() {
    for (name, text) in corpus().iter().filter(|(name, _)| name.starts_with("err_")) {
        let problems = match load(name, text) {
            Err(LoadError::Rules(problems)) => problems,
            Ok(_) => panic!("{name} compiled, but should not"),
            Err(LoadError::Other(message)) => panic!("{name}: {message}"),
        };
        let snapshot = name.trim_end_matches(".kb").to_owned();
        insta::assert_snapshot!(snapshot, kb::report::render(&problems, false));
    }
}

#[test]
fn the_example_of_the_language_reference_compiles_and_passes_its_test() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/language.md"))
            .unwrap();
    let example = doc
        .split("```kb\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .unwrap();
    let dir = std::env::temp_dir().join(format!("kb-language-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("example.kb"), example).unwrap();
    let loaded = kb::knowledge::Loaded::from_dir(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    let loaded = match loaded {
        Ok(loaded) => loaded,
        Err(LoadError::Rules(problems)) => panic!("{}", kb::report::render(&problems, false)),
        Err(LoadError::Other(message)) => panic!("{message}"),
    };
    let outcomes = kb::rule_tests::run(&loaded, None).unwrap();
    assert_eq!(outcomes.len(), 1);
    assert!(
        outcomes.iter().all(kb::rule_tests::Outcome::passed),
        "{outcomes:?}"
    );
}
