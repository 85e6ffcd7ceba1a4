//! Arbitrary bytes through input reading: one document, concatenated
//! documents, or NDJSON lines; and as documents one after another
//! (`kb eval --watch`), whose positions only move forward.
#![no_main]

use kb::read::Content;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let reader = || std::io::Cursor::new(data.to_vec()).into();
    let pruner = || kb_engine::needs::Needs::everything().pruner();
    match kb::read::content("fuzz", reader(), Some(&pruner)) {
        Ok(Content::Documents(documents)) => {
            let _ = documents.len();
        }
        Ok(Content::Lines(lines)) => {
            for (_number, document) in lines {
                let _ = document.is_ok();
            }
        }
        Err(_) => {}
    }
    if let Ok(documents) = kb::read::documents("fuzz", reader()) {
        let mut last = 1;
        for (line, document) in documents {
            assert!(line >= last, "line {line} after {last}");
            if let Ok(document) = document {
                let _ = kb::read::parse_line(&document, &pruner());
            }
            last = line;
        }
    }
});
