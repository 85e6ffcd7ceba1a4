//! Arbitrary text through the rule parser, the compiler, and the rendering
//! of every problem found (miette with arbitrary spans).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let problems = match kb_dsl::parse(text, "fuzz.kb") {
        Ok(rules) => match kb_engine::compile(&rules) {
            Ok(_) => return,
            Err(problems) => problems,
        },
        Err(errors) => {
            // What the CLI does: the declarations that parsed are compiled too.
            let mut problems = errors.problems;
            if let Err(found) = kb_engine::compile(&errors.recovered) {
                problems.extend(found);
            }
            problems
        }
    };
    let _ = kb::report::render(&problems, false);
});
