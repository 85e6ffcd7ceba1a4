//! Arbitrary JSON through the Kubernetes adapter and the bundled knowledge
//! base: bind, evaluate, serialize the diagnosis.
#![no_main]

use std::sync::LazyLock;

use kb::knowledge::Loaded;
use kb_engine::Lang;
use libfuzzer_sys::fuzz_target;

static LOADED: LazyLock<Loaded> = LazyLock::new(|| match Loaded::bundled() {
    Ok(loaded) => loaded,
    Err(_) => panic!("the bundled knowledge base does not compile"),
});

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let Ok(subjects) = kb::adapter::subjects(vec![value]) else {
        return;
    };
    let kb = &LOADED.kb;
    for subject in subjects {
        let input = kb.bind(&subject.document);
        let diagnosis = kb.evaluate(&input, Lang::En);
        let _ = serde_json::to_string(&diagnosis);
    }
});
