//! End-to-end tests of compiled knowledge bases kept between runs
//! (`KB_CACHE_DIR`): a folder's rules loaded from the cache answer as they
//! do compiled, and a cache that is stale, damaged or cannot be written
//! never changes an answer.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "tests"
)]

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use tempfile::TempDir;

mod common;
use common::{Run, example, finish, kb, workspace, write};

/// A copy of the bundled rule folder (rule files, `kb.toml`, fixtures), to
/// change at will.
fn bundled_copy() -> TempDir {
    let dir = TempDir::new().unwrap();
    let rules = workspace().join("kb/rules");
    for entry in walkdir::WalkDir::new(&rules) {
        let entry = entry.unwrap();
        let to = dir.path().join(entry.path().strip_prefix(&rules).unwrap());
        if entry.file_type().is_dir() {
            fs::create_dir_all(&to).unwrap();
        } else {
            fs::copy(entry.path(), &to).unwrap();
        }
    }
    dir
}

/// A copy of the bundled rules, and the OOM-killed example diagnosed with
/// them: `kb --kb COPY eval EXAMPLE`.
struct Case {
    rules: TempDir,
    oom: PathBuf,
}

impl Case {
    fn new() -> Self {
        Self {
            rules: bundled_copy(),
            oom: example("crash-loop-oomkilled.json"),
        }
    }

    /// The folder of rules, as an argument.
    fn dir(&self) -> &str {
        self.rules.path().to_str().unwrap()
    }

    fn args(&self) -> [&str; 4] {
        ["--kb", self.dir(), "eval", self.oom.to_str().unwrap()]
    }
}

/// Runs `kb ARGS` keeping compiled knowledge bases in `cache` (`None`:
/// keeping none).
fn run_with(cache: Option<&Path>, args: &[&str]) -> Run {
    let mut command = kb();
    command.env("KB_CACHE_DIR", cache.map_or(Path::new(""), |c| c));
    finish(command.args(args))
}

/// The files in the cache folder.
fn kept(cache: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(cache) else {
        return Vec::new();
    };
    entries.map(|e| e.unwrap().path()).collect()
}

/// What a run shows, to compare runs by.
fn shown(run: &Run) -> (i32, &str, &str) {
    (run.code, &run.stdout, &run.stderr)
}

#[test]
fn a_folder_loaded_from_the_cache_answers_every_command_as_compiled() {
    let rules = bundled_copy();
    let dir = rules.path().to_str().unwrap();
    let cache = TempDir::new().unwrap();
    let oom = example("crash-loop-oomkilled.json");
    let pending = example("pending-insufficient-cpu.json");
    let (oom, pending) = (oom.to_str().unwrap(), pending.to_str().unwrap());
    let commands: [&[&str]; 9] = [
        &["--kb", dir, "eval", oom],
        &["--kb", dir, "eval", "--format", "json", pending],
        &[
            "--kb", dir, "--lang", "zh", "eval", "--format", "markdown", oom,
        ],
        &[
            "--kb",
            dir,
            "eval",
            "--why-not",
            "crash.liveness-probe",
            oom,
        ],
        &["--kb", dir, "facts", pending],
        &["--kb", dir, "explain", "crash.oom-limit"],
        &["--kb", dir, "graph", "--format", "json"],
        &["--kb", dir, "test"],
        &["--kb", dir, "test", "--coverage"],
    ];
    for args in commands {
        let compiled = run_with(None, args);
        assert!(kept(cache.path()).is_empty());
        // Compiled the first time, and only the key kept.
        let first = run_with(Some(cache.path()), args);
        let [file] = &kept(cache.path())[..] else {
            panic!(
                "{args:?}: one file kept for one folder: {:?}",
                kept(cache.path())
            );
        };
        let key_only = fs::metadata(file).unwrap().len();
        // Compiled again, and kept.
        let second = run_with(Some(cache.path()), args);
        let stored = fs::read(file).unwrap();
        assert!(stored.len() as u64 > key_only + 100_000, "{args:?}");
        let loaded = run_with(Some(cache.path()), args);
        assert_eq!(shown(&first), shown(&compiled), "{args:?}, compiled once");
        assert_eq!(
            shown(&second),
            shown(&compiled),
            "{args:?}, compiled then kept"
        );
        assert_eq!(
            shown(&loaded),
            shown(&compiled),
            "{args:?}, loaded from the cache"
        );
        // Loaded, not compiled and kept again: the file is as it was.
        assert_eq!(fs::read(file).unwrap(), stored, "{args:?}");
        assert_ne!(compiled.stdout, "", "{args:?}");
        fs::remove_file(file).unwrap();
    }
}

/// Every file below `dir`, by its path relative to it.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<_> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(Result::unwrap)
        .filter(|entry| entry.file_type().is_file())
        .map(|entry| {
            let relative = entry.path().strip_prefix(dir).unwrap().to_path_buf();
            (relative, fs::read(entry.path()).unwrap())
        })
        .collect();
    files.sort();
    files
}

#[test]
fn a_folder_loaded_from_the_cache_writes_the_same_runbooks() {
    let rules = bundled_copy();
    let dir = rules.path().to_str().unwrap();
    let cache = TempDir::new().unwrap();
    let out = TempDir::new().unwrap();
    let sites: Vec<_> = [
        None,
        Some(cache.path()),
        Some(cache.path()),
        Some(cache.path()),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, cache)| {
        for format in [&[][..], &["--html"][..]] {
            let site = out.path().join(format!("{i}-{}", format.len()));
            let site = site.to_str().unwrap();
            let args = [&["--kb", dir, "docs", "--out", site][..], format].concat();
            let run = run_with(cache, &args);
            assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        }
        (
            tree(&out.path().join(format!("{i}-0"))),
            tree(&out.path().join(format!("{i}-1"))),
        )
    })
    .collect();
    assert!(sites[0].0.len() > 20 && sites[0].1.len() > 20);
    for site in &sites[1..] {
        assert!(*site == sites[0], "the same pages, compiled or loaded");
    }
}

#[test]
fn a_changed_rule_file_is_compiled_again() {
    let case = Case::new();
    let rules = &case.rules;
    let cache = TempDir::new().unwrap();
    let args = case.args();
    run_with(Some(cache.path()), &args);
    // Compiled twice: kept.
    let before = run_with(Some(cache.path()), &args);
    let title = "The container used more memory than its limit and was OOM-killed";
    common::assert_contains(&before.stdout, title);

    let file = rules.path().join("crash-loop.kb");
    let text = fs::read_to_string(&file).unwrap();
    let changed = "It ran out of the memory its limit allows";
    fs::write(&file, text.replacen(title, changed, 1)).unwrap();
    let after = run_with(Some(cache.path()), &args);
    assert_eq!(after.code, before.code);
    common::assert_contains(&after.stdout, changed);
    assert!(!after.stdout.contains(title), "{}", after.stdout);
    assert_eq!(kept(cache.path()).len(), 1, "replaced, not added to");

    // A file added to the folder is part of it.
    write(
        rules.path(),
        "extra.kb",
        "fact extra_flag: bool \"Extra\" {}\n",
    );
    let explained = run_with(
        Some(cache.path()),
        &["--kb", case.dir(), "explain", "extra_flag"],
    );
    assert_eq!(explained.code, 0, "{}", explained.stderr);
    common::assert_contains(&explained.stdout, "Extra");
}

#[test]
fn a_damaged_cache_file_is_compiled_again_and_replaced() {
    let rules = bundled_copy();
    let dir = rules.path().to_str().unwrap();
    let cache = TempDir::new().unwrap();
    let oom = example("crash-loop-oomkilled.json");
    let args = [
        "--kb",
        dir,
        "eval",
        "--format",
        "json",
        oom.to_str().unwrap(),
    ];
    let compiled = run_with(None, &args);
    run_with(Some(cache.path()), &args);
    run_with(Some(cache.path()), &args);
    let [file] = &kept(cache.path())[..] else {
        panic!("one file kept");
    };
    let good = fs::read(file).unwrap();
    // A title altered where it is stored: still a knowledge base that loads.
    let title = b"used more memory";
    let at = good.windows(title.len()).position(|w| w == title).unwrap();
    let mut altered = good.clone();
    altered[at..at + title.len()].copy_from_slice(b"USED MORE MEMORY");
    // Its header and key kept, what follows cut short or altered.
    let damaged: [Vec<u8>; 4] = [
        altered,
        good[..good.len() / 2].to_vec(),
        good.iter()
            .enumerate()
            .map(|(i, b)| if i > 60 && i % 7 == 0 { b ^ 0x5a } else { *b })
            .collect(),
        // Its header, key and hash alone (11 + 32 + 32 bytes).
        good[..75].to_vec(),
    ];
    for bytes in damaged {
        fs::write(file, &bytes).unwrap();
        let run = run_with(Some(cache.path()), &args);
        assert_eq!(shown(&run), shown(&compiled));
        assert_eq!(
            fs::read(file).unwrap(),
            good,
            "replaced by what compiling gives"
        );
    }
}

/// A FIFO where the kept file was: opening it to read blocks until a
/// writer comes, and reading it would wait for one for ever.
#[cfg(unix)]
#[test]
fn something_other_than_a_file_in_its_place_is_not_read() {
    let case = Case::new();
    let cache = TempDir::new().unwrap();
    let args = case.args();
    let compiled = run_with(None, &args);
    run_with(Some(cache.path()), &args);
    let [file] = &kept(cache.path())[..] else {
        panic!("one file kept");
    };
    fs::remove_file(file).unwrap();
    let made = std::process::Command::new("mkfifo").arg(file).status();
    assert!(made.unwrap().success(), "mkfifo");
    let run = finish(
        kb().env("KB_CACHE_DIR", cache.path())
            .args(args)
            .timeout(std::time::Duration::from_secs(60)),
    );
    assert_eq!(shown(&run), shown(&compiled));
    assert!(fs::metadata(file).unwrap().is_file(), "replaced by a file");
}

#[test]
fn a_cache_that_cannot_be_written_changes_nothing() {
    let case = Case::new();
    let args = case.args();
    let compiled = run_with(None, &args);
    let place = TempDir::new().unwrap();
    // A file where the folder would be.
    let blocked = write(place.path(), "not-a-folder", "x");
    let run = run_with(Some(&blocked), &args);
    assert_eq!(shown(&run), shown(&compiled));
    assert_eq!(fs::read_to_string(&blocked).unwrap(), "x");
}

#[test]
fn rules_with_errors_are_reported_every_time_and_not_kept() {
    let rules = TempDir::new().unwrap();
    write(
        rules.path(),
        "broken.kb",
        "symptom pod-broken \"Broken\" {\n  when phase == \n}\n",
    );
    let cache = TempDir::new().unwrap();
    let dir = rules.path().to_str().unwrap();
    let pending = example("pending-insufficient-cpu.json");
    let args = ["--kb", dir, "eval", pending.to_str().unwrap()];
    let first = run_with(Some(cache.path()), &args);
    let second = run_with(Some(cache.path()), &args);
    assert_eq!(first.code, 3, "{}", first.stderr);
    assert_eq!(shown(&second), shown(&first));
    assert!(kept(cache.path()).is_empty());
}

#[test]
fn the_cache_is_in_the_users_cache_folder_unless_set_or_turned_off() {
    let rules = bundled_copy();
    let dir = rules.path().to_str().unwrap();
    let home = TempDir::new().unwrap();
    let pending = example("pending-insufficient-cpu.json");
    let args = ["--kb", dir, "eval", pending.to_str().unwrap()];
    let xdg = home.path().join("xdg-cache");
    let with_home = |command: &mut assert_cmd::Command| {
        command
            .env("HOME", home.path())
            .env("XDG_CACHE_HOME", &xdg)
            .args(args);
    };

    let mut off = kb();
    with_home(off.env("KB_CACHE_DIR", ""));
    assert_eq!(finish(&mut off).code, 0);
    assert!(!xdg.exists() && !home.path().join(".cache").exists());

    let mut default = kb();
    with_home(default.env_remove("KB_CACHE_DIR"));
    assert_eq!(finish(&mut default).code, 0);
    assert_eq!(kept(&xdg.join("kb")).len(), 1);
}

/// Sets when a file was last changed to `days` ago.
fn age(path: &Path, days: u64) {
    let then = SystemTime::now() - Duration::from_secs(days * 24 * 60 * 60);
    let file = fs::File::options().write(true).open(path).unwrap();
    file.set_modified(then).unwrap();
}

fn modified(path: &Path) -> SystemTime {
    fs::metadata(path).unwrap().modified().unwrap()
}

#[test]
fn files_no_run_used_for_a_month_are_removed_as_another_is_written() {
    let cache = TempDir::new().unwrap();
    let pending = example("pending-insufficient-cpu.json");
    let args = |dir: &TempDir| {
        let dir = dir.path().to_str().unwrap().to_owned();
        vec![
            "--kb".to_owned(),
            dir,
            "eval".to_owned(),
            pending.to_str().unwrap().to_owned(),
        ]
    };
    let run = |args: &[String]| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_with(Some(cache.path()), &args)
    };
    // A folder kept compiled, last used two months ago, then loaded: used now.
    let used = bundled_copy();
    for _ in 0..2 {
        run(&args(&used));
    }
    let [used_file] = &kept(cache.path())[..] else {
        panic!("one file kept");
    };
    age(used_file, 60);
    let before = modified(used_file);
    run(&args(&used));
    assert!(modified(used_file) > before, "a load marks its file used");
    // Another kept file, last used 31 days ago, one used 29 days ago, and
    // a file that is not kb's.
    let stale = write(cache.path(), "0123456789abcdef0123456789abcdef.kbc", "x");
    let recent = write(cache.path(), "fedcba9876543210fedcba9876543210.kbc", "x");
    let other = write(cache.path(), "notes.txt", "x");
    age(&stale, 31);
    age(&recent, 29);
    age(&other, 90);
    // Loading writes nothing, and removes nothing.
    run(&args(&used));
    assert!(stale.exists());
    // Compiling another folder writes its key, and removes the stale file.
    let new = bundled_copy();
    run(&args(&new));
    assert!(!stale.exists());
    assert!(recent.exists() && other.exists() && used_file.exists());
    assert_eq!(kept(cache.path()).len(), 4);
}
