//! Arbitrary bytes as a compiled knowledge base (after the header that
//! names the engine's version): load it, and when it loads, diagnose a pod
//! with it, decode its rule tests and write it back as bytes, with and
//! without its DFAs.
#![no_main]

use kb::knowledge::BUNDLED_PARTS;
use kb_engine::{KnowledgeBase, Lang};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (_, rest) = BUNDLED_PARTS;
    let header_len = rest
        .iter()
        .position(|&b| b == b'\n')
        .map_or(0, |newline| newline + 1);
    let mut bytes = rest[..header_len].to_vec();
    bytes.extend_from_slice(data);
    let Ok(kb) = KnowledgeBase::from_bytes(bytes, []) else {
        return;
    };
    let document = serde_json::json!({
        "pod": {
            "metadata": {"name": "web-0", "namespace": "default"},
            "status": {"phase": "Pending"}
        },
        "events": [{
            "reason": "FailedScheduling",
            "message": "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
        }]
    });
    let diagnosis = kb.evaluate(&kb.bind(&document.into()), Lang::Zh);
    let _ = serde_json::to_string(&diagnosis);
    let _ = kb.tests();
    let _ = kb.to_bytes();
    let _ = kb.to_bytes_without_dfas();
});
