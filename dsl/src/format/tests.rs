#![expect(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "tests"
)]

use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;

use super::*;

/// Formats `src`, checking that the result means the same and is stable.
fn fmt(src: &str) -> String {
    let once = format(src, "test.kb").unwrap_or_else(|e| {
        panic!(
            "{src}\n{:#?}",
            e.problems.iter().map(|p| &p.message).collect::<Vec<_>>()
        )
    });
    assert_eq!(
        parse(&once, "test.kb").unwrap(),
        parse(src, "test.kb").unwrap(),
        "formatting changed the meaning:\n{once}"
    );
    let twice = format(&once, "test.kb").unwrap();
    assert_eq!(twice, once, "formatting is not idempotent");
    once
}

/// Asserts that `src` formats to `expected`, and that `expected` is canonical.
#[track_caller]
fn check(src: &str, expected: &str) {
    let got = fmt(src);
    assert_eq!(
        got, expected,
        "\n--- got:\n{got}\n--- expected:\n{expected}"
    );
}

// ------------------------------------------------------------------ declarations

#[test]
fn inputs_keep_their_grouping_and_other_declarations_get_a_blank_line() {
    check(
        "input pod \"The Pod\"   zh \"Pod\"\ninput events\n\n\n\ninput node \"Node\"\nfact a: bool \"A\" { }",
        "input pod \"The Pod\" zh \"Pod\"\ninput events\n\ninput node \"Node\"\n\nfact a: bool \"A\" {}\n",
    );
}

#[test]
fn facts_print_their_clauses_in_order() {
    check(
        r#"fact  x : list< list<string> > "X" zh "叉" { gather "kubectl get x"
        from   pod.spec [ "a.b" ] [ -1 ]
        explain "More" zh "更多" }"#,
        r#"fact x: list<list<string>> "X" zh "叉" {
  explain "More" zh "更多"
  from pod.spec["a.b"][-1]
  gather "kubectl get x"
}
"#,
    );
}

#[test]
fn symptoms_checks_and_branches() {
    check(
        r#"symptom s "S" { when a check one "One" { explain "E"
gather "g"
if a => c.x
if b => check two
if c => check "Inline" { if d => c.y  else => c.z }
else => check three "Three" { if e => c.w }
}
check "Second" { if f => c.v } }
check two "Two" { if g => c.u }"#,
        r#"symptom s "S" {
  when a
  check one "One" {
    explain "E"
    gather "g"
    if a => c.x
    if b => check two
    if c => check "Inline" {
      if d => c.y
      else => c.z
    }
    else => check three "Three" {
      if e => c.w
    }
  }
  check "Second" {
    if f => c.v
  }
}

check two "Two" {
  if g => c.u
}
"#,
    );
}

#[test]
fn causes_fixes_and_steps() {
    check(
        r#"cause c.x "X" zh "叉" { explain "Why" fix "F" zh "修" { step "S" zh "步" run "cmd {{ x }}" risk "R" zh "险"
step "T" } fix "Empty" { } }"#,
        r#"cause c.x "X" zh "叉" {
  explain "Why"
  fix "F" zh "修" {
    step "S" zh "步" run "cmd {{ x }}" risk "R" zh "险"
    step "T"
  }
  fix "Empty" {}
}
"#,
    );
}

#[test]
fn tests_print_input_given_and_expectations() {
    check(
        r#"test "t" { expect c.a expect c.b confirmed expect c.c   possible expect not  c.d expect none
given {"x":1}
input "fixtures/a.json" }
test "inline" { input { "b" : [1, 2.5, {"c": null}], "a": true } }"#,
        r#"test "t" {
  input "fixtures/a.json"
  given {"x": 1}
  expect c.a
  expect c.b
  expect c.c possible
  expect not c.d
  expect none
}

test "inline" {
  input {"a": true, "b": [1, 2.5, {"c": null}]}
}
"#,
    );
}

#[test]
fn long_json_is_pretty_printed_with_sorted_keys() {
    let long = "x".repeat(80);
    check(
        &format!(r#"test "t" {{ input {{"z": {{"b": "{long}", "a": []}}, "y": 1}} }}"#),
        &format!(
            r#"test "t" {{
  input {{
    "y": 1,
    "z": {{
      "a": [],
      "b": "{long}"
    }}
  }}
}}
"#
        ),
    );
}

#[test]
fn extensions_of_symptoms_and_causes() {
    check(
        r#"extend symptom s { check "More" { if a => c.x } }
extend cause c.x "New title" zh "新" { explain "E" fix "F" { step "S" } }
extend cause c.y { }"#,
        r#"extend symptom s {
  check "More" {
    if a => c.x
  }
}

extend cause c.x "New title" zh "新" {
  explain "E"
  fix "F" {
    step "S"
  }
}

extend cause c.y {}
"#,
    );
}

#[test]
fn an_empty_file_stays_empty() {
    check("", "");
    check("  \n\n", "");
}

// ------------------------------------------------------------------ line breaks

#[test]
fn zh_goes_to_the_next_line_when_the_line_is_too_long() {
    let title = "T".repeat(80);
    check(
        &format!(r#"fact a: bool "{title}" zh "一二三四五" {{ from b }}"#),
        &format!("fact a: bool \"{title}\"\n  zh \"一二三四五\" {{\n  from b\n}}\n"),
    );
}

#[test]
fn wide_characters_take_two_columns() {
    // 98 characters, but 103 columns.
    let title = "T".repeat(70);
    check(
        &format!(r#"fact a: bool "{title}" zh "一二三四五" {{ from b }}"#),
        &format!("fact a: bool \"{title}\"\n  zh \"一二三四五\" {{\n  from b\n}}\n"),
    );
    let title = "T".repeat(66);
    check(
        &format!(r#"fact a: bool "{title}" zh "一二三四五" {{ from b }}"#),
        &format!("fact a: bool \"{title}\" zh \"一二三四五\" {{\n  from b\n}}\n"),
    );
}

#[test]
fn a_step_keeps_run_and_risk_on_its_line_until_one_does_not_fit() {
    let long = "L".repeat(70);
    check(
        &format!(
            r#"cause c "C" {{ fix "F" {{
  step "Short" zh "短" run "{long}" risk "R"
  step "{long}" zh "很长很长很长很长很长很长" run "ls" risk "R" zh "险"
  step "{long}" risk "Restarting it stops everything that depends on it, for a while" zh "重启期间依赖它的一切都会停止"
}} }}"#
        ),
        &format!(
            r#"cause c "C" {{
  fix "F" {{
    step "Short" zh "短"
      run "{long}"
      risk "R"
    step "{long}"
      zh "很长很长很长很长很长很长"
      run "ls"
      risk "R" zh "险"
    step "{long}"
      risk "Restarting it stops everything that depends on it, for a while"
        zh "重启期间依赖它的一切都会停止"
  }}
}}
"#
        ),
    );
}

#[test]
fn long_strings_are_reindented_keeping_their_relative_indentation() {
    check(
        "cause c \"C\" {\n        explain \"\"\"\n              First line\n                indented\n\n              last\n          \"\"\" zh \"\"\"\n  中文\n  \"\"\"\n fix \"F\" { step \"\"\"inline\n   second\"\"\" } }",
        "cause c \"C\" {\n  explain \"\"\"\n    First line\n      indented\n\n    last\n  \"\"\" zh \"\"\"\n    中文\n  \"\"\"\n  fix \"F\" {\n    step \"\"\"\n      inline\n         second\n    \"\"\"\n  }\n}\n",
    );
}

#[test]
fn strings_are_printed_as_written() {
    check(
        r##"fact a: string "Tab\tquote\" \u00e9 # not a comment" {
  from b matches r"\d+ # nor this" or b matches r#"say "hi" # nor"#
  gather "echo '{{ a }}' # still a string"
}"##,
        r##"fact a: string "Tab\tquote\" \u00e9 # not a comment" {
  from b matches r"\d+ # nor this" or b matches r#"say "hi" # nor"#
  gather "echo '{{ a }}' # still a string"
}
"##,
    );
}

// ------------------------------------------------------------------ expressions

/// The condition of a `when`, formatted.
fn when(expr: &str) -> String {
    let out = fmt(&format!("symptom s \"S\" {{ when {expr} }}"));
    out.strip_prefix("symptom s \"S\" {\n  when ")
        .and_then(|rest| rest.strip_suffix("\n}\n"))
        .unwrap_or(&out)
        .to_owned()
}

#[test]
fn expressions_keep_only_the_parentheses_precedence_needs() {
    let cases = [
        ("(a and b) or c", "a and b or c"),
        ("a and (b or c)", "a and (b or c)"),
        ("(a or b) and c", "(a or b) and c"),
        ("a or (b or c)", "a or (b or c)"),
        ("(a or b) or c", "a or b or c"),
        ("not (a == b)", "not a == b"),
        ("(not a) == b", "(not a) == b"),
        ("a == (not b)", "a == (not b)"),
        ("not (a and b)", "not (a and b)"),
        ("not not a", "not not a"),
        ("a and not b", "a and not b"),
        ("(a == b) == c", "a == b == c"),
        ("a == (b == c)", "a == (b == c)"),
        ("((a)).b", "a.b"),
        ("(a or b).c", "(a or b).c"),
        ("(not a)[0]", "(not a)[0]"),
        ("a   not   in [ 1 ,2, ]", "a not in [1, 2]"),
        ("x[.reason == \"X\"]", "x[.reason == \"X\"]"),
        ("any(l, . contains \"x\")", "any(l, . contains \"x\")"),
        ("f( )", "f()"),
        ("[ ]", "[]"),
        ("1e3 > 0.50", "1e3 > 0.50"),
        ("a[-1].b", "a[-1].b"),
        ("(\"x\") == r\"y\"", "\"x\" == r\"y\""),
        (
            "a starts_with \"b\" and a ends_with \"c\"",
            "a starts_with \"b\" and a ends_with \"c\"",
        ),
        ("true != false", "true != false"),
        (
            "a < 1 or a <= 2 or a > 3 or a >= 4",
            "a < 1 or a <= 2 or a > 3 or a >= 4",
        ),
        ("a in b", "a in b"),
    ];
    for (written, canonical) in cases {
        assert_eq!(when(written), canonical, "{written}");
    }
}

#[test]
fn long_conditions_break_before_or_then_and() {
    let a = "a_fact_with_a_long_name";
    check(
        &format!(
            "symptom s \"S\" {{ when {a} == \"Pending\" and {a} or not exists({a}) and {a} == \"Running\" and ({a} or {a}) }}"
        ),
        &format!(
            r#"symptom s "S" {{
  when {a} == "Pending" and {a}
    or not exists({a})
      and {a} == "Running"
      and ({a} or {a})
}}
"#
        ),
    );
}

#[test]
fn long_calls_and_lists_break_inside_their_brackets() {
    let item = "\"an-item\"";
    let items = [item; 14].join(", ");
    check(
        &format!(
            "fact f: bool \"F\" {{ from any(events, .reason in [{items}] or .source == \"kubelet\") }}"
        ),
        &format!(
            r#"fact f: bool "F" {{
  from any(
    events,
    .reason in [
      {eight},
      {six}
    ]
      or .source == "kubelet"
  )
}}
"#,
            eight = [item; 8].join(", "),
            six = [item; 6].join(", "),
        ),
    );
}

#[test]
fn a_branch_to_an_inline_check_keeps_its_condition_on_one_line() {
    let a = "a_fact_with_a_long_name";
    let title = "A question long enough to make the line longer than it should be";
    check(
        &format!(
            "check c \"C\" {{ if exists({a}) and {a} => check \"{title}\" {{ if x => c.x }} }}"
        ),
        &format!(
            "check c \"C\" {{\n  if exists({a}) and {a} => check \"{title}\" {{\n    if x => c.x\n  }}\n}}\n"
        ),
    );
}

// ------------------------------------------------------------------ blank lines

#[test]
fn blank_lines_in_blocks_are_kept_single_and_only_between_items() {
    check(
        "symptom s \"S\" {\n\n  explain \"E\"\n\n\n\n  when a\n  check \"C\" {\n\n    if a => c.x\n\n    if b => c.y\n\n  }\n\n}\n\n\n\nfact f: bool \"F\" { from a }\n",
        "symptom s \"S\" {\n  explain \"E\"\n\n  when a\n  check \"C\" {\n    if a => c.x\n\n    if b => c.y\n  }\n}\n\nfact f: bool \"F\" {\n  from a\n}\n",
    );
}

// ------------------------------------------------------------------ comments

#[test]
fn comments_before_declarations_and_at_the_end_of_the_file() {
    check(
        "# The file's header.\n#\n# More.\n\n# About the input.\ninput pod \"P\"\n# About the fact.\n\nfact f: bool \"F\" { from a }\n\n\n# The end.\n# Really.\n",
        "# The file's header.\n#\n# More.\n\n# About the input.\ninput pod \"P\"\n\n# About the fact.\n\nfact f: bool \"F\" {\n  from a\n}\n\n# The end.\n# Really.\n",
    );
}

#[test]
fn comments_inside_blocks_stay_with_the_clause_after_them_or_at_the_end() {
    check(
        r#"symptom s "S" {   # after the brace
    # before when
  when a   # after when
  check "C" {
      # before the first branch
    if a => c.x # after a branch

    # before the second branch
    if b => c.y
      # at the end of the check
  }
  # at the end of the symptom
} # after the symptom
"#,
        r#"symptom s "S" {  # after the brace
  # before when
  when a  # after when
  check "C" {
    # before the first branch
    if a => c.x  # after a branch

    # before the second branch
    if b => c.y
    # at the end of the check
  }
  # at the end of the symptom
}  # after the symptom
"#,
    );
}

#[test]
fn comments_in_causes_fixes_steps_and_tests() {
    check(
        r#"cause c "C" {
  # why
  explain "E"
  fix "F" { # the fix
    # first
    step "S" # a step
      run "ls" # the command
    # last
  }
}
test "t" {
  # the input
  input "a.json" # a file
  expect c # confirmed
  # nothing else
}
"#,
        r#"cause c "C" {
  # why
  explain "E"
  fix "F" {  # the fix
    # first
    step "S" run "ls"  # a step  # the command
    # last
  }
}

test "t" {
  # the input
  input "a.json"  # a file
  expect c  # confirmed
  # nothing else
}
"#,
    );
}

#[test]
fn comments_inside_an_expression_or_a_header_move_out_of_its_way() {
    check(
        r#"symptom s "S"
  # inside the header
  zh "症状" {
  when a # after a
    # between operands
    or b
}
"#,
        r#"# inside the header
symptom s "S" zh "症状" {
  # between operands
  when a or b  # after a
}
"#,
    );
}

#[test]
fn a_comment_after_an_opening_triple_quote_goes_after_its_closing() {
    check(
        "cause c \"C\" { explain \"E\" # about it\n zh \"\"\"\n  中文\n  \"\"\"\n fix \"F\" { step \"S\" } }",
        "cause c \"C\" {\n  explain \"E\" zh \"\"\"\n    中文\n  \"\"\"  # about it\n  fix \"F\" {\n    step \"S\"\n  }\n}\n",
    );
}

#[test]
fn comment_like_text_in_strings_is_not_a_comment() {
    let src = "fact a: string \"# no\" {\n  explain \"\"\"\n    # not a comment\n  \"\"\"\n  from b == \"#\" or b matches r\"#\" or b matches r#\"a \"quoted\" # b\"#\n}\n\ntest \"#\" {\n  input {\"#\": \"# no\"}\n}\n";
    check(src, src);
    assert!(scan_comments(src).is_empty());
}

#[test]
fn files_that_do_not_parse_are_errors() {
    assert!(format("fact a: bool {", "bad.kb").is_err());
    assert!(format("symptom s \"S\" { wen a }", "bad.kb").is_err());
}

#[test]
fn a_bare_tree_prints_without_a_source() {
    let rules = parse("input pod \"P\"\nfact a: bool \"A\" { from pod.x }", "t.kb").unwrap();
    let printed = print(&rules);
    assert_eq!(
        printed,
        "input pod \"P\"\n\nfact a: bool \"A\" {\n  from pod.x\n}\n"
    );
}

// ------------------------------------------------------------------ real files

/// Every bundled rule file and every good corpus file.
fn real_files() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for (dir, prefix) in [("kb/rules", ""), ("tests/corpus", "ok_")] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with(prefix) && name.ends_with(".kb") {
                files.push((
                    path.display().to_string(),
                    std::fs::read_to_string(&path).unwrap(),
                ));
            }
        }
    }
    files.sort();
    assert!(files.len() > 10, "the rule files were not found");
    files
}

#[test]
fn every_real_rule_file_formats_to_the_same_meaning_and_is_stable() {
    for (name, text) in real_files() {
        let once = format(&text, &name).unwrap_or_else(|e| panic!("{name}: {:?}", e.problems));
        assert_eq!(
            parse(&once, &name).unwrap(),
            parse(&text, &name).unwrap(),
            "{name}"
        );
        assert_eq!(format(&once, &name).unwrap(), once, "{name}");
        assert_eq!(
            comment_words(&scan_comments(&once)),
            comment_words(&scan_comments(&text)),
            "{name}"
        );
    }
}

// ------------------------------------------------------------------ property

fn loc_of(written: &str) -> Loc {
    Loc::new(Source::new("gen.kb", written.to_owned()), 0, written.len())
}

fn nowhere() -> Loc {
    loc_of("")
}

fn ident(name: &str) -> Ident {
    Ident {
        name: name.to_owned(),
        loc: nowhere(),
    }
}

fn names() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["a", "pod", "phase", "x_1", "_y", "none", "step", "r"])
        .prop_map(str::to_owned)
}

fn fields() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["status", "and", "in", "not", "true", "x1", "_z"])
        .prop_map(str::to_owned)
}

fn ids() -> impl Strategy<Value = Ident> {
    prop::sample::select(vec!["a", "c.one", "pending.too-many", "x-1", "b_2", "A9.z"])
        .prop_map(ident)
}

/// A value for a one-line string: quotes, backslashes, `#`, `{{`, Chinese,
/// tabs and line breaks (written as escapes).
fn values() -> impl Strategy<Value = String> {
    "[a-z \"\\\\#{}中文\t\n]{0,12}"
}

/// A string as `"…"`, `r"…"` or `r#"…"#` (never `"""`).
fn one_line() -> impl Strategy<Value = Str> {
    (values(), 0..3u8).prop_map(|(value, form)| {
        let written = match form {
            1 if !value.contains(['"', '\n']) => format!("r\"{value}\""),
            2 if !value.contains("\"#") && !value.contains('\n') => format!("r#\"{value}\"#"),
            _ => String::new(),
        };
        Str {
            value,
            loc: loc_of(&written),
        }
    })
}

/// A `"""` string: lines with relative indentation and blank lines, written
/// with some indentation of its own.
fn long() -> impl Strategy<Value = Str> {
    (
        prop::collection::vec(("[a-z#\"\\\\{}中 ]{1,8}", 0..3usize, any::<bool>()), 1..5),
        0..8usize,
    )
        .prop_filter_map("no closing quotes inside", |(lines, base)| {
            let mut value_lines: Vec<String> = Vec::new();
            for (i, (content, extra, blank_after)) in lines.iter().enumerate() {
                let content = content.trim_start();
                if content.trim().is_empty() {
                    return None;
                }
                let extra = if i == 0 { 0 } else { *extra };
                value_lines.push(format!("{}{content}", " ".repeat(extra)));
                if *blank_after && i + 1 < lines.len() {
                    value_lines.push(String::new());
                }
            }
            let value = value_lines.join("\n");
            if value.contains("\"\"\"") || value.ends_with('"') {
                return None;
            }
            let mut written = String::from("\"\"\"\n");
            for line in &value_lines {
                if !line.is_empty() {
                    written.push_str(&" ".repeat(base + 2));
                    written.push_str(line);
                }
                written.push('\n');
            }
            written.push_str(&" ".repeat(base));
            written.push_str("\"\"\"");
            Some(Str {
                value,
                loc: loc_of(&written),
            })
        })
}

fn any_string() -> impl Strategy<Value = Str> {
    prop_oneof![3 => one_line(), 1 => long()]
}

/// A plain `"…"` string, as test names and files are.
fn plain() -> impl Strategy<Value = Str> {
    values().prop_map(|value| Str {
        value,
        loc: nowhere(),
    })
}

fn texts() -> impl Strategy<Value = Text> {
    (any_string(), prop::option::of(any_string())).prop_map(|(en, zh)| Text { en, zh })
}

fn expr(kind: ExprKind) -> Expr {
    Expr {
        kind,
        loc: nowhere(),
    }
}

fn numbers() -> impl Strategy<Value = Expr> {
    prop_oneof![
        (-1000i32..1000).prop_map(|n| expr(ExprKind::Number(f64::from(n)))),
        (-1000i32..1000).prop_map(|n| expr(ExprKind::Number(f64::from(n) / 8.0))),
        (1i32..9, 15i32..30).prop_map(|(m, e)| {
            let written = format!("{m}e{e}");
            Expr {
                kind: ExprKind::Number(written.parse().unwrap()),
                loc: loc_of(&written),
            }
        }),
    ]
}

fn ops() -> impl Strategy<Value = BinOp> {
    prop::sample::select(vec![
        BinOp::Or,
        BinOp::And,
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::Contains,
        BinOp::StartsWith,
        BinOp::EndsWith,
        BinOp::Matches,
        BinOp::In,
        BinOp::NotIn,
    ])
}

/// Expressions nested at most four deep.
fn exprs() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(|b| expr(ExprKind::Bool(b))),
        numbers(),
        one_line().prop_map(|s| Expr {
            kind: ExprKind::String(s.value),
            loc: s.loc,
        }),
        names().prop_map(|n| expr(ExprKind::Name(n))),
        prop_oneof![Just(String::new()), fields()].prop_map(|f| expr(ExprKind::Relative(f))),
    ];
    leaf.prop_recursive(4, 48, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|l| expr(ExprKind::List(l))),
            (inner.clone(), fields())
                .prop_map(|(base, f)| expr(ExprKind::Field(Box::new(base), f))),
            (inner.clone(), inner.clone())
                .prop_map(|(base, i)| expr(ExprKind::Bracket(Box::new(base), Box::new(i)))),
            (
                prop::sample::select(vec!["exists", "any", "coalesce", "f"]),
                prop::collection::vec(inner.clone(), 0..3)
            )
                .prop_map(|(name, args)| expr(ExprKind::Call(Box::new(ident(name)), args))),
            inner.clone().prop_map(|e| expr(ExprKind::Not(Box::new(e)))),
            (ops(), inner.clone(), inner).prop_map(|(op, l, r)| expr(ExprKind::Binary(
                op,
                Box::new(l),
                Box::new(r)
            ))),
        ]
    })
}

fn types() -> impl Strategy<Value = Type> {
    let leaf = prop::sample::select(vec![Type::String, Type::Number, Type::Bool, Type::Object]);
    leaf.prop_recursive(2, 4, 1, |inner| inner.prop_map(|t| Type::List(Box::new(t))))
}

fn branch(target: Target, condition: Option<Expr>) -> Branch {
    Branch {
        condition,
        target,
        loc: nowhere(),
    }
}

/// Checks, with inline checks in their branches down to `depth`.
fn checks(depth: u32) -> BoxedStrategy<Check> {
    let target = if depth == 0 {
        prop_oneof![
            ids().prop_map(Target::Cause),
            ids().prop_map(Target::CheckRef),
        ]
        .boxed()
    } else {
        prop_oneof![
            2 => ids().prop_map(Target::Cause),
            1 => ids().prop_map(Target::CheckRef),
            1 => checks(depth - 1).prop_map(|c| Target::Check(Box::new(c))),
        ]
        .boxed()
    };
    (
        prop::option::of(ids()),
        texts(),
        prop::option::of(texts()),
        prop::option::of(one_line()),
        prop::collection::vec((target, prop::option::of(exprs())), 0..3),
    )
        .prop_map(|(id, title, explain, gather, branches)| Check {
            id,
            title,
            explain,
            gather,
            branches: branches
                .into_iter()
                .map(|(target, condition)| branch(target, condition))
                .collect(),
            loc: nowhere(),
        })
        .boxed()
}

fn fixes() -> impl Strategy<Value = Fix> {
    let step = (
        texts(),
        prop::option::of(one_line()),
        prop::option::of(texts()),
    )
        .prop_map(|(text, run, risk)| Step {
            text,
            run,
            risk,
            loc: nowhere(),
        });
    (texts(), prop::collection::vec(step, 0..3)).prop_map(|(title, steps)| Fix {
        title,
        steps,
        loc: nowhere(),
    })
}

fn json_values() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        (-1000i32..1000).prop_map(|n| serde_json::Value::from(f64::from(n) / 4.0)),
        values().prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
            json_objects(inner),
        ]
    })
}

fn json_objects(
    values: impl Strategy<Value = serde_json::Value>,
) -> impl Strategy<Value = serde_json::Value> {
    prop::collection::vec(("[a-z\"#中]{0,6}", values), 0..4).prop_map(|entries| {
        serde_json::Value::Object(entries.into_iter().collect::<serde_json::Map<_, _>>())
    })
}

fn jsons() -> impl Strategy<Value = crate::ast::Json> {
    json_objects(json_values()).prop_map(|value| crate::ast::Json {
        value,
        loc: nowhere(),
    })
}

fn expects() -> impl Strategy<Value = Expect> {
    prop_oneof![
        (ids(), any::<bool>()).prop_map(|(id, possible)| Expect::Reported {
            id,
            status: if possible {
                ExpectedStatus::Possible
            } else {
                ExpectedStatus::Confirmed
            },
        }),
        ids().prop_map(Expect::Absent),
        Just(Expect::NoneConfirmed(nowhere())),
    ]
}

fn items() -> impl Strategy<Value = Item> {
    prop_oneof![
        (names(), prop::option::of(texts())).prop_map(|(name, title)| Item::Input(Box::new(
            InputDecl {
                name: ident(&name),
                title,
                loc: nowhere(),
            }
        ))),
        (
            names(),
            types(),
            texts(),
            prop::option::of(texts()),
            prop::option::of(exprs()),
            prop::option::of(one_line())
        )
            .prop_map(
                |(name, ty, title, explain, from, gather)| Item::Fact(Box::new(FactDecl {
                    name: ident(&name),
                    ty,
                    title,
                    explain,
                    from,
                    gather,
                    loc: nowhere(),
                }))
            ),
        (
            ids(),
            texts(),
            prop::option::of(texts()),
            prop::option::of(exprs()),
            prop::collection::vec(checks(1), 0..3)
        )
            .prop_map(|(id, title, explain, when, checks)| Item::Symptom(Box::new(
                Symptom {
                    id,
                    title,
                    explain,
                    when,
                    checks,
                    loc: nowhere(),
                }
            ))),
        checks(2)
            .prop_filter("a declared check has an id", |c| c.id.is_some())
            .prop_map(|check| Item::Check(Box::new(check))),
        (
            ids(),
            texts(),
            prop::option::of(texts()),
            prop::collection::vec(fixes(), 0..3)
        )
            .prop_map(|(id, title, explain, fixes)| Item::Cause(Box::new(Cause {
                id,
                title,
                explain,
                fixes,
                loc: nowhere(),
            }))),
        (
            plain(),
            prop::option::of(prop_oneof![
                plain().prop_map(TestInput::File),
                jsons().prop_map(TestInput::Inline),
            ]),
            prop::option::of(jsons()),
            prop::collection::vec(expects(), 0..4)
        )
            .prop_map(|(name, input, given, expects)| Item::Test(Box::new(Test {
                name,
                input,
                given,
                expects,
                loc: nowhere(),
            }))),
        (
            any::<bool>(),
            ids(),
            prop::option::of(texts()),
            prop::option::of(texts()),
            prop::collection::vec(checks(1), 0..2),
            prop::collection::vec(fixes(), 0..2)
        )
            .prop_map(|(symptom, id, title, explain, checks, fixes)| {
                Item::Extend(Box::new(Extension {
                    kind: if symptom {
                        ExtensionKind::Symptom
                    } else {
                        ExtensionKind::Cause
                    },
                    id,
                    title,
                    explain,
                    checks: if symptom { checks } else { Vec::new() },
                    fixes: if symptom { Vec::new() } else { fixes },
                    loc: nowhere(),
                }))
            }),
    ]
}

fn rule_sets() -> impl Strategy<Value = RuleSet> {
    prop::collection::vec(items(), 0..6).prop_map(|items| RuleSet { items })
}

proptest! {
    #[test]
    fn printed_trees_parse_back_to_themselves(rules in rule_sets()) {
        let printed = print(&rules);
        let parsed = parse(&printed, "gen.kb").map_err(|e| {
            TestCaseError::fail(format!(
                "{printed}\n{:#?}",
                e.problems.iter().map(|p| (&p.message, p.loc.position())).collect::<Vec<_>>()
            ))
        })?;
        prop_assert_eq!(&parsed, &rules, "\n{}", printed);
        let again = format(&printed, "gen.kb").map_err(|e| TestCaseError::fail(format!("{:?}", e.problems)))?;
        prop_assert_eq!(again, printed);
    }
}

#[test]
fn sources_are_shared_by_the_locations_of_a_parse() {
    // `format` relies on every location of a parse pointing into one source.
    let rules = parse("fact a: bool \"A\" { from b }", "t.kb").unwrap();
    let fact = rules.facts().next().unwrap();
    assert!(Arc::ptr_eq(&fact.loc.src, &fact.title.en.loc.src));
}

/// Adds own-line comments before, and trailing comments after, some lines of
/// a printed file (never inside a `"""` string).
fn with_comments(printed: &str, spots: &[(prop::sample::Index, bool)]) -> String {
    let lines: Vec<&str> = printed.lines().collect();
    let mut chosen = vec![(false, false); lines.len()];
    for (index, own_line) in spots {
        if !lines.is_empty() {
            let i = index.index(lines.len());
            if *own_line {
                chosen[i].0 = true;
            } else {
                chosen[i].1 = true;
            }
        }
    }
    let mut out = String::new();
    let mut inside = false;
    for (i, line) in lines.iter().enumerate() {
        let starts_inside = inside;
        if line.matches("\"\"\"").count() % 2 == 1 {
            inside = !inside;
        }
        if chosen[i].0 && !starts_inside {
            out.push_str(&format!("# own {i} # \"quoted\"\n"));
        }
        out.push_str(line);
        if chosen[i].1 && !inside {
            out.push_str(&format!(" # trailing {i}"));
        }
        out.push('\n');
    }
    if spots.len() % 3 == 1 {
        out.push_str("\n# at the end\n");
    }
    out
}

proptest! {
    #[test]
    fn comments_anywhere_survive_formatting(
        rules in rule_sets(),
        spots in prop::collection::vec((any::<prop::sample::Index>(), any::<bool>()), 0..10),
    ) {
        let text = with_comments(&print(&rules), &spots);
        // A comment inside inline JSON, say, is a syntax error: not a case.
        prop_assume!(parse(&text, "gen.kb").is_ok_and(|parsed| parsed == rules));
        // `format` itself checks that meaning and comments are kept.
        let once = format(&text, "gen.kb").map_err(|e| {
            TestCaseError::fail(format!("{text}\n{:?}", e.problems))
        })?;
        prop_assert_eq!(
            comment_words(&scan_comments(&once)),
            comment_words(&scan_comments(&text))
        );
        let twice = format(&once, "gen.kb").map_err(|e| TestCaseError::fail(format!("{:?}", e.problems)))?;
        prop_assert_eq!(&twice, &once, "\n--- input:\n{}\n--- once:\n{}", text, once);
    }
}
