//! Embeds the bundled knowledge base (`rules/`: rule files, the manifest and
//! test fixtures) so `kb` works with no files installed, and compiles its
//! rules ahead of time so that loading them costs no parsing or compiling.

use std::error::Error;
use std::fmt::Write as _;
use std::path::Path;

/// The name bundled files appear under in diagnostics: `<bundled>/PATH`.
const PREFIX: &str = "<bundled>/";

fn main() -> Result<(), Box<dyn Error>> {
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR")?;
    let out_dir = std::env::var("OUT_DIR")?;
    let rules = Path::new(&manifest_dir).join("rules");
    println!("cargo:rerun-if-changed=rules");
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(&rules) {
        let path = entry?.into_path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_file() && (name.ends_with(".kb") || name.ends_with(".json") || name == "kb.toml")
        {
            let relative = path
                .strip_prefix(&rules)?
                .to_string_lossy()
                .replace('\\', "/");
            files.push((format!("{PREFIX}{relative}"), path));
        }
    }
    // By name: the order the rules compile in, here and in `kb`.
    files.sort();

    // The names in one string, one a line, so that a start reading them all
    // (to find a file by name) touches a page or two, not the page of each
    // file's text.
    if let Some((name, _)) = files.iter().find(|(name, _)| name.contains('\n')) {
        return Err(format!("a bundled file's name holds a line break: {name:?}").into());
    }
    let names: String = files.iter().flat_map(|(name, _)| [name, "\n"]).collect();
    let mut code = format!(
        "/// The name bundled files appear under in diagnostics: `<bundled>/PATH`.\n\
         pub const PREFIX: &str = {PREFIX:?};\n\
         /// The names of the bundled files (`<bundled>/PATH`, PATH inside\n\
         /// `rules/`), one a line, by name.\n\
         pub static NAMES: &str = {names:?};\n\
         /// The contents of the bundled files, in the order of [`NAMES`].\n\
         pub static CONTENTS: &[&str] = &[\n"
    );
    for (_, path) in &files {
        writeln!(code, "    include_str!({:?}),", path.display().to_string())?;
    }
    code.push_str("];\n");
    // The manifest apart too: every start reads it.
    let manifest_name = format!("{PREFIX}kb.toml");
    let manifest = files.iter().find(|(name, _)| *name == manifest_name);
    code.push_str(
        "/// The bundled manifest's name and text, found without searching the\n\
         /// names.\n\
         pub static MANIFEST: Option<(&str, &str)> = ",
    );
    match manifest {
        Some((name, path)) => writeln!(
            code,
            "Some(({name:?}, include_str!({:?})));",
            path.display().to_string()
        )?,
        None => code.push_str("None;\n"),
    }
    std::fs::write(Path::new(&out_dir).join("bundled.rs"), code)?;

    let compiled = match compile(&files) {
        Ok(parts) => parts,
        Err(problems) => {
            // `kb` then compiles the rules when it starts, and reports these
            // problems as it would for any knowledge base.
            for problem in problems.lines() {
                println!("cargo:warning=bundled rules: {problem}");
            }
            kb_engine::Parts::default()
        }
    };
    std::fs::write(Path::new(&out_dir).join("bundled.texts"), compiled.texts)?;
    std::fs::write(Path::new(&out_dir).join("bundled.kbc"), compiled.rest)?;
    Ok(())
}

/// The bundled rule files parsed and compiled together, as parts for
/// `KnowledgeBase::from_checked_parts`, checked; or their problems, one a
/// line.
fn compile(files: &[(String, std::path::PathBuf)]) -> Result<kb_engine::Parts, String> {
    let mut rules = kb_dsl::ast::RuleSet::default();
    let mut problems = Vec::new();
    for (name, path) in files.iter().filter(|(name, _)| name.ends_with(".kb")) {
        let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        match kb_dsl::parse(&text, name) {
            Ok(parsed) => rules.extend(parsed),
            Err(errors) => problems.extend(errors.problems),
        }
    }
    if problems.is_empty() {
        match kb_engine::compile(&rules) {
            // Warnings are not kept in the compiled form: rules with some
            // are compiled when `kb` starts, to show them.
            Ok(kb) if kb.warnings.is_empty() => {
                let parts = kb.to_parts().map_err(|e| e.to_string())?;
                parts.check().map_err(|e| e.to_string())?;
                return Ok(parts);
            }
            Ok(kb) => problems = kb.warnings,
            Err(found) => problems = found,
        }
    }
    Err(problems
        .iter()
        .map(|p| format!("{}: {}", p.loc.position(), p.message))
        .collect::<Vec<_>>()
        .join("\n"))
}
