#![expect(clippy::unwrap_used, reason = "tests")]

use std::collections::BTreeMap;

use kb_engine::{KnowledgeBase, Lang};

use crate::{Book, Example, MARKER, Page, Templates, html, write_site};

const RULES: &str = r#"
input disk "The output of `df -P /`, parsed"
fact used_percent: number "How full the root filesystem is, in percent" zh "根文件系统的使用率（%）" {
  from disk.used_percent
  gather "df -P /"
}
fact mount: string "The mount point" zh "挂载点" { from disk.mount }
symptom disk-full "Writes fail: <no space left> & *stars*" zh "写入失败：磁盘已满" {
  explain "The kernel answers `ENOSPC` to every write." zh "内核对每次写入都返回 ENOSPC。"
  when used_percent >= 95
  check "Is it really full?" zh "真的满了吗？" {
    if used_percent >= 99 => disk.space
    if used_percent >= 95 => check deeper "Is something growing?" zh "有东西在增长吗？" {
      gather "du -xh {{ mount }} | sort -h | tail"
      if exists(mount) => disk.space
    }
  }
}
cause disk.space "The filesystem is out of space" zh "文件系统空间耗尽" {
  explain "Logs or images filled it." zh "日志或镜像占满了空间。"
  fix "Free space" zh "清理空间" {
    step "Find the largest directories" zh "找出最大的目录" run "du -xh {{ mount }} | sort -h | tail -20"
    step "Delete old logs" zh "删除旧日志" run "rm -rf /var/log/old" risk "Deletes files for good" zh "文件删除后无法恢复"
  }
}
"#;

fn kb() -> KnowledgeBase {
    let rules = kb_dsl::parse(RULES, "disk.kb")
        .map_err(|e| e.problems)
        .unwrap();
    kb_engine::compile(&rules).unwrap()
}

fn examples() -> BTreeMap<String, Vec<Example>> {
    BTreeMap::from([(
        String::from("disk.space"),
        vec![Example {
            fact: String::from("used_percent"),
            value: String::from("99"),
        }],
    )])
}

fn books(kb: &KnowledgeBase) -> Vec<Book> {
    [Lang::En, Lang::Zh]
        .iter()
        .map(|l| Book::new(kb, "Disk runbooks", *l, &examples()))
        .collect()
}

fn markdown(kb: &KnowledgeBase) -> Vec<Page> {
    let templates = Templates::builtin();
    books(kb)
        .iter()
        .flat_map(|b| templates.markdown(b).unwrap())
        .collect()
}

fn joined(pages: &[Page]) -> String {
    pages
        .iter()
        .map(|p| format!("===== {} =====\n{}", p.path, p.content))
        .collect()
}

#[test]
fn the_builtin_templates_compile() {
    Templates::with_overrides(&BTreeMap::new()).unwrap();
}

#[test]
fn markdown_pages_of_a_small_knowledge_base() {
    insta::assert_snapshot!(joined(&markdown(&kb())));
}

#[test]
fn html_page_of_a_symptom() {
    let kb = kb();
    let books = books(&kb);
    let pages = html(&Templates::builtin(), &books, &markdown(&kb)).unwrap();
    let page = pages
        .iter()
        .find(|p| p.path == "en/symptoms/disk-full.html")
        .unwrap();
    insta::assert_snapshot!(page.content);
}

#[test]
fn generation_is_deterministic() {
    let kb = kb();
    assert_eq!(markdown(&kb), markdown(&kb));
    let books = books(&kb);
    let once = html(&Templates::builtin(), &books, &markdown(&kb)).unwrap();
    let twice = html(&Templates::builtin(), &books, &markdown(&kb)).unwrap();
    assert_eq!(once, twice);
}

#[test]
fn rule_text_is_escaped_in_markdown_and_html() {
    let kb = kb();
    let pages = markdown(&kb);
    let symptom = pages
        .iter()
        .find(|p| p.path == "en/symptoms/disk-full.md")
        .unwrap();
    assert!(
        symptom
            .content
            .contains("# Writes fail: &lt;no space left&gt; &amp; \\*stars\\*"),
        "{}",
        symptom.content
    );
    let books = books(&kb);
    let site = html(&Templates::builtin(), &books, &pages).unwrap();
    for page in &site {
        assert!(
            !page.content.contains("<no space left>"),
            "{}: {}",
            page.path,
            page.content
        );
    }
    let page = site
        .iter()
        .find(|p| p.path == "en/symptoms/disk-full.html")
        .unwrap();
    assert!(
        page.content
            .contains("Writes fail: &lt;no space left&gt; &amp; *stars*"),
        "{}",
        page.content
    );
    assert!(page.content.contains("<svg"), "the decision tree is drawn");
}

#[test]
fn templates_can_be_overridden_by_name_and_unknown_names_are_refused() {
    let overrides = BTreeMap::from([(
        String::from("facts.md.j2"),
        String::from("# {{ book.words.facts }}: {{ book.facts | length }}"),
    )]);
    let templates = Templates::with_overrides(&overrides).unwrap();
    let pages = templates
        .markdown(&Book::new(&kb(), "t", Lang::En, &BTreeMap::new()))
        .unwrap();
    let facts = pages.iter().find(|p| p.path == "en/facts.md").unwrap();
    assert_eq!(facts.content, "# Facts: 2\n");
    let unknown = BTreeMap::from([(String::from("fact.md.j2"), String::new())]);
    let error = Templates::with_overrides(&unknown)
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.contains("`fact.md.j2` overrides no template"),
        "{error}"
    );
    let broken = BTreeMap::from([(String::from("index.md.j2"), String::from("{% if %}"))]);
    assert!(Templates::with_overrides(&broken).is_err());
}

#[test]
fn a_site_is_written_whole_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    let page = |path: &str, content: &str| Page {
        path: path.to_owned(),
        content: content.to_owned(),
    };
    write_site(&out, &[page("old.md", "previous site")]).unwrap();
    let good = page("en/index.md", "# new");
    for bad in ["../escape.md", "/etc/passwd", "en/../../x.md", ""] {
        let pages = vec![good.clone(), page(bad, "")];
        let error = write_site(&out, &pages).err().unwrap();
        assert!(
            error.to_string().contains("outside the output folder"),
            "{bad}: {error}"
        );
        assert_eq!(
            std::fs::read_to_string(out.join("old.md")).unwrap(),
            "previous site",
            "{bad}"
        );
        assert!(!out.join("en").exists(), "{bad}: nothing half written");
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["site"], "no staging folder is left behind");
    write_site(&out, &[good]).unwrap();
    assert!(
        !out.join("old.md").exists(),
        "the new site replaces the old one"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("en/index.md")).unwrap(),
        "# new"
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["site"], "the previous site is not left behind");
}

#[test]
fn only_a_new_or_empty_folder_or_a_site_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let pages = [Page {
        path: String::from("en/index.md"),
        content: String::from("# runbooks"),
    }];
    // A folder of the user's, and a file: left as they are.
    let mine = dir.path().join("notes");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("todo.md"), "mine").unwrap();
    let file = dir.path().join("notes.md");
    std::fs::write(&file, "mine too").unwrap();
    for (out, why) in [
        (
            &mine,
            "it holds files `kb docs` did not write; give a new or empty folder",
        ),
        (&file, "it is not a folder"),
    ] {
        let error = write_site(out, &pages).err().unwrap().to_string();
        assert!(error.starts_with("refusing to replace `"), "{error}");
        assert!(error.ends_with(why), "{error}");
    }
    assert_eq!(
        std::fs::read_to_string(mine.join("todo.md")).unwrap(),
        "mine"
    );
    assert!(!mine.join("en").exists());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine too");

    // Inside a file, however deep: the file is named, and left as it is.
    for out in [file.join("site"), file.join("a/b/site")] {
        let error = write_site(&out, &pages).err().unwrap().to_string();
        let expected = format!(
            "cannot write the site inside `{}`: it is a file, not a folder",
            file.display()
        );
        assert_eq!(error, expected);
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine too");

    // An empty folder, then the site written there, by any name of it.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    write_site(&empty, &pages).unwrap();
    assert!(empty.join(MARKER).is_file());
    write_site(&empty.join("../empty/"), &pages).unwrap();
    assert_eq!(
        std::fs::read_to_string(empty.join("en/index.md")).unwrap(),
        "# runbooks"
    );
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["empty", "notes", "notes.md"]);
}
