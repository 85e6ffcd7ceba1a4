#![expect(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "tests"
)]

use kb_dsl::{Code, Problem};
use serde_json::{Value as Json, json};

use crate::diagnosis::{Diagnosis, FactState, Status};
use crate::{KnowledgeBase, Lang, compile};

const BASE: &str = r#"
input pod "The Pod"
input events "Events"
fact pod_name: string "Name" { from pod.metadata.name }
fact phase: string "Phase" {
  from pod.status.phase
  gather "kubectl get pod {{ pod_name }}"
}
fact message: string "What the scheduler said" {
  from last(events[.reason == "FailedScheduling"]).message
  gather "kubectl get events --field-selector involvedObject.name={{ pod_name }}"
}
fact full: bool "Whether the cluster is full" { from message contains "Insufficient" }
fact restarts: number "Restarts" { from pod.status.containerStatuses[0].restartCount }
"#;

fn kb(rules: &str) -> KnowledgeBase {
    let source = format!("{BASE}\n{rules}");
    let parsed = kb_dsl::parse(&source, "test.kb")
        .map_err(|e| e.problems)
        .unwrap();
    match compile(&parsed) {
        Ok(kb) => kb,
        Err(problems) => panic!(
            "{:#?}",
            problems.iter().map(|p| &p.message).collect::<Vec<_>>()
        ),
    }
}

fn problems(rules: &str) -> Vec<Problem> {
    let source = format!("{BASE}\n{rules}");
    let parsed = kb_dsl::parse(&source, "test.kb")
        .map_err(|e| e.problems)
        .unwrap();
    compile(&parsed).err().unwrap()
}

fn eval(kb: &KnowledgeBase, input: &Json) -> Diagnosis {
    kb.evaluate(&kb.bind(&input.clone().into()), Lang::En)
}

fn status(diagnosis: &Diagnosis, id: &str) -> Option<Status> {
    diagnosis
        .causes
        .iter()
        .find(|c| c.id == id)
        .map(|c| c.status)
}

const PENDING: &str = r#"
symptom pending "Pending" {
  when phase == "Pending"
  check "What does the scheduler say?" {
    if full => c.full
    if message contains "taint" => c.taint
  }
  check "Anything else?" {
    if restarts > 3 => c.restarts
  }
}
cause c.full "Full" { fix "Add nodes" { step "Scale" run "kubectl describe pod {{ pod_name }}" } }
cause c.taint "Taint" { fix "Untaint" { step "Untaint" } }
cause c.restarts "Restarts" { fix "Look" { step "Look" } }
"#;

fn pod(phase: &str) -> Json {
    json!({"metadata": {"name": "web-1"}, "status": {"phase": phase}})
}

#[test]
fn a_true_path_confirms_and_false_branches_lead_nowhere() {
    let kb = kb(PENDING);
    let d = eval(
        &kb,
        &json!({"pod": pod("Pending"), "events": [
            {"reason": "FailedScheduling", "message": "0/3 nodes are available: 3 Insufficient cpu."}
        ]}),
    );
    assert_eq!(status(&d, "c.full"), Some(Status::Confirmed));
    assert_eq!(status(&d, "c.taint"), None);
    assert_eq!(
        status(&d, "c.restarts"),
        None,
        "the next check is reached only when no branch holds"
    );
    let evidence = &d.causes[0].evidence;
    assert_eq!(evidence[1].condition, "full");
    assert_eq!(evidence[1].facts[0].value, Some(json!(true)));
    assert_eq!(
        d.causes[0].fixes[0].steps[0].command.as_deref(),
        Some("kubectl describe pod web-1")
    );
}

#[test]
fn a_missing_input_makes_causes_possible_and_asks_for_the_root_fact() {
    let kb = kb(PENDING);
    let d = eval(&kb, &json!({"pod": pod("Pending")}));
    assert_eq!(status(&d, "c.full"), Some(Status::Possible));
    assert_eq!(status(&d, "c.taint"), Some(Status::Possible));
    assert_eq!(d.confirmed().count(), 0);
    // `full` is derived from `message`: the fact to gather is `message`.
    assert_eq!(d.causes[0].needs, ["message"]);
    assert_eq!(d.missing[0].fact, "message");
    assert_eq!(d.missing[0].decides, ["c.full", "c.taint"]);
    assert_eq!(
        d.missing[0].gather.as_deref(),
        Some("kubectl get events --field-selector involvedObject.name=web-1")
    );
}

#[test]
fn an_absent_field_in_a_given_input_is_known_not_unknown() {
    let kb = kb(PENDING);
    let d = eval(&kb, &json!({"pod": pod("Pending"), "events": []}));
    assert_eq!(status(&d, "c.full"), None);
    assert_eq!(status(&d, "c.taint"), None);
    // Both branches are false, so the next check is reached for sure; restarts is absent.
    assert_eq!(status(&d, "c.restarts"), None);
    assert!(d.missing.is_empty());
}

#[test]
fn the_next_check_is_possible_when_the_branches_before_it_are_unknown() {
    let kb = kb(PENDING);
    let mut p = pod("Pending");
    p["status"]["containerStatuses"] = json!([{"restartCount": 5}]);
    let d = eval(&kb, &json!({"pod": p}));
    assert_eq!(status(&d, "c.restarts"), Some(Status::Possible));
    let otherwise = &d
        .causes
        .iter()
        .find(|c| c.id == "c.restarts")
        .unwrap()
        .evidence[1];
    assert_eq!(otherwise.condition, "otherwise");
}

#[test]
fn a_check_reached_for_sure_where_no_branch_holds_is_a_dead_end() {
    let pending = kb(PENDING);
    // Every branch false, the first check passing on to the second, where
    // the rules end: only the second is a dead end, with what it read.
    let d = eval(&pending, &json!({"pod": pod("Pending"), "events": []}));
    let [end] = d.dead_ends.as_slice() else {
        panic!("{:?}", d.dead_ends)
    };
    assert_eq!(end.check, "Anything else?");
    assert_eq!(end.symptom, "pending");
    assert_eq!(end.facts.len(), 1);
    assert_eq!(end.facts[0].name, "restarts");
    assert_eq!(end.facts[0].state, FactState::Absent);
    assert_eq!(end.gather, None);
    // Reached only possibly (the events are not given): not a dead end, as
    // what is unknown may yet lead to a cause.
    let d = eval(&pending, &json!({"pod": pod("Pending")}));
    assert!(d.dead_ends.is_empty(), "{:?}", d.dead_ends);
    // A branch that holds leads somewhere.
    let d = eval(
        &pending,
        &json!({"pod": pod("Pending"), "events": [
            {"reason": "FailedScheduling", "message": "0/3 nodes are available: 3 Insufficient cpu."}
        ]}),
    );
    assert!(d.dead_ends.is_empty(), "{:?}", d.dead_ends);
    // An `else` always leads somewhere.
    let with_else = kb(&PENDING.replace(
        "if restarts > 3 => c.restarts",
        "if restarts > 3 => c.restarts\n    else => c.full",
    ));
    let d = eval(&with_else, &json!({"pod": pod("Pending"), "events": []}));
    assert!(d.dead_ends.is_empty(), "{:?}", d.dead_ends);
    assert_eq!(status(&d, "c.full"), Some(Status::Confirmed));
}

#[test]
fn symptoms_that_do_not_match_report_nothing() {
    let kb = kb(PENDING);
    let d = eval(&kb, &json!({"pod": pod("Running"), "events": []}));
    assert!(d.symptoms.is_empty());
    assert!(d.causes.is_empty());
}

#[test]
fn confirmed_causes_come_first_then_possible_ones_by_how_close_they_are() {
    let kb = kb(r#"
symptom s "S" {
  when phase == "Pending"
  check "One" {
    if message contains "x" => check "Two" { if message contains "z" => c.far }
    if message contains "y" => c.near
    if phase == "Pending" => c.sure
  }
}
cause c.far "Far" { fix "f" { step "s" } }
cause c.near "Near" { fix "f" { step "s" } }
cause c.sure "Sure" { fix "f" { step "s" } }
"#);
    let d = eval(&kb, &json!({"pod": pod("Pending")}));
    let order: Vec<(&str, Status)> = d.causes.iter().map(|c| (c.id.as_str(), c.status)).collect();
    assert_eq!(
        order,
        [
            ("c.sure", Status::Confirmed),
            ("c.near", Status::Possible),
            ("c.far", Status::Possible)
        ]
    );
}

/// Among possible causes as far from confirmed, the one more conditions hold
/// for comes first: its evidence is the more specific.
#[test]
fn possible_causes_with_more_evidence_held_come_first() {
    let kb = kb(r#"
symptom s "S" {
  when phase == "Pending"
  check "One" {
    if message contains "x" => c.early
    if phase == "Pending" => check "Two" { if message contains "y" => c.deeper }
  }
}
cause c.early "Early" { fix "f" { step "s" } }
cause c.deeper "Deeper" { fix "f" { step "s" } }
"#);
    let d = eval(&kb, &json!({"pod": pod("Pending")}));
    let order: Vec<(&str, Status)> = d.causes.iter().map(|c| (c.id.as_str(), c.status)).collect();
    assert_eq!(
        order,
        [
            ("c.deeper", Status::Possible),
            ("c.early", Status::Possible)
        ]
    );
}

/// A cause several branches lead to ranks where the branch that reaches it
/// stands, not where its first branch is written: one ruled out early and
/// possible late comes after the causes written before that late branch.
#[test]
fn a_cause_ranks_where_the_branch_reaching_it_stands() {
    let kb = kb(r#"
symptom s "S" {
  when phase == "Pending"
  check "One" {
    if phase == "Running" => c.late
    if message contains "y" => c.middle
    if message contains "x" => c.late
  }
}
cause c.middle "Middle" { fix "f" { step "s" } }
cause c.late "Late" { fix "f" { step "s" } }
"#);
    let d = eval(&kb, &json!({"pod": pod("Pending")}));
    let order: Vec<&str> = d.causes.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(order, ["c.middle", "c.late"]);
}

#[test]
fn else_holds_when_no_branch_does_and_is_unknown_when_one_might() {
    let kb = kb(r#"
symptom s "S" {
  when exists(phase)
  check "Which?" {
    if message == "a" => c.a
    else => c.other
  }
}
cause c.a "A" { fix "f" { step "s" } }
cause c.other "Other" { fix "f" { step "s" } }
"#);
    let known = eval(
        &kb,
        &json!({"pod": pod("Pending"), "events": [{"reason": "FailedScheduling", "message": "b"}]}),
    );
    assert_eq!(status(&known, "c.other"), Some(Status::Confirmed));
    assert_eq!(status(&known, "c.a"), None);
    let unknown = eval(&kb, &json!({"pod": pod("Pending")}));
    assert_eq!(status(&unknown, "c.other"), Some(Status::Possible));
}

#[test]
fn three_valued_logic_in_conditions() {
    let kb = kb(r#"
symptom s "S" {
  when true
  check "Logic" {
    if message == "m" or phase == "Pending" => c.or_true
    if message == "m" and phase == "Running" => c.and_false
    if not exists(message) => c.not_unknown
    if exists(restarts) => c.absent
  }
}
cause c.or_true "or" { fix "f" { step "s" } }
cause c.and_false "and" { fix "f" { step "s" } }
cause c.not_unknown "not" { fix "f" { step "s" } }
cause c.absent "absent" { fix "f" { step "s" } }
"#);
    let d = eval(&kb, &json!({"pod": pod("Pending")}));
    assert_eq!(
        status(&d, "c.or_true"),
        Some(Status::Confirmed),
        "unknown or true is true"
    );
    assert_eq!(
        status(&d, "c.and_false"),
        None,
        "unknown and false is false"
    );
    assert_eq!(
        status(&d, "c.not_unknown"),
        Some(Status::Possible),
        "not unknown is unknown"
    );
    assert_eq!(
        status(&d, "c.absent"),
        None,
        "an absent field does not exist, for sure"
    );
}

#[test]
fn list_functions_filters_and_indexes() {
    let kb = kb(r#"
fact reasons: list<string> "Reasons" { from events.reason }
fact failures: number "Failures" { from count(events[.type == "Warning"]) }
fact last_reason: string "Last" { from events[-1].reason }
fact all_warn: bool "All warnings" { from all(events, .type == "Warning") }
fact lowered: string "Lower" { from lower(first(events).message) }
symptom s "S" {
  when true
  check "Lists" {
    if "BackOff" in reasons and failures == 2 => c.count
    if last_reason == "Started" and not all_warn => c.index
    if any(reasons, . starts_with "Back") and len(reasons) == 3 => c.any
    if lowered contains "insufficient" => c.lower
    if "Nope" not in reasons => c.not_in
  }
}
cause c.count "count" { fix "f" { step "s" } }
cause c.index "index" { fix "f" { step "s" } }
cause c.any "any" { fix "f" { step "s" } }
cause c.lower "lower" { fix "f" { step "s" } }
cause c.not_in "not in" { fix "f" { step "s" } }
"#);
    let d = eval(
        &kb,
        &json!({"pod": pod("Pending"), "events": [
            {"reason": "FailedScheduling", "type": "Warning", "message": "0/1 nodes: 1 INSUFFICIENT cpu"},
            {"reason": "BackOff", "type": "Warning"},
            {"reason": "Started", "type": "Normal"},
        ]}),
    );
    let confirmed: Vec<&str> = d.confirmed().map(|c| c.id.as_str()).collect();
    assert_eq!(
        confirmed,
        ["c.count", "c.index", "c.any", "c.lower", "c.not_in"]
    );
}

#[test]
fn facts_compiled_beside_the_conditions_keep_their_texts_lists_and_patterns() {
    // The facts' expressions are compiled apart and appended after the
    // conditions', each kind of run they refer to moved with them; loading
    // the bytes checks that the arena holds together.
    let kb = kb(r#"
fact app: string "App" { from coalesce(pod.metadata.labels["app"], "none") }
fact nodes: string "Nodes" { from capture(message, r"^(\d+)/\d+ nodes") }
fact reasons: list<string> "Reasons" { from concat(["Seen"], events.reason) }
fact status: object "Status" { from pod.status }
symptom s "S" {
  when message matches r"(?i)insufficient" and status.phase in ["Pending", "Unknown"]
  check "Which?" {
    if app == "web" and nodes == "0" and "BackOff" in reasons and "Seen" in reasons => c.all
    else => c.other
  }
}
cause c.all "all" { fix "f" { step "s" } }
cause c.other "other" { fix "f" { step "s" } }
"#);
    let input = json!({
        "pod": {"metadata": {"labels": {"app": "web"}}, "status": {"phase": "Pending"}},
        "events": [
            {"reason": "FailedScheduling", "message": "0/3 nodes are available: 3 Insufficient cpu."},
            {"reason": "BackOff"},
        ],
    });
    let loaded = KnowledgeBase::from_bytes(kb.to_bytes().unwrap(), []).unwrap();
    for kb in [kb, loaded] {
        let confirmed: Vec<String> = eval(&kb, &input)
            .confirmed()
            .map(|c| c.id.clone())
            .collect();
        assert_eq!(confirmed, ["c.all"]);
    }
}

#[test]
fn first_and_last_of_a_filtered_list_are_the_first_and_last_it_keeps() {
    // Evaluated without making the list: the same as indexing the list.
    let kb = kb(r#"
fact first_warning: string "First" { from first(events[.type == "Warning"]).reason }
fact last_warning: string "Last" { from last(events[.type == "Warning"]).reason }
fact first_indexed: string "First, indexed" { from events[.type == "Warning"][0].reason }
fact last_indexed: string "Last, indexed" { from events[.type == "Warning"][-1].reason }
symptom s "S" {
  when true
  check "Ends" {
    if not exists(first_warning) and not exists(last_warning) => c.none
    if first_warning == "FailedScheduling" and last_warning == "BackOff"
      and first_warning == first_indexed and last_warning == last_indexed => c.same
  }
}
cause c.none "none kept" { fix "f" { step "s" } }
cause c.same "same" { fix "f" { step "s" } }
"#);
    let d = eval(
        &kb,
        &json!({"pod": pod("Pending"), "events": [
            {"reason": "Scheduled", "type": "Normal"},
            {"reason": "FailedScheduling", "type": "Warning"},
            {"reason": "Pulled", "type": "Normal"},
            {"reason": "BackOff", "type": "Warning"},
            {"reason": "Started", "type": "Normal"},
        ]}),
    );
    assert_eq!(status(&d, "c.same"), Some(Status::Confirmed));
    for events in [json!([]), json!([{"reason": "Started", "type": "Normal"}])] {
        let d = eval(&kb, &json!({"pod": pod("Pending"), "events": events}));
        assert_eq!(status(&d, "c.none"), Some(Status::Confirmed), "{events}");
    }
}

#[test]
fn a_list_filtered_by_a_condition_on_something_else_is_made_only_when_it_holds() {
    // `[x][p]`, "x when p": `restarts` is read only when `p` holds, so its
    // wrong type is warned about only then; an unknown `p` keeps nothing.
    let kb = kb(r#"
fact when_pending: number "Restarts when pending" { from first([restarts][phase == "Pending"]) }
fact kept: number "Kept" { from len([restarts, 1][phase == "Pending"]) }
symptom s "S" {
  when true
  check "Pending?" {
    if when_pending == 7 and kept == 2 => c.pending
    if not exists(when_pending) and kept == 0 => c.not_pending
  }
}
cause c.pending "pending" { fix "f" { step "s" } }
cause c.not_pending "not pending" { fix "f" { step "s" } }
"#);
    let with = |phase: Json, restarts: Json| {
        eval(
            &kb,
            &json!({"pod": {"status": {"phase": phase, "containerStatuses": [{"restartCount": restarts}]}}}),
        )
    };
    let pending = with(json!("Pending"), json!(7));
    assert_eq!(status(&pending, "c.pending"), Some(Status::Confirmed));
    let running = with(json!("Running"), json!("seven"));
    assert_eq!(status(&running, "c.not_pending"), Some(Status::Confirmed));
    assert!(running.warnings.is_empty(), "{:?}", running.warnings);
    let wrong = with(json!("Pending"), json!("seven"));
    assert!(
        wrong
            .warnings
            .iter()
            .any(|w| w.contains("`restarts` should be number")),
        "{:?}",
        wrong.warnings
    );
    // As a filter keeps only what holds.
    let unknown = eval(&kb, &json!({"events": []}));
    assert_eq!(status(&unknown, "c.not_pending"), Some(Status::Confirmed));
}

#[test]
fn len_counts_an_objects_fields() {
    let kb = kb(r#"
fact selector: object "The node selector" { from pod.spec.nodeSelector }
symptom s "S" {
  when true
  check "How many labels?" {
    if len(selector) == 2 => c.two
    if len(selector) == 0 => c.none
  }
}
cause c.two "two" { fix "f" { step "s" } }
cause c.none "none" { fix "f" { step "s" } }
"#);
    let with = |spec: Json| eval(&kb, &json!({"pod": {"spec": spec}}));
    let two = with(json!({"nodeSelector": {"kubernetes.io/os": "linux", "disk": "ssd"}}));
    assert_eq!(status(&two, "c.two"), Some(Status::Confirmed));
    let none = with(json!({}));
    assert_eq!(status(&none, "c.none"), Some(Status::Confirmed));
}

#[test]
fn given_facts_override_derived_ones_and_wrong_types_are_unknown() {
    let kb = kb(PENDING);
    let d = eval(
        &kb,
        &json!({"pod": pod("Running"), "facts": {"phase": "Pending", "message": "Insufficient memory"}}),
    );
    assert_eq!(status(&d, "c.full"), Some(Status::Confirmed));
    let plain = eval(&kb, &json!({"phase": "Pending", "message": "had taint"}));
    assert_eq!(status(&plain, "c.taint"), Some(Status::Confirmed));

    let wrong = eval(&kb, &json!({"pod": {"status": {"phase": 3}}}));
    assert!(wrong.symptoms.is_empty() || wrong.confirmed().count() == 0);
    assert!(
        wrong
            .warnings
            .iter()
            .any(|w| w.contains("`phase` should be string")),
        "{:?}",
        wrong.warnings
    );
}

#[test]
fn values_in_another_shape_than_the_rules_read_are_warned_of_by_their_place() {
    let kb = kb(PENDING);
    let warnings = |input: Json| eval(&kb, &input).warnings;
    let fine = json!({"pod": pod("Pending"), "events": [{"reason": "FailedScheduling"}]});
    assert!(warnings(fine).is_empty());
    let null = json!({"pod": {"metadata": null, "status": null}, "events": null});
    assert!(warnings(null).is_empty());

    // A string, its place and value named, with the fields read of it (the
    // symptom does not hold, and nothing else is read).
    assert_eq!(
        warnings(json!({"pod": {"metadata": {"name": "web-1"}, "status": "Pending"}})),
        ["`pod.status` is a string (\"Pending\"), where the rules read its field `phase`"]
    );
    // A number in an object, though no longer JSON once read (the pod's name,
    // read for the command of the cause confirmed), and a list element read
    // in a filter.
    let d = eval(
        &kb,
        &json!({"pod": {"metadata": 5, "status": {"phase": "Pending"}}, "events": [
            {"reason": "FailedScheduling", "message": "0/3 nodes are available: 3 Insufficient cpu."},
            "FailedScheduling"
        ]}),
    );
    assert_eq!(status(&d, "c.full"), Some(Status::Confirmed));
    assert_eq!(
        d.warnings,
        [
            "`events[1]` is a string (\"FailedScheduling\"), where the rules read its field `reason`",
            "`pod.metadata` is a number (5), where the rules read its field `name`",
        ]
    );
    // Elements read of what is not a list; a long string shown in part.
    let long = "Insufficient cpu. ".repeat(10);
    assert_eq!(
        warnings(
            json!({"pod": {"status": {"phase": "Pending", "containerStatuses": {"restartCount": 9}}}, "events": long})
        ),
        [
            "`events` is a string (\"Insufficient cpu. Insufficient cpu. Insu…\"), where the rules read a list",
            "`pod.status.containerStatuses` is an object, where the rules read a list",
        ]
    );
    // Many: the first told, the rest counted (`last` reads from the end).
    let events: Vec<Json> = (0..10).map(|i| json!(format!("event {i}"))).collect();
    let many = warnings(json!({"pod": pod("Pending"), "events": events}));
    assert_eq!(many.len(), 4, "{many:?}");
    assert_eq!(
        many[0],
        "`events[9]` is a string (\"event 9\"), where the rules read its field `reason`"
    );
    assert_eq!(
        many[3],
        "and in 7 more places, the input is not shaped as the rules read it"
    );
    // Numbers and bools read as list elements have no place once read; what
    // they are is said once.
    let events: Vec<Json> = (0..10).map(|i| json!(i)).collect();
    assert_eq!(
        warnings(json!({"pod": pod("Pending"), "events": events})),
        ["the input has a number (9) where the rules read its field `reason`"]
    );
}

#[test]
fn unknown_keys_of_the_input_are_reported_not_dropped() {
    let kb = kb(PENDING);
    let d = eval(
        &kb,
        &json!({"podd": pod("Pending"), "facts": {"phaze": "x"}}),
    );
    assert!(
        d.warnings
            .iter()
            .any(|w| w.contains("`podd`") && w.contains("did you mean `pod`")),
        "{:?}",
        d.warnings
    );
    assert!(
        d.warnings.iter().any(|w| w.contains("`facts.phaze`")),
        "{:?}",
        d.warnings
    );
}

#[test]
fn unknown_keys_beyond_twenty_are_counted_and_an_enormous_one_is_shortened() {
    let kb = kb(PENDING);
    let mut document = serde_json::Map::new();
    for i in 0..25 {
        document.insert(format!("extra-{i:02}"), json!(i));
    }
    document.insert("a".repeat(5_000), json!(1));
    document.insert("facts".into(), json!({"phaze": "x", "more": 1}));
    document.insert("phase".into(), json!("Pending"));
    // Keys are read in order: the long one, `extra-00` to `extra-24`, `facts`.
    let warnings = eval(&kb, &Json::Object(document)).warnings;
    assert_eq!(warnings.len(), 21, "{warnings:#?}");
    assert_eq!(
        warnings[0],
        format!(
            "ignored `{}…` (a key of 5000 characters): not an input or fact of this knowledge base",
            "a".repeat(100)
        )
    );
    assert_eq!(
        warnings[1],
        "ignored `extra-00`: not an input or fact of this knowledge base"
    );
    assert_eq!(
        warnings[20],
        "ignored 8 more keys that are not inputs or facts of this knowledge base"
    );
}

#[test]
fn fact_values_in_commands_are_quoted_data_never_templates() {
    let kb = kb(PENDING);
    let mut p = pod("Pending");
    p["metadata"]["name"] = json!("x{{ 7*7 }}; rm -rf /");
    let d = eval(
        &kb,
        &json!({"pod": p, "events": [{"reason": "FailedScheduling", "message": "Insufficient cpu"}]}),
    );
    let command = d.causes[0].fixes[0].steps[0].command.clone().unwrap();
    assert_eq!(command, "kubectl describe pod 'x{{ 7*7 }}; rm -rf /'");
}

#[test]
fn an_unknown_fact_in_a_command_becomes_a_placeholder() {
    let kb = kb(PENDING);
    let d = eval(&kb, &json!({"phase": "Pending"}));
    let command = d.causes[0].fixes[0].steps[0].command.clone().unwrap();
    assert_eq!(command, "kubectl describe pod <pod_name>");
}

#[test]
fn facts_of_an_input_have_states() {
    let kb = kb(PENDING);
    let input = json!({"pod": pod("Pending")});
    let facts = kb.facts_of(&kb.bind(&input.into())).facts;
    let state = |name: &str| facts.iter().find(|f| f.name == name).unwrap().state;
    assert_eq!(state("phase"), FactState::Known);
    assert_eq!(state("restarts"), FactState::Absent);
    assert_eq!(state("message"), FactState::Unknown);
}

#[test]
fn a_value_in_a_list_written_out_is_what_it_is_in_the_list_made() {
    // Written out after `in`, a list is not made: its items are compared as
    // they come. The answer must be the one the list made would give.
    let kb = kb(r#"
fact items: list<string> "Items" { from ["Running", message] }
fact written: bool "In the list written out" { from phase in ["Running", message] }
fact made: bool "In the list made" { from phase in items }
"#);
    let failed = json!([{"reason": "FailedScheduling", "message": "Pending"}]);
    for (input, expected) in [
        (json!({"pod": pod("Running")}), Some(true)),
        (json!({"pod": pod("Pending")}), None),
        (json!({"pod": pod("Pending"), "events": []}), Some(false)),
        (json!({"pod": pod("Pending"), "events": failed}), Some(true)),
        (json!({"events": []}), None),
    ] {
        let facts = kb.facts_of(&kb.bind(&input.clone().into())).facts;
        let seen = |name: &str| {
            let fact = facts.iter().find(|f| f.name == name).unwrap();
            (fact.state, fact.value.as_ref().and_then(Json::as_bool))
        };
        let state = match expected {
            Some(_) => FactState::Known,
            None => FactState::Unknown,
        };
        assert_eq!(seen("written"), (state, expected), "{input}");
        assert_eq!(seen("made"), seen("written"), "{input}");
    }
}

#[test]
fn evaluation_is_deterministic() {
    let kb = kb(PENDING);
    let input = json!({"pod": pod("Pending")});
    let first = serde_json::to_string(&eval(&kb, &input)).unwrap();
    let second = serde_json::to_string(&eval(&kb, &input)).unwrap();
    assert_eq!(first, second);
}

fn codes(found: &[Problem]) -> Vec<Code> {
    let mut codes: Vec<Code> = found
        .iter()
        .filter(|p| p.is_error())
        .map(|p| p.code)
        .collect();
    codes.sort();
    codes
}

#[test]
fn every_compile_error_is_reported_at_once() {
    let found = problems(
        r#"
symptom s "S" {
  when phase == 3
  check "C" {
    if phaze == "x" => c.misspelt
    if pod.status.phase == "x" => c.a
    if message matches "(unclosed" => check nowhere
    else => c.a
    if restarts > 1 => c.a
  }
}
cause c.a "A" { fix "f" { step "s" run "kubectl get {{ pod_nam }}" } }
cause c.a "Again" { fix "f" { step "s" } }
cause c.lonely "Unreachable" { }
"#,
    );
    assert_eq!(
        codes(&found),
        [
            Code::DuplicateId,
            Code::UnknownCause,
            Code::UnknownCheck,
            Code::UnknownName,
            Code::UnknownName,
            Code::UnknownTemplateFact,
            Code::UnreachableCause,
            Code::CauseWithoutFix,
            Code::MisplacedElse,
            Code::TypeMismatch,
            Code::BadRegex,
        ]
    );
    let misspelt = found
        .iter()
        .find(|p| p.message == "unknown fact `phaze`")
        .unwrap();
    assert_eq!(misspelt.help.as_deref(), Some("did you mean `phase`?"));
    assert_eq!(misspelt.loc.position(), "test.kb:20:8");
    let duplicate = found.iter().find(|p| p.code == Code::DuplicateId).unwrap();
    assert_eq!(duplicate.loc.position(), "test.kb:28:7");
    assert_eq!(duplicate.related[0].loc.position(), "test.kb:27:7");
    let input = found
        .iter()
        .find(|p| p.message.contains("is an input"))
        .unwrap();
    assert_eq!(input.loc.text(), "pod");
    let template = found
        .iter()
        .find(|p| p.code == Code::UnknownTemplateFact)
        .unwrap();
    assert_eq!(template.help.as_deref(), Some("did you mean `pod_name`?"));
}

#[test]
fn an_unknown_name_where_inputs_are_read_may_be_an_input_left_out() {
    // A rule file checked without the file that declares `input node`.
    let found = problems(
        r#"
fact node_ready: string "Ready" { from node.status.conditions }
symptom s "S" { when node_ready == "x" check "C" { if node_redy == "x" => c.x } }
cause c.x "X" { fix "f" { step "s" } }
"#,
    );
    let input = found
        .iter()
        .find(|p| p.loc.text() == "node")
        .unwrap_or_else(|| panic!("{found:?}"));
    assert_eq!(input.message, "unknown input or fact `node`");
    assert_eq!(
        input.help.as_deref(),
        Some(
            "declare it: `input node \"…\"` for a document kb is given, or `fact node: string \"…\" { from … }`"
        )
    );
    // In a condition only facts are read.
    let fact = found.iter().find(|p| p.loc.text() == "node_redy").unwrap();
    assert_eq!(fact.message, "unknown fact `node_redy`");
}

#[test]
fn loops_between_checks_and_facts_are_rejected() {
    let found = problems(
        r#"
fact a: bool "A" { from b }
fact b: bool "B" { from a }
symptom s "S" { when a check "C" { if true => check one } }
check one "One" { if true => check two }
check two "Two" { if true => check one  if false => c.x }
cause c.x "X" { fix "f" { step "s" } }
"#,
    );
    let cycles: Vec<&Problem> = found.iter().filter(|p| p.code == Code::Cycle).collect();
    assert_eq!(
        cycles.len(),
        2,
        "{:#?}",
        found.iter().map(|p| &p.message).collect::<Vec<_>>()
    );
    assert!(cycles.iter().any(|p| p.message.contains("`a` → `b`")));
    assert!(cycles.iter().any(|p| p.message.contains("`one` → `two`")));
}

#[test]
fn type_errors_name_both_sides() {
    let found = problems(
        r#"
fact n: number "N" { from "text" }
symptom s "S" {
  when true
  check "Types" {
    if phase => c.x
    if restarts contains "x" => c.x
    if count(phase) > 1 => c.x
    if any(events, .reason) => c.x
    if lowr(phase) == "x" => c.x
    if .reason == "x" => c.x
    if exists(phase, phase) => c.x
  }
}
cause c.x "X" { fix "f" { step "s" } }
"#,
    );
    let messages: Vec<&str> = found
        .iter()
        .filter(|p| p.is_error())
        .map(|p| p.message.as_str())
        .collect();
    assert!(
        messages.contains(&"fact `n` is declared number, but its derivation is string"),
        "{messages:#?}"
    );
    assert!(
        messages.contains(&"a condition must be a bool, but `phase` is string"),
        "{messages:#?}"
    );
    assert!(
        messages.contains(&"`contains` cannot apply to number and string"),
        "{messages:#?}"
    );
    assert!(
        messages.contains(&"`phase` is string, not a list"),
        "{messages:#?}"
    );
    assert!(
        messages.contains(&"a condition must be a bool, but `.reason` is any value")
            || messages.iter().all(|m| !m.contains(".reason` is")),
        "{messages:#?}"
    );
    assert!(
        messages.contains(&"unknown function `lowr`"),
        "{messages:#?}"
    );
    assert!(
        messages.contains(&"`.reason` has no list element to refer to"),
        "{messages:#?}"
    );
    assert!(
        messages.contains(&"`exists` takes one argument, not 2"),
        "{messages:#?}"
    );
}

#[test]
fn a_regex_that_would_explode_a_backtracking_engine_is_linear_here() {
    let kb = kb(r#"
symptom s "S" {
  when true
  check "Regex" { if message matches r"^(a+)+$" => c.x }
}
cause c.x "X" { fix "f" { step "s" } }
"#);
    let evil = format!("{}!", "a".repeat(100_000));
    let d = eval(
        &kb,
        &json!({"events": [{"reason": "FailedScheduling", "message": evil}]}),
    );
    assert_eq!(status(&d, "c.x"), None);
    let backreference = problems(
        r#"
symptom s "S" { when true check "R" { if message matches r"(a)\1" => c.x } }
cause c.x "X" { fix "f" { step "s" } }
"#,
    );
    assert_eq!(codes(&backreference), [Code::BadRegex]);
    let huge = problems(
        r#"
symptom s "S" { when true check "R" { if message matches r"(?:\w{100}){100}" => c.x } }
cause c.x "X" { fix "f" { step "s" } }
"#,
    );
    assert_eq!(codes(&huge), [Code::BadRegex]);
    let label = huge
        .iter()
        .find(|p| p.code == Code::BadRegex)
        .map(|p| &p.label);
    assert!(label.is_some_and(|l| l.contains("size limit")), "{label:?}");
    // Every place a regular expression is written is checked, each at its
    // literal: a fact's derivation, a symptom's `when`, a nested check; one
    // written twice, at both.
    let everywhere = problems(
        r#"
fact code: string "Code" { from capture(message, r"(") }
symptom s "S" {
  when message matches r"[" and exists(code)
  check "C" { if true => check "D" { if message matches r"(?<" or message matches r"[" => c.x } }
}
cause c.x "X" { fix "f" { step "s" } }
"#,
    );
    let located: Vec<&str> = everywhere
        .iter()
        .filter(|p| p.code == Code::BadRegex)
        .map(|p| p.loc.text())
        .collect();
    assert_eq!(located, [r#"r"(""#, r#"r"[""#, r#"r"(?<""#, r#"r"[""#]);
}

#[test]
fn unused_facts_are_warnings_only() {
    let kb = kb(r#"
fact spare: string "Spare" { from pod.spec.x }
symptom s "S" { when phase == "x" check "C" { if true => c.x } }
cause c.x "X" { fix "f" { step "s" } }
"#);
    let unused: Vec<&str> = kb
        .warnings
        .iter()
        .filter(|w| w.code == Code::UnusedFact)
        .map(|w| w.message.as_str())
        .collect();
    assert!(unused.contains(&"fact `spare` is never used"), "{unused:?}");
}

#[test]
fn concat_joins_lists_and_capture_extracts_a_group() {
    let kb = kb(r#"
input node "Node"
fact images: list<string> "Images of all containers" {
  from concat(pod.spec.initContainers.image, pod.spec.containers.image)
}
fact registry: string "The registry of the first image" { from capture(first(images), r"^([^/]+)/") }
fact tag: string "A tag that is not there" { from capture(first(images), r"@(sha256)") }
symptom s "S" {
  when true
  check "C" {
    if len(images) == 3 and registry == "harbor.example.com" and not exists(tag) => c.x
  }
}
cause c.x "X" { fix "f" { step "Log in" run "docker login {{ registry }}" } }
"#);
    let d = eval(
        &kb,
        &json!({"pod": {"spec": {
            "initContainers": [{"image": "harbor.example.com/base/init:1"}],
            "containers": [{"image": "nginx:1.25"}, {"image": "redis:7"}]
        }}}),
    );
    assert_eq!(status(&d, "c.x"), Some(Status::Confirmed));
    assert_eq!(
        d.causes[0].fixes[0].steps[0].command.as_deref(),
        Some("docker login harbor.example.com")
    );
}

#[test]
fn a_symptom_with_nothing_known_is_not_reported_and_numbers_parse() {
    let kb = kb(r#"
fact capacity: number "Pods the node takes" { from number(pod.status.capacity) }
symptom s "S" {
  when phase == "Pending" and capacity > 100
  check "C" { if true => c.x }
}
cause c.x "X" { fix "f" { step "s" } }
"#);
    assert!(eval(&kb, &json!({"events": []})).symptoms.is_empty());
    let partial = eval(&kb, &json!({"phase": "Pending"}));
    assert_eq!(
        partial.symptoms.len(),
        1,
        "phase is known, so the symptom is possible"
    );
    let full = eval(
        &kb,
        &json!({"pod": {"status": {"phase": "Pending", "capacity": "250"}}}),
    );
    assert_eq!(status(&full, "c.x"), Some(Status::Confirmed));
    let not_a_number = eval(
        &kb,
        &json!({"pod": {"status": {"phase": "Pending", "capacity": "lots"}}}),
    );
    assert!(not_a_number.symptoms.is_empty());
}

#[test]
fn seconds_between_reads_kubernetes_times_and_is_absent_for_anything_else() {
    let kb = kb(r#"
input node "Node"
fact started: string "When it started" { from pod.status.startTime }
fact seen: string "When it was last seen" { from node.status.heartbeat }
fact ran: number "Seconds it ran" { from seconds_between(started, seen) }
symptom s "S" {
  when exists(started) and ran >= 600
  check "C" { if ran < 3600 => c.x }
}
cause c.x "X" { fix "f" { step "s" } }
"#);
    let ran = |started: Json, seen: Json| {
        let d = eval(
            &kb,
            &json!({"pod": {"status": {"startTime": started}}, "node": {"status": {"heartbeat": seen}}}),
        );
        (d.symptoms.len(), status(&d, "c.x"))
    };
    // Whole seconds, as in statuses; a fraction and an offset, as in an event's eventTime.
    assert_eq!(
        ran(json!("2026-04-14T09:20:31Z"), json!("2026-04-14T09:45:00Z")),
        (1, Some(Status::Confirmed))
    );
    assert_eq!(
        ran(
            json!("2026-04-14T09:20:31.520685Z"),
            json!("2026-04-14T11:30:31.520685+02:00")
        ),
        (1, Some(Status::Confirmed)),
        "11:30:31 at +02:00 is 09:30:31 UTC: ten minutes"
    );
    assert_eq!(
        ran(
            json!("2026-04-14T09:20:31.5Z"),
            json!("2026-04-14T09:30:31Z")
        ),
        (0, None),
        "599.5 seconds"
    );
    assert_eq!(
        ran(json!("2026-04-14T09:20:31Z"), json!("2026-04-14T08:20:31Z")),
        (0, None),
        "backwards in time: negative"
    );
    assert_eq!(
        ran(json!("2026-04-13T09:20:31Z"), json!("2026-04-14T09:20:31Z")),
        (1, None),
        "a day: the symptom, not the cause"
    );
    for (started, seen) in [
        (json!("yesterday"), json!("2026-04-14T09:45:00Z")),
        (json!("2026-04-14 09:20:31"), json!("2026-04-14T09:45:00Z")),
        (json!(1_776_158_431), json!("2026-04-14T09:45:00Z")),
        (json!("2026-04-14T09:20:31Z"), json!(null)),
    ] {
        assert_eq!(
            ran(started.clone(), seen.clone()),
            (0, None),
            "{started} {seen}"
        );
    }
    let unknown = eval(
        &kb,
        &json!({"pod": {"status": {"startTime": "2026-04-14T09:20:31Z"}}}),
    );
    assert_eq!(
        unknown.symptoms.len(),
        1,
        "without the node the time is unknown, and the symptom possible"
    );
    assert_eq!(status(&unknown, "c.x"), Some(Status::Possible));

    let found = problems(
        r#"
symptom s "S" {
  when true
  check "C" {
    if seconds_between(restarts, phase) > 1 => c.x
    if seconds_between(phase) > 1 => c.x
    if second_between(phase, phase) > 1 => c.x
  }
}
cause c.x "X" { fix "f" { step "s" } }
"#,
    );
    let messages: Vec<&str> = found.iter().map(|p| p.message.as_str()).collect();
    for expected in [
        "the first argument of `seconds_between` must be a string, but `restarts` is number",
        "`seconds_between` takes two times (strings), not 1",
        "unknown function `second_between`",
    ] {
        assert!(messages.contains(&expected), "{expected}: {messages:#?}");
    }
}

#[test]
fn extensions_add_checks_and_fixes_and_replace_texts() {
    let kb = kb(&format!(
        "{PENDING}{}",
        r#"
extend symptom pending {
  check "Is our own admission webhook holding it?" {
    if message contains "webhook" => c.webhook
  }
}
extend cause c.full "The cluster is full (ask #capacity)" {
  explain "Our clusters autoscale; a full cluster means the autoscaler is stuck."
  fix "Page the capacity team" { step "Open a ticket" run "ticket new --queue capacity --pod {{ pod_name }}" }
}
cause c.webhook "A webhook holds the pod" { fix "f" { step "s" } }
"#
    ));
    let full = eval(
        &kb,
        &json!({"pod": pod("Pending"), "events": [{"reason": "FailedScheduling", "message": "0/3 nodes: Insufficient cpu"}]}),
    );
    let cause = full.causes.iter().find(|c| c.id == "c.full").unwrap();
    assert_eq!(cause.title, "The cluster is full (ask #capacity)");
    assert_eq!(
        cause.explanation.as_deref(),
        Some("Our clusters autoscale; a full cluster means the autoscaler is stuck.")
    );
    assert_eq!(cause.fixes.len(), 2, "the original fix, then the added one");
    assert_eq!(
        cause.fixes[1].steps[0].command.as_deref(),
        Some("ticket new --queue capacity --pod web-1")
    );
    let webhook = eval(
        &kb,
        &json!({"pod": pod("Pending"), "events": [{"reason": "FailedScheduling", "message": "denied by webhook"}]}),
    );
    assert_eq!(
        status(&webhook, "c.webhook"),
        Some(Status::Confirmed),
        "the added check follows the symptom's own"
    );
}

#[test]
fn extensions_of_unknown_ids_and_conflicting_extensions_are_errors() {
    let found = problems(&format!(
        "{PENDING}{}",
        r#"
extend cause c.ful "Typo" { }
extend symptom nope { }
extend cause c.taint { explain "One." }
extend cause c.taint { explain "Two." }
"#
    ));
    let codes = codes(&found);
    assert_eq!(
        codes,
        [
            Code::UnknownExtended,
            Code::UnknownExtended,
            Code::ConflictingExtensions
        ]
    );
    let typo = found
        .iter()
        .find(|p| p.message.contains("`c.ful`"))
        .unwrap();
    assert_eq!(typo.help.as_deref(), Some("did you mean `c.full`?"));
    let conflict = found
        .iter()
        .find(|p| p.code == Code::ConflictingExtensions)
        .unwrap();
    assert_eq!(conflict.related.len(), 1, "both places are shown");
}

// ------------------------------------------------------------------ why_not

use crate::value::Truth;

fn cause_id(kb: &KnowledgeBase, id: &str) -> crate::kb::CauseId {
    match kb.lookup(id) {
        Some(crate::kb::Id::Cause(cause)) => cause,
        other => panic!("`{id}` is not a cause: {other:?}"),
    }
}

fn why_not(kb: &KnowledgeBase, input: &Json, cause: &str) -> Vec<crate::kb::WhyNot> {
    kb.why_not(
        &kb.bind(&input.clone().into()),
        cause_id(kb, cause),
        Lang::En,
    )
}

fn scheduler_says(message: &str) -> Json {
    json!({"pod": pod("Pending"), "events": [{"reason": "FailedScheduling", "message": message}]})
}

#[test]
fn why_not_stops_at_the_first_false_condition_with_the_facts_it_read() {
    let kb = kb(PENDING);
    let ways = why_not(
        &kb,
        &scheduler_says("0/3 nodes: 3 node(s) had untolerated taint"),
        "c.full",
    );
    assert_eq!(ways.len(), 1);
    let way = &ways[0];
    assert_eq!(way.symptom, "pending");
    assert_eq!(way.stopped_at, Some(1));
    assert_eq!(way.evidence.len(), 2, "nothing after the stop");
    assert_eq!(way.evidence[0].result, Truth::True);
    assert_eq!(way.evidence[0].facts[0].value, Some(json!("Pending")));
    let stop = &way.evidence[1];
    assert_eq!(stop.condition, "full");
    assert_eq!(stop.check.as_deref(), Some("What does the scheduler say?"));
    assert_eq!(stop.result, Truth::False);
    assert_eq!(stop.facts[0].name, "full");
    assert_eq!(stop.facts[0].value, Some(json!(false)));
}

#[test]
fn why_not_through_otherwise_needs_every_branch_of_the_check_before_to_fail() {
    let kb = kb(PENDING);
    let ways = why_not(&kb, &scheduler_says("3 Insufficient cpu"), "c.restarts");
    assert_eq!(ways.len(), 1);
    let stop = &ways[0].evidence[1];
    assert_eq!(ways[0].stopped_at, Some(1));
    assert_eq!(stop.condition, "otherwise");
    assert_eq!(stop.result, Truth::False);
    let names: Vec<&str> = stop.facts.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["full", "message"]);

    // Nothing the scheduler says matches: the way goes on to `restarts > 3`.
    let mut input = scheduler_says("something else");
    input["pod"]["status"]["containerStatuses"] = json!([{"restartCount": 1}]);
    let ways = why_not(&kb, &input, "c.restarts");
    let way = &ways[0];
    assert_eq!(way.stopped_at, Some(2));
    assert_eq!(way.evidence[1].result, Truth::True);
    assert_eq!(way.evidence[2].condition, "restarts > 3");
    assert_eq!(way.evidence[2].facts[0].value, Some(json!(1)));
}

#[test]
fn why_not_of_a_confirmed_cause_holds_all_the_way_like_evaluate() {
    let kb = kb(PENDING);
    let input = scheduler_says("3 Insufficient cpu");
    let ways = why_not(&kb, &input, "c.full");
    assert_eq!(ways[0].stopped_at, None);
    assert!(ways[0].evidence.iter().all(|e| e.result == Truth::True));
    let d = eval(&kb, &input);
    let conditions = |evidence: &[crate::diagnosis::Evidence]| {
        evidence
            .iter()
            .map(|e| (e.condition.clone(), e.result))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        conditions(&ways[0].evidence),
        conditions(&d.causes[0].evidence)
    );
}

#[test]
fn why_not_stops_at_an_unknown_condition_and_at_a_false_symptom() {
    let kb = kb(PENDING);
    let ways = why_not(&kb, &json!({"pod": pod("Pending")}), "c.taint");
    assert_eq!(ways[0].stopped_at, Some(1));
    assert_eq!(ways[0].evidence[1].result, Truth::Unknown);
    assert_eq!(ways[0].evidence[1].facts[0].state, FactState::Unknown);

    let ways = why_not(&kb, &json!({"pod": pod("Running")}), "c.taint");
    assert_eq!(ways[0].stopped_at, Some(0));
    assert_eq!(ways[0].evidence.len(), 1);
    assert_eq!(ways[0].evidence[0].result, Truth::False);
}

#[test]
fn why_not_walks_every_way_else_branches_and_shared_checks() {
    let kb = kb(r#"
symptom a "A" {
  when phase == "Pending"
  check "First" {
    if restarts > 3 => c.x
    if restarts > 1 => check shared
    else => c.y
  }
}
symptom b "B" {
  when phase == "Running"
  check "Only" { if true => check shared }
}
check shared "Shared" { if full => c.x }
cause c.x "X" { fix "f" { step "s" } }
cause c.y "Y" { fix "f" { step "s" } }
"#);
    let input = json!({"pod": {"status": {"phase": "Pending", "containerStatuses": [{"restartCount": 0}]}}});
    let ways = why_not(&kb, &input, "c.x");
    let shape: Vec<(&str, usize, Option<usize>)> = ways
        .iter()
        .map(|w| (w.symptom.as_str(), w.evidence.len(), w.stopped_at))
        .collect();
    assert_eq!(
        shape,
        [("a", 2, Some(1)), ("a", 2, Some(1)), ("b", 1, Some(0))],
        "two ways from `a` (directly, and through the shared check), one from `b`"
    );
    assert_eq!(ways[1].evidence[1].condition, "restarts > 1");

    let ways = why_not(&kb, &input, "c.y");
    assert_eq!(ways.len(), 1);
    assert_eq!(ways[0].stopped_at, None, "`else` holds: no `if` does");
    assert_eq!(ways[0].evidence[1].condition, "otherwise");

    let nowhere = kb.why_not(
        &kb.bind(&input.clone().into()),
        crate::kb::CauseId(99),
        Lang::En,
    );
    assert!(nowhere.is_empty(), "no cause, no way");
}

#[test]
fn why_not_serialises_the_stop_as_null_when_the_way_holds() {
    let kb = kb(PENDING);
    let ways = why_not(&kb, &scheduler_says("3 Insufficient cpu"), "c.full");
    let json = serde_json::to_value(&ways[0]).unwrap();
    assert_eq!(json["symptom"], "pending");
    assert_eq!(json["stopped_at"], Json::Null);
    assert_eq!(json["evidence"][1]["result"], "true");
}

/// Runs `f` on a thread of 2 MiB, as test threads and rayon's workers
/// have; `None` when it panicked.
fn on_a_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .ok()
}

/// The status of `pending.full` for a pending pod, evaluated on a small
/// stack.
fn pending_full_on_a_small_stack(compiled: KnowledgeBase) -> Option<Status> {
    on_a_small_stack(move || {
        let input = json!({"pod": {"status": {"phase": "Pending"}}});
        status(&eval(&compiled, &input), "pending.full")
    })
    .flatten()
}

#[test]
fn expressions_as_deep_as_the_parser_allows_work_on_a_small_stack() {
    // A thread of 2 MiB, as test threads and rayon's workers have, in a
    // debug build: compiling, evaluating, writing, loading and dropping
    // recurse through expressions.
    let n = kb_dsl::MAX_EXPR_DEPTH;
    // `phase == "Pending"` is two deep, and each `and` one more.
    let chain = vec![r#"phase == "Pending""#; n - 1].join(" and ");
    let fields = ".a".repeat(n - 1);
    let rules = format!(
        r#"
fact deep: string "Deep" {{ from pod{fields} }}
symptom pod-pending "Pending" {{
  when {chain}
  check "Deep?" {{
    if deep == "x" => pending.deep
    else => pending.full
  }}
}}
cause pending.deep "Deep" {{ fix "F" {{ step "S" }} }}
cause pending.full "Full" {{ fix "F" {{ step "S" }} }}
"#
    );
    let diagnosed = on_a_small_stack(move || {
        let compiled = kb(&rules);
        let input = json!({"pod": {"status": {"phase": "Pending"}}});
        let bytes = compiled.to_bytes().unwrap();
        let loaded = KnowledgeBase::from_bytes(bytes, []).unwrap();
        [compiled, loaded].map(|kb| status(&eval(&kb, &input), "pending.full"))
    });
    assert_eq!(diagnosed, Some([Some(Status::Confirmed); 2]));
}

#[test]
fn a_long_chain_of_facts_is_evaluated_without_exhausting_the_stack() {
    let n = 5_000;
    let mut rules = String::from("fact f0: string \"F\" { from pod.status.phase }\n");
    for i in 1..n {
        rules += &format!("fact f{i}: string \"F\" {{ from f{} }}\n", i - 1);
    }
    let last = n - 1;
    rules += &format!(
        r#"
symptom pod-pending "Pending" {{
  when f{last} == "Pending"
  check "Full?" {{ if f{last} == "Pending" => pending.full }}
}}
cause pending.full "Full" {{ fix "F" {{ step "S" }} }}
"#
    );
    assert_eq!(
        pending_full_on_a_small_stack(kb(&rules)),
        Some(Status::Confirmed)
    );
}

#[test]
fn a_chain_of_facts_with_deep_derivations_is_evaluated_on_a_small_stack() {
    // Each derivation is as deep as the parser allows and reads the fact
    // before it at its deepest point.
    let terms = kb_dsl::MAX_EXPR_DEPTH - 8;
    let filler = vec![r#"pod.status.phase == "Pending""#; terms].join(" and ");
    let mut rules = String::from("fact f0: bool \"F\" { from pod.status.phase == \"Pending\" }\n");
    let n = 200;
    for i in 1..n {
        rules += &format!("fact f{i}: bool \"F\" {{ from f{} and {filler} }}\n", i - 1);
    }
    let last = n - 1;
    rules += &format!(
        r#"
symptom pod-pending "Pending" {{
  when f{last}
  check "Full?" {{ if f{last} => pending.full }}
}}
cause pending.full "Full" {{ fix "F" {{ step "S" }} }}
"#
    );
    assert_eq!(
        pending_full_on_a_small_stack(kb(&rules)),
        Some(Status::Confirmed)
    );
}

mod compiled_form {
    use std::sync::Arc;

    use kb_dsl::Source;

    use super::*;
    use crate::{Parts, SnapshotError};

    const RULES: &str = r#"
symptom pod-pending "Pod stuck in Pending" {
  when phase == "Pending"
  check "What does the scheduler say?" {
    gather "kubectl get events -n default --field-selector involvedObject.name={{ pod_name }}"
    if message matches r"Insufficient (cpu|memory)" => pending.full
    if message matches r"^0/\d+ nodes are available" => pending.other
  }
}
cause pending.full "No node has room" {
  fix "Make room" { step "Describe the pod" run "kubectl describe pod {{ pod_name }}" }
}
cause pending.other "Something else" {
  fix "Look" { step "Read the events" }
}
test "full" {
  input {"pod": {"status": {"phase": "Pending"}}}
  expect pod-pending
}
"#;

    fn sources() -> Vec<Arc<Source>> {
        vec![Source::new("test.kb", format!("{BASE}\n{RULES}"))]
    }

    fn pending(message: &str) -> Json {
        json!({
            "pod": {"metadata": {"name": "web-0"}, "status": {"phase": "Pending"}},
            "events": [{"reason": "FailedScheduling", "message": message}]
        })
    }

    /// Parts that last as long as the program, as those compiled into it.
    fn embedded(parts: Parts) -> (&'static str, &'static [u8]) {
        (
            Box::leak(parts.texts.into_boxed_str()),
            Box::leak(parts.rest.into_boxed_slice()),
        )
    }

    #[test]
    fn a_loaded_knowledge_base_diagnoses_as_the_compiled_one() {
        let compiled = kb(RULES);
        let bytes = compiled.to_bytes().unwrap();
        let parts = compiled.to_parts().unwrap();
        assert_eq!(parts.to_bytes(), bytes);
        parts.check().unwrap();
        let loaded = KnowledgeBase::from_bytes(bytes.clone(), sources()).unwrap();
        let (texts, rest) = embedded(parts);
        let from_parts = KnowledgeBase::from_checked_parts(texts, rest, sources()).unwrap();
        for message in [
            "0/3 nodes are available: 3 Insufficient cpu.",
            "0/3 nodes are available: 3 node(s) had untolerated taint.",
            "no message a rule knows",
        ] {
            let expected = serde_json::to_value(eval(&compiled, &pending(message))).unwrap();
            for kb in [&loaded, &from_parts] {
                let actual = serde_json::to_value(eval(kb, &pending(message))).unwrap();
                assert_eq!(expected, actual, "{message}");
            }
        }
        assert_eq!(from_parts.to_bytes().unwrap(), bytes);
        let full = eval(
            &loaded,
            &pending("0/3 nodes are available: 3 Insufficient cpu."),
        );
        assert_eq!(status(&full, "pending.full"), Some(Status::Confirmed));
        assert_eq!(
            full.causes[0].fixes[0].steps[0].command.as_deref(),
            Some("kubectl describe pod web-0")
        );
    }

    #[test]
    fn written_without_dfas_it_is_smaller_and_the_same_knowledge_base() {
        let compiled = kb(RULES);
        let (with, without) = (
            compiled.to_bytes().unwrap(),
            compiled.to_bytes_without_dfas().unwrap(),
        );
        assert!(
            without.len() < with.len(),
            "{} ≥ {}",
            without.len(),
            with.len()
        );
        let loaded = KnowledgeBase::from_bytes(without.clone(), sources()).unwrap();
        for message in [
            "0/3 nodes are available: 3 Insufficient cpu.",
            "0/3 nodes are available: 3 node(s) had untolerated taint.",
            "no message a rule knows",
        ] {
            let expected = serde_json::to_value(eval(&compiled, &pending(message))).unwrap();
            let actual = serde_json::to_value(eval(&loaded, &pending(message))).unwrap();
            assert_eq!(expected, actual, "{message}");
        }
        // The same knowledge base either way: written again, the same bytes.
        assert_eq!(loaded.to_bytes().unwrap(), with);
        let with_dfas = KnowledgeBase::from_bytes(with, sources()).unwrap();
        assert_eq!(with_dfas.to_bytes_without_dfas().unwrap(), without);
    }

    #[test]
    fn the_same_knowledge_base_always_gives_the_same_bytes() {
        let bytes = kb(RULES).to_bytes().unwrap();
        assert_eq!(kb(RULES).to_bytes().unwrap(), bytes);
        let loaded = KnowledgeBase::from_bytes(bytes.clone(), sources()).unwrap();
        assert_eq!(loaded.to_bytes().unwrap(), bytes, "tests not yet decoded");
        assert_eq!(loaded.tests().unwrap(), kb(RULES).tests().unwrap());
        assert_eq!(loaded.to_bytes().unwrap(), bytes, "tests decoded");
    }

    #[test]
    fn locations_point_into_the_sources_given() {
        let bytes = kb(RULES).to_bytes().unwrap();
        let loaded = KnowledgeBase::from_bytes(bytes.clone(), sources()).unwrap();
        let cause = loaded
            .causes
            .iter()
            .find(|c| c.id == "pending.full")
            .unwrap();
        assert!(
            cause.loc.text().starts_with("cause pending.full"),
            "{}",
            cause.loc.text()
        );
        match loaded.tests().unwrap() {
            [test] => match &test.input {
                Some(kb_dsl::ast::TestInput::Inline(input)) => {
                    assert_eq!(
                        input.value,
                        json!({"pod": {"status": {"phase": "Pending"}}})
                    );
                }
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
        // Without its sources, a location still names its file.
        let bare = KnowledgeBase::from_bytes(bytes.clone(), []).unwrap();
        let cause = bare.causes.iter().find(|c| c.id == "pending.full").unwrap();
        assert_eq!(cause.loc.src.name, "test.kb");
        assert_eq!(cause.loc.text(), "");
    }

    #[test]
    fn locations_point_into_the_file_they_were_written_in() {
        // The facts and the symptom in one file, the causes in another, the
        // test in the first again: locations alternate between the two.
        let split = RULES.find("cause pending.full").unwrap();
        let tests = RULES.find("test \"full\"").unwrap();
        let first = format!("{BASE}{}{}", &RULES[..split], &RULES[tests..]);
        let second = &RULES[split..tests];
        let mut rules = kb_dsl::parse(&first, "first.kb").unwrap();
        rules.extend(kb_dsl::parse(second, "second.kb").unwrap());
        let compiled = compile(&rules).unwrap();
        let sources = [
            Source::new("first.kb", first.clone()),
            Source::new("second.kb", second.to_owned()),
        ];
        let loaded = KnowledgeBase::from_bytes(compiled.to_bytes().unwrap(), sources).unwrap();
        let where_ = |kb: &KnowledgeBase| {
            let facts = kb.facts.iter().map(|f| &f.loc);
            let symptoms = kb.symptoms.iter().map(|s| &s.loc);
            let checks = kb.checks.iter().map(|c| &c.loc);
            let causes = kb.causes.iter().map(|c| &c.loc);
            facts
                .chain(symptoms)
                .chain(checks)
                .chain(causes)
                .map(|loc| (loc.position(), loc.text().to_owned()))
                .collect::<Vec<_>>()
        };
        let places = where_(&loaded);
        assert_eq!(places, where_(&compiled));
        assert!(places.iter().any(|(at, _)| at.starts_with("first.kb:")));
        assert!(places.iter().any(|(at, _)| at.starts_with("second.kb:")));
    }

    #[test]
    fn bytes_of_another_version_or_damaged_are_refused() {
        let bytes = kb(RULES).to_bytes().unwrap();
        let other = String::from_utf8_lossy(&bytes).replacen("kb-engine ", "kb-engine 0.0.0-", 1);
        assert!(matches!(
            KnowledgeBase::from_bytes(other.into_bytes(), sources()),
            Err(SnapshotError::Version)
        ));
        assert!(matches!(
            KnowledgeBase::from_bytes(&b"{\"facts\": []}"[..], sources()),
            Err(SnapshotError::Version)
        ));
        let truncated = &bytes[..bytes.len() / 2];
        assert!(matches!(
            KnowledgeBase::from_bytes(truncated.to_vec(), sources()),
            Err(SnapshotError::Format(_))
        ));
        // The rule tests come last and are decoded when asked for: damage
        // there shows then.
        let compiled = kb(RULES);
        let tests = postcard::to_allocvec(compiled.tests().unwrap()).unwrap();
        let mut damaged = bytes.clone();
        let start = damaged.len() - tests.len();
        damaged[start..].fill(0xff);
        let loaded = KnowledgeBase::from_bytes(damaged, sources()).unwrap();
        assert!(matches!(loaded.tests(), Err(SnapshotError::Format(_))));
        assert!(matches!(loaded.tests(), Err(SnapshotError::Format(_))));
    }

    #[test]
    fn texts_are_checked_when_loaded() {
        let bytes = kb(RULES).to_bytes().unwrap();
        let title = b"No node has room";
        let at = bytes.windows(title.len()).position(|w| w == title).unwrap();
        let mut damaged = bytes.clone();
        damaged[at + 3] = 0xff;
        assert!(matches!(
            KnowledgeBase::from_bytes(damaged, sources()),
            Err(SnapshotError::Format(_))
        ));
        let loaded = KnowledgeBase::from_bytes(bytes, sources()).unwrap();
        let cause = loaded.causes.iter().find(|c| c.id == "pending.full");
        assert_eq!(cause.unwrap().title.en, "No node has room");
    }

    #[test]
    fn bytes_that_decode_but_do_not_hold_together_are_refused() {
        use crate::expr::CExpr;
        use crate::kb::{CheckId, FactId, Target};
        type Alteration = fn(&mut KnowledgeBase);
        let alterations: [(&str, Alteration); 9] = [
            ("an incomplete order of nodes", |kb| {
                kb.topo.pop();
            }),
            ("a branch to a check that does not exist", |kb| {
                kb.checks[0].branches[0].target = Target::Check(CheckId(99));
            }),
            ("a branch that leads back to its own check", |kb| {
                kb.checks[0].branches[0].target = Target::Check(CheckId(0));
            }),
            ("a symptom reading a fact that does not exist", |kb| {
                kb.symptoms[0].when = kb.exprs.push(CExpr::Fact(FactId(999)));
            }),
            ("a condition that does not exist", |kb| {
                let past = kb.exprs.clone().push(CExpr::Bool(true));
                kb.symptoms[0].when = past;
            }),
            ("one operand in two expressions", |kb| {
                let operand = kb.exprs.push(CExpr::Bool(true));
                kb.symptoms[0].when = kb.exprs.push(CExpr::And(operand, operand));
            }),
            ("one condition for a symptom and a branch", |kb| {
                kb.checks[0].branches[0].condition = Some(kb.symptoms[0].when);
            }),
            ("a derivation reading a fact it does not list", |kb| {
                let full = kb.facts.iter().position(|f| f.name == "full").unwrap();
                kb.facts[full].reads.clear();
            }),
            ("a command template that does not exist", |kb| {
                let mut fixes = kb.causes[0].fixes.to_vec();
                fixes[0].steps[0].run.as_mut().unwrap().index = 99;
                kb.causes[0].fixes = fixes.into();
            }),
        ];
        for (what, alter) in alterations {
            let mut altered = kb(RULES);
            alter(&mut altered);
            let bytes = altered.to_bytes().unwrap();
            assert!(
                matches!(
                    KnowledgeBase::from_bytes(bytes, sources()),
                    Err(SnapshotError::Inconsistent(_))
                ),
                "{what}"
            );
            // A program's build checks the parts it embeds; loading them
            // then trusts that check.
            let parts = altered.to_parts().unwrap();
            assert!(
                matches!(parts.check(), Err(SnapshotError::Inconsistent(_))),
                "{what}"
            );
            let (texts, rest) = embedded(parts);
            assert!(
                KnowledgeBase::from_checked_parts(texts, rest, sources()).is_ok(),
                "{what}"
            );
        }
    }

    #[test]
    fn fixes_loaded_from_checked_parts_are_decoded_when_first_read() {
        let compiled = kb(RULES);
        let (texts, rest) = embedded(compiled.to_parts().unwrap());
        let loaded = KnowledgeBase::from_checked_parts(texts, rest, sources()).unwrap();
        assert!(loaded.causes.iter().all(|c| !c.fixes.is_decoded()));
        let diagnosis = eval(
            &loaded,
            &pending("0/3 nodes are available: 3 node(s) had untolerated taint."),
        );
        let shown: Vec<&str> = diagnosis.causes.iter().map(|c| c.id.as_str()).collect();
        assert!(!shown.is_empty() && shown.len() < loaded.causes.len());
        for cause in &loaded.causes {
            let id = cause.id.as_str();
            assert_eq!(cause.fixes.is_decoded(), shown.contains(&id), "{id}");
        }
        for (cause, expected) in loaded.causes.iter().zip(&compiled.causes) {
            assert_eq!(
                format!("{:?}", cause.fixes),
                format!("{:?}", expected.fixes)
            );
        }
        // From any other bytes, they are decoded, and checked, with the rest.
        let bytes = compiled.to_bytes().unwrap();
        let checked = KnowledgeBase::from_bytes(bytes, sources()).unwrap();
        assert!(checked.causes.iter().all(|c| c.fixes.is_decoded()));
    }

    #[test]
    fn parts_that_do_not_fit_are_refused() {
        let parts = kb(RULES).to_parts().unwrap();
        let title = "No node has room";
        let at = parts.texts.find(title).unwrap();
        let mut shifted = parts.clone();
        shifted.texts.insert(at, 'x');
        let mut cut = parts.clone();
        cut.texts.truncate(at + 2);
        let mut widened = parts.clone();
        widened.texts.replace_range(at..at + 1, "中");
        for (what, damaged) in [("a text too many", shifted), ("texts cut short", cut)] {
            assert!(damaged.check().is_err(), "{what}");
            let (texts, rest) = embedded(damaged);
            assert!(
                KnowledgeBase::from_checked_parts(texts, rest, sources()).is_err(),
                "{what}"
            );
        }
        // Lengths that cut a character: refused, not a panic.
        assert!(widened.check().is_err());
        let (texts, rest) = embedded(widened);
        let loaded = KnowledgeBase::from_checked_parts(texts, rest, sources());
        assert!(matches!(loaded, Err(SnapshotError::Format(_))));
        let (texts, mut rest) = embedded(parts);
        rest = &rest[..rest.len() / 2];
        assert!(KnowledgeBase::from_checked_parts(texts, rest, sources()).is_err());
        assert!(matches!(
            KnowledgeBase::from_checked_parts(texts, b"not a knowledge base", sources()),
            Err(SnapshotError::Version)
        ));
    }

    #[test]
    fn bytes_nested_too_deep_are_refused_before_they_exhaust_the_stack() {
        use crate::expr::CExpr;
        use crate::types::Ty;
        // `list<list<…>>`, far deeper than any rule compiles to.
        let list = postcard::to_allocvec(&Ty::List(Box::new(Ty::Bool))).unwrap();
        let mut deep = vec![list[0]; 100_000];
        deep.extend(postcard::to_allocvec(&Ty::Bool).unwrap());
        assert!(postcard::from_bytes::<Ty>(&deep).is_err());
        // A symptom's `when`, `not` around `not` … around `true`: as deep as
        // compiling makes expressions, it loads and evaluates; deeper, it
        // is refused, checked without recursing.
        let nested = |depth: usize| {
            let mut kb = kb(RULES);
            let mut when = kb.exprs.push(CExpr::Bool(true));
            for _ in 0..depth {
                when = kb.exprs.push(CExpr::Not(when));
            }
            kb.symptoms[0].when = when;
            KnowledgeBase::from_bytes(kb.to_bytes().unwrap(), sources())
        };
        let fine = nested(kb_dsl::MAX_EXPR_DEPTH).unwrap();
        let diagnosis = eval(&fine, &json!({"pod": {"status": {"phase": "Pending"}}}));
        let even = kb_dsl::MAX_EXPR_DEPTH.is_multiple_of(2);
        assert_eq!(
            diagnosis.symptoms.len(),
            usize::from(even),
            "`not`s cancel out"
        );
        for depth in [crate::snapshot::MAX_DEPTH, 100_000] {
            assert!(matches!(nested(depth), Err(SnapshotError::Inconsistent(_))));
        }
    }
}

/// What a parse keeps of `pod` for the rules of [`PENDING`] and `rules`.
fn kept_of_pod(rules: &str, pod: &Json) -> Json {
    let kb = kb(&format!("{PENDING}\n{rules}"));
    let text = serde_json::to_vec(pod).unwrap();
    kb.needs_of("pod")
        .unwrap()
        .pruner()
        .parse(&text)
        .unwrap()
        .to_value()
}

#[test]
fn an_object_fact_only_facts_read_is_kept_as_far_as_they_read_it() {
    let pod = json!({"metadata": {"name": "web-1"}, "spec": {"containers": [
        {"name": "sidecar", "image": "envoy:1.30", "ports": [{"containerPort": 15001}]},
        {"name": "app", "image": "shop:2.0", "livenessProbe": {"httpGet": {"path": "/healthz"}}}
    ]}});
    let rules = |when: &str| {
        format!(
            r#"
fact app: object "The app container" {{ from first(pod.spec.containers[.name == "app"]) }}
fact app_image: string "Its image" {{ from app.image }}
symptom old "Old image" {{
  when {when}
  check "Which image?" {{ if app_image == "shop:1.0" => c.old }}
}}
cause c.old "Old" {{ fix "Roll out" {{ step "Roll out" }} }}
"#
        )
    };
    // Only a fact reads `app`: of the containers, the names its filter
    // reads and the image `app_image` reads are kept.
    assert_eq!(
        kept_of_pod(&rules("exists(app_image)"), &pod)["spec"],
        json!({"containers": [
            {"name": "sidecar", "image": "envoy:1.30"},
            {"name": "app", "image": "shop:2.0"}
        ]})
    );
    // Read by a condition, `app` may be shown as evidence: kept whole.
    assert_eq!(
        kept_of_pod(&rules("exists(app)"), &pod)["spec"],
        pod["spec"]
    );
}

#[test]
fn a_condition_written_on_several_lines_is_shown_on_one() {
    let kb = kb(r#"
symptom stuck "Stuck" {
  when coalesce(
    phase in [
      "Pending", "Unknown"
    ]
      and restarts > 3,
    false
  )
}
"#);
    assert_eq!(
        kb.symptoms[0].when_text.as_str(),
        r#"coalesce(phase in ["Pending", "Unknown"] and restarts > 3, false)"#
    );
}
