//! Hostile rule files and inputs, through the built binary: each gets a clear
//! error with a non-zero exit, or a correct answer; never a panic, a hang or
//! half-written output. (JSON inputs nested 100,000 deep, invalid UTF-8,
//! empty files, wrong types at every fact path and bad NDJSON lines are in
//! `cli.rs`; rules nested too deep to compile in `cli.rs` too.)

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "tests"
)]

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tempfile::TempDir;

mod common;

use common::{Run, assert_contains, line_col, run, write};

/// `kb check DIR` of one rule file.
fn check(rules: impl AsRef<[u8]>) -> (TempDir, Run) {
    let dir = TempDir::new().unwrap();
    write(&dir, "rules.kb", rules);
    let out = run([OsStr::new("check"), dir.path().as_os_str()]);
    (dir, out)
}

/// A file of `len` bytes that starts with `start`, the rest a hole: as
/// large as a limit needs, with nothing written to disk.
fn sparse(dir: &TempDir, name: &str, start: &str, len: u64) -> PathBuf {
    let path = write(dir, name, start);
    fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len)
        .unwrap();
    path
}

/// `kb --kb DIR ARGS`.
fn with_kb(kb: &Path, args: &[&OsStr]) -> Run {
    run([OsStr::new("--kb"), kb.as_os_str()].iter().chain(args))
}

/// `kb --kb DIR eval INPUT --format json`, parsed.
fn eval_json(kb: &Path, input: &Path) -> (Run, Value) {
    let out = with_kb(
        kb,
        &[
            "eval".as_ref(),
            input.as_ref(),
            "--format".as_ref(),
            "json".as_ref(),
        ],
    );
    let value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", out.stdout, out.stderr));
    (out, value)
}

/// `kb eval STREAM --format json`, each line of the output parsed.
fn eval_stream(stream: &Path) -> (Run, Vec<Value>) {
    let out = run([
        OsStr::new("eval"),
        stream.as_os_str(),
        OsStr::new("--format"),
        OsStr::new("json"),
    ]);
    let lines = json_lines(&out.stdout);
    (out, lines)
}

/// Each line of JSON output, parsed.
fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// `kb eval INPUT --format json`, stopped after two minutes: an input that
/// would take that long has hung it.
fn eval_json_or_hang(input: &Path) -> Run {
    common::finish(
        common::kb()
            .args([
                OsStr::new("eval"),
                input.as_os_str(),
                OsStr::new("--format"),
                OsStr::new("json"),
            ])
            .timeout(std::time::Duration::from_secs(120)),
    )
}

/// The JSON output of `kb eval`, one value or one a line, parsed.
fn json_values(stdout: &str) -> Vec<Value> {
    serde_json::Deserializer::from_str(stdout)
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn confirmed(diagnosis: &Value) -> Vec<&str> {
    diagnosis["causes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "confirmed")
        .map(|c| c["id"].as_str().unwrap())
        .collect()
}

/// A pod as `kubectl get pod -o json` prints it, with this name.
fn pod(name: &str, namespace: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": "5f1c9a52-8d1e-4a43-9a3c-6a1f0f7d2e11"},
        "spec": {"containers": [{"name": "app", "image": "registry.example.com/app:1.4.2"}]},
        "status": {"phase": "Running"}
    })
}

#[test]
fn facts_and_checks_that_lead_in_a_loop_are_errors_with_their_location() {
    const PHASE: &str =
        "input pod \"The pod\"\nfact phase: string \"Phase\" { from pod.status.phase }\n";
    let cases = [
        (
            "fact a: string \"A\" { from b }\nfact b: string \"B\" { from a }\n",
            "fact a:",
            "facts derive from each other in a loop: `a` → `b`",
        ),
        (
            "fact a: string \"A\" { from a }\n",
            "fact a:",
            "facts derive from each other in a loop: `a`",
        ),
        (
            r#"symptom pod-pending "Pending" {
  when phase == "Pending"
  check one "One?" { if phase == "x" => check two }
  check two "Two?" { if phase == "y" => check one }
}
"#,
            "check one",
            "checks lead back to themselves: `one` → `two`",
        ),
    ];
    for (rules, at, message) in cases {
        let text = format!("{PHASE}{rules}");
        let (dir, out) = check(&text);
        assert_eq!(out.code, 3, "{message}: {}", out.stderr);
        assert_contains(&out.stderr, "E0201");
        assert_contains(&out.stderr, message);
        let (line, column) = line_col(&text, at);
        assert_contains(&out.stderr, &format!("rules.kb:{line}:{column}"));
        // Evaluating with it says the same and writes no diagnosis.
        let input = write(&dir, "pod.json", pod("web", "default").to_string());
        let eval = with_kb(dir.path(), &["eval".as_ref(), input.as_ref()]);
        assert_eq!(eval.code, 3, "{}", eval.stderr);
        assert!(eval.stdout.is_empty(), "{}", eval.stdout);
        assert_contains(&eval.stderr, message);
    }
}

#[test]
fn rules_nested_ten_thousand_deep_are_errors_not_crashes() {
    let brackets = "(".repeat(10_000) + "pod.a == 1" + &")".repeat(10_000);
    let nots = "not ".repeat(10_000) + "pod.a == 1";
    for condition in [brackets, nots] {
        let (_dir, out) = check(format!(
            "input pod \"P\"\nfact a: bool \"A\" {{ from {condition} }}\n"
        ));
        assert_eq!(out.code, 3, "{}", out.stderr);
        assert_contains(&out.stderr, "E0002");
        assert_contains(&out.stderr, "nested more than 64 deep");
        assert_contains(&out.stderr, "the knowledge base has 1 error");
    }
}

#[test]
fn rule_files_that_are_empty_or_not_utf8() {
    let (_dir, out) = check("");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_contains(&out.stdout, "0 symptoms");

    let latin1 = b"input pod \"P\"\nfact a: string \"caf\xe9\" { from pod.a }\n";
    let (dir, out) = check(latin1);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert_contains(
        &out.stderr,
        "rules.kb` is not UTF-8 text: an invalid byte at line 2, column 20",
    );
    // `kb fmt` refuses it the same way, and leaves it as it was.
    let fmt = run([OsStr::new("fmt"), dir.path().as_os_str()]);
    assert_eq!(fmt.code, 2, "{}", fmt.stderr);
    assert_contains(&fmt.stderr, "not UTF-8");
    assert_eq!(fs::read(dir.path().join("rules.kb")).unwrap(), latin1);
}

#[test]
fn rule_files_larger_than_the_limit_are_refused_by_name() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("rules.kb");
    // Sparse, one byte over 64 MiB: nothing written, all of it to read.
    let over = (64 << 20) + 1;
    fs::File::create(&path).unwrap().set_len(over).unwrap();
    let out = run([OsStr::new("check"), dir.path().as_os_str()]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert_contains(
        &out.stderr,
        "rules.kb` is larger than 64 MiB, the most kb reads of one file; split it",
    );
    let fmt = run([OsStr::new("fmt"), path.as_os_str()]);
    assert_eq!(fmt.code, 2, "{}", fmt.stderr);
    assert_contains(&fmt.stderr, "rules.kb` is larger than 64 MiB");
    assert_eq!(fs::metadata(&path).unwrap().len(), over);

    // A rule file that never ends is refused the same way, not read
    // until memory runs out.
    #[cfg(unix)]
    {
        let endless = dir.path().join("endless.kb");
        std::os::unix::fs::symlink("/dev/zero", &endless).unwrap();
        let fmt = common::finish(
            common::kb()
                .args([
                    OsStr::new("fmt"),
                    OsStr::new("--check"),
                    endless.as_os_str(),
                ])
                .timeout(std::time::Duration::from_secs(120)),
        );
        assert_eq!(fmt.code, 2, "{}", fmt.stderr);
        assert_contains(&fmt.stderr, "endless.kb` is larger than 64 MiB");
    }
}

#[test]
fn an_enormous_string_literal_is_kept_whole() {
    let title = "Disk full. ".repeat(800_000).trim_end().to_string(); // 8.8 MB
    let rules = format!(
        r#"input pod "The pod"
fact phase: string "Phase" {{ from pod.status.phase }}
symptom pod-running "Running" {{
  when phase == "Running"
  check "Full?" {{ if phase == "Running" => disk.full }}
}}
cause disk.full "{title}" {{ fix "F" {{ step "S" }} }}
"#
    );
    let (dir, out) = check(&rules);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let input = write(&dir, "pod.json", pod("web", "default").to_string());
    let (out, diagnosis) = eval_json(dir.path(), &input);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let shown = diagnosis["causes"][0]["title"].as_str().unwrap_or_default();
    assert!(
        shown == title,
        "{} bytes shown of {}",
        shown.len(),
        title.len()
    );
    let site = dir.path().join("site");
    let docs = with_kb(
        dir.path(),
        &["docs".as_ref(), "--out".as_ref(), site.as_ref()],
    );
    assert_eq!(docs.code, 0, "{}", docs.stderr);
    let page = fs::read_to_string(site.join("en/causes/disk.full.md")).unwrap();
    assert!(page.contains(&title), "the title is on its page");
}

#[test]
fn an_error_on_an_enormous_line_is_shown_in_a_window_of_it() {
    // One line of a megabyte, in ASCII and in Chinese, with `\n` and `\r\n`
    // line ends, and a mistake far along it or on the short line after it.
    let cases = [
        (
            format!("symptom x \"{}\" {{ oops }}\n", "a".repeat(1_000_000)),
            "1:1000016",
        ),
        (
            format!("symptom x \"{}\" {{ oops }}\n", "磁盘".repeat(100_000)),
            "1:200016",
        ),
        (
            format!(
                "symptom x \"{}\" {{\r\n  oops }}\r\n",
                "a".repeat(1_000_000)
            ),
            "2:3",
        ),
    ];
    for (rules, position) in cases {
        let (_dir, out) = check(&rules);
        assert_eq!(out.code, 3, "{}", out.stderr);
        assert_contains(&out.stderr, &format!("rules.kb:{position}]"));
        assert_contains(
            &out.stderr,
            "expected `check`, `explain` or `when`, found `oops`",
        );
        assert_contains(&out.stderr, "the knowledge base has 1 error");
        assert!(
            out.stderr.len() < 2_000,
            "a snippet, not the whole line: {} bytes",
            out.stderr.len()
        );
    }
    // An enormous word where a keyword belongs: quoted by its start and length.
    let (dir, out) = check(format!(
        "symptom x \"t\" {{\n  {} }}\n",
        "whe".repeat(1_000_000)
    ));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(out.stderr.len() < 2_000, "{} bytes", out.stderr.len());
    let json = run([
        OsStr::new("check"),
        dir.path().as_os_str(),
        OsStr::new("--format"),
        OsStr::new("json"),
    ]);
    let problems: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(
        problems[0]["message"],
        format!(
            "expected `check`, `explain` or `when`, found `{}w…` (a word of 3000000 characters)",
            "whe".repeat(33)
        )
    );
}

#[test]
fn a_regex_that_would_explode_a_backtracking_engine_answers() {
    let dir = TempDir::new().unwrap();
    write(
        &dir,
        "rules.kb",
        r#"input pod "The pod"
fact name: string "Name" { from pod.metadata.name }
symptom pod-named "Named" {
  when name != ""
  check "Only a's?" {
    if name matches r"^(a+)+$" => name.only-a
    else => name.other
  }
}
cause name.only-a "Only a's" { fix "F" { step "S" } }
cause name.other "Other" { fix "F" { step "S" } }
"#,
    );
    // A backtracking engine tries 2^50,000 ways to split the a's before
    // the final `!` says no.
    let many = "a".repeat(50_000);
    for (name, cause) in [
        (format!("{many}!"), "name.other"),
        (many.clone(), "name.only-a"),
    ] {
        let input = write(&dir, "pod.json", pod(&name, "default").to_string());
        let (out, diagnosis) = eval_json(dir.path(), &input);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(confirmed(&diagnosis), [cause]);
    }
}

#[test]
fn template_syntax_in_rule_text_and_in_facts_is_shown_as_written() {
    let dir = TempDir::new().unwrap();
    write(
        &dir,
        "rules.kb",
        r#"input pod "The pod {{ pod }}"
fact name: string "Name {{ 7*7 }}" { from pod.metadata.name }
fact namespace: string "Namespace" { from pod.metadata.namespace }
symptom pod-odd "Odd {% if true %}x{% endif %}" {
  when name != ""
  check "Odd? {{ name }}" { if name != "" => odd.named }
}
cause odd.named "Named {{ 7*7 }}" {
  explain "Text with {# a comment #}, {{ name }} and {% raw %}"
  fix "Fix {{ name }}" { step "Look" run "kubectl get pod {{ name }} -n {{ namespace }}" }
}
"#,
    );
    let input = write(&dir, "pod.json", pod("x{{ 7*7 }}", "{% raw %}").to_string());
    let (out, diagnosis) = eval_json(dir.path(), &input);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        diagnosis["symptoms"][0]["title"],
        "Odd {% if true %}x{% endif %}"
    );
    let cause = &diagnosis["causes"][0];
    assert_eq!(cause["title"], "Named {{ 7*7 }}");
    assert_eq!(
        cause["explanation"],
        "Text with {# a comment #}, {{ name }} and {% raw %}"
    );
    assert_eq!(cause["fixes"][0]["title"], "Fix {{ name }}");
    // The rule's own placeholders are filled, with what the cluster says
    // quoted and never rendered.
    assert_eq!(
        cause["fixes"][0]["steps"][0]["command"],
        "kubectl get pod 'x{{ 7*7 }}' -n '{% raw %}'"
    );
    let text = with_kb(dir.path(), &["eval".as_ref(), input.as_ref()]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert_contains(&text.stdout, "Named {{ 7*7 }}");
    assert!(!text.stdout.contains("49"), "{}", text.stdout);

    for html in [false, true] {
        let site = dir.path().join(if html { "html" } else { "md" });
        let mut args = vec!["docs".as_ref(), "--out".as_ref(), site.as_os_str()];
        if html {
            args.push("--html".as_ref());
        }
        let docs = with_kb(dir.path(), &args);
        assert_eq!(docs.code, 0, "{}", docs.stderr);
        let name = if html {
            "en/causes/odd.named.html"
        } else {
            "en/causes/odd.named.md"
        };
        let page = fs::read_to_string(site.join(name)).unwrap();
        assert_contains(&page, "{{ name }}");
        assert_contains(&page, "{# a comment #}");
        assert_contains(&page, "{% raw %}");
        assert!(!page.contains("49"), "{page}");
    }
}

#[test]
fn ids_that_look_like_paths_are_refused_and_nothing_is_written() {
    let rules = r#"input pod "The pod"
fact phase: string "Phase" { from pod.status.phase }
symptom ../../etc/x "Pending" {
  when phase == "Pending"
  check "One?" { if phase == "Pending" => pending.one }
}
cause pending.one "One" { fix "F" { step "S" } }
"#;
    let (dir, out) = check(rules);
    assert_eq!(out.code, 3, "{}", out.stderr);
    let (line, column) = line_col(rules, "../../etc/x");
    assert_contains(&out.stderr, &format!("rules.kb:{line}:{column}"));
    assert_contains(&out.stderr, "expected an id, found `..`");
    assert_contains(
        &out.stderr,
        "an id is an ASCII letter, then letters, digits",
    );

    let site = dir.path().join("deep/er/site");
    let docs = with_kb(
        dir.path(),
        &["docs".as_ref(), "--out".as_ref(), site.as_ref()],
    );
    assert_eq!(docs.code, 3, "{}", docs.stderr);
    assert!(!dir.path().join("deep").exists());
    assert!(!dir.path().join("etc").exists());

    // Looked up by the bundled knowledge base, such an id is not found.
    for args in [
        vec!["explain", "../../etc/x"],
        vec!["eval", "--why-not", "../../etc/x", "-"],
    ] {
        let out = common::run_stdin(args, pod("web", "default").to_string());
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(out.stdout.is_empty(), "{}", out.stdout);
        assert_contains(&out.stderr, "`../../etc/x`");
    }
}

#[test]
fn inputs_larger_than_the_limit_are_refused_by_name_and_line() {
    let dir = TempDir::new().unwrap();
    let limit = 64 << 20;
    // A document of more than 64 MiB, read whole, is read: a cluster's
    // dump runs to hundreds of megabytes (here, a pod whose annotation is
    // huge).
    let mut huge = pod("web", "default");
    huge["metadata"]["annotations"] = json!({"note": "x".repeat(limit)});
    let path = write(
        &dir,
        "huge.json",
        serde_json::to_string_pretty(&huge).unwrap(),
    );
    let out = run([
        OsStr::new("eval"),
        path.as_os_str(),
        OsStr::new("--format"),
        OsStr::new("json"),
    ]);
    assert!(out.code < 2, "{}", out.stderr);
    let answer: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(answer["subject"], "pod default/web");

    // A file beyond 1 GiB is refused by name before it is read (sparse, one
    // byte over: nothing written to disk).
    let over = sparse(
        &dir,
        "over.json",
        "{\n  \"kind\": \"Pod\",\n",
        (1 << 30) + 1,
    );
    let out = run([OsStr::new("eval"), over.as_os_str()]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert_contains(
        &out.stderr,
        "over.json: larger than 1024 MiB, the most kb reads whole; split it, or give one object per line (NDJSON)",
    );

    // In NDJSON, a long line is refused in place, the second line (read
    // to tell a stream from a document) as any other; the lines around
    // them are answered.
    let huge = huge.to_string();
    let small = pod("web", "default").to_string();
    let path = write(
        &dir,
        "stream.ndjson",
        format!("{small}\n{huge}\n{small}\n{huge}\n{small}\n"),
    );
    let (out, lines) = eval_stream(&path);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(lines.len(), 5, "{}", out.stdout);
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(line["line"], i + 1, "{line}");
        if i % 2 == 0 {
            assert_eq!(line["subject"], "pod default/web", "{line}");
        } else {
            assert_eq!(line["error"], "a line longer than 64 MiB", "{line}");
        }
    }
    assert_contains(&out.stderr, "stream.ndjson:2: a line longer");
    assert_contains(&out.stderr, "stream.ndjson:4: a line longer");

    // Watched, documents one after another: those before the long one are
    // answered, and reading stops there, at 64 MiB.
    let path = write(&dir, "watched.json", format!("{small}\n{small}\n{huge}\n"));
    let out = run([
        OsStr::new("eval"),
        OsStr::new("--watch"),
        path.as_os_str(),
        OsStr::new("--format"),
        OsStr::new("json"),
    ]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 3, "{}", out.stdout);
    assert_eq!(lines[1]["subject"], "pod default/web");
    assert_eq!(
        lines[2],
        json!({"line": 3, "error": "a document larger than 64 MiB"})
    );
    assert_contains(&out.stderr, "watched.json:3: a document larger than 64 MiB");
}

#[test]
fn json_nested_100k_deep_in_a_rule_test_is_an_error_not_a_crash() {
    const RULES: &str = r#"input pod "The pod"
fact phase: string "Phase" { from pod.status.phase }
symptom pod-pending "Pending" {
  when phase == "Pending"
  check "Pending?" { if phase == "Pending" => pending.any }
}
cause pending.any "Any" { fix "F" { step "S" } }
"#;
    // Written inline, it is a rule error at its place.
    let deep = r#"{"pod": "#.repeat(100_000) + "1" + &"}".repeat(100_000);
    let inline = format!("{RULES}test \"deep\" {{\n  input {deep}\n  expect pod-pending\n}}\n");
    let (dir, out) = check(&inline);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert_contains(&out.stderr, "E0002");
    assert_contains(&out.stderr, "rules.kb:9:");

    // In a file it names, the test fails and says why.
    write(
        &dir,
        "deep.json",
        "[".repeat(100_000) + &"]".repeat(100_000),
    );
    write(
        &dir,
        "rules.kb",
        format!("{RULES}test \"deep\" {{\n  input \"deep.json\"\n  expect pod-pending\n}}\n"),
    );
    let out = run([OsStr::new("test"), dir.path().as_os_str()]);
    assert_eq!(out.code, 4, "{}\n{}", out.stdout, out.stderr);
    let report = format!("{}{}", out.stdout, out.stderr);
    assert_contains(
        &report,
        "`deep.json`: invalid JSON: recursion limit exceeded",
    );
}

#[test]
fn a_byte_order_mark_is_passed_over_and_utf16_is_refused_with_what_to_do() {
    let dir = TempDir::new().unwrap();
    let example_path = common::example("pending-insufficient-cpu.json");
    let example = fs::read_to_string(&example_path).unwrap();
    let plain = run([OsStr::new("eval"), example_path.as_os_str()]);
    assert_eq!(plain.code, 0, "{}", plain.stderr);

    // As Windows editors save it: the same diagnosis, from a file or stdin.
    let bom = write(&dir, "bom.json", format!("\u{feff}{example}"));
    let out = run([OsStr::new("eval"), bom.as_os_str()]);
    assert_eq!(
        (out.code, &out.stdout),
        (0, &plain.stdout),
        "{}",
        out.stderr
    );
    let out = common::run_stdin(["eval", "-"], format!("\u{feff}{example}"));
    assert_eq!(
        (out.code, &out.stdout),
        (0, &plain.stdout),
        "{}",
        out.stderr
    );
    // Watched, the document's line is given, the diagnosis the same.
    let out = run([OsStr::new("eval"), OsStr::new("--watch"), bom.as_os_str()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        plain.stdout.replacen("x2kqp\n", "x2kqp (line 1)\n", 1)
    );

    // A stream's first line too; a broken line is still found at its place.
    let pod = pod("web", "default").to_string();
    let stream = write(
        &dir,
        "bom.ndjson",
        format!("\u{feff}{pod}\n{{\"pod\": \n{pod}\n"),
    );
    let (out, subjects) = eval_stream(&stream);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(subjects[0]["subject"], "pod default/web", "{}", out.stdout);
    assert_eq!(subjects[2]["subject"], "pod default/web", "{}", out.stdout);
    assert_contains(&out.stderr, "bom.ndjson:2:");

    // A file a rule test reads.
    write(&dir, "kb/pod.json", format!("\u{feff}{pod}"));
    write(
        &dir,
        "kb/rules.kb",
        r#"input pod "The pod"
fact phase: string "Phase" { from pod.status.phase }
symptom pod-running "Running" {
  when phase == "Running"
  check "Running?" { if phase == "Running" => running.any }
}
cause running.any "Any" { fix "F" { step "S" } }
test "with a byte order mark" {
  input "pod.json"
  expect running.any
}
"#,
    );
    let out = run([OsStr::new("test"), dir.path().join("kb").as_os_str()]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);

    // UTF-16, as PowerShell's `>` writes kubectl's output: refused, saying
    // what it is and how to write UTF-8, for an input and a rule file alike.
    let utf16 = |text: &str| -> Vec<u8> {
        let mut bytes = vec![0xFF, 0xFE];
        bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        bytes
    };
    let path = write(&dir, "utf16.json", utf16(&example));
    let out = run([OsStr::new("eval"), path.as_os_str()]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert_contains(
        &out.stderr,
        "utf16.json: UTF-16 text, and kb reads UTF-8 (PowerShell's `>` writes UTF-16; `| Out-File -Encoding utf8` writes UTF-8)",
    );
    let out = run([OsStr::new("eval"), OsStr::new("-w"), path.as_os_str()]);
    assert_eq!((out.code, out.stdout.as_str()), (2, ""), "{}", out.stderr);
    assert_contains(&out.stderr, "utf16.json: UTF-16 text, and kb reads UTF-8");
    let rules = TempDir::new().unwrap();
    write(&rules, "rules.kb", utf16("input pod \"The pod\"\n"));
    let out = run([OsStr::new("check"), rules.path().as_os_str()]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert_contains(&out.stderr, "rules.kb` is UTF-16 text, and kb reads UTF-8");
}

/// A cluster's dump is often kept compressed: given as it is, it is refused
/// saying how to decompress it, from a file, standard input or a watch.
#[test]
fn a_compressed_input_is_refused_saying_how_to_decompress_it() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    for (extension, format, command) in [
        ("gz", "gzip", "gunzip -c"),
        ("zst", "zstd", "zstd -dc"),
        ("bz2", "bzip2", "bzip2 -dc"),
        ("xz", "xz", "xz -dc"),
    ] {
        let path = data.join(format!("crash-loop-oomkilled.json.{extension}"));
        let said = format!(
            "compressed with {format}, and kb reads JSON text: decompress it first (`{command}`)"
        );
        let out = run([OsStr::new("eval"), path.as_os_str()]);
        assert_eq!((out.code, out.stdout.as_str()), (2, ""), "{}", out.stderr);
        assert_contains(&out.stderr, &format!("{}: {said}", path.display()));
        let bytes = fs::read(&path).unwrap();
        for args in [&["eval"][..], &["eval", "--watch"], &["facts", "-"]] {
            let out = common::run_stdin(args, bytes.clone());
            assert_eq!(
                (out.code, out.stdout.as_str()),
                (2, ""),
                "{args:?}: {}",
                out.stderr
            );
            assert_contains(&out.stderr, &format!("<stdin>: {said}"));
        }
    }
}

/// What kubectl prints for people, and text that is neither JSON nor YAML,
/// is refused saying what kb reads.
#[test]
fn kubectl_s_output_for_people_is_refused_saying_what_kb_reads() {
    let reads = "kb reads `kubectl get … -o json` (or `-o yaml`)";
    let describe =
        "Name:             web-1\nNamespace:        default\nStatus:           Pending\n";
    let out = common::run_stdin(["eval", "-"], format!("\n{describe}"));
    assert_eq!((out.code, out.stdout.as_str()), (2, ""), "{}", out.stderr);
    assert_contains(
        &out.stderr,
        &format!(
            "<stdin>:2:1: invalid JSON: expected value; this is what `kubectl describe` prints, for people: {reads}"
        ),
    );
    for table in [
        "NAME    READY   STATUS    RESTARTS   AGE\nweb-1   0/1     Pending   0          5m\n",
        "LAST SEEN   TYPE      REASON             OBJECT      MESSAGE\n\
         2m          Warning   FailedScheduling   pod/web-1   0/3 nodes are available: 3 Insufficient cpu.\n",
    ] {
        let out = common::run_stdin(["eval", "-"], table);
        assert_eq!((out.code, out.stdout.as_str()), (2, ""), "{}", out.stderr);
        assert_contains(
            &out.stderr,
            &format!("this is the table `kubectl get` prints, for people: {reads}"),
        );
    }
    let out = common::run_stdin(["eval", "-"], "pod web-1 is pending\n");
    assert_eq!(out.code, 2);
    assert_contains(
        &out.stderr,
        "<stdin>:1:1: invalid JSON: expected value; kb reads JSON or YAML, as `kubectl get … -o json` or `-o yaml` prints it",
    );

    // JSON broken further on is only said to be invalid, where it is.
    let out = common::run_stdin(["eval", "-"], "{\"pod\": {\"status\": Pending}}\n");
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_contains(&out.stderr, "<stdin>:1:20: invalid JSON: expected value");
    assert!(!out.stderr.contains("kb reads JSON"), "{}", out.stderr);
}

/// YAML that does not parse, nests deeper than JSON may, or multiplies
/// itself through aliases is refused where it fails; under `--watch`, where
/// a YAML document's end shows only when the next one starts, YAML is
/// refused for JSON.
#[test]
fn broken_deep_or_self_multiplying_yaml_is_refused_where_it_fails() {
    let dir = TempDir::new().unwrap();
    let broken = write(
        &dir,
        "pod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: [web-1\n",
    );
    let flow = write(
        &dir,
        "flow.yaml",
        format!("pod: {}{}\n", "[".repeat(100_000), "]".repeat(100_000)),
    );
    let block: String = (0..5_000)
        .map(|depth| format!("{}k{depth}:\n", " ".repeat(depth)))
        .collect();
    let block = write(&dir, "block.yaml", block);
    let mut aliases = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for (name, previous) in ["b", "c", "d", "e", "f", "g", "h", "i"]
        .iter()
        .zip(["a", "b", "c", "d", "e", "f", "g", "h"])
    {
        let repeated = vec![format!("*{previous}"); 10].join(", ");
        aliases.push_str(&format!("{name}: &{name} [{repeated}]\n"));
    }
    let aliases = write(&dir, "aliases.yaml", aliases);
    for (path, said) in [
        (&broken, "pod.yaml:4:9: invalid YAML: unclosed bracket '['"),
        (
            &flow,
            "flow.yaml:1:261: invalid YAML: recursion limit exceeded",
        ),
        (
            &block,
            "block.yaml:129:129: invalid YAML: nested deeper than 128 levels",
        ),
        (
            &aliases,
            "aliases.yaml:5:36: invalid YAML: its aliases (`*name`) repeat more than kb reads; \
             kubectl writes none",
        ),
    ] {
        let out = run([OsStr::new("eval"), path.as_os_str()]);
        assert_eq!((out.code, out.stdout.as_str()), (2, ""), "{}", out.stderr);
        assert_contains(&out.stderr, said);
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    }
    // YAML beyond 256 MiB is refused before it is read (sparse: nothing
    // written to disk), pointing to JSON.
    let over = sparse(
        &dir,
        "over.yaml",
        "apiVersion: v1\nkind: Pod\n",
        (256 << 20) + 1,
    );
    let out = run([OsStr::new("eval"), over.as_os_str()]);
    assert_eq!((out.code, out.stdout.as_str()), (2, ""), "{}", out.stderr);
    assert_contains(
        &out.stderr,
        "over.yaml: YAML larger than 256 MiB, the most kb reads of it (it takes about seven times \
         its size in memory); give it as JSON (`-o json`), read up to 1024 MiB keeping what the \
         rules read",
    );
    // Under `--watch`: YAML read as it starts (a `---` first, indented), not
    // after JSON; a document beyond 64 MiB (sparse: one line of zeros).
    for (yaml, line) in [("---\nkind: Pod\n", 2), ("# Source: web\n  kind: Pod\n", 1)] {
        let out = common::run_stdin(["eval", "--watch", "-", "--format", "json"], yaml);
        assert_eq!(out.code, 1, "{}", out.stderr);
        assert_eq!(json_values(&out.stdout)[0]["line"], line, "{}", out.stdout);
    }
    let out = common::run_stdin(
        ["eval", "--watch", "-"],
        "{\"kind\": \"Pod\"}\napiVersion: v1\nkind: Pod\n",
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_contains(
        &out.stderr,
        "<stdin>:2: YAML after JSON: `--watch` reads what `kubectl get -w` prints with `-o json` \
         or with `-o yaml`, not both",
    );
    let over = sparse(&dir, "over-64.yaml", "kind: Pod\n---\n", 65 << 20);
    let out = run([OsStr::new("eval"), OsStr::new("--watch"), over.as_os_str()]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_contains(&out.stderr, "over-64.yaml:3: a document larger than 64 MiB");
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
}

/// What the API server answers when a request fails (`kubectl get --raw`,
/// curl, a watch's `ERROR` event) is said to be that, with its message,
/// whichever way it is read.
#[test]
fn an_error_the_api_server_answered_is_shown_with_its_message() {
    let not_found = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "pods \"web-1\" not found", "reason": "NotFound",
        "details": {"name": "web-1", "kind": "pods"}, "code": 404
    });
    let said = "the input is the API server's answer to a request, a `Status`, not an object to \
                diagnose: pods \"web-1\" not found (NotFound, 404)";
    let out = common::run_stdin(["eval"], serde_json::to_string_pretty(&not_found).unwrap());
    assert_eq!((out.code, out.stdout.as_str()), (2, ""), "{}", out.stderr);
    assert_contains(&out.stderr, said);
    // A line of a stream, read keeping only what the rules use, says the
    // same, and the lines around it are answered.
    let dir = TempDir::new().unwrap();
    let line = |value: &Value| serde_json::to_string(value).unwrap();
    let stream = write(
        &dir,
        "stream.ndjson",
        format!(
            "{}\n{}\n{}\n",
            line(&json!({"pod": pod("web-0", "shop")})),
            line(&not_found),
            line(&json!({"pod": pod("web-2", "shop")}))
        ),
    );
    let (out, lines) = eval_stream(&stream);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(lines.len(), 3, "{}", out.stdout);
    assert_contains(
        &lines[1]["error"].to_string(),
        "pods \\\"web-1\\\" not found (NotFound, 404)",
    );
    assert_eq!(lines[2]["subject"], "pod shop/web-2");
    // A watch that expired.
    let expired = json!({"type": "ERROR", "object": {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "too old resource version: 1043 (5201)", "reason": "Expired", "code": 410
    }});
    let out = common::run_stdin(["eval", "--watch"], line(&expired));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_contains(
        &out.stderr,
        "too old resource version: 1043 (5201) (Expired, 410)",
    );
}

/// A pod written by the Kubernetes Python client's `to_dict()` (names in
/// snake case, times as Python prints them) is refused rather than misread:
/// read with the API's names, it looked unscheduled, its `node_name` and
/// `container_statuses` unseen.
#[test]
fn objects_written_by_the_python_client_s_to_dict_are_refused() {
    let pod = json!({
        "api_version": "v1", "kind": "Pod",
        "metadata": {"annotations": null, "creation_timestamp": "2024-06-01 05:59:08+00:00",
            "name": "web-1", "namespace": "shop", "owner_references": null,
            "uid": "a2b5b498-5cb8-5aed-f5f6-2c976efb63b1"},
        "spec": {"containers": [{"image": "nginx:1.25", "image_pull_policy": "IfNotPresent", "name": "web"}],
            "node_name": "node-1", "restart_policy": "Always"},
        "status": {"container_statuses": [{"container_id": null, "image": "nginx:1.25",
            "name": "web", "ready": false, "restart_count": 0, "started": false,
            "state": {"running": null, "terminated": null, "waiting": {
                "message": "Back-off pulling image \"nginx:1.25\"", "reason": "ImagePullBackOff"}}}],
            "phase": "Pending"}
    });
    let said = "the objects have names in snake case (`api_version`), as the Kubernetes Python \
                client's `to_dict()` writes them, and kb reads the API's names (`apiVersion`): \
                write them with `ApiClient().sanitize_for_serialization(obj)`, or as kubectl prints them";
    for input in [
        pod.clone(),
        json!({"pod": pod}),
        json!({"kind": "List", "items": [pod]}),
    ] {
        let out = common::run_stdin(["eval"], serde_json::to_string_pretty(&input).unwrap());
        assert_eq!((out.code, out.stdout.as_str()), (2, ""), "{}", out.stderr);
        assert_contains(&out.stderr, said);
    }
    // Each line of a stream, read keeping only what the rules read.
    let dir = TempDir::new().unwrap();
    let line = serde_json::to_string(&json!({"pod": pod})).unwrap();
    let stream = write(&dir, "pods.ndjson", format!("{line}\n{line}\n"));
    let (out, lines) = eval_stream(&stream);
    assert_eq!((out.code, lines.len()), (2, 2), "{}", out.stderr);
    for line in &lines {
        assert_eq!(line["error"], said, "{line}");
    }
}

/// What kubectl says on stderr, mixed into its output by `2>&1`, is named as
/// such: alone, before a watched document, and between a stream's lines;
/// one error for each of its lines, and what follows is still read.
#[test]
fn kubectl_s_messages_mixed_into_its_output_are_named() {
    let said = "this is kubectl's message, not its JSON: ";
    let not_found = "Error from server (NotFound): pods \"web-1\" not found";
    let out = common::run_stdin(["eval"], format!("{not_found}\n"));
    assert_eq!((out.code, out.stdout.as_str()), (2, ""), "{}", out.stderr);
    assert_contains(
        &out.stderr,
        &format!(
            "<stdin>:1:1: invalid JSON: expected value; {said}`{not_found}` (kubectl writes its \
             errors and warnings to stderr, which `2>&1` mixes in)"
        ),
    );

    let warning =
        "Warning: policy/v1beta1 PodSecurityPolicy is deprecated in v1.21+, unavailable in v1.25+";
    let watched = format!(
        "{warning}\n{}\n",
        serde_json::to_string_pretty(&pod("web-1", "shop")).unwrap()
    );
    let out = common::run_stdin(["eval", "--watch", "--format", "json"], watched);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let errors: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(
        errors,
        [format!(
            "error: <stdin>:1: column 1: invalid JSON: expected value; {said}`{warning}` (kubectl \
             writes its errors and warnings to stderr, which `2>&1` mixes in)"
        )],
        "one error for the line, not one for each of its words"
    );
    let results = json_lines(&out.stdout);
    assert_eq!(results.len(), 2, "{}", out.stdout);
    assert_eq!(results[0]["line"], 1);
    assert_eq!(results[1]["subject"], "pod shop/web-1");

    let dir = TempDir::new().unwrap();
    let line = |name: &str| serde_json::to_string(&json!({"pod": pod(name, "shop")})).unwrap();
    let stream = write(
        &dir,
        "stream.ndjson",
        format!("{}\n{warning}\n{}\n", line("web-0"), line("web-2")),
    );
    let (out, lines) = eval_stream(&stream);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(lines.len(), 3, "{}", out.stdout);
    assert_contains(
        lines[1]["error"].as_str().unwrap(),
        &format!("{said}`{warning}`"),
    );
    assert_eq!(lines[2]["subject"], "pod shop/web-2");

    // Text that is not JSON and not kubectl's is only said to be invalid.
    let out = common::run_stdin(["eval", "--watch"], "pod web-1 is pending\nstill pending\n");
    assert_eq!(out.code, 2);
    assert_eq!(out.stderr.lines().count(), 2, "{}", out.stderr);
    assert!(!out.stderr.contains(said), "{}", out.stderr);
}

/// A document that holds nothing the rules read gets no symptom, not a guess:
/// a fact that is false when its input is missing (no node given, so no lost
/// node) is known, but says nothing about the document. A node that stopped
/// reporting, given alone, still speaks for the pods that may be on it.
#[test]
fn a_document_holding_nothing_the_rules_read_gets_no_symptom() {
    let eval = |document: String| {
        let out = common::run_stdin(["eval", "-", "--format", "json"], document);
        let diagnosis: Value = serde_json::from_str(&out.stdout).expect(&out.stderr);
        (out.code, diagnosis)
    };
    let index_entry =
        r#"{"file": "01-istio-pilot.json", "why": "all 3 nodes have Insufficient memory"}"#;
    for document in ["{}", index_entry] {
        let (code, diagnosis) = eval(document.to_owned());
        assert_eq!(code, 1, "{document}: {diagnosis}");
        assert_eq!(diagnosis["symptoms"], json!([]), "{document}");
        assert_eq!(diagnosis["causes"], json!([]), "{document}");
    }

    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("rules/fixtures/unknown/daemonset-node-lost.json");
    let bundle: Value = serde_json::from_str(&fs::read_to_string(fixture).unwrap()).unwrap();
    let (code, diagnosis) = eval(json!({ "node": bundle["node"] }).to_string());
    assert_eq!(code, 0, "{diagnosis}");
    assert_eq!(diagnosis["symptoms"][0]["id"], "pod-unknown", "{diagnosis}");
    assert_eq!(
        diagnosis["symptoms"][0]["status"], "possible",
        "{diagnosis}"
    );
}

/// Every command's output, written where it cannot be: `/dev/full` (a full
/// disk) is an error and exit 2, never a panic nor a success with the
/// output lost; a reader that goes away (`| head`) ends it quietly.
#[cfg(target_os = "linux")]
#[test]
fn output_that_cannot_be_written_is_an_error_and_a_reader_gone_is_not() {
    use std::process::{Command, Stdio};

    let dir = TempDir::new().unwrap();
    let example = common::example("pending-insufficient-cpu.json");
    let example = example.to_str().unwrap();
    let rules = common::workspace().join("kb/rules");
    let rules = rules.to_str().unwrap();
    let site = dir.path().join("site");
    let project = dir.path().join("project");
    let unformatted = write(&dir, "messy.kb", "fact  x : string \"X\" { from pod.a }\n");
    let commands: [Vec<&str>; 12] = [
        vec!["eval", example],
        vec!["eval", example, "--format", "json"],
        vec!["facts", example],
        vec!["explain", "pod-pending"],
        vec!["check", rules],
        vec!["check", rules, "--format", "json"],
        vec!["test", rules, "--coverage"],
        vec!["graph"],
        vec!["docs", "--out", site.to_str().unwrap()],
        vec!["init", project.to_str().unwrap()],
        vec!["fmt", unformatted.to_str().unwrap()],
        vec!["fmt", "-"],
    ];
    let kb = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_kb"));
        command
            .args(args)
            .env("KB_CACHE_DIR", "")
            .stdin(Stdio::null());
        if args == ["fmt", "-"] {
            command.stdin(fs::File::open(&unformatted).unwrap());
        }
        command
    };
    for args in &commands {
        let full = fs::File::options().write(true).open("/dev/full").unwrap();
        let out = kb(args)
            .stdout(full)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_contains(&stderr, "cannot write the output: No space left on device");
    }
    fs::remove_dir_all(&site).unwrap();
    fs::remove_dir_all(&project).unwrap();
    for args in &commands {
        let mut child = kb(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes before anything is read.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code().is_some_and(|code| code < 2),
            "{args:?}: {stderr}"
        );
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}

/// Keys the knowledge base does not know, enormous or countless, read whole
/// or as a stream's lines: the first twenty are named, an enormous one by its
/// start and length, the rest counted; each named key is compared with every
/// name for a suggestion, so the rest cost nothing more.
#[test]
fn enormous_or_countless_unknown_keys_are_named_briefly_and_counted() {
    let mut document = serde_json::Map::new();
    document.insert("a".repeat(4 << 20), json!(1));
    for i in 0..100_000 {
        document.insert(format!("unknown-{i:06}"), json!(i));
    }
    document.insert("phase".into(), json!("Pending"));
    let line = Value::Object(document).to_string();
    let dir = TempDir::new().unwrap();
    let whole = write(&dir, "document.json", &line);
    let stream = write(&dir, "stream.ndjson", format!("{line}\n{line}\n"));
    for input in [&whole, &stream] {
        let out = eval_json_or_hang(input);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let diagnoses = json_values(&out.stdout);
        assert_eq!(diagnoses.len(), if *input == whole { 1 } else { 2 });
        for diagnosis in diagnoses {
            let symptoms = diagnosis["symptoms"].as_array().unwrap();
            assert!(
                symptoms.iter().any(|s| s["id"] == "pod-pending"),
                "{symptoms:?}"
            );
            let warnings: Vec<&str> = diagnosis["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_str().unwrap())
                .collect();
            assert_eq!(warnings.len(), 21, "{input:?}");
            assert_eq!(
                warnings[0],
                format!(
                    "ignored `{}…` (a key of 4194304 characters): not an input or fact of \
                     this knowledge base",
                    "a".repeat(100)
                )
            );
            assert_eq!(
                warnings[1],
                "ignored `unknown-000000`: not an input or fact of this knowledge base"
            );
            assert_eq!(
                warnings[20],
                "ignored 99981 more keys that are not inputs or facts of this knowledge base"
            );
        }
    }
}

/// Objects kb does not diagnose, of countless kinds, and watch events saying
/// countless objects were deleted: each pod is told of its own deletion, and
/// of the others' in one warning naming ten and counting the rest; the kinds
/// left out are named and counted the same way.
#[test]
fn countless_kinds_left_out_or_objects_deleted_are_named_briefly() {
    let deleted = |object: Value| json!({"type": "DELETED", "object": object});
    let mut events: Vec<Value> = (0..3_000)
        .map(|i| deleted(pod(&format!("web-{i}"), "shop")))
        .collect();
    events.extend((0..20).map(|i| {
        deleted(json!({
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": format!("web-{i}.17a"), "namespace": "shop"},
            "involvedObject": {"kind": "Pod", "name": format!("web-{i}"), "namespace": "shop"},
            "reason": "Killing",
            "message": "Stopping container web"
        }))
    }));
    let mut items: Vec<Value> = (0..100_000)
        .map(|i| {
            json!({"apiVersion": "example.com/v1", "kind": format!("Widget{i}"),
                        "metadata": {"name": "w", "namespace": "shop"}})
        })
        .collect();
    items.push(pod("api-0", "shop"));
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items});

    let dir = TempDir::new().unwrap();
    let inputs = [
        write(&dir, "events.json", Value::Array(events).to_string()),
        write(&dir, "list.json", list.to_string()),
    ];
    let [events, list] = inputs.each_ref().map(|input| {
        let out = eval_json_or_hang(input);
        assert!(out.code < 2, "{}", out.stderr);
        json_values(&out.stdout)
    });

    assert_eq!(events.len(), 3_000);
    for subject in &events {
        let name = subject["subject"].as_str().unwrap();
        assert_eq!(
            subject["warnings"],
            json!([
                format!("a watch event says `{name}` was deleted: this is its last state"),
                "watch events say 20 objects were deleted (`event shop/web-0.17a`, \
                 `event shop/web-1.17a`, `event shop/web-2.17a`, `event shop/web-3.17a`, \
                 `event shop/web-4.17a`, `event shop/web-5.17a`, `event shop/web-6.17a`, \
                 `event shop/web-7.17a`, `event shop/web-8.17a`, `event shop/web-9.17a`, \
                 and 10 more): this is their last state"
            ]),
            "{name}"
        );
    }
    assert_eq!(list.len(), 1);
    assert_eq!(
        list[0]["warnings"],
        json!([
            "left out 100000 objects kb does not diagnose (Widget0, Widget1, Widget2, Widget3, \
             Widget4, Widget5, Widget6, Widget7, Widget8, Widget9, and 99990 more kinds): it \
             reads Pods, their Events, Nodes and Namespaces, and the pods' owners"
        ])
    );
}

/// A ReplicaSet of many pods has an event for each pod it created, and a
/// cluster's dump gives each pod its owner's events: each subject gets the
/// newest thousand, whatever order they come in, and a warning saying how
/// many older ones were left out.
#[test]
fn a_subject_s_events_beyond_a_thousand_are_its_newest() {
    let replicaset = json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web-7d9", "namespace": "shop", "uid": "rs-uid"},
        "spec": {"replicas": 3},
        "status": {"replicas": 3}
    });
    let event = |i: usize, reason: &str, message: String| {
        let time = format!(
            "2026-11-28T{:02}:{:02}:{:02}Z",
            i / 3600,
            i / 60 % 60,
            i % 60
        );
        json!({
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": format!("web-7d9.{i}"), "namespace": "shop"},
            "involvedObject": {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                               "name": "web-7d9", "namespace": "shop", "uid": "rs-uid"},
            "reason": reason,
            "message": message,
            "type": if reason == "FailedCreate" { "Warning" } else { "Normal" },
            "firstTimestamp": time,
            "lastTimestamp": time,
            "count": 1
        })
    };
    let failed = |i: usize| {
        event(
            i,
            "FailedCreate",
            format!(
                "Error creating: pods \"web-7d9-{i}\" is forbidden: exceeded quota: compute, \
             requested: pods=1, used: pods=10, limited: pods=10"
            ),
        )
    };
    let created = |i: usize| event(i, "SuccessfulCreate", format!("Created pod: web-7d9-{i}"));
    let create_errors = |failed_first: bool| {
        let mut items = vec![replicaset.clone()];
        for i in 0..3 {
            let mut pod = pod(&format!("web-7d9-p{i}"), "shop");
            pod["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1",
                "kind": "ReplicaSet", "name": "web-7d9", "uid": "rs-uid", "controller": true}]);
            items.push(pod);
        }
        // 1,500 events, newest first: the 500 failures are the oldest or the newest.
        items.extend((0..1_500).rev().map(|i| match (i < 500) == failed_first {
            true => failed(i),
            false => created(i),
        }));
        let out = common::run_stdin(
            ["facts", "-", "--json"],
            json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string(),
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        let subjects = json_values(&out.stdout);
        assert_eq!(subjects.len(), 3);
        subjects
            .iter()
            .map(|subject| {
                assert_eq!(
                    subject["warnings"],
                    json!([
                        "left out the 500 oldest of the 1500 events about it: kb reads the \
                            newest 1000"
                    ])
                );
                let facts = subject["facts"].as_array().unwrap();
                let errors = facts.iter().find(|f| f["name"] == "owner_create_errors");
                errors.unwrap()["value"].as_array().unwrap().len()
            })
            .collect::<Vec<usize>>()
    };
    assert_eq!(
        create_errors(true),
        [0, 0, 0],
        "the oldest failures left out"
    );
    assert!(
        create_errors(false).iter().all(|&n| n > 0),
        "the newest failures kept"
    );
}
