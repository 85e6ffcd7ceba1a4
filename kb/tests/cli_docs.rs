//! End-to-end tests of `kb docs` and of `kb facts`' failures, run on the built binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "tests"
)]

use std::path::Path;

mod common;

#[test]
fn docs_writes_both_books_and_an_html_site() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    let run = common::run(["docs", "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("wrote "), "{}", run.stdout);
    for page in [
        "en/index.md",
        "zh/index.md",
        "en/symptoms/pod-pending.md",
        "zh/causes/crash.oom-limit.md",
        "en/SUMMARY.md",
        "README.md",
    ] {
        assert!(out.join(page).is_file(), "no {page}");
    }
    // The index lists the symptoms in a table whose columns are named.
    for (lang, header) in [("en", "| Symptom | Id |"), ("zh", "| 症状 | ID |")] {
        let index = std::fs::read_to_string(out.join(lang).join("index.md")).unwrap();
        assert!(
            index.contains(&format!("{header}\n|---|---|\n| [")),
            "{index}"
        );
    }
    // A cause's page shows the values its tests compared, not a whole object
    // too long to read (a node affinity, a container's status).
    for page in std::fs::read_dir(out.join("en/causes")).unwrap() {
        let text = std::fs::read_to_string(page.unwrap().path()).unwrap();
        for line in text
            .lines()
            .filter(|l| l.starts_with("- ") && l.contains(" = `{"))
        {
            assert!(line.chars().count() < 240, "{line}");
        }
    }
    let html = dir.path().join("html");
    let run = common::run([
        "docs",
        "--out",
        html.to_str().unwrap(),
        "--html",
        "--lang",
        "zh",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let page = std::fs::read_to_string(html.join("zh/symptoms/pod-pending.html")).unwrap();
    assert!(
        page.contains("<svg") && page.contains("Pod 一直处于 Pending"),
        "{page}"
    );
    assert!(!html.join("en").exists(), "--lang zh writes Chinese only");
}

#[test]
fn docs_with_a_template_override_uses_it_and_refuses_unknown_names() {
    let dir = tempfile::tempdir().unwrap();
    let theme = dir.path().join("theme");
    std::fs::create_dir(&theme).unwrap();
    std::fs::write(
        theme.join("facts.md.j2"),
        "# {{ book.facts | length }} facts\n",
    )
    .unwrap();
    let out = dir.path().join("site");
    let run = common::run([
        "docs",
        "--out",
        out.to_str().unwrap(),
        "--templates",
        theme.to_str().unwrap(),
        "--lang",
        "en",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let facts = std::fs::read_to_string(out.join("en/facts.md")).unwrap();
    assert!(
        facts.ends_with(" facts\n") && facts.starts_with("# "),
        "{facts}"
    );

    std::fs::write(theme.join("fact.md.j2"), "typo").unwrap();
    let again = dir.path().join("again");
    let run = common::run([
        "docs",
        "--out",
        again.to_str().unwrap(),
        "--templates",
        theme.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("`fact.md.j2` overrides no template"),
        "{}",
        run.stderr
    );
    assert!(!again.exists(), "a failed run writes nothing");
}

#[test]
fn docs_never_replaces_a_folder_it_did_not_write() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "mine").unwrap();
    let mine = dir.path().join("docs");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("design.md"), "mine too").unwrap();

    // The current folder, and a folder of the user's: refused, untouched.
    let here = common::finish(
        common::kb()
            .args(["docs", "--out", "."])
            .current_dir(dir.path()),
    );
    assert_eq!(here.code, 2, "{}", here.stderr);
    common::assert_contains(&here.stderr, "it holds the current folder");
    let theirs = common::run(["docs", "--out", mine.to_str().unwrap()]);
    assert_eq!(theirs.code, 2, "{}", theirs.stderr);
    common::assert_contains(
        &theirs.stderr,
        "it holds files `kb docs` did not write; give a new or empty folder",
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.md")).unwrap(),
        "mine"
    );
    assert_eq!(
        std::fs::read_to_string(mine.join("design.md")).unwrap(),
        "mine too"
    );
    assert!(!mine.join("en").exists());

    // A site it wrote is replaced whole: Markdown, then HTML in its place.
    let site = dir.path().join("site");
    for html in [false, true] {
        let mut args = vec!["docs", "--out", site.to_str().unwrap()];
        args.extend(html.then_some("--html"));
        let run = common::run(args);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    assert!(site.join("en/symptoms/pod-pending.html").is_file());
    assert!(!site.join("en/symptoms/pod-pending.md").exists());
}

#[test]
fn a_failed_docs_run_leaves_the_previous_site_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("keep.md"), "previous").unwrap();
    let theme = dir.path().join("theme");
    std::fs::create_dir(&theme).unwrap();
    std::fs::write(theme.join("index.md.j2"), "{% if %}").unwrap();
    let run = common::run([
        "docs",
        "--out",
        out.to_str().unwrap(),
        "--templates",
        theme.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 2);
    assert_eq!(
        std::fs::read_to_string(out.join("keep.md")).unwrap(),
        "previous"
    );
    let missing = common::run([
        "docs",
        "--out",
        out.to_str().unwrap(),
        "--templates",
        "/nonexistent/theme",
    ]);
    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.contains("/nonexistent/theme"),
        "{}",
        missing.stderr
    );
}

#[test]
fn docs_of_a_broken_knowledge_base_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.kb"), "symptom s \"S\" { wen x }\n").unwrap();
    let out = dir.path().join("site");
    let run = common::run([
        "docs",
        "--kb",
        dir.path().to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 3);
    assert!(run.stderr.contains("bad.kb:1:17"), "{}", run.stderr);
    assert!(!out.exists());
}

#[test]
fn facts_of_bad_input_exits_2_with_the_position() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"pod\": {\"metadata\": }").unwrap();
    let run = common::run(["facts", bad.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("bad.json:1:"), "{}", run.stderr);
    let missing = common::run(["facts", "/nonexistent.json"]);
    assert_eq!(missing.code, 2);
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/crash-loop-oomkilled.json");
    let ok = common::run(["facts", example.to_str().unwrap()]);
    assert_eq!(ok.code, 0);
    assert!(ok.stdout.contains("termination_reason") && ok.stdout.contains("\"OOMKilled\""));
}
