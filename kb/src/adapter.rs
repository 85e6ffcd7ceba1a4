//! The thin Kubernetes input adapter: whatever kubectl printed → one
//! document per subject, shaped `{"pod", "events", "node", "owner", "namespace"}`.
//!
//! Accepted: a bundle (already in that shape), a bare object (`kubectl get
//! pod -o json`), a `List` (`kubectl get pod,events,node -o json`), several of
//! these at once, or a plain facts document. Everything else is an error
//! naming what was found; nothing given is dropped silently.

use std::borrow::Cow;
use std::collections::HashMap;

use kb_engine::KnowledgeBase;
use kb_engine::json::{Json, Object};
use kb_engine::needs::{Needs, Pruner};

/// The fields the adapter reads of any object to tell it apart and find
/// its owner and node. Of an owner reference, what [`About`] reads.
const OBJECT_READS: &[&[&str]] = &[
    &["kind"],
    &["apiVersion"],
    &["metadata", "name"],
    &["metadata", "namespace"],
    &["metadata", "uid"],
    &["metadata", "ownerReferences", "uid"],
    &["metadata", "ownerReferences", "kind"],
    &["metadata", "ownerReferences", "name"],
    &["metadata", "ownerReferences", "controller"],
    &["metadata", "creationTimestamp"],
    &["spec", "nodeName"],
    // What a `Status` (an error the API server returned) says.
    &["message"],
    &["reason"],
    &["code"],
    // What tells an object written by the Kubernetes Python client.
    &["api_version"],
];

/// The fields the adapter reads of an event: the four of what it is about
/// that [`About`] reads, and when it was last seen, to order events.
const EVENT_READS: &[&[&str]] = &[
    &["involvedObject", "uid"],
    &["involvedObject", "kind"],
    &["involvedObject", "name"],
    &["involvedObject", "namespace"],
    &["series", "lastObservedTime"],
    &["lastTimestamp"],
    &["eventTime"],
    &["firstTimestamp"],
    &["metadata", "creationTimestamp"],
    &["api_version"],
];

/// The fields of an events.k8s.io/v1 Event (what `kubectl get
/// events.events.k8s.io` and that API's clients give) with the names the
/// same fields have in a core/v1 Event, as rules read events.
const EVENTS_V1_NAMES: &[(&str, &str)] = &[
    ("note", "message"),
    ("regarding", "involvedObject"),
    ("deprecatedCount", "count"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("reportingController", "reportingComponent"),
];

/// What kb reads of a document in any of the shapes it accepts, compiled
/// for parsing: a document parsed with it is diagnosed the same as a whole
/// one, warnings about the keys it does not know included.
pub fn pruner(kb: &KnowledgeBase) -> Pruner {
    needs(kb).pruner().keeping_every_key()
}

/// What kb reads of a document in any of the shapes it accepts: an object
/// of any kind (alone, in a `List`, in a watch event) keeps what the adapter
/// reads of objects and events and what the rules read of every input; a
/// bundle's values are each of their own kind, and keep what the adapter
/// reads of such an object and what the rules read of that input.
fn needs(kb: &KnowledgeBase) -> Needs {
    let reads = |paths: &[&[&str]]| {
        let mut needs = Needs::default();
        for path in paths {
            needs.add_whole(path);
        }
        needs
    };
    let with_items = |mut needs: Needs| {
        let items = needs.clone();
        needs.field("items").merge(&items);
        needs
    };
    // What is read of an event under its core/v1 name is read under its
    // events.k8s.io/v1 name too.
    let of_events_v1 = |mut needs: Needs| {
        for (v1, core) in EVENTS_V1_NAMES {
            needs.alias(core, v1);
        }
        needs
    };
    let mut object = reads(OBJECT_READS);
    object.merge(&reads(EVENT_READS));
    for input in &kb.inputs {
        if let Some(needs) = kb.needs_of(&input.name) {
            object.merge(needs);
        }
    }
    let object = with_items(of_events_v1(object));
    let mut root = object.clone();
    root.add_whole(&["type"]);
    root.field("object").merge(&object);
    for key in BUNDLE_KEYS {
        if *key == "events" {
            // A list of them, or an EventList: what the rules read of the
            // events input is needed of its items too.
            let mut events = reads(EVENT_READS);
            if let Some(needs) = kb.needs_of(key) {
                events.merge(needs);
            }
            root.field(key).merge(&with_items(of_events_v1(events)));
        } else {
            root.field(key).merge(&reads(OBJECT_READS));
        }
    }
    for input in &kb.inputs {
        if let Some(needs) = kb.needs_of(&input.name) {
            root.field(&input.name).merge(needs);
        }
    }
    root.add_whole(&["facts"]);
    for fact in &kb.facts {
        root.add_whole(&[fact.name.as_str()]);
    }
    root
}

/// One thing to diagnose.
#[derive(Debug, Clone)]
pub struct Subject<'t> {
    /// `pod default/web-1`, `replicaset shop/api-7d9`, …
    pub label: Option<String>,
    /// The document the knowledge base reads.
    pub document: Json<'t>,
    /// What was left out of what was given, and why.
    pub warnings: Vec<String>,
}

/// Says, of each object a watch event says was deleted, that this is its last
/// state: to the subject it is, or, for an object that is no subject (an
/// event, a node), to every subject, in one warning naming the first
/// [`NAMED`] of them and counting the rest.
fn warn_of_deletions(subjects: &mut [Subject<'_>], deleted: Vec<String>) {
    let said =
        |gone: &str| format!("a watch event says `{gone}` was deleted: this is its last state");
    let mut by_label: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, subject) in subjects.iter().enumerate() {
        if let Some(label) = &subject.label {
            by_label.entry(label.clone()).or_default().push(i);
        }
    }
    let mut others = Vec::new();
    for gone in deleted {
        let Some(found) = by_label.get(&gone) else {
            others.push(gone);
            continue;
        };
        for &i in found {
            if let Some(subject) = subjects.get_mut(i) {
                subject.warnings.push(said(&gone));
            }
        }
    }
    let warning = match others.as_slice() {
        [] => return,
        [gone] => said(gone),
        _ => format!(
            "watch events say {} objects were deleted ({}): this is their last state",
            others.len(),
            listed(
                others.len(),
                others.iter().map(|gone| format!("`{gone}`")),
                ""
            )
        ),
    };
    for subject in subjects {
        subject.warnings.push(warning.clone());
    }
}

const BUNDLE_KEYS: &[&str] = &["pod", "events", "node", "owner", "namespace", "facts"];
const OWNER_KINDS: &[&str] = &[
    "ReplicaSet",
    "StatefulSet",
    "DaemonSet",
    "Job",
    "Deployment",
    "CronJob",
    "ReplicationController",
];

#[derive(Default)]
struct Objects<'t> {
    pods: Vec<Json<'t>>,
    events: Vec<Json<'t>>,
    saw_events: bool,
    nodes: Vec<Json<'t>>,
    owners: Vec<Json<'t>>,
    namespaces: Vec<Json<'t>>,
    /// Kinds kb does not diagnose, as `kubectl get all` gives them (Services,
    /// autoscalers): for each, when it was first met (0, 1, …) and how many.
    left_out: HashMap<String, (usize, usize)>,
}

/// How many kinds left out, or objects deleted, a warning names; the rest
/// are counted.
const NAMED: usize = 10;

/// The first [`NAMED`] of `total` names, then how many more (`a, b, and 3
/// more kinds`, `what` being ` kinds`).
fn listed(total: usize, names: impl Iterator<Item = String>, what: &str) -> String {
    let mut listed: Vec<String> = names.take(NAMED).collect();
    if let Some(more) = total.checked_sub(NAMED).filter(|&n| n > 0) {
        listed.push(format!("and {more} more{what}"));
    }
    listed.join(", ")
}

/// How many events about a subject (a pod and its owner) a cluster's dump
/// gives it, the newest: a ReplicaSet of thousands of pods has an event for
/// each pod it created, and each pod would be given all of them.
const MAX_EVENTS: usize = 1000;

/// Splits documents into subjects. `documents` are the top-level JSON values
/// read; an array of them, as `jq '.items'` prints, is taken as its elements.
pub fn subjects(documents: Vec<Json<'_>>) -> Result<Vec<Subject<'_>>, String> {
    let mut objects = Objects::default();
    let mut bundles = Vec::new();
    let mut facts: Vec<Object<'_>> = Vec::new();
    // Objects a watch event says were deleted, by label.
    let mut deleted = Vec::new();
    // Each with where it is, as jq writes it (`.[1]`), for an element of an array.
    let mut documents: Vec<(Json<'_>, String)> = documents
        .into_iter()
        .rev()
        .map(|d| (d, String::new()))
        .collect();
    while let Some((document, at)) = documents.pop() {
        match document {
            Json::Array(items) => {
                let dot = if at.is_empty() { "." } else { "" };
                let elements = items.into_iter().enumerate().rev();
                documents.extend(elements.map(|(i, item)| (item, format!("{at}{dot}[{i}]"))));
            }
            Json::Object(map) if map.contains_key("kind") => objects.add(Json::Object(map))?,
            Json::Object(mut map) if is_watch_event(&map) => {
                if let Some(object) = map.remove("object") {
                    if map.get("type").and_then(Json::as_str) == Some("DELETED") {
                        let kind = object.get("kind").and_then(Json::as_str);
                        let kind = kind.unwrap_or("object").to_lowercase();
                        deleted.push(label(&kind, &object));
                    }
                    documents.push((object, format!("{at}.object")));
                }
            }
            Json::Object(map) if map.keys().any(|k| BUNDLE_KEYS.contains(&k)) => {
                bundles.push(normalize_bundle(Json::Object(map))?);
            }
            Json::Object(map) => facts.push(map),
            other => {
                let at = if at.is_empty() {
                    at
                } else {
                    format!(" at `{at}`")
                };
                return Err(format!(
                    "expected a JSON object (what `kubectl get … -o json` prints, a bundle or \
                     facts), found {}{at}",
                    kind_of(&other)
                ));
            }
        }
    }
    let mut assembled = objects.assemble()?;
    warn_of_deletions(&mut assembled, deleted);
    if !bundles.is_empty() && !assembled.is_empty() {
        return Err(String::from(
            "the input mixes bundles ({\"pod\": …}) with bare Kubernetes objects; give one or the other",
        ));
    }
    let mut subjects = if bundles.is_empty() {
        assembled
    } else {
        bundles
    };
    if subjects.is_empty() {
        return Ok(facts
            .into_iter()
            .map(|map| Subject {
                label: None,
                document: Json::Object(map),
                warnings: Vec::new(),
            })
            .collect());
    }
    // A facts document given with one subject adds to what it says.
    if !facts.is_empty() {
        let [subject] = subjects.as_mut_slice() else {
            return Err(format!(
                "a facts document was given with {} subjects; put the facts under `facts` in the bundle they belong to",
                subjects.len()
            ));
        };
        let Json::Object(document) = &mut subject.document else {
            return Err(String::from("the subject is not an object"));
        };
        if !document.contains_key("facts") {
            document.insert("facts", Json::Object(Object::new()));
        }
        let Some(Json::Object(given)) = document.get_mut("facts") else {
            return Err(String::from("`facts` should be an object of facts"));
        };
        for (name, value) in facts.into_iter().flatten() {
            given.insert(name, value);
        }
    }
    Ok(subjects)
}

/// Whether `map` is an event of a watch, `{"type": "MODIFIED", "object": {…}}`,
/// as `kubectl get -w --output-watch-events -o json` prints it: its object
/// has a kind, as all objects of a watch do (without one, it would be read
/// as facts, whose unknown names a stream's parser does not keep below the
/// top level).
fn is_watch_event(map: &Object<'_>) -> bool {
    map.len() == 2
        && map
            .get("type")
            .is_some_and(|t| matches!(t, Json::String(_)))
        && map.get("object").is_some_and(|o| o.get("kind").is_some())
}

/// Refuses an object written by the Kubernetes Python client's `to_dict()`,
/// whose names are in snake case (`api_version`, `container_statuses`): the
/// rules read the API's names and would find none of them.
fn api_names(object: &Json<'_>) -> Result<(), String> {
    if object.get("api_version").is_none() || object.get("apiVersion").is_some() {
        return Ok(());
    }
    Err(String::from(
        "the objects have names in snake case (`api_version`), as the Kubernetes Python \
         client's `to_dict()` writes them, and kb reads the API's names (`apiVersion`): \
         write them with `ApiClient().sanitize_for_serialization(obj)`, or as kubectl prints them",
    ))
}

/// Whether objects of this kind are lists of others: `List`, `PodList`, ….
fn is_list(kind: &str) -> bool {
    kind.ends_with("List")
}

/// What the API server said, when what was given is its answer to a request
/// that failed (`kubectl get --raw`, curl, a watch's `ERROR` event) rather
/// than an object.
fn api_error(status: &Json<'_>) -> String {
    let message = at(status, "/message").as_str().unwrap_or("no message");
    let said = [at(status, "/reason"), at(status, "/code")]
        .into_iter()
        .filter_map(|part| match part {
            Json::String(text) if !text.is_empty() => Some(text.to_string()),
            Json::Number(number) => Some(number.to_string()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(", ");
    let said = if said.is_empty() {
        String::new()
    } else {
        format!(" ({said})")
    };
    format!(
        "the input is the API server's answer to a request, a `Status`, not an object to \
         diagnose: {message}{said}"
    )
}

fn kind_of(json: &Json<'_>) -> &'static str {
    match json {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

fn name_of<'a>(object: &'a Json<'_>) -> (&'a str, &'a str) {
    let meta = at(object, "/metadata");
    (
        at(meta, "/namespace").as_str().unwrap_or_default(),
        at(meta, "/name").as_str().unwrap_or_default(),
    )
}

fn label(kind: &str, object: &Json<'_>) -> String {
    match name_of(object) {
        (_, "") => format!("{kind} (unnamed)"),
        ("", name) => format!("{kind} {name}"),
        (namespace, name) => format!("{kind} {namespace}/{name}"),
    }
}

/// A bundle as given; an EventList under `events` becomes its items.
fn normalize_bundle(mut document: Json<'_>) -> Result<Subject<'_>, String> {
    for key in ["pod", "events", "node", "owner", "namespace"] {
        match document.get(key) {
            Some(Json::Array(events)) => events.iter().try_for_each(api_names)?,
            Some(object) => api_names(object)?,
            None => {}
        }
    }
    if let Some(events) = document.get_mut("events") {
        match events {
            Json::Array(items) => {
                items.iter_mut().for_each(in_core_v1_shape);
                sort_by_time(items);
            }
            Json::Null => {}
            Json::Object(list) if list.get("items").is_some_and(Json::is_array) => {
                let mut items = match list.remove("items") {
                    Some(Json::Array(items)) => items,
                    _ => Vec::new(),
                };
                items.iter_mut().for_each(in_core_v1_shape);
                sort_by_time(&mut items);
                *events = Json::Array(items);
            }
            other => {
                return Err(format!(
                    "`events` should be the list of events (the `.items` of an EventList), found {}",
                    kind_of(other)
                ));
            }
        }
    }
    // An owner or a namespace as the subject: no pod exists (none could be created).
    if let Json::Object(map) = &mut document
        && !map.contains_key("pod")
        && (map.contains_key("owner") || map.contains_key("namespace"))
    {
        map.insert("pod", Json::Null);
    }
    let label = if let Some(pod) = document.get("pod").filter(|p| p.is_object()) {
        Some(label("pod", pod))
    } else if let Some(owner) = document.get("owner").filter(|o| o.is_object()) {
        let kind = at(owner, "/kind")
            .as_str()
            .unwrap_or("owner")
            .to_lowercase();
        Some(label(&kind, owner))
    } else {
        document
            .get("namespace")
            .filter(|n| n.is_object())
            .map(|namespace| label("namespace", namespace))
    };
    let warnings = keep_own_events(&mut document).into_iter().collect();
    Ok(Subject {
        label,
        document,
        warnings,
    })
}

impl<'t> Objects<'t> {
    fn add(&mut self, object: Json<'t>) -> Result<(), String> {
        api_names(&object)?;
        let kind = at(&object, "/kind").as_str().unwrap_or_default().to_owned();
        match kind.as_str() {
            "Pod" => self.pods.push(object),
            "Event" => {
                self.saw_events = true;
                let mut event = object;
                in_core_v1_shape(&mut event);
                self.events.push(event);
            }
            "Node" => self.nodes.push(object),
            "Namespace" => self.namespaces.push(object),
            "Status" => return Err(api_error(&object)),
            k if OWNER_KINDS.contains(&k) => self.owners.push(object),
            k if is_list(k) => {
                if k == "EventList" {
                    self.saw_events = true;
                }
                let Json::Object(mut map) = object else {
                    return Ok(());
                };
                let items = match map.remove("items") {
                    Some(Json::Array(items)) => items,
                    Some(Json::Null) | None => Vec::new(),
                    Some(other) => {
                        return Err(format!(
                            "`items` of a {k} should be an array, found {}",
                            kind_of(&other)
                        ));
                    }
                };
                // The API server's own lists (`kubectl get --raw`, curl, a
                // client's objects written as JSON) leave out their items'
                // kind and apiVersion, which kubectl fills in: a PodList's
                // items are Pods.
                let item_kind = k.strip_suffix("List").filter(|kind| !kind.is_empty());
                let api_version = map.get("apiVersion");
                for mut item in items {
                    let Json::Object(fields) = &mut item else {
                        return Err(format!(
                            "an item of a {k} is {}, not an object",
                            kind_of(&item)
                        ));
                    };
                    if let Some(inner) = fields.get("kind").and_then(Json::as_str)
                        && is_list(inner)
                    {
                        // Nor could its items be read keeping only what the
                        // rules read, which looks one list deep.
                        return Err(format!(
                            "a {inner} inside a {k}, which kubectl never prints: give the \
                             lists one after the other, or their items in one"
                        ));
                    }
                    if let Some(kind) = item_kind
                        && !fields.contains_key("kind")
                    {
                        fields.insert("kind", Json::String(Cow::Owned(kind.to_owned())));
                        if let Some(version) =
                            api_version.filter(|_| !fields.contains_key("apiVersion"))
                        {
                            fields.insert("apiVersion", version.clone());
                        }
                    }
                    self.add(item)?;
                }
            }
            "" if object.get("kind").is_none() => {
                return Err(String::from(
                    "an item of a List has no `kind`, by which kb tells pods, events and nodes apart",
                ));
            }
            "" => return Err(String::from("an object has a `kind` that is not a string")),
            other => match self.left_out.get_mut(other) {
                Some((_, count)) => *count += 1,
                None => {
                    let first_met = self.left_out.len();
                    self.left_out.insert(other.to_owned(), (first_met, 1));
                }
            },
        }
        Ok(())
    }

    fn assemble(mut self) -> Result<Vec<Subject<'t>>, String> {
        let nothing = self.pods.is_empty() && self.owners.is_empty() && self.namespaces.is_empty();
        // The kinds left out, in the order first met.
        let mut left_out: Vec<(usize, String, usize)> = std::mem::take(&mut self.left_out)
            .into_iter()
            .map(|(kind, (first_met, count))| (first_met, kind, count))
            .collect();
        left_out.sort_unstable();
        if let (true, Some((_, kind, _))) = (nothing, left_out.first()) {
            return Err(format!(
                "kind `{kind}` is not something kb diagnoses; give Pods, Events, Nodes, Namespaces or the pods' owners"
            ));
        }
        if nothing {
            if self.events.is_empty() && self.nodes.is_empty() {
                return Ok(Vec::new());
            }
            return Err(String::from(
                "the input has events or nodes but no pod, owner or namespace to diagnose",
            ));
        }
        let mut subjects = Vec::new();
        let index = EventIndex::new(&self.events);
        let ranks = time_ranks(&self.events);
        if !self.pods.is_empty() {
            let owners = OwnerIndex::new(&self.owners);
            let nodes = first_by_name(&self.nodes);
            let namespaces = first_by_name(&self.namespaces);
            // Each pod is in one subject only: moved there, not copied.
            let pods = std::mem::take(&mut self.pods);
            for pod in pods {
                let mut bundle = Object::new();
                let (namespace, _) = name_of(&pod);
                let owner = owners.owner_of(&pod);
                let about: Vec<&Json<'t>> = std::iter::once(&pod).chain(owner).collect();
                let warnings = self.add_events(&index, &ranks, &mut bundle, &about);
                let node_name = at(&pod, "/spec/nodeName").as_str();
                if let Some(node) = node_name.and_then(|name| nodes.get(name)) {
                    bundle.insert("node", (*node).clone());
                }
                if let Some(owner) = owner {
                    bundle.insert("owner", owner.clone());
                }
                if let Some(ns) = namespaces.get(namespace) {
                    bundle.insert("namespace", (*ns).clone());
                }
                let label = label("pod", &pod);
                bundle.insert("pod", pod);
                subjects.push(Subject {
                    label: Some(label),
                    document: Json::Object(bundle),
                    warnings,
                });
            }
        } else if !self.owners.is_empty() {
            let namespaces = first_by_name(&self.namespaces);
            for owner in &self.owners {
                let mut bundle = Object::new();
                let warnings = self.add_events(&index, &ranks, &mut bundle, &[owner]);
                let (namespace, _) = name_of(owner);
                if let Some(ns) = namespaces.get(namespace) {
                    bundle.insert("namespace", (*ns).clone());
                }
                bundle.insert("owner", owner.clone());
                bundle.insert("pod", Json::Null);
                let kind = at(owner, "/kind")
                    .as_str()
                    .unwrap_or("owner")
                    .to_lowercase();
                subjects.push(Subject {
                    label: Some(label(&kind, owner)),
                    document: Json::Object(bundle),
                    warnings,
                });
            }
        } else {
            for namespace in &self.namespaces {
                let mut bundle = Object::new();
                let warnings = self.add_events(&index, &ranks, &mut bundle, &[namespace]);
                bundle.insert("namespace", namespace.clone());
                bundle.insert("pod", Json::Null);
                subjects.push(Subject {
                    label: Some(label("namespace", namespace)),
                    document: Json::Object(bundle),
                    warnings,
                });
            }
        }
        if !left_out.is_empty() {
            let count: usize = left_out.iter().map(|(_, _, n)| n).sum();
            let kinds = left_out.iter().map(|(_, kind, n)| match n {
                1 => kind.clone(),
                n => format!("{kind} ×{n}"),
            });
            let s = if count == 1 { "" } else { "s" };
            let warning = format!(
                "left out {count} object{s} kb does not diagnose ({}): it reads Pods, their \
                 Events, Nodes and Namespaces, and the pods' owners",
                listed(left_out.len(), kinds, " kinds")
            );
            for subject in &mut subjects {
                subject.warnings.push(warning.clone());
            }
        }
        Ok(subjects)
    }

    /// Puts the events about any of `objects` into a bundle, oldest first;
    /// when the input held no events at all, leaves them out, so they are
    /// unknown.
    /// The newest [`MAX_EVENTS`] of them, with a warning when there were more.
    /// `ranks` are the events' [`time_ranks`].
    fn add_events(
        &self,
        index: &EventIndex<'_>,
        ranks: &[usize],
        bundle: &mut Object<'t>,
        objects: &[&Json<'t>],
    ) -> Vec<String> {
        if !self.saw_events {
            return Vec::new();
        }
        let mut found: Vec<usize> = objects.iter().flat_map(|o| index.candidates(o)).collect();
        // In time order; an event found twice, by uid and by name, kept once.
        found.sort_unstable_by_key(|&i| ranks.get(i));
        found.dedup();
        let about: Vec<&Json<'t>> = found
            .into_iter()
            .filter_map(|i| self.events.get(i))
            .filter(|e| objects.iter().any(|o| involves(e, o)))
            .collect();
        let older = about.len().saturating_sub(MAX_EVENTS);
        let events = about.get(older..).unwrap_or_default();
        bundle.insert(
            "events",
            Json::Array(events.iter().map(|&e| e.clone()).collect()),
        );
        match older {
            0 => Vec::new(),
            older => vec![format!(
                "left out the {older} oldest of the {} events about it: kb reads the newest \
                 {MAX_EVENTS}",
                about.len()
            )],
        }
    }
}

/// Leaves out of a bundle the events about other objects than its pod and
/// the pod's owners, and says so: `kubectl get events` lists a whole
/// namespace's, and another pod's `FailedScheduling` is no evidence about
/// this one. Events that name no object are kept, and so are those that
/// name the pod or an owner with another uid (one of the same name before
/// it, or a bundle put together by hand).
fn keep_own_events(document: &mut Json<'_>) -> Option<String> {
    let Some(Json::Array(events)) = document.get("events") else {
        return None;
    };
    let pod = document.get("pod").filter(|pod| pod.is_object())?;
    let owner = document.get("owner").filter(|owner| owner.is_object());
    let own_objects = OwnObjects::of(pod, owner)?;
    let is_own = |event: &Json<'_>| own_objects.include(&About::of(event));
    if events.iter().all(is_own) {
        return None;
    }
    let own: Vec<bool> = events.iter().map(is_own).collect();
    let first_other = About::of(events.iter().zip(&own).find(|(_, own)| !**own)?.0);
    let (kind, name) = (
        first_other.kind.unwrap_or("object"),
        first_other.name.unwrap_or_default(),
    );
    let named = match first_other.namespace {
        Some(namespace) => format!("{kind} {namespace}/{name}"),
        None => format!("{kind} {name}"),
    };
    let left_out = own.iter().filter(|own| !**own).count();
    let message = format!(
        "left out {left_out} of the {} events: they are about other objects than the pod and \
         its owner (the first about {named})",
        own.len()
    );
    if let Some(Json::Array(events)) = document.get_mut("events") {
        let mut own = own.into_iter();
        events.retain(|_| own.next().unwrap_or(true));
    }
    Some(message)
}

/// What an object is, as an event or an owner reference names it.
#[derive(Default)]
struct About<'a> {
    uid: Option<&'a str>,
    kind: Option<&'a str>,
    namespace: Option<&'a str>,
    name: Option<&'a str>,
}

impl<'a> About<'a> {
    /// What an event is about.
    fn of(event: &'a Json<'_>) -> Self {
        Self::named_by(regarding(event))
    }

    /// An object reference: `involvedObject`, an owner reference.
    fn named_by(reference: &'a Json<'_>) -> Self {
        let field = |key| reference.get(key).and_then(Json::as_str);
        Self {
            uid: field("uid"),
            kind: field("kind"),
            namespace: field("namespace"),
            name: field("name"),
        }
    }

    /// An object itself, from its metadata.
    fn object(object: &'a Json<'_>) -> Self {
        let meta = at(object, "/metadata");
        let field = |key| meta.get(key).and_then(Json::as_str);
        Self {
            uid: field("uid"),
            kind: at(object, "/kind").as_str(),
            namespace: field("namespace"),
            name: field("name"),
        }
    }
}

/// A bundle's pod, its owner and the owners its references name: what its
/// events may be about.
struct OwnObjects<'a> {
    pod: About<'a>,
    owners: Vec<About<'a>>,
}

impl<'a> OwnObjects<'a> {
    /// `None` when the pod has neither uid nor name to tell its events by.
    fn of(pod: &'a Json<'_>, owner: Option<&'a Json<'_>>) -> Option<Self> {
        let mut this = About::object(pod);
        if this.uid.is_none() && this.name.is_none() {
            return None;
        }
        // A pod written by hand may leave its kind out.
        this.kind = Some("Pod");
        let mut owners: Vec<About<'a>> = owner.map(About::object).into_iter().collect();
        if let Json::Array(references) = at(pod, "/metadata/ownerReferences") {
            owners.extend(references.iter().map(|reference| About {
                namespace: this.namespace,
                ..About::named_by(reference)
            }));
        }
        Some(Self { pod: this, owners })
    }

    /// Whether an event about this is about one of them: any that names no
    /// object is.
    fn include(&self, about: &About<'_>) -> bool {
        if about.uid.is_none() && about.name.is_none() {
            return true;
        }
        std::iter::once(&self.pod)
            .chain(&self.owners)
            .any(|own| same(about, own))
    }
}

/// Whether two names are of one object: by uid, or by name, with kind and
/// namespace compared where both give them.
fn same(a: &About<'_>, b: &About<'_>) -> bool {
    let agree = |x: Option<&str>, y: Option<&str>| x.is_none() || y.is_none() || x == y;
    (a.uid.is_some() && a.uid == b.uid)
        || (a.name.is_some()
            && a.name == b.name
            && agree(a.kind, b.kind)
            && agree(a.namespace, b.namespace))
}

/// The first of `objects` of each name: a cluster's nodes or namespaces,
/// for its pods to find theirs.
fn first_by_name<'a, 't>(objects: &'a [Json<'t>]) -> HashMap<&'a str, &'a Json<'t>> {
    let mut found = HashMap::new();
    for object in objects {
        found.entry(name_of(object).1).or_insert(object);
    }
    found
}

/// The owners given (ReplicaSets, Jobs, …), found as a pod's owner
/// reference names them: by uid when both have one, else by kind and name.
/// Each pod then finds its owner at once, not by looking at them all.
struct OwnerIndex<'a, 't> {
    owners: &'a [Json<'t>],
    /// The first owner with each uid.
    by_uid: HashMap<&'a str, usize>,
    /// The first owner of each kind and name…
    by_name: HashMap<(&'a str, &'a str), usize>,
    /// … and the first of those without a uid.
    by_name_without_uid: HashMap<(&'a str, &'a str), usize>,
}

impl<'a, 't> OwnerIndex<'a, 't> {
    fn new(owners: &'a [Json<'t>]) -> Self {
        let mut index = Self {
            owners,
            by_uid: HashMap::new(),
            by_name: HashMap::new(),
            by_name_without_uid: HashMap::new(),
        };
        for (i, owner) in owners.iter().enumerate() {
            let key = (
                at(owner, "/kind").as_str().unwrap_or_default(),
                name_of(owner).1,
            );
            index.by_name.entry(key).or_insert(i);
            match at(owner, "/metadata/uid").as_str() {
                Some(uid) => index.by_uid.entry(uid).or_insert(i),
                None => index.by_name_without_uid.entry(key).or_insert(i),
            };
        }
        index
    }

    /// The controller that owns a pod: the first owner its controller
    /// reference (or else its first reference) names.
    fn owner_of(&self, pod: &Json<'_>) -> Option<&'a Json<'t>> {
        let references = at(pod, "/metadata/ownerReferences").as_array()?;
        let reference = references
            .iter()
            .find(|r| at(r, "/controller").as_bool() == Some(true))
            .or_else(|| references.first())?;
        // Every owner's kind is a string: a reference of another kind
        // names none.
        let name = at(reference, "/kind")
            .as_str()
            .map(|kind| (kind, at(reference, "/name").as_str().unwrap_or_default()));
        let first = match at(reference, "/uid").as_str() {
            // An owner with a uid is that owner; one without, the one of
            // that kind and name.
            Some(uid) => {
                let by_name = name.and_then(|name| self.by_name_without_uid.get(&name));
                self.by_uid.get(uid).into_iter().chain(by_name).min()
            }
            None => name.and_then(|name| self.by_name.get(&name)),
        };
        first.and_then(|&i| self.owners.get(i))
    }
}

/// Orders events oldest first, by when they were last seen, whichever of
/// the old (`lastTimestamp`) and new (`series`, `eventTime`) fields they use,
/// so that rules reading the last event read the latest one. The times are
/// the events' own strings, most of them borrowed from the input, not copies.
fn sort_by_time(events: &mut [Json<'_>]) {
    events.sort_by_cached_key(time_of);
}

/// For each event, its place among them in [`sort_by_time`]'s order: each
/// subject's events are then put in order by these numbers, their times
/// read once for all.
fn time_ranks(events: &[Json<'_>]) -> Vec<usize> {
    let mut order: Vec<(usize, &Json<'_>)> = events.iter().enumerate().collect();
    order.sort_by_cached_key(|(_, event)| time_of(event));
    let mut ranks = vec![0; events.len()];
    for (rank, (i, _)) in order.into_iter().enumerate() {
        if let Some(slot) = ranks.get_mut(i) {
            *slot = rank;
        }
    }
    ranks
}

/// When an event last happened, as its fields say, for ordering.
fn time_of<'t>(event: &Json<'t>) -> Cow<'t, str> {
    [
        "/series/lastObservedTime",
        "/lastTimestamp",
        "/eventTime",
        "/firstTimestamp",
        "/metadata/creationTimestamp",
    ]
    .iter()
    .find_map(|pointer| match at(event, pointer) {
        Json::String(time) => Some(time.clone()),
        _ => None,
    })
    .unwrap_or_default()
}

/// The events given, found by what they are about: by uid, and by kind,
/// namespace and name, the keys [`involves`] compares. Matching a cluster's
/// pods with its events then looks at a few events for each pod, not all.
struct EventIndex<'a> {
    by_uid: HashMap<&'a str, Vec<usize>>,
    by_name: HashMap<(Option<&'a str>, &'a str, &'a str), Vec<usize>>,
}

impl<'a> EventIndex<'a> {
    fn new(events: &'a [Json<'_>]) -> Self {
        let mut index = Self {
            by_uid: HashMap::new(),
            by_name: HashMap::new(),
        };
        for (i, event) in events.iter().enumerate() {
            let about = regarding(event);
            if let Some(uid) = at(about, "/uid").as_str() {
                index.by_uid.entry(uid).or_default().push(i);
            }
            if let Some(name) = at(about, "/name").as_str() {
                let namespace = at(about, "/namespace").as_str().unwrap_or_default();
                let key = (at(about, "/kind").as_str(), namespace, name);
                index.by_name.entry(key).or_default().push(i);
            }
        }
        index
    }

    /// The events that may be about an object, among them all that are:
    /// those with its uid, and those with its kind, namespace and name.
    fn candidates(&self, object: &'a Json<'_>) -> impl Iterator<Item = usize> + '_ {
        let (namespace, name) = name_of(object);
        let by_uid = at(object, "/metadata/uid")
            .as_str()
            .and_then(|uid| self.by_uid.get(uid));
        let by_name = self
            .by_name
            .get(&(at(object, "/kind").as_str(), namespace, name));
        by_uid.into_iter().chain(by_name).flatten().copied()
    }
}

/// Gives an events.k8s.io/v1 Event's fields their core/v1 names, where the
/// event has not the core/v1 field already: rules read one shape of event.
fn in_core_v1_shape(event: &mut Json<'_>) {
    // A core/v1 event names what it is about as `involvedObject`, always.
    let Json::Object(fields) = event else {
        return;
    };
    if fields.contains_key("involvedObject") {
        return;
    }
    for (v1, core) in EVENTS_V1_NAMES {
        if !fields.contains_key(core)
            && let Some(value) = fields.remove(v1)
        {
            fields.insert(*core, value);
        }
    }
}

/// What an event (in its core/v1 shape) is about.
fn regarding<'a, 't>(event: &'a Json<'t>) -> &'a Json<'t> {
    at(event, "/involvedObject")
}

/// Whether an event is about an object: by uid, or by kind, namespace and name.
fn involves(event: &Json<'_>, object: &Json<'_>) -> bool {
    let regarding = regarding(event);
    if let (Some(a), Some(b)) = (
        at(regarding, "/uid").as_str(),
        at(object, "/metadata/uid").as_str(),
    ) {
        return a == b;
    }
    let (namespace, name) = name_of(object);
    at(regarding, "/kind") == at(object, "/kind")
        && at(regarding, "/name").as_str() == Some(name)
        && at(regarding, "/namespace").as_str().unwrap_or_default() == namespace
}

/// The value at a path of object keys written as a JSON pointer (`/metadata/uid`),
/// `null` when there is none. The adapter's paths are constants without `~` escapes
/// or list indices, so this walks the keys without unescaping each one, as
/// `Value::pointer` would, allocating.
fn at<'a, 't>(json: &'a Json<'t>, path: &str) -> &'a Json<'t> {
    const NULL: &Json<'_> = &Json::Null;
    // A set of one char rather than `'/'`, which compares each `/` it finds
    // with the pattern through a call to `memcmp`.
    path.split(['/'])
        .skip(1)
        .try_fold(json, |json, key| json.get(key))
        .unwrap_or(NULL)
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

    use serde_json::json;

    use super::*;

    /// Pods, an owner and events about them in every way an event can name
    /// an object: by uid, by kind, namespace and name without a uid, with a
    /// uid of another object, as events.k8s.io's `regarding`, in another
    /// namespace, of another kind.
    fn cluster() -> Vec<serde_json::Value> {
        let mut items = vec![
            json!({"kind": "ReplicaSet", "metadata": {"name": "web-7d9", "namespace": "shop", "uid": "rs"}}),
        ];
        for i in 0..6 {
            let mut pod = json!({"kind": "Pod", "metadata": {"name": format!("web-{i}"), "namespace": "shop",
                "ownerReferences": [{"kind": "ReplicaSet", "name": "web-7d9", "uid": "rs", "controller": true}]}});
            if i % 2 == 0 {
                pod["metadata"]["uid"] = json!(format!("pod-{i}"));
            }
            items.push(pod);
        }
        let about = [
            json!({"involvedObject": {"kind": "Pod", "name": "web-0", "namespace": "shop", "uid": "pod-0"}}),
            json!({"involvedObject": {"kind": "Pod", "name": "web-0", "namespace": "shop"}}),
            json!({"involvedObject": {"kind": "Pod", "name": "web-1", "namespace": "shop"}}),
            json!({"involvedObject": {"kind": "Pod", "name": "web-1", "namespace": "shop", "uid": "stale"}}),
            json!({"involvedObject": {"kind": "Pod", "name": "web-2", "namespace": "shop", "uid": "stale"}}),
            json!({"involvedObject": {"kind": "Pod", "name": "web-2", "namespace": "other"}}),
            json!({"involvedObject": {"kind": "Node", "name": "web-3", "namespace": "shop"}}),
            json!({"regarding": {"kind": "Pod", "name": "web-3", "namespace": "shop"}}),
            json!({"regarding": {"kind": "Pod", "name": "web-4", "namespace": "shop", "uid": "pod-4"}}),
            json!({"involvedObject": {"kind": "ReplicaSet", "name": "web-7d9", "namespace": "shop", "uid": "rs"}}),
            json!({"involvedObject": {"kind": "ReplicaSet", "name": "web-7d9", "namespace": "shop"}}),
            json!({"involvedObject": {"name": "web-5", "namespace": "shop"}}),
            json!({"involvedObject": {"kind": "Pod", "namespace": "shop", "uid": "pod-5"}}),
        ];
        for (i, mut event) in about.into_iter().enumerate() {
            event["kind"] = json!("Event");
            event["metadata"] = json!({"name": format!("e{i}")});
            event["lastTimestamp"] = json!(format!("2024-06-01T00:00:{i:02}Z"));
            items.push(event);
        }
        items
    }

    fn names(events: &Json<'_>) -> Vec<String> {
        let mut names: Vec<String> = events
            .as_array()
            .unwrap()
            .iter()
            .map(|e| name_of(e).1.to_owned())
            .collect();
        names.sort();
        names
    }

    /// What finding a pod's owner meant before the owners were indexed: the
    /// first owner the reference matches, looking at each.
    fn owner_by_looking_at_each<'a, 't>(
        owners: &'a [Json<'t>],
        pod: &Json<'_>,
    ) -> Option<&'a Json<'t>> {
        let references = at(pod, "/metadata/ownerReferences").as_array()?;
        let reference = references
            .iter()
            .find(|r| at(r, "/controller").as_bool() == Some(true))
            .or_else(|| references.first())?;
        owners
            .iter()
            .find(|owner| match at(reference, "/uid").as_str() {
                Some(uid) if at(owner, "/metadata/uid").is_string() => {
                    at(owner, "/metadata/uid").as_str() == Some(uid)
                }
                _ => {
                    at(owner, "/kind") == at(reference, "/kind")
                        && name_of(owner).1 == at(reference, "/name").as_str().unwrap_or_default()
                }
            })
    }

    #[test]
    fn a_pod_finds_the_owner_it_found_by_looking_at_each() {
        let owner = |kind: &str, name: &str, uid: Option<&str>| {
            let mut owner = json!({"kind": kind, "metadata": {"name": name, "namespace": "shop"}});
            if let Some(uid) = uid {
                owner["metadata"]["uid"] = json!(uid);
            }
            Json::from(owner)
        };
        // The same names with and without uids, a uid given twice, a name
        // of two kinds, an owner without a name.
        let owners = [
            owner("ReplicaSet", "b", None),
            owner("ReplicaSet", "a", Some("u1")),
            owner("ReplicaSet", "a", None),
            owner("Job", "a", Some("u2")),
            owner("ReplicaSet", "b", Some("u3")),
            owner("ReplicaSet", "c", Some("u1")),
            owner("StatefulSet", "", None),
        ];
        let index = OwnerIndex::new(&owners);
        let mut tried = 0;
        for kind in [
            json!("ReplicaSet"),
            json!("Job"),
            json!("StatefulSet"),
            json!(1),
        ] {
            for name in [json!("a"), json!("b"), json!("c"), json!(""), json!(null)] {
                for uid in [None, Some("u1"), Some("u2"), Some("u3"), Some("gone")] {
                    for controller in [json!(true), json!(false), json!(null)] {
                        let mut reference =
                            json!({"kind": kind, "name": name, "controller": controller});
                        if let Some(uid) = uid {
                            reference["uid"] = json!(uid);
                        }
                        let other = json!({"kind": "ReplicaSet", "name": "b", "uid": "u3"});
                        let pod = Json::from(json!({"kind": "Pod", "metadata": {"name": "p",
                            "ownerReferences": [other, reference]}}));
                        let expected = owner_by_looking_at_each(&owners, &pod);
                        assert!(
                            index.owner_of(&pod).map(std::ptr::from_ref)
                                == expected.map(std::ptr::from_ref),
                            "{pod:?}"
                        );
                        tried += usize::from(expected.is_some());
                    }
                }
            }
        }
        assert!(tried > 100, "{tried}");
        let orphan = Json::from(json!({"kind": "Pod", "metadata": {"name": "p"}}));
        assert!(index.owner_of(&orphan).is_none());
    }

    /// What a subject is made of: its label, its owner by name and uid, and
    /// its events in order, each told by when it was last seen.
    fn made_of(subject: &Subject<'_>) -> (Option<String>, String, Vec<String>) {
        let owner = subject.document.get("owner").map_or(String::new(), |o| {
            format!(
                "{} {}",
                name_of(o).1,
                at(o, "/metadata/uid").as_str().unwrap_or_default()
            )
        });
        let events = match subject.document.get("events") {
            Some(Json::Array(events)) => events
                .iter()
                .map(|e| {
                    at(e, "/lastTimestamp")
                        .as_str()
                        .unwrap_or_default()
                        .to_owned()
                })
                .collect(),
            _ => Vec::new(),
        };
        (subject.label.clone(), owner, events)
    }

    #[test]
    fn a_cluster_or_a_bundle_parsed_keeping_what_the_adapter_reads_is_split_as_the_whole() {
        // Rules that read nothing the adapter reads: what a parse keeps of
        // events, owners and references is the adapter's own.
        let rules = kb_dsl::parse(
            r#"input pod "The Pod"
input events "Events"
input owner "The owner"
fact phase: string "Phase" { from pod.status.phase }
"#,
            "phase.kb",
        )
        .unwrap();
        let kb = kb_engine::compile(&rules).unwrap();
        let mut items = cluster();
        // An owner of the same kind and name as the pods' but another uid,
        // given first: the references' uids tell them apart.
        items.insert(
            0,
            json!({"kind": "ReplicaSet", "metadata": {"name": "web-7d9",
            "namespace": "shop", "uid": "rs-before"}}),
        );
        // A second owner, named first by a pod that is controlled by the other.
        items.push(json!({"kind": "ReplicaSet", "apiVersion": "apps/v1",
            "metadata": {"name": "web-old", "namespace": "shop", "uid": "rs-old"}}));
        items.push(json!({"kind": "Pod", "metadata": {"name": "web-6", "namespace": "shop",
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-old", "uid": "rs-old", "controller": false},
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9", "uid": "rs", "controller": true}]}}));
        // An event about an earlier pod of the same name.
        items.push(json!({"kind": "Event", "metadata": {"name": "e-stale"},
            "lastTimestamp": "2024-06-01T00:01:00Z",
            "regarding": {"kind": "Pod", "name": "web-2", "namespace": "shop", "uid": "stale"}}));
        let text = serde_json::to_string(&json!({"kind": "List", "items": items})).unwrap();
        let whole: Vec<_> = subjects(vec![serde_json::from_str::<Json<'_>>(&text).unwrap()])
            .unwrap()
            .iter()
            .map(made_of)
            .collect();
        let pruned: Vec<_> = subjects(vec![pruner(&kb).parse(text.as_bytes()).unwrap()])
            .unwrap()
            .iter()
            .map(made_of)
            .collect();
        assert_eq!(whole.len(), 7);
        assert!(whole.iter().any(|(_, owner, _)| owner == "web-7d9 rs"));
        assert!(whole.iter().all(|(_, _, events)| !events.is_empty()));
        assert_eq!(pruned, whole);

        // A bundle keeps the events about its pod and the owners its
        // references name, given or not.
        let bundle = json!({
            "pod": {"kind": "Pod", "metadata": {"name": "web-0", "namespace": "shop",
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-gone"}]}},
            "events": [
                {"lastTimestamp": "2024-06-01T00:00:12Z", "involvedObject": {"kind": "Pod", "name": "web-0", "namespace": "shop"}},
                {"lastTimestamp": "2024-06-01T00:00:10Z", "involvedObject": {"kind": "ReplicaSet", "name": "web-gone", "namespace": "shop"}},
                {"lastTimestamp": "2024-06-01T00:00:11Z", "involvedObject": {"kind": "ReplicaSet", "name": "web-new", "namespace": "shop"}},
                {"lastTimestamp": "2024-06-01T00:00:13Z", "involvedObject": {"kind": "Deployment", "name": "web-gone", "namespace": "shop"}}]});
        let text = bundle.to_string();
        let parsed = [
            serde_json::from_str::<Json<'_>>(&text).unwrap(),
            pruner(&kb).parse(text.as_bytes()).unwrap(),
        ];
        let [whole, pruned] = parsed.map(|document| {
            let subject = subjects(vec![document]).unwrap().remove(0);
            (made_of(&subject), subject.warnings)
        });
        assert_eq!(whole.0.2, ["2024-06-01T00:00:10Z", "2024-06-01T00:00:12Z"]);
        assert_eq!(pruned, whole);
    }

    #[test]
    fn each_value_of_a_bundle_keeps_what_is_read_of_its_own_input() {
        let rules = kb_dsl::parse(
            r#"input pod "The Pod"
input node "The Node"
fact pod_conditions: list<object> "The pod's conditions" { from pod.status.conditions }
fact node_ready: bool "Whether the node is ready" {
  from any(node.status.conditions, .type == "Ready" and .status == "True")
}
symptom s "S" {
  when exists(pod_conditions)
  check "Is the node ready?" { if node_ready => c.ready }
}
cause c.ready "Ready" { fix "Nothing" { step "Nothing" } }
"#,
            "conditions.kb",
        )
        .unwrap();
        let kb = kb_engine::compile(&rules).unwrap();
        let conditions = json!([{"type": "Ready", "status": "True", "message": "kubelet is posting ready status"}]);
        let bundle = json!({"pod": {"status": {"conditions": conditions}},
            "node": {"status": {"conditions": conditions}}});
        let kept = pruner(&kb)
            .parse(bundle.to_string().as_bytes())
            .unwrap()
            .to_value();
        // Read by a condition, the pod's conditions may be shown: whole.
        assert_eq!(kept["pod"]["status"]["conditions"], conditions);
        assert_eq!(
            kept["node"]["status"]["conditions"],
            json!([{"type": "Ready", "status": "True"}])
        );
        // A pod alone may be any object: it keeps what is read of every input.
        let pod = json!({"kind": "Pod", "status": {"conditions": conditions}});
        let kept = pruner(&kb)
            .parse(pod.to_string().as_bytes())
            .unwrap()
            .to_value();
        assert_eq!(kept["status"]["conditions"], conditions);
    }

    #[test]
    fn a_watch_event_is_unwrapped_when_its_object_has_a_kind() {
        let event = |object| Json::from(json!({"type": "MODIFIED", "object": object}));
        let pod = json!({"kind": "Pod", "metadata": {"name": "web-1", "namespace": "shop"}});
        let unwrapped = subjects(vec![event(pod)]).unwrap();
        assert_eq!(unwrapped[0].label.as_deref(), Some("pod shop/web-1"));
        // Without a kind it is no object of a watch: facts, both names kept,
        // so that both are reported as names the rules do not know.
        let facts = subjects(vec![event(json!({"kina": "Pod"}))]).unwrap();
        let keys: Vec<&str> = facts[0].document.as_object().unwrap().keys().collect();
        assert_eq!(
            (facts[0].label.as_deref(), keys),
            (None, vec!["object", "type"])
        );
    }

    #[test]
    fn each_subject_gets_every_event_about_it_and_its_owner_and_no_other() {
        let items = cluster();
        let events: Vec<Json<'_>> = items
            .iter()
            .skip(7)
            .map(|event| {
                let mut event = Json::from(event.clone());
                in_core_v1_shape(&mut event);
                event
            })
            .collect();
        let list = Json::from(json!({"kind": "List", "items": items}));
        let subjects = subjects(vec![list]).unwrap();
        assert_eq!(subjects.len(), 6);
        for subject in &subjects {
            let pod = subject.document.get("pod").unwrap();
            let owner = subject.document.get("owner").unwrap();
            let mut expected: Vec<String> = events
                .iter()
                .filter(|e| involves(e, pod) || involves(e, owner))
                .map(|e| name_of(e).1.to_owned())
                .collect();
            expected.sort();
            assert!(expected.len() >= 2, "{expected:?}");
            assert_eq!(
                names(subject.document.get("events").unwrap()),
                expected,
                "{:?}",
                subject.label
            );
        }
    }
}
