//! A peer measured side by side: kb's bundled rules against the same decisions for the
//! pending, crash-loop and image-pull symptoms written in Rego (`benches/rego/pod.rego`)
//! and run by regorus, on the same generated bundles: `cargo bench -p kb --bench peer`.
//!
//! The data is `python3 /work/shared/bench/gen-bundles.py 2000 42`, or the NDJSON file
//! named by `KB_BENCH_DATA`. Before measuring, the two are checked to agree: for every
//! bundle, the causes kb confirms through these three symptoms must be the policy's.
//! Every benchmark handles all the bundles once per iteration (items = bundles).

#![expect(clippy::unwrap_used, reason = "benchmarks")]

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use divan::Bencher;
use divan::counter::ItemsCount;
use kb::knowledge::Loaded;
use kb_engine::Lang;
use kb_engine::diagnosis::Status;
use kb_engine::json::Json;
use rayon::prelude::*;
use regorus::languages::rego::compiler::Compiler;
use regorus::rvm::program::Program;
use regorus::rvm::vm::RegoVM;
use serde_json::Value;

const GENERATOR: &str = "/work/shared/bench/gen-bundles.py";
const POLICY: &str = include_str!("rego/pod.rego");
const ENTRY: &str = "data.kb.causes";
const SYMPTOMS: [&str; 3] = ["pod-pending", "pod-crash-loop", "pod-image-pull"];

/// The allocator the `kb` command runs with (`kb/src/main.rs`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let Some(lines) = data() else {
        println!(
            "peer: no data; set KB_BENCH_DATA to an NDJSON file of bundles, or make python3 and \
             {GENERATOR} available — skipped"
        );
        return;
    };
    agreement(lines);
    divan::main();
}

/// The bundles, one JSON text each, read once.
fn data() -> Option<&'static [String]> {
    static DATA: OnceLock<Option<Vec<String>>> = OnceLock::new();
    DATA.get_or_init(|| {
        let text = match std::env::var_os("KB_BENCH_DATA") {
            Some(path) => std::fs::read_to_string(&path).ok()?,
            None => {
                let out = std::process::Command::new("python3")
                    .args([GENERATOR, "2000", "42"])
                    .output()
                    .ok()?;
                if !out.status.success() {
                    return None;
                }
                String::from_utf8(out.stdout).ok()?
            }
        };
        let lines: Vec<String> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_owned)
            .collect();
        (!lines.is_empty()).then_some(lines)
    })
    .as_deref()
}

fn lines() -> &'static [String] {
    data().unwrap()
}

fn loaded() -> Loaded {
    Loaded::bundled()
        .map_err(|_| "the bundled knowledge base compiles")
        .unwrap()
}

/// kb's pipeline for one parsed bundle: adapter, bind, evaluate.
fn kb_diagnose(loaded: &Loaded, document: Json<'_>) -> kb_engine::Diagnosis {
    let subject = kb::adapter::subjects(vec![document]).unwrap().remove(0);
    loaded
        .kb
        .evaluate(&loaded.kb.bind(&subject.document), Lang::En)
}

/// The causes kb confirms through the three symptoms the policy covers.
fn kb_causes(diagnosis: &kb_engine::Diagnosis) -> BTreeSet<String> {
    diagnosis
        .causes
        .iter()
        .filter(|c| c.status == Status::Confirmed && SYMPTOMS.contains(&c.symptom.as_str()))
        .map(|c| c.id.clone())
        .collect()
}

/// The policy, compiled once for the interpreter.
fn compiled_policy() -> regorus::CompiledPolicy {
    let mut engine = regorus::Engine::new();
    engine
        .add_policy(String::from("pod.rego"), String::from(POLICY))
        .unwrap();
    engine.compile_with_entrypoint(&ENTRY.into()).unwrap()
}

/// The policy compiled to an RVM program, loaded in a VM that is reused for every input.
fn vm() -> RegoVM {
    let program: Arc<Program> =
        Compiler::compile_from_policy(&compiled_policy(), &[ENTRY]).unwrap();
    let mut vm = RegoVM::new();
    vm.load_program(program);
    // The default cap is 25,000 instructions; a bundle here takes under 2,000, but a
    // benchmark should not fail on a larger one.
    vm.set_max_instructions(usize::MAX);
    vm
}

fn rego_causes(result: &regorus::Value) -> BTreeSet<String> {
    match result.as_set() {
        Ok(set) => set
            .iter()
            .map(|v| v.as_string().unwrap().to_string())
            .collect(),
        Err(_) => BTreeSet::new(),
    }
}

/// Checks, before measuring, that kb and the policy (in the RVM and in the interpreter)
/// decide alike on every bundle, and prints the rate.
///
/// kb's answer is taken twice, each bundle parsed as a stream's lines are: with the whole
/// bundled knowledge base, and with only the three symptoms' rule files ([`loaded_three`]).
fn agreement(lines: &[String]) {
    let (loaded, (_dir, three)) = (loaded(), loaded_three());
    let kbs = [&loaded, &three].map(|loaded| (loaded, kb::adapter::pruner(&loaded.kb)));
    let policy = compiled_policy();
    let mut vm = vm();
    let (mut same, mut with_causes, mut shown) = (0usize, 0usize, 0usize);
    for (n, line) in lines.iter().enumerate() {
        let [ours, ours_three] = kbs.each_ref().map(|(loaded, pruner)| {
            kb_causes(&kb_diagnose(loaded, pruner.parse(line.as_bytes()).unwrap()))
        });
        let input = regorus::Value::from_json_str(line).unwrap();
        vm.set_input(input.clone());
        let theirs = rego_causes(&vm.execute().unwrap());
        let interpreted = rego_causes(&policy.eval_with_input(input).unwrap());
        with_causes += usize::from(!ours.is_empty());
        if ours == theirs && ours_three == theirs && theirs == interpreted {
            same += 1;
        } else if shown < 10 {
            shown += 1;
            println!(
                "peer: bundle {n} differs: kb {ours:?}, kb with three symptoms' files {ours_three:?}, rvm {theirs:?}, interpreter {interpreted:?}"
            );
        }
    }
    let rate = 100.0 * same as f64 / lines.len() as f64;
    println!(
        "peer: {} bundles ({with_causes} with a confirmed cause of the three symptoms); kb and the Rego policy agree on {same} ({rate:.2} %)",
        lines.len()
    );
}

/// Benchmarks `f` on every bundle, all of them once an iteration (items =
/// bundles); `f` returns a count so that its work is not optimised away.
fn each_bundle(bencher: Bencher<'_, '_>, f: impl Fn(&str) -> usize + Sync) {
    let lines = lines();
    bencher
        .counter(ItemsCount::new(lines.len()))
        .bench(|| lines.iter().map(|l| f(l)).sum::<usize>());
}

/// [`each_bundle`] on every core: the bundles are shared out by rayon and the
/// counts collected in order, as a stream's results are written.
fn each_bundle_every_core(bencher: Bencher<'_, '_>, f: impl Fn(&str) -> usize + Sync) {
    let lines = lines();
    bencher.counter(ItemsCount::new(lines.len())).bench(|| {
        lines
            .par_iter()
            .map(|l| f(l))
            .collect::<Vec<usize>>()
            .iter()
            .sum::<usize>()
    });
}

/// The floor: parse every bundle into `serde_json::Value`, nothing else.
#[divan::bench(sample_count = 20, sample_size = 1)]
fn parse_value(bencher: Bencher<'_, '_>) {
    each_bundle(bencher, |l| {
        usize::from(serde_json::from_str::<Value>(l).unwrap().is_object())
    });
}

/// Reading every byte of every bundle as JSON and keeping nothing: what
/// any parse costs before it builds anything.
#[divan::bench(sample_count = 20, sample_size = 1)]
fn parse_skip(bencher: Bencher<'_, '_>) {
    each_bundle(bencher, |l| {
        serde_json::from_str::<serde::de::IgnoredAny>(l).map_or(0, |_| 1)
    });
}

/// Parsing keeping only what kb's rules read, as `kb eval` reads NDJSON.
#[divan::bench(sample_count = 20, sample_size = 1)]
fn parse_pruned(bencher: Bencher<'_, '_>) {
    let loaded = loaded();
    let pruner = kb::adapter::pruner(&loaded.kb);
    each_bundle(bencher, |l| {
        usize::from(pruner.parse(l.as_bytes()).unwrap().is_object())
    });
}

/// kb end to end from whole documents, as `kb eval` reads a file: parse, adapter, bind, evaluate.
#[divan::bench(sample_count = 20, sample_size = 1)]
fn kb_end_to_end(bencher: Bencher<'_, '_>) {
    let loaded = loaded();
    each_bundle(bencher, |l| {
        kb_diagnose(&loaded, serde_json::from_str::<Json>(l).unwrap())
            .causes
            .len()
    });
}

/// kb end to end as `kb eval` runs lines of NDJSON: parse keeping only what
/// the rules read, adapter, bind, evaluate; on one core, or on every core with
/// the results kept in order, as a stream runs.
fn pruned_end_to_end(bencher: Bencher<'_, '_>, loaded: &Loaded, every_core: bool) {
    let pruner = kb::adapter::pruner(&loaded.kb);
    let diagnose = |l: &str| {
        kb_diagnose(loaded, pruner.parse(l.as_bytes()).unwrap())
            .causes
            .len()
    };
    if every_core {
        each_bundle_every_core(bencher, diagnose);
    } else {
        each_bundle(bencher, diagnose);
    }
}

/// kb end to end as `kb eval` runs a line of NDJSON, on one core.
#[divan::bench(sample_count = 20, sample_size = 1)]
fn kb_end_to_end_pruned(bencher: Bencher<'_, '_>) {
    pruned_end_to_end(bencher, &loaded(), false);
}

/// The same on every core, as `kb eval` runs an NDJSON stream.
#[divan::bench(sample_count = 20, sample_size = 1)]
fn kb_end_to_end_pruned_every_core(bencher: Bencher<'_, '_>) {
    pruned_end_to_end(bencher, &loaded(), true);
}

/// Binds and evaluates every bundle, parsed and through the adapter first.
fn eval_only(bencher: Bencher<'_, '_>, loaded: &Loaded) {
    let documents: Vec<Json<'static>> = lines()
        .iter()
        .map(|l| {
            kb::adapter::subjects(vec![serde_json::from_str::<Json>(l).unwrap()])
                .unwrap()
                .remove(0)
                .document
        })
        .collect();
    bencher.counter(ItemsCount::new(documents.len())).bench(|| {
        documents
            .iter()
            .map(|d| {
                loaded
                    .kb
                    .evaluate(&loaded.kb.bind(d), Lang::En)
                    .causes
                    .len()
            })
            .sum::<usize>()
    });
}

/// kb on documents already parsed and through the adapter: bind and evaluate.
#[divan::bench(sample_count = 20, sample_size = 1)]
fn kb_eval_only(bencher: Bencher<'_, '_>) {
    let loaded = loaded();
    eval_only(bencher, &loaded);
}

/// The bundled rule files the three symptoms need, without their tests: pod.kb (shared
/// facts), the three symptoms' files, and hook-failure.kb and error.kb, whose facts and
/// causes crash-loop.kb reads (so two more symptoms come along: five of the twenty-two);
/// of container-creating.kb, only the cause of a broken runtime, which image-pull.kb names;
/// of terminating.kb, only the kubelet's log (with the ids its command names), which
/// hook-failure.kb reads; and of init-failure.kb, only the facts that name a failing init
/// container, which the fix of a forbidden API call in error.kb reads.
fn loaded_three() -> (tempfile::TempDir, Loaded) {
    const FILES: [&str; 6] = [
        "pod.kb",
        "pending.kb",
        "crash-loop.kb",
        "image-pull.kb",
        "hook-failure.kb",
        "error.kb",
    ];
    const DECLARED_ELSEWHERE: [(&str, &[&str]); 3] = [
        (
            "container-creating.kb",
            &["cause creating.runtime-broken-install "],
        ),
        (
            "terminating.kb",
            &[
                "fact term_kubelet_log: ",
                "fact term_pod_uid: ",
                "fact term_container_id: ",
            ],
        ),
        (
            "init-failure.kb",
            &[
                "fact init_steps: ",
                "fact init_failed_container: ",
                "fact init_container_name: ",
                "fact init_exited_now: ",
                "fact init_termination_message: ",
                "fact init_start_refused_event: ",
                "fact init_log: ",
                "fact init_output: ",
                "fact init_forbidden: ",
            ],
        ),
    ];
    let rules = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(rules.join("kb.toml"), dir.path().join("kb.toml")).unwrap();
    for file in FILES {
        let text = std::fs::read_to_string(rules.join(file)).unwrap();
        let kept = declarations(&text, |line| line.starts_with("test "));
        std::fs::write(dir.path().join(file), kept).unwrap();
    }
    for (file, openings) in DECLARED_ELSEWHERE {
        let text = std::fs::read_to_string(rules.join(file)).unwrap();
        let kept = declarations(&text, |line| !openings.iter().any(|o| line.starts_with(o)));
        std::fs::write(dir.path().join(file), kept).unwrap();
    }
    let loaded = Loaded::from_dir(dir.path())
        .map_err(|_| "the three symptoms' rule files compile")
        .unwrap();
    (dir, loaded)
}

/// The lines of a formatted rule file, without the top-level declarations `skip` picks by
/// their first line (each ends at a `}` of its own line).
fn declarations(text: &str, skip: impl Fn(&str) -> bool) -> String {
    let mut kept = String::new();
    let mut skipping = false;
    for line in text.lines() {
        if !line.starts_with(' ')
            && !line.starts_with('}')
            && !line.is_empty()
            && !line.starts_with('#')
        {
            skipping = skip(line);
        }
        if !skipping {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept
}

/// `kb_eval_only` with only the rule files the three symptoms need (see `loaded_three`),
/// to show how much of kb's time goes to the seventeen other symptoms.
#[divan::bench(sample_count = 20, sample_size = 1)]
fn kb_eval_only_three_symptoms(bencher: Bencher<'_, '_>) {
    let (_dir, loaded) = loaded_three();
    eval_only(bencher, &loaded);
}

/// `kb_end_to_end_pruned` with only the rule files the three symptoms need: the same
/// decisions as the Rego policy, and the parser keeps only what they read.
#[divan::bench(sample_count = 20, sample_size = 1)]
fn kb_end_to_end_pruned_three_symptoms(bencher: Bencher<'_, '_>) {
    pruned_end_to_end(bencher, &loaded_three().1, false);
}

/// The same on every core, results kept in order.
#[divan::bench(sample_count = 20, sample_size = 1)]
fn kb_end_to_end_pruned_three_symptoms_every_core(bencher: Bencher<'_, '_>) {
    pruned_end_to_end(bencher, &loaded_three().1, true);
}

/// regorus end to end, compiled (RVM): parse into a regorus `Value`, set it as the input of
/// a VM loaded once, run `data.kb.causes`.
#[divan::bench(sample_count = 20, sample_size = 1)]
fn regorus_end_to_end(bencher: Bencher<'_, '_>) {
    let mut vm = vm();
    let lines = lines();
    bencher
        .counter(ItemsCount::new(lines.len()))
        .bench_local(|| {
            lines
                .iter()
                .map(|l| {
                    vm.set_input(regorus::Value::from_json_str(l).unwrap());
                    vm.execute().unwrap().as_set().map_or(0, |s| s.len())
                })
                .sum::<usize>()
        });
}

/// regorus end to end on every core, one VM loaded with the program in each thread, results
/// collected in order: the peer given the same cores as
/// [`kb_end_to_end_pruned_every_core`].
#[divan::bench(sample_count = 20, sample_size = 1)]
fn regorus_end_to_end_every_core(bencher: Bencher<'_, '_>) {
    thread_local! {
        static VM: RefCell<RegoVM> = RefCell::new(vm());
    }
    // Each thread loads its VM before anything is timed.
    rayon::broadcast(|_| VM.with(|_| ()));
    each_bundle_every_core(bencher, |l| {
        VM.with_borrow_mut(|vm| {
            vm.set_input(regorus::Value::from_json_str(l).unwrap());
            vm.execute().unwrap().as_set().map_or(0, |s| s.len())
        })
    });
}

/// regorus (RVM) on inputs already parsed into regorus values.
#[divan::bench(sample_count = 20, sample_size = 1)]
fn regorus_eval_only(bencher: Bencher<'_, '_>) {
    let mut vm = vm();
    let inputs: Vec<regorus::Value> = lines()
        .iter()
        .map(|l| regorus::Value::from_json_str(l).unwrap())
        .collect();
    bencher
        .counter(ItemsCount::new(inputs.len()))
        .bench_local(|| {
            inputs
                .iter()
                .map(|v| {
                    vm.set_input(v.clone());
                    vm.execute().unwrap().as_set().map_or(0, |s| s.len())
                })
                .sum::<usize>()
        });
}

/// regorus's tree-walking interpreter end to end, for reference: parse, then evaluate the
/// policy compiled once (`CompiledPolicy::eval_with_input`).
#[divan::bench(sample_count = 10, sample_size = 1)]
fn regorus_interpreter_end_to_end(bencher: Bencher<'_, '_>) {
    let policy = compiled_policy();
    each_bundle(bencher, |l| {
        policy
            .eval_with_input(regorus::Value::from_json_str(l).unwrap())
            .unwrap()
            .as_set()
            .map_or(0, |s| s.len())
    });
}
