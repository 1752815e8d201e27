//! Topic listings (GET_ALL_TOPIC_LIST_FROM_NAMESERVER, GET_TOPICS_BY_CLUSTER, the three
//! unit-topic lists, the HTTP topic search) are built off the registry thread. The registry
//! only hands out the groups' topic sets a listing needs ([`ListingInputs`]: shared,
//! copy-on-write, O(groups) to take) with the tables' generation; the asker builds the listing
//! from them ([`ListingInputs::build`]) and keeps it in a [`ListingCache`] for that generation,
//! so a listing is built at most once per change of the tables, and its cost — proportional to
//! the tables — is never paid on the thread that owns the expiry clock.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use super::admin::{UnitFilter, FLAG_UNIT, FLAG_UNIT_SUB};
use super::tables::{GroupTopics, RouteTables};
use crate::protocol::reply::body::encode_topic_list;

/// Listings kept at once per cache; past it the cache starts over (cluster names come from
/// peers, so their number is not bounded by anything else).
const MAX_CACHED: usize = 256;

/// Every topic name, sorted: a snapshot the tables' own names are shared into.
pub type SortedTopics = Arc<[Arc<str>]>;

/// Which listing.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ListingKind {
    /// Every topic (GET_ALL_TOPIC_LIST_FROM_NAMESERVER).
    All,
    /// The topics of one cluster's broker groups (GET_TOPICS_BY_CLUSTER).
    ByCluster(String),
    /// A unit-topic list.
    Unit(UnitFilter),
}

/// What a listing is built from: the topic sets of the groups it covers, sorted by group name,
/// as the tables were at `generation`, and whether the listing's switch is on.
#[derive(Debug, Clone)]
pub struct ListingInputs {
    /// The tables' change count when the sets were taken.
    pub generation: u64,
    /// The groups' topic sets, sorted by group name.
    pub groups: Vec<Arc<GroupTopics>>,
    /// Whether the switch of the listing is on (`enable_all_topic_list` for every topic,
    /// `enable_topic_list` for the others): a remoting client is refused while it is off.
    pub enabled: bool,
}

impl RouteTables {
    /// The inputs of listing `kind`: every group's set, or the groups of one cluster (none for
    /// an unknown cluster).
    pub fn listing_inputs(&self, kind: &ListingKind) -> ListingInputs {
        let groups = match kind {
            ListingKind::ByCluster(cluster) => self
                .cluster(cluster)
                .into_iter()
                .flatten()
                .filter_map(|name| self.group_topics(name).cloned())
                .collect(),
            ListingKind::All | ListingKind::Unit(_) => {
                let mut all: Vec<(&str, &Arc<GroupTopics>)> = self.all_group_topics().collect();
                all.sort_unstable_by_key(|(name, _)| *name);
                all.into_iter().map(|(_, topics)| topics.clone()).collect()
            }
        };
        let routing = &self.options().routing;
        let enabled = match kind {
            ListingKind::All => routing.enable_all_topic_list,
            ListingKind::ByCluster(_) | ListingKind::Unit(_) => routing.enable_topic_list,
        };
        ListingInputs { generation: self.changes(), groups, enabled }
    }
}

impl ListingInputs {
    /// The encoded topic list `kind` selects from these sets, sorted.
    pub fn build(&self, kind: &ListingKind) -> Bytes {
        let topics = match kind {
            ListingKind::All | ListingKind::ByCluster(_) => self.names(),
            ListingKind::Unit(filter) => self.unit(*filter),
        };
        Bytes::from(encode_topic_list(topics.iter().map(|t| &***t), None))
    }

    /// Every topic name of the sets, sorted, once each.
    pub fn sorted(&self) -> SortedTopics {
        self.names().into_iter().cloned().collect()
    }

    /// How many topic entries the sets hold together (what a build walks).
    pub fn entries(&self) -> usize {
        self.groups.iter().map(|g| g.len()).sum()
    }

    fn names(&self) -> Vec<&Arc<str>> {
        let mut names: Vec<&Arc<str>> = self.groups.iter().flat_map(|g| g.keys()).collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// Topics `filter` selects, judged, as Java does, by each topic's first queue data: that of
    /// the lowest group name (the sets are in group order).
    fn unit(&self, filter: UnitFilter) -> Vec<&Arc<str>> {
        let mut first: HashMap<&Arc<str>, i32> = HashMap::new();
        for (topic, flag) in self.groups.iter().flat_map(|g| g.iter()) {
            first.entry(topic).or_insert(*flag);
        }
        let mut topics: Vec<&Arc<str>> = first
            .into_iter()
            .filter(|(_, flag)| match filter {
                UnitFilter::Unit => flag & FLAG_UNIT != 0,
                UnitFilter::HasUnitSub => flag & FLAG_UNIT_SUB != 0,
                UnitFilter::HasUnitSubNotUnit => flag & FLAG_UNIT_SUB != 0 && flag & FLAG_UNIT == 0,
            })
            .map(|(topic, _)| topic)
            .collect();
        topics.sort_unstable();
        topics
    }
}

/// Listings built, by kind, with the generation each was built at; shared by the threads that
/// build them.
#[derive(Debug, Default)]
pub struct ListingCache {
    built: Mutex<HashMap<ListingKind, (u64, Bytes)>>,
    sorted: Mutex<Option<(u64, SortedTopics)>>,
}

impl ListingCache {
    /// Listing `kind` as built at `generation`, if it was.
    pub fn get(&self, kind: &ListingKind, generation: u64) -> Option<Bytes> {
        let built = self.built.lock().unwrap_or_else(|e| e.into_inner());
        built.get(kind).filter(|(at, _)| *at == generation).map(|(_, body)| body.clone())
    }

    /// Keeps listing `kind` built at `generation` (unless a newer one is kept).
    pub fn put(&self, kind: ListingKind, generation: u64, body: Bytes) {
        let mut built = self.built.lock().unwrap_or_else(|e| e.into_inner());
        if built.get(&kind).is_some_and(|(at, _)| *at > generation) {
            return;
        }
        if built.len() >= MAX_CACHED && !built.contains_key(&kind) {
            built.clear();
        }
        built.insert(kind, (generation, body));
    }

    /// Every topic name, sorted, from `inputs` (built once per generation).
    pub fn sorted(&self, inputs: &ListingInputs) -> SortedTopics {
        let mut sorted = self.sorted.lock().unwrap_or_else(|e| e.into_inner());
        match &*sorted {
            Some((at, names)) if *at == inputs.generation => names.clone(),
            _ => {
                let names = inputs.sorted();
                *sorted = Some((inputs.generation, names.clone()));
                names
            }
        }
    }
}

/// The page of `sorted` the HTTP search asks for: names containing `contains` (all when
/// empty), after `after` when given, at most `limit`. Runs on the asker's thread.
pub fn search(sorted: &[Arc<str>], contains: &str, after: Option<&str>, limit: usize) -> Vec<String> {
    let start = after.map_or(0, |after| sorted.partition_point(|t| &**t <= after));
    sorted[start..].iter().filter(|t| t.contains(contains)).take(limit).map(|t| t.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<Arc<str>> {
        list.iter().map(|t| Arc::from(*t)).collect()
    }

    #[test]
    fn a_search_pages_through_the_sorted_names() {
        let sorted = names(&["Alpha", "Beta", "OrderA", "OrderB", "OrderC", "Zed"]);
        assert_eq!(search(&sorted, "Order", None, 2), ["OrderA", "OrderB"]);
        assert_eq!(search(&sorted, "Order", Some("OrderB"), 2), ["OrderC"]);
        assert_eq!(search(&sorted, "", Some("Beta"), 10), ["OrderA", "OrderB", "OrderC", "Zed"]);
        assert_eq!(search(&sorted, "", Some("Zzz"), 10), Vec::<String>::new());
        assert_eq!(search(&sorted, "", Some("A"), 1), ["Alpha"]);
    }

    #[test]
    fn the_cache_keeps_a_listing_for_its_generation_only() {
        let cache = ListingCache::default();
        let kind = ListingKind::ByCluster("c".into());
        cache.put(kind.clone(), 5, Bytes::from_static(b"five"));
        assert_eq!(cache.get(&kind, 5), Some(Bytes::from_static(b"five")));
        assert_eq!(cache.get(&kind, 6), None, "built before the tables changed");
        cache.put(kind.clone(), 4, Bytes::from_static(b"four"));
        assert_eq!(cache.get(&kind, 5), Some(Bytes::from_static(b"five")), "an older build never replaces a newer");
    }
}
