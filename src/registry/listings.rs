//! Topic listings (GET_TOPICS_BY_CLUSTER, the three unit-topic lists, the HTTP topic search)
//! built at most once per change of the tables: asked again before anything changed, a listing
//! is served from what was built, so a peer pipelining listings costs the registry a lookup per
//! request, not a scan and a sort. The topic search gets the sorted names as one shared
//! snapshot and filters them on the asker's thread.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;

use super::admin::UnitFilter;
use super::tables::RouteTables;
use crate::protocol::reply::body::encode_topic_list;

/// Per-cluster listings kept at once; past it the cache starts over (cluster names come from
/// peers, so their number is not bounded by anything else).
const MAX_CLUSTERS: usize = 256;

/// Every topic name, sorted: a snapshot the tables' own names are shared into.
pub type SortedTopics = Arc<[Arc<str>]>;

/// Listings built from the tables as they were at one change count.
#[derive(Debug, Default)]
pub struct Listings {
    /// The tables' change count the listings below were built at.
    generation: u64,
    sorted: Option<SortedTopics>,
    by_cluster: HashMap<String, Bytes>,
    unit: [Option<Bytes>; 3],
    /// Listings built since start (each one a scan of the tables).
    builds: u64,
}

impl Listings {
    /// Forgets what was built when the tables changed since.
    fn fresh(&mut self, tables: &RouteTables) {
        if self.generation != tables.changes() {
            *self = Listings { generation: tables.changes(), builds: self.builds, ..Listings::default() };
        }
    }

    /// Every topic name, sorted.
    pub fn sorted_topics(&mut self, tables: &RouteTables) -> SortedTopics {
        self.fresh(tables);
        if let Some(sorted) = &self.sorted {
            return sorted.clone();
        }
        self.builds += 1;
        let mut names: Vec<Arc<str>> = tables.topic_arcs().cloned().collect();
        names.sort_unstable();
        let sorted: SortedTopics = names.into();
        self.sorted = Some(sorted.clone());
        sorted
    }

    /// The encoded topic list of `cluster` (GET_TOPICS_BY_CLUSTER).
    pub fn by_cluster(&mut self, tables: &RouteTables, cluster: &str) -> Bytes {
        self.fresh(tables);
        if let Some(body) = self.by_cluster.get(cluster) {
            return body.clone();
        }
        self.builds += 1;
        let body = Bytes::from(encode_topic_list(tables.topics_by_cluster(cluster).iter().map(String::as_str), None));
        if self.by_cluster.len() >= MAX_CLUSTERS {
            self.by_cluster.clear();
        }
        self.by_cluster.insert(cluster.to_owned(), body.clone());
        body
    }

    /// The encoded unit-topic list `filter` selects.
    pub fn unit(&mut self, tables: &RouteTables, filter: UnitFilter) -> Bytes {
        self.fresh(tables);
        let slot = filter as usize;
        if let Some(body) = &self.unit[slot] {
            return body.clone();
        }
        self.builds += 1;
        let body = Bytes::from(encode_topic_list(tables.unit_topics(filter).iter().map(String::as_str), None));
        self.unit[slot] = Some(body.clone());
        body
    }

    /// Listings built since start.
    pub fn builds(&self) -> u64 {
        self.builds
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
}
