//! The thin Kubernetes input adapter: whatever kubectl printed → one
//! document per subject, shaped `{"pod", "events", "node", "owner", "namespace"}`.
//!
//! Accepted: a bundle (already in that shape), a bare object (`kubectl get
//! pod -o json`), a `List` (`kubectl get pod,events,node -o json`), several of
//! these at once, or a plain facts document. Everything else is an error
//! naming what was found; nothing given is dropped silently.

use std::borrow::Cow;
use std::io;

use kb_engine::KnowledgeBase;
use kb_engine::json::{Json, Object};
use kb_engine::needs::{Needs, Pruner};
use rayon::prelude::*;

mod cluster;

use cluster::{Cluster, Objects};

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

/// What an input holds, split by subject. A cluster's subjects are put
/// together as they are asked for ([`Split::subjects`]), a few at a time;
/// bundles and facts are subjects as they are.
pub struct Split<'t>(Parts<'t>);

enum Parts<'t> {
    Given(Vec<Subject<'t>>),
    Cluster(Box<Cluster<'t>>),
}

/// How many of a whole input's subjects are put together and diagnosed at
/// once: enough to keep every core busy, few enough that their copies of
/// events and nodes take little memory.
const BATCH: usize = 256;

/// A split input's subjects, each put together when asked for.
pub struct Subjects<'a, 't>(Indexed<'a, 't>);

enum Indexed<'a, 't> {
    Given(&'a [Subject<'t>]),
    Cluster(Box<cluster::Indexed<'a, 't>>),
}

impl<'t> Split<'t> {
    /// The subjects, indexed to be put together one by one.
    pub fn subjects(&self) -> Subjects<'_, 't> {
        Subjects(match &self.0 {
            Parts::Given(subjects) => Indexed::Given(subjects),
            Parts::Cluster(cluster) => Indexed::Cluster(Box::new(cluster.indexed())),
        })
    }

    /// Every subject at once.
    pub fn into_subjects(self) -> Vec<Subject<'t>> {
        match self.0 {
            Parts::Given(subjects) => subjects,
            Parts::Cluster(cluster) => cluster.into_subjects(),
        }
    }

    /// How many subjects there are.
    pub fn len(&self) -> usize {
        match &self.0 {
            Parts::Given(subjects) => subjects.len(),
            Parts::Cluster(cluster) => cluster.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<'a, 't> Subjects<'a, 't> {
    /// How many there are.
    pub fn len(&self) -> usize {
        match &self.0 {
            Indexed::Given(subjects) => subjects.len(),
            Indexed::Cluster(cluster) => cluster.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`th subject, in input order.
    pub fn get(&self, i: usize) -> Option<Cow<'a, Subject<'t>>> {
        match &self.0 {
            Indexed::Given(subjects) => subjects.get(i).map(Cow::Borrowed),
            Indexed::Cluster(cluster) => cluster.get(i).map(Cow::Owned),
        }
    }

    /// Hands each subject to `render`, put together 256 at a time on every
    /// core (one alone on this thread: starting the threads would take
    /// longer), and what it gives to `write`, in input order.
    pub fn render_in_order<R: Send>(
        &self,
        render: impl Fn(&Subject<'t>) -> R + Sync,
        mut write: impl FnMut(R) -> io::Result<()>,
    ) -> io::Result<()> {
        let render_one = |i| self.get(i).map(|subject| render(&subject));
        for start in (0..self.len()).step_by(BATCH) {
            let batch = start..self.len().min(start + BATCH);
            let rendered: Vec<R> = match self.len() {
                1 => batch.filter_map(render_one).collect(),
                _ => batch.into_par_iter().filter_map(render_one).collect(),
            };
            rendered.into_iter().try_for_each(&mut write)?;
        }
        Ok(())
    }
}

/// Splits documents into subjects, all at once: [`split`] for a large input.
pub fn subjects(documents: Vec<Json<'_>>) -> Result<Vec<Subject<'_>>, String> {
    split(documents).map(Split::into_subjects)
}

/// Splits documents into subjects. `documents` are the top-level JSON values
/// read; an array of them, as `jq '.items'` prints, is taken as its elements.
pub fn split(documents: Vec<Json<'_>>) -> Result<Split<'_>, String> {
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
    let split = match Cluster::new(objects, deleted)? {
        Some(_) if !bundles.is_empty() => {
            return Err(String::from(
                "the input mixes bundles ({\"pod\": …}) with bare Kubernetes objects; give one or the other",
            ));
        }
        Some(cluster) => Split(Parts::Cluster(Box::new(cluster))),
        None if bundles.is_empty() => {
            let facts = facts.into_iter().map(|map| Subject {
                label: None,
                document: Json::Object(map),
                warnings: Vec::new(),
            });
            return Ok(Split(Parts::Given(facts.collect())));
        }
        None => Split(Parts::Given(bundles)),
    };
    if facts.is_empty() {
        return Ok(split);
    }
    // A facts document given with one subject adds to what it says.
    if split.len() != 1 {
        return Err(format!(
            "a facts document was given with {} subjects; put the facts under `facts` in the bundle they belong to",
            split.len()
        ));
    }
    let mut subjects = split.into_subjects();
    let Some(Json::Object(document)) = subjects.first_mut().map(|s| &mut s.document) else {
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
    Ok(Split(Parts::Given(subjects)))
}

const BUNDLE_KEYS: &[&str] = &["pod", "events", "node", "owner", "namespace", "facts"];

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
    named(kind, name_of(object))
}

/// The pod the events are about, when only its events were given: the
/// `involvedObject` of the first event about a pod.
fn pod_of_events(events: &Json<'_>) -> Option<String> {
    let pod = events
        .as_array()?
        .iter()
        .map(|event| at(event, "/involvedObject"))
        .find(|object| at(object, "/kind").as_str() == Some("Pod"))?;
    Some(named(
        "pod",
        (
            at(pod, "/namespace").as_str().unwrap_or_default(),
            at(pod, "/name").as_str().unwrap_or_default(),
        ),
    ))
}

fn named(kind: &str, (namespace, name): (&str, &str)) -> String {
    match (namespace, name) {
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
            .or_else(|| document.get("events").and_then(pod_of_events))
    };
    let warnings = keep_own_events(&mut document).into_iter().collect();
    Ok(Subject {
        label,
        document,
        warnings,
    })
}

/// Leaves out of a bundle the events about other objects than its pod and
/// the pod's owners, and says so: `kubectl get events` lists a whole
/// namespace's, and another pod's `FailedScheduling` is no evidence about
/// this one. Events that name no object are kept, and so are those that
/// name the pod or an owner with another uid (one of the same name before
/// it, or a bundle put together by hand). When none is left, the pod's own
/// events were not given: an empty list would say the pod has none.
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
    let first_other = named(
        first_other.kind.unwrap_or("object"),
        (
            first_other.namespace.unwrap_or_default(),
            first_other.name.unwrap_or_default(),
        ),
    );
    let left_out = own.iter().filter(|own| !**own).count();
    let mut message = format!(
        "left out {left_out} of the {} events: they are about other objects than the pod and \
         its owner (the first about {first_other})",
        own.len()
    );
    if left_out == own.len() {
        if let Json::Object(map) = document {
            map.remove("events");
        }
        message.push_str("; the pod's own events are taken as not given");
    } else if let Some(Json::Array(events)) = document.get_mut("events") {
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

/// Orders events oldest first, by when they were last seen, whichever of
/// the old (`lastTimestamp`) and new (`series`, `eventTime`) fields they use,
/// so that rules reading the last event read the latest one. The times are
/// the events' own strings, most of them borrowed from the input, not copies.
fn sort_by_time(events: &mut [Json<'_>]) {
    events.sort_by_cached_key(time_of);
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

    use super::cluster::{OwnerIndex, involves};
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
