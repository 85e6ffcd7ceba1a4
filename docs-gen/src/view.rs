//! What the templates see: plain, serialisable views of a knowledge base in
//! one language. Restyling a site means writing templates against these
//! (docs/runbooks.md documents every field).

use std::collections::BTreeMap;

use kb_engine::Lang;
use kb_engine::diagnosis::FixFinding;
use kb_engine::kb::{CheckId, KnowledgeBase, LocalText, SymptomInfo, Target};
use serde::Serialize;

use crate::flow::Flow;
use crate::paths;

/// A whole runbook site in one language.
#[derive(Debug, Clone, Serialize)]
pub struct Book {
    /// The knowledge base's name.
    pub title: String,
    /// This site's language: `en` or `zh`.
    pub lang: &'static str,
    /// The other language, whose site sits beside this one.
    pub other_lang: &'static str,
    /// Words of the page furniture, in this language.
    pub words: Words,
    /// One page per symptom, in the knowledge base's order.
    pub symptoms: Vec<SymptomPage>,
    /// One page per cause, in the knowledge base's order.
    pub causes: Vec<CausePage>,
    /// Every fact, for the facts reference page.
    pub facts: Vec<FactEntry>,
}

/// A symptom's page.
#[derive(Debug, Clone, Serialize)]
pub struct SymptomPage {
    /// Its id.
    pub id: String,
    /// Its name.
    pub title: String,
    /// What it means.
    pub explain: Option<String>,
    /// When an input shows it, as written.
    pub when: String,
    /// The facts `when` reads.
    pub when_facts: Vec<String>,
    /// The page, relative to the site's root.
    pub path: String,
    /// Its checks, depth first, numbered `1`, `1.2`, …
    pub checks: Vec<CheckEntry>,
    /// Every cause its checks lead to.
    pub causes: Vec<Link>,
    /// The decision tree.
    #[serde(skip)]
    pub flow: Flow,
    /// The decision tree as a Mermaid flowchart.
    pub mermaid: String,
}

/// A check as a runbook step.
#[derive(Debug, Clone, Serialize)]
pub struct CheckEntry {
    /// Its number on the page: `1`, `2`, `2.1`.
    pub number: String,
    /// Its id.
    pub id: String,
    /// The question.
    pub title: String,
    /// How to answer it by hand.
    pub explain: Option<String>,
    /// Commands that show what it looks at: its own, then its facts'.
    pub commands: Vec<String>,
    /// Its branches.
    pub branches: Vec<BranchEntry>,
    /// The number of the check that follows when no branch holds.
    pub otherwise: Option<String>,
}

/// A branch of a check.
#[derive(Debug, Clone, Serialize)]
pub struct BranchEntry {
    /// The condition as written, or `else`.
    pub condition: String,
    /// `cause` or `check`.
    pub kind: &'static str,
    /// Where it leads: a cause page, or a check's number on this page.
    pub target: Link,
}

/// A link to a page (or to a check on the same page).
#[derive(Debug, Clone, Serialize)]
pub struct Link {
    /// The id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// The page relative to the site's root; for checks, `#check-NUMBER`.
    pub path: String,
}

/// A cause's page.
#[derive(Debug, Clone, Serialize)]
pub struct CausePage {
    /// Its id.
    pub id: String,
    /// What is wrong.
    pub title: String,
    /// Why it happens.
    pub explain: Option<String>,
    /// The page, relative to the site's root.
    pub path: String,
    /// The symptoms that lead to it.
    pub symptoms: Vec<Link>,
    /// How to confirm it: the conditions on the way from each symptom.
    pub signals: Vec<Signal>,
    /// Values seen when the knowledge base's tests confirm it.
    pub examples: Vec<Example>,
    /// How to fix it.
    pub fixes: Vec<FixFinding>,
}

/// The conditions that lead from a symptom to a cause.
#[derive(Debug, Clone, Serialize)]
pub struct Signal {
    /// The symptom.
    pub symptom: Link,
    /// Its `when`, then each condition on the way.
    pub conditions: Vec<String>,
}

/// A value a test saw when the cause was confirmed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Example {
    /// The fact.
    pub fact: String,
    /// Its value, as JSON.
    pub value: String,
}

/// A fact on the facts page.
#[derive(Debug, Clone, Serialize)]
pub struct FactEntry {
    /// Its name.
    pub name: String,
    /// Its type.
    pub ty: String,
    /// What it means.
    pub title: String,
    /// More about it.
    pub explain: Option<String>,
    /// How it is derived from the input; none when it must be given.
    pub derivation: Option<String>,
    /// The command that shows it, with placeholders.
    pub gather: Option<String>,
}

/// The words of the page furniture.
#[derive(Debug, Clone, Serialize)]
pub struct Words {
    /// "Symptoms"
    pub symptoms: &'static str,
    /// "Causes"
    pub causes: &'static str,
    /// "Facts"
    pub facts: &'static str,
    /// "Symptom"
    pub symptom: &'static str,
    /// "Cause"
    pub cause: &'static str,
    /// "How to recognise it"
    pub recognise: &'static str,
    /// "Decision tree"
    pub tree: &'static str,
    /// "Checks, in order"
    pub checks: &'static str,
    /// "If"
    pub condition: &'static str,
    /// "then"
    pub then: &'static str,
    /// "Otherwise, go on with check"
    pub otherwise: &'static str,
    /// "Where it comes from"
    pub leads_here: &'static str,
    /// "How to confirm it"
    pub confirm: &'static str,
    /// "Seen in the tests"
    pub examples: &'static str,
    /// "Fix"
    pub fix: &'static str,
    /// "Risk"
    pub risk: &'static str,
    /// "Type"
    pub ty: &'static str,
    /// "Derived from"
    pub derived: &'static str,
    /// "Given in the input"
    pub given: &'static str,
    /// "Gather it with"
    pub gather: &'static str,
    /// "Read this page in Chinese" (in the other language)
    pub other_language: &'static str,
    /// "Index"
    pub index: &'static str,
    /// "Runbooks generated from the rules kb runs"
    pub intro: &'static str,
    /// "Confirmed"
    pub confirmed: &'static str,
    /// "Possible causes"
    pub possible: &'static str,
    /// "Next checks"
    pub next: &'static str,
    /// "Runbook"
    pub runbook: &'static str,
    /// "Warning"
    pub warning: &'static str,
    /// "No symptom … matched"
    pub no_symptom: &'static str,
    /// "Evidence", over the conditions that held
    pub evidence: &'static str,
    /// "Values read", over the facts they read
    pub values: &'static str,
    /// "Id", over ids
    pub id: &'static str,
    /// "No cause … explains", when a symptom shows and no cause is reached
    pub no_cause: &'static str,
    /// "The checks end where no branch holds", over the checks where they end
    pub dead_ends: &'static str,
}

impl Words {
    /// The words in a language.
    pub fn of(lang: Lang) -> Self {
        match lang {
            Lang::En => Self {
                symptoms: "Symptoms",
                causes: "Causes",
                facts: "Facts",
                symptom: "Symptom",
                cause: "Cause",
                recognise: "How to recognise it",
                tree: "Decision tree",
                checks: "Checks, in order",
                condition: "If",
                then: "then",
                otherwise: "Otherwise, go on with check",
                leads_here: "Where it comes from",
                confirm: "How to confirm it",
                examples: "Seen in the tests",
                fix: "Fix",
                risk: "Risk",
                ty: "Type",
                derived: "Derived from",
                given: "Given in the input (`facts`); kubectl's JSON does not hold it",
                gather: "Gather it with",
                other_language: "中文版",
                index: "Index",
                intro: "These runbooks are generated from the same rules `kb eval` runs, so the two never disagree. Start from the symptom you see.",
                confirmed: "Confirmed",
                possible: "Possible causes",
                next: "Next checks",
                runbook: "runbook",
                warning: "Warning",
                no_symptom: "No symptom of the knowledge base matched this input.",
                evidence: "Evidence",
                values: "Values read",
                id: "Id",
                no_cause: "No cause of the knowledge base explains this symptom here; `kb eval --why-not CAUSE` shows every way to a cause and where it stops.",
                dead_ends: "The checks end where no branch holds:",
            },
            Lang::Zh => Self {
                symptoms: "症状",
                causes: "原因",
                facts: "事实",
                symptom: "症状",
                cause: "原因",
                recognise: "如何识别",
                tree: "排查决策树",
                checks: "排查步骤",
                condition: "如果",
                then: "则",
                otherwise: "否则，继续检查",
                leads_here: "出现在哪些症状中",
                confirm: "如何确认",
                examples: "测试中见到的值",
                fix: "处理方法",
                risk: "风险",
                ty: "类型",
                derived: "取值方式",
                given: "需要在输入中提供（facts）；kubectl 的 JSON 中没有",
                gather: "获取命令",
                other_language: "English",
                index: "目录",
                intro: "这些运维手册由 `kb eval` 所用的同一套规则生成，二者始终一致。从你看到的症状开始排查。",
                confirmed: "已确认",
                possible: "可能的原因",
                next: "下一步检查",
                runbook: "手册",
                warning: "警告",
                no_symptom: "知识库中没有与该输入匹配的症状。",
                evidence: "依据",
                values: "读取的值",
                id: "ID",
                no_cause: "知识库中没有能解释此处症状的原因；`kb eval --why-not CAUSE` 会列出通往某个原因的每条路径，以及它在哪一步中断。",
                dead_ends: "排查在以下检查处结束，没有一个分支成立：",
            },
        }
    }
}

fn lang_code(lang: Lang) -> &'static str {
    match lang {
        Lang::En => "en",
        Lang::Zh => "zh",
    }
}

fn text(text: Option<&LocalText>, lang: Lang) -> Option<String> {
    text.map(|t| t.get(lang).to_owned())
}

impl Book {
    /// The views of a knowledge base in one language. `examples` maps cause
    /// ids to values its tests saw when confirming them.
    pub fn new(
        kb: &KnowledgeBase,
        title: &str,
        lang: Lang,
        examples: &BTreeMap<String, Vec<Example>>,
    ) -> Self {
        let symptoms = kb
            .symptoms
            .iter()
            .map(|s| symptom_page(kb, s, lang))
            .collect();
        let causes = kb
            .causes
            .iter()
            .enumerate()
            .map(|(i, cause)| CausePage {
                id: cause.id.to_string(),
                title: cause.title.get(lang).to_owned(),
                explain: text(cause.explain.as_ref(), lang),
                path: paths::cause(&cause.id),
                symptoms: kb
                    .symptoms_of(kb_engine::kb::CauseId(i))
                    .into_iter()
                    .filter_map(|s| kb.symptoms.get(s.0))
                    .map(|s| symptom_link(s, lang))
                    .collect(),
                signals: signals(kb, i, lang),
                examples: examples.get(cause.id.as_str()).cloned().unwrap_or_default(),
                fixes: kb.placeholder_fixes(cause, lang),
            })
            .collect();
        let facts = kb
            .facts
            .iter()
            .map(|fact| FactEntry {
                name: fact.name.to_string(),
                ty: fact.ty.to_string(),
                title: fact.title.get(lang).to_owned(),
                explain: text(fact.explain.as_ref(), lang),
                derivation: fact.derivation.as_deref().map(str::to_owned),
                gather: fact.gather.as_ref().map(|t| kb.placeholder_command(t)),
            })
            .collect();
        Self {
            title: title.to_owned(),
            lang: lang_code(lang),
            other_lang: lang_code(match lang {
                Lang::En => Lang::Zh,
                Lang::Zh => Lang::En,
            }),
            words: Words::of(lang),
            symptoms,
            causes,
            facts,
        }
    }
}

fn symptom_link(symptom: &SymptomInfo, lang: Lang) -> Link {
    Link {
        id: symptom.id.to_string(),
        title: symptom.title.get(lang).to_owned(),
        path: paths::symptom(&symptom.id),
    }
}

fn symptom_page(kb: &KnowledgeBase, symptom: &SymptomInfo, lang: Lang) -> SymptomPage {
    let mut numbers: BTreeMap<usize, String> = BTreeMap::new();
    let mut order: Vec<CheckId> = Vec::new();
    for (i, id) in symptom.checks.iter().enumerate() {
        number_checks(kb, *id, (i + 1).to_string(), &mut numbers, &mut order);
    }
    let checks = order
        .iter()
        .filter_map(|id| kb.checks.get(id.0).map(|check| (id, check)))
        .map(|(id, check)| {
            let mut commands: Vec<String> = check
                .gather
                .iter()
                .map(|t| kb.placeholder_command(t))
                .collect();
            for branch in &check.branches {
                for fact in &branch.facts {
                    let gather = kb.facts.get(fact.0).and_then(|f| f.gather.as_ref());
                    if let Some(command) = gather.map(|t| kb.placeholder_command(t))
                        && !commands.contains(&command)
                    {
                        commands.push(command);
                    }
                }
            }
            CheckEntry {
                number: numbers.get(&id.0).cloned().unwrap_or_default(),
                id: check.id.to_string(),
                title: check.title.get(lang).to_owned(),
                explain: text(check.explain.as_ref(), lang),
                commands,
                branches: check
                    .branches
                    .iter()
                    .map(|branch| {
                        let condition = branch
                            .condition_text
                            .as_deref()
                            .unwrap_or("else")
                            .to_owned();
                        match branch.target {
                            Target::Cause(cause) => BranchEntry {
                                condition,
                                kind: "cause",
                                target: cause_link(kb, cause.0, lang),
                            },
                            Target::Check(next) => BranchEntry {
                                condition,
                                kind: "check",
                                target: check_link(kb, next, &numbers, lang),
                            },
                        }
                    })
                    .collect(),
                otherwise: check.next.and_then(|n| numbers.get(&n.0).cloned()),
            }
        })
        .collect();
    let mut causes: Vec<Link> = Vec::new();
    for id in &order {
        for branch in kb
            .checks
            .get(id.0)
            .map(|c| c.branches.as_slice())
            .unwrap_or_default()
        {
            if let Target::Cause(cause) = branch.target
                && !causes
                    .iter()
                    .any(|c| kb.causes.get(cause.0).is_some_and(|x| x.id == c.id))
            {
                causes.push(cause_link(kb, cause.0, lang));
            }
        }
    }
    let flow = Flow::of(kb, symptom, lang);
    SymptomPage {
        id: symptom.id.to_string(),
        title: symptom.title.get(lang).to_owned(),
        explain: text(symptom.explain.as_ref(), lang),
        when: symptom.when_text.to_string(),
        when_facts: symptom
            .when_facts
            .iter()
            .filter_map(|f| kb.facts.get(f.0).map(|f| f.name.to_string()))
            .collect(),
        path: paths::symptom(&symptom.id),
        checks,
        causes,
        mermaid: flow.to_mermaid(),
        flow,
    }
}

/// Numbers checks depth first: a symptom's checks 1, 2, …; a check reached
/// from check 2's branches 2.1, 2.2, …
fn number_checks(
    kb: &KnowledgeBase,
    id: CheckId,
    number: String,
    numbers: &mut BTreeMap<usize, String>,
    order: &mut Vec<CheckId>,
) {
    if numbers.contains_key(&id.0) {
        return;
    }
    numbers.insert(id.0, number.clone());
    order.push(id);
    let Some(check) = kb.checks.get(id.0) else {
        return;
    };
    let mut child = 0;
    for branch in &check.branches {
        if let Target::Check(next) = branch.target {
            child += 1;
            number_checks(kb, next, format!("{number}.{child}"), numbers, order);
        }
    }
}

fn cause_link(kb: &KnowledgeBase, index: usize, lang: Lang) -> Link {
    let cause = kb.causes.get(index);
    Link {
        id: cause.map(|c| c.id.to_string()).unwrap_or_default(),
        title: cause
            .map(|c| c.title.get(lang).to_owned())
            .unwrap_or_default(),
        path: cause.map(|c| paths::cause(&c.id)).unwrap_or_default(),
    }
}

fn check_link(
    kb: &KnowledgeBase,
    id: CheckId,
    numbers: &BTreeMap<usize, String>,
    lang: Lang,
) -> Link {
    let check = kb.checks.get(id.0);
    let number = numbers.get(&id.0).cloned().unwrap_or_default();
    Link {
        id: check.map(|c| c.id.to_string()).unwrap_or_default(),
        title: check
            .map(|c| c.title.get(lang).to_owned())
            .unwrap_or_default(),
        path: format!("#check-{}", number.replace('.', "-")),
    }
}

/// The conditions on the way from each symptom to a cause.
fn signals(kb: &KnowledgeBase, cause: usize, lang: Lang) -> Vec<Signal> {
    kb.ways_to(kb_engine::kb::CauseId(cause))
        .into_iter()
        .filter_map(|way| {
            let symptom = kb.symptoms.get(way.symptom.0)?;
            Some(Signal {
                symptom: symptom_link(symptom, lang),
                conditions: way.conditions,
            })
        })
        .collect()
}
