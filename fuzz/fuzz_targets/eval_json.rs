//! Arbitrary JSON through the Kubernetes adapter and the bundled knowledge
//! base: bind, evaluate, serialize the diagnosis. The document is read as
//! `kb eval` reads a file, into kb's JSON, which must hold what serde_json
//! reads; the same bytes parsed keeping only what the rules read, as
//! `kb eval` reads a stream or a large file, must be diagnosed the same, and
//! read twice over, must give the same document twice.
#![no_main]

use std::sync::LazyLock;

use kb::knowledge::Loaded;
use kb_engine::Lang;
use kb_engine::json::Json;
use kb_engine::needs::Pruner;
use libfuzzer_sys::fuzz_target;

static LOADED: LazyLock<Loaded> = LazyLock::new(|| match Loaded::bundled() {
    Ok(loaded) => loaded,
    Err(_) => panic!("the bundled knowledge base does not compile"),
});

static PRUNER: LazyLock<Pruner> = LazyLock::new(|| kb::adapter::pruner(&LOADED.kb));

/// Every subject's diagnosis, as JSON; `None` when the adapter refuses the document.
fn diagnoses(document: Json<'_>) -> Option<Vec<String>> {
    let kb = &LOADED.kb;
    let subjects = kb::adapter::subjects(vec![document]).ok()?;
    Some(
        subjects
            .iter()
            .map(|subject| {
                let diagnosis = kb.evaluate(&kb.bind(&subject.document), Lang::En);
                serde_json::to_string(&diagnosis).unwrap_or_default()
            })
            .collect(),
    )
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let Ok(document) = serde_json::from_slice::<Json>(data) else {
        panic!("serde_json reads the document and kb's JSON does not");
    };
    assert_eq!(
        document,
        Json::from(value),
        "kb's JSON reads it otherwise than serde_json"
    );
    let whole = diagnoses(document);
    let Ok(pruned) = PRUNER.parse(data) else {
        panic!("the whole document parses and the pruned one does not");
    };
    let mut twice = data.to_vec();
    twice.push(b'\n');
    twice.extend_from_slice(data);
    match PRUNER.parse_many(&twice) {
        Ok(documents) => assert!(
            documents.len() == 2 && documents.iter().all(|d| *d == pruned),
            "the document twice is read otherwise than once"
        ),
        Err(error) => panic!("the document twice does not parse: {error}"),
    }
    assert_eq!(
        diagnoses(pruned),
        whole,
        "pruned and whole documents differ"
    );
});
