//! The bundled knowledge base: it compiles clean, its rule tests pass, and
//! every catalog cause of its symptoms has a test that confirms it.

#![expect(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::Path;

use kb::knowledge::{self, Loaded};
use kb::rule_tests;

fn bundled() -> Loaded {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kb/rules");
    Loaded::from_dir(&dir)
        .map_err(|e| format!("{e:?}"))
        .unwrap()
}

/// Every symptom and cause of the catalog, by symptom: a public contract.
const CATALOG: &[(&str, &[&str])] = &[
    (
        "pod-pending",
        &[
            "pending.insufficient-resources",
            "pending.too-many-pods",
            "pending.node-selector-mismatch",
            "pending.affinity-unsatisfied",
            "pending.untolerated-taint",
            "pending.no-ready-nodes",
            "pending.scheduler-down",
            "pending.scheduling-gated",
            "pending.volume-zone-conflict",
            "pending.unbound-pvc",
            "pending.host-port-conflict",
            "pending.volume-limit-reached",
        ],
    ),
    (
        "pod-container-creating",
        &[
            "creating.sandbox-image-unavailable",
            "creating.memory-limit-too-small",
            "creating.volume-mount-failed",
            "creating.volume-attach-failed",
            "creating.volume-still-attached",
            "creating.runtime-disk-full",
            "creating.memory-fragmentation",
            "creating.cni-failure",
            "creating.controller-manager-down",
            "creating.runtime-broken-install",
            "creating.duplicate-container-name",
            "creating.runtime-handler-missing",
            "creating.image-pull-failed",
        ],
    ),
    (
        "pod-image-pull",
        &[
            "image.not-found",
            "image.platform-mismatch",
            "image.node-disk-full",
            "image.invalid-name",
            "image.registry-auth",
            "image.registry-unreachable",
            "image.pull-timeout",
            "image.pull-throttled",
            "image.insecure-registry",
            "image.untrusted-certificate",
            "image.corrupted",
            "image.never-pull",
            "image.short-name-unresolved",
        ],
    ),
    (
        "pod-crash-loop",
        &[
            "crash.oom-limit",
            "crash.oom-node",
            "crash.liveness-probe",
            "crash.startup-probe",
            "crash.command-not-found",
            "crash.command-not-executable",
            "crash.no-foreground-process",
            "crash.app-error",
            "crash.config-invalid",
            "crash.dns-failure",
            "crash.dependency-unreachable",
            "crash.volume-permission-denied",
            "crash.writes-read-only",
            "crash.read-only-filesystem",
            "crash.mount-target-missing",
            "crash.ipv6-unsupported",
            "crash.segfault",
            "crash.cpu-unsupported",
            "crash.wrong-architecture",
            "crash.dns-forwarding-loop",
            "crash.node-pod-cidr-missing",
            "crash.sysctl-denied",
        ],
    ),
    (
        "pod-init-failure",
        &[
            "init.container-failed",
            "init.oom-limit",
            "init.command-not-found",
            "init.command-not-executable",
            "init.wrong-architecture",
            "init.dependency-unreachable",
        ],
    ),
    (
        "pod-init-stuck",
        &["init.waiting-for-dependency", "init.step-hangs"],
    ),
    (
        "pod-disrupted",
        &[
            "disruption.preempted",
            "disruption.noexecute-taint",
            "disruption.evicted",
            "disruption.node-deleted",
        ],
    ),
    (
        "pod-hook-failure",
        &["hook.post-start-failed", "hook.pre-stop-failed"],
    ),
    (
        "pod-not-ready",
        &[
            "ready.probe-misconfigured",
            "ready.app-not-listening",
            "ready.node-overloaded",
            "ready.cpu-throttled",
            "ready.syn-backlog-overflow",
            "ready.app-unhealthy",
        ],
    ),
    (
        "pod-error",
        &[
            "error.missing-dependency",
            "error.run-as-non-root",
            "error.rbac-forbidden",
            "error.invalid-volume-mount",
            "error.no-command",
            "error.bad-command",
            "error.args-without-command",
        ],
    ),
    (
        "pod-evicted",
        &[
            "evicted.memory-pressure",
            "evicted.disk-pressure",
            "evicted.ephemeral-storage-limit",
        ],
    ),
    (
        "pod-rejected",
        &[
            "rejected.out-of-resources",
            "rejected.device-unavailable",
            "rejected.node-mismatch",
            "rejected.sysctl-forbidden",
        ],
    ),
    (
        "pod-node-shutdown",
        &["shutdown.spot-reclaimed", "shutdown.node-shut-down"],
    ),
    (
        "pod-deadline-exceeded",
        &["deadline.work-too-long", "deadline.spent-starting"],
    ),
    ("pod-unknown", &["unknown.node-lost"]),
    (
        "pod-terminating",
        &[
            "terminating.finalizers",
            "terminating.node-not-ready",
            "terminating.immutable-file",
            "terminating.runtime-disk-full",
            "terminating.mount-busy",
            "terminating.runtime-hang",
            "terminating.runtime-desync",
            "terminating.kubelet-watch-bug",
            "terminating.daemonset-controller-bug",
            "terminating.signal-ignored",
        ],
    ),
    (
        "pods-not-created",
        &[
            "admission.quota-exceeded",
            "admission.limit-range-exceeded",
            "admission.security-policy-violation",
            "admission.webhook-unavailable",
            "admission.webhook-denied",
            "admission.service-account-missing",
            "admission.priority-class-refused",
            "admission.runtime-class-missing",
        ],
    ),
    ("pod-status-stale", &["stale.kubelet-qps-limit"]),
    ("pod-misbehaving", &["misbehaving.invalid-spec"]),
    ("static-pod-not-updated", &["static-pod.not-recreated"]),
    ("daemonset-no-pods", &["daemonset.no-eligible-nodes"]),
    (
        "namespace-terminating",
        &["namespace.resources-remaining", "namespace.finalizers"],
    ),
];

#[test]
fn the_bundled_knowledge_base_compiles_without_warnings() {
    let loaded = bundled();
    let warnings: Vec<&str> = loaded
        .kb
        .warnings
        .iter()
        .map(|w| w.message.as_str())
        .collect();
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn every_rule_test_passes() {
    let loaded = bundled();
    let outcomes = rule_tests::run(&loaded, None).unwrap();
    let failed: Vec<String> = outcomes
        .iter()
        .filter(|o| !o.passed())
        .map(|o| format!("{} ({}): {}", o.name, o.position, o.failures.join("; ")))
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert!(outcomes.len() >= 30);
    let coverage = rule_tests::Coverage::of(&loaded.kb, &outcomes);
    assert!(
        coverage.untested_causes.is_empty(),
        "{:?}",
        coverage.untested_causes
    );
    assert!(
        coverage.untested_checks.is_empty(),
        "{:?}",
        coverage.untested_checks
    );
}

#[test]
fn every_catalog_cause_exists_under_its_symptom_and_a_test_confirms_it() {
    let loaded = bundled();
    let kb = &loaded.kb;
    for (symptom, causes) in CATALOG {
        assert!(
            kb.symptoms.iter().any(|s| s.id == *symptom),
            "symptom {symptom} is missing"
        );
        for cause in *causes {
            let index = kb.causes.iter().position(|c| c.id == *cause);
            assert!(index.is_some(), "cause {cause} is missing");
            let Some(index) = index else { continue };
            let under: Vec<&str> = kb
                .symptoms_of(kb_engine::kb::CauseId(index))
                .into_iter()
                .map(|s| kb.symptoms[s.0].id.as_str())
                .collect();
            assert!(
                under.contains(symptom),
                "{cause} is not reached from {symptom}: {under:?}"
            );
            let tested = kb.tests().unwrap().iter().any(|test| {
                test.expects.iter().any(|e| {
                    matches!(e, kb_dsl::ast::Expect::Reported { id, status: kb_dsl::ast::ExpectedStatus::Confirmed } if id.name == *cause)
                })
            });
            assert!(tested, "no rule test confirms {cause}");
        }
    }
}

#[test]
fn the_embedded_knowledge_base_is_the_one_in_the_repository() {
    let embedded = Loaded::bundled().map_err(|e| format!("{e:?}")).unwrap();
    let on_disk = bundled();
    assert_eq!(embedded.kb.causes.len(), on_disk.kb.causes.len());
    assert_eq!(embedded.kb.tests().unwrap(), on_disk.kb.tests().unwrap());
    let outcomes = rule_tests::run(&embedded, None).unwrap();
    assert!(outcomes.iter().all(rule_tests::Outcome::passed));
}

#[test]
fn the_compiled_knowledge_base_built_in_is_that_of_the_rules_built_in() {
    let from_source = Loaded::bundled_from_source()
        .map_err(|e| format!("{e:?}"))
        .unwrap();
    let parts = from_source.kb.to_parts().unwrap();
    let (texts, rest) = knowledge::BUNDLED_PARTS;
    assert!(
        parts.texts == texts && parts.rest == rest,
        "kb embeds a stale compiled form"
    );
    parts.check().unwrap();
    let loaded = Loaded::bundled().map_err(|e| format!("{e:?}")).unwrap();
    assert!(loaded.kb.to_parts().unwrap() == parts);
}

#[test]
fn every_text_is_written_in_english_and_chinese() {
    let loaded = bundled();
    let kb = &loaded.kb;
    let mut missing = Vec::new();
    let mut need = |what: String, text: Option<&kb_engine::kb::LocalText>| {
        if let Some(text) = text
            && text.zh.as_deref().is_none_or(str::is_empty)
        {
            missing.push(what);
        }
    };
    for fact in &kb.facts {
        need(format!("fact {}", fact.name), Some(&fact.title));
        need(format!("fact {} explain", fact.name), fact.explain.as_ref());
    }
    for symptom in &kb.symptoms {
        need(format!("symptom {}", symptom.id), Some(&symptom.title));
        need(
            format!("symptom {} explain", symptom.id),
            symptom.explain.as_ref(),
        );
    }
    for check in &kb.checks {
        need(format!("check {}", check.id), Some(&check.title));
        need(
            format!("check {} explain", check.id),
            check.explain.as_ref(),
        );
    }
    for cause in &kb.causes {
        need(format!("cause {}", cause.id), Some(&cause.title));
        need(
            format!("cause {} explain", cause.id),
            cause.explain.as_ref(),
        );
        for fix in cause.fixes.iter() {
            need(format!("cause {} fix", cause.id), Some(&fix.title));
            for step in &fix.steps {
                need(
                    format!("cause {} step `{}`", cause.id, step.text.en),
                    Some(&step.text),
                );
                need(format!("cause {} risk", cause.id), step.risk.as_ref());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{} texts have no Chinese:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

#[test]
fn every_dangerous_step_carries_a_risk_warning() {
    let loaded = bundled();
    let dangerous = [
        "--force",
        "--grace-period=0",
        "chattr -i",
        "kubectl delete node",
        "systemctl restart kube-",
        "rm -rf",
        "/finalize",
    ];
    let removes_finalizers = |run: &str| {
        (run.contains("kubectl patch") || run.contains("kubectl edit"))
            && run.contains("finalizers")
    };
    let mut unflagged = Vec::new();
    for cause in &loaded.kb.causes {
        for step in cause.fixes.iter().flat_map(|f| &f.steps) {
            let Some(run) = &step.run else { continue };
            let harmful =
                dangerous.iter().any(|d| run.source.contains(d)) || removes_finalizers(&run.source);
            if harmful && step.risk.is_none() {
                unflagged.push(format!("{}: {}", cause.id, run.source));
            }
        }
    }
    assert!(
        unflagged.is_empty(),
        "dangerous steps without `risk`:\n{}",
        unflagged.join("\n")
    );
}
