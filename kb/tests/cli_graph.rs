//! End-to-end tests of the authoring tools, run on the built binary:
//! `kb graph`, `kb eval --why-not`, and what `kb test` shows of a failing
//! test (the why-not trace, JUnit XML).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "tests"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::fs;

use serde_json::Value;
use tempfile::TempDir;

mod common;
use common::{Run, example, finish, kb, run, run_stdin};

// ------------------------------------------------------------------ helpers

fn json(run: &Run) -> Value {
    assert_eq!(run.code, 0, "stderr:\n{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", run.stdout))
}

/// The nodes (id → kind) and edges (from, to, condition) of `kb graph --format json`.
type Nodes = BTreeMap<String, String>;
type Edges = Vec<(String, String, String)>;

fn graph(extra: &[&str]) -> (Nodes, Edges) {
    let mut args = vec!["graph", "--format", "json"];
    args.extend_from_slice(extra);
    let value = json(&run(args));
    let nodes = value["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            assert!(n["title"].is_string(), "a node without a title: {n}");
            (
                n["id"].as_str().unwrap().to_owned(),
                n["kind"].as_str().unwrap().to_owned(),
            )
        })
        .collect::<Vec<_>>();
    let count = nodes.len();
    let nodes: Nodes = nodes.into_iter().collect();
    assert_eq!(nodes.len(), count, "node ids are unique");
    let edges = value["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["from"].as_str().unwrap().to_owned(),
                e["to"].as_str().unwrap().to_owned(),
                e["condition"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    (nodes, edges)
}

/// The nodes reachable from the symptoms along the edges.
fn reachable(nodes: &Nodes, edges: &Edges) -> BTreeSet<String> {
    let mut seen: BTreeSet<String> = nodes
        .iter()
        .filter(|(_, kind)| *kind == "symptom")
        .map(|(id, _)| id.clone())
        .collect();
    loop {
        let before = seen.len();
        for (from, to, _) in edges {
            if seen.contains(from) {
                seen.insert(to.clone());
            }
        }
        if seen.len() == before {
            return seen;
        }
    }
}

// ------------------------------------------------------------------ kb graph

#[test]
fn graph_json_is_a_closed_graph_where_every_cause_is_reachable() {
    let (nodes, edges) = graph(&[]);
    for kind in ["symptom", "check", "cause"] {
        assert!(nodes.values().any(|k| k == kind), "no {kind} node");
    }
    for (id, kind) in &nodes {
        assert!(
            id.starts_with(&format!("{kind}:")),
            "`{id}` is not named after its kind `{kind}`"
        );
    }
    for (from, to, condition) in &edges {
        assert!(nodes.contains_key(from), "edge from unknown node {from}");
        assert!(nodes.contains_key(to), "edge to unknown node {to}");
        assert!(
            !condition.is_empty(),
            "edge {from} -> {to} has no condition"
        );
    }
    let reached = reachable(&nodes, &edges);
    for (id, kind) in &nodes {
        if kind == "cause" || kind == "check" {
            assert!(reached.contains(id), "{id} is not reachable from a symptom");
        }
    }
    assert!(
        edges.iter().any(|(_, _, c)| c == "otherwise"),
        "fall-throughs are edges"
    );
    assert!(
        edges
            .iter()
            .any(|(from, to, c)| from == "symptom:pod-pending"
                && to.starts_with("check:")
                && c.contains("Pending")),
        "a symptom's edge carries its `when`"
    );
    // Deterministic: the same bytes twice.
    assert_eq!(
        run(["graph", "--format", "json"]).stdout,
        run(["graph", "--format", "json"]).stdout
    );
}

#[test]
fn graph_symptom_keeps_only_what_is_under_it() {
    let (nodes, edges) = graph(&["--symptom", "pod-pending"]);
    let symptoms: Vec<&String> = nodes
        .iter()
        .filter(|(_, k)| *k == "symptom")
        .map(|(id, _)| id)
        .collect();
    assert_eq!(symptoms, ["symptom:pod-pending"]);
    let causes: Vec<&String> = nodes
        .iter()
        .filter(|(_, k)| *k == "cause")
        .map(|(id, _)| id)
        .collect();
    assert!(causes.len() > 3, "{causes:?}");
    for cause in &causes {
        assert!(
            cause.starts_with("cause:pending."),
            "{cause} is not a pending cause"
        );
    }
    assert!(causes.contains(&&String::from("cause:pending.untolerated-taint")));
    let reached = reachable(&nodes, &edges);
    assert_eq!(reached.len(), nodes.len(), "everything kept is reachable");
}

#[test]
fn graph_dot_is_graphviz_with_shapes_and_escaped_labels() {
    let out = run(["graph"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with("digraph"), "{}", out.stdout);
    assert!(out.stdout.trim_end().ends_with('}'));
    assert!(out.stdout.contains("\"symptom:pod-pending\" [label="));
    assert!(out.stdout.contains("shape=ellipse"));
    assert!(out.stdout.contains("shape=diamond"));
    assert!(out.stdout.contains("shape=box"));
    assert!(out.stdout.contains("\"cause:pending.untolerated-taint\""));
    assert!(out.stdout.contains("label=\"otherwise\""));
    // Every `"` inside a label is escaped: quotes pair up on every line.
    for line in out.stdout.lines() {
        let unescaped = line.replace("\\\\", "").replace("\\\"", "");
        assert_eq!(
            unescaped.matches('"').count() % 2,
            0,
            "unbalanced quotes: {line}"
        );
    }
    // A condition with a string literal shows it escaped.
    assert!(out.stdout.contains("phase == \\\"Pending\\\""));
}

#[test]
fn graph_mermaid_draws_a_flowchart_per_symptom() {
    let all = run(["graph", "--format", "mermaid"]);
    assert_eq!(all.code, 0, "{}", all.stderr);
    assert!(all.stdout.contains("flowchart"));
    let one = run(["graph", "--format", "mermaid", "--symptom", "pod-pending"]);
    assert_eq!(one.code, 0, "{}", one.stderr);
    assert_eq!(one.stdout.matches("flowchart").count(), 1);
    assert!(one.stdout.contains("pending.untolerated-taint"));
    assert!(
        all.stdout.matches("flowchart").count() > 5,
        "one flowchart per symptom"
    );
}

#[test]
fn graph_titles_follow_lang() {
    let (en, zh) = (
        run(["graph", "--symptom", "pod-pending", "--format", "json"]),
        run([
            "graph",
            "--symptom",
            "pod-pending",
            "--format",
            "json",
            "--lang",
            "zh",
        ]),
    );
    assert_ne!(
        json(&en)["nodes"][0]["title"],
        json(&zh)["nodes"][0]["title"]
    );
    assert_eq!(json(&en)["nodes"][0]["id"], json(&zh)["nodes"][0]["id"]);
}

#[test]
fn graph_unknown_symptom_exits_2_with_a_suggestion() {
    let out = run(["graph", "--symptom", "pod-pendng"]);
    assert_eq!(out.code, 2);
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr.contains("did you mean `pod-pending`"),
        "{}",
        out.stderr
    );
    let far = run(["graph", "--symptom", "no-such-thing-at-all"]);
    assert_eq!(far.code, 2);
    assert!(far.stderr.contains("not a symptom"), "{}", far.stderr);
}

// ------------------------------------------------------------------ kb eval --why-not

#[test]
fn why_not_shows_the_failing_condition_with_the_scheduler_message() {
    let input = example("pending-insufficient-cpu.json");
    let out = run([
        OsStr::new("eval"),
        input.as_os_str(),
        OsStr::new("--why-not"),
        OsStr::new("pending.untolerated-taint"),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = &out.stdout;
    assert!(text.contains("why not pending.untolerated-taint"), "{text}");
    assert!(text.contains("not reached"), "{text}");
    assert!(text.contains("from symptom pod-pending"), "{text}");
    let failing = text
        .lines()
        .find(|l| l.contains("✗") && l.contains("scheduling_message matches"))
        .unwrap_or_else(|| panic!("no failing `scheduling_message matches` condition:\n{text}"));
    assert!(failing.contains("untolerated taint"), "{failing}");
    assert!(
        text.contains("scheduling_message = \"0/3 nodes are available: 3 Insufficient cpu."),
        "{text}"
    );
    assert!(text.contains("stops here"), "{text}");
    assert!(text.contains("✓ phase == \"Pending\""), "{text}");
    assert!(
        !text.contains("fix:"),
        "a why-not report is not a diagnosis: {text}"
    );
}

#[test]
fn why_not_json_is_the_documented_object() {
    let input = example("pending-insufficient-cpu.json");
    let value = json(&run([
        OsStr::new("eval"),
        input.as_os_str(),
        OsStr::new("--why-not"),
        OsStr::new("pending.untolerated-taint"),
        OsStr::new("--format"),
        OsStr::new("json"),
    ]));
    assert_eq!(value["why_not"], "pending.untolerated-taint");
    assert_eq!(value["status"], "unreached");
    assert!(value["subject"].as_str().unwrap().starts_with("pod "));
    let ways = value["ways"].as_array().unwrap();
    assert_eq!(ways.len(), 1, "{value:#}");
    let way = &ways[0];
    assert_eq!(way["symptom"], "pod-pending");
    let evidence = way["evidence"].as_array().unwrap();
    let stop = way["stopped_at"].as_u64().unwrap() as usize;
    assert_eq!(stop + 1, evidence.len(), "nothing after the stop");
    assert_eq!(evidence[0]["result"], "true");
    let failed = &evidence[stop];
    assert_eq!(failed["result"], "false");
    assert!(
        failed["condition"]
            .as_str()
            .unwrap()
            .starts_with("scheduling_message matches")
    );
    assert_eq!(failed["check"], "What does the scheduler say?");
    assert_eq!(failed["facts"][0]["name"], "scheduling_message");
    assert!(
        failed["facts"][0]["value"]
            .as_str()
            .unwrap()
            .contains("Insufficient cpu")
    );
}

#[test]
fn why_not_says_what_was_amiss_in_the_input() {
    // A pod whose container statuses are a string: the facts read from them
    // are unknown, the way to the memory limit stops there, and the report
    // says why they are missing.
    let text = fs::read_to_string(example("crash-loop-oomkilled.json")).unwrap();
    let mut bundle: Value = serde_json::from_str(&text).unwrap();
    bundle["pod"]["status"]["containerStatuses"] = Value::from("order-service: OOMKilled");
    let args = ["eval", "-", "--why-not", "crash.oom-limit", "--format"];
    let warning = "`pod.status.containerStatuses` is a string (\"order-service: OOMKilled\"), \
                   where the rules read a list";
    // The crash loop is possible, not confirmed.
    let out = run_stdin(args.into_iter().chain(["json"]), bundle.to_string());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["status"], "possible", "{report}");
    let warnings = report["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().starts_with(warning)),
        "{warnings:?}"
    );
    let out = run_stdin(args.into_iter().chain(["text"]), bundle.to_string());
    assert!(
        out.stdout.contains(&format!("warning: {warning}")),
        "{}",
        out.stdout
    );
}

#[test]
fn why_not_markdown_is_a_plain_text_block_even_when_colour_is_forced() {
    let output = kb()
        .env("CLICOLOR_FORCE", "1")
        .arg("eval")
        .arg(example("pending-insufficient-cpu.json"))
        .args([
            "--why-not",
            "pending.untolerated-taint",
            "--format",
            "markdown",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.starts_with("```text\n"), "{text}");
    assert!(text.contains("stops here"), "{text}");
    assert!(
        !text.contains('\u{1b}'),
        "no escape codes in Markdown: {text:?}"
    );
}

#[test]
fn why_not_of_a_confirmed_cause_says_so_with_its_evidence() {
    let input = example("pending-insufficient-cpu.json");
    let out = run([
        OsStr::new("eval"),
        input.as_os_str(),
        OsStr::new("--why-not"),
        OsStr::new("pending.insufficient-resources"),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("confirmed on this input"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("✓ What does the scheduler say?"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("✗"), "{}", out.stdout);
    assert!(!out.stdout.contains("stops here"), "{}", out.stdout);

    let value = json(&run([
        OsStr::new("eval"),
        input.as_os_str(),
        OsStr::new("--why-not"),
        OsStr::new("pending.insufficient-resources"),
        OsStr::new("-f"),
        OsStr::new("json"),
    ]));
    assert_eq!(value["status"], "confirmed");
    assert!(
        value["ways"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["stopped_at"].is_null())
    );
}

#[test]
fn why_not_unknown_cause_exits_2_with_a_suggestion() {
    let input = example("pending-insufficient-cpu.json");
    let out = run([
        OsStr::new("eval"),
        input.as_os_str(),
        OsStr::new("--why-not"),
        OsStr::new("pending.untolerated-tiant"),
    ]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("did you mean `pending.untolerated-taint`"),
        "{}",
        out.stderr
    );
    let symptom = run([
        OsStr::new("eval"),
        input.as_os_str(),
        OsStr::new("--why-not"),
        OsStr::new("pod-pending"),
    ]);
    assert_eq!(symptom.code, 2);
    assert!(
        symptom.stderr.contains("it is a symptom"),
        "{}",
        symptom.stderr
    );
}

// ------------------------------------------------------------------ kb test

const RULES: &str = r#"
input pod "The Pod"
input events "Events"
fact phase: string "Phase" { from pod.status.phase }
fact message: string "What the scheduler said" {
  from last(events[.reason == "FailedScheduling"]).message
}
symptom pending "Pending" {
  when phase == "Pending"
  check "What does the scheduler say?" {
    if message contains "Insufficient" => c.full
    if message contains "taint" => c.taint
  }
}
cause c.full "Full" { fix "Add nodes" { step "Scale" } }
cause c.taint "Taint" { fix "Untaint" { step "Untaint" } }

test "a full cluster" {
  input {"pod": {"status": {"phase": "Pending"}},
         "events": [{"reason": "FailedScheduling", "message": "3 Insufficient cpu"}]}
  expect c.full
}
test "a taint, wrongly expected" {
  input {"pod": {"status": {"phase": "Pending"}},
         "events": [{"reason": "FailedScheduling", "message": "3 Insufficient cpu"}]}
  expect c.taint
}
"#;

const MORE: &str = r#"
test "another file, passing" {
  input {"pod": {"status": {"phase": "Pending"}},
         "events": [{"reason": "FailedScheduling", "message": "1 node had untolerated taint"}]}
  expect c.taint
}
"#;

fn failing_kb() -> TempDir {
    let dir = TempDir::new().unwrap();
    fs::write(dir.path().join("rules.kb"), RULES).unwrap();
    fs::write(dir.path().join("more.kb"), MORE).unwrap();
    dir
}

#[test]
fn a_failing_test_shows_the_why_not_trace() {
    let dir = failing_kb();
    let out = run([OsStr::new("test"), dir.path().as_os_str()]);
    assert_eq!(out.code, 4, "{}\n{}", out.stdout, out.stderr);
    let text = &out.stdout;
    assert!(
        text.contains("test a taint, wrongly expected ... FAILED"),
        "{text}"
    );
    assert!(text.contains("why not `c.taint`"), "{text}");
    assert!(
        text.contains("✗ What does the scheduler say? → message contains \"taint\""),
        "{text}"
    );
    assert!(text.contains("message = \"3 Insufficient cpu\""), "{text}");
    assert!(text.contains("2 passed, 1 failed"), "{text}");
}

#[test]
fn junit_has_a_testcase_per_test_and_a_failure_for_the_failing_one() {
    let dir = failing_kb();
    let xml = dir.path().join("out.xml");
    let out = run([
        OsStr::new("test"),
        dir.path().as_os_str(),
        OsStr::new("--junit"),
        xml.as_os_str(),
    ]);
    assert_eq!(out.code, 4, "{}\n{}", out.stdout, out.stderr);
    let text = fs::read_to_string(&xml).unwrap();
    assert!(text.starts_with("<?xml"), "{text}");
    assert_eq!(text.matches("<testcase").count(), 3, "{text}");
    assert_eq!(
        text.matches("<testsuite ").count(),
        2,
        "one per rule file: {text}"
    );
    assert_eq!(text.matches("<failure").count(), 1, "{text}");
    assert!(
        text.contains("name=\"a taint, wrongly expected\""),
        "{text}"
    );
    assert!(text.contains("why not `c.taint`"), "{text}");
    assert!(text.contains("failures=\"1\""), "{text}");

    // With a filter, only the tests run are written.
    let filtered = run([
        OsStr::new("test"),
        dir.path().as_os_str(),
        OsStr::new("--filter"),
        OsStr::new("full"),
        OsStr::new("--junit"),
        xml.as_os_str(),
    ]);
    assert_eq!(filtered.code, 0, "{}", filtered.stdout);
    let text = fs::read_to_string(&xml).unwrap();
    assert_eq!(text.matches("<testcase").count(), 1, "{text}");
    assert_eq!(text.matches("<failure").count(), 0, "{text}");
}

#[test]
fn junit_to_an_unwritable_place_is_an_error() {
    let dir = failing_kb();
    let out = run([
        OsStr::new("test"),
        dir.path().as_os_str(),
        OsStr::new("--junit"),
        dir.path().join("no/such/dir/out.xml").as_os_str(),
    ]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("cannot write"), "{}", out.stderr);

    // `-` is neither a file named so nor the standard output, which the
    // report takes: refused before any test runs.
    let out = finish(kb().current_dir(dir.path()).args([
        OsStr::new("test"),
        OsStr::new("."),
        OsStr::new("--junit"),
        OsStr::new("-"),
    ]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert!(
        out.stderr.contains("`--junit` writes a file"),
        "{}",
        out.stderr
    );
    assert!(!dir.path().join("-").exists());
}
