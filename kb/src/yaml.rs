//! Inputs as `kubectl get … -o yaml` prints them: read into the same JSON
//! documents as `-o json`, so the adapter and the rules see no difference.

use kb_engine::json::Json;
use serde::de::DeserializeOwned;
use serde_saphyr::budget::BudgetBreach;
use serde_saphyr::{Budget, DuplicateKeyPolicy, Error, Options};

/// Whether an input whose first line (not blank) is `line` and is not JSON
/// is YAML: a document marker, a comment (a chart's `# Source: …`), or a
/// key of a mapping at the start of the line (`apiVersion: v1`, `pod:`).
pub fn starts_yaml(line: &[u8]) -> bool {
    let line = line.trim_ascii_end();
    if line == b"---" || line.starts_with(b"--- ") || line.starts_with(b"#") {
        return true;
    }
    let key = line
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || b"_-./".contains(b))
        .count();
    key > 0
        && line.first().is_some_and(u8::is_ascii_alphabetic)
        && matches!(
            line.get(key..),
            Some([b':']) | Some([b':', b' ' | b'\t', ..])
        )
}

/// The largest YAML input read: it is parsed whole, at about 400
/// instructions a byte, into about seven times its size in memory.
pub const MAX_BYTES: usize = 256 << 20;

/// How deeply YAML may nest, as JSON may (serde_json's limit).
pub const MAX_DEPTH: usize = 128;

/// How many nodes aliases may repeat in all, and anchors keep for them.
const MAX_ALIASED: usize = 100_000;

/// Every document of a YAML text, as JSON; empty documents (a stream's last
/// `---`) are passed over. `name` and `first_line`, the line `text` starts
/// on, place its errors as they place JSON's.
pub fn documents(text: &[u8], name: &str, first_line: usize) -> Result<Vec<Json<'static>>, String> {
    let documents: Vec<Json<'static>> = parse(text).map_err(|invalid| match invalid.at {
        Some((line, column)) => format!(
            "{name}:{}:{column}: invalid YAML: {}",
            line + first_line - 1,
            invalid.message
        ),
        None => format!("{name}: invalid YAML: {}", invalid.message),
    })?;
    Ok(documents
        .into_iter()
        .filter(|document| !matches!(document, Json::Null))
        .collect())
}

/// What is wrong with a YAML text, and where, when known: its line and
/// column, 1-based.
#[derive(Debug)]
pub struct Invalid {
    /// The line and column.
    pub at: Option<(usize, usize)>,
    /// What is wrong.
    pub message: String,
}

/// Every document of a YAML text, empty ones as `null`.
pub fn parse<T: DeserializeOwned>(text: &[u8]) -> Result<Vec<T>, Invalid> {
    serde_saphyr::from_slice_multiple_with_options(text, options()).map_err(|error| Invalid {
        at: error
            .without_snippet()
            .location()
            .map(|at| (at.line() as usize, at.column() as usize)),
        message: message(&error),
    })
}

/// What is wrong, without where, which kb says first, as for JSON.
fn message(mut error: &Error) -> String {
    while let Error::AliasError { error: inner, .. } | Error::WithSnippet { error: inner, .. } =
        error
    {
        error = inner;
    }
    match error {
        Error::Budget {
            breach: BudgetBreach::Depth { .. },
            ..
        } => format!("nested deeper than {MAX_DEPTH} levels"),
        Error::Budget {
            breach:
                BudgetBreach::Aliases { .. }
                | BudgetBreach::Anchors { .. }
                | BudgetBreach::AliasAnchorRatio { .. }
                | BudgetBreach::RecordedAnchorEvents { .. }
                | BudgetBreach::RecordedAnchorBytes { .. },
            ..
        }
        | Error::AliasReplayLimitExceeded { .. }
        | Error::AliasExpansionLimitExceeded { .. }
        | Error::AliasReplayStackDepthExceeded { .. } => {
            String::from("its aliases (`*name`) repeat more than kb reads; kubectl writes none")
        }
        error => {
            let text = error.to_string();
            // serde-saphyr ends its messages with where.
            match text.split_once(" at line ") {
                Some((what, _)) => what.to_owned(),
                None => text,
            }
        }
    }
}

/// What kubectl's YAML may hold: as much as its JSON (kb's limits on inputs
/// read whole), nested as deep; aliases, which kubectl never writes, a few,
/// so that no document multiplies itself through them.
fn options() -> Options {
    let mut budget = Budget::default();
    budget.max_reader_input_bytes = None;
    budget.max_events = usize::MAX;
    budget.max_nodes = usize::MAX;
    budget.max_documents = usize::MAX;
    budget.max_total_scalar_bytes = usize::MAX;
    budget.max_depth = MAX_DEPTH;
    budget.max_recorded_anchor_events = MAX_ALIASED;
    let mut options = Options::default();
    options.budget = Some(budget);
    options.alias_limits.max_total_replayed_events = MAX_ALIASED;
    // As in JSON, where serde_json keeps the last.
    options.duplicate_keys = DuplicateKeyPolicy::LastWins;
    options
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use super::*;

    #[test]
    fn yaml_is_told_by_its_first_line() {
        for yaml in [
            "apiVersion: v1",
            "kind: List\r\n",
            "pod:",
            "---",
            "--- # the pod",
            "# Source: shop/templates/deployment.yaml",
            "app.kubernetes.io/name: web",
        ] {
            assert!(starts_yaml(yaml.as_bytes()), "{yaml}");
        }
        for other in [
            "{",
            "[{\"kind\": \"Pod\"}]",
            "\"pod\": 1",
            "-1",
            "NAME    READY   STATUS",
            "pod web-1 is pending",
            "https://example.com",
            "a:b",
            ": value",
        ] {
            assert!(!starts_yaml(other.as_bytes()), "{other}");
        }
    }

    #[test]
    fn documents_are_json_values_and_empty_ones_are_passed_over() {
        let text = b"---\nkind: Pod\nspec:\n  containers:\n  - name: web\n    ports: [80]\n---\n";
        let documents = documents(text, "pod.yaml", 1).unwrap();
        let expected: Json<'static> = serde_json::from_str(
            r#"{"kind": "Pod", "spec": {"containers": [{"name": "web", "ports": [80]}]}}"#,
        )
        .unwrap();
        assert_eq!(documents, [expected]);
        let error = self::documents(b"kind: Pod\nkind: [\n", "pod.yaml", 3).unwrap_err();
        assert!(error.starts_with("pod.yaml:4:7: invalid YAML: "), "{error}");
    }
}
