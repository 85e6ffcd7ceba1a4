//! Writes a synthetic knowledge base `SCALE` times the size of the bundled
//! one into `DIR`, one rule file per unit, to time compiling it:
//!
//! ```sh
//! cargo run --release -p kb --example synthetic_kb -- 1000 /tmp/kb-1000
//! time target/release/kb check /tmp/kb-1000
//! ```

#[path = "../benches/support/synthetic.rs"]
mod synthetic;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(scale), Some(dir)) = (args.first().and_then(|s| s.parse().ok()), args.get(1)) else {
        eprintln!("usage: synthetic_kb SCALE DIR");
        return ExitCode::from(2);
    };
    let dir = std::path::Path::new(dir);
    let mut written = 0;
    for (name, text) in synthetic::files(scale) {
        if let Err(error) =
            std::fs::create_dir_all(dir).and_then(|()| std::fs::write(dir.join(&name), &text))
        {
            eprintln!("cannot write {}: {error}", dir.join(name).display());
            return ExitCode::FAILURE;
        }
        written += text.len();
    }
    println!(
        "wrote {} ({scale} units, {:.1} MB)",
        dir.display(),
        written as f64 / 1e6
    );
    ExitCode::SUCCESS
}
