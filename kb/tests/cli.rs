//! End-to-end tests of the `kb` command line: every subcommand, every input
//! shape, hostile inputs, output formats and exit codes, run on the built binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "tests"
)]

use std::ffi::OsStr;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use tempfile::TempDir;

mod common;
use common::{Run, assert_contains, example, finish, kb, line_col, run, run_stdin, write};

// ------------------------------------------------------------------ helpers

/// `kb eval PATH --format FORMAT`.
fn eval_as(path: &Path, format: &str) -> Run {
    run([
        OsStr::new("eval"),
        path.as_os_str(),
        OsStr::new("--format"),
        OsStr::new(format),
    ])
}

/// `kb eval PATHS… --format json`: several files make one input.
fn eval_json_files(paths: &[&Path]) -> Run {
    let mut args = vec![OsStr::new("eval")];
    args.extend(paths.iter().map(|p| p.as_os_str()));
    args.extend([OsStr::new("--format"), OsStr::new("json")]);
    run(args)
}

/// `kb/rules/fixtures/REL`.
fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("rules/fixtures")
        .join(rel)
}

/// `kb/tests/data/NAME`.
fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn read_json(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap()
}

/// The one JSON document `kb eval --format json` printed for a single subject.
fn one_json(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}):\n{}\nstderr:\n{}",
            run.stdout, run.stderr
        )
    })
}

/// One JSON value per output line (several subjects, or NDJSON input).
fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect()
}

fn array(value: &Value) -> &Vec<Value> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("expected an array, found {value}"))
}

/// The ids of the confirmed causes, in report order.
fn confirmed(diagnosis: &Value) -> Vec<String> {
    array(&diagnosis["causes"])
        .iter()
        .filter(|c| c["status"] == "confirmed")
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect()
}

/// Confirmed causes come before possible ones (docs/json-schema.md).
fn assert_confirmed_first(diagnosis: &Value, name: &str) {
    let statuses: Vec<&str> = array(&diagnosis["causes"])
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    let first_possible = statuses
        .iter()
        .position(|s| *s == "possible")
        .unwrap_or(statuses.len());
    assert!(
        statuses[first_possible..].iter().all(|s| *s == "possible"),
        "{name}: {statuses:?}"
    );
    assert!(
        statuses
            .iter()
            .all(|s| matches!(*s, "confirmed" | "possible")),
        "{name}: {statuses:?}"
    );
}

/// The status of a cause, if it is reported at all.
fn status_of<'a>(diagnosis: &'a Value, id: &str) -> Option<&'a str> {
    array(&diagnosis["causes"])
        .iter()
        .find(|c| c["id"] == id)
        .map(|c| c["status"].as_str().unwrap())
}

/// The cause with this id; fails when it is not reported.
fn cause<'a>(diagnosis: &'a Value, id: &str) -> &'a Value {
    array(&diagnosis["causes"])
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("cause `{id}` not reported in {diagnosis}"))
}

/// Every rendered command of a cause's fixes.
fn commands(cause: &Value) -> Vec<String> {
    array(&cause["fixes"])
        .iter()
        .flat_map(|fix| array(&fix["steps"]).iter())
        .filter_map(|step| step["command"].as_str().map(str::to_owned))
        .collect()
}

/// The names of the facts a diagnosis still needs.
fn missing_facts(diagnosis: &Value) -> Vec<String> {
    array(&diagnosis["missing"])
        .iter()
        .map(|m| m["fact"].as_str().unwrap().to_owned())
        .collect()
}

/// `text` with runs of whitespace made one space (help is wrapped to the terminal).
fn squeeze(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every bundle the repository ships: the rule fixtures and the examples.
fn all_bundles() -> Vec<PathBuf> {
    let mut found = Vec::new();
    for group in ["pending", "crash-loop", "healthy"] {
        let dir = fixture(group);
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                found.push(path);
            }
        }
    }
    found.push(example("pending-insufficient-cpu.json"));
    found.push(example("crash-loop-oomkilled.json"));
    found.sort();
    assert!(found.len() >= 30, "fixtures went missing: {found:?}");
    found
}

const POD: &str = "report-builder-7d9c5b6f4-x2kqp";
const SUBJECT: &str = "pod analytics/report-builder-7d9c5b6f4-x2kqp";
const CPU_MESSAGE: &str = "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.";

// ------------------------------------------------------------------ eval: the examples

#[test]
fn eval_pending_insufficient_cpu_confirms_the_cause_with_evidence_and_fix() {
    let path = example("pending-insufficient-cpu.json");
    let out = eval_as(&path, "json");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let d = one_json(&out);
    assert_eq!(d["subject"], SUBJECT);
    assert_eq!(d["symptoms"][0]["id"], "pod-pending");
    assert_eq!(d["symptoms"][0]["status"], "matched");

    let first = &d["causes"][0];
    assert_eq!(first["id"], "pending.insufficient-resources");
    assert_eq!(first["status"], "confirmed");
    assert_eq!(first["symptom"], "pod-pending");
    assert_eq!(confirmed(&d), ["pending.insufficient-resources"]);

    // The evidence shows the scheduler's own words, as the event has them.
    let input = read_json(&path);
    assert_eq!(input["events"][0]["message"], CPU_MESSAGE);
    let seen: Vec<&Value> = array(&first["evidence"])
        .iter()
        .flat_map(|e| array(&e["facts"]).iter())
        .filter(|f| f["name"] == "scheduling_message")
        .collect();
    assert!(!seen.is_empty(), "no scheduling_message in {first}");
    for fact in seen {
        assert_eq!(fact["state"], "known");
        assert_eq!(fact["value"], input["events"][0]["message"]);
    }
    assert!(
        array(&first["evidence"])
            .iter()
            .all(|e| e["result"] == "true"),
        "a confirmed cause has only true evidence: {first}"
    );

    // The fix commands are filled in with this pod, and nothing is left unrendered.
    let commands = commands(first);
    assert!(
        commands
            .iter()
            .any(|c| c.contains(POD) && c.contains("-n analytics")),
        "no command names the pod and its namespace: {commands:?}"
    );
    assert!(commands.iter().all(|c| !c.contains("{{")), "{commands:?}");
    assert_eq!(array(&d["missing"]).len(), 0);
    assert_eq!(array(&d["warnings"]).len(), 0);
}

#[test]
fn eval_crash_loop_oomkilled_confirms_the_memory_limit() {
    let out = run([
        OsStr::new("eval"),
        example("crash-loop-oomkilled.json").as_os_str(),
        OsStr::new("-f"),
        OsStr::new("json"),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let d = one_json(&out);
    assert_eq!(d["subject"], "pod shop/order-service-6f9c8b7d4-tn5jw");
    assert_eq!(d["symptoms"][0]["id"], "pod-crash-loop");
    assert_eq!(d["causes"][0]["id"], "crash.oom-limit");
    assert_eq!(d["causes"][0]["status"], "confirmed");
    assert_eq!(confirmed(&d), ["crash.oom-limit"]);
    let facts: Vec<&Value> = array(&d["causes"][0]["evidence"])
        .iter()
        .flat_map(|e| array(&e["facts"]).iter())
        .collect();
    assert!(
        facts
            .iter()
            .any(|f| f["name"] == "termination_reason" && f["value"] == "OOMKilled"),
        "{facts:?}"
    );
}

/// A controller whose pods a webhook it cannot call refuses: the fix's commands
/// name the webhook and the Service it is called through, from the message.
#[test]
fn a_webhook_that_cannot_be_called_is_named_with_its_service() {
    let d = one_json(&eval_as(
        &fixture("pods-not-created/webhook-unavailable.json"),
        "json",
    ));
    assert_eq!(confirmed(&d), ["admission.webhook-unavailable"]);
    let commands = commands(cause(&d, "admission.webhook-unavailable"));
    assert!(
        commands
            .iter()
            .any(|c| c.ends_with("grep -F -e NAME -e 'mutate.kyverno.svc-fail'")),
        "{commands:?}"
    );
    assert!(
        commands.contains(
            &"kubectl get endpoints kyverno-svc -n kyverno; kubectl get pods -n kyverno -o wide"
                .to_owned()
        ),
        "{commands:?}"
    );
}

/// A Job's container OOM-killed under `restartPolicy: Never` is never
/// restarted: it is diagnosed as a crash loop's last run is, and its log is
/// that of its one run, read without `--previous` (which finds no earlier
/// run and fails); a crash loop's log is its previous run's. The same holds
/// for an init container.
#[test]
fn a_container_that_failed_for_good_is_diagnosed_and_its_log_read_without_previous() {
    let d = one_json(&eval_as(&fixture("error/oom-limit-job.json"), "json"));
    assert_eq!(d["symptoms"][0]["id"], "pod-error");
    assert_eq!(confirmed(&d), ["crash.oom-limit"]);
    let logs: Vec<String> = commands(cause(&d, "crash.oom-limit"))
        .into_iter()
        .filter(|c| c.starts_with("kubectl logs"))
        .collect();
    assert_eq!(
        logs,
        ["kubectl logs report-export-29600820-k7w2p -n billing -c export --tail=100"]
    );

    let d = one_json(&eval_as(&fixture("error/app-error-job.json"), "json"));
    assert_eq!(confirmed(&d), ["crash.app-error"]);
    let log = array(&d["missing"])
        .iter()
        .find(|m| m["fact"] == "previous_log")
        .unwrap_or_else(|| panic!("previous_log not asked for: {d}"));
    assert_eq!(
        log["gather"],
        "kubectl logs pod-reaper-29599380-x5vjq -n ops -c pod-reaper --tail=50"
    );

    let d = one_json(&eval_as(&example("crash-loop-oomkilled.json"), "json"));
    assert!(
        commands(cause(&d, "crash.oom-limit"))
            .iter()
            .any(|c| c.starts_with("kubectl logs") && c.contains(" --previous")),
        "{d}"
    );

    for (input, log) in [
        (
            "init-failure/init-error-job.json",
            "kubectl logs report-export-29625720-7xk2p -n reports -c fetch-template",
        ),
        (
            "init-failure/init-crash-loop.json",
            "kubectl logs orders-api-6d8f7c9b5-q4wzt -n shop -c db-migrate --previous",
        ),
    ] {
        let d = one_json(&eval_as(&fixture(input), "json"));
        let commands = commands(cause(&d, "init.container-failed"));
        assert!(commands.iter().any(|c| c == log), "{commands:?}");
    }
}

/// A sidecar (an init container with `restartPolicy: Always`) runs beside the
/// app containers: when it crashes or fails its probe, the diagnosis is that
/// of a container like theirs, its commands name it, and it is never taken
/// for an init step that blocks the pod.
#[test]
fn a_sidecar_is_diagnosed_as_the_container_it_is_not_as_an_init_step() {
    let out = eval_as(&fixture("crash-loop/sidecar-oom-limit.json"), "json");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let d = one_json(&out);
    let symptoms: Vec<&Value> = array(&d["symptoms"]).iter().map(|s| &s["id"]).collect();
    assert_eq!(symptoms, ["pod-crash-loop"]);
    assert_eq!(confirmed(&d), ["crash.oom-limit"]);
    let oom = commands(cause(&d, "crash.oom-limit"));
    assert!(
        oom.iter().any(|c| c.contains("-c istio-proxy --previous")),
        "{oom:?}"
    );

    let out = eval_as(&fixture("not-ready/sidecar-probe-wrong-port.json"), "json");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let d = one_json(&out);
    assert_eq!(d["symptoms"][0]["id"], "pod-not-ready");
    assert_eq!(confirmed(&d), ["ready.probe-misconfigured"]);
    let probe = commands(cause(&d, "ready.probe-misconfigured"));
    assert!(
        probe.iter().any(|c| c.contains("-c log-shipper")),
        "{probe:?}"
    );

    // An init step that fails beside a crashing sidecar is the one named.
    let mut bundle = read_json(&fixture("crash-loop/sidecar-oom-limit.json"));
    let pod = &mut bundle["pod"];
    let mut step = pod["spec"]["initContainers"][0].clone();
    step["name"] = json!("db-migrate");
    step.as_object_mut().unwrap().remove("restartPolicy");
    pod["spec"]["initContainers"]
        .as_array_mut()
        .unwrap()
        .push(step);
    let mut status = pod["status"]["initContainerStatuses"][0].clone();
    status["name"] = json!("db-migrate");
    status["restartCount"] = json!(0);
    status["lastState"] = json!({});
    status["state"] = json!({"terminated": {"exitCode": 1, "reason": "Error"}});
    pod["status"]["initContainerStatuses"]
        .as_array_mut()
        .unwrap()
        .push(status);
    let out = run_stdin(["eval", "-", "-f", "json"], compact(&bundle));
    let d = one_json(&out);
    let init = commands(cause(&d, "init.container-failed"));
    assert!(init.iter().all(|c| !c.contains("istio-proxy")), "{init:?}");
    assert!(init.iter().any(|c| c.contains("-c db-migrate")), "{init:?}");
}

#[test]
fn eval_without_events_keeps_causes_possible_and_says_what_to_gather() {
    let out = eval_as(&fixture("pending/no-events.json"), "json");
    assert_eq!(
        out.code, 0,
        "a possible symptom still matched: {}",
        out.stderr
    );
    let d = one_json(&out);
    assert_eq!(d["subject"], SUBJECT);
    assert!(
        confirmed(&d).is_empty(),
        "nothing is known to be the cause: {d}"
    );
    assert_eq!(
        status_of(&d, "pending.insufficient-resources"),
        Some("possible")
    );
    // The scheduler never ran? No: the pod has a PodScheduled condition.
    assert_eq!(status_of(&d, "pending.scheduler-down"), None);

    let next = &d["missing"][0];
    assert_eq!(next["fact"], "scheduling_message");
    let gather = next["gather"].as_str().unwrap();
    assert!(gather.starts_with("kubectl get events "), "{gather}");
    assert!(gather.contains("-n analytics"), "{gather}");
    assert!(gather.contains(POD), "{gather}");
    assert!(
        array(&next["decides"])
            .iter()
            .any(|id| id == "pending.insufficient-resources"),
        "{next}"
    );
}

#[test]
fn eval_of_a_healthy_pod_matches_no_symptom_and_exits_1() {
    let path = fixture("healthy/running-ready.json");
    let text = run([OsStr::new("eval"), path.as_os_str()]);
    assert_eq!(text.code, 1, "{}", text.stderr);
    assert!(
        text.stdout
            .starts_with("pod shop/storefront-web-6b8f9d7c5d-9ktwp\n")
    );
    assert!(
        text.stdout.contains("no symptom matched"),
        "{}",
        text.stdout
    );

    let json = eval_as(&path, "json");
    assert_eq!(json.code, 1);
    let d = one_json(&json);
    assert_eq!(array(&d["symptoms"]).len(), 0);
    assert_eq!(array(&d["causes"]).len(), 0);

    let completed = run([
        OsStr::new("eval"),
        fixture("healthy/job-completed.json").as_os_str(),
    ]);
    assert_eq!(completed.code, 1, "{}", completed.stdout);
}

#[test]
fn eval_in_chinese_gives_chinese_titles() {
    let out = run([
        OsStr::new("--lang"),
        OsStr::new("zh"),
        OsStr::new("eval"),
        example("pending-insufficient-cpu.json").as_os_str(),
        OsStr::new("--format"),
        OsStr::new("json"),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let d = one_json(&out);
    let title = d["causes"][0]["title"].as_str().unwrap();
    assert!(title.contains("没有节点"), "{title}");
    // Commands are not translated.
    assert!(commands(&d["causes"][0]).iter().any(|c| c.contains(POD)));
}

// ------------------------------------------------------------------ eval: text and markdown

#[test]
fn text_output_to_a_pipe_has_no_colour_codes() {
    let path = example("pending-insufficient-cpu.json");
    let plain = run([OsStr::new("eval"), path.as_os_str()]);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    assert!(!plain.stdout.contains("\x1b["), "{:?}", plain.stdout);
    assert!(plain.stdout.starts_with(&format!("{SUBJECT}\n")));
    assert!(
        plain
            .stdout
            .contains("confirmed pending.insufficient-resources"),
        "{}",
        plain.stdout
    );
    assert!(
        plain.stdout.contains(&format!(
            "$ kubectl get pod {POD} -n analytics -o jsonpath='{{.spec.containers[*].resources}}'"
        )),
        "{}",
        plain.stdout
    );
    assert!(plain.stdout.contains(CPU_MESSAGE), "{}", plain.stdout);

    let no_color = finish(
        kb().env("NO_COLOR", "1")
            .args([OsStr::new("eval"), path.as_os_str()]),
    );
    assert_eq!(no_color.code, 0);
    assert!(!no_color.stdout.contains("\x1b["));
    assert_eq!(no_color.stdout, plain.stdout);

    // The stripping is real: forcing colour does colour the same output.
    let forced = finish(
        kb().env("CLICOLOR_FORCE", "1")
            .args([OsStr::new("eval"), path.as_os_str()]),
    );
    assert!(forced.stdout.contains("\x1b["), "{:?}", forced.stdout);
    let with_no_color = finish(
        kb().env("CLICOLOR_FORCE", "1")
            .env("NO_COLOR", "1")
            .args([OsStr::new("eval"), path.as_os_str()]),
    );
    assert!(!with_no_color.stdout.contains("\x1b["));
}

#[test]
fn text_output_lists_possible_causes_and_next_checks() {
    let out = run([
        OsStr::new("eval"),
        fixture("pending/no-events.json").as_os_str(),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("possible causes"), "{}", out.stdout);
    assert!(out.stdout.contains("- pending.insufficient-resources: "));
    assert!(out.stdout.contains("next checks"));
    assert!(out.stdout.contains(&format!(
        "$ kubectl get events -n analytics --field-selector involvedObject.name={POD},reason=FailedScheduling"
    )));
    assert!(!out.stdout.contains("confirmed "), "{}", out.stdout);
}

#[test]
fn eval_says_when_no_cause_explains_a_symptom_and_how_to_learn_why() {
    // The scheduler names a node selector or affinity, in its events and in
    // the pod's PodScheduled condition, but the pod sets neither (a
    // scheduler's own added affinity, say): no cause of the knowledge base
    // applies.
    let text = fs::read_to_string(example("pending-insufficient-cpu.json")).unwrap();
    let bundle = text.replace(
        "3 Insufficient cpu.",
        "3 node(s) didn't match Pod's node affinity/selector.",
    );
    assert_ne!(bundle, text);
    let dir = TempDir::new().unwrap();
    let path = write(&dir, "selector.json", bundle);
    let out = run([OsStr::new("eval"), path.as_os_str()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.ends_with(
            "  symptom pod-pending: Pod stuck in Pending (not scheduled)
  no cause found: the checks end where no branch holds:
    ✗ Does the pod set a nodeSelector or a node affinity?
      node_selector: absent; node_affinity: absent
      $ kubectl get nodes --show-labels
  (`kb eval --why-not CAUSE` shows every way to a cause and where it stops)\n\n"
        ),
        "{}",
        out.stdout
    );
    let report = one_json(&eval_as(&path, "json"));
    assert_eq!(
        report["dead_ends"],
        json!([{
            "id": "selector-or-affinity",
            "check": "Does the pod set a nodeSelector or a node affinity?",
            "symptom": "pod-pending",
            "facts": [
                {"name": "node_selector", "state": "absent"},
                {"name": "node_affinity", "state": "absent"}
            ],
            "gather": "kubectl get nodes --show-labels"
        }])
    );
    assert!(array(&report["causes"]).is_empty());
    let note = eval_as(&path, "markdown");
    assert!(
        note.stdout.ends_with(
            "(`pod-pending`)\n\nNo cause of the knowledge base explains this symptom here; `kb \
             eval --why-not CAUSE` shows every way to a cause and where it stops.\n\nThe checks end where \
             no branch holds:\n\n- ✗ Does the pod set a nodeSelector or a node affinity? \
             (node_selector = *absent*; node_affinity = *absent*)\n\n  ```sh\n  kubectl get nodes \
             --show-labels\n  ```\n"
        ),
        "{}",
        note.stdout
    );
    let why = run([
        OsStr::new("eval"),
        path.as_os_str(),
        OsStr::new("--why-not"),
        OsStr::new("pending.node-selector-mismatch"),
    ]);
    assert!(
        why.stdout.contains(
            "✗ Does the pod set a nodeSelector or a node affinity? → exists(node_selector)"
        ),
        "{}",
        why.stdout
    );
}

#[test]
fn markdown_output_is_an_incident_note() {
    let out = eval_as(&example("pending-insufficient-cpu.json"), "markdown");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.starts_with(&format!("# {SUBJECT}\n")),
        "{}",
        out.stdout
    );
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(
        lines.iter().any(|l| l.starts_with(
            "## Confirmed: No node has enough free CPU, memory, GPU or ephemeral storage"
        )),
        "{}",
        out.stdout
    );
    let fence = lines
        .iter()
        .position(|l| l.trim_start() == "```sh")
        .unwrap_or_else(|| panic!("no ```sh block:\n{}", out.stdout));
    assert!(
        lines[fence + 1..]
            .iter()
            .take_while(|l| l.trim_start() != "```")
            .any(|l| l.contains("kubectl")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains(&format!("kubectl get pod {POD} -n analytics"))
    );
    assert!(out.stdout.contains("`pending.insufficient-resources`"));
    // The evidence as a table whose columns say what they hold.
    let table = lines
        .iter()
        .position(|l| *l == "| | Evidence | Values read |")
        .unwrap_or_else(|| panic!("no evidence table:\n{}", out.stdout));
    assert_eq!(lines[table + 1], "|---|---|---|");
    assert!(lines[table + 2].starts_with("| ✓ | "), "{}", out.stdout);
    // A check's condition after its question, as the text output writes it.
    assert!(
        out.stdout
            .contains("| ✓ | What does the scheduler say? → `scheduling_message matches"),
        "{}",
        out.stdout
    );
}

#[test]
fn markdown_headings_and_fences_start_their_own_lines() {
    let out = eval_as(&fixture("pending/no-events.json"), "markdown");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with(&format!("# {SUBJECT}\n")));
    for line in out.stdout.lines() {
        if line.contains("## ") {
            assert!(line.starts_with("## "), "heading inside a line: {line:?}");
        }
        if line.contains("```") {
            assert!(
                line.trim_start().starts_with("```"),
                "fence inside a line: {line:?}"
            );
        }
    }
    assert!(out.stdout.lines().any(|l| l == "## Possible causes"));
    assert!(out.stdout.lines().any(|l| l == "## Next checks"));
    assert!(out.stdout.lines().any(|l| l.trim_start() == "```sh"));
}

#[test]
fn markdown_of_a_healthy_pod_says_nothing_matched() {
    let out = eval_as(&fixture("healthy/running-ready.json"), "markdown");
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stdout
            .starts_with("# pod shop/storefront-web-6b8f9d7c5d-9ktwp\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("No symptom of the knowledge base matched")
    );
}

#[test]
fn long_values_are_cut_for_people_and_whole_in_json() {
    // A pod of 300 containers, all in CrashLoopBackOff.
    let mut bundle = read_json(&example("crash-loop-oomkilled.json"));
    let status = bundle["pod"]["status"]["containerStatuses"][0].clone();
    bundle["pod"]["status"]["containerStatuses"] = (0..300)
        .map(|i| {
            let mut status = status.clone();
            status["name"] = json!(format!("worker-{i}"));
            status
        })
        .collect();
    let input = compact(&bundle);
    let reasons = |text: &str| text.matches("\"CrashLoopBackOff\"").count();
    for format in ["text", "markdown"] {
        let out = run_stdin(["eval", "-", "--format", format], input.clone());
        assert_eq!(out.code, 0, "{}", out.stderr);
        let line = out
            .stdout
            .lines()
            .find(|l| l.contains("waiting_reasons = "))
            .unwrap_or_else(|| panic!("{format}: no waiting_reasons in {}", out.stdout));
        assert!(line.contains("…"), "{format}: {line}");
        assert!(reasons(line) < 20, "{format}: {line}");
    }
    let facts = run_stdin(["facts", "-"], input.clone());
    let line = facts
        .stdout
        .lines()
        .find(|l| l.contains("waiting_reasons"))
        .unwrap();
    assert!(line.contains("…") && reasons(line) < 20, "{line}");
    let out = run_stdin(["eval", "-", "--format", "json"], input);
    let d = one_json(&out);
    let seen = array(&d["symptoms"][0]["evidence"]["facts"])
        .iter()
        .find(|f| f["name"] == "waiting_reasons")
        .unwrap();
    assert_eq!(array(&seen["value"]).len(), 300);
}

// ------------------------------------------------------------------ eval: input shapes

#[test]
fn a_bare_pod_gives_the_bundles_causes_except_those_that_need_events_or_the_node() {
    for path in all_bundles() {
        let bundle = read_json(&path);
        let name = path.display();
        let with_all = eval_as(&path, "json");
        let bare = run_stdin(["eval", "-", "--format", "json"], compact(&bundle["pod"]));
        assert_eq!(bare.code, with_all.code, "{name}: {}", bare.stderr);
        let (with_all, bare) = (one_json(&with_all), one_json(&bare));
        assert_eq!(bare["subject"], with_all["subject"], "{name}");
        assert_confirmed_first(&with_all, &name.to_string());
        assert_confirmed_first(&bare, &format!("{name}, pod alone"));
        // Less input never confirms more, and loses no cause: it only turns
        // confirmed ones that need events or the node into possible ones.
        for id in confirmed(&bare) {
            assert!(
                confirmed(&with_all).contains(&id),
                "{name}: `{id}` confirmed on the pod alone only"
            );
        }
        for id in confirmed(&with_all) {
            assert!(
                matches!(status_of(&bare, &id), Some("confirmed" | "possible")),
                "{name}: `{id}` lost without events"
            );
        }
    }

    // The scheduler's message is in the pod's condition: nothing changes.
    let dir = TempDir::new().unwrap();
    let pending = read_json(&example("pending-insufficient-cpu.json"));
    let pod = write(&dir, "pod.json", compact(&pending["pod"]));
    let out = eval_as(&pod, "json");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let d = one_json(&out);
    assert_eq!(d["subject"], SUBJECT);
    assert_eq!(confirmed(&d), ["pending.insufficient-resources"]);

    // The liveness kill is only in the events: possible, and asked for.
    let liveness = read_json(&fixture("crash-loop/liveness-probe.json"));
    let pod = write(&dir, "web.json", compact(&liveness["pod"]));
    let out = eval_as(&pod, "json");
    let d = one_json(&out);
    assert_eq!(status_of(&d, "crash.liveness-probe"), Some("possible"));
    assert!(confirmed(&d).is_empty(), "{d}");
    assert!(
        missing_facts(&d).contains(&String::from("liveness_killed")),
        "{d}"
    );
}

/// A kubectl `List` of two pods from different fixtures, their events and nodes.
fn two_pod_list(events_first: bool) -> Value {
    let live = read_json(&fixture("crash-loop/liveness-probe.json"));
    let oom = read_json(&fixture("crash-loop/oom-node.json"));
    let pods = vec![live["pod"].clone(), oom["pod"].clone()];
    let mut events = array(&live["events"]).clone();
    events.extend(array(&oom["events"]).iter().cloned());
    let nodes = vec![live["node"].clone(), oom["node"].clone()];
    let items: Vec<Value> = if events_first {
        events.into_iter().chain(nodes).chain(pods).collect()
    } else {
        pods.into_iter().chain(events).chain(nodes).collect()
    };
    json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items})
}

#[test]
fn kinds_kb_does_not_diagnose_are_left_out_of_a_list_saying_so() {
    // As `kubectl get all,events -n shop -o json` prints a namespace: the pod
    // and its events, with Services and an autoscaler kb has no rules for.
    let bundle = read_json(&example("crash-loop-oomkilled.json"));
    let alone = one_json(&run_stdin(["eval", "--format", "json"], compact(&bundle)));
    let service = |name: &str| {
        json!({"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": name, "namespace": "shop"},
               "spec": {"type": "ClusterIP", "ports": [{"port": 80, "targetPort": 8080}]}})
    };
    let mut items = vec![
        bundle["pod"].clone(),
        service("order-service"),
        service("order-db"),
    ];
    items.push(
        json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                      "metadata": {"name": "order-service", "namespace": "shop"}}),
    );
    items.extend(array(&bundle["events"]).iter().cloned());
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
    let out = run_stdin(["eval", "--format", "json"], compact(&list));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let d = one_json(&out);
    assert_eq!(d["causes"], alone["causes"]);
    assert_eq!(
        array(&d["warnings"]),
        &[json!(
            "left out 3 objects kb does not diagnose (Service ×2, HorizontalPodAutoscaler): it \
             reads Pods, their Events, Nodes and Namespaces, and the pods' owners"
        )]
    );
    // With nothing kb diagnoses, there is nothing to answer.
    let services = json!({"kind": "List", "items": [service("order-service")]});
    let out = run_stdin(["eval"], compact(&services));
    assert_eq!(out.code, 2);
    assert_contains(&out.stderr, "kind `Service` is not something kb diagnoses");
}

#[test]
fn a_bundles_events_about_other_objects_are_left_out_saying_so() {
    // The scheduler's message in the events only, not in the pod's status.
    let mut bundle = read_json(&example("pending-insufficient-cpu.json"));
    bundle["pod"]["status"]["conditions"] = json!([]);
    let alone = one_json(&run_stdin(["eval", "--format", "json"], compact(&bundle)));
    // The namespace's events, as `kubectl get events -n analytics -o json`
    // lists them: another pod's later FailedScheduling, which read as this
    // pod's would make it a taint, an event of the pod's ReplicaSet (its
    // owner), and one that names no object.
    let mut with_others = bundle.clone();
    let own = bundle["events"][0].clone();
    let mut other = own.clone();
    other["involvedObject"]["name"] = json!("etl-runner-5c7f8d9b6-q4wzt");
    other["involvedObject"]["uid"] = json!("0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d");
    other["series"]["lastObservedTime"] = json!("2026-03-09T09:02:10.118524Z");
    other["message"] = json!(
        "0/3 nodes are available: 3 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    );
    let mut of_owner = own.clone();
    of_owner["involvedObject"] = json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "report-builder-7d9c5b6f4",
        "namespace": "analytics", "uid": "b3f1a6c2-0d8e-4a57-8c19-6e2f4d7a9b31"
    });
    of_owner["reason"] = json!("SuccessfulCreate");
    let mut nameless = own.clone();
    nameless["involvedObject"] = json!({});
    nameless["reason"] = json!("NotTriggerScaleUp");
    nameless["message"] = json!("pod didn't trigger scale-up: 1 max node group size reached");
    with_others["events"] = json!([own, other, of_owner, nameless]);
    // Read whole, and as a stream's line, keeping only what the rules read.
    for stream in [false, true] {
        let line = compact(&with_others);
        let out = if stream {
            run_stdin(["eval", "--format", "json"], format!("{line}\n{line}\n"))
        } else {
            run_stdin(["eval", "--format", "json"], line)
        };
        assert_eq!(out.code, 0, "{}", out.stderr);
        let d = if stream {
            json_lines(&out.stdout).remove(0)
        } else {
            one_json(&out)
        };
        assert_eq!(confirmed(&d), ["pending.insufficient-resources"], "{d}");
        assert_eq!(d["causes"], alone["causes"]);
        assert_eq!(
            array(&d["warnings"]),
            &[json!(
                "left out 1 of the 4 events: they are about other objects than the pod and its \
                 owner (the first about Pod analytics/etl-runner-5c7f8d9b6-q4wzt)"
            )]
        );
    }

    // A bundle written by hand: a pod without kind, namespace or uid keeps
    // the events that name it.
    let by_hand = json!({
        "pod": {"metadata": {"name": "web-1"}, "status": {"phase": "Pending"}},
        "events": [
            {"involvedObject": {"kind": "Pod", "name": "web-1", "namespace": "default"},
             "reason": "FailedScheduling", "message": CPU_MESSAGE},
            {"involvedObject": {"kind": "Pod", "name": "web-2", "namespace": "default"},
             "reason": "FailedScheduling", "message": "0/3 nodes are available: 3 node(s) had untolerated taint {dedicated: gpu}."}
        ]
    });
    let d = one_json(&run_stdin(["eval", "--format", "json"], compact(&by_hand)));
    assert_eq!(confirmed(&d), ["pending.insufficient-resources"], "{d}");
    assert_contains(&compact(&d["warnings"]), "left out 1 of the 2 events");

    // Only a claim's events: the pod's own were not given, which is not
    // the same as a pod the scheduler never looked at.
    let claim_only = json!({
        "pod": {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "pgsql-postgresql-0", "namespace": "pgsql"},
                "status": {"phase": "Pending"}},
        "events": [
            {"apiVersion": "v1", "kind": "Event",
             "involvedObject": {"kind": "PersistentVolumeClaim", "name": "data-pgsql-postgresql-0", "namespace": "pgsql"},
             "reason": "FailedBinding", "type": "Normal", "count": 5903,
             "message": "no persistent volumes available for this claim and no storage class is set",
             "source": {"component": "persistentvolume-controller"}}
        ]
    });
    let d = one_json(&run_stdin(
        ["eval", "--format", "json"],
        compact(&claim_only),
    ));
    assert!(confirmed(&d).is_empty(), "{d}");
    assert_eq!(
        status_of(&d, "pending.scheduler-down"),
        Some("possible"),
        "{d}"
    );
    assert_contains(
        &compact(&d["warnings"]),
        "left out 1 of the 1 events: they are about other objects than the pod and its owner \
         (the first about PersistentVolumeClaim pgsql/data-pgsql-postgresql-0); the pod's own \
         events are taken as not given",
    );
}

#[test]
fn a_kubectl_list_of_two_pods_is_diagnosed_pod_by_pod() {
    let dir = TempDir::new().unwrap();
    for events_first in [false, true] {
        let list = write(
            &dir,
            "list.json",
            serde_json::to_string_pretty(&two_pod_list(events_first)).unwrap(),
        );
        let out = eval_as(&list, "json");
        assert_eq!(out.code, 0, "{}", out.stderr);
        let results = json_lines(&out.stdout);
        assert_eq!(results.len(), 2, "one result per pod:\n{}", out.stdout);
        // The liveness kill is in the first pod's events only: were the events
        // mixed up, the second pod would be blamed on its probe too.
        assert_eq!(results[0]["subject"], "pod shop/web-7c5d9f8b6d-m4x2z");
        assert_eq!(confirmed(&results[0]), ["crash.liveness-probe"]);
        assert_eq!(
            results[1]["subject"],
            "pod reco/recommendation-engine-58f7d9c6b-hq2vz"
        );
        assert_eq!(confirmed(&results[1]), ["crash.oom-node"]);
        for result in &results {
            assert!(missing_facts(result).is_empty(), "{result}");
        }
    }

    let text = run([OsStr::new("eval"), dir.path().join("list.json").as_os_str()]);
    assert!(text.stdout.contains("pod shop/web-7c5d9f8b6d-m4x2z\n"));
    assert!(
        text.stdout
            .contains("pod reco/recommendation-engine-58f7d9c6b-hq2vz\n")
    );
}

#[test]
fn an_array_of_objects_is_read_as_its_items() {
    // `kubectl get pods,events,nodes -o json | jq '.items'`: the List's
    // items without the List, diagnosed as the List is.
    let dir = TempDir::new().unwrap();
    let list = two_pod_list(false);
    let from_list = eval_as(&write(&dir, "list.json", compact(&list)), "json");
    let array = write(&dir, "items.json", compact(&list["items"]));
    let out = eval_as(&array, "json");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, from_list.stdout);
    assert_eq!(json_lines(&out.stdout).len(), 2, "{}", out.stdout);

    // What is neither an object nor an array of them is refused, saying what
    // is read and, in an array, where, as jq writes it.
    let expected =
        "expected a JSON object (what `kubectl get … -o json` prints, a bundle or facts)";
    for (input, found) in [
        ("1", "found a number\n"),
        ("[{\"a\": 1}, 1]", "found a number at `.[1]`\n"),
        ("[[{\"a\": 1}], [\"x\"]]", "found a string at `.[1][0]`\n"),
    ] {
        let out = run_stdin(["eval", "-"], input);
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert_contains(&out.stderr, &format!("{expected}, {found}"));
    }
}

/// Every fixture's pod, events and node in one kubectl `List`, as
/// `kubectl get pods,events,nodes -A -o json` prints a cluster: over a
/// megabyte, the size from which a document is read keeping what the
/// rules read.
fn cluster_list() -> Value {
    let mut items = Vec::new();
    for entry in walkdir::WalkDir::new(fixture("")).sort_by_file_name() {
        let path = entry.unwrap().into_path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let bundle = read_json(&path);
        let Some(pod) = bundle.get("pod").filter(|pod| pod.is_object()) else {
            continue;
        };
        items.push(pod.clone());
        items.extend(
            bundle
                .get("events")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .cloned(),
        );
        items.extend(bundle.get("node").filter(|node| node.is_object()).cloned());
    }
    json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items})
}

#[test]
fn a_cluster_dump_read_keeping_what_the_rules_read_is_diagnosed_as_read_whole() {
    let dir = TempDir::new().unwrap();
    let list = cluster_list();
    let pretty = serde_json::to_string_pretty(&list).unwrap();
    assert!(pretty.len() > 1 << 20, "{} bytes", pretty.len());
    // The same objects in files small enough to be read whole.
    let items = array(&list["items"]);
    let parts: Vec<PathBuf> = items
        .chunks(items.len() / 4 + 1)
        .enumerate()
        .map(|(i, chunk)| {
            let part = json!({"apiVersion": "v1", "kind": "List", "items": chunk});
            let text = serde_json::to_string_pretty(&part).unwrap();
            assert!(text.len() < 1 << 20, "{} bytes", text.len());
            write(&dir, &format!("part-{i}.json"), text)
        })
        .collect();
    let read_whole = run(["eval".as_ref(), "--format".as_ref(), "json".as_ref()]
        .into_iter()
        .chain(parts.iter().map(|part| part.as_os_str())));
    let results = json_lines(&read_whole.stdout);
    assert!(
        results.len() > 100,
        "one result per pod:\n{}",
        read_whole.stderr
    );
    let empty = compact(&json!({"apiVersion": "v1", "kind": "List", "items": []}));
    for (name, text) in [
        ("cluster.json", pretty.clone()),
        ("one-line.json", compact(&list)),
        ("and-an-empty-list.json", format!("{pretty}\n{empty}")),
    ] {
        let out = eval_as(&write(&dir, name, text), "json");
        assert_eq!(out.code, read_whole.code, "{name}: {}", out.stderr);
        assert_eq!(json_lines(&out.stdout), results, "{name}");
    }
}

/// A dump of more pods than are put together and diagnosed at once, made
/// of copies of [`cluster_list`] whose pods and events about them are
/// renamed: each pod is diagnosed as its original, in input order.
#[test]
fn a_dump_of_thousands_of_pods_is_diagnosed_pod_by_pod_in_order() {
    let dir = TempDir::new().unwrap();
    let list = cluster_list();
    let originals =
        json_lines(&eval_as(&write(&dir, "cluster.json", compact(&list)), "json").stdout);
    let copies = 2_000 / originals.len() + 1;
    let rename = |object: &mut Value, copy: usize| {
        for field in ["name", "uid"] {
            if let Some(Value::String(text)) = object.get_mut(field) {
                text.push_str(&format!("-copy{copy}"));
            }
        }
    };
    let mut items = Vec::new();
    for copy in 0..copies {
        for item in array(&list["items"]) {
            let mut item = item.clone();
            match item["kind"].as_str() {
                Some("Pod") => rename(&mut item["metadata"], copy),
                Some("Event") if item["involvedObject"]["kind"] == "Pod" => {
                    rename(&mut item["involvedObject"], copy);
                }
                _ if copy > 0 => continue,
                _ => {}
            }
            items.push(item);
        }
    }
    let dump = json!({"apiVersion": "v1", "kind": "List", "items": items});
    let out = eval_as(&write(&dir, "dump.json", compact(&dump)), "json");
    let results = json_lines(&out.stdout);
    assert_eq!(results.len(), originals.len() * copies, "{}", out.stderr);
    for (i, result) in results.iter().enumerate() {
        let copy = i / originals.len();
        let text = compact(result).replace(&format!("-copy{copy}"), "");
        let original: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(original, originals[i % originals.len()], "result {i}");
    }
}

#[test]
fn a_pod_its_event_list_and_its_node_list_in_separate_files_make_one_subject() {
    let dir = TempDir::new().unwrap();
    let bundle = read_json(&fixture("crash-loop/oom-node.json"));
    let pod = write(
        &dir,
        "pod.json",
        serde_json::to_string_pretty(&bundle["pod"]).unwrap(),
    );
    let events = write(
        &dir,
        "events.json",
        serde_json::to_string_pretty(
            &json!({"apiVersion": "v1", "kind": "EventList", "items": bundle["events"]}),
        )
        .unwrap(),
    );
    let nodes = write(
        &dir,
        "nodes.json",
        serde_json::to_string_pretty(
            &json!({"apiVersion": "v1", "kind": "NodeList", "items": [bundle["node"]]}),
        )
        .unwrap(),
    );
    let out = eval_json_files(&[&pod, &events, &nodes]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let d = one_json(&out);
    assert_eq!(
        d["subject"],
        "pod reco/recommendation-engine-58f7d9c6b-hq2vz"
    );
    assert_eq!(confirmed(&d), ["crash.oom-node"]);

    // The same three documents concatenated on stdin.
    let mut concatenated = Vec::new();
    for path in [&pod, &events, &nodes] {
        concatenated.extend(fs::read(path).unwrap());
        concatenated.push(b'\n');
    }
    let piped = run_stdin(["eval", "--format", "json"], concatenated);
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    assert_eq!(one_json(&piped), d);

    // Without the node, its memory pressure is unknown: only possible.
    let out = eval_json_files(&[&pod, &events]);
    assert_eq!(
        status_of(&one_json(&out), "crash.oom-node"),
        Some("possible")
    );
}

#[test]
fn a_pod_file_and_an_event_list_file_merge_into_one_subject() {
    let dir = TempDir::new().unwrap();
    let bundle = read_json(&fixture("crash-loop/liveness-probe.json"));
    let pod = write(&dir, "pod.json", compact(&bundle["pod"]));
    // As kubectl prints events, and as `jq '.items'` prints them.
    let event_list = json!({"kind": "EventList", "apiVersion": "v1", "items": bundle["events"]});
    for events in [event_list, bundle["events"].clone()] {
        let events = write(&dir, "events.json", compact(&events));
        let out = eval_json_files(&[&pod, &events]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let d = one_json(&out);
        assert_eq!(d["subject"], "pod shop/web-7c5d9f8b6d-m4x2z");
        assert_eq!(confirmed(&d), ["crash.liveness-probe"]);
    }
}

/// Events pasted without the pod's spec, or without the pod at all, still name
/// the pod and its node: the scheduler's `Scheduled` event says where it put the
/// pod, the kubelet's events come from that node.
#[test]
fn events_alone_name_the_pod_and_its_node_in_the_commands() {
    let dir = TempDir::new().unwrap();
    let bundle = read_json(&fixture("container-creating/cni-ip-exhausted.json"));
    let events = array(&bundle["events"]);
    let by_kubelet: Vec<Value> = events.iter().skip(1).cloned().collect();
    let by_scheduler: Vec<Value> = events
        .iter()
        .map(|event| {
            let mut event = event.clone();
            event["source"] = json!({});
            event["reportingInstance"] = Value::Null;
            event
        })
        .collect();
    assert_eq!(events[0]["reason"], "Scheduled");
    for (shown, events) in [("kubelet", by_kubelet), ("scheduler", by_scheduler)] {
        let file = write(&dir, "events.json", compact(&json!({ "events": events })));
        let out = eval_json_files(&[&file]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let d = one_json(&out);
        assert_eq!(
            d["subject"], "pod crm/contact-sync-69c8d5b7f4-kx8wt",
            "{shown}"
        );
        let gathers: Vec<&str> = array(&d["missing"])
            .iter()
            .filter_map(|m| m["gather"].as_str())
            .collect();
        assert!(
            gathers.contains(&"kubectl get pod contact-sync-69c8d5b7f4-kx8wt -n crm -o wide"),
            "{shown}: {gathers:#?}"
        );
        let cni = commands(cause(&d, "creating.cni-failure"));
        assert!(
            cni.iter()
                .any(|c| c.contains("spec.nodeName=node-b03.dc1.example.net")),
            "{shown}: {cni:#?}"
        );
        assert!(
            !out.stdout.contains("<pod_name>") && !out.stdout.contains("<node_name>"),
            "{shown}: {}",
            out.stdout
        );
    }
}

/// The bundle of a pod whose CNI plugin ran out of addresses, and its
/// diagnosis, which confirms that cause.
fn cni_case() -> (Value, Value) {
    let path = fixture("container-creating/cni-ip-exhausted.json");
    let diagnosis = one_json(&eval_json_files(&[&path]));
    assert_eq!(confirmed(&diagnosis), ["creating.cni-failure"]);
    (read_json(&path), diagnosis)
}

/// Lists as the API server sends them (`kubectl get --raw`, curl, a client's
/// objects written as JSON): their items without `kind` or `apiVersion`.
#[test]
fn the_api_servers_own_lists_are_read_as_kubectl_prints_them() {
    let dir = TempDir::new().unwrap();
    let (bundle, expected) = cni_case();
    let raw_list = |kind: &str, items: Vec<Value>| {
        let items: Vec<Value> = items
            .into_iter()
            .map(|mut item| {
                let fields = item.as_object_mut().unwrap();
                fields.remove("kind").unwrap();
                fields.remove("apiVersion").unwrap();
                item
            })
            .collect();
        json!({"kind": kind, "apiVersion": "v1", "metadata": {"resourceVersion": "124873400"}, "items": items})
    };
    let files = [
        (
            "pods.json",
            raw_list("PodList", vec![bundle["pod"].clone()]),
        ),
        (
            "events.json",
            raw_list("EventList", array(&bundle["events"]).clone()),
        ),
        (
            "nodes.json",
            raw_list("NodeList", vec![bundle["node"].clone()]),
        ),
    ]
    .map(|(name, list)| write(&dir, name, serde_json::to_string_pretty(&list).unwrap()));
    let out = eval_json_files(&files.each_ref().map(PathBuf::as_path));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let d = one_json(&out);
    assert_eq!(d["subject"], expected["subject"]);
    assert_eq!(d["causes"], expected["causes"]);
    // Nor is a list inside another read, which kubectl never prints.
    let nested = json!({"kind": "List", "items": [read_json(&files[0])]});
    let out = run_stdin(["eval"], compact(&nested));
    assert_eq!(out.code, 2);
    assert_contains(
        &out.stderr,
        "a PodList inside a List, which kubectl never prints: give the lists one after the other, or their items in one",
    );
    // A List of any kinds has no kind to give its items.
    let out = run_stdin(
        ["eval"],
        r#"{"kind": "List", "items": [{"metadata": {"name": "web-1"}}]}"#,
    );
    assert_eq!(out.code, 2);
    assert_contains(
        &out.stderr,
        "an item of a List has no `kind`, by which kb tells pods, events and nodes apart",
    );
}

/// What `kubectl get … -o yaml` prints is diagnosed as its JSON is: a pod
/// alone, a List of a pod and its events, and documents one after another
/// (after a comment, as `kubectl …; echo ---; kubectl …` writes them), long
/// messages folded over lines as kubectl folds them; read from a file or
/// from standard input.
#[test]
fn what_kubectl_prints_as_yaml_is_diagnosed_as_its_json() {
    let case = |name: &str| {
        common::workspace()
            .join("tests/real-world/cases")
            .join(name)
    };
    for (yaml, json, cause) in [
        (
            "oomkilled-pod.yaml",
            "13-oomkilled-300mi-limit.json",
            "crash.oom-limit",
        ),
        (
            "insufficient-memory-list.yaml",
            "01-istio-pilot-insufficient-memory.json",
            "pending.insufficient-resources",
        ),
        (
            "poststart-hook-documents.yaml",
            "16-influxdb-poststart-hook-bad-flag.json",
            "hook.post-start-failed",
        ),
    ] {
        let expected = eval_json_files(&[&case(json)]);
        assert_eq!(expected.code, 0, "{}", expected.stderr);
        assert!(confirmed(&one_json(&expected)).contains(&cause.to_owned()));
        let yaml = data(&format!("yaml/{yaml}"));
        let out = eval_json_files(&[&yaml]);
        assert_eq!(
            (out.code, &out.stdout),
            (0, &expected.stdout),
            "{}",
            out.stderr
        );
        let out = run_stdin(["eval", "-", "--format", "json"], fs::read(&yaml).unwrap());
        assert_eq!(
            (out.code, &out.stdout),
            (0, &expected.stdout),
            "{}",
            out.stderr
        );
    }
}

/// A core/v1 Event as the API server gives it through events.k8s.io/v1
/// (`kubectl get events.events.k8s.io -o json`): the same event, its fields
/// under their new names.
fn as_events_v1(event: &Value) -> Value {
    let mut v1 = event.as_object().unwrap().clone();
    v1.insert("apiVersion".into(), json!("events.k8s.io/v1"));
    for (core, new) in [
        ("message", "note"),
        ("involvedObject", "regarding"),
        ("count", "deprecatedCount"),
        ("source", "deprecatedSource"),
        ("firstTimestamp", "deprecatedFirstTimestamp"),
        ("lastTimestamp", "deprecatedLastTimestamp"),
        ("reportingComponent", "reportingController"),
    ] {
        if let Some(value) = v1.remove(core) {
            v1.insert(new.into(), value);
        }
    }
    Value::Object(v1)
}

#[test]
fn events_of_the_events_k8s_io_api_are_read_as_core_events() {
    let dir = TempDir::new().unwrap();
    let (bundle, core) = cni_case();
    let events: Vec<Value> = array(&bundle["events"]).iter().map(as_events_v1).collect();
    assert!(compact(&json!(events)).contains("\"note\":\"(combined from similar events)"));
    let mut v1_bundle = bundle.clone();
    v1_bundle["events"] = json!(events);
    let whole = write(
        &dir,
        "bundle.json",
        serde_json::to_string_pretty(&v1_bundle).unwrap(),
    );
    let lines = write(
        &dir,
        "bundles.ndjson",
        format!("{}\n{}\n", compact(&bundle), compact(&v1_bundle)),
    );
    let mut items = vec![bundle["pod"].clone(), bundle["node"].clone()];
    items.extend(events.iter().cloned());
    let list = write(
        &dir,
        "list.json",
        compact(&json!({"apiVersion": "v1", "kind": "List", "items": items})),
    );
    // Read whole, and as the items of a List, matched with the pod by
    // `regarding`.
    for input in [&whole, &list] {
        let out = eval_json_files(&[input]);
        assert_eq!(out.code, 0, "{}: {}", input.display(), out.stderr);
        let d = one_json(&out);
        assert_eq!(d["causes"], core["causes"], "{}", input.display());
        assert_eq!(d["warnings"], core["warnings"], "{}", input.display());
    }
    // As a line of a stream, read keeping only what the rules read.
    let out = eval_json_files(&[&lines]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let [from_core, from_v1] = json_lines(&out.stdout).try_into().unwrap();
    assert_eq!(from_core["causes"], core["causes"]);
    assert_eq!(from_v1["causes"], core["causes"]);
}

#[test]
fn stdin_is_read_with_a_dash_or_with_no_argument() {
    let path = example("pending-insufficient-cpu.json");
    let from_file = eval_as(&path, "json");
    let input = fs::read(&path).unwrap();
    let dash = run_stdin(["eval", "-", "--format", "json"], input.clone());
    let nothing = run_stdin(["eval", "--format", "json"], input);
    for piped in [&dash, &nothing] {
        assert_eq!(piped.code, 0, "{}", piped.stderr);
        assert_eq!(piped.stdout, from_file.stdout);
    }
}

#[test]
fn a_plain_facts_document_is_diagnosed_without_kubernetes_objects() {
    let facts = json!({
        "phase": "Pending",
        "unschedulable": true,
        "scheduling_message": "0/3 nodes are available: 3 Insufficient memory."
    });
    let out = run_stdin(["eval", "--format", "json"], compact(&facts));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let d = one_json(&out);
    assert!(d.get("subject").is_none(), "{d}");
    assert_eq!(d["symptoms"][0]["id"], "pod-pending");
    assert_eq!(d["symptoms"][0]["status"], "matched");
    assert_eq!(
        cause(&d, "pending.insufficient-resources")["status"],
        "confirmed"
    );
    assert_eq!(confirmed(&d), ["pending.insufficient-resources"]);
    assert_eq!(array(&d["warnings"]).len(), 0);
    // The pod's name is not known: the command says so instead of guessing.
    let commands = commands(cause(&d, "pending.insufficient-resources"));
    assert!(
        commands.contains(&String::from(
            "kubectl get pod <pod_name> -n <pod_namespace> -o jsonpath='{.spec.containers[*].resources}'"
        )),
        "{commands:?}"
    );

    // Under `facts`, the same.
    let nested = run_stdin(
        ["eval", "--format", "json"],
        compact(&json!({ "facts": facts })),
    );
    assert_eq!(
        confirmed(&one_json(&nested)),
        ["pending.insufficient-resources"]
    );

    // Without saying whether the pod has a node, the symptom itself is not
    // certain, so neither is the cause: kb does not over-claim.
    let minimal = json!({
        "phase": "Pending",
        "scheduling_message": "0/3 nodes are available: 3 Insufficient memory."
    });
    let d = one_json(&run_stdin(["eval", "--format", "json"], compact(&minimal)));
    assert_eq!(
        status_of(&d, "pending.insufficient-resources"),
        Some("possible")
    );

    // A misspelled fact is not silently dropped.
    let typo = json!({"phase": "Pending", "unschedulable": true, "sheduling_message": "x"});
    let d = one_json(&run_stdin(["eval", "--format", "json"], compact(&typo)));
    let warnings = compact(&d["warnings"]);
    assert!(
        warnings.contains("sheduling_message") && warnings.contains("scheduling_message"),
        "{warnings}"
    );
}

#[test]
fn facts_given_in_a_bundle_override_the_derived_ones() {
    let bundle = read_json(&fixture("crash-loop/liveness-probe.json"));
    // The pod alone cannot show the liveness kill; the person who saw it can say so.
    let told = json!({"pod": bundle["pod"], "facts": {"liveness_killed": true}});
    let out = run_stdin(["eval", "--format", "json"], compact(&told));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let d = one_json(&out);
    assert_eq!(confirmed(&d), ["crash.liveness-probe"]);
    assert!(!missing_facts(&d).contains(&String::from("liveness_killed")));

    // A given fact wins over what the events say.
    let mut overruled = bundle.clone();
    overruled["facts"] = json!({"liveness_killed": false});
    let d = one_json(&run_stdin(
        ["eval", "--format", "json"],
        compact(&overruled),
    ));
    assert_eq!(status_of(&d, "crash.liveness-probe"), None, "{d}");

    // A fact of the wrong type is a warning, and the fact is unknown.
    let mut wrong = bundle;
    wrong["facts"] = json!({"liveness_killed": "yes"});
    let d = one_json(&run_stdin(["eval", "--format", "json"], compact(&wrong)));
    let warnings = compact(&d["warnings"]);
    assert!(warnings.contains("`liveness_killed`"), "{warnings}");
    assert!(!confirmed(&d).contains(&String::from("crash.liveness-probe")));
}

#[test]
fn a_bundle_whose_events_are_an_event_list_object_is_accepted() {
    let mut bundle = read_json(&example("pending-insufficient-cpu.json"));
    // Only the event tells the reason, so the events must be read.
    bundle["pod"]["status"]["conditions"][0]
        .as_object_mut()
        .unwrap()
        .remove("message");
    let events = bundle["events"].take();
    bundle["events"] = json!({"apiVersion": "v1", "kind": "EventList", "items": events});
    let out = run_stdin(["eval", "--format", "json"], compact(&bundle));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let d = one_json(&out);
    assert_eq!(confirmed(&d), ["pending.insufficient-resources"]);
    let seen = compact(&cause(&d, "pending.insufficient-resources")["evidence"]);
    assert!(seen.contains("3 Insufficient cpu"), "{seen}");
}

// ------------------------------------------------------------------ eval: NDJSON

/// `path` as one compact line.
fn ndjson_line(path: &Path) -> String {
    compact(&read_json(path))
}

#[test]
fn ndjson_gives_one_result_per_line_in_order_and_reports_a_bad_line_in_place() {
    let dir = TempDir::new().unwrap();
    let lines = [
        ndjson_line(&example("pending-insufficient-cpu.json")),
        String::from(r#"{"pod": "#),
        ndjson_line(&example("crash-loop-oomkilled.json")),
        ndjson_line(&fixture("healthy/running-ready.json")),
    ];
    let path = write(&dir, "bundles.ndjson", lines.join("\n") + "\n");
    let out = eval_as(&path, "json");
    assert_eq!(
        out.code, 2,
        "a bad line makes the run fail:\n{}",
        out.stderr
    );
    let results = json_lines(&out.stdout);
    assert_eq!(
        results.len(),
        4,
        "one JSON value per input line:\n{}",
        out.stdout
    );
    for (i, result) in results.iter().enumerate() {
        assert_eq!(result["line"], i + 1, "{result}");
    }
    assert_eq!(results[0]["subject"], SUBJECT);
    assert_eq!(confirmed(&results[0]), ["pending.insufficient-resources"]);
    assert!(results[1]["error"].is_string(), "{}", results[1]);
    assert!(results[1].get("causes").is_none());
    assert_eq!(confirmed(&results[2]), ["crash.oom-limit"]);
    assert_eq!(array(&results[3]["symptoms"]).len(), 0);
    assert!(
        out.stderr.contains("bundles.ndjson:2:"),
        "stderr names the bad line: {}",
        out.stderr
    );
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);

    // In text, the good lines are still diagnosed, each with its line.
    let text = run([OsStr::new("eval"), path.as_os_str()]);
    assert_eq!(text.code, 2);
    assert!(text.stdout.contains(&format!("{SUBJECT} (line 1)")));
    assert!(
        text.stdout
            .contains("pod shop/order-service-6f9c8b7d4-tn5jw (line 3)")
    );
    assert!(text.stdout.contains("confirmed crash.oom-limit"));
    assert!(text.stderr.contains("bundles.ndjson:2:"));
}

#[test]
fn each_line_of_a_stream_is_diagnosed_as_it_would_be_alone() {
    // A stream parses each line keeping only what the rules read: a key they
    // do not know is still reported (a misspelt `events`), keys are reported
    // in the same order, and an input of a knowledge base of one's own is
    // read under its own name.
    let dir = TempDir::new().unwrap();
    let mut bundle = read_json(&example("pending-insufficient-cpu.json"));
    let events = bundle["events"].take();
    bundle["evnets"] = events;
    let bundles = [
        compact(&bundle),
        ndjson_line(&example("crash-loop-oomkilled.json")),
    ];
    let rules = write(
        &dir,
        "own/rules.kb",
        r#"input app "The app"
fact state: string "State" { from app.status.state }
symptom broken "Broken" {
  when state == "broken"
  check "Why?" { if state == "broken" => app.broken }
}
cause app.broken "Broken" { fix "Mend it" { step "Mend it" } }
"#,
    );
    let own = rules.parent().unwrap();
    let apps = [
        r#"{"app": {"status": {"state": "broken"}, "name": "a"}}"#,
        r#"{"zap": 2, "app": {"status": {"state": "fine"}}, "aap": 1}"#,
    ];
    for (kb_dir, lines) in [(None, &bundles), (Some(own), &apps.map(String::from))] {
        let with_kb = |args: &[&OsStr]| match kb_dir {
            Some(kb_dir) => run([OsStr::new("--kb"), kb_dir.as_os_str()].iter().chain(args)),
            None => run(args),
        };
        let stream = write(&dir, "lines.ndjson", lines.join("\n") + "\n");
        let out = with_kb(&[
            "eval".as_ref(),
            stream.as_ref(),
            "--format".as_ref(),
            "json".as_ref(),
        ]);
        let streamed = json_lines(&out.stdout);
        assert_eq!(streamed.len(), lines.len(), "{}", out.stderr);
        for (i, (line, mut result)) in lines.iter().zip(streamed).enumerate() {
            let alone = write(&dir, "alone.json", line);
            let out = with_kb(&[
                "eval".as_ref(),
                alone.as_ref(),
                "--format".as_ref(),
                "json".as_ref(),
            ]);
            assert_eq!(result["line"], i + 1);
            result.as_object_mut().unwrap().remove("line");
            assert_eq!(result, one_json(&out), "line {}", i + 1);
        }
    }
    // What the two runs agree on is what they should say.
    let stream = write(&dir, "lines.ndjson", bundles.join("\n") + "\n");
    let results = json_lines(&eval_as(&stream, "json").stdout);
    assert_eq!(confirmed(&results[0]), ["pending.insufficient-resources"]);
    assert!(
        results[0]["warnings"][0]
            .as_str()
            .unwrap()
            .contains("ignored `evnets`"),
        "{}",
        results[0]["warnings"]
    );
}

#[test]
fn ndjson_of_good_lines_exits_0_and_stdin_works_too() {
    let lines = [
        ndjson_line(&fixture("pending/too-many-pods.json")),
        ndjson_line(&fixture("crash-loop/segfault.json")),
        ndjson_line(&fixture("pending/unbound-pvc.json")),
    ];
    let out = run_stdin(["eval", "-", "--format", "json"], lines.join("\r\n"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let results = json_lines(&out.stdout);
    let found: Vec<Vec<String>> = results.iter().map(confirmed).collect();
    assert_eq!(
        found,
        [
            vec![String::from("pending.too-many-pods")],
            vec![String::from("crash.segfault")],
            vec![String::from("pending.unbound-pvc")],
        ]
    );
}

/// `kb ARGS` reading a standard input kept open, and the lines it writes,
/// as they come.
struct Live {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    results: mpsc::Receiver<String>,
}

impl Live {
    fn start(args: &[&str]) -> Self {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kb"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, results) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    return;
                }
            }
        });
        Self {
            child,
            stdin,
            results,
        }
    }

    /// Writes `text` to kb's input, which stays open.
    fn send(&mut self, text: &str) {
        self.stdin.write_all(text.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next line kb writes, as JSON; the wait only keeps a broken kb
    /// from hanging the test.
    fn next(&self) -> Value {
        let line = self
            .results
            .recv_timeout(Duration::from_secs(60))
            .expect("a result while the input is still open");
        serde_json::from_str(&line).unwrap()
    }

    /// Closes kb's input; whether it then exited with 0.
    fn close(mut self) -> bool {
        drop(self.stdin);
        self.child.wait().unwrap().success()
    }
}

#[test]
fn a_live_stream_is_answered_line_by_line_while_it_is_still_open() {
    // NDJSON piped in (`kubectl get … -w -o json | jq -c`): the input stays
    // open, and each bundle's diagnosis comes out as it arrives, not when a
    // batch fills or the input ends.
    let mut live = Live::start(&["eval", "-", "--format", "json"]);
    // Two lines at first: the second tells NDJSON from a single document.
    live.send(&format!(
        "{}\n{}\n",
        ndjson_line(&example("pending-insufficient-cpu.json")),
        ndjson_line(&example("crash-loop-oomkilled.json"))
    ));
    assert_eq!(confirmed(&live.next()), ["pending.insufficient-resources"]);
    assert_eq!(confirmed(&live.next()), ["crash.oom-limit"]);
    live.send(&format!(
        "{}\n",
        ndjson_line(&fixture("pending/unbound-pvc.json"))
    ));
    assert_eq!(confirmed(&live.next()), ["pending.unbound-pvc"]);
    assert!(live.close());
}

/// A fixture's pod as `kubectl get pod NAME -w -o json` prints it: indented
/// by four spaces, over many lines.
fn watched_pod(rel: &str) -> String {
    let pod = &read_json(&fixture(rel))["pod"];
    let mut out = Vec::new();
    let indent = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, indent);
    serde::Serialize::serialize(pod, &mut serializer).unwrap();
    String::from_utf8(out).unwrap() + "\n"
}

#[test]
fn watch_diagnoses_each_document_as_it_arrives_while_the_input_is_open() {
    let mut live = Live::start(&["eval", "--watch", "--format", "json"]);
    let first = watched_pod("crash-loop/command-not-found.json");
    live.send(&first);
    let result = live.next();
    assert_eq!(confirmed(&result), ["crash.command-not-found"]);
    assert_eq!(result["line"], 1);
    // With `--output-watch-events`, each object comes in its event.
    let event = format!(
        "{{\"type\": \"MODIFIED\", \"object\": {}}}\n",
        watched_pod("image-pull/invalid-name.json")
    );
    live.send(&event);
    let result = live.next();
    assert_eq!(confirmed(&result), ["image.invalid-name"]);
    assert_eq!(result["line"], first.lines().count() + 1);
    assert_eq!(result["warnings"], json!([]));
    // The last state of a pod that is gone is diagnosed, saying so.
    live.send(&event.replace("MODIFIED", "DELETED"));
    let result = live.next();
    assert_eq!(confirmed(&result), ["image.invalid-name"]);
    let subject = result["subject"].as_str().unwrap();
    assert_eq!(
        result["warnings"],
        json!([format!(
            "a watch event says `{subject}` was deleted: this is its last state"
        )])
    );
    assert!(live.close());
}

/// `kubectl get -w -o yaml` writes `---` before each object but the first,
/// so an object's end shows only when the next comes: each is diagnosed
/// when the input pauses after it, again if more of it comes after all,
/// and a broken one is said at its end, the documents after it read on.
#[test]
fn watch_diagnoses_yaml_documents_when_the_input_pauses_after_each() {
    let pod = fs::read_to_string(data("yaml/oomkilled-pod.yaml")).unwrap();
    let lines = pod.lines().count();
    let mut live = Live::start(&["eval", "--watch", "--format", "json"]);
    live.send(&pod);
    let result = live.next();
    assert_eq!(
        (&result["line"], confirmed(&result)[0].as_str()),
        (&json!(1), "crash.oom-limit")
    );
    // A blank line after it, and a pause, change nothing.
    live.send("\n");
    std::thread::sleep(Duration::from_millis(300));
    // With `--output-watch-events`, each object comes in its event.
    let indented: String = pod.lines().map(|line| format!("  {line}\n")).collect();
    live.send(&format!("---\nobject:\n{indented}type: DELETED\n"));
    let result = live.next();
    let deleted_at = lines + 3;
    assert_eq!(result["line"], deleted_at);
    assert_eq!(confirmed(&result)[0], "crash.oom-limit");
    assert_contains(
        &result["warnings"][0].to_string(),
        "was deleted: this is its last state",
    );
    // An object that pauses halfway is diagnosed as far as it came, then whole.
    let (start, rest) = pod.split_at(pod.match_indices('\n').nth(4).unwrap().0 + 1);
    live.send(&format!("---\n{start}"));
    let halfway = deleted_at + lines + 3;
    assert_eq!(live.next()["line"], halfway);
    live.send(rest);
    let result = live.next();
    assert_eq!(
        (&result["line"], confirmed(&result)[0].as_str()),
        (&json!(halfway), "crash.oom-limit")
    );
    // Broken YAML is known broken at the next `---`; what follows is read.
    let broken = halfway + lines + 1;
    live.send("---\nkind: [\n");
    live.send(&format!("---\n{pod}"));
    assert_eq!(
        live.next(),
        json!({"line": broken, "error": "column 7: invalid YAML: unclosed bracket '['"})
    );
    let result = live.next();
    assert_eq!(
        (&result["line"], confirmed(&result)[0].as_str()),
        (&json!(broken + 2), "crash.oom-limit")
    );
    assert!(!live.close(), "a broken document makes the exit code 2");
}

#[test]
fn documents_on_stdin_that_has_not_ended_get_a_note_pointing_to_watch() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kb"))
        .args(["eval", "--format", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (send, notes) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = send.send(line);
        }
    });
    stdin
        .write_all(watched_pod("crash-loop/command-not-found.json").as_bytes())
        .unwrap();
    stdin.flush().unwrap();
    let note = notes
        .recv_timeout(Duration::from_secs(60))
        .expect("a note while the input is still open");
    assert!(
        note.starts_with("note: still reading <stdin>, which has not ended"),
        "{note}"
    );
    assert_contains(&note, "use `kb eval --watch`");
    // The document is diagnosed all the same when the input ends.
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(confirmed(&result), ["crash.command-not-found"]);
}

#[test]
fn watch_takes_each_document_as_a_whole_input_and_stops_where_json_breaks() {
    // A namespace's pods and events taken again and again: each snapshot
    // gives a diagnosis per pod, with the events that are about it.
    let pending = read_json(&fixture("pending/unbound-pvc.json"));
    let crashing = read_json(&fixture("crash-loop/command-not-found.json"));
    let mut items = vec![pending["pod"].clone(), crashing["pod"].clone()];
    items.extend(pending["events"].as_array().unwrap().iter().cloned());
    let snapshot = serde_json::to_string_pretty(&json!({
        "apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}
    }))
    .unwrap();
    let lines = snapshot.lines().count();
    // Then a document that is JSON, but nested deeper than kb reads where
    // a rule looks, on its third line; and one that is not JSON.
    let deep = format!(
        "{{\n  \"kind\": \"Pod\",\n  \"status\": {}{}\n}}",
        "[".repeat(200),
        "]".repeat(200)
    );
    let broken = "{\n  \"kind\": \"Pod\",\n  \"spec\": }";
    let input = format!("{snapshot}\n{deep}\n{snapshot}\n{broken}\n{snapshot}\n");
    let out = run_stdin(["eval", "-w", "--format", "json"], input);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let results = json_lines(&out.stdout);
    assert_eq!(results.len(), 6, "{}", out.stdout);
    let (deep_at, second, broken_at) = (lines + 3, lines + 5, 2 * lines + 7);
    // The object and 127 brackets are as deep as kb reads: serde_json stops
    // after them, at the 139th byte of the line.
    assert_eq!(
        results[2],
        json!({"line": deep_at, "error": "column 139: invalid JSON: recursion limit exceeded"})
    );
    let found: Vec<(Value, Vec<String>)> = [0, 1, 3, 4]
        .iter()
        .map(|&i| (results[i]["line"].clone(), confirmed(&results[i])))
        .collect();
    let unbound = vec![String::from("pending.unbound-pvc")];
    let not_found = vec![String::from("crash.command-not-found")];
    assert_eq!(
        found,
        [
            (json!(1), unbound.clone()),
            (json!(1), not_found.clone()),
            (json!(second), unbound),
            (json!(second), not_found),
        ]
    );
    // Where the next document starts is not known after one that is not
    // JSON: the stream ends there, with the position of what is wrong.
    assert_eq!(
        results[5],
        json!({"line": broken_at, "error": "column 11: invalid JSON: expected value"})
    );
    assert_contains(
        &out.stderr,
        &format!("<stdin>:{broken_at}: column 11: invalid JSON: expected value"),
    );
}

#[test]
fn watch_reads_one_input_and_says_when_it_is_empty() {
    let pod = fixture("crash-loop/command-not-found.json");
    let out = run([
        OsStr::new("eval"),
        OsStr::new("-w"),
        pod.as_os_str(),
        pod.as_os_str(),
    ]);
    assert_eq!(out.code, 2);
    assert_contains(&out.stderr, "`--watch` reads one input");
    let out = run_stdin(["eval", "--watch"], " \n\n");
    assert_eq!(out.code, 2);
    assert_contains(&out.stderr, "<stdin>: the input is empty");
}

#[test]
fn ndjson_line_numbers_count_blank_lines() {
    let dir = TempDir::new().unwrap();
    let text = format!(
        "\n{}\n\n{}\n{}\n{}\n",
        ndjson_line(&example("pending-insufficient-cpu.json")),
        ndjson_line(&example("crash-loop-oomkilled.json")),
        r#"{"pod": "#,
        ndjson_line(&fixture("healthy/running-ready.json")),
    );
    let path = write(&dir, "gaps.ndjson", text);
    let out = eval_as(&path, "json");
    assert_eq!(out.code, 2);
    let lines: Vec<Value> = json_lines(&out.stdout)
        .iter()
        .map(|r| r["line"].clone())
        .collect();
    assert_eq!(lines, [json!(2), json!(4), json!(5), json!(6)]);
    assert!(out.stderr.contains("gaps.ndjson:5:"), "{}", out.stderr);
}

#[test]
fn ndjson_must_be_the_only_input() {
    let dir = TempDir::new().unwrap();
    let lines = [
        ndjson_line(&example("pending-insufficient-cpu.json")),
        ndjson_line(&example("crash-loop-oomkilled.json")),
    ];
    let stream = write(&dir, "bundles.ndjson", lines.join("\n"));
    let out = run([
        OsStr::new("eval"),
        example("pending-insufficient-cpu.json").as_os_str(),
        stream.as_os_str(),
    ]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("NDJSON"), "{}", out.stderr);
    assert!(out.stderr.contains("bundles.ndjson"), "{}", out.stderr);
}

#[test]
fn a_large_ndjson_stream_is_evaluated_line_by_line() {
    let script = Path::new("/work/shared/bench/gen-bundles.py");
    let python = std::process::Command::new("python3")
        .arg("--version")
        .output();
    if !python.is_ok_and(|o| o.status.success()) || !script.exists() {
        eprintln!("note: skipped, needs python3 and {}", script.display());
        return;
    }
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("bundles.ndjson");
    let status = std::process::Command::new("python3")
        .arg(script)
        .args(["5500", "7"])
        .stdout(fs::File::create(&path).unwrap())
        .status()
        .unwrap();
    assert!(status.success());
    let input_lines = fs::read(&path)
        .unwrap()
        .iter()
        .filter(|b| **b == b'\n')
        .count();
    assert_eq!(input_lines, 5500);
    assert!(fs::metadata(&path).unwrap().len() > 40_000_000);

    let out = eval_as(&path, "json");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let results = json_lines(&out.stdout);
    assert_eq!(results.len(), input_lines);
    let mut previous = 0;
    for result in &results {
        assert!(result.get("error").is_none(), "{result}");
        let line = result["line"].as_u64().unwrap();
        assert!(line > previous, "line {line} after {previous}");
        previous = line;
    }
    assert_eq!(results[0]["line"], 1);
    assert!(
        results.iter().any(|r| !confirmed(r).is_empty()),
        "the generated mix has diagnosable pods"
    );
}

// ------------------------------------------------------------------ eval: hostile input

#[test]
fn bad_inputs_exit_2_with_a_clear_message() {
    let dir = TempDir::new().unwrap();
    let pending = fs::read_to_string(example("pending-insufficient-cpu.json")).unwrap();
    let mut latin1 = pending
        .replace("report-builder-7d9c5b6f4-x2kqp", "r\u{e9}port")
        .into_bytes();
    // Turn the UTF-8 `é` (C3 A9) into Latin-1 (E9 plus a stray byte): not UTF-8.
    let at = latin1.windows(2).position(|w| w == [0xc3, 0xa9]).unwrap();
    latin1[at] = 0xe9;
    latin1[at + 1] = 0xff;
    let deep = "[".repeat(100_000) + &"]".repeat(100_000);
    let deep_object = r#"{"pod": "#.repeat(100_000) + "1" + &"}".repeat(100_000);
    let cases: Vec<(&str, Vec<u8>, Vec<&str>)> = vec![
        ("empty.json", Vec::new(), vec!["empty.json", "empty"]),
        (
            "blank.json",
            b"  \n\n\t \r\n".to_vec(),
            vec!["blank.json", "empty"],
        ),
        ("latin1.json", latin1, vec!["latin1.json:", "invalid"]),
        (
            "deep.json",
            deep.into_bytes(),
            vec!["deep.json:1:", "recursion limit"],
        ),
        (
            "deep-object.json",
            deep_object.into_bytes(),
            vec!["deep-object.json:1:", "recursion limit"],
        ),
        (
            "array.json",
            b"[\"report-builder\", 3]".to_vec(),
            vec!["found a string"],
        ),
        (
            "string.json",
            b"\"report-builder\"\n".to_vec(),
            vec!["a string"],
        ),
        ("number.json", b"42\n".to_vec(), vec!["a number"]),
        (
            "service.json",
            br#"{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}}"#.to_vec(),
            vec!["`Service`"],
        ),
        (
            "events-number.json",
            br#"{"pod": {"kind": "Pod", "metadata": {"name": "web"}}, "events": 3}"#.to_vec(),
            vec!["`events`", "a number"],
        ),
        (
            "only-events.json",
            br#"{"kind": "EventList", "items": [{"kind": "Event", "reason": "BackOff"}]}"#.to_vec(),
            vec!["no pod"],
        ),
    ];
    for (name, contents, expected) in cases {
        let path = write(&dir, name, contents);
        let out = run([OsStr::new("eval"), path.as_os_str()]);
        assert_eq!(out.code, 2, "{name}: {out:?}");
        assert!(out.stdout.is_empty(), "{name}: {}", out.stdout);
        assert!(out.stderr.starts_with("error: "), "{name}: {}", out.stderr);
        for fragment in expected {
            assert!(
                out.stderr.contains(fragment),
                "{name}: `{fragment}` not in {}",
                out.stderr
            );
        }
    }
}

#[test]
fn truncated_json_names_the_file_line_and_column() {
    let dir = TempDir::new().unwrap();
    let text = fs::read_to_string(example("pending-insufficient-cpu.json")).unwrap();
    let at = text.find("\"reason\": \"FailedScheduling\"").unwrap() + "\"reason\": \"Fail".len();
    let cut = &text[..at];
    let path = write(&dir, "truncated.json", cut);
    let out = run([OsStr::new("eval"), path.as_os_str()]);
    assert_eq!(out.code, 2, "{out:?}");
    // Where the text stops: inside the string `"Fail`.
    let line = cut.lines().count();
    let column = cut.lines().last().unwrap().len();
    assert!(
        out.stderr
            .contains(&format!("truncated.json:{line}:{column}: ")),
        "no file:line:column ({line}:{column}) in {}",
        out.stderr
    );
    assert!(out.stderr.contains("invalid JSON"), "{}", out.stderr);

    // Through stdin the source is named too.
    let piped = run_stdin(["eval", "-"], cut);
    assert_eq!(piped.code, 2);
    assert!(piped.stderr.contains("<stdin>:"), "{}", piped.stderr);
}

#[test]
fn impossible_input_arguments_exit_2() {
    let dir = TempDir::new().unwrap();
    let folder = run([OsStr::new("eval"), dir.path().as_os_str()]);
    assert_eq!(folder.code, 2);
    assert!(
        folder.stderr.contains("is a directory"),
        "{}",
        folder.stderr
    );

    let missing = dir.path().join("no-such-pod.json");
    let out = run([OsStr::new("eval"), missing.as_os_str()]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("cannot read"), "{}", out.stderr);
    assert!(out.stderr.contains("no-such-pod.json"), "{}", out.stderr);

    let twice = run_stdin(["eval", "-", "-"], "{}");
    assert_eq!(twice.code, 2);
    assert!(twice.stderr.contains("more than once"), "{}", twice.stderr);
    assert!(twice.stdout.is_empty());

    let empty_stdin = run_stdin(["eval"], "");
    assert_eq!(empty_stdin.code, 2);
    assert!(
        empty_stdin.stderr.contains("empty"),
        "{}",
        empty_stdin.stderr
    );

    // A good file does not excuse a bad one.
    let out = run([
        OsStr::new("eval"),
        example("pending-insufficient-cpu.json").as_os_str(),
        missing.as_os_str(),
    ]);
    assert_eq!(out.code, 2, "{}", out.stdout);
}

#[test]
fn usage_errors_exit_2() {
    let out = run(["eval", "--format", "yaml", "x.json"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("yaml"), "{}", out.stderr);
    assert_eq!(run(["diagnose"]).code, 2);
    assert_eq!(run(Vec::<&str>::new()).code, 2);
    assert_eq!(run(["--lang", "fr", "explain", "pod-pending"]).code, 2);
}

#[test]
fn wrong_types_at_every_fact_path_are_warnings_not_crashes() {
    let out = eval_as(&data("wrong-types.json"), "json");
    assert!(matches!(out.code, 0 | 1), "{out:?}");
    let d = one_json(&out);
    let warnings = compact(&d["warnings"]);
    // Every fact the evaluation reads warns; facts nothing needs are not read.
    for fact in ["phase", "node_name", "container_statuses"] {
        assert!(
            warnings.contains(&format!("`{fact}`")),
            "no warning about `{fact}`: {warnings}"
        );
    }
    assert!(confirmed(&d).is_empty(), "nothing can be confirmed: {d}");
    // Text shows the warnings too.
    let text = run([OsStr::new("eval"), data("wrong-types.json").as_os_str()]);
    assert!(
        text.stdout.contains("warning: fact `phase`"),
        "{}",
        text.stdout
    );

    // Every value of real bundles replaced by one of the wrong type.
    fn replace_leaves(value: &Value, with: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), replace_leaves(v, with)))
                    .collect(),
            ),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| replace_leaves(v, with)).collect())
            }
            _ => with.clone(),
        }
    }
    let wrong = [
        json!(true),
        json!(0),
        json!(-1.5),
        json!(18_446_744_073_709_551_615_u64),
        json!([]),
        json!({}),
        json!([[]]),
    ];
    for path in [
        example("pending-insufficient-cpu.json"),
        example("crash-loop-oomkilled.json"),
        fixture("crash-loop/liveness-probe.json"),
    ] {
        let bundle = read_json(&path);
        for with in &wrong {
            let out = run_stdin(
                ["eval", "--format", "json"],
                compact(&replace_leaves(&bundle, with)),
            );
            let name = format!("{} with every value {with}", path.display());
            assert!(matches!(out.code, 0 | 1), "{name}: {out:?}");
            let d = one_json(&out);
            assert!(!array(&d["warnings"]).is_empty(), "{name}: no warning");
        }
    }
}

#[test]
fn objects_and_lists_given_as_scalars_are_warned_of_by_their_place() {
    /// Every object and list below the top, by JSON pointer and as kb names
    /// it (events by any index: kb reads them oldest first).
    fn containers(value: &Value, pointer: &str, path: &str, out: &mut Vec<(String, String)>) {
        let below: Vec<(String, String, &Value)> = match value {
            Value::Object(map) => map
                .iter()
                .map(|(k, v)| {
                    let dot = if path.is_empty() { "" } else { "." };
                    (format!("{pointer}/{k}"), format!("{path}{dot}{k}"), v)
                })
                .collect(),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let index = if path == "events" {
                        String::from("*")
                    } else {
                        i.to_string()
                    };
                    (format!("{pointer}/{i}"), format!("{path}[{index}]"), v)
                })
                .collect(),
            _ => return,
        };
        for (pointer, path, value) in below {
            if value.is_object() || value.is_array() {
                out.push((pointer.clone(), path.clone()));
                containers(value, &pointer, &path, out);
            }
        }
    }
    /// What was decided: the symptoms and causes with their status, the facts missing.
    fn decided(diagnosis: &Value) -> String {
        let ids = |key: &str| {
            array(&diagnosis[key])
                .iter()
                .map(|x| format!("{}:{}", x["id"], x["status"]))
                .collect::<Vec<_>>()
        };
        format!(
            "{:?} {:?} {:?}",
            ids("symptoms"),
            ids("causes"),
            missing_facts(diagnosis)
        )
    }
    let scalars = [
        (json!("x"), "a string (\"x\")"),
        (json!(5), "a number (5)"),
        (json!(true), "a bool (true)"),
    ];
    let mut changed = 0;
    for bundle_path in [
        example("pending-insufficient-cpu.json"),
        example("crash-loop-oomkilled.json"),
        fixture("crash-loop/liveness-probe.json"),
        fixture("image-pull/not-found.json"),
        fixture("container-creating/volume-mount-secret-init.json"),
        fixture("terminating/finalizers.json"),
    ] {
        let bundle = read_json(&bundle_path);
        let mut places = Vec::new();
        containers(&bundle, "", "", &mut places);
        // The bundle, then each variant, as one stream.
        let mut lines = vec![compact(&bundle)];
        let mut variants = Vec::new();
        for (pointer, path) in &places {
            for (scalar, shown) in &scalars {
                let mut variant = bundle.clone();
                *variant.pointer_mut(pointer).unwrap() = scalar.clone();
                lines.push(compact(&variant));
                variants.push((path, *shown));
            }
        }
        let out = run_stdin(["eval", "-", "--format", "json"], lines.join("\n"));
        let results = json_lines(&out.stdout);
        assert_eq!(results.len(), lines.len(), "{}", out.stderr);
        let original = &results[0];
        assert_eq!(array(&original["warnings"]).len(), 0, "{original}");
        for ((path, shown), result) in variants.iter().zip(&results[1..]) {
            // `events` of another type is an error of its line.
            if let Some(error) = result.get("error") {
                assert_eq!(**path, "events", "{error}");
                continue;
            }
            if decided(result) == decided(original) {
                continue;
            }
            changed += 1;
            // Told by place; numbers and bools read as list elements have
            // none, and are told by what they are.
            let warnings = compact(&result["warnings"])
                .replace("events[", "events[#")
                .replace("\\\"", "\"");
            let warnings = warnings
                .split("events[#")
                .enumerate()
                .map(|(i, part)| match i {
                    0 => part.to_string(),
                    _ => format!(
                        "events[*{}",
                        part.trim_start_matches(|c: char| c.is_ascii_digit())
                    ),
                })
                .collect::<String>();
            let placed = format!("`{path}` is {shown}");
            let unplaced = format!("the input has {shown}");
            let fact_typed = "should be";
            assert!(
                warnings.contains(&placed)
                    || (!shown.starts_with("a string") && warnings.contains(&unplaced))
                    || warnings.contains(fact_typed),
                "{} with {path} {shown}: {} → {}; {warnings}",
                bundle_path.display(),
                decided(original),
                decided(result)
            );
        }
    }
    assert!(
        changed > 50,
        "only {changed} variants changed the diagnosis"
    );
}

#[test]
fn commands_quote_what_comes_from_the_cluster_and_never_evaluate_it() {
    let mut bundle = read_json(&example("pending-insufficient-cpu.json"));
    bundle["pod"]["metadata"]["name"] = json!("x{{ 7*7 }}");
    bundle["pod"]["metadata"]["namespace"] = json!("$(rm -rf /)");
    let out = run_stdin(["eval", "--format", "json"], compact(&bundle));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let d = one_json(&out);
    assert_eq!(d["subject"], "pod $(rm -rf /)/x{{ 7*7 }}");
    let commands = commands(cause(&d, "pending.insufficient-resources"));
    assert!(
        commands.contains(&String::from(
            "kubectl get pod 'x{{ 7*7 }}' -n '$(rm -rf /)' -o jsonpath='{.spec.containers[*].resources}'"
        )),
        "{commands:?}"
    );
    assert!(commands.contains(&String::from("kubectl top pod -n '$(rm -rf /)'")));
    for command in &commands {
        assert!(
            !command.contains("49"),
            "the template was evaluated: {command}"
        );
    }

    // The same in the text output, and for the next checks.
    let text = run_stdin(["eval"], compact(&bundle));
    assert!(
        text.stdout
            .contains("$ kubectl get pod 'x{{ 7*7 }}' -n '$(rm -rf /)'")
    );
    let mut no_events = read_json(&fixture("pending/no-events.json"));
    no_events["pod"]["metadata"]["name"] = json!("{% raw %}x");
    let d = one_json(&run_stdin(
        ["eval", "--format", "json"],
        compact(&no_events),
    ));
    let gather = d["missing"][0]["gather"].as_str().unwrap();
    assert!(
        gather.contains("involvedObject.name='{% raw %}x'"),
        "{gather}"
    );
}

#[cfg(unix)]
#[test]
fn rendered_commands_give_the_shell_the_literal_names() {
    let dir = TempDir::new().unwrap();
    let marker = dir.path().join("PWNED");
    let names = [
        format!("a'$(touch {})", marker.display()),
        format!("b\"`touch {}`\"", marker.display()),
        String::from("c\\d ; e"),
        String::from("x{{ 7*7 }}"),
    ];
    for name in &names {
        let mut bundle = read_json(&example("pending-insufficient-cpu.json"));
        bundle["pod"]["metadata"]["name"] = json!(name);
        bundle["pod"]["metadata"]["namespace"] = json!(format!("ns {name}"));
        let d = one_json(&run_stdin(["eval", "--format", "json"], compact(&bundle)));
        let command = commands(cause(&d, "pending.insufficient-resources"))
            .into_iter()
            .find(|c| c.starts_with("kubectl get pod "))
            .unwrap();
        // A stand-in `kubectl` prints its arguments, one per line.
        let script = format!(
            "kubectl() {{ for a in \"$@\"; do printf '%s\\n' \"$a\"; done; }}\n{command}\n"
        );
        let shell = std::process::Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(shell.status.success(), "{command}");
        let args = String::from_utf8(shell.stdout).unwrap();
        let args: Vec<&str> = args.lines().collect();
        let namespace = format!("ns {name}");
        assert_eq!(
            args,
            [
                "get",
                "pod",
                name.as_str(),
                "-n",
                namespace.as_str(),
                "-o",
                "jsonpath={.spec.containers[*].resources}"
            ],
            "{command}"
        );
        assert!(
            !marker.exists(),
            "the shell ran a command from a pod name: {command}"
        );
    }
}

#[test]
fn documents_concatenated_on_one_line_are_read_like_separate_files() {
    let bundle = read_json(&fixture("crash-loop/liveness-probe.json"));
    let events = json!({"kind": "EventList", "apiVersion": "v1", "items": bundle["events"]});
    let input = compact(&bundle["pod"]) + &compact(&events);
    let out = run_stdin(["eval", "--format", "json"], input);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(confirmed(&one_json(&out)), ["crash.liveness-probe"]);
}

// ------------------------------------------------------------------ determinism

#[test]
fn the_same_input_gives_byte_identical_output() {
    let dir = TempDir::new().unwrap();
    let list = write(&dir, "list.json", compact(&two_pod_list(false)));
    let inputs = [
        example("pending-insufficient-cpu.json"),
        fixture("pending/no-events.json"),
        list,
        data("wrong-types.json"),
    ];
    for input in &inputs {
        for format in ["json", "text"] {
            let args = [
                OsStr::new("eval"),
                input.as_os_str(),
                OsStr::new("--format"),
                OsStr::new(format),
            ];
            let first = run(args);
            let second = run(args);
            assert!(!first.stdout.is_empty());
            assert_eq!(first.stdout, second.stdout, "{} {format}", input.display());
            assert_eq!(first.code, second.code);
        }
    }
}

// ------------------------------------------------------------------ check

#[test]
fn check_accepts_the_bundled_knowledge_base() {
    let out = run(["check"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with("ok:"), "{}", out.stdout);
    assert!(out.stdout.contains("symptoms"), "{}", out.stdout);
    let json = run(["check", "--format", "json"]);
    assert_eq!(json.code, 0);
    assert_eq!(one_json(&json), json!([]));
    // The folder it was built from is the same knowledge base.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let from_dir = run([OsStr::new("check"), dir.as_os_str()]);
    assert_eq!(from_dir.code, 0, "{}", from_dir.stderr);
    assert_eq!(from_dir.stdout, out.stdout);
}

const BAD_KB: &str = r#"# A small knowledge base with three independent mistakes.
input pod "The Pod, as `kubectl get pod NAME -o json` prints it"

fact pod_name: string "The pod's name" {
  from pod.metadata.name
  gather "kubectl get pods -A"
}

fact phase: string "The pod's phase" {
  from pod.status.phase
  gather "kubectl get pod {{ pod_nam }} -o jsonpath='{.status.phase}'"
}

fact scheduling_message: string "What the scheduler last said about the pod" {
  from first(pod.status.conditions[.type == "PodScheduled"]).message
  gather "kubectl describe pod {{ pod_name }}"
}

symptom pod-pending "Pod stuck in Pending" {
  when phase == "Pending"
  check scheduler-says "What does the scheduler say?" {
    if scheduling_message contains "Insufficient cpu" => pending.insufficent-resources
    if scheduling_message contains "Insufficient memory" => pending.insufficient-resources
    else => pending.other
  }
}

cause pending.insufficient-resources "No node has enough free CPU or memory" {
  fix "Add capacity" {
    step "Compare allocatable and allocated resources" run "kubectl describe nodes"
  }
}

cause pending.other "The scheduler gave another reason" {
  explain "Read the scheduler's message in the pod's events."
}
"#;

#[test]
fn check_reports_every_mistake_with_its_location() {
    let dir = TempDir::new().unwrap();
    write(&dir, "bad.kb", BAD_KB);
    let expected = [
        ("E0106", line_col(BAD_KB, "\"kubectl get pod {{ pod_nam }}")),
        ("E0102", line_col(BAD_KB, "pending.insufficent-resources")),
        ("E0204", line_col(BAD_KB, "pending.other \"The scheduler")),
    ];

    let text = run([OsStr::new("check"), dir.path().as_os_str()]);
    assert_eq!(text.code, 3, "{}", text.stderr);
    assert!(!text.stdout.starts_with("ok:"));
    for (code, (line, column)) in expected {
        assert!(
            text.stderr.contains(code),
            "{code} missing:\n{}",
            text.stderr
        );
        let at = format!("bad.kb:{line}:{column}");
        assert!(text.stderr.contains(&at), "{at} missing:\n{}", text.stderr);
    }
    assert!(
        text.stderr
            .contains("did you mean `pending.insufficient-resources`?"),
        "{}",
        text.stderr
    );
    assert!(text.stderr.contains("`pod_nam`"), "{}", text.stderr);
    assert!(
        text.stderr.contains("the knowledge base has 3 errors"),
        "{}",
        text.stderr
    );

    let json = run([
        OsStr::new("check"),
        dir.path().as_os_str(),
        OsStr::new("--format"),
        OsStr::new("json"),
    ]);
    assert_eq!(json.code, 3);
    let problems = one_json(&json);
    let problems = array(&problems);
    assert_eq!(problems.len(), 3, "{problems:?}");
    for (problem, (code, (line, column))) in problems.iter().zip(expected) {
        assert!(
            problem["file"].as_str().unwrap().ends_with("bad.kb"),
            "{problem}"
        );
        assert_eq!(problem["line"], line, "{problem}");
        assert_eq!(problem["column"], column, "{problem}");
        assert_eq!(problem["severity"], "error", "{problem}");
        assert_eq!(problem["code"], code, "{problem}");
        assert!(
            !problem["message"].as_str().unwrap().is_empty(),
            "{problem}"
        );
    }
    assert_eq!(
        problems[1]["help"],
        "did you mean `pending.insufficient-resources`?"
    );

    // The same knowledge base cannot be used to evaluate.
    let eval = run([
        OsStr::new("--kb"),
        dir.path().as_os_str(),
        OsStr::new("eval"),
        example("pending-insufficient-cpu.json").as_os_str(),
    ]);
    assert_eq!(eval.code, 3);
    assert!(eval.stdout.is_empty());
}

#[test]
fn rules_too_deep_to_compile_safely_are_errors_not_crashes() {
    let chain = vec![r#"phase == "Pending""#; 20_000].join(" and ");
    let fields = ".a".repeat(20_000);
    let lists = "list<".repeat(100_000) + "string" + &">".repeat(100_000);
    let cases = [
        (
            format!("symptom s \"S\" {{\n  when {chain}\n}}\n"),
            "the expression is nested more than 128 deep",
        ),
        (
            format!("fact f: string \"F\" {{ from pod{fields} }}\n"),
            "the expression is nested more than 128 deep",
        ),
        (
            format!("fact f: {lists} \"F\" {{ from pod.a }}\n"),
            "`list<…>` types are nested more than 64 deep",
        ),
        (
            // Byte order marks are blanks between tokens, as spaces are.
            format!(
                "symptom s \"S\" {{\n  when {}true\n}}\n",
                "not\u{feff}".repeat(100_000)
            ),
            "`not`s are nested more than 64 deep",
        ),
    ];
    for (rules, message) in cases {
        let dir = TempDir::new().unwrap();
        write(&dir, "deep.kb", format!("input pod \"P\"\n{rules}"));
        let out = run([OsStr::new("check"), dir.path().as_os_str()]);
        assert_eq!(out.code, 3, "{message}: {}", out.stderr);
        assert!(out.stderr.contains("E0002"), "{}", out.stderr);
        assert!(out.stderr.contains(message), "{}", out.stderr);
        assert!(
            out.stderr.contains("the knowledge base has 1 error"),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn check_suggests_the_keyword_a_typo_meant() {
    let dir = TempDir::new().unwrap();
    let rules = COFFEE_KB.replace("  when water_level", "  wen water_level");
    write(&dir, "machine.kb", &rules);
    let out = run([OsStr::new("check"), dir.path().as_os_str()]);
    assert_eq!(out.code, 3);
    assert!(out.stderr.contains("E0001"), "{}", out.stderr);
    assert!(
        out.stderr.contains("did you mean `when`?"),
        "{}",
        out.stderr
    );
    let (line, column) = line_col(&rules, "wen water_level");
    assert!(
        out.stderr.contains(&format!("machine.kb:{line}:{column}")),
        "{}",
        out.stderr
    );
    // Only the typo: no echo of it (such as a symptom without `when`).
    let json = run([
        OsStr::new("check"),
        dir.path().as_os_str(),
        OsStr::new("--format"),
        OsStr::new("json"),
    ]);
    let problems = one_json(&json);
    assert_eq!(array(&problems).len(), 1, "{problems}");
    assert_eq!(problems[0]["code"], "E0001");
}

#[test]
fn check_text_and_json_agree_on_columns_after_non_ascii_text() {
    let dir = TempDir::new().unwrap();
    let rules = r#"input pod "The Pod" zh "Pod 对象"
fact phase: string "The phase" zh "Pod 的阶段" { from pod.status.phase gather "kubectl get pod {{ pod_nam }}" }
symptom pod-pending "Pending" zh "Pod 一直处于 Pending" {
  when phase == "Pending"
  check c "Why?" { else => pending.any }
}
cause pending.any "Some reason" { fix "Look" { step "Describe it" run "kubectl describe pods" } }
"#;
    write(&dir, "zh.kb", rules);
    let needle = "\"kubectl get pod {{";
    let (line, column) = line_col(rules, needle);
    let line_text = rules.lines().nth(line - 1).unwrap();
    assert!(
        column < line_text.find(needle).unwrap() + 1,
        "the line has multi-byte characters before the error"
    );

    let json = run([
        OsStr::new("check"),
        dir.path().as_os_str(),
        OsStr::new("--format"),
        OsStr::new("json"),
    ]);
    assert_eq!(json.code, 3, "{}", json.stderr);
    let problems = one_json(&json);
    let problem = array(&problems)
        .iter()
        .find(|p| p["code"] == "E0106")
        .unwrap_or_else(|| panic!("{problems}"));
    assert_eq!(problem["line"], line);
    assert_eq!(problem["column"], column);

    let text = run([OsStr::new("check"), dir.path().as_os_str()]);
    assert!(
        text.stderr.contains(&format!("zh.kb:{line}:{column}]")),
        "{}",
        text.stderr
    );
}

// ------------------------------------------------------------------ test

#[test]
fn the_bundled_rule_tests_pass() {
    let out = run(["test"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let last = out.stdout.lines().last().unwrap();
    let passed: usize = last
        .strip_suffix(" passed, 0 failed")
        .unwrap_or_else(|| panic!("last line: {last}"))
        .parse()
        .unwrap();
    assert!(passed >= 30, "{last}");
    assert_eq!(
        out.stdout
            .lines()
            .filter(|l| l.ends_with(" ... ok"))
            .count(),
        passed
    );

    let filtered = run(["test", "--filter", "Insufficient nvidia.com/gpu"]);
    assert_eq!(filtered.code, 0);
    let left_out = format!("\n1 passed, 0 failed, {} filtered out\n", passed - 1);
    assert!(filtered.stdout.ends_with(&left_out), "{}", filtered.stdout);

    // A filter nothing matches is a mistake, not a pass with nothing run.
    let none = run(["test", "--filter", "Insufficient nvidia.com/gpuu"]);
    assert_eq!(none.code, 2, "{}", none.stdout);
    assert!(none.stdout.is_empty(), "{}", none.stdout);
    assert_contains(
        &none.stderr,
        &format!("no test name contains `Insufficient nvidia.com/gpuu`, of {passed} tests"),
    );
}

#[test]
fn a_failing_rule_test_exits_4_and_shows_expected_and_actual() {
    let dir = TempDir::new().unwrap();
    let rules = format!(
        "{COFFEE_KB}\ntest \"an empty tank is blamed on limescale\" {{\n  input {{\"machine\": {{\"water\": {{\"level\": 3}}, \"display\": {{\"code\": \"E07\"}}}}}}\n  expect coffee.scale\n}}\n"
    );
    write(&dir, "machine.kb", &rules);
    let out = run([OsStr::new("test"), dir.path().as_os_str()]);
    assert_eq!(out.code, 4, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("test an empty tank is blamed on limescale ... FAILED")
    );
    assert!(out.stdout.contains("test empty tank ... ok"));
    assert!(
        out.stdout
            .contains("`coffee.scale` was not reached, expected confirmed"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("actual: symptoms [no-coffee], confirmed [coffee.empty-tank]"),
        "{}",
        out.stdout
    );
    let (line, column) = line_col(&rules, "test \"an empty tank");
    assert!(
        out.stdout.contains(&format!("machine.kb:{line}:{column}")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with("\n1 passed, 1 failed\n"),
        "{}",
        out.stdout
    );
}

/// A rule test's input file may be YAML, as kb eval's inputs may; broken,
/// it fails the test saying where.
#[test]
fn a_rule_test_reads_its_input_file_in_yaml() {
    let dir = TempDir::new().unwrap();
    write(
        &dir,
        "panel.yaml",
        "# as the panel reports it\nmachine:\n  water:\n    level: 3\n",
    );
    write(&dir, "broken.yaml", "machine:\n  water: {level: 3\n");
    let test = |input: &str| {
        format!("test \"{input}\" {{\n  input \"{input}\"\n  expect coffee.empty-tank\n}}\n")
    };
    write(
        &dir,
        "machine.kb",
        format!("{COFFEE_KB}\n{}{}", test("panel.yaml"), test("broken.yaml")),
    );
    let out = run([OsStr::new("test"), dir.path().as_os_str()]);
    assert_eq!(out.code, 4, "{}", out.stdout);
    assert_contains(&out.stdout, "test panel.yaml ... ok");
    assert_contains(&out.stdout, "test broken.yaml ... FAILED");
    assert_contains(
        &out.stdout,
        "`broken.yaml`:2:10: invalid YAML: unclosed bracket '{'",
    );
    assert!(
        out.stdout.ends_with("\n2 passed, 1 failed\n"),
        "{}",
        out.stdout
    );
}

// ------------------------------------------------------------------ explain and facts

#[test]
fn explain_a_cause_a_symptom_a_fact_and_a_code() {
    let out = run(["explain", "pending.insufficient-resources"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with(
        "cause pending.insufficient-resources: No node has enough free CPU, memory, GPU or ephemeral storage"
    ));
    assert!(
        out.stdout.contains("Fix 1: Free or add capacity"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("Fix 2: Ask for less"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("$ kubectl top pod -n {{ pod_namespace }}")
    );
    assert!(out.stdout.contains("Where it comes from: pod-pending"));

    let zh = run(["--lang", "zh", "explain", "pending.insufficient-resources"]);
    assert_eq!(zh.code, 0);
    assert!(zh.stdout.contains("没有节点"), "{}", zh.stdout);
    assert!(!zh.stdout.contains("Free or add capacity"), "{}", zh.stdout);

    let symptom = run(["explain", "pod-pending"]);
    assert_eq!(symptom.code, 0);
    assert!(symptom.stdout.starts_with("symptom pod-pending: "));
    assert!(
        symptom
            .stdout
            .contains("check What does the scheduler say?"),
        "{}",
        symptom.stdout
    );
    assert!(
        symptom
            .stdout
            .contains("check Has the scheduler looked at the pod at all?")
    );
    assert!(symptom.stdout.contains("=> pending.insufficient-resources"));
    assert!(symptom.stdout.contains("=> pending.scheduler-down"));

    let check = run(["explain", "scheduler-says"]);
    assert_eq!(check.code, 0);
    assert!(
        check
            .stdout
            .starts_with("check scheduler-says: What does the scheduler say?")
    );

    let fact = run(["explain", "scheduling_message"]);
    assert_eq!(fact.code, 0);
    assert!(
        fact.stdout.starts_with("fact scheduling_message: string"),
        "{}",
        fact.stdout
    );
    assert!(fact.stdout.contains("$ kubectl get events"));

    let code = run(["explain", "E0102"]);
    assert_eq!(code.code, 0);
    assert_eq!(
        code.stdout,
        "E0102: a branch leads to a cause that is not declared\n"
    );
}

#[test]
fn an_unknown_id_exits_2_and_suggests_a_close_one_those_holding_it_or_sharing_its_words() {
    let close = run(["explain", "pending.insufficent-resources"]);
    assert_eq!(close.code, 2);
    assert!(close.stdout.is_empty());
    assert!(
        close
            .stderr
            .contains("did you mean `pending.insufficient-resources`?"),
        "{}",
        close.stderr
    );
    let far = run(["explain", "nosuch"]);
    assert_eq!(far.code, 2);
    assert!(far.stderr.contains("`nosuch`"), "{}", far.stderr);
    assert!(!far.stderr.contains("did you mean"), "{}", far.stderr);
    // A word of an id, as one remembers it: the ids holding it.
    let word = run(["explain", "oom"]);
    assert_eq!(word.code, 2);
    assert!(
        word.stderr
            .contains("did you mean `crash.oom-limit`, `crash.oom-node`, `init.oom-limit` or `kernel_oom_kill`?"),
        "{}",
        word.stderr
    );
    // An id remembered in other words, too far from any to be a misspelling.
    let words = run([
        OsStr::new("eval"),
        OsStr::new("--why-not"),
        OsStr::new("crash-loop.liveness-probe-failing"),
        example("crash-loop-oomkilled.json").as_os_str(),
    ]);
    assert_eq!(words.code, 2);
    assert!(words.stdout.is_empty());
    assert!(
        words.stderr.contains(
            "is not a cause of this knowledge base; did you mean `crash.liveness-probe`?"
        ),
        "{}",
        words.stderr
    );
}

#[test]
fn facts_lists_what_the_rules_see() {
    let path = example("pending-insufficient-cpu.json");
    let out = run([OsStr::new("facts"), path.as_os_str(), OsStr::new("--json")]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let d = one_json(&out);
    assert_eq!(d["subject"], SUBJECT);
    let facts = array(&d["facts"]);
    let fact = |name: &str| {
        facts
            .iter()
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("no fact `{name}`"))
    };
    assert_eq!(fact("phase")["state"], "known");
    assert_eq!(fact("phase")["value"], "Pending");
    assert_eq!(fact("pod_name")["value"], POD);
    assert_eq!(fact("scheduling_message")["value"], CPU_MESSAGE);
    assert_eq!(fact("node_name")["state"], "absent");
    // Not in kubectl's JSON: unknown, not absent.
    assert_eq!(fact("previous_log")["state"], "unknown");

    let text = run([OsStr::new("facts"), path.as_os_str()]);
    assert_eq!(text.code, 0);
    assert!(
        text.stdout
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["phase", "\"Pending\""]),
        "{}",
        text.stdout
    );

    assert_eq!(array(&d["warnings"]).len(), 0);

    // What `kb eval` would warn of, `kb facts` says too, as it shows the
    // facts it concerns.
    let mut bundle = read_json(&path);
    bundle["pod"]["status"]["phase"] = json!(["Pending"]);
    bundle["pod"]["spec"] = json!("web");
    let out = run_stdin(["facts", "-", "--json"], compact(&bundle));
    let d = one_json(&out);
    let warnings = compact(&d["warnings"]);
    assert_contains(
        &warnings,
        "fact `phase` should be string, but the input has a list",
    );
    assert_contains(
        &warnings,
        r#"`pod.spec` is a string (\"web\"), where the rules read its fields"#,
    );
    let text = run_stdin(["facts", "-"], compact(&bundle));
    assert_contains(
        &text.stdout,
        "\n  warning: `pod.spec` is a string (\"web\")",
    );

    let bad = run_stdin(["facts", "-"], "[1]");
    assert_eq!(bad.code, 2);
}

// ------------------------------------------------------------------ --kb

const COFFEE_KB: &str = r#"# A coffee machine that makes no coffee.
input machine "The coffee machine's status panel"

fact water_level: number "Water left in the tank, in percent" {
  from machine.water.level
  gather "panel show water"
}

fact error_code: string "The code on the display" {
  from machine.display.code
  gather "panel show display --since {{ water_level }}"
}

symptom no-coffee "The machine makes no coffee" {
  when water_level < 10 or exists(error_code)
  check why "Why no coffee?" {
    if water_level < 10 => coffee.empty-tank
    if error_code == "E42" => coffee.scale
  }
}

cause coffee.empty-tank "The water tank is empty" {
  fix "Fill the tank" {
    step "Fill the tank with fresh water" run "panel fill --to {{ water_level }}"
  }
}

cause coffee.scale "Limescale blocks the boiler" {
  fix "Descale" {
    step "Run the descaling program" run "panel descale --code {{ error_code }}"
      risk "The machine is out of use for 30 minutes"
  }
}

test "empty tank" {
  input {"machine": {"water": {"level": 3}}}
  expect coffee.empty-tank
}
"#;

/// `kb --kb RULES eval INPUT --format json`, which must succeed, parsed.
#[track_caller]
fn eval_json_with(rules: &Path, input: &Path) -> Value {
    let out = run([
        OsStr::new("--kb"),
        rules.as_os_str(),
        OsStr::new("eval"),
        input.as_os_str(),
        OsStr::new("--format"),
        OsStr::new("json"),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    one_json(&out)
}

/// Checks that `kb check` and `kb test` of `rules` find [`COFFEE_KB`].
#[track_caller]
fn checks_and_tests_as_the_coffee_machine(rules: &Path) {
    let check = run([OsStr::new("check"), rules.as_os_str()]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    assert!(
        check
            .stdout
            .starts_with("ok: 1 symptom, 1 check, 2 causes, 2 facts, 1 test"),
        "{}",
        check.stdout
    );
    let test = run([OsStr::new("test"), rules.as_os_str()]);
    assert_eq!(test.code, 0, "{}", test.stdout);
}

#[test]
fn a_custom_knowledge_base_diagnoses_its_own_domain() {
    let dir = TempDir::new().unwrap();
    write(&dir, "rules/machine.kb", COFFEE_KB);
    write(
        &dir,
        "rules/kb.toml",
        "name = \"coffee\"\nversion = \"1.0.0\"\nlanguages = [\"en\"]\n",
    );
    let rules = dir.path().join("rules");

    checks_and_tests_as_the_coffee_machine(&rules);

    let input = write(
        &dir,
        "panel.json",
        r#"{"machine": {"water": {"level": 80}, "display": {"code": "E42"}}}"#,
    );
    let d = eval_json_with(&rules, &input);
    assert_eq!(d["symptoms"][0]["id"], "no-coffee");
    assert_eq!(confirmed(&d), ["coffee.scale"]);
    assert_eq!(status_of(&d, "coffee.empty-tank"), None);
    assert_eq!(
        commands(cause(&d, "coffee.scale")),
        ["panel descale --code E42"]
    );
    assert_eq!(
        d["causes"][0]["fixes"][0]["steps"][0]["risk"],
        "The machine is out of use for 30 minutes"
    );

    // A plain facts document: one cause confirmed, the other needs a fact.
    let out = finish(
        kb().args([
            OsStr::new("--kb"),
            rules.as_os_str(),
            OsStr::new("eval"),
            OsStr::new("--format"),
            OsStr::new("json"),
        ])
        .write_stdin(r#"{"water_level": 5}"#),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let d = one_json(&out);
    assert_eq!(confirmed(&d), ["coffee.empty-tank"]);
    assert_eq!(
        commands(cause(&d, "coffee.empty-tank")),
        ["panel fill --to 5"]
    );
    assert_eq!(status_of(&d, "coffee.scale"), Some("possible"));
    assert_eq!(d["missing"][0]["fact"], "error_code");
    assert_eq!(d["missing"][0]["gather"], "panel show display --since 5");

    // Nothing wrong with the machine.
    let out = finish(
        kb().args([OsStr::new("--kb"), rules.as_os_str(), OsStr::new("eval")])
            .write_stdin(r#"{"machine": {"water": {"level": 60}}}"#),
    );
    assert_eq!(out.code, 1, "{}", out.stdout);

    // The bundled Kubernetes knowledge base is not mixed in.
    let out = run([
        OsStr::new("--kb"),
        rules.as_os_str(),
        OsStr::new("explain"),
        OsStr::new("pod-pending"),
    ]);
    assert_eq!(out.code, 2);
}

#[cfg(unix)]
#[test]
fn rule_files_and_folders_linked_into_a_knowledge_base_are_read() {
    use std::os::unix::fs::symlink;
    let dir = TempDir::new().unwrap();
    write(&dir, "shared/coffee/machine.kb", COFFEE_KB);
    let input = write(
        &dir,
        "panel.json",
        r#"{"machine": {"water": {"level": 80}, "display": {"code": "E42"}}}"#,
    );
    fs::create_dir_all(dir.path().join("file-linked")).unwrap();
    symlink(
        "../shared/coffee/machine.kb",
        dir.path().join("file-linked/machine.kb"),
    )
    .unwrap();
    fs::create_dir_all(dir.path().join("folder-linked")).unwrap();
    symlink("../shared/coffee", dir.path().join("folder-linked/coffee")).unwrap();

    for rules in ["file-linked", "folder-linked"] {
        let rules = dir.path().join(rules);
        checks_and_tests_as_the_coffee_machine(&rules);
        assert_eq!(confirmed(&eval_json_with(&rules, &input)), ["coffee.scale"]);
    }

    // A link to nothing (a build's `result`, a tool's cache) is passed
    // over; one named as a rule file is a rule file that cannot be read.
    symlink(
        "/nonexistent/build",
        dir.path().join("folder-linked/result"),
    )
    .unwrap();
    let rules = dir.path().join("folder-linked");
    checks_and_tests_as_the_coffee_machine(&rules);
    let fmt = run([OsStr::new("fmt"), OsStr::new("--check"), rules.as_os_str()]);
    assert_eq!(fmt.code, 0, "{}", fmt.stderr);
    symlink(
        "/nonexistent/disk.kb",
        dir.path().join("folder-linked/disk.kb"),
    )
    .unwrap();
    let out = run([OsStr::new("check"), rules.as_os_str()]);
    assert_eq!(out.code, 3, "{out:?}");
    assert_contains(&out.stderr, "disk.kb: No such file or directory");
    fs::remove_file(dir.path().join("folder-linked/disk.kb")).unwrap();

    // A link to a folder above would be walked for ever.
    let looped = dir.path().join("shared/coffee");
    symlink("..", looped.join("up")).unwrap();
    let out = run([OsStr::new("check"), looped.as_os_str()]);
    assert_eq!(out.code, 3, "{out:?}");
    assert_contains(&out.stderr, "File system loop found");
    assert_contains(&out.stderr, "up points to an ancestor");
}

#[test]
fn deny_warnings_makes_a_warning_fail_the_check() {
    let dir = TempDir::new().unwrap();
    let rules = write(
        &dir,
        "coffee.kb",
        format!("{COFFEE_KB}\nfact unused: string \"Never read\" {{ from machine.serial }}\n"),
    );
    let plain = run([OsStr::new("check"), rules.as_os_str()]);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    assert!(plain.stdout.contains(", 1 warning"), "{}", plain.stdout);
    assert_contains(&plain.stderr, "fact `unused` is never used");

    let denied = run([
        OsStr::new("check"),
        rules.as_os_str(),
        OsStr::new("--deny-warnings"),
    ]);
    assert_eq!(denied.code, 3, "{}", denied.stderr);
    assert!(denied.stdout.is_empty(), "{}", denied.stdout);
    assert_contains(&denied.stderr, "fact `unused` is never used");
    assert_contains(
        &denied.stderr,
        "the knowledge base has 1 warning, made errors by --deny-warnings",
    );
    let json = run([
        OsStr::new("check"),
        rules.as_os_str(),
        OsStr::new("--deny-warnings"),
        OsStr::new("--format"),
        OsStr::new("json"),
    ]);
    assert_eq!(json.code, 3, "{}", json.stderr);
    assert_eq!(one_json(&json)[0]["severity"], "warning");

    // Without warnings, it changes nothing.
    let clean = write(&dir, "clean.kb", COFFEE_KB);
    let out = run([
        OsStr::new("check"),
        clean.as_os_str(),
        OsStr::new("--deny-warnings"),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn one_rule_file_is_a_knowledge_base_of_its_own() {
    let dir = TempDir::new().unwrap();
    let rules = write(&dir, "coffee.kb", COFFEE_KB);
    // A manifest beside it is not read: the file stands alone.
    write(
        &dir,
        "kb.toml",
        "name = \"coffee\"\nextends = \"bundled\"\n",
    );
    checks_and_tests_as_the_coffee_machine(&rules);
    let out = finish(
        kb().args([
            OsStr::new("--kb"),
            rules.as_os_str(),
            OsStr::new("eval"),
            OsStr::new("--format"),
            OsStr::new("json"),
        ])
        .write_stdin(r#"{"machine": {"water": {"level": 3}}}"#),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(confirmed(&one_json(&out)), ["coffee.empty-tank"]);

    // Its problems are located in it.
    let broken = write(
        &dir,
        "broken.kb",
        COFFEE_KB.replace("=> coffee.scale", "=> coffee.scal"),
    );
    let out = run([OsStr::new("check"), broken.as_os_str()]);
    assert_eq!(out.code, 3, "{out:?}");
    assert_contains(&out.stderr, "broken.kb:");
    assert_contains(&out.stderr, "coffee.scal");
}

#[test]
fn a_folder_without_rules_or_with_a_bad_manifest_exits_3() {
    let empty = TempDir::new().unwrap();
    write(&empty, "README.md", "no rules here\n");
    let out = run([
        OsStr::new("--kb"),
        empty.path().as_os_str(),
        OsStr::new("eval"),
        example("pending-insufficient-cpu.json").as_os_str(),
    ]);
    assert_eq!(out.code, 3, "{out:?}");
    assert!(out.stderr.contains("no `.kb` file"), "{}", out.stderr);
    assert!(out.stdout.is_empty());
    assert_eq!(run([OsStr::new("check"), empty.path().as_os_str()]).code, 3);

    let not_a_dir = run([
        OsStr::new("--kb"),
        example("pending-insufficient-cpu.json").as_os_str(),
        OsStr::new("explain"),
        OsStr::new("pod-pending"),
    ]);
    assert_eq!(not_a_dir.code, 3);
    assert!(
        not_a_dir
            .stderr
            .contains("is neither a folder of rules nor a `.kb` file"),
        "{}",
        not_a_dir.stderr
    );

    let manifest = TempDir::new().unwrap();
    write(&manifest, "machine.kb", COFFEE_KB);
    write(
        &manifest,
        "kb.toml",
        "name = \"coffee\"\nversoin = \"1.0.0\"\n",
    );
    for args in [
        vec![
            OsStr::new("--kb"),
            manifest.path().as_os_str(),
            OsStr::new("eval"),
            OsStr::new("-"),
        ],
        vec![OsStr::new("check"), manifest.path().as_os_str()],
        vec![OsStr::new("test"), manifest.path().as_os_str()],
    ] {
        let out = run_stdin(args, r#"{"water_level": 5}"#);
        assert_eq!(out.code, 3, "{out:?}");
        assert!(out.stderr.contains("kb.toml"), "{}", out.stderr);
        assert!(out.stderr.contains("versoin"), "{}", out.stderr);
    }
}

// ------------------------------------------------------------------ help

#[test]
fn help_names_every_subcommand_and_the_exit_codes() {
    let out = run(["--help"]);
    assert_eq!(out.code, 0);
    for subcommand in ["eval", "check", "test", "facts", "explain"] {
        assert!(
            out.stdout
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{subcommand} "))),
            "`{subcommand}` missing:\n{}",
            out.stdout
        );
    }
    let help = squeeze(&out.stdout);
    assert!(
        help.contains(
            "Exit codes: 0 success, 1 no symptom matched, 2 bad input or usage, or output \
             that could not be written, 3 the knowledge base has errors, 4 a rule test failed."
        ),
        "{help}"
    );

    let eval = run(["eval", "--help"]);
    assert_eq!(eval.code, 0);
    let help = squeeze(&eval.stdout);
    assert!(help.contains("--format <FORMAT>"), "{help}");
    for format in ["text", "json", "markdown"] {
        assert!(help.contains(&format!("{format}:")), "{format}: {help}");
    }
    assert!(help.contains("reads stdin"), "{help}");

    let version = run(["--version"]);
    assert_eq!(version.code, 0);
    assert!(version.stdout.starts_with("kb "), "{}", version.stdout);
}

#[test]
fn each_subcommand_describes_itself_as_the_list_of_subcommands_does() {
    let list = run(["--help"]).stdout;
    let subcommands = [
        "eval", "check", "test", "facts", "explain", "docs", "fmt", "graph", "init",
    ];
    for subcommand in subcommands {
        let listed = list
            .lines()
            .find_map(|l| l.trim_start().strip_prefix(&format!("{subcommand} ")))
            .map(str::trim)
            .unwrap_or_else(|| panic!("`{subcommand}` missing:\n{list}"));
        for help in ["-h", "--help"] {
            let out = run([subcommand, help]);
            assert_eq!(out.code, 0, "{subcommand} {help}");
            let first = out.stdout.lines().next().unwrap_or_default();
            assert_eq!(first.trim_end_matches('.'), listed, "{subcommand} {help}");
            assert!(out.stdout.contains("Usage: kb "), "{subcommand} {help}");
        }
    }
}
