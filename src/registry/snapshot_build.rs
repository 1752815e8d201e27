//! Taking the route snapshot from the tables a budget of topics at a time, so that large tables
//! never hold the registry for one long turn: the members and mappings are gathered first (a
//! pass over the live brokers), then each group's topics, a few groups a turn. A member that
//! left before its group was reached is left out; what changes meanwhile shows in the next
//! snapshot (the pace compares change counts).

use std::collections::BTreeMap;

use super::snapshot::{GroupSnapshot, MappingSnapshot, MemberSnapshot, Snapshot, FORMAT};
use super::tables::RouteTables;

/// A snapshot being taken: the groups still to copy, with their members and mappings as they
/// were when it started, and the groups copied.
#[derive(Debug)]
pub struct SnapshotBuild {
    taken_at_ms: u64,
    members: BTreeMap<String, Vec<MemberSnapshot>>,
    mappings: BTreeMap<String, Vec<MappingSnapshot>>,
    groups: Vec<GroupSnapshot>,
}

impl SnapshotBuild {
    /// The snapshot, once [`RouteTables::continue_snapshot`] said every group is in.
    pub fn finish(self) -> Snapshot {
        Snapshot { format: FORMAT, taken_at_ms: self.taken_at_ms, groups: self.groups }
    }
}

impl RouteTables {
    /// The snapshot of every live broker, taken whole at `taken_at_ms` (wall clock) and
    /// `now_ms` (table clock).
    pub fn snapshot(&self, taken_at_ms: u64, now_ms: u64) -> Snapshot {
        let mut build = self.start_snapshot(taken_at_ms, now_ms);
        self.continue_snapshot(&mut build, usize::MAX);
        build.finish()
    }

    /// Starts a snapshot at `taken_at_ms` and `now_ms`: every live member and every mapping,
    /// by group; the groups' topics are copied by [`Self::continue_snapshot`].
    pub fn start_snapshot(&self, taken_at_ms: u64, now_ms: u64) -> SnapshotBuild {
        let mut members: BTreeMap<String, Vec<MemberSnapshot>> = BTreeMap::new();
        for (addr, live) in self.live_entries() {
            let dv = live.data_version;
            members.entry(live.broker_name.clone()).or_default().push(MemberSnapshot {
                cluster: live.cluster.clone(),
                broker_id: live.broker_id,
                addr: addr.to_owned(),
                ha_server_addr: live.ha_server_addr.clone(),
                version: live.version,
                timeout_ms: live.timeout_ms,
                data_version: (dv.counter, dv.state_version, dv.timestamp),
                filter_servers: self.filter_servers(&live.cluster, addr).map(<[String]>::to_vec),
                provisional_silent_ms: live.is_provisional().then(|| now_ms.saturating_sub(live.last_update_ms)),
                silent_ms: Some(live.silent_ms(now_ms)),
                access_key: live.access_key.clone(),
            });
        }
        let mut mappings: BTreeMap<String, Vec<MappingSnapshot>> = BTreeMap::new();
        for (topic, m) in self.mapping_entries() {
            mappings.entry(m.bname.clone()).or_default().push(MappingSnapshot {
                topic: topic.to_owned(),
                scope: m.scope.clone(),
                total_queues: m.total_queues,
                epoch: m.epoch,
                dirty: m.dirty,
                curr_id_map: m.curr_id_map.clone(),
            });
        }
        SnapshotBuild { taken_at_ms, members, mappings, groups: Vec::new() }
    }

    /// Copies groups into `build`, in name order, until they held `budget` topics between them
    /// (at least one group a call); true once every group is in. A member no longer live in
    /// its group is left out, and a group left without members too.
    pub fn continue_snapshot(&self, build: &mut SnapshotBuild, budget: usize) -> bool {
        let mut spent = 0usize;
        while spent < budget {
            let Some((name, mut members)) = build.members.pop_first() else {
                return true;
            };
            members.retain(|m| self.live_at(&m.addr).is_some_and(|live| live.broker_name == name));
            let Some(group) = self.group(&name).filter(|_| !members.is_empty()) else {
                continue;
            };
            members.sort_by_key(|m| m.broker_id);
            let topics: Vec<_> = self
                .topic_arcs_of(&name)
                .filter_map(|t| self.queues(t).and_then(|q| q.get(name.as_str())).map(|q| (t.clone(), q.into())))
                .collect();
            spent = spent.saturating_add(topics.len().max(1));
            let mut mappings = build.mappings.remove(&name).unwrap_or_default();
            mappings.sort_by(|a, b| a.topic.cmp(&b.topic));
            build.groups.push(GroupSnapshot {
                broker_name: name,
                zone_name: group.zone_name.clone(),
                enable_acting_master: group.enable_acting_master,
                topics,
                mappings,
                members,
            });
        }
        build.members.is_empty()
    }
}
