//! A cluster's objects (pods, their events, nodes, owners and namespaces,
//! as `kubectl get … -o json` lists them) put together into one bundle per
//! subject. Each subject is given copies of its node, owner and events, so
//! subjects are put together when asked for, a few at a time: a dump of
//! thousands of pods held as bundles all at once would take many times its
//! own size.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use kb_engine::json::{Json, Object};

use super::{
    Subject, api_error, api_names, at, in_core_v1_shape, is_list, kind_of, label, name_of,
    regarding, time_of,
};

const OWNER_KINDS: &[&str] = &[
    "ReplicaSet",
    "StatefulSet",
    "DaemonSet",
    "Job",
    "Deployment",
    "CronJob",
    "ReplicationController",
];

/// The objects of an input, by kind.
#[derive(Default)]
pub(super) struct Objects<'t> {
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

impl<'t> Objects<'t> {
    pub(super) fn add(&mut self, object: Json<'t>) -> Result<(), String> {
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

    /// The first kind met that kb does not diagnose.
    fn first_left_out(&self) -> Option<&str> {
        self.left_out
            .iter()
            .min_by_key(|(_, (first_met, _))| first_met)
            .map(|(kind, _)| kind.as_str())
    }

    /// What is said to every subject of the kinds left out, in the order
    /// first met.
    fn left_out_warning(&mut self) -> Option<String> {
        let mut left_out: Vec<(usize, String, usize)> = std::mem::take(&mut self.left_out)
            .into_iter()
            .map(|(kind, (first_met, count))| (first_met, kind, count))
            .collect();
        if left_out.is_empty() {
            return None;
        }
        left_out.sort_unstable();
        let count: usize = left_out.iter().map(|(_, _, n)| n).sum();
        let kinds = left_out.iter().map(|(_, kind, n)| match n {
            1 => kind.clone(),
            n => format!("{kind} ×{n}"),
        });
        let s = if count == 1 { "" } else { "s" };
        Some(format!(
            "left out {count} object{s} kb does not diagnose ({}): it reads Pods, their \
             Events, Nodes and Namespaces, and the pods' owners",
            listed(left_out.len(), kinds, " kinds")
        ))
    }
}

/// Of what kind a cluster's subjects are: its pods, or else its pods'
/// owners, or else its namespaces.
#[derive(Clone, Copy)]
enum Whose {
    Pods,
    Owners,
    Namespaces,
}

/// A cluster's objects, with what every subject is told of the whole.
pub(super) struct Cluster<'t> {
    objects: Objects<'t>,
    whose: Whose,
    /// The kinds left out, said to every subject.
    left_out: Option<String>,
    /// The subjects a watch event says were deleted, by label, and how
    /// many times.
    deleted: HashMap<String, usize>,
    /// The objects deleted that are no subject (an event, a node), said to
    /// every subject in one warning naming the first [`NAMED`] of them and
    /// counting the rest.
    others_deleted: Option<String>,
}

impl<'t> Cluster<'t> {
    /// `None` when the objects hold nothing to diagnose and nothing that
    /// should have come with something to diagnose. `deleted` are the
    /// labels of the objects watch events say were deleted.
    pub(super) fn new(
        mut objects: Objects<'t>,
        deleted: Vec<String>,
    ) -> Result<Option<Self>, String> {
        let whose = if !objects.pods.is_empty() {
            Whose::Pods
        } else if !objects.owners.is_empty() {
            Whose::Owners
        } else if !objects.namespaces.is_empty() {
            Whose::Namespaces
        } else {
            if let Some(kind) = objects.first_left_out() {
                return Err(format!(
                    "kind `{kind}` is not something kb diagnoses; give Pods, Events, Nodes, Namespaces or the pods' owners"
                ));
            }
            if objects.events.is_empty() && objects.nodes.is_empty() {
                return Ok(None);
            }
            return Err(String::from(
                "the input has events or nodes but no pod, owner or namespace to diagnose",
            ));
        };
        let left_out = objects.left_out_warning();
        let mut cluster = Self {
            objects,
            whose,
            left_out,
            deleted: HashMap::new(),
            others_deleted: None,
        };
        cluster.note_deleted(deleted);
        Ok(Some(cluster))
    }

    /// Tells the deleted subjects from the other objects deleted.
    fn note_deleted(&mut self, deleted: Vec<String>) {
        if deleted.is_empty() {
            return;
        }
        let subjects: HashSet<String> = self.labels().collect();
        let mut others = Vec::new();
        for gone in deleted {
            if subjects.contains(&gone) {
                *self.deleted.entry(gone).or_default() += 1;
            } else {
                others.push(gone);
            }
        }
        self.others_deleted = match others.as_slice() {
            [] => None,
            [gone] => Some(deletion(gone)),
            _ => Some(format!(
                "watch events say {} objects were deleted ({}): this is their last state",
                others.len(),
                listed(
                    others.len(),
                    others.iter().map(|gone| format!("`{gone}`")),
                    ""
                )
            )),
        };
    }

    /// The subjects' labels.
    fn labels(&self) -> impl Iterator<Item = String> {
        let (kind, objects) = match self.whose {
            Whose::Pods => (Some("pod"), &self.objects.pods),
            Whose::Owners => (None, &self.objects.owners),
            Whose::Namespaces => (Some("namespace"), &self.objects.namespaces),
        };
        objects
            .iter()
            .map(move |object| subject_label(kind, object))
    }

    /// How many subjects the cluster has.
    pub(super) fn len(&self) -> usize {
        match self.whose {
            Whose::Pods => self.objects.pods.len(),
            Whose::Owners => self.objects.owners.len(),
            Whose::Namespaces => self.objects.namespaces.len(),
        }
    }

    /// The cluster indexed, to put its subjects together.
    pub(super) fn indexed(&self) -> Indexed<'_, 't> {
        let objects = &self.objects;
        Indexed {
            cluster: self,
            events: EventIndex::new(&objects.events),
            ranks: time_ranks(&objects.events),
            owners: OwnerIndex::new(&objects.owners),
            nodes: first_by_name(&objects.nodes),
            namespaces: first_by_name(&objects.namespaces),
        }
    }

    /// Every subject, its pod moved into it rather than copied.
    pub(super) fn into_subjects(mut self) -> Vec<Subject<'t>> {
        let pods = std::mem::take(&mut self.objects.pods);
        let indexed = self.indexed();
        match self.whose {
            Whose::Pods => pods.into_iter().map(|pod| indexed.pod(pod)).collect(),
            Whose::Owners | Whose::Namespaces => {
                (0..self.len()).filter_map(|i| indexed.get(i)).collect()
            }
        }
    }
}

/// How many events about a subject (a pod and its owner) a cluster's dump
/// gives it, the newest: a ReplicaSet of thousands of pods has an event for
/// each pod it created, and each pod would be given all of them.
const MAX_EVENTS: usize = 1000;

/// A cluster with its objects found by what names them, to put each
/// subject together at once: its pod, the events about it and its owner,
/// copies of its node, owner and namespace.
pub(super) struct Indexed<'a, 't> {
    cluster: &'a Cluster<'t>,
    events: EventIndex<'a>,
    /// The events' [`time_ranks`].
    ranks: Vec<usize>,
    owners: OwnerIndex<'a, 't>,
    nodes: HashMap<&'a str, &'a Json<'t>>,
    namespaces: HashMap<&'a str, &'a Json<'t>>,
}

impl<'t> Indexed<'_, 't> {
    /// How many subjects the cluster has.
    pub(super) fn len(&self) -> usize {
        self.cluster.len()
    }

    /// The `i`th subject.
    pub(super) fn get(&self, i: usize) -> Option<Subject<'t>> {
        let objects = &self.cluster.objects;
        Some(match self.cluster.whose {
            Whose::Pods => self.pod(objects.pods.get(i)?.clone()),
            Whose::Owners => self.owner(objects.owners.get(i)?),
            Whose::Namespaces => self.namespace(objects.namespaces.get(i)?),
        })
    }

    /// A pod with its events, node, owner and namespace.
    fn pod(&self, pod: Json<'t>) -> Subject<'t> {
        let mut bundle = Object::new();
        let (namespace, _) = name_of(&pod);
        let owner = self.owners.owner_of(&pod);
        let about: Vec<&Json<'t>> = std::iter::once(&pod).chain(owner).collect();
        let warnings = self.add_events(&mut bundle, &about);
        let node_name = at(&pod, "/spec/nodeName").as_str();
        if let Some(node) = node_name.and_then(|name| self.nodes.get(name)) {
            bundle.insert("node", (*node).clone());
        }
        if let Some(owner) = owner {
            bundle.insert("owner", owner.clone());
        }
        if let Some(ns) = self.namespaces.get(namespace) {
            bundle.insert("namespace", (*ns).clone());
        }
        let label = label("pod", &pod);
        bundle.insert("pod", pod);
        self.subject(label, bundle, warnings)
    }

    /// An owner none of whose pods was given, with its events and namespace.
    fn owner(&self, owner: &Json<'t>) -> Subject<'t> {
        let mut bundle = Object::new();
        let warnings = self.add_events(&mut bundle, &[owner]);
        let (namespace, _) = name_of(owner);
        if let Some(ns) = self.namespaces.get(namespace) {
            bundle.insert("namespace", (*ns).clone());
        }
        bundle.insert("owner", owner.clone());
        bundle.insert("pod", Json::Null);
        self.subject(subject_label(None, owner), bundle, warnings)
    }

    /// A namespace, when neither pods nor owners were given, with its events.
    fn namespace(&self, namespace: &Json<'t>) -> Subject<'t> {
        let mut bundle = Object::new();
        let warnings = self.add_events(&mut bundle, &[namespace]);
        bundle.insert("namespace", namespace.clone());
        bundle.insert("pod", Json::Null);
        self.subject(label("namespace", namespace), bundle, warnings)
    }

    /// A subject, told what every subject is told of the whole.
    fn subject(&self, label: String, bundle: Object<'t>, mut warnings: Vec<String>) -> Subject<'t> {
        let cluster = self.cluster;
        warnings.extend(cluster.left_out.clone());
        let times_deleted = cluster.deleted.get(&label).copied().unwrap_or_default();
        warnings.extend(std::iter::repeat_n(deletion(&label), times_deleted));
        warnings.extend(cluster.others_deleted.clone());
        Subject {
            label: Some(label),
            document: Json::Object(bundle),
            warnings,
        }
    }

    /// Puts the events about any of `objects` into a bundle, oldest first;
    /// when the input held no events at all, leaves them out, so they are
    /// unknown. The newest [`MAX_EVENTS`] of them, with a warning when there
    /// were more.
    fn add_events(&self, bundle: &mut Object<'t>, objects: &[&Json<'t>]) -> Vec<String> {
        let all = &self.cluster.objects;
        if !all.saw_events {
            return Vec::new();
        }
        let mut found: Vec<usize> = objects
            .iter()
            .flat_map(|o| self.events.candidates(o))
            .collect();
        // In time order; an event found twice, by uid and by name, kept once.
        found.sort_unstable_by_key(|&i| self.ranks.get(i));
        found.dedup();
        let about: Vec<&Json<'t>> = found
            .into_iter()
            .filter_map(|i| all.events.get(i))
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

/// A subject's label: `pod shop/web-1`, `replicaset shop/api-7d9`; an
/// owner's kind given by the owner.
fn subject_label(kind: Option<&str>, object: &Json<'_>) -> String {
    match kind {
        Some(kind) => label(kind, object),
        None => {
            let kind = at(object, "/kind").as_str().unwrap_or("owner");
            label(&kind.to_lowercase(), object)
        }
    }
}

/// The warning that a watch event says an object was deleted.
fn deletion(gone: &str) -> String {
    format!("a watch event says `{gone}` was deleted: this is its last state")
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
pub(super) struct OwnerIndex<'a, 't> {
    owners: &'a [Json<'t>],
    /// The first owner with each uid.
    by_uid: HashMap<&'a str, usize>,
    /// The first owner of each kind and name…
    by_name: HashMap<(&'a str, &'a str), usize>,
    /// … and the first of those without a uid.
    by_name_without_uid: HashMap<(&'a str, &'a str), usize>,
}

impl<'a, 't> OwnerIndex<'a, 't> {
    pub(super) fn new(owners: &'a [Json<'t>]) -> Self {
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
    pub(super) fn owner_of(&self, pod: &Json<'_>) -> Option<&'a Json<'t>> {
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

/// For each event, its place among them in [`super::sort_by_time`]'s order: each
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

/// Whether an event is about an object: by uid, or by kind, namespace and name.
pub(super) fn involves(event: &Json<'_>, object: &Json<'_>) -> bool {
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
