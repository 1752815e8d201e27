//! What the registry reports when scraped: its counts, and the broker counts per cluster, so
//! that "a cluster lost its master" can be alerted:
//! `namesrv_cluster_brokers{cluster,role}` (role `master`: brokerId 0, `slave`: every other id)
//! and `namesrv_cluster_groups_without_master{cluster}` (broker groups with members but no
//! master). Set from the registry at every scrape; a cluster gone from the registry leaves no
//! series behind.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// What the registry reports when scraped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RegistryFigures {
    /// Live broker instances.
    pub brokers: usize,
    /// Clusters.
    pub clusters: usize,
    /// Topics with queue data.
    pub topics: usize,
    /// Queue entries: (topic, broker group) pairs with queue data.
    pub queue_entries: usize,
    /// Bytes of encoded routes cached.
    pub route_cache_bytes: usize,
    /// Brokers loaded from a route snapshot that have not registered since.
    pub provisional: usize,
}

/// Everything a `/metrics` scrape reads from the registry, taken in one registry turn so the
/// totals and the per-cluster counts describe the same moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScrapeFigures {
    /// The registry's counts.
    pub totals: RegistryFigures,
    /// Broker counts per cluster, sorted by cluster.
    pub clusters: Vec<ClusterFigures>,
}

/// At most this many clusters get series (the first by name); a fleet has a handful, and the
/// bound keeps a flood of made-up cluster names from flooding the scrape too.
pub const MAX_CLUSTER_SERIES: usize = 256;

/// One cluster's broker counts, as the registry holds them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterFigures {
    /// The cluster's name.
    pub cluster: String,
    /// Broker groups with a master (brokerId 0).
    pub masters: usize,
    /// Members with any other brokerId.
    pub slaves: usize,
    /// Broker groups with members but no master.
    pub groups_without_master: usize,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ClusterRoleLabels {
    cluster: String,
    role: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ClusterLabel {
    cluster: String,
}

/// The per-cluster gauges.
#[derive(Debug, Default)]
pub struct ClusterGauges {
    brokers: Family<ClusterRoleLabels, Gauge>,
    groups_without_master: Family<ClusterLabel, Gauge>,
}

impl ClusterGauges {
    /// Registers both families in `ns` (the `namesrv_` namespace).
    pub fn register(&self, ns: &mut Registry) {
        ns.register("cluster_brokers", "Brokers per cluster and role (master: brokerId 0)", self.brokers.clone());
        let headless = self.groups_without_master.clone();
        ns.register("cluster_groups_without_master", "Broker groups with members but no master, per cluster", headless);
    }

    /// Replaces every series with `figures` (sorted by cluster; the first
    /// [`MAX_CLUSTER_SERIES`] are kept).
    pub fn set(&self, figures: &[ClusterFigures]) {
        self.brokers.clear();
        self.groups_without_master.clear();
        for f in figures.iter().take(MAX_CLUSTER_SERIES) {
            for (role, count) in [("master", f.masters), ("slave", f.slaves)] {
                let labels = ClusterRoleLabels { cluster: f.cluster.clone(), role };
                self.brokers.get_or_create(&labels).set(count as i64);
            }
            let labels = ClusterLabel { cluster: f.cluster.clone() };
            self.groups_without_master.get_or_create(&labels).set(f.groups_without_master as i64);
        }
    }
}
