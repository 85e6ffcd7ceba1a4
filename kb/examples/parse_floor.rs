//! The floor `kb eval` is measured against, as a whole command: read an
//! NDJSON file line by line and parse each line into a `serde_json::Value`,
//! nothing else, on the allocator `kb` runs on.
//!
//! ```sh
//! cargo build --release -p kb --example parse_floor
//! valgrind --tool=callgrind target/release/examples/parse_floor bundles.ndjson
//! RAYON_NUM_THREADS=1 valgrind --tool=callgrind target/release/kb eval bundles.ndjson --format json
//! ```

use std::io::BufRead;
use std::process::ExitCode;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: parse_floor FILE.ndjson");
        return ExitCode::from(2);
    };
    let file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(error) => {
            eprintln!("cannot read {path}: {error}");
            return ExitCode::FAILURE;
        }
    };
    let (mut objects, mut errors) = (0_usize, 0_usize);
    for line in std::io::BufReader::new(file).lines() {
        let Ok(line) = line else {
            errors += 1;
            continue;
        };
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<serde_json::Value>(&line) {
            Ok(value) => objects += usize::from(value.is_object()),
            Err(_) => errors += 1,
        }
    }
    println!("{objects} objects, {errors} errors");
    ExitCode::SUCCESS
}
