//! Benchmarks of the whole pipeline on the bundled knowledge base:
//! `cargo bench -p kb`. Read `eval` against `parse_json`, the floor of
//! merely parsing the same documents.

#![expect(clippy::unwrap_used, reason = "benchmarks")]

use std::path::Path;

#[path = "support/synthetic.rs"]
mod synthetic;

use divan::Bencher;
use kb::knowledge::Loaded;
use kb_engine::json::Json;
use serde_json::Value;

/// The allocator the `kb` command runs with (`kb/src/main.rs`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    divan::main();
}

/// Every fixture bundle of the bundled knowledge base, as text.
fn fixtures() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/fixtures");
    let mut texts = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.unwrap();
        if entry.path().extension().is_some_and(|e| e == "json") {
            texts.push(std::fs::read_to_string(entry.path()).unwrap());
        }
    }
    texts
}

/// Load the bundled knowledge base from the compiled form built into `kb`,
/// as every `kb` run does.
#[divan::bench]
fn load_bundled() -> Loaded {
    Loaded::bundled()
        .map_err(|_| "the bundled knowledge base loads")
        .unwrap()
}

/// Parse and compile the bundled knowledge base's rule files.
#[divan::bench]
fn compile_bundled() -> Loaded {
    Loaded::bundled_from_source()
        .map_err(|_| "the bundled knowledge base compiles")
        .unwrap()
}

/// Load the bundled rules as a folder's are once kept compiled between runs
/// (`kb/src/cache.rs`): written without DFAs, decoded and checked whole.
#[divan::bench]
fn load_kept(bencher: Bencher<'_, '_>) {
    let kb = compile_bundled().kb;
    let bytes = bytes::Bytes::from(kb.to_bytes_without_dfas().unwrap());
    bencher.bench(|| kb_engine::KnowledgeBase::from_bytes(bytes.clone(), []).unwrap());
}

/// The floor: parse every fixture into `serde_json::Value`, nothing else.
#[divan::bench]
fn parse_json(bencher: Bencher<'_, '_>) {
    let texts = fixtures();
    bencher
        .counter(divan::counter::ItemsCount::new(texts.len()))
        .bench(|| {
            texts
                .iter()
                .map(|t| serde_json::from_str::<Value>(t).unwrap())
                .collect::<Vec<_>>()
        });
}

/// Parse, bind and diagnose every fixture.
#[divan::bench]
fn eval(bencher: Bencher<'_, '_>) {
    let loaded = load_bundled();
    let texts = fixtures();
    bencher
        .counter(divan::counter::ItemsCount::new(texts.len()))
        .bench(|| {
            texts
                .iter()
                .map(|t| {
                    let document: Json = serde_json::from_str(t).unwrap();
                    let subject = kb::adapter::subjects(vec![document]).unwrap().remove(0);
                    loaded
                        .kb
                        .evaluate(&loaded.kb.bind(&subject.document), kb_engine::Lang::En)
                        .causes
                        .len()
                })
                .sum::<usize>()
        });
}

/// One bundle, `examples/pending-insufficient-cpu.json`: parse, bind and
/// diagnose, with the regexes and templates it uses already compiled.
#[divan::bench]
fn eval_one_bundle(bencher: Bencher<'_, '_>) {
    let loaded = load_bundled();
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/pending-insufficient-cpu.json");
    let text = std::fs::read_to_string(path).unwrap();
    let diagnose = || {
        let document: Json = serde_json::from_str(&text).unwrap();
        let subject = kb::adapter::subjects(vec![document]).unwrap().remove(0);
        loaded
            .kb
            .evaluate(&loaded.kb.bind(&subject.document), kb_engine::Lang::En)
    };
    let first = diagnose().causes.first().map(|c| c.id.clone());
    assert_eq!(first.as_deref(), Some("pending.insufficient-resources"));
    bencher.bench(diagnose);
}

/// The whole runbook site, both languages, in memory: Markdown, then HTML.
#[divan::bench(args = [false, true])]
fn docs(bencher: Bencher<'_, '_>, html: bool) {
    let loaded = load_bundled();
    let args = kb::command::docs::Args {
        out: "unused".into(),
        html,
        templates: None,
    };
    bencher.bench(|| {
        kb::command::docs::generate(&args, &loaded, None)
            .unwrap()
            .len()
    });
}

/// Compiling knowledge bases 1×, 10× and 100× the size of the bundled one,
/// one rule file per unit, as `kb check DIR` does (files parse in
/// parallel), to show how the cost grows with size.
#[divan::bench(args = [1, 10, 100], sample_count = 5)]
fn compile_scaled(bencher: Bencher<'_, '_>, scale: usize) {
    let files = synthetic::files(scale);
    bencher.bench(|| compile_files(&files));
}

/// The same, 1000× the bundled knowledge base: one sample.
#[divan::bench(sample_count = 1, sample_size = 1)]
fn compile_scaled_1000(bencher: Bencher<'_, '_>) {
    let files = synthetic::files(1000);
    bencher.bench(|| compile_files(&files));
}

fn compile_files(files: &[(String, String)]) -> usize {
    kb::knowledge::compile(
        files
            .iter()
            .map(|(name, text)| (name.as_str(), text.as_str())),
    )
    .map_err(|_| "the synthetic knowledge base compiles")
    .unwrap()
    .causes
    .len()
}
