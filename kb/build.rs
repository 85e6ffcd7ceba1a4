//! Embeds the bundled knowledge base (`rules/`: rule files, the manifest and
//! test fixtures) so `kb` works with no files installed.

use std::error::Error;
use std::fmt::Write as _;
use std::path::Path;

fn main() -> Result<(), Box<dyn Error>> {
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR")?;
    let rules = Path::new(&manifest_dir).join("rules");
    println!("cargo:rerun-if-changed=rules");
    let mut files: Vec<_> = walkdir::WalkDir::new(&rules)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_file())
        .filter(|entry| {
            let name = entry.file_name().to_string_lossy();
            name.ends_with(".kb") || name.ends_with(".json") || name == "kb.toml"
        })
        .map(|entry| entry.into_path())
        .collect();
    files.sort();
    let mut code = String::from(
        "/// The bundled knowledge base: (path inside `rules/`, contents).\npub static BUNDLED: &[(&str, &str)] = &[\n",
    );
    for path in files {
        let relative = path
            .strip_prefix(&rules)?
            .to_string_lossy()
            .replace('\\', "/");
        writeln!(
            code,
            "    ({relative:?}, include_str!({:?})),",
            path.display().to_string()
        )?;
    }
    code.push_str("];\n");
    std::fs::write(
        Path::new(&std::env::var("OUT_DIR")?).join("bundled.rs"),
        code,
    )?;
    Ok(())
}
