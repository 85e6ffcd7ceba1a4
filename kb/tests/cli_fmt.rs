//! `kb fmt` through the built binary: rewriting, `--check`, comments, broken
//! files and missing paths, and the bundled rules being canonical already.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

use std::ffi::OsStr;
use std::fs;
use std::path::Path;

use tempfile::TempDir;

mod common;
use common::{finish, kb, run, run_stdin, workspace};

/// A rule file written every which way, with comments everywhere.
const MESSY: &str = r#"# Disk space.
input disk   "The output of `df`"
fact used: number "Used, in percent" { from disk.used_percent   # as df says
  gather "df -P /" }
symptom disk-full "Disk full" {
    when used >= 95 or ( disk.inodes >= 95 )
  # the only check
  check "Space?" { if used >= 95 => disk.space }
}
cause disk.space "Out of space" { fix "Free space" { step "Find big folders" run "du -xh / | sort -h" } }
test "full" { input {"disk": {"used_percent": 99}}
  expect disk.space }
# the end
"#;

/// [`MESSY`], formatted.
const TIDY: &str = r#"# Disk space.
input disk "The output of `df`"

fact used: number "Used, in percent" {
  from disk.used_percent  # as df says
  gather "df -P /"
}

symptom disk-full "Disk full" {
  when used >= 95 or disk.inodes >= 95
  # the only check
  check "Space?" {
    if used >= 95 => disk.space
  }
}

cause disk.space "Out of space" {
  fix "Free space" {
    step "Find big folders" run "du -xh / | sort -h"
  }
}

test "full" {
  input {"disk": {"used_percent": 99}}
  expect disk.space
}
# the end
"#;

/// A folder holding `files`.
fn folder(files: &[(&str, &str)]) -> TempDir {
    let dir = TempDir::new().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    dir
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_bundled_rules_and_the_good_corpus_are_formatted() {
    let rules = workspace().join("kb/rules");
    let corpus = workspace().join("tests/corpus/ok_minimal.kb");
    let result = run([
        OsStr::new("fmt"),
        OsStr::new("--check"),
        rules.as_os_str(),
        corpus.as_os_str(),
    ]);
    assert_eq!(result.code, 0, "{}{}", result.stdout, result.stderr);
    assert_eq!(result.stdout, "");
}

#[test]
fn fmt_rewrites_a_messy_file_once_and_then_leaves_it() {
    let dir = folder(&[("disk.kb", MESSY), ("fixtures/disk.json", "{ }")]);
    let file = dir.path().join("disk.kb");

    let first = run([OsStr::new("fmt"), dir.path().as_os_str()]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_eq!(first.stdout.trim(), file.display().to_string());
    assert_eq!(read(&file), TIDY);
    assert_eq!(read(&dir.path().join("fixtures/disk.json")), "{ }");
    let leftovers: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");

    let second = run([OsStr::new("fmt"), dir.path().as_os_str()]);
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert_eq!(second.stdout, "");
    assert_eq!(read(&file), TIDY);

    let check = run([OsStr::new("fmt"), OsStr::new("--check"), file.as_os_str()]);
    assert_eq!(check.code, 0);
    assert_eq!(check.stdout, "");
}

#[test]
fn windows_line_endings_are_kept() {
    // As git checks files out on Windows (`core.autocrlf`).
    let crlf = |text: &str| text.replace('\n', "\r\n");
    let dir = folder(&[("tidy.kb", &crlf(TIDY)), ("messy.kb", &crlf(MESSY))]);
    let check = run([
        OsStr::new("fmt"),
        OsStr::new("--check"),
        dir.path().as_os_str(),
    ]);
    assert_eq!(check.code, 1, "{}", check.stderr);
    let messy = dir.path().join("messy.kb");
    assert_eq!(check.stdout.trim(), messy.display().to_string());
    let result = run([OsStr::new("fmt"), dir.path().as_os_str()]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(read(&messy), crlf(TIDY));
    assert_eq!(read(&dir.path().join("tidy.kb")), crlf(TIDY));
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_stays_one_and_the_file_it_points_to_is_formatted() {
    let dir = folder(&[("shared/disk.kb", MESSY)]);
    let link = dir.path().join("disk.kb");
    std::os::unix::fs::symlink("shared/disk.kb", &link).unwrap();
    let result = run([OsStr::new("fmt"), link.as_os_str()]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(read(&dir.path().join("shared/disk.kb")), TIDY);
}

#[cfg(unix)]
#[test]
fn a_folder_linked_in_is_formatted_where_it_is() {
    let dir = folder(&[("shared/disk.kb", MESSY), ("rules/tidy.kb", TIDY)]);
    let link = dir.path().join("rules/shared");
    std::os::unix::fs::symlink("../shared", &link).unwrap();
    let rules = dir.path().join("rules");
    let check = run([OsStr::new("fmt"), OsStr::new("--check"), rules.as_os_str()]);
    assert_eq!(check.code, 1, "{}", check.stderr);
    assert_eq!(
        check.stdout.trim(),
        link.join("disk.kb").display().to_string()
    );
    let result = run([OsStr::new("fmt"), rules.as_os_str()]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(read(&dir.path().join("shared/disk.kb")), TIDY);
}

#[test]
fn standard_input_is_formatted_to_standard_output() {
    let out = run_stdin(["fmt", "-"], MESSY);
    assert_eq!((out.code, out.stdout.as_str()), (0, TIDY), "{}", out.stderr);
    assert_eq!(run_stdin(["fmt", "-"], TIDY).stdout, TIDY);
    let out = run_stdin(["fmt", "-"], MESSY.replace('\n', "\r\n"));
    assert_eq!(out.stdout, TIDY.replace('\n', "\r\n"));

    let check = run_stdin(["fmt", "--check", "-"], MESSY);
    assert_eq!((check.code, check.stdout.as_str()), (1, "<stdin>\n"));
    let check = run_stdin(["fmt", "--check", "-"], TIDY);
    assert_eq!((check.code, check.stdout.as_str()), (0, ""));
}

#[test]
fn standard_input_that_does_not_parse_is_written_back_as_it_came() {
    let broken = "fact used: { from disk.used_percent }\n# kept\n";
    let out = run_stdin(["fmt", "-"], broken);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert_eq!(out.stdout, broken);
    assert!(out.stderr.contains("<stdin>:1:12"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("`<stdin>` does not parse; it is written back as it came"),
        "{}",
        out.stderr
    );
    let check = run_stdin(["fmt", "--check", "-"], broken);
    assert_eq!((check.code, check.stdout.as_str()), (3, ""));
}

#[test]
fn standard_input_goes_alone() {
    let dir = folder(&[("messy.kb", MESSY)]);
    let out = run_stdin(
        [OsStr::new("fmt"), OsStr::new("-"), dir.path().as_os_str()],
        TIDY,
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr
            .contains("`-` (standard input) is formatted on its own")
    );
    assert_eq!(read(&dir.path().join("messy.kb")), MESSY);
}

#[test]
fn check_lists_what_would_change_and_changes_nothing() {
    let dir = folder(&[("a/messy.kb", MESSY), ("b/tidy.kb", TIDY)]);
    let messy = dir.path().join("a/messy.kb");

    let result = run([
        OsStr::new("fmt"),
        OsStr::new("--check"),
        dir.path().as_os_str(),
    ]);
    assert_eq!(result.code, 1, "{}", result.stderr);
    assert_eq!(result.stdout.trim(), messy.display().to_string());
    assert_eq!(read(&messy), MESSY, "--check changed the file");
}

#[test]
fn comments_survive_formatting() {
    let dir = folder(&[("disk.kb", MESSY)]);
    let file = dir.path().join("disk.kb");
    assert_eq!(run([OsStr::new("fmt"), file.as_os_str()]).code, 0);
    let formatted = read(&file);
    for comment in [
        "# Disk space.",
        "  # as df says",
        "  # the only check",
        "# the end",
    ] {
        assert!(
            formatted.contains(comment),
            "lost {comment:?}:\n{formatted}"
        );
    }
}

#[test]
fn a_file_that_does_not_parse_is_reported_and_the_others_are_still_formatted() {
    let broken =
        "input pod \"The Pod\"\n\nfact phase: strng \"The phase\" {\n  from pod.status.phase\n}\n";
    let dir = folder(&[("a-broken.kb", broken), ("b-messy.kb", MESSY)]);

    let result = run([OsStr::new("fmt"), dir.path().as_os_str()]);
    assert_eq!(result.code, 3, "{}", result.stderr);
    assert!(
        result.stderr.contains("a-broken.kb:3:13"),
        "no location:\n{}",
        result.stderr
    );
    assert!(result.stderr.contains("E0001"), "{}", result.stderr);
    assert_eq!(read(&dir.path().join("a-broken.kb")), broken);
    assert_eq!(read(&dir.path().join("b-messy.kb")), TIDY);
    assert!(result.stdout.contains("b-messy.kb"), "{}", result.stdout);
}

#[test]
fn a_missing_path_exits_2() {
    let dir = folder(&[("tidy.kb", TIDY)]);
    let missing = dir.path().join("nowhere");
    let result = run([OsStr::new("fmt"), missing.as_os_str()]);
    assert_eq!(result.code, 2, "{}", result.stderr);
    assert!(result.stderr.contains("nowhere"), "{}", result.stderr);

    let check = run([
        OsStr::new("fmt"),
        OsStr::new("--check"),
        missing.as_os_str(),
    ]);
    assert_eq!(check.code, 2, "{}", check.stderr);
}

#[test]
fn without_paths_fmt_formats_the_current_folder() {
    let dir = folder(&[("rules/disk.kb", MESSY)]);
    let result = finish(kb().arg("fmt").current_dir(dir.path()));
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert!(result.stdout.contains("disk.kb"), "{}", result.stdout);
    assert_eq!(read(&dir.path().join("rules/disk.kb")), TIDY);
}
