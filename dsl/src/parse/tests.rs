#![expect(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "tests"
)]

use crate::ast::*;
use crate::{Code, Problem, parse};

fn ok(src: &str) -> RuleSet {
    match parse(src, "test.kb") {
        Ok(rules) => rules,
        Err(errors) => panic!(
            "{:#?}",
            errors
                .problems
                .iter()
                .map(|p| &p.message)
                .collect::<Vec<_>>()
        ),
    }
}

fn errors(src: &str) -> Vec<Problem> {
    parse(src, "test.kb").err().unwrap().problems
}

/// The condition of the only branch of the only check of the first symptom.
fn condition(expr: &str) -> Expr {
    let src = format!("symptom s \"S\" {{ when true check \"C\" {{ if {expr}\n => c }} }}");
    let rules = ok(&src);
    let symptom = rules.symptoms().next().unwrap();
    symptom.checks[0].branches[0].condition.clone().unwrap()
}

fn name(n: &str) -> Box<Expr> {
    Box::new(Expr {
        kind: ExprKind::Name(n.into()),
        loc: any_loc(),
    })
}

fn string(s: &str) -> Box<Expr> {
    Box::new(Expr {
        kind: ExprKind::String(s.into()),
        loc: any_loc(),
    })
}

fn any_loc() -> crate::Loc {
    crate::Loc::new(crate::Source::new("x", ""), 0, 0)
}

fn kind(expr: &Expr) -> &ExprKind {
    &expr.kind
}

#[test]
fn every_declaration_parses_into_the_tree() {
    let rules = ok(r#"
        # a comment
        input pod "The Pod" zh "Pod 对象"
        fact phase: string "Phase" zh "阶段" {
          explain "From the status."
          from pod.status.phase
          gather "kubectl get pod {{ pod_name }}"
        }
        fact names: list<string> "Names" { from pod.spec.containers.name }
        symptom pod-pending "Pending" zh "挂起" {
          explain """
            Two lines,
              one indented.
          """
          when phase == "Pending"
          check first "First?" {
            if phase == "Pending" => pending.a
            if phase != "Pending" => check "Nested?" { else => pending.b }
            else => check shared
          }
        }
        check shared "Shared?" { if true => pending.a }
        cause pending.a "A" zh "甲" {
          fix "Do it" zh "做" {
            step "Look" run "kubectl get pods"
            step "Force" zh "强制" run "kubectl delete pod x --force" risk "Data loss" zh "丢数据"
          }
        }
        test "a test" {
          input "fixtures/a.json"
          given {"phase": "Pending", "n": [1, 2.5, true, null]}
          expect pending.a
          expect pending.b possible
          expect not pending.c
          expect none
        }
    "#);
    assert_eq!(rules.inputs().count(), 1);
    let facts: Vec<_> = rules.facts().collect();
    assert_eq!(facts[0].ty, Type::String);
    assert_eq!(facts[0].title.zh.as_ref().unwrap().value, "阶段");
    assert_eq!(facts[1].ty, Type::List(Box::new(Type::String)));
    let symptom = rules.symptoms().next().unwrap();
    assert_eq!(symptom.id.name, "pod-pending");
    assert_eq!(
        symptom.explain.as_ref().unwrap().en.value,
        "Two lines,\n  one indented."
    );
    let check = &symptom.checks[0];
    assert_eq!(check.id.as_ref().unwrap().name, "first");
    assert!(matches!(&check.branches[0].target, Target::Cause(id) if id.name == "pending.a"));
    assert!(
        matches!(&check.branches[1].target, Target::Check(nested) if nested.branches[0].condition.is_none())
    );
    assert!(matches!(&check.branches[2].target, Target::CheckRef(id) if id.name == "shared"));
    assert_eq!(rules.checks().count(), 1);
    let cause = rules.causes().next().unwrap();
    let step = &cause.fixes[0].steps[1];
    assert_eq!(
        step.run.as_ref().unwrap().value,
        "kubectl delete pod x --force"
    );
    assert_eq!(
        step.risk.as_ref().unwrap().zh.as_ref().unwrap().value,
        "丢数据"
    );
    let test = rules.tests().next().unwrap();
    assert!(matches!(&test.input, Some(TestInput::File(path)) if path.value == "fixtures/a.json"));
    assert_eq!(test.given.as_ref().unwrap().value["n"][1], 2.5);
    assert!(matches!(
        test.expects[1],
        Expect::Reported {
            status: ExpectedStatus::Possible,
            ..
        }
    ));
    assert!(matches!(&test.expects[2], Expect::Absent(id) if id.name == "pending.c"));
    assert!(matches!(test.expects[3], Expect::NoneConfirmed(_)));
}

#[test]
fn precedence_is_or_then_and_then_not_then_comparison() {
    let parsed = condition(r#"a or b and not c == "x""#);
    let expected = ExprKind::Binary(
        BinOp::Or,
        name("a"),
        Box::new(Expr {
            kind: ExprKind::Binary(
                BinOp::And,
                name("b"),
                Box::new(Expr {
                    kind: ExprKind::Not(Box::new(Expr {
                        kind: ExprKind::Binary(BinOp::Eq, name("c"), string("x")),
                        loc: any_loc(),
                    })),
                    loc: any_loc(),
                }),
            ),
            loc: any_loc(),
        }),
    );
    assert_eq!(parsed.kind, expected);
}

#[test]
fn membership_and_string_operators() {
    assert!(
        matches!(kind(&condition(r#"r in ["A", "B"]"#)), ExprKind::Binary(BinOp::In, _, l) if matches!(l.kind, ExprKind::List(ref items) if items.len() == 2))
    );
    assert!(matches!(
        kind(&condition(r#"r not in ["A"]"#)),
        ExprKind::Binary(BinOp::NotIn, ..)
    ));
    assert!(matches!(
        kind(&condition(r#"m starts_with "x""#)),
        ExprKind::Binary(BinOp::StartsWith, ..)
    ));
    assert!(matches!(
        kind(&condition(r#"m ends_with "x""#)),
        ExprKind::Binary(BinOp::EndsWith, ..)
    ));
    let regex = condition(r#"m matches r"\d+ nodes""#);
    assert!(
        matches!(kind(&regex), ExprKind::Binary(BinOp::Matches, _, r) if r.kind == ExprKind::String(r"\d+ nodes".into()))
    );
    let hashed = condition(r##"m matches r#"claim "[^"]+""#"##);
    assert!(
        matches!(kind(&hashed), ExprKind::Binary(_, _, r) if r.kind == ExprKind::String(r#"claim "[^"]+""#.into()))
    );
}

#[test]
fn paths_filters_and_predicates() {
    let filter = condition(r#"count(events[.reason == "FailedScheduling"]) > 0"#);
    let ExprKind::Binary(BinOp::Gt, call, _) = &filter.kind else {
        panic!("{filter:?}")
    };
    let ExprKind::Call(function, args) = &call.kind else {
        panic!("{call:?}")
    };
    assert_eq!(function.name, "count");
    let ExprKind::Bracket(list, predicate) = &args[0].kind else {
        panic!("{args:?}")
    };
    assert_eq!(list.kind, ExprKind::Name("events".into()));
    assert!(
        matches!(&predicate.kind, ExprKind::Binary(BinOp::Eq, l, _) if l.kind == ExprKind::Relative("reason".into()))
    );

    let element = condition(r#"any(names, . contains "x")"#);
    let ExprKind::Call(_, args) = &element.kind else {
        panic!()
    };
    assert!(
        matches!(&args[1].kind, ExprKind::Binary(BinOp::Contains, l, _) if l.kind == ExprKind::Relative(String::new()))
    );

    let key = condition(r#"pod.spec.containers[-1].resources.limits["nvidia.com/gpu"] == "1""#);
    let ExprKind::Binary(_, lhs, _) = &key.kind else {
        panic!()
    };
    assert!(
        matches!(&lhs.kind, ExprKind::Bracket(_, k) if k.kind == ExprKind::String("nvidia.com/gpu".into()))
    );
    assert_eq!(
        lhs.loc.text(),
        r#"pod.spec.containers[-1].resources.limits["nvidia.com/gpu"]"#
    );
}

#[test]
fn keywords_may_be_field_names() {
    let parsed = condition(r#"x.in.not.contains == "y""#);
    assert!(
        matches!(&parsed.kind, ExprKind::Binary(BinOp::Eq, l, _) if matches!(&l.kind, ExprKind::Field(_, f) if f == "contains"))
    );
}

#[test]
fn a_parenthesised_condition_keeps_its_parentheses_as_evidence_text() {
    let parsed = condition(r#"a and (b or c) # trailing comment"#);
    assert_eq!(parsed.loc.text(), "a and (b or c)");
}

#[test]
fn string_escapes_are_those_of_json() {
    let rules = ok(r#"input pod "tab\t quote\" slash\\ \u00e9""#);
    assert_eq!(
        rules
            .inputs()
            .next()
            .unwrap()
            .title
            .as_ref()
            .unwrap()
            .en
            .value,
        "tab\t quote\" slash\\ é"
    );
    let title = |src: &str| {
        ok(src)
            .inputs()
            .next()
            .unwrap()
            .title
            .clone()
            .unwrap()
            .en
            .value
    };
    assert_eq!(title(r#"input pod "\"\\""#), "\"\\", "escapes alone");
    assert_eq!(title(r#"input pod """#), "");
    assert_eq!(
        title("input pod \"节点 # not a comment\""),
        "节点 # not a comment"
    );
    for broken in [
        r#"input pod "bad \q escape""#,
        "input pod \"a line\nbreak\"",
        "input pod \"unterminated",
        "input pod \"ends in an escape\\",
    ] {
        assert_eq!(errors(broken)[0].code, Code::Syntax, "{broken}");
    }
}

#[test]
fn every_broken_declaration_is_reported_with_its_position() {
    let src = "input pod \"P\"\n\nfact a: strin \"A\" { from pod.x }\n\nsymptom s \"S\" {\n  wen a == \"x\"\n}\n\ncause c \"C\" { fix \"F\" { step \"x\" run } }\n";
    let problems = errors(src);
    let positions: Vec<String> = problems.iter().map(|p| p.loc.position()).collect();
    assert_eq!(positions, ["test.kb:3:9", "test.kb:6:3", "test.kb:9:38"]);
    assert!(
        problems[0].message.contains("a type"),
        "{}",
        problems[0].message
    );
    assert_eq!(
        problems[1].message,
        "expected `check`, `explain` or `when`, found `wen`"
    );
    assert_eq!(problems[1].help.as_deref(), Some("did you mean `when`?"));
    assert!(
        problems[2].message.starts_with("expected a string"),
        "{}",
        problems[2].message
    );
}

#[test]
fn an_operand_where_an_operator_could_follow_expects_one() {
    // After an operand, an operator may follow: where none can start (`"`,
    // `1`) and where one could (`c` of `contain`), the error says so alike.
    for (condition, found) in [
        ("phase \"Pending\"", "`\"`"),
        ("phase 1", "`1`"),
        ("phase contain \"x\"", "`contain`"),
    ] {
        let src = format!("symptom s \"S\" {{\n  when {condition}\n}}\n");
        let problems = errors(&src);
        assert_eq!(
            problems[0].message,
            format!(
                "expected `.` or `[`, `check`, `explain`, `when` or an operator, found {found}"
            ),
            "{src}"
        );
    }
}

#[test]
fn what_parses_around_a_syntax_error_is_recovered() {
    let errors = parse(
        "fact a: number \"A\" { from 1 }\n\nsymptom s \"S\" {\n  wen\n}\n",
        "t.kb",
    )
    .err()
    .unwrap();
    assert_eq!(errors.recovered.facts().count(), 1);
    assert_eq!(
        errors.broken,
        [crate::Broken::Declaration {
            keyword: "symptom".into(),
            name: "s".into()
        }]
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    for src in [
        format!(
            "symptom s \"S\" {{ when {}a{} }}",
            "(".repeat(100_000),
            ")".repeat(100_000)
        ),
        format!("symptom s \"S\" {{ when {}a }}", "not ".repeat(100_000)),
        format!(
            "test \"t\" {{ given {{\"a\": {}1{} }} }}",
            "[".repeat(10_000),
            "]".repeat(10_000)
        ),
        format!(
            "fact f: {}string{} \"F\" {{ from pod.a }}",
            "list<".repeat(100_000),
            ">".repeat(100_000)
        ),
        format!("symptom s \"S\" {{ when {}a }}", "a and ".repeat(100_000)),
        format!("symptom s \"S\" {{ when a{} }}", ".b".repeat(100_000)),
        format!("symptom s \"S\" {{ when a{} }}", "[0]".repeat(100_000)),
        // What pest skips between tokens hides no level: byte order marks
        // and comments between `not`s and in `list<…>`, a raw string
        // ending in a backslash, and text the count cannot read before.
        format!(
            "symptom s \"S\" {{ when {}a }}",
            "not\u{feff}".repeat(100_000)
        ),
        format!(
            "fact f: {}string{} \"F\" {{ from pod.a }}",
            "list\u{feff}<".repeat(100_000),
            ">".repeat(100_000)
        ),
        format!(
            "fact f: {}string{} \"F\" {{ from pod.a }}",
            "list # a comment\n<".repeat(100_000),
            ">".repeat(100_000)
        ),
        format!(
            "symptom s \"S\" {{ when a matches r\"\\\" or {}a{} }}",
            "(".repeat(100_000),
            ")".repeat(100_000)
        ),
        format!(
            "lé中\nfact a: bool \"A\" {{ from {}true{} }}",
            "(".repeat(100_000),
            ")".repeat(100_000)
        ),
    ] {
        let problems = errors(&src);
        let start: String = src.chars().take(40).collect();
        assert_eq!(problems.len(), 1, "{start}");
        assert_eq!(problems[0].code, Code::TooDeep, "{start}");
    }
    let fine = format!(
        "symptom s \"S\" {{ when {}a{} }}",
        "(".repeat(40),
        ")".repeat(40)
    );
    assert_eq!(ok(&fine).symptoms().count(), 1);
}

#[test]
fn deep_nesting_in_a_declaration_read_on_its_own_is_an_error_too() {
    // A file that does not parse is read again declaration by declaration,
    // each from a line that starts one: such a line may be inside a long
    // string, or follow a string broken by a backslash at its line's end.
    let deep = format!("{}true{}", "(".repeat(100_000), ")".repeat(100_000));
    let lists = format!("{}string{}", "list<".repeat(100_000), ">".repeat(100_000));
    for src in [
        format!("fact b: bool \"\"\"\nfact a: bool \"A\" {{ from {deep} }}\n\"\"\" {{ from true\n"),
        format!("input pod \"P\\\nfact a: {lists} \"A\" {{ from true }}\n"),
    ] {
        let problems = errors(&src);
        assert!(
            problems.iter().any(|p| p.code == Code::TooDeep),
            "{problems:?}"
        );
    }
}

#[test]
fn an_expression_may_be_as_deep_as_the_limit() {
    use crate::parse::MAX_EXPR_DEPTH;
    // A chain of n names joined by operators is n deep.
    let chain = |n: usize| vec!["a"; n].join(" and ");
    let deepest = format!("symptom s \"S\" {{ when {} }}", chain(MAX_EXPR_DEPTH));
    assert_eq!(ok(&deepest).symptoms().count(), 1);
    let fields = format!(
        "symptom s \"S\" {{ when a{} }}",
        ".b".repeat(MAX_EXPR_DEPTH - 1)
    );
    assert_eq!(ok(&fields).symptoms().count(), 1);
    for too_deep in [
        chain(MAX_EXPR_DEPTH + 1),
        format!("a{}", ".b".repeat(MAX_EXPR_DEPTH)),
        format!("({}) == 1", chain(MAX_EXPR_DEPTH)),
        format!("[{}]", chain(MAX_EXPR_DEPTH)),
        format!("len({})", chain(MAX_EXPR_DEPTH)),
        format!("not ({})", chain(MAX_EXPR_DEPTH)),
        format!("a[{}]", chain(MAX_EXPR_DEPTH)),
    ] {
        let src = format!("symptom s \"S\" {{ when {too_deep} }}");
        let problems = errors(&src);
        assert_eq!(problems.len(), 1, "{too_deep}");
        assert_eq!(problems[0].code, Code::TooDeep, "{too_deep}");
        assert!(problems[0].message.contains("expression"), "{too_deep}");
    }
}

#[test]
fn a_declaration_that_cannot_be_built_is_reported_broken() {
    let src = format!(
        "input pod \"P\"\nsymptom s \"S\" {{ when {} }}\n",
        vec!["a"; 1000].join(" or ")
    );
    match crate::parse(&src, "test.kb") {
        Err(errors) => {
            assert_eq!(errors.recovered.inputs().count(), 1);
            assert_eq!(
                errors.broken,
                [crate::Broken::Declaration {
                    keyword: "symptom".into(),
                    name: "s".into()
                }]
            );
        }
        Ok(rules) => panic!("{rules:?}"),
    }
}

#[test]
fn nesting_up_to_the_limit_parses_on_a_small_stack() {
    // The parser relies on the nesting limit, not on probing the stack:
    // everything the limit allows must parse on a thread of 2 MiB, as the
    // test threads and rayon's workers have, in a debug build.
    // The symptom's braces are one level.
    let n = crate::parse::MAX_NESTING - 1;
    let half = n / 2;
    let conditions = [
        format!("{}a{}", "(".repeat(n), ")".repeat(n)),
        format!("{}1{} == 1", "[".repeat(n), "]".repeat(n)),
        format!("{}a{} > 0", "len(".repeat(n), ")".repeat(n)),
        format!("{}a", "not ".repeat(n)),
        format!("{}a{}", "not (".repeat(n), ")".repeat(n)),
        format!("{}a{}", "any(xs, (".repeat(half), "))".repeat(half)),
    ];
    for condition in conditions {
        let src = format!("symptom s \"S\" {{ when {condition} }}");
        let parsed = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || ok(&src).symptoms().count())
            .unwrap()
            .join();
        assert_eq!(parsed.ok(), Some(1), "{condition}");
    }
}

#[test]
fn brackets_inside_strings_and_comments_do_not_count_as_nesting() {
    let src = format!("# {}\ninput pod \"{}\"", "(".repeat(1000), "[".repeat(1000));
    assert_eq!(ok(&src).inputs().count(), 1);
}

#[test]
fn invalid_inline_json_is_located() {
    let problems = errors("test \"t\" {\n  given {\"a\": 01}\n}");
    assert_eq!(problems[0].code, Code::BadJson);
    assert_eq!(problems[0].loc.position(), "test.kb:2:9");
}

#[test]
fn an_empty_file_is_an_empty_rule_set() {
    assert_eq!(ok(""), RuleSet::default());
    assert_eq!(ok("# only a comment\n"), RuleSet::default());
}

#[test]
fn lists_of_the_tree_take_no_more_memory_than_they_hold() {
    let rules = ok(r#"
        symptom s "S" {
          check "A?" {
            if any(list(a, b), . == "x") => c1
            if b matches r"y" => c2
          }
          check "B?" { else => c3 }
          check "C?" { else => c3 }
        }
        cause c1 "C1" { fix "F" { step "one" step "two" step "three" } fix "G" { step "one" } }
        test "t" { input {} expect c1 expect c2 expect not c3 }
    "#);
    let symptom = rules.symptoms().next().unwrap();
    let branches = &symptom.checks[0].branches;
    let ExprKind::Call(_, args) = kind(branches[0].condition.as_ref().unwrap()) else {
        panic!("a call")
    };
    let ExprKind::Call(_, list) = kind(&args[0]) else {
        panic!("a call")
    };
    let fixes = &rules.causes().next().unwrap().fixes;
    let expects = &rules.tests().next().unwrap().expects;
    let lengths = [
        (symptom.checks.len(), symptom.checks.capacity()),
        (branches.len(), branches.capacity()),
        (args.len(), args.capacity()),
        (list.len(), list.capacity()),
        (fixes.len(), fixes.capacity()),
        (fixes[0].steps.len(), fixes[0].steps.capacity()),
        (expects.len(), expects.capacity()),
    ];
    assert_eq!(lengths.map(|(len, _)| len), [3, 2, 2, 2, 2, 3, 3]);
    assert!(
        lengths.iter().all(|(len, capacity)| len == capacity),
        "{lengths:?}"
    );
}
